"""Block votes (``__syncthreads_and``/``_or``/``_count``) are the CUDA's own on GPUs.

analysis.prepare.block_votes lowers a vote to a shared counter between three barriers, which the
CPU target needs; on GPUs that was 3 BAR.SYNC, a shared store, a shared atomic and a load per vote
where the CUDA has one BAR.RED (nms's ``reduce_nms_bitmap``, 32 votes in a loop, 1.12x slower on
an H100). The vote now stands as ``if target == "cuda": <the native vote> else: <the counter>``,
the native vote run by every thread (each thread one lane). Written the way nms uses votes: a
loop over a row's partitions, each vote deciding a byte of the block's bitmap entry through a
device function storing through a pointer, beside a count and an or accumulated in the loop.
Checked: the module's text, its CPU run against numpy, and the sm_90a CUDA TileLang writes (no GPU
here): one ``__syncthreads_and`` per vote, no atomic or shared counter."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

ROW, PARTS = 256, 4

PROGRAM = """#include <cuda_runtime.h>
#define ROW 256
#define PARTS 4

__device__ __inline__ void keep_if_all(unsigned char* entry, int cond) {
  *entry = __syncthreads_and(cond);
}

// block b keeps entry b while every element of its row is set, one partition a vote
__global__ void sweep(const unsigned char* rows, unsigned char* keep, int* counts, int* big) {
  int idx = blockIdx.x * ROW + threadIdx.x;
  keep_if_all(&keep[blockIdx.x], rows[idx]);
  int total = 0, any = 0;
  for (int i = 0; i < PARTS - 1; i++) {
    idx += ROW / PARTS;
    keep_if_all(&keep[blockIdx.x], keep[blockIdx.x] && rows[idx]);
    total += __syncthreads_count(rows[idx] != 0);
    any |= __syncthreads_or(rows[idx] > 2);
  }
  if (threadIdx.x == 0) { counts[blockIdx.x] = total; big[blockIdx.x] = any; }
}

int main() {
  unsigned char *rows, *keep; int *counts, *big;
  cudaMalloc(&rows, 8 * ROW); cudaMalloc(&keep, 8);
  cudaMalloc(&counts, 8 * sizeof(int)); cudaMalloc(&big, 8 * sizeof(int));
  sweep<<<8, ROW / PARTS>>>(rows, keep, counts, big);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("native_votes"), PROGRAM, "k.cu")


def test_the_vote_is_native_on_gpus_and_the_counter_on_the_cpu(converted):
    text = (converted / "k.py").read_text()
    assert "TileLang (tile) for CUDA kernel `sweep`" in text, text
    for vote in ("and", "count", "or"):
        native = f'T.call_extern("int32", "__syncthreads_{vote}", '
        # the first and (before the loop) and one of each vote in the loop
        assert text.count(native) == (2 if vote == "and" else 1), text
    assert text.count('if target == "cuda":') == 4, text
    # each native vote alone in a lane loop, its counter (with its barriers) under the else
    votes = list(re.finditer(r'\n( *)if target == "cuda":[^\n]*\n\1    for lane in lane_loop\(block_x\):[^\n]*\n'
                             r'\1        \w+ = T\.call_extern\("int32", "__syncthreads_\w+", [^\n]*\n\1else:', text))
    assert len(votes) == 4, text
    for m in votes:
        other = text[m.end():].split(f"\n{m.group(1)}for lane", 1)[0]
        assert "T.atomic_add(block_votes" in other and other.count("T.sync_threads()") == 3, other

def _reference(rows: np.ndarray, grid: int):
    block = ROW // PARTS
    keep = np.zeros(grid, np.uint8)
    counts = np.zeros(grid, np.int32)
    big = np.zeros(grid, np.int32)
    for b in range(grid):
        row = rows[b * ROW:(b + 1) * ROW].reshape(PARTS, block)
        k = int(np.all(row[0] != 0))
        for i in range(1, PARTS):
            k = int(k != 0 and np.all(row[i] != 0))
            counts[b] += int(np.count_nonzero(row[i]))
            big[b] |= int(np.any(row[i] > 2))
        keep[b] = k
    return keep, counts, big


def test_the_cpu_run_matches_numpy(converted):
    mod = module_of(converted / "k.py")
    rng = np.random.default_rng(7)
    grid = 8
    rows = rng.integers(1, 3, grid * ROW).astype(np.uint8)       # all set: entries kept
    rows[1 * ROW + 5] = 0                                         # block 1: partition 0 not all set
    rows[2 * ROW + 3 * (ROW // PARTS) + 9] = 0                    # block 2: the last partition
    rows[3 * ROW + ROW // PARTS: 4 * ROW] = 0                     # block 3: nothing after partition 0
    rows[4 * ROW + 2 * (ROW // PARTS) + 1] = 3                    # block 4: one big element
    rows[5 * ROW: 5 * ROW + ROW // PARTS] = 7                     # block 5: big only in partition 0
    want = _reference(rows, grid)
    assert 0 < want[0].sum() < grid and 0 < want[2].sum() < grid   # the votes decide both ways
    keep = np.full(grid, 0xAB, np.uint8)
    counts = np.full(grid, -7, np.int32)
    big = np.full(grid, -7, np.int32)
    mod.sweep(rows, keep, counts, big, grid=(grid, 1, 1), block=(ROW // PARTS, 1, 1), target="c")
    np.testing.assert_array_equal(keep, want[0])
    np.testing.assert_array_equal(counts, want[1])
    np.testing.assert_array_equal(big, want[2])


def test_the_cuda_votes_with_one_barrier_each(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["sweep"], (8, 1, 1), (ROW // PARTS, 1, 1))
    body = source[source.index("__global__ void"):]
    assert body.count("__syncthreads_and(") == 2, body      # before the loop and in it
    assert body.count("__syncthreads_count(") == 1 and body.count("__syncthreads_or(") == 1, body
    # the votes are the barriers: no other, no atomic, no shared counter
    assert "__syncthreads()" not in body and "atomic" not in body.lower() and "__shared__" not in body, body


# a portable kernel (2-D block, a shared row that an atomic sums into): its count is native too,
# the vote's phase a T.Parallel over the block's threads
PORTABLE = """#include <cuda_runtime.h>
__global__ void above(const float* m, float* sums, int* counts, int w) {
  extern __shared__ float row[];
  int tid = threadIdx.x + threadIdx.y * blockDim.x;
  if (tid < w) row[tid] = m[blockIdx.x * w + tid];
  if (tid == 0) row[w] = 0.f;
  __syncthreads();
  for (int i = threadIdx.x; i < 8; i += blockDim.x) if (threadIdx.y == 0) atomicAdd(&row[w], row[i]);
  __syncthreads();
  float v = tid < w ? row[tid] - row[w] / 8 : 0.f;
  if (tid < w) sums[blockIdx.x * w + tid] = v;
  int n = __syncthreads_count(v > 0);
  if (tid == 0) counts[blockIdx.x] = n;
}
int main() { float *m, *s; int *c; above<<<4, dim3(16, 4), 65 * 4>>>(m, s, c, 64); return 0; }
"""
W = 64


@pytest.fixture(scope="module")
def portable(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("native_votes_portable"), PORTABLE, "k.cu")


def test_a_portable_vote_is_native_on_gpus(portable):
    text = (portable / "k.py").read_text()
    assert "TileLang (portable) for CUDA kernel `above`" in text, text
    assert re.search(r'\n( *)if target == "cuda":[^\n]*\n\1    for ty, tx in T\.Parallel\(block_y, block_x\):[^\n]*\n'
                     r'\1        syncthreads_count_\d+ = T\.call_extern\("int32", "__syncthreads_count", '
                     r'T\.Cast\(T\.int32, v\[ty, tx\] > 0\.0\)\)[^\n]*\n\1else:', text), text
    mod = module_of(portable / "k.py")
    rng = np.random.default_rng(3)
    grid = 4
    m = rng.uniform(-1, 1, grid * W).astype(np.float32)
    sums = np.full(grid * W, np.nan, np.float32)
    counts = np.full(grid, -7, np.int32)
    mod.above(m, sums, counts, W, grid=(grid, 1, 1), block=(16, 4, 1), shared_bytes=(W + 1) * 4, target="c")
    rows = m.reshape(grid, W)
    mean = rows[:, :8].astype(np.float32).sum(axis=1, dtype=np.float32) / np.float32(8)
    want = rows - mean[:, None]
    np.testing.assert_allclose(sums.reshape(grid, W), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(counts, (want > 0).sum(axis=1))
    assert 0 < counts.min() and counts.max() < W


def test_a_portable_vote_lowers_to_the_cuda_vote(portable):
    from tests.lowering import lower_sm90
    mod = module_of(portable / "k.py")
    source = lower_sm90(mod.KERNELS["above"], (4, 1, 1), (16, 4, 1))
    body = source[source.index("__global__ void"):]
    assert body.count("__syncthreads_count(") == 1, body
    # the kernel's own two barriers, and no counter: one atomic (the row's sum)
    assert body.count("__syncthreads()") == 2 and body.lower().count("atomicadd(") == 1, body
    assert "block_votes" not in body and body.count("__shared__") == 1, body
