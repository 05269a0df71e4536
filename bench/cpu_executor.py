"""Speed of the CPU executor (runtime/cuda_cpu.py) after compilation.

Goals (2 CPU cores): a 1 M thread elementwise kernel under 1 s; a shared-memory tree reduction
over 1 M floats with 256-thread blocks under 2 s. Prints, for each kernel and schedule, the time
the launch itself took inside the worker ("kernel") and the whole run_cpu call with process
start, data transfer and result checks ("run"), best of --repeat runs.

    python bench/cpu_executor.py [--repeat 3] [--schedules forward,random]
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

try:
    from migrate.runtime.cuda_cpu import compile_cpu, run_cpu
    from migrate.runtime.inputs import make_inputs
    from migrate.runtime.spec import parse_spec
except ImportError:  # running from a checkout without the package installed
    from runtime.cuda_cpu import compile_cpu, run_cpu
    from runtime.inputs import make_inputs
    from runtime.spec import parse_spec

N = 1 << 20

SOURCE = r"""
#include <cuda_runtime.h>

__global__ void scale_shift(const float* __restrict__ x, float* __restrict__ y, float a, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + b;
}

template <int BLOCK>
__global__ void block_reduce(const float* __restrict__ x, float* __restrict__ partial, int n)
{
    __shared__ float s[BLOCK];
    int tid = threadIdx.x;
    int i = blockIdx.x * BLOCK + tid;
    s[tid] = i < n ? x[i] : 0.0f;
    __syncthreads();
    for (int stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partial[blockIdx.x] = s[0];
}

int main() { return 0; }
"""

SPEC = f"""
[[kernel]]
name = "scale_shift"
grid = [{N // 256}, 1, 1]
block = [256, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = {N}
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = {N}
role = "out"
[[kernel.args]]
name = "a"
scalar = "float32"
value = 2.0
[[kernel.args]]
name = "b"
scalar = "float32"
value = 0.5
[[kernel.args]]
name = "n"
scalar = "int32"
value = {N}

[[kernel]]
name = "block_reduce"
template = ["256"]
grid = [{N // 256}, 1, 1]
block = [256, 1, 1]
tolerance = "fp32_accum"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = {N}
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "partial"
buffer = "float32"
elements = {N // 256}
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = {N}
"""

GOALS = {"scale_shift": 1.0, "block_reduce": 2.0}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--schedules", default="forward,reverse,random")
    opts = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        cu = Path(tmp) / "bench_kernels.cu"
        cu.write_text(SOURCE)
        kernels = parse_spec(SPEC, Path(tmp) / "bench_kernels.toml")
        t0 = time.perf_counter()
        lib = compile_cpu(cu, kernels)
        t_compile = time.perf_counter() - t0
        print(f"compile: {t_compile:.2f} s{' (cached)' if lib.cached else ''}  [{os.cpu_count()} CPU cores]")
        ok = True
        for k in kernels:
            inp = make_inputs(k, seed=1)
            x = inp.args["x"].astype(np.float64)
            for sched in opts.schedules.split(","):
                best_kernel, best_run = float("inf"), float("inf")
                for _ in range(opts.repeat):
                    t0 = time.perf_counter()
                    res = run_cpu(lib, k, inp.args, inp.symbols, schedule=sched, seed=5, timeout=60)
                    t_run = time.perf_counter() - t0
                    if not res.ok:
                        print(f"{k.name}: {res}")
                        return 1
                    best_kernel = min(best_kernel, res.elapsed)
                    best_run = min(best_run, t_run)
                if k.name == "scale_shift":
                    err = np.abs(res.outputs["y"] - (2.0 * x + 0.5)).max()
                else:
                    err = np.abs(res.outputs["partial"] - x.reshape(-1, 256).sum(axis=1)).max()
                goal = GOALS[k.name]
                flag = "ok" if best_kernel < goal else "SLOWER THAN GOAL"
                ok &= best_kernel < goal
                print(f"{k.instance:18s} {sched:8s} kernel {best_kernel * 1e3:8.1f} ms   run {best_run * 1e3:8.1f} ms   "
                      f"goal < {goal:.0f} s: {flag}   (max abs err {err:.2g})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
