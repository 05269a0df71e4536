"""cuBLAS reference times for the GEMM goals (torch.matmul on the GPU), in one process.

    python bench/cublas_ref.py [--size 4096] [--json FILE]

Times C = A @ B for square fp32 (tf32 off, then on) and fp16 matrices with CUDA events (median of
rounds of back-to-back launches, as `migrate bench` does) and prints ms and TFLOP/s.
"""
from __future__ import annotations

import argparse
import json
import statistics


def main() -> int:
    import torch
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--json")
    args = ap.parse_args()
    n = args.size
    rows = {}
    for label, dtype, tf32 in (("fp32", torch.float32, False), ("tf32", torch.float32, True),
                               ("fp16", torch.float16, False)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        times = []
        for _ in range(7):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(10):
                torch.matmul(a, b)
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) / 10)
        ms = statistics.median(times)
        rows[label] = {"ms": ms, "tflops": 2 * n ** 3 / (ms * 1e-3) / 1e12}
        print(f"cuBLAS {label:5s} {n}^3: {ms:8.3f} ms  {rows[label]['tflops']:7.1f} TFLOP/s", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"size": n, "device": torch.cuda.get_device_name(0), "rows": rows}, f, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
