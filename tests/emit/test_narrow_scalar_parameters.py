"""Scalar parameters of 8 and 16 bits (``char``, ``unsigned char``, ``short``; a struct of chars
passed by value has one such parameter per lane): TileLang 0.1.15's CUDA device functions take no
such argument ("Cannot handle int8 as device function argument", seen on an H100), so each
travels as an int32 holding its value and is cast back at the top of the kernel, as half and
unsigned values are (emit.kernel._SCALAR_CARRIERS). Checked against the CUDA on the CPU here, on
the GPU by bench/test_kernels.py."""
from __future__ import annotations

from tests.analysis.lift.support import factory
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cuda_runtime.h>
__global__ void narrow(const int* __restrict__ x, int* __restrict__ y, char shift, unsigned char scale,
                       short bias, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    char low = (char)(x[i] + shift);  // wraps in 8 bits, as C converts
    y[i] = low * scale + bias;        // promoted to int before the arithmetic
}
"""

SPEC = spec_kernel("narrow", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("x", "int32", 128, "in", -300, 300),
                   spec_buffer("y", "int32", 128, "out"),
                   spec_scalar("shift", "int8", -100), spec_scalar("scale", "uint8", 200),
                   spec_scalar("bias", "int16", -30000), spec_scalar("n", "int32", 120))


def test_eight_and_sixteen_bit_scalars_travel_as_int32_and_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    body = factory((out / "k.py").read_text(), "narrow")
    for name, dtype in (("shift", "int8"), ("scale", "uint8"), ("bias", "int16")):
        assert f"{name}_arg: T.int32" in body and f"{name} = T.Cast(T.{dtype}, {name}_arg)" in body
