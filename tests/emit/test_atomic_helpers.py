"""The atomics TileLang has no operator for (``atomicCAS``, ``atomicExch``, ``atomicOr``,
``atomicAnd``, ``atomicXor``, ``atomicInc``) as the compat table's helpers on the element
(``cuda_math.atomicCAS(x[i], ...)``: the CUDA atomic on the GPU, a read-modify-write on the CPU),
the way union-find and assignment programs claim, swap and flag elements. Checked equal on the
CPU, on results that do not depend on the order the threads run in."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cuda_runtime.h>
__global__ void claim(int* label, int* swap, int* old, unsigned* flags, unsigned* counter, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int seen = atomicCAS(&label[i], label[i] > 0 ? label[i] : -1, i * 3);  // claim one's own element
  old[i] = atomicExch(&swap[(i + 7) % n], seen) + seen;  // each element swapped by one thread
  atomicOr(&flags[i / 32], 1u << (i % 32));
  atomicAnd(&flags[4 + i % 4], ~(1u << (i % 8)));
  atomicXor(&flags[8], (unsigned)i);
  if ((i & 3) == 0) atomicInc(&counter[0], 1000000u);
}
"""

SPEC = spec_kernel("claim", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("label", "int32", 128, "inout", -5, 5),
                   spec_buffer("swap", "int32", 128, "inout", -100, 100),
                   spec_buffer("old", "int32", 128, "out"),
                   spec_buffer("flags", "uint32", 9, "inout", 0, 1000000),
                   spec_buffer("counter", "uint32", 1, "inout", 0, 1000),
                   spec_scalar("n", "int32", 120))


def test_atomics_without_a_tilelang_operator_run_through_the_helpers(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] != "unsupported" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    for op in ("atomicCAS", "atomicExch", "atomicOr", "atomicAnd", "atomicXor", "atomicInc"):
        assert f"cuda_math.{op}(" in text, op
