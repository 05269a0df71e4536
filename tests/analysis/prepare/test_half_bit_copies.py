"""A half's bits read through its address (analysis.prepare.bit_copies): ``*(uint16_t*)&h`` and
back, in the kernel and in a device function given the half's address, which only its inlined
body shows (the way a quantiser rounds a half's mantissa by hand), as ``__half_as_ushort`` and
``__ushort_as_half``."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel

KERNEL = """
#include <cuda_fp16.h>
#include <stdint.h>
template <typename float_type, int mantissa_bits>
__device__ float_type keep_top(float_type* val) {
  uint16_t bits = *(uint16_t*)val;
  uint16_t kept = bits & (uint16_t)(0xFFFF << (mantissa_bits - 3));
  float_type out = *(float_type*)(&kept);
  return out;
}

__device__ __half twice(__half* h) {
  __syncthreads();
  return keep_top<__half, 10>(h) + *h;
}

__global__ void round_mantissa(const __half* inp, __half* out, unsigned short* raw) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  __half elem = inp[idx];
  uint16_t u = (*(uint16_t*)(&elem) + 0x40) & 0xFFC0;
  raw[idx] = u;
  __half rounded = *(__half*)(&u);
  out[idx] = twice(&rounded);
}
"""

SPEC = spec_kernel("round_mantissa", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("inp", "float16", 128, "in", -8.0, 8.0),
                   spec_buffer("out", "float16", 128, "out"),
                   spec_buffer("raw", "uint16", 128, "out"))


def test_a_halfs_bits_read_through_its_address_convert_and_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    text = next(out.glob("*.py")).read_text()
    assert 'T.reinterpret' in text
