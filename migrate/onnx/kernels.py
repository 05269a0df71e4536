"""Step 3, kernels: one TileLang kernel factory per group, from the table :data:`EMITTERS` (kind ->
emitter). Each emitter writes readable TileLang from the group's op kinds, shapes and
attributes (not from lowered TIR), with a comment naming the ONNX node each statement comes from.

Shapes are static: they are numbers in the kernel text. Every tensor a kernel takes is passed as
a contiguous view whose shape the kernel declares (:class:`Param`; the ``Model`` reshapes, which
costs nothing). Targets: on ``cuda`` reduction buffers are fragments walked by ``T.Parallel``; on
TileLang's ``c`` target (the CPU check) ``T.reduce_*`` and accumulators need ``alloc_local`` and
serial ``T.grid`` loops, so such factories pick ``alloc``/``loop`` by target.

GEMMs: float32 MatMul/Gemm accumulate in a serial loop over K on CUDA cores (exact float32, no
tf32) unless ``allow_tf32``; float16/bfloat16 (and float32 with ``allow_tf32``) use ``T.gemm`` on
shared tiles in a ``T.Pipelined`` loop (tensor cores on the GPU).
"""
from __future__ import annotations

import keyword
import re

import numpy as np
from dataclasses import dataclass, field

from .claim import reduce_axes
from .graph import Graph, Node
from .group import Group
from .indexing import broadcast_index, prod, subscript, unravel
from .ops import FLOATS, OPS, REDUCERS, ExprCtx, literal


@dataclass(frozen=True)
class Param:
    tensor: str          # ONNX tensor name
    name: str            # the kernel's parameter name
    view: tuple[int, ...]
    dtype: str


@dataclass
class Kernel:
    group: Group
    name: str
    source: str
    params: list[Param]
    tolerance: str
    summary: str
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Options:
    allow_tf32: bool = False


#: names the kernels and the Model class use themselves (loop variables, buffers, modules)
RESERVED = frozenset("""T torch np tilelang Path self w dev trace target alloc loop threads stages block_m block_n
block_k bx by bz i j k ko r c o row col acc chunk a_s b_s mean rstd row_max row_sum p oc ic kh kw ih iw img oh
ow""".split())


def py_name(tensor: str) -> str:
    """A Python identifier for an ONNX tensor name."""
    s = re.sub(r"\W", "_", tensor)
    if not s or s[0].isdigit() or keyword.iskeyword(s) or s in RESERVED or s.startswith(("v_", "make_")):
        s = "t_" + s
    return s


def _accum(dtype: str) -> str:
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def compute_dtype(dtype: str) -> str:
    """The type elementwise chains compute in: half types in float32 (TileLang's C target has no
    half math, and the chain rounds once, when it stores)."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def _tolerance(dtype: str, reduces: bool) -> str:
    if dtype not in FLOATS:
        return "exact"
    if dtype == "float16":
        return "fp16"
    if dtype == "float64":
        return "fp64"
    return "fp32_accum" if reduces else "fp32"


class _Body:
    """The operands of a kernel and the element expressions of an elementwise chain."""

    def __init__(self, graph: Graph, names: dict[str, str]):
        self.graph = graph
        self.names = names
        self.params: list[Param] = []
        self.env: dict[str, str] = {}

    def param(self, tensor: str, view) -> str:
        info = self.graph.info(tensor)
        view = tuple(view) if view else (1,)
        for p in self.params:
            if p.tensor == tensor and p.view == view:
                return p.name
        name = self.names[tensor]
        if any(p.name == name for p in self.params):
            name = f"{name}_v{len(self.params)}"
        self.params.append(Param(tensor, name, view, info.dtype))
        return name

    def read(self, tensor: str, out_shape, out_index, canonical, channel: bool = False) -> str:
        """The expression of ``tensor`` at the element; ``canonical`` is (view, index) of the
        kernel's own output layout, used for operands of the output's shape."""
        if tensor in self.env:
            return self.env[tensor]
        info = self.graph.info(tensor)
        wide = compute_dtype(info.dtype)
        const = self.graph.constants.get(tensor)
        if const is not None and const.size == 1:
            return literal(const.reshape(-1)[0], wide)
        if channel:   # a per-channel vector of an NCHW tensor (BatchNormalization's statistics)
            load = subscript(self.param(tensor, (info.numel,)), [out_index[1]])
        elif info.shape == tuple(out_shape):
            view, index = canonical
            load = subscript(self.param(tensor, view), index)
        elif info.numel == 1:
            load = subscript(self.param(tensor, (1,)), ["0"])
        else:
            load = subscript(self.param(tensor, info.shape), broadcast_index(info.shape, out_shape, out_index))
        return load if wide == info.dtype else f"T.Cast(T.{wide}, {load})"

    def chain(self, nodes: list[Node], out_shape, out_index, canonical, indent: str) -> list[str]:
        lines = []
        for n in nodes:
            chans = OPS[n.op_type].channel_inputs
            args = [self.read(t, out_shape, out_index, canonical, k in chans) if t else "None"
                    for k, t in enumerate(n.inputs)]
            out = n.outputs[0]
            real = self.graph.info(out).dtype
            ctx = ExprCtx(compute_dtype(real), tuple(compute_dtype(self.graph.info(t).dtype) for t in n.inputs if t),
                          n.attrs)
            expr = OPS[n.op_type].expr(args, ctx)
            if n.op_type == "Cast" and real != ctx.out:   # a cast to half rounds there
                expr = f"T.Cast(T.{ctx.out}, T.Cast(T.{real}, {expr}))"
            var = "v_" + self.names[out]
            lines.append(f"{indent}{var} = {expr}  # {n.op_type} '{n.name}'")
            self.env[out] = var
        return lines

    def stores(self, group: Group, canonical, indent: str, dtype_of) -> list[str]:
        view, index = canonical
        lines = []
        for t in group.outputs:
            value = self.env[t]
            real = self.graph.info(t).dtype
            if compute_dtype(real) != real:
                value = f"T.Cast(T.{real}, {value})"
            lines.append(f"{indent}{subscript(self.param(t, view), index)} = {value}")
        return lines


def _signature(params: list[Param]) -> str:
    return ", ".join(f"{p.name}: T.Tensor({p.view!r}, T.{p.dtype})" for p in params)


def _pow2(n: int, cap: int) -> int:
    p = 1
    while p < n and p < cap:
        p *= 2
    return p


def _factory(name: str, doc: str, params: list[Param], body: list[str], defaults: str, prelude=()) -> str:
    head = [f"def make_{name}(target=\"cuda\"{defaults}):",
            f'    """{doc}"""']
    head += [f"    {line}" for line in prelude]
    head += ["", "    @T.prim_func", f"    def {name}({_signature(params)}):"]
    return "\n".join(head + body + [f"    return {name}", ""])


def _matrix(shape) -> tuple[int, int]:
    """The (rows, columns) view of an output of ``shape``."""
    if not shape:
        return 1, 1
    return prod(shape[:-1]), shape[-1]


def _row_index(shape) -> list[str]:
    if not shape:
        return []
    return unravel("r", shape[:-1]) + ["c"]


# -- map and transpose: T.Parallel over (row, column) tiles of the output --------------------------

def emit_map(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    out_shape = graph.info(group.shape_tensor).shape
    R, C = _matrix(out_shape)
    canonical = ((R, C), ["r", "c"])
    out_index = _row_index(out_shape)
    b = _Body(graph, names)
    ind = " " * 20
    lines: list[str] = []
    nodes = group.nodes
    if group.kind == "transpose":
        head = nodes[0]
        x = graph.info(head.inputs[0])
        perm = head.attrs.get("perm", list(reversed(range(len(x.shape)))))
        index = [""] * len(x.shape)
        for d, p in enumerate(perm):
            index[p] = out_index[d]
        var = "v_" + names[head.outputs[0]]
        load = subscript(b.param(head.inputs[0], x.shape), index)
        if compute_dtype(x.dtype) != x.dtype:
            load = f"T.Cast(T.{compute_dtype(x.dtype)}, {load})"
        lines.append(f"{ind}{var} = {load}  # Transpose '{head.name}' perm={list(perm)}")
        b.env[head.outputs[0]] = var
        nodes = nodes[1:]
    lines += b.chain(nodes, out_shape, out_index, canonical, ind)
    lines += b.stores(group, canonical, ind, None)
    bn = _pow2(C, 128)
    bm = max(1, min(_pow2(R, 1024), 1024 // bn))
    body = [
        f"        with T.Kernel(T.ceildiv({C}, block_n), T.ceildiv({R}, block_m), threads=threads) as (bx, by):",
        "            for i, j in T.Parallel(block_m, block_n):",
        "                r = by * block_m + i",
        "                c = bx * block_n + j",
        f"                if r < {R} and c < {C}:",
    ] + lines
    params = _ordered(b.params, group)
    what = " → ".join(f"{n.op_type} '{n.name}'" for n in group.nodes)
    doc = (f"Elementwise map of {what}: the output viewed as {R}×{C}, in tiles of block_m×block_n "
           "elements, one T.Parallel over each tile.")
    src = _factory(group.name, doc, params, body, f", block_m={bm}, block_n={bn}, threads=128")
    dtype = graph.info(group.outputs[0]).dtype if group.outputs else "float32"
    return Kernel(group, group.name, src, params, _tolerance(dtype, False), f"map {R}×{C}")


def _ordered(params: list[Param], group: Group) -> list[Param]:
    """Inputs first (as read), then the group's outputs."""
    outs = set(group.outputs)
    return [p for p in params if p.tensor not in outs] + [p for p in params if p.tensor in outs]


# -- GEMM: MatMul / Gemm tile with the epilogue ------------------------------------------------------

def emit_matmul(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    head = group.nodes[0]
    a, bt = graph.info(head.inputs[0]), graph.info(head.inputs[1])
    out = graph.info(head.outputs[0])
    ta = head.op_type == "Gemm" and head.attrs.get("transA", 0)
    tb = head.op_type == "Gemm" and head.attrs.get("transB", 0)
    # a 1-D operand is a row (A) or a column (B) whose dimension the output drops (numpy matmul)
    a_mat = a.shape if len(a.shape) >= 2 else (1,) + a.shape
    b_mat = bt.shape if len(bt.shape) >= 2 else bt.shape + (1,)
    M, N = (a_mat[-1] if ta else a_mat[-2]), (b_mat[-2] if tb else b_mat[-1])
    K = a_mat[-2] if ta else a_mat[-1]
    batch = tuple(np.broadcast_shapes(a_mat[:-2], b_mat[:-2]))
    Bt = prod(batch)
    # activations (..., M, K) times one weight matrix: the batch folds into the rows, one GEMM
    folded = Bt > 1 and not ta and prod(b_mat[:-2]) == 1 and a_mat[:-2] == batch
    if folded:
        a_mat, b_mat = (Bt * M, K), b_mat[-2:]
        rows_of = batch + (M,)
        M, batch, Bt = Bt * M, (), 1
    dtype, acc_t = a.dtype, _accum(a.dtype)
    tensor_cores = dtype in ("float16", "bfloat16") or (dtype == "float32" and opts.allow_tf32)
    b = _Body(graph, names)
    bz_index = unravel("bz", batch)

    def operand(info, mat):
        own = mat[:-2]
        if Bt > 1 and prod(own) not in (1, Bt):   # a batch broadcast over some dimensions only
            return b.param(info.name, own + mat[-2:]), broadcast_index(own, batch, bz_index)
        if Bt > 1:
            view = (prod(own),) + mat[-2:]
            return b.param(info.name, view), ["bz" if view[0] > 1 else "0"]
        return b.param(info.name, mat[-2:]), []

    A, za = operand(a, a_mat)
    B, zb = operand(bt, b_mat)
    lead = lambda z: "".join(f"{e}, " for e in z)  # noqa: E731
    out_view = ((Bt, M, N) if Bt > 1 else (M, N))
    out_index = bz_index + (["row"] if len(a.shape) >= 2 else []) + (["col"] if len(bt.shape) >= 2 else [])
    if folded:
        out_index = unravel("row", rows_of) + (["col"] if len(bt.shape) >= 2 else [])
    canonical = (out_view, (["bz"] if Bt > 1 else []) + ["row", "col"])
    ind = " " * 20
    epi = []
    cd = compute_dtype(out.dtype)
    acc_expr = "acc[i, j]" if acc_t == cd else f"T.Cast(T.{cd}, acc[i, j])"
    if head.op_type == "Gemm":
        alpha, beta = float(head.attrs.get("alpha", 1.0)), float(head.attrs.get("beta", 1.0))
        e = acc_expr if alpha == 1.0 else f"{literal(alpha, cd)} * {acc_expr}"
        if len(head.inputs) > 2 and head.inputs[2] and beta != 0.0:
            c = b.read(head.inputs[2], out.shape, out_index, canonical)
            e += f" + {c}" if beta == 1.0 else f" + {literal(beta, cd)} * {c}"
        acc_expr = e
    var = "v_" + names[head.outputs[0]]
    epi.append(f"{ind}{var} = {acc_expr}  # {head.op_type} '{head.name}'")
    b.env[head.outputs[0]] = var
    epi += b.chain(group.nodes[1:], out.shape, out_index, canonical, ind)
    epi += b.stores(group, canonical, ind, None)
    grid = f"T.ceildiv({N}, block_n), T.ceildiv({M}, block_m)" + (f", {Bt}" if Bt > 1 else "")
    ids = "(bx, by, bz)" if Bt > 1 else "(bx, by)"
    a_at = (f"{A}[{lead(za)}k, row]" if ta else f"{A}[{lead(za)}row, k]")
    b_at = (f"{B}[{lead(zb)}col, k]" if tb else f"{B}[{lead(zb)}k, col]")
    body = [f"        with T.Kernel({grid}, threads=threads) as {ids}:",
            f"            acc = alloc((block_m, block_n), T.{acc_t})"]
    if tensor_cores:
        a_tile = "(block_k, block_m)" if ta else "(block_m, block_k)"
        b_tile = "(block_n, block_k)" if tb else "(block_k, block_n)"
        a_src = (f"{A}[{lead(za)}ko * block_k:(ko + 1) * block_k, by * block_m:(by + 1) * block_m]" if ta else
                 f"{A}[{lead(za)}by * block_m:(by + 1) * block_m, ko * block_k:(ko + 1) * block_k]")
        b_src = (f"{B}[{lead(zb)}bx * block_n:(bx + 1) * block_n, ko * block_k:(ko + 1) * block_k]" if tb else
                 f"{B}[{lead(zb)}ko * block_k:(ko + 1) * block_k, bx * block_n:(bx + 1) * block_n]")
        body += [f"            a_s = T.alloc_shared({a_tile}, T.{dtype}, scope=\"shared\")",
                 f"            b_s = T.alloc_shared({b_tile}, T.{dtype}, scope=\"shared\")",
                 "            T.clear(acc)",
                 f"            for ko in T.Pipelined(T.ceildiv({K}, block_k), num_stages=stages):",
                 f"                T.copy({a_src}, a_s)",
                 f"                T.copy({b_src}, b_s)",
                 f"                T.gemm(a_s, b_s, acc, transpose_A={bool(ta)}, transpose_B={bool(tb)})"
                 + ("  # tf32 tensor cores (--allow-tf32)" if dtype == "float32" else "")]
    else:
        body += ["            T.clear(acc)",
                 f"            for k in T.serial({K}):  # exact {dtype} multiply-adds, no tensor cores",
                 "                for i, j in loop(block_m, block_n):",
                 "                    row = by * block_m + i",
                 "                    col = bx * block_n + j",
                 f"                    if row < {M} and col < {N}:",
                 f"                        acc[i, j] += {_cast_to(a_at, dtype, acc_t)} * {_cast_to(b_at, dtype, acc_t)}"]
    body += ["            for i, j in loop(block_m, block_n):",
             "                row = by * block_m + i",
             "                col = bx * block_n + j",
             f"                if row < {M} and col < {N}:"] + epi
    prelude = ["# CPU (target \"c\"): accumulators are local buffers walked serially; CUDA: fragments",
               "alloc = T.alloc_local if target == \"c\" else T.alloc_fragment",
               "loop = T.grid if target == \"c\" else T.Parallel"]
    defaults = ", block_m=64, block_n=64, block_k=32, stages=2, threads=128" if tensor_cores else \
        ", block_m=32, block_n=32, threads=128"
    what = " → ".join(f"{n.op_type} '{n.name}'" for n in group.nodes)
    doc = (f"GEMM tile of {what}: ({'batch ' + str(Bt) + ' × ' if Bt > 1 else ''}{M}×{K}) · ({K}×{N}), "
           f"accumulated in {acc_t}, epilogue applied to the accumulator tile.")
    params = _ordered(b.params, group)
    src = _factory(group.name, doc, params, body, defaults, prelude)
    tol = "tf32" if dtype == "float32" and tensor_cores else _tolerance(out.dtype, True)
    notes = ["tf32"] if tol == "tf32" else []
    return Kernel(group, group.name, src, params, tol, f"gemm {M}×{N}×{K}" + (f" ×{Bt}" if Bt > 1 else ""), notes)


def _cast_to(expr: str, frm: str, to: str) -> str:
    return expr if frm == to else f"T.Cast(T.{to}, {expr})"


# -- Conv: an implicit GEMM, output pixels × output channels, exact serial reduction ----------------

def conv_pads(node: Node, x_shape, w_shape, y_shape) -> tuple[int, int]:
    """The (top, left) padding of a 2-D Conv, auto_pad resolved."""
    auto = node.attrs.get("auto_pad", "NOTSET")
    strides = node.attrs.get("strides", [1, 1])
    dil = node.attrs.get("dilations", [1, 1])
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        begin = []
        for d in range(2):
            k = (w_shape[2 + d] - 1) * dil[d] + 1
            total = max((y_shape[2 + d] - 1) * strides[d] + k - x_shape[2 + d], 0)
            begin.append(total // 2 if auto == "SAME_UPPER" else total - total // 2)
        return begin[0], begin[1]
    if auto == "VALID":
        return 0, 0
    pads = node.attrs.get("pads", [0, 0, 0, 0])
    return pads[0], pads[1]


def emit_conv(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    head = group.nodes[0]
    x, wt, y = graph.info(head.inputs[0]), graph.info(head.inputs[1]), graph.info(head.outputs[0])
    N, C, H, W = x.shape
    Co, Cg, KH, KW = wt.shape
    _, _, Ho, Wo = y.shape
    groups = head.attrs.get("group", 1)
    sh, sw = head.attrs.get("strides", [1, 1])
    dh, dw = head.attrs.get("dilations", [1, 1])
    ph, pw = conv_pads(head, x.shape, wt.shape, y.shape)
    P = N * Ho * Wo
    acc_t, cd = _accum(x.dtype), compute_dtype(y.dtype)
    b = _Body(graph, names)
    X = b.param(x.name, x.shape)
    Wp = b.param(wt.name, wt.shape)
    out_index = ["img", "oc", "oh", "ow"]
    canonical = (y.shape, out_index)
    ind = " " * 20
    acc_expr = "acc[i, j]" if acc_t == cd else f"T.Cast(T.{cd}, acc[i, j])"
    if len(head.inputs) > 2 and head.inputs[2]:
        bias = graph.info(head.inputs[2])
        acc_expr += " + " + _cast_to(subscript(b.param(bias.name, bias.shape), ["oc"]), bias.dtype, cd)
    var = "v_" + names[head.outputs[0]]
    epi = [f"{ind}{var} = {acc_expr}  # Conv '{head.name}'"]
    b.env[head.outputs[0]] = var
    epi += b.chain(group.nodes[1:], y.shape, out_index, canonical, ind)
    epi += b.stores(group, canonical, ind, None)
    chan = "ic" if groups == 1 else f"oc // {Co // groups} * {Cg} + ic"
    ih = re.sub(r" \* 1(?!\d)| - 0(?!\d)", "", f"oh * {sh} - {ph} + kh * {dh}")
    iw = re.sub(r" \* 1(?!\d)| - 0(?!\d)", "", f"ow * {sw} - {pw} + kw * {dw}")
    pixel = ["                    img = p // " + str(Ho * Wo), f"                    oh = p // {Wo} % {Ho}",
             f"                    ow = p % {Wo}"]
    body = [
        f"        with T.Kernel(T.ceildiv({Co}, block_n), T.ceildiv({P}, block_m), threads=threads) as (bx, by):",
        f"            acc = alloc((block_m, block_n), T.{acc_t})",
        "            T.clear(acc)",
        f"            for ic, kh, kw in T.grid({Cg}, {KH}, {KW}):  # exact {x.dtype} multiply-adds, no tensor cores",
        "                for i, j in loop(block_m, block_n):",
        "                    p = by * block_m + i",
        "                    oc = bx * block_n + j",
    ] + pixel + [
        f"                    ih = {ih}",
        f"                    iw = {iw}",
        f"                    if p < {P} and oc < {Co} and 0 <= ih and ih < {H} and 0 <= iw and iw < {W}:",
        f"                        acc[i, j] += {_cast_to(f'{X}[img, {chan}, ih, iw]', x.dtype, acc_t)} * "
        f"{_cast_to(f'{Wp}[oc, ic, kh, kw]', wt.dtype, acc_t)}",
        "            for i, j in loop(block_m, block_n):",
        "                p = by * block_m + i",
        "                oc = bx * block_n + j",
    ] + [ln[4:] for ln in pixel] + [f"                if p < {P} and oc < {Co}:"] + epi
    prelude = ["# CPU (target \"c\"): accumulators are local buffers walked serially; CUDA: fragments",
               "alloc = T.alloc_local if target == \"c\" else T.alloc_fragment",
               "loop = T.grid if target == \"c\" else T.Parallel"]
    what = " → ".join(f"{n.op_type} '{n.name}'" for n in group.nodes)
    doc = (f"Convolution {what} as an implicit GEMM: {P} output pixels × {Co} channels, each a sum over "
           f"{Cg}×{KH}×{KW} taps (stride {sh}×{sw}, padding {ph}×{pw}, dilation {dh}×{dw}, {groups} group(s)).")
    params = _ordered(b.params, group)
    src = _factory(group.name, doc, params, body, ", block_m=32, block_n=32, threads=128", prelude)
    return Kernel(group, group.name, src, params, _tolerance(y.dtype, True), f"conv {P}×{Co}×{Cg * KH * KW}")


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
    acc_t = _accum(x.dtype)
    b = _Body(graph, names)
    view, index = _row_view(x.shape, axes)
    X = b.param(x.name, view)
    Y = b.param(y.name, (O,))
    fn, ident, finish = REDUCERS[node.op_type]
    ident_lit = literal(float("-inf") if ident == "-inf" else ident, acc_t) if acc_t in FLOATS else \
        (f"T.min_value(T.{acc_t})" if ident == "-inf" else literal(0, acc_t))
    value = "acc[i]" if finish is None else (f"acc[i] / {literal(Rn, acc_t)}" if acc_t in FLOATS else
                                                 f"T.truncdiv(acc[i], {literal(Rn, acc_t)})")
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
        f"{_cast_to(subscript(X, index), x.dtype, acc_t)}, {ident_lit})",
        f"                T.{fn}(chunk, acc, dim=1, clear=False)",
        "            for i in loop(block_m):",
        f"                if bx * block_m + i < {O}:",
        f"                    {Y}[bx * block_m + i] = {_cast_to(value, acc_t, y.dtype)}",
    ]
    doc = (f"{node.op_type} '{node.name}': {O} rows of {Rn} elements, each row's elements in chunks of "
           f"block_k combined with T.{fn}.")
    bk = _pow2(Rn, 64)
    src = _factory(group.name, doc, b.params, body, f", block_m=8, block_k={bk}, threads=128", _ROW_PRELUDE)
    return Kernel(group, group.name, src, b.params, _tolerance(y.dtype, node.op_type != "ReduceMax"),
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
    acc_t = _accum(x.dtype)
    b = _Body(graph, names)
    X = b.param(x.name, view)
    Y = b.param(y.name, view)
    xe = _cast_to(subscript(X, index), x.dtype, acc_t)
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
        f"            chunk = alloc((block_m, block_k), T.{acc_t})",
        f"            T.fill(row_max, {ninf})",
        f"            T.fill(row_sum, {zero})",
        f"            for ko in T.serial({chunks}):  # Softmax '{node.name}' axis {axis}: the row's maximum",
    ] + loop_head + [
        f"                    chunk[i, j] = T.if_then_else(o < {O} and c < {A}, {xe}, {ninf})",
        "                T.reduce_max(chunk, row_max, dim=1, clear=False)",
        f"            for ko in T.serial({chunks}):  # the sum of exp(x - max)",
    ] + loop_head + [
        f"                    chunk[i, j] = T.if_then_else(o < {O} and c < {A}, T.exp({xe} - row_max[i]), {zero})",
        "                T.reduce_sum(chunk, row_sum, dim=1, clear=False)",
        f"            for ko in T.serial({chunks}):  # exp(x - max) / sum",
    ] + loop_head + [
        f"                    if o < {O} and c < {A}:",
        f"                        {subscript(Y, index)} = {_cast_to(f'T.exp({xe} - row_max[i]) / row_sum[i]', acc_t, y.dtype)}",
    ]
    doc = f"Softmax '{node.name}': {O} rows of {A} elements, three passes over chunks of block_k (max, sum, write)."
    src = _factory(group.name, doc, b.params, body, f", block_m=8, block_k={_pow2(A, 64)}, threads=128", _ROW_PRELUDE)
    return Kernel(group, group.name, src, b.params, _tolerance(y.dtype, True), f"softmax {O}×{A}")


def emit_layernorm(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    node = group.nodes[0]
    x = graph.info(node.inputs[0])
    axis = node.attrs.get("axis", -1) % len(x.shape)
    eps = float(node.attrs.get("epsilon", 1e-5))
    pre, C = prod(x.shape[:axis]), prod(x.shape[axis:])
    acc_t = "float32" if x.dtype != "float64" else "float64"
    b = _Body(graph, names)
    X = b.param(x.name, (pre, C))

    def vec(i):
        if len(node.inputs) <= i or not node.inputs[i]:
            return None
        t = node.inputs[i]
        info = graph.info(t)
        const = graph.constants.get(t)
        if const is not None and const.size == 1:
            return literal(const.reshape(-1)[0], acc_t)
        return _cast_to(subscript(b.param(t, (C,) if info.numel > 1 else (1,)), ["c"] if info.numel > 1 else ["0"]),
                        info.dtype, acc_t)

    scale, bias = vec(1), vec(2)
    outs = list(node.outputs) + ["", ""]
    yname = outs[0]
    Y = b.param(yname, (pre, C))
    x_at = subscript(X, ["o", "c"])
    xv = _cast_to(x_at, x.dtype, acc_t)
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
        f"                mean[i] = mean[i] / {literal(C, acc_t)}",
        f"            for ko in T.serial({chunks}):  # the sum of squared deviations",
    ] + loop_head + [
        f"                    chunk[i, j] = T.if_then_else(o < {pre} and c < {C}, ({xv} - mean[i]) * ({xv} - mean[i]), {zero})",
        "                T.reduce_sum(chunk, rstd, dim=1, clear=False)",
        "            for i in loop(block_m):",
        f"                rstd[i] = T.rsqrt(rstd[i] / {literal(C, acc_t)} + {literal(eps, acc_t)})",
        f"            for ko in T.serial({chunks}):  # (x - mean) * rstd * scale + bias",
    ] + loop_head + [
        f"                    if o < {pre} and c < {C}:",
        f"                        {subscript(Y, ['o', 'c'])} = {_cast_to(norm, acc_t, ydt)}",
    ]
    extra = []
    for t, what in ((outs[1], "mean[i]"), (outs[2], "rstd[i]")):
        if t:
            P = b.param(t, (pre,))
            extra.append(f"                    {P}[bx * block_m + i] = {_cast_to(what, acc_t, graph.info(t).dtype)}")
    if extra:
        body += ["            for i in loop(block_m):", f"                if bx * block_m + i < {pre}:"] + extra
    doc = (f"LayerNormalization '{node.name}': {pre} rows of {C} elements; mean and variance by T.reduce_sum "
           "over chunks of block_k, in float32.")
    params = [p for p in b.params if p.tensor not in node.outputs] + [p for p in b.params if p.tensor in node.outputs]
    src = _factory(group.name, doc, params, body, f", block_m=8, block_k={_pow2(C, 64)}, threads=128", _ROW_PRELUDE)
    return Kernel(group, group.name, src, params, _tolerance(ydt, True), f"layernorm {pre}×{C}")


#: group kind -> emitter; kinds not here (view, torch) get no TileLang kernel
EMITTERS = {
    "map": emit_map,
    "transpose": emit_map,
    "matmul": emit_matmul,
    "conv": emit_conv,
    "reduce": emit_reduce,
    "softmax": emit_softmax,
    "layernorm": emit_layernorm,
}
