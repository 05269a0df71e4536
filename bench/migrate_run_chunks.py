"""`migrate run` over a packed build (bench/migrate_build_pool.py's bundle, unpacked), in chunks
of programs under a wall-clock budget, so that a run cut off by the device tool's 10 minutes per
command still leaves its results: each chunk's rows are written as it ends (DEST/chunks/),
chunks done by an earlier call on the same machine are kept, and what the budget left out is
listed as "not run". Writes RES/pool_migrate_run.json (run.json's shape) and prints the table
(bench/migrate_run_table.py).

    python bench/migrate_run_chunks.py DEST RES [--timeout 45] [--jobs 4] [--chunk 8] [--budget 500]
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _table_module():
    spec = importlib.util.spec_from_file_location("bench_migrate_run_table", REPO / "bench" / "migrate_run_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def summary(rows: list[dict]) -> dict:
    return {"programs": len(rows), "equal": sum(r["status"] == "equal" for r in rows),
            "mismatch": sum(r["status"] == "mismatch" for r in rows),
            "timeout": sum(r["status"] == "timeout" for r in rows),
            "not_built": sum(r["status"] == "not built" for r in rows),
            "error": sum(r["status"] in ("error", "not run") for r in rows),
            "varying": sum(r.get("comparison", {}).get("lines_varying", 0) > 0 for r in rows),
            "launches_migrated": sum(r.get("launches", {}).get("migrated", 0) for r in rows),
            "launches_original": sum(r.get("launches", {}).get("original", 0) for r in rows)}


def run_chunks(dest: Path, res: Path, timeout: float, jobs: int, chunk: int, budget: float, runner=None,
               control: bool = False) -> dict:
    """Every program of DEST/build.json run (``runner``: migrate.dropin.run.run_folder), ``chunk``
    programs a call, until ``budget`` seconds have passed; the merged result."""
    if runner is None:
        from migrate.dropin.run import run_folder as runner
    built = json.loads((dest / "build.json").read_text())["programs"]
    done_dir = dest / "chunks"
    done_dir.mkdir(exist_ok=True)
    start = time.monotonic()
    rows: dict = {}
    for f in sorted(done_dir.glob("chunk-*.json")):  # an earlier call's
        for r in json.loads(f.read_text()):
            rows[r["program"]] = r
    todo = [r["program"] for r in built if r["program"] not in rows]
    for i in range(0, len(todo), chunk):
        if i and time.monotonic() - start > budget:  # (each call runs one chunk at least)
            break
        part = todo[i:i + chunk]
        result = runner(dest, None, set(part), timeout, jobs=jobs, **({"control": True} if control else {}))
        (done_dir / f"chunk-{len(list(done_dir.glob('chunk-*.json'))):03d}.json").write_text(
            json.dumps(result["programs"]) + "\n")
        for r in result["programs"]:
            rows[r["program"]] = r
    ordered = []
    for r in built:
        ordered.append(rows.get(r["program"]) or {"program": r["program"], "dir": r["dir"], "status": "not run",
                                                   "message": f"past the run's budget of {budget:g} s: run again"})
    out = {"tool": "cuda2tile", "build": str(dest), "programs": ordered, "summary": summary(ordered),
           "seconds": round(time.monotonic() - start, 1)}
    res.mkdir(parents=True, exist_ok=True)
    (res / "pool_migrate_run.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dest", type=Path)
    ap.add_argument("res", type=Path)
    ap.add_argument("--timeout", type=float, default=45.0, help="seconds each executable may run")
    ap.add_argument("--jobs", type=int, default=4, help="programs run at once")
    ap.add_argument("--chunk", type=int, default=8, help="programs per chunk")
    ap.add_argument("--budget", type=float, default=480.0, help="no chunk starts after this many seconds")
    ap.add_argument("--control", action="store_true", help="each original a second time (migrate run --control)")
    args = ap.parse_args(argv)
    out = run_chunks(args.dest, args.res, args.timeout, args.jobs, args.chunk, args.budget, control=args.control)
    text = _table_module().table(out)
    (args.res / "pool_migrate_run_table.txt").write_text(text + "\n")
    print(text)
    left = sum(r["status"] == "not run" for r in out["programs"])
    if left:
        print(f"\n{left} programs not run within the budget: run the same command again on this machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
