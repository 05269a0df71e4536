"""A declaration in an ``if`` or ``while`` condition (btree's ``while (auto work_queue =
__ballot_sync(...))``): ``if (T x = e) A else B`` is ``{T x = e; if (x) A else B}`` and ``while (T x
= e) S`` is ``while (true) {T x = e; if (!x) break; S}``, the variable declared afresh each round as
C++ does; checked on the CPU against the original compiled with g++."""
from __future__ import annotations

import pytest

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

SOURCE = """
__device__ int next_bit(unsigned m) { return __ffs(m) - 1; }
__global__ void drain(const unsigned* masks, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned m = masks[i];
  int total = 0, rounds = 0;
  while (int w = (int)(m & 0xFFFFu)) {
    int b = next_bit(w);
    if (b == 3) { m ^= 1u << b; continue; }
    total += b * (rounds + 1);
    m ^= 1u << b;
    rounds++;
  }
  if (int hi = (int)(m >> 16)) total += hi; else total -= 1;
  out[i] = total;
}
"""


def test_declarations_in_conditions_pass_the_cpu_check(tmp_path):
    pytest.importorskip("tilelang")
    spec = spec_kernel("drain", (2, 1, 1), (128, 1, 1), "exact",
                       spec_buffer("masks", "uint32", 256, "in", 0, 4294967295), spec_buffer("out", "int32", 256, "out"),
                       spec_scalar("n", "int32", 250))
    out, rows = converted(tmp_path, SOURCE, spec)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    assert row["check"]["status"] == "pass", row["check"]
    text = (out / "k.py").read_text()
    assert "while " in text and "break" in text and "continue" in text
