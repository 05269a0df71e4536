"""A switch on an unsigned subject (an MD5 round's ``switch (len)`` on an unsigned length): its
case tests compare the subject widened to int64, as the printer's unsigned comparisons do (TVM's
bound solver refuses unsigned branch conditions on the GPU: "cannot make uint from negative
value"); checked equal on the CPU and lowered for sm_90a."""
from __future__ import annotations

from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
__global__ void pad(const unsigned int* __restrict__ words, unsigned int* __restrict__ out, unsigned int len, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned int w = words[i];
  unsigned int l = (len + (unsigned)i) % 6u;
  switch (l) {
    case 0: w |= 0x00000080u; break;
    case 1: w |= 0x00008000u; break;
    case 2: w |= 0x00800000u; break;
    case 3u: w ^= 0x80000000u;
    case 4: w += 7u; break;
    default: w = ~w;
  }
  out[i] = w;
}
"""

SPEC = spec_kernel("pad", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("words", "uint32", 128, "in", 0, 4000000000),
                   spec_buffer("out", "uint32", 128, "out"),
                   spec_scalar("len", "uint32", 4000000001), spec_scalar("n", "int32", 128))


def test_a_switch_on_an_unsigned_subject_checks_equal_and_lowers_for_sm90(tmp_path):
    from tests.lowering import lower_sm90
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k["check"]["message"]
    text = next(out.glob("*.py")).read_text()
    assert "if T.Cast(T.int64, l) == 0:" in text
    source = lower_sm90(module_of(next(out.glob("*.py"))).PAD, (2, 1, 1), (64, 1, 1))
    assert "__global__" in source
