"""CUB block and warp scans (analysis.prepare.cub_scans): ``cub::BlockScan`` (sums with and without
the block aggregate, over one value or a thread's items, scans with CUB's operators, a 2-D
block, a kernel template of the block size) and ``cub::WarpScan`` (an array of warp storages,
logical warps of 16 lanes) become shared-memory scans; each migrated kernel runs on the CPU
(TileLang's C target) against numpy's cumulative sums. What is not modelled is named."""
from __future__ import annotations

import json

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """
#include <cub/cub.cuh>

__global__ void sums(const int* __restrict__ x, int* __restrict__ excl, int* __restrict__ incl,
                     int* __restrict__ totals, int n) {
    using BlockScan = cub::BlockScan<int, 128>;
    __shared__ typename BlockScan::TempStorage temp_storage;
    int i = blockIdx.x * 128 + threadIdx.x;
    int v = i < n ? x[i] : 0;
    int before, upto, total;
    BlockScan(temp_storage).ExclusiveSum(v, before);
    __syncthreads();
    BlockScan(temp_storage).InclusiveSum(v, upto, total);
    if (i < n) { excl[i] = before; incl[i] = upto; }
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

template <int BLOCK>
__global__ void float_sums(const float* __restrict__ x, float* __restrict__ y) {
    typedef cub::BlockScan<float, BLOCK> BlockScan;
    __shared__ typename BlockScan::TempStorage temp_storage;
    float v = x[blockIdx.x * BLOCK + threadIdx.x], out;
    BlockScan(temp_storage).InclusiveSum(v, out);
    y[blockIdx.x * BLOCK + threadIdx.x] = out;
}

__global__ void item_sums(const int* __restrict__ x, int* __restrict__ y, int* __restrict__ totals) {
    typedef cub::BlockScan<int, 64> BlockScan;
    __shared__ typename BlockScan::TempStorage temp_storage;
    int items[4], total;
    for (int k = 0; k < 4; k++) items[k] = x[blockIdx.x * 256 + threadIdx.x * 4 + k];
    BlockScan(temp_storage).ExclusiveSum(items, items, total);
    for (int k = 0; k < 4; k++) y[blockIdx.x * 256 + threadIdx.x * 4 + k] = items[k];
    if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

__global__ void running_max(const int* __restrict__ x, int* __restrict__ hi, int* __restrict__ lo) {
    typedef cub::BlockScan<int, 16, cub::BLOCK_SCAN_WARP_SCANS, 4> BlockScan;   // a 16 x 4 block
    __shared__ typename BlockScan::TempStorage temp_storage;
    int r = threadIdx.y * 16 + threadIdx.x, i = blockIdx.x * 64 + r;
    int before, least;
    BlockScan(temp_storage).ExclusiveScan(x[i], before, -50, cub::Max());
    __syncthreads();   // CUB asks for a barrier before the storage is used again
    BlockScan(temp_storage).InclusiveScan(x[i], least, cub::Min());
    hi[i] = before;
    lo[i] = least;
}

template <int WARP>
__global__ void warp_sums(const int* __restrict__ x, int* __restrict__ y, int* __restrict__ totals) {
    typedef cub::WarpScan<int, WARP> WarpScan;
    __shared__ typename WarpScan::TempStorage temp_storage[128 / WARP];
    int i = blockIdx.x * 128 + threadIdx.x, w = threadIdx.x / WARP;
    int before, total;
    WarpScan(temp_storage[w]).ExclusiveSum(x[i], before, total);
    y[i] = before;
    if (threadIdx.x % WARP == 0) totals[blockIdx.x * (128 / WARP) + w] = total;
}

struct Larger {
    __device__ int operator()(int a, int b) const { return a > b ? a : b; }
};
__global__ void own_operator(const int* __restrict__ x, int* __restrict__ y) {
    typedef cub::BlockScan<int, 64> BlockScan;
    __shared__ typename BlockScan::TempStorage temp_storage;
    int out;
    BlockScan(temp_storage).InclusiveScan(x[threadIdx.x], out, Larger());
    y[threadIdx.x] = out;
}

int main() {
    int *a, *b, *c, *d; float *f, *g;
    sums<<<4, 128>>>(a, b, c, d, 500);
    float_sums<256><<<3, 256>>>(f, g);
    item_sums<<<3, 64>>>(a, b, c);
    running_max<<<3, dim3(16, 4)>>>(a, b, c);
    warp_sums<32><<<2, 128>>>(a, b, c);
    warp_sums<16><<<2, 128>>>(a, b, c);
    own_operator<<<1, 64>>>(a, b);
    return 0;
}
"""


def _exclusive(v):
    return np.concatenate([[0], np.cumsum(v)[:-1]]).astype(v.dtype)


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    pytest.importorskip("tilelang")
    tmp = tmp_path_factory.mktemp("cub_scans")
    out = program_converted(tmp, PROGRAM, "scans.cu", status=1)  # own_operator is refused
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    return module_of(out / "scans.py"), rows


def _rng(seed):
    return np.random.default_rng(seed)


def test_exclusive_and_inclusive_sums_with_the_aggregate(migrated):
    mod, rows = migrated
    assert rows["sums"]["form"] not in ("hybrid", "unsupported"), rows["sums"]["diagnostics"]
    n = 500
    x = _rng(1).integers(-100, 100, n).astype(np.int32)
    excl, incl, totals = np.zeros(n, np.int32), np.zeros(n, np.int32), np.zeros(4, np.int32)
    mod.sums(x, excl, incl, totals, n, grid=4, block=128, target="c")
    padded = np.concatenate([x, np.zeros(512 - n, np.int32)]).reshape(4, 128)
    np.testing.assert_array_equal(excl, np.concatenate([_exclusive(r) for r in padded])[:n])
    np.testing.assert_array_equal(incl, np.cumsum(padded, axis=1).reshape(-1)[:n])
    np.testing.assert_array_equal(totals, padded.sum(axis=1))


def test_a_float_sum_in_a_template_of_the_block(migrated):
    mod, rows = migrated
    assert rows["float_sums"]["form"] not in ("hybrid", "unsupported"), rows["float_sums"]["diagnostics"]
    x = _rng(2).uniform(-1, 1, 768).astype(np.float32)
    y = np.zeros_like(x)
    mod.float_sums(x, y, grid=3, block=256, template=("256",), target="c")
    np.testing.assert_allclose(y, np.cumsum(x.reshape(3, 256).astype(np.float64), axis=1).reshape(-1), atol=1e-4)


def test_a_threads_items_get_their_prefixes(migrated):
    mod, rows = migrated
    assert rows["item_sums"]["form"] not in ("hybrid", "unsupported"), rows["item_sums"]["diagnostics"]
    x = _rng(3).integers(-50, 50, 768).astype(np.int32)
    y, totals = np.zeros_like(x), np.zeros(3, np.int32)
    mod.item_sums(x, y, totals, grid=3, block=64, target="c")
    blocks = x.reshape(3, 256)  # blocked: thread t's items are the block's 4t .. 4t + 3
    np.testing.assert_array_equal(y, np.concatenate([_exclusive(b) for b in blocks]))
    np.testing.assert_array_equal(totals, blocks.sum(axis=1))


def test_scans_with_cubs_operators_in_a_2d_block(migrated):
    mod, rows = migrated
    assert rows["running_max"]["form"] not in ("hybrid", "unsupported"), rows["running_max"]["diagnostics"]
    x = _rng(4).integers(-1000, 1000, 192).astype(np.int32)
    hi, lo = np.zeros_like(x), np.zeros_like(x)
    mod.running_max(x, hi, lo, grid=3, block=(16, 4, 1), target="c")
    want_hi, want_lo = [], []
    for b in x.reshape(3, 64):  # row-major rank: threadIdx.y * 16 + threadIdx.x
        want_hi.append(np.maximum.accumulate(np.concatenate([[-50], b[:-1]])))
        want_lo.append(np.minimum.accumulate(b))
    np.testing.assert_array_equal(hi, np.concatenate(want_hi))
    np.testing.assert_array_equal(lo, np.concatenate(want_lo))


@pytest.mark.parametrize("warp", [32, 16])
def test_warp_scans_per_logical_warp(migrated, warp):
    mod, rows = migrated
    assert rows["warp_sums"]["form"] not in ("hybrid", "unsupported"), rows["warp_sums"]["diagnostics"]
    x = _rng(warp).integers(-100, 100, 256).astype(np.int32)
    y, totals = np.zeros_like(x), np.zeros(256 // warp, np.int32)
    mod.warp_sums(x, y, totals, grid=2, block=128, template=(str(warp),), target="c")
    lanes = x.reshape(-1, warp)
    np.testing.assert_array_equal(y, np.concatenate([_exclusive(w) for w in lanes]))
    np.testing.assert_array_equal(totals, lanes.sum(axis=1))


def test_an_operator_of_the_users_own_is_named(migrated):
    _mod, rows = migrated
    row = rows["own_operator"]
    assert row["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M3001" and "cub::BlockScan::InclusiveScan with the operator 'Larger'" in d["message"]
               for d in row["diagnostics"]), row["diagnostics"]
