"""TileLang migration of gemv_warp_row.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of gemv_warp_row.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- gemv_warp_per_row: tile ------------------------------------------------
# its warp-shuffle reductions become T.reduce over the block's lanes


def make_gemv_warp_per_row(grid, block, shared_bytes=0, target="cuda"):  # L32
    """TileLang (tile) for CUDA kernel `gemv_warp_per_row`; grid/block as in `gemv_warp_per_row<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "gemv_warp_per_row indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "gemv_warp_per_row indexes blocks in x only"
    A_rows = T.dynamic("A_rows")  # what the buffer holds of whole rows
    x_len = T.dynamic("x_len")
    bias_len = T.dynamic("bias_len")
    y_len = T.dynamic("y_len")
    cols = T.dynamic("cols")  # scalar parameters that are also buffer extents
    assert block_x % 32 == 0, "the CUDA warp shuffles assume whole warps"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local
    lane_grid = T.Parallel if target == "cuda" else T.grid  # (warp, lane) pairs

    @T.prim_func
    def gemv_warp_per_row(A: T.Tensor((A_rows, cols), T.float32), x: T.Tensor((x_len,), T.float32), bias: T.Tensor((bias_len,), T.float32), y: T.Tensor((y_len,), T.float32), rows: T.int32, cols: cols):
        with T.Kernel(grid_x, threads=block_x, prelude=cuda_math.externs_for(['fmaf'], target)) as bx:  # L32
            total_lanes = alloc_lanes((block_x // 32, 32,), T.float32)  # L45
            total_total = alloc_lanes((block_x // 32,), T.float32)  # L45
            for lane_w, lane_l in lane_grid(block_x // 32, 32):  # L45
                lane = lane_w * 32 + lane_l  # L45
                warps_per_block = block_x // 32  # L38
                warp_id = lane // 32  # L39
                lane_ = lane % 32  # L40
                row = T.Cast(T.int32, T.Cast(T.uint32, bx) * T.Cast(T.uint32, warps_per_block) + T.Cast(T.uint32, warp_id))  # L41
                total_lanes[lane_w, lane_l] = T.float32(0)  # L45
                if row < rows:  # L42
                    partial = T.alloc_var(T.float32)  # L45
                    partial = T.float32(0.0)  # L45
                    for c in T.serial(lane_, cols, 32):  # L46
                        partial = cuda_math.fmaf(A[row, c], x[c], partial)  # L47
                    total_lanes[lane_w, lane_l] = partial  # L45
            T.reduce_sum(total_lanes, total_total, dim=1)  # L45
            for lane_w, lane_l in lane_grid(block_x // 32, 32):  # L45
                lane = lane_w * 32 + lane_l  # L45
                warps_per_block = block_x // 32  # L38
                warp_id = lane // 32  # L39
                lane_ = lane % 32  # L40
                row = T.Cast(T.int32, T.Cast(T.uint32, bx) * T.Cast(T.uint32, warps_per_block) + T.Cast(T.uint32, warp_id))  # L41
                if row < rows:  # L42
                    if lane_ == 0:  # L50
                        y[row] = total_total[lane_w] + bias[row]  # L51
    return gemv_warp_per_row


GEMV_WARP_PER_ROW = Signature(
    name="gemv_warp_per_row",
    factory=make_gemv_warp_per_row,
    params=(
        ("A", "buffer", "float32"),
        ("x", "buffer", "float32"),
        ("bias", "buffer", "float32"),
        ("y", "buffer", "float32"),
        ("rows", "scalar", "int32"),
        ("cols", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="gemv_warp_row.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("A", (None, "cols")),),
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def gemv_warp_per_row(*args, grid=25, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `gemv_warp_per_row<<<grid, block, shared_bytes>>>(A, x, bias, y, rows, cols)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(GEMV_WARP_PER_ROW, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "gemv_warp_per_row": GEMV_WARP_PER_ROW,
}
