"""The ONNX backend node test cases (shipped in the ``onnx`` package as generators,
``onnx.backend.test.case.node``: a one-operator model, inputs and expected outputs per case)
run through ``migrate onnx`` on TileLang's CPU target.

:func:`cases` lists the cases of an operator (the ``_expanded`` variants, which spell the
operator with others, left out); :func:`run_case` converts one, runs the emitted ``Model`` on the
case's inputs and compares with its expected outputs under the tolerance class of the group that
computes each output.
"""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np

#: the operators migrate onnx claims (a TileLang form for their common attributes and types)
CLAIMED = ("Add", "Sub", "Mul", "Div", "Pow", "Neg", "Abs", "Sqrt", "Exp", "Log", "Reciprocal", "Relu",
           "Sigmoid", "Tanh", "Erf", "Gelu", "Max", "Min", "Identity", "Cast", "Where", "MatMul", "Gemm", "ReduceSum",
           "ReduceMean", "ReduceMax", "Softmax", "LayerNormalization", "Transpose", "Reshape", "Flatten",
           "Squeeze", "Unsqueeze", "Conv", "BatchNormalization", "GlobalAveragePool",
           "MaxPool", "AveragePool", "Concat", "Slice", "Gather", "Expand")


#: generator modules not named after their operator
MODULES = {"BatchNormalization": "batch_normalization"}


@functools.lru_cache(maxsize=None)
def cases(op_type: str):
    import importlib
    import sys
    import warnings

    import onnx.backend.test.case.node as node_cases

    # collect_testcases(op) imports every generator module once per process (28 s); import only
    # the operator's own module (again, if imported before) with the collector set to the operator
    name = f"onnx.backend.test.case.node.{MODULES.get(op_type, op_type.lower())}"
    node_cases._TargetOpType = op_type
    start = len(node_cases._NodeTestCases)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name in sys.modules:
            importlib.reload(sys.modules[name])
        else:
            importlib.import_module(name)
    found = node_cases._NodeTestCases[start:]
    del node_cases._NodeTestCases[start:]
    return tuple(c for c in found if "expanded" not in c.name
                 and {n.op_type for n in c.model.graph.node} == {op_type})


def case(name: str, op_type: str):
    return next(c for c in cases(op_type) if c.name == name)


#: inputs that exported models hold as constants but the node cases feed as data: (op, input index)
_SHAPE_INPUTS = {("ReduceSum", 1), ("ReduceMean", 1), ("ReduceMax", 1), ("Reshape", 1), ("Squeeze", 1),
                 ("Unsqueeze", 1), ("Slice", 1), ("Slice", 2), ("Slice", 3), ("Slice", 4)}


def _freeze_axes(model, data):
    """The case's model with its axes/shape inputs made initializers holding the case's values
    (as an exporter writes them: run-time axes are not claimed), and the data without them."""
    import copy

    from onnx import numpy_helper

    ins, outs = data
    names = [i.name for i in model.graph.input]
    frozen = {n.input[k] for n in model.graph.node for k in range(len(n.input)) if (n.op_type, k) in _SHAPE_INPUTS}
    frozen &= set(names)
    if not frozen:
        return model, data
    model = copy.deepcopy(model)
    values = dict(zip(names, _arrays(ins)))
    for name in frozen:
        model.graph.initializer.append(numpy_helper.from_array(values[name], name))
    keep = [i for i in model.graph.input if i.name not in frozen]
    del model.graph.input[:]
    model.graph.input.extend(keep)
    return model, ([values[i.name] for i in keep], outs)


def _arrays(values) -> list:
    """The case's inputs or outputs as numpy arrays (some generators store TensorProtos)."""
    from onnx import TensorProto, numpy_helper

    return [numpy_helper.to_array(v) if isinstance(v, TensorProto) else np.asarray(v) for v in values]


def run_case(c, work: Path | None = None) -> dict:
    """``{"name", "status": pass|fail|error|refused, "tilelang": bool (every node in TileLang),
    "message"}`` for one case."""
    import onnx
    import torch

    from migrate.onnx import check as check_step
    from migrate.onnx.convert import convert
    from migrate.runtime.compare import compare_arrays

    work = Path(work or tempfile.mkdtemp(prefix="c2t_onnx_"))
    path = work / f"{c.name}.onnx"
    model, data = _freeze_axes(c.model, c.data_sets[0])
    onnx.save(model, str(path))
    res = convert(path, work / "out")
    if res.module is None:
        return {"name": c.name, "status": "refused", "tilelang": False,
                "message": "; ".join(str(d) for d in res.diagnostics)}
    fallback = [n for n in res.report["nodes"] if n["fallback"]]
    tol = {t: res.kernels[g.name].tolerance if g.name in res.kernels else "fp32"
           for g in res.groups for t in g.outputs}
    try:
        mod = check_step.load_module(res.module)
        model = mod.Model(target="c", alloc=check_step.poisoned_empty)
        ins, outs = (_arrays(x) for x in data)
        graph = res.graph
        # some generators store inputs as object arrays of numbers: hold them in the input's dtype
        feed = [torch.from_numpy(np.ascontiguousarray(np.asarray(a).astype(i.dtype))) if i.dtype != "bfloat16"
                else torch.from_numpy(np.asarray(a).astype("float32")).to(torch.bfloat16)
                for a, i in zip(ins, graph.inputs)]
        got = model(*feed)
        got = got if isinstance(got, tuple) else (got,)
    except Exception as exc:  # a kernel that does not compile or run: this case's error
        return {"name": c.name, "status": "error", "tilelang": not fallback,
                "message": f"{type(exc).__name__}: {str(exc).strip()[-300:]}"}
    msgs, ok = [], True
    for o, exp, act in zip(graph.outputs, outs, got):
        cls = tol.get(o.name, "exact" if o.dtype not in ("float16", "float32", "float64") else "fp32")
        holder = "float32" if o.dtype == "bfloat16" else o.dtype   # bfloat16 compared in its float32 holder
        try:
            r = compare_arrays(np.asarray(exp).astype(holder), check_step.to_numpy(act), o.dtype, cls, name=o.name)
        except (TypeError, KeyError) as exc:   # an element type the comparison has no class for
            return {"name": c.name, "status": "error", "tilelang": not fallback, "message": f"{exc}"}
        ok &= bool(r.passed)
        msgs.append(r.message)
    return {"name": c.name, "status": "pass" if ok else "fail", "tilelang": not fallback,
            "fallback": [n["fallback"] for n in fallback], "message": " | ".join(msgs)}
