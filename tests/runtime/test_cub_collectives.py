"""The CPU executor's CUB (runtime/cpu/c2t_cub.h): cub::KeyValuePair with cub::ArgMax / ArgMin in
a BlockReduce, as a top-k selection writes it (the pool's moe), gives each block's arg max
(arg min), the lower key on a tie, as CUB's operators define; cub::BlockScan's sums and scans,
as an expert-count prefix sum writes it (the pool's moe-align), give each thread its prefix and
the block's aggregate. Each against numpy, threads forward and reverse."""
from __future__ import annotations

import numpy as np
import pytest

from migrate.runtime.build import find_cxx
from migrate.runtime.cuda_cpu import compile_cpu, run_program

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

ROWS, COLS = 5, 300  # as the program's main() states them, 64 threads a block

PROGRAM = r"""
#include <cstdio>
#include <cub/cub.cuh>
#include <cub/util_type.cuh>

template <int TPB>
__global__ void row_arg_extremes(const float* x, int cols, int* max_key, float* max_value, int* min_key) {
  using kvp = cub::KeyValuePair<int, float>;
  using BlockReduce = cub::BlockReduce<kvp, TPB>;
  __shared__ typename BlockReduce::TempStorage storage;
  cub::ArgMax arg_max;
  cub::ArgMin arg_min;
  kvp best(0, -1e30f), least(0, 1e30f);
  for (int c = threadIdx.x; c < cols; c += TPB) {
    kvp here(c, x[blockIdx.x * cols + c]);
    best = arg_max(here, best);
    least = arg_min(here, least);
  }
  const kvp top = BlockReduce(storage).Reduce(best, arg_max);
  const kvp bottom = BlockReduce(storage).Reduce(least, arg_min);
  if (threadIdx.x == 0) {
    max_key[blockIdx.x] = top.key;
    max_value[blockIdx.x] = top.value;
    min_key[blockIdx.x] = bottom.key;
  }
}

int main(int argc, char** argv) {
  const int rows = 5, cols = 300;
  static float h[rows * cols];
  for (int i = 0; i < rows * cols; i++) h[i] = (float)((i * 37 + 11) % 101) - 50.0f;  // ties in every row
  float *x, *max_value;
  int *max_key, *min_key;
  cudaMalloc(&x, sizeof(h));
  cudaMalloc(&max_key, rows * sizeof(int));
  cudaMalloc(&min_key, rows * sizeof(int));
  cudaMalloc(&max_value, rows * sizeof(float));
  cudaMemcpy(x, h, sizeof(h), cudaMemcpyHostToDevice);
  row_arg_extremes<64><<<rows, 64>>>(x, cols, max_key, max_value, min_key);
  int hk[rows], hm[rows];
  float hv[rows];
  cudaMemcpy(hk, max_key, sizeof(hk), cudaMemcpyDeviceToHost);
  cudaMemcpy(hm, min_key, sizeof(hm), cudaMemcpyDeviceToHost);
  cudaMemcpy(hv, max_value, sizeof(hv), cudaMemcpyDeviceToHost);
  for (int r = 0; r < rows; r++) printf("%d %d %g\n", hk[r], hm[r], hv[r]);
  return 0;
}
"""


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_key_value_pairs_reduce_to_each_rows_arg_max_and_arg_min(tmp_path, schedule):
    src = tmp_path / "argmax.cu"
    src.write_text(PROGRAM)
    lib = compile_cpu(src, [])
    status, out, err = run_program(lib, schedule=schedule)
    assert status == 0, out + err
    got = np.array([line.split() for line in out.split("\n") if line.strip()], dtype=np.float64)
    x = ((np.arange(ROWS * COLS) * 37 + 11) % 101 - 50.0).reshape(ROWS, COLS)
    assert (x == x.max(axis=1, keepdims=True)).sum(axis=1).min() > 1  # the tie rule is exercised
    assert np.array_equal(got[:, 0], x.argmax(axis=1))  # numpy: the first index of the max, as CUB
    assert np.array_equal(got[:, 1], x.argmin(axis=1))
    assert np.array_equal(got[:, 2], x.max(axis=1))


SCAN_PROGRAM = r"""
#include <cstdio>
#include <cub/cub.cuh>

#define CEILDIV(x, y) (((x) + (y) - 1) / (y))

__global__ void expert_offsets(const int* counts, int num_experts, int block_size, int* exclusive, int* inclusive,
                               int* running_max, int* totals) {
  using BlockScan = cub::BlockScan<int, 1024>;
  __shared__ typename BlockScan::TempStorage temp_storage;
  int count = 0;
  if (threadIdx.x < num_experts) count = CEILDIV(counts[threadIdx.x], block_size) * block_size;
  int before, upto, best, total;
  BlockScan(temp_storage).ExclusiveSum(count, before);
  __syncthreads();
  BlockScan(temp_storage).InclusiveSum(count, upto, total);
  __syncthreads();
  BlockScan(temp_storage).ExclusiveScan(count, best, -7, cub::Max());
  if (threadIdx.x <= num_experts) exclusive[threadIdx.x] = before;
  inclusive[threadIdx.x] = upto;
  running_max[threadIdx.x] = best;
  if (threadIdx.x == 0) totals[0] = total;
}

int main(int argc, char** argv) {
  const int experts = 300, block_size = 16;
  int h[experts];
  for (int i = 0; i < experts; i++) h[i] = (i * 53 + 5) % 97;
  int *counts, *exclusive, *inclusive, *running_max, *totals;
  cudaMalloc(&counts, sizeof(h));
  cudaMalloc(&exclusive, 1024 * sizeof(int));
  cudaMalloc(&inclusive, 1024 * sizeof(int));
  cudaMalloc(&running_max, 1024 * sizeof(int));
  cudaMalloc(&totals, sizeof(int));
  cudaMemcpy(counts, h, sizeof(h), cudaMemcpyHostToDevice);
  expert_offsets<<<1, 1024>>>(counts, experts, block_size, exclusive, inclusive, running_max, totals);
  static int e[1024], in[1024], m[1024];
  int t;
  cudaMemcpy(e, exclusive, sizeof(e), cudaMemcpyDeviceToHost);
  cudaMemcpy(in, inclusive, sizeof(in), cudaMemcpyDeviceToHost);
  cudaMemcpy(m, running_max, sizeof(m), cudaMemcpyDeviceToHost);
  cudaMemcpy(&t, totals, sizeof(int), cudaMemcpyDeviceToHost);
  printf("%d\n", t);
  for (int i = 0; i < 1024; i++) printf("%d %d %d\n", i <= experts ? e[i] : 0, in[i], m[i]);
  return 0;
}
"""


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_block_scans_give_each_thread_its_prefix_and_the_block_its_aggregate(tmp_path, schedule):
    src = tmp_path / "scan.cu"
    src.write_text(SCAN_PROGRAM)
    lib = compile_cpu(src, [])
    status, out, err = run_program(lib, schedule=schedule)
    assert status == 0, out + err
    lines = [line.split() for line in out.split("\n") if line.strip()]
    total, got = int(lines[0][0]), np.array(lines[1:], dtype=np.int64)
    counts = np.zeros(1024, np.int64)
    counts[:300] = -(-((np.arange(300) * 53 + 5) % 97) // 16) * 16
    exclusive = np.concatenate([[0], np.cumsum(counts)[:-1]])
    assert np.array_equal(got[:301, 0], exclusive[:301])
    assert np.array_equal(got[:, 1], np.cumsum(counts))
    assert np.array_equal(got[:, 2], np.maximum.accumulate(np.concatenate([[-7], counts[:-1]])))
    assert total == counts.sum()
