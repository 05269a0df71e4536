"""Trees whose cells each thread fills in place (analysis.lift.own_cells): the cell is the
thread's register until the tree, so the block-reduction lift takes the kernel.

Checked on the CPU against the g++-built CUDA: a count accumulated in the cell across a barrier
(a fixed block size), a cell stored by both branches of an ``if`` (``extern __shared__``, the
tree over ``blockDim.x``), a float sum of squares built with ``+=`` in the cell. Refused: a
barrier that orders a global buffer between the stretches, a thread reading another's cell
before the tree.
"""
from __future__ import annotations

from tests.analysis.lift.support import convert, factory, note

COUNT = """
    #define THREADS 128
    __global__ void row_mismatch(const int* __restrict__ a, const int* __restrict__ b, int* __restrict__ out, int n) {
        __shared__ int cnt[THREADS];
        int t = threadIdx.x;
        cnt[t] = 0;
        __syncthreads();
        for (int i = t; i < n; i += THREADS) {
            int c = (a[blockIdx.x * n + i] != b[i]) ? 1 : 0;
            cnt[t] += c;
        }
        __syncthreads();
        for (int s = THREADS / 2; s > 0; s /= 2) {
            if (t < s) cnt[t] += cnt[t + s];
            __syncthreads();
        }
        if (t == 0) out[blockIdx.x] = cnt[0];
    }
"""

COUNT_SPEC = """
    [[kernel]]
    name = "row_mismatch"
    grid = [6, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "a"
    buffer = "int32"
    elements = 1800
    role = "in"
    range = [0, 3]
    [[kernel.args]]
    name = "b"
    buffer = "int32"
    elements = 300
    role = "in"
    range = [0, 3]
    [[kernel.args]]
    name = "out"
    buffer = "int32"
    elements = 6
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 300
"""

BRANCHES = """
    __global__ void count_valid(const int* __restrict__ v, float* __restrict__ frac, int n) {
        extern __shared__ int cache[];
        const int lid = threadIdx.x;
        const int gid = blockIdx.x * blockDim.x + lid;
        if (gid < n) cache[lid] = v[gid] >= 0 ? 1 : 0;
        else cache[lid] = 0;
        __syncthreads();
        for (int i = blockDim.x / 2; i > 0; i /= 2) {
            if (lid < i) cache[lid] += cache[lid + i];
            __syncthreads();
        }
        if (lid == 0) frac[blockIdx.x] = cache[0] / (float)blockDim.x;
    }
"""

BRANCHES_SPEC = """
    [[kernel]]
    name = "count_valid"
    grid = [5, 1, 1]
    block = [256, 1, 1]
    shared_bytes = 1024
    tolerance = "exact"
    [[kernel.args]]
    name = "v"
    buffer = "int32"
    elements = 1200
    role = "in"
    range = [-50, 50]
    [[kernel.args]]
    name = "frac"
    buffer = "float32"
    elements = 5
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 1200
"""

SQUARES = """
    __global__ void sum_squares(const float* __restrict__ x, float* __restrict__ out, int n) {
        __shared__ float acc[64];
        int tid = threadIdx.x;
        acc[tid] = 0.0f;
        for (int i = blockIdx.x * 64 + tid; i < n; i += 64 * gridDim.x) {
            float v = x[i];
            acc[tid] += v * v;
        }
        __syncthreads();
        for (int s = 32; s > 0; s >>= 1) {
            if (tid < s) acc[tid] = acc[tid] + acc[tid + s];
            __syncthreads();
        }
        if (tid == 0) out[blockIdx.x] = sqrtf(acc[0]);
    }
"""

SQUARES_SPEC = """
    [[kernel]]
    name = "sum_squares"
    grid = [7, 1, 1]
    block = [64, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 3001
    role = "in"
    range = [-2.0, 2.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 7
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 3001
"""


def _lifted(tmp_path, source, spec, kernel):
    kernels, text = convert(tmp_path, source, "--check", "cpu", spec=spec)
    k = kernels[kernel]
    assert k["form"] == "tile", note(k)
    assert k["check"]["status"] == "pass", k["check"]
    body = factory(text, kernel)
    assert "T.reduce_sum(" in body and "T.sync_threads" not in body and "alloc_shared" not in body, body
    return body


def test_count_kept_in_the_cell_across_a_barrier_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, COUNT, COUNT_SPEC, "row_mismatch")
    assert "cnt_own = cnt_own + c" in body and "cnt_lanes[lane] = cnt_own" in body


def test_cell_stored_by_both_branches_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, BRANCHES, BRANCHES_SPEC, "count_valid")
    assert "cache_lanes[lane] = cache_own" in body


def test_float_sum_built_in_the_cell_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, SQUARES, SQUARES_SPEC, "sum_squares")
    assert "acc_lanes[lane] = acc_own" in body


def test_barrier_ordering_a_global_buffer_is_kept(tmp_path):
    source = COUNT.replace("int* __restrict__ out, int n)", "int* __restrict__ out, int* tmp, int n)").replace(
        "cnt[t] = 0;\n", "cnt[t] = 0;\n        tmp[blockIdx.x * THREADS + t] = b[t];\n").replace(
        "int c = (a[blockIdx.x * n + i] != b[i]) ? 1 : 0;",
        "int c = (a[blockIdx.x * n + i] != tmp[blockIdx.x * THREADS + (t ^ 1)]) ? 1 : 0;")
    assert "tmp[blockIdx.x * THREADS + (t ^ 1)]" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["row_mismatch"]["form"] == "portable"


def test_another_threads_cell_before_the_tree_is_kept(tmp_path):
    source = COUNT.replace("cnt[t] += c;", "cnt[t] += c + cnt[(t + 1) % THREADS];")
    assert "cnt[(t + 1) % THREADS]" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["row_mismatch"]["form"] == "portable"


def test_atomic_on_the_own_cell_is_kept(tmp_path):
    source = SQUARES.replace("acc[tid] += v * v;", "atomicAdd(&acc[tid], v * v);")
    assert "atomicAdd(&acc[tid], v * v);" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["sum_squares"]["form"] == "portable"
