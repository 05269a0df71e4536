"""``migrate bench --from OUT --traces DIR``: original against migrated at the programs' own sizes.

A GPU recording made with ``C2T_TIME_ROUNDS`` set (``bench/gpu_realworld.sh`` with ``STEPS="record
time"``, or ``migrate check --run ARGS --record-on cuda`` with it in the environment) holds, beside
each program's recorded launches, the original's times of each of them, measured in the
program's own nvcc build by the recorder (``cpu/c2t_gpu_trace.h``, ``timings.jsonl``). Here each
such launch is replayed into its migrated kernel (:func:`.replay.prepare`, the replayed check: the
same verdict as ``migrate check``), and one that passes is timed the same way as the original:

- before each launch its inputs are put back as the recording holds them (a kernel that works in
  place runs on the same data every time), then a scratch buffer of twice the L2 cache (at least
  32 MiB, :func:`flush_bytes`) is written over, so that the launch reads cold memory;
- the launch is timed alone with CUDA events, queued while the GPU is still busy (the write over
  L2; the migrated side also queues a spin of :data:`SLEEP_CYCLES` first), so that the host's
  launch cost is not timed;
- ``warmup`` (2) launches are not counted (1 where the first takes over a quarter of ``budget_ms``);
  then ``rounds`` (as many as the original's) are timed, stopping past ``budget_ms`` (2000) of
  launches once 3 are; the median is reported.

Bytes moved per launch (:func:`traffic`): each allocation the launch's buffers reach, from the
lowest pointer into it to its end, read once, and once more written where the launch changed it
(the convention of :func:`.bench.traffic_bytes` for recorded launches: a changed buffer counts as
in-out). FLOPs where the kernel is a GEMM-like tile (:func:`gemm_flops`), as TFLOP/s and the
share of the matrix ceiling. The summary gives per kernel the geometric mean of its launches' ratios (migrated /
original) and KernelBench's fast_p figures over the kernels judged (:func:`fast_p`).
"""
from __future__ import annotations

import json
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .bench import device_peaks, geomean

__all__ = ["TraceRow", "bench_traces", "fast_p", "flush_bytes", "gemm_flops", "kernel_summary", "summary",
           "time_cold", "traffic"]

#: the fewest bytes written over before a timed launch (twice the L2 cache where that is more)
FLUSH_MIN = 32 << 20
#: the spin queued before the migrated kernel's timed launch (about 0.5 ms at 2 GHz): the GPU is
#: busy while Python launches it (TileLang's call through tvm-ffi), as it is while the recorder
#: launches the original from C++
SLEEP_CYCLES = 1_000_000


@dataclass
class TraceRow:
    program: str
    file: str
    kernel: str
    launch: int  # the launch's number among its kernel's launches
    form: str
    status: str  # pass (checked, both timed), fail, error (the migrated kernel did not run), untimed, skipped
    message: str = ""
    seq: int = -1
    original_ms: float | None = None
    migrated_ms: float | None = None
    ratio: float | None = None  # migrated / original
    bytes: int = 0
    original_gbs: float | None = None
    migrated_gbs: float | None = None
    original_bw_share: float | None = None
    migrated_bw_share: float | None = None
    flops: int = 0  # a GEMM-like tile kernel's (gemm_flops)
    original_tflops: float | None = None
    migrated_tflops: float | None = None
    migrated_flops_share: float | None = None  # of the device's matrix ceiling for its input type
    samples: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return asdict(self)


def flush_bytes(l2: int) -> int:
    """The bytes written over before each timed launch: twice the L2 cache, at least 32 MiB (as
    ``c2t_gpu_trace.h``'s flush_bytes)."""
    return max(2 * int(l2 or 0), FLUSH_MIN)


def traffic(prepared) -> int:
    """Bytes a replayed launch moves, at least as counted here: each allocation its buffers reach,
    from the lowest pointer into it to its end, once; twice where the launch changed it."""
    from ..dtypes import SIZES

    total = 0
    for alloc, group in prepared.groups.items():
        extent = group["n"] * SIZES[group["dtype"]]
        changed = prepared.launch.after.get(alloc) != prepared.launch.before.get(alloc)
        total += extent * (2 if changed else 1)
    return total


def gemm_flops(sig, args) -> tuple[int, str]:
    """(FLOPs, the peak they are measured against) of one launch of a GEMM-like tile kernel (its
    factory calls ``T.gemm``, with tensor cores or without; its shapes hold C (..., m, n) =
    A (..., m, k) B (..., k, n) or B (..., n, k), extents named by scalar parameters): 2 m n k for
    each of C's (m, n) matrices (the batch: C's elements over m n); (0, "") for any other kernel."""
    import inspect

    try:
        text = inspect.getsource(sig.factory)
    except (OSError, TypeError, AttributeError):
        return 0, ""
    if "T.gemm(" not in text or not getattr(sig, "shapes", ()):
        return 0, ""
    scalars = {name: v for (name, kind, _d), v in zip(sig.params, args) if kind == "scalar"}
    tensors = {name: v for (name, kind, _d), v in zip(sig.params, args) if kind == "buffer"}
    dtypes = {name: d for name, kind, d in sig.params if kind == "buffer"}
    last = {b: tuple(ext[-2:]) for b, ext in sig.shapes if len(ext) >= 2 and None not in ext[-2:]}
    for c, (m, n) in last.items():
        others = [b for b in last if b != c]
        a = next((b for b in others if last[b][0] == m and last[b][1] not in (m, n)), None)
        if a is None:
            continue
        k = last[a][1]
        if not any(last[b] in ((k, n), (n, k)) for b in others if b != a):
            continue
        try:
            mm, nn, kk = (int(scalars[x]) for x in (m, n, k))
            batch = max(1, int(tensors[c].numel()) // max(1, mm * nn))
        except (KeyError, TypeError, ValueError, AttributeError):
            return 0, ""
        # the ceiling of the inputs' type: float32 on CUDA cores (a factory's default), halves on tensor cores
        peak = {"float16": "fp16", "bfloat16": "fp16", "float32": "fp32"}.get(dtypes.get(a, ""), "")
        return 2 * mm * nn * kk * batch, peak
    return 0, ""


def time_cold(call, restore, *, rounds: int, warmup: int = 2, budget_ms: float = 2000.0,
              device: str = "cuda") -> list[float]:
    """Milliseconds of ``call()`` in each timed round, the recorder's protocol (module doc):
    inputs put back (``restore()``), L2 written over, one launch timed with CUDA events.
    ``device="cpu"`` runs the same loop on the CPU, timed by the clock (for tests)."""
    if device == "cuda":
        import torch

        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        scratch = torch.empty(flush_bytes(getattr(props, "L2_cache_size", 0)), dtype=torch.uint8, device="cuda")
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

        def one(r: int) -> float:
            restore()
            scratch.fill_(r & 0xFF)
            torch.cuda._sleep(SLEEP_CYCLES)
            start.record()
            call()
            end.record()
            end.synchronize()
            return start.elapsed_time(end)
    else:
        def one(r: int) -> float:
            restore()
            t = time.perf_counter()
            call()
            return (time.perf_counter() - t) * 1e3
    out, spent, r = [], 0.0, 0
    while r < warmup + max(1, rounds):
        ms = one(r)
        spent += ms
        if r == 0 and warmup > 1 and ms > budget_ms / 4:  # a long launch: warmed by one (as the recorder)
            warmup = 1
        if r >= warmup:
            out.append(ms)
        if len(out) >= 3 and spent > budget_ms:
            break
        r += 1
    return out


def _work(out_dir: Path, report: dict, traces_dir: Path, kernels=None, program: str | None = None):
    """(program, file, module, form, launch, the original's timing or None) of every recorded
    launch of a migrated kernel in ``traces_dir`` (one folder per program, as ``OUT/traces``), a
    program's recording loaded at a time (``program``: that one only)."""
    from .checker import kernel_forms, trace_stem
    from .trace_check import TraceTarget
    from .traces import load, read_timings

    forms = kernel_forms(report, converted_only=True)
    entries = {e["file"]: e for e in report.get("files", []) if e.get("output")}
    seen = set()
    for prog in report.get("programs", []):
        stem = trace_stem(prog)
        if program is not None and str(stem) != program:
            continue
        files = [f for f in prog.get("files", []) if f in entries and f in forms and (str(stem), f) not in seen]
        if not files or not (traces_dir / stem / "manifest.jsonl").is_file():
            continue
        loaded = load(traces_dir / stem)
        if loaded is None:
            continue
        launches = loaded[1].launches
        timings = read_timings(traces_dir / stem)
        for file in files:
            seen.add((str(stem), file))
            target = TraceTarget(file, out_dir / entries[file]["output"], list(forms[file]), forms[file])
            for name in target.names:
                if kernels and name not in kernels:
                    continue
                for L in target.launches_of(name, launches):
                    yield str(stem), file, target.module, forms[file][name][0], L, timings.get(L.seq)


_REPORT: dict = {}


def _load_report(path: str) -> None:
    _REPORT.update(json.loads(Path(path).read_text()))


def prebuild(out_dir: str, traces_dir: str, program: str, kernels, target: str) -> int:
    """Compile (into TileLang's cache) the migrated kernel of each timed launch of ``program``'s
    recording, as :func:`bench_traces` will run it; returns how many were built. Runs in worker
    processes (``jobs``; :func:`_load_report` loaded the report): the timing finds them built."""
    from .replay import Replay, prepare

    built = 0
    for _p, _f, module, _form, L, timing in _work(Path(out_dir), _REPORT, Path(traces_dir), kernels, program):
        if L.skipped or not (timing and timing.get("ms")):
            continue
        try:
            ready = prepare(module, L, target)
            if not isinstance(ready, Replay):
                ready.bound()
                built += 1
        except Exception:  # the timing run reports it, with the launch
            pass
    return built


def _prebuild_all(out_dir: Path, report: dict, traces_dir: Path, kernels, jobs: int, target: str) -> None:
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing

    from .checker import trace_stem

    programs = sorted({str(trace_stem(p)) for p in report.get("programs", [])
                       if (traces_dir / trace_stem(p) / "timings.jsonl").is_file()})
    if len(programs) < 2:
        return
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                             initializer=_load_report, initargs=(str(out_dir / "report.json"),)) as pool:
        n = len(programs)
        list(pool.map(prebuild, [str(out_dir)] * n, [str(traces_dir)] * n, programs, [kernels] * n, [target] * n))


def bench_traces(out_dir: Path, report: dict, traces_dir: Path, *, device: str = "cuda", rounds: int | None = None,
                 warmup: int = 2, budget_ms: float = 2000.0, budget: float = 1e9, kernels=None,
                 on_row=None, jobs: int = 1) -> tuple[list[TraceRow], str]:
    """One row per recorded launch of a migrated kernel under ``traces_dir``; and the device's name.
    ``rounds``: timed rounds of the migrated kernel (default: as many as the original's);
    ``budget``: seconds after which no launch is started (the rest are skipped); ``jobs`` > 1: the
    migrated kernels are first compiled in that many processes (:func:`prebuild`), then timed one
    at a time."""
    from .replay import Replay, prepare

    if device == "cuda":
        import torch
        name = torch.cuda.get_device_name(0)
    else:
        import platform
        name = f"cpu ({platform.processor() or platform.machine()}, dry run)"
    peaks = device_peaks(name)
    target = "cuda" if device == "cuda" else "c"
    rows, started = [], time.time()
    lost = None  # the launch after which the CUDA context is unusable (a sticky error)
    if jobs > 1:
        _prebuild_all(out_dir, report, traces_dir, kernels, jobs, target)
    for program, file, module, form, L, timing in _work(out_dir, report, traces_dir, kernels):
        row = TraceRow(program, file, L.name, L.number, form, "skipped", seq=L.seq)
        try:
            if lost is not None:
                row.message = f"not run: the CUDA context was lost at {lost} (a sticky error fails every later launch)"
            elif L.skipped:
                row.message = f"launch {L.number} was not recorded ({L.skipped})"
            elif timing is None:
                row.message = "the original was not timed (record on the GPU with C2T_TIME_ROUNDS set)"
            elif timing.get("skipped") or not timing.get("ms"):
                row.message = f"the original was not timed: {timing.get('skipped') or 'no rounds'}"
            elif time.time() - started > budget:
                row.message = "time budget spent"
            else:
                _judge_and_time(row, prepare(module, L, target), timing, device=device, rounds=rounds,
                                warmup=warmup, budget_ms=budget_ms, peaks=peaks, replay_type=Replay)
        except Exception as exc:  # the migrated kernel did not build or run: this launch's error
            row.status = "error"
            row.message = f"the migrated kernel did not run: {type(exc).__name__}: {str(exc)[:300]}"
            if _context_lost(device):
                lost = f"{program}:{L.name}@{L.number}"
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows, name


def _context_lost(device: str) -> bool:
    """Whether the CUDA context took a sticky error (an illegal address, a trap): then every later
    launch of this process fails with that error, whatever its kernel, and is not its own fault."""
    if device != "cuda":
        return False
    import torch
    try:
        torch.cuda.synchronize()
        return torch.ones(1, device="cuda").add_(1).item() != 2.0
    except Exception:  # (torch's AcceleratorError and RuntimeError alike)
        return True


def _judge_and_time(row: TraceRow, prepared, timing: dict, *, device: str, rounds, warmup: int, budget_ms: float,
                    peaks: dict, replay_type) -> None:
    if isinstance(prepared, replay_type):  # a launch the replay cannot take: why
        row.message = prepared.message
        return
    prepared.keep()
    verdict = prepared.check()
    row.status, row.message = verdict.status, verdict.message
    if verdict.status != "pass":
        return
    original = [float(x) for x in timing["ms"]]
    try:
        call = prepared.bound()
        migrated = time_cold(call, prepared.restore, rounds=rounds or len(original), warmup=warmup,
                             budget_ms=budget_ms, device=device)
    except Exception as exc:  # checked equal, but the timing loop failed
        row.status, row.message = "untimed", f"timing failed: {type(exc).__name__}: {str(exc)[:300]}"
        return
    row.bytes = traffic(prepared)
    row.flops, peak = gemm_flops(prepared.sig, prepared.args)
    row.samples = {"original_ms": original, "migrated_ms": migrated, "warmup": warmup, "flops_peak": peak,
                   "original_warmup": timing.get("warmup"), "flush_bytes": timing.get("flush_bytes")}
    row.original_ms, row.migrated_ms = statistics.median(original), statistics.median(migrated)
    row.ratio = row.migrated_ms / row.original_ms if row.original_ms > 0 else None
    if row.bytes:
        for side in ("original", "migrated"):
            ms = getattr(row, f"{side}_ms")
            if ms > 0:
                gbs = row.bytes / (ms * 1e-3) / 1e9
                setattr(row, f"{side}_gbs", gbs)
                if peaks.get("bandwidth"):
                    setattr(row, f"{side}_bw_share", gbs * 1e9 / peaks["bandwidth"])
    if row.flops and row.original_ms > 0 and row.migrated_ms > 0:
        row.original_tflops = row.flops / (row.original_ms * 1e-3) / 1e12
        row.migrated_tflops = row.flops / (row.migrated_ms * 1e-3) / 1e12
        if peaks.get(peak):
            row.migrated_flops_share = row.migrated_tflops * 1e12 / peaks[peak]


def kernel_summary(rows: list[TraceRow]) -> list[dict]:
    """One entry per kernel (program, file, kernel) whose launches were judged (pass, fail, error):
    ``correct`` when each judged launch passed and at least one was timed, ``ratio`` the geometric
    mean of its timed launches' ratios (migrated / original), ``speedup`` its inverse."""
    by: dict = {}
    for r in rows:
        if r.status in ("pass", "fail", "error"):
            by.setdefault((r.program, r.file, r.kernel), []).append(r)
    out = []
    for (program, file, kernel), rs in by.items():
        timed = [r.ratio for r in rs if r.status == "pass" and r.ratio]
        correct = all(r.status == "pass" for r in rs) and bool(timed)
        ratio = geomean(timed) if correct else None
        out.append({"program": program, "file": file, "kernel": kernel, "form": rs[0].form, "correct": correct,
                    "launches": len(rs), "ratio": ratio, "speedup": 1 / ratio if ratio else None})
    return out


def fast_p(kernels: list[dict], p: float) -> float | None:
    """KernelBench's fast_p over the judged ``kernels`` (:func:`kernel_summary`): the share that is
    correct and at least ``p`` times as fast as the original (fast_0: correct; fast_1: correct and
    not slower; fast_2: twice as fast or more). None without kernels."""
    if not kernels:
        return None
    return sum(1 for k in kernels if k["correct"] and k["speedup"] is not None and k["speedup"] >= p) / len(kernels)


def summary(rows: list[TraceRow]) -> dict:
    """The figures of a run: per kernel, fast_0/1/2, the geometric mean of the correct kernels'
    ratios and the slowest, overall and by form; the launches not judged by reason."""
    from collections import Counter

    kernels = kernel_summary(rows)

    def figures(ks: list[dict]) -> dict:
        good = [k for k in ks if k["correct"]]
        ratios = [k["ratio"] for k in good]
        return {"judged": len(ks), "correct": len(good),
                "fast_0": fast_p(ks, 0), "fast_1": fast_p(ks, 1), "fast_2": fast_p(ks, 2),
                # over the kernels that pass their check (issue 17's goals: fast_1 >= 90 %, none over 1.1x)
                "correct_fast_1": fast_p(good, 1), "correct_fast_2": fast_p(good, 2),
                "geomean": geomean(ratios), "slowest": max(ratios) if ratios else None,
                "over_1_1": sorted(f"{k['program']}:{k['kernel']}" for k in good if k["ratio"] > 1.1)}

    forms = sorted({k["form"] for k in kernels})
    return {"kernels": kernels, **figures(kernels), "by_form": {f: figures([k for k in kernels if k["form"] == f])
                                                                for f in forms},
            "not_judged": dict(Counter(_reason(r.message) for r in rows
                                       if r.status in ("skipped", "untimed")).most_common())}


def _reason(message: str) -> str:
    """A short class of why a launch was not judged, for the totals (numbers left out)."""
    import re

    return re.sub(r"\d+", "N", message.split(": ", 1)[0] if "was not timed" not in message else message)[:100]


def format_row(r: TraceRow) -> str:
    """One line of the table: the launch, both times, the ratio, bandwidth and its share."""
    where = f"{r.program}:{r.kernel}@{r.launch}"
    if r.status != "pass" or r.ratio is None:
        return f"{where:60s} {r.form:9s} {r.status}: {r.message[:110]}"
    bw = f" {r.migrated_gbs:8.1f} GB/s" if r.migrated_gbs else ""
    share = f" ({100 * r.migrated_bw_share:5.1f}% of peak; original {100 * r.original_bw_share:5.1f}%)" \
        if r.migrated_bw_share is not None and r.original_bw_share is not None else ""
    tf = f" {r.migrated_tflops:7.2f} TFLOP/s" if r.migrated_tflops else ""
    tf += f" ({100 * r.migrated_flops_share:5.1f}% of the matrix peak)" if r.migrated_flops_share else ""
    return f"{where:60s} {r.form:9s} {r.original_ms:9.4f} ms {r.migrated_ms:9.4f} ms x{r.ratio:5.2f}{bw}{share}{tf}"


def format_summary(s: dict, device: str) -> list[str]:
    def pct(x):
        return "-" if x is None else f"{100 * x:.1f} %"

    def one(label: str, f: dict) -> str:
        geo = "-" if f["geomean"] is None else f"{f['geomean']:.3f}"
        slow = "-" if f["slowest"] is None else f"{f['slowest']:.2f}"
        return (f"{label:10s} {f['judged']:4d} kernels judged, {f['correct']} correct; fast_0 {pct(f['fast_0'])}, "
                f"fast_1 {pct(f['fast_1'])}, fast_2 {pct(f['fast_2'])}; of the correct: fast_1 "
                f"{pct(f['correct_fast_1'])}, fast_2 {pct(f['correct_fast_2'])}, geometric mean "
                f"migrated/original {geo}, slowest {slow}, {len(f['over_1_1'])} slower than 1.1x")
    lines = [f"on {device}:", one("all", s)]
    lines += [one(form, f) for form, f in s["by_form"].items()]
    lines += [f"  slower than 1.1x: {k}" for k in s["over_1_1"]]
    lines += [f"  not judged: {n:4d}  {why}" for why, n in s["not_judged"].items()]
    return lines
