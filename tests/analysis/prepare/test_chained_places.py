"""A chained assignment whose inner place is indexed through a call (``wl[ind(d % 2, i, n)] =
z[ind(i, j, n)] = wltmp;``, a dynamic program's two tables filled at once): the value stored,
in the inner place's type, is held in a local, and each place is evaluated once as in C
(analysis.prepare.chained_assign)."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
__device__ int ind(int i, int j, int n) { return i * n + j; }

__global__ void fill(float* __restrict__ wl, int* __restrict__ z, const float* __restrict__ x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int j = (i * 7) % n;
  if (i < n) {
    float v = x[i] * 3.0f - 1.0f;
    wl[ind(i % 2, i, n)] = z[ind(i, j, n)] = v;  // z's int value, then that int as a float
  }
}
"""

SPEC = spec_kernel("fill", (2, 1, 1), (32, 1, 1), "exact",
                   spec_buffer("wl", "float32", 2 * 64, "inout", -1.0, 1.0),
                   spec_buffer("z", "int32", 64 * 64, "inout", -5, 5),
                   spec_buffer("x", "float32", 64, "in", -4.0, 4.0),
                   spec_scalar("n", "int32", 64))


def test_a_chained_assignment_through_indexing_calls_converts_and_checks_equal(tmp_path):
    _out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
