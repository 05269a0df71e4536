"""A record read through a template's pointer (a cross-section benchmark's ``Window w =
windows[k];`` in ``template <typename WINDOW_T> calculate_micro_xs(..., WINDOW_T windows)``):
clang leaves the element's type dependent, so its lanes were read as if each were a word of its
own, the two ints packed in one double's word among them (rsbench's ``lookup`` failed its H200
replay, 2026-12-05). The kernel's view knows the record: the ints are read out of their word's
bits. Checked equal on the CPU against the original."""
from __future__ import annotations

from tests.analysis.support import converted

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

SPEC = "\n".join([
    '[[kernel]]', 'name = "lookup"', 'tolerance = "fp64"', 'grid = [2, 1, 1]', 'block = [64, 1, 1]',
    '[[kernel.args]]', 'name = "windows"', 'buffer = "float64"', 'elements = 64', 'role = "in"', 'range = [0.0, 1.0]',
    '[[kernel.args]]', 'name = "poles"', 'buffer = "float64"', 'elements = 64', 'role = "in"', 'range = [-1.0, 1.0]',
    '[[kernel.args]]', 'name = "out"', 'buffer = "float64"', 'elements = 128', 'role = "out"',
    '[[kernel.args]]', 'name = "max_w"', 'scalar = "int32"', 'value = 4',
    '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 128', ''])


def test_a_records_packed_fields_read_in_a_template_come_out_of_their_word(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] != "unsupported", k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "* 4 + 4]" not in text, text  # no lane read as a word of its own
