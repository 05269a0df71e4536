"""The replayed check on the real-code pool: each program whose Makefile gives run arguments runs
its own main() with them (on the CPU executor, or with ``--record-on cuda`` built by nvcc and run
on the GPU), its first launches of each kernel instance are recorded, and each recorded launch is
replayed into the migrated kernel (``--device cpu``: TileLang's C target; ``cuda``: the GPU).
Issue 13; runtime/trace_check.py.

    python bench/realworld_replay.py --out OUT [--pool build/realworld] [--timeout 60] [--limit 2]
                                     [--jobs 2] [--only name,name] [--json FILE]
                                     [--record-on cpu|cuda] [--device cpu|cuda] [--keep-traces]

OUT is the output of ``migrate convert build/realworld -o OUT -p build/realworld`` (on another
machine: the pool extracted anywhere, ``--pool`` naming it; the programs' paths are taken
relative to it). The traces and the runs go under OUT (``OUT/traces/``, ``OUT/run/``; a
program's trace bytes stay in one file, replayed in place, and are removed with its run folder
once it is replayed; ``--keep-traces`` packs them to travel instead; ``--budget`` bounds its
trace bytes). Prints one line per program and the totals: converted
kernels, how many got a replayed check, how many of those pass, and why the others were not
replayed. Nothing is written outside OUT and the sources are never changed.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _reason(message: str) -> str:
    """A short class of why a kernel was not replayed, for the totals."""
    for key, label in (("trace budget", "past the trace budget"), ("without launching it", "not launched by the run"),
                       ("no main()", "no main() in its file"), ("does not build", "original does not build"),
                       ("template instance", "template instance"), ("__constant__", "__constant__ symbols"),
                       ("same allocation", "aliasing arguments"), ("did not allocate", "pointer into host memory"),
                       ("null pointer", "null pointer"), ("not migrated", "not migrated"), ("simt", "simt form"),
                       ("hybrid: runs only on a GPU", "hybrid form (GPU only)"),
                       ("did not run", "original did not run"), ("arguments, the kernel takes", "argument count"),
                       ("recorded as", "argument kind"), ("not an array of its element", "element type"),
                       ("needs a CUDA GPU", "no GPU")):
        if key in message:
            return label
    return message[:60]


def _arguments(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:  # a Makefile's quoting that the shell would reject too: its words
        return text.split()


def _moved(path: str, pool: Path) -> str:
    """A path of the pool as converted, on this machine's copy of the pool."""
    marker = "/build/realworld/"
    return str(pool / path.split(marker, 1)[1]) if marker in path else path


def _one(job) -> tuple:
    case, prog, files, forms, opts = job
    from migrate.runtime import limits
    from migrate.runtime.checker import check_report_program, trace_stem
    from migrate.runtime.kernel_check import KernelCheck

    out = Path(opts["out"])
    stem = trace_stem(prog)
    start, timings = time.perf_counter(), {}
    limits.set_max_memory(opts.get("max_memory"))
    try:
        checks = check_report_program(out, prog, files, forms, _arguments(case["run_args"]),
                                      record_limit=opts["limit"], run_timeout=opts["timeout"], budget=opts["budget"],
                                      device=opts["device"], record_on=opts["record_on"], packed=opts["keep"],
                                      timings=timings, fast_forward=opts.get("fast_forward", False),
                                      record_only=opts.get("record_only", False),
                                      build_only=opts.get("build_only", False))
    except Exception as exc:  # a bug of the tool on one program: reported, the others go on
        checks = [KernelCheck(e["file"], n, n, opts["device"], "error",
                              message=f"internal error: {type(exc).__name__}: {exc}")
                  for e in files for n in forms[e["file"]]]
    if not opts["keep"]:  # the disk holds the pool's manifests, not every program's bytes
        for blob in [*(out / "traces" / stem).glob("**/launch-*.zlib"), *(out / "traces" / stem).glob("**/data.bin")]:
            blob.unlink()
        shutil.rmtree(out / "run" / stem, ignore_errors=True)
    rows = [{"program": case["name"], "main": prog["main"], "file": c.file, "kernel": c.kernel, "status": c.status,
             "message": c.message, "launch": c.launch, "run": c.run, "seconds": timings} for c in checks]
    return prog["main"], rows, time.perf_counter() - start, timings


#: seconds a program's job may take beyond its run's time-out (the build, the replays) before it is killed
JOB_SLACK = 420
#: the jobs' processes running now, by pid; set when the run is being stopped (their results are dropped)
_ACTIVE: dict = {}
_STOPPING = threading.Event()


def _stop_all(*_):
    """Stop every running job with its process group (a job runs in a session of its own, which
    outlives this process otherwise)."""
    _STOPPING.set()
    for pid in list(_ACTIVE):
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _in_process(job) -> tuple:
    """:func:`_one` in a process of its own, killed with its children past its time: a program or
    a replay that crashes, hangs or takes the memory costs only its own kernels."""
    case, prog, files, forms, opts = job
    start = time.perf_counter()
    with tempfile.NamedTemporaryFile("w", suffix=".json", dir=opts["out"], delete=False) as f:
        json.dump(job, f)
    if _STOPPING.is_set():
        return None
    p = subprocess.Popen([sys.executable, __file__, "--one", f.name], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True)
    _ACTIVE[p.pid] = p
    try:
        stdout, stderr = p.communicate(timeout=opts["timeout"] + JOB_SLACK)
        if p.returncode == 0 and stdout.strip():
            main_file, rows, seconds, timings = json.loads(stdout.strip().splitlines()[-1])
            return main_file, rows, seconds, timings
        why = f"the job's process ended with status {p.returncode}: {stderr.strip()[-300:]}"
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        why = f"the job took longer than {opts['timeout'] + JOB_SLACK:g} s and was stopped"
    finally:
        Path(f.name).unlink(missing_ok=True)
        _ACTIVE.pop(p.pid, None)
    if _STOPPING.is_set():
        return None
    rows = [{"program": case["name"], "main": prog["main"], "file": e["file"], "kernel": n, "status": "error",
             "message": f"internal error: {why}", "launch": None, "run": "", "seconds": {}}
            for e in files for n in forms[e["file"]]]
    return prog["main"], rows, time.perf_counter() - start, {}


def _ran(r: dict) -> bool:
    return r["run"] in ("ran to completion", "timed out")


def summarize(rows: list[dict], converted: int, outside: list, ran_keys: set | None = None) -> None:
    """The totals of a run: replayed, passing, and why the others were not replayed. ``ran_keys``
    (file, kernel): the kernels counted as in programs that ran (default: by each row's run), so
    that a re-run of some programs with other settings moves no kernel in or out of that count."""
    print(f"converted kernels in no program run here (no main() that includes them, or no run arguments): "
          f"{len(outside)}")
    replayed = [r for r in rows if r["status"] in ("pass", "fail")]
    passed = [r for r in replayed if r["status"] == "pass"]
    print(f"\nconverted kernels in the pool: {converted}; in programs with run arguments: {len(rows)}")
    print(f"replayed: {len(replayed)} ({100 * len(replayed) / max(1, converted):.0f} % of converted); "
          f"pass {len(passed)} ({100 * len(passed) / max(1, len(replayed)):.0f} % of replayed), "
          f"fail {len(replayed) - len(passed)}, error {sum(r['status'] == 'error' for r in rows)}")
    for reason, n in Counter(_reason(r["message"]) for r in rows if r["status"] == "skipped").most_common():
        print(f"  skipped: {n:4d}  {reason}")
    ran = [r for r in rows if ((r["file"], r["kernel"]) in ran_keys if ran_keys is not None else _ran(r))]
    ran_replayed = [r for r in ran if r["status"] in ("pass", "fail")]
    print(f"in programs whose run completed or reached the time-out: {len(ran)} kernels, replayed "
          f"{len(ran_replayed)} ({100 * len(ran_replayed) / max(1, len(ran)):.0f} %), pass "
          f"{sum(r['status'] == 'pass' for r in ran_replayed)}")
    launched = [r for r in ran if "without launching it" not in r["message"]]
    print(f"  of them launched by the run: {len(launched)}, replayed "
          f"{len(ran_replayed)} ({100 * len(ran_replayed) / max(1, len(launched)):.0f} %)")


def passing_programs(rows: list[dict], run_max: float | None = None) -> list[str]:
    """The programs of a run's rows with a kernel that passed, sorted; with ``run_max``, those whose
    run took at most that many seconds."""
    runs = {r["program"]: (r.get("seconds") or {}).get("run", 0.0) for r in rows if r["status"] == "pass"}
    return sorted(p for p, s in runs.items() if run_max is None or s <= run_max)


def main(argv=None) -> int:
    from migrate.runtime.checker import kernel_forms
    from migrate.runtime.limits import DEFAULT_MAX_MEMORY, parse_memory

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--pool", default=REPO / "build" / "realworld", type=Path)
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--limit", type=int, default=2)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default="")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--budget", type=int, default=64 << 20, help="trace bytes per program (default 64 MiB)")
    ap.add_argument("--keep-traces", action="store_true", help="keep each program's trace data (default: removed "
                    "once replayed, the manifest kept)")
    ap.add_argument("--record-on", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--fast-forward", action="store_true", help="CPU executor: a kernel's launches after its "
                    "recorded ones are skipped (migrate --fast-forward)")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    ap.add_argument("--record-only", action="store_true", help="record the programs' launches and replay none "
                    "(with --keep-traces: for migrate bench --traces, which replays and times them)")
    ap.add_argument("--build-only", action="store_true", help="build the programs (into the cache) and run none")
    ap.add_argument("--max-memory", type=parse_memory, default=DEFAULT_MAX_MEMORY,
                    help="each program's run and each replay on the CPU (default 8GiB, as migrate's --max-memory)")
    ap.add_argument("--summary", type=Path, nargs="+", default=None, help="print the totals of --json files and "
                    "stop; a kernel in several takes its row from the last (a re-run of some programs); the first file, the whole pass, says which kernels are in programs that ran")
    ap.add_argument("--merged", type=Path, default=None, help="with --summary: write the merged rows there")
    ap.add_argument("--stop-after", type=float, default=None, help="seconds: then the jobs still running are "
                    "stopped and left out of the results (a later --resume runs them)")
    ap.add_argument("--passing", type=Path, default=None, metavar="FILE", help="print the programs of a --json "
                    "file with a kernel that passed (comma-separated; with --run-max, those whose run took at most "
                    "that many seconds there) and stop: the programs bench/gpu_realworld.sh STEPS=time times")
    ap.add_argument("--run-max", type=float, default=None)
    ap.add_argument("--one", type=Path, default=None, help=argparse.SUPPRESS)  # one job, in a process of its own
    ap.add_argument("--resume", type=Path, default=None, help="a --json file of an earlier run that was stopped: its "
                    "programs are not run again, its rows are kept")
    args = ap.parse_args(argv)
    if args.one:
        from migrate.runtime.batch import die_with_parent
        die_with_parent()  # a job dies with the harness (it runs in a session of its own)
        print(json.dumps(_one(json.loads(args.one.read_text()))))
        return 0
    if args.passing:
        print(",".join(passing_programs(json.loads(args.passing.read_text())["rows"], args.run_max)))
        return 0
    if args.out is None and not args.summary:
        ap.error("--out is required")
    if args.summary:
        merged: dict = {}
        runs = [json.loads(path.read_text()) for path in args.summary]
        for done in runs:
            merged.update({(r["file"], r["kernel"]): r for r in done["rows"]})
        first = runs[0]  # the whole pass: its kernels outside every program
        rows = list(merged.values())
        if args.merged:
            args.merged.write_text(json.dumps({**first, "rows": rows}, indent=1))
        ran_keys = {(r["file"], r["kernel"]) for r in first["rows"] if _ran(r)}  # the whole pass says which ran
        summarize(rows, first["converted"], first.get("outside", []), ran_keys)
        return 0

    report = json.loads((args.out / "report.json").read_text())
    cases = json.loads((args.pool / "pool.json").read_text())["cases"]
    only = set(filter(None, args.only.split(",")))
    forms = kernel_forms(report, converted_only=True)
    entries = {e["file"]: e for e in report["files"] if e.get("output")}
    opts = {"out": str(args.out.resolve()), "limit": args.limit, "timeout": args.timeout, "budget": args.budget,
            "device": args.device, "record_on": args.record_on, "keep": args.keep_traces,
            "fast_forward": args.fast_forward, "max_memory": args.max_memory, "record_only": args.record_only,
            "build_only": args.build_only}
    jobs, covered = [], set()
    for case in cases:
        if case.get("run_args") is None or (only and case["name"] not in only):
            continue
        for prog in report.get("programs", []):
            if not prog["main"].startswith(case["folder"] + "/"):
                continue
            files = [entries[f] for f in prog["files"] if f in entries and f not in covered and forms.get(f)]
            covered |= {e["file"] for e in files}
            if files:
                prog = {**prog, "sources": [_moved(s, args.pool) for s in prog["sources"]],
                        "build": {**prog.get("build", {}), "include_dirs": [
                            _moved(d, args.pool) for d in prog.get("build", {}).get("include_dirs", [])]}}
                jobs.append((case, prog, files, {e["file"]: forms[e["file"]] for e in files}, opts))

    outside = [(e, n) for e in entries for n in forms.get(e, {}) if e not in covered]
    converted = sum(1 for k in report["kernels"] if k["form"] not in ("hybrid", "unsupported"))
    rows = []
    if args.resume and args.resume.is_file():
        rows = json.loads(args.resume.read_text())["rows"]
        done = {r["main"] for r in rows}
        jobs = [j for j in jobs if j[1]["main"] not in done]
        print(f"resuming {args.resume}: {len(done)} programs done, {len(jobs)} to run", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: (_stop_all(), sys.exit(143)))
    deadline = None if args.stop_after is None else time.monotonic() + args.stop_after
    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    futures = [pool.submit(_in_process, job) for job in jobs]
    try:
        for done in as_completed(futures, timeout=None if deadline is None else max(0.0, deadline - time.monotonic())):
            if done.result() is None:
                continue
            main_file, new, seconds, timings = done.result()
            statuses = Counter(r["status"] for r in new)
            steps = " ".join(f"{k} {v:.0f}" for k, v in timings.items())
            print(f"{main_file:50s} {seconds:6.1f} s  " + ", ".join(f"{s} {n}" for s, n in sorted(statuses.items()))
                  + (f"  ({steps})" if steps else ""), flush=True)
            rows += new
            if args.json:
                args.json.write_text(json.dumps({"converted": converted, "record_on": args.record_on,
                                                 "device": args.device, "rows": rows,
                                                 "outside": [f"{e}:{n}" for e, n in outside]}, indent=1))
    except TimeoutError:
        left = sum(not f.done() for f in futures)
        print(f"stopped after {args.stop_after:g} s: {left} programs not finished (--resume runs them)", flush=True)
        _stop_all()
    except BaseException:  # interrupted, or SIGTERM: no job outlives the run
        _stop_all()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    summarize(rows, converted, outside)
    return 0


if __name__ == "__main__":
    sys.exit(main())
