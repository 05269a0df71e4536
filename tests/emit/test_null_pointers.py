"""``NULL`` in kernels, the way real code checks optional buffers (``bias != NULL ? bias[c] : 0``)
and asserts (``assert(p != NULL)``): NULL is read (it was "expression kind 'gnu null expr' is not
modelled"); an assert is dropped like any expression without effect; a buffer compared with NULL
holds (every buffer the launcher takes is one); two pointers compared are refused by name."""
from __future__ import annotations

import json

from migrate.cli import main

KERNEL = """
#include <cuda_runtime.h>
#include <cstddef>
#include <cassert>
__global__ void checked(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(y != NULL);
    if (i < n) y[i] = 2.0f * x[i];
}
__global__ void optional_bias(const float* x, const float* bias, float* y, int n, int c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float val = (bias != NULL) ? bias[i % c] : 0.0f;
    y[i] = x[i] + val;
}
"""


SPEC = """
[[kernel]]
name = "optional_bias"
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "bias"
buffer = "float32"
elements = 8
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256
[[kernel.args]]
name = "c"
scalar = "int32"
value = 8
"""


def test_null_checks_convert_and_check_equal_and_two_pointers_compared_are_refused(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL + """
__global__ void walk(const float* x, float* y, int n)
{
    if (x != y) y[threadIdx.x] = x[threadIdx.x];
}
""")
    (tmp_path / "k.toml").write_text(SPEC)
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q", "--check", "cpu"])
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["checked"]["form"] == "tile", kernels["checked"]["reason"]
    bias = kernels["optional_bias"]
    assert bias["form"] == "tile" and bias["check"]["status"] == "pass", (bias["reason"], bias["check"])
    walk = kernels["walk"]
    assert walk["form"] == "unsupported" and "two pointers compared" in walk["reason"]


def test_an_atomic_on_unsigned_64_bit_values_is_refused_by_name(tmp_path):
    """TileLang 0.1.15's AtomicAdd hands a ``uint64_t*`` to CUDA's atomicAdd, which takes
    ``unsigned long long*``: nvcc found no overload (marchingCubes' triangle counter)."""
    (tmp_path / "k.cu").write_text("""
        #include <cuda_runtime.h>
        __global__ void count(const int* x, unsigned long long* total, unsigned int* small) {
            atomicAdd(total, (unsigned long long)x[threadIdx.x]);
        }
        __global__ void count32(const int* x, unsigned int* total) {
            atomicAdd(total, (unsigned int)x[threadIdx.x]);
        }""")
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q"])
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["count"]["form"] == "unsupported" and "unsigned 64-bit" in kernels["count"]["reason"]
    assert kernels["count32"]["form"] != "unsupported", kernels["count32"]["reason"]
