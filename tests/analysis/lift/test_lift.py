"""The lifting passes (tile form): maps, block reductions, forwarded shared caches, GEMMs.

Each pass is tested on small kernels written for the purpose: what it lifts (and how the
TileLang looks), what it must refuse (races, scatters, aliasing, values it cannot account for),
and, through ``convert --check cpu``, that a lifted kernel computes what the CUDA does.
"""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from migrate.analysis.facts import affine
from migrate.cli import main
from migrate.ir import model as m
from migrate.parse.frontend import parse_file
from tests.paths import REPO


def convert(tmp_path: Path, source: str, *flags, spec: str | None = None, name: str = "k") -> tuple[dict, str]:
    src = tmp_path / f"{name}.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    if spec is not None:
        (tmp_path / f"{name}.toml").write_text(textwrap.dedent(spec))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", *flags])
    report = json.loads((out / "report.json").read_text())
    return {k["kernel"]: k for k in report["kernels"]}, (out / f"{name}.py").read_text()


def factory(text: str, kernel: str) -> str:
    start = text.index(f"def make_{kernel}(")
    return text[start:text.index(f"return {kernel}", start)]


def note(kernel: dict) -> str:
    return " ".join(d["message"] for d in kernel["diagnostics"] if d["code"] == "M3003")


# -- maps ------------------------------------------------------------------------------------

def test_independent_threads_become_a_map_over_tiles(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
            int i = threadIdx.x + blockDim.x * blockIdx.x;   // the idiom in another order
            if (i < n) y[i] = a * x[i];
        }
        int main() { scale<<<40, 256>>>(nullptr, nullptr, 2.0f, 10000); }
    """)
    assert kernels["scale"]["form"] == "tile"
    body = factory(text, "scale")
    assert "for ix in T.Parallel(tile_x):" in body and "gx = bx * tile_x + ix" in body
    # a full tile is told apart from the last one by the CUDA tail guard's bound
    assert "if bx * tile_x + tile_x <= extent_x and bx * tile_x + tile_x <= n:" in body
    assert not re.search(r"\btx\b|get_thread|threadIdx", body)


def test_grid_stride_loop_becomes_a_domain_of_n_elements(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void fill(float* __restrict__ y, int n) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
                y[i] = 1.0f;
        }
    """)
    assert kernels["fill"]["form"] == "tile"
    assert "with T.Kernel(T.ceildiv(n, tile_x), threads=threads) as bx:" in factory(text, "fill")


def test_constant_block_size_is_asserted(tmp_path):
    kernels, text = convert(tmp_path, """
        #define TILE 32
        __global__ void copy2d(const float* __restrict__ a, float* __restrict__ b, int rows, int cols) {
            int c = blockIdx.x * TILE + threadIdx.x;
            int r = blockIdx.y * 8 + threadIdx.y;
            if (r < rows && c < cols) b[r * cols + c] = a[r * cols + c];
        }
    """)
    assert kernels["copy2d"]["form"] == "tile"
    body = factory(text, "copy2d")
    assert 'assert block_x == 32' in body and 'assert block_y == 8' in body
    assert "for iy, ix in T.Parallel(tile_y, tile_x):" in body


@pytest.mark.parametrize("body, reason", [
    ("out[idx[i]] = x[i];", "data-dependent index"),                          # a scatter
    ("out[blockIdx.x] = x[i];", "race"),                                      # every element of a block
    ("out[i] = x[i]; out[i + 1] = 0.0f;", "race"),                            # neighbours overlap
    ("x2[i] = x2[i + 1];", "read at another element"),                         # in-place shift
    ("out[i] = (float)(threadIdx.x % 32);", "threadIdx.x is read"),           # lane arithmetic
])
def test_maps_it_must_refuse(tmp_path, body, reason):
    kernels, _ = convert(tmp_path, f"""
        __global__ void bad(const float* __restrict__ x, float* __restrict__ out, const int* idx,
                            float* x2, int n) {{
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) {{ {body} }}
        }}
    """)
    assert kernels["bad"]["form"] == "portable"
    assert reason in note(kernels["bad"]), note(kernels["bad"])


def test_buffers_that_may_alias_keep_program_order(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void axpy(const float* x, float* y, float a, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = a * x[i] + y[i];
        }
    """)
    assert kernels["axpy"]["form"] == "tile"
    assert "T.annotate_restrict_buffers(x, y)" in factory(text, "axpy")


def test_strided_store_gets_square_tiles(tmp_path):
    _, text = convert(tmp_path, """
        __global__ void tr(const float* __restrict__ a, float* __restrict__ b, int rows, int cols) {
            int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
            if (r < rows && c < cols) b[c * rows + r] = a[r * cols + c];
        }
    """)
    assert "tile=(32, 32)" in factory(text, "tr")


# -- block reductions -------------------------------------------------------------------------

REDUCE = """
    template <int BLOCK>
    __global__ void block_max(const float* __restrict__ x, float* __restrict__ out, int n) {
        __shared__ float s[BLOCK];
        int tid = threadIdx.x;
        int i = blockIdx.x * BLOCK + tid;
        s[tid] = i < n ? fabsf(x[i]) : 0.0f;
        __syncthreads();
        for (int w = BLOCK / 2; w > 0; w >>= 1) {
            if (tid < w) s[tid] = fmaxf(s[tid], s[tid + w]);
            __syncthreads();
        }
        if (tid == 0) out[blockIdx.x] = s[0];
    }
    template __global__ void block_max<128>(const float*, float*, int);
"""

REDUCE_SPEC = """
    [[kernel]]
    name = "block_max"
    template = ["128"]
    grid = [24, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 3000
    role = "in"
    range = [-5.0, 5.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 24
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 3000
"""


def test_shared_tree_becomes_t_reduce_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, REDUCE, "--check", "cpu", spec=REDUCE_SPEC)
    k = kernels["block_max"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "block_max")
    assert "T.reduce_max(s_lanes, s_total, dim=0)" in body
    assert "assert block_x & (block_x - 1) == 0" in body and "assert block_x == BLOCK" in body
    assert "T.sync_threads" not in body and "alloc_shared" not in body


def test_tree_with_other_arithmetic_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, REDUCE.replace("fmaxf(s[tid], s[tid + w])", "s[tid] + 2.0f * s[tid + w]"))
    assert kernels["block_max"]["form"] == "portable"


# -- warp-shuffle reductions ---------------------------------------------------------------------

WARP_SUM = """
    #define FULL 0xffffffffu
    __device__ float warp_sum(float v) {
        for (int off = warpSize / 2; off > 0; off >>= 1) v += __shfl_down_sync(FULL, v, off);
        return v;
    }
    __global__ void wsum(const float* __restrict__ x, float* __restrict__ out, int n) {
        __shared__ float parts[32];
        float v = 0.0f;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v += x[i];
        const int lane = threadIdx.x % warpSize, warp = threadIdx.x / warpSize;
        v = warp_sum(v);
        if (lane == 0) parts[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = lane < (blockDim.x + warpSize - 1) / warpSize ? parts[lane] : 0.0f;
            v = warp_sum(v);
            if (lane == 0) atomicAdd(out, v);
        }
    }
"""

WARP_SUM_SPEC = """
    [[kernel]]
    name = "wsum"
    grid = [7, 1, 1]
    block = [96, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 5000
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 1
    role = "inout"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 5000
"""


def test_two_level_warp_tree_becomes_t_reduce_and_one_atomic_and_agrees_on_cpu(tmp_path):
    """shfl_down trees per warp, the warp totals through shared memory, warp 0's tree, lane 0's
    atomicAdd: one T.reduce_sum over the block's lanes and one guarded T.atomic_add per block
    (96 threads: three warps, the second level padded with zeros)."""
    kernels, text = convert(tmp_path, WARP_SUM, "--check", "cpu", spec=WARP_SUM_SPEC)
    k = kernels["wsum"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    assert "warp-shuffle" in k["reason"]
    body = factory(text, "wsum")
    assert "T.reduce_sum(parts_lanes, parts_total, dim=0)" in body
    assert 'assert block_x % 32 == 0' in body and "power-of-two" not in body
    once = body[body.index("T.reduce_sum"):]
    assert "for _ in T.Parallel(1):" in once and "T.atomic_add(out[0], parts_total[0])" in once
    assert body.count("T.atomic_add") == 1
    assert not re.search(r"shfl|sync_threads|alloc_shared|\btx\b", body)


ROW_NORMALIZE = """
    __device__ float block_sum(float v) {
        __shared__ float parts[32];
        __shared__ float total;
        const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
        if (lane == 0) parts[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = lane < blockDim.x / 32 ? parts[lane] : 0.0f;
            for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
            if (lane == 0) total = v;
        }
        __syncthreads();
        return total;
    }
    __global__ void normalize(const float* __restrict__ x, float* __restrict__ y, int cols) {
        const float* xr = x + blockIdx.x * cols;
        float s = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) s += fabsf(xr[c]);
        const float inv = 1.0f / block_sum(s);
        for (int c = threadIdx.x; c < cols; c += blockDim.x) y[blockIdx.x * cols + c] = xr[c] * inv;
    }
"""


def test_block_total_broadcast_through_a_shared_scalar_agrees_on_cpu(tmp_path):
    """The second level's lane 0 writes the total to a __shared__ scalar that every thread reads
    after a barrier: the scalar becomes the reduction's result, read at block level."""
    spec = """
        [[kernel]]
        name = "normalize"
        grid = [6, 1, 1]
        block = [96, 1, 1]
        tolerance = "fp32_accum"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 1200
        role = "in"
        range = [-1.0, 1.0]
        [[kernel.args]]
        name = "y"
        buffer = "float32"
        elements = 1200
        role = "out"
        [[kernel.args]]
        name = "cols"
        scalar = "int32"
        value = 200
    """
    kernels, text = convert(tmp_path, ROW_NORMALIZE, "--check", "cpu", spec=spec)
    k = kernels["normalize"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "normalize")
    assert "T.reduce_sum(" in body and "block_sum_1_total" not in body.split("T.reduce_sum(")[1].split("\n")[0]
    assert not re.search(r"alloc_shared|sync_threads|shfl", body)


def test_shared_variable_declared_outside_the_kernel_is_refused(tmp_path):
    source = ROW_NORMALIZE.replace("const float inv = 1.0f / block_sum(s);",
                                   "const float inv = 1.0f / block_sum(s);\n        __syncthreads();\n"
                                   "        if (threadIdx.x == 0) total = 0.0f;").replace(
        "__shared__ float total;", "").replace("__device__ float block_sum", "__shared__ float total;\n    "
                                              "__device__ float block_sum")
    kernels, _ = convert(tmp_path, source)
    assert "'total' declared outside the kernel" in note(kernels["normalize"]), note(kernels["normalize"])


WARP_MAX = """
    #include <climits>
    __global__ void wmax(const int* __restrict__ x, int* __restrict__ out, int n) {
        int v = INT_MIN;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) v = max(v, x[i]);
        for (int off = 16; off > 0; off /= 2) {
            int other = __shfl_xor_sync(0xffffffff, v, off);
            v = (other > v) ? other : v;
        }
        if ((threadIdx.x & 31) == 0) atomicMax(out, v);
    }
"""

WARP_MAX_SPEC = """
    [[kernel]]
    name = "wmax"
    grid = [5, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "int32"
    elements = 3001
    role = "in"
    range = [-100000, 100000]
    [[kernel.args]]
    name = "out"
    buffer = "int32"
    elements = 1
    role = "inout"
    range = [0, 10]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 3001
"""


def test_atomic_per_warp_becomes_one_atomic_per_block_and_agrees_on_cpu(tmp_path):
    """Each warp's lane 0 atomicMax'es its warp's maximum: the block's warps together are one
    T.reduce_max and one T.atomic_max of the block's maximum."""
    kernels, text = convert(tmp_path, WARP_MAX, "--check", "cpu", spec=WARP_MAX_SPEC)
    k = kernels["wmax"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "wmax")
    assert "T.reduce_max(v_lanes, v_total, dim=0)" in body
    assert body.count("T.atomic_max(out[0], v_total[0])") == 1
    assert not re.search(r"shfl|\btx\b", body)


def test_atomic_of_another_operation_stays_one_per_warp_and_agrees_on_cpu(tmp_path):
    """atomicAdd of each warp's maximum does not combine with the max tree: each warp's lane 0
    keeps its own atomic (a reduction per warp), not one per block."""
    kernels, text = convert(tmp_path, WARP_MAX.replace("atomicMax(out, v)", "atomicAdd(out, v)"), "--check", "cpu",
                            spec=WARP_MAX_SPEC)
    k = kernels["wmax"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "wmax")
    assert "T.reduce_max(v_lanes, v_total, dim=1)" in body and "T.atomic_add(out[0], v_total[lane_w])" in body


@pytest.mark.parametrize("old, new, reason", [
    ("0xffffffff, v, off", "0x0000ffff, v, off", "does not take the full mask"),           # half a warp
    ("v = (other > v) ? other : v;", "v = v - other;", "is not a sum, max or min"),       # not associative
    ("v = (other > v) ? other : v;", "v = 0.5f * (v + other);", "is not a sum, max or min"),
    ("if ((threadIdx.x & 31) == 0) atomicMax", "atomicMax", "runs in every lane"),      # every thread's atomic
    ("int off = 16", "int off = 8", "do not halve from warpSize / 2"),                  # half the tree
    ("__shfl_xor_sync(0xffffffff, v, off)", "__shfl_up_sync(0xffffffff, v, off)", "not a shfl_down or shfl_xor"),
])
def test_warp_trees_it_must_refuse(tmp_path, old, new, reason):
    assert old in WARP_MAX
    kernels, text = convert(tmp_path, WARP_MAX.replace(old, new))
    k = kernels["wmax"]
    assert k["form"] == "portable" and reason in note(k), note(k)


@pytest.mark.parametrize("old, new, reason", [
    (": 0.0f;", ": 1.0f;", "not the identity of sum"),                                   # padding counts
    ("v = lane < (blockDim.x + warpSize - 1) / warpSize", "v = lane < 4", "one total per warp"),
    ("if (lane == 0) atomicAdd(out, v);", "if (lane == 1) atomicAdd(out, v);", "not read by thread 0"),
    ("if (lane == 0) parts[warp] = v;", "if (lane == 0) parts[warp] = 2.0f * v;", "other than the warp's total"),
])
def test_two_level_warp_reductions_it_must_refuse(tmp_path, old, new, reason):
    assert old in WARP_SUM
    kernels, _ = convert(tmp_path, WARP_SUM.replace(old, new))
    k = kernels["wsum"]
    assert k["form"] == "portable" and reason in note(k), note(k)


ROW_DOT = """
    __global__ void row_dot(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ y,
                            int rows, int cols) {
        const int lane = threadIdx.x % 32;
        const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
        if (row >= rows) return;
        float v = 0.0f;
        for (int c = lane; c < cols; c += 32) v += a[row * cols + c] * x[c];
        for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffff, v, off);
        if (lane == 0) y[row] = v;
    }
"""

ROW_DOT_SPEC = """
    [[kernel]]
    name = "row_dot"
    grid = [4, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "a"
    buffer = "float32"
    elements = 1050
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 75
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 14
    role = "out"
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 14
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 75
"""


def test_warp_per_row_becomes_t_reduce_along_the_lanes_and_agrees_on_cpu(tmp_path):
    """One warp per row (14 rows, 4 per block, the last block half idle): lanes as (warp, lane)
    pairs, T.reduce_sum along dim 1, the row's guard recomputed in both lane loops."""
    kernels, text = convert(tmp_path, ROW_DOT, "--check", "cpu", spec=ROW_DOT_SPEC)
    k = kernels["row_dot"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "row_dot")
    assert "T.reduce_sum(v_lanes, v_total, dim=1)" in body
    assert body.count("for lane_w, lane_l in lane_grid(block_x // 32, 32):") == 2
    assert body.count("if row < rows:") == 2 and "y[row] = v_total[lane_w]" in body
    assert not re.search(r"shfl|sync_threads|\btx\b", body)


def test_row_total_every_lane_reads_after_an_xor_tree_agrees_on_cpu(tmp_path):
    """An xor butterfly leaves the row's total in every lane: each lane scales its own elements."""
    source = ROW_DOT.replace("__shfl_down_sync", "__shfl_xor_sync").replace(
        "if (lane == 0) y[row] = v;", "for (int c = lane; c < cols; c += 32) y[row * cols + c] = a[row * cols + c] / v;")
    spec = ROW_DOT_SPEC.replace("elements = 14", "elements = 1050")
    kernels, text = convert(tmp_path, source, "--check", "cpu", spec=spec)
    k = kernels["row_dot"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    assert re.search(r"a\[row, c\w*\] / v_total\[lane_w\]", factory(text, "row_dot"))  # a shaped (rows, cols)


@pytest.mark.parametrize("old, new, reason", [
    ("if (lane == 0) y[row] = v;", "y[row * 32 + lane] = v;", "lanes other than 0 read the partial sums"),
    ("if (lane == 0) y[row] = v;", "atomicAdd(y, v);", "runs in every lane"),
    ("if (row >= rows) return;", "if (row + lane >= rows) return;", "differs between the lanes of a warp"),
    ("float v = 0.0f;", "float v = 0.0f; y[row * 32 + lane] = 1.0f;", "exchange 'y'"),   # read back after
])
def test_warp_per_row_reductions_it_must_refuse(tmp_path, old, new, reason):
    assert old in ROW_DOT
    source = ROW_DOT.replace(old, new)
    if reason == "exchange 'y'":
        source = source.replace("if (lane == 0) y[row] = v;", "if (lane == 0) y[row] += v;")
    kernels, _ = convert(tmp_path, source)
    k = kernels["row_dot"]
    assert k["form"] == "portable" and reason in note(k), note(k)


CG_NORM = """
    #include <cooperative_groups.h>
    #include <cooperative_groups/reduce.h>
    namespace cg = cooperative_groups;
    __global__ void tile_norm(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {
        cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cg::this_thread_block());
        const int row = blockIdx.x * 2 + tile.meta_group_rank();
        if (row >= rows) return;
        float sq = 0.0f;
        for (int c = tile.thread_rank(); c < cols; c += tile.size()) sq += x[row * cols + c] * x[row * cols + c];
        sq = cg::reduce(tile, sq, cg::plus<float>());
        if (tile.thread_rank() == 0) out[row] = sqrtf(sq);
    }
"""


def test_cooperative_groups_rank_is_the_thread_of_a_1d_block_and_agrees_on_cpu(tmp_path):
    """cooperative groups spell the thread as the block's linear rank (threadIdx.y and .z
    included): read as threadIdx.x, the tile reduction lifts, for blocks the factory asserts 1-D."""
    spec = """
        [[kernel]]
        name = "tile_norm"
        grid = [7, 1, 1]
        block = [64, 1, 1]
        tolerance = "fp32_accum"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 1050
        role = "in"
        range = [-1.0, 1.0]
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 13
        role = "out"
        [[kernel.args]]
        name = "rows"
        scalar = "int32"
        value = 13
        [[kernel.args]]
        name = "cols"
        scalar = "int32"
        value = 75
    """
    kernels, text = convert(tmp_path, CG_NORM, "--check", "cpu", spec=spec)
    k = kernels["tile_norm"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "tile_norm")
    assert 'assert block_y == 1 and block_z == 1' in body and "T.reduce_sum(sq_lanes, sq_total, dim=1)" in body


def test_block_reduction_of_a_2d_block_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, WARP_MAX.replace("if ((threadIdx.x & 31) == 0)", "if ((threadIdx.x & 31) == 0 && threadIdx.y == 0)"))
    assert "1-D blocks only" in note(kernels["wmax"])


ROW_SCALE = """
    __global__ void row_scale(const float* __restrict__ a, float* __restrict__ t, float* __restrict__ y,
                              int rows, int cols) {
        const int lane = threadIdx.x & 31;
        const int row = blockIdx.x * (blockDim.x / 32) + (threadIdx.x >> 5);
        if (row >= rows) return;
        float v = 0.0f;
        for (int c = lane; c < cols; c += 32) { float h = a[row * cols + c] + 1.0f; t[row * cols + c] = h; v += h * h; }
        for (int off = 16; off > 0; off >>= 1) v += __shfl_xor_sync(0xffffffff, v, off);
        for (int j = lane; j < cols; j += 32) y[row * cols + j] = t[row * cols + j] / v;
    }
"""


def test_lane_reading_back_its_own_stores_after_the_tree_agrees_on_cpu(tmp_path):
    """Each lane reads after the tree exactly the elements it stored before it (the same index
    in the same counted loop): no lane sees another's store, the reduction per warp lifts."""
    spec = ROW_DOT_SPEC.replace('"row_dot"', '"row_scale"').replace(
        'name = "x"\n    buffer = "float32"\n    elements = 75\n    role = "in"\n    range = [-1.0, 1.0]',
        'name = "t"\n    buffer = "float32"\n    elements = 1050\n    role = "out"').replace(
        'name = "y"\n    buffer = "float32"\n    elements = 14', 'name = "y"\n    buffer = "float32"\n    elements = 1050')
    kernels, text = convert(tmp_path, ROW_SCALE, "--check", "cpu", spec=spec)
    k = kernels["row_scale"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))


@pytest.mark.parametrize("old, new", [
    ("t[row * cols + j] / v", "t[row * cols + j + 1] / v"),                           # the neighbour's
    ("for (int j = lane; j < cols; j += 32)", "for (int j = 0; j < cols; j += 1)"),   # the whole row
    ("t[row * cols + c] = h;", "if (h > 0.0f) t[row * cols + c] = h;"),               # not every element
])
def test_lane_reading_what_others_stored_is_refused(tmp_path, old, new):
    assert old in ROW_SCALE
    kernels, _ = convert(tmp_path, ROW_SCALE.replace(old, new))
    assert "exchange 't' through memory around the warp tree" in note(kernels["row_scale"])


ONLINE_SOFTMAX = """
    __global__ void osm(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
        const int lane = threadIdx.x % 32;
        const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
        if (row >= rows) return;
        float m = -1e30f, d = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            const float v = x[row * cols + c];
            const float mn = fmaxf(m, v);
            d = d * expf(m - mn) + expf(v - mn);
            m = mn;
        }
        for (int off = 16; off > 0; off >>= 1) {
            const float mo = __shfl_xor_sync(0xffffffff, m, off);
            const float dd = __shfl_xor_sync(0xffffffff, d, off);
            const float mn = fmaxf(m, mo);
            d = d * expf(m - mn) + dd * expf(mo - mn);
            m = mn;
        }
        for (int c = lane; c < cols; c += 32) y[row * cols + c] = expf(x[row * cols + c] - m) / d;
    }
"""


def test_online_softmax_merge_becomes_max_then_rescaled_sum_and_agrees_on_cpu(tmp_path):
    """A butterfly merging (max, denominator) pairs: T.reduce_max of the lanes' maxima, each
    lane's denominator rescaled to the warp's maximum, T.reduce_sum."""
    spec = ROW_DOT_SPEC.replace('"row_dot"', '"osm"').replace('name = "a"', 'name = "q"').replace(
        'name = "x"\n    buffer = "float32"\n    elements = 75\n    role = "in"\n    range = [-1.0, 1.0]\n    '
        '[[kernel.args]]\n    ', "").replace('name = "q"', 'name = "x"').replace(
        'name = "y"\n    buffer = "float32"\n    elements = 14', 'name = "y"\n    buffer = "float32"\n    elements = 1050')
    kernels, text = convert(tmp_path, ONLINE_SOFTMAX, "--check", "cpu", spec=spec)
    k = kernels["osm"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "osm")
    reduce_max, reduce_sum = body.index("T.reduce_max(m_lanes, m_total, dim=1)"), body.index("T.reduce_sum(d_lanes")
    assert reduce_max < body.index("d_lanes[lane_w, lane_l] * T.exp(m_lanes[lane_w, lane_l] - m_total[lane_w])") \
        < reduce_sum


@pytest.mark.parametrize("old, new", [
    ("d = d * expf(m - mn) + dd * expf(mo - mn);", "d = d + dd;"),                  # not rescaled
    ("d = d * expf(m - mn) + dd * expf(mo - mn);", "d = d * expf(mo - mn) + dd * expf(m - mn);"),  # swapped
    ("const float mn = fmaxf(m, mo);\n            d", "const float mn = fminf(m, mo);\n            d"),
])
def test_two_value_merges_it_must_refuse(tmp_path, old, new):
    assert old in ONLINE_SOFTMAX
    kernels, _ = convert(tmp_path, ONLINE_SOFTMAX.replace(old, new))
    assert "is not an online-softmax merge" in note(kernels["osm"]), note(kernels["osm"])


def test_combine_forms_are_recognised_as_their_reduction(tmp_path):
    """The table of combines: each spelling of sum/max/min of a value and its partner, and what
    is not one."""
    from migrate.analysis.lift.warp import combine_op
    cases = {"v += t;": "sum", "v = t + v;": "sum", "v = fmaxf(t, v);": "max", "v = min(v, t);": "min",
             "v = v < t ? v : t;": "min", "v = v < t ? t : v;": "max", "v = t >= v ? t : v;": "max",
             "v = v * t;": None, "v = v + 2.0f * t;": None, "v -= t;": None, "v = t;": None}
    src = "".join(f"__global__ void k{i}(float v, float t, float* o) {{ {c} o[0] = v; }}\n"
                  for i, c in enumerate(cases))
    (tmp_path / "c.cu").write_text(src)
    unit = parse_file(str(tmp_path / "c.cu")).unit
    got = {c: combine_op(k.body.stmts[0], "v", "t") for c, k in zip(cases, unit.kernels)}
    assert got == cases


# -- forwarded shared caches ---------------------------------------------------------------------

STENCIL = """
    #define B 64
    #define R 2
    #define LOAD(j) (((j) >= 0 && (j) < n) ? in[(j)] : 0.0f)
    __global__ void blur(const float* __restrict__ in, float* __restrict__ out, int n) {
        __shared__ float s[B + 2 * R];
        int g = blockIdx.x * B + threadIdx.x;
        int l = threadIdx.x + R;
        s[l] = LOAD(g);
        if (threadIdx.x < R) {
            s[l - R] = LOAD(g - R);
            s[l + B] = LOAD(g + B);
        }
        __syncthreads();
        if (g < n) out[g] = 0.25f * s[l - 1] + 0.5f * s[l] + 0.25f * s[l + 1] + s[l + 2] - s[l - 2];
    }
"""

STENCIL_SPEC = """
    [[kernel]]
    name = "blur"
    grid = [16, 1, 1]
    block = [64, 1, 1]
    tolerance = "fp32"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 1000
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 1000
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 1000
"""


def test_halo_tile_is_forwarded_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, STENCIL, "--check", "cpu", spec=STENCIL_SPEC)
    k = kernels["blur"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "blur")
    assert "alloc_shared" not in body and "sync_threads" not in body
    assert re.search(r"in_\[gx \+ 1\]", body), body  # s[l + 1] read from the input directly


def test_halo_storing_something_else_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, STENCIL.replace("s[l + B] = LOAD(g + B);", "s[l + B] = 1.0f;"))
    assert kernels["blur"]["form"] == "portable"


def test_cache_of_a_per_thread_value_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, """
        __global__ void shift(const float* __restrict__ in, float* __restrict__ out) {
            __shared__ float s[64];
            float acc = 0.0f;
            for (int k = 0; k < 4; ++k) acc += in[blockIdx.x * 64 + threadIdx.x + k];
            s[threadIdx.x] = acc;
            __syncthreads();
            out[blockIdx.x * 64 + threadIdx.x] = s[(threadIdx.x + 1) % 64];
        }
    """)
    assert kernels["shift"]["form"] != "tile"


# -- tiled transposes: reassigned indices, strip loops, block tiles -----------------------------

TILED_TRANSPOSE = """
    #define TILE 16
    #define ROWS 4
    __global__ void tt(const float* __restrict__ in, float* __restrict__ out, const int* perm,
                       int rows, int cols) {
        __shared__ float tile[TILE][TILE + 1];
        int x = blockIdx.x * TILE + threadIdx.x;
        int y = blockIdx.y * TILE + threadIdx.y;
        for (int j = 0; j < TILE; j += ROWS)
            if (x < cols && (y + j) < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        __syncthreads();
        x = blockIdx.y * TILE + threadIdx.x;
        y = blockIdx.x * TILE + threadIdx.y;
        for (int j = 0; j < TILE; j += ROWS)
            if (x < rows && (y + j) < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
"""

TILED_TRANSPOSE_SPEC = """
    [[kernel]]
    name = "tt"
    grid = [3, 5, 1]
    block = [16, 4, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 2850
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 2850
    role = "out"
    [[kernel.args]]
    name = "perm"
    buffer = "int32"
    elements = 8
    role = "in"
    range = [0, 2]
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 75
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 38
"""


def test_tiled_transpose_with_reassigned_indices_becomes_a_staged_map_and_agrees_on_cpu(tmp_path):
    # a 16x4 block sweeps a 16x16 tile in 4 strips; after the barrier x and y are reassigned
    # (block y paired with thread x); 75x38 leaves partial tiles on both sides
    kernels, text = convert(tmp_path, TILED_TRANSPOSE, "--check", "cpu", spec=TILED_TRANSPOSE_SPEC)
    k = kernels["tt"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "tt")
    assert "assert block_x == 16" in body and "assert block_y == 4" in body
    assert body.count("alloc_shared") == 1 and "sync_threads" not in body and "T.serial" not in body
    assert body.count("T.Parallel") == 2 and not re.search(r"\b(tx|ty|threadIdx)\b", body), body
    assert "out[gx, gy] = vals[iy, ix]" in body  # out shaped (cols, rows)


@pytest.mark.parametrize("old, new, reason", [
    # every strip writes the same tile row: which input row it holds is not decided by the index
    ("tile[threadIdx.y + j][threadIdx.x] = in", "tile[threadIdx.y][threadIdx.x] = in",
     "which its index does not determine"),
    # the element at row threadIdx.y + j stores the input row of threadIdx.y alone
    ("= in[(size_t)(y + j) * cols + x]", "= in[(size_t)y * cols + x]", "which its index does not determine"),
    # the reassigned output column depends on loaded data
    ("x = blockIdx.y * TILE + threadIdx.x;", "x = perm[blockIdx.y] * TILE + threadIdx.x;", "threadIdx.x"),
    # reassigned in a branch: which value reaches the store is not decided by the text
    ("x = blockIdx.y * TILE + threadIdx.x;", "if (rows > 0) x = blockIdx.y * TILE + threadIdx.x;", "'x'"),
    # tile[tx][ty + j + 2] runs past the row of 17 for the last strip: element [tx + 1][0], written
    # by another block row, which the forwarded value (input row tx, column ty + j + 2) is not
    ("= tile[threadIdx.x][threadIdx.y + j];", "= tile[threadIdx.x][threadIdx.y + j + 2];",
     "is not proven to stay inside its rows of 17"),
    # the store strips cover half of the tile: the elements are not one per thread and strip
    ("for (int j = 0; j < TILE; j += ROWS)\n            if (x < rows", "for (int j = 0; j < ROWS * 2; j += ROWS)\n"
     "            if (x < rows", "not the tile of 16"),
])
def test_tiled_transposes_it_must_refuse(tmp_path, old, new, reason):
    assert old in TILED_TRANSPOSE
    kernels, _ = convert(tmp_path, TILED_TRANSPOSE.replace(old, new, 1 if old.startswith("for") else -1))
    k = kernels["tt"]
    assert k["form"] == "portable", k["form"]
    assert reason in note(k) and "block reduction" not in note(k), note(k)


STRIPS_SPEC = """
    [[kernel]]
    name = "strips"
    grid = [2, 3, 1]
    block = [32, 8, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 2850
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 2850
    role = "out"
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 75
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 38
"""


def test_strips_of_a_2d_block_become_a_map_and_agree_on_cpu(tmp_path):
    # no shared memory: a 32x8 block scales a 32x32 tile in 4 row strips
    kernels, text = convert(tmp_path, """
        __global__ void strips(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
            int x = blockIdx.x * 32 + threadIdx.x;
            int y = blockIdx.y * 32 + threadIdx.y;
            for (int j = 0; j < 32; j += 8)
                if (x < cols && y + j < rows) out[(y + j) * cols + x] = 2.0f * in[(y + j) * cols + x];
        }
    """, "--check", "cpu", spec=STRIPS_SPEC, name="strips")
    k = kernels["strips"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "strips")
    assert "assert block_x == 32" in body and "assert block_y == 8" in body and "T.serial" not in body


# -- GEMMs ----------------------------------------------------------------------------------------

TILED_GEMM = """
    #define TILE 16
    __global__ void mm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int M, int N, int K) {
        __shared__ float As[TILE][TILE];
        __shared__ float Bs[TILE][TILE];
        int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
        float acc = 0.0f;
        for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
            As[threadIdx.y][threadIdx.x] = (row < M && t * TILE + threadIdx.x < K) ? A[row * K + t * TILE + threadIdx.x] : 0.0f;
            Bs[threadIdx.y][threadIdx.x] = (t * TILE + threadIdx.y < K && col < N) ? B[(t * TILE + threadIdx.y) * N + col] : 0.0f;
            __syncthreads();
            for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
            __syncthreads();
        }
        if (row < M && col < N) C[row * N + col] = 2.0f * acc;
    }
"""

GEMM_SPEC = """
    [[kernel]]
    name = "mm"
    grid = [5, 4, 1]
    block = [16, 16, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "A"
    buffer = "float32"
    elements = 3100
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "B"
    buffer = "float32"
    elements = 4650
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "C"
    buffer = "float32"
    elements = 3750
    role = "out"
    [[kernel.args]]
    name = "M"
    scalar = "int32"
    value = 50
    [[kernel.args]]
    name = "N"
    scalar = "int32"
    value = 75
    [[kernel.args]]
    name = "K"
    scalar = "int32"
    value = 62
"""


def test_tiled_gemm_becomes_a_pipelined_gemm_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, TILED_GEMM, "--check", "cpu", spec=GEMM_SPEC)
    k = kernels["mm"]
    assert k["form"] == "tile" and "GEMM" in k["reason"] and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "mm")
    assert "T.Pipelined(" in body and "T.gemm(A_tile, B_tile, acc_f)" in body
    assert "tensor_cores=False" in body  # exact fp32 by default
    # on GPUs whole tiles take any k tile (the CUDA loop covers ceil(K / 16) tiles); element
    # staging (the CPU target) keeps the CUDA tile
    assert "block_K = block_K or 16 if whole_tiles else 16  # else the CUDA code's tile over k" in body


def test_allow_tf32_uses_tensor_cores_and_its_own_tolerance(tmp_path):
    kernels, text = convert(tmp_path, TILED_GEMM, "--allow-tf32")
    assert kernels["mm"]["tolerance"] == "tf32"
    assert "tensor_cores=True" in factory(text, "mm")


def test_gemm_with_a_data_dependent_factor_is_not_a_gemm(tmp_path):
    kernels, _ = convert(tmp_path, """
        __global__ void gathered(const float* __restrict__ A, const float* __restrict__ B, const int* __restrict__ p,
                                 float* __restrict__ C, int M, int N, int K) {
            int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
            if (r < M && c < N) {
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) acc += A[r * K + k] * B[k * N + c] * A[p[c] * K + k];
                C[r * N + c] = acc;
            }
        }
    """)
    assert kernels["gathered"]["form"] == "tile" and "GEMM" not in kernels["gathered"]["reason"]


# -- a lift that fails its check falls back --------------------------------------------------------

def test_failing_lift_falls_back_to_portable(tmp_path, monkeypatch):
    import migrate.emit.tile as tile

    real = tile.tile_factory

    def broken(*args, **kwargs):  # a lifting bug: every element stores one more than it should
        lines = real(*args, **kwargs)
        return [tile.Line(ln.indent, ln.text.replace("y[i] = a * x[i]", "y[i] = 1.0 + a * x[i]"), ln.origin)
                for ln in lines]

    monkeypatch.setattr(tile, "tile_factory", broken)
    spec = STENCIL_SPEC.replace('"blur"', '"scale"').replace('name = "in"', 'name = "x"').replace(
        'name = "out"', 'name = "y"').replace('[[kernel.args]]\n    name = "n"',
                                              '[[kernel.args]]\n    name = "a"\n    scalar = "float32"\n'
                                              '    value = 2.0\n    [[kernel.args]]\n    name = "n"')
    kernels, text = convert(tmp_path, """
        __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = a * x[i];
        }
    """, "--check", "cpu", spec=spec)
    k = kernels["scale"]
    assert k["form"] == "portable" and k["check"]["status"] == "pass", k
    (fallback,) = [d for d in k["diagnostics"] if d["code"] == "M3004"]
    assert "failed its check" in fallback["message"]
    assert "1.0 +" not in text


# -- index math ------------------------------------------------------------------------------------

def _expr(tmp_path, text: str) -> m.Expr:
    (tmp_path / "e.cu").write_text(f"__global__ void f(int a, int b, int* o) {{ o[0] = {text}; }}")
    pf = parse_file(str(tmp_path / "e.cu"))
    (assign,) = [n for n in m.walk(pf.unit.kernels[0].body) if isinstance(n, m.Assign)]
    return assign.value


def test_affine_forms_compare_up_to_integer_arithmetic(tmp_path):
    assert affine.same_value(_expr(tmp_path, "(a * 32 + (b - 3)) + 3"), _expr(tmp_path, "b + 32 * a"))
    assert not affine.same_value(_expr(tmp_path, "a * 32 + b"), _expr(tmp_path, "b + 31 * a"))
    terms, const = affine.linear_form(_expr(tmp_path, "2 * (a - 4) + a"))
    assert const == -8 and sorted(c for c, _ in terms.values()) == [3]


# -- the corpus ------------------------------------------------------------------------------------

@pytest.mark.slow
def test_lifted_corpus_kernels_agree_on_cpu(tmp_path):
    """The issue's bar: most corpus kernels lift to tile form, and every lifted one that the CPU
    target can run agrees with the original CUDA (run by the CPU executor)."""
    from migrate.runtime.checker import check_output_folder
    corpus = REPO / "corpus"
    out = tmp_path / "out"
    main(["convert", str(corpus), "-o", str(out), "-q", "--jobs", "2"])
    report = json.loads((out / "report.json").read_text())
    tile = {k["kernel"] for k in report["kernels"] if k["form"] == "tile"}
    assert len(tile) >= 0.6 * len(report["kernels"]), sorted(tile)
    checks = check_output_folder(out, report, device="cpu", kernels=tile, jobs=2)
    assert {c.kernel for c in checks} == tile
    bad = [f"{c.id}: {c.status}: {c.message[:200]}" for c in checks
           if c.status != "pass" and not (c.status == "skipped" and "bfloat16" in c.message)]
    assert not bad, "\n".join(bad)


def test_map_with_a_loop_per_element_runs_one_element_per_thread(tmp_path):
    # a dot product per element: four elements per thread would run four loops one after another
    kernels, text = convert(tmp_path, """
        __global__ void rowdot(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                               int rows, int cols) {
            int r = blockIdx.x * blockDim.x + threadIdx.x;
            if (r < rows) {
                float s = 0.0f;
                for (int c = 0; c < cols; ++c) s += A[r * cols + c] * x[c];
                y[r] = s;
            }
        }
    """)
    assert kernels["rowdot"]["form"] == "tile"
    assert 'tile=(256,), threads=256' in factory(text, "rowdot")


def test_map_calling_a_gpu_helper_has_no_full_tile_branch(tmp_path):
    # __popc's GPU form is a helper function: TileLang leaves the loop scalar, and the branch it
    # would vectorise gives each thread four neighbouring elements (uncoalesced when scalar)
    kernels, text = convert(tmp_path, """
        __global__ void bits(const unsigned* __restrict__ w, unsigned* __restrict__ c, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) c[i] = __popc(w[i]);
        }
        __global__ void plain(const unsigned* __restrict__ w, unsigned* __restrict__ c, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) c[i] = w[i] ^ 7u;
        }
    """)
    assert "no full-tile branch" in factory(text, "bits") and "# a full tile" not in factory(text, "bits")
    assert "# a full tile: TileLang drops the guards below and vectorises" in factory(text, "plain")
