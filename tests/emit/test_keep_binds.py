"""A value bound once stays one value on GPUs: every kernel but a tiled GEMM compiles with
TileLang's ``tl.if_stmt_binding_inline_replayable_binds`` off (``migrate.emit.signature.KEEP_BINDS``).
With it on, TileLang's IfStmtBinding pastes a bound load (a device function's argument,
``rate_of(temp[i], ...)``) into each of its uses under the tile's guard; cooling's element, read
once and used 46 times, took its kernel from the CUDA's 74 registers to 106 (2 blocks of 256 an SM
against 3; 1.23x slower on an H100). Checked: the module's text, its CPU run against numpy, and
the sm_90a CUDA TileLang writes (one load of the element per tile branch; no GPU here).

An element that loops, in the kernel or in a device function it calls (cooling's convergence loop
in its rate function), runs one element per thread by default, as the CUDA launched it: two
elements a thread kept cooling at 82 registers, two blocks an SM where the CUDA runs three."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <math.h>

// a rate of a temperature: the argument is read many times over the device function's terms
__device__ double rate_of(double t, int with_lines) {
  double r = 1.0e-3 * sqrt(t) * exp(-1.5e5 / t);
  r += 2.0e-2 * pow(t, 0.7) / (1.0 + sqrt(t / 1.0e5));
  if (with_lines) r += 3.0e-4 * t * exp(-4.7e5 / t) + 1.0e-9 * t * t;
  r += 1.0e-5 * log(t) * t - 2.0e-6 * t / (1.0 + t * 1.0e-4);
  return r;
}

__global__ void rates(const double* __restrict__ temp, double* __restrict__ out, int with_lines, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = rate_of(temp[i], with_lines);
}

// a fixed-point iteration in a device function: each element loops
__device__ double settle_at(double t, int steps) {
  double x = t;
  for (int k = 0; k < steps; k++) x = 0.5 * (x + t / x);
  return x;
}

__global__ void settle(const double* __restrict__ temp, double* __restrict__ out, int steps, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = settle_at(temp[i], steps);
}

int main() {
  double *t, *o;
  cudaMalloc(&t, 1000 * sizeof(double)); cudaMalloc(&o, 1000 * sizeof(double));
  rates<<<4, 256>>>(t, o, 1, 1000);
  settle<<<4, 256>>>(t, o, 20, 1000);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("keep_binds"), PROGRAM, "k.cu")


def test_the_kernel_keeps_its_binds(converted):
    text = (converted / "k.py").read_text()
    assert "# -- rates: tile" in text, text
    assert re.search(r'pass_configs=\(.*\("tl\.if_stmt_binding_inline_replayable_binds", False\)\)', text), text


def test_an_element_that_loops_in_a_device_function_runs_alone_in_its_thread(converted):
    text = (converted / "k.py").read_text()
    assert re.search(r"def make_settle\(.*tile=\(256,\), threads=256", text), text
    assert re.search(r"def make_rates\(.*tile=\(1024,\), threads=256", text), text
    mod = module_of(converted / "k.py")
    t = np.random.default_rng(4).uniform(1.0, 1.0e6, 1024)
    out = np.full(1024, np.nan)
    mod.settle(t, out, 20, 1000, grid=4, block=256, target="c")
    want = t[:1000].copy()
    for _ in range(20):
        want = 0.5 * (want + t[:1000] / want)
    np.testing.assert_allclose(out[:1000], want, rtol=1e-14)
    assert np.isnan(out[1000:]).all()


def _want(t: np.ndarray, with_lines: int) -> np.ndarray:
    r = 1.0e-3 * np.sqrt(t) * np.exp(-1.5e5 / t)
    r = r + 2.0e-2 * np.power(t, 0.7) / (1.0 + np.sqrt(t / 1.0e5))
    if with_lines:
        r = r + (3.0e-4 * t * np.exp(-4.7e5 / t) + 1.0e-9 * t * t)
    return r + (1.0e-5 * np.log(t) * t - 2.0e-6 * t / (1.0 + t * 1.0e-4))


def test_the_cpu_run_matches_numpy(converted):
    mod = module_of(converted / "k.py")
    t = np.random.default_rng(3).uniform(1.0e4, 1.0e6, 1024)
    out = np.full(1024, np.nan)
    mod.rates(t, out, 1, 1000, grid=4, block=256, target="c")
    np.testing.assert_allclose(out[:1000], _want(t[:1000], 1), rtol=1e-12)
    assert np.isnan(out[1000:]).all()


def test_the_cuda_loads_the_element_once_per_branch(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["rates"], (4, 1, 1), (256, 1, 1))
    loads = re.findall(r"\btemp\[", source)
    # the full tile and the last tile: one load each (pasted into every use, it was five)
    assert 1 <= len(loads) <= 2, source
