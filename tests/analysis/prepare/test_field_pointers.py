"""A local pointer into an array field of a struct passed by value (analysis.prepare.field_pointers),
the way a fractal renderer picks its function's row of parameters: ``const VP *vp =
&params.vps[f][0];`` then ``vp[i].factor`` in a loop, inside a device function the kernel inlines,
whose ``switch`` has a case holding a ``switch`` of its own (ir.switches: the inner switch's
breaks are its own). Each use reads the field's element (``params.vps[f][i]``); the migrated
kernel runs on TileLang's C target against numpy. A pointer into the field that is stepped, or
whose row's index changes after it is taken, is left to the pass that names it."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

FLAME = """
struct VP { int idx; float factor; };
struct Params {
  VP vps[4][3];
  float colors[4];
  int frame;
};

__device__ void iterate(float2 &p, float &color, int f, const Params &params) {
  float2 out;
  out.x = 0.0f;
  out.y = 0.0f;
  const VP *vp = &params.vps[f][0];
  for (int i = 0; i < 3; i++) {
    if (fabsf(vp[i].factor) < 0.01f)
      continue;
    float2 q;
    switch (vp[i].idx) {
      case 0:
        q.x = p.x;
        q.y = p.y;
        break;
      case 1:
        q.x = p.y;
        q.y = -p.x;
        break;
      case 2: {
        switch ((p.x >= 0.0f) << 1 | (p.y >= 0.0f)) {
          case 3:
            q.x = 1.0f; q.y = 1.0f;
            break;
          default:
            q.x = 0.5f; q.y = -0.5f;
            break;
        }
        break;
      }
      default:
        q.x = 0.0f;
        q.y = 0.0f;
        break;
    }
    out.x += vp[i].factor * q.x;
    out.y += vp->factor * q.y;
  }
  color = (color + params.colors[f]) / 2.0f;
  p.x = out.x;
  p.y = out.y;
}

__global__ void flame(const float2 *in, float2 *out, float *colors, const Params params, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int f = (i + params.frame) % 4;
  float2 p = in[i];
  float color = 0.5f;
  iterate(p, color, f, params);
  out[i] = p;
  colors[i] = color;
}
"""


def _reference(points, table, colors, frame):
    out = np.empty_like(points)
    col = np.empty(len(points), np.float32)
    f32 = np.float32
    for i, (x, y) in enumerate(points):
        f = (i + frame) % 4
        ox, oy = f32(0), f32(0)
        for k in range(3):
            idx, factor = table[f][k]
            factor = f32(factor)
            if abs(factor) < f32(0.01):
                continue
            if idx == 0:
                q = (x, y)
            elif idx == 1:
                q = (y, -x)
            elif idx == 2:
                quadrant = (int(x >= 0) << 1) | int(y >= 0)
                q = (f32(1), f32(1)) if quadrant == 3 else (f32(0.5), f32(-0.5))
            else:
                q = (f32(0), f32(0))
            ox = f32(ox + factor * q[0])
            oy = f32(oy + f32(table[f][0][1]) * q[1])  # vp->factor: the row's first element
        out[i] = (ox, oy)
        col[i] = (f32(0.5) + f32(colors[f])) / f32(2)
    return out, col


def test_a_pointer_into_a_struct_fields_row_reads_the_field(tmp_path):
    out, (k,) = converted(tmp_path, FLAME)
    assert k["form"] == "tile", k["diagnostics"]
    text = (out / "k.py").read_text()
    assert "params_vps_3_2_factor: T.float32" in text  # the row's elements are lanes of the struct
    pytest.importorskip("tilelang")
    import torch
    rng = np.random.default_rng(11)
    table = [[(int(rng.integers(0, 4)), float(rng.choice([0.0, 0.005, 1.5, -0.75, 0.3]))) for _ in range(3)]
             for _ in range(4)]
    table[1][1] = (2, 0.8)  # the inner switch is reached
    colors = rng.uniform(0, 1, 4).astype(np.float32)
    frame = 3
    raw = b"".join(struct.pack("<if", idx, factor) for row in table for idx, factor in row)
    raw += struct.pack("<4f", *colors) + struct.pack("<i", frame)
    n = 300
    points = rng.uniform(-2, 2, (n, 2)).astype(np.float32)
    got = torch.full((2 * n,), float("nan"), dtype=torch.float32)  # poisoned
    got_colors = torch.full((n,), float("nan"), dtype=torch.float32)
    module_of(out / "k.py").flame(torch.from_numpy(points.reshape(-1)), got, got_colors, raw, n,
                                  grid=(n + 127) // 128, block=128, target="c")
    want, want_colors = _reference(points, table, colors, frame)
    np.testing.assert_allclose(got.numpy().reshape(n, 2), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got_colors.numpy(), want_colors, rtol=1e-6)


STEPPED = """
struct VP { int idx; float factor; };
struct Params { VP vps[4][3]; };

__global__ void stepped(float *out, const Params params, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const VP *vp = &params.vps[i % 4][0];
  float s = 0.0f;
  for (int k = 0; k < 3; k++) { s += vp->factor; vp++; }
  out[i] = s;
}

__global__ void moved_row(float *out, const Params params, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int f = i % 4;
  const VP *vp = &params.vps[f][0];
  f = 3 - f;
  out[i] = vp[1].factor + (float)f;
}
"""


def test_a_stepped_pointer_or_one_whose_row_moves_is_not_read_as_the_field(tmp_path):
    _out, rows = converted(tmp_path, STEPPED, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("stepped", "moved_row"):
        assert kernels[name]["form"] in ("hybrid", "unsupported"), kernels[name]
        assert any("vector pointer 'vp'" in d["message"] for d in kernels[name]["diagnostics"]), kernels[name]
