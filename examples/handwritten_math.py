"""A hand-written TileLang kernel calling CUDA math functions through ``migrate.compat.cuda_math``.

The shim gives every CUDA device math function in the compat table (``expf``, ``erff``,
``__expf``, ``__fdividef``, ``rsqrtf``, ``__popc``, ...) as a function returning the TileLang
expression of its CUDA semantics, on the GPU (``cuda``) and on TileLang's CPU target (``c``); the
few that TileLang lacks come as extern helpers in ``cuda_math.prelude(target)``. It needs no
libclang: a project that only runs hand-written or migrated TileLang installs cuda2tile without its
converter's dependencies (README, "Hybrid projects").

    python examples/handwritten_math.py [--target c|cuda] [--n 4096]
    python examples/handwritten_math.py --cuda-source      # the CUDA C++ for sm_90a, no GPU needed

Computes per element a GELU (the erf form, as CUDA's ``erff``), a fast reciprocal square root, a
fast sigmoid (``__expf``, ``__fdividef``) and a bit count, and compares them with numpy; exits 1 on
a mismatch. CUDA names that are not Python identifiers are spelled as ``cuda_math.python_name``
says: leading underscores stripped, ``fast_`` where the stripped name is itself a CUDA function
(``__expf`` -> ``fast_expf``, ``__popc`` -> ``popc``); ``cuda_math.call("__expf", v)`` takes the
CUDA spelling.
"""
from __future__ import annotations

import argparse
import math
import sys

import numpy as np
import tilelang
import tilelang.language as T

from migrate.compat import cuda_math

#: the CUDA function each output of the kernel calls, as TileLang's CUDA source for sm_90a names
#: it (``__popc`` and ``__fdividef`` through the prelude's helpers ``c2t___popc``/``c2t___fdividef``)
CUDA_CALLS = ("erff", "rsqrtf", "__expf", "__fdividef", "__popc")


def make_kernel(n: int, target: str):
    cuda_math.set_target(target)  # the functions pick the target's forms while the kernel is parsed

    @T.prim_func
    def gelu_stats(x: T.Tensor((n,), T.float32), bits: T.Tensor((n,), T.int32), y: T.Tensor((n,), T.float32),
                   r: T.Tensor((n,), T.float32), s: T.Tensor((n,), T.float32), c: T.Tensor((n,), T.int32)):
        with T.Kernel(T.ceildiv(n, 256), threads=256, prelude=cuda_math.prelude(target)) as bx:
            for i in T.Parallel(256):
                k = bx * 256 + i
                if k < n:
                    v = x[k]
                    y[k] = 0.5 * v * (1.0 + cuda_math.erff(v * 0.70710678118654752))
                    r[k] = cuda_math.rsqrtf(cuda_math.fabsf(v) + 1.0)
                    s[k] = cuda_math.fast_fdividef(1.0, 1.0 + cuda_math.fast_expf(-v))
                    c[k] = cuda_math.popc(bits[k])
    return gelu_stats


def cuda_source(n: int = 4096, arch: str = "sm_90a") -> str:
    """The CUDA C++ TileLang writes for the kernel on ``arch``, without a GPU."""
    import tvm

    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with target:
        return tilelang.lower(make_kernel(n, "cuda"), target=target).kernel_source


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--target", choices=("c", "cuda"), default="c")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--cuda-source", action="store_true", help="print the CUDA C++ for sm_90a (no GPU needed)")
    args = ap.parse_args(argv)
    if args.cuda_source:
        print(cuda_source(args.n))
        return 0
    import torch

    n, device = args.n, ("cuda" if args.target == "cuda" else "cpu")
    rng = np.random.default_rng(7)
    x = rng.uniform(-6.0, 6.0, n).astype(np.float32)
    bits = rng.integers(-2**31, 2**31 - 1, n, dtype=np.int64).astype(np.int32)
    kernel = tilelang.compile(make_kernel(n, args.target), target=args.target)
    tx, tb = torch.from_numpy(x).to(device), torch.from_numpy(bits).to(device)
    y, r, s = (torch.full((n,), float("nan"), device=device) for _ in range(3))  # poisoned outputs
    c = torch.full((n,), -1, dtype=torch.int32, device=device)
    kernel(tx, tb, y, r, s, c)
    x64 = x.astype(np.float64)
    want_y = 0.5 * x64 * (1.0 + np.vectorize(math.erf)(x64 / math.sqrt(2.0)))
    want_r = 1.0 / np.sqrt(np.abs(x64) + 1.0)
    want_s = 1.0 / (1.0 + np.exp(-x64))
    want_c = np.array([bin(int(b) & 0xFFFFFFFF).count("1") for b in bits], dtype=np.int32)
    err_y = float(np.max(np.abs(y.cpu().numpy() - want_y) / np.maximum(np.abs(want_y), 1.0)))
    err_r = float(np.max(np.abs(r.cpu().numpy() - want_r) / want_r))
    err_s = float(np.max(np.abs(s.cpu().numpy() - want_s) / want_s))
    same_c = bool(np.array_equal(c.cpu().numpy(), want_c))
    # float32 results: a few ulp (2**-23 each) of the exact values; __expf and __fdividef are
    # CUDA's fast forms (at most 2 + 1.16 |x| and 2 ulp), well inside 1e-5 for |x| <= 6
    ok = err_y < 1e-5 and err_r < 1e-5 and err_s < 1e-5 and same_c
    print(f"{args.target}: gelu max rel err {err_y:.2e}, rsqrt max rel err {err_r:.2e}, "
          f"sigmoid max rel err {err_s:.2e}, popc {'equal' if same_c else 'DIFFERENT'}: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
