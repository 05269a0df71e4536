"""Baselines for the bandwidth shares of BENCHMARKS.md: what plain PyTorch kernels reach on the
same GPU for store-only traffic (``fill_``), a copy (``copy_``) and a transposing copy
(``copy_`` of ``.t()``), each over 256 MB, timed with CUDA events like ``migrate bench``.

Not part of the tool: it tells whether a migrated kernel's share is low for its traffic pattern
(``outerProduct`` only stores; the transposes stage through shared memory).

    python bench/store_probe.py --json out.json
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--json")
    a = p.parse_args(argv)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    import torch

    from migrate.runtime.bench import time_events

    n = 8192
    src = [torch.rand(n, n, device="cuda") for _ in range(2)]
    dst = [torch.empty(n, n, device="cuda") for _ in range(2)]
    nbytes = n * n * 4
    cases = {
        "store only (fill_)": (lambda i: dst[i % 2].fill_(1.5), nbytes),
        "copy (copy_)": (lambda i: dst[i % 2].copy_(src[i % 2]), 2 * nbytes),
        "transposing copy (copy_ of .t())": (lambda i: dst[i % 2].copy_(src[i % 2].t()), 2 * nbytes),
    }
    rows = []
    for label, (launch, moved) in cases.items():
        ms = statistics.median(time_events(launch, 20, 7))
        gbs = moved / (ms * 1e-3) / 1e9
        rows.append({"case": label, "ms": ms, "gbs": gbs, "share_of_4_8_tbs": gbs / 4800})
        print(f"{label:34} {ms:8.4f} ms {gbs:7.0f} GB/s ({100 * gbs / 4800:4.1f}% of 4.8 TB/s)", flush=True)
    if a.json:
        Path(a.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
