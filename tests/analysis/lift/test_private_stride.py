"""Shared arrays each thread uses at a stride of its own (analysis.lift.private_shared): cell
``threadIdx.x + W * k`` of a 1-D array belongs to thread ``threadIdx.x`` when the block is at most
``W`` wide, so the array is the thread's local array of its cells ``k`` (loopback's price path,
stepped by a local ``base += W``). Checked on the CPU against the CUDA compiled with g++
(``--check cpu``) and against numpy; refused: a wider block, a step that is no multiple of the
stride, a neighbour's cell.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import convert, factory, note
from tests.analysis.lift.test_block_scalars import buf, spec

#: loopback's shape: a path stored at a stride of the block's width, read back in reverse.
PATH = """
    #define NT 64
    #define STEPS 12
    __global__ void lookback(const float* __restrict__ x0, const float* __restrict__ rate, float* __restrict__ out,
                             int steps) {
        __shared__ float path[NT * STEPS];
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        float total = 0.0f;
        for (int pass = 0; pass < 2; pass++) {
            float s = pass ? x0[i] * 0.5f : x0[i];
            const float r = pass ? -rate[i] : rate[i];
            const int n = steps - 2 * pass;
            int base = threadIdx.x;
            for (int t = 0; t < n; t++) {
                path[base] = s;
                base += NT;
                s *= 1.0f + r * (t % 3 - 1);
            }
            float sum = 0.0f;
            for (int t = 0; t < n; t++) {
                base -= NT;
                sum += fmaxf(path[base] - s, 0.0f);
            }
            total += sum;
        }
        out[i] = total;
    }
    void run(const float* x, const float* r, float* o, int steps) { lookback<<<3, NT>>>(x, r, o, steps); }
"""
PATH_SPEC = spec("lookback", (3, 1, 1), (64, 1, 1), [
    buf("x0", "float32", 192, "in", (0.5, 2.0)), buf("rate", "float32", 192, "in", (-0.3, 0.3)),
    buf("out", "float32", 192, "out", None), {"name": "steps", "scalar": "int32", "value": 12}], tolerance="fp32")


def _walk(s, r, steps):
    path = []
    for t in range(steps):
        path.append(s)
        s = np.float32(s * np.float32(1.0 + r * (t % 3 - 1)))
    return sum(max(p - s, 0.0) for p in reversed(path))


def test_a_path_at_the_blocks_stride_becomes_a_local_array_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, PATH, "--check", "cpu", spec=PATH_SPEC)
    k = kernels["lookback"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "lookback")
    assert "path = T.alloc_local((12,), T.float32)" in body and "alloc_shared" not in body, body
    assert not [d for d in k["diagnostics"] if d["code"] == "M3006"]  # the launch's 64 threads: no two share


def test_a_path_at_the_blocks_stride_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, PATH)
    assert kernels["lookback"]["form"] == "tile"
    rng = np.random.default_rng(8)
    x = rng.uniform(0.5, 2.0, size=192).astype(np.float32)
    r = rng.uniform(-0.3, 0.3, size=192).astype(np.float32)
    out = torch.full((192,), float("nan"), dtype=torch.float32)  # poisoned
    load_module(tmp_path / "out" / "k.py").lookback(torch.from_numpy(x), torch.from_numpy(r), out, 12,
                                                    grid=(3, 1, 1), block=(64, 1, 1), target="c")
    want = [_walk(x[i], r[i], 12) + _walk(np.float32(x[i] * 0.5), -r[i], 10) for i in range(192)]
    np.testing.assert_allclose(out.numpy(), np.array(want, np.float32), rtol=1e-5, atol=1e-6)


#: urng's table written as intended: entry j of thread t at ``32 * j + t``, 32 threads a block.
TABLE = """
    __global__ void shuffle(const int* __restrict__ v, int* __restrict__ out) {
        __shared__ int tab[8 * 32];
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        for (int j = 0; j < 8; j++) tab[32 * j + threadIdx.x] = v[i] * (j + 1);
        out[i] = tab[32 * (v[i] & 7) + threadIdx.x] + tab[threadIdx.x + 32 * 7];
    }
    void run(const int* v, int* o) { shuffle<<<4, 32>>>(v, o); }
"""
TABLE_SPEC = spec("shuffle", (4, 1, 1), (32, 1, 1), [buf("v", "int32", 128, "in", (1, 1000)),
                                                      buf("out", "int32", 128, "out", None)])


def test_a_table_at_a_stride_agrees_on_cpu_and_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, text = convert(tmp_path, TABLE, "--check", "cpu", spec=TABLE_SPEC)
    k = kernels["shuffle"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    assert "tab = T.alloc_local((8,), T.int32)" in factory(text, "shuffle")
    v = np.random.default_rng(1).integers(1, 1000, size=128).astype(np.int32)
    out = torch.full((128,), -1, dtype=torch.int32)  # poisoned
    load_module(tmp_path / "out" / "k.py").shuffle(torch.from_numpy(v), out, grid=(4, 1, 1), block=(32, 1, 1),
                                                   target="c")
    np.testing.assert_array_equal(out.numpy(), v * ((v & 7) + 1) + v * 8)


@pytest.mark.parametrize("source, old, new", [
    # a block wider than the stride: threads share cells (urng's table), a race in CUDA
    (TABLE, "shuffle<<<4, 32>>>", "shuffle<<<2, 64>>>"),
    # a step that is not a multiple of the stride
    (PATH, "base += NT;", "base += NT + 1;"),
    # a neighbour's cell
    (PATH, "sum += fmaxf(path[base] - s, 0.0f);", "sum += fmaxf(path[base + 1] - s, 0.0f);"),
    # the key counted twice
    (TABLE, "tab[32 * j + threadIdx.x] = ", "tab[32 * j + 2 * threadIdx.x] = "),
])
def test_strides_that_are_not_the_threads_own_stay_portable(tmp_path, source, old, new):
    assert old in source
    kernels, text = convert(tmp_path, source.replace(old, new))
    k = next(iter(kernels.values()))
    assert k["form"] != "tile", factory(text, k["kernel"])
