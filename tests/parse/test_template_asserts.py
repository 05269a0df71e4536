"""``assert`` in a kernel template (a logic-synthesis code's table gathers): clang leaves the
``__PRETTY_FUNCTION__`` of its expansion dependent, an expression of no parts, which used to cost
the kernel an M1206; the assertion's message is not migrated, so the kernel converts. Checked equal
on the CPU against the original."""
from __future__ import annotations

from migrate.parse.frontend import parse_file
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

GATHER = """
#include <cassert>

template <typename T>
__global__ void gather(const T* __restrict__ table, const int* __restrict__ ranges, T* __restrict__ out, int n) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx < n) {
    int start = 4 * idx;
    int length = ranges[idx];
    assert(length >= 0 && length <= 4);
    for (int i = 0; i < length; i++) out[start + i] = table[idx] * (i + 1);
  }
}

void run(const float* t, const int* r, float* o, int n) {
  gather<float><<<(n + 63) / 64, 64>>>(t, r, o, n);
}
"""

SPEC = spec_kernel("gather", (1, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("table", "float32", 64, "in", -1.0, 1.0),
                   spec_buffer("ranges", "int32", 64, "in", 0, 4),
                   spec_buffer("out", "float32", 256, "inout", 0.0, 1.0),
                   spec_scalar("n", "int32", 64), template="float")


def test_an_assert_in_a_template_is_no_unmodelled_expression(tmp_path):
    (tmp_path / "k.cu").write_text(GATHER)
    parsed = parse_file(tmp_path / "k.cu")
    assert not [d for d in parsed.diagnostics if d.code == "M1206"], parsed.diagnostics


def test_the_kernel_converts_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, GATHER, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
