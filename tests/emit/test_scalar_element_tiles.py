"""An element TileLang runs as scalar code takes one element a thread, as the CUDA ran it.

TileLang 0.1.15 vectorises a full tile's accesses only where the element is straight-line code
of values: with a branch (``if``) or a local assigned after its declaration (a ``T.alloc_var``)
inside the CUDA tail guard, it runs each thread's elements one after another, ``threadIdx.x``
apart, and vectorises nothing. Four elements a thread then only cost registers and what nvcc
keeps of each unrolled copy (zeropoint's kernel: 64 registers against the CUDA's 38, twice its
double divisions), 1.14x the CUDA's time on an H100. Checked: the default tiles the module
writes, the sm_90a CUDA TileLang makes of them (no element loop in the thread; the straight-line
map still a vector access), and the scalar kernel's run on the CPU against numpy."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <math.h>

__global__ void quant_params(const float* lo, const float* hi, int qmin, int qmax, int size,
                             float* scale, int* zero)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < size) {
    float a = lo[i];
    float b = hi[i];
    a = fminf(a, 0.f);
    b = fmaxf(b, 0.f);
    scale[i] = (static_cast<double>(b) - a) / (qmax - qmin);
    if (scale[i] == 0.0f) {
      scale[i] = 0.1;
    }
    double z = qmin - a / static_cast<double>(scale[i]);
    int n = 0;
    if (z < qmin) {
      n = qmin;
    } else if (z > qmax) {
      n = qmax;
    } else {
      n = nearbyint(z);
    }
    zero[i] = n;
  }
}

__global__ void axpy(const float* x, float* y, float a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = a * x[i] + y[i];
}

int main() {
  const int size = 1 << 20;
  float *lo, *hi, *scale, *x, *y;
  int* zero;
  cudaMalloc(&lo, size * sizeof(float));
  cudaMalloc(&hi, size * sizeof(float));
  cudaMalloc(&scale, size * sizeof(float));
  cudaMalloc(&zero, size * sizeof(int));
  cudaMalloc(&x, size * sizeof(float));
  cudaMalloc(&y, size * sizeof(float));
  dim3 blocks((size + 255) / 256);
  quant_params<<<blocks, 256>>>(lo, hi, -127, 127, size, scale, zero);
  axpy<<<blocks, 256>>>(x, y, 2.0f, size);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("scalar_tiles"), PROGRAM, "k.cu")


def test_a_branching_element_takes_one_element_a_thread(converted):
    text = (converted / "k.py").read_text()
    assert re.search(r"def make_quant_params\(.*tile=\(256,\), threads=256", text)
    assert re.search(r"def make_axpy\(.*tile=\(1024,\), threads=256", text)  # straight-line: four a thread


def test_the_threads_run_no_element_loop_on_sm90(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    grid = ((1 << 20) // 256, 1, 1)
    source = lower_sm90(mod.KERNELS["quant_params"], grid, (256, 1, 1))
    body = source[source.index("void __launch_bounds__"):]
    assert not re.search(r"for \(int \w+ = 0; \w+ < \d+; \+\+\w+\)", body), body
    # one load of each input and one division by the scale an element, as in the CUDA
    assert len(re.findall(r"\blo\[", body)) == 2 and len(re.findall(r"\bhi\[", body)) == 2, body
    axpy = lower_sm90(mod.KERNELS["axpy"], grid, (256, 1, 1))
    assert re.search(r"\*\(float[24]\*\)\(x \+", axpy), axpy  # a vector load (halved to two where the grid is small)


def test_the_one_element_tiles_run_on_the_cpu(converted):
    mod = module_of(converted / "k.py")
    size, qmin, qmax = 5000, -127, 127
    rng = np.random.default_rng(5)
    lo = rng.uniform(-1.0, 1.0, size).astype(np.float32)
    hi = rng.uniform(-1.0, 1.0, size).astype(np.float32)
    lo[:7] = [0, 0, -0.0, 1, 0.5, -1e-30, 0]
    hi[:7] = [0, -0.5, 0, 2, 0.25, 0, 1e-30]
    scale = np.full(size, np.nan, np.float32)
    zero = np.full(size, -999, np.int32)
    grid = (size + 255) // 256
    mod.quant_params(lo, hi, qmin, qmax, size, scale, zero, grid=grid, block=256, target="c")
    a = np.minimum(lo, np.float32(0)).astype(np.float64)
    b = np.maximum(hi, np.float32(0)).astype(np.float64)
    want = ((b - a) / float(qmax - qmin)).astype(np.float32)
    want[want == 0] = np.float32(0.1)
    z = qmin - a / want.astype(np.float64)
    n = np.where(z < qmin, qmin, np.where(z > qmax, qmax, np.rint(np.clip(z, qmin, qmax)))).astype(np.int32)
    np.testing.assert_array_equal(scale, want)
    np.testing.assert_array_equal(zero, n)
    x = rng.uniform(-3.0, 3.0, size).astype(np.float32)
    y = rng.uniform(-3.0, 3.0, size).astype(np.float32)
    expect = np.float32(2.0) * x + y
    mod.axpy(x, y, 2.0, size, grid=grid, block=256, target="c")
    np.testing.assert_allclose(y, expect, rtol=2 * np.finfo(np.float32).eps, atol=4 * np.finfo(np.float32).eps)
