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
    assert row["form"] != "unsupported", row["reason"]
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
