"""An array of several dimensions indexed by an unsigned difference with a constant minuend
(``s[63 - threadIdx.x][1]``: unsigned in C, as ``threadIdx.x`` is). In a portable kernel TileLang's
vectorize planner refused it ("Minuend's value is 0U and it's dtype is uint", then "cannot make
uint from negative value"); a one-dimensional array so indexed built. The index is printed as the
int32 difference, the same value for every index within the array's bounds."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel

KERNEL = """
__global__ void mirror_rows(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float s[64][2];
  s[threadIdx.x][0] = x[blockIdx.x * 64 + threadIdx.x];
  s[threadIdx.x][1] = 2.0f * x[blockIdx.x * 64 + threadIdx.x];
  __syncthreads();
  y[blockIdx.x * 64 + threadIdx.x] = s[63 - threadIdx.x][1] + s[63 - threadIdx.x][0] * s[threadIdx.x][1];
}
"""

SPEC = spec_kernel("mirror_rows", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                   spec_buffer("y", "float32", 128, "out"))


def test_a_row_picked_by_an_unsigned_difference_builds_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    assert "s[63 - tx, 1]" in (out / "k.py").read_text()
