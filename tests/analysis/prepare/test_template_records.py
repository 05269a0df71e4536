"""A record read through a template's pointer (a cross-section benchmark's ``Window w =
windows[k];`` in ``template <typename WINDOW_T> calculate_micro_xs(..., WINDOW_T windows)``):
clang leaves the element's type dependent, so its lanes were read as if each were a word of its
own, the two ints packed in one double's word among them (rsbench's ``lookup`` failed its H200
replay, 2026-12-05). The kernel's view knows the record: the ints are read out of their word's
bits. Checked equal on the CPU against the original."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
typedef struct { double T; double A; double F; int start; int end; } Window;
template <typename W_T>
__device__ double micro(W_T windows, const double* __restrict__ poles, int nuc, int max_w, int wi) {
  Window w = windows[nuc * max_w + wi];
  double s = w.T * 2.0 + w.A;
  for (int i = w.start & 15; i < (w.end & 15) + 16; i++) s += poles[i] * w.F;
  return s;
}
__global__ void lookup(const Window* __restrict__ windows, const double* __restrict__ poles,
                       double* __restrict__ out, int max_w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = micro(windows, poles, i % 4, max_w, i % max_w);
}
"""

SPEC = spec_kernel("lookup", (2, 1, 1), (64, 1, 1), "fp64",
                   spec_buffer("windows", "float64", 64, "in", 0.0, 1.0),
                   spec_buffer("poles", "float64", 64, "in", -1.0, 1.0),
                   spec_buffer("out", "float64", 128, "out"),
                   spec_scalar("max_w", "int32", 4), spec_scalar("n", "int32", 128))


def test_a_records_packed_fields_read_in_a_template_come_out_of_their_word(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "* 4 + 4]" not in text, text  # no lane read as a word of its own
