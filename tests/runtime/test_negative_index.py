"""log2's kernel: a device function whose ``while`` loops end by ``break``, then a store at
``output[r * n + i]``. TileLang 0.1.15's LegalizeNegativeIndex took the index for a negative one
(its analyzer's facts after the loops are not sound) and added the buffer's extent, as Python's
``a[-k]``: the H100 stopped on an illegal address. A migrated kernel's index is C's, so the
runtime builds its kernels without that pass; the kernel checks equal on the CPU and its CUDA
stores at ``r * n + i``."""
from __future__ import annotations

import importlib.util

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar
from tests.lowering import lower_sm90

KERNEL = """
#include <stdint.h>
union bits_of { float f; uint32_t i; };

__device__ float fraction_bits(float x, int limit) {
  bits_of u;
  u.f = x;
  uint8_t exponent = ((u.i & 0x7F800000) >> 23) - 127;
  int scale = 1 << exponent;
  int sum = 0;
  float y = x / scale;
  float result = 0.0f;
  bool saturated = false;
  uint64_t denom = 0;
  uint64_t previous = 0;
  while ((sum < limit + 1 && y != 1.0f) || saturated) {
    int m = 0;
    while (y < 2.0f && sum + m < limit + 1) {
      y *= y;
      m++;
    }
    sum += m;
    previous = denom;
    denom = (uint64_t)1 << sum;
    if (sum >= limit) break;
    if (previous > denom) {
      saturated = true;
      break;
    }
    result += 1.0f / (float)denom;
    y /= 2.0f;
  }
  return exponent + result;
}

__global__ void logs(float* __restrict__ output, const float* __restrict__ input, int r, int n, int limit) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    output[r * n + i] = fraction_bits(input[i], limit);
  }
}
"""

SPEC = spec_kernel("logs", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("output", "float32", 384, "inout", -1.0, 1.0),
                   spec_buffer("input", "float32", 128, "in", 1.0, 30.0),
                   spec_scalar("r", "int32", 2),
                   spec_scalar("n", "int32", 128),
                   spec_scalar("limit", "int32", 12))


def test_a_store_after_loops_left_by_break_keeps_its_index_in_cuda(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    spec = importlib.util.spec_from_file_location("k_logs", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["logs"], (2, 1, 1), (64, 1, 1))
    stores = [line for line in source.splitlines() if "output[" in line]
    assert stores and not any("output_len" in line for line in stores), stores
