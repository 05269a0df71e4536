"""Rows in registers with 128-bit accesses: a hand-edited softmax_rows (bench/probes/) against the
emitted one, both compiled for the bench spec's row length, on the spec's inputs (outputs compared).

Not part of the tool: it decides whether analysis.row_registers should give each lane adjacent
columns (float4 loads) instead of the CUDA's strided ones.

    python bench/vec_probe.py build/gpu_out --json out.json
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reduce_probe import load, measure

HERE = Path(__file__).resolve().parent


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder")
    p.add_argument("--json")
    a = p.parse_args(argv)
    sys.path.insert(0, str(HERE.parent))
    from migrate.runtime.inputs import make_inputs
    from migrate.runtime.spec import load_spec
    from migrate.runtime.tilelang_support import static_sizes

    k = next(s for s in load_spec(HERE / "specs/norm/softmax_rows.toml") if s.name == "softmax_rows")
    inputs = make_inputs(k, 7)
    rows, ref = [], None
    for label, path in (("emitted", Path(a.folder) / "norm/softmax_rows.py"),
                        ("vec4 lanes", HERE / "probes/softmax_rows_vec4.py")):
        sig = load(path, None, label.replace(" ", "_")).KERNELS["softmax_rows"]
        sizes = static_sizes(sig, [inputs.args[x.name] for x in k.args], "cuda")
        outs, ms, gbs = measure(sig, k, inputs, sizes)
        ref = ref or outs
        diff = max(float((outs[n] - ref[n]).abs().max()) for n in outs)
        rows.append({"variant": label, "ms": ms, "gbs": gbs, "max_diff": diff})
        print(f"softmax_rows {label:12} {ms:8.4f} ms {gbs:7.0f} GB/s ({100 * gbs / 4800:4.1f}% of 4.8 TB/s) "
              f"max diff vs emitted {diff:.1e}", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
