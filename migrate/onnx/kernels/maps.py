"""Elementwise maps and the data movements (Transpose, Concat, Slice, Gather) that are maps reading
their input elsewhere: T.Parallel over (row, column) tiles of the output."""
from __future__ import annotations

from ..graph import Graph
from ..group import Group
from ..indexing import subscript
from .base import (Body, Kernel, Options, compute_dtype, factory, matrix_view, ordered, pow2, row_index,
                   tolerance_class)


def _computed(load: str, dtype: str) -> str:
    """``load`` in the dtype the map computes in (a cast where it differs from ``dtype``)."""
    return load if compute_dtype(dtype) == dtype else f"T.Cast(T.{compute_dtype(dtype)}, {load})"


def _head_value(b: Body, names, head, value: str, comment: str, ind: str) -> str:
    """The line binding the group's head node's output to ``value`` (the chain after it reads it)."""
    var = "v_" + names[head.outputs[0]]
    b.env[head.outputs[0]] = var
    return f"{ind}{var} = {value}  # {comment}"


# -- map and transpose: T.Parallel over (row, column) tiles of the output --------------------------

def emit_map(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    out_shape = graph.info(group.shape_tensor).shape
    R, C = matrix_view(out_shape)
    canonical = ((R, C), ["r", "c"])
    out_index = row_index(out_shape)
    b = Body(graph, names)
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
        load = _computed(subscript(b.param(head.inputs[0], x.shape), index), x.dtype)
        lines.append(_head_value(b, names, head, load, f"Transpose '{head.name}' perm={list(perm)}", ind))
        nodes = nodes[1:]
    elif group.kind == "slice":
        head = nodes[0]
        x = graph.info(head.inputs[0])
        starts, steps = slice_params(head, graph)
        index = [f"{st} + {out_index[d]}" if sp == 1 else f"{st} + {out_index[d]} * {sp}"
                 for d, (st, sp) in enumerate(zip(starts, steps))]
        index = [e[4:] if e.startswith("0 + ") else e for e in index]
        load = _computed(subscript(b.param(head.inputs[0], x.shape), index), x.dtype)
        lines.append(_head_value(b, names, head, load, f"Slice '{head.name}' starts={starts} steps={steps}", ind))
        nodes = nodes[1:]
    elif group.kind == "gather":
        head = nodes[0]
        x, ix = graph.info(head.inputs[0]), graph.info(head.inputs[1])
        axis = head.attrs.get("axis", 0) % len(x.shape)
        k = len(ix.shape)
        at = subscript(b.param(ix.name, ix.shape if ix.shape else (1,)), out_index[axis:axis + k] or ["0"])
        where = f"T.if_then_else({at} < 0, {at} + {x.shape[axis]}, {at})"   # negative indices count from the end
        index = out_index[:axis] + [where] + out_index[axis + k:]
        load = _computed(subscript(b.param(head.inputs[0], x.shape), index), x.dtype)
        lines.append(_head_value(b, names, head, load, f"Gather '{head.name}' axis={axis}", ind))
        nodes = nodes[1:]
    elif group.kind == "concat":
        head = nodes[0]
        axis = head.attrs["axis"] % len(out_shape)
        at = out_index[axis]
        pieces, offset = [], 0
        for t in head.inputs:
            x = graph.info(t)
            index = list(out_index)
            index[axis] = f"{at} - {offset}" if offset else at
            load = _computed(subscript(b.param(t, x.shape), index), x.dtype)
            offset += x.shape[axis]
            pieces.append((offset, load))
        expr = pieces[-1][1]
        for end, load in reversed(pieces[:-1]):   # the input whose slice holds the element
            expr = f"T.if_then_else({at} < {end}, {load}, {expr})"
        lines.append(_head_value(b, names, head, expr, f"Concat '{head.name}' axis={axis}", ind))
        nodes = nodes[1:]
    lines += b.chain(nodes, out_shape, out_index, canonical, ind)
    lines += b.stores(group, canonical, ind, None)
    bn = pow2(C, 128)
    bm = max(1, min(pow2(R, 1024), 1024 // bn))
    body = [
        f"        with T.Kernel(T.ceildiv({C}, block_n), T.ceildiv({R}, block_m), threads=threads) as (bx, by):",
        "            for i, j in T.Parallel(block_m, block_n):",
        "                r = by * block_m + i",
        "                c = bx * block_n + j",
        f"                if r < {R} and c < {C}:",
    ] + lines
    params = ordered(b.params, group)
    what = " → ".join(f"{n.op_type} '{n.name}'" for n in group.nodes)
    doc = (f"Elementwise map of {what}: the output viewed as {R}×{C}, in tiles of block_m×block_n "
           "elements, one T.Parallel over each tile.")
    src = factory(group.name, doc, params, body, f", block_m={bm}, block_n={bn}, threads=128")
    dtype = graph.info(group.outputs[0]).dtype if group.outputs else "float32"
    return Kernel(group, group.name, src, params, tolerance_class(dtype, False), f"map {R}×{C}")


def slice_params(node, graph) -> tuple[list[int], list[int]]:
    """Per dimension of the input, a Slice's first element and step (constant inputs, clamped as
    ONNX clamps them)."""
    x = graph.info(node.inputs[0])
    rank = len(x.shape)

    def const(k, default):
        if len(node.inputs) > k and node.inputs[k]:
            return [int(v) for v in graph.constants[node.inputs[k]].reshape(-1)]
        return default

    starts = const(1, None)   # ends need not be read: the output shape (shape inference) bounds the walk
    axes = [a % rank for a in const(3, list(range(len(starts))))]
    steps = const(4, [1] * len(axes))
    first, step = [0] * rank, [1] * rank
    for a, st, sp in zip(axes, starts, steps):
        n = x.shape[a]
        st = st + n if st < 0 else st
        first[a] = max(0, min(st, n)) if sp > 0 else max(-1, min(st, n - 1))
        step[a] = sp
    return first, step
