"""TileLang migration of dot_product.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of dot_product.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- dotPartial: tile -------------------------------------------------------
# its shared-memory tree reductions become T.reduce over the block's lanes


def make_dotPartial(grid, block, shared_bytes=0, target="cuda"):  # L40
    """TileLang (tile) for CUDA kernel `dotPartial`; grid/block as in `dotPartial<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "dotPartial indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "dotPartial indexes blocks in x only"
    x_len = T.dynamic("x_len")
    y_len = T.dynamic("y_len")
    partial_len = T.dynamic("partial_len")
    assert block_x & (block_x - 1) == 0, "the CUDA tree reduction assumes a power-of-two block"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local

    @T.prim_func
    def dotPartial(x: T.Tensor((x_len,), T.float32), y: T.Tensor((y_len,), T.float32), partial: T.Tensor((partial_len,), T.float32), n: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L40
            cache_lanes = alloc_lanes((block_x,), T.float32)  # L45
            cache_total = alloc_lanes((1,), T.float32)  # L45
            blockTreeSum_ret_1 = T.alloc_var(T.float32)  # L52
            for lane in lane_loop(block_x):  # L45
                acc = T.alloc_var(T.float32)  # L47
                acc = T.float32(0.0)  # L47
                i = T.alloc_var(T.int32)  # L48
                i = bx * block_x + lane  # L48
                while i < n:  # L48
                    acc = acc + x[i] * y[i]  # L49
                    i = i + block_x * grid_x  # L48
                blockTreeSum_2_v = acc  # L52
                cache_lanes[lane] = blockTreeSum_2_v  # L45
            T.reduce_sum(cache_lanes, cache_total, dim=0)  # L45
            blockTreeSum_ret_1 = cache_total[0]  # L37
            blockSum = blockTreeSum_ret_1  # L52
            for _ in T.Parallel(1):  # once, as CUDA's thread 0  # L45
                partial[bx] = blockSum  # L54
    return dotPartial


DOTPARTIAL = Signature(
    name="dotPartial",
    factory=make_dotPartial,
    params=(
        ("x", "buffer", "float32"),
        ("y", "buffer", "float32"),
        ("partial", "buffer", "float32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="dot_product.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def dotPartial(*args, grid=128, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `dotPartial<<<grid, block, shared_bytes>>>(x, y, partial, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(DOTPARTIAL, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- sumPartials: tile ------------------------------------------------------
# its shared-memory tree reductions become T.reduce over the block's lanes


def make_sumPartials(grid, block, shared_bytes=0, target="cuda"):  # L58
    """TileLang (tile) for CUDA kernel `sumPartials`; grid/block as in `sumPartials<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "sumPartials indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "sumPartials indexes blocks in x only"
    partial_len = T.dynamic("partial_len")
    result_len = T.dynamic("result_len")
    assert block_x & (block_x - 1) == 0, "the CUDA tree reduction assumes a power-of-two block"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local

    @T.prim_func
    def sumPartials(partial: T.Tensor((partial_len,), T.float32), result: T.Tensor((result_len,), T.float32), count: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L58
            cache_lanes = alloc_lanes((block_x,), T.float32)  # L60
            cache_total = alloc_lanes((1,), T.float32)  # L60
            blockTreeSum_ret_1 = T.alloc_var(T.float32)  # L67
            for lane in lane_loop(block_x):  # L60
                acc = T.alloc_var(T.float32)  # L62
                acc = T.float32(0.0)  # L62
                i = T.alloc_var(T.int32)  # L63
                i = lane  # L63
                while i < count:  # L63
                    acc = acc + partial[i]  # L64
                    i = i + block_x  # L63
                blockTreeSum_2_v = acc  # L67
                cache_lanes[lane] = blockTreeSum_2_v  # L60
            T.reduce_sum(cache_lanes, cache_total, dim=0)  # L60
            blockTreeSum_ret_1 = cache_total[0]  # L37
            total = blockTreeSum_ret_1  # L67
            for _ in T.Parallel(1):  # once, as CUDA's thread 0  # L60
                result[0] = total  # L69
    return sumPartials


SUMPARTIALS = Signature(
    name="sumPartials",
    factory=make_sumPartials,
    params=(
        ("partial", "buffer", "float32"),
        ("result", "buffer", "float32"),
        ("count", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="dot_product.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def sumPartials(*args, grid=1, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `sumPartials<<<grid, block, shared_bytes>>>(partial, result, count)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(SUMPARTIALS, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "dotPartial": DOTPARTIAL,
    "sumPartials": SUMPARTIALS,
}
