"""Local names for types in kernels (``using acc_t = float;``, ``typedef uint4 pack_t;``), the
way vectorised kernels name their pack and accumulator types: the declaration is dropped and
each use carries the type itself; a name for a type only a template's instance names is taken
from the instance's copy."""
from __future__ import annotations

from tests.analysis.support import converted

KERNEL = """
#include <cuda_runtime.h>
#include <type_traits>
__global__ void widen(const int* x, float* y, int n)
{
    typedef float acc_t;
    using index_t = long long;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    acc_t a = (acc_t)x[i] * 0.5f;
    index_t j = (index_t)i * 3 % n;
    y[i] = a + (acc_t)x[j];
}
template <typename INPUT>
__global__ void flip(const INPUT* x, INPUT* y, int n)
{
    using UINPUT = typename std::make_unsigned<INPUT>::type;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    UINPUT u = (UINPUT)x[i];
    y[i] = (INPUT)(u >> 1);
}
int main()
{
    int *a, *b;
    float *c;
    cudaMalloc(&a, 4096); cudaMalloc(&b, 4096); cudaMalloc(&c, 4096);
    widen<<<4, 256>>>(a, c, 1000);
    flip<int><<<4, 256>>>(a, b, 1000);
}
"""

SPEC = """
[[kernel]]
name = "widen"
grid = [4, 1, 1]
block = [256, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "int32"
elements = 1024
role = "in"
range = [-100, 100]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 1024
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 1024
"""


def test_local_type_names_convert_and_check_equal_and_unknown_ones_are_named(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC, expect_ok=False)
    kernels = {k["kernel"]: k for k in kernels}
    assert kernels["widen"]["form"] == "tile", kernels["widen"]["reason"]
    assert kernels["widen"]["check"]["status"] == "pass", kernels["widen"]["check"]["message"]
    # a name for a type only the instance names (make_unsigned<INPUT>::type): the generic kernel
    # cannot take it, so the one instance's copy (std::make_unsigned<int>::type, unsigned) is taken
    flip = kernels["flip"]
    assert flip["form"] not in ("hybrid", "unsupported") and "converted per instance (1)" in flip["reason"], flip["reason"]
    assert not [d for d in flip["diagnostics"] if "local type declaration" in d["message"]]
    assert "T.Cast(T.uint32, x[" in (out / "k.py").read_text()
