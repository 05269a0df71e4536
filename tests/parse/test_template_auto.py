"""``auto`` in a template kernel's body (``auto v = data + off``, ``auto s = v[j] * (T)2``), the way
PyTorch-derived kernels declare their views and values: clang leaves the type dependent; the
value's type (a pointer to the template's ``T``, a ``T``) is the local's, and its uses get it."""
from __future__ import annotations

from tests.analysis.support import converted

KERNEL = """
#include <cuda_runtime.h>
template <typename T>
__global__ void gather_rows(const T* __restrict__ data, T* __restrict__ col, int width, int n)
{
    const auto i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    auto v = data + (i / width) * width;
    auto c = col + i;
    auto s = v[i % width] * (T)2;
    *c = s + v[0];
}
int main()
{
    float *a, *b; double *c, *d;
    cudaMalloc(&a, 4096); cudaMalloc(&b, 4096); cudaMalloc(&c, 8192); cudaMalloc(&d, 8192);
    gather_rows<float><<<4, 64>>>(a, b, 16, 256);
    gather_rows<double><<<4, 64>>>(c, d, 16, 256);
}
"""

SPEC = """

[[kernel]]
id = "gather_rows_float"
name = "gather_rows"
template = ["float"]
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "data"
buffer = "float32"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "col"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "width"
scalar = "int32"
value = 16
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256

[[kernel]]
id = "gather_rows_double"
name = "gather_rows"
template = ["double"]
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "data"
buffer = "float64"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "col"
buffer = "float64"
elements = 256
role = "out"
[[kernel.args]]
name = "width"
scalar = "int32"
value = 16
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256
"""


def test_auto_locals_of_a_template_convert_and_each_instance_checks_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] == "tile", k["reason"]
    assert "gather_rows_float: pass; gather_rows_double: pass" in k["check"]["message"], k["check"]
