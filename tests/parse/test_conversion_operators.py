"""A conversion operator of a half type called as a method (``static_cast<float>(zero_point)`` of a
``__half`` parameter: clang calls ``__half::operator float()``) is the conversion itself, so the
dequantising kernels that use it convert; and half scalar parameters reach the kernel exactly
(carried as float32: a CPU kernel read a ``half`` argument as 0). Checked equal on the CPU against
the original."""
from __future__ import annotations

from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

#: int8 weights dequantised with a half scale and zero point (a GEMV check kernel's way).
DEQUANT = """
#include <cuda_fp16.h>
#include <stdint.h>

__global__ void dequant(const int8_t* __restrict__ q, const __half* __restrict__ vec, float* __restrict__ out,
                        __half scale, __half zero_point, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = (static_cast<float>(q[i]) - static_cast<float>(zero_point)) * static_cast<float>(scale);
    out[i] = v * static_cast<float>(vec[i]);
  }
}
"""

SPEC = spec_kernel("dequant", (2, 1, 1), (128, 1, 1), "fp32",
                   spec_buffer("q", "int8", 256, "in", -100, 100),
                   spec_buffer("vec", "float16", 256, "in", -2.0, 2.0),
                   spec_buffer("out", "float32", 256, "out"),
                   spec_scalar("scale", "float16", 0.125), spec_scalar("zero_point", "float16", 3.5),
                   spec_scalar("n", "int32", 256))


def test_the_conversion_operator_is_a_cast(tmp_path):
    k = unit(tmp_path, DEQUANT).kernel("dequant")
    assert not nodes(k, m.MethodCall)
    casts = [c for c in nodes(k, m.Cast) if c.type == m.Scalar("float32")
             and isinstance(c.operand, m.Ref) and c.operand.type == m.Scalar("float16")]
    assert {c.operand.name for c in casts} >= {"scale", "zero_point"}


def test_the_kernel_converts_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, DEQUANT, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
