"""A project's overloads of CUDA math names on vector types (``sqrtf(float4)``, ``expf(float4)``)
beside operator helpers, the way n-body and electrostatics kernels write them: the overload is
inlined and the CUDA function it calls on each lane stays CUDA's (it used to be taken for the
overload itself, inlined again and again until "nested too deeply")."""
from __future__ import annotations

from tests.analysis.support import converted

KERNEL = """
#include <cuda_runtime.h>
__device__ inline float4 operator-(float4 a, float b) { return make_float4(a.x - b, a.y - b, a.z - b, a.w - b); }
__device__ inline float4 operator*(float4 a, float4 b) { return make_float4(a.x * b.x, a.y * b.y, a.z * b.z, a.w * b.w); }
__device__ inline float4 operator+(float4 a, float4 b) { return make_float4(a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w); }
__device__ inline float4 sqrtf(float4 a) { return make_float4(sqrtf(a.x), sqrtf(a.y), sqrtf(a.z), sqrtf(a.w)); }
__device__ inline float4 expf(float4 a) { return make_float4(expf(a.x), expf(a.y), expf(a.z), expf(a.w)); }
__global__ void dist(const float* __restrict__ gx, const float* __restrict__ gy, const float* __restrict__ px, float* __restrict__ out, int np)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float4 lx = reinterpret_cast<const float4*>(gx)[i];
    float4 ly = reinterpret_cast<const float4*>(gy)[i];
    float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
    for (int j = 0; j < np; j++) {
        float4 dx = lx - px[2 * j];
        float4 dy = ly - px[2 * j + 1];
        v = v + expf(sqrtf(dx * dx + dy * dy) - 3.0f);
    }
    reinterpret_cast<float4*>(out)[i] = v;
}
"""

SPEC = """
[[kernel]]
name = "dist"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32_accum"
[[kernel.args]]
name = "gx"
buffer = "float32"
elements = 512
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "gy"
buffer = "float32"
elements = 512
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "px"
buffer = "float32"
elements = 64
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float32"
elements = 512
role = "out"
[[kernel.args]]
name = "np"
scalar = "int32"
value = 32
"""


def test_vector_overloads_of_math_names_convert_and_check_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] == "tile", k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
