"""A plain struct of one lane type carrying another type's bytes (analysis.prepare.vector_bits),
the way a quantised GEMV loads eight int8 weights as one ``struct __half4 { __half x, y, z, w; }``
and reads them in pairs through ``(int8_2*)&mat_val.x``: the struct is laid out as a vector of its
lanes, so the local holds eight int8 lanes and each pair view reads two of them."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cuda_fp16.h>
#include <stdint.h>
struct __half4 { __half x, y, z, w; };
struct int8_2 { int8_t x, y; };

__global__ void dot8(int8_t* mat, __half* vec, float* res, unsigned int n, float zero) {
  unsigned int row = blockIdx.x;
  unsigned int j = threadIdx.x;
  __half4* mat4 = reinterpret_cast<__half4*>(mat);
  float4* vec4 = reinterpret_cast<float4*>(vec);
  float sum = 0.0f;
  if (j < n >> 3) {
    float4 vec_val = vec4[j];
    __half4 mat_val = mat4[row * (n >> 3) + j];
    const __half2* vec_h1 = (__half2*)&vec_val.x;
    const __half2* vec_h3 = (__half2*)&vec_val.z;
    const int8_2* mat_h1 = (int8_2*)&mat_val.x;
    const int8_2* mat_h3 = (int8_2*)&mat_val.z;
    const int8_2* mat_h4 = (int8_2*)&mat_val.w;
    sum += static_cast<float>(vec_h1->x) * (static_cast<float>(mat_h1->x) - zero);
    sum += static_cast<float>(vec_h1->y) * (static_cast<float>(mat_h1->y) - zero);
    sum += static_cast<float>(vec_h3->x) * (static_cast<float>(mat_h3->x) - zero);
    sum += static_cast<float>(vec_h3->y) * static_cast<float>(mat_h4->y);
  }
  res[row * blockDim.x + j] = sum;
}
"""

SPEC = spec_kernel("dot8", (3, 1, 1), (32, 1, 1), "fp32",
                   spec_buffer("mat", "int8", 3 * 32 * 8, "in", -100, 100),
                   spec_buffer("vec", "float16", 256, "in", -2.0, 2.0),
                   spec_buffer("res", "float32", 3 * 32, "out"),
                   spec_scalar("n", "uint32", 256), spec_scalar("zero", "float32", 1.5))


def test_a_struct_of_halves_carrying_int8_bytes_converts_and_checks_equal(tmp_path):
    _out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
