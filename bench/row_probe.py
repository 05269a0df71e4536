"""Rows in registers on the GPU: each lifted row reduction compiled for its bench spec's row
length (``Signature.specialize``: unrolled lane loops, the row kept in registers) against the
same kernel at run-time sizes, on the spec's inputs, checking that the outputs agree.

Not part of the tool: a measuring stick for analysis.lift.row_registers. Helpers from reduce_probe.

    python bench/row_probe.py build/gpu_out --json out.json
    python bench/row_probe.py build/gpu_out --cap 64   # unroll and keep at most 64 elements a lane

``--cap`` times the compiled-in kernels with another cap than the emitted factories'
(``row_steps = row_steps if row_steps <= 128 else 0``: longer rows run the CUDA loops). The cap
was chosen with the H200 run of 2026-11-30 00:31 UTC, when the factories had two caps (64 for
registers, 128 for unrolling; ``row_probe_0031.json`` and, registers raised to 128,
``row_probe_128_0031.json`` in bench/results/2026-11-29-h200-session3/).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reduce_probe import load, measure

CASES = [  # (module, kernel, bench spec)
    ("norm/softmax_rows.py", "softmax_rows", "bench/specs/norm/softmax_rows.toml"),
    ("norm/softmax_rows.py", "log_softmax_rows", "bench/specs/norm/softmax_rows.toml"),
    ("norm/layernorm.py", "layernorm_forward", "bench/specs/norm/layernorm.toml"),
    ("norm/rmsnorm.py", "rmsnorm_forward", "bench/specs/norm/rmsnorm.toml"),
    ("features/template_row_mean.py", "row_mean", "bench/specs/features/template_row_mean.toml"),
    # one warp per row (analysis.lift.warp_rows): 128 elements a lane at the spec's 4096 columns
    ("norm/rmsnorm.py", "fused_add_rmsnorm", "bench/specs/norm/rmsnorm.toml"),
    ("norm/softmax_warp.py", "softmax_online_warp", "bench/specs/norm/softmax_warp.toml"),
]
CAP = "row_steps = row_steps if row_steps <= 128 else 0"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", help="a converted folder (migrate convert corpus -o FOLDER)")
    p.add_argument("--json")
    p.add_argument("--cap", type=int, help="the most elements a lane unrolls and keeps (default: the factory's)")
    a = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from migrate.runtime.inputs import make_inputs
    from migrate.runtime.spec import load_spec
    from migrate.runtime.tilelang_support import static_sizes

    rows = []
    for rel, kname, spec_path in CASES:
        try:
            k = next(s for s in load_spec(Path(spec_path)) if s.name == kname)
            path = Path(a.folder) / rel
            text = path.read_text().replace(CAP, CAP.replace("128", str(a.cap))) if a.cap else None
            sig = load(path, text, kname).KERNELS[kname]
            inputs = make_inputs(k, 7)
            sizes = static_sizes(sig, [inputs.args[x.name] for x in k.args], "cuda")
            if not sizes:
                raise ValueError("the spec's row length is not compiled in (no Signature.specialize, or too long)")
            dynamic, ms_d, gbs_d = measure(sig, k, inputs)
            static, ms_s, gbs_s = measure(sig, k, inputs, sizes)
            diff = max(float((static[n] - dynamic[n]).abs().max()) for n in static)
            scale = max(float(dynamic[n].abs().max()) for n in dynamic)
            row = {"kernel": kname, "sizes": sizes, "dynamic_ms": ms_d, "static_ms": ms_s,
                   "dynamic_gbs": gbs_d, "static_gbs": gbs_s, "max_diff": diff, "agree": diff <= 1e-4 * max(scale, 1)}
            print(f"{kname:18} {sizes}  run-time {ms_d:7.4f} ms ({100 * gbs_d / 4800:4.1f}%)  compiled-in "
                  f"{ms_s:7.4f} ms ({100 * gbs_s / 4800:4.1f}% of 4.8 TB/s)  x{ms_d / ms_s:4.2f}  "
                  f"max diff {diff:.1e} {'ok' if row['agree'] else 'DISAGREE'}", flush=True)
        except Exception as exc:
            row = {"kernel": kname, "error": f"{type(exc).__name__}: {str(exc).splitlines()[-1][:200] if str(exc) else ''}"}
            print(f"{kname:18} failed: {row['error']}", flush=True)
        rows.append(row)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(r.get("agree") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
