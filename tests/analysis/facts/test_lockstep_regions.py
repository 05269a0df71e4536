"""Views of one shared array at offsets every thread shares (``cumsum = s; counts = s + n + 1;``,
the way a block's histogram and its prefix sums share one extern buffer) are regions of the
array, not threads' walks through it (analysis.facts.lockstep): a store through one and a load
through the other are not a lockstep exchange, and the kernel keeps its own barriers only."""
from __future__ import annotations

from migrate.analysis.facts.lockstep import lockstep_exchange
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar, unit

KERNEL = """
__global__ void counts_and_offsets(const int* __restrict__ keys, int* __restrict__ offsets,
                                   int* __restrict__ total, int n, int bins) {
  extern __shared__ int mem[];
  int* cumsum = mem;
  int* counts = (int*)(mem + bins + 1);
  int tid = threadIdx.x;
  for (int i = tid; i < bins; i += blockDim.x) counts[i] = 0;
  __syncthreads();
  for (int i = tid; i < n; i += blockDim.x) atomicAdd(&counts[keys[i]], 1);
  __syncthreads();
  if (tid == 0) {
    cumsum[0] = 0;
    for (int b = 1; b <= bins; ++b) cumsum[b] = cumsum[b - 1] + counts[b - 1] * 3;
    total[blockIdx.x] = cumsum[bins];
  }
  __syncthreads();
  for (int i = tid; i < bins; i += blockDim.x) offsets[blockIdx.x * bins + i] = cumsum[i] + counts[i];
}
"""

# a transpose through two views that each thread places by its own index: still an exchange
CROSSING = """
__global__ void swap_halves(float* out) {
  __shared__ float s[64];
  float* mine = &s[threadIdx.x];
  float* other = &s[63 - threadIdx.x];
  *mine = threadIdx.x;
  out[threadIdx.x] = *other;
}
"""

SPEC = spec_kernel("counts_and_offsets", (2, 1, 1), (32, 1, 1), "exact",
                   spec_buffer("keys", "int32", 100, "in", 0, 19),
                   spec_buffer("offsets", "int32", 2 * 20, "out"),
                   spec_buffer("total", "int32", 2, "out"),
                   spec_scalar("n", "int32", 100), spec_scalar("bins", "int32", 20)).replace(
    'block = [32, 1, 1]\n', 'block = [32, 1, 1]\nshared_bytes = 164\n')


def test_views_at_shared_offsets_are_no_exchange_and_views_placed_per_thread_are(tmp_path):
    u = unit(tmp_path, KERNEL + CROSSING)
    assert lockstep_exchange(u.kernel("counts_and_offsets"), {}) is None
    found = lockstep_exchange(u.kernel("swap_halves"), {})
    assert found is not None and found.views


def test_regions_of_one_shared_array_convert_without_lockstep_steps_and_check_equal(tmp_path):
    _out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] == "portable", k["reason"]
    assert not [d for d in k["diagnostics"] if d["code"] == "M3007"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
