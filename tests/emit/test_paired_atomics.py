"""An ``atomicAdd`` on a ``__half2``, the way half-precision kernels accumulate pairs
(``reinterpret_cast<__half2*>(out)``, ``atomicAdd(&out_v[i], v)``), stays one 32-bit atomic: the
two lane adds the scalariser makes of it are printed as one ``T.atomic_addx2`` (two 16-bit atomics
on one word ran 26x slower than the CUDA on an H100). Checked: the module's text, its run on the
CPU against numpy (sums of small multiples of 1/4, exact in float16 in any order), and the sm_90a
CUDA TileLang writes for it (no GPU needed)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <cuda_fp16.h>
#define BINS 64

// pairs accumulated into a global array of half2 (one map over the threads)
__global__ void pair_hist(__half* __restrict__ hist, const int* __restrict__ keys, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  __half2* hist_v = reinterpret_cast<__half2*>(hist);
  __half2 v = __halves2half2(__float2half(0.25f * (keys[i] & 3)), __float2half(1.0f));
  atomicAdd(&hist_v[keys[i] % BINS], v);
}

// the same into shared memory first, then one global add per bin and block
__global__ void pair_hist_shared(__half2* __restrict__ hist, const int* __restrict__ keys, int n) {
  __shared__ __half2 local[BINS];
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = __float2half2_rn(0.0f);
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(local + keys[i] % BINS, __halves2half2(__float2half(0.5f), __float2half(0.25f * (keys[i] & 1))));
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&hist[b], local[b]);
}

int main() {
  int* k; __half* h;
  cudaMalloc(&k, 1000 * sizeof(int));
  cudaMalloc(&h, 2 * BINS * sizeof(__half));
  pair_hist<<<8, 128>>>(h, k, 1000);
  pair_hist_shared<<<8, 128>>>(reinterpret_cast<__half2*>(h), k, 1000);
  cudaDeviceSynchronize();
  return 0;
}
"""

BINS, N = 64, 1000


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("pairs"), PROGRAM, "k.cu")


def _keys():
    return np.random.default_rng(5).integers(0, 4096, N).astype(np.int32)


def test_a_half2_atomic_is_one_paired_add(converted):
    text = (converted / "k.py").read_text()
    assert len(re.findall(r"T\.atomic_addx2\(hist\[", text)) >= 3, text
    assert "T.atomic_add(" not in text, text   # no lane left as its own 16-bit atomic


def test_the_paired_adds_run_on_the_cpu(converted):
    mod = module_of(converted / "k.py")
    keys = _keys()
    start = np.random.default_rng(6).integers(-8, 8, 2 * BINS).astype(np.float16)
    want = start.astype(np.float64).reshape(BINS, 2)
    np.add.at(want[:, 0], keys % BINS, 0.25 * (keys & 3))
    np.add.at(want[:, 1], keys % BINS, 1.0)
    hist = start.copy()
    mod.pair_hist(hist, keys, N, grid=8, block=128, target="c")
    np.testing.assert_array_equal(hist.astype(np.float64), want.reshape(-1))
    np.add.at(want[:, 0], keys % BINS, 0.5)
    np.add.at(want[:, 1], keys % BINS, 0.25 * (keys & 1))
    mod.pair_hist_shared(hist, keys, N, grid=8, block=128, target="c")
    np.testing.assert_array_equal(hist.astype(np.float64), want.reshape(-1))


def test_the_paired_adds_are_half2_atomics_on_sm90(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    for name in ("pair_hist", "pair_hist_shared"):
        source = lower_sm90(mod.KERNELS[name], (8, 1, 1), (128, 1, 1))
        assert "AtomicAddx2(" in source and not re.search(r"\bAtomicAdd\(", source), source


def test_a_float2_atomic_stays_lane_by_lane(tmp_path):
    """float2's atomicAdd (sm_90 only) is not paired: TileLang's float pair lowers on the C target
    with a vector type it cannot build, so each lane keeps its own float atomic."""
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, """#include <cuda_runtime.h>
__global__ void add_pairs(float2* acc, const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&acc[i % 16], make_float2(x[i], 2.0f * x[i]));
}
int main() {
  float2* a; float* x;
  cudaMalloc(&a, 16 * sizeof(float2)); cudaMalloc(&x, 200 * sizeof(float));
  add_pairs<<<2, 128>>>(a, x, 200);
  cudaDeviceSynchronize();
  return 0;
}
""", "k.cu")
    text = (out / "k.py").read_text()
    assert "atomic_addx2" not in text, text
    assert "T.atomic_add(acc[i % 16 * 2 + 0], x[i])" in text and "T.atomic_add(acc[i % 16 * 2 + 1], 2.0 * x[i])" in text
    x = np.random.default_rng(7).integers(-40, 40, 200).astype(np.float32) / 4   # exact sums in any order
    acc = np.random.default_rng(8).integers(-5, 5, 32).astype(np.float32)
    want = acc.astype(np.float64).reshape(16, 2)
    np.add.at(want[:, 0], np.arange(200) % 16, x)
    np.add.at(want[:, 1], np.arange(200) % 16, 2.0 * x)
    module_of(out / "k.py").add_pairs(acc, x, 200, grid=2, block=128, target="c")
    np.testing.assert_array_equal(acc.astype(np.float64), want.reshape(-1))
