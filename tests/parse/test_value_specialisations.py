"""Explicit specialisations of a device function template by value (``template <> float
poly<3>(float)``, ``template <> op<Op::MIN>``), called in a template on its own value parameter
(parse.build._specialisations): an inlined instance picks its specialisation
(analysis.prepare.instances), a kernel template's call looks it up by the value the factory was
given. Both shapes convert (they were refused as unresolved overloads) and check equal on the CPU
against the original."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

#: atan2's shape: polynomials specialised by degree, reached through an inlined value template.
POLYNOMIALS = """
#include <cuda_runtime.h>

template <int DEGREE>
__device__ constexpr float poly(float x);

template <>
__device__ constexpr float poly<3>(float x) { return x * (1.0f - 0.25f * x * x); }

template <>
__device__ constexpr float poly<5>(float x) { return x * (1.0f + x * x * (-0.3f + 0.1f * x * x)); }

template <int DEGREE>
__device__ float approx(float y) {
  float r = y / (1.0f + fabsf(y));
  return 0.5f + poly<DEGREE>(r);
}

__global__ void degrees(const int n, const float* x, float* r) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  r[i] = approx<3>(x[i]) + 2.0f * approx<5>(x[i]);
}
"""

POLYNOMIALS_SPEC = spec_kernel("degrees", (2, 1, 1), (128, 1, 1), "fp32",
                               spec_scalar("n", "int32", 256),
                               spec_buffer("x", "float32", 256, "in", -2.0, 2.0),
                               spec_buffer("r", "float32", 256, "out"))

#: morphology's shape: a kernel template on an enum whose element operation is specialised per value.
OPERATIONS = """
#include <cuda_runtime.h>

enum class Op { MIN, MAX };

template <Op op>
__device__ unsigned char combine(unsigned char a, unsigned char b) {}

template <>
__device__ unsigned char combine<Op::MIN>(unsigned char a, unsigned char b) { return min(a, b); }

template <>
__device__ unsigned char combine<Op::MAX>(unsigned char a, unsigned char b) { return max(a, b); }

template <Op op>
__global__ void pairs(unsigned char* __restrict__ dst, const unsigned char* __restrict__ src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = combine<op>(src[i], src[(i + 1) % n]);
}

void run(unsigned char* d, const unsigned char* s, int n) {
  pairs<Op::MIN><<<(n + 127) / 128, 128>>>(d, s, n);
  pairs<Op::MAX><<<(n + 127) / 128, 128>>>(d, s, n);
}
"""


def _operations_spec(value: str) -> str:
    return spec_kernel("pairs", (2, 1, 1), (128, 1, 1), "exact",
                       spec_buffer("dst", "uint8", 256, "out"),
                       spec_buffer("src", "uint8", 256, "in", 0, 255),
                       spec_scalar("n", "int32", 256), template=value)


OPERATIONS_SPEC = _operations_spec("(Op)1")  # the instance bench/test_kernels.py checks on GPUs


def test_an_inlined_instance_picks_its_specialisation(tmp_path):
    out, (k,) = converted(tmp_path, POLYNOMIALS, POLYNOMIALS_SPEC)
    assert k["form"] == "tile", k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "poly(" in text and "poly_2(" in text and "[str(" not in text  # chosen when converting


def test_a_kernel_template_looks_its_specialisation_up_by_value(tmp_path):
    # GCC's spellings in an instance's name: a cast of the value, or the constant's name (the
    # module maps it through the enum's constants, Signature.enums)
    for value in ("(Op)0", "Op::MAX"):
        out, (k,) = converted(tmp_path, OPERATIONS, _operations_spec(value))
        assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
        assert k["check"]["status"] == "pass", (value, k["check"])
        assert '[str(int(op))]' in (out / "k.py").read_text()
