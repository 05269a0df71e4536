"""Run the ONNX backend node test cases of every operator ``migrate onnx`` claims and print the
pass count per operator (and the cases that fail or fall back to torch).

    python bench/onnx_node_tests.py [--ops Add,MatMul] [--json FILE]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.onnx.node_cases import CLAIMED, cases, run_case  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default=",".join(CLAIMED))
    ap.add_argument("--json")
    args = ap.parse_args()
    table, rows = [], []
    for op in args.ops.split(","):
        t0 = time.time()
        results = [run_case(c) for c in cases(op)]
        rows += [{"op": op, **r} for r in results]
        n = len(results)
        passed = sum(r["status"] == "pass" for r in results)
        tl = sum(r["status"] == "pass" and r["tilelang"] for r in results)
        table.append((op, n, passed, tl, time.time() - t0))
        print(f"{op:20s} {passed:3d}/{n:<3d} pass, {tl:3d} with every node in TileLang  ({time.time() - t0:.0f} s)",
              flush=True)
        for r in results:
            if r["status"] != "pass" or not r["tilelang"]:
                print(f"    {r['name']}: {r['status']}{'' if r['tilelang'] else ' (torch fallback)'}: "
                      f"{r['message'][:240]}", flush=True)
    tot = [sum(x[i] for x in table) for i in (1, 2, 3)]
    print(f"{'total':20s} {tot[1]:3d}/{tot[0]:<3d} pass, {tot[2]:3d} with every node in TileLang")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
