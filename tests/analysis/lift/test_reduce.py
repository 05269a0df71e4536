"""Block reductions (analysis.lift.reduce): shared-memory trees become ``T.reduce_*``.

A shared tree (and the warp trees :mod:`~migrate.analysis.lift.warp` finds) in a 1-D block, the
cooperative groups' linear rank read as threadIdx.x; refused: other arithmetic in the tree, a
``__shared__`` variable declared outside the kernel, 2-D blocks.
"""
from __future__ import annotations

from tests.analysis.lift.support import ROW_NORMALIZE, WARP_MAX, convert, factory, note


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


def test_shared_variable_declared_outside_the_kernel_is_refused(tmp_path):
    source = ROW_NORMALIZE.replace("const float inv = 1.0f / block_sum(s);",
                                   "const float inv = 1.0f / block_sum(s);\n        __syncthreads();\n"
                                   "        if (threadIdx.x == 0) total = 0.0f;").replace(
        "__shared__ float total;", "").replace("__device__ float block_sum", "__shared__ float total;\n    "
                                              "__device__ float block_sum")
    kernels, _ = convert(tmp_path, source)
    assert "'total' declared outside the kernel" in note(kernels["normalize"]), note(kernels["normalize"])


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


LITERAL_TREES = """
    __global__ void sum_within_blocks(const int n, const float* data, float* blocksums) {
        int nthread = blockDim.x * gridDim.x;
        int i = blockDim.x * blockIdx.x + threadIdx.x;
        __shared__ float sdata[512];
        float st = 0.0f;
        while (i < n) { st += data[i]; i += nthread; }
        sdata[threadIdx.x] = st;
        __syncthreads();
        int tid = threadIdx.x;
        for (unsigned int s = 128; s > 0; s >>= 1) {
            if (tid < s && (tid + s) < blockDim.x) sdata[tid] += sdata[tid + s];
            __syncthreads();
        }
        if (tid == 0) blocksums[blockIdx.x] = sdata[0];
    }
    __global__ void warp_total(const long* __restrict__ x, long* __restrict__ out, int n) {
        __shared__ long part[32];
        long mine = 0;
        for (int i = threadIdx.x; i < n; i += blockDim.x) mine += x[i];
        part[threadIdx.x] = mine;
        __syncthreads();
        for (int i = 16; i > 0; i /= 2) {
            if (threadIdx.x < i) part[threadIdx.x] += part[threadIdx.x + i];
            __syncthreads();
        }
        if (threadIdx.x == 0) out[0] = part[0];
    }
"""

LITERAL_TREES_SPEC = """
    [[kernel]]
    name = "sum_within_blocks"
    grid = [6, 1, 1]
    block = [256, 1, 1]
    tolerance = "fp32"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 5000
    [[kernel.args]]
    name = "data"
    buffer = "float32"
    elements = 5000
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "blocksums"
    buffer = "float32"
    elements = 6
    role = "out"

    [[kernel]]
    name = "warp_total"
    grid = [1, 1, 1]
    block = [32, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "int64"
    elements = 700
    role = "in"
    range = [-1000, 1000]
    [[kernel.args]]
    name = "out"
    buffer = "int64"
    elements = 1
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 700
"""


def test_trees_starting_at_a_literal_width_become_t_reduce(tmp_path):
    """The pool's vmc (``for (unsigned s = 128; ...) if (tid < s && (tid + s) < blockDim.x)``) and
    concurrentKernels (``for (int i = 16; ...)`` over 32 threads): a tree of twice its first step,
    the block asserted that wide; vmc's guard on the partner folds any block up to that width (the
    factory asserts at most 256; tests/analysis/lift/test_bounded_trees.py runs 224)."""
    kernels, text = convert(tmp_path, LITERAL_TREES, "--check", "cpu", spec=LITERAL_TREES_SPEC)
    for name, width, shared in (("sum_within_blocks", "<= 256", "sdata"), ("warp_total", "== 32", "part")):
        k = kernels[name]
        assert k["form"] == "tile" and k["check"]["status"] == "pass", (name, k["check"], note(k))
        body = factory(text, name)
        assert f"T.reduce_sum({shared}_lanes, {shared}_total, dim=0)" in body and f"assert block_x {width}" in body, body
