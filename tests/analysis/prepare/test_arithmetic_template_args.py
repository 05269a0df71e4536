"""A templated device function with barriers called with a value argument written as arithmetic
on the caller's own template parameters (tsa's ``trotter_vert_pair<T, ..., STEPS * MARGIN_X, ...>``):
the binding is the expression of them, so the inlined body computes with the caller's values;
checked on the CPU against the original compiled with g++."""
from __future__ import annotations

import pytest

from migrate.ir import model as m
from migrate.analysis.prepare.instances import _spelling, _written
from migrate.ir.span import Span
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

SOURCE = """
template <int W, int OFF>
__device__ void stage(float* s, const float* x, float* y, int i) {
  s[threadIdx.x] = x[i] * (float)W;
  __syncthreads();
  int j = (threadIdx.x + OFF) % blockDim.x;
  y[i] = s[j] + (float)OFF;
}

template <int BLOCK, int SHIFT>
__global__ void mix(const float* x, float* y) {
  __shared__ float s[BLOCK];
  int i = blockIdx.x * BLOCK + threadIdx.x;
  stage<BLOCK * 2 - 1, SHIFT + 3>(s, x, y, i);
}

void run(const float* x, float* y) {
  mix<64, 2><<<4, 64>>>(x, y);
}
"""


def test_an_arithmetic_template_argument_is_bound_to_its_expression():
    p = m.TemplateParam("W", "value", m.Scalar("int32"), None, Span.point("k.cu"))
    bound = _written(p, "STEPS * MARGIN_X - 1")
    assert isinstance(bound, m.Binary) and bound.op == "-"
    assert isinstance(bound.lhs, m.Binary) and bound.lhs.op == "*"
    assert {bound.lhs.lhs.name, bound.lhs.rhs.name} == {"STEPS", "MARGIN_X"}
    assert _spelling(bound) == "((STEPS * MARGIN_X) - 1)"
    assert _written(p, _spelling(bound)) == bound  # read back as written
    assert _written(p, "N / 2") is None and _written(p, "f(N)") is None  # C's division, a call: not bound


def test_a_device_template_with_barriers_called_with_arithmetic_arguments_passes_on_cpu(tmp_path):
    pytest.importorskip("tilelang")
    spec = spec_kernel("mix", (4, 1, 1), (64, 1, 1), "fp32",
                       spec_buffer("x", "float32", 256, "in", -2.0, 2.0), spec_buffer("y", "float32", 256, "out")
                       ).replace("grid =", 'template = ["64", "2"]\ngrid =')
    out, rows = converted(tmp_path, SOURCE, spec)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    assert row["check"]["status"] == "pass", row["check"]


CUB_SOURCE = """
#include <cub/cub.cuh>
template <typename T, int kBlockDimX, int kBlockDimY>
__device__ void BlockSums(T &a, T &b) {
  using BlockReduce = cub::BlockReduce<T, kBlockDimX, cub::BLOCK_REDUCE_WARP_REDUCTIONS, kBlockDimY>;
  __shared__ typename BlockReduce::TempStorage s1;
  __shared__ typename BlockReduce::TempStorage s2;
  a = BlockReduce(s1).Sum(a);
  b = BlockReduce(s2).Sum(b);
}

template <typename T, int kBlockDimX, int kBlockDimY>
__global__ void channel_sums(const int N, const int C, const int HxW, const T* X, T* sum, T* sumsq) {
  T m = 0, v = 0;
  const int c = blockIdx.x;
  for (int n = threadIdx.x; n < N; n += blockDim.x)
    for (int hw = threadIdx.y; hw < HxW; hw += blockDim.y) {
      const int i = (n * C + c) * HxW + hw;
      m += X[i];
      v += X[i] * X[i];
    }
  BlockSums<T, kBlockDimX, kBlockDimY>(m, v);
  if (threadIdx.x == 0 && threadIdx.y == 0) { sum[c] = m; sumsq[c] = v; }
}

void run(int N, int C, int HxW, const int* X, int* s, int* q) {
  if (HxW >= 64) channel_sums<int, 2, 64><<<C, dim3(2, 64)>>>(N, C, HxW, X, s, q);
  else channel_sums<int, 4, 32><<<C, dim3(4, 32)>>>(N, C, HxW, X, s, q);
}
"""


def test_a_cub_block_reduce_on_a_device_templates_value_parameters_passes_on_cpu(tmp_path):
    """As channelSum's ``BlockReduce<T, kBlockDimX, kBlockDimY>(m, v)``: the TempStorage's type is
    spelled with the device template's value parameters, bound (and the reduction lowered) once it
    is inlined into each instance."""
    pytest.importorskip("tilelang")
    spec = "".join(
        spec_kernel("channel_sums", (6, 1, 1), (bx, by, 1), "exact",
                    spec_scalar("N", "int32", 5), spec_scalar("C", "int32", 6), spec_scalar("HxW", "int32", 70),
                    spec_buffer("X", "int32", 5 * 6 * 70, "in", -50, 50),
                    spec_buffer("sum", "int32", 6, "out"), spec_buffer("sumsq", "int32", 6, "out")).replace(
            "grid =", f'id = "cs_{bx}"\ntemplate = ["int", "{bx}", "{by}"]\ngrid =')
        for bx, by in ((2, 64), (4, 32)))
    out, rows = converted(tmp_path, CUB_SOURCE, spec)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    assert [c["status"] for c in row["check"]["instances"]] == ["pass", "pass"], row["check"]
