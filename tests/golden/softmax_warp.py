"""TileLang migration of softmax_warp.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of softmax_warp.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- softmax_online_warp: tile ----------------------------------------------
# its warp-shuffle reductions become T.reduce over the block's lanes; its lanes' strided loops unroll at compiled-in lengths, the row kept in registers


def make_softmax_online_warp(grid, block, shared_bytes=0, target="cuda", static_sizes=None):  # L35
    """TileLang (tile) for CUDA kernel `softmax_online_warp`; grid/block as in `softmax_online_warp<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "softmax_online_warp indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "softmax_online_warp indexes blocks in x only"
    x_len = T.dynamic("x_len")
    y_len = T.dynamic("y_len")
    assert block_x % 32 == 0, "the CUDA warp shuffles assume whole warps"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local
    lane_grid = T.Parallel if target == "cuda" else T.grid  # (warp, lane) pairs
    # with `cols` compiled in (Signature.specialize), each lane's strided loops over a row unroll and
    # the elements several phases read stay in registers, if a lane has at most 128 of them
    row_steps = (static_sizes["cols"] + 32 - 1) // 32 if static_sizes else 0  # L50
    row_steps = row_steps if row_steps <= 128 else 0

    @T.prim_func
    def softmax_online_warp(x: T.Tensor((x_len,), T.float32), y: T.Tensor((y_len,), T.float32), rows: T.int32, cols: T.int32):
        with T.Kernel(grid_x, threads=block_x, prelude=cuda_math.externs_for(['__expf', 'fmaxf'], target)) as bx:  # L35
            m_lanes = alloc_lanes((block_x // 32, 32,), T.float32)  # L48
            m_total = alloc_lanes((block_x // 32,), T.float32)  # L48
            d_lanes = alloc_lanes((block_x // 32, 32,), T.float32)  # L48
            d_total = alloc_lanes((block_x // 32,), T.float32)  # L48
            x_regs = alloc_lanes((block_x // 32, 32, max(row_steps, 1)), T.float32)  # the lane's elements of 'x'  # L51
            for lane_w, lane_l in lane_grid(block_x // 32, 32):  # L48
                lane = lane_w * 32 + lane_l  # L48
                lane_ = lane % 32  # L39
                warp = lane // 32  # L40
                row = T.Cast(T.int32, T.Cast(T.uint32, bx * 4) + T.Cast(T.uint32, warp))  # L41
                m_lanes[lane_w, lane_l] = T.float32(0)  # L48
                d_lanes[lane_w, lane_l] = T.float32(0)  # L48
                if row < rows:  # L42
                    m = T.alloc_var(T.float32)  # L48
                    m = -T.float32(3.4028234663852886e+38)  # L48
                    d = T.alloc_var(T.float32)  # L49
                    d = T.float32(0.0)  # L49
                    if row_steps:  # L50
                        for c_step in T.unroll(row_steps):  # L50
                            c = lane_ + c_step * 32  # L50
                            if c < cols:  # L50
                                x_regs[lane_w, lane_l, c_step] = x[T.Cast(T.int32, T.Cast(T.uint64, row) * T.Cast(T.uint64, cols)) + c]  # L51
                                v = x_regs[lane_w, lane_l, c_step]  # L51
                                m_new = cuda_math.fmaxf(m, v)  # L52
                                d = d * cuda_math.fast_expf(m - m_new) + cuda_math.fast_expf(v - m_new)  # L53
                                m = m_new  # L54
                    else:  # L50
                        c = T.alloc_var(T.int32)  # L50
                        c = lane_  # L50
                        while c < cols:  # L50
                            v = x[T.Cast(T.int32, T.Cast(T.uint64, row) * T.Cast(T.uint64, cols)) + c]  # L51
                            m_new = cuda_math.fmaxf(m, v)  # L52
                            d = d * cuda_math.fast_expf(m - m_new) + cuda_math.fast_expf(v - m_new)  # L53
                            m = m_new  # L54
                            c = c + 32  # L50
                    m_lanes[lane_w, lane_l] = m  # L48
                    d_lanes[lane_w, lane_l] = d  # L48
            T.reduce_max(m_lanes, m_total, dim=1)  # L48
            for lane_w, lane_l in lane_grid(block_x // 32, 32):  # L48
                d_lanes[lane_w, lane_l] = d_lanes[lane_w, lane_l] * cuda_math.fast_expf(m_lanes[lane_w, lane_l] - m_total[lane_w])  # L64
            T.reduce_sum(d_lanes, d_total, dim=1)  # L48
            for lane_w, lane_l in lane_grid(block_x // 32, 32):  # L48
                lane = lane_w * 32 + lane_l  # L48
                lane_ = lane % 32  # L39
                warp = lane // 32  # L40
                row = T.Cast(T.int32, T.Cast(T.uint32, bx * 4) + T.Cast(T.uint32, warp))  # L41
                if row < rows:  # L42
                    inv_d = 1.0 / d_total[lane_w]  # L64
                    if row_steps:  # L65
                        for c_2_step in T.unroll(row_steps):  # L65
                            c_2 = lane_ + c_2_step * 32  # L65
                            if c_2 < cols:  # L65
                                y[T.Cast(T.int32, T.Cast(T.uint64, row) * T.Cast(T.uint64, cols)) + c_2] = cuda_math.fast_expf(x_regs[lane_w, lane_l, c_2_step] - m_total[lane_w]) * inv_d  # L66
                    else:  # L65
                        c_2 = T.alloc_var(T.int32)  # L65
                        c_2 = lane_  # L65
                        while c_2 < cols:  # L65
                            y[T.Cast(T.int32, T.Cast(T.uint64, row) * T.Cast(T.uint64, cols)) + c_2] = cuda_math.fast_expf(x[T.Cast(T.int32, T.Cast(T.uint64, row) * T.Cast(T.uint64, cols)) + c_2] - m_total[lane_w]) * inv_d  # L66
                            c_2 = c_2 + 32  # L65
    return softmax_online_warp


SOFTMAX_ONLINE_WARP = Signature(
    name="softmax_online_warp",
    factory=make_softmax_online_warp,
    params=(
        ("x", "buffer", "float32"),
        ("y", "buffer", "float32"),
        ("rows", "scalar", "int32"),
        ("cols", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="softmax_warp.cu",
    # on GPUs, for rows of at most 8192 elements, cols is compiled as a constant (one kernel
    # per length): the lanes' strided loops unroll and the row stays in registers
    specialize=('cols',),
    specialize_when=lambda s: s['cols'] <= 8192,
    static_pass_configs=(('tl.disable_safe_memory_legalize', True), ('tl.if_stmt_binding_inline_replayable_binds', False)),
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def softmax_online_warp(*args, grid=12, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `softmax_online_warp<<<grid, block, shared_bytes>>>(x, y, rows, cols)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(SOFTMAX_ONLINE_WARP, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "softmax_online_warp": SOFTMAX_ONLINE_WARP,
}
