"""A local bound once to a math function's result (``double rate = pow(T, 0.7) * exp(-a / T)``)
is kept in a variable, the way physics kernels compute their rates once and read them in a loop:
TileLang inlines a bound value into every use, so each read recomputed the ``pow`` and ``exp``
(cooling ran 2.8x slower than the CUDA on an H100), and so is one bound to a device function's
result (s3d's ``LOG``). A cheap one (``fabs``, ``fmin``) is still inlined, and so is a costly one
read only once. Checked: the module's text, its run on the CPU against numpy, and how many
``pow`` and ``log`` calls the sm_90a CUDA TileLang writes for it (no GPU needed)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <math.h>

__device__ double settle(double n, double t) {
  double rate = 2.0e-3 * pow(t / 1e3, -0.2) * exp(-1500.0 / t);
  double lim = fmin(n, 4.0);
  double root = sqrt(n);
  double x = n;
  for (int i = 0; i < 12; i++) {
    double prev = x;
    x = n * rate / (rate + 0.5 / x) + 0.25 * lim;
    if (fabs(prev - x) < 1e-9) break;
  }
  return x * rate + root;
}

__global__ void settle_all(const double* __restrict__ t, double* __restrict__ out, double n, int num) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < num) out[i] = settle(n, t[i]);
}

// rates of a temperature through the program's own wrapper of log (s3d's LOG)
__device__ __forceinline__ float LOG(float x) { return logf(x); }

__global__ void rates(const float* __restrict__ t, float* __restrict__ rf, int num) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float alogt = LOG(t[i]);
  rf[i] = expf(3.2f - 0.6f * alogt);
  rf[num + i] = expf(4.5f - 1.25f * alogt);
  rf[2 * num + i] = expf(1.1f + 2.4f * alogt);
}

// correctly rounded square root and reciprocal, read twice each
__global__ void rounded(const float* __restrict__ x, float* __restrict__ out, int num) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float r = __fsqrt_rn(x[i]);
  const float q = __frcp_rn(x[i] + 1.0f);
  out[i] = r * 3.0f + q;
  out[num + i] = r - q * 2.0f;
}

int main() {
  float *tf, *rf;
  cudaMalloc(&tf, 512 * sizeof(float));
  cudaMalloc(&rf, 3 * 512 * sizeof(float));
  rates<<<2, 256>>>(tf, rf, 512);
  rounded<<<1, 256>>>(tf, rf, 256);
  double *t, *o;
  cudaMalloc(&t, 1000 * sizeof(double));
  cudaMalloc(&o, 1000 * sizeof(double));
  settle_all<<<4, 256>>>(t, o, 0.9, 1000);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("costly"), PROGRAM, "k.cu")


def test_a_rate_is_a_variable_and_a_cheap_value_is_inlined(converted):
    text = (converted / "k.py").read_text()
    assert re.search(r"rate = T\.alloc_var\(T\.float64\)\s+# L5\n\s+rate = .*T\.pow\(", text), text
    assert "lim = T.alloc_var" not in text and re.search(r"lim = cuda_math\.fmin\(|lim = T\.min\(", text), text
    assert "root = T.alloc_var" not in text and "root = T.sqrt(" in text, text   # read once: inlined


def _settle(n: float, t: np.ndarray) -> np.ndarray:
    rate = 2.0e-3 * np.power(t / 1e3, -0.2) * np.exp(-1500.0 / t)
    lim = min(n, 4.0)
    x = np.full_like(t, n)
    done = np.zeros(t.shape, bool)
    for _ in range(12):
        prev = x.copy()
        step = n * rate / (rate + 0.5 / x) + 0.25 * lim
        x = np.where(done, x, step)
        done |= np.abs(prev - x) < 1e-9
    return x * rate + np.sqrt(n)


def test_the_rates_run_on_the_cpu(converted):
    mod = module_of(converted / "k.py")
    t = np.random.default_rng(12).uniform(300.0, 9000.0, 1000)
    out = np.full(1000, np.nan)
    mod.settle_all(t, out, 0.9, 1000, grid=4, block=256, target="c")
    np.testing.assert_allclose(out, _settle(0.9, t), rtol=1e-12, atol=0.0)


def test_each_rate_is_computed_once_on_sm90(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["settle_all"], (4, 1, 1), (256, 1, 1))
    # one pow per copy of the element's code (the module calls the device function's macro once in
    # a full tile and once in the last tile): the loop's reads of `rate` read the variable (inlined,
    # each of its three reads was a pow of its own)
    copies = len(re.findall(r"= settle\(", (converted / "k.py").read_text()))
    assert copies >= 1 and len(re.findall(r"\bpow\(", source)) == copies, source


def test_a_value_of_a_device_function_is_computed_once(converted):
    text = (converted / "k.py").read_text()
    assert re.search(r"alogt = T\.alloc_var\(T\.float32\)\s+# L\d+\n\s+alogt = LOG\(", text), text
    mod = module_of(converted / "k.py")
    t = np.random.default_rng(14).uniform(0.5, 4.0, 512).astype(np.float32)
    rf = np.full(3 * 512, np.nan, np.float32)
    mod.rates(t, rf, 512, grid=2, block=256, target="c")
    a = np.log(t.astype(np.float64))
    want = np.concatenate([np.exp(3.2 - 0.6 * a), np.exp(4.5 - 1.25 * a), np.exp(1.1 + 2.4 * a)])
    np.testing.assert_allclose(rf, want, rtol=2e-6)   # float32 log and exp, a few ulp
    from tests.lowering import lower_sm90
    source = lower_sm90(mod.KERNELS["rates"], (2, 1, 1), (256, 1, 1))
    # at most one log per copy of the element's code in the module (inlined: three each)
    copies = len(re.findall(r"= LOG\(", text))
    assert 1 <= len(re.findall(r"\blogf?\(|__logf\(", source)) <= copies, source


def test_correctly_rounded_math_is_computed_once(converted):
    # __fsqrt_rn, __frcp_rn: the rounding-mode variants of sqrt and rcp are as costly
    text = (converted / "k.py").read_text()
    assert re.search(r"\br = T\.alloc_var\(T\.float32\)", text), text
    assert re.search(r"\bq = T\.alloc_var\(T\.float32\)", text), text
    mod = module_of(converted / "k.py")
    x = np.random.default_rng(15).uniform(0.5, 4.0, 256).astype(np.float32)
    out = np.full(512, np.nan, np.float32)
    mod.rounded(x, out, 256, grid=1, block=256, target="c")
    r = np.sqrt(x)
    q = np.float32(1.0) / (x + np.float32(1.0))
    np.testing.assert_allclose(out, np.concatenate([r * np.float32(3.0) + q, r - q * np.float32(2.0)]), rtol=1e-6)
