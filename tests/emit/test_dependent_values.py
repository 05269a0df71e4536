"""A value of a template's type stored in a local of a named type (the pool's bmf: ``const int
C_ij = (Cb[vecId] >> vecLane) & 1;`` on a ``bit_matrix_t* Cb``; segsort's ``int size =
d_seg_ends[gid] - d_seg_begins[gid];``). clang leaves the value's type open in the template, so
it wrote no conversion: the local kept the unsigned type (TVM then refused to lower the bmf kernel
for the GPU, "Literal value -1 is negative for unsigned integer type"), and a difference of
unsigned values stored in an ``int`` stayed a large unsigned number where C reads it negative.
The value is converted to the declared type, as C does."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel

KERNEL = """
template <typename U>
__global__ void order(const U* __restrict__ a, const U* __restrict__ b, int* __restrict__ out, float* __restrict__ f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int d = a[i] - b[i];
  int bit = (a[i] >> (i % 8)) & 1;
  float half = a[i] * 0.5;
  out[i] = (d < 0 ? -1 : 1) * (bit == 1 ? 2 : 3);
  f[i] = half;
}
template __global__ void order<unsigned>(const unsigned*, const unsigned*, int*, float*);
"""

SPEC = spec_kernel("order", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("a", "uint32", 128, "in", 0, 1000),
                   spec_buffer("b", "uint32", 128, "in", 0, 1000),
                   spec_buffer("out", "int32", 128, "out"),
                   spec_buffer("f", "float32", 128, "out")).replace("grid =", 'template = ["unsigned"]\ngrid =', 1)


def test_a_template_value_stored_in_an_int_is_converted_as_c_converts_it(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "d = T.Cast(T.int32, a[i] - b[i])" in text and "half = T.Cast(T.float32, " in text, text


#: the pool's lzss (``const uint32_t blockSize = BLOCK_SIZE / sizeof(T);``) and bitpacking
#: (``sizeof(*out)`` on an ``OUTPUT* out``): ``sizeof`` of a template's type, or of a value of
#: one, is the bytes of the instance's dtype, known when the factory runs
SIZEOF = """
#define BLOCK_SIZE 1024
template <typename T>
__global__ void chunks(const T* __restrict__ in, int* __restrict__ out, int n) {
  const int blockSize = BLOCK_SIZE / sizeof(T);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = (int)(in[i] > 0) * blockSize + (int)sizeof(T) + 100 * (int)sizeof(*in);
}
template __global__ void chunks<double>(const double*, int*, int);
"""

SIZEOF_SPEC = spec_kernel("chunks", (2, 1, 1), (64, 1, 1), "exact",
                          spec_buffer("in", "float64", 128, "in", -1.0, 1.0),
                          spec_buffer("out", "int32", 128, "out"),
                          '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 128\n'
                          ).replace("grid =", 'template = ["double"]\ngrid =', 1)


def test_sizeof_a_template_type_is_the_instances_size(tmp_path):
    out, (k,) = converted(tmp_path, SIZEOF, SIZEOF_SPEC)
    assert k["check"]["status"] == "pass", k
    assert "1024 // cuda_math.size_of(T_)" in (out / "k.py").read_text()


#: the pool's rsbench: ``double max = -DBL_MAX;`` (and its ``1.0 / n_windows[nuc]`` on a template's
#: ``INT_T n_windows``, a double division: here on a template's ``INT_T n``). TileLang's ``T.float64(x)`` builds a float32 constant
#: first, which a double beyond float32's range overflows: such constants print as FloatImm
DOUBLE_LIMITS = """
#include <cfloat>
template <typename INT_T>
__device__ double spacing_of(INT_T n) { return 1.0 / n; }
__global__ void dmax(const double* __restrict__ x, const int* __restrict__ n, int* __restrict__ idx,
                     double* __restrict__ big) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  double best = -DBL_MAX;
  int at = 0;
  for (int j = 0; j < 4; j++) if (x[i * 4 + j] > best) { best = x[i * 4 + j]; at = j; }
  idx[i] = at;
  big[i] = (best > 0.0 ? 1e300 : -1e300) * spacing_of(n[i]);
}
"""

DOUBLE_LIMITS_SPEC = spec_kernel("dmax", (2, 1, 1), (64, 1, 1), "fp64",
                                 spec_buffer("x", "float64", 512, "in", -1.0, 1.0),
                                 spec_buffer("n", "int32", 128, "in", 1, 9),
                                 spec_buffer("idx", "int32", 128, "out"),
                                 spec_buffer("big", "float64", 128, "out"))


def test_double_constants_beyond_float32_and_double_divisions_in_templates(tmp_path):
    out, (k,) = converted(tmp_path, DOUBLE_LIMITS, DOUBLE_LIMITS_SPEC)
    assert k["check"]["status"] == "pass", k
    assert "-T.FloatImm(T.float64, 1.7976931348623157e+308)" in (out / "k.py").read_text()
