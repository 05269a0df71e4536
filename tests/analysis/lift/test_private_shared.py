"""Shared arrays each thread keeps as its own scratch (analysis.lift.private_shared): every
access names the thread's own key at one position and the kernel has no barrier, so the array
is the element's local array and the kernel a map. Checked on the CPU against the CUDA compiled
with g++ (``--check cpu``) and against numpy; refused: a neighbour's cell, a barrier, the array
passed on, a key that does not tell threads apart.
"""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import buffer_arg as _buf, convert, factory, note, spec_text as _spec


def _races(k) -> list[str]:
    return [d["message"] for d in k["diagnostics"] if d["code"] == "M3006"]


#: A histogram of each element's neighbourhood in the thread's own column of a shared array
#: (entropy's ``sd_count[v][idx]++``), 1-D block, the key threadIdx.x through a local.
HIST = """
    __global__ void neighbourhood(float* __restrict__ out, const int* __restrict__ v,
                                  const float* __restrict__ tab, int n) {
        __shared__ int count[8][64];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        const int me = threadIdx.x;
        for (int k = 0; k < 8; k++) count[k][me] = 0;
        for (int d = -2; d <= 2; d++) {
            int j = i + d;
            if (j >= 0 && j < n) count[v[j]][me]++;
        }
        float e = 0.0f;
        for (int k = 0; k < 8; k++) e += tab[count[k][me]] * (k + 1);
        out[i] = e;
    }
    void run(float* o, const int* v, const float* t, int n) { neighbourhood<<<(n + 63) / 64, 64>>>(o, v, t, n); }
"""
HIST_SPEC = _spec("neighbourhood", (5, 1, 1), (64, 1, 1), [
    _buf("out", "float32", 300, "out", None), _buf("v", "int32", 300, "in", (0, 7)),
    _buf("tab", "float32", 8, "in", (-2.0, 2.0)), {"name": "n", "scalar": "int32", "value": 300}],
    tolerance="fp32")


def test_a_column_per_thread_becomes_a_local_array_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, HIST, "--check", "cpu", spec=HIST_SPEC)
    k = kernels["neighbourhood"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "neighbourhood")
    assert "alloc_shared" not in body and "T.Parallel" in body
    assert "count = T.alloc_local((8,), T.int32)" in body and "count[v[j]] = count[v[j]] + 1" in body, body
    assert not _races(k)  # threadIdx.x in a 1-D block: the keys are distinct


#: Running sums of a 2-D block, each thread's row of scratch first (``s[me][c]``), the key
#: ``threadIdx.y * blockDim.x + threadIdx.x``; and a per-thread accumulator indexed by the key
#: alone (a local scalar).
ROWS = """
    __global__ void moments(const float* __restrict__ x, float* __restrict__ out, int w, int h) {
        __shared__ float s[256][3];
        __shared__ float acc[256];
        int cx = blockIdx.x * blockDim.x + threadIdx.x;
        int cy = blockIdx.y * blockDim.y + threadIdx.y;
        int me = threadIdx.y * blockDim.x + threadIdx.x;
        if (cx < w && cy < h) {
            acc[me] = 0.0f;
            for (int c = 0; c < 3; c++) s[me][c] = 0.0f;
            for (int r = 0; r < 4; r++) {
                float v = x[(cy * w + cx) * 4 + r];
                s[me][0] += v;
                s[me][1] += v * v;
                s[me][2] = fmaxf(s[me][2], v);
                acc[me] += (r + 1) * v;
            }
            out[(cy * w + cx) * 2] = s[me][1] - s[me][0] * s[me][0] / 4.0f + s[me][2];
            out[(cy * w + cx) * 2 + 1] = acc[me];
        }
    }
"""
ROWS_SPEC = _spec("moments", (3, 2, 1), (16, 8, 1), [
    _buf("x", "float32", 40 * 13 * 4, "in", (-3.0, 3.0)), _buf("out", "float32", 40 * 13 * 2, "out", None),
    {"name": "w", "scalar": "int32", "value": 40}, {"name": "h", "scalar": "int32", "value": 13}],
    tolerance="fp32")


def test_a_row_per_thread_of_a_2d_block_and_a_cell_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, ROWS, "--check", "cpu", spec=ROWS_SPEC)
    k = kernels["moments"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "moments")
    assert "alloc_shared" not in body and "s = T.alloc_local((3,), T.float32)" in body, body
    assert "acc[" not in body, body  # the key alone: a local scalar
    assert not _races(k)  # blockDim.x as the row width: the keys are distinct


#: entropy_opt's shape: a template's block width in the key. The lift takes the CUDA to be
#: race-free (M3006): threads share cells only if the block is wider than the template says.
TEMPLATE = """
    template <int BX, int BY>
    __global__ void counts(float* __restrict__ out, const char* __restrict__ v, const float* __restrict__ tab,
                           int h, int w) {
        __shared__ int c[4][BX * BY];
        const int x = threadIdx.x + blockIdx.x * blockDim.x;
        const int y = threadIdx.y + blockIdx.y * blockDim.y;
        if (y >= h || x >= w) return;
        const int idx = threadIdx.y * BX + threadIdx.x;
        for (int i = 0; i < 4; i++) c[i][idx] = 0;
        char total = 0;
        for (int dy = -1; dy <= 1; dy++)
            for (int dx = -1; dx <= 1; dx++) {
                int xx = x + dx, yy = y + dy;
                if (xx >= 0 && yy >= 0 && yy < h && xx < w) { c[v[yy * w + xx]][idx]++; total++; }
            }
        float e = 0;
        for (int k = 0; k < 4; k++) e -= tab[c[k][idx]];
        out[y * w + x] = e / total;
    }
    void run(float* o, const char* v, const float* t, int h, int w) {
        dim3 grid((w + 7) / 8, (h + 7) / 8), block(8, 8);
        counts<8, 8><<<grid, block>>>(o, v, t, h, w);
    }
"""
TEMPLATE_SPEC = _spec("counts", (3, 2, 1), (8, 8, 1), [
    _buf("out", "float32", 13 * 21, "out", None), _buf("v", "int8", 13 * 21, "in", (0, 3)),
    _buf("tab", "float32", 10, "in", (-2.0, 2.0)),
    {"name": "h", "scalar": "int32", "value": 13}, {"name": "w", "scalar": "int32", "value": 21}],
    tolerance="fp32", template=["8", "8"])


def test_a_template_width_in_the_key_is_lifted_on_the_race_rule_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, TEMPLATE, "--check", "cpu", spec=TEMPLATE_SPEC)
    k = kernels["counts"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    assert any("shared array 'c'" in r and "at most BX wide" in r for r in _races(k)), k["diagnostics"]
    assert "c = T.alloc_local((4,), T.int32)" in factory(text, "counts")


def test_a_template_width_in_the_key_agrees_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, TEMPLATE)
    assert kernels["counts"]["form"] == "tile"
    h, w = 13, 21
    rng = np.random.default_rng(5)
    v = rng.integers(0, 4, size=(h, w)).astype(np.int8)
    tab = rng.uniform(-2.0, 2.0, size=10).astype(np.float32)
    tab[0] = 0.75  # never all zeros, and a count of 0 reads a value of its own
    out = torch.full((h * w,), float("nan"), dtype=torch.float32)  # poisoned
    load_module(tmp_path / "out" / "k.py").counts(out, torch.from_numpy(v.ravel()), torch.from_numpy(tab), h, w,
                                                  grid=(3, 2, 1), block=(8, 8, 1), template=(8, 8), target="c")
    want = np.empty((h, w), np.float32)
    for y in range(h):
        for x in range(w):
            win = v[max(y - 1, 0):y + 2, max(x - 1, 0):x + 2]
            counts = np.bincount(win.ravel(), minlength=4)
            want[y, x] = -np.float32(tab[counts].sum()) / win.size
    np.testing.assert_allclose(out.numpy().reshape(h, w), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("change", [
    # a neighbour's cell: threads share the array
    ("out[i] = e;", "out[i] = e + count[0][(me + 1) % 64];"),
    # a barrier: the array may carry values between threads
    ("float e = 0.0f;", "__syncthreads(); float e = 0.0f;"),
    # a cell's address kept in a pointer
    ("float e = 0.0f;", "int* first = &count[0][me]; float e = (float) *first;"),
    # a key that does not tell threads apart
    ("const int me = threadIdx.x;", "const int me = threadIdx.x / 2;"),
])
def test_shared_arrays_that_are_not_the_threads_own_stay_portable(tmp_path, change):
    old, new = change
    assert old in HIST
    kernels, text = convert(tmp_path, HIST.replace(old, new))
    k = kernels["neighbourhood"]
    assert k["form"] != "tile", factory(text, "neighbourhood")


def test_threadidx_x_in_a_2d_block_is_no_key(tmp_path):
    # threads of one column share threadIdx.x: the array is not theirs alone
    source = HIST.replace("int i = blockIdx.x * blockDim.x + threadIdx.x;",
                          "int i = blockIdx.x * blockDim.x + threadIdx.x + threadIdx.y;")
    kernels, text = convert(tmp_path, source)
    assert kernels["neighbourhood"]["form"] != "tile", factory(text, "neighbourhood")


#: atomicPerf's own-cell atomics: each thread adds to ``S + threadIdx.x`` only, so the atomic is
#: a plain addition to the thread's local (here the cell is also zeroed first and read back).
OWN_ATOMIC = """
    __global__ void strided_count(const float* __restrict__ x, float* __restrict__ out, int n) {
        __shared__ float part[128];
        unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
        part[threadIdx.x] = 0.5f;
        for (unsigned int i = tid; i < n; i += blockDim.x * gridDim.x)
            atomicAdd(part + threadIdx.x, x[i] * x[i]);
        atomicAdd(&part[threadIdx.x], 1.0f);
        out[tid] = part[threadIdx.x];
    }
    void run(const float* x, float* o, int n) { strided_count<<<3, 128>>>(x, o, n); }
"""
OWN_ATOMIC_SPEC = _spec("strided_count", (3, 1, 1), (128, 1, 1), [
    _buf("x", "float32", 1000, "in", (-2.0, 2.0)), _buf("out", "float32", 384, "out", None),
    {"name": "n", "scalar": "int32", "value": 1000}], tolerance="fp32")


def test_atomics_on_the_threads_own_cell_become_additions_and_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, OWN_ATOMIC, "--check", "cpu", spec=OWN_ATOMIC_SPEC)
    k = kernels["strided_count"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "strided_count")
    assert "atomic" not in body and "alloc_shared" not in body, body
    assert "part = part + x[i] * x[i]" in body, body


def test_atomics_on_the_threads_own_cell_agree_with_numpy(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, _ = convert(tmp_path, OWN_ATOMIC)
    assert kernels["strided_count"]["form"] == "tile"
    x = np.random.default_rng(9).uniform(-2.0, 2.0, size=1000).astype(np.float32)
    out = torch.full((384,), float("nan"), dtype=torch.float32)  # poisoned
    load_module(tmp_path / "out" / "k.py").strided_count(torch.from_numpy(x), out, 1000,
                                                         grid=(3, 1, 1), block=(128, 1, 1), target="c")
    sq = np.pad(x.astype(np.float64) ** 2, (0, 1152 - 1000)).reshape(3, 384).sum(axis=0)
    np.testing.assert_allclose(out.numpy(), 0.5 + sq + 1.0, rtol=1e-5)


def test_an_atomic_on_another_threads_cell_stays_portable(tmp_path):
    source = OWN_ATOMIC.replace("atomicAdd(&part[threadIdx.x], 1.0f);", "atomicAdd(&part[0], 1.0f);")
    assert "&part[0]" in source
    kernels, text = convert(tmp_path, source)
    assert kernels["strided_count"]["form"] != "tile", factory(text, "strided_count")


def test_a_column_per_thread_lowers_for_sm90(tmp_path):
    from tests.analysis.lift.support import load
    from tests.lowering import lower_sm90
    kernels, _ = convert(tmp_path, HIST)
    assert kernels["neighbourhood"]["form"] == "tile"
    src = lower_sm90(load(tmp_path / "out" / "k.py").NEIGHBOURHOOD, (5, 1, 1), (64, 1, 1))
    assert "__global__" in src and "__shared__" not in src, src
