"""Build every hybrid kernel of a converted output with nvcc, no GPU needed.

    python bench/hybrid_build.py OUT [--arch sm_90a] [--jobs 2] [--timeout 600] [--json FILE] [--new-since REPORT]

Reads ``OUT/report.json``, and for each module holding a kernel kept as CUDA (form ``hybrid``)
lowers and compiles its wrappers with TileLang for ``--arch`` (``migrate.runtime.hybrid_build``,
one child process per module). Prints a table, one row per hybrid kernel (a template's
instances each): built, or failed with nvcc's first error, then the totals and the errors
grouped by their message. A kernel template kept whole (no launch site the converter read names
an instance) is built for each instance its program compiles (nvcc's PTX entries of the file, their
names demangled); one whose program compiles none is "uninstantiated": its text compiled alone.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def modules_with_hybrids(out: Path, baseline: Path | None = None) -> list[tuple[Path, list[str]]]:
    """(module, its hybrid kernels) of ``out``; with ``baseline`` (a report.json), only the kernels
    that were not hybrid there."""
    report = json.loads((out / "report.json").read_text())
    outputs = {f["file"]: f["output"] for f in report["files"]}
    before = {(k["file"], k["kernel"]) for k in json.loads(baseline.read_text())["kernels"]
              if k["form"] == "hybrid"} if baseline else set()
    found: dict[str, list[str]] = {}
    for k in report["kernels"]:
        if k["form"] == "hybrid" and outputs.get(k["file"]) and (k["file"], k["kernel"]) not in before:
            found.setdefault(outputs[k["file"]], []).append(k["kernel"])
    return [(out / module, kernels) for module, kernels in sorted(found.items())]


def build(module: Path, arch: str, timeout: float, only=None) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO)] + [p for p in [os.environ.get("PYTHONPATH")] if p]))
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "migrate.runtime.hybrid_build", "--arch", arch,
                               *(["--only", ",".join(only)] if only else []), str(module)],
                              env=env, capture_output=True, text=True, timeout=timeout)
        last = [line for line in done.stdout.splitlines() if line.startswith("{")]
        result = json.loads(last[-1]).get(str(module), {}) if last else \
            {"(module)": "the build did not finish: " + (done.stderr.strip().splitlines() or ["no output"])[-1][:200]}
    except subprocess.TimeoutExpired:
        result = {"(module)": f"the build reached its time limit ({timeout:.0f} s)"}
    return {"result": result, "seconds": time.perf_counter() - start}


def shape(message: str) -> str:
    """An error's message without its file, line and quoted names, to group alike errors."""
    text = re.sub(r"^\S+:\d+: ", "", message)
    return re.sub(r'"[^"]*"|\'[^\']*\'', "...", text)[:110]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600, help="seconds per module")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--new-since", type=Path, metavar="REPORT",
                    help="only the kernels that were not hybrid in this report.json (a baseline's)")
    args = ap.parse_args()
    todo = modules_with_hybrids(args.out, args.new_since)
    start = time.perf_counter()
    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        done = list(pool.map(lambda item: build(item[0], args.arch, args.timeout,
                                                item[1] if args.new_since else None), todo))
    rows = []
    for (module, _kernels), outcome in zip(todo, done):
        rel = str(module.relative_to(args.out))
        for kernel, error in sorted(outcome["result"].items()):
            open_ = error is not None and error.startswith("uninstantiated:")
            rows.append({"module": rel, "kernel": kernel, "built": error is None, "uninstantiated": open_,
                         "error": None if open_ else error})
    width = max([len(f"{r['module']}:{r['kernel']}") for r in rows] + [10])
    for r in rows:
        said = "built" if r["built"] else "uninstantiated (its program compiles no instance; its text compiles)" \
            if r["uninstantiated"] else "FAILED " + r["error"]
        print(f"{r['module'] + ':' + r['kernel']:<{width}}  {said}")
    built = sum(r["built"] for r in rows)
    open_ = sum(r["uninstantiated"] for r in rows)
    failed = len(rows) - built - open_
    print(f"\n{len(rows)} hybrid kernels in {len(todo)} modules: {built} built, {open_} templates uninstantiated, "
          f"{failed} failed (nvcc for {args.arch}, {time.perf_counter() - start:.0f} s)")
    groups = Counter(shape(r["error"]) for r in rows if r["error"])
    for message, n in groups.most_common(20):
        print(f"{n:5d}  {message}")
    if args.json:
        args.json.write_text(json.dumps({"arch": args.arch, "rows": rows, "built": built, "uninstantiated": open_,
                                         "failed": failed}, indent=1) + "\n")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
