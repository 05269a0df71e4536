"""Time original CUDA kernels against their TileLang migrations on one GPU, in one process.

    python bench/gpu_bench.py --from OUT [--json FILE] [--reps 50] [--budget 240]

For every spec'd kernel of a converted folder whose migration exists, on the same seeded inputs:
the original is compiled from its source with nvcc by the runtime's GPU executor and the migrated
one with TileLang (target ``cuda``); each is timed over ``--reps`` launches after warm-up, every
launch followed by a device synchronisation (the executor's launcher synchronises; the TileLang
side calls ``torch.cuda.synchronize()``), and the mean per launch is reported.
These are the corpus's small test sizes: launch overhead dominates, so the figures say whether
the migrated kernel keeps pace, not how fast either is at scale (that is `migrate bench`'s job).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from migrate.runtime.inputs import make_inputs  # noqa: E402
from migrate.runtime.spec import load_spec  # noqa: E402
from migrate.runtime.tilelang_side import load_module, to_tensor  # noqa: E402
from migrate.runtime.tilelang_support import arguments, compile_kernel  # noqa: E402

def time_migrated(launch, reps: int) -> float:
    """Seconds per launch, each launch followed by a device synchronisation."""
    import torch
    for _ in range(3):
        launch()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        launch()
        torch.cuda.synchronize()
    return (time.perf_counter() - t0) / reps


def time_original(cu_path: Path, k, inputs, reps: int) -> float:
    """Seconds per launch of the original, through the runtime's GPU launcher (which
    synchronises after every launch, as time_migrated does)."""
    from migrate.runtime.cuda_gpu import compile_gpu, run_gpu
    lib = compile_gpu(cu_path, [k])
    res = run_gpu(lib, k, inputs.copy().args, dict(inputs.symbols), repeat=reps)
    if not res.ok or res.per_launch is None:
        raise RuntimeError(f"original did not run: {res.status}: {res.message[:200]}")
    return res.per_launch


def migrated_launcher(module_path: Path, k, inputs):
    mod = load_module(module_path)
    sig = mod.KERNELS[k.name]
    kernel = compile_kernel(sig, k.grid, k.block, k.shared_bytes, k.template or None, "cuda")
    tensors = [to_tensor(inputs.args[a.name], a.dtype, "cuda") if a.is_buffer else inputs.args[a.name]
               for a in k.args]
    symbols = {s.name: to_tensor(inputs.symbols[s.name], s.dtype, "cuda") for s in k.symbols}
    call_args = arguments(sig, tensors, symbols, k.template or None, "cuda")
    return lambda: kernel(*call_args)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="out", required=True)
    ap.add_argument("--json")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--budget", type=float, default=240.0, help="stop starting kernels after this many seconds")
    args = ap.parse_args()
    out = Path(args.out)
    report = json.loads((out / "report.json").read_text())
    forms = {(k["file"], k["kernel"]): k["form"] for k in report["kernels"]}
    rows, started = [], time.time()
    for entry in report["files"]:
        if not entry.get("spec"):
            continue
        for k in load_spec(out / entry["spec"]):
            if forms.get((entry["file"], k.name)) in (None, "unsupported"):
                continue
            if time.time() - started > args.budget:
                rows.append({"kernel": k.id, "status": "not timed (time budget)"})
                continue
            row = {"file": entry["file"], "kernel": k.id, "form": forms[(entry["file"], k.name)]}
            try:
                inputs = make_inputs(k, 7)
                row["original_ms"] = 1e3 * time_original(out / entry["original"], k, inputs, args.reps)
                row["migrated_ms"] = 1e3 * time_migrated(migrated_launcher(out / entry["output"], k, inputs), args.reps)
                row["ratio"] = row["migrated_ms"] / row["original_ms"]
                row["status"] = "ok"
            except Exception as exc:
                row["status"] = "error: " + traceback.format_exception_only(type(exc), exc)[-1].strip()[:300]
            rows.append(row)
            print(f"{row['kernel']:32s} {row.get('original_ms', float('nan')):9.4f} ms "
                  f"{row.get('migrated_ms', float('nan')):9.4f} ms  x{row.get('ratio', float('nan')):6.2f}  "
                  f"{row['status'][:60]}", flush=True)
    ok = [r for r in rows if r.get("status") == "ok"]
    if ok:
        geo = float(np.exp(np.mean([np.log(r["ratio"]) for r in ok])))
        print(f"timed {len(ok)} kernels; geometric mean migrated/original = {geo:.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
