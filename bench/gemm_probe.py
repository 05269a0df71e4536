"""What a plain TileLang GEMM reaches on this GPU, per configuration, against cuBLAS.

Not part of the tool: a measuring stick for the lifted GEMMs (`migrate/emit/gemm.py`). Each
configuration is a textbook TileLang GEMM (global -> shared with ``T.copy``, ``T.gemm`` into a
register fragment, a ``T.Pipelined`` K loop), compiled with static or run-time shapes and with
the copy/warp-specialisation passes on or off, timed with CUDA events on the same inputs as
``torch.matmul`` (cuBLAS). Prints a table; ``--json`` writes it.

    python bench/gemm_probe.py --size 4096 --sets fp16,mma,wgmma,transposed --json out.json
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository's migrate package

import tilelang.language as T  # prim_func annotations are evaluated in this module's globals


def build(M, N, K, bM, bN, bK, stages, threads, dtype, accum, dynamic, epilogue, swizzle, flat=False):
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
            if flat:  # C as the CUDA code indexes it: one flat array, 64-bit index math
                C_flat = T.decl_buffer((M_ * N_,), accum, data=C.data)
                for i, j in T.Parallel(bM, bN):
                    if by * bM + i < M_ and bx * bN + j < N_:
                        idx = T.Cast("uint64", by * bM + i) * T.Cast("uint64", N_) + T.Cast("uint64", bx * bN + j)
                        C_flat[idx] = alpha * acc[i, j] + beta * C_flat[idx]
            elif epilogue:
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


def build_tf32_transposed(M, N, K, bM, bN, bK, stages, threads, workspace):
    """float32 (K, N) B on tf32 warpgroup MMA: a first kernel writes B transposed to a global
    workspace (an extra argument, or ``T.alloc_global``), the second multiplies k-major tiles."""
    @T.macro
    def body(A, B, Bt, C, alpha, beta):
        with T.Kernel(T.ceildiv(N, 32), T.ceildiv(K, 32), threads=256) as (bx, by):
            S = T.alloc_shared((32, 33), "float32")
            for i, j in T.Parallel(32, 32):
                S[i, j] = B[by * 32 + i, bx * 32 + j]
            for i, j in T.Parallel(32, 32):
                Bt[bx * 32 + i, by * 32 + j] = S[j, i]
        with T.Kernel(T.ceildiv(N, bN), T.ceildiv(M, bM), threads=threads) as (bx, by):
            A_t = T.decl_buffer((M, K), TF32, data=A.data)
            B_t = T.decl_buffer((N, K), TF32, data=Bt.data)
            A_s = T.alloc_shared((bM, bK), TF32)
            B_s = T.alloc_shared((bN, bK), TF32)
            acc = T.alloc_fragment((bM, bN), "float32")
            T.clear(acc)
            for ko in T.Pipelined(T.ceildiv(K, bK), num_stages=stages):
                T.copy(A_t[by * bM, ko * bK], A_s)
                T.copy(B_t[bx * bN, ko * bK], B_s)
                T.gemm(A_s, B_s, acc, transpose_B=True)
            for i, j in T.Parallel(bM, bN):
                C[by * bM + i, bx * bN + j] = alpha * acc[i, j] + beta * C[by * bM + i, bx * bN + j]

    if workspace:
        @T.prim_func
        def gemm(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), Bt: T.Tensor((N, K), "float32"),
                 C: T.Tensor((M, N), "float32"), alpha: T.float32, beta: T.float32):
            body(A, B, Bt, C, alpha, beta)
    else:
        @T.prim_func
        def gemm(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32"),
                 alpha: T.float32, beta: T.float32):
            Bt = T.alloc_global((N, K), "float32")
            body(A, B, Bt, C, alpha, beta)
    return gemm


def time_ms(fn, reps=20, rounds=5):
    """The median per-launch milliseconds of ``fn`` (``migrate bench``'s timer)."""
    from migrate.runtime.bench import time_events

    return statistics.median(time_events(lambda _: fn(), reps, rounds))


CONFIGS = {
    "float16": [(128, 256, 64, 3, 256), (128, 128, 64, 3, 256), (128, 256, 64, 4, 256), (64, 256, 64, 4, 256),
                (128, 128, 32, 4, 128)],
    "float32": [(128, 128, 32, 3, 256), (128, 256, 32, 3, 256), (256, 128, 32, 3, 256), (128, 128, 64, 3, 256),
                (128, 128, 32, 4, 256)],
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


def experiments(dtype, sets):
    """(variant name, configuration, builder, call kind) for one dtype: ``sets`` picks among
    "fp16" (configurations x static/dynamic/pass variants), "mma" (float32 T.gemm, mma.sync),
    "flat" (the CUDA code's flat, 64-bit-indexed C in the epilogue), "wgmma" (tf32 warpgroup MMA,
    NT and NN through shared memory), "transposed" (NN with B transposed to a workspace first)."""
    out = []
    if dtype == "float16" and "fp16" in sets:
        configs = CONFIGS["float16"]
        for cfg in configs:
            for name, dynamic, passes, epi, swz in VARIANTS:
                if cfg != configs[0] and not name.startswith("static+epi"):
                    continue  # the variants on the first configuration; the configurations on two
                out.append((name, cfg, lambda n, c=cfg, d=dynamic, e=epi, w=swz: build(n, n, n, *c, dtype, "float32", d, e, w),
                            passes, "plain"))
    if dtype != "float32":
        return out
    if "mma" in sets:
        for cfg in CONFIGS["float32"]:
            out.append(("mma static+epi", cfg, lambda n, c=cfg: build(n, n, n, *c, dtype, "float32", False, True, False),
                        {}, "plain"))
    if "flat" in sets:
        cfg = CONFIGS["float32"][0]
        out.append(("mma flat64 epi", cfg, lambda n, c=cfg: build(n, n, n, *c, dtype, "float32", False, True, False, True),
                    {}, "plain"))
    if "wgmma" in sets:
        for nt, direct in ((False, True), (False, False), (True, False)):
            for cfg in TF32_CONFIGS:
                name = f"tf32-wgmma {'NT' if nt else 'NN'}{'-direct' if direct else ''}"
                out.append((name, cfg, lambda n, c=cfg, t=nt, d=direct: build_tf32(n, n, n, *c, t, False, d), {},
                            "nt" if nt else "plain"))
    if "transposed" in sets:
        for cfg in ((128, 256, 32, 3, 256), (128, 128, 32, 3, 256), (128, 256, 32, 4, 256)):
            for ws in (True, False):
                name = f"tf32 transposed-B {'workspace' if ws else 'alloc_global'}"
                out.append((name, cfg, lambda n, c=cfg, w=ws: build_tf32_transposed(n, n, n, *c, w), {},
                            "workspace" if ws else "plain"))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--size", type=int, default=4096)
    p.add_argument("--json")
    p.add_argument("--dtypes", default="float16,float32")
    p.add_argument("--sets", default="fp16,mma,wgmma", help="experiment sets (see experiments())")
    a = p.parse_args(argv)
    import tilelang
    import torch

    n = a.size
    sets = set(a.sets.split(","))
    rows = []
    for dtype in a.dtypes.split(","):
        tdt = getattr(torch, dtype)
        A = torch.randn(n, n, device="cuda", dtype=tdt)
        B = torch.randn(n, n, device="cuda", dtype=tdt)
        Bt = B.t().contiguous()
        work = torch.empty(n, n, device="cuda", dtype=tdt)
        torch.backends.cuda.matmul.allow_tf32 = True
        ref = (A.float() @ B.float())
        ms_cublas = time_ms(lambda: torch.matmul(A, B))
        rows.append({"dtype": dtype, "variant": "cuBLAS", "config": "", "ms": ms_cublas,
                     "tflops": 2 * n ** 3 / ms_cublas / 1e9, "rel_err": 0.0})
        print(f"{dtype:8} cuBLAS{'':30} {ms_cublas:8.3f} ms {rows[-1]['tflops']:7.1f} TFLOP/s", flush=True)
        C = torch.empty(n, n, device="cuda", dtype=torch.float32)
        for name, cfg, builder, passes, kind in experiments(dtype, sets):
            row = {"dtype": dtype, "variant": name, "config": "x".join(map(str, cfg))}
            try:
                kernel = tilelang.compile(builder(n), target="cuda", pass_configs=passes or None)
                args = {"plain": (A, B, C, 1.0, 0.0), "nt": (A, Bt, C, 1.0, 0.0),
                        "workspace": (A, B, work, C, 1.0, 0.0)}[kind]
                C.normal_()  # poisoned with finite values: beta = 0 must drop them
                kernel(*args)
                torch.cuda.synchronize()
                err = float(((C - ref).abs().max() / ref.abs().max()).item())
                ms = time_ms(lambda: kernel(*args))
                row.update(ms=ms, tflops=2 * n ** 3 / ms / 1e9, rel_err=err)
                print(f"{dtype:8} {name:28} {row['config']:16} {ms:8.3f} ms {row['tflops']:7.1f} TFLOP/s "
                      f"{100 * ms_cublas / ms:5.1f}% of cuBLAS  rel err {err:.1e}", flush=True)
            except Exception as exc:  # a configuration that does not compile is a result too
                row["error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
                print(f"{dtype:8} {name:28} {row['config']:16} failed: {row['error'][:120]}", flush=True)
            rows.append(row)
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
