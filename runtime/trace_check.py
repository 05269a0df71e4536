"""Check the kernels of a program that has no spec on the program's own launches.

:func:`check_traces` builds the original program with the CPU executor, runs its ``main()`` with
the user's arguments in a scratch folder (recording the first launches of each kernel into
``traces/``, :mod:`.traces`), and replays each recorded launch into the migrated kernel
(:mod:`.replay`). A kernel's check passes when every replayed launch matches and at least one
was replayed; it fails on the first launch that differs, naming the buffer and the launch.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from .cuda_gpu import gpu_visible
from .kernel_check import RUN_CODES, KernelCheck, form_skip

__all__ = ["TraceTarget", "check_program", "check_traces"]


@dataclass
class TraceTarget:
    """The kernels of one converted file to check on a program's recorded launches."""

    display: str            # the file as report.json names it
    module: Path            # its migrated module
    names: list[str]        # its kernels to check
    forms: dict             # kernel -> (form, reason, tolerance, number of parameters) from report.json
    original: Path | None = None  # the CUDA file its kernels are defined in, to run one alone

    def launches_of(self, name: str, launches) -> list:
        """The recorded ``launches`` of kernel ``name`` of this file: a launch of an overload of the
        same name in another file (another number of arguments) is not one of them; a launch past
        the trace budget, whose arguments were not recorded, may be (it is reported as such)."""
        form = self.forms.get(name) or ()
        arity = form[3] if len(form) > 3 else None
        return [L for L in launches if L.name == name and (arity is None or L.skipped or len(L.args) == arity)]


def _spellings(targets) -> dict:
    """Symbol -> the C++ naming it, of the symbols the targets' kernels (and their instances) take
    whose names are not C++ (a variable template's specialisation: ``Signature.spellings``), which
    the recording then holds; {} where a module cannot be read."""
    from .tilelang_side import load_module
    out = {}
    for t in targets:
        try:
            module = load_module(t.module)
        except Exception:  # a module that does not import: its kernels' replays say why
            continue
        todo = list(getattr(module, "KERNELS", {}).values())
        while todo:
            sig = todo.pop()
            out.update(dict(getattr(sig, "spellings", ())))
            todo += [inst[-1] for inst in getattr(sig, "instances", ())]
    return out


def check_traces(module: Path, cu_path: Path, names: list[str], forms: dict, run_args: list[str], *,
                 trace_dir: Path, work_dir: Path, limit: int = 2, timeout: float = 120.0, device: str = "cpu",
                 include_dirs=(), defines=(), display: str = "", source_dir: Path | None = None,
                 budget: int | None = None, units=(), replay_timeout: float | None = None) -> list[KernelCheck]:
    """One check per kernel of ``names`` (in ``module``, converted from ``cu_path``) from the
    launches of the program's run; see :func:`check_program`."""
    target = TraceTarget(display or cu_path.name, module, list(names), forms, Path(cu_path))
    return check_program([target], cu_path, run_args, units=units, trace_dir=trace_dir, work_dir=work_dir,
                         limit=limit, timeout=timeout, device=device, include_dirs=include_dirs,
                         defines=defines, source_dir=source_dir, budget=budget, replay_timeout=replay_timeout)


def check_program(targets: list[TraceTarget], main: Path | None, run_args: list[str] | None, *, trace_dir: Path,
                  work_dir: Path, units=(), limit: int = 2, timeout: float = 120.0, device: str = "cpu",
                  include_dirs=(), defines=(), source_dir: Path | None = None, budget: int | None = None,
                  cwd: str = "", record_on: str = "cpu", packed: bool = True,
                  timings: dict | None = None, fast_forward: bool = False,
                  replay_timeout: float | None = None, record_only: bool = False,
                  build_only: bool = False) -> list[KernelCheck]:
    """One check per kernel of ``targets`` from one run of the program whose ``main()`` is in
    ``main`` and whose other translation units are ``units``. The program runs in ``work_dir``
    (``cwd`` below it), into which the files of ``source_dir`` (the program's folder, for the
    input files it reads) are copied: the sources are never changed. With ``run_args`` None the
    recording already in ``trace_dir`` is replayed (no build, no run: traces travel). With
    ``record_on="cuda"`` the program is built by nvcc and recorded on the GPU (:mod:`.gpu_record`).
    ``packed``: the recording is packed to travel (:func:`.traces.pack`); else its bytes stay in
    one file, replayed in place. ``timings``, where given, receives the seconds of each step
    (build, run, replay). ``fast_forward``: on the CPU executor, the launches of a kernel after its
    recorded ones are skipped (:func:`.traces.record`). ``replay_timeout``: each launch is replayed
    in a worker process, within that many seconds (:func:`isolated`); None replays in this process.
    ``record_only``: the program is recorded and nothing replayed (``migrate bench --traces`` replays
    and times the recording later); the checks stay skipped, saying so. ``build_only``: the program is
    built (into the cache) and not run."""
    from .build import BuildError
    from .cuda_cpu import compile_cpu
    from .replay import replay
    from .traces import record

    target_dev = "c" if device == "cpu" else "cuda"
    checks, todo = {}, []
    for t in targets:
        for n in t.names:
            check = checks[(t.display, n)] = KernelCheck(t.display, n, f"{n}@trace", device, "skipped", inputs="trace")
            form, reason, *rest = t.forms.get(n, (None, ""))
            skip = form_skip(form, device, reason, lockstep=len(rest) > 2 and rest[2])
            if skip:
                check.message = skip
            else:
                todo.append((t, n))
    if not todo:
        return list(checks.values())
    start = time.perf_counter()
    if run_args is None:
        from .traces import load
        loaded = load(trace_dir)
        if loaded is None:
            for t, n in todo:
                checks[(t.display, n)].message = (f"no recording in {trace_dir}: record the program's launches "
                                                  "with --run ARGS where its sources are")
            return list(checks.values())
        run_args, rec = loaded
        return _replay_all(checks, todo, rec, run_args, target_dev, time.perf_counter() - start, replay,
                           timeout=replay_timeout)
    program = Path(main).name + (f" (+{len(units)} units)" if units else "")
    if source_dir is not None and Path(source_dir).is_dir():  # its quoted includes sit beside the original
        include_dirs = tuple(include_dirs) + (str(source_dir),)
    if record_on == "cuda" and not gpu_visible():
        for t, n in todo:
            checks[(t.display, n)].status = "error"
            checks[(t.display, n)].message = "--record-on cuda needs a CUDA GPU on this machine; none was found"
        return list(checks.values())
    timings = {} if timings is None else timings
    try:
        if record_on == "cuda":
            from .gpu_record import build_program
            lib = [str(build_program(main, units, include_dirs=include_dirs, defines=defines))]
        else:
            lib = compile_cpu(main, [], include_dirs=include_dirs, defines=defines, units=units,
                              spellings=_spellings(targets))
    except BuildError as exc:
        for t, n in todo:
            checks[(t.display, n)].status, checks[(t.display, n)].run = "error", "does not build"
            checks[(t.display, n)].message = f"the original program ({program}) does not build: {exc}"
        return list(checks.values())
    timings["build"] = round(time.perf_counter() - start, 2)
    if build_only:
        for t, n in todo:
            checks[(t.display, n)].message = "built only"
        return list(checks.values())
    if record_on != "cuda" and not lib.main_entry:
        for t, n in todo:
            checks[(t.display, n)].message = f"no spec, and {program} has no main() to run: state the launch in a spec"
        return list(checks.values())
    work_dir.mkdir(parents=True, exist_ok=True)
    _link_inputs(source_dir, work_dir)
    run_dir = work_dir / cwd if cwd else work_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    extra = {"budget": budget} if budget is not None else {}
    if fast_forward and record_on != "cuda":
        extra["fast_forward"] = True
    ran = time.perf_counter()
    rec = record(lib, run_args, trace_dir, limit=limit, timeout=timeout, cwd=run_dir, packed=packed, **extra)
    timings["run"], ran = round(time.perf_counter() - ran, 2), time.perf_counter()
    if record_only:
        for t, n in todo:
            checks[(t.display, n)].run = how_it_ran(rec.status, rec.stderr)
            checks[(t.display, n)].message = f"recorded only: {len(t.launches_of(n, rec.launches))} launches"
        return list(checks.values())
    out = _replay_all(checks, todo, rec, run_args, target_dev, time.perf_counter() - start, replay,
                      timeout=replay_timeout)
    timings["replay"] = round(time.perf_counter() - ran, 2)
    failed = [c for c in out if c.status == "fail"]
    if failed:  # is it the migration, or does the original itself not repeat its launch?
        failed = [c for c in failed if not _flag_order_dependent(c, targets, rec, include_dirs, defines, timeout)]
    if failed:
        again = record(lib, run_args, trace_dir / "again", limit=limit, timeout=timeout, cwd=run_dir, packed=packed,
                       **({"schedule": "reverse"} if record_on != "cuda" else {}), **extra)
        for check in failed:
            _flag_unrepeatable(check, rec, again)
    return out


def _flag_order_dependent(check: KernelCheck, targets, rec, include_dirs, defines, timeout: float) -> bool:
    """A failed replay whose original kernel, run alone on the launch's recorded inputs, leaves
    other results with its threads in reverse order than in forward order (:mod:`.original_order`):
    the original's finding, an ``error`` that says so (the tolerance unchanged). Returns whether
    it was flagged; where the kernel cannot be run alone, a finding says why."""
    from .original_order import order_dependence

    target = next((t for t in targets if t.display == check.file), None)
    launch = None if target is None else next(
        (L for L in target.launches_of(check.kernel, rec.launches) if L.number == check.launch and not L.skipped), None)
    if target is None or target.original is None or launch is None:
        return False
    verdict = order_dependence(target.module, launch, target.original, include_dirs=include_dirs,
                               defines=defines, timeout=min(timeout, 120.0))
    if verdict.status == "unjudged":
        check.findings.append(f"the original kernel's order dependence was not judged: {verdict.message}")
    if verdict.status != "differs":
        return False
    check.status = "error"
    check.findings.append(f"original order-dependent: run alone on recorded launch {launch.number}'s inputs, "
                          f"{launch.name} leaves other results with its threads in reverse order than in forward "
                          f"order ({verdict.message}; alone in forward order it "
                          f"{'left' if verdict.reproduced else 'did not leave'} what the recording holds)")
    check.message = (f"the original kernel computes its recorded launch {launch.number} differently with its "
                     "threads in another order (threads that read what others write without a barrier between, "
                     "a read of memory no thread wrote, or atomics in float order): the replay cannot judge the migration; tolerance unchanged. "
                     f"Forward against reverse: {verdict.message}. Replay said: {check.message}")
    return True


def _flag_unrepeatable(check: KernelCheck, first, again) -> None:
    """A failed replay whose original launch left other bytes when the program ran again (on the
    CPU executor with its threads and blocks in reverse order; on a GPU as the GPU schedules
    them): a race, atomics in float order, a read of uninitialised memory. That is the original's
    finding: the migrated kernel cannot be judged on it."""
    def key(L):
        return (L.kernel, L.instance, L.number)

    runs = {key(L): L for L in again.launches if not L.skipped}
    for L in first.launches:
        if L.name != check.kernel or L.number != check.launch or L.skipped or key(L) not in runs:
            continue
        other = runs[key(L)]
        if other.before != L.before or other.globals_before != L.globals_before:
            check.findings.append("the program's inputs to this launch differ between two runs (seeded from the "
                                  "clock, or an earlier kernel whose result depends on its threads' order?): the "
                                  "original's repeatability was not judged")
            return
        moved = [f"allocation {a}" for a in L.after if other.after.get(a) != L.after[a]]
        moved += [f"__device__ global '{g}'" for g in L.globals_after
                  if other.globals_after.get(g) != L.globals_after[g]]
        if moved:
            check.status = "error"
            check.findings.append(f"original not repeatable: launch {L.number} of {L.kernel} left different bytes in "
                                  f"{moved[0]} when its threads ran in reverse order")
            check.message = (f"the original kernel does not repeat its own recorded launch {L.number} (a race, atomics "
                             "in float order or a read of uninitialised memory): the replay cannot judge the "
                             f"migration; tolerance unchanged. Replay said: {check.message}")
        return


class ReplayDidNotRun(RuntimeError):
    """A replay's worker crashed, hung or ran out of memory on this launch (the message has the code)."""


def isolated(todo: list, launches, target: str, timeout: float):
    """Replay every launch of the ``todo`` kernels in worker processes (:mod:`.batch`) and return
    a ``replay(module, launch, target)`` that looks the results up: a launch whose migrated kernel
    crashes, hangs past ``timeout`` or runs out of memory costs only itself."""
    from . import limits
    from .batch import run_batch

    runs, keys = [], {}
    for t, n in todo:
        for L in t.launches_of(n, launches):
            keys[(str(t.module), id(L))] = key = len(runs)
            runs.append({"key": key, "module": str(t.module), "launch": L, "target": target})
    results = run_batch("migrate.runtime.replay_worker", None, runs, timeout=timeout,
                        max_memory=limits.max_memory() if target == "c" else None,
                        startup=max(timeout, 300.0), fork=target == "c") if runs else {}

    def lookup(module, L, _target):
        entry = results.get(keys.get((str(module), id(L))))
        if entry is None:
            from .replay import replay
            return replay(module, L, _target)
        if entry["status"] == "ok":
            return entry["replay"]
        code = RUN_CODES.get(entry["status"])
        raise ReplayDidNotRun((f"{code}: " if code else "") + f"({entry['status']}): {L.name}: {entry['message']}")
    return lookup


def how_it_ran(status: int | None, stderr: str) -> str:
    """How a recording run ended, in words for report.json's ``check.run``: ``ran to completion``,
    ``timed out``, ``ran out of memory (...)`` (an allocation refused under --max-memory: the CPU
    executor's cudaMalloc names it on stderr), ``crashed (SIGSEGV, ...)`` (the CPU executor's crash
    report), or ``exited with status N`` / ``killed by SIG...``."""
    from . import limits

    if status == 0:
        return "ran to completion"
    if status is None:
        return "timed out"
    if limits.out_of_memory(status, stderr):
        cap = limits.max_memory()
        return "ran out of memory" + (f" (limit {limits.show_memory(cap)}, --max-memory)" if cap else "")
    from .executor import parse_reports

    report = next((r for r in reversed(parse_reports(stderr)) if r.get("kind") == "signal"), {})
    if "signal" in report:
        where = " in a kernel" if report.get("in_kernel") == "1" else ""
        access = f", a {report['access']} at {report.get('addr', '?')}" if "access" in report else ""
        return f"crashed ({report['signal']}{access}{where})"
    return limits.exit_reason(status)


def _replay_all(checks: dict, todo: list, rec, run_args: list[str], target_dev: str, seconds: float, replay,
                timeout: float | None = None):
    ran = how_it_ran(rec.status, rec.stderr)
    if timeout is not None:  # every replay in worker processes under the time limit
        replay = isolated(todo, rec.launches, target_dev, timeout)
    for check in checks.values():  # the kernels not replayable on this device ran in the program too
        check.run = ran
    for t, n in todo:
        check = checks[(t.display, n)]
        check.seconds = seconds
        launches = t.launches_of(n, rec.launches)
        if not launches:
            other = any(L.name == n for L in rec.launches)
            check.message = (f"the program ({' '.join(run_args) or 'no arguments'}) {ran} without launching it"
                             + (" (only an overload of the same name, with other parameters)" if other else ""))
            continue
        _judge(check, launches, t.module, target_dev, run_args, ran, replay)
    return list(checks.values())


def _judge(check: KernelCheck, launches, module: Path, target: str, run_args, ran: str, replay) -> None:
    """``check`` from replaying ``launches`` into ``module``'s kernel: the first that fails, or all equal."""
    replays = []
    for L in launches:
        try:
            replays.append(replay(module, L, target))
        except Exception as exc:  # the migrated kernel did not run
            check.status, check.launch = "error", L.number
            if isinstance(exc, ReplayDidNotRun) and str(exc)[:1] == "M":  # the code first
                code, _, rest = str(exc).partition(": ")
                check.message = f"{code}: launch {L.number}: the migrated kernel did not run {rest}"
            else:
                check.message = f"launch {L.number}: the migrated kernel did not run: {type(exc).__name__}: {exc}"
            return
    failed = [r for r in replays if r.status == "fail"]
    passed = [r for r in replays if r.status == "pass"]
    if failed:
        r = failed[0]
        bad = next((res for res in r.results if not res.passed), None)  # none: a write outside a buffer
        check.status, check.launch = "fail", r.launch
        if bad is not None:
            check.max_abs_err, check.max_rel_err = bad.max_abs_err, bad.max_rel_err
            check.tolerance = bad.tolerance
        check.message = f"recorded launch {r.launch} of {len(launches)}: {r.message}"
    elif passed:
        worst = [res for r in passed for res in r.results]
        check.status, check.launch = "pass", passed[0].launch
        check.max_abs_err = max((res.max_abs_err or 0.0 for res in worst), default=0.0)
        check.max_rel_err = max((res.max_rel_err or 0.0 for res in worst), default=0.0)
        check.tolerance = ", ".join(sorted({res.tolerance for res in worst}))
        check.message = (f"{len(passed)} recorded launch{'es' if len(passed) > 1 else ''} of the program's "
                         f"run ({' '.join(run_args) or 'no arguments'}, {ran}) replayed equal")
    else:
        check.message = f"recorded launch {replays[0].launch}: {replays[0].message}"


#: the most bytes of the program's folder copied into its working folder
INPUT_BUDGET = 256 << 20


def _link_inputs(source_dir: Path | None, work_dir: Path, budget: int = INPUT_BUDGET) -> None:
    """The files of the program's folder (its input files), copied into its working folder up to
    ``budget`` bytes: the run may write where it likes there, the sources stay untouched."""
    import shutil

    if source_dir is None or not Path(source_dir).is_dir():
        return
    left = budget
    for entry in sorted(Path(source_dir).rglob("*")):
        if not entry.is_file() or entry.is_symlink():
            continue
        rel = entry.relative_to(source_dir)
        target = work_dir / rel
        size = entry.stat().st_size
        if target.exists() or size > left:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(entry, target)
        left -= size
