"""A tile-form map none of whose global accesses moves by one element along x (an image remap
written as distort writes its barrel correction: ``uchar3`` pixels read and written lane by lane,
``dst[row * cols + col]`` is ``dst[(row * cols + col) * 3 + k]``, a bilinear gather at places
computed from floats, the sizes read through a struct pointer) runs one element per thread, as its
CUDA does: there is nothing for several elements a thread to widen, and each thread's four guarded
elements ran one after another (distort: 40 registers instead of 30, six blocks an SM instead of
eight, 1.34x the CUDA's time on an H100). Its gather is no stride either: the map is not square.
A map with a unit-stride access keeps its four elements a thread. Checked: the factories'
defaults, a CPU run against numpy, and the sm_90a CUDA TileLang writes (no GPU here)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted
from tests.lowering import lower_sm90

PROGRAM = """#include <cuda_runtime.h>

struct Lens {
  float strength;
  float cx;
  float cy;
  int cols;
  int rows;
};

// one coordinate pushed away from the centre; the parameter is reassigned, as such helpers do
__device__ inline float pushed(float v, float c, float r2, const Lens* lens)
{
  v = v - c;
  v = v + v * lens->strength * r2;
  return v + c;
}

// bilinear read of an RGB image, black outside it
__device__ inline void bilinear(const uchar3* img, float r, float c, uchar3& out, const Lens* lens)
{
  if (r < 0 || c < 0 || r > lens->rows - 1 || c > lens->cols - 1) {
    out.x = 0;
    out.y = 0;
    out.z = 0;
    return;
  }
  int r0 = (int)floorf(r);
  int r1 = (int)ceilf(r);
  int c0 = (int)floorf(c);
  int c1 = (int)ceilf(c);
  uchar3 a = img[r0 * lens->cols + c0];
  uchar3 b = img[r0 * lens->cols + c1];
  uchar3 d = img[r1 * lens->cols + c0];
  uchar3 e = img[r1 * lens->cols + c1];
  float fr = r - r0;
  float fc = c - c0;
  out.x = (a.x * (1.f - fc) + b.x * fc) * (1.f - fr) + (d.x * (1.f - fc) + e.x * fc) * fr;
  out.y = (a.y * (1.f - fc) + b.y * fc) * (1.f - fr) + (d.y * (1.f - fc) + e.y * fc) * fr;
  out.z = (a.z * (1.f - fc) + b.z * fc) * (1.f - fr) + (d.z * (1.f - fc) + e.z * fc) * fr;
}

__global__ void unwarp(const uchar3* __restrict__ src, uchar3* __restrict__ dst, const Lens* __restrict__ lens)
{
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < lens->cols && row < lens->rows) {
    float dx = col - lens->cx;
    float dy = row - lens->cy;
    float r2 = dx * dx + dy * dy;
    float c = pushed((float)col, lens->cx, r2, lens);
    float r = pushed((float)row, lens->cy, r2, lens);
    uchar3 v;
    bilinear(src, r, c, v, lens);
    dst[row * lens->cols + col] = v;
  }
}

// a map with a unit-stride access: four elements a thread widen its loads and stores
__global__ void brighten(const float* __restrict__ x, float* __restrict__ y, int cols, int rows)
{
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  if (col < cols && row < rows) y[row * cols + col] = 1.5f * x[row * cols + col];
}

int main() {
  const int cols = 200, rows = 120;
  uchar3 *src, *dst;
  Lens* lens;
  float *x, *y;
  cudaMalloc(&src, cols * rows * sizeof(uchar3));
  cudaMalloc(&dst, cols * rows * sizeof(uchar3));
  cudaMalloc(&lens, sizeof(Lens));
  cudaMalloc(&x, cols * rows * sizeof(float));
  cudaMalloc(&y, cols * rows * sizeof(float));
  dim3 block(16, 16);
  dim3 grid(cols / 16 + 1, rows / 16 + 1);
  unwarp<<<grid, block>>>(src, dst, lens);
  brighten<<<grid, block>>>(x, y, cols, rows);
  cudaDeviceSynchronize();
  return 0;
}
"""

COLS, ROWS, STRENGTH = 200, 120, 2e-6
GRID, BLOCK = (COLS // 16 + 1, ROWS // 16 + 1, 1), (16, 16, 1)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("narrow_maps"), PROGRAM, "lens.cu")


@pytest.fixture(scope="module")
def mod(converted):
    return module_of(converted / "lens.py")


def test_a_map_without_unit_strides_takes_one_element_a_thread(converted):
    text = (converted / "lens.py").read_text()
    assert 'def make_unwarp(grid, block, shared_bytes=0, target="cuda", tile=(2, 128), threads=256, fill=True)' \
        in text, text[:1500]
    # the unit-stride map keeps four elements a thread
    assert 'def make_brighten(grid, block, shared_bytes=0, target="cuda", tile=(8, 128), threads=256, fill=True)' \
        in text, text[:1500]


def _lens(cx: float, cy: float) -> np.ndarray:
    words = np.zeros(5, dtype=np.float32)
    words[:3] = (STRENGTH, cx, cy)
    words[3:].view(np.int32)[:] = (COLS, ROWS)
    return words


def _reference(src: np.ndarray, cx: float, cy: float) -> np.ndarray:
    """The CUDA's arithmetic in float32, pixel by pixel."""
    f = np.float32
    img = src.reshape(ROWS, COLS, 3).astype(f)
    rows, cols = np.meshgrid(np.arange(ROWS, dtype=f), np.arange(COLS, dtype=f), indexing="ij")
    dx, dy = cols - f(cx), rows - f(cy)
    r2 = dx * dx + dy * dy
    c = (cols - f(cx)) + (cols - f(cx)) * f(STRENGTH) * r2 + f(cx)
    r = (rows - f(cy)) + (rows - f(cy)) * f(STRENGTH) * r2 + f(cy)
    inside = (r >= 0) & (c >= 0) & (r <= ROWS - 1) & (c <= COLS - 1)
    rc, cc = np.clip(r, 0, ROWS - 1), np.clip(c, 0, COLS - 1)
    r0, r1 = np.floor(rc).astype(int), np.ceil(rc).astype(int)
    c0, c1 = np.floor(cc).astype(int), np.ceil(cc).astype(int)
    fr, fc = (rc - r0).astype(f)[..., None], (cc - c0).astype(f)[..., None]
    out = (img[r0, c0] * (1 - fc) + img[r0, c1] * fc) * (1 - fr) + (img[r1, c0] * (1 - fc) + img[r1, c1] * fc) * fr
    return np.where(inside[..., None], out.astype(f), 0).astype(np.uint8).reshape(-1)


def test_the_cpu_run_matches_numpy(mod):
    rng = np.random.default_rng(17)
    src = rng.integers(0, 256, ROWS * COLS * 3).astype(np.uint8)
    cx, cy = COLS / 2, ROWS / 2
    dst = np.zeros_like(src)
    mod.unwarp(src, dst, _lens(cx, cy), grid=GRID, block=BLOCK, target="c")
    want = _reference(src, cx, cy)
    # uint8 results of float32 sums: a value within an ulp of an integer may truncate either way
    # where the C compiler contracts a product and a sum into one rounding
    diff = np.abs(dst.astype(int) - want.astype(int))
    assert diff.max() <= 1 and np.count_nonzero(diff) <= 0.001 * diff.size, np.count_nonzero(diff)
    assert np.count_nonzero(want) > 0.9 * want.size  # the remap kept the image (not all black)


def test_the_cuda_runs_one_guarded_element_a_thread(mod):
    source = lower_sm90(mod.KERNELS["unwarp"], GRID, BLOCK)
    assert "__launch_bounds__(256, 1)" in source, source[:3000]
    # before: `for (int i = 0; i < 4; ++i)` around each thread's four elements, in 32 x 32 tiles
    assert not re.search(r"for \(int i\w* = 0; i\w* < \d+; \+\+i\w*\)", source), source[:3000]
