"""What a plain TileLang GEMM reaches on this GPU, per configuration, against cuBLAS.

Not part of the tool: a measuring stick for the lifted GEMMs (`migrate/emit/gemm.py`). Each
configuration is a textbook TileLang GEMM (global -> shared with ``T.copy``, ``T.gemm`` into a
register fragment, a ``T.Pipelined`` K loop), compiled with static or run-time shapes and with
the copy/warp-specialisation passes on or off, timed with CUDA events on the same inputs as
``torch.matmul`` (cuBLAS). Prints a table; ``--json`` writes it.

    python bench/gemm_probe.py --size 4096 --json out.json
"""
from __future__ import annotations

import argparse
import json
import sys


def build(M, N, K, bM, bN, bK, stages, threads, dtype, accum, dynamic, epilogue, swizzle):
    import tilelang.language as T

    if dynamic:
        M_, N_, K_ = T.dynamic("M"), T.dynamic("N"), T.dynamic("K")
    else:
        M_, N_, K_ = M, N, K

    @T.prim_func
    def gemm(A: T.Tensor((M_, K_), dtype), B: T.Tensor((K_, N_), dtype), C: T.Tensor((M_, N_), accum),
             alpha: T.float32, beta: T.float32):
        with T.Kernel(T.ceildiv(N_, bN), T.ceildiv(M_, bM), threads=threads) as (bx, by):
            A_s = T.alloc_shared((bM, bK), dtype)
            B_s = T.alloc_shared((bK, bN), dtype)
            acc = T.alloc_fragment((bM, bN), accum)
            if swizzle:
                T.use_swizzle(panel_size=10)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K_, bK), num_stages=stages):
                T.copy(A[by * bM, ko * bK], A_s)
                T.copy(B[ko * bK, bx * bN], B_s)
                T.gemm(A_s, B_s, acc)
            if epilogue:
                for i, j in T.Parallel(bM, bN):
                    if by * bM + i < M_ and bx * bN + j < N_:
                        C[by * bM + i, bx * bN + j] = alpha * acc[i, j] + beta * C[by * bM + i, bx * bN + j]
            else:
                T.copy(acc, C[by * bM, bx * bN])

    return gemm


TF32 = "custom[tfloat32]"  # TileLang's wgmma takes float32 operands only under this type


def build_tf32(M, N, K, bM, bN, bK, stages, threads, nt, swizzle, direct=False):
    """float32 inputs on tf32 warpgroup MMA: wgmma needs both operands k-major, so a (K, N)
    B tile is transposed in shared memory; an (N, K) B (``nt``) is copied as it is."""
    import tilelang.language as T

    b_shape = (N, K) if nt else (K, N)

    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float32"), B: T.Tensor(b_shape, "float32"), C: T.Tensor((M, N), "float32"),
             alpha: T.float32, beta: T.float32):
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_t = T.Tensor((M, K), TF32, A.data)
            B_t = T.Tensor(b_shape, TF32, B.data)
            A_s = T.alloc_shared((bM, bK), TF32)
            B_k = T.alloc_shared((bN, bK), TF32)
            if not nt:
                B_s = T.alloc_shared((bK, bN), TF32)
            acc = T.alloc_fragment((bM, bN), "float32")
            if swizzle:
                T.use_swizzle(panel_size=10)
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A_t[by * bM, ko * bK], A_s)
                if nt:
                    T.copy(B_t[bx * bN, ko * bK], B_k)
                else:
                    if direct:  # transposed on the way in, element by element
                        for k, j in T.Parallel(bK, bN):
                            B_k[j, k] = B_t[ko * bK + k, bx * bN + j]
                    else:
                        T.copy(B_t[ko * bK, bx * bN], B_s)
                        for j, k in T.Parallel(bN, bK):
                            B_k[j, k] = B_s[k, j]
                T.gemm(A_s, B_k, acc, transpose_B=True)
            for i, j in T.Parallel(bM, bN):
                C[by * bM + i, bx * bN + j] = alpha * acc[i, j] + beta * C[by * bM + i, bx * bN + j]

    return gemm


def time_ms(fn, reps=20, rounds=5):
    import torch

    fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(rounds):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            fn()
        stop.record()
        torch.cuda.synchronize()
        out.append(start.elapsed_time(stop) / reps)
    return sorted(out)[len(out) // 2]


CONFIGS = {
    "float16": [(128, 256, 64, 3, 256), (128, 128, 64, 3, 256), (128, 256, 64, 4, 256), (64, 256, 64, 4, 256),
                (128, 128, 32, 4, 128)],
    "float32": [(128, 128, 32, 3, 256)],
}
TF32_CONFIGS = [(128, 128, 32, 3, 256), (128, 256, 32, 3, 256), (128, 128, 32, 4, 256), (128, 256, 32, 2, 256),
                (128, 128, 64, 2, 256), (64, 256, 32, 3, 128)]
VARIANTS = [  # (name, dynamic shapes, pass configs, epilogue, swizzle)
    ("static", False, {}, False, False),
    ("static+epi", False, {}, True, False),
    ("static+epi+swz", False, {}, True, True),
    ("dynamic+epi", True, {}, True, False),
    ("dyn+epi no-tma/ws", True, {"tl.disable_tma_lower": True, "tl.disable_warp_specialized": True}, True, False),
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--json")
    p.add_argument("--dtypes", default="float16,float32")
    p.add_argument("--quick", action="store_true", help="first configuration of each dtype only")
    p.add_argument("--variants", default="", help="comma-separated parts of the tf32 variant names to run")
    a = p.parse_args(argv)
    import tilelang
    import torch

    n = a.size
    rows = []
    for dtype in a.dtypes.split(","):
        tdt = getattr(torch, dtype)
        A = torch.randn(n, n, device="cuda", dtype=tdt)
        B = torch.randn(n, n, device="cuda", dtype=tdt)
        torch.backends.cuda.matmul.allow_tf32 = True
        ref = (A.float() @ B.float())
        ms_cublas = time_ms(lambda: torch.matmul(A, B))
        rows.append({"dtype": dtype, "variant": "cuBLAS", "config": "", "ms": ms_cublas,
                     "tflops": 2 * n ** 3 / ms_cublas / 1e9, "rel_err": 0.0})
        print(f"{dtype:8} cuBLAS{'':24} {ms_cublas:8.3f} ms {rows[-1]['tflops']:7.1f} TFLOP/s", flush=True)
        configs = CONFIGS[dtype][:1] if a.quick else CONFIGS[dtype]
        if a.variants:
            configs = []  # the tf32 variants only
        for cfg in configs:
            for name, dynamic, passes, epi, swz in VARIANTS:
                if name != "static+epi" and cfg != configs[0] and not name.startswith("static+epi+"):
                    continue
                if dtype == "float32" and name != "static+epi":
                    continue  # float32 T.gemm is mma.sync tf32: one point of reference is enough  # the variants on the first configuration; the configurations on one variant
                C = torch.empty(n, n, device="cuda", dtype=torch.float32)
                try:
                    func = build(n, n, n, *cfg, dtype, "float32", dynamic, epi, swz)
                    kernel = tilelang.compile(func, target="cuda", pass_configs=passes or None)
                    C.fill_(float("nan"))
                    kernel(A, B, C, 1.0, 0.0)
                    torch.cuda.synchronize()
                    err = float(((C - ref).abs().max() / ref.abs().max()).item())
                    ms = time_ms(lambda: kernel(A, B, C, 1.0, 0.0))
                    row = {"dtype": dtype, "variant": name, "config": "x".join(map(str, cfg)), "ms": ms,
                           "tflops": 2 * n ** 3 / ms / 1e9, "rel_err": err}
                    print(f"{dtype:8} {name:18} {row['config']:14} {ms:8.3f} ms {row['tflops']:7.1f} TFLOP/s "
                          f"{100 * ms_cublas / ms:5.1f}% of cuBLAS  err {err:.1e}", flush=True)
                except Exception as exc:  # a configuration that does not compile is a result too
                    row = {"dtype": dtype, "variant": name, "config": "x".join(map(str, cfg)),
                           "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                    print(f"{dtype:8} {name:18} {row['config']:14} failed: {row['error'][:120]}", flush=True)
                rows.append(row)
        if dtype != "float32":
            continue
        Bt = B.t().contiguous()
        for nt, direct in ((False, True), (False, False), (True, False)):
            for cfg in (TF32_CONFIGS[:1] if a.quick else TF32_CONFIGS):
                for swz in (False, True):
                    if swz and cfg != TF32_CONFIGS[0]:
                        continue
                    name = f"tf32-wgmma {'NT' if nt else 'NN'}{'-direct' if direct else ''}{'+swz' if swz else ''}"
                    if a.variants and not any(v in name for v in a.variants.split(",")):
                        continue
                    C = torch.empty(n, n, device="cuda", dtype=torch.float32)
                    Bx = Bt if nt else B
                    try:
                        kernel = tilelang.compile(build_tf32(n, n, n, *cfg, nt, swz, direct), target="cuda")
                        C.fill_(float("nan"))
                        kernel(A, Bx, C, 1.0, 0.0)
                        torch.cuda.synchronize()
                        err = float(((C - ref).abs().max() / ref.abs().max()).item())
                        ms = time_ms(lambda: kernel(A, Bx, C, 1.0, 0.0))
                        row = {"dtype": dtype, "variant": name, "config": "x".join(map(str, cfg)), "ms": ms,
                               "tflops": 2 * n ** 3 / ms / 1e9, "rel_err": err}
                        print(f"{dtype:8} {name:18} {row['config']:14} {ms:8.3f} ms {row['tflops']:7.1f} TFLOP/s "
                              f"{100 * ms_cublas / ms:5.1f}% of cuBLAS  err {err:.1e}", flush=True)
                    except Exception as exc:
                        row = {"dtype": dtype, "variant": name, "config": "x".join(map(str, cfg)),
                               "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
                        print(f"{dtype:8} {name:18} {row['config']:14} failed: {row['error'][:120]}", flush=True)
                    rows.append(row)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
