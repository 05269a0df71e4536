"""The pool's programs and their migrated modules, packed to travel to the GPU machine for
``bench/realworld_replay.py --record-on cuda --device cuda`` there (issue 13: programs sized for a
GPU, which the CPU executor cannot run in time, recorded and replayed on the GPU).

    python bench/gpu_pool_bundle.py --out OUT [--pool build/realworld] [--dest build/gpu_pool] [--only a,b]

Takes the programs with run arguments in pool.json that hold a converted kernel; writes
``DEST/pool.tar.xz`` (their folders and pool.json) and ``DEST/out.tar.xz`` (a folder ``out``:
report.json listing only them, their modules and originals). On the GPU machine, from the
repository root: ``mkdir -p build/realworld && tar xJf build/gpu_pool/pool.tar.xz -C
build/realworld && tar xJf build/gpu_pool/out.tar.xz -C build/gpu_pool``.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--pool", default=REPO / "build" / "realworld", type=Path)
    ap.add_argument("--dest", default=REPO / "build" / "gpu_pool", type=lambda p: Path(p).resolve())
    ap.add_argument("--only", default="", help="comma-separated pool folders (e.g. the programs a change converted)")
    args = ap.parse_args(argv)
    only = {x for x in args.only.split(",") if x}
    report = json.loads((args.out / "report.json").read_text())
    cases = json.loads((args.pool / "pool.json").read_text())["cases"]
    converted = {k["file"] for k in report["kernels"] if k["form"] != "unsupported"}
    folders, files = set(), set()
    for case in cases:
        if case.get("run_args") is None or (only and case["folder"] not in only):
            continue
        for prog in report.get("programs", []):
            if prog["main"].startswith(case["folder"] + "/") and converted & set(prog["files"]):
                folders.add(case["folder"])
                files |= set(prog["files"])
    if args.dest.exists():
        shutil.rmtree(args.dest)
    out = args.dest / "out"
    out.mkdir(parents=True)
    entries = []
    for e in report["files"]:
        if e["file"] in files and e.get("output"):
            for key in ("output", "original"):
                if e.get(key):
                    (out / e[key]).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(args.out / e[key], out / e[key])
            entries.append({**e, "spec": None})
    keep = {**report, "files": entries, "kernels": [k for k in report["kernels"] if k["file"] in files],
            "programs": [p for p in report["programs"] if p["main"].split("/")[0] in folders]}
    (out / "report.json").write_text(json.dumps(keep))
    subprocess.run(f"tar cf - {' '.join(sorted(folders))} pool.json | xz -T2 -6 > {args.dest / 'pool.tar.xz'}",
                   shell=True, check=True, cwd=args.pool)
    subprocess.run("tar cf - out | xz -T2 -6 > out.tar.xz", shell=True, check=True, cwd=args.dest)
    shutil.rmtree(out)
    size = sum(p.stat().st_size for p in args.dest.rglob("*") if p.is_file())
    print(f"{len(folders)} programs, {len(entries)} files -> {args.dest} ({size / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
