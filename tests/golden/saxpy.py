"""TileLang migration of saxpy.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of saxpy.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- saxpy: tile ------------------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_saxpy(grid, block, shared_bytes=0, target="cuda", tile=(1024,), threads=256, fill=True):  # L25
    """TileLang (tile) for CUDA kernel `saxpy`; grid/block as in `saxpy<<<grid, block, shared_bytes>>>`.

    A map over the 1-D element domain in tiles of `tile` (x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "saxpy indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "saxpy indexes blocks in x only"
    x_len = T.dynamic("x_len")
    y_len = T.dynamic("y_len")
    tile_x, = fit_tile(tile, (None,), threads if fill else 0)
    threads = min(threads, tile_x)

    @T.prim_func
    def saxpy(n: T.int32, a: T.float32, x: T.Tensor((x_len,), T.float32), y: T.Tensor((y_len,), T.float32)):
        with T.Kernel(T.ceildiv(n, tile_x), threads=threads) as bx:  # L25
            if bx * tile_x + tile_x <= n:  # L25
                # a full tile: TileLang drops the guards below and vectorises
                for ix in T.Parallel(tile_x):  # L25
                    gx = bx * tile_x + ix  # L25
                    i = gx  # L27
                    y[i] = a * x[i] + y[i]  # L28
            else:  # L25
                # the last tile: elements past the domain do nothing
                for ix in T.Parallel(tile_x):  # L25
                    gx = bx * tile_x + ix  # L25
                    if gx < n:  # L25
                        i = gx  # L27
                        y[i] = a * x[i] + y[i]  # L28
    return saxpy


SAXPY = Signature(
    name="saxpy",
    factory=make_saxpy,
    params=(
        ("n", "scalar", "int32"),
        ("a", "scalar", "float32"),
        ("x", "buffer", "float32"),
        ("y", "buffer", "float32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="saxpy.cu",
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256, 512], "tile": [[512], [1024], [2048], [4096]]},
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def saxpy(*args, grid=160, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `saxpy<<<grid, block, shared_bytes>>>(n, a, x, y)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(SAXPY, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "saxpy": SAXPY,
}
