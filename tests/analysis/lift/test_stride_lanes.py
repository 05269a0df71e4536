"""Thread and block indices inside a grid-stride loop (analysis.lift.stride_lanes), and barriers
that close a kernel (analysis.lift.map.without_closing_barriers): both leave a map.

A grid-stride loop hands element ``i`` to the thread of rank ``i % (blockDim.x * gridDim.x)``, so
``threadIdx.x`` there is ``i % blockDim.x`` and ``blockIdx.x`` is ``i / blockDim.x % gridDim.x``
(not the element's segment ``i / blockDim.x``: the grid comes round again). The kernels run with
fewer threads than elements, so that the second sweep is tested.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import convert, factory

STRIDED = """
    __global__ void laneCount(int* __restrict__ data, int n) {
        unsigned int tid = (blockIdx.x * blockDim.x) + threadIdx.x;
        for (unsigned int i = tid; i < n; i += blockDim.x * gridDim.x) {
            atomicAdd(data + threadIdx.x, 2);
        }
    }
    __global__ void blockOf(const float* __restrict__ x, float* __restrict__ y, int n) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
            y[i] = x[i] * (float)(blockIdx.x + 1) + (float)threadIdx.x;
    }
    __global__ void orMask(char* __restrict__ mask, const char* __restrict__ other, int n0) {
        int tid = threadIdx.x;
        int count = blockDim.x * blockDim.y * blockDim.z;
        for (int i = 0; i + tid < n0; i += count) {
            mask[i + tid] |= other[i + tid];
        }
        __syncthreads();
    }
"""


def _run(path, name, *args, grid, block):
    from migrate.runtime.tilelang_side import load_module
    getattr(load_module(path), name)(*args, grid=grid, block=block, target="c")


def test_thread_and_block_indices_in_a_grid_stride_loop_are_the_elements_and_agree_with_numpy(tmp_path):
    import torch
    kernels, text = convert(tmp_path, STRIDED)
    for name in ("laneCount", "blockOf", "orMask"):
        assert kernels[name]["form"] == "tile", (name, kernels[name]["diagnostics"])
        assert not any(d["code"] == "M3006" for d in kernels[name]["diagnostics"]), kernels[name]["diagnostics"]
    assert "T.atomic_add(data[gx % block_x], 2)" in factory(text, "laneCount")
    assert "gx // block_x % grid_x" in factory(text, "blockOf")
    path = tmp_path / "out" / "k.py"
    rng = np.random.default_rng(7)

    # 1000 elements on 3 blocks of 32 threads: each lane counts the elements it ran
    data = torch.full((32,), 5, dtype=torch.int32)
    _run(path, "laneCount", data, 1000, grid=(3, 1, 1), block=(32, 1, 1))
    want = np.full(32, 5, np.int32) + 2 * np.bincount(np.arange(1000) % 32, minlength=32).astype(np.int32)
    np.testing.assert_array_equal(data.numpy(), want)

    x = rng.uniform(-2.0, 2.0, 777).astype(np.float32)
    y = torch.full((777,), np.nan, dtype=torch.float32)  # poisoned
    _run(path, "blockOf", torch.from_numpy(x), y, 777, grid=(5, 1, 1), block=(64, 1, 1))
    i = np.arange(777)
    want = x * ((i // 64) % 5 + 1).astype(np.float32) + (i % 64).astype(np.float32)
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-6)

    # one block (as the pool launches it): the closing barrier orders nothing
    mask = rng.integers(0, 2, 300).astype(np.int8)
    other = (rng.integers(0, 2, 300) * 2).astype(np.int8)
    m = torch.from_numpy(mask.copy())
    _run(path, "orMask", m, torch.from_numpy(other), 300, grid=(1, 1, 1), block=(128, 1, 1))
    np.testing.assert_array_equal(m.numpy(), mask | other)


def test_a_barrier_that_statements_follow_still_splits_the_kernel(tmp_path):
    kernels, _text = convert(tmp_path, """
        __global__ void shift(float* __restrict__ y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            __syncthreads();
            if (i < n) y[i] = 1.0f;
        }
    """)
    assert kernels["shift"]["form"] == "portable"


# -- stores whose value the place determines (analysis.lift.place_values) -----------------------

PLACED = """
    __global__ void boundFill(float2* d_array, const size_t rows, const size_t cols, const size_t ndyn) {
        for (size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x; id < rows * ndyn;
             id += blockDim.x * gridDim.x) {
            size_t idx = id % rows + id / rows * (rows * cols) + rows * (cols - 1);
            d_array[idx] = make_float2(0.f, 0.f);
        }
    }
    __global__ void boundCopy(float* d_out, const float* d_in, const size_t rows, const size_t cols,
                              const size_t ndyn) {
        for (size_t id = (size_t)blockIdx.x * blockDim.x + threadIdx.x; id < rows * ndyn;
             id += blockDim.x * gridDim.x) {
            size_t idx = id % rows + id / rows * (rows * cols) + rows * (cols - 1);
            d_out[idx] = -1.f * d_in[idx - rows];
        }
    }
    __global__ void foldCopy(float* __restrict__ out, const float* __restrict__ in, int n, int m) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            int at = i % m;
            float v = in[at] * 2.0f + 1.0f;
            out[at] = v;
        }
    }
"""


def test_stores_whose_value_the_place_determines_are_lifted_and_agree_with_numpy(tmp_path):
    import torch
    kernels, text = convert(tmp_path, PLACED)
    for name in ("boundFill", "boundCopy", "foldCopy"):
        assert kernels[name]["form"] == "tile", (name, kernels[name]["diagnostics"])
    path = tmp_path / "out" / "k.py"
    rng = np.random.default_rng(11)
    rows, cols, ndyn = 5, 4, 3

    arr = rng.uniform(1.0, 2.0, rows * cols * ndyn * 2).astype(np.float32)
    a = torch.from_numpy(arr.copy())
    _run(path, "boundFill", a, rows, cols, ndyn, grid=(2, 1, 1), block=(4, 1, 1))
    want = arr.reshape(ndyn, cols, rows, 2).copy()
    want[:, cols - 1] = 0.0
    np.testing.assert_array_equal(a.numpy(), want.reshape(-1))

    src = rng.uniform(-3.0, 3.0, rows * cols * ndyn).astype(np.float32)
    out = torch.full((rows * cols * ndyn,), 7.5, dtype=torch.float32)  # poisoned where not stored
    _run(path, "boundCopy", out, torch.from_numpy(src), rows, cols, ndyn, grid=(2, 1, 1), block=(4, 1, 1))
    want = np.full((ndyn, cols, rows), 7.5, np.float32)
    want[:, cols - 1] = -src.reshape(ndyn, cols, rows)[:, cols - 2]
    np.testing.assert_array_equal(out.numpy(), want.reshape(-1))

    # 1000 elements fold onto 37 places: those that meet store the same value
    x = rng.uniform(-2.0, 2.0, 37).astype(np.float32)
    out = torch.full((40,), np.nan, dtype=torch.float32)
    _run(path, "foldCopy", out, torch.from_numpy(x), 1000, 37, grid=(3, 1, 1), block=(64, 1, 1))
    np.testing.assert_allclose(out.numpy()[:37], x * 2.0 + 1.0, rtol=1e-6)
    assert np.isnan(out.numpy()[37:]).all()


@pytest.mark.parametrize("body", [
    # the value depends on which element stores it, not only on the place
    "int at = i % m; out[at] = in[i];",
    # the place is read as well: an element may read it before or after another's store
    "int at = i % m; out[at] = in[at]; in2[i] = out[(at + 1) % m];",
    # two stores of the buffer that may meet with different values
    "out[i % m] = in[i % m]; out[(i + 1) % m] = 0.0f;",
    # a local whose value at the store is not known (assigned in a branch)
    "float v = 0.0f; if (in[i % m] > 0.0f) v = in[i]; out[i % m] = v;",
])
def test_stores_the_place_does_not_determine_stay_portable(tmp_path, body):
    kernels, _text = convert(tmp_path, """
        __global__ void fold(float* __restrict__ out, const float* __restrict__ in, float* __restrict__ in2,
                             int n, int m) {
            for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
                %s
            }
        }
    """ % body)
    assert kernels["fold"]["form"] == "portable", kernels["fold"]


HAMMING = """
    #define THREADS 128
    __global__ void hamming(const char* data, int* distance, int n) {
        int idx = threadIdx.x;
        int gx = blockIdx.x;
        int gy = blockIdx.y;
        __shared__ int dist[THREADS];
        dist[idx] = 0;
        __syncthreads();
        for (int i = idx; i < n; i += THREADS) {
            if (data[i + n * gx] != data[i + n * gy]) dist[idx] += 1;
        }
        __syncthreads();
        for (int s = THREADS / 2; s > 0; s /= 2) {
            if (idx < s) dist[idx] += dist[idx + s];
            __syncthreads();
        }
        if (idx == 0) distance[gridDim.x * gy + gx] = dist[0];
    }
"""


def test_a_shared_counter_updated_in_place_is_no_map_of_forwarded_values(tmp_path):
    # forwarding dist[idx] = 0 into the in-place updates once left `0 = 0 + 1` behind, whose
    # only store (distance[...] = 0) the place rule would take as one value from every element:
    # a map refuses a store to no place, and the kernel stays the block reduction it is
    import torch
    kernels, text = convert(tmp_path, HAMMING)
    k = kernels["hamming"]
    assert k["form"] == "tile" and "T.reduce_sum" in factory(text, "hamming"), k["diagnostics"]
    assert "0 = 0" not in text
    rng = np.random.default_rng(5)
    n, rows = 300, 3
    data = rng.integers(0, 3, rows * n).astype(np.int8)
    out = torch.full((rows * rows,), -7, dtype=torch.int32)
    _run(tmp_path / "out" / "k.py", "hamming", torch.from_numpy(data), out, n, grid=(rows, rows, 1), block=(128, 1, 1))
    d = data.reshape(rows, n)
    want = (d[None, :, :] != d[:, None, :]).sum(axis=2).astype(np.int32)  # [gy, gx]
    np.testing.assert_array_equal(out.numpy().reshape(rows, rows), want)


def test_a_staged_cell_updated_in_place_is_no_store_to_the_input(tmp_path):
    # forward_shared forwards sh[threadIdx.x] (staged from in[gx]) into the update as well:
    # in[gx] = in[gx] + 1, a store to a buffer the CUDA declares const. The map refuses it, and the
    # kernel keeps its portable form, which leaves the input alone
    import torch
    kernels, text = convert(tmp_path, """
        __global__ void bump(const float* __restrict__ in, float* __restrict__ out, int n) {
            __shared__ float sh[128];
            int gx = blockIdx.x * blockDim.x + threadIdx.x;
            sh[threadIdx.x] = in[gx];
            __syncthreads();
            sh[threadIdx.x] += 1.0f;
            __syncthreads();
            out[gx] = sh[threadIdx.x];
        }
    """)
    k = kernels["bump"]
    assert k["form"] == "portable" and "which the CUDA declares const" in " ".join(
        d["message"] for d in k["diagnostics"]), k["diagnostics"]
    x = np.random.default_rng(2).uniform(-1.0, 1.0, 256).astype(np.float32)
    xin = torch.from_numpy(x.copy())
    out = torch.full((256,), np.nan, dtype=torch.float32)
    _run(tmp_path / "out" / "k.py", "bump", xin, out, 256, grid=(2, 1, 1), block=(128, 1, 1))
    np.testing.assert_array_equal(xin.numpy(), x)
    np.testing.assert_allclose(out.numpy(), x + 1.0, rtol=1e-6)
