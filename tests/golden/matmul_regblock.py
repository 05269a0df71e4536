"""TileLang migration of matmul_regblock.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of matmul_regblock.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- matmul_regblock_4x4: tile ----------------------------------------------
# a GEMM: A and B tiles through shared memory, a pipelined K loop, the accumulator in registers


def make_matmul_regblock_4x4(grid, block, shared_bytes=0, target="cuda", block_M=128, block_N=None, block_K=None, num_stages=None, threads=256, tensor_cores=False):  # L32
    """TileLang (tile) for CUDA kernel `matmul_regblock_4x4`; grid/block as in `matmul_regblock_4x4<<<grid, block, shared_bytes>>>`.

    C = A·B in block_M × block_N tiles; A and B staged through shared memory, block_K k at a time.
    tensor_cores=False keeps the CUDA multiply-adds in k order (exact float32);
    True uses T.gemm (tf32 for float32 inputs)."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_z == 1, "matmul_regblock_4x4 indexes threads in x, y only"
    assert grid_z == 1, "matmul_regblock_4x4 indexes blocks in x, y only"
    M, N, K = T.dynamic("M, N, K")  # scalar parameters that are also buffer extents
    assert block_x == 16, "matmul_regblock_4x4 covers 64 elements along x with micro-tiles of 4: launch it with 16 threads"  # L32
    assert block_y == 16, "matmul_regblock_4x4 covers 64 elements along y with micro-tiles of 4: launch it with 16 threads"  # L32
    extent_x = grid_x * block_x * 4  # a 4 × 4 micro-tile of C per CUDA thread  # L32
    extent_y = grid_y * block_y * 4  # L32
    tensor_cores = tensor_cores and target == "cuda"  # the CPU target has no T.gemm on fragments
    whole_tiles = target == "cuda"  # T.copy of 2-D views (the CPU target stages element-wise)
    block_N, num_stages = block_N or 128, num_stages or 2
    block_K = block_K or 16 if whole_tiles else 16  # else the CUDA code's tile over k  # L54
    # GPUs: dynamic shared memory (aligned for asynchronous copies); the CPU target allows one
    # dynamic buffer only
    shared_scope = "shared.dyn" if target == "cuda" else "shared"

    @T.prim_func
    def matmul_regblock_4x4(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32), C: T.Tensor((M, N), T.float32), M: M, N: N, K: K):
        with T.Kernel(T.ceildiv(extent_x, block_N), T.ceildiv(extent_y, block_M), threads=threads) as (bx, by):  # L32
            A_tile = T.alloc_shared((block_M, block_K), T.float32, scope=shared_scope)  # L54
            B_tile = T.alloc_shared((block_K, block_N), T.float32, scope=shared_scope)  # L54
            acc_f = T.alloc_fragment((block_M, block_N), T.float32)  # L54
            for i, j in T.Parallel(block_M, block_N):  # L54
                acc_f[i, j] = 0  # L54
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):  # L54
                if whole_tiles:  # L54
                    # A read in whole tiles: a (M, K) array, zeros past its bounds as in the CUDA code  # L59
                    T.copy(A[by * block_M, ko * block_K], A_tile)  # L59
                else:  # L54
                    for i, kk in T.Parallel(block_M, block_K):  # L59
                        gy = by * block_M + i  # L59
                        k0 = ko * 16  # L59
                        A_tile[i, kk] = T.if_then_else(gy < extent_y, T.if_then_else(gy < M and k0 + kk < K, A[gy, k0 + kk], T.float32(0.0)), T.float32(0))  # L59
                if whole_tiles:  # L54
                    # B read in whole tiles: a (K, N) array, zeros past its bounds as in the CUDA code  # L64
                    T.copy(B[ko * block_K, bx * block_N], B_tile)  # L64
                else:  # L54
                    for kk, j in T.Parallel(block_K, block_N):  # L64
                        gx = bx * block_N + j  # L64
                        k0 = ko * 16  # L64
                        B_tile[kk, j] = T.if_then_else(gx < extent_x, T.if_then_else(k0 + kk < K and gx < N, B[k0 + kk, gx], T.float32(0.0)), T.float32(0))  # L64
                if tensor_cores:  # L54
                    T.gemm(A_tile, B_tile, acc_f)  # L54
                else:  # the CUDA loop's multiply-adds, in ascending k  # L54
                    for kk in T.serial(block_K):  # L54
                        for i, j in T.Parallel(block_M, block_N):  # L54
                            acc_f[i, j] = acc_f[i, j] + A_tile[i, kk] * B_tile[kk, j]  # L54
            for i, j in T.Parallel(block_M, block_N):  # L54
                gy = by * block_M + i  # L54
                gx = bx * block_N + j  # L54
                if gy < extent_y and gx < extent_x:  # L54
                    acc = acc_f[i, j]  # L54
                    r_3 = gy  # L86
                    if r_3 < M:  # L87
                        c_3 = gx  # L90
                        if c_3 < N:  # L91
                            C[r_3, c_3] = acc  # L91
    return matmul_regblock_4x4


MATMUL_REGBLOCK_4X4 = Signature(
    name="matmul_regblock_4x4",
    factory=make_matmul_regblock_4x4,
    params=(
        ("A", "buffer", "float32"),
        ("B", "buffer", "float32"),
        ("C", "buffer", "float32"),
        ("M", "scalar", "int32"),
        ("N", "scalar", "int32"),
        ("K", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="matmul_regblock.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("A", ("M", "K")), ("B", ("K", "N")), ("C", ("M", "N"))),
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"block_K": [16, 32, 64], "block_M": [64, 128], "block_N": [64, 128], "num_stages": [2, 3], "threads": [128, 256]},
    # tile form: TileLang places the barriers its tiles need and guards the tiles it copies; at
    # run-time sizes the copies are cp.async, not TMA (a TMA descriptor needs 16-byte row strides,
    # which a K that is not a multiple of 4 floats does not give)
    pass_configs=(("tl.disable_tma_lower", True), ("tl.disable_warp_specialized", True)),
)


def matmul_regblock_4x4(*args, grid=(2, 3, 1), block=(16, 16, 1), shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `matmul_regblock_4x4<<<grid, block, shared_bytes>>>(A, B, C, M, N, K)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(MATMUL_REGBLOCK_4X4, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "matmul_regblock_4x4": MATMUL_REGBLOCK_4X4,
}
