"""Trees over the fields of a shared array of vectors (analysis.lift.field_arrays, reduce):
``v[t].x += v[t + s].x; v[t].y += v[t + s].y`` is one tree per field, each lifted to a
T.reduce over the block's lanes (f16sp's scalar products over float2 and half2)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from migrate.analysis.lift.field_arrays import split_fields
from migrate.ir import model as m
from migrate.parse.frontend import parse_file
from tests.analysis.lift.support import convert, factory, note

DOT2 = """
    #define NT 128
    __device__ void reduce2(float2 * const v)
    {
        int lid = threadIdx.x;
        for (int i = NT / 2; i >= 1; i = i / 2) {
            if (lid < i) {
                v[lid].x += v[lid + i].x;
                v[lid].y += v[lid + i].y;
            }
            __syncthreads();
        }
    }
    __global__ void dot2(const float2 * __restrict__ a, const float2 * __restrict__ b,
                         float * __restrict__ results, size_t size)
    {
        const int stride = gridDim.x * blockDim.x;
        __shared__ float2 sh[NT];
        float2 value = {0.f, 0.f};
        for (int i = threadIdx.x + blockDim.x * blockIdx.x; i < size; i += stride) {
            value.x += a[i].x * b[i].x;
            value.y += a[i].y * b[i].y;
        }
        sh[threadIdx.x] = value;
        __syncthreads();
        reduce2(sh);
        if (threadIdx.x == 0) {
            float2 r = sh[0];
            results[blockIdx.x] = r.x - 2.0f * r.y;
        }
    }
"""


def test_tree_over_the_fields_of_a_float2_array_lifts_to_one_reduce_per_field_and_agrees_with_numpy(tmp_path):
    """sh[t] (float2) is sh_x and sh_y: two T.reduce_sum, the y values kept per lane between the
    two lane loops; run on the CPU target (3 blocks of 128 threads over 1000 pairs) against numpy."""
    import torch
    from migrate.runtime.tilelang_side import load_module
    kernels, text = convert(tmp_path, DOT2)
    k = kernels["dot2"]
    assert k["form"] == "tile" and "shared-memory tree" in k["reason"], note(k)
    body = factory(text, "dot2")
    assert "T.reduce_sum(sh_x_lanes, sh_x_total, dim=0)" in body and "T.reduce_sum(sh_y_lanes, sh_y_total, dim=0)" in body
    assert "value_y = alloc_lanes((block_x,), T.float32)" in body
    assert not re.search(r"sync_threads|alloc_shared|\btx\b", body)
    rng = np.random.default_rng(9)
    n = 1000
    a, b = rng.uniform(-1, 1, 2 * n).astype(np.float32), rng.uniform(-1, 1, 2 * n).astype(np.float32)
    results = torch.full((3,), float("nan"))
    load_module(tmp_path / "out" / "k.py").dot2(torch.from_numpy(a), torch.from_numpy(b), results, n,
                                                 grid=(3, 1, 1), block=(128, 1, 1), target="c")
    prod = (a.astype(np.float64) * b).reshape(n, 2)
    block = np.arange(n) % 384 // 128
    want = [prod[block == j, 0].sum() - 2.0 * prod[block == j, 1].sum() for j in range(3)]
    np.testing.assert_allclose(results.numpy(), want, rtol=1e-5, atol=1e-5)


def test_field_split_needs_every_access_field_wise(tmp_path):
    """An array also read at a plain index (sh[t] as a scalar) is not split; one read field-wise
    everywhere is split into sh_x and sh_y of half the extent."""
    src = tmp_path / "f.cu"
    src.write_text("""
        __global__ void f(float* out) {
            __shared__ float sh[64];
            sh[threadIdx.x * 2 + 0] = 1.0f; sh[threadIdx.x * 2 + 1] = 2.0f;
            __syncthreads();
            out[threadIdx.x] = sh[threadIdx.x * 2 + 1];
        }
        __global__ void g(float* out) {
            __shared__ float sh[64];
            sh[threadIdx.x * 2 + 0] = 1.0f;
            __syncthreads();
            out[threadIdx.x] = sh[threadIdx.x];
        }
    """)
    unit = parse_file(src).unit
    f, g = unit.kernel("f"), unit.kernel("g")
    split = split_fields(f, {"sh"})
    decls = {d.name: d.type.extent for d in m.walk(split.body) if isinstance(d, m.VarDecl)}
    assert decls == {"sh_x": 32, "sh_y": 32}
    assert split_fields(g, {"sh"}) is g
