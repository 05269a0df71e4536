"""TileLang migration of warp_reduce_sum.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of warp_reduce_sum.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch, fill_blocks



# -- reduceSumAtomic: tile --------------------------------------------------
# its warp-shuffle reductions become T.reduce over the block's lanes; its grid grows to fill the GPU


def make_reduceSumAtomic(grid, block, shared_bytes=0, target="cuda"):  # L38
    """TileLang (tile) for CUDA kernel `reduceSumAtomic`; grid/block as in `reduceSumAtomic<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "reduceSumAtomic indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "reduceSumAtomic indexes blocks in x only"
    in__len = T.dynamic("in__len")
    result_len = T.dynamic("result_len")
    # the result does not depend on the grid (analysis.free_grid): each lane adds up its grid-stride
    # slice of the elements and atomicAdd combines the blocks' totals into 'result', in an order CUDA
    # leaves open. So it launches at least the blocks that fill the GPU at once (fill_blocks), and its
    # lanes stride by the grid it launches
    grid_x = max(grid_x, fill_blocks(block_x))  # L44
    assert block_x % 32 == 0, "the CUDA warp shuffles assume whole warps"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local

    @T.prim_func
    def reduceSumAtomic(in_: T.Tensor((in__len,), T.float32), result: T.Tensor((result_len,), T.float32), n_arg: T.int64):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L38
            n = T.Cast(T.uint64, n_arg)  # L38
            warpSums_lanes = alloc_lanes((block_x,), T.float32)  # L40
            warpSums_total = alloc_lanes((1,), T.float32)  # L40
            for lane in lane_loop(block_x):  # L40
                sum_ = T.alloc_var(T.float32)  # L42
                sum_ = T.float32(0.0)  # L42
                stride = block_x * grid_x  # L43
                i = T.alloc_var(T.uint64)  # L44
                i = T.Cast(T.uint64, bx) * block_x + T.Cast(T.uint64, lane)  # L44
                while T.Cast(T.int64, i ^ T.uint64(0x8000000000000000)) < T.Cast(T.int64, n ^ T.uint64(0x8000000000000000)):  # L44
                    sum_ = sum_ + in_[i]  # L45
                    i = i + stride  # L44
                warpSums_lanes[lane] = sum_  # L40
            T.reduce_sum(warpSums_lanes, warpSums_total, dim=0)  # L40
            for _ in T.Parallel(1):  # once, as CUDA's thread 0  # L40
                T.atomic_add(result[0], warpSums_total[0])  # L62
    return reduceSumAtomic


REDUCESUMATOMIC = Signature(
    name="reduceSumAtomic",
    factory=make_reduceSumAtomic,
    params=(
        ("in_", "buffer", "float32"),
        ("result", "buffer", "float32"),
        ("n", "scalar", "uint64"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="warp_reduce_sum.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def reduceSumAtomic(*args, grid=120, block=512, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `reduceSumAtomic<<<grid, block, shared_bytes>>>(in_, result, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(REDUCESUMATOMIC, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "reduceSumAtomic": REDUCESUMATOMIC,
}
