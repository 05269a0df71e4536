"""Step 1, import: read an ONNX model into a :class:`Graph` of nodes with static shapes.

The model is loaded with ``onnx``, checked with ``onnx.checker`` and its shapes inferred with
``onnx.shape_inference`` (with data propagation, so that a ``Reshape`` whose shape is computed
from constants gets its output shape). ``Constant`` nodes become constants like initializers.

Dimensions the model declares by name on its inputs (``dim_param``: ``batch``, ``seq``) stay
symbolic (:class:`~.dims.Dim`); a dimension that shape inference leaves unnamed or names itself
(``unk__0``) is worked out from the declared ones where a view (``Reshape`` with ``0``/``-1``,
``Flatten``, ``Squeeze``, ``Unsqueeze``) makes it, and substituted everywhere. A tensor whose shape
or element type stays unknown is refused with ``M5002``.

A node's span is the model file and the node's position in the graph (``model.onnx:3:1`` is the
third node), the place a diagnostic names.
"""
from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..diagnostics import DiagnosticBag
from ..ir.span import Span
from . import shape_values
from .dims import Dim, Floor, NeedsValue, symbols, window_count
from .names import RESERVED

#: ONNX element types this slice handles -> the dtype name used by numpy, torch and TileLang
ELEM_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
               10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple            # ints, and Dims for the extents the model declares by name
    dtype: str

    @property
    def numel(self):
        n = 1
        for d in self.shape:
            n = d * n
        return n


@dataclass(frozen=True)
class Node:
    index: int                     # position in the graph (0-based)
    name: str                      # the node's name, or OpType_<index> when it has none
    op_type: str
    inputs: tuple[str, ...]        # "" for an omitted optional input
    outputs: tuple[str, ...]
    attrs: dict
    span: Span


@dataclass
class Graph:
    name: str
    path: str
    opset: int
    nodes: list[Node]
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    constants: dict[str, np.ndarray]
    infos: dict[str, TensorInfo] = field(default_factory=dict)
    #: declared dimension name -> (input index, axis) where the Model reads its value
    dims: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: derived dimension name -> its expression of declared ones (a sum, ``seq - 1``; a strided
    #: window count, ``(H - 1) // 2 + 1``): kernels take it as an extent of its own, so that every
    #: extent is a product of names and numbers
    derived: dict[str, Dim | Floor] = field(default_factory=dict)
    #: tensors the graph computes from shapes whose value holds a declared name (:mod:`.shape_values`):
    #: per tensor its elements (ints and Dims); those of ints only are in ``constants``
    values: dict[str, tuple] = field(default_factory=dict)
    #: the nodes that computed shape values nothing needs at run time (no kernel; not in ``nodes``)
    shape_nodes: list[Node] = field(default_factory=list)

    def info(self, name: str) -> TensorInfo:
        return self.infos[name]

    def consumers(self, tensor: str) -> list[Node]:
        return [n for n in self.nodes if tensor in n.inputs]

    def producer(self, tensor: str) -> Node | None:
        return next((n for n in self.nodes if tensor in n.outputs), None)


class ImportFailed(Exception):
    """The model cannot be converted at all (the bag holds the reason)."""


def _attrs(node) -> dict:
    import onnx

    out = {}
    for a in node.attribute:
        v = onnx.helper.get_attribute_value(a)
        if isinstance(v, bytes):
            v = v.decode()
        elif isinstance(v, onnx.TensorProto):
            v = onnx.numpy_helper.to_array(v)
        elif isinstance(v, list):
            v = [x.decode() if isinstance(x, bytes) else x for x in v]
        out[a.name] = v
    return out


#: the prefix of a placeholder for a dimension shape inference did not name after a declared one
UNKNOWN = "?"


def _info(vi, span: Span, bag: DiagnosticBag, declared: dict[str, str]) -> TensorInfo | None:
    t = vi.type.tensor_type
    dtype = ELEM_DTYPES.get(t.elem_type)
    if not t.HasField("shape"):
        bag.add("M5002", span, f"tensor '{vi.name}' has no inferred shape")
        return None
    dims = []
    for k, d in enumerate(t.shape.dim):
        if d.HasField("dim_value"):
            dims.append(int(d.dim_value))
        elif d.dim_param in declared:
            dims.append(Dim.named(declared[d.dim_param]))
        else:   # unnamed, or a name of shape inference's own: worked out from a view, or refused
            dims.append(Dim.named(f"{UNKNOWN}{d.dim_param or vi.name + ':' + str(k)}"))
    if dtype is None:  # float8, 4- and 2-bit types, strings: named as ONNX names them, and not claimed
        import onnx

        try:
            dtype = onnx.TensorProto.DataType.Name(t.elem_type).lower()
        except ValueError:
            dtype = f"onnx-type-{t.elem_type}"
    return TensorInfo(vi.name, tuple(dims), dtype)


def load(path: str | Path, bag: DiagnosticBag) -> Graph:
    """The graph of the model at ``path``; raises :class:`ImportFailed` (with ``M5001``/``M5002``
    in ``bag``) when it cannot be read, checked or given known shapes."""
    import onnx
    from onnx import numpy_helper

    path = Path(path)
    whole = Span.point(str(path))
    try:
        model = onnx.load(str(path))
        onnx.checker.check_model(model)
        model = onnx.shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
    except Exception as exc:  # onnx raises many types (DecodeError, ValidationError, InferenceError)
        bag.add("M5001", whole, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0][:300]}")
        raise ImportFailed(str(exc)) from None
    g = model.graph
    opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), 1)
    constants = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    nodes, infos = [], {}
    for i, n in enumerate(g.node):
        span = Span(str(path), i + 1, 1, i + 1, 1)
        attrs = _attrs(n)
        if n.op_type == "Constant" and n.domain in ("", "ai.onnx") and "value" in attrs:
            constants[n.output[0]] = np.asarray(attrs["value"])
            continue
        nodes.append(Node(i, n.name or f"{n.op_type}_{i}", n.op_type, tuple(n.input), tuple(n.output), attrs, span))
    declared, where = {}, {}
    real_inputs = [vi for vi in g.input if vi.name not in constants]
    taken = {re.sub(r"\W", "_", t) for n in nodes for t in n.inputs + n.outputs} | {
        re.sub(r"\W", "_", vi.name) for vi in g.input}
    for i, vi in enumerate(real_inputs):
        for axis, d in enumerate(vi.type.tensor_type.shape.dim):
            if d.dim_param and not d.HasField("dim_value") and not d.dim_param.startswith("unk__") \
                    and d.dim_param not in declared:
                declared[d.dim_param] = _dim_name(d.dim_param, taken)
                taken.add(declared[d.dim_param])
                where[declared[d.dim_param]] = (i, axis)
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.name in constants or vi.name in infos:
            continue
        info = _info(vi, whole, bag, declared)
        if info is not None:
            infos[vi.name] = info
    for name, arr in constants.items():
        infos[name] = TensorInfo(name, tuple(arr.shape), str(arr.dtype))
    if bag.errors():
        raise ImportFailed("shapes")
    for n in nodes:
        for t in n.outputs:
            if t and t not in infos:
                bag.add("M5002", n.span, f"shape inference gave no shape for '{t}', output of node '{n.name}'")
    if bag.errors():
        raise ImportFailed("shapes")
    values: dict[str, tuple] = {}
    derived = _name_unknowns(nodes, infos, constants, taken, values)
    for name, info in infos.items():
        unknown = sorted(s for s in symbols(info.shape) if s.startswith(UNKNOWN))
        if unknown:
            bag.add("M5002", whole, f"tensor '{name}' has a dimension the model does not declare on its inputs "
                                    f"and no view determines ({unknown[0][1:]}): its shape {list(info.shape)}")
    if bag.errors():
        raise ImportFailed("shapes")
    inputs = [infos[vi.name] for vi in real_inputs]
    outputs = [infos[vi.name] for vi in g.output]
    symbolic = {t: v for t, v in values.items() if t not in constants}
    drop = shape_values.unused(nodes, set(values), {o.name for o in outputs}, set(symbolic))
    return Graph(g.name or path.stem, str(path), opset, [n for n in nodes if n.index not in drop], inputs, outputs,
                 constants, infos, dict(sorted(where.items())), derived, symbolic,
                 [n for n in nodes if n.index in drop])


def _dim_name(param: str, taken: set[str]) -> str:
    """The Python identifier of a declared dimension (``batch``; ``dim_x`` where ``x`` names a tensor
    or a name the emitted code uses)."""
    name = re.sub(r"\W", "_", param)
    if not name or name[0].isdigit() or keyword.iskeyword(name) or name in RESERVED or name in taken \
            or name.startswith(("v_", "make_", "t_")):
        name = "dim_" + name
    while name in taken:
        name += "_"
    return name


def view_shape(node: Node, x_shape: tuple, constants: dict, values: dict | None = None):
    """The output shape of a view node computed from its input's (declared names kept), or None.
    A Reshape's target is a constant or a shape value (``values``)."""
    rank = len(x_shape)
    values = values or {}
    if node.op_type == "Reshape" and len(node.inputs) > 1 and (node.inputs[1] in constants or node.inputs[1] in values):
        target = [int(v) for v in constants[node.inputs[1]].reshape(-1)] if node.inputs[1] in constants else \
            list(values[node.inputs[1]])
        allow_zero = node.attrs.get("allowzero", 0)
        out = [x_shape[k] if v == 0 and not allow_zero else v for k, v in enumerate(target)]
        if -1 in out:
            known = 1
            for v in out:
                if v != -1:
                    known = v * known
            total = 1
            for d in x_shape:
                total = d * total
            out[out.index(-1)] = total // known
        return tuple(out)
    if node.op_type == "Flatten":
        axis = node.attrs.get("axis", 1) % (rank + 1) if rank else 0
        a, b = 1, 1
        for d in x_shape[:axis]:
            a = d * a
        for d in x_shape[axis:]:
            b = d * b
        return (a, b)
    return None


def infer_shape(node: Node, shapes: list, constants: dict, values: dict | None = None):
    """The output shape of ``node`` from its inputs' ``shapes`` (declared names kept) for the ops whose
    output extents a declared one can reach: views, elementwise maps, rows, MatMul, Transpose, and
    the ops whose shape is an input's value (``values``: shape values and constants); else None."""
    from .indexing import broadcast_shapes
    from .ops import OPS

    op = node.op_type
    rule = OPS.get(op)
    values = values or {}
    if not shapes or shapes[0] is None:
        return None
    if op in ("Reshape", "Flatten"):
        return view_shape(node, shapes[0], constants, values)
    if op in SHAPED_BY:
        return SHAPED_BY[op](node, shapes, [_value(t, constants, values) for t in node.inputs])
    if op in ("BatchNormalization", "Softmax", "LayerNormalization", "Cast", "Identity") or \
            (rule is not None and rule.kind == "map" and len(shapes) == 1):
        return shapes[0]
    if rule is not None and rule.kind == "map":
        return broadcast_shapes(*[s for s in shapes if s is not None])
    if op == "Transpose":
        perm = node.attrs.get("perm", list(reversed(range(len(shapes[0])))))
        return tuple(shapes[0][p] for p in perm)
    if op == "Slice":
        return _slice_shape(node, shapes[0], constants)
    if op == "MatMul" and len(shapes) == 2 and shapes[1] is not None and min(len(shapes[0]), len(shapes[1])) >= 2:
        a, b = shapes
        return broadcast_shapes(a[:-2], b[:-2]) + (a[-2], b[-1])
    if op == "Concat" and all(s is not None for s in shapes):
        axis = node.attrs.get("axis", 0) % len(shapes[0])
        out = list(shapes[0])
        out[axis] = sum((s[axis] for s in shapes[1:]), shapes[0][axis])
        return tuple(out)
    if op in ("Conv", "MaxPool", "AveragePool") and len(shapes[0]) >= 3:
        return _window_shape(node, shapes)
    return None


def _value(tensor: str, constants: dict, values: dict):
    """An integer input's elements (a shape value, or a small constant), or None."""
    if tensor in values:
        return values[tensor]
    c = constants.get(tensor)
    if c is None or c.dtype.kind not in "iu" or c.size > shape_values.MAX_ELEMENTS:
        return None
    return tuple(int(v) for v in c.reshape(-1))


def _range_length(start, limit, delta):
    """How many elements ``Range(start, limit, delta)`` makes: ``ceil((limit - start) / delta)``,
    along a declared extent only with ``delta`` 1."""
    if isinstance(limit - start, Dim):
        if delta != 1:
            raise NeedsValue(f"a Range from {start} to {limit} by {delta}")
        return limit - start
    return max(0, -(-(limit - start) // delta))


#: op type -> its output shape from its inputs' shapes and values (each a tuple or None), for the
#: ops whose output shape is the value of an input (a shape the graph computes)
SHAPED_BY = {
    "Expand": lambda n, s, v: None if v[1] is None else _broadcast(s[0], v[1]),
    "ConstantOfShape": lambda n, s, v: v[0],
    "Tile": lambda n, s, v: None if v[1] is None or len(v[1]) != len(s[0]) else
    tuple(d * r for d, r in zip(s[0], v[1])),
    "Range": lambda n, s, v: None if any(x is None for x in v[:3]) else (_range_length(v[0][0], v[1][0], v[2][0]),),
}


def _broadcast(*shapes):
    from .indexing import broadcast_shapes

    return broadcast_shapes(*shapes)


def _window_shape(node: Node, shapes: list):
    """A Conv's or pool's output shape (N, C or M, spatial extents...) with declared spatial
    extents: per axis the windows that fit (``H + 2 - 3 + 1``; ``(H - 1) // 2 + 1`` with a stride,
    a :class:`~.dims.Floor`), auto_pad SAME as ``ceil(H / stride)``; None where the count needs a
    rule not written here (a ceil_mode count that depends on the value, a weight of unknown shape)."""
    x = shapes[0]
    rank = len(x) - 2
    ceil = bool(node.attrs.get("ceil_mode", 0))
    if node.op_type == "Conv":
        if len(shapes) < 2 or shapes[1] is None or len(shapes[1]) != len(x):
            return None
        kernel, channels = list(shapes[1][2:]), shapes[1][0]
    else:
        kernel, channels = list(node.attrs.get("kernel_shape", [])), x[1]
    if len(kernel) != rank or any(isinstance(k, Dim) for k in kernel):
        return None
    strides = node.attrs.get("strides", [1] * rank)
    dilations = node.attrs.get("dilations", [1] * rank)
    pads = node.attrs.get("pads", [0] * (2 * rank))
    auto = node.attrs.get("auto_pad", "NOTSET")
    out = [x[0], channels]
    for d in range(rank):
        n, s = x[2 + d], strides[d]
        if auto in ("SAME_UPPER", "SAME_LOWER"):   # ceil(n / s) places, whatever the window
            out.append(_ceil_div(n, s))
            continue
        size = (kernel[d] - 1) * dilations[d] + 1
        begin, end = (0, 0) if auto == "VALID" else (pads[d], pads[rank + d])
        try:
            out.append(window_count(n, size, s, begin, end, ceil))
        except NeedsValue:
            return None
    return tuple(out)


def _ceil_div(n, s: int):
    if not isinstance(n, Dim):
        return -(-n // s)
    try:
        return (n + s - 1) // s
    except NeedsValue:
        return Floor(n + s - 1, s)


def _slice_shape(node: Node, x_shape: tuple, constants: dict):
    """A Slice's output shape with constant starts/ends/axes/steps; along a declared extent ``n`` only
    with step 1, a start that counts from either end and an end that is the end or counts from it
    (``x[:, 1:]`` is ``n - 1`` long: a model whose extent is at least the start, as it must be)."""
    def const(k):
        if len(node.inputs) > k and node.inputs[k]:
            if node.inputs[k] not in constants:
                raise NeedsValue("a Slice bound computed at run time")
            return [int(v) for v in constants[node.inputs[k]].reshape(-1)]
        return None

    starts, ends = const(1), const(2)
    if starts is None or ends is None:
        return None
    rank = len(x_shape)
    axes = [a % rank for a in (const(3) or range(len(starts)))]
    steps = const(4) or [1] * len(axes)
    out = list(x_shape)
    for a, st, en, sp in zip(axes, starts, ends, steps):
        n = x_shape[a]
        if not isinstance(n, Dim):
            out[a] = len(range(*slice(st, en, sp).indices(n)))
            continue
        if sp != 1 or (0 <= en < 2 ** 30):
            raise NeedsValue(f"a Slice of {n} ending at {en} with step {sp}")
        begin = st if st >= 0 else n + st
        end = n if en >= 2 ** 30 else n + en
        out[a] = end - begin
    return tuple(out)


def _name_unknowns(nodes: list[Node], infos: dict, constants: dict, taken: set[str], values: dict) -> dict[str, Dim]:
    """Replace the placeholders of dimensions shape inference did not name (or named itself) by what
    the nodes that make them compute from the declared ones, in every tensor's shape. A sum
    (``seq - 1``) becomes a derived name (``seq_minus_1``); returns those. On the way, the tensors
    computed from shapes get their values (:mod:`.shape_values`: into ``values``, and those of ints
    only into ``constants`` too)."""
    found: dict[str, object] = {}
    derived: dict[str, Dim | Floor] = {}

    def named(b):
        if not isinstance(b, (Dim, Floor)) or isinstance(b, Dim) and len(b.terms) == 1:
            return b
        for k, v in derived.items():
            if v == b:
                return Dim.named(k)
        if isinstance(b, Floor):   # a strided window count: the extent it divides, numbered (H_1, H_2)
            base = min(b.names, key=len) if b.names else "dim"
            base = re.sub(r"_\d+$", "", base) if base in derived else base
            n = 1
            while _dim_name(f"{base}_{n}", taken) != f"{base}_{n}" or f"{base}_{n}" in derived:
                n += 1
            text = f"{base}_{n}"
        else:
            text = str(b).strip("()").replace(" - ", "_minus_").replace(" + ", "_plus_").replace(" * ", "_x_")
        name = _dim_name(text, taken)
        taken.add(name)
        derived[name] = b
        return Dim.named(name)

    def placeholder(d):
        if isinstance(d, Dim) and len(d.names) == 1 and str(d) in d.names and str(d).startswith(UNKNOWN):
            return str(d)
        return None

    def sub(shape):
        return tuple(found.get(placeholder(d), d) if placeholder(d) else d for d in shape)

    def known(tensor):   # the shape so far, None while a placeholder is left in it
        shape = sub(infos[tensor].shape) if tensor in infos else None
        return None if shape is None or any(placeholder(d) for d in shape) else shape

    ctx = shape_values.Context(known, lambda t: infos[t].dtype if t in infos else None, constants, values)
    for n in nodes:
        shape_values.evaluate(n, ctx)
        outs = [t for t in n.outputs if t in infos]
        if not outs or not any(placeholder(d) for d in infos[outs[0]].shape):
            continue
        shapes = [sub(infos[t].shape) if t in infos else None for t in n.inputs if t]
        try:
            shape = infer_shape(n, shapes, constants, values)
        except NeedsValue:
            shape = None
        inferred = infos[outs[0]].shape
        if shape is None or len(shape) != len(inferred):
            continue
        for a, b in zip(inferred, shape):
            if placeholder(a) and not placeholder(b):
                found.setdefault(placeholder(a), named(b))
    if found:
        for name, info in list(infos.items()):
            infos[name] = TensorInfo(info.name, sub(info.shape), info.dtype)
    return derived
