"""Equivalence checks: the original CUDA and the migrated TileLang on the same random inputs.

:func:`check_module` checks every spec'd kernel of one converted file: it makes seeded inputs,
runs the original (CPU executor or GPU) and the migrated module (TileLang ``c`` target or CUDA,
in a child process), and compares each output buffer under the kernel's tolerance class.

The result of each kernel is a :class:`KernelCheck` whose ``status`` is ``pass``, ``fail``
(outputs differ: the first mismatch says where), ``skipped`` (not migrated, or a form that cannot
run on this device; the message says why) or ``error`` (the original or the migrated kernel did
not run; the message and findings say why). This module imports neither libclang nor the
frontend, so a GPU machine can check a converted folder with only the runtime.
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

from . import coverage
from .compare import compare_arrays
from .flags import file_flags, merged
from .inputs import DEFAULT_SEED, make_inputs
from .kernel_check import DEVICES, RUN_CODES, KernelCheck, form_skip
from .limits import DEFAULT_TIMEOUT
from .spec import KernelSpec

def _run_migrated(module: Path, target: str, runs: list[dict], timeout: float, schedule: str = "forward",
                  wrapper=()) -> dict:
    """Run the migrated kernels in TileLang workers (:mod:`.batch`): a kernel that crashes, hangs
    past ``timeout`` or runs out of memory costs only itself. ``wrapper``: a command the workers
    run under (compute-sanitizer)."""
    from . import limits
    from .batch import run_batch

    # no address-space limit next to a CUDA context (it reserves far more than it uses)
    max_memory = limits.max_memory() if target == "c" else None
    return run_batch("migrate.runtime.tilelang_worker", {"module": str(module), "target": target, "schedule": schedule}, runs,
                     timeout=timeout, max_memory=max_memory, startup=max(timeout, 300.0), wrapper=wrapper,
                     fork=target == "c")


def check_module(module: Path, cu_path: Path, kernels: list[KernelSpec], forms: dict[str, tuple[str, str]],
                 *, device: str = "cpu", seed: int | None = None, schedule: str = "forward",
                 include_dirs=(), defines=(), timeout: float = DEFAULT_TIMEOUT, display: str = "",
                 coverage_runs: bool = True, sanitize: tuple[str, ...] = ()) -> list[KernelCheck]:
    """Check the spec'd ``kernels`` of ``cu_path`` against the migrated ``module``.

    ``forms`` maps kernel name to (form, reason) as ``migrate convert`` reported them. A tile-form
    kernel also runs with the extra tiles of its coverage plan (:mod:`.coverage`) unless
    ``coverage_runs`` is False, and its ``coverage`` says which branches ran. With ``sanitize``
    (compute-sanitizer tools, ``device="cuda"``), every kernel both sides ran runs again under each
    tool on both sides (:mod:`.sanitize`).
    """
    from .api import run_original

    if device not in DEVICES:
        raise ValueError(f"device must be one of {sorted(DEVICES)}")
    original_device, target = DEVICES[device]
    seed = DEFAULT_SEED if seed is None else int(seed)
    display = display or cu_path.name
    checks: list[KernelCheck] = []
    pending: list[tuple[KernelCheck, KernelSpec, object, object]] = []
    for k in kernels:
        form, reason, *rest = forms.get(k.name, (None, ""))
        if rest and rest[0]:  # the migration computes in a class of its own (a tf32 GEMM)
            k = dataclasses.replace(k, tolerance=rest[0])
        check = KernelCheck(display, k.name, k.id, device, "skipped", seed=seed, tolerance=k.tolerance)
        checks.append(check)
        skip = form_skip(form, device, reason, lockstep=len(rest) > 2 and rest[2])
        if skip:
            check.message = skip
            continue
        start = time.perf_counter()
        inputs = make_inputs(k, seed)
        original = run_original(cu_path, k, inputs.copy().args, dict(inputs.symbols), device=original_device,
                                schedule=schedule, seed=seed, include_dirs=include_dirs, defines=defines,
                                timeout=timeout, read_symbols=_symbols_back(k))
        check.seconds = time.perf_counter() - start
        check.findings = [str(f) for f in original.findings]
        if not original.ok:
            check.status = "error"
            code = RUN_CODES.get(original.status)
            check.message = (f"{code}: " if code else "") + \
                f"the original CUDA kernel did not run ({original.status}): {original.message}"
            continue
        pending.append((check, k, inputs, original))

    if pending:
        plans = {c.id: (coverage.plan(module, k) if forms.get(k.name, ("",))[0] == "tile" else None)
                 for c, k, _inp, _orig in pending}
        runs, extra_runs = [], []
        for c, k, inp, _ in pending:  # the spec's runs first, then one per extra tile of each coverage
            extra = plans[c.id].extra() if plans[c.id] and coverage_runs else []  # plan: a crash there
            for i, options in enumerate([None] + extra):                        # costs no spec run
                (runs if i == 0 else extra_runs).append(
                    {"key": c.id if i == 0 else f"{c.id}@tile{i}", "kernel": k, "options": options,
                     "spec_path": k.spec_path, "index": k.index, "args": inp.copy().args, "symbols": dict(inp.symbols)})
        runs += extra_runs
        start = time.perf_counter()
        results = _run_migrated(module, target, runs, timeout, schedule)
        per_kernel = (time.perf_counter() - start) / len(pending)
        for check, k, inputs, original in pending:
            check.seconds += per_kernel
            plan = plans[check.id]
            if plan is not None:
                _check_coverage(check, k, plan, original.outputs, results)
                if check.status == "fail":
                    continue
            entry = results[check.id]
            if entry["status"] == "error" and target == "c" and "bfloat16" in entry.get("message", ""):
                check.status = "skipped"
                check.message = ("not checkable on CPU: TileLang's c target cannot compile bfloat16 "
                                 f"({entry['message'][:120]}); check it with --device cuda")
                continue
            if entry["status"] == "oob":  # a write into a red zone: the migrated kernel is wrong
                check.status = "fail"
                check.first_mismatch = {"buffer": entry["buffer"], "index": entry["element"], "side": entry["side"],
                                        "expected": None, "actual": None}
                check.message = entry["message"]
                continue
            if entry["status"] != "ok":
                check.status = "error"
                code = RUN_CODES.get(entry["status"])
                check.message = (f"{code}: " if code else "") + \
                    f"the migrated kernel did not run ({entry['status']}): {k.name}: {entry['message']}"
                continue
            _compare(check, k, original.outputs, entry["outputs"])
            if check.status == "pass" and check.coverage:
                took = [c["branch"] for c in check.coverage if c["ran"] and c["branch"] in coverage.BRANCHES]
                check.message += f"; branches run: {', '.join(took) or 'none'}"
            left_out = [f.message for f in original.findings if f.kind == "excluded"]
            if left_out:
                check.message += f" ({left_out[0]})"
            if check.status == "fail" and original_device == "cpu":
                _flag_original_race(check, k, cu_path, inputs, original, schedule, seed, include_dirs, defines,
                                    timeout)
    if sanitize and pending:
        ran = [(c, k, inp) for c, k, inp, _ in pending if c.status in ("pass", "fail")]
        _sanitize(module, cu_path, ran, sanitize, seed, include_dirs, defines, timeout)
    return checks


def _sanitize(module: Path, cu_path: Path, ran: list, tools: tuple[str, ...], seed: int, include_dirs, defines,
              timeout: float) -> None:
    """Run each (check, kernel, inputs) of ``ran`` again under every compute-sanitizer tool, the
    original one kernel per process, the migrated kernels one module per process and tool, and
    fold the findings into the checks (:func:`.sanitize.judge`)."""
    import os
    import tempfile

    from . import sanitize
    from .api import run_original

    limit = sanitize.timeout_for(timeout)
    keep = os.environ.get("CUDA2TILE_SANITIZER_LOGS")  # a folder that keeps the raw logs (bench scripts)
    found = {(c.id, side): [] for c, _k, _i in ran for side in ("original", "migrated")}
    unfinished = {c.id: set() for c, _k, _i in ran}
    unattributed = []
    with tempfile.TemporaryDirectory(prefix="c2t-sanitize-") as tmp:
        def log_text(path: str, name: str) -> str:
            try:
                text = Path(path).read_text(errors="replace")
            except OSError:
                return ""
            if keep:
                Path(keep).mkdir(parents=True, exist_ok=True)
                (Path(keep) / name).write_text(text)
            return text

        for tool in tools:
            for check, k, inp in ran:
                log = os.path.join(tmp, f"{check.id}.{tool}.original.log")
                res = run_original(cu_path, k, inp.copy().args, dict(inp.symbols), device="gpu", seed=seed,
                                   include_dirs=include_dirs, defines=defines, timeout=limit,
                                   wrapper=sanitize.wrapper(tool, log))
                found[(check.id, "original")] += sanitize.parse_log(
                    log_text(log, f"{cu_path.stem}.{check.id}.{tool}.original.log"), tool)
                if not res.ok and not res.outputs:
                    unfinished[check.id].add(tool)
                    check.findings.append(f"compute-sanitizer {tool}: the original did not run under it ({res.status}: "
                                          f"{res.message[:200]})")
            log = os.path.join(tmp, f"{tool}.migrated.log")
            runs = [{"key": c.id, "kernel": k, "options": None, "spec_path": k.spec_path, "index": k.index,
                     "args": inp.copy().args, "symbols": dict(inp.symbols)} for c, k, inp in ran]
            results = _run_migrated(module, "cuda", runs, limit, wrapper=sanitize.wrapper(tool, log))
            names = sorted({k.name for _c, k, _i in ran})
            by_kernel = sanitize.attribute(
                sanitize.parse_log(log_text(log, f"{module.stem}.{tool}.migrated.log"), tool), names)
            unattributed += by_kernel.pop("")
            for check, k, _inp in ran:
                found[(check.id, "migrated")] += by_kernel.get(k.name, [])
                entry = results.get(check.id, {})
                if entry.get("status") not in ("ok", "oob", None):
                    unfinished[check.id].add(tool)
                    check.findings.append(f"compute-sanitizer {tool}: the migrated kernel did not run under it "
                                          f"({entry.get('status')}: {str(entry.get('message', ''))[:200]})")
    for check, _k, _inp in ran:
        sanitize.judge(check, found[(check.id, "original")], found[(check.id, "migrated")], tools,
                       unfinished[check.id])
        for f in unattributed:
            check.findings.append(f"compute-sanitizer finding in {module.name} that names no kernel: {f}")


def _flag_original_race(check: KernelCheck, k: KernelSpec, cu_path: Path, inputs, original, schedule: str,
                        seed: int, include_dirs, defines, timeout: float) -> None:
    """A failing check whose original computes something else with its threads in another order
    (a race, or a read of memory no thread wrote) is the original's finding, not the migration's:
    an ``error`` naming it, the tolerance unchanged."""
    from .api import run_original

    other = "reverse" if schedule == "forward" else "forward"
    again = run_original(cu_path, k, inputs.copy().args, dict(inputs.symbols), device="cpu", schedule=other,
                         seed=seed, include_dirs=include_dirs, defines=defines, timeout=timeout)
    if not again.ok:
        return
    for a in k.outputs:
        res = compare_arrays(original.outputs[a.name], again.outputs[a.name], a.dtype, k.tolerance, name=a.name)
        if not res.passed:
            finding = (f"race: the original kernel computes {a.name} differently with its threads in {schedule} "
                       f"and in {other} order (a race between threads, or a read of memory no thread wrote): "
                       f"{res.message}")
            check.findings.append(finding)
            check.status = "error"
            check.message = (f"{finding}; the check cannot judge the migration (tolerance unchanged). "
                             f"Compared with the migrated kernel: {check.message}")
            return


def _check_coverage(check: KernelCheck, k: KernelSpec, plan, expected: dict, results: dict) -> None:
    """Compare the extra tile runs of ``plan`` (:mod:`.coverage`) with the original's outputs and
    record which branches the runs took (``check.coverage``); a run that disagrees fails the
    check, naming its tile."""
    ran = [results.get(check.id, {}).get("status") == "ok"]
    if not ran[0]:
        return  # the spec's own run did not complete: the check says why, coverage is moot
    notes = []
    for i, options in enumerate(plan.extra(), 1):
        entry = results.get(f"{check.id}@tile{i}")
        if entry is None:  # extra runs were not asked for
            ran.append(False)
            continue
        if entry["status"] not in ("ok", "oob"):
            notes.append(f"the run with tile {list(options['tile'])} did not complete ({entry['status']}: "
                         f"{entry.get('message', '')[:200]})")
        ran.append(entry["status"] == "ok")
        tile = f"tile {list(options['tile'])} (a coverage run: {', '.join(plan.runs[i][2])})"
        if entry["status"] == "oob":
            check.status = "fail"
            check.first_mismatch = {"buffer": entry["buffer"], "index": entry["element"], "side": entry["side"],
                                    "expected": None, "actual": None, "tile": list(options["tile"])}
            check.message = f"with {tile}: {entry['message']}"
        elif entry["status"] == "ok" and check.status != "fail":
            probe = KernelCheck(check.file, check.kernel, check.id, check.device, "skipped")
            _compare(probe, k, expected, entry["outputs"])
            if probe.status == "fail":
                check.status, check.first_mismatch = "fail", dict(probe.first_mismatch, tile=list(options["tile"]))
                check.message = f"with {tile}: {probe.message}"
    check.coverage = plan.report(ran)
    for entry in check.coverage:
        if not entry["ran"] and notes:
            entry["why"] = "; ".join(notes)


def _symbols_back(k: KernelSpec) -> tuple:
    """The symbols of ``k`` the original's run reads back: the migrated kernel gives those it keeps
    as ``__device__`` globals back as outputs ``symbol:<name>``, compared with them."""
    return tuple((s.name, s.dtype, s.elements) for s in k.symbols)


def _compare(check: KernelCheck, k: KernelSpec, expected: dict, actual: dict) -> None:
    worst_abs = worst_rel = 0.0
    failures = []
    # the __device__ globals it leaves (outputs symbol:<name>), then the spec's outputs
    compared = [(f"symbol:{s.name}", s.name, s.dtype) for s in k.symbols
                if f"symbol:{s.name}" in actual and f"symbol:{s.name}" in expected]
    compared += [(a.name, a.name, a.dtype) for a in k.outputs]
    for key, name, dtype in compared:
        res = compare_arrays(expected[key], actual[key], dtype, k.tolerance, name=name)
        worst_abs = max(worst_abs, float(res.max_abs_err))
        worst_rel = max(worst_rel, float(res.max_rel_err))
        if not res.passed:
            failures.append(res)
    check.max_abs_err, check.max_rel_err = worst_abs, worst_rel
    if failures:
        first = failures[0]
        check.status = "fail"
        check.first_mismatch = {"buffer": first.name, "index": first.first_bad_index,
                                "expected": _plain(first.expected_value), "actual": _plain(first.actual_value)}
        check.message = "; ".join(f.message for f in failures)
    else:
        check.status = "pass"
        check.message = f"{len(compared)} output(s) equal within {k.tolerance}"


def _plain(value):
    try:
        return float(value)
    except (TypeError, ValueError):
        return None if value is None else str(value)


def trace_stem(prog: dict) -> Path:
    """Where a program's recording and run live under OUT (``traces/STEM``, ``run/STEM``)."""
    stem = Path(prog["main"]).with_suffix("")
    return Path(*stem.parts[1:]) if stem.is_absolute() else stem


def _programs_to_record(report: dict, run_args, out_dir: Path) -> dict:
    """The files whose program is run and recorded: file -> (program, its arguments). A program's
    ``cuda2tile.toml`` arguments win over ``--run``; without either, a recording already in
    ``OUT/traces`` is replayed (arguments None), else the program is not run."""
    import shlex

    from .traces import RUN_FILE

    out = {}
    for prog in report.get("programs", []):
        run = prog.get("run") or {}
        if "args" in run:
            args = shlex.split(run["args"])
        elif run_args is not None:
            args = list(run_args)
        elif (out_dir / "traces" / trace_stem(prog) / RUN_FILE).is_file():
            args = None
        else:
            continue
        for f in prog.get("files", []):
            out.setdefault(f, (prog, args))
    return out


def kernel_forms(report: dict, converted_only: bool = False) -> dict[str, dict[str, tuple]]:
    """report.json's kernels by file and name: (form, reason, tolerance, number of parameters,
    whether it runs warp-synchronous code as lockstep steps: note M3007)."""
    forms: dict[str, dict[str, tuple]] = {}
    for k in report.get("kernels", []):
        if not (converted_only and k["form"] == "unsupported"):
            lockstep = any(d.get("code") == "M3007" for d in k.get("diagnostics", []))
            forms.setdefault(k["file"], {})[k["kernel"]] = (k["form"], k.get("reason", ""), k.get("tolerance"),
                                                            len(k["params"]) if "params" in k else None, lockstep)
    return forms


def _original_source(out_dir: Path, entry: dict) -> Path | None:
    """The CUDA file of report.json's ``entry`` on this machine: where it was converted from, else
    its copy in OUT; None where neither is here."""
    for path in (entry.get("source"), entry.get("original") and out_dir / entry["original"]):
        if path and Path(path).is_file():
            return Path(path)
    return None


def check_report_program(out_dir: Path, prog: dict, entries: list[dict], forms: dict, args: list[str] | None, *,
                         kernels=None, device: str = "cpu", include_dirs=(), defines=(), record_limit: int = 2,
                         run_timeout: float = 120.0, budget: int | None = None,
                         record_on: str = "cpu", packed: bool = True, timings: dict | None = None,
                         fast_forward: bool = False, replay_timeout: float | None = None,
                         record_only: bool = False, build_only: bool = False) -> list[KernelCheck]:
    """The kernels of ``entries`` checked on one recorded run of ``prog`` (report.json ``programs``);
    ``packed``, ``timings``, ``record_only`` and ``build_only`` as for :func:`.trace_check.check_program`."""
    from .trace_check import TraceTarget, check_program

    targets = [TraceTarget(e["file"], out_dir / e["output"],
                           [n for n in forms.get(e["file"], {}) if kernels is None or n in kernels],
                           forms.get(e["file"], {}), _original_source(out_dir, e)) for e in entries]
    sources = [Path(p) for p in prog.get("sources", [])]
    build = prog.get("build") or {}
    stem = trace_stem(prog)
    if args is None:  # replay the recording in OUT: no sources, no build, no run
        return check_program(targets, None, None, trace_dir=out_dir / "traces" / stem, work_dir=out_dir / "run" / stem,
                             device=device, replay_timeout=replay_timeout)
    if not sources or not all(p.is_file() for p in sources):
        copies = [out_dir / e["original"] for e in entries if e.get("source") == prog.get("sources", [None])[0]]
        if len(sources) == 1 and copies:  # a one-file program: its copy inside OUT
            sources = copies
        else:
            return [KernelCheck(t.display, n, f"{n}@trace", device, "skipped", inputs="trace",
                                message=f"the sources of the program {prog.get('main')} are not on this machine "
                                        "to run it (record where they are, then check --from OUT)")
                    for t in targets for n in t.names]
    flags = merged(build.get("include_dirs", ()), build.get("defines", ()), include_dirs, defines)
    return check_program(targets, sources[0], args, units=sources[1:], trace_dir=out_dir / "traces" / stem,
                         work_dir=out_dir / "run" / stem, limit=record_limit, timeout=run_timeout, device=device,
                         include_dirs=flags[0], defines=flags[1], source_dir=sources[0].parent,
                         cwd=(prog.get("run") or {}).get("cwd", ""), budget=budget, record_on=record_on,
                         packed=packed, timings=timings, fast_forward=fast_forward, replay_timeout=replay_timeout,
                         record_only=record_only, build_only=build_only)


def _spec_error_checks(display: str, file_kernels: dict, specs, errors, all_names: set, shared: bool,
                       device: str, shown_path: str | None = None) -> list[KernelCheck]:
    """The error checks of a file's bad spec: a table's error costs its kernel, a file's error
    (no kernel named) every kernel of the file; a table naming a kernel the file does not have is
    M4105 (with ``--spec`` given for several files: none of them has it)."""
    import difflib

    from .kernel_check import spec_error_check
    from .spec import SPEC_NO_KERNEL, SpecError

    out = []
    for err in errors:
        if err.kernel and err.kernel in file_kernels:
            out.append(spec_error_check(display, err.kernel, device, err, shown_path))
        elif err.kernel and shared and err.kernel in all_names:
            continue  # a table of --spec about another file's kernel
        else:  # about the whole file, or a bad table naming no kernel of the codebase
            names = [err.kernel] if err.kernel else (list(file_kernels) or ["(spec)"])
            out += [spec_error_check(display, name, device, err, shown_path) for name in names]
    for k in specs:
        if k.name in file_kernels or (shared and k.name in all_names):
            continue
        close = difflib.get_close_matches(k.name, sorted(file_kernels), n=1, cutoff=0.5)
        hint = f" (did you mean '{close[0]}'?)" if close else \
            (f"; it has {', '.join(sorted(file_kernels))}" if file_kernels else "")
        err = SpecError(k.spec_path, f"kernel {k.name!r} is not a __global__ function of {display}{hint}",
                        f"kernel[{k.index}]", code=SPEC_NO_KERNEL, kernel=k.name)
        err.located(_name_line(k.spec_path, k.index))
        out.append(spec_error_check(display, k.name, device, err, shown_path))
    return out


def _shown_spec(spec_path: Path, entry: dict) -> str:
    """The spec as the user wrote it: ``NAME.toml`` beside the source when the spec in OUT is a
    copy of it (same bytes), else the path checked."""
    source = entry.get("source")
    if source and not spec_path.name.endswith(".auto.toml"):
        beside = Path(source).with_suffix(".toml")
        try:
            if beside.read_bytes() == spec_path.read_bytes():
                return str(beside)
        except OSError:
            pass
    return str(spec_path)


def _name_line(spec_path, index: int) -> int:
    """The line of ``name =`` in the ``index``-th [[kernel]] table of a spec file."""
    import re

    try:
        lines = Path(spec_path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError, TypeError):
        return 0
    seen, header = -1, 0
    for n, line in enumerate(lines, 1):
        if re.match(r"^\s*\[\[\s*kernel\s*\]\]", line):
            seen, header = seen + 1, n
        elif seen == index and re.match(r"^\s*name\s*=", line):
            return n
        elif seen > index:
            break
    return header


class CheckSetupError(Exception):
    """The output folder or the specs cannot be used (exit status 2)."""


def check_output_folder(out_dir: Path, report: dict, *, device: str = "cpu", kernels: set[str] | None = None,
                        spec: Path | None = None, seed: int | None = None, schedule: str = "forward",
                        include_dirs=(), defines=(), jobs: int = 1, timeout: float = DEFAULT_TIMEOUT,
                        on_done=None, run_args: list[str] | None = None, record_limit: int = 2,
                        run_timeout: float = 120.0, record_on: str = "cpu",
                        fast_forward: bool = False, max_check_bytes: int | None = None,
                        sanitize: tuple[str, ...] = ()) -> list[KernelCheck]:
    """Check every converted file of ``out_dir`` (as described by its ``report.json``).

    Each file's original source and spec travel inside the folder (``original`` and ``spec`` of
    its entry in ``report["files"]``), so the folder can be checked on another machine. With
    ``run_args``, a kernel no spec covers is checked on the launches of the program's own run
    with those arguments (:mod:`.trace_check`; traces under ``OUT/traces/``, the run in
    ``OUT/run/``), the first ``record_limit`` launches of each kernel, for ``run_timeout`` s.

    A bad spec costs only the kernels it is about: each is an ``error`` check with the spec's
    code (M41xx) and FILE:LINE (``code``, ``at``); the other kernels are checked. A spec whose
    buffers hold more than ``max_check_bytes`` (default 4 GiB) is refused (M4104). ``sanitize``:
    compute-sanitizer tools that the spec'd checks on the GPU run both sides under again
    (:mod:`.sanitize`; replays of a program's recorded launches are not sanitized).
    """
    from concurrent.futures import ThreadPoolExecutor

    from .spec import read_spec

    forms = kernel_forms(report)
    missing = {(k["file"], k["kernel"]): k["spec_missing"] for k in report.get("kernels", []) if k.get("spec_missing")}
    all_names = {name for f in forms.values() for name in f}
    jobs_list = []
    recorded = _programs_to_record(report, run_args, out_dir)  # file -> (program, its arguments)
    by_program: dict[str, list] = {}
    for entry in report.get("files", []):
        if not entry.get("original") or not entry.get("output"):
            continue
        spec_path = spec if spec is not None else (out_dir / entry["spec"] if entry.get("spec") else None)
        file_kernels = forms.get(entry["file"], {})
        if kernels is not None and not (set(file_kernels) & kernels):
            continue
        program = recorded.get(entry["file"])
        if spec_path is not None and spec_path.name.endswith(".auto.toml") and (run_args is not None or program):
            spec_path = None  # the program's own launches, not sizes guessed from its launch sites
        if spec_path is None and program is not None:
            if program[0]["main"] not in by_program:
                by_program[program[0]["main"]] = []
                jobs_list.append((("program", program), by_program[program[0]["main"]], []))
            by_program[program[0]["main"]].append(entry)
            continue
        if spec_path is None:
            jobs_list.append((entry, None, []))
            continue
        specs, errors = read_spec(spec_path, max_check_bytes)
        bad = _spec_error_checks(entry["file"], file_kernels, specs, errors, all_names, spec is not None, device,
                                 _shown_spec(spec_path, entry))
        specs = [s for s in specs if s.name in file_kernels and (kernels is None or s.name in kernels or s.id in kernels)]
        bad = [c for c in bad if kernels is None or c.kernel in kernels]
        jobs_list.append((entry, specs, bad))

    def one_program(program, entries):
        prog, args = program
        out = check_report_program(out_dir, prog, entries, forms, args, kernels=kernels, device=device,
                             include_dirs=include_dirs, defines=defines, record_limit=record_limit,
                             run_timeout=float(prog.get("run", {}).get("timeout", run_timeout)),
                             record_on=record_on, fast_forward=fast_forward, replay_timeout=timeout)
        if on_done:
            for entry in entries:
                on_done(entry, [c for c in out if c.file == entry["file"]])
        return out

    def one(item):
        entry, specs, bad = item
        if isinstance(entry, tuple):
            return one_program(entry[1], specs)
        if bad and not specs:
            if on_done:
                on_done(entry, bad)
            return bad
        file_forms = forms.get(entry["file"], {})
        toml = Path(entry["file"]).with_suffix(".toml")
        file_dirs, file_defines = file_flags(report, entry["file"], include_dirs, defines)  # as it was converted

        def unspecified(name):
            what = missing.get((entry["file"], name))
            detail = "; ".join(what) if what else "the launch configuration and buffer sizes"
            return KernelCheck(entry["file"], name, name, device, "skipped",
                               message=f"no spec: state in {toml}: {detail}")

        if specs is None and run_args is not None:
            from .trace_check import check_traces
            stem = Path(entry["file"]).with_suffix("")
            names = [name for name in file_forms if kernels is None or name in kernels]
            out = check_traces(out_dir / entry["output"], out_dir / entry["original"], names, file_forms,
                               list(run_args), trace_dir=out_dir / "traces" / stem, work_dir=out_dir / "run" / stem,
                               limit=record_limit, timeout=run_timeout, device=device, include_dirs=file_dirs,
                               defines=file_defines, display=entry["file"],
                               source_dir=Path(entry["source"]).parent if entry.get("source") else None,
                               replay_timeout=timeout)
        elif specs is None:
            out = [unspecified(name) for name in file_forms if kernels is None or name in kernels]
        else:
            out = check_module(out_dir / entry["output"], out_dir / entry["original"],
                               specs, file_forms, device=device, seed=seed, schedule=schedule,
                               include_dirs=file_dirs, defines=file_defines, timeout=timeout,
                               display=entry["file"], sanitize=sanitize)
            if spec is None and str(entry.get("spec", "")).endswith(".auto.toml"):
                for c in out:
                    c.inputs = "auto"  # sizes derived from the launch sites (migrate/autospec.py)
            covered = {s.name for s in specs} | {c.kernel for c in bad}
            out = bad + out
            out += [unspecified(name) for name in file_forms
                    if name not in covered and (entry["file"], name) in missing
                    and (kernels is None or name in kernels)]
        if on_done:
            on_done(entry, out)
        return out

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(one, jobs_list))
    return [c for group in results for c in group]
