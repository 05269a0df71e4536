"""A 2-D map whose stores follow y (``bitmap[i * 4096 + j]`` with i the x and j the y element, as
nms builds its suppression bitmap) runs its elements y-fastest: ``for ix, iy in T.Parallel(tile_x,
tile_y)`` over tiles long in y, so that neighbouring threads store neighbouring bytes instead of
one byte in each of 32 rows (the CUDA's 16x16 blocks store 2 bytes in each of 16). A map whose
stores follow x keeps x-fastest tiles. Checked: the plan, the module's text, its CPU run against
numpy, and the sm_90a CUDA TileLang writes (threadIdx.x in the byte store's low part)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.lift.support import factory
from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#define MAXD 256

// pair (i, j): 1 where box j is heavier than box i and overlaps it enough
__global__ void overlaps(const float4* rects, unsigned char* bitmap, const float threshold) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int j = blockIdx.y * blockDim.y + threadIdx.y;
  if (rects[i].w < rects[j].w) {
    float area = (rects[j].z + 1.0f) * (rects[j].z + 1.0f);
    float w = fmaxf(0.0f, fminf(rects[i].x + rects[i].z, rects[j].x + rects[j].z) - fmaxf(rects[i].x, rects[j].x) + 1.0f);
    float h = fmaxf(0.0f, fminf(rects[i].y + rects[i].z, rects[j].y + rects[j].z) - fmaxf(rects[i].y, rects[j].y) + 1.0f);
    bitmap[i * MAXD + j] = ((w * h) / area) < threshold;
  }
}

// a plain 2-D map: its store follows x
__global__ void scale2d(const float* a, float* b, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  b[r * cols + c] = 2.0f * a[r * cols + c];
}

int main() {
  float4* r; unsigned char* bm; float *a, *b;
  cudaMalloc(&r, MAXD * sizeof(float4));
  cudaMalloc(&bm, MAXD * MAXD);
  cudaMalloc(&a, 64 * 64 * sizeof(float));
  cudaMalloc(&b, 64 * 64 * sizeof(float));
  overlaps<<<dim3(16, 16), dim3(16, 16)>>>(r, bm, 0.3f);
  scale2d<<<dim3(4, 4), dim3(16, 16)>>>(a, b, 64);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("y_major"), PROGRAM, "k.cu")


def test_stores_along_y_run_y_fastest(converted):
    text = (converted / "k.py").read_text()
    over = factory(text, "overlaps")
    assert "tile=(128, 8)" in over and "for ix, iy in T.Parallel(tile_x, tile_y):" in over, over
    # filling the GPU halves x (the slow side) first: the contiguous y runs stay whole
    assert re.search(r"= fit_tile\(tile, \([^)]*\), threads if fill else 0, fast=0\)", over), over
    plain = factory(text, "scale2d")
    assert "fast=" not in plain, plain
    assert "tile=(8, 128)" in plain and "for iy, ix in T.Parallel(tile_y, tile_x):" in plain, plain


def _want(rects: np.ndarray, threshold: float) -> np.ndarray:
    x, y, z, w = (rects[:, k].astype(np.float32) for k in range(4))
    i, j = np.meshgrid(np.arange(len(rects)), np.arange(len(rects)), indexing="ij")
    area = (z[j] + np.float32(1)) * (z[j] + np.float32(1))
    ww = np.maximum(np.float32(0), np.minimum(x[i] + z[i], x[j] + z[j]) - np.maximum(x[i], x[j]) + np.float32(1))
    hh = np.maximum(np.float32(0), np.minimum(y[i] + z[i], y[j] + z[j]) - np.maximum(y[i], y[j]) + np.float32(1))
    value = ((ww * hh) / area < np.float32(threshold)).astype(np.uint8)
    return np.where(w[i] < w[j], value, 7).astype(np.uint8)


def test_the_bitmap_on_the_cpu(converted):
    mod = module_of(converted / "k.py")
    rng = np.random.default_rng(31)
    rects = np.stack([rng.uniform(0, 60, 256), rng.uniform(0, 60, 256), rng.uniform(2, 20, 256),
                      rng.uniform(0, 1, 256)], axis=1).astype(np.float32)
    bitmap = np.full(256 * 256, 7, np.uint8)   # poisoned: untouched pairs keep it
    mod.overlaps(rects.reshape(-1), bitmap, 0.3, grid=(16, 16), block=(16, 16), target="c")
    np.testing.assert_array_equal(bitmap.reshape(256, 256), _want(rects, 0.3))


def test_the_byte_stores_are_contiguous_on_sm90(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["overlaps"], (16, 16, 1), (16, 16, 1))
    stores = re.findall(r"bitmap\[([^\]]*)\] = ", source)
    assert stores, source
    # neighbouring threads take neighbouring j: the low bits of threadIdx.x end the byte's index
    # unscaled (x-fastest, they were multiplied by the row's 256)
    assert all(re.search(r"\+ \(\(\(int\)threadIdx\.x\) & (31|63|127)\)\)$", s) for s in stores), stores
