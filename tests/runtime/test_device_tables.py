"""``__device__ const`` tables (``__device__ const double twiddle[8] = {...};``, the way generated
FFT code holds its constants): no kernel can write them, so they are modelled as ``__constant__``
symbols, registered with the launch recorder like those, and a program's recorded launches replay
into the migrated kernel with the table's bytes."""
from __future__ import annotations

import json

import pytest

from migrate.cli import main
from migrate.parse.frontend import parse_file
from migrate.runtime.build import find_cxx
from migrate.runtime.source import register_constants

PROGRAM = """
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

__device__ const double twiddle[8] = {1.0, 0.5, -0.25, 0.125, 2.0, -1.5, 0.75, 3.0};
__device__ int hits;   // written by kernels: not a table

__global__ void mix(const double* x, double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * twiddle[i % 8] + twiddle[(i + 3) % 8];
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  double *h = (double*)malloc(n * sizeof(double)), *x, *y;
  for (int i = 0; i < n; i++) h[i] = (i % 13) * 0.3 - 1.7;
  cudaMalloc(&x, n * sizeof(double));
  cudaMalloc(&y, n * sizeof(double));
  cudaMemcpy(x, h, n * sizeof(double), cudaMemcpyHostToDevice);
  mix<<<(n + 63) / 64, 64>>>(x, y, n);
  cudaMemcpy(h, y, n * sizeof(double), cudaMemcpyDeviceToHost);
  double s = 0;
  for (int i = 0; i < n; i++) s += h[i];
  printf("%f\\n", s);
  return 0;
}
"""


def test_a_const_initialised_device_array_is_a_constant_symbol(tmp_path):
    src = tmp_path / "tables.cu"
    src.write_text(PROGRAM)
    unit = parse_file(src).unit
    storage = {g.name: g.storage for g in unit.globals}
    assert storage == {"twiddle": "constant", "hits": "device"}
    text = register_constants(PROGRAM)
    assert 'add_symbol("twiddle", sizeof(twiddle), [](void* c2t_d_) { ::c2t::trace::read_symbol(c2t_d_, twiddle); });' \
        in text
    # a global kernels may write is registered as one: its bytes before and after each launch
    assert 'add_symbol("hits", sizeof(hits), [](void* c2t_d_) { ::c2t::trace::read_symbol(c2t_d_, hits); }, true);' \
        in text


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_the_table_reaches_the_replayed_launch_and_a_wrong_table_fails(tmp_path):
    pytest.importorskip("tilelang")
    src = tmp_path / "src" / "tables.cu"
    src.parent.mkdir()
    src.write_text(PROGRAM)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "300"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] == "tile" and (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), k["check"]
    # the migrated kernel reads the table it is given: one from another symbol's bytes differs
    module = out / "tables.py"
    text = module.read_text()
    assert "twiddle[i % 8]" in text
    module.write_text(text.replace("twiddle[i % 8]", "twiddle[(i + 1) % 8]"))
    assert main(["check", "--from", str(out), "--run", "300"]) == 1
