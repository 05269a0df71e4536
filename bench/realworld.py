"""The real-code pool measured in one command (issue 15): extract it (or take an extracted
folder), convert it with the programs' own build flags, optionally replay-check it, and print a
table: kernels by form, the constructs that block the unsupported ones (each kernel's first
error, grouped by code and message shape, with counts and an example), the check verdicts, the
crashes and the seconds.

    python bench/realworld.py [--mirror GITDIR | --pool build/realworld] [-o OUT] [--jobs N]
                              [--check cpu|cuda] [--only a,b] [--json FILE] [--top 25]
    python bench/realworld.py --from OUT [--pool build/realworld]   (tabulate a finished run)

``--mirror`` is the git directory that the search tool's ``fetch github:zjin-lcf/HeCBench``
answers with; the pool is extracted into ``--pool`` with ../shared/realworld/extract.py unless it
is there already. ``--check cpu`` runs bench/realworld_replay.py over the programs that have run
arguments (the programs' own main() recorded on the CPU executor, every recorded launch replayed
into the migrated kernel). Exit 0 when no file crashed (no traceback, no M9001), else 1.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EXTRACT = REPO.parent / "shared" / "realworld" / "extract.py"
CRASH_CODES = {"M9001"}
TRACEBACK = re.compile(r"Traceback \(most recent call last\)")


def shape(message: str) -> str:
    """A diagnostic message with its program-specific parts (quoted names, numbers) blanked, so
    that the same construct met in different programs groups together."""
    m = re.sub(r"'[^']*'|\"[^\"]*\"|`[^`]*`", "'…'", message)
    m = re.sub(r"\b\d+\b", "N", m)
    return m.split(";")[0].split(" (")[0].strip()[:110]


def blocking(kernel: dict) -> dict | None:
    """The diagnostic that made ``kernel`` unsupported: its first error (else its first note)."""
    diags = kernel.get("diagnostics") or []
    for d in diags:
        if d.get("severity") == "error":
            return d
    return diags[0] if diags else None


def tabulate(report: dict, top: int = 25) -> tuple[str, dict]:
    kernels, files = report["kernels"], report["files"]
    forms = Counter(k["form"] for k in kernels)
    n = len(kernels) or 1
    converted = sum(v for f, v in forms.items() if f not in ("hybrid", "unsupported"))  # hybrid: kept as CUDA
    lines = [f"{len(files)} files, {len(kernels)} kernels: converted {converted} ({100 * converted / n:.1f} %), "
             + ", ".join(f"{f} {forms.get(f, 0)} ({100 * forms.get(f, 0) / n:.1f} %)"
                         for f in ("tile", "portable", "simt", "hybrid", "unsupported"))]
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    unnamed = []
    for k in kernels:
        if k["form"] not in ("hybrid", "unsupported"):
            continue
        d = blocking(k)
        if d is None:
            unnamed.append(k)
            continue
        groups[(d["code"], shape(d["message"]))].append(k)
    lines.append(f"\nblocking constructs ({sum(map(len, groups.values()))} kernels not migrated (hybrid or unsupported)"
                 f" in {len(groups)} groups;"
                 f" {len(unnamed)} with no diagnostic naming one):")
    lines.append(f"{'kernels':>7s}  code   construct (example)")
    for (code, msg), ks in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:top]:
        ex = ks[0]
        lines.append(f"{len(ks):7d}  {code}  {msg}   [{ex['file']}:{ex['line']} {ex['kernel']}]")
    crashes = [(f["file"], d) for f in files for d in f["diagnostics"] if d["code"] in CRASH_CODES]
    crashes += [(k["file"], d) for k in kernels for d in k["diagnostics"] if d["code"] in CRASH_CODES]
    file_codes = Counter(d["code"] for f in files for d in f["diagnostics"])
    lines.append("\nfile-level diagnostics: " + ", ".join(f"{c} {v}" for c, v in file_codes.most_common(8)))
    checks = Counter((k.get("check") or {}).get("status", "not checked") if isinstance(k.get("check"), dict)
                     else (k.get("check") or "not checked") for k in kernels if k["form"] not in ("hybrid", "unsupported"))
    lines.append("checks (converted kernels): " + ", ".join(f"{c} {v}" for c, v in checks.most_common()))
    lines.append(f"crashes (M9001): {len(crashes)}")
    for f, d in crashes[:10]:
        lines.append(f"  {f}:{d.get('line', '?')} {d['message'][:150]}")
    stats = {"files": len(files), "kernels": len(kernels), "converted": converted, "hybrid": forms.get("hybrid", 0),
             "forms": dict(forms), "groups": [{"code": c, "construct": m, "kernels": len(ks)}
                                              for (c, m), ks in sorted(groups.items(), key=lambda kv: -len(kv[1]))],
             "unnamed": [f"{k['file']}:{k['line']} {k['kernel']}" for k in unnamed],
             "crashes": len(crashes), "checks": dict(checks)}
    return "\n".join(lines), stats


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", help="git directory of zjin-lcf/HeCBench (fetch's answer)")
    ap.add_argument("--pool", type=Path, default=REPO / "build" / "realworld")
    ap.add_argument("-o", "--out", type=Path, default=REPO / "build" / "realworld_out")
    ap.add_argument("--from", dest="from_", type=Path, help="tabulate this finished conversion instead")
    ap.add_argument("--jobs", type=int, default=0, help="convert processes (default: migrate's own)")
    ap.add_argument("--check", choices=("cpu", "cuda"), help="replay-check the programs that have run arguments")
    ap.add_argument("--only", default="", help="comma-separated pool case names (extraction and replay)")
    ap.add_argument("--timeout", type=float, default=60, help="seconds per program in the replayed check")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--top", type=int, default=25, help="blocking groups to print")
    args = ap.parse_args(argv)
    py = sys.executable
    seconds = None
    out = args.from_ or args.out
    if args.from_ is None:
        if not (args.pool / "pool.json").exists():
            if not args.mirror:
                ap.error(f"{args.pool}/pool.json is missing: give --mirror (fetch github:zjin-lcf/HeCBench) to extract it")
            cmd = [py, str(EXTRACT), "--mirror", args.mirror, "--out", str(args.pool)]
            if args.only:
                cmd += ["--only", args.only]
            subprocess.run(cmd, check=True)
        cmd = [py, "-m", "migrate", "convert", str(args.pool), "-o", str(out), "-p", str(args.pool), "-q", "--force"]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        t0 = time.time()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        seconds = time.time() - t0
        if TRACEBACK.search(proc.stdout + proc.stderr):
            print(proc.stderr[-3000:], file=sys.stderr)
        if proc.returncode not in (0, 1):
            print(f"migrate convert exited {proc.returncode}:\n{proc.stderr[-3000:]}", file=sys.stderr)
    report = json.loads((out / "report.json").read_text())
    text, stats = tabulate(report, args.top)
    if seconds is not None:
        text += f"\nconversion: {seconds:.0f} s (`migrate convert {args.pool} -o {out} -p {args.pool}`)"
        stats["seconds"] = round(seconds, 1)
    if args.check:
        rj = out / "replay.json"
        cmd = [py, str(REPO / "bench" / "realworld_replay.py"), "--out", str(out), "--pool", str(args.pool),
               "--timeout", str(args.timeout), "--json", str(rj), "--device", args.check]
        if args.check == "cuda":
            cmd += ["--record-on", "cuda"]
        if args.only:
            cmd += ["--only", args.only]
        t0 = time.time()
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
        text += "\n\nreplayed check:\n" + "\n".join(proc.stdout.strip().splitlines()[-8:])
        stats["replay_seconds"] = round(time.time() - t0, 1)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(stats, indent=1) + "\n")
    return 1 if stats["crashes"] else 0


if __name__ == "__main__":
    sys.exit(main())
