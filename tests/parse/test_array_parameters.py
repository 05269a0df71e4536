"""Kernel parameters declared as multi-dimensional arrays, the way the pool's mnist writes its
layers (``fp_preact_c1(float input[28][28], float preact[6][24][24], float weight[6][5][5])``,
launched with ``(float (*)[28])l_input.output``). C decays such a parameter to a pointer to its
inner array (``float (*)[28]``): the frontend gives it that type, so the kernel takes a buffer and
``input[i][j]`` reads row ``i`` of it. Checked on the CPU against the original, replayed from the
program's own run (the recorder sees the pointers the casts pass)."""
from __future__ import annotations

import json

import pytest

from migrate.ir import model as m
from migrate.runtime.build import find_cxx
from tests.analysis.support import checked, program_converted, unit

PROGRAM = """#include <cuda_runtime.h>
#include <cstdio>

__global__ void preact(float input[8][8], float out[3][6][6], float weight[3][3][3])
{
  const int pos = blockIdx.x * blockDim.x + threadIdx.x;
  const int size = blockDim.x * gridDim.x;
  const int N = 3*3*3*6*6;
  for (int n = N * pos / size; n < N * (pos+1) / size; ++n) {
    int idx = n;
    const int i1 = ((idx /= 1) % 3);
    const int i2 = ((idx /= 3) % 3);
    const int i3 = ((idx /= 3) % 3);
    const int i4 = ((idx /= 3) % 6);
    const int i5 = ((idx /= 6) % 6);
    atomicAdd(&out[i3][i4][i5], weight[i3][i1][i2] * input[i4 + i1][i5 + i2]);
  }
}

__global__ void bias(float out[3][6][6], const float b[3])
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 3 * 6 * 6) return;
  out[i / 36][(i / 6) % 6][i % 6] += b[i / 36] * (1 + (i % 6));
}

int main() {
  float *input, *out, *weight, *b;
  cudaMallocManaged(&input, 64 * 4);
  cudaMallocManaged(&out, 108 * 4);
  cudaMallocManaged(&weight, 27 * 4);
  cudaMallocManaged(&b, 3 * 4);
  for (int i = 0; i < 64; i++) input[i] = (i * 37 % 17) * 0.25f - 2.0f;
  for (int i = 0; i < 108; i++) out[i] = (i % 5) * 0.5f;
  for (int i = 0; i < 27; i++) weight[i] = (i * 11 % 7) * 0.125f - 0.375f;
  for (int i = 0; i < 3; i++) b[i] = 1.5f - i;
  preact<<<4, 32>>>((float (*)[8])input, (float (*)[6][6])out, (float (*)[3][3])weight);
  bias<<<2, 64>>>((float (*)[6][6])out, b);
  cudaDeviceSynchronize();
  printf("%f %f\\n", out[0], out[107]);
  return 0;
}
"""


def test_an_array_parameter_is_the_pointer_to_rows_it_decays_to(tmp_path):
    u = unit(tmp_path, PROGRAM)
    k = {f.name: f for f in u.kernels}
    types = {p.name: p.type for p in k["preact"].params}
    assert types["input"] == m.Pointer(m.Array(m.Scalar("float32"), 8), False)
    # (the model nests an array's extents from the outside in: float[6][6] is an array of 6 rows of 6)
    assert types["out"] == m.Pointer(m.Array(m.Array(m.Scalar("float32"), 6), 6), False)
    assert {p.name: p.type for p in k["bias"].params}["b"] == m.Pointer(m.Scalar("float32"), True)


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_array_parameters_convert_and_replay_the_programs_run(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "layers.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["preact"]["form"] == "tile" and kernels["bias"]["form"] == "tile", kernels
    text = (out / "layers.py").read_text()
    assert "input: T.Tensor(" in text and "weight: T.Tensor(" in text
    status, checks = checked(out, "--run", "")
    assert status == 0, checks
    for name in ("preact", "bias"):
        assert checks[name]["status"] == "pass" and checks[name]["inputs"] == "trace", checks[name]
