"""``migrate bench --onnx OUT``: time a converted model against PyTorch eager running the same
graph, end to end and per fused group, on one GPU.

Both sides come from ``OUT/<model>.py``: ``Model`` (the TileLang kernels) and ``Eager`` (each ONNX
node as its PyTorch operator, torch.matmul, torch.nn.functional, ...). Both run on the same seeded
inputs at the sizes given for the declared dimensions (``--dim batch=8``). fp32 GEMMs are compared
like with like: exact fp32 on both sides unless the conversion used tf32 (``migrate onnx
--allow-tf32``, M5005), and then tf32 on both (``torch.backends.cuda.matmul.allow_tf32`` and
``torch.backends.cudnn.allow_tf32`` are set to match; the record says which).

- end to end: ``rounds`` rounds of ``reps`` back-to-back calls, timed with CUDA events, the median
  of the per-call times;
- per group: both models call ``hook(kernel)`` after each group; one CUDA event is recorded there,
  so a group's time is the time between its event and the one before (kernel time plus whatever
  launch gap the Python side leaves), the median over ``rounds`` calls;
- per group, achieved bandwidth (the group's least bytes, report.json ``bytes``, over its time; a
  share of the device's peak) and, for GEMM and convolution groups, TFLOP/s (``flops``);
- the outputs are compared (Model against Eager, and against onnxruntime on the CPU when it and the
  model file are there) under the model's loosest tolerance class.

On TileLang's C target (``target="c"``, tests) times are wall-clock (``time.perf_counter``).
"""
from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..runtime.bench import device_peaks
from ..runtime.compare import compare_arrays
from . import tune as tune_step
from .check import ORDER, load_module, to_numpy


class BenchError(Exception):
    """A usage or setup error (exit 2): not an ONNX output folder, a dimension without a value."""


@dataclass
class GroupRow:
    kernel: str
    kind: str
    nodes: list[str]
    tilelang_ms: float | None = None
    eager_ms: float | None = None
    speedup: float | None = None        # eager / tilelang: above 1, the TileLang kernel is faster
    bytes: int = 0
    flops: int = 0
    gbs: float | None = None            # TileLang side
    bw_share: float | None = None
    tflops: float | None = None
    flops_share: float | None = None
    eager_gbs: float | None = None
    eager_tflops: float | None = None
    samples: dict = field(default_factory=dict)


def evaluate(expr, values: dict) -> int:
    """A report.json extent (an int, or an expression of the declared names) at ``values``."""
    if isinstance(expr, int):
        return expr
    text = str(expr)
    allowed = set("0123456789+-*/() _") | {c for name in values for c in name}
    if not set(text) <= allowed:
        raise BenchError(f"cannot evaluate the extent {text!r}")
    return int(eval(text, {"__builtins__": {}}, dict(values)))   # noqa: S307  (checked characters)


def dim_values(report: dict, given: dict) -> dict:
    """The declared dimensions' values (all must be given) and the derived ones."""
    missing = [d for d in report.get("dims", {}) if d not in given]
    if missing:
        raise BenchError(f"the model declares {', '.join(missing)}: give each a value (--dim {missing[0]}=N)")
    unknown = [d for d in given if d not in report.get("dims", {})]
    if unknown:
        raise BenchError(f"the model declares no dimension {unknown[0]!r} (it declares: "
                         f"{', '.join(report.get('dims', {})) or 'none'})")
    values = dict(given)
    for d, e in report.get("derived", {}).items():
        values[d] = evaluate(e, values)
    return values


def load_report(out_dir: Path) -> dict:
    path = Path(out_dir) / "report.json"
    if not path.is_file():
        raise BenchError(f"{out_dir} has no report.json (is it an output folder of migrate onnx?)")
    report = json.loads(path.read_text())
    if report.get("command") != "onnx" or not report.get("module"):
        raise BenchError(f"{out_dir} is no complete output folder of migrate onnx (no module)")
    if "inputs" not in report:
        raise BenchError(f"{out_dir} was converted by an older migrate onnx (its report has no inputs): convert again")
    return report


def make_inputs(report: dict, values: dict, device: str, seed: int = 0) -> list:
    import numpy as np
    import torch

    rng = np.random.default_rng(seed)
    out = []
    for i in report["inputs"]:
        shape = tuple(evaluate(d, values) for d in i["shape"])
        if i["dtype"] == "bool":
            a = rng.random(shape) < 0.5
        elif i["dtype"].startswith(("int", "uint")):
            a = rng.integers(1, 6, size=shape).astype(i["dtype"])
        else:
            a = rng.standard_normal(shape).astype(i["dtype"])
        out.append(torch.from_numpy(np.ascontiguousarray(a)).to(device))
    return out


class _Clock:
    """CUDA events on a GPU, wall-clock time on the CPU."""

    def __init__(self, target: str):
        self.cuda = target != "c"

    def mark(self):
        import torch

        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            return e
        return time.perf_counter()

    def ms(self, a, b) -> float:
        if self.cuda:
            b.synchronize()
            return a.elapsed_time(b)
        return (b - a) * 1e3

    def sync(self):
        if self.cuda:
            import torch

            torch.cuda.synchronize()

    def per_call(self, fn, reps: int, rounds: int) -> list[float]:
        """The ms per call of ``fn`` in each of ``rounds`` rounds of ``reps`` calls."""
        out = []
        for _ in range(rounds):
            a = self.mark()
            for _ in range(reps):
                fn()
            b = self.mark()
            out.append(self.ms(a, b) / reps)
        return out


def time_model(model, inputs, clock: _Clock, reps: int, rounds: int) -> tuple[list[float], dict[str, list[float]]]:
    """(per-call ms of each round, per-group ms of each round)."""
    for _ in range(2):
        model(*inputs)                       # compiles on the first call
    clock.sync()
    calls = clock.per_call(lambda: model(*inputs), reps, rounds)
    groups: dict[str, list[float]] = {}
    for _ in range(rounds):
        marks = [("", clock.mark())]
        model(*inputs, hook=lambda name: marks.append((name, clock.mark())))
        clock.sync()
        for (_, a), (name, b) in zip(marks, marks[1:]):
            groups.setdefault(name, []).append(clock.ms(a, b))
    return calls, groups


def _tolerance(report: dict) -> str:
    classes = [g.get("tolerance", "fp32") for g in report["groups"]] or ["fp32"]
    return max(classes, key=lambda c: ORDER.index(c) if c in ORDER else 0)


def _agree(expected: list, got: list, names: list[str], dtypes: list[str], cls: str) -> dict:
    rows = []
    for want, have, name, dtype in zip(expected, got, names, dtypes):
        cls_here = cls if dtype in ("float16", "float32", "float64", "bfloat16") else "exact"
        r = compare_arrays(want, have, dtype, cls_here, name=name)
        rows.append({"tensor": name, "passed": bool(r.passed), "tolerance": cls_here,
                     "max_abs_err": float(r.max_abs_err), "max_rel_err": float(r.max_rel_err), "message": r.message})
    return {"passed": all(r["passed"] for r in rows), "outputs": rows}


def bench_onnx(out_dir: str | Path, dims: dict, *, target: str = "cuda", reps: int = 20, rounds: int = 7,
               seed: int = 0, reference: bool = True, on_row=None, tune: bool = False, on_tuned=None) -> dict:
    """Time ``OUT``'s Model against its Eager baseline; the record ``migrate bench --onnx`` prints."""
    import torch

    out_dir = Path(out_dir)
    report = load_report(out_dir)
    values = dim_values(report, dims)
    mod = load_module(out_dir / Path(report["module"]).name)
    if getattr(mod, "Eager", None) is None:
        raise BenchError("the module has no Eager baseline (a node without a PyTorch form; see its Eager line)")
    tf32 = "M5005" in report["summary"].get("diagnostics", {})
    device = "cpu" if target == "c" else "cuda"
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = tf32
        torch.backends.cudnn.allow_tf32 = tf32
        name = torch.cuda.get_device_name()
    else:
        name = "cpu (TileLang C target)"
    peaks = device_peaks(name)
    inputs = make_inputs(report, values, device, seed)
    model, eager = mod.Model(target=target), mod.Eager(device=device)
    clock = _Clock(target)
    tuned = None
    if tune:
        tuned = tune_step.tune(model, mod, report, inputs, clock, target=target)
        path = tune_step.save(out_dir, Path(report["module"]).stem, tuned, name, values)
        for kernel, rec in tuned.items():
            if on_tuned is not None:
                on_tuned(kernel, rec)
        model = mod.Model(target=target, tiles={k: v["config"] for k, v in tuned.items()})

    outs = [model(*inputs)]
    base = [eager(*inputs)]
    got = [to_numpy(t) for t in (outs[0] if isinstance(outs[0], tuple) else (outs[0],))]
    want = [to_numpy(t) for t in (base[0] if isinstance(base[0], tuple) else (base[0],))]
    cls = _tolerance(report)
    names = [o["name"] for o in report["outputs"]]
    dtypes = [o["dtype"] for o in report["outputs"]]
    agreement = {"eager": _agree(want, got, names, dtypes, cls)}
    if reference:
        try:
            ort = _onnxruntime(report, inputs)
        except Exception as exc:   # an operator onnxruntime's CPU build lacks for this dtype, say
            agreement["onnxruntime"] = {"passed": None, "skipped": f"{type(exc).__name__}: {str(exc)[:300]}",
                                        "outputs": []}
        else:
            if ort is not None:
                agreement["onnxruntime"] = _agree(ort, got, names, dtypes, cls)

    t_calls, t_groups = time_model(model, inputs, clock, reps, rounds)
    e_calls, e_groups = time_model(eager, inputs, clock, reps, rounds)
    rows = []
    for g in report["groups"]:
        row = GroupRow(g["kernel"], g["kind"], g["nodes"])
        t, e = t_groups.get(g["kernel"]), e_groups.get(g["kernel"])
        row.samples = {"tilelang": t, "eager": e}
        row.tilelang_ms = statistics.median(t) if t else None
        row.eager_ms = statistics.median(e) if e else None
        if row.tilelang_ms and row.eager_ms:
            row.speedup = row.eager_ms / row.tilelang_ms
        row.bytes = evaluate(g.get("bytes", 0), values)
        row.flops = evaluate(g.get("flops", 0), values)
        if row.tilelang_ms and row.bytes:
            row.gbs = row.bytes / row.tilelang_ms / 1e6
            row.eager_gbs = row.bytes / row.eager_ms / 1e6 if row.eager_ms else None
            if peaks.get("bandwidth"):
                row.bw_share = row.gbs * 1e9 / peaks["bandwidth"]
        if row.tilelang_ms and row.flops:
            row.tflops = row.flops / row.tilelang_ms / 1e9
            row.eager_tflops = row.flops / row.eager_ms / 1e9 if row.eager_ms else None
            peak = peaks.get("tf32" if tf32 else _flop_class(g))
            if peak:
                row.flops_share = row.tflops * 1e12 / peak
        rows.append(row)
        if on_row is not None:
            on_row(row)
    tl, ea = statistics.median(t_calls), statistics.median(e_calls)
    return {
        "model": report.get("model"), "output": str(out_dir), "device": name, "target": target,
        "dims": values, "seed": seed, "reps": reps, "rounds": rounds,
        "fp32_gemms": ("tf32 tensor cores on both sides (converted with --allow-tf32; torch tf32 on)" if tf32 else
                       "exact fp32 on both sides (no tf32: torch.backends.cuda.matmul.allow_tf32 and "
                       "cudnn.allow_tf32 off)"),
        "end_to_end": {"tilelang_ms": tl, "eager_ms": ea, "speedup": ea / tl if tl else None,
                       "samples": {"tilelang": t_calls, "eager": e_calls}},
        "agreement": agreement,
        **({"tuning": {"file": str(path), "kernels": tuned}} if tune else {}),
        "groups": [asdict(r) for r in rows],
    }


def _flop_class(group: dict) -> str:
    return "fp16" if group.get("tolerance") in ("fp16", "bf16") else "fp32"


def _onnxruntime(report: dict, inputs) -> list | None:
    """onnxruntime's (CPU) outputs on ``inputs``, or None where it or the model file is missing."""
    model = report.get("model")
    if not model or not Path(model).is_file():
        return None
    try:
        import onnxruntime as ort
    except ImportError:
        return None
    sess = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feed = {i["name"]: to_numpy(t) for i, t in zip(report["inputs"], inputs)}
    return sess.run([o["name"] for o in report["outputs"]], feed)
