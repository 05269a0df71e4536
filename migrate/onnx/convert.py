"""The ``migrate onnx`` driver: import → group → kernels → module → (check) → report.

Each step is its own module of this package; this one only runs them in order and collects the
diagnostics. Bad input ends in a coded diagnostic (``M5xxx``), never a traceback.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import DiagnosticBag
from ..ir.span import Span
from . import check as check_step
from . import specialise
from .dims import NeedsValue, symbols
from .graph import Graph, ImportFailed, load
from .group import Group, group
from .kernels import EMITTERS, Kernel, Options, py_names
from .module import NoFallback, write
from .report import report_dict


@dataclass
class Result:
    graph: Graph | None
    groups: list[Group] = field(default_factory=list)
    kernels: dict[str, Kernel] = field(default_factory=dict)
    #: group name -> the declared dimensions it is specialised on (compiled per value at run time)
    special: dict[str, list[str]] = field(default_factory=dict)
    module: Path | None = None
    check: dict | None = None
    diagnostics: DiagnosticBag = field(default_factory=DiagnosticBag)
    report: dict | None = None

    @property
    def ok(self) -> bool:
        return not self.diagnostics.errors()


def module_stem(model_path: Path) -> str:
    stem = re.sub(r"\W", "_", model_path.stem) or "model"
    return stem if not stem[0].isdigit() else "m_" + stem


def convert(model_path: str | Path, out_dir: str | Path, *, allow_tf32: bool = False, check: str | None = None,
            inputs: dict | None = None) -> Result:
    model_path, out_dir = Path(model_path), Path(out_dir)
    res = Result(None)
    bag = res.diagnostics
    try:
        graph = load(model_path, bag)
    except ImportFailed:
        return _finish(res, out_dir, model_path)
    res.graph = graph
    res.groups = group(graph)
    names = py_names(graph.infos)
    opts = Options(allow_tf32=allow_tf32)
    for g in res.groups:
        if g.kind == "torch":
            bag.add("M5003", g.nodes[0].span, f"node '{g.nodes[0].name}' ({g.nodes[0].op_type}): {g.fallback}")
            continue
        emit = EMITTERS.get(g.kind)
        if emit is not None:
            try:
                k = emit(g, graph, names, opts)
            except NeedsValue as exc:
                dims = sorted(set().union(*[symbols(graph.info(t).shape) for t in g.inputs + g.outputs if t]))
                res.special[g.name] = dims
                bag.add("M5009", g.nodes[0].span, f"group {g.name} ({g.nodes[0].name}) is specialised per value of "
                                                  f"{', '.join(dims)} ({exc}): compiled on the first call with each")
                continue
            res.kernels[g.name] = k
            if "tf32" in k.notes:
                bag.add("M5005", g.nodes[0].span, f"group {g.name} ({g.nodes[0].name}) uses tf32 tensor cores")
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        res.module = write(graph, res.groups, res.kernels, out_dir, module_stem(model_path), names, res.special)
        if res.special:
            specialise.save(out_dir / (module_stem(model_path) + specialise.SUFFIX), graph,
                            [g for g in res.groups if g.name in res.special], names, opts)
    except NoFallback as exc:
        n = exc.group.nodes[0]
        bag.add("M5004", n.span, f"node '{n.name}' ({n.op_type}): {exc.group.fallback}")
        return _finish(res, out_dir, model_path)
    if check in ("cpu", "cuda"):
        try:
            res.check = check_step.run(graph, res.groups, res.kernels, res.module, inputs,
                                       target="c" if check == "cpu" else "cuda")
        except check_step.InputsMismatch as exc:
            bag.add("M5007", Span.point(str(model_path)), str(exc))
        except ImportError as exc:
            bag.add("M5008", Span.point(str(model_path)), f"{exc}")
        except Exception as exc:  # TileLang, g++ or onnxruntime failing: reported, not a traceback
            bag.add("M5008", Span.point(str(model_path)), f"{type(exc).__name__}: {str(exc).strip()[-400:]}")
        else:
            bad = res.check["first_failing_group"]
            if bad:
                bag.add("M5006", Span.point(str(model_path)),
                        f"first differing group {bad['group']} (nodes {', '.join(bad['nodes'])}): {bad['message']}")
    return _finish(res, out_dir, model_path)


def _finish(res: Result, out_dir: Path, model_path: Path) -> Result:
    res.report = report_dict(res.graph, res.groups, res.kernels, out_dir,
                             str(res.module) if res.module else None, res.diagnostics, res.check, str(model_path),
                             res.special)
    return res
