"""TileLang migration of vector_add_vec4.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of vector_add_vec4.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- vectorAdd4: tile -------------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_vectorAdd4(grid, block, shared_bytes=0, target="cuda", tile=(1024,), threads=256, fill=True):  # L25
    """TileLang (tile) for CUDA kernel `vectorAdd4`; grid/block as in `vectorAdd4<<<grid, block, shared_bytes>>>`.

    A map over the 1-D element domain in tiles of `tile` (x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "vectorAdd4 indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "vectorAdd4 indexes blocks in x only"
    a_len = T.dynamic("a_len")
    b_len = T.dynamic("b_len")
    c_len = T.dynamic("c_len")
    extent_x = grid_x * block_x  # one element per CUDA thread  # L25
    tile_x, = fit_tile(tile, (extent_x,), threads if fill else 0)
    threads = min(threads, tile_x)

    @T.prim_func
    def vectorAdd4(a: T.Tensor((a_len,), T.float32), b: T.Tensor((b_len,), T.float32), c: T.Tensor((c_len,), T.float32), n: T.int32):
        with T.Kernel(T.ceildiv(extent_x, tile_x), threads=threads) as bx:  # L25
            if bx * tile_x + tile_x <= extent_x:  # L25
                # a full tile: TileLang drops the guards below and vectorises
                for ix, il in T.Parallel(tile_x, 4):  # 4 lanes: one 128-bit access per element  # L25
                    gx = bx * tile_x + ix  # L25
                    idx = gx  # L30
                    numVec = n >> 2  # L31
                    if idx < numVec:  # L33
                        va = a[idx * 4 + il]  # L34
                        vb = b[idx * 4 + il]  # L35
                        vc = va + vb  # L36
                        c[idx * 4 + il] = vc  # L41
                for ix in T.Parallel(tile_x):  # L25
                    gx = bx * tile_x + ix  # L25
                    idx = gx  # L30
                    numVec = n >> 2  # L31
                    rem = n & 3  # L45
                    if idx < rem:  # L46
                        t = (numVec << 2) + idx  # L47
                        c[t] = a[t] + b[t]  # L48
            else:  # L25
                # the last tile: elements past the domain do nothing
                for ix, il in T.Parallel(tile_x, 4):  # 4 lanes: one 128-bit access per element  # L25
                    gx = bx * tile_x + ix  # L25
                    if gx < extent_x:  # L25
                        idx = gx  # L30
                        numVec = n >> 2  # L31
                        if idx < numVec:  # L33
                            va = a[idx * 4 + il]  # L34
                            vb = b[idx * 4 + il]  # L35
                            vc = va + vb  # L36
                            c[idx * 4 + il] = vc  # L41
                for ix in T.Parallel(tile_x):  # L25
                    gx = bx * tile_x + ix  # L25
                    if gx < extent_x:  # L25
                        idx = gx  # L30
                        numVec = n >> 2  # L31
                        rem = n & 3  # L45
                        if idx < rem:  # L46
                            t = (numVec << 2) + idx  # L47
                            c[t] = a[t] + b[t]  # L48
    return vectorAdd4


VECTORADD4 = Signature(
    name="vectorAdd4",
    factory=make_vectorAdd4,
    params=(
        ("a", "buffer", "float32"),
        ("b", "buffer", "float32"),
        ("c", "buffer", "float32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="vector_add_vec4.cu",
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256, 512], "tile": [[512], [1024], [2048], [4096]]},
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def vectorAdd4(*args, grid=98, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `vectorAdd4<<<grid, block, shared_bytes>>>(a, b, c, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(VECTORADD4, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "vectorAdd4": VECTORADD4,
}
