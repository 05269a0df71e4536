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
    assert kernels["pairs"]["form"] not in ("hybrid", "unsupported"), kernels["pairs"]["reason"]
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


def _clashing_program(tmp_path):
    """Two units each with a file-scope static helper and a static constant of one name (a
    special-function library's two Chebyshev expansions, compiled apart with nvcc -dc)."""
    src = tmp_path / "prog"
    src.mkdir()
    (src / "h.h").write_text("#pragma once\n__device__ double sine_part(double);\n__device__ double cosine_part(double);\n")
    (src / "k.cu").write_text('#include "h.h"\n__global__ void both(double* y, int n) {\n'
                              '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
                              '  if (i < n) y[i] = sine_part(y[i]) + cosine_part(y[i]);\n}\n')
    for name, f, scale in (("sine.cu", "sin", "2.0"), ("cosine.cu", "cos", "3.0")):
        (src / name).write_text(f'#include "h.h"\n// static double expansion(double) in a comment\n'
                                f'static const double kScale = {scale};\n'
                                f'static __device__ double expansion(double x) {{ return kScale * {f}(x); }}\n'
                                f'__device__ double {name[:-3]}_part(double x) {{ return expansion(x); }}\n')
    return src


def test_static_names_of_units_are_the_file_scope_ones():
    from migrate.parse.other_units import static_names
    text = ("#define STATIC_HELPER static int f(void)\n// static int in_comment;\n"
            "static const float kTable[4] = {1, 2, 3, 4};\nstatic __device__ inline float g(float x) { static int "
            "inner = 0; return x; }\nstruct S { static int member; };\nstatic int a, b;\n")
    assert static_names(text) == {"kTable", "g", "a"}


def test_units_whose_static_names_clash_are_included_apart(tmp_path):
    # each unit's static names are its own (the linker keeps them apart): included together, each
    # unit's are renamed inside it, so both units are kept and the kernel runs on the CPU
    pytest.importorskip("tilelang")
    import importlib.util

    from migrate.parse.frontend import parse_file
    src = _clashing_program(tmp_path)
    parsed = parse_file(src / "k.cu")
    assert [d for d in parsed.diagnostics if d.severity.value == "error"] == []
    out = tmp_path / "out"
    assert main(["convert", str(src / "k.cu"), str(src / "sine.cu"), "-o", str(out), "-q"]) == 0
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["both"]["form"] == "tile", kernels["both"]["reason"]
    text = (out / "k.py").read_text()
    assert "def c2t_sine_expansion(" in text and "def c2t_cosine_expansion(" in text
    spec = importlib.util.spec_from_file_location("clash_kernel", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    n = 100
    x = np.random.default_rng(5).uniform(-3.0, 3.0, n)
    y = x.copy()
    mod.both(y, n, grid=2, block=64, target="c")
    np.testing.assert_allclose(y, 2.0 * np.sin(x) + 3.0 * np.cos(x), rtol=1e-12, atol=1e-12)
