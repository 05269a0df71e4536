"""Run every corpus kernel's ORIGINAL CUDA on the GPU and compare it with its numpy reference.

    python bench/gpu_references.py [--device gpu|cpu] [--json FILE] [--jobs N]

The GPU counterpart of tests/runtime/test_corpus.py (which runs the CPU executor): each spec'd
kernel is compiled with nvcc by the runtime's GPU executor, run on seeded random inputs, and
every output compared with ``tests.references`` under its tolerance class. Prints one line per
kernel and a count; exits 1 when any kernel fails.
"""
from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from migrate.runtime.api import check_original  # noqa: E402
from migrate.runtime.spec import load_spec  # noqa: E402
from tests.references import REFERENCES  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="gpu", choices=("gpu", "cpu"))
    ap.add_argument("--json")
    ap.add_argument("--jobs", type=int, default=8)
    args = ap.parse_args()
    corpus = ROOT / "corpus"
    kernels = [k for spec in sorted(corpus.rglob("*.toml")) for k in load_spec(spec)]

    def one(k):
        key = k.reference_key(corpus)
        check = check_original(k.cu_path, k, REFERENCES[key], device=args.device, seed=1234)
        worst = max((c.max_rel_err for c in check.comparisons), default=None)
        return {"kernel": key, "status": "pass" if check.passed else "fail", "run": check.run.status,
                "max_rel_err": worst, "message": "" if check.passed else check.message[:300]}

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        rows = list(pool.map(one, kernels))
    for r in rows:
        print(f"{r['status']:5s} {r['kernel']:55s} {r['message'][:100]}")
    passed = sum(r["status"] == "pass" for r in rows)
    print(f"{passed} of {len(rows)} corpus kernels match their references on the {args.device}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0 if passed == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
