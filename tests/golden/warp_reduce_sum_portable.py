"""TileLang migration of warp_reduce_sum.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of warp_reduce_sum.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- reduceSumAtomic: portable ----------------------------------------------
# barriers are uniform: one T.Parallel phase per barrier interval


def make_reduceSumAtomic(grid, block, shared_bytes=0, target="cuda"):  # L38
    """TileLang (portable) for CUDA kernel `reduceSumAtomic`; grid/block as in `reduceSumAtomic<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "reduceSumAtomic indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "reduceSumAtomic indexes blocks in x only"
    in__len = T.dynamic("in__len")
    result_len = T.dynamic("result_len")
    # a thread's own values kept across barriers: registers on GPUs (a fragment, one element per
    # thread), a shared array on the CPU target, whose phases run as loops over the threads
    alloc_thread, thread_scope = (T.alloc_fragment, "local.fragment") if target == "cuda" else (T.alloc_shared, "shared")

    @T.prim_func
    def reduceSumAtomic(in_: T.Tensor((in__len,), T.float32), result: T.Tensor((result_len,), T.float32), n_arg: T.int64):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L38
            n = T.Cast(T.uint64, n_arg)  # L38
            xch_float32 = T.alloc_shared((block_x,), T.float32, scope="shared")
            warpSums = T.alloc_shared((32,), T.float32, scope="shared")  # L40
            sum_ = alloc_thread((block_x,), T.float32, scope=thread_scope)  # L42
            lane_ = alloc_thread((block_x,), T.int32, scope=thread_scope)  # L48
            warp = alloc_thread((block_x,), T.int32, scope=thread_scope)  # L49
            warpReduceSum_ret_1 = alloc_thread((block_x,), T.float32, scope=thread_scope)  # L51
            warpReduceSum_2_v = alloc_thread((block_x,), T.float32, scope=thread_scope)  # L51
            warpReduceSum_2_offset = T.alloc_var(T.int32)  # L32
            shfl_down_1 = alloc_thread((block_x,), T.float32, scope=thread_scope)  # L33
            numWarps = T.alloc_var(T.int32)  # L57
            cond_L58 = alloc_thread((block_x,), T.bool, scope=thread_scope)  # L58
            warpReduceSum_ret_3 = alloc_thread((block_x,), T.float32, scope=thread_scope)  # L60
            warpReduceSum_4_v = alloc_thread((block_x,), T.float32, scope=thread_scope)  # L60
            warpReduceSum_4_offset = T.alloc_var(T.int32)  # L32
            shfl_down_2 = alloc_thread((block_x,), T.float32, scope=thread_scope)  # L33
            for tx in T.Parallel(block_x):  # L40
                sum__r = T.alloc_var(T.float32)  # L40
                sum__r = sum_[tx]  # L40
                sum__r = T.float32(0.0)  # L42
                stride = block_x * grid_x  # L43
                i = T.alloc_var(T.uint64)  # L44
                i = T.Cast(T.uint64, bx) * block_x + T.Cast(T.uint64, tx)  # L44
                while T.Cast(T.int64, i ^ T.uint64(0x8000000000000000)) < T.Cast(T.int64, n ^ T.uint64(0x8000000000000000)):  # L44
                    sum__r = sum__r + in_[i]  # L45
                    i = i + stride  # L44
                lane_[tx] = tx % 32  # L48
                warp[tx] = tx // 32  # L49
                warpReduceSum_2_v[tx] = sum__r  # L51
                sum_[tx] = sum__r  # L40
            warpReduceSum_2_offset = 32 // 2  # L32
            while warpReduceSum_2_offset > 0:  # L32
                if target == "cuda":  # L33
                    for tx in T.Parallel(block_x):  # L33
                        x_src = T.alloc_var(T.float32)  # L33
                        x_src = T.shfl_down(warpReduceSum_2_v[tx], warpReduceSum_2_offset)  # L33
                        shfl_down_1[tx] = x_src  # L33
                else:  # L33
                    for tx in T.Parallel(block_x):  # L33
                        xch_float32[tx] = warpReduceSum_2_v[tx]  # L33
                    T.sync_threads()  # L33
                    for tx in T.Parallel(block_x):  # L33
                        x_lane = (tx) % 32  # L33
                        shfl_down_1[tx] = T.if_then_else(x_lane % 32 + warpReduceSum_2_offset < 32 and tx + warpReduceSum_2_offset < block_x, xch_float32[tx + warpReduceSum_2_offset], xch_float32[tx])  # L33
                    T.sync_threads()  # L33
                for tx in T.Parallel(block_x):  # L33
                    warpReduceSum_2_v[tx] = warpReduceSum_2_v[tx] + shfl_down_1[tx]  # L33
                warpReduceSum_2_offset = warpReduceSum_2_offset >> 1  # L32
            for tx in T.Parallel(block_x):  # L35
                warpReduceSum_ret_1[tx] = warpReduceSum_2_v[tx]  # L35
                sum_[tx] = warpReduceSum_ret_1[tx]  # L51
                if lane_[tx] == 0:  # L52
                    warpSums[warp[tx]] = sum_[tx]  # L53
            T.sync_threads()  # L55
            for tx in T.Parallel(block_x):  # L57
                numWarps = (block_x + 32 - 1) // 32  # L57
            for tx in T.Parallel(block_x):  # L58
                cond_L58[tx] = warp[tx] == 0  # L58
            for tx in T.Parallel(block_x):  # L59
                if cond_L58[tx]:  # L59
                    sum_[tx] = T.if_then_else(lane_[tx] < numWarps, warpSums[lane_[tx]], T.float32(0.0))  # L59
                    warpReduceSum_4_v[tx] = sum_[tx]  # L60
            warpReduceSum_4_offset = 32 // 2  # L32
            while warpReduceSum_4_offset > 0:  # L32
                if target == "cuda":  # L33
                    for tx in T.Parallel(block_x):  # L33
                        x_src = T.alloc_var(T.float32)  # L33
                        x_src = T.shfl_down(warpReduceSum_4_v[tx], warpReduceSum_4_offset)  # L33
                        if cond_L58[tx]:  # L33
                            shfl_down_2[tx] = x_src  # L33
                else:  # L33
                    for tx in T.Parallel(block_x):  # L33
                        xch_float32[tx] = warpReduceSum_4_v[tx]  # L33
                    T.sync_threads()  # L33
                    for tx in T.Parallel(block_x):  # L33
                        if cond_L58[tx]:  # L33
                            x_lane = (tx) % 32  # L33
                            shfl_down_2[tx] = T.if_then_else(x_lane % 32 + warpReduceSum_4_offset < 32 and tx + warpReduceSum_4_offset < block_x, xch_float32[tx + warpReduceSum_4_offset], xch_float32[tx])  # L33
                    T.sync_threads()  # L33
                for tx in T.Parallel(block_x):  # L33
                    if cond_L58[tx]:  # L33
                        warpReduceSum_4_v[tx] = warpReduceSum_4_v[tx] + shfl_down_2[tx]  # L33
                warpReduceSum_4_offset = warpReduceSum_4_offset >> 1  # L32
            for tx in T.Parallel(block_x):  # L35
                if cond_L58[tx]:  # L35
                    warpReduceSum_ret_3[tx] = warpReduceSum_4_v[tx]  # L35
                    sum_[tx] = warpReduceSum_ret_3[tx]  # L60
                    if lane_[tx] == 0:  # L61
                        T.atomic_add(result[0], sum_[tx])  # L62
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
    form="portable",
    source="warp_reduce_sum.cu",
    # every barrier of the CUDA kernel is written out; TileLang must not add its own, which it
    # may place inside loops whose trip count differs between threads (a deadlock on the GPU); on
    # GPUs, as in CUDA, buffer accesses are not bounds-checked; a value bound once under a guard
    # stays one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_thread_storage_sync", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
    gpu_pass_configs=(("tl.disable_safe_memory_legalize", True),),
)


def reduceSumAtomic(*args, grid=120, block=512, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `reduceSumAtomic<<<grid, block, shared_bytes>>>(in_, result, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(REDUCESUMATOMIC, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "reduceSumAtomic": REDUCESUMATOMIC,
}
