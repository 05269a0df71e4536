"""Kernels and numpy references shared by the runtime tests: the fixture programs under
tests/fixtures/runtime/ (features.cu's warp operations, wmma.cu's GEMMs) as the CPU executor's
tests (test_features.py) and the GPU executor's (test_gpu.py) check them."""
from __future__ import annotations

import numpy as np

from migrate.runtime.spec import load_spec
from tests.paths import FIXTURES

FIX = FIXTURES / "runtime"


def ref_warp_ops():
    out = np.zeros((192, 8), dtype=np.int64)
    for g in range(192):
        b, t = divmod(g, 64)
        lane = t % 32
        out[g, 0] = ((lane + 3) % 32) * 10 + b
        out[g, 1] = lane - 2 if lane >= 2 else lane
        out[g, 2] = lane + 5 if (lane & 15) + 5 < 16 else lane
        out[g, 3] = lane ^ 1
        out[g, 4] = np.int32(np.uint32(sum(1 << j for j in range(32) if j % 3 == 0)).view(np.int32))
        out[g, 5] = 1 + 2 * 1 + 4 * 0
        out[g, 6] = 32
        out[g, 7] = len([u for u in range(64) if u % 5 == 0]) + 1000 + 2000
    return out.reshape(-1)


WMMA = {k.id: k for k in load_spec(FIX / "wmma.toml")}


def ref_wmma_half(args, symbols):
    A = args["A"].astype(np.float64).reshape(48, 48)
    Bt = args["B"].astype(np.float64).reshape(64, 48)       # column-major B = row-major B^T
    return {"C": (0.5 * A @ Bt.T).reshape(-1)}


def ref_wmma_tf32(args, symbols):
    A = args["A"].astype(np.float64).reshape(48, 32)
    B = args["B"].astype(np.float64).reshape(32, 64)
    return {"C": (A @ B).reshape(-1)}
