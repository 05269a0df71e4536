"""A per-thread value kept across barriers lives in a shared array indexed by the thread
(``sum_x[tx]``); a portable phase that uses it in a loop (or more than twice) holds it in a register
meanwhile, read at the phase's start and stored back at its end, the way image kernels sum a
patch per warp lane and then reduce the sums with shuffles (dpid's per-thread float4 sums ran 3.6x
slower than the CUDA while each ``+=`` of the loop was a shared load and store). Checked: the
module's text, its run on the CPU against numpy, and its lowering for sm_90a (no GPU needed)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

struct Acc { float x, w; };

__device__ __forceinline__ Acc shfl_down(const Acc a, unsigned d) {
  Acc o;
  o.x = __shfl_down_sync(0xffffffff, a.x, d);
  o.w = __shfl_down_sync(0xffffffff, a.w, d);
  return o;
}

// one patch per warp: each lane sums a strided part of it, the warp adds the lanes' sums up
__global__ void patch_means(const float* __restrict__ img, float* __restrict__ out, int patch, int count) {
  int p = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  if (p >= count) return;
  Acc s = {0.f, 0.f};
  for (int i = threadIdx.x % 32; i < patch; i += 32) {
    float v = img[p * patch + i];
    s.x += v * (1.f + 0.5f * (i & 1));
    s.w += 1.f + 0.5f * (i & 1);
  }
  for (int d = 16; d > 0; d /= 2) {
    Acc o = shfl_down(s, d);
    s.x += o.x;
    s.w += o.w;
  }
  if (threadIdx.x % 32 == 0) out[p] = s.x / s.w;
}

int main() {
  float *img, *out;
  cudaMalloc(&img, 37 * 300 * sizeof(float));
  cudaMalloc(&out, 37 * sizeof(float));
  patch_means<<<(37 + 3) / 4, 128>>>(img, out, 300, 37);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("held"), PROGRAM, "k.cu")


def test_the_loop_sums_in_registers(converted):
    text = (converted / "k.py").read_text()
    assert "T.alloc_shared((block_x,)" in text   # the sums cross the shuffles' barriers: kept per thread
    assert re.search(r"s_x_r = s_x\[tx\]", text) and re.search(r"s_x\[tx\] = s_x_r", text), text
    assert re.search(r"s_x_r = s_x_r \+ ", text), text            # the loop adds to the register
    assert not re.search(r"s_x\[tx\] = s_x\[tx\] \+ v", text), text  # not to the shared array
    # a phase that reads and writes it once (the shuffles' sums) keeps the shared access
    assert re.search(r"s_x\[tx\] = s_x\[tx\] \+ o_x", text), text


def test_the_held_sums_run_on_the_cpu(converted):
    mod = module_of(converted / "k.py")
    patch, count = 300, 37
    img = np.random.default_rng(11).uniform(-2.0, 2.0, count * patch).astype(np.float32)
    out = np.full(count, np.nan, np.float32)
    mod.patch_means(img, out, patch, count, grid=(count + 3) // 4, block=128, target="c")
    weights = 1.0 + 0.5 * (np.arange(patch) & 1)
    rows = img.astype(np.float64).reshape(count, patch)
    want = (rows * weights).sum(axis=1) / weights.sum()
    np.testing.assert_allclose(out, want, rtol=2e-5, atol=1e-6)


def test_the_held_sums_lower_for_sm90(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["patch_means"], (10, 1, 1), (128, 1, 1))
    # the loop adds to a register (a shared load and store a step before)
    assert re.search(r"s_x_r = \(s_x_r \+", source), source
