"""Compare two ``migrate convert`` output folders, ignoring what differs from run to run.

    python bench/emit_diff.py BEFORE AFTER

Every emitted module, copied source, spec and report must match byte for byte, except the
fields that record where and when the run happened (``output``, ``generated``, ``seconds``) in
report.json, report.html, report.sarif and stats.csv. Exit status 0 when the folders match, 1
(with the first differences) when they do not. A refactoring that must not change behaviour is
checked with it on the corpus and on the real-code pool, before and after.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

#: run-dependent values: timings, timestamps and the output folder's own path
_VOLATILE = [
    (re.compile(rb'"seconds": ?[0-9.e-]+'), b'"seconds": 0'),
    (re.compile(rb'"generated": ?"[^"]*"'), b'"generated": ""'),
    (re.compile(rb'"output": ?"[^"]*"'), b'"output": ""'),
]


def normalised(path: Path, root: Path) -> bytes:
    data = path.read_bytes()
    if path.name in ("report.json", "report.html", "report.sarif") or path.suffix == ".csv":
        for pattern, repl in _VOLATILE:
            data = pattern.sub(repl, data)
        data = data.replace(str(root).encode(), b"OUT")
        if path.suffix == ".csv":  # the seconds column of stats.csv
            data = b"\n".join(re.sub(rb",[0-9.]+$", b",0", ln) for ln in data.split(b"\n"))
    return data


def files(root: Path) -> dict[str, Path]:
    # the manifest of what cuda2tile wrote holds the files' times: not an output to compare
    return {str(p.relative_to(root)): p for p in root.rglob("*") if p.is_file() and p.name != ".cuda2tile-manifest.json"}


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    before, after = (Path(a).resolve() for a in argv)
    a, b = files(before), files(after)
    problems = [f"only in {before}: {k}" for k in sorted(a.keys() - b.keys())]
    problems += [f"only in {after}: {k}" for k in sorted(b.keys() - a.keys())]
    for k in sorted(a.keys() & b.keys()):
        x, y = normalised(a[k], before), normalised(b[k], after)
        if x != y:
            xs, ys = x.split(b"\n"), y.split(b"\n")
            line = next((i for i, (p, q) in enumerate(zip(xs, ys)) if p != q), min(len(xs), len(ys)))
            problems.append(f"differs: {k} (first at line {line + 1})")
    for p in problems[:40]:
        print(p)
    if len(problems) > 40:
        print(f"... and {len(problems) - 40} more")
    print(f"{len(a)} files before, {len(b)} after, {len(problems)} differences")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
