"""On the GPU machine: launch every hybrid kernel of a converted output that this script knows
inputs for through its module (the launcher, the T.CUDASourceCodeKernel wrapper, the original
CUDA) and compare with a NumPy reference (issue 16's "a test launches the corpus's hybrid kernels
through the module on the GPU build path"). Needs TileLang (.gpu/ staged, bench/gpu_env.sh) and
a CUDA GPU; no libclang.

    python bench/gpu_hybrid_run.py OUT [--json FILE]

OUT is an output folder of ``migrate convert corpus`` (build/corpus_out carried). Each row:
kernel, verdict, seconds (compile included). Exit 0 all equal, 1 a mismatch, 2 no GPU/no output.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np


def _reduce_min_float(module):
    """corpus reduction/minmax_atomic.cu: the block minima's float atomic minimum."""
    import torch

    rng = np.random.default_rng(7)
    x = rng.uniform(-100.0, 100.0, 100003).astype(np.float32)
    out = torch.tensor([np.finfo(np.float32).max], dtype=torch.float32, device="cuda")  # poisoned high
    n = x.size
    module.reduceMinFloat(torch.from_numpy(x).cuda(), out, n, grid=(n + 255) // 256, block=256)
    torch.cuda.synchronize()
    return out.item() == x.min(), f"{out.item()!r} vs NumPy {x.min()!r}"


#: (file, kernel) -> the check that runs it
CHECKS = {("reduction/minmax_atomic.cu", "reduceMinFloat"): _reduce_min_float}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    import torch

    if not torch.cuda.is_available() or not (args.out / "report.json").is_file():
        print("needs a CUDA GPU and OUT/report.json", file=sys.stderr)
        return 2
    from migrate.runtime.tilelang_side import load_module

    report = json.loads((args.out / "report.json").read_text())
    outputs = {f["file"]: f["output"] for f in report["files"]}
    rows = []
    for k in report["kernels"]:
        if k["form"] != "hybrid":
            continue
        check = CHECKS.get((k["file"], k["kernel"]))
        start = time.perf_counter()
        if check is None:
            rows.append({"file": k["file"], "kernel": k["kernel"], "verdict": "no inputs", "detail": ""})
            continue
        try:
            ok, detail = check(load_module(args.out / outputs[k["file"]]))
            verdict = "equal" if ok else "mismatch"
        except Exception as exc:  # a wrapper that does not build or launch: its message is the finding
            verdict, detail = "error", f"{type(exc).__name__}: {str(exc).splitlines()[0][:200] if str(exc) else ''}"
        rows.append({"file": k["file"], "kernel": k["kernel"], "verdict": verdict, "detail": detail,
                     "seconds": round(time.perf_counter() - start, 2)})
    for r in rows:
        print(f"{r['file']:36s} {r['kernel']:24s} {r['verdict']:9s} {r.get('seconds', '')!s:>6s}  {r['detail']}")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 1 if any(r["verdict"] in ("mismatch", "error") for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
