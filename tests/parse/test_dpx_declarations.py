"""CUDA 12's DPX functions on 16-bit halves (``__viaddmax_s16x2``, ``__vimin3_s16x2_relu``,
``__vibmax_u16x2`` with its two predicates, ...) are declared by the prelude, as their 32-bit
forms were: a kernel calling one is refused because the function has no TileLang form (M3001,
naming it), not as a use of an undeclared identifier (M1001), which reads as a fault in the
program."""
from __future__ import annotations

from tests.analysis.support import converted

KERNEL = """
__global__ void dpx(const unsigned* __restrict__ in, unsigned* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned a = in[i], b = a ^ 0x5555u, c = a + 7u;
  bool hi, lo, p;
  unsigned r = __viaddmax_s16x2(a, b, c) ^ __vimin3_s16x2_relu(a, b, c) ^ __viaddmin_u16x2(a, b, c);
  r ^= __vibmax_u16x2(a, b, &hi, &lo) ^ __vibmin_u32(a, b, &p) ^ __vimax_s16x2_relu(a, b);
  r ^= (unsigned)__viaddmax_s32_relu((int)a, (int)b, (int)c) ^ (unsigned)__vimin3_s32_relu((int)a, 1, 2);
  out[i] = r + hi + 2 * lo + 4 * p;
}
"""


def test_dpx_halves_are_declared_and_refused_by_name(tmp_path):
    out, rows = converted(tmp_path, KERNEL, expect_ok=False)
    k = rows[0]
    errors = [d for d in k["diagnostics"] if d["severity"] == "error"]
    assert k["form"] in ("hybrid", "unsupported") and errors, k
    assert not [d for d in errors if d["code"] == "M1001"], errors
    assert errors[0]["code"] == "M3001" and "'__viaddmax_s16x2' has no TileLang mapping" in errors[0]["message"]
    import json
    files = json.loads((out / "report.json").read_text())["files"]
    assert not [d for f in files for d in f["diagnostics"] if d["code"] in ("M1001", "M1006")], files
