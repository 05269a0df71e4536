"""analysis.prepare.memory_copies: device-side memcpy/memset of typed arrays become element loops
(an ODE integrator's step copying its trial state back, ``memcpy(y, ytemp, N * sizeof(double))``),
so the kernels holding them convert; checked equal on the CPU against the original. Copies whose
size is no whole number of elements, or memsets of other bytes than zero, are left as calls."""
from __future__ import annotations

from migrate.analysis.prepare.memory_copies import memory_copies
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

STEPS = """
#include <string.h>
#define N 6

__device__ double step(double* y, double h) {
  double ytemp[N];
  for (int i = 0; i < N; i++) ytemp[i] = y[i] + h * (i + 1) * y[(i + 1) % N];
  memcpy(y, ytemp, N * sizeof(double));
  return h * 0.5;
}

__global__ void integrate(const double* __restrict__ y0, double* __restrict__ out, int n) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  double y[N], acc[N];
  memset(acc, 0, sizeof(acc));
  for (int i = 0; i < N; i++) y[i] = y0[t * N + i];
  double h = 0.125;
  for (int s = 0; s < 3; s++) {
    h = step(y, h);
    for (int i = 0; i < N; i++) acc[i] += y[i];
  }
  double keep[N];
  memcpy(keep, acc, sizeof(double) * N);
  for (int i = 0; i < N; i++) out[t * N + i] = keep[i] - y[i];
}
"""

SPEC = spec_kernel("integrate", (2, 1, 1), (32, 1, 1), "fp64",
                   spec_buffer("y0", "float64", 384, "in", -1.0, 1.0),
                   spec_buffer("out", "float64", 384, "out"),
                   spec_scalar("n", "int32", 64))


def test_copies_and_zero_fills_become_element_loops(tmp_path):
    u = unit(tmp_path, STEPS)
    k = memory_copies(u.kernel("integrate"))
    assert not [c for c in nodes(k, m.Call) if c.callee in ("memcpy", "memset")]
    loops = [f for f in nodes(k, m.For) if isinstance(f.cond.rhs, m.IntLit) and f.cond.rhs.value == 6]
    assert len(loops) >= 2
    dev = memory_copies(next(f for f in u.device_functions if f.name == "step"))
    assert not [c for c in nodes(dev, m.Call) if c.callee == "memcpy"]


def test_copies_that_are_not_whole_elements_are_left(tmp_path):
    source = """
    #include <string.h>
    __global__ void k(float* x, const float* y) {
      float a[4], b[4];
      for (int i = 0; i < 4; i++) b[i] = y[i];
      memcpy(a, b, 6);
      memset(a, 1, sizeof(a));
      x[threadIdx.x] = a[threadIdx.x % 4];
    }
    """
    k = unit(tmp_path, source).kernel("k")
    assert [c.callee for c in nodes(memory_copies(k), m.Call) if c.callee in ("memcpy", "memset")] == \
        ["memcpy", "memset"]


def test_the_kernel_converts_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, STEPS, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
