"""TileLang migration of block_sum.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of block_sum.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- blockReduceSum: tile ---------------------------------------------------
# its shared-memory tree reductions become T.reduce over the block's lanes


def make_blockReduceSum(grid, block, shared_bytes=0, BLOCK_SIZE=None, target="cuda"):  # L23
    """TileLang (tile) for CUDA kernel `blockReduceSum`; grid/block as in `blockReduceSum<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "blockReduceSum indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "blockReduceSum indexes blocks in x only"
    in__len = T.dynamic("in__len")
    partial_len = T.dynamic("partial_len")
    assert block_x & (block_x - 1) == 0, "the CUDA tree reduction assumes a power-of-two block"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local

    @T.prim_func
    def blockReduceSum(in_: T.Tensor((in__len,), T.float32), partial: T.Tensor((partial_len,), T.float32), n_arg: T.int64):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L23
            n = T.Cast(T.uint32, n_arg)  # L23
            sdata_lanes = alloc_lanes((block_x,), T.float32)  # L26
            sdata_total = alloc_lanes((1,), T.float32)  # L26
            for lane in lane_loop(block_x):  # L26
                i = T.Cast(T.uint32, bx * (BLOCK_SIZE * 2) + lane)  # L29
                sum_ = T.alloc_var(T.float32)  # L31
                sum_ = T.float32(0.0)  # L31
                if T.Cast(T.int64, i) < T.Cast(T.int64, n):  # L32
                    sum_ = in_[i]  # L32
                if T.Cast(T.int64, i + BLOCK_SIZE) < T.Cast(T.int64, n):  # L33
                    sum_ = sum_ + in_[i + BLOCK_SIZE]  # L33
                sdata_lanes[lane] = sum_  # L26
            T.reduce_sum(sdata_lanes, sdata_total, dim=0)  # L26
            for _ in T.Parallel(1):  # once, as CUDA's thread 0  # L26
                partial[bx] = sdata_total[0]  # L45
    return blockReduceSum


BLOCKREDUCESUM = Signature(
    name="blockReduceSum",
    factory=make_blockReduceSum,
    params=(
        ("in_", "buffer", "float32"),
        ("partial", "buffer", "float32"),
        ("n", "scalar", "uint32"),
    ),
    template=(("BLOCK_SIZE", "value"), ),
    symbols=(),
    form="tile",
    source="block_sum.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def blockReduceSum(*args, grid=391, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `blockReduceSum<<<grid, block, shared_bytes>>>(in_, partial, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(BLOCKREDUCESUM, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "blockReduceSum": BLOCKREDUCESUM,
}
