"""A folder of recorded traces small enough to travel to the GPU machine (64 MiB a call, TileLang
included), for replaying on the H200 the launches recorded here on the CPU (issue 13:
``migrate check --from BUNDLE --device cuda`` gives the same verdicts).

    python bench/gpu_replay_bundle.py --out OUT --rows REPLAY.json --dest build/gpu_replay [--max-mb 8]

OUT is a converted folder whose traces were kept (``bench/realworld_replay.py --keep-traces``);
REPLAY.json what that run wrote. Programs whose kernels got a replayed verdict on the CPU are
taken, smallest recording first, until ``--max-mb`` of trace files; the bundle holds their
migrated modules, the originals' copies, the traces and ``cpu_verdicts.json`` (kernel -> the CPU
verdict), and a ``report.json`` listing only them. bench/gpu_replay.sh replays it on the GPU.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--rows", required=True, type=Path)
    ap.add_argument("--dest", required=True, type=Path)
    ap.add_argument("--max-mb", type=float, default=8.0)
    args = ap.parse_args(argv)

    from migrate.runtime.checker import trace_stem

    report = json.loads((args.out / "report.json").read_text())
    rows = json.loads(args.rows.read_text())["rows"]
    verdicts = {(r["file"], r["kernel"]): r["status"] for r in rows}
    judged = {r["file"] for r in rows if r["status"] in ("pass", "fail", "error")}
    chosen, total = [], 0
    sized = []
    for prog in report.get("programs", []):
        if not judged & set(prog["files"]):
            continue
        tdir = args.out / "traces" / trace_stem(prog)
        if not (tdir / "run.json").is_file():
            continue
        size = sum(p.stat().st_size for p in tdir.glob("launch-*.zlib"))
        sized.append((size, prog, tdir))
    for size, prog, tdir in sorted(sized, key=lambda x: x[0]):
        if total + size > args.max_mb * (1 << 20):
            continue
        chosen.append((prog, tdir))
        total += size
    if args.dest.exists():
        shutil.rmtree(args.dest)
    files = {f for prog, _ in chosen for f in prog["files"]}
    entries = []
    for e in report["files"]:
        if e["file"] not in files or not e.get("output"):
            continue
        for key in ("output", "original"):
            if e.get(key):
                (args.dest / e[key]).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(args.out / e[key], args.dest / e[key])
        entries.append({**e, "spec": None})  # the recorded launches, nothing else
    for prog, tdir in chosen:
        target = args.dest / "traces" / trace_stem(prog)
        target.mkdir(parents=True, exist_ok=True)
        for p in [tdir / "manifest.jsonl", tdir / "run.json", *tdir.glob("launch-*.zlib")]:
            shutil.copyfile(p, target / p.name)
    bundle = {**report, "files": entries, "programs": [p for p, _ in chosen],
              "kernels": [k for k in report["kernels"] if k["file"] in files]}
    (args.dest / "report.json").write_text(json.dumps(bundle, indent=1))
    cpu = {f"{f}:{k}": v for (f, k), v in verdicts.items() if f in files}
    (args.dest / "cpu_verdicts.json").write_text(json.dumps(cpu, indent=1, sort_keys=True))
    print(f"{len(chosen)} programs, {len(entries)} files, {len(cpu)} kernels, {total / (1 << 20):.1f} MiB of traces "
          f"-> {args.dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
