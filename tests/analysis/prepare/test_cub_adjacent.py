"""CUB adjacent differences (analysis.prepare.cub_adjacent): ``cub::BlockAdjacentDifference``'s
SubtractLeft and SubtractRight over a thread's items (in place and into another array, with and
without the tile's edge item, CUB's and the standard library's operators, a kernel template of
the block size) exchange each thread's edge item through shared memory; each migrated kernel runs
on the CPU (TileLang's C target) against numpy's differences. An operator of the program's own is
named."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """
#include <cub/cub.cuh>
#include <functional>

template <int BLOCK>
__global__ void left(const int* __restrict__ x, int* __restrict__ y) {
    using Adjacent = cub::BlockAdjacentDifference<int, BLOCK>;
    __shared__ typename Adjacent::TempStorage temp_storage;
    int items[4];
    int base = blockIdx.x * BLOCK * 4 + threadIdx.x * 4;
    for (int k = 0; k < 4; k++) items[k] = x[base + k];
    Adjacent(temp_storage).SubtractLeft(items, items, cub::Difference());
    for (int k = 0; k < 4; k++) y[base + k] = items[k];
}

__global__ void right(const float* __restrict__ x, float* __restrict__ y) {
    typedef cub::BlockAdjacentDifference<float, 32> Adjacent;
    __shared__ typename Adjacent::TempStorage temp_storage;
    float items[3], out[3];
    int base = blockIdx.x * 96 + threadIdx.x * 3;
    for (int k = 0; k < 3; k++) items[k] = x[base + k];
    float successor = 100.0f * blockIdx.x;
    Adjacent(temp_storage).SubtractRight(items, out, std::minus<float>(), successor);
    for (int k = 0; k < 3; k++) y[base + k] = out[k];
}

struct Delta {
    __device__ int operator()(int a, int b) const { return a - b; }
};
__global__ void own_operator(int* x) {
    typedef cub::BlockAdjacentDifference<int, 32> Adjacent;
    __shared__ typename Adjacent::TempStorage temp_storage;
    int items[2] = {x[2 * threadIdx.x], x[2 * threadIdx.x + 1]};
    Adjacent(temp_storage).SubtractLeft(items, items, Delta());
    x[2 * threadIdx.x] = items[0];
}

int main() {
    int *a, *b; float *f, *g;
    left<64><<<3, 64>>>(a, b);
    right<<<2, 32>>>(f, g);
    own_operator<<<1, 32>>>(a);
    return 0;
}
"""


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    pytest.importorskip("tilelang")
    tmp = tmp_path_factory.mktemp("cub_adjacent")
    out = program_converted(tmp, PROGRAM, "adjacent.cu", status=1)  # own_operator is refused
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    return module_of(out / "adjacent.py"), rows


def test_subtract_left_in_place(migrated):
    mod, rows = migrated
    assert rows["left"]["form"] not in ("hybrid", "unsupported"), rows["left"]["diagnostics"]
    x = np.random.default_rng(1).integers(-1000, 1000, 3 * 256).astype(np.int32)
    y = np.zeros_like(x)
    mod.left(x, y, grid=3, block=64, template=("64",), target="c")
    want = []
    for seg in x.reshape(3, 256):  # a block's items are blocked: its segment in order
        want.append(np.concatenate([seg[:1], seg[1:] - seg[:-1]]))  # the first item keeps its value
    np.testing.assert_array_equal(y, np.concatenate(want))


def test_subtract_right_with_the_successor(migrated):
    mod, rows = migrated
    assert rows["right"]["form"] not in ("hybrid", "unsupported"), rows["right"]["diagnostics"]
    x = np.random.default_rng(2).uniform(-10, 10, 192).astype(np.float32)
    y = np.zeros_like(x)
    mod.right(x, y, grid=2, block=32, target="c")
    want = []
    for b, seg in enumerate(x.reshape(2, 96)):
        want.append(seg - np.concatenate([seg[1:], [np.float32(100.0 * b)]]))
    np.testing.assert_allclose(y, np.concatenate(want), rtol=0, atol=1e-5)


def test_an_operator_of_the_programs_own_is_named(migrated):
    _mod, rows = migrated
    row = rows["own_operator"]
    assert row["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M3001" and "cub::BlockAdjacentDifference::SubtractLeft with the operator 'Delta'"
               in d["message"] for d in row["diagnostics"]), row["diagnostics"]
