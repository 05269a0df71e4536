"""``migrate bench --onnx OUT --tune``: tile sizes per kernel, measured on the device.

Each tiled kernel (GEMM, convolution, attention: the factories with ``block_*`` arguments) is
compiled with a few tile configurations from :data:`CANDIDATES` and timed alone on the inputs the
model gives it at the benchmark's sizes. A configuration counts only when its outputs equal the
factory's own default's under the kernel's tolerance class (outputs poisoned before each run); the
fastest goes to ``OUT/<model>.tiles.json``, which the module's ``Model`` reads on CUDA (``tiles=``
overrides it). A configuration that does not compile (too much shared memory, say) is recorded
with its error and skipped.
"""
from __future__ import annotations

import inspect
import json
import statistics
from pathlib import Path

from ..runtime.compare import compare_arrays
from .check import poisoned_empty, to_numpy

#: per group kind and element class, the configurations tried (factory keyword arguments) besides
#: the factory's default; keys a factory does not take are dropped
CANDIDATES = {
    ("matmul", "tensor"): [
        dict(block_m=128, block_n=128, block_k=64, stages=3, threads=256),
        dict(block_m=128, block_n=256, block_k=64, stages=3, threads=256),
        dict(block_m=128, block_n=64, block_k=64, stages=4, threads=128),
        dict(block_m=64, block_n=128, block_k=64, stages=4, threads=128),
        dict(block_m=128, block_n=128, block_k=32, stages=4, threads=128),
        dict(block_m=64, block_n=64, block_k=64, stages=4, threads=128),
    ],
    ("matmul", "exact"): [
        dict(block_m=64, block_n=64, block_k=16, stages=2, threads=256),
        dict(block_m=128, block_n=64, block_k=16, stages=2, threads=256),
        dict(block_m=64, block_n=128, block_k=32, stages=2, threads=256),
        dict(block_m=128, block_n=128, block_k=32, stages=3, threads=256),
    ],
    ("conv", "tensor"): [
        dict(block_m=128, block_n=64, block_k=64, stages=3, threads=128),
        dict(block_m=64, block_n=64, block_k=32, stages=3, threads=128),
    ],
    ("conv", "exact"): [
        dict(block_m=64, block_n=64, block_k=16, stages=2, threads=256),
        dict(block_m=128, block_n=64, block_k=16, stages=2, threads=256),
    ],
    ("attention", "tensor"): [
        dict(block_m=64, block_n=64, stages=1, threads=128),
        dict(block_m=128, block_n=64, stages=1, threads=128),
        dict(block_m=128, block_n=64, stages=2, threads=128),
        dict(block_m=64, block_n=128, stages=2, threads=128),
        dict(block_m=128, block_n=128, stages=2, threads=256),
    ],
    ("attention", "exact"): [   # one row per thread (threads = block_m): see kernels/attention.py
        dict(block_m=64, block_n=32, stages=1, threads=64),
        dict(block_m=128, block_n=64, stages=1, threads=128),
        dict(block_m=64, block_n=64, stages=1, threads=64),
        dict(block_m=128, block_n=32, stages=2, threads=128),
    ],
}

SUFFIX = ".tiles.json"


def candidates(kind: str, tolerance: str, make) -> list[dict]:
    """The factory's default first, then the table's configurations it takes (each once)."""
    params = inspect.signature(make).parameters
    default = {k: p.default for k, p in params.items() if k.startswith("block_") or k in ("stages", "threads")}
    cls = "exact" if tolerance in ("fp32", "fp32_accum", "fp64", "exact") else "tensor"
    out = [default]
    for c in CANDIDATES.get((kind, cls), []):
        c = {k: v for k, v in c.items() if k in default}
        if c and {**default, **c} not in out:
            out.append({**default, **c})
    return out


def capture(model, inputs) -> dict[str, tuple]:
    """Each kernel's arguments in one call of ``model`` (views of its tensors)."""
    seen: dict[str, tuple] = {}
    plain = model.kernel

    def recording(name):
        k = plain(name)

        def run(*args):
            seen.setdefault(name, args)
            return k(*args)
        return run

    model.kernel = recording
    try:
        model(*inputs)
    finally:
        model.kernel = plain
    return seen


def _poison(tensors) -> None:
    """The check's poison pattern (:func:`.check.poisoned_empty`) into each tensor."""
    for t in tensors:
        t.copy_(poisoned_empty(tuple(t.shape), t.dtype))


def _compile_all(make, configs: list[dict], target: str, compile_for, jobs: int) -> list:
    """Each configuration compiled (in ``jobs`` threads: TileLang's compiler and nvcc run outside
    the interpreter), or the exception it raised."""
    def one(cfg):
        try:
            return compile_for(make(target=target, **cfg), target)
        except Exception as exc:   # a configuration TileLang or nvcc refuses: recorded, skipped
            return exc
    if jobs <= 1:
        return [one(c) for c in configs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(one, configs))


def tune(model, module, report: dict, inputs, clock, *, reps: int = 10, rounds: int = 3,
         compile_for=None, target: str = "cuda", jobs: int | None = None) -> dict:
    """Per tiled kernel: the configurations tried, their times and the fastest equal one."""
    import os

    if compile_for is None:
        from ..runtime.tilelang_support import compile_for
    if jobs is None:
        jobs = 1 if target == "c" else min(8, os.cpu_count() or 1)
    args = capture(model, inputs)
    out = {}
    for g in report["groups"]:
        name = g["kernel"]
        make = module.KERNELS.get(name)
        if make is None or name not in args or g["kind"] not in {k for k, _ in CANDIDATES}:
            continue
        configs = candidates(g["kind"], g.get("tolerance", "fp32"), make)
        if len(configs) < 2:
            continue
        call = args[name]
        outs = call[len(call) - len(g["outputs"]):]
        rows, want = [], None
        for cfg, k in zip(configs, _compile_all(make, configs, target, compile_for, jobs)):
            row = {"config": cfg}
            rows.append(row)
            try:
                if isinstance(k, Exception):
                    raise k
                _poison(outs)
                k(*call)
                clock.sync()
                got = [to_numpy(t).copy() for t in outs]   # (a view of the tensor the next run overwrites)
                if want is None:
                    want = got
                else:
                    checks = [compare_arrays(w, h, str(w.dtype), g.get("tolerance", "fp32")) for w, h in zip(want, got)]
                    row["equal"] = all(c.passed for c in checks)
                    if not row["equal"]:
                        row["message"] = next(c.message for c in checks if not c.passed)
                        continue
                row["ms"] = statistics.median(clock.per_call(lambda: k(*call), reps, rounds))
            except Exception as exc:   # refused at compile or launch: recorded, skipped
                row["error"] = f"{type(exc).__name__}: {str(exc).strip()[-300:]}"
            if want is None:           # the default itself failed: nothing to compare against
                break
        timed = [r for r in rows if "ms" in r]
        if not timed:
            continue
        best = min(timed, key=lambda r: r["ms"])
        out[name] = {"config": best["config"], "default_ms": rows[0].get("ms"), "best_ms": best["ms"], "tried": rows}
    return out


def save(out_dir: Path, stem: str, tuned: dict, device: str, dims: dict) -> Path:
    path = Path(out_dir) / (stem + SUFFIX)
    path.write_text(json.dumps({"device": device, "dims": dims,
                                "kernels": {k: v["config"] for k, v in tuned.items()}}, indent=1))
    return path
