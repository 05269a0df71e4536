"""A class passed to a kernel by value whose conversion operator the kernel calls, the way the
pool's idivide passes ``int_fastdiv`` (a divisor with its magic numbers, ``operator int()`` giving
the divisor back, a friend ``operator/`` dividing by multiplication): the conversion is a method
of the class, modelled as a device function (``Fastdiv_operator_int``), and the class's fields are
the kernel's parameters. The program's run, recorded on the CPU, replays equal. (The recorder
records an argument as the launch passes it: where the launch converts an int to the class, as
idivide's does, the replay is skipped with that reason, never run on the int's bytes.)"""
from __future__ import annotations

import json

import pytest

from migrate.runtime.build import find_cxx
from tests.analysis.support import checked, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <cstdio>

class Fastdiv {
 public:
  __host__ __device__ Fastdiv(int divisor = 1) : d(divisor) { magic(); }
  __host__ __device__ operator int() const { return d; }
  __host__ __device__ friend int operator/(const int n, const Fastdiv& f);

 private:
  int d;
  int m;
  int s;
  __host__ __device__ void magic() {
    // division by multiplication for small positive divisors: n / d == (n * m) >> s for 0 <= n < 2^15
    s = 20;
    m = ((1 << 20) + d - 1) / d;
  }
};

__host__ __device__ int operator/(const int n, const Fastdiv& f) { return (n * f.m) >> f.s; }

__global__ void check(Fastdiv divisor, int* out, int* slow, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  out[i] = i / divisor;
  slow[i] = i / (int)divisor + (int)divisor;
}

int main() {
  const int n = 1000;
  int *out, *slow;
  cudaMallocManaged(&out, n * 4);
  cudaMallocManaged(&slow, n * 4);
  for (int i = 0; i < n; i++) { out[i] = -1; slow[i] = -1; }
  for (int d = 3; d < 40; d += 17) {
    Fastdiv divisor(d);
    check<<<(n + 127) / 128, 128>>>(divisor, out, slow, n);
    cudaDeviceSynchronize();
  }
  printf("%d %d\\n", out[n - 1], slow[n - 1]);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_the_conversion_operator_of_a_class_argument_converts_and_replays(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "div.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["check"]["form"] == "tile", kernels
    text = (out / "div.py").read_text()
    assert '("divisor", "lanes", (' in text and "operator int" not in text.split("KERNELS")[0].split('"""')[-1]
    status, checks = checked(out, "--run", "")
    assert status == 0, checks
    assert checks["check"]["status"] == "pass" and checks["check"]["inputs"] == "trace", checks["check"]
    assert checks["check"]["message"].startswith("2 recorded launches"), checks["check"]
