"""A portable kernel's per-thread values kept across its barriers are registers on GPUs: each is
a fragment with one element per thread (``alloc_thread``), where it was a shared array indexed by
the thread. dpid's float4 warp reduction through its own ``__shfl_down`` of a float4 kept 56 such
temporaries, 28 KB of shared memory per block of 128 threads, and ran 3x slower than the CUDA on
an H100. The CPU target keeps shared arrays (its phases run as loops over the threads). Checked:
the module's text, its CPU run against numpy, and the sm_90a CUDA TileLang writes (no GPU here)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

__device__ __forceinline__ float4 shfl_down4(const float4 v, const unsigned d) {
  float4 o;
  o.x = __shfl_down_sync(0xFFFFFFFF, v.x, d, 32);
  o.y = __shfl_down_sync(0xFFFFFFFF, v.y, d, 32);
  o.z = __shfl_down_sync(0xFFFFFFFF, v.z, d, 32);
  o.w = __shfl_down_sync(0xFFFFFFFF, v.w, d, 32);
  return o;
}

__device__ __forceinline__ void add4(float4& a, const float4 b) {
  a.x += b.x; a.y += b.y; a.z += b.z; a.w += b.w;
}

// one warp per output: its lanes stride over a row of pixels, then a float4 warp reduction
__global__ void row_colors(const float* __restrict__ px, float* __restrict__ out, int rows, int cols) {
  const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  float4 c = make_float4(0.f, 0.f, 0.f, 0.f);
  for (int i = threadIdx.x % 32; i < cols; i += 32) {
    const float f = 0.5f + 0.25f * (i % 3);
    add4(c, make_float4(px[(row * cols + i) * 3] * f, px[(row * cols + i) * 3 + 1] * f,
                        px[(row * cols + i) * 3 + 2] * f, f));
  }
  add4(c, shfl_down4(c, 16));
  add4(c, shfl_down4(c, 8));
  add4(c, shfl_down4(c, 4));
  add4(c, shfl_down4(c, 2));
  add4(c, shfl_down4(c, 1));
  if (threadIdx.x % 32 == 0) {
    out[row * 3] = c.x / c.w;
    out[row * 3 + 1] = c.y / c.w;
    out[row * 3 + 2] = c.z / c.w;
  }
}

int main() {
  float *px, *out;
  cudaMalloc(&px, 40 * 50 * 3 * sizeof(float));
  cudaMalloc(&out, 40 * 3 * sizeof(float));
  row_colors<<<10, 128>>>(px, out, 38, 50);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("fragments"), PROGRAM, "k.cu")


def test_per_thread_values_are_fragments_on_gpus(converted):
    text = (converted / "k.py").read_text()
    assert "row_colors: portable" in text or "(portable)" in text
    assert re.search(r'alloc_thread, thread_scope = \(T\.alloc_fragment, "local\.fragment"\) if target == "cuda" '
                     r'else \(T\.alloc_shared, "shared"\)', text), text
    assert re.search(r"\bc_x = alloc_thread\(\(block_x,\), T\.float32, scope=thread_scope\)", text), text
    # no per-thread scalar is a shared array any more: only the CPU target's exchange buffer
    shared = re.findall(r"(\w+) = T\.alloc_shared\(\(block_x,\)", text)
    assert shared and all(name.startswith("xch_") for name in shared), shared


def _want(px: np.ndarray, rows: int, cols: int) -> np.ndarray:
    f = 0.5 + 0.25 * (np.arange(cols) % 3)
    p = px.astype(np.float64).reshape(-1, cols, 3)[:rows]
    s = (p * f[None, :, None]).sum(axis=1)
    return (s / f.sum()).reshape(-1)


def test_the_cpu_run_matches_numpy(converted):
    mod = module_of(converted / "k.py")
    rows, cols = 38, 50
    px = np.random.default_rng(21).uniform(0.0, 255.0, 40 * cols * 3).astype(np.float32)
    out = np.full(40 * 3, np.nan, np.float32)
    mod.row_colors(px, out, rows, cols, grid=10, block=128, target="c")
    np.testing.assert_allclose(out[:rows * 3], _want(px, rows, cols), rtol=2e-6)
    assert np.isnan(out[rows * 3:]).all()   # rows past the last are never written


def test_the_cuda_keeps_them_in_registers(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["row_colors"], (10, 1, 1), (128, 1, 1))
    assert "__shfl_down_sync(" in source
    # no shared memory at all: the shuffles are native and every temporary is a register
    assert "__shared__" not in source and "extern __shared__" not in source, source
    assert re.search(r"\bfloat c_x\[1\];", source), source
