"""A `migrate bench --json` file as the Markdown table and summary BENCHMARKS.md shows.

    python bench/bench_table.py RESULTS/bench.json [--goal-ratio 1.1] [--goal-bw 0.85]

Prints one row per kernel (sorted by source file), then the geometric mean of migrated ÷
original, the kernels slower than the goal ratio, and the memory-bound tile kernels below the
bandwidth goal (those without a FLOP count, at least 1 GB moved per ms).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path


def rows_of(path: Path) -> list[dict]:
    data = json.loads(path.read_text())
    return data["rows"] if isinstance(data, dict) else data


def geomean(values) -> float:
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("bench_json", type=Path)
    p.add_argument("--goal-ratio", type=float, default=1.1)
    p.add_argument("--goal-bw", type=float, default=0.85)
    a = p.parse_args(argv)
    rows = [r for r in rows_of(a.bench_json) if r.get("status") == "ok"]
    rows.sort(key=lambda r: (r["file"], r["kernel"]))
    print("| kernel | form | original ms | migrated ms | migrated/original | migrated GB/s (% of peak) | TFLOP/s |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        bw = (f"{r['migrated_gbs']:.0f} ({100 * r['migrated_bw_share']:.0f} %)"
              if r.get("migrated_bw_share") and not r.get("flops") else "")
        tf = f"{r['migrated_tflops']:.1f}" if r.get("migrated_tflops") else ""
        print(f"| {r['file']}:{r['kernel']} | {r['form']} | {r['original_ms']:.4f} | {r['migrated_ms']:.4f} | "
              f"{r['ratio']:.2f} | {bw} | {tf} |")
    ratios = [r["ratio"] for r in rows]
    print()
    print(f"{len(rows)} kernels; geometric mean migrated/original {geomean(ratios):.3f}")
    for form in ("tile", "portable"):
        sub = [r["ratio"] for r in rows if r["form"] == form]
        if sub:
            print(f"  {form}: {len(sub)} kernels, geometric mean {geomean(sub):.3f}")
    slow = [r for r in rows if r["ratio"] > a.goal_ratio]
    print(f"slower than {a.goal_ratio}x: " + (", ".join(f"{r['kernel']} ({r['form']}) {r['ratio']:.2f}"
                                                        for r in sorted(slow, key=lambda r: -r["ratio"])) or "none"))
    low = [r for r in rows if r["form"] == "tile" and not r.get("flops") and r.get("migrated_bw_share")
           and r["migrated_gbs"] > 1000 and r["migrated_bw_share"] < a.goal_bw]
    print(f"memory-bound tile kernels below {100 * a.goal_bw:.0f} % of the bandwidth: "
          + (", ".join(f"{r['kernel']} {100 * r['migrated_bw_share']:.0f} %"
                       for r in sorted(low, key=lambda r: r["migrated_bw_share"])) or "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
