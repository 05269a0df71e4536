"""Shared-memory trees whose threads carry their partial sum in a register (analysis.lift.
register_trees): ``acc += S[tid + s]; S[tid] = acc`` after a barrier at the top of each step,
thread 0's ``acc`` read after the loop (miniFE's final_reduce and dot kernels)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.lift.support import convert, factory, note

CARRIED = """
    #define BLOCK_SIZE 128
    __global__ void block_dots(const float* x, const float* y, float* d, int n) {
        float sum = 0;
        for (int idx = blockIdx.x * blockDim.x + threadIdx.x; idx < n; idx += gridDim.x * blockDim.x)
            sum += x[idx] * y[idx];
        __shared__ float red[BLOCK_SIZE];
        red[threadIdx.x] = sum;
        for (int k = BLOCK_SIZE / 2; k > 0; k = k / 2) {
            __syncthreads();
            if (threadIdx.x < k) { sum += red[threadIdx.x + k]; red[threadIdx.x] = sum; }
        }
        if (threadIdx.x == 0) d[blockIdx.x] = sum;
    }
"""


def test_register_carried_tree_becomes_t_reduce_and_agrees_with_numpy(tmp_path):
    """One T.reduce_sum over the block's 128 lanes; thread 0's register after the loop is the
    total. Run on the CPU target: 3 blocks over 1000 elements (a grid-stride loop), against numpy."""
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, text = convert(tmp_path, CARRIED)
    k = kernels["block_dots"]
    assert k["form"] == "tile" and "shared-memory tree" in k["reason"], note(k)
    body = factory(text, "block_dots")
    assert "T.reduce_sum(red_lanes, red_total, dim=0)" in body and "d[bx] = red_total[0]" in body
    assert 'assert block_x == 128' in body
    assert not re.search(r"sync_threads|alloc_shared|\btx\b", body)
    rng = np.random.default_rng(2)
    n = 1000
    x, y = rng.uniform(-1, 1, n).astype(np.float32), rng.uniform(-1, 1, n).astype(np.float32)
    d = torch.full((3,), float("nan"))
    load_module(tmp_path / "out" / "k.py").block_dots(torch.from_numpy(x), torch.from_numpy(y), d, n,
                                                       grid=(3, 1, 1), block=(128, 1, 1), target="c")
    idx = np.arange(n)
    want = [float((x[idx % 384 // 128 == b].astype(np.float64) * y[idx % 384 // 128 == b]).sum()) for b in range(3)]
    np.testing.assert_allclose(d.numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("old, new", [
    # every thread stores its register (a partial sum outside thread 0)
    ("if (threadIdx.x == 0) d[blockIdx.x] = sum;", "d[blockIdx.x * 128 + threadIdx.x] = sum;"),
    # the cell is not the register (S[tid] = 2 * acc)
    ("red[threadIdx.x] = sum; }", "red[threadIdx.x] = 2.0f * sum; }"),
    # the register takes the cell of another lane than the tree's partner
    ("sum += red[threadIdx.x + k];", "sum += red[threadIdx.x + k + 1];"),
])
def test_register_carried_trees_it_must_refuse(tmp_path, old, new):
    assert old in CARRIED
    kernels, _ = convert(tmp_path, CARRIED.replace(old, new))
    assert kernels["block_dots"]["form"] != "tile", note(kernels["block_dots"])
