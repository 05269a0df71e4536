"""Step 6, the report: ``OUT/report.json`` of an ONNX conversion, in the style of ``convert``'s
(:mod:`migrate.reports.core`): tool, version, output, summary, then the model's ``groups`` (one
kernel each) and ``nodes`` (per ONNX node: name, op_type, the kernel it went into, ``fallback``:
false or the reason; kernel ``shape`` for a node that computed a shape at conversion time and
needs no kernel, :mod:`.shape_values`), the diagnostics and the check's record.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np

from .. import __version__
from .graph import Graph
from .group import Group
from .kernels import Kernel


_ITEMSIZE = {"bool": 1, "bfloat16": 2}


def _tensor(info) -> dict:
    return {"name": info.name, "shape": [d if isinstance(d, int) else str(d) for d in info.shape], "dtype": info.dtype}


def _nbytes(info):
    size = _ITEMSIZE.get(info.dtype) or np.dtype(info.dtype).itemsize
    return info.numel * size


def _work(g: Group, graph: Graph | None) -> dict:
    """The least bytes a group moves (each input read once, each output written once) and its
    multiply-add FLOPs (GEMM, convolution and attention groups), as expressions of the declared dimensions:
    ``migrate bench --onnx`` turns its times into GB/s and TFLOP/s with them."""
    if graph is None or g.kind in ("view", "torch"):
        return {}
    total = 0
    for t in dict.fromkeys([t for t in g.inputs + g.outputs if t]):
        total = total + _nbytes(graph.info(t))
    head = g.nodes[0]
    flops = 0
    out = graph.info(head.outputs[0])
    if g.kind == "attention":    # the two products: scores (Sq × Sk × D), context (Sq × Dv × Sk)
        pat = g.pattern
        scores, ctx = graph.info(pat.scores.outputs[0]), graph.info(pat.context.outputs[0])
        flops = 2 * scores.numel * graph.info(pat.scores.inputs[0]).shape[-1] + 2 * ctx.numel * scores.shape[-1]
    elif head.op_type in ("MatMul", "Gemm"):
        a = graph.info(head.inputs[0]).shape
        k = a[-1] if not (head.op_type == "Gemm" and head.attrs.get("transA", 0)) else a[-2]
        flops = 2 * out.numel * k
    elif head.op_type == "Conv":
        w = graph.info(head.inputs[1]).shape
        flops = 2 * out.numel * w[1] * w[2] * w[3]
    return {"bytes": str(total), **({"flops": str(flops)} if flops else {})}


def report_dict(graph: Graph | None, groups: list[Group], kernels: dict[str, Kernel], out_dir: Path,
                module: str | None, diagnostics, check: dict | None, model_path: str, special=None) -> dict:
    special = special or {}
    nodes = []
    shape_nodes = list(graph.shape_nodes) if graph is not None else []

    def shape_row(n):
        return {"name": n.name, "op_type": n.op_type, "kernel": "shape", "fallback": False}

    for g in groups:
        while shape_nodes and shape_nodes[0].index < g.nodes[0].index:   # in graph order, among the groups
            nodes.append(shape_row(shape_nodes.pop(0)))
        for n in g.nodes:
            kernel = g.name if g.name in kernels or g.name in special else ("view" if g.kind == "view" else None)
            nodes.append({"name": n.name, "op_type": n.op_type, "kernel": kernel,
                          "fallback": g.fallback if g.kind == "torch" else False})
    nodes += [shape_row(n) for n in shape_nodes]
    diags = [d.to_json() for d in diagnostics]
    fallback = [n for n in nodes if n["fallback"]]
    return {
        "tool": "cuda2tile",
        "version": __version__,
        "command": "onnx",
        "model": model_path,
        "output": str(out_dir),
        "module": module,
        "summary": {
            "nodes": len(nodes),
            "kernels": len(kernels) + len(special),
            "specialised": len(special),
            "nodes_in_tilelang": sum(1 for n in nodes if n["kernel"] and n["kernel"] not in ("view", "shape")),
            "views": sum(1 for n in nodes if n["kernel"] == "view"),
            **({"shape_nodes": sum(1 for n in nodes if n["kernel"] == "shape")} if graph is not None
               and graph.shape_nodes else {}),
            "fallback": len(fallback),
            "fallback_ops": dict(sorted(Counter(n["op_type"] for n in fallback).items())),
            "diagnostics": dict(sorted(Counter(d["code"] for d in diags).items())),
            **({"check": "pass" if check.get("passed") else "fail"} if check else {}),
        },
        "dims": {d: {"input": graph.inputs[i].name, "axis": axis} for d, (i, axis) in graph.dims.items()}
        if graph is not None else {},
        "derived": {d: str(e) for d, e in graph.derived.items()} if graph is not None else {},
        "inputs": [_tensor(i) for i in graph.inputs] if graph is not None else [],
        "outputs": [_tensor(o) for o in graph.outputs] if graph is not None else [],
        "groups": [{"kernel": g.name, "kind": g.kind, "nodes": [n.name for n in g.nodes],
                    "lines": [n.span.line for n in g.nodes],
                    "inputs": g.inputs, "outputs": g.outputs,
                    **({"tolerance": kernels[g.name].tolerance, "shape": kernels[g.name].summary}
                       if g.name in kernels else {}),
                    **({"specialised": special[g.name]} if g.name in special else {}),
                    **_work(g, graph)} for g in groups],
        "nodes": nodes,
        "diagnostics": diags,
        "check": check,
    }
