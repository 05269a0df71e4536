"""Block reductions over a 2-D block's threads in the order of their rank
``threadIdx.x + W * threadIdx.y`` (analysis.lift.flat_block): the block's threads become one row of
lanes, the trees ``T.reduce`` over them; checked on the CPU against the CUDA built with g++, on
several blocks in x and y with partial blocks at the edges and values that differ by row and
column. A reduction along x for each row is not this (refused with its reason)."""
from __future__ import annotations

from tests.analysis.lift.support import convert, factory, note
from tests.analysis.support import spec_buffer, spec_kernel, spec_scalar

KERNELS = """
    #include <cub/cub.cuh>
    #define BX 16

    // a hand-written tree over the rank; a value of the thread's row and column
    __global__ void tile_max(const float* __restrict__ x, float* __restrict__ out, int w, int h) {
        __shared__ float s[BX * 8];
        int c = blockIdx.x * BX + threadIdx.x;
        int r = blockIdx.y * blockDim.y + threadIdx.y;
        int tid = threadIdx.y * BX + threadIdx.x;
        s[tid] = (c < w && r < h) ? x[r * w + c] * (1.0f + threadIdx.y) - 0.25f * threadIdx.x : -1.0e30f;
        __syncthreads();
        for (int k = blockDim.x * blockDim.y / 2; k > 0; k >>= 1) {
            if (tid < k) s[tid] = fmaxf(s[tid], s[tid + k]);
            __syncthreads();
        }
        if (tid == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = s[0];
    }

    // CUB over a 2-D block (as ccsd-trpdrv): two per-thread values, one reduced after the other,
    // each result overwriting the thread's own value
    __global__ void tile_moments(const float* __restrict__ x, float* __restrict__ sum,
                                 float* __restrict__ sq, int w, int h) {
        typedef cub::BlockReduce<float, BX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, 4> BlockReduce;
        __shared__ typename BlockReduce::TempStorage t1, t2;
        const int c = blockIdx.x * blockDim.x + threadIdx.x;
        const int r = blockIdx.y * blockDim.y + threadIdx.y;
        float s1 = 0.0f, s2 = 0.0f;
        if (c < w && r < h) {
            const float v = x[r * w + c];
            s1 = v * (r + 1);
            s2 = v * v - 0.5f * c;
        }
        s1 = BlockReduce(t1).Sum(s1);
        s2 = BlockReduce(t2).Sum(s2);
        if (threadIdx.x == 0 && threadIdx.y == 0) {
            atomicAdd(sum, s1);
            atomicAdd(sq, s2);
        }
    }

    // the rank spelled with blockDim.x: the launch's width, whatever it is
    __global__ void tile_sum(const int* __restrict__ x, int* __restrict__ out, int w, int h) {
        __shared__ int s[512];
        int tid = threadIdx.y * blockDim.x + threadIdx.x;
        int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
        s[tid] = (c < w && r < h) ? x[r * w + c] * (r - 2 * c) : 0;
        __syncthreads();
        for (int k = blockDim.x * blockDim.y / 2; k > 0; k >>= 1) {
            if (tid < k) s[tid] += s[tid + k];
            __syncthreads();
        }
        if (tid == 0) out[blockIdx.y * gridDim.x + blockIdx.x] = s[0];
    }

    int main() {
        float *x, *out, *a, *b; int *xi, *oi;
        tile_max<<<dim3(4, 3), dim3(BX, 8)>>>(x, out, 50, 21);
        tile_moments<<<dim3(3, 5), dim3(BX, 4)>>>(x, a, b, 40, 19);
        tile_sum<<<dim3(5, 2), dim3(8, 16)>>>(xi, oi, 37, 29);
    }
"""

SPEC = (
    spec_kernel("tile_max", (4, 3, 1), (16, 8, 1), "exact",
                spec_buffer("x", "float32", 50 * 21, "in", -3.0, 3.0), spec_buffer("out", "float32", 12, "out"),
                spec_scalar("w", "int32", 50), spec_scalar("h", "int32", 21))
    + spec_kernel("tile_moments", (3, 5, 1), (16, 4, 1), "fp32_accum",
                  spec_buffer("x", "float32", 40 * 19, "in", -2.0, 2.0), spec_buffer("sum", "float32", 1, "inout", -1.0, 1.0),
                  spec_buffer("sq", "float32", 1, "inout", -1.0, 1.0), spec_scalar("w", "int32", 40), spec_scalar("h", "int32", 19))
    + spec_kernel("tile_sum", (5, 2, 1), (8, 16, 1), "exact",
                  spec_buffer("x", "int32", 37 * 29, "in", -50, 50), spec_buffer("out", "int32", 10, "out"),
                  spec_scalar("w", "int32", 37), spec_scalar("h", "int32", 29))
)


def test_trees_over_a_2d_blocks_rank_become_t_reduce_and_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, KERNELS, "--check", "cpu", spec=SPEC)
    for name in ("tile_max", "tile_moments", "tile_sum"):
        k = kernels[name]
        assert k["form"] == "tile" and k["check"]["status"] == "pass", (name, k["check"], note(k))
    body = factory(text, "tile_max")
    # the block must be as wide as the rank says; its threads are the lanes, in the rank's order
    assert 'assert block_x == 16, "tile_max reduces over its threads\' rank threadIdx.x + 16 * threadIdx.y' in body
    assert "block_x, block_y = block_x * block_y, 1" in body
    assert "T.reduce_max(s_lanes, s_total, dim=0)" in body and "T.sync_threads" not in body
    assert "lane % 16" in body and "lane // 16" in body  # threadIdx.x and threadIdx.y of each lane
    moments = factory(text, "tile_moments")
    assert "T.reduce_sum(t1_lanes, t1_total, dim=0)" in moments and "T.reduce_sum(t2_lanes, t2_total, dim=0)" in moments
    # s2, computed before the first tree and reduced by the second, stays per lane in between
    assert "s2 = alloc_lanes((block_x,), T.float32)" in moments and "t2_lanes[lane] = s2[lane]" in moments
    assert "alloc_shared" not in moments
    launch_wide = factory(text, "tile_sum")
    assert "block_width = block_x  # tile_sum reduces over its threads' rank" in launch_wide
    assert "T.reduce_sum(s_lanes, s_total, dim=0)" in launch_wide and "lane % block_width" in launch_wide


ROW_SUMS = """
    __global__ void row_sums(const float* __restrict__ x, float* __restrict__ out, int w) {
        __shared__ float s[4][32];
        int r = blockIdx.x * 4 + threadIdx.y;
        s[threadIdx.y][threadIdx.x] = threadIdx.x < w ? x[r * w + threadIdx.x] : 0.0f;
        __syncthreads();
        for (int k = 16; k > 0; k >>= 1) {
            if (threadIdx.x < k) s[threadIdx.y][threadIdx.x] += s[threadIdx.y][threadIdx.x + k];
            __syncthreads();
        }
        if (threadIdx.x == 0) out[r] = s[threadIdx.y][0];
    }
"""


def test_a_reduction_per_row_is_not_flattened(tmp_path):
    """Its trees index by threadIdx.x within a row, not by the rank: the kernel keeps its 2-D
    threads (a note says why it is not lifted)."""
    kernels, _ = convert(tmp_path, ROW_SUMS)
    k = kernels["row_sums"]
    assert k["form"] == "portable" and note(k).startswith("not lifted to tile form: "), note(k)


def test_ranks_of_two_widths_are_refused(tmp_path):
    """``threadIdx.x + 16 * threadIdx.y`` and ``+ 8 *`` cannot both be the lane: not flattened."""
    source = KERNELS.split("// CUB over")[0].replace("if (tid == 0) out", "if (threadIdx.x + 8 * threadIdx.y == 0) out")
    kernels, _ = convert(tmp_path, source.replace("#include <cub/cub.cuh>", ""))
    k = kernels["tile_max"]
    assert k["form"] == "portable" and "this kernel ranks them with several widths (8, 16)" in note(k), note(k)


def test_a_rank_narrower_than_the_launched_block_is_refused(tmp_path):
    """``threadIdx.x + 16 * threadIdx.y`` on blocks 32 wide ranks two threads alike: the CUDA
    launch is not the one the rank assumes, and the lift says so rather than assert at run time."""
    source = KERNELS.split("// CUB over")[0].replace("#include <cub/cub.cuh>", "") + """
    int main() { float *x, *out; tile_max<<<dim3(2, 3), dim3(32, 4)>>>(x, out, 50, 21); }
    """
    kernels, _ = convert(tmp_path, source)
    k = kernels["tile_max"]
    assert k["form"] == "portable"
    assert "it ranks its threads threadIdx.x + 16 * threadIdx.y, and its launches give blocks 32 threads wide" \
        in note(k), note(k)


TWO_SUMS = """
    #include <cub/cub.cuh>
    // 1-D (as channelSum): both per-thread values are computed before the first tree, the second
    // is reduced after it, and each total overwrites the thread's own value
    __global__ void col_moments(const int* __restrict__ x, int* __restrict__ out, int rows, int cols) {
        typedef cub::BlockReduce<int, 128> BlockReduce;
        __shared__ typename BlockReduce::TempStorage t1;
        __shared__ typename BlockReduce::TempStorage t2;
        int m = 0, v = 0;
        for (int i = threadIdx.x; i < rows; i += blockDim.x) {
            int e = x[i * cols + blockIdx.x] - (int)threadIdx.x % 7;
            m += e;
            v += e * e;
        }
        m = BlockReduce(t1).Sum(m);
        v = BlockReduce(t2).Sum(v);
        if (threadIdx.x == 0) { out[2 * blockIdx.x] = m; out[2 * blockIdx.x + 1] = v; }
    }
    int main() { int *x, *out; col_moments<<<9, 128>>>(x, out, 300, 9); }
"""

TWO_SUMS_SPEC = spec_kernel("col_moments", (9, 1, 1), (128, 1, 1), "exact",
                            spec_buffer("x", "int32", 300 * 9, "in", -40, 40), spec_buffer("out", "int32", 18, "out"),
                            spec_scalar("rows", "int32", 300), spec_scalar("cols", "int32", 9))


def test_a_per_thread_value_reduced_after_another_tree_stays_per_lane(tmp_path):
    """analysis.lift.reduce: ``v``, computed by each thread before the first tree and reduced by the
    second, lives in a buffer of the block's lanes between the two lane loops."""
    kernels, text = convert(tmp_path, TWO_SUMS, "--check", "cpu", spec=TWO_SUMS_SPEC)
    k = kernels["col_moments"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "col_moments")
    assert "v = alloc_lanes((block_x,), T.int32)" in body and "t2_lanes[lane] = v[lane]" in body
    assert "T.sync_threads" not in body and "alloc_shared" not in body
