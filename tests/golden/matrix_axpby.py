"""TileLang migration of matrix_axpby.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of matrix_axpby.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- matrixAxpby: tile ------------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_matrixAxpby(grid, block, shared_bytes=0, target="cuda", tile=(8, 128), threads=256, fill=True):  # L25
    """TileLang (tile) for CUDA kernel `matrixAxpby`; grid/block as in `matrixAxpby<<<grid, block, shared_bytes>>>`.

    A map over the 2-D element domain in tiles of `tile` (y, x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_z == 1, "matrixAxpby indexes threads in x, y only"
    assert grid_z == 1, "matrixAxpby indexes blocks in x, y only"
    rows, cols = T.dynamic("rows, cols")  # scalar parameters that are also buffer extents
    extent_x = grid_x * block_x  # one element per CUDA thread  # L25
    extent_y = grid_y * block_y  # one element per CUDA thread  # L25
    tile_y, tile_x, = fit_tile(tile, (extent_y, extent_x,), threads if fill else 0)
    threads = min(threads, tile_y * tile_x)

    @T.prim_func
    def matrixAxpby(A: T.Tensor((rows, cols), T.float32), B: T.Tensor((rows, cols), T.float32), C: T.Tensor((rows, cols), T.float32), rows: rows, cols: cols, alpha: T.float32, beta: T.float32):
        with T.Kernel(T.ceildiv(extent_x, tile_x), T.ceildiv(extent_y, tile_y), threads=threads) as (bx, by):  # L25
            if by * tile_y + tile_y <= extent_y and by * tile_y + tile_y <= rows and bx * tile_x + tile_x <= extent_x and bx * tile_x + tile_x <= cols:  # L25
                # a full tile: TileLang drops the guards below and vectorises
                for iy, ix in T.Parallel(tile_y, tile_x):  # L25
                    gy = by * tile_y + iy  # L25
                    gx = bx * tile_x + ix  # L25
                    col = gx  # L31
                    row = gy  # L32
                    if row < rows and col < cols:  # L34
                        C[row, col] = alpha * A[row, col] + beta * B[row, col]  # L36
            else:  # L25
                # the last tile: elements past the domain do nothing
                for iy, ix in T.Parallel(tile_y, tile_x):  # L25
                    gy = by * tile_y + iy  # L25
                    gx = bx * tile_x + ix  # L25
                    if gy < extent_y and gx < extent_x:  # L25
                        col = gx  # L31
                        row = gy  # L32
                        if row < rows and col < cols:  # L34
                            C[row, col] = alpha * A[row, col] + beta * B[row, col]  # L36
    return matrixAxpby


MATRIXAXPBY = Signature(
    name="matrixAxpby",
    factory=make_matrixAxpby,
    params=(
        ("A", "buffer", "float32"),
        ("B", "buffer", "float32"),
        ("C", "buffer", "float32"),
        ("rows", "scalar", "int32"),
        ("cols", "scalar", "int32"),
        ("alpha", "scalar", "float32"),
        ("beta", "scalar", "float32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="matrix_axpby.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("A", ("rows", "cols")), ("B", ("rows", "cols")), ("C", ("rows", "cols"))),
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256], "tile": [[4, 128], [8, 128], [16, 64], [32, 32], [4, 256]]},
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def matrixAxpby(*args, grid=(32, 19, 1), block=(16, 16, 1), shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `matrixAxpby<<<grid, block, shared_bytes>>>(A, B, C, rows, cols, alpha, beta)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(MATRIXAXPBY, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "matrixAxpby": MATRIXAXPBY,
}
