"""``cuCabsf``/``cuCabs`` computed as cuComplex.h computes them: the larger and smaller magnitude,
one division ``t = w / v``, ``t = 1 + t * t``, ``t = v * sqrt(t)``, then ``v + w`` where ``v`` is 0
or either is past the largest finite value. The magnitudes and the scaled value are variables
of their own (``T.alloc_var``): held in bound values, TileLang pasted them into each use and into
the branches of the edge test, and a call cost two divisions where the CUDA has one (complex's
``ref_complex_float``: 9 IEEE divisions a thread against the CUDA's 7). Checked: the sm_90a CUDA
TileLang writes (one division and one square root a call), and the kernels run on the CPU
against numpy's evaluation of the header's formula, edge cases included (0, infinities, values
past the largest finite one, NaN, subnormals)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <cuComplex.h>

__global__ void magnitudes(const float* __restrict__ re, const float* __restrict__ im, float* __restrict__ out, int n)
{
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  float a = re[i];
  float b = im[i];
  cuFloatComplex z1 = make_cuFloatComplex(a, b);
  cuFloatComplex z2 = make_cuFloatComplex(b, 0.5f);
  out[3 * i] = cuCabsf(z1);
  out[3 * i + 1] = cuCabsf(cuCaddf(z1, z2)) * cuCabsf(cuCsubf(z1, z2));
  out[3 * i + 2] = fabsf(cuCabsf(cuCmulf(z1, z2)) - cuCabsf(z1) * cuCabsf(z2)) < 1e-3f;
}

__global__ void magnitudes_double(const double* __restrict__ re, const double* __restrict__ im, double* __restrict__ out, int n)
{
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  double a = re[i];
  double b = im[i];
  cuDoubleComplex z = make_cuDoubleComplex(a, b);
  out[i] = cuCabs(z) + cuCabs(cuConj(z));
}

int main() {
  const int n = 1000;
  float *re, *im, *out;
  double *dre, *dim, *dout;
  cudaMalloc(&re, n * sizeof(float));
  cudaMalloc(&im, n * sizeof(float));
  cudaMalloc(&out, 3 * n * sizeof(float));
  cudaMalloc(&dre, n * sizeof(double));
  cudaMalloc(&dim, n * sizeof(double));
  cudaMalloc(&dout, n * sizeof(double));
  dim3 grids ((n + 255) / 256);
  dim3 blocks (256);
  magnitudes<<<grids, blocks>>>(re, im, out, n);
  magnitudes_double<<<grids, blocks>>>(dre, dim, dout, n);
  cudaDeviceSynchronize();
  return 0;
}
"""

N = 1000


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("cabs"), PROGRAM, "k.cu")


def cabs(x, y, dtype):
    """cuComplex.h's cuCabsf (float32) / cuCabs (float64), evaluated in ``dtype`` by numpy."""
    top = dtype(3.402823466e38) if dtype is np.float32 else dtype(1.79769313486231570e+308)
    a, b = np.abs(np.asarray(x, dtype)), np.abs(np.asarray(y, dtype))
    v, w = np.where(a > b, a, b), np.where(a > b, b, a)
    with np.errstate(all="ignore"):
        t = w / v
        t = dtype(1.0) + t * t
        t = v * np.sqrt(t)
    return np.where((v == 0) | (v > top) | (w > top), v + w, t).astype(dtype)


def inputs(dtype):
    big = np.finfo(dtype).max
    tiny = np.finfo(dtype).smallest_subnormal
    edge = [(0, 0), (0, -0.0), (-0.0, 3), (np.inf, 1), (1, -np.inf), (np.inf, np.inf), (big, big), (big, 1),
            (-big, big / 2), (tiny, 0), (tiny, tiny), (3 * tiny, -tiny), (np.nan, 1), (2, np.nan), (1e-30, 1e30),
            (3, 4), (-5, 12), (1, 1e-20)]
    rng = np.random.default_rng(17)
    re = rng.uniform(-10.0, 10.0, N).astype(dtype)
    im = (rng.uniform(-10.0, 10.0, N) * 10.0 ** rng.integers(-6, 6, N)).astype(dtype)
    for k, (x, y) in enumerate(edge):
        re[k], im[k] = x, y
    return re, im


def test_each_magnitude_is_one_division_and_one_square_root_on_sm90(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["magnitudes"], (4, 1, 1), (256, 1, 1), tile=(256,))
    body = source[source.index("void __launch_bounds__"):]
    calls = 6 * 2  # six cuCabsf a thread, in the full-tile and the last-tile branch
    assert len(re.findall(r"\bsqrtf\(", body)) == calls, body
    # one division each (t = w / v); without the variables, ``(w / v) * (w / v)`` was pasted in twice
    assert len(re.findall(r"[\w)] / [\w(]", body)) == calls, body


def test_float_magnitudes_run_on_the_cpu_as_cucomplex_computes_them(converted):
    mod = module_of(converted / "k.py")
    f = np.float32
    re_, im = inputs(f)
    out = np.full(3 * N, np.nan, f)
    mod.magnitudes(re_, im, out, N, grid=(N + 255) // 256, block=256, target="c")
    z2x, z2y = im, np.full(N, 0.5, f)
    with np.errstate(all="ignore"):
        first = cabs(re_, im, f)
        second = cabs(re_ + z2x, im + z2y, f) * cabs(re_ - z2x, im - z2y, f)
        gap = np.abs(cabs(re_ * z2x - im * z2y, re_ * z2y + im * z2x, f) - first * cabs(z2x, z2y, f))
        # the test against 1e-3 where rounding cannot move the gap across it (NaN and inf: false)
        sure = ~np.isfinite(gap) | (np.abs(gap - f(1e-3)) > f(1e-4))
    # the magnitude itself: exact (edges, NaN and infinities included); the product: within
    # float32 rounding of the CPU compiler's contractions
    np.testing.assert_array_equal(out[0::3], first)
    np.testing.assert_allclose(out[1::3], second, rtol=4 * np.finfo(f).eps, atol=0)
    assert sure.sum() > N - 10
    np.testing.assert_array_equal(out[2::3][sure], (gap < f(1e-3)).astype(f)[sure])


def test_double_magnitudes_run_on_the_cpu_as_cucomplex_computes_them(converted):
    mod = module_of(converted / "k.py")
    d = np.float64
    re_, im = inputs(d)
    out = np.full(N, np.nan, d)
    mod.magnitudes_double(re_, im, out, N, grid=(N + 255) // 256, block=256, target="c")
    with np.errstate(all="ignore"):
        want = cabs(re_, im, d) + cabs(re_, -im, d)
    np.testing.assert_array_equal(out, want)
