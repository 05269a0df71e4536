"""TileLang migration of softmax_rows.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of softmax_rows.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- softmax_rows: tile -----------------------------------------------------
# its shared-memory tree reductions become T.reduce over the block's lanes; its lanes' strided loops unroll at compiled-in lengths, the row kept in registers


def make_softmax_rows(grid, block, shared_bytes=0, target="cuda", static_sizes=None):  # L26
    """TileLang (tile) for CUDA kernel `softmax_rows`; grid/block as in `softmax_rows<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "softmax_rows indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "softmax_rows indexes blocks in x only"
    rows, cols = T.dynamic("rows, cols")  # scalar parameters that are also buffer extents
    assert block_x & (block_x - 1) == 0, "the CUDA tree reduction assumes a power-of-two block"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local
    # with `cols` compiled in (Signature.specialize), each lane's strided loops over a row unroll and
    # the elements several phases read stay in registers, if a lane has at most 128 of them
    row_steps = (static_sizes["cols"] + block_x - 1) // block_x if static_sizes else 0  # L41
    row_steps = row_steps if row_steps <= 128 else 0

    @T.prim_func
    def softmax_rows(input: T.Tensor((rows, cols), T.float32), output: T.Tensor((rows, cols), T.float32), rows: rows, cols: cols):
        with T.Kernel(grid_x, threads=block_x, prelude=cuda_math.externs_for(['fmaxf'], target)) as bx:  # L26
            s_red_lanes = alloc_lanes((block_x,), T.float32)  # L40
            s_red_total = alloc_lanes((1,), T.float32)  # L40
            input_regs = alloc_lanes((block_x, max(row_steps, 1)), T.float32)  # the lane's elements of 'input'  # L42
            row_max = T.alloc_var(T.float32)  # L50
            if bx < rows:  # L33
                for lane in lane_loop(block_x):  # L40
                    local_max = T.alloc_var(T.float32)  # L40
                    local_max = -T.float32(3.4028234663852886e+38)  # L40
                    if row_steps:  # L41
                        for c_step in T.unroll(row_steps):  # L41
                            c = lane + c_step * block_x  # L41
                            if c < cols:  # L41
                                input_regs[lane, c_step] = input[bx, c]  # L42
                                local_max = cuda_math.fmaxf(local_max, input_regs[lane, c_step])  # L42
                    else:  # L41
                        c = T.alloc_var(T.int32)  # L41
                        c = lane  # L41
                        while c < cols:  # L41
                            local_max = cuda_math.fmaxf(local_max, input[bx, c])  # L42
                            c = c + block_x  # L41
                    s_red_lanes[lane] = local_max  # L40
                T.reduce_max(s_red_lanes, s_red_total, dim=0)  # L40
                row_max = s_red_total[0]  # L50
                for lane in lane_loop(block_x):  # L54
                    local_sum = T.alloc_var(T.float32)  # L54
                    local_sum = T.float32(0.0)  # L54
                    if row_steps:  # L55
                        for c_2_step in T.unroll(row_steps):  # L55
                            c_2 = lane + c_2_step * block_x  # L55
                            if c_2 < cols:  # L55
                                local_sum = local_sum + T.exp(input_regs[lane, c_2_step] - row_max)  # L56
                    else:  # L55
                        c_2 = T.alloc_var(T.int32)  # L55
                        c_2 = lane  # L55
                        while c_2 < cols:  # L55
                            local_sum = local_sum + T.exp(input[bx, c_2] - row_max)  # L56
                            c_2 = c_2 + block_x  # L55
                    s_red_lanes[lane] = local_sum  # L54
                T.reduce_sum(s_red_lanes, s_red_total, dim=0)  # L54
                inv_sum = 1.0 / s_red_total[0]  # L64
                for lane in lane_loop(block_x):  # L64
                    if row_steps:  # L67
                        for c_3_step in T.unroll(row_steps):  # L67
                            c_3 = lane + c_3_step * block_x  # L67
                            if c_3 < cols:  # L67
                                output[bx, c_3] = T.exp(input_regs[lane, c_3_step] - row_max) * inv_sum  # L68
                    else:  # L67
                        c_3 = T.alloc_var(T.int32)  # L67
                        c_3 = lane  # L67
                        while c_3 < cols:  # L67
                            output[bx, c_3] = T.exp(input[bx, c_3] - row_max) * inv_sum  # L68
                            c_3 = c_3 + block_x  # L67
    return softmax_rows


SOFTMAX_ROWS = Signature(
    name="softmax_rows",
    factory=make_softmax_rows,
    params=(
        ("input", "buffer", "float32"),
        ("output", "buffer", "float32"),
        ("rows", "scalar", "int32"),
        ("cols", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="softmax_rows.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("input", ("rows", "cols")), ("output", ("rows", "cols"))),
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


def softmax_rows(*args, grid=37, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `softmax_rows<<<grid, block, shared_bytes>>>(input, output, rows, cols)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(SOFTMAX_ROWS, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- log_softmax_rows: tile -------------------------------------------------
# its shared-memory tree reductions become T.reduce over the block's lanes; its lanes' strided loops unroll at compiled-in lengths, the row kept in registers


def make_log_softmax_rows(grid, block, shared_bytes=0, target="cuda", static_sizes=None):  # L72
    """TileLang (tile) for CUDA kernel `log_softmax_rows`; grid/block as in `log_softmax_rows<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "log_softmax_rows indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "log_softmax_rows indexes blocks in x only"
    rows, cols = T.dynamic("rows, cols")  # scalar parameters that are also buffer extents
    assert block_x & (block_x - 1) == 0, "the CUDA tree reduction assumes a power-of-two block"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local
    # with `cols` compiled in (Signature.specialize), each lane's strided loops over a row unroll and
    # the elements several phases read stay in registers, if a lane has at most 128 of them
    row_steps = (static_sizes["cols"] + block_x - 1) // block_x if static_sizes else 0  # L86
    row_steps = row_steps if row_steps <= 128 else 0

    @T.prim_func
    def log_softmax_rows(input: T.Tensor((rows, cols), T.float32), output: T.Tensor((rows, cols), T.float32), rows: rows, cols: cols):
        with T.Kernel(grid_x, threads=block_x, prelude=cuda_math.externs_for(['__expf', 'fmaxf'], target)) as bx:  # L72
            s_red_lanes = alloc_lanes((block_x,), T.float32)  # L85
            s_red_total = alloc_lanes((1,), T.float32)  # L85
            input_regs = alloc_lanes((block_x, max(row_steps, 1)), T.float32)  # the lane's elements of 'input'  # L87
            row_max = T.alloc_var(T.float32)  # L95
            if bx < rows:  # L79
                for lane in lane_loop(block_x):  # L85
                    local_max = T.alloc_var(T.float32)  # L85
                    local_max = -T.float32(3.4028234663852886e+38)  # L85
                    if row_steps:  # L86
                        for c_step in T.unroll(row_steps):  # L86
                            c = lane + c_step * block_x  # L86
                            if c < cols:  # L86
                                input_regs[lane, c_step] = input[bx, c]  # L87
                                local_max = cuda_math.fmaxf(local_max, input_regs[lane, c_step])  # L87
                    else:  # L86
                        c = T.alloc_var(T.int32)  # L86
                        c = lane  # L86
                        while c < cols:  # L86
                            local_max = cuda_math.fmaxf(local_max, input[bx, c])  # L87
                            c = c + block_x  # L86
                    s_red_lanes[lane] = local_max  # L85
                T.reduce_max(s_red_lanes, s_red_total, dim=0)  # L85
                row_max = s_red_total[0]  # L95
                for lane in lane_loop(block_x):  # L98
                    local_sum = T.alloc_var(T.float32)  # L98
                    local_sum = T.float32(0.0)  # L98
                    if row_steps:  # L99
                        for c_2_step in T.unroll(row_steps):  # L99
                            c_2 = lane + c_2_step * block_x  # L99
                            if c_2 < cols:  # L99
                                local_sum = local_sum + cuda_math.fast_expf(input_regs[lane, c_2_step] - row_max)  # L100
                    else:  # L99
                        c_2 = T.alloc_var(T.int32)  # L99
                        c_2 = lane  # L99
                        while c_2 < cols:  # L99
                            local_sum = local_sum + cuda_math.fast_expf(input[bx, c_2] - row_max)  # L100
                            c_2 = c_2 + block_x  # L99
                    s_red_lanes[lane] = local_sum  # L98
                T.reduce_sum(s_red_lanes, s_red_total, dim=0)  # L98
                log_sum = T.alloc_var(T.float32)  # L108
                log_sum = T.log(s_red_total[0])  # L108
                for lane in lane_loop(block_x):  # L108
                    if row_steps:  # L110
                        for c_3_step in T.unroll(row_steps):  # L110
                            c_3 = lane + c_3_step * block_x  # L110
                            if c_3 < cols:  # L110
                                output[bx, c_3] = input_regs[lane, c_3_step] - row_max - log_sum  # L111
                    else:  # L110
                        c_3 = T.alloc_var(T.int32)  # L110
                        c_3 = lane  # L110
                        while c_3 < cols:  # L110
                            output[bx, c_3] = input[bx, c_3] - row_max - log_sum  # L111
                            c_3 = c_3 + block_x  # L110
    return log_softmax_rows


LOG_SOFTMAX_ROWS = Signature(
    name="log_softmax_rows",
    factory=make_log_softmax_rows,
    params=(
        ("input", "buffer", "float32"),
        ("output", "buffer", "float32"),
        ("rows", "scalar", "int32"),
        ("cols", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="softmax_rows.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("input", ("rows", "cols")), ("output", ("rows", "cols"))),
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


def log_softmax_rows(*args, grid=37, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `log_softmax_rows<<<grid, block, shared_bytes>>>(input, output, rows, cols)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(LOG_SOFTMAX_ROWS, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "softmax_rows": SOFTMAX_ROWS,
    "log_softmax_rows": LOG_SOFTMAX_ROWS,
}
