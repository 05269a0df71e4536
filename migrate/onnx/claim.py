"""Step 2a: decide per node whether it gets a TileLang form, and if not, why (the fallback reason)."""
from __future__ import annotations

from .graph import Graph, Node
from .indexing import prod
from .ops import NUMERIC, OPS


def _axes(node: Node, graph: Graph, rank: int):
    """A reduction's axes (attribute, or constant second input from opset 18), normalised."""
    if "axes" in node.attrs:
        axes = list(node.attrs["axes"])
    elif len(node.inputs) > 1 and node.inputs[1]:
        if node.inputs[1] not in graph.constants:
            return None
        axes = [int(a) for a in graph.constants[node.inputs[1]].reshape(-1)]
    else:
        axes = []
    return sorted({a % rank for a in axes}) if rank else []


def reduce_axes(node: Node, graph: Graph):
    rank = len(graph.info(node.inputs[0]).shape)
    if node.op_type == "GlobalAveragePool":
        return list(range(2, rank))
    axes = _axes(node, graph, rank)
    if axes is None:
        return None
    if axes == [] and not node.attrs.get("noop_with_empty_axes", 0):
        axes = list(range(rank))
    return axes


def why_not(node: Node, graph: Graph) -> str | None:
    """None when ``node`` gets a TileLang form; else the reason it falls back to torch."""
    rule = OPS.get(node.op_type)
    if rule is None:
        return f"no TileLang form for {node.op_type} yet"
    infos = [graph.info(t) for t in node.inputs if t]
    outs = [graph.info(t) for t in node.outputs if t]
    if rule.kind == "view":
        return None
    flags = [i for k, i in enumerate(infos) if k in rule.bool_inputs]
    if any(i.dtype != "bool" for i in flags):
        return f"{node.op_type} with a non-boolean condition"
    values = [i for k, i in enumerate(infos) if k not in rule.bool_inputs]
    dtypes = rule.dtypes if rule.dtypes is not None else NUMERIC
    for i in outs + values[:1]:
        if i.dtype not in dtypes:
            return f"{node.op_type} on {i.dtype} has no TileLang form in this slice"
    for i in values + outs:
        if i.dtype not in NUMERIC:
            return f"{node.op_type} with a {i.dtype} tensor has no TileLang form in this slice"
    data = [i for i in infos if i.name not in graph.constants]   # an empty constant (no axes) is no data
    if any(i.numel == 0 for i in data + outs):
        return "an empty tensor: nothing to compute"
    if rule.kind == "matmul":
        a, b = infos[0], infos[1]
        if a.dtype != b.dtype:
            return "MatMul operands of different types"
    if rule.kind == "conv":
        if len(infos[0].shape) != 4:
            return "Conv of other than 2-D images (NCHW) is not tiled in this slice"
        if len(infos) > 2 and infos[2].shape != (infos[1].shape[0],):
            return "Conv with a bias of unusual shape"
    if rule.kind == "pool":
        if len(infos[0].shape) not in (3, 4, 5):
            return f"{node.op_type} of other than 1-, 2- or 3-D images (NCW, NCHW, NCDHW) is not tiled in this slice"
        if len([o for o in node.outputs if o]) > 1:
            return "MaxPool's Indices output"
        if (node.attrs.get("ceil_mode", 0) and node.attrs.get("count_include_pad", 0)
                and node.attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID")):
            return f"{node.op_type} with ceil_mode, count_include_pad and auto_pad {node.attrs['auto_pad']}"
    if rule.kind == "slice" and any(t not in graph.constants for t in node.inputs[1:] if t):
        return "Slice with starts, ends, axes or steps computed at run time"
    if rule.kind == "gather" and graph.info(node.inputs[1]).dtype not in ("int32", "int64"):
        return "Gather with indices that are not int32/int64"
    if rule.kind == "reduce":
        if len(node.inputs) > 1 and node.inputs[1] and node.inputs[1] not in graph.constants:
            return "reduction axes computed at run time"
    if rule.kind == "layernorm":
        x = infos[0]
        axis = node.attrs.get("axis", -1) % len(x.shape)
        inner = x.shape[axis:]
        for t in node.inputs[1:]:
            if t and graph.info(t).numel not in (1, prod(inner)):
                return "LayerNormalization with a scale or bias broadcast over part of the normalised axes"
        if node.attrs.get("stash_type", 1) != 1:
            return "LayerNormalization with stash_type other than float32"
    if node.op_type == "BatchNormalization":
        if node.attrs.get("training_mode", 0) or len([o for o in node.outputs if o]) > 1:
            return "BatchNormalization in training mode"
        if len(infos[0].shape) < 2 or any(i.numel != infos[0].shape[1] for i in infos[1:]):
            return "BatchNormalization with statistics not one per channel"
    if rule.kind == "map" and node.op_type == "Cast" and node.attrs.get("saturate", 1) != 1:
        return "Cast with saturate=0"
    return None
