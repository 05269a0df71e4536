"""A portable kernel's per-thread arrays of items (CUB-style ``float v[ITEMS]`` loaded before a
barrier and used after it) are registers on GPUs where TileLang can hold them: a fragment with a
row per thread where every phase indexes the array one way (``analysis.fragment_rows``), and a
phase's own local where each iteration of the loop around the barriers writes the array whole
before reading it (``analysis.prepare.iteration_arrays``). Both were shared arrays with a row per
thread: quantBnB's ``kQuantize`` (``float vals[4]`` loaded, a barrier, a binary search per item
into ``uint8_t qvals[4]``, stored) took a shared store and load per item for each, its four
searches serialised behind them (1.27x its CUDA's time on an H100). An array indexed two ways in
one phase keeps its shared row (TileLang's layout inference takes one index per fragment in a
parallel loop). Checked: the module's text, its CPU run against numpy, and the sm_90a CUDA
TileLang writes (no GPU here)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

#define ITEMS 4

// the bucket of x among 16 sorted edges (a binary search, as quantisers do)
__device__ unsigned char bucket(const float* edges, float x) {
  int pos = 7;
  for (int step = 4; step > 0; step >>= 1) {
    if (x > edges[pos]) pos += step;
    else pos -= step;
  }
  return (unsigned char)(x > edges[pos] ? pos + 1 : pos);
}

// each thread owns ITEMS consecutive values of a tile: loaded into registers, bucketed after the
// barrier that publishes the edges, stored; its running sums carried across the tiles
template <int TILE>
__global__ void bucketize(const float* __restrict__ edges_in, const float* __restrict__ x,
                          unsigned char* out, float* sums, int n) {
  const int tid = threadIdx.x;
  float v[ITEMS];
  unsigned char q[ITEMS];
  float acc[ITEMS];
  __shared__ float edges[16];
  if (tid < 16) edges[tid] = edges_in[tid];
  for (int j = 0; j < ITEMS; j++) acc[j] = 0.f;
  for (int base = blockIdx.x * TILE; base < n; base += gridDim.x * TILE) {
    int valid = min(n - base, TILE);
    for (int j = 0; j < ITEMS; j++) {
      if (tid * ITEMS + j < valid) v[j] = x[base + tid * ITEMS + j];
      else v[j] = 0.f;
    }
    __syncthreads();
    #pragma unroll
    for (int j = 0; j < ITEMS; j++) {
      q[j] = bucket(edges, v[j]);
      acc[j] += v[j];
    }
    for (int k = 0; k < ITEMS; k++)
      if (tid * ITEMS + k < valid) out[base + tid * ITEMS + k] = q[k];
  }
  for (int j = 0; j < ITEMS; j++) sums[(blockIdx.x * blockDim.x + tid) * ITEMS + j] = acc[j];
}

// a thread's items read by two loops after the barrier: indexed two ways in one phase
__global__ void scaled_pairs(const float* __restrict__ x, const float* __restrict__ scale_in,
                             float* __restrict__ y, float* __restrict__ z, int n) {
  float w[ITEMS];
  __shared__ float scale[1];
  for (int base = blockIdx.x * blockDim.x * ITEMS; base < n; base += gridDim.x * blockDim.x * ITEMS) {
    int g = base + threadIdx.x * ITEMS;
    for (int j = 0; j < ITEMS; j++) w[j] = g + j < n ? x[g + j] : 0.f;
    if (threadIdx.x == 0) scale[0] = scale_in[base / (blockDim.x * ITEMS)];
    __syncthreads();
    for (int j = 0; j < ITEMS; j++)
      if (g + j < n) y[g + j] = w[j] * scale[0];
    for (int k = 0; k < ITEMS; k++)
      if (g + k < n) z[g + k] = w[k] + scale[0];
    __syncthreads();
  }
}

// a thread's offsets with their initial values, kept across the barriers: stored at four indices
__global__ void ring_sums(const int* __restrict__ x, int* __restrict__ y, int n) {
  int off[ITEMS] = {0, 3, 5, 9};
  __shared__ int hist[16];
  if (threadIdx.x < 16) hist[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[x[i] & 15], 1);
  __syncthreads();
  int t = 0;
  for (int j = 0; j < ITEMS; j++) t += hist[(threadIdx.x + off[j]) & 15];
  if (i < n) y[i] = t;
}

int main() {
  float *edges, *x, *sums, *s, *y, *z;
  unsigned char* out;
  cudaMalloc(&edges, 16 * sizeof(float));
  cudaMalloc(&x, 1000 * sizeof(float));
  cudaMalloc(&out, 1000);
  cudaMalloc(&sums, 3 * 64 * ITEMS * sizeof(float));
  cudaMalloc(&s, 3 * sizeof(float));
  cudaMalloc(&y, 3 * 64 * ITEMS * sizeof(float));
  cudaMalloc(&z, 3 * 64 * ITEMS * sizeof(float));
  bucketize<256><<<3, 64>>>(edges, x, out, sums, 1000);
  scaled_pairs<<<3, 64>>>(x, s, y, z, 1000);
  ring_sums<<<4, 256>>>((int*)x, (int*)y, 1000);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("thread_rows"), PROGRAM, "k.cu")


def _kernel_text(text: str, name: str) -> str:
    return text[text.index(f"def make_{name}("):text.index(f"{name.upper()} = Signature(")]


def test_items_kept_across_the_barrier_are_fragment_rows(converted):
    text = _kernel_text((converted / "k.py").read_text(), "bucketize")
    assert "(portable)" in text, text
    # loaded before the barrier, read after it; carried across the tiles: rows of registers
    assert re.search(r"\bv = alloc_thread\(\(block_x, 4,\), T\.float32, scope=thread_scope\)", text), text
    assert re.search(r"\bacc = alloc_thread\(\(block_x, 4,\), T\.float32, scope=thread_scope\)", text), text
    assert "T.alloc_shared((block_x" not in text, text


def test_an_array_each_tile_writes_whole_is_the_phase_own(converted):
    text = _kernel_text((converted / "k.py").read_text(), "bucketize")
    # declared where each tile's loop writes it whole: a local of the phase after the barrier
    phase = text[text.index("T.sync_threads()"):]
    assert re.search(r"\bq = T\.alloc_local\(\(4,\), T\.uint8\)", phase), text
    assert "q[k]" in phase and "q[tx" not in text, text


def test_an_array_indexed_two_ways_in_a_phase_keeps_its_shared_row(converted):
    text = _kernel_text((converted / "k.py").read_text(), "scaled_pairs")
    assert 'w = T.alloc_shared((block_x, 4,), T.float32, scope="shared")' in text, text


def test_an_array_with_initial_values_keeps_its_shared_row(converted):
    # its initialiser is a store per element, each at its own index: no fragment can take it
    text = _kernel_text((converted / "k.py").read_text(), "ring_sums")
    assert "(portable)" in text, text
    assert 'off = T.alloc_shared((block_x, 4,), T.int32, scope="shared")' in text, text


def _buckets(edges: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The kernel's binary search, element by element in Python."""
    out = np.empty(x.shape, np.uint8)
    for i, v in enumerate(x):
        pos, step = 7, 4
        while step > 0:
            pos = pos + step if v > edges[pos] else pos - step
            step >>= 1
        out[i] = pos + 1 if v > edges[pos] else pos
    return out


def test_the_cpu_run_matches_numpy(converted):
    mod = module_of(converted / "k.py")
    rng = np.random.default_rng(17)
    n, grid, block, tile = 1000, 3, 64, 256
    edges = np.sort(rng.normal(0.0, 1.0, 16)).astype(np.float32)
    x = rng.normal(0.0, 1.2, n).astype(np.float32)
    out = np.full(n + 8, 255, np.uint8)
    sums = np.full(grid * block * 4, np.nan, np.float32)
    mod.bucketize(edges, x, out, sums, n, grid=grid, block=block, template=[tile])
    np.testing.assert_array_equal(out[:n], _buckets(edges, x))
    assert (out[n:] == 255).all()
    want = np.zeros((grid, block, 4))
    for b in range(grid):
        for base in range(b * tile, n, grid * tile):
            for t in range(block):
                for j in range(4):
                    if base + t * 4 + j < n:
                        want[b, t, j] += x[base + t * 4 + j]
    np.testing.assert_allclose(sums, want.reshape(-1), rtol=1e-6, atol=0)

    # 1000 values in sweeps of 3 blocks of 64 threads x 4 items: 4 tiles, the last one partial
    scale = np.array([0.5, -2.0, 3.0, 1.5], np.float32)
    y = np.full(n + 24, np.nan, np.float32)
    z = np.full(n + 24, np.nan, np.float32)
    mod.scaled_pairs(x, scale, y, z, n, grid=grid, block=block)
    per = np.repeat(scale, block * 4)[:n]
    np.testing.assert_array_equal(y[:n], x * per)
    np.testing.assert_array_equal(z[:n], x + per)
    assert np.isnan(y[n:]).all() and np.isnan(z[n:]).all()

    keys = rng.integers(0, 1000, n).astype(np.int32)
    got = np.full(n + 24, -1, np.int32)
    mod.ring_sums(keys, got, n, grid=4, block=256)
    want = np.empty(n, np.int64)
    for b in range(4):
        hist = np.bincount(keys[b * 256:(b + 1) * 256] & 15, minlength=16)
        for t in range(min(256, n - b * 256)):
            want[b * 256 + t] = sum(hist[(t + o) & 15] for o in (0, 3, 5, 9))
    np.testing.assert_array_equal(got[:n], want)
    assert (got[n:] == -1).all()


def test_the_cuda_keeps_the_items_in_registers(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["bucketize"], (3, 1, 1), (64, 1, 1), template=[256])
    # the edges are the only shared memory; the items and their buckets are a thread's registers
    assert re.findall(r"__shared__[^;]*?(\w+)\[", source) == ["edges"], source
    assert re.search(r"\bfloat v\[4\];", source) and re.search(r"\bfloat acc\[4\];", source), source
    assert re.search(r"\buchar q\[4\];", source), source
    # an array with initial values keeps its shared row, which TileLang builds
    assert "off[" in lower_sm90(mod.KERNELS["ring_sums"], (4, 1, 1), (256, 1, 1))
