"""The CPU executor's CUB (runtime/cpu/c2t_cub.h): cub::KeyValuePair with cub::ArgMax / ArgMin in
a BlockReduce, as a top-k selection writes it (the pool's moe), gives each block's arg max
(arg min), the lower key on a tie, as CUB's operators define."""
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
