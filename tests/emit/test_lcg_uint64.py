"""A Monte Carlo code's random numbers (a reactor-physics benchmark's ``LCG_random_double`` and
``fast_forward_LCG``): 64-bit unsigned linear congruences modulo 2**63 with constants above 2**61,
through a pointer to the caller's seed, then a pick from a cumulative table. Checked equal on the
CPU against the original at exact tolerance; the GPU run checks the CUDA build (the benchmark's
lookup kernel, which uses them, failed its H200 replay on 2026-12-05)."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <stdint.h>
__device__ double LCG_random_double(uint64_t * seed) {
  const uint64_t m = 9223372036854775808ULL;
  const uint64_t a = 2806196910506780709ULL;
  const uint64_t c = 1ULL;
  *seed = (a * (*seed) + c) % m;
  return (double) (*seed) / (double) m;
}
__device__ uint64_t fast_forward_LCG(uint64_t seed, uint64_t n) {
  const uint64_t m = 9223372036854775808ULL;
  uint64_t a = 2806196910506780709ULL;
  uint64_t c = 1ULL;
  n = n % m;
  uint64_t a_new = 1;
  uint64_t c_new = 0;
  while (n > 0) {
    if (n & 1) { a_new *= a; c_new = c_new * a + c; }
    c *= (a + 1);
    a *= a;
    n >>= 1;
  }
  return (a_new * seed + c_new) % m;
}
__device__ int pick(uint64_t* seed) {
  double dist[4];
  dist[0] = 0.1; dist[1] = 0.3; dist[2] = 0.2; dist[3] = 0.4;
  double roll = LCG_random_double(seed);
  for (int i = 0; i < 4; i++) {
    double running = 0;
    for (int j = i; j > 0; j--) running += dist[j];
    if (roll < running) return i;
  }
  return 0;
}
__global__ void lcg(double* out, int* picks, int n) {
  size_t i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i < n) {
    uint64_t seed = 1070;
    seed = fast_forward_LCG(seed, 2 * i);
    out[i] = LCG_random_double(&seed);
    picks[i] = pick(&seed);
  }
}
"""

SPEC = spec_kernel("lcg", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("out", "float64", 128, "out"), spec_buffer("picks", "int32", 128, "out"),
                   spec_scalar("n", "int32", 128))


def test_the_random_numbers_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
