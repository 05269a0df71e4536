"""GNU statement expressions of the kind ``min``/``max`` macros are written as (``({ __typeof__(a)
_a = (a); ...; _a > _b ? _a : _b; })``, polyhedral code generators' ``ppcg_min``): the value with
each local's value in its place (parse.build.expr_StmtExpr). Checked equal on the CPU; one with
an effect is refused by name."""
from __future__ import annotations

import re

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cuda_runtime.h>
#define gmax(a,b) ({ __typeof__ (a) _a = (a); __typeof__ (b) _b = (b); _a > _b ? _a : _b; })
#define ppcg_min(x,y) ({ __typeof__(x) _x = (x); __typeof__(y) _y = (y); _x < _y ? _x : _y; })
__global__ void clipped(const float* __restrict__ x, float* __restrict__ y, int* __restrict__ cnt, int n) {
  int b0 = blockIdx.x, t0 = threadIdx.x;
  int i = b0 * 32 + t0;
  if (i >= n) return;
  float m = gmax(x[i], 0.25f * x[(i + 1) % n]);
  int c = 0;
  for (int c1 = 0; c1 <= ppcg_min(7, 32 * b0 + t0 - 3); c1 += 1)
    c += c1;
  y[i] = m;
  cnt[i] = c;
}
"""

SPEC = spec_kernel("clipped", (4, 1, 1), (32, 1, 1), "exact",
                   spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                   spec_buffer("y", "float32", 128, "out"),
                   spec_buffer("cnt", "int32", 128, "out"),
                   spec_scalar("n", "int32", 128))


def test_min_max_statement_expressions_are_their_values(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert not re.search(r"\b_[abxy]\b", (out / "k.py").read_text())  # the macros' locals are gone


def test_a_statement_expression_with_an_effect_is_refused(tmp_path):
    source = """
    #include <cuda_runtime.h>
    __global__ void k(int* y, int n) {
      int i = threadIdx.x;
      y[i] = ({ int t = i; t += n; t; });
    }
    """
    _, (k,) = converted(tmp_path, source, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported") and "statement expression" in k["reason"]
