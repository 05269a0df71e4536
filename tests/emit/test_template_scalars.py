"""Scalar parameters of a template's type (``template <typename T> ... T alpha``), the way
BLAS-like and stream benchmarks write them: the parameter takes the instance's dtype
(``alpha: T.dtype(T_)``), each instance is checked on its own."""
from __future__ import annotations

from tests.analysis.support import converted

KERNEL = """
#include <cuda_runtime.h>
template <typename T>
__global__ void axpby(const T* x, T* y, T alpha, T beta, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = alpha * x[i] + beta * y[i];
}
// a template's index type: C divides integers by truncation, floats exactly
template <typename T, typename I>
__global__ void unflatten(const T* x, T* y, I w, I total)
{
    I i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < total) y[i] = x[i] / (T)(i / w + 1) + (T)(i % w);
}
int main()
{
    float *a, *b; double *c, *d;
    cudaMalloc(&a, 4096); cudaMalloc(&b, 4096); cudaMalloc(&c, 8192); cudaMalloc(&d, 8192);
    axpby<float><<<4, 256>>>(a, b, 2.0f, 0.5f, 1000);
    axpby<double><<<4, 256>>>(c, d, 2.0, 0.5, 1000);
    unflatten<float, int><<<4, 256>>>(a, b, 7, 1000);
}
"""

SPEC = """
[[kernel]]
id = "axpby_f"
name = "axpby"
template = ["float"]
grid = [4, 1, 1]
block = [256, 1, 1]
tolerance = "fp32_accum"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1024
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 1024
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "alpha"
scalar = "float32"
value = 1.75
[[kernel.args]]
name = "beta"
scalar = "float32"
value = -0.5
[[kernel.args]]
name = "n"
scalar = "int32"
value = 1024
[[kernel]]
id = "axpby_d"
name = "axpby"
template = ["double"]
grid = [4, 1, 1]
block = [256, 1, 1]
tolerance = "fp64"
[[kernel.args]]
name = "x"
buffer = "float64"
elements = 1024
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float64"
elements = 1024
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "alpha"
scalar = "float64"
value = 1.75
[[kernel.args]]
name = "beta"
scalar = "float64"
value = -0.5
[[kernel.args]]
name = "n"
scalar = "int32"
value = 1024
[[kernel]]
id = "unflatten_f_i"
name = "unflatten"
template = ["float", "int"]
grid = [4, 1, 1]
block = [256, 1, 1]
tolerance = "fp32_accum"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1024
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 1024
role = "out"
[[kernel.args]]
name = "w"
scalar = "int32"
value = 7
[[kernel.args]]
name = "total"
scalar = "int32"
value = 1024
"""


def test_template_typed_scalars_convert_and_each_instance_checks_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    k, unflatten = kernels
    assert k["form"] == "tile", k["reason"]
    assert unflatten["form"] not in ("hybrid", "unsupported"), unflatten["reason"]
    assert "cuda_math.c_div(i, w)" in (out / "k.py").read_text()
    assert unflatten["check"]["status"] == "pass", unflatten["check"]["message"]
    assert "alpha: T.dtype(T_), beta: T.dtype(T_)" in (out / "k.py").read_text()
    assert k["check"]["status"] == "pass" and "axpby_f: pass; axpby_d: pass" in k["check"]["message"], k["check"]
