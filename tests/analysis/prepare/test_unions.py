"""Unions of scalars of one size (parse.build._union, analysis.prepare.vectors): a 3x3 SVD's
``union un {float f; unsigned int ui;}`` locals, whose ``.ui`` is the bits of ``.f`` (signs
masked and copied with integer operations). A union is a record of one word, every member in
it at byte 0: a local of it is that word (a one-element local array), each member read and
written through its bits, never a local per member (which would lose the aliasing). Checked
equal on the CPU against the original."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
union un { float f; unsigned int ui; };

__global__ void signs(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  un Sa, Sb, Stmp;
  Sa.f = a[i];
  Sb.f = b[i];
  Stmp.ui = Sa.ui & 0x80000000u;               // the sign of a
  Sb.ui = (Sb.ui & 0x7fffffffu) | Stmp.ui;     // |b| with a's sign
  un Sc = Sb;                                  // a copy: its word
  Sc.f = Sc.f * 2.0f;
  Stmp.ui = (Sa.f > 0.0f) ? 0xffffffffu : 0u;
  Sc.ui = Sc.ui & Stmp.ui;                     // zero where a <= 0
  Sa = Sc;                                     // assigned whole
  out[i] = Sa.f + Sb.f;
}

__global__ void words(const un* __restrict__ u, unsigned int* __restrict__ bits, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    bits[i] = u[i].ui ^ 0x80000000u;           // a buffer of unions: words read as either member
    y[i] = u[i].f * 0.5f;
  }
}

__global__ void written(un p, float* y) {
  p.ui ^= 1u;                                  // a union passed by value and written: named, not guessed
  y[threadIdx.x] = p.f;
}
"""

SPEC = (
    spec_kernel("signs", (2, 1, 1), (64, 1, 1), "exact",
                spec_buffer("a", "float32", 100, "in", -3.0, 3.0),
                spec_buffer("b", "float32", 100, "in", -3.0, 3.0),
                spec_buffer("out", "float32", 100, "out"),
                spec_scalar("n", "int32", 100))
    + spec_kernel("words", (2, 1, 1), (64, 1, 1), "exact",
                  spec_buffer("u", "float32", 100, "in", -3.0, 3.0),
                  spec_buffer("bits", "uint32", 100, "out"),
                  spec_buffer("y", "float32", 100, "out"),
                  spec_scalar("n", "int32", 100))
)


def test_union_members_are_the_bits_of_one_word_equal_to_the_original(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("signs", "words"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported"), kernels[name]["diagnostics"]
        assert kernels[name]["check"]["status"] == "pass", kernels[name]["check"]
    bad = kernels["written"]
    assert bad["form"] in ("hybrid", "unsupported") and any(
        "passed by value and written" in d["message"] for d in bad["diagnostics"]), bad
    text = (out / "k.py").read_text()
    assert "Sa = T.alloc_local((1,), T.float32)" in text, text  # one word, not a local per member
