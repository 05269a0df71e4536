"""A kernel template of one instance whose parameter is a struct template on its type parameter
(nonzero's ``TensorDims<index_t> dims``, ``struct TensorDims { index_t sizes[MAX_DIMS]; }``): only
the instance lays the struct out, so the kernel is written out for its instance and converted
from that copy, the struct's fields its lanes."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from migrate.cli import main
from tests.analysis.support import module_of

SOURCE = """
#include <cstdint>
#define MAX_DIMS 2
template <typename index_t> struct TensorDims { index_t sizes[MAX_DIMS]; };

template <typename index_t>
__global__ void unflatten(int64_t* inp, TensorDims<index_t> dims, int ndim, index_t count) {
  auto index = threadIdx.x + blockIdx.x * blockDim.x;
  if (index < count) {
    index_t div = 1;
    int64_t flat = inp[index];
    for (int dim = ndim - 1; dim >= 0; dim--) {
      auto size = dims.sizes[dim];
      inp[index + (dim + 1) * count] = (flat / div) % size;
      div *= size;
    }
  }
}

void run(int64_t* d, long rows, long cols, long n) {
  TensorDims<long> dims;
  dims.sizes[0] = rows; dims.sizes[1] = cols;
  unflatten<long><<<(n + 127) / 128, 128>>>(d, dims, 2, n);
}
"""


def test_a_struct_template_parameter_is_converted_through_the_instance_copy(tmp_path):
    pytest.importorskip("tilelang")
    (tmp_path / "k.cu").write_text(SOURCE)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q"]) == 0
    (row,) = json.loads((out / "report.json").read_text())["kernels"]
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    assert not [d for d in row["diagnostics"] if d["severity"] == "error"], row["diagnostics"]
    text = (out / "k.py").read_text()
    assert "dims_sizes_0: T.int64" in text and "dims_sizes_1: T.int64" in text
    mod = module_of(out / "k.py")
    rows, cols, n = 7, 13, 80
    rng = np.random.default_rng(3)
    flat = rng.integers(0, rows * cols, n)
    buf = np.full(3 * n, -123456789, np.int64)  # the two index rows poisoned
    buf[:n] = flat
    mod.unflatten(buf, struct.pack("<qq", rows, cols), 2, n, grid=1, block=128, target="c")
    np.testing.assert_array_equal(buf[:n], flat)
    np.testing.assert_array_equal(buf[n:2 * n], flat // cols)
    np.testing.assert_array_equal(buf[2 * n:], flat % cols)


SOFTMAX = """
#include <cfloat>
#include <cub/cub.cuh>
struct Max {
  template <typename T> __device__ T operator()(T a, T b) const { return a > b ? a : b; }
};

template <int TPB>
__global__ void row_softmax(const float* __restrict__ input, float* output, const int num_cols) {
  using BlockReduce = cub::BlockReduce<float, TPB>;
  __shared__ typename BlockReduce::TempStorage tmp;
  __shared__ float norm;
  __shared__ float top;
  const int offset = blockIdx.x * num_cols;
  float v = -FLT_MAX;
  for (int i = threadIdx.x; i < num_cols; i += TPB) v = fmaxf(input[offset + i], v);
  const float m = BlockReduce(tmp).Reduce(v, Max());
  if (threadIdx.x == 0) top = m;
  __syncthreads();
  v = 0;
  for (int i = threadIdx.x; i < num_cols; i += TPB) v += expf(input[offset + i] - top);
  const float z = BlockReduce(tmp).Sum(v);
  if (threadIdx.x == 0) norm = 1.f / z;
  __syncthreads();
  for (int i = threadIdx.x; i < num_cols; i += TPB) output[offset + i] = expf(input[offset + i] - top) * norm;
}

void run(const float* in, float* out, int rows, int cols) {
  constexpr int TPB = 128;
  row_softmax<TPB><<<rows, TPB>>>(in, out, cols);
}
"""


def test_a_one_instance_template_whose_local_type_only_the_instance_names_converts_by_its_copy(tmp_path):
    """As moe's ``moeSoftmax<TPB>``: the generic kernel's CUB block size is its own parameter
    (refused: not a constant), so the instance's copy, standing by, is taken; checked on the CPU
    against the original compiled with g++."""
    pytest.importorskip("tilelang")
    from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

    spec = spec_kernel("row_softmax", (6, 1, 1), (128, 1, 1), "fp32",
                       spec_buffer("input", "float32", 6 * 300, "in", -4.0, 4.0),
                       spec_buffer("output", "float32", 6 * 300, "out"), spec_scalar("num_cols", "int32", 300)
                       ).replace("grid =", 'template = ["128"]\ngrid =')
    out, rows = converted(tmp_path, SOFTMAX, spec)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    assert "converted per instance (1)" in row["reason"], row["reason"]
    assert row["check"]["status"] == "pass", row["check"]
