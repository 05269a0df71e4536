"""Time the frontend alone on the corpus: parse every .cu/.cuh into the kernel model.

    python bench/parse_corpus.py [--jobs N] [PATH]

Prints the wall time with N worker processes (default 2, the CI machine's cores) and the
number of files and kernels modelled.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from migrate.convert import discover, parse_all  # noqa: E402
from migrate.parse.frontend import ParseOptions  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("path", nargs="?", default=str(ROOT / "corpus"))
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    files = discover([args.path], Path("/nonexistent-out"), [])
    start = time.perf_counter()
    parsed = parse_all(files, lambda _p: ParseOptions(), args.jobs)
    wall = time.perf_counter() - start
    kernels = sum(len(p.unit.kernels) for p in parsed.values())
    print(f"parsed {len(files)} files, {kernels} kernels in {wall:.2f} s with {args.jobs} worker(s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
