"""Shared arrays sized by a template's value parameters (``__shared__ float t[(BX + 2) * (BY +
2)]`` in ``template <int BX, int BY>``, as tiled stencils and histograms write them): the
factory's Python expression of its parameters (emit.printer._value_template_extent), C's
division of sizes ``//``. Checked equal on the CPU for one instance."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_scalar

KERNEL = """
#include <cuda_runtime.h>
template <int BX, int BY>
__global__ void mirror(const float* __restrict__ in, float* __restrict__ out, int* __restrict__ pairs, int w) {
  __shared__ float tile[(BX + 2) * (BY + 2)];
  __shared__ int half[BY * BX / 2];
  int tx = threadIdx.x, ty = threadIdx.y;
  int x = blockIdx.x * BX + tx, y = blockIdx.y * BY + ty;
  int t = ty * BX + tx;
  tile[(ty + 1) * (BX + 2) + tx + 1] = in[y * w + x];
  if (t % 2 == 0) half[t / 2] = x - y;
  __syncthreads();
  out[y * w + x] = tile[(ty + 1) * (BX + 2) + tx + 1] - tile[(BY - ty) * (BX + 2) + BX - tx];
  pairs[y * w + x] = half[t / 2];
}
"""

SPEC = "\n".join([
    '[[kernel]]', 'name = "mirror"', 'template = ["8", "4"]', 'grid = [2, 3, 1]', 'block = [8, 4, 1]',
    'tolerance = "exact"', '']) + "".join([
        spec_buffer("in", "float32", 16 * 12, "in", -1.0, 1.0),
        spec_buffer("out", "float32", 16 * 12, "out"),
        spec_buffer("pairs", "int32", 16 * 12, "out"),
        spec_scalar("w", "int32", 16)])


def test_shared_arrays_sized_by_value_parameters(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "T.alloc_shared((((BX + 2) * (BY + 2)),)" in text and "T.alloc_shared(((BY * BX // 2),)" in text
