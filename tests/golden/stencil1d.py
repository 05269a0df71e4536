"""TileLang migration of stencil1d.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of stencil1d.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



@T.macro
def loadOrZero(p, i, n):  # L32
    return T.if_then_else(i >= 0 and i < n, p[i], T.float32(0.0))  # L34


# -- stencil1d5pt: tile -----------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_stencil1d5pt(grid, block, shared_bytes=0, target="cuda", tile=(1024,), threads=256, fill=True):  # L37
    """TileLang (tile) for CUDA kernel `stencil1d5pt`; grid/block as in `stencil1d5pt<<<grid, block, shared_bytes>>>`.

    A map over the 1-D element domain in tiles of `tile` (x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "stencil1d5pt indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "stencil1d5pt indexes blocks in x only"
    in__len = T.dynamic("in__len")
    out_len = T.dynamic("out_len")
    assert block_x == 256, "stencil1d5pt spells blockDim.x as 256: launch it with that block size"  # L37
    extent_x = grid_x * block_x  # one element per CUDA thread  # L37
    tile_x, = fit_tile(tile, (extent_x,), threads if fill else 0)
    threads = min(threads, tile_x)

    @T.prim_func
    def stencil1d5pt(in_: T.Tensor((in__len,), T.float32), out: T.Tensor((out_len,), T.float32), n: T.int32):
        with T.Kernel(T.ceildiv(extent_x, tile_x), threads=threads) as bx:  # L37
            if bx * tile_x + tile_x <= extent_x and bx * tile_x + tile_x <= n:  # L37
                # a full tile: TileLang drops the guards below and vectorises
                for ix in T.Parallel(tile_x):  # L37
                    gx = bx * tile_x + ix  # L37
                    g = gx  # L41
                    if g < n:  # L51
                        out[g] = 0.4000000059604645 * loadOrZero(in_, gx, n) + 0.20000000298023224 * (loadOrZero(in_, gx - 1, n) + loadOrZero(in_, gx + 1, n)) + 0.10000000149011612 * (loadOrZero(in_, gx - 2, n) + loadOrZero(in_, gx + 2, n))  # L52
            else:  # L37
                # the last tile: elements past the domain do nothing
                for ix in T.Parallel(tile_x):  # L37
                    gx = bx * tile_x + ix  # L37
                    if gx < extent_x:  # L37
                        g = gx  # L41
                        if g < n:  # L51
                            out[g] = 0.4000000059604645 * loadOrZero(in_, gx, n) + 0.20000000298023224 * (loadOrZero(in_, gx - 1, n) + loadOrZero(in_, gx + 1, n)) + 0.10000000149011612 * (loadOrZero(in_, gx - 2, n) + loadOrZero(in_, gx + 2, n))  # L52
    return stencil1d5pt


STENCIL1D5PT = Signature(
    name="stencil1d5pt",
    factory=make_stencil1d5pt,
    params=(
        ("in_", "buffer", "float32"),
        ("out", "buffer", "float32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="stencil1d.cu",
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256, 512], "tile": [[512], [1024], [2048], [4096]]},
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def stencil1d5pt(*args, grid=391, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `stencil1d5pt<<<grid, block, shared_bytes>>>(in_, out, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(STENCIL1D5PT, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "stencil1d5pt": STENCIL1D5PT,
}
