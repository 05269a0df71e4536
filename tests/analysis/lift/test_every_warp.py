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


LAYER_NORM = """
    #define FULL 0xffffffff
    #define N 3
    template<typename T>
    __inline__ __device__ T add(T a, T b) { return a + b; }
    template<typename T>
    __inline__ __device__ T warpReduceSum(T val)
    {
        for (int mask = 16; mask > 0; mask >>= 1)
            val = add(val, __shfl_xor_sync(FULL, val, mask, 32));
        return val;
    }
    template<typename T>
    __inline__ __device__ T blockReduceSum(T val)
    {
        static __shared__ T shared[32];
        int lane = threadIdx.x & 0x1f;
        int wid = threadIdx.x >> 5;
        val = warpReduceSum<T>(val);
        if (lane == 0)
            shared[wid] = val;
        __syncthreads();
        val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)(0.0f);
        val = warpReduceSum<T>(val);
        return val;
    }
    __global__ void norm_rows(float* out, const float* x, const float eps, const int n)
    {
        __shared__ float s_mean;
        __shared__ float s_scale;
        float mean = 0.0f;
        float variance = 0.0f;
        float cache[N];
        for (int idx = threadIdx.x, i = 0; idx < n && i < N; ++i) {
            float v = x[blockIdx.x * n + idx] * 1.5f;
            mean += v;
            cache[i] = v;
            idx += blockDim.x;
        }
        mean = blockReduceSum<float>(mean);
        if (threadIdx.x == 0) s_mean = mean / n;
        __syncthreads();
        for (int idx = threadIdx.x, i = 0; idx < n && i < N; ++i) {
            float v = cache[i];
            variance += (v - s_mean) * (v - s_mean);
            idx += blockDim.x;
        }
        variance = blockReduceSum<float>(variance);
        if (threadIdx.x == 0) s_scale = rsqrtf(variance / n + eps);
        __syncthreads();
        for (int idx = threadIdx.x, i = 0; idx < n && i < N; ++i) {
            out[blockIdx.x * n + idx] = (cache[i] - s_mean) * s_scale;
            idx += blockDim.x;
        }
    }
"""


def test_layer_norm_through_an_add_function_and_broadcast_functions_of_the_totals_agrees_with_numpy(tmp_path):
    """addBiasResidualPostLayerNorm's shape: the trees combine through ``add(a, b)`` (a device
    function returning ``a + b``), thread 0 broadcasts ``mean / n`` and ``rsqrtf(var / n + eps)``
    through __shared__ scalars, and each thread's ``cache[N]`` crosses both reductions (a lane
    buffer with a row per lane). Run on the CPU target against numpy, rows of 200 over 96 threads."""
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, text = convert(tmp_path, LAYER_NORM)
    k = kernels["norm_rows"]
    assert k["form"] == "tile", note(k)
    body = factory(text, "norm_rows")
    assert body.count("T.reduce_sum(") == 2 and "cache = alloc_lanes((block_x, 3), T.float32)" in body
    assert "blockReduceSum_2_shared_total[0] / T.Cast(T.float32, n)" in body
    assert not re.search(r"shfl|sync_threads|alloc_shared|s_mean|s_scale", body)
    rows, n = 4, 200
    x = np.random.default_rng(5).uniform(-2.0, 3.0, rows * n).astype(np.float32)
    out = torch.full((rows * n,), float("nan"))
    load_module(tmp_path / "out" / "k.py").norm_rows(out, torch.from_numpy(x), 1e-5, n, grid=(rows, 1, 1),
                                                     block=(96, 1, 1), target="c")
    v = 1.5 * x.reshape(rows, n).astype(np.float64)
    mean = v.mean(axis=1, keepdims=True)
    want = (v - mean) / np.sqrt(((v - mean) ** 2).mean(axis=1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(out.numpy().reshape(rows, n), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("old, new, reason", [
    # a combine function that is not a sum
    ("T add(T a, T b) { return a + b; }", "T add(T a, T b) { return a - b; }", "is not a sum, max or min"),
    ("T add(T a, T b) { return a + b; }", "T add(T a, T b) { return a + a; }", "is not a sum, max or min"),
    # the broadcast reads memory, which lane code may store to before the scalar is read
    ("if (threadIdx.x == 0) s_mean = mean / n;", "if (threadIdx.x == 0) s_mean = mean / x[0];",
     "keeps other values in shared memory"),
    # what the broadcast reads changes before it is read
    ("float v = cache[i];", "float v = cache[i]; eps_ = eps_ + 1.0f;", "keeps other values in shared memory"),
    # the kept array at computed places (a half2 array's lanes at i * 2 and i * 2 + 1): a GPU
    # fragment of the lanes takes one index per lane loop (TileLang's build stopped on the H100)
    ("cache[i] = v;", "cache[i * 2 % N] = v;", "indexed at line"),
])
def test_layer_norms_it_must_refuse(tmp_path, old, new, reason):
    assert old in LAYER_NORM
    source = LAYER_NORM.replace(old, new)
    if "eps_" in new:  # a local read by the broadcast value, written after it
        source = source.replace("rsqrtf(variance / n + eps)", "rsqrtf(variance / n + eps_)").replace(
            "float mean = 0.0f;", "float mean = 0.0f; float eps_ = eps;")
    kernels, _ = convert(tmp_path, source)
    k = kernels["norm_rows"]
    assert k["form"] == "portable" and reason in note(k), note(k)


LOG_PROB = """
    #define FULL 0xffffffff
    template<typename T>
    __inline__ __device__ T warpReduceMax(T val)
    {
        for (int mask = 16; mask > 0; mask >>= 1)
            val = max(val, __shfl_xor_sync(FULL, val, mask, 32));
        return val;
    }
    template<typename T>
    __inline__ __device__ T blockReduceMax(T val)
    {
        static __shared__ T shared[32];
        int lane = threadIdx.x & 0x1f;
        int wid = threadIdx.x >> 5;
        val = warpReduceMax(val);
        if (lane == 0)
            shared[wid] = val;
        __syncthreads();
        val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : -1e20f;
        val = warpReduceMax(val);
        return val;
    }
    template<typename T>
    __inline__ __device__ T warpReduceSum(T val)
    {
        for (int mask = 16; mask > 0; mask >>= 1)
            val += __shfl_xor_sync(FULL, val, mask, 32);
        return val;
    }
    template<typename T>
    __inline__ __device__ T blockReduceSum(T val)
    {
        static __shared__ T shared[32];
        int lane = threadIdx.x & 0x1f;
        int wid = threadIdx.x >> 5;
        val = warpReduceSum<T>(val);
        if (lane == 0)
            shared[wid] = val;
        __syncthreads();
        val = (threadIdx.x < (blockDim.x / 32.f)) ? shared[lane] : (T)(0.0f);
        val = warpReduceSum<T>(val);
        return val;
    }
    __global__ void pick_log_prob(float* out, const float* logits, const int* ids, const int* lengths, const int vocab)
    {
        int tidx = threadIdx.x;
        int row = blockIdx.x;
        __shared__ float s_max;
        if (lengths[row] > 0) {
            logits += row * vocab;
            float local_max = -3.0e38f;
            for (int i = tidx; i < vocab; i += blockDim.x) local_max = fmaxf(local_max, logits[i]);
            float max_val = blockReduceMax<float>(local_max);
            if (tidx == 0) s_max = max_val;
            __syncthreads();
            float local_sum = 0.0f;
            for (int i = tidx; i < vocab; i += blockDim.x) local_sum += expf(logits[i] - s_max);
            float sum = blockReduceSum<float>(local_sum);
            if (tidx == 0) out[row] = logits[ids[row]] - s_max - logf(sum + 1e-9f);
        }
    }
"""


def test_padding_a_max_with_a_constant_and_a_block_level_offset_agree_with_numpy(tmp_path):
    """logprob's log_probs_kernel: warp 0's lanes past the last warp take -1e20f (not -inf), so
    in blocks of fewer than 32 warps the maximum is at least -1e20; the lifted total takes the
    constant in exactly then. ``logits += row * vocab`` is block code that the lanes read. A row
    below -1e20 tells the two block sizes apart; a row of length 0 is skipped (stays poisoned)."""
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, text = convert(tmp_path, LOG_PROB)
    k = kernels["pick_log_prob"]
    assert k["form"] == "tile", note(k)
    body = factory(text, "pick_log_prob")
    assert "T.reduce_max(" in body and "T.reduce_sum(" in body and "logits_off = T.alloc_var(T.int32)" in body
    assert "T.if_then_else(block_x < 1024, " in body
    assert not re.search(r"shfl|sync_threads|alloc_shared|s_max", body)
    rows, vocab = 4, 300
    rng = np.random.default_rng(7)
    logits = rng.uniform(-4.0, 4.0, (rows, vocab)).astype(np.float32)
    logits[2] = rng.uniform(-5e20, -2e20, vocab).astype(np.float32)  # below the padding
    ids = np.array([5, 299, 17, 0], np.int32)
    lengths = np.array([3, 1, 2, 0], np.int32)
    module = load_module(tmp_path / "out" / "k.py")
    for block in (96, 1024):
        out = torch.full((rows,), float("nan"))
        module.pick_log_prob(out, torch.from_numpy(logits.reshape(-1)), torch.from_numpy(ids),
                             torch.from_numpy(lengths), vocab, grid=(rows, 1, 1), block=(block, 1, 1), target="c")
        want = np.full(rows, np.nan)
        for r in range(3):
            row = logits[r].astype(np.float64)
            top = max(row.max(), -1e20) if block < 1024 else row.max()
            want[r] = row[ids[r]] - top - np.log(np.exp(row - top).sum() + 1e-9)
        np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-4)
