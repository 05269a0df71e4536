"""``migrate run DIR [-- ARGS]``: on a GPU, run each program's original and rebuilt executable
(``migrate build``'s DIR) with the same arguments (ARGS, else the program's own from report.json)
and compare their exit status, standard output and verdicts (:mod:`.compare_output`); the rebuilt
program's stderr says how many launches ran migrated code. With ``--control`` the original runs a
second time, after the rebuilt one: lines its two runs print differently vary run to run and are
not held against the rebuilt program. Writes ``DIR/run.json``."""
from __future__ import annotations

import concurrent.futures as cf
import json
import shlex
import time
from pathlib import Path

from .compare_output import compare_outputs, dropin_counts


def _execute(exe: Path, args: list[str], cwd: Path, timeout: float) -> dict:
    """One executable run to its end (through runtime.limits: its own process group, killed past
    ``timeout``): its exit status (None past the time), stdout, stderr and seconds."""
    from migrate.runtime import limits

    start = time.perf_counter()
    status, out, err = limits.capture([str(exe), *args], timeout=timeout, cwd=cwd)
    if status is None:
        err = (err + f"\ntimed out after {timeout:g} s").strip()
    return {"status": status, "stdout": out, "stderr": err, "seconds": round(time.perf_counter() - start, 3)}


def run_folder_of(dest: Path, row: dict) -> Path:
    """Where a program runs: its own folder (its data files), ``run_cwd`` as build.json has it (a
    relative one is relative to DIR, as a packed build names it), where this machine has it; else
    its build folder."""
    base = dest / row["dir"]
    if not row.get("run_cwd"):
        return base
    cwd = Path(row["run_cwd"])
    if not cwd.is_absolute():
        cwd = dest / cwd
    return cwd if cwd.is_dir() else base


def run_program(dest: Path, row: dict, args: list[str] | None, timeout: float, control: bool = False) -> dict:
    """One program of build.json run both ways and compared (``control``: the original a second
    time, last)."""
    dest = Path(dest).absolute()  # the executables run in another folder: a relative DIR would not name them
    base = dest / row["dir"]
    result = {"program": row["program"], "dir": row["dir"]}
    if row.get("status") != "built":
        result.update(status="not built", message=row.get("status", ""))
        return result
    if args is None:
        args = shlex.split(row.get("run_args") or "")
    result["args"] = list(args)
    cwd = run_folder_of(dest, row)
    original = _execute(base / "original", list(args), cwd, timeout)
    rebuilt = _execute(base / "rebuilt", list(args), cwd, timeout)
    again = _execute(base / "original", list(args), cwd, timeout) if control and original["status"] is not None \
        else None
    tolerance = row.get("tolerance") or "fp32"
    cmp = compare_outputs(original["stdout"], rebuilt["stdout"], tolerance, (original["status"], rebuilt["status"]),
                          programs=(str(base / "original"), str(base / "rebuilt")),
                          control=again["stdout"] if again is not None and again["status"] == original["status"]
                          else None)
    counts = dropin_counts(rebuilt["stderr"])
    total = counts.pop("total", (0, 0))
    result.update(status="equal" if cmp.equal else "mismatch", comparison=cmp.as_dict(),
                  launches={"migrated": total[0], "original": total[1], "by_kernel": counts},
                  original={k: v for k, v in original.items() if k != "stdout"} | {"stdout_tail": original["stdout"][-2000:]},
                  rebuilt={k: v for k, v in rebuilt.items() if k != "stdout"} | {"stdout_tail": rebuilt["stdout"][-2000:]})
    if again is not None:
        result["control"] = {k: v for k, v in again.items() if k not in ("stdout", "stderr")} | \
            {"lines_varying": cmp.lines_varying}
    if original["status"] is None or rebuilt["status"] is None:
        result["status"] = "timeout"
    for side in ("original", "rebuilt"):
        result[side]["stderr"] = result[side]["stderr"][-2000:]
    return result


def _run_safely(dest: Path, row: dict, args, timeout: float, control: bool = False) -> dict:
    """:func:`run_program`, an executable that cannot start (missing, not executable here) being
    that program's row: the other programs go on."""
    try:
        return run_program(dest, row, args, timeout, control)
    except OSError as exc:
        return {"program": row["program"], "dir": row["dir"], "status": "error",
                "message": f"{type(exc).__name__}: {exc}"}


def run_folder(dest: Path, args: list[str] | None, programs: set | None = None, timeout: float = 300.0,
               progress=None, jobs: int = 1, control: bool = False) -> dict:
    """Every program of ``dest/build.json`` (or those ``programs`` names) run both ways; ``jobs``
    programs at once (each its original, then its rebuilt executable, then with ``control`` its
    original again): the rows stay in build.json's order."""
    built = json.loads((dest / "build.json").read_text())
    todo = [row for row in built.get("programs", [])
            if not programs or row["program"] in programs or row["dir"] in programs]
    rows = []
    with cf.ThreadPoolExecutor(max(1, jobs)) as pool:
        futures = [pool.submit(_run_safely, dest, row, args, timeout, control) for row in todo]
        for fut in cf.as_completed(futures):
            if progress is not None:
                progress(fut.result())
        rows = [fut.result() for fut in futures]
    summary = {"programs": len(rows), "equal": sum(r["status"] == "equal" for r in rows),
               "mismatch": sum(r["status"] == "mismatch" for r in rows),
               "timeout": sum(r["status"] == "timeout" for r in rows),
               "not_built": sum(r["status"] == "not built" for r in rows),
               "error": sum(r["status"] == "error" for r in rows),
               "varying": sum(r.get("comparison", {}).get("lines_varying", 0) > 0 for r in rows),
               "launches_migrated": sum(r.get("launches", {}).get("migrated", 0) for r in rows),
               "launches_original": sum(r.get("launches", {}).get("original", 0) for r in rows)}
    out = {"tool": "cuda2tile", "build": str(dest), "programs": rows, "summary": summary}
    (dest / "run.json").write_text(json.dumps(out, indent=1) + "\n")
    return out
