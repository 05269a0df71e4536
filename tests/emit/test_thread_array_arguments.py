"""A per-thread array that lives across a barrier (one row per thread of a shared array) passed to
a device function that works on it in place, as the pool's dct8x8 passes ``float D[8]`` to
``DCT8(D)``: the call printed the thread's row (``D[ty, tx]``), which TileLang refused ("Buffer D
is 3-dimensional, but 2 indices were provided") and the module did not build for the GPU. The row
now goes through a local copy, written back after the call; the kernel checks equal on the CPU and
lowers for sm_90a."""
from __future__ import annotations

import importlib.util

from tests.analysis.support import converted, spec_buffer, spec_kernel
from tests.lowering import lower_sm90

NEIGHBOURS = """
__device__ void rotate4(float* v) {
  float t = v[0];
  v[0] = v[1]; v[1] = v[2]; v[2] = v[3]; v[3] = t * 2.0f;
}
__global__ void neighbours(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float s[64 * 4];
  float v[4];
  int t = threadIdx.x;
  for (int i = 0; i < 4; i++) v[i] = x[blockIdx.x * 256 + t * 4 + i];
  rotate4(v);
  for (int i = 0; i < 4; i++) s[t * 4 + i] = v[i];
  __syncthreads();
  for (int i = 0; i < 4; i++) v[i] += s[((t + 1) % 64) * 4 + i];
  rotate4(v);
  for (int i = 0; i < 4; i++) y[blockIdx.x * 256 + t * 4 + i] = v[i];
}
"""

SPEC = spec_kernel("neighbours", (3, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("x", "float32", 768, "in", -1.0, 1.0),
                   spec_buffer("y", "float32", 768, "out"))


def test_a_thread_row_passed_to_a_device_function_checks_equal_and_lowers_for_cuda(tmp_path):
    out, (k,) = converted(tmp_path, NEIGHBOURS, SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert text.count("rotate4(v_row_)") == 2 and "rotate4(v[" not in text
    assert "v[tx, row_0_] = v_row_[row_0_]" in text  # written back
    spec = importlib.util.spec_from_file_location("k_thread_rows", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["neighbours"], (3, 1, 1), (64, 1, 1))
    assert "__syncthreads()" in source
