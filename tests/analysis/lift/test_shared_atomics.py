"""Block sums through atomicAdd on a shared scalar (analysis.lift.shared_atomics) become
``T.reduce_sum`` over the block's lanes, on any block size.

Checked on the CPU against the g++-built CUDA: a double sum on 96-thread blocks (not a power of
two), an integer count with the atomic under a condition inside a grid-stride loop whose total
goes to a global atomicAdd. Refused: the atomic's old value used (a slot), a scalar zeroed to
another value than zero, lanes that read the sum after the barrier.
"""
from __future__ import annotations

from tests.analysis.lift.support import convert, factory, note, refused, refused_or_tiled

TOTAL = """
    __global__ void block_total(int n, const double* __restrict__ x, double* __restrict__ sums) {
        __shared__ double lsum;
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        double v = 0.0;
        if (i < n) v = x[i] * 2.0 - 1.0;
        if (threadIdx.x == 0) lsum = 0;
        __syncthreads();
        atomicAdd(&lsum, v);
        __syncthreads();
        if (threadIdx.x == 0) sums[blockIdx.x] = lsum;
    }
"""

TOTAL_SPEC = """
    [[kernel]]
    name = "block_total"
    grid = [9, 1, 1]
    block = [96, 1, 1]
    tolerance = "fp64"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 850
    [[kernel.args]]
    name = "x"
    buffer = "float64"
    elements = 850
    role = "in"
    range = [-3.0, 3.0]
    [[kernel.args]]
    name = "sums"
    buffer = "float64"
    elements = 9
    role = "out"
"""

COUNT = """
    __global__ void count_above(const float* __restrict__ x, int n, float level, int* __restrict__ total) {
        __shared__ int hits;
        if (threadIdx.x == 0) hits = 0;
        __syncthreads();
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            if (x[i] > level) atomicAdd(&hits, 1);
        }
        __syncthreads();
        if (threadIdx.x == 0) atomicAdd(total, hits);
    }
"""

COUNT_SPEC = """
    [[kernel]]
    name = "count_above"
    grid = [5, 1, 1]
    block = [100, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 2345
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 2345
    [[kernel.args]]
    name = "level"
    scalar = "float32"
    value = 0.25
    [[kernel.args]]
    name = "total"
    buffer = "int32"
    elements = 1
    role = "inout"
    range = [3, 9]
"""


def _lifted(tmp_path, source, spec, kernel):
    kernels, text = convert(tmp_path, source, "--check", "cpu", spec=spec)
    k = kernels[kernel]
    assert k["form"] == "tile", note(k)
    assert k["check"]["status"] == "pass", k["check"]
    assert "atomic" in k["reason"], k["reason"]
    body = factory(text, kernel)
    assert "T.reduce_sum(" in body and "T.sync_threads" not in body and "alloc_shared" not in body, body
    assert "power-of-two" not in body, body  # a sum of atomics holds on any block size
    return body


def test_double_sum_on_a_block_of_96_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, TOTAL, TOTAL_SPEC, "block_total")
    assert "lsum_own = lsum_own + v" in body and "sums[bx] = lsum_total[0]" in body


def test_conditional_count_in_a_grid_stride_loop_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, COUNT, COUNT_SPEC, "count_above")
    assert "hits_own = hits_own + 1" in body


def test_old_value_used_is_kept(tmp_path):
    source = COUNT.replace("if (x[i] > level) atomicAdd(&hits, 1);",
                           "if (x[i] > level) { int slot = atomicAdd(&hits, 1); if (slot == 0) total[1] = i; }")
    assert "int slot" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["count_above"]["form"] == "portable"


def test_scalar_zeroed_to_another_value_is_kept(tmp_path):
    source = TOTAL.replace("lsum = 0;", "lsum = 1.5;")
    assert "lsum = 1.5;" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["block_total"]["form"] == "portable"


def test_lanes_reading_the_sum_are_kept(tmp_path):
    source = TOTAL.replace("if (threadIdx.x == 0) sums[blockIdx.x] = lsum;", "if (i < n) sums[i] = v / lsum;")
    assert "v / lsum" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["block_total"]["form"] == "portable"


LAST_LANE = """
    __global__ void tally(const unsigned int* values, unsigned int* cmp_size) {
        __shared__ unsigned int compressable;
        int lid = threadIdx.x;
        int WGS = blockDim.x;
        int gid = blockIdx.x * WGS + lid;
        unsigned int value = values[gid];
        unsigned int inc;
        if (value < 16) inc = 1;
        else if (value < 256) inc = 2;
        else inc = 4;
        if (lid == 0) compressable = 0;
        __syncthreads();
        atomicAdd(&compressable, inc);
        __syncthreads();
        if (lid == WGS - 1) {
            atomicAdd(cmp_size, compressable);
        }
    }
"""

LAST_LANE_SPEC = """
    [[kernel]]
    name = "tally"
    grid = [6, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "values"
    buffer = "uint32"
    elements = 384
    role = "in"
    range = [0, 600]
    [[kernel.args]]
    name = "cmp_size"
    buffer = "uint32"
    elements = 1
    role = "inout"
    range = [1, 5]
"""


def test_total_used_by_the_last_thread_agrees_on_cpu(tmp_path):
    # the block's last thread (blockDim.x - 1) runs the final statements: one thread, as thread 0
    body = _lifted(tmp_path, LAST_LANE, LAST_LANE_SPEC, "tally")
    assert "T.atomic_add(cmp_size[0], compressable_total[0])" in body


def test_final_statements_of_another_thread_are_kept(tmp_path):
    source = LAST_LANE.replace("if (lid == WGS - 1)", "if (lid == WGS - 2)")
    assert "WGS - 2" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["tally"]["form"] == "portable"


TEMPLATE = """
    __device__ int weight(int v) { return v < 0 ? -v : 2 * v; }

    template <typename T>
    __global__ void weighted_sum(const T* __restrict__ x, const int* __restrict__ w, int n, T* __restrict__ out) {
        int tx = threadIdx.x;
        int i = blockIdx.x * blockDim.x + tx;
        int k = i < n ? weight(w[i]) : 0;
        __shared__ T sum;
        if (tx == 0) sum = 0;
        __syncthreads();
        T s = 0;
        if (i < n) s = x[i] * (T)k;
        atomicAdd(&sum, s);
        __syncthreads();
        if (tx == 0) out[blockIdx.x] = sum;
    }
    template __global__ void weighted_sum<float>(const float*, const int*, int, float*);
    template __global__ void weighted_sum<double>(const double*, const int*, int, double*);
"""

TEMPLATE_SPEC = """
    [[kernel]]
    name = "weighted_sum"
    template = ["double"]
    grid = [4, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp64"
    [[kernel.args]]
    name = "x"
    buffer = "float64"
    elements = 500
    role = "in"
    range = [-2.0, 2.0]
    [[kernel.args]]
    name = "w"
    buffer = "int32"
    elements = 500
    role = "in"
    range = [-7, 7]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 500
    [[kernel.args]]
    name = "out"
    buffer = "float64"
    elements = 4
    role = "out"
"""


def test_template_sum_after_a_device_function_agrees_on_cpu(tmp_path):
    # the statements before the zeroing (a device function given numbers) join the lanes' work
    body = _lifted(tmp_path, TEMPLATE, TEMPLATE_SPEC, "weighted_sum")
    assert "weight_expr(w[i])" in body and "sum__own = sum__own + s" in body


def test_buffer_the_barrier_orders_before_the_zeroing_is_kept(tmp_path):
    # a store before the zeroing that other lanes read after the first barrier: the barrier
    # ordered it, so those statements cannot join the lanes' work
    source = TEMPLATE.replace("const int* __restrict__ w, int n,", "int* __restrict__ w, int n,").replace(
        "int k = i < n ? weight(w[i]) : 0;", "int k = i < n ? weight(w[i]) : 0;\n        if (i < n) w[i] = k;").replace(
        "s = x[i] * (T)k;", "s = x[i] * (T)w[i ^ 1];").replace("const int*, int", "int*, int")
    assert "w[i] = k;" in source and "w[i ^ 1]" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["weighted_sum"]["form"] == "portable"


def test_sum_changed_by_the_final_statements_is_kept(tmp_path):
    source = COUNT.replace("if (threadIdx.x == 0) atomicAdd(total, hits);",
                           "if (threadIdx.x == 0) { atomicAdd(&hits, 1); atomicAdd(total, hits); }")
    assert "atomicAdd(&hits, 1); atomicAdd(total" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["count_above"]["form"] == "portable"


#: The sum in a constant cell of a shared array (snicit's ``check_acc``: ``extern __shared__ int
#: shcnt[]; ... atomicAdd(&shcnt[0], 1)``): the cell is the shared scalar.
CELL = """
    __global__ void hits_of_rows(const float* Y, int classes, int n, const int* label, int* cnt) {
        extern __shared__ int shcnt[];
        if (threadIdx.x == 0)
            shcnt[0] = 0;
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            int best = 0;
            float top = -10000.0f;
            for (int j = 0; j < classes; j++)
                if (Y[i * classes + j] > top) { best = j; top = Y[i * classes + j]; }
            if (best == label[i])
                atomicAdd(&shcnt[0], 1);
        }
        __syncthreads();
        if (threadIdx.x == 0)
            cnt[blockIdx.x] = shcnt[0] + 7;
    }
    void run(const float* Y, int c, int n, const int* l, int* cnt) { hits_of_rows<<<2, 64, sizeof(int)>>>(Y, c, n, l, cnt); }
"""

CELL_SPEC = """
    [[kernel]]
    name = "hits_of_rows"
    grid = [2, 1, 1]
    block = [64, 1, 1]
    shared_bytes = 4
    tolerance = "exact"
    [[kernel.args]]
    name = "Y"
    buffer = "float32"
    elements = 1500
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "classes"
    scalar = "int32"
    value = 5
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 300
    [[kernel.args]]
    name = "label"
    buffer = "int32"
    elements = 300
    role = "in"
    range = [0, 4]
    [[kernel.args]]
    name = "cnt"
    buffer = "int32"
    elements = 2
    role = "out"
"""


def test_a_cell_of_an_extern_array_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, CELL, CELL_SPEC, "hits_of_rows")
    assert "shcnt_own = shcnt_own + 1" in body and "cnt[bx] = shcnt_total[0] + 7" in body, body


def test_a_cell_of_an_extern_array_agrees_with_numpy(tmp_path):
    import numpy as np
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, CELL)
    assert kernels["hits_of_rows"]["form"] == "tile", note(kernels["hits_of_rows"])
    rng = np.random.default_rng(11)
    classes, n = 5, 300
    y = rng.uniform(-1.0, 1.0, size=(n, classes)).astype(np.float32)
    label = rng.integers(0, classes, size=n).astype(np.int32)
    cnt = torch.full((2,), -12345, dtype=torch.int32)  # poisoned
    load_module(tmp_path / "out" / "k.py").hits_of_rows(
        torch.from_numpy(y.ravel()), classes, n, torch.from_numpy(label), cnt,
        grid=(2, 1, 1), block=(64, 1, 1), shared_bytes=4, target="c")
    want = int((y.argmax(axis=1) == label).sum()) + 7  # each block counts every row
    assert cnt.tolist() == [want, want]


def test_a_cell_of_a_sized_array_through_pointer_arithmetic_agrees_on_cpu(tmp_path):
    source = (COUNT.replace("__shared__ int hits;", "__shared__ int hits[2];")
              .replace("hits = 0;", "hits[1] = 0;").replace("atomicAdd(&hits, 1)", "atomicAdd(hits + 1, 1)")
              .replace("atomicAdd(total, hits)", "atomicAdd(total, hits[1])"))
    assert "hits + 1" in source and "hits[1])" in source
    body = _lifted(tmp_path, source, COUNT_SPEC, "count_above")
    assert "hits_own = hits_own + 1" in body


def test_other_cells_of_the_array_are_kept(tmp_path):
    # the zeroed cell is not the one the atomics add to, or the block reads another cell
    for old, new in (("atomicAdd(&shcnt[0], 1)", "atomicAdd(&shcnt[1], 1)"),
                     ("cnt[blockIdx.x] = shcnt[0] + 7;", "cnt[blockIdx.x] = shcnt[0] + shcnt[1];")):
        source = CELL.replace(old, new).replace("sizeof(int)", "2 * sizeof(int)")
        assert new in source
        kernels, _ = convert(tmp_path, source)
        assert kernels["hits_of_rows"]["form"] == "portable", old


# several cells zeroed together, each summed by its own atomics: one reduction each (aop's
# compute_final_beta_kernel sums the three fields of a __shared__ double3)
VECTOR = """
    __global__ void moments(int n, const double* __restrict__ x, double* __restrict__ sums) {
        __shared__ double3 lsums;
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        double v = 0.0;
        if (i < n) v = x[i];
        if (threadIdx.x == 0)
            lsums = make_double3(0, 0, 0);
        __syncthreads();
        atomicAdd(&lsums.x, v);
        atomicAdd(&lsums.y, v * v);
        if (i < n) atomicAdd(&lsums.z, 1.0);
        __syncthreads();
        if (threadIdx.x == 0) {
            sums[3 * blockIdx.x] = lsums.x;
            sums[3 * blockIdx.x + 1] = lsums.y;
            sums[3 * blockIdx.x + 2] = lsums.z;
        }
    }
"""

VECTOR_SPEC = """
    [[kernel]]
    name = "moments"
    grid = [7, 1, 1]
    block = [96, 1, 1]
    tolerance = "fp64"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 650
    [[kernel.args]]
    name = "x"
    buffer = "float64"
    elements = 650
    role = "in"
    range = [-2.0, 3.0]
    [[kernel.args]]
    name = "sums"
    buffer = "float64"
    elements = 21
    role = "out"
"""


def test_the_fields_of_a_shared_vector_agree_on_cpu(tmp_path):
    body = _lifted(tmp_path, VECTOR, VECTOR_SPEC, "moments")
    for f in "xyz":
        assert f"T.reduce_sum(lsums_{f}_lanes, lsums_{f}_total, dim=0)" in body, body
    assert "sums[3 * bx + 2] = lsums_z_total[0]" in body, body


def test_the_fields_of_a_shared_vector_agree_with_numpy(tmp_path):
    import numpy as np
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, VECTOR)
    assert kernels["moments"]["form"] == "tile", note(kernels["moments"])
    rng = np.random.default_rng(5)
    n, grid, block = 650, 7, 96
    x = rng.uniform(-2.0, 3.0, size=n)
    sums = torch.full((3 * grid,), float("nan"), dtype=torch.float64)  # poisoned
    load_module(tmp_path / "out" / "k.py").moments(n, torch.from_numpy(x), sums, grid=(grid, 1, 1),
                                                   block=(block, 1, 1), target="c")
    want = []
    for b in range(grid):
        part = x[b * block:min(n, (b + 1) * block)]
        want += [part.sum(), (part * part).sum(), float(len(part))]
    np.testing.assert_allclose(sums.numpy(), np.array(want), rtol=1e-12, atol=1e-12)


def test_two_scalars_zeroed_apart_agree_on_cpu(tmp_path):
    source = (TOTAL.replace("__shared__ double lsum;", "__shared__ double lsum; __shared__ double lmax;")
              .replace("if (threadIdx.x == 0) lsum = 0;", "if (threadIdx.x == 0) lsum = 0; if (threadIdx.x == 0) lmax = 0;")
              .replace("atomicAdd(&lsum, v);", "atomicAdd(&lsum, v); atomicAdd(&lmax, 2.0 * v);")
              .replace("sums[blockIdx.x] = lsum;", "sums[blockIdx.x] = lsum - lmax;"))
    assert "lmax = 0" in source and "lsum - lmax" in source
    body = _lifted(tmp_path, source, TOTAL_SPEC, "block_total")
    assert "sums[bx] = lsum_total[0] - lmax_total[0]" in body, body


def test_a_field_the_lanes_read_keeps_the_vector_portable(tmp_path):
    source = VECTOR.replace("sums[3 * blockIdx.x + 2] = lsums.z;\n        }",
                            "sums[3 * blockIdx.x + 2] = lsums.z;\n        }\n        if (i < n) sums[i] = lsums.y;")
    assert "sums[i] = lsums.y" in source
    kernels, _ = convert(tmp_path, source)
    assert kernels["moments"]["form"] == "portable"


def test_slots_handed_out_by_a_shared_counter_say_the_order_decides(tmp_path):
    # stream compaction through a shared counter (filter's shape): the slot each thread gets is
    # the order its atomic ran in, so the kernel stays portable and the note says why
    source = """
        __global__ void compact(int* __restrict__ dst, int* __restrict__ nres, const int* __restrict__ src, int n) {
            __shared__ int l_n;
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (threadIdx.x == 0) l_n = 0;
            __syncthreads();
            int d = 0, pos = 0;
            if (i < n) {
                d = src[i];
                if (d > 0) pos = atomicAdd(&l_n, 1);
            }
            __syncthreads();
            if (threadIdx.x == 0) l_n = atomicAdd(nres, l_n);
            __syncthreads();
            if (i < n && d > 0) dst[pos + l_n] = d;
        }
    """
    why = refused(tmp_path, source)
    assert "old value of an atomic on shared memory (line 11)" in why and "order the atomics run in" in why, why


# the sum under a branch around its barriers (sad's get_num_of_occurrences): the lanes count
# where the branch holds, the block adds its count where it holds for thread 0
OCCURRENCES = """
    __global__ void occurrences(const int n, const int* __restrict__ a, const int* __restrict__ target,
                                int* __restrict__ count) {
        unsigned int gid = threadIdx.x + blockIdx.x * blockDim.x;
        __shared__ int s;
        if (gid < n) {
            if (threadIdx.x == 0) s = 0;
            __syncthreads();
            if (a[gid] == *target)
                atomicAdd(&s, 1);
            __syncthreads();
            if (threadIdx.x == 0)
                atomicAdd(count, s);
        }
    }
"""

OCCURRENCES_SPEC = """
    [[kernel]]
    name = "occurrences"
    grid = [6, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 300
    [[kernel.args]]
    name = "a"
    buffer = "int32"
    elements = 384
    role = "in"
    range = [0, 4]
    [[kernel.args]]
    name = "target"
    buffer = "int32"
    elements = 1
    role = "in"
    range = [1, 2]
    [[kernel.args]]
    name = "count"
    buffer = "int32"
    elements = 1
    role = "inout"
    range = [3, 9]
"""


def test_a_count_under_a_branch_around_its_barriers_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, OCCURRENCES, OCCURRENCES_SPEC, "occurrences")
    assert "s_own = s_own + 1" in body and "cond_L" not in body, body
    assert "T.atomic_add(count[0], s_total[0])" in body, body


def test_a_count_under_a_branch_around_its_barriers_agrees_with_numpy(tmp_path):
    import numpy as np
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, OCCURRENCES)
    assert kernels["occurrences"]["form"] == "tile", note(kernels["occurrences"])
    rng = np.random.default_rng(3)
    n, grid, block = 300, 6, 64  # the last two blocks partly, then wholly, past n
    a = rng.integers(0, 4, size=grid * block).astype(np.int32)
    a[n:] = 1  # past n: never counted, though they equal the target
    count = torch.tensor([5], dtype=torch.int32)
    load_module(tmp_path / "out" / "k.py").occurrences(
        n, torch.from_numpy(a), torch.tensor([1], dtype=torch.int32), count,
        grid=(grid, 1, 1), block=(block, 1, 1), target="c")
    assert count.tolist() == [5 + int((a[:n] == 1).sum())]


def test_a_branch_that_reads_memory_keeps_the_count_portable(tmp_path):
    # the lanes would evaluate a[gid] > 0 again after the barriers: kept as it is
    source = OCCURRENCES.replace("if (gid < n) {", "if (gid < n && a[gid] > 0) {")
    assert "a[gid] > 0" in source
    # no reduction of it: portable, or its phases lifted as tiled loops that agree with the CUDA
    refused_or_tiled(tmp_path, source, "occurrences", "", OCCURRENCES_SPEC)


# a shared cache beside the summed cell (aop's compute_partial_beta_kernel stages its SVD terms):
# the cache is forwarded, the cell and its barriers kept for the sum
CACHED = """
    __global__ void weighted(int n, const float* __restrict__ coef, const float* __restrict__ x,
                             float* __restrict__ sums) {
        __shared__ float lsum;
        __shared__ float c[4];
        if (threadIdx.x < 4) c[threadIdx.x] = coef[threadIdx.x];
        __syncthreads();
        const float a = c[0], b = c[1], d = c[3];
        float acc = 0.0f;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
            acc += a * x[i] * x[i] + b * x[i] + d;
        if (threadIdx.x == 0) lsum = 0.0f;
        __syncthreads();
        atomicAdd(&lsum, acc);
        __syncthreads();
        if (threadIdx.x == 0) sums[blockIdx.x] = lsum;
    }
"""

CACHED_SPEC = """
    [[kernel]]
    name = "weighted"
    grid = [4, 1, 1]
    block = [64, 1, 1]
    tolerance = "fp32"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 1000
    [[kernel.args]]
    name = "coef"
    buffer = "float32"
    elements = 4
    role = "in"
    range = [0.5, 2.0]
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 1000
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "sums"
    buffer = "float32"
    elements = 4
    role = "out"
"""


def test_a_sum_beside_a_shared_cache_agrees_on_cpu(tmp_path):
    body = _lifted(tmp_path, CACHED, CACHED_SPEC, "weighted")
    assert "a = coef[T.uint32(0)]" in body and "d = coef[T.uint32(3)]" in body, body
    assert "sums[bx] = lsum_total[0]" in body and "alloc_shared" not in body, body


def test_a_sum_beside_a_shared_cache_agrees_with_numpy(tmp_path):
    import numpy as np
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, CACHED)
    assert kernels["weighted"]["form"] == "tile", note(kernels["weighted"])
    assert "caches are forwarded" in kernels["weighted"]["reason"]
    rng = np.random.default_rng(9)
    n, grid, block = 1000, 4, 64
    coef = rng.uniform(0.5, 2.0, size=4).astype(np.float32)
    x = rng.uniform(-1.0, 1.0, size=n).astype(np.float32)
    sums = torch.full((grid,), float("nan"), dtype=torch.float32)  # poisoned
    load_module(tmp_path / "out" / "k.py").weighted(
        n, torch.from_numpy(coef), torch.from_numpy(x), sums, grid=(grid, 1, 1), block=(block, 1, 1), target="c")
    terms = (coef[0].astype(np.float64) * x * x + coef[1] * x + coef[3]).astype(np.float64)
    i = np.arange(n)
    want = [terms[(i // block) % grid == b].sum() for b in range(grid)]  # grid-stride: block b takes i // 64 = b mod 4
    np.testing.assert_allclose(sums.numpy(), np.array(want), rtol=1e-5, atol=1e-4)
