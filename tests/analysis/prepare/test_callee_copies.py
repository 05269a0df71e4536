"""Two silent changes of meaning the H100 replay of kernels in headers found (2026-12-05, eighth
session), each on the team's own kernel written the way the pool writes it, checked on the CPU
against the original built with g++:

- a device function that steps its own pointer parameter (``c = (float*)((uchar*)c + step)``, a
  recursive filter's causal initialisation) steps a copy: the caller's pointer stays where it
  was (the inliner had bound the parameter to the caller's pointer, which then moved too and the
  kernel stored past its row);
- a local ``char`` array initialised by a string literal (a base64 alphabet) holds the literal's
  characters and its terminating NUL (the initialiser had been dropped: every read gave 0).
"""
from __future__ import annotations

from tests.analysis.support import converted

FILTER = """
typedef unsigned char uchar;
__device__ float warm_up(float* c, unsigned len, int step) {
  float sum = *c;
  float z = 0.5f;
  for (unsigned n = 0; n < (len < 6 ? len : 6); n++) {
    sum += z * *c;
    z *= 0.5f;
    c = (float*)((uchar*)c + step);
  }
  return sum;
}
__device__ void smooth(float* coeffs, unsigned len, int step) {
  float* c = coeffs;
  float prev;
  *c = prev = warm_up(c, len, step);
  for (unsigned n = 1; n < len; n++) {
    c = (float*)((uchar*)c + step);
    *c = prev = 0.75f * *c + 0.25f * prev;
  }
}
__global__ void rows(float* image, unsigned pitch, unsigned width, unsigned height) {
  const unsigned y = blockIdx.x * blockDim.x + threadIdx.x;
  if (y < height) smooth((float*)((uchar*)image + y * pitch), width, sizeof(float));
}
"""

FILTER_SPEC = "\n".join([
    '[[kernel]]', 'name = "rows"', 'grid = [2, 1, 1]', 'block = [16, 1, 1]', 'tolerance = "fp32_accum"',
    '[[kernel.args]]', 'name = "image"', 'buffer = "float32"', 'elements = 840', 'role = "inout"',
    'range = [-2.0, 2.0]',
    '[[kernel.args]]', 'name = "pitch"', 'scalar = "uint32"', 'value = 112',
    '[[kernel.args]]', 'name = "width"', 'scalar = "uint32"', 'value = 25',
    '[[kernel.args]]', 'name = "height"', 'scalar = "uint32"', 'value = 30', ''])


def test_a_device_function_steps_its_own_copy_of_a_pointer_parameter(tmp_path):
    out, (k,) = converted(tmp_path, FILTER, FILTER_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "warm_up_2_c_off = smooth_1_c_off" in text  # the callee steps an offset of its own


ALPHABET = """
typedef unsigned char uchar;
__global__ void encode(const uchar* __restrict__ in, uchar* __restrict__ out, int n) {
  const uchar chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  const char tail[4] = "=\\x21";
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    out[2 * i] = chars[in[i] % 64];
    out[2 * i + 1] = (in[i] & 1) ? tail[in[i] % 4] + 1 : chars[(in[i] * 7) % 65];
  }
}
"""

ALPHABET_SPEC = "\n".join([
    '[[kernel]]', 'name = "encode"', 'grid = [3, 1, 1]', 'block = [64, 1, 1]', 'tolerance = "exact"',
    '[[kernel.args]]', 'name = "in"', 'buffer = "uint8"', 'elements = 170', 'role = "in"', 'range = [0, 255]',
    '[[kernel.args]]', 'name = "out"', 'buffer = "uint8"', 'elements = 340', 'role = "out"',
    '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 170', ''])


def test_a_local_array_initialised_by_a_string_literal_holds_its_characters(tmp_path):
    out, (k,) = converted(tmp_path, ALPHABET, ALPHABET_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "chars[0] = T.uint8(65)" in text and "chars[64] = T.uint8(0)" in text  # its NUL too
    assert "tail[1] = T.int8(33)" in text and "tail[3] = T.int8(0)" in text  # the rest is zero
