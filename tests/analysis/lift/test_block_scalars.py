"""Shared scalars that carry one block-wide value (analysis.lift.block_scalars): thread 0 stores a
value every thread could compute (a block reduction's total, a row's label) into a ``__shared__``
scalar before a barrier; as each thread's own variable the kernel lifts as the reduction around
it. Checked on the CPU against the CUDA compiled with g++ (``--check cpu``) and against numpy;
refused: a value that differs between threads, read from memory the kernel writes, stored by
another thread or under an ``else``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import buffer_arg as buf, convert, factory, note, spec_text as spec


#: moe's softmax: each row's maximum and normalising factor broadcast through shared scalars.
SOFTMAX = """
    #include <cub/cub.cuh>
    #include <cfloat>
    template <int TPB>
    __global__ void softmax(const float* __restrict__ x, float* __restrict__ y, int cols) {
        using BlockReduce = cub::BlockReduce<float, TPB>;
        __shared__ typename BlockReduce::TempStorage tmp;
        __shared__ float s_max;
        __shared__ float s_inv;
        const int off = blockIdx.x * cols;
        float v = -FLT_MAX;
        for (int c = threadIdx.x; c < cols; c += TPB) v = fmaxf(v, x[off + c]);
        const float best = BlockReduce(tmp).Reduce(v, cub::Max());
        if (threadIdx.x == 0) s_max = best;
        __syncthreads();
        v = 0.0f;
        for (int c = threadIdx.x; c < cols; c += TPB) v += expf(x[off + c] - s_max);
        const float z = BlockReduce(tmp).Sum(v);
        if (threadIdx.x == 0) s_inv = 1.0f / z;
        __syncthreads();
        for (int c = threadIdx.x; c < cols; c += TPB) y[off + c] = expf(x[off + c] - s_max) * s_inv;
    }
    void run(const float* x, float* y, int rows, int cols) { softmax<64><<<rows, 64>>>(x, y, cols); }
"""
SOFTMAX_SPEC = spec("softmax", (5, 1, 1), (64, 1, 1), [
    buf("x", "float32", 5 * 150, "in", (-4.0, 4.0)), buf("y", "float32", 5 * 150, "out", None),
    {"name": "cols", "scalar": "int32", "value": 150}], tolerance="fp32_accum", template=["64"])


def test_a_reductions_total_broadcast_through_shared_scalars_lifts_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, SOFTMAX, "--check", "cpu", spec=SOFTMAX_SPEC)
    k = kernels["softmax"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "softmax__64")
    assert "T.reduce_max" in body and "T.reduce_sum" in body, body
    assert "s_max = T.alloc_var(T.float32)" in body and "alloc_shared" not in body, body


def test_a_reductions_total_broadcast_through_shared_scalars_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, SOFTMAX)
    assert kernels["softmax"]["form"] == "tile"
    rows, cols = 5, 150
    x = np.random.default_rng(3).uniform(-4.0, 4.0, size=(rows, cols)).astype(np.float32)
    y = torch.full((rows * cols,), float("nan"), dtype=torch.float32)  # poisoned
    load_module(tmp_path / "out" / "k.py").softmax(torch.from_numpy(x.ravel()), y, cols, grid=(rows, 1, 1),
                                                   block=(64, 1, 1), template=(64,), target="c")
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(y.numpy().reshape(rows, cols), e / e.sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-7)


#: accuracy's shape: in a loop over rows, thread 0 reads the row's label into shared scalars; every
#: thread counts its elements above the labelled one, and thread 0 sums the small counts (a large
#: count adds 1000).
RANKS = """
    #include <cub/cub.cuh>
    __device__ void block_sum(int& v) {
        typedef cub::BlockReduce<int, 128> BlockReduce;
        __shared__ typename BlockReduce::TempStorage temp;
        v = BlockReduce(temp).Sum(v);
    }
    __global__ void ranks(int rows, int d, int top, const float* __restrict__ x, const int* __restrict__ label,
                          int* hits) {
        __shared__ int s_label;
        __shared__ float s_pred;
        int count = 0;
        for (int row = blockIdx.x; row < rows; row += gridDim.x) {
            if (threadIdx.x == 0) {
                s_label = label[row];
                s_pred = x[row * d + s_label];
            }
            __syncthreads();
            const int lab = s_label;
            const float pred = s_pred;
            int n = 0;
            for (int c = threadIdx.x; c < d; c += blockDim.x)
                n += (x[row * d + c] > pred || (x[row * d + c] == pred && c < lab));
            block_sum(n);
            if (threadIdx.x == 0) count += n <= top ? n : 1000;
            __syncthreads();
        }
        if (threadIdx.x == 0) atomicAdd(hits, count);
    }
    void run(int rows, int d, int top, const float* x, const int* l, int* h) {
        ranks<<<3, 128>>>(rows, d, top, x, l, h);
    }
"""
RANKS_SPEC = spec("ranks", (3, 1, 1), (128, 1, 1), [
    {"name": "rows", "scalar": "int32", "value": 7}, {"name": "d", "scalar": "int32", "value": 300},
    {"name": "top", "scalar": "int32", "value": 150},
    buf("x", "float32", 7 * 300, "in", (-1.0, 1.0)), buf("label", "int32", 7, "in", (0, 299)),
    {"name": "hits", "buffer": "int32", "elements": 1, "role": "inout",
                                            "range": [2, 5]}])


def test_a_rows_label_read_by_thread_0_lifts_in_a_loop_of_reductions_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, RANKS, "--check", "cpu", spec=RANKS_SPEC)
    k = kernels["ranks"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "ranks")
    assert "s_label = label[row]" in body and "T.reduce_sum" in body and "alloc_shared" not in body, body


def test_a_rows_label_read_by_thread_0_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, RANKS)
    assert kernels["ranks"]["form"] == "tile"
    rows, d, top = 7, 300, 150
    rng = np.random.default_rng(11)
    x = rng.uniform(-1.0, 1.0, size=(rows, d)).astype(np.float32)
    x[2, 10:20] = x[2, 40]  # ties broken by the column
    label = rng.integers(0, d, size=rows).astype(np.int32)
    label[2] = 40
    hits = torch.tensor([3], dtype=torch.int32)
    load_module(tmp_path / "out" / "k.py").ranks(rows, d, top, torch.from_numpy(x.ravel()), torch.from_numpy(label),
                                                 hits, grid=(3, 1, 1), block=(128, 1, 1), target="c")
    pred = x[np.arange(rows), label][:, None]
    cols = np.arange(d)[None, :]
    want = ((x > pred) | ((x == pred) & (cols < label[:, None]))).sum(axis=1)
    assert (want <= top).any() and (want > top).any()
    assert hits.item() == 3 + int(np.where(want <= top, want, 1000).sum())


#: vLLM's zero-point quantiser: thread 0 computes the scale and zero point from the block's
#: minimum and maximum in locals, stores each in a shared scalar and in global memory in turn.
QUANT = """
    #include <cub/cub.cuh>
    #include <cfloat>
    __global__ void quant(const float* __restrict__ x, signed char* __restrict__ q, float* scale, int* zero, int n) {
        const float* row = x + blockIdx.x * n;
        float hi = -FLT_MAX, lo = FLT_MAX;
        for (int i = threadIdx.x; i < n; i += blockDim.x) { hi = fmaxf(hi, row[i]); lo = fminf(lo, row[i]); }
        using BlockReduce = cub::BlockReduce<float, 256>;
        __shared__ typename BlockReduce::TempStorage tmp;
        hi = BlockReduce(tmp).Reduce(hi, cub::Max(), blockDim.x);
        __syncthreads();
        lo = BlockReduce(tmp).Reduce(lo, cub::Min(), blockDim.x);
        __shared__ float scale_sh;
        __shared__ int zero_sh;
        if (threadIdx.x == 0) {
            const float s = (hi - lo) / 255.0f;
            const int z = (int) rintf(-128.0f - lo / s);
            scale[blockIdx.x] = scale_sh = s;
            zero[blockIdx.x] = zero_sh = z;
        }
        __syncthreads();
        const float s = scale_sh;
        const int z = zero_sh;
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            int v = (int) rintf(row[i] / s) + z;
            q[blockIdx.x * n + i] = (signed char) (v < -128 ? -128 : v > 127 ? 127 : v);
        }
    }
    void run(const float* x, signed char* q, float* s, int* z, int rows, int n) { quant<<<rows, 64>>>(x, q, s, z, n); }
"""
QUANT_SPEC = spec("quant", (4, 1, 1), (64, 1, 1), [
    buf("x", "float32", 4 * 200, "in", (-3.0, 5.0)), buf("q", "int8", 4 * 200, "out", None),
    buf("scale", "float32", 4, "out", None), buf("zero", "int32", 4, "out", None),
    {"name": "n", "scalar": "int32", "value": 200}], tolerance="fp32")


def test_locals_thread_0_computes_for_shared_scalars_move_out_and_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, QUANT, "--check", "cpu", spec=QUANT_SPEC)
    k = kernels["quant"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "quant")
    # the tree's shared array is gone; shared cells serve only a block that is no power of two
    # (emit.reduce: bounded trees add their lanes in order there)
    shared = [line for line in body.splitlines() if "alloc_shared" in line and "serial" not in line]
    assert "T.reduce_max" in body and "T.reduce_min" in body and not shared, body


def test_locals_thread_0_computes_for_shared_scalars_agree_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, QUANT)
    assert kernels["quant"]["form"] == "tile"
    rows, n = 4, 200
    x = np.random.default_rng(4).uniform(-3.0, 5.0, size=(rows, n)).astype(np.float32)
    q = torch.full((rows * n,), 99, dtype=torch.int8)  # poisoned
    scale = torch.full((rows,), float("nan"), dtype=torch.float32)
    zero = torch.full((rows,), -999, dtype=torch.int32)
    load_module(tmp_path / "out" / "k.py").quant(torch.from_numpy(x.ravel()), q, scale, zero, n,
                                                 grid=(rows, 1, 1), block=(64, 1, 1), target="c")
    s = ((x.max(axis=1) - x.min(axis=1)) / np.float32(255.0)).astype(np.float32)
    z = np.rint(np.float32(-128.0) - x.min(axis=1) / s).astype(np.int32)
    np.testing.assert_allclose(scale.numpy(), s, rtol=1e-6)
    np.testing.assert_array_equal(zero.numpy(), z)
    want = np.clip(np.rint(x / s[:, None]).astype(np.int32) + z[:, None], -128, 127)
    got = q.numpy().reshape(rows, n).astype(np.int32)
    assert np.abs(got - want).max() <= 1  # a quotient on the rounding boundary may round either way
    assert (got == want).mean() > 0.99


@pytest.mark.parametrize("change", [
    # a value that differs between threads (thread 0's own element)
    ("if (threadIdx.x == 0) s_max = best;", "if (threadIdx.x == 0) s_max = best + x[off + threadIdx.x];"),
    # memory the kernel writes: another thread may change it between thread 0's read and its own
    ("if (threadIdx.x == 0) s_max = best;", "if (threadIdx.x == 0) s_max = fmaxf(best, y[off]);"),
    # another thread stores it
    ("if (threadIdx.x == 0) s_max = best;", "if (threadIdx.x == 1) s_max = best;"),
    # an else: the other threads store something else
    ("if (threadIdx.x == 0) s_max = best;", "if (threadIdx.x == 0) s_max = best; else s_max = 0.0f;"),
    # updated in place
    ("if (threadIdx.x == 0) s_max = best;", "if (threadIdx.x == 0) s_max += best;"),
])
def test_shared_scalars_that_are_not_one_block_wide_value_stay_portable(tmp_path, change):
    old, new = change
    assert old in SOFTMAX
    kernels, text = convert(tmp_path, SOFTMAX.replace(old, new))
    assert kernels["softmax"]["form"] != "tile", factory(text, "softmax__64")


def test_a_read_of_the_scalar_thread_0_made_before_storing_it_keeps_the_store_in_place(tmp_path):
    # thread 0 reads the old value before it stores the new one: the store cannot move before the read
    source = SOFTMAX.replace("if (threadIdx.x == 0) s_max = best;",
                             "if (threadIdx.x == 0) { y[0] = s_max; s_max = best; }")
    kernels, text = convert(tmp_path, source)
    assert kernels["softmax"]["form"] != "tile", factory(text, "softmax__64")
