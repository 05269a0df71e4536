"""Negative values met in unsigned arithmetic, which C wraps modulo 2**bits and TVM refuses
("cannot make uint from negative value"), each seen in a pool program that then did not build
for the GPU: a negative constant converted to unsigned (gc's ``(unsigned int)MSB >> k`` with an
``int MSB = 1 << 31``; tpacf's ``tid & ~63`` on an unsigned ``tid``), an unsigned value negated
(sobol's ``mask = -(g & 1)``), an unsigned counter decremented with ``atomicSub`` (ss). Each is
printed as the wrapped constant or a subtraction from zero; the kernel checks equal on the CPU and
lowers for sm_90a."""
from __future__ import annotations

import importlib.util

from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar
from tests.lowering import lower_sm90

KERNEL = """
static const int MSB = 1 << 31;
__global__ void wraps(const unsigned* __restrict__ g, unsigned* __restrict__ out,
                      unsigned* __restrict__ counter) {
  __shared__ unsigned s[64];
  unsigned t = threadIdx.x;
  unsigned x = g[blockIdx.x * 64 + t];
  unsigned mask = -(x & 1);
  unsigned high = (unsigned int)MSB >> (x % 32);
  s[t] = (t & ~63) | (x & (unsigned)~7);
  __syncthreads();
  unsigned before = atomicSub(&counter[blockIdx.x], 1);
  out[blockIdx.x * 64 + t] = (mask & x) ^ high ^ s[63 - t] ^ (before > 1000000u ? 1u : 0u);
}
"""

SPEC = spec_kernel("wraps", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("g", "uint32", 128, "in", 0, 4000000000),
                   spec_buffer("out", "uint32", 128, "out"),
                   spec_buffer("counter", "uint32", 2, "inout", 5000, 9000))


def test_negative_values_in_unsigned_arithmetic_wrap_and_lower_for_cuda(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "T.uint32(2147483648)" in text  # (unsigned)MSB
    assert "& T.uint32(4294967232)" in text and "& T.uint32(4294967288)" in text  # ~63, (unsigned)~7
    assert "T.uint32(0) - (x & 1)" in text  # (tile form: the shared cache forwarded into the map)
    assert k["form"] == "tile", k["form"]
    assert "T.uint32(4294967295), return_prev=True" in text  # atomicSub(…, 1) adds 2**32 - 1
    spec = importlib.util.spec_from_file_location("k_wraps", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["wraps"], (2, 1, 1), (64, 1, 1))
    assert "atomicAdd" in source or "AtomicAdd" in source


# ans's `const UNIT_TYPE mask = (UNIT_TYPE) (0) - 1;`: a cast constant less a constant, which TVM
# refused to fold when the kernel was built ("Minuend's value is 0U ... will cause a negative uint")
ALL_ONES = """
__global__ void all_ones(const unsigned* __restrict__ g, unsigned* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const unsigned mask = (unsigned) (0) - 1;
  out[i] = g[i] ^ (mask >> (g[i] % 8u));
}
"""


def test_a_cast_zero_less_one_is_all_ones_and_lowers_for_cuda(tmp_path):
    out, (k,) = converted(tmp_path, ALL_ONES, spec_kernel(
        "all_ones", (2, 1, 1), (64, 1, 1), "exact",
        spec_buffer("g", "uint32", 128, "in", 0, 4000000000),
        spec_buffer("out", "uint32", 128, "out"),
        spec_scalar("n", "int32", 128)))
    assert k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "T.uint32(0) + T.uint32(2**32 - 1)" in text
    spec = importlib.util.spec_from_file_location("k_all_ones", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert "all_ones" in lower_sm90(mod.KERNELS["all_ones"], (2, 1, 1), (64, 1, 1))


# f8cast's fp8 rounding: `f_bits += ((uint32_t)(7 - 127) << 23) + 0x7FFFF;` The cast of the
# negative constant difference was dropped (a Python int expression is printed as written), so
# TVM met `f_bits + -1006108673` on a uint32 and refused the kernel on the GPU ("cannot make uint
# from negative value -1006108673"); the constant is the wrapped uint32 now.
EXPONENT_BIAS = """
#include <stdint.h>
__global__ void rebias(const uint32_t* __restrict__ a, uint32_t* __restrict__ b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    uint32_t f_bits = a[i];
    uint8_t odd = (f_bits >> 20) & 1;
    f_bits += ((uint32_t)(7 - 127) << 23) + 0x7FFFF;
    f_bits += odd;
    b[i] = f_bits >> 20;
  }
}
"""


EXPONENT_BIAS_SPEC = spec_kernel("rebias", (2, 1, 1), (64, 1, 1), "exact",
                                 spec_buffer("a", "uint32", 128, "in", 0, 4000000000),
                                 spec_buffer("b", "uint32", 128, "out"),
                                 spec_scalar("n", "int32", 128))


def test_a_negative_constant_cast_to_unsigned_wraps_and_lowers_for_cuda(tmp_path):
    out, (k,) = converted(tmp_path, EXPONENT_BIAS, EXPONENT_BIAS_SPEC)
    assert k["check"]["status"] == "pass", k
    assert "T.uint32(4294967176) << 23" in (out / "k.py").read_text()
    spec = importlib.util.spec_from_file_location("k_rebias", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert "4294967176" in lower_sm90(mod.KERNELS["rebias"], (2, 1, 1), (64, 1, 1))


# convolution1D's left halo: `int halo_left = (blockIdx.x - 1) * blockDim.x + threadIdx.x;` is
# unsigned arithmetic cast to int. Printed as the unsigned sum `bx + (2**32 - 1)` times the
# launch's block size, TVM folded the constant to 4294967232 inside the int32 cast and refused to
# build it for the GPU ("Literal value 4294967232 exceeds maximum of int32"); the CPU target
# built it. The same sums and products in int32 have the same bits.
HALO = """
__global__ void halo(const float* __restrict__ in, float* __restrict__ out, int n) {
  __shared__ float tile[66];
  int halo_left = (blockIdx.x - 1) * blockDim.x + threadIdx.x;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x + 1] = i < n ? in[i] : 0.0f;
  if (threadIdx.x == blockDim.x - 1)
    tile[0] = halo_left < 0 ? 0.0f : in[halo_left];
  __syncthreads();
  if (i < n) out[i] = tile[threadIdx.x] + tile[threadIdx.x + 1];
}
"""


def test_a_scaled_unsigned_difference_cast_to_int_lowers_for_cuda(tmp_path):
    spec = spec_kernel("halo", (4, 1, 1), (64, 1, 1), "fp32", spec_buffer("in", "float32", 256, "in", -1.0, 1.0),
                       spec_buffer("out", "float32", 256, "out"), spec_scalar("n", "int32", 256))
    out, (k,) = converted(tmp_path, HALO, spec)
    assert k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "halo_left = (bx - 1) * block_x + tx" in text, text
    assert "__global__" in lower_sm90(module_of(out / "k.py").KERNELS["halo"], (4, 1, 1), (64, 1, 1))
