"""Shared tables staged from an input, one cell per thread, and read at places the same in every
thread (analysis.lift.staged_tables): each read is the load it staged, under the store's guard,
and the kernel lifts as the reduction around it (gmm's covariance step). Checked on the CPU
against the CUDA compiled with g++ (``--check cpu``) and against numpy; refused: a read at a place
that differs between threads, a store to memory between the staging and the reads of an input that
is not ``__restrict__``.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import convert, factory, note
from tests.analysis.lift.test_block_scalars import buf, spec

#: one block per entry (row, col) of a covariance matrix: the means staged in shared memory,
#: the centred products summed by a shared tree, thread 0 storing the entry.
COV = """
    __global__ void cov(const float* __restrict__ x, float* mu, float* out, int d, int n) {
        __shared__ float m[16];
        __shared__ float part[128];
        const int tid = threadIdx.x;
        const int row = blockIdx.x, col = blockIdx.y;
        if (tid < d) m[tid] = mu[tid] * 0.5f;
        __syncthreads();
        float s = 0.0f;
        for (int e = tid; e < n; e += 128) s += (x[row * n + e] - m[row]) * (x[col * n + e] - m[col]);
        part[tid] = s;
        __syncthreads();
        for (int k = 64; k > 0; k >>= 1) {
            if (tid < k) part[tid] += part[tid + k];
            __syncthreads();
        }
        if (tid == 0) out[row * d + col] = part[0];
    }
    void run(const float* x, float* mu, float* o, int d, int n) { cov<<<dim3(d, d), 128>>>(x, mu, o, d, n); }
"""
COV_SPEC = spec("cov", (5, 5, 1), (128, 1, 1), [
    buf("x", "float32", 5 * 300, "in", (-2.0, 2.0)), buf("mu", "float32", 5, "in", (-1.0, 1.0)),
    buf("out", "float32", 25, "out", None), {"name": "d", "scalar": "int32", "value": 5},
    {"name": "n", "scalar": "int32", "value": 300}], tolerance="fp32_accum")


def test_a_staged_table_read_at_the_blocks_places_becomes_its_loads_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, COV, "--check", "cpu", spec=COV_SPEC)
    k = kernels["cov"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "cov")
    assert "T.reduce_sum" in body and "alloc_shared" not in body and "mu[" in body, body


def test_a_staged_table_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, COV)
    assert kernels["cov"]["form"] == "tile"
    d, n = 5, 300
    rng = np.random.default_rng(6)
    x = rng.uniform(-2.0, 2.0, size=(d, n)).astype(np.float32)
    mu = rng.uniform(-1.0, 1.0, size=d).astype(np.float32)
    out = torch.full((d * d,), float("nan"), dtype=torch.float32)  # poisoned
    load_module(tmp_path / "out" / "k.py").cov(torch.from_numpy(x.ravel()), torch.from_numpy(mu), out, d, n,
                                               grid=(d, d, 1), block=(128, 1, 1), target="c")
    c = x.astype(np.float64) - 0.5 * mu[:, None]
    np.testing.assert_allclose(out.numpy().reshape(d, d), c @ c.T, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("old, new", [
    # a read at a place that differs between threads: another thread's cell
    ("(x[row * n + e] - m[row])", "(x[row * n + e] - m[tid % d])"),
    # a store to memory between the staging and the reads, and the input may alias it
    ("        float s = 0.0f;\n", "        if (tid == 0) out[row * d + col] = 0.0f;\n        float s = 0.0f;\n"),
    # two stores to the table
    ("if (tid < d) m[tid] = mu[tid] * 0.5f;", "if (tid < d) m[tid] = mu[tid] * 0.5f; if (tid == 0) m[0] = 1.0f;"),
])
def test_tables_that_are_not_staged_inputs_read_at_one_place_stay_portable(tmp_path, old, new):
    assert old in COV
    kernels, text = convert(tmp_path, COV.replace(old, new))
    assert kernels["cov"]["form"] != "tile", factory(text, "cov")
