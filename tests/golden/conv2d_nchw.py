"""TileLang migration of conv2d_nchw.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of conv2d_nchw.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- conv2d_nchw: tile ------------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_conv2d_nchw(grid, block, shared_bytes=0, target="cuda", tile=(256,), threads=256, fill=True, static_sizes=None):  # L38
    """TileLang (tile) for CUDA kernel `conv2d_nchw`; grid/block as in `conv2d_nchw<<<grid, block, shared_bytes>>>`.

    A map over the 1-D element domain in tiles of `tile` (x) elements, `threads` threads each.
    static_sizes: the values of N, C, H, W, K, R, S, stride, pad, P, Q when the launcher compiles them as constants (GPUs)."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "conv2d_nchw indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "conv2d_nchw indexes blocks in x only"
    input_rows = T.dynamic("input_rows")  # what the buffer holds of whole rows
    weight_rows = T.dynamic("weight_rows")  # what the buffer holds of whole rows
    bias_len = T.dynamic("bias_len")
    output_len = T.dynamic("output_len")
    C, H, W, R, S = T.dynamic("C, H, W, R, S")  # scalar parameters that are also buffer extents
    static = static_sizes is not None and target == "cuda"  # constant sizes: int32 index math
    extent_x = grid_x * block_x  # one element per CUDA thread  # L38
    tile_x, = fit_tile(tile, (extent_x,), threads if fill else 0)
    threads = min(threads, tile_x)

    @T.prim_func
    def conv2d_nchw(input: T.Tensor((input_rows, C, H, W), T.float32), weight: T.Tensor((weight_rows, C, R, S), T.float32), bias: T.Tensor((bias_len,), T.float32), output: T.Tensor((output_len,), T.float32), N: T.int32, C: C, H: H, W: W, K: T.int32, R: R, S: S, stride: T.int32, pad: T.int32, P: T.int32, Q: T.int32):
        with T.Kernel(T.ceildiv(extent_x, tile_x), threads=threads, prelude=cuda_math.externs_for(['fmaf'], target)) as bx:  # L38
            if bx * tile_x + tile_x <= extent_x:  # L38
                # a full tile: TileLang drops the guards below and vectorises
                for ix in T.Parallel(tile_x):  # L38
                    gx = bx * tile_x + ix  # L38
                    idx = gx  # L46
                    total = N * K * P * Q  # L47
                    if idx < total:  # L48
                        if static:  # constant sizes: values TileLang bounds (int32 index math)  # L51
                            q = T.truncmod(idx, Q)  # L51
                            p = T.truncmod(T.truncdiv(idx, Q), P)  # L52
                            k = T.truncmod(T.truncdiv(idx, P * Q), K)  # L53
                            n = T.truncdiv(idx, K * P * Q)  # L54
                        else:  # L51
                            q = T.alloc_var(T.int32)  # L51
                            q = T.truncmod(idx, Q)  # L51
                            p = T.alloc_var(T.int32)  # L52
                            p = T.truncmod(T.truncdiv(idx, Q), P)  # L52
                            k = T.alloc_var(T.int32)  # L53
                            k = T.truncmod(T.truncdiv(idx, P * Q), K)  # L53
                            n = T.alloc_var(T.int32)  # L54
                            n = T.truncdiv(idx, K * P * Q)  # L54
                        h0 = p * stride - pad  # L56
                        w0 = q * stride - pad  # L57
                        acc = T.alloc_var(T.float32)  # L59
                        acc = bias[k]  # L59
                        for c in T.serial(C):  # L60
                            for r in T.serial(R):  # L63
                                h = h0 + r  # L64
                                if h < 0 or h >= H:  # L65
                                    continue  # L65
                                for s in T.serial(S):  # L66
                                    w = w0 + s  # L67
                                    if w < 0 or w >= W:  # L68
                                        continue  # L68
                                    acc = cuda_math.fmaf(input[n, c, h, w], weight[k, c, r, s], acc)  # L69
                        output[idx] = acc  # L73
            else:  # L38
                # the last tile: elements past the domain do nothing
                for ix in T.Parallel(tile_x):  # L38
                    gx = bx * tile_x + ix  # L38
                    if gx < extent_x:  # L38
                        idx = gx  # L46
                        total = N * K * P * Q  # L47
                        if idx < total:  # L48
                            if static:  # constant sizes: values TileLang bounds (int32 index math)  # L51
                                q = T.truncmod(idx, Q)  # L51
                                p = T.truncmod(T.truncdiv(idx, Q), P)  # L52
                                k = T.truncmod(T.truncdiv(idx, P * Q), K)  # L53
                                n = T.truncdiv(idx, K * P * Q)  # L54
                            else:  # L51
                                q = T.alloc_var(T.int32)  # L51
                                q = T.truncmod(idx, Q)  # L51
                                p = T.alloc_var(T.int32)  # L52
                                p = T.truncmod(T.truncdiv(idx, Q), P)  # L52
                                k = T.alloc_var(T.int32)  # L53
                                k = T.truncmod(T.truncdiv(idx, P * Q), K)  # L53
                                n = T.alloc_var(T.int32)  # L54
                                n = T.truncdiv(idx, K * P * Q)  # L54
                            h0 = p * stride - pad  # L56
                            w0 = q * stride - pad  # L57
                            acc = T.alloc_var(T.float32)  # L59
                            acc = bias[k]  # L59
                            for c in T.serial(C):  # L60
                                for r in T.serial(R):  # L63
                                    h = h0 + r  # L64
                                    if h < 0 or h >= H:  # L65
                                        continue  # L65
                                    for s in T.serial(S):  # L66
                                        w = w0 + s  # L67
                                        if w < 0 or w >= W:  # L68
                                            continue  # L68
                                        acc = cuda_math.fmaf(input[n, c, h, w], weight[k, c, r, s], acc)  # L69
                            output[idx] = acc  # L73
    return conv2d_nchw


CONV2D_NCHW = Signature(
    name="conv2d_nchw",
    factory=make_conv2d_nchw,
    params=(
        ("input", "buffer", "float32"),
        ("weight", "buffer", "float32"),
        ("bias", "buffer", "float32"),
        ("output", "buffer", "float32"),
        ("N", "scalar", "int32"),
        ("C", "scalar", "int32"),
        ("H", "scalar", "int32"),
        ("W", "scalar", "int32"),
        ("K", "scalar", "int32"),
        ("R", "scalar", "int32"),
        ("S", "scalar", "int32"),
        ("stride", "scalar", "int32"),
        ("pad", "scalar", "int32"),
        ("P", "scalar", "int32"),
        ("Q", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="conv2d_nchw.cu",
    # buffers the kernel indexes as row-major arrays, by the scalar parameters that are their
    # extents (None: as many whole rows as the buffer holds)
    shapes=(("input", (None, "C", "H", "W")), ("weight", (None, "C", "R", "S"))),
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256, 512], "tile": [[512], [1024], [2048], [4096]]},
    # on GPUs, N, C, H, W, K, R, S, stride, pad, P, Q are compiled as constants (one kernel per size):
    # its divisions by them fold and its index math stays int32 (at run-time sizes TileLang widens it to int64)
    specialize=('N', 'C', 'H', 'W', 'K', 'R', 'S', 'stride', 'pad', 'P', 'Q'),
    specialize_when=None,
    static_pass_configs=(('tl.disable_safe_memory_legalize', True), ('tl.if_stmt_binding_inline_replayable_binds', False)),
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def conv2d_nchw(*args, grid, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `conv2d_nchw<<<grid, block, shared_bytes>>>(input, weight, bias, output, N, C, H, W, K, R, S, stride, pad, P, Q)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(CONV2D_NCHW, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "conv2d_nchw": CONV2D_NCHW,
}
