"""A thread's array of vectors whose extent is a template's value parameter (a point-in-polygon
kernel's ``float2 lpoint[tile_size]``): the array of their scalars has ``tile_size * 2`` lanes,
sized when the factory is given the instance's value, and its elements (a dependent type in the
template, as clang leaves them) read and written lane by lane (analysis.prepare.vectors). The
migrated kernel runs on TileLang's C target against numpy for two instances."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

TILED = """
#define BLOCK_X 64
__device__ bool is_between(float a, float b, float c) { return (b > a) != (c > a); }

template <int tile_size>
__global__ void tiled_crossings(int* __restrict__ bitmap, const float2* __restrict__ point,
                                const float2* __restrict__ vertex, int nv, int n) {
  int i = blockIdx.x * BLOCK_X * tile_size + threadIdx.x;
  if (i < n) {
    int c[tile_size];
    float2 lpoint[tile_size];
    for (int ti = 0; ti < tile_size; ti++) {
      c[ti] = 0;
      if (i + BLOCK_X * ti < n) lpoint[ti] = point[i + BLOCK_X * ti];
    }
    int k = nv - 1;
    for (int j = 0; j < nv; k = j++) {
      float2 vj = vertex[j];
      float2 vk = vertex[k];
      float slope = (vk.x - vj.x) / (vk.y - vj.y);
      for (int ti = 0; ti < tile_size; ti++) {
        float2 p = lpoint[ti];
        if (is_between(p.y, vj.y, vk.y) && (p.x < slope * (p.y - vj.y) + vj.x)) c[ti] = !c[ti];
      }
    }
    for (int ti = 0; ti < tile_size; ti++)
      if (i + BLOCK_X * ti < n) bitmap[i + BLOCK_X * ti] = c[ti];
  }
}

int main() {
  int* b; float2 *p, *v;
  tiled_crossings<4><<<8, 64>>>(b, p, v, 5, 2000);
  tiled_crossings<2><<<16, 64>>>(b, p, v, 5, 2000);
}
"""


def _inside(points, vertices):
    out = np.zeros(len(points), np.int32)
    f32 = np.float32
    for i, (px, py) in enumerate(points):
        c = 0
        k = len(vertices) - 1
        for j in range(len(vertices)):
            (xj, yj), (xk, yk) = vertices[j], vertices[k]
            slope = f32(f32(xk - xj) / f32(yk - yj))
            if ((yj > py) != (yk > py)) and px < f32(f32(slope * f32(py - yj)) + xj):
                c = 1 - c
            k = j
        out[i] = c
    return out


def test_an_array_of_vectors_sized_by_a_template_value_is_lanes_of_that_many(tmp_path):
    out, (k,) = converted(tmp_path, TILED)
    assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
    text = (out / "k.py").read_text()
    assert "T.alloc_local((((tile_size) * 2),), T.float32)" in text
    pytest.importorskip("tilelang")
    import torch
    module = module_of(out / "k.py")
    rng = np.random.default_rng(23)
    n = 2000
    points = rng.uniform(-1.5, 1.5, (n, 2)).astype(np.float32)
    vertices = np.array([[-1.0, -1.0], [1.2, -0.8], [0.9, 1.1], [0.0, 0.4], [-1.1, 0.9]], np.float32)
    want = _inside(points, vertices)
    for tile in (4, 2):
        got = torch.full((n,), -7, dtype=torch.int32)  # poisoned
        module.tiled_crossings(got, torch.from_numpy(points.reshape(-1)), torch.from_numpy(vertices.reshape(-1)),
                               len(vertices), n, grid=(n + 64 * tile - 1) // (64 * tile), block=64,
                               template=(tile,), target="c")
        assert np.array_equal(got.numpy(), want), tile
