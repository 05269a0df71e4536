"""Step 5, the check: run the converted model on TileLang's CPU target (``--check cpu``) or on the
GPU (``--check cuda``) and onnxruntime (CPU) on the same inputs and compare, per group and per output, under dtype-aware tolerances
(:mod:`migrate.runtime.compare`).

Inputs are the user's ``.npz`` or seeded random values (normal floats, integers 1..5, random
booleans; never all zeros). A model with declared (symbolic) extents is run at two sizes of them
(:data:`SIZES`, each name its own value) in the same process, so that one compiled kernel per
group is shown to serve both; the user's ``.npz`` gives one size. The model's outputs are allocated holding the poison pattern, so an
element no kernel wrote fails. onnxruntime is asked for every group's outputs too (they are added
as graph outputs of a copy of the model); groups are compared in graph order, each in the loosest
tolerance class of itself and the groups it depends on, and the first that differs is named.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

from ..runtime.compare import compare_arrays
from ..runtime.inputs import poison_array
from .dims import Dim, Floor, substitute
from .graph import Graph
from .group import Group
from .kernels import Kernel

#: tolerance classes from tightest to loosest (a group inherits the loosest of its producers)
ORDER = ("exact", "fp64", "fp32", "fp32_accum", "fp16", "tf32", "bf16")


#: the values the check gives a model's declared extents (the k-th name gets the k-th value + its index)
SIZES = (2, 5)


class InputsMismatch(Exception):
    pass


def _fits(shape, want) -> bool:
    return len(shape) == len(want) and all(isinstance(w, Dim) or s == w for s, w in zip(shape, want))


def make_inputs(graph: Graph, seed: int = 0, given: dict | None = None, dims: dict | None = None) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    out = {}
    for i in graph.inputs:
        if given is not None:
            if i.name not in given:
                raise InputsMismatch(f"the inputs file has no array '{i.name}'")
            a = np.asarray(given[i.name])
            if not _fits(tuple(a.shape), i.shape) or str(a.dtype) != i.dtype:
                raise InputsMismatch(f"'{i.name}' is {a.dtype}{list(a.shape)} in the inputs file, "
                                     f"the model takes {i.dtype}{list(i.shape)}")
            out[i.name] = a
            continue
        shape = substitute(tuple(i.shape), dims or {})
        if i.dtype == "bool":
            out[i.name] = rng.random(shape) < 0.5
        elif i.dtype.startswith(("int", "uint")):
            out[i.name] = rng.integers(1, 6, size=shape).astype(i.dtype)
        else:
            out[i.name] = rng.standard_normal(shape).astype(i.dtype)
    return out


def sizes(graph: Graph, given: dict | None) -> list[dict]:
    """The values of the declared extents the check runs at."""
    if not graph.dims:
        return [{}]
    if given is not None:
        return [{d: int(np.asarray(given[graph.inputs[i].name]).shape[axis]) for d, (i, axis) in graph.dims.items()
                 if graph.inputs[i].name in given}]
    out, base = [], 0
    for v in SIZES:
        base = max(v, base + 1)
        while not _windows_fit(graph, {d: base + k for k, d in enumerate(graph.dims)}) and base < 256:
            base += 1   # an image too small for a convolution's or pool's window: a larger one
        out.append({d: base + k for k, d in enumerate(graph.dims)})
    return out


def _windows_fit(graph: Graph, values: dict) -> bool:
    """Whether every derived extent is at least 1 at ``values`` and every strided window count
    (:class:`~.dims.Floor`) counts windows that fit (its numerator not negative)."""
    values = dict(values)
    for d, e in graph.derived.items():
        if isinstance(e, Floor) and substitute(e.num, values) < 0:
            return False
        values[d] = substitute(e, values)
        if values[d] < 1:
            return False
    return True


def load_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"c2t_onnx_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def reference(model_path: str, tensors: list[str], inputs: dict) -> dict[str, np.ndarray]:
    """onnxruntime's values of ``tensors`` (graph outputs and intermediates) on ``inputs``."""
    import onnx
    import onnxruntime as ort

    model = onnx.shape_inference.infer_shapes(onnx.load(model_path))
    known = {v.name: v for v in list(model.graph.value_info) + list(model.graph.output)}
    present = {o.name for o in model.graph.output}
    for t in tensors:
        if t not in present and t in known:
            model.graph.output.append(known[t])
            present.add(t)
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, inputs)))


def to_numpy(t) -> np.ndarray:
    """A torch tensor's values on the host (bfloat16 in its float32 holder, as the comparison wants)."""
    import torch

    t = t.detach().cpu()
    return (t.float() if t.dtype == torch.bfloat16 else t).numpy()


def poisoned_empty(shape, dtype):
    import torch

    name = str(dtype).replace("torch.", "")
    n = int(np.prod(shape)) if shape else 1
    if name == "bool":
        return torch.zeros(shape, dtype=torch.bool)
    return torch.from_numpy(poison_array(name, n).reshape(shape).copy())


def run(graph: Graph, groups: list[Group], kernels: dict[str, Kernel], module_path: Path,
        given: dict | None = None, seed: int = 0, target: str = "c") -> dict:
    """The check's record (report.json ``check``): the model run on TileLang's C target
    (``target="c"``) or on the GPU (``"cuda"``, its outputs poisoned there too)."""
    mod = load_module(module_path)
    alloc = poisoned_empty if target == "c" else (lambda shape, dtype: poisoned_empty(shape, dtype).to("cuda"))
    model = mod.Model(target=target, alloc=alloc)
    runs = [_compare(graph, groups, kernels, model, given, seed, dims) for dims in sizes(graph, given)]
    first_bad = next((r["first_failing_group"] for r in runs if r["first_failing_group"]), None)
    out = dict(runs[0])
    out.update(passed=first_bad is None, first_failing_group=first_bad)
    if graph.dims:   # every size's records, each naming its size
        out["sizes"] = [{"dims": r["dims"], "passed": r["passed"], "compiled": r["compiled"]} for r in runs]
        for key in ("outputs", "groups"):
            out[key] = [{**rec, "dims": r["dims"]} for r in runs for rec in r[key]]
    return out


def _compare(graph, groups, kernels, model, given, seed, dims) -> dict:
    import torch

    inputs = make_inputs(graph, seed, given, dims)
    wanted = [t for g in groups for t in g.outputs]
    expected = reference(graph.path, wanted, inputs)
    trace: dict = {}
    model(*[torch.from_numpy(np.ascontiguousarray(inputs[i.name])).to(model.device) for i in graph.inputs],
          trace=trace)
    tol_of: dict[str, str] = {}
    records, first_bad = [], None
    for g in groups:
        k = kernels.get(g.name)
        own = k.tolerance if k is not None else "fp32"
        ups = [tol_of[t] for t in g.inputs if t in tol_of]
        for t in g.outputs:
            dtype = graph.info(t).dtype
            cls = "exact" if dtype not in ("float16", "float32", "float64", "bfloat16") else \
                max([own] + ups, key=ORDER.index)
            if dtype == "float64" and cls == "fp32":
                cls = "fp64"
            tol_of[t] = cls
            if t not in expected:
                continue
            got = trace.get(g.name, {}).get(t)
            act = to_numpy(got) if got is not None else np.zeros(0)
            r = compare_arrays(expected[t], act, dtype, cls, name=t)
            records.append({"group": g.name, "tensor": t, "graph_output": t in {o.name for o in graph.outputs},
                            "passed": bool(r.passed), "tolerance": cls, "max_abs_err": float(r.max_abs_err),
                            "max_rel_err": float(r.max_rel_err), "message": r.message})
            if not r.passed and first_bad is None:
                first_bad = {"group": g.name, "tensor": t, "message": r.message,
                             "nodes": [n.name for n in g.nodes]}
                if dims:
                    first_bad["dims"] = dict(dims)
    outputs = [r for r in records if r["graph_output"]]
    return {"target": model.target, "reference": "onnxruntime", "seed": None if given is not None else seed,
            "passed": first_bad is None, "first_failing_group": first_bad,
            "outputs": outputs, "groups": records, "dims": dict(dims), "compiled": len(model.compiled)}
