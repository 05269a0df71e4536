"""TileLang migration of block_sum.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of block_sum.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- blockReduceSum: portable -----------------------------------------------
# barriers are uniform: one T.Parallel phase per barrier interval


def make_blockReduceSum(grid, block, shared_bytes=0, BLOCK_SIZE=None, target="cuda"):  # L23
    """TileLang (portable) for CUDA kernel `blockReduceSum`; grid/block as in `blockReduceSum<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "blockReduceSum indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "blockReduceSum indexes blocks in x only"
    in__len = T.dynamic("in__len")
    partial_len = T.dynamic("partial_len")

    @T.prim_func
    def blockReduceSum(in_: T.Tensor((in__len,), T.float32), partial: T.Tensor((partial_len,), T.float32), n_arg: T.int64):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L23
            n = T.Cast(T.uint32, n_arg)  # L23
            sdata = T.alloc_shared((BLOCK_SIZE,), T.float32, scope="shared")  # L26
            s = T.alloc_var(T.uint32)  # L37
            for tx in T.Parallel(block_x):  # L26
                tid = T.Cast(T.uint32, tx)  # L28
                i = T.Cast(T.uint32, bx * (BLOCK_SIZE * 2)) + tid  # L29
                sum_ = T.alloc_var(T.float32)  # L31
                sum_ = T.float32(0.0)  # L31
                if T.Cast(T.int64, i) < T.Cast(T.int64, n):  # L32
                    sum_ = in_[i]  # L32
                if T.Cast(T.int64, i + BLOCK_SIZE) < T.Cast(T.int64, n):  # L33
                    sum_ = sum_ + in_[i + BLOCK_SIZE]  # L33
                sdata[tid] = sum_  # L34
            T.sync_threads()  # L35
            s = block_x // 2  # L37
            while T.Cast(T.int64, s) > 0:  # L37
                for tx in T.Parallel(block_x):  # L38
                    tid = T.Cast(T.uint32, tx)  # L28
                    if T.Cast(T.int64, tid) < T.Cast(T.int64, s):  # L38
                        sdata[tid] = sdata[tid] + sdata[tid + s]  # L39
                T.sync_threads()  # L41
                s = s >> 1  # L37
            for tx in T.Parallel(block_x):  # L44
                tid = T.Cast(T.uint32, tx)  # L28
                if T.Cast(T.int64, tid) == 0:  # L44
                    partial[bx] = T.Cast(T.float32, sdata[0])  # L45
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
    form="portable",
    source="block_sum.cu",
    # every barrier of the CUDA kernel is written out; TileLang must not add its own, which it
    # may place inside loops whose trip count differs between threads (a deadlock on the GPU); on
    # GPUs, as in CUDA, buffer accesses are not bounds-checked; a value bound once under a guard
    # stays one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_thread_storage_sync", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
    gpu_pass_configs=(("tl.disable_safe_memory_legalize", True),),
)


def blockReduceSum(*args, grid=391, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `blockReduceSum<<<grid, block, shared_bytes>>>(in_, partial, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(BLOCKREDUCESUM, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "blockReduceSum": BLOCKREDUCESUM,
}
