"""A CUDA vector's bits read as one number of its size through its address, and a number's bits
as a vector (analysis.prepare.bit_copies), the way a half2 maximum picks bytes with __byte_perm:
``*reinterpret_cast<const unsigned*>(&h2)`` is the lanes' words shifted into place,
``*reinterpret_cast<const half2*>(&u)`` the vector of the number's 16-bit groups."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cuda_fp16.h>
__device__ half2 half_max(const half2 a, const half2 b) {
  const half2 sub = __hsub2(a, b);
  const unsigned sign = (*reinterpret_cast<const unsigned*>(&sub)) & 0x80008000u;
  const unsigned sw = 0x00003210 | (((sign >> 21) | (sign >> 13)) * 0x11);
  const unsigned int res = __byte_perm(*reinterpret_cast<const unsigned*>(&a),
                                       *reinterpret_cast<const unsigned*>(&b), sw);
  return *reinterpret_cast<const half2*>(&res);
}

__global__ void pick(const half2* __restrict__ a, const half2* __restrict__ b, half2* __restrict__ r,
                     unsigned* __restrict__ words, const unsigned* __restrict__ packed,
                     uchar4* __restrict__ bytes, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    r[i] = half_max(a[i], b[i]);
    half2 s = __hadd2(a[i], b[i]);
    words[i] = *(unsigned*)&s;
    unsigned p = packed[i];
    uchar4 c = *(uchar4*)&p;
    c.x = c.x + 1;
    unsigned back = *(unsigned*)&c;
    bytes[i] = *(uchar4*)&back;
  }
}
"""

SPEC = spec_kernel("pick", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("a", "float16", 2 * 128, "in", -100.0, 100.0),
                   spec_buffer("b", "float16", 2 * 128, "in", -100.0, 100.0),
                   spec_buffer("r", "float16", 2 * 128, "out"),
                   spec_buffer("words", "uint32", 128, "out"),
                   spec_buffer("packed", "uint32", 128, "in", 0, 4000000000),
                   spec_buffer("bytes", "uint8", 4 * 128, "out"),
                   spec_scalar("n", "int32", 128))


def test_vector_bits_as_a_word_and_back_convert_and_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    text = next(out.glob("*.py")).read_text()
    assert "T.reinterpret" in text and "byte_perm" in text


# a local byte array read as words through a device function's pointer (a hash over a key), and
# a local word array's 64-bit value compared and reduced in place (a modular reduction)
WORDS = """
__device__ inline void mix(unsigned int* words, unsigned int* out) {
  unsigned int a = words[0], b = words[1];
  out[0] = (a ^ (b << 7)) + (b >> 3);
  out[1] = a * 2654435761u + b;
}

__global__ void hash_keys(const unsigned char* __restrict__ seeds, unsigned int* __restrict__ digests,
                          unsigned int* __restrict__ first, unsigned int* __restrict__ reduced, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned char key[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int b = 0; b < 7; b++) key[b] = seeds[i * 7 + b] ^ (unsigned char)b;
  unsigned int d[2];
  mix((unsigned int*)key, d);
  digests[2 * i] = d[0];
  digests[2 * i + 1] = d[1];
  first[i] = *(unsigned int*)key + ((unsigned int*)key)[i % 2];
  unsigned int buff[3];
  buff[0] = d[0];
  buff[1] = d[1] | 0x80000000u;
  buff[2] = 7u;
  if (*(unsigned long long*)buff > 0xFFFFFFFF00000001ull) *(unsigned long long*)buff -= 0xFFFFFFFF00000001ull;
  ((unsigned long long*)buff)[0] += buff[2];
  reduced[i] = buff[0] ^ (buff[1] * 3u);
  unsigned long long wide = ((unsigned long long)d[0] << 32) | d[1];
  if ((wide | 0x8000000000000000ull) > 0x8000000000000005ull) reduced[i] += 1u;  // (a | b) ^ sign, not a | (b ^ sign)
}
"""

WORDS_SPEC = spec_kernel("hash_keys", (2, 1, 1), (64, 1, 1), "exact",
                         spec_buffer("seeds", "uint8", 7 * 128, "in", 0, 255),
                         spec_buffer("digests", "uint32", 2 * 128, "out"),
                         spec_buffer("first", "uint32", 128, "out"),
                         spec_buffer("reduced", "uint32", 128, "out"),
                         spec_scalar("n", "int32", 128))


def test_a_local_byte_arrays_words_convert_and_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, WORDS, WORDS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
