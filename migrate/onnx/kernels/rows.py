"""Row kernels: reductions, Softmax and LayerNormalization over chunks of the reduced axis, with
T.reduce_*."""
from __future__ import annotations

from ..claim import reduce_axes
from ..graph import Graph
from ..group import Group
from ..indexing import prod, subscript, unravel
from ..ops import FLOATS, REDUCERS, literal
from .base import Kernel, Options, Body, accum_dtype, as_float, cast_to, factory, pow2, tolerance_class


# -- reductions, softmax and layer norm: rows of the output, the reduced axis in chunks ------------

_ROW_PRELUDE = ["# CPU (target \"c\"): T.reduce_* needs local buffers walked serially; CUDA: fragments",
                "alloc = T.alloc_local if target == \"c\" else T.alloc_fragment",
                "loop = T.grid if target == \"c\" else T.Parallel"]


def _row_view(shape, axes):
    """(view, index) of an input whose ``axes`` are reduced, rows ``o`` and chunk column ``c``."""
    kept = [d for d in range(len(shape)) if d not in axes]
    if axes == list(range(len(shape) - len(axes), len(shape))):
        return (prod(shape[:len(kept)]), prod([shape[d] for d in axes])), ["o", "c"]
    ko = unravel("o", [shape[d] for d in kept])
    rc = unravel("c", [shape[d] for d in axes])
    index = [""] * len(shape)
    for d, e in zip(kept, ko):
        index[d] = e
    for d, e in zip(axes, rc):
        index[d] = e
    return tuple(shape), index


def emit_reduce(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    node = group.nodes[0]
    x = graph.info(node.inputs[0])
    y = graph.info(node.outputs[0])
    axes = reduce_axes(node, graph)
    O = prod([d for i, d in enumerate(x.shape) if i not in axes])
    Rn = prod([x.shape[d] for d in axes])
    acc_t = accum_dtype(x.dtype)
    b = Body(graph, names)
    view, index = _row_view(x.shape, axes)
    X = b.param(x.name, view)
    Y = b.param(y.name, (O,))
    fn, ident, finish = REDUCERS[node.op_type]
    ident_lit = literal(float("-inf") if ident == "-inf" else ident, acc_t) if acc_t in FLOATS else \
        (f"T.min_value(T.{acc_t})" if ident == "-inf" else literal(0, acc_t))
    value = "acc[i]" if finish is None else (f"acc[i] / {as_float(Rn, acc_t)}" if acc_t in FLOATS else
                                                 f"T.truncdiv(acc[i], {as_float(Rn, acc_t)})")
    body = [
        f"        with T.Kernel(T.ceildiv({O}, block_m), threads=threads) as bx:",
        f"            acc = alloc((block_m,), T.{acc_t})",
        f"            chunk = alloc((block_m, block_k), T.{acc_t})",
        f"            T.fill(acc, {ident_lit})",
        f"            for ko in T.serial(T.ceildiv({Rn}, block_k)):  # {node.op_type} '{node.name}' over axes {axes}",
        "                for i, j in loop(block_m, block_k):",
        "                    o = bx * block_m + i",
        "                    c = ko * block_k + j",
        f"                    chunk[i, j] = T.if_then_else(o < {O} and c < {Rn}, "
        f"{cast_to(subscript(X, index), x.dtype, acc_t)}, {ident_lit})",
        f"                T.{fn}(chunk, acc, dim=1, clear=False)",
        "            for i in loop(block_m):",
        f"                if bx * block_m + i < {O}:",
        f"                    {Y}[bx * block_m + i] = {cast_to(value, acc_t, y.dtype)}",
    ]
    doc = (f"{node.op_type} '{node.name}': {O} rows of {Rn} elements, each row's elements in chunks of "
           f"block_k combined with T.{fn}.")
    bk = pow2(Rn, 64)
    src = factory(group.name, doc, b.params, body, f", block_m=8, block_k={bk}, threads=128", _ROW_PRELUDE)
    return Kernel(group, group.name, src, b.params, tolerance_class(y.dtype, node.op_type != "ReduceMax"),
                  f"reduce {O}×{Rn}")


def emit_softmax(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    node = group.nodes[0]
    x = graph.info(node.inputs[0])
    y = graph.info(node.outputs[0])
    rank = len(x.shape)
    axis = node.attrs.get("axis", -1 if graph.opset >= 13 else 1) % max(rank, 1)
    if graph.opset < 13:
        pre, A, post = prod(x.shape[:axis]), prod(x.shape[axis:]), 1
    else:
        pre, A, post = prod(x.shape[:axis]), x.shape[axis], prod(x.shape[axis + 1:])
    O = pre * post
    if post == 1:
        view, index = (pre, A), ["o", "c"]
    else:
        view, index = (pre, A, post), [f"o // {post}", "c", f"o % {post}"]
    acc_t = accum_dtype(x.dtype)
    b = Body(graph, names)
    X = b.param(x.name, view)
    Y = b.param(y.name, view)
    xe = cast_to(subscript(X, index), x.dtype, acc_t)
    ninf = literal(float("-inf"), acc_t)
    zero = literal(0, acc_t)
    loop_head = [
        "                for i, j in loop(block_m, block_k):",
        "                    o = bx * block_m + i",
        "                    c = ko * block_k + j",
    ]
    chunks = f"T.ceildiv({A}, block_k)"
    body = [
        f"        with T.Kernel(T.ceildiv({O}, block_m), threads=threads) as bx:",
        f"            row_max = alloc((block_m,), T.{acc_t})",
        f"            row_sum = alloc((block_m,), T.{acc_t})",
        f"            chunk_max = alloc((block_m,), T.{acc_t})",
        f"            chunk_sum = alloc((block_m,), T.{acc_t})",
        f"            chunk = alloc((block_m, block_k), T.{acc_t})",
        f"            T.fill(row_max, {ninf})",
        f"            T.fill(row_sum, {zero})",
        f"            for ko in T.serial({chunks}):  # Softmax '{node.name}' axis {axis}: the running maximum "
        "and the sum of exp(x - max), rescaled as the maximum grows (one read)",
    ] + loop_head + [
        f"                    chunk[i, j] = T.if_then_else(o < {O} and c < {A}, {xe}, {ninf})",
        "                T.reduce_max(chunk, chunk_max, dim=1, clear=True)",
        "                for i in loop(block_m):",
        "                    chunk_max[i] = T.max(chunk_max[i], row_max[i])",
        "                for i, j in loop(block_m, block_k):  # (a -inf element adds nothing, even to a row of -inf so far)",
        f"                    chunk[i, j] = T.if_then_else(chunk[i, j] == {ninf}, {zero}, T.exp(chunk[i, j] - chunk_max[i]))",
        "                T.reduce_sum(chunk, chunk_sum, dim=1, clear=True)",
        "                for i in loop(block_m):",
        "                    row_sum[i] = T.if_then_else(row_max[i] == chunk_max[i], row_sum[i], "
        "row_sum[i] * T.exp(row_max[i] - chunk_max[i])) + chunk_sum[i]",
        "                    row_max[i] = chunk_max[i]",
        f"            for ko in T.serial({chunks}):  # exp(x - max) / sum",
    ] + loop_head + [
        f"                    if o < {O} and c < {A}:",
        f"                        {subscript(Y, index)} = {cast_to(f'T.exp({xe} - row_max[i]) / row_sum[i]', acc_t, y.dtype)}",
    ]
    doc = (f"Softmax '{node.name}': {O} rows of {A} elements in chunks of block_k: one pass for the running "
           "maximum and sum (online softmax), one to write.")
    src = factory(group.name, doc, b.params, body, f", block_m=8, block_k={pow2(A, 64)}, threads=128", _ROW_PRELUDE)
    return Kernel(group, group.name, src, b.params, tolerance_class(y.dtype, True), f"softmax {O}×{A}")


def emit_layernorm(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    node = group.nodes[0]
    x = graph.info(node.inputs[0])
    axis = node.attrs.get("axis", -1) % len(x.shape)
    eps = float(node.attrs.get("epsilon", 1e-5))
    pre, C = prod(x.shape[:axis]), prod(x.shape[axis:])
    acc_t = "float32" if x.dtype != "float64" else "float64"
    b = Body(graph, names)
    X = b.param(x.name, (pre, C))

    def vec(i):
        if len(node.inputs) <= i or not node.inputs[i]:
            return None
        t = node.inputs[i]
        info = graph.info(t)
        const = graph.constants.get(t)
        if const is not None and const.size == 1:
            return literal(const.reshape(-1)[0], acc_t)
        return cast_to(subscript(b.param(t, (C,) if info.numel > 1 else (1,)), ["c"] if info.numel > 1 else ["0"]),
                        info.dtype, acc_t)

    scale, bias = vec(1), vec(2)
    outs = list(node.outputs) + ["", ""]
    yname = outs[0]
    Y = b.param(yname, (pre, C))
    x_at = subscript(X, ["o", "c"])
    xv = cast_to(x_at, x.dtype, acc_t)
    zero = literal(0, acc_t)
    loop_head = ["                for i, j in loop(block_m, block_k):",
                 "                    o = bx * block_m + i",
                 "                    c = ko * block_k + j"]
    chunks = f"T.ceildiv({C}, block_k)"
    norm = f"({xv} - mean[i]) * rstd[i]"
    if scale:
        norm += f" * {scale}"
    if bias:
        norm += f" + {bias}"
    ydt = graph.info(yname).dtype
    body = [
        f"        with T.Kernel(T.ceildiv({pre}, block_m), threads=threads) as bx:",
        f"            mean = alloc((block_m,), T.{acc_t})",
        f"            rstd = alloc((block_m,), T.{acc_t})",
        f"            chunk = alloc((block_m, block_k), T.{acc_t})",
        f"            T.fill(mean, {zero})",
        f"            T.fill(rstd, {zero})",
        f"            for ko in T.serial({chunks}):  # LayerNormalization '{node.name}': the row's sum",
    ] + loop_head + [
        f"                    chunk[i, j] = T.if_then_else(o < {pre} and c < {C}, {xv}, {zero})",
        "                T.reduce_sum(chunk, mean, dim=1, clear=False)",
        "            for i in loop(block_m):",
        f"                mean[i] = mean[i] / {as_float(C, acc_t)}",
        f"            for ko in T.serial({chunks}):  # the sum of squared deviations",
    ] + loop_head + [
        f"                    chunk[i, j] = T.if_then_else(o < {pre} and c < {C}, ({xv} - mean[i]) * ({xv} - mean[i]), {zero})",
        "                T.reduce_sum(chunk, rstd, dim=1, clear=False)",
        "            for i in loop(block_m):",
        f"                rstd[i] = T.rsqrt(rstd[i] / {as_float(C, acc_t)} + {literal(eps, acc_t)})",
        f"            for ko in T.serial({chunks}):  # (x - mean) * rstd * scale + bias",
    ] + loop_head + [
        f"                    if o < {pre} and c < {C}:",
        f"                        {subscript(Y, ['o', 'c'])} = {cast_to(norm, acc_t, ydt)}",
    ]
    extra = []
    for t, what in ((outs[1], "mean[i]"), (outs[2], "rstd[i]")):
        if t:
            P = b.param(t, (pre,))
            extra.append(f"                    {P}[bx * block_m + i] = {cast_to(what, acc_t, graph.info(t).dtype)}")
    if extra:
        body += ["            for i in loop(block_m):", f"                if bx * block_m + i < {pre}:"] + extra
    doc = (f"LayerNormalization '{node.name}': {pre} rows of {C} elements; mean and variance by T.reduce_sum "
           "over chunks of block_k, in float32.")
    params = [p for p in b.params if p.tensor not in node.outputs] + [p for p in b.params if p.tensor in node.outputs]
    src = factory(group.name, doc, params, body, f", block_m=8, block_k={pow2(C, 64)}, threads=128", _ROW_PRELUDE)
    return Kernel(group, group.name, src, params, tolerance_class(ydt, True), f"layernorm {pre}×{C}")


#: group kind -> emitter; kinds not here (view, torch) get no TileLang kernel
