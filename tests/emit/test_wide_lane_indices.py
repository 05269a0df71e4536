"""A global buffer of CUDA vectors read and written field by field at an unsigned 32-bit index
(image code's ``const uchar3& px = in[x + y * w]; r += px.x; ...``): the scalariser
(analysis.prepare.vectors) writes each field as ``in_[T.Cast(T.int64, px_at) * 3 + k]``, the
element index widened before it is scaled, as C's pointer arithmetic does (one 64-bit address,
the fields at ``[R+0]``, ``[R+1]``, ``[R+2]``). Scaled in uint32 (``px_at * 3 + k``, which may
wrap) nvcc made each field's address on its own: dpid's kernels ran 1.13-1.16x slower than the
CUDA on an H100. A signed index keeps its form (nvcc adds the fields itself: its overflow is
undefined), and so do whole vectors copied as one access (a folded lane dimension, a vectorised
lane loop). Checked: the module's text, CPU runs against numpy, and the sm_90a CUDA TileLang
writes (no GPU here)."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <cstdint>

struct Dims { uint32_t w, h; float gain; };

// each pixel added to the one below it (clamped), scaled: every colour channel read on its own
__global__ void blend(const uchar3* __restrict__ in, uchar3* __restrict__ out,
                      float3* __restrict__ sums, const Dims d)
{
  const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t y = blockIdx.y;
  if (x >= d.w || y >= d.h) return;
  float3 acc = make_float3(0.f, 0.f, 0.f);
  for (uint32_t dy = 0; dy < 2; dy++) {
    const uint32_t yy = min(y + dy, d.h - 1);
    const uchar3& px = in[x + yy * d.w];
    acc.x += px.x * d.gain;
    acc.y += px.y * d.gain;
    acc.z += px.z * d.gain;
  }
  out[x + y * d.w] = make_uchar3(acc.x * 0.5f, acc.y * 0.5f, acc.z * 0.5f);
  sums[x + y * d.w].x = acc.x;
  sums[x + y * d.w].y = acc.y;
  sums[x + y * d.w].z = acc.z;
}

// one warp per 4x4 cell of the image: its lanes sum the cell's pixels, lane 0 stores the mean
__global__ void shrink(const uchar3* __restrict__ in, uchar3* __restrict__ cells, const Dims d)
{
  const uint32_t cx = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const uint32_t cy = blockIdx.y;
  if (cx >= d.w / 4 || cy >= d.h / 4) return;
  float r = 0.f, g = 0.f, b = 0.f;
  for (uint32_t i = threadIdx.x % 32; i < 16; i += 32) {
    const uint32_t x = cx * 4 + i % 4;
    const uint32_t y = cy * 4 + i / 4;
    const uchar3& px = in[x + y * d.w];
    r += px.x; g += px.y; b += px.z;
  }
  for (int o = 16; o > 0; o /= 2) {
    r += __shfl_down_sync(0xffffffff, r, o);
    g += __shfl_down_sync(0xffffffff, g, o);
    b += __shfl_down_sync(0xffffffff, b, o);
  }
  if (threadIdx.x % 32 == 0)
    cells[cx + cy * (d.w / 4)] = make_uchar3(r / 16.f, g / 16.f, b / 16.f);
}

// each pixel xor its left and upper neighbours (the first row and column kept): subtracting
// indices, read under guards
__global__ void edges(const uchar3* __restrict__ in, uchar3* __restrict__ out, const Dims d)
{
  const uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  const uint32_t y = blockIdx.y;
  if (y >= d.h) return;  // (whole warps of 32: d.w a multiple of 32)
  uchar3 left = make_uchar3(0, 0, 0), above = make_uchar3(0, 0, 0);
  const uint32_t xl = x - 1;
  if (x > 0) left = in[xl + y * d.w];
  if (y > 0) above = in[x + (y - 1) * d.w];
  const uchar3& px = in[x + y * d.w];
  const float up = __shfl_up_sync(0xffffffff, (float)px.y, 1);  // the left pixel's green again
  if (threadIdx.x > 0) left.y = (unsigned char)up;
  out[x + y * d.w] = make_uchar3(px.x ^ left.x ^ above.x, px.y ^ left.y ^ above.y, px.z ^ left.z ^ above.z);
}

// each row mirrored, red and blue swapped, at signed indices
__global__ void flipx(const uchar3* __restrict__ in, uchar3* __restrict__ out, int w, int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int j = (i / w) * w + (w - 1 - i % w);
  out[i].x = in[j].z;
  out[i].y = in[j].y;
  out[i].z = in[j].x;
}

// whole float4s copied at an unsigned index
__global__ void copy4(const float4* __restrict__ src, float4* __restrict__ dst, uint32_t n)
{
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[i];
}

// float4s reversed within each block through shared memory, each copied whole
__global__ void turn4(const float4* __restrict__ src, float4* __restrict__ dst)
{
  __shared__ float4 tile[128];
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = src[i];
  __syncthreads();
  dst[i] = tile[blockDim.x - 1 - threadIdx.x];
}

int main() {
  uchar3 *in, *out, *cells; float3* sums; float4 *a, *b;
  Dims d = {100, 8, 0.75f};
  cudaMalloc(&in, 800 * sizeof(uchar3)); cudaMalloc(&out, 800 * sizeof(uchar3));
  cudaMalloc(&cells, 50 * sizeof(uchar3)); cudaMalloc(&sums, 800 * sizeof(float3));
  cudaMalloc(&a, 300 * sizeof(float4)); cudaMalloc(&b, 300 * sizeof(float4));
  blend<<<dim3(4, 8), 32>>>(in, out, sums, d);
  shrink<<<dim3(7, 2), 128>>>(in, cells, d);
  flipx<<<7, 128>>>(in, out, 100, 800);
  const Dims e = {96, 8, 1.f};
  edges<<<dim3(3, 8), 32>>>(in, out, e);
  copy4<<<3, 128>>>(a, b, 300);
  turn4<<<3, 128>>>(a, b);
  cudaDeviceSynchronize();
  return 0;
}
"""

W, H, GAIN = 100, 8, 0.75
SENTINEL = 0xAB


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("wide_lanes"), PROGRAM, "img.cu")


@pytest.fixture(scope="module")
def mod(converted):
    return module_of(converted / "img.py")


def _section(text: str, kernel: str) -> str:
    return text.split(f"# -- {kernel}: ")[1].split("\n# -- ")[0]


def test_forms_stay(converted):
    report = json.loads((converted / "report.json").read_text())
    assert {k["kernel"]: k["form"] for k in report["kernels"]} == {
        "blend": "tile", "shrink": "portable", "edges": "portable", "flipx": "tile", "copy4": "tile", "turn4": "portable"}


def test_unsigned_field_indices_are_widened_before_they_are_scaled(converted):
    text = (converted / "img.py").read_text()
    blend, shrink = _section(text, "blend"), _section(text, "shrink")
    for k in range(3):
        assert f"in_[T.Cast(T.int64, px_at) * 3 + {k}]" in blend, blend
        assert f"out[T.Cast(T.int64, x + T.Cast(T.uint32, gy) * d_w) * 3 + {k}] = " in blend, blend
        assert f"sums[T.Cast(T.int64, x + T.Cast(T.uint32, gy) * d_w) * 3 + {k}] = " in blend, blend
        assert f"in_[T.Cast(T.int64, px_at) * 3 + {k}]" in shrink, shrink
        assert f"cells[T.Cast(T.int64, cx + cy * (d_w // 4)) * 3 + {k}] = " in shrink, shrink
    assert not re.search(r"(in_|out|sums|cells)\[\(?[a-z]", blend + shrink), "an unwidened field index"


def test_signed_indices_and_whole_vectors_keep_their_form(converted):
    text = (converted / "img.py").read_text()
    flipx, copy4, turn4, edges = (_section(text, k) for k in ("flipx", "copy4", "turn4", "edges"))
    # a subtracting one too: TVM bounds x + (2**32 - 1) as never wrapping, so that in 64 bits the
    # guarded read of the left neighbour would be proven out of bounds and dropped
    assert "left_x[tx] = in_[(xl + y * d_w) * 3 + 0]" in edges, edges  # (xl = x - 1)
    assert "above_x[tx] = in_[(x + (y + T.uint32(2**32 - 1)) * d_w) * 3 + 0]" in edges, edges
    assert "in_[T.Cast(T.int64, px_at_r) * 3 + 0]" in edges, edges
    assert "out[i * 3 + 0] = in_[j * 3 + 2]" in flipx, flipx
    # a folded lane dimension (tile) and a vectorised lane loop (portable): one access a vector
    assert "dst[T.Cast(T.int32, i * 4) + il] = src[T.Cast(T.int32, i * 4) + il]" in copy4, copy4
    assert "= src[T.Cast(T.int32, (i * 4 + 0) // 4 * 4) + x_lane]" in turn4, turn4
    assert "dst[T.Cast(T.int32, (i * 4 + 0) // 4 * 4) + x_lane] = " in turn4, turn4
    assert "T.Cast(T.int64" not in flipx + turn4 and "[T.Cast(T.int64" not in copy4


def _image(rng):
    return rng.integers(1, 256, (H, W, 3)).astype(np.uint8)


def test_the_cpu_runs_match_numpy(mod):
    rng = np.random.default_rng(11)
    img = _image(rng)
    src = img.reshape(-1).copy()

    out = np.full(W * H * 3, SENTINEL, np.uint8)
    sums = np.full(W * H * 3, np.nan, np.float32)
    mod.blend(src, out, sums, (W, H, GAIN), grid=(4, 8, 1), block=32, target="c")
    below = img[np.minimum(np.arange(H) + 1, H - 1)]
    acc = img.astype(np.float32) * np.float32(GAIN) + below.astype(np.float32) * np.float32(GAIN)
    np.testing.assert_array_equal(sums.reshape(H, W, 3), acc)
    np.testing.assert_array_equal(out.reshape(H, W, 3), (acc * np.float32(0.5)).astype(np.uint8))

    cells = np.full((H // 4) * (W // 4) * 3, SENTINEL, np.uint8)
    mod.shrink(src, cells, (W, H, GAIN), grid=(7, 2, 1), block=128, target="c")
    mean = img.astype(np.float32).reshape(H // 4, 4, W // 4, 4, 3).sum(axis=(1, 3)) / np.float32(16)
    np.testing.assert_array_equal(cells.reshape(H // 4, W // 4, 3), mean.astype(np.uint8))

    xored = np.full(96 * H * 3, SENTINEL, np.uint8)
    mod.edges(src, xored, (96, H, 1.0), grid=(3, 8, 1), block=32, target="c")
    rows = src[:96 * H * 3].reshape(H, 96, 3)
    left = np.concatenate([np.zeros((H, 1, 3), np.uint8), rows[:, :-1]], axis=1)
    above = np.concatenate([np.zeros((1, 96, 3), np.uint8), rows[:-1]], axis=0)
    np.testing.assert_array_equal(xored.reshape(H, 96, 3), rows ^ left ^ above)

    flipped = np.full(W * H * 3, SENTINEL, np.uint8)
    mod.flipx(src, flipped, W, W * H, grid=7, block=128, target="c")
    np.testing.assert_array_equal(flipped.reshape(H, W, 3), img[:, ::-1, ::-1])

    a = rng.standard_normal(300 * 4).astype(np.float32)
    b = np.full(300 * 4, np.nan, np.float32)
    mod.copy4(a, b, 300, grid=3, block=128, target="c")
    np.testing.assert_array_equal(b, a)

    a = rng.standard_normal(384 * 4).astype(np.float32)
    b = np.full(384 * 4, np.nan, np.float32)
    mod.turn4(a, b, grid=3, block=128, target="c")
    np.testing.assert_array_equal(b.reshape(3, 128, 4), a.reshape(3, 128, 4)[:, ::-1])


def test_the_cuda_scales_the_widened_index(mod):
    from tests.lowering import lower_sm90
    blend = lower_sm90(mod.KERNELS["blend"], (4, 8, 1), (32, 1, 1))
    shrink = lower_sm90(mod.KERNELS["shrink"], (7, 2, 1), (128, 1, 1))
    for source, buffers in ((blend, ("in_", "out", "sums")), (shrink, ("in_", "cells"))):
        for name in buffers:
            fields = re.findall(rf"\b{name}\[(.*?)\](?: =|[;)])", source)
            assert len(fields) >= 3, (name, source)
            # the element index converted to int64, then scaled: C's pointer arithmetic
            assert all(re.match(r"\(+\(int64_t\)\(", f) and "* (int64_t)3)" in f for f in fields), (name, fields)
    for kernel in ("copy4", "turn4"):  # still one 16-byte access a vector
        source = lower_sm90(mod.KERNELS[kernel], (3, 1, 1), (128, 1, 1))
        assert "*(float4*)(dst + " in source and "*(float4*)(src + " in source, source
