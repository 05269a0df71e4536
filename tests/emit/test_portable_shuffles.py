"""A warp shuffle of a portable kernel is the CUDA's own shuffle on the CUDA target: a phase's
``T.Parallel`` iteration over a row of threads is its thread there, so every thread shuffles over
its warp into a variable and the threads the guards keep take the result (a thread that returned
early in the CUDA only skips the guarded code here, and a shuffle waiting for it would hang). The
CPU target, which has no warps, still exchanges through a shared buffer between barriers. Checked:
the module's text, its CPU run against numpy, and the sm_90a CUDA TileLang writes (no GPU here:
the GPU check and bench/gpu_session.sh's timing run the CUDA path)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

// per-warp sums of a row that ends inside a warp: the last warp's tail returns early
__global__ void warp_sums(const float* __restrict__ x, float* __restrict__ sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i] * 2.0f;
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffff, v, d);
  if (threadIdx.x % 32 == 0) sums[i / 32] = v;
}

// the same over a 2-D block: its lanes are the CUDA's only as ty * blockDim.x + tx
__global__ void warp_sums_2d(const float* __restrict__ x, float* __restrict__ sums, int n) {
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  int i = blockIdx.x * blockDim.x * blockDim.y + t;
  if (i >= n) return;
  float v = x[i];
  for (int d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffff, v, d);
  if (t % 32 == 0) sums[i / 32] = v;
}

int main() {
  float *x, *s;
  cudaMalloc(&x, 1024 * sizeof(float));
  cudaMalloc(&s, 32 * sizeof(float));
  warp_sums<<<4, 256>>>(x, s, 1000);
  warp_sums_2d<<<4, dim3(16, 16)>>>(x, s, 1024);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("shuffles"), PROGRAM, "k.cu")


def _factory(text: str, name: str) -> str:
    return text[text.index(f"def make_{name}("):text.index(f"{name.upper()} = Signature(")]


def test_a_row_of_threads_shuffles_natively_on_cuda(converted):
    text = (converted / "k.py").read_text()
    row = _factory(text, "warp_sums")
    assert 'if target == "cuda":' in row
    # every thread shuffles (outside the guard of the early return), the guard takes the result
    assert re.search(r"x_src = T\.shfl_down\(.*\)\s+# L\d+\n\s+if \w+\[tx\]:\s+# L\d+\n\s+\w+\[tx\] = x_src", row), row
    assert "xch_float32" in row   # the CPU target's exchange
    assert "T.shfl" not in _factory(text, "warp_sums_2d")   # a 2-D block keeps the shared exchange


def test_the_cpu_target_still_exchanges_through_shared_memory(converted):
    mod = module_of(converted / "k.py")
    x = np.random.default_rng(13).integers(-50, 50, 1024).astype(np.float32) / 8   # exact sums
    sums = np.full(32, np.nan, np.float32)
    mod.warp_sums(x, sums, 1000, grid=4, block=256, target="c")
    want = np.zeros(32)
    np.add.at(want, np.arange(1000) // 32, 2.0 * x[:1000].astype(np.float64))
    np.testing.assert_array_equal(sums[:31], want[:31])   # the last warp's lanes past n read no partner
    sums2 = np.full(32, np.nan, np.float32)
    mod.warp_sums_2d(x, sums2, 1024, grid=4, block=(16, 16), target="c")
    np.testing.assert_array_equal(sums2, x.astype(np.float64).reshape(32, 32).sum(axis=1))


def test_the_cuda_shuffles_are_warp_shuffles_with_no_barrier(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["warp_sums"], (4, 1, 1), (256, 1, 1))
    assert "__shfl_down_sync(" in source and "__syncthreads" not in source, source
    source = lower_sm90(mod.KERNELS["warp_sums_2d"], (4, 1, 1), (16, 16, 1))
    assert "__shfl" not in source and "__syncthreads" in source
