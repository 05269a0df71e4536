"""TileLang migration of transpose.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of transpose.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- transposeNaive: tile ---------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_transposeNaive(grid, block, shared_bytes=0, target="cuda", tile=(32, 32), threads=256):  # L31
    """TileLang (tile) for CUDA kernel `transposeNaive`; grid/block as in `transposeNaive<<<grid, block, shared_bytes>>>`.

    A map over the 2-D element domain in tiles of `tile` (y, x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_z == 1, "transposeNaive indexes threads in x, y only"
    assert grid_z == 1, "transposeNaive indexes blocks in x, y only"
    rows, cols = T.dynamic("rows, cols")  # scalar parameters that are also buffer extents
    extent_x = grid_x * block_x  # one element per CUDA thread  # L31
    extent_y = grid_y * block_y  # one element per CUDA thread  # L31
    tile_y, tile_x, = fit_tile(tile, (extent_y, extent_x,))
    threads = min(threads, tile_y * tile_x)

    @T.prim_func
    def transposeNaive(in_: T.Tensor((rows, cols), T.float32), out: T.Tensor((cols, rows), T.float32), rows: rows, cols: cols):
        with T.Kernel(T.ceildiv(extent_x, tile_x), T.ceildiv(extent_y, tile_y), threads=threads) as (bx, by):  # L31
            vals = T.alloc_shared((tile_y, tile_x + 1), T.float32)  # +1: no bank conflicts when read along y  # L37
            # the values, x fastest: the loads are contiguous  # L31
            for iy, ix in T.Parallel(tile_y, tile_x):  # L31
                gy = by * tile_y + iy  # L31
                gx = bx * tile_x + ix  # L31
                if gy < extent_y and gx < extent_x:  # L31
                    col = gx  # L34
                    row = gy  # L35
                    if row < rows and col < cols:  # L36
                        vals[iy, ix] = in_[row, col]  # L37
            # the stores, y fastest: the stores are contiguous  # L31
            for ix, iy in T.Parallel(tile_x, tile_y):  # L31
                gy = by * tile_y + iy  # L31
                gx = bx * tile_x + ix  # L31
                if gy < extent_y and gx < extent_x:  # L31
                    col = gx  # L34
                    row = gy  # L35
                    if row < rows and col < cols:  # L36
                        out[col, row] = vals[iy, ix]  # L37
    return transposeNaive


TRANSPOSENAIVE = Signature(
    name="transposeNaive",
    factory=make_transposeNaive,
    params=(
        ("in_", "buffer", "float32"),
        ("out", "buffer", "float32"),
        ("rows", "scalar", "int32"),
        ("cols", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="transpose.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("in_", ("rows", "cols")), ("out", ("cols", "rows"))),
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256], "tile": [[4, 128], [8, 128], [16, 64], [32, 32], [4, 256]]},
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def transposeNaive(*args, grid=(29, 19, 1), block=(16, 16, 1), shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `transposeNaive<<<grid, block, shared_bytes>>>(in_, out, rows, cols)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(TRANSPOSENAIVE, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- transposeTiled: tile ---------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_transposeTiled(grid, block, shared_bytes=0, target="cuda", tile=(32, 32), threads=256):  # L41
    """TileLang (tile) for CUDA kernel `transposeTiled`; grid/block as in `transposeTiled<<<grid, block, shared_bytes>>>`.

    A map over the 2-D element domain in tiles of `tile` (y, x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_z == 1, "transposeTiled indexes threads in x, y only"
    assert grid_z == 1, "transposeTiled indexes blocks in x, y only"
    in__len = T.dynamic("in__len")
    rows, cols = T.dynamic("rows, cols")  # scalar parameters that are also buffer extents
    assert block_x == 32, "transposeTiled spells blockDim.x as 32: launch it with that block size"  # L41
    assert block_y == 8, "transposeTiled spells blockDim.y as 8: launch it with that block size"  # L41
    tile_y, tile_x, = fit_tile(tile, (None, None,))
    threads = min(threads, tile_y * tile_x)

    @T.prim_func
    def transposeTiled(in_: T.Tensor((in__len,), T.float32), out: T.Tensor((cols, rows), T.float32), rows: rows, cols: cols):
        with T.Kernel(T.ceildiv(grid_x * 32, tile_x), T.ceildiv(grid_y * 32, tile_y), threads=threads) as (bx, by):  # L41
            vals = T.alloc_shared((tile_y, tile_x + 1), T.float32)  # +1: no bank conflicts when read along y  # L62
            # the values, x fastest: the loads are contiguous  # L41
            for iy, ix in T.Parallel(tile_y, tile_x):  # L41
                gy = by * tile_y + iy  # L41
                gx = bx * tile_x + ix  # L41
                if gy < grid_y * 32 and gx < grid_x * 32:  # L41
                    if gy < rows and gx < cols:  # L61
                        vals[iy, ix] = in_[T.Cast(T.uint64, gy) * T.Cast(T.uint64, cols) + T.Cast(T.uint64, gx)]  # L62
            # the stores, y fastest: the stores are contiguous  # L41
            for ix, iy in T.Parallel(tile_x, tile_y):  # L41
                gy = by * tile_y + iy  # L41
                gx = bx * tile_x + ix  # L41
                if gy < grid_y * 32 and gx < grid_x * 32:  # L41
                    if gy < rows and gx < cols:  # L61
                        out[gx, gy] = vals[iy, ix]  # L62
    return transposeTiled


TRANSPOSETILED = Signature(
    name="transposeTiled",
    factory=make_transposeTiled,
    params=(
        ("in_", "buffer", "float32"),
        ("out", "buffer", "float32"),
        ("rows", "scalar", "int32"),
        ("cols", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="transpose.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("out", ("cols", "rows")),),
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256], "tile": [[4, 128], [8, 128], [16, 64], [32, 32], [4, 256]]},
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def transposeTiled(*args, grid=(15, 10, 1), block=(32, 8, 1), shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `transposeTiled<<<grid, block, shared_bytes>>>(in_, out, rows, cols)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(TRANSPOSETILED, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "transposeNaive": TRANSPOSENAIVE,
    "transposeTiled": TRANSPOSETILED,
}
