"""Step 1, import: read an ONNX model into a :class:`Graph` of nodes with static shapes.

The model is loaded with ``onnx``, checked with ``onnx.checker`` and its shapes inferred with
``onnx.shape_inference`` (with data propagation, so that a ``Reshape`` whose shape is computed
from constants gets its output shape). ``Constant`` nodes become constants like initializers.
A tensor whose shape or element type stays unknown, or has a symbolic dimension, is refused with
``M5002``: this slice converts static shapes only.

A node's span is the model file and the node's position in the graph (``model.onnx:3:1`` is the
third node), the place a diagnostic names.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..diagnostics import DiagnosticBag
from ..ir.span import Span

#: ONNX element types this slice handles -> the dtype name used by numpy, torch and TileLang
ELEM_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
               10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 16: "bfloat16"}


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]
    dtype: str

    @property
    def numel(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
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

    def info(self, name: str) -> TensorInfo:
        return self.infos[name]

    def consumers(self, tensor: str) -> list[Node]:
        return [n for n in self.nodes if tensor in n.inputs]


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


def _info(vi, span: Span, bag: DiagnosticBag) -> TensorInfo | None:
    t = vi.type.tensor_type
    dtype = ELEM_DTYPES.get(t.elem_type)
    if not t.HasField("shape"):
        bag.add("M5002", span, f"tensor '{vi.name}' has no inferred shape")
        return None
    dims = []
    for d in t.shape.dim:
        if not d.HasField("dim_value"):
            bag.add("M5002", span, f"tensor '{vi.name}' has a symbolic dimension "
                                   f"'{d.dim_param or '?'}': this slice converts static shapes only")
            return None
        dims.append(int(d.dim_value))
    if dtype is None:  # float8, 4- and 2-bit types, strings: named as ONNX names them, and not claimed
        import onnx

        try:
            dtype = onnx.TensorProto.DataType.Name(t.elem_type).lower()
        except ValueError:
            dtype = f"onnx-type-{t.elem_type}"
    return TensorInfo(vi.name, tuple(dims), dtype)


def load(path: str | Path, bag: DiagnosticBag) -> Graph:
    """The graph of the model at ``path``; raises :class:`ImportFailed` (with ``M5001``/``M5002``
    in ``bag``) when it cannot be read, checked or given static shapes."""
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
    for vi in list(g.input) + list(g.value_info) + list(g.output):
        if vi.name in constants or vi.name in infos:
            continue
        info = _info(vi, whole, bag)
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
    inputs = [infos[vi.name] for vi in g.input if vi.name not in constants]
    outputs = [infos[vi.name] for vi in g.output]
    return Graph(g.name or path.stem, str(path), opset, nodes, inputs, outputs, constants, infos)
