"""Instances the instance copies (migrate.parse.instance_copies) could not see or write before:

- an enum-typed value parameter whose instance clang spells as an integer (scatter's
  ``scatter_kernel<int, (1)>`` of ``template <typename scalar_t, ReductionType REDUCE>``): the copy
  writes the enum's constant (``Op::MUL``), since C++ does not convert ``1`` to the enum where
  the copy passes it on as a template argument (``apply<OP>``);
- a kernel launched inside a host template with some template arguments written and the rest
  deduced (aop's ``generate_paths_kernel<NUM_THREADS_PER_BLOCK0><<<...>>>(..., payoff, ...)`` in
  ``do_run<Payoff>``, which ``main`` calls with ``PayoffPut(K)`` / ``PayoffCall(K)``
  temporaries): the written ones first, the rest deduced from the launch's arguments
  (migrate.parse.host_instances).

Each instance runs on the CPU through the template's launcher against a reference computed here.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.parse.frontend import parse_file
from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

enum Op { ADD, MUL, SUB };

__device__ void twice(float& d, float v) { d = 2.0f * v + 1.0f; }
__device__ void twice(int& d, int v) { d = v * 5 - 2; }

template <Op O, typename T>
__device__ T apply(T r, T b) { return O == ADD ? r + b : (O == MUL ? r * b : r - b); }

template <typename T, Op OP>
__global__ void combine(const T* __restrict__ a, const T* __restrict__ b, T* __restrict__ c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  T r;
  if (i < n) {
    twice(r, a[i]);
    c[i] = apply<OP>(r, b[i]);
  }
}

template <typename T, Op OP>
void run(const T* a, const T* b, T* c, int n) {
  combine<T, OP><<<(n + 127) / 128, 128>>>(a, b, c, n);
}

struct PayoffCall {
  __host__ __device__ PayoffCall(double K) : m_K(K) {}
  __host__ __device__ double operator()(double s) const { return s > m_K ? s - m_K : 0.0; }
  double m_K;
};
struct PayoffPut {
  __host__ __device__ PayoffPut(double K) : m_K(K) {}
  __host__ __device__ double operator()(double s) const { return m_K > s ? m_K - s : 0.0; }
  double m_K;
};

template <int NUM_THREADS, typename Payoff>
__global__ __launch_bounds__(NUM_THREADS)
void value_paths(int n, Payoff payoff, const double* __restrict s, double* __restrict out) {
  int i = blockIdx.x * NUM_THREADS + threadIdx.x;
  if (i < n) out[i] = payoff(s[i]) + NUM_THREADS;
}

template <typename Payoff>
static inline void do_run(int n, const Payoff& payoff, const double* s, double* out) {
  const int NUM_THREADS0 = 128;
  int grid = (n + NUM_THREADS0 - 1) / NUM_THREADS0;
  value_paths<NUM_THREADS0><<<grid, NUM_THREADS0>>>(n, payoff, s, out);
}

int main(int argc, char** argv) {
  const int n = 1000;
  float *af, *bf, *cf; int *ai, *bi, *ci; double *s, *out;
  cudaMalloc(&af, n * sizeof(float)); cudaMalloc(&bf, n * sizeof(float)); cudaMalloc(&cf, n * sizeof(float));
  cudaMalloc(&ai, n * sizeof(int)); cudaMalloc(&bi, n * sizeof(int)); cudaMalloc(&ci, n * sizeof(int));
  cudaMalloc(&s, n * sizeof(double)); cudaMalloc(&out, n * sizeof(double));
  run<float, MUL>(af, bf, cf, n);
  run<int, ADD>(ai, bi, ci, n);
  run<int, SUB>(ai, bi, ci, n);
  if (argc > 1) do_run(n, PayoffPut(1.5), s, out);
  else do_run(n, PayoffCall(0.5), s, out);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_the_instances_are_found_and_written(tmp_path):
    (tmp_path / "k.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "k.cu")
    kernels = {k.name: k for k in parsed.unit.kernels}
    combine = kernels["combine"]
    got = {i.name: (i.instantiations[0].args, i.instantiations[0].values) for i in combine.instances}
    assert got == {"combine__float_Op_MUL": (("float", "1"), ("float32", 1)),
                   "combine__int_Op_ADD": (("int", "0"), ("int32", 0)),
                   "combine__int_Op_SUB": (("int", "2"), ("int32", 2))}, got
    paths = kernels["value_paths"]
    assert [i.args for i in paths.instantiations] == [("NUM_THREADS0", "PayoffPut"), ("NUM_THREADS0", "PayoffCall")]
    assert [i.instantiations[0].values for i in paths.instances] == [(128, "PayoffPut"), (128, "PayoffCall")]
    assert not [d for d in parsed.diagnostics if d.span.line > PROGRAM.count("\n")]  # nothing of the copies


def test_the_instances_convert_and_run_through_the_template(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "k.cu")
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert sorted(rows) == ["combine", "value_paths"]
    for row in rows.values():
        assert row["form"] not in ("hybrid", "unsupported") and row["reason"].startswith("converted per instance"), row["reason"]
    mod = module_of(out / "k.py")
    n = 1000
    rng = np.random.default_rng(5)
    grid, block = (n + 127) // 128, 128
    a, b = rng.uniform(-3.0, 3.0, n).astype(np.float32), rng.uniform(-3.0, 3.0, n).astype(np.float32)
    c = np.full(n, np.nan, np.float32)
    mod.combine(a, b, c, n, grid=grid, block=block, template=("float", "MUL"), target="c")
    np.testing.assert_allclose(c, (2.0 * a.astype(np.float64) + 1.0) * b, rtol=1e-5, atol=1e-5)
    ai, bi = rng.integers(-1000, 1000, n).astype(np.int32), rng.integers(-1000, 1000, n).astype(np.int32)
    for op, want in (("ADD", ai * 5 - 2 + bi), ("SUB", ai * 5 - 2 - bi)):
        ci = np.full(n, -12345, np.int32)
        mod.combine(ai, bi, ci, n, grid=grid, block=block, template=("int", op), target="c")
        np.testing.assert_array_equal(ci, want)
    s = rng.uniform(0.0, 3.0, n)
    for functor, strike, want in (("PayoffCall", 0.5, np.maximum(s - 0.5, 0.0)),
                                  ("PayoffPut", 1.5, np.maximum(1.5 - s, 0.0))):
        got = np.full(n, np.nan)
        mod.value_paths(n, (strike,), s, got, grid=grid, block=block, template=(128, functor), target="c")
        np.testing.assert_allclose(got, want + 128.0, rtol=1e-12, atol=0)
