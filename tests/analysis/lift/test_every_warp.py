"""Two-level warp reductions whose second level every warp runs (analysis.lift.warp).

FasterTransformer's ``blockReduceSum`` has no ``if (warp == 0)``: after the warp totals are
stored, every warp loads ``threadIdx.x < nwarps ? S[lane] : 0`` and runs the second tree, so
warp 0 ends with the block's total and thread 0 reads it. It lifts to one ``T.reduce`` like the
warp-0 form; a final read in every warp's lane 0 (partial totals there) is refused.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.lift.support import convert, factory, note

EVERY_WARP = """
    #define FULL 0xffffffff
    template<typename T>
    __inline__ __device__ T warpSum(T val)
    {
        for (int mask = 16; mask > 0; mask >>= 1)
            val += __shfl_xor_sync(FULL, val, mask, 32);
        return val;
    }
    template<typename T>
    __inline__ __device__ T blockSum(T val)
    {
        static __shared__ T shared[32];
        int lane = threadIdx.x & 0x1f;
        int wid = threadIdx.x >> 5;
        val = warpSum<T>(val);
        if (lane == 0)
            shared[wid] = val;
        __syncthreads();
        val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)(0.0f);
        val = warpSum<T>(val);
        return val;
    }
    __global__ void row_sums(float* out, const float* x, const int* lengths, const int stride)
    {
        int row = blockIdx.x;
        int tidx = threadIdx.x;
        int length = lengths[row];
        x += row * stride;
        float acc = 0.0f;
        for (int i = tidx; i < length; i += blockDim.x) acc += x[i] * 2.0f;
        float total = blockSum<float>(acc);
        if (tidx == 0) out[row] = total;
    }
"""

ROWS, STRIDE = 5, 300


def _run(path, block):
    import torch
    from migrate.runtime.tilelang_side import load_module
    rng = np.random.default_rng(11)
    x = rng.uniform(-1.0, 1.0, ROWS * STRIDE).astype(np.float32)
    lengths = np.array([300, 1, 40, 97, 250], np.int32)  # rows shorter than a warp, than the block
    out = torch.full((ROWS,), float("nan"))  # poisoned: every row must be written
    load_module(path).row_sums(out, torch.from_numpy(x), torch.from_numpy(lengths), STRIDE,
                               grid=(ROWS, 1, 1), block=(block, 1, 1), target="c")
    want = np.array([2.0 * x[r * STRIDE:r * STRIDE + lengths[r]].astype(np.float64).sum() for r in range(ROWS)])
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-5)


def test_second_level_in_every_warp_becomes_one_t_reduce_and_agrees_with_numpy(tmp_path):
    """The blockReduceSum of FasterTransformer (and HeCBench's logprob): one T.reduce_sum over
    the block's lanes, thread 0's store once per block; run on the CPU target with blocks of
    three warps (the second level padded with zeros) and of 32 warps (no padding)."""
    kernels, text = convert(tmp_path, EVERY_WARP)
    k = kernels["row_sums"]
    assert k["form"] == "tile" and "warp-shuffle" in k["reason"], note(k)
    body = factory(text, "row_sums")
    assert "T.reduce_sum(blockSum_2_shared_lanes, blockSum_2_shared_total, dim=0)" in body
    assert "out[bx] = blockSum_2_shared_total[0]" in body.split("T.reduce_sum")[1]
    assert not re.search(r"shfl|sync_threads|alloc_shared|\btx\b", body)
    for block in (96, 1024):
        _run(tmp_path / "out" / "k.py", block)


@pytest.mark.parametrize("old, new, reason", [
    # every warp's lane 0 reads its warp's second-level value: partial totals outside warp 0
    ("if (tidx == 0) out[row] = total;", "if ((tidx & 31) == 0) out[row + tidx / 32] = total;",
     "not read by thread 0"),
    # the padded lanes add 1 each
    (": (T)(0.0f);", ": (T)(1.0f);", "not the identity of sum"),
    # every thread reads the total, which only warp 0 holds
    ("if (tidx == 0) out[row] = total;", "out[row * 96 + tidx] = total;", "not read by thread 0"),
])
def test_second_levels_in_every_warp_it_must_refuse(tmp_path, old, new, reason):
    assert old in EVERY_WARP
    kernels, _ = convert(tmp_path, EVERY_WARP.replace(old, new))
    k = kernels["row_sums"]
    assert k["form"] == "portable" and reason in note(k), note(k)
