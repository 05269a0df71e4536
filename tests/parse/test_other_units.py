"""Device functions defined in another unit of the program (separate compilation, ``nvcc -dc``:
a kernel calls ``pair_index`` and ``smooth``, declared in a header, defined in two other ``.cu``
files, one of them through a ``static`` helper and constant of its own): the file is parsed again
with the units that define them included after its last line, so the kernel converts; the migrated
kernel runs on the CPU against a reference computed here. A unit that defines nothing it calls is
not included."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.cli import main

HEADER = """#pragma once
__device__ int pair_index(int i, int j);
__device__ float smooth(float x);
"""
KERNEL = """#include "helpers.h"
__global__ void pairs(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = smooth(x[pair_index(i, n - 1 - i) % n]);
}
"""
INDEX = """#include "helpers.h"
__device__ int pair_index(int i, int j) {
  if (i < j) { int t = i; i = j; j = t; }
  return i * (i + 1) / 2 + j;
}
"""
SMOOTH = """#include "helpers.h"
static const float kScale = 0.5f;
__device__ static float cube(float x) { return x * x * x; }
__device__ float smooth(float x) { return kScale * cube(x) + x; }
"""
UNRELATED = """__global__ void other(float* z) { z[threadIdx.x] = 1.0f; }
"""


def _program(tmp_path):
    src = tmp_path / "prog"
    src.mkdir()
    for name, text in (("helpers.h", HEADER), ("kernel.cu", KERNEL), ("index.cu", INDEX), ("smooth.cu", SMOOTH),
                       ("unrelated.cu", UNRELATED)):
        (src / name).write_text(text)
    return src


def test_functions_of_other_units_are_found_and_the_kernel_runs(tmp_path):
    pytest.importorskip("tilelang")
    import importlib.util

    out = tmp_path / "out"
    assert main(["convert", str(_program(tmp_path)), "-o", str(out), "-q"]) == 0
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["pairs"]["form"] != "unsupported", kernels["pairs"]["reason"]
    text = (out / "kernel.py").read_text()
    assert "def pair_index(" in text and "# index.cu:L2" in text and "def smooth(" in text
    assert "other" not in text  # the other units' own kernels stay theirs
    spec = importlib.util.spec_from_file_location("other_units_kernel", out / "kernel.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    n = 128
    x = np.random.default_rng(3).uniform(-1.0, 1.0, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    mod.pairs(x, y, n, grid=2, block=64, target="c")
    i = np.arange(n)
    hi, lo = np.maximum(i, n - 1 - i), np.minimum(i, n - 1 - i)
    v = x[(hi * (hi + 1) // 2 + lo) % n].astype(np.float64)
    np.testing.assert_allclose(y, 0.5 * v ** 3 + v, rtol=1e-5, atol=1e-6)


def test_units_that_clash_are_not_included(tmp_path):
    # two units each with a static helper of one name (a special-function library's two
    # Chebyshev expansions): included together they would redefine it, so neither is kept and
    # the call stays the named construct it was
    src = tmp_path / "prog"
    src.mkdir()
    (src / "h.h").write_text("#pragma once\n__device__ double sine_part(double);\n__device__ double cosine_part(double);\n")
    (src / "k.cu").write_text('#include "h.h"\n__global__ void both(double* y) {\n'
                              '  y[threadIdx.x] = sine_part(y[threadIdx.x]) + cosine_part(y[threadIdx.x]);\n}\n')
    for name, f in (("sine.cu", "sin"), ("cosine.cu", "cos")):
        (src / name).write_text(f'#include "h.h"\nstatic __device__ double expansion(double x) {{ return {f}(x); }}\n'
                                f'__device__ double {name[:-3]}_part(double x) {{ return expansion(x); }}\n')
    from migrate.parse.frontend import parse_file
    parsed = parse_file(src / "k.cu")
    assert {d.code for d in parsed.diagnostics if d.severity.value == "error"} == {"M1207"}, parsed.diagnostics
