"""How the lifted row reductions' lane loops should be written: variants of an emitted module.

Not part of the tool: a measuring stick for the emitter. The tile form writes a CUDA loop
``for (c = tid; c < cols; c += blockDim.x)`` inside a lane as a TIR ``while`` loop. This script
rewrites those loops of an emitted module (text in, text out) as ``T.serial(start, stop, step)``
or ``T.unroll`` with a ``#pragma unroll`` factor, and times each variant on the bench spec's
inputs against the unmodified module, checking that the outputs agree.

    python bench/reduce_probe.py build/gpu_out --json out.json
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import re
import sys
from pathlib import Path

CASES = [  # (module, kernel, bench spec)
    ("norm/softmax_rows.py", "softmax_rows", "bench/specs/norm/softmax_rows.toml"),
    ("norm/rmsnorm.py", "rmsnorm_forward", "bench/specs/norm/rmsnorm.toml"),
    ("reduction/minmax_atomic.py", "reduceMaxInt", "bench/specs/reduction/minmax_atomic.toml"),
    ("reduction/dot_product.py", "dotPartial", "bench/specs/reduction/dot_product.toml"),
]

_WHILE = re.compile(
    r"^(?P<ind> +)(?P<v>\w+) = T\.alloc_var\(T\.int32\)(?P<c1>.*)\n"
    r"(?P=ind)(?P=v) = (?P<start>[^\n#]+?)(?P<c2>  #[^\n]*)?\n"
    r"(?P=ind)while (?P=v) < (?P<stop>[^\n:]+):(?P<c3>.*)\n"
    r"(?P<body>(?:(?P=ind)    [^\n]*\n)+?)"
    r"(?P=ind)    (?P=v) = (?P=v) \+ (?P<step>[^\n#]+?)(?:  #[^\n]*)?\n",
    re.M)


def rewrite(text: str, loop: str) -> str:
    """Each strided ``while`` lane loop of ``text`` as ``for v in <loop>(start, stop, step)``."""
    def one(mt):
        ind, body = mt["ind"], mt["body"]
        return f"{ind}for {mt['v']} in {loop.format(start=mt['start'], stop=mt['stop'], step=mt['step'])}:\n{body}"
    out, n = _WHILE.subn(one, text)
    if n == 0:
        raise ValueError("no strided while loop found")
    return out


def hoist(text: str, factor: int) -> str:
    """Each strided ``while`` lane loop of ``text`` as a loop over ``factor`` positions at a time
    (the body written out for ``v``, ``v + step``, ...: its loads unconditional, so all of them
    can be in flight at once; the same operations in the same order) and the original loop for
    the rest. The bound test is in 64 bits, so ``v + (factor - 1) * step`` cannot wrap."""
    def one(mt):
        ind, v, step, stop = mt["ind"], mt["v"], mt["step"].strip(), mt["stop"].strip()
        head = f"{ind}{v} = T.alloc_var(T.int32){mt['c1']}\n{ind}{v} = {mt['start']}{mt['c2'] or ''}\n"
        copies = "".join(re.sub(rf"\b{v}\b", f"({v} + ({step}) * {k})", mt["body"]) for k in range(factor))
        wide = (f"{ind}while T.Cast(T.int64, {v}) + T.Cast(T.int64, {step}) * {factor - 1} < {stop}:\n"
                f"{copies}{ind}    {v} = {v} + ({step}) * {factor}\n")
        rest = f"{ind}while {v} < {stop}:{mt['c3']}\n{mt['body']}{ind}    {v} = {v} + {step}\n"
        return head + wide + rest
    out, n = _WHILE.subn(one, text)
    if n == 0:
        raise ValueError("no strided while loop found")
    return out


VARIANTS = {
    "while (as emitted)": None,
    "hoisted x4": lambda text: hoist(text, 4),
    "hoisted x8": lambda text: hoist(text, 8),
    "T.serial(start, stop, step)": "T.serial({start}, {stop}, {step})",
    "T.unroll x4": 'T.unroll({start}, {stop}, {step}, annotations={{"pragma_unroll_factor": 4}})',
    "T.unroll x8": 'T.unroll({start}, {stop}, {step}, annotations={{"pragma_unroll_factor": 8}})',
}


def load(path: Path, text: str | None, name: str):
    if text is not None:
        path = path.with_name(f"_probe_{name}.py")
        path.write_text(text)
    spec = importlib.util.spec_from_file_location(f"probe_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def measure(sig, k, inputs, sizes=None):
    """Run ``sig`` once on the bench spec ``k``'s inputs on the GPU (compiled for the static
    ``sizes`` when given), then time it: (outputs, median ms of 7 x 20 launches, GB/s)."""
    import torch

    from migrate.runtime.bench import time_events, traffic_bytes
    from migrate.runtime.tilelang_side import to_tensor
    from migrate.runtime.tilelang_support import arguments, compile_kernel, without_static

    tensors = {x.name: to_tensor(inputs.args[x.name], x.dtype, "cuda") for x in k.args if x.is_buffer}
    for x in k.outputs:  # poisoned (in-out buffers keep their inputs)
        if x.role == "out" and tensors[x.name].is_floating_point():
            tensors[x.name].fill_(float("nan"))
    ordered = [tensors[x.name] if x.is_buffer else inputs.args[x.name] for x in k.args]
    call = without_static(sig, arguments(sig, ordered, None, k.template or None, "cuda"), sizes or {})
    kernel = compile_kernel(sig, k.grid, k.block, k.shared_bytes, k.template or None, "cuda", sizes=sizes)
    kernel(*call)
    torch.cuda.synchronize()
    outs = {x.name: tensors[x.name].clone() for x in k.outputs}
    ms = sorted(time_events(lambda i: kernel(*call), 20, 7))[3]
    return outs, ms, traffic_bytes(k) / (ms * 1e-3) / 1e9


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", help="a converted folder (migrate convert corpus -o FOLDER)")
    p.add_argument("--json")
    a = p.parse_args(argv)

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from migrate.runtime.inputs import make_inputs
    from migrate.runtime.spec import load_spec

    rows = []
    for rel, kname, spec_path in CASES:
        path = Path(a.folder) / rel
        base = path.read_text()
        k = next(s for s in load_spec(Path(spec_path)) if s.name == kname)
        inputs = make_inputs(k, 7)
        reference = None
        for label, loop in VARIANTS.items():
            row = {"kernel": kname, "variant": label}
            try:
                text = None if loop is None else loop(base) if callable(loop) else rewrite(base, loop)
                mod = load(path, text, re.sub(r"\W", "_", label))
                sig = mod.KERNELS[kname]
                outs, ms, gbs = measure(sig, k, inputs)
                if reference is None:
                    reference = outs
                diff = max(float((outs[n].double() - reference[n].double()).abs().max()) for n in outs)
                row.update(ms=ms, gbs=gbs, max_diff=diff)
                print(f"{kname:16} {label:30} {ms:8.4f} ms {gbs:7.0f} GB/s ({100 * gbs / 4800:4.1f}% of 4.8 TB/s)"
                      f"  diff vs emitted {diff:.1e}", flush=True)
            except Exception as exc:
                row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[-1][:200] if str(exc) else ''}"
                print(f"{kname:16} {label:30} failed: {row['error']}", flush=True)
            rows.append(row)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
