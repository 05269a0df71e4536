"""TileLang migration of matmul_tiled.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of matmul_tiled.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- matmul_tiled: tile -----------------------------------------------------
# a GEMM: A and B tiles through shared memory, a pipelined K loop, the accumulator in registers


def make_matmul_tiled(grid, block, shared_bytes=0, target="cuda", block_M=128, block_N=None, block_K=None, num_stages=None, threads=256, tensor_cores=False):  # L24
    """TileLang (tile) for CUDA kernel `matmul_tiled`; grid/block as in `matmul_tiled<<<grid, block, shared_bytes>>>`.

    C = A·B in block_M × block_N tiles; A and B staged through shared memory, block_K k at a time.
    tensor_cores=False keeps the CUDA multiply-adds in k order (exact float32);
    True uses T.gemm (tf32 for float32 inputs)."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_z == 1, "matmul_tiled indexes threads in x, y only"
    assert grid_z == 1, "matmul_tiled indexes blocks in x, y only"
    M, N, K = T.dynamic("M, N, K")  # scalar parameters that are also buffer extents
    assert block_x == 16, "matmul_tiled spells blockDim.x as 16: launch it with that block size"  # L24
    assert block_y == 16, "matmul_tiled spells blockDim.y as 16: launch it with that block size"  # L24
    extent_x = grid_x * block_x  # one element of C per CUDA thread  # L24
    extent_y = grid_y * block_y  # L24
    tensor_cores = tensor_cores and target == "cuda"  # the CPU target has no T.gemm on fragments
    whole_tiles = target == "cuda"  # T.copy of 2-D views (the CPU target stages element-wise)
    block_N, num_stages = block_N or 128, num_stages or 2
    block_K = block_K or 16 if whole_tiles else 16  # else the CUDA code's tile over k  # L39
    # GPUs: dynamic shared memory (aligned for asynchronous copies); the CPU target allows one
    # dynamic buffer only
    shared_scope = "shared.dyn" if target == "cuda" else "shared"

    @T.prim_func
    def matmul_tiled(A: T.Tensor((M, K), T.float32), B: T.Tensor((K, N), T.float32), C: T.Tensor((M, N), T.float32), M: M, N: N, K: K, alpha: T.float32, beta: T.float32):
        with T.Kernel(T.ceildiv(extent_x, block_N), T.ceildiv(extent_y, block_M), threads=threads) as (bx, by):  # L24
            A_tile = T.alloc_shared((block_M, block_K), T.float32, scope=shared_scope)  # L39
            B_tile = T.alloc_shared((block_K, block_N), T.float32, scope=shared_scope)  # L39
            acc_f = T.alloc_fragment((block_M, block_N), T.float32)  # L39
            for i, j in T.Parallel(block_M, block_N):  # L39
                acc_f[i, j] = 0  # L39
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):  # L39
                if whole_tiles:  # L39
                    # A read in whole tiles: a (M, K) array, zeros past its bounds as in the CUDA code  # L42
                    T.copy(A[by * block_M, ko * block_K], A_tile)  # L42
                else:  # L39
                    for i, kk in T.Parallel(block_M, block_K):  # L42
                        gy = by * block_M + i  # L42
                        row = gy  # L42
                        t = ko  # L42
                        k = kk  # L42
                        A_tile[i, kk] = T.if_then_else(gy < extent_y, T.if_then_else(gy < M and t * 16 + T.Cast(T.int32, T.Cast(T.uint32, k)) < K, A[gy, t * 16 + k], T.float32(0.0)), T.float32(0))  # L42
                if whole_tiles:  # L39
                    # B read in whole tiles: a (K, N) array, zeros past its bounds as in the CUDA code  # L43
                    T.copy(B[ko * block_K, bx * block_N], B_tile)  # L43
                else:  # L39
                    for kk, j in T.Parallel(block_K, block_N):  # L43
                        gx = bx * block_N + j  # L43
                        col = gx  # L43
                        t = ko  # L43
                        k = kk  # L43
                        B_tile[kk, j] = T.if_then_else(gx < extent_x, T.if_then_else(t * 16 + T.Cast(T.int32, T.Cast(T.uint32, k)) < K and gx < N, B[t * 16 + k, gx], T.float32(0.0)), T.float32(0))  # L43
                if tensor_cores:  # L39
                    T.gemm(A_tile, B_tile, acc_f)  # L39
                else:  # the CUDA loop's multiply-adds, in ascending k  # L39
                    for kk in T.serial(block_K):  # L39
                        for i, j in T.Parallel(block_M, block_N):  # L39
                            acc_f[i, j] = acc_f[i, j] + A_tile[i, kk] * B_tile[kk, j]  # L39
            for i, j in T.Parallel(block_M, block_N):  # L39
                gy = by * block_M + i  # L39
                gx = bx * block_N + j  # L39
                if gy < extent_y and gx < extent_x:  # L39
                    row = gy  # L34
                    col = gx  # L35
                    acc = acc_f[i, j]  # L39
                    if row < M and col < N:  # L52
                        C[row, col] = alpha * acc + beta * C[row, col]  # L54
    return matmul_tiled


MATMUL_TILED = Signature(
    name="matmul_tiled",
    factory=make_matmul_tiled,
    params=(
        ("A", "buffer", "float32"),
        ("B", "buffer", "float32"),
        ("C", "buffer", "float32"),
        ("M", "scalar", "int32"),
        ("N", "scalar", "int32"),
        ("K", "scalar", "int32"),
        ("alpha", "scalar", "float32"),
        ("beta", "scalar", "float32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="matmul_tiled.cu",
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


def matmul_tiled(*args, grid=(6, 7, 1), block=(16, 16, 1), shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `matmul_tiled<<<grid, block, shared_bytes>>>(A, B, C, M, N, K, alpha, beta)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(MATMUL_TILED, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "matmul_tiled": MATMUL_TILED,
}
