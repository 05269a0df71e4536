"""Block reductions over 3-D blocks ranked ``threadIdx.x + W * threadIdx.y + W * H * threadIdx.z``
(analysis.lift.flat_block), NVIDIA's blockReduceSum whose second level loads in every thread and
reduces in warp 0 (analysis.lift.warp), and the notes that say what a 2-D or 3-D kernel that is
no ranked reduction computes (analysis.lift.block_shape_reason).

The lifted kernels run on the CPU target and are compared with numpy (outputs poisoned, inputs
that differ by thread position in every dimension)."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import TILED_LOOPS, convert, factory, note

WARPS = """
    #define WARPSIZE 32
    #define BX 8
    #define BY 4
    template <typename T>
    __inline__ __device__ T warp_reduce(T val)
    {
        for (int offset = WARPSIZE >> 1; offset > 0; offset >>= 1)
            val += __shfl_down_sync(0xFFFFFFFF, val, offset);
        return val;
    }
    // NVIDIA's blockReduceSum: every thread loads, warp 0 reduces, thread 0 reads after the branch
    template <typename T>
    __inline__ __device__ T block_reduce(T val)
    {
        static __shared__ T shared[WARPSIZE];
        int tid = threadIdx.z * BY * BX + threadIdx.y * BX + threadIdx.x;
        int lane = tid & (WARPSIZE - 1);
        int wid = tid / WARPSIZE;
        val = warp_reduce<T>(val);
        if (lane == 0)
            shared[wid] = val;
        __syncthreads();
        val = (tid < (blockDim.x * blockDim.y * blockDim.z) / WARPSIZE) ? shared[lane] : 0;
        if (wid == 0) {
            val = warp_reduce<T>(val);
        }
        return val;
    }
"""

ENERGY = WARPS + """
    // metropolis's energy: one value per site of a 3-D block, summed over the block
    __global__ void energy(const float* __restrict__ s, float* __restrict__ out, int nx, int ny, int nz)
    {
        int x = blockIdx.x * blockDim.x + threadIdx.x;
        int y = blockIdx.y * blockDim.y + threadIdx.y;
        int z = blockIdx.z * blockDim.z + threadIdx.z;
        int tid = threadIdx.z * BY * BX + threadIdx.y * BX + threadIdx.x;
        float e = 0.0f;
        if (x < nx && y < ny && z < nz)
            e = s[(z * ny + y) * nx + x] * (1.0f + threadIdx.z) - 0.125f * threadIdx.y + 0.0625f * x;
        e = block_reduce<float>(e);
        if (tid == 0) out[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = e;
    }
    int main() { float *s, *out; energy<<<dim3(3, 2, 2), dim3(BX, BY, 4)>>>(s, out, 21, 7, 6); }
"""

GRID, BLOCK, SIZE = (3, 2, 2), (8, 4, 4), (21, 7, 6)


def _energy_reference(s):
    nx, ny, nz = SIZE
    out = np.zeros(GRID[::-1])
    for bz in range(GRID[2]):
        for by in range(GRID[1]):
            for bx in range(GRID[0]):
                for tz in range(BLOCK[2]):
                    for ty in range(BLOCK[1]):
                        for tx in range(BLOCK[0]):
                            x, y, z = bx * BLOCK[0] + tx, by * BLOCK[1] + ty, bz * BLOCK[2] + tz
                            if x < nx and y < ny and z < nz:
                                out[bz, by, bx] += s[(z * ny + y) * nx + x] * (1.0 + tz) - 0.125 * ty + 0.0625 * x
    return out.reshape(-1)


def test_a_3d_blocks_ranked_warp_reduction_becomes_one_t_reduce_and_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, text = convert(tmp_path, ENERGY)
    k = kernels["energy"]
    assert k["form"] == "tile" and "warp-shuffle" in k["reason"], note(k)
    body = factory(text, "energy")
    # the block must have the rank's width and height; its threads are the lanes in that order
    assert 'assert block_x == 8 and block_y == 4, "energy reduces over its threads\' rank threadIdx.x + 8 * ' \
           'threadIdx.y + 32 * threadIdx.z' in body
    assert "block_x, block_y, block_z = block_x * block_y * block_z, 1, 1" in body
    assert "lane % 8" in body and "lane // 8 % 4" in body and "lane // 32" in body
    assert "T.reduce_sum(block_reduce_2_shared_lanes, block_reduce_2_shared_total, dim=0)" in body
    assert "sync_threads" not in body and "shfl" not in body and "alloc_shared" not in body
    rng = np.random.default_rng(5)
    nx, ny, nz = SIZE
    s = rng.uniform(-1.0, 1.0, nx * ny * nz).astype(np.float32)
    out = torch.full((GRID[0] * GRID[1] * GRID[2],), float("nan"))  # poisoned: every block writes its total
    load_module(tmp_path / "out" / "k.py").energy(torch.from_numpy(s), out, nx, ny, nz, grid=GRID, block=BLOCK,
                                                  target="c")
    np.testing.assert_allclose(out.numpy(), _energy_reference(s.astype(np.float64)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("old, new, reason", [
    # lane 0 of every warp reads: partial totals outside warp 0
    ("if (tid == 0) out[", "if ((tid & 31) == 0) out[tid / 32 + ", "not read by thread 0"),
    # the lanes past the last warp add 1
    (": 0;\n        if (wid == 0)", ": 1;\n        if (wid == 0)", "not the identity of sum"),
    # every thread stores what it holds after the branch: partial or loaded values outside warp 0
    ("if (tid == 0) out[(blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = e;",
     "out[tid * 12 + (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x] = e;", "not read by thread 0"),
    # a rank of another shape beside the block's
    ("if (tid == 0) out", "if (threadIdx.x + 8 * threadIdx.y + 64 * threadIdx.z == 0) out", "several shapes (8x4, 8x8)"),
])
def test_3d_reductions_it_must_refuse(tmp_path, old, new, reason):
    source = ENERGY if old in ENERGY else WARPS
    assert old in source
    kernels, _ = convert(tmp_path, source.replace(old, new))
    k = kernels["energy"]
    assert k["form"] == "portable" and reason in note(k), note(k)


def test_a_launch_of_another_width_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, ENERGY.replace("dim3(BX, BY, 4)", "dim3(16, 2, 4)"))
    k = kernels["energy"]
    assert k["form"] == "portable"
    assert "ranks its threads threadIdx.x + 8 * threadIdx.y + 32 * threadIdx.z, and its launches give blocks 16 " \
           "threads wide" in note(k), note(k)


ROW_SUM_1D = WARPS.replace("threadIdx.z * BY * BX + threadIdx.y * BX + threadIdx.x", "threadIdx.x").replace(
    "(blockDim.x * blockDim.y * blockDim.z)", "blockDim.x").replace("T val", "T val").replace(
    "val += __shfl_down_sync", "val = fmaxf(val, __shfl_down_sync").replace("val, offset);", "val, offset));").replace(
    "? shared[lane] : 0;", "? shared[lane] : -INFINITY;") + """
    // the block's maximum of each row, NVIDIA's form in a 1-D block
    __global__ void row_max(const float* __restrict__ x, float* __restrict__ out, int n)
    {
        float v = -INFINITY;
        for (int i = threadIdx.x; i < n; i += blockDim.x) v = fmaxf(v, x[blockIdx.x * n + i] - 0.01f * i);
        v = block_reduce<float>(v);
        if (threadIdx.x == 0) out[blockIdx.x] = v;
    }
"""


def test_nvidias_block_reduce_in_a_1d_block_becomes_t_reduce_max_and_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    assert "-INFINITY;\n        if (wid == 0)" in ROW_SUM_1D and "fmaxf(val, __shfl_down_sync" in ROW_SUM_1D
    kernels, text = convert(tmp_path, "#include <cmath>\n" + ROW_SUM_1D)
    k = kernels["row_max"]
    assert k["form"] == "tile", note(k)
    body = factory(text, "row_max")
    assert "T.reduce_max(block_reduce_2_shared_lanes, block_reduce_2_shared_total, dim=0)" in body
    assert "sync_threads" not in body and "shfl" not in body
    rng = np.random.default_rng(9)
    rows, n = 4, 300
    x = rng.uniform(-2.0, 2.0, rows * n).astype(np.float32)
    for block in (64, 256, 1024):  # 2 warps (the second level padded), 8, 32 (no padding)
        out = torch.full((rows,), float("nan"))
        load_module(tmp_path / "out" / "k.py").row_max(torch.from_numpy(x), out, n, grid=(rows, 1, 1),
                                                       block=(block, 1, 1), target="c")
        want = (x.reshape(rows, n) - np.float32(0.01) * np.arange(n, dtype=np.float32)).max(axis=1)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-6, atol=1e-6)


# -- what a 2-D or 3-D kernel that is no ranked reduction computes ------------------------------------

NOT_REDUCTIONS = {
    # Jacobi steps of a 5-point stencil over a shared tile with its halo, in two tiles (eikonal's
    # solver, AES's two state blocks)
    "halo": ("""
    #define B 16
    __global__ void halo(const float* __restrict__ in, float* __restrict__ out, int w, int steps) {
        __shared__ float t[B + 2][B + 2];
        __shared__ float u[B][B];
        int x = blockIdx.x * B + threadIdx.x, y = blockIdx.y * B + threadIdx.y;
        t[threadIdx.y + 1][threadIdx.x + 1] = in[y * w + x];
        if (threadIdx.x == 0) t[threadIdx.y + 1][0] = 0.0f;
        if (threadIdx.x == B - 1) t[threadIdx.y + 1][B + 1] = 0.0f;
        if (threadIdx.y == 0) t[0][threadIdx.x + 1] = 0.0f;
        if (threadIdx.y == B - 1) t[B + 1][threadIdx.x + 1] = 0.0f;
        __syncthreads();
        for (int k = 0; k < steps; k++) {
            u[threadIdx.y][threadIdx.x] = 0.25f * (t[threadIdx.y][threadIdx.x + 1] + t[threadIdx.y + 2][threadIdx.x + 1]
                                                 + t[threadIdx.y + 1][threadIdx.x] + t[threadIdx.y + 1][threadIdx.x + 2]);
            __syncthreads();
            t[threadIdx.y + 1][threadIdx.x + 1] = u[threadIdx.y][threadIdx.x];
            __syncthreads();
        }
        out[y * w + x] = t[threadIdx.y + 1][threadIdx.x + 1];
    }
    int main() { float *a, *b; halo<<<dim3(4, 4), dim3(B, B)>>>(a, b, 64, 10); }
    """, "its threads exchange values through the __shared__ 't' across barriers"),
    # the same in a 3-D block that ranks its threads (eikonal's solver): ranked as lanes, then
    # refused as what it is
    "halo3d": ("""
    #define L 4
    __global__ void halo3d(const float* __restrict__ in, float* __restrict__ out, int steps) {
        __shared__ float t[L + 2][L + 2][L + 2];
        __shared__ float u[L][L][L];
        unsigned tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
        unsigned id = tz * L * L + ty * L + tx;
        unsigned base = blockIdx.x * L * L * L;
        t[tz + 1][ty + 1][tx + 1] = in[base + id];
        if (tx == 0) t[tz + 1][ty + 1][0] = 0.0f;
        if (tx == L - 1) t[tz + 1][ty + 1][L + 1] = 0.0f;
        __syncthreads();
        for (int k = 0; k < steps; k++) {
            u[tz][ty][tx] = 0.5f * (t[tz + 1][ty + 1][tx] + t[tz + 1][ty + 1][tx + 2]);
            __syncthreads();
            t[tz + 1][ty + 1][tx + 1] = u[tz][ty][tx];
            __syncthreads();
        }
        out[base + id] = t[tz + 1][ty + 1][tx + 1];
    }
    int main() { float *a, *b; halo3d<<<8, dim3(L, L, L)>>>(a, b, 3); }
    """, "its threads exchange values through the __shared__ 't' across barriers (a stencil's halo, the tiles of "
         "a tiled loop or a block-wide exchange), which the tile lifts of a 3-D block do not take"),
    # a sum per row of a 2-D block through warp shuffles (gemv's shape)
    "rows": ("""
    __global__ void rows(const float* __restrict__ a, float* __restrict__ out, int n) {
        int r = blockIdx.x * blockDim.y + threadIdx.y;
        float v = 0.0f;
        for (int i = threadIdx.x; i < n; i += 32) v += a[r * n + i];
        for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
        if (threadIdx.x == 0) out[r] = v;
    }
    """, "it reduces with warp shuffles along threadIdx.x in a 2-D block"),
    # prefix and suffix maxima of a window along y of each column (morphology's vertical pass)
    "scan_y": ("""
    #define K 16
    __global__ void scan_y(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, int w) {
        __shared__ unsigned char buf[2 * K];
        __shared__ unsigned char ops[2 * K];
        const int x = threadIdx.x + blockIdx.x * blockDim.x;
        const int y = threadIdx.y + blockIdx.y * blockDim.y;
        buf[threadIdx.y] = in[y * w + x];
        buf[threadIdx.y + K] = in[(y + K) * w + x];
        __syncthreads();
        ops[threadIdx.y] = buf[threadIdx.y];
        ops[threadIdx.y + K] = buf[threadIdx.y + K];
        __syncthreads();
        for (int o = 1; o < K; o *= 2) {
            if (threadIdx.y >= o) ops[threadIdx.y + K - 1] = max(ops[threadIdx.y + K - 1], ops[threadIdx.y + K - 1 - o]);
            if (threadIdx.y <= K - 1 - o) ops[threadIdx.y] = max(ops[threadIdx.y], ops[threadIdx.y + o]);
            __syncthreads();
        }
        out[y * w + x] = max(ops[threadIdx.y], ops[threadIdx.y + K - 1]);
    }
    int main() { unsigned char *a, *b; scan_y<<<dim3(64, 2), dim3(1, K)>>>(a, b, 64); }
    """, "it is a scan through shared memory (offsets doubling) over a 2-D block"),
}


@pytest.mark.parametrize("name", sorted(NOT_REDUCTIONS))
def test_a_2d_kernel_that_is_no_ranked_reduction_says_what_it_is(tmp_path, name):
    source, reason = NOT_REDUCTIONS[name]
    kernels, _ = convert(tmp_path, source)
    k = kernels[name]
    if k["form"] == "tile":  # a stencil's phases lift as tiled loops (their CPU checks: test_tile_loops.py)
        assert k["reason"].startswith(TILED_LOOPS), k["reason"]
    else:
        assert reason in note(k), note(k)
