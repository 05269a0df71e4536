"""A kernel template the program uses with several instances, whose body means something only per
instance, is converted per instance (migrate.parse.instance_copies, migrate.emit.dispatch): an
overloaded device function each instance's type chooses, writing through a reference (as
attentionMergeState's ``from_float``: the generic form cannot inline it),
with a value argument named by a host function's constant; a functor type argument (as aop's
``Payoff``). Each instance runs on the CPU against a reference computed here, launched through the
template's launcher with the program's template arguments; an instance the program does not launch
is refused; a template one of whose instances cannot be converted is reported unsupported, naming
that instance."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.parse.frontend import parse_file
from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

__device__ void twice(float& d, float v) { d = 2.0f * v + 1.0f; }
__device__ void twice(double& d, double v) { d = 3.0 * v - 1.0; }
__device__ void twice(int& d, int v) { d = v * 5 - 2; }

template <typename T, int OFFSET>
__global__ void scale(const T* __restrict__ x, T* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  T r;
  if (i < n) { twice(r, x[i]); y[i] = r + (T)OFFSET; }
}

struct PayoffCall {
  double k;
  __device__ double operator()(double s) const { return fmax(s - k, 0.0); }
};
struct PayoffPut {
  double k;
  __device__ double operator()(double s) const { return fmax(k - s, 0.0); }
};

template <typename Payoff>
__global__ void payoff(const double* __restrict__ s, double* __restrict__ out, int n, Payoff p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = p(s[i]);
}

__device__ float odd(float v) { return v - 1.0f; }
__device__ int odd(int v) { asm volatile("" ::: "memory"); return v; }

template <typename T>
__global__ void half_done(const T* __restrict__ x, T* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = odd(x[i]);
}

template <typename T>
void run_scale(const T* x, T* y, int n) {
  constexpr int LOCAL = 7;
  scale<T, LOCAL><<<(n + 127) / 128, 128>>>(x, y, n);
}

int main() {
  const int n = 1000;
  float *xf, *yf; double *xd, *yd; int *xi, *yi;
  cudaMalloc(&xf, n * sizeof(float)); cudaMalloc(&yf, n * sizeof(float));
  cudaMalloc(&xd, n * sizeof(double)); cudaMalloc(&yd, n * sizeof(double));
  cudaMalloc(&xi, n * sizeof(int)); cudaMalloc(&yi, n * sizeof(int));
  scale<float, 1><<<(n + 127) / 128, 128>>>(xf, yf, n);
  scale<int, 3><<<(n + 127) / 128, 128>>>(xi, yi, n);
  run_scale<double>(xd, yd, n);
  payoff<PayoffCall><<<(n + 127) / 128, 128>>>(xd, yd, n, PayoffCall{1.5});
  payoff<PayoffPut><<<(n + 127) / 128, 128>>>(xd, yd, n, PayoffPut{0.5});
  half_done<float><<<(n + 127) / 128, 128>>>(xf, yf, n);
  half_done<int><<<(n + 127) / 128, 128>>>(xi, yi, n);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_each_instance_is_modelled_as_written_for_it(tmp_path):
    (tmp_path / "k.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "k.cu")
    kernels = {k.name: k for k in parsed.unit.kernels}
    scale = kernels["scale"]
    assert scale.template_params  # the template keeps its model; its instances come with it
    got = {i.name: (i.instantiations[0].args, i.instantiations[0].values) for i in scale.instances}
    assert got == {"scale__float_1": (("float", "1"), ("float32", 1)), "scale__int_3": (("int", "3"), ("int32", 3)),
                   "scale__double_7": (("double", "LOCAL"), ("float64", 7))}, got
    for inst in scale.instances:
        assert inst.template_params == () and (inst.span.line, inst.span.end_line) == (7, 12)
    assert [i.instantiations[0].values for i in kernels["payoff"].instances] == [("PayoffCall",), ("PayoffPut",)]
    assert not [d for d in parsed.diagnostics if d.span.line > PROGRAM.count("\n")]  # nothing of the copies
    assert [k.name for k in parsed.unit.kernels] == ["scale", "payoff", "half_done"]


def test_the_instances_convert_and_run_through_the_template(tmp_path):
    pytest.importorskip("tilelang")
    from migrate.runtime.tilelang_support import LaunchError, compile_kernel
    out = program_converted(tmp_path, PROGRAM, "k.cu", status=1)  # half_done is not migrated
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert sorted(rows) == ["half_done", "payoff", "scale"]  # one row per template
    assert rows["scale"]["form"] not in ("hybrid", "unsupported"), rows["scale"]["reason"]
    assert rows["scale"]["template_instances"] == [["float", "1"], ["int", "3"], ["double", "LOCAL"]]
    assert rows["payoff"]["form"] not in ("hybrid", "unsupported"), rows["payoff"]["reason"]
    bad = rows["half_done"]
    assert bad["form"] in ("hybrid", "unsupported") and "half_done<int>" in bad["reason"], bad["reason"]
    assert "M1201" in {d["code"] for d in bad["diagnostics"]}
    mod = module_of(out / "k.py")
    assert set(mod.KERNELS) == {"scale", "payoff", "half_done"}
    assert mod.KERNELS["half_done"].form == "hybrid"  # kept as CUDA (its instance<int> has inline PTX)
    n = 1000
    rng = np.random.default_rng(11)
    grid, block = (n + 127) // 128, 128
    x = rng.uniform(-3.0, 3.0, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    mod.scale(x, y, n, grid=grid, block=block, template=("float", "1"), target="c")
    np.testing.assert_allclose(y, 2.0 * x.astype(np.float64) + 1.0 + 1.0, rtol=1e-6, atol=1e-6)
    xd = rng.uniform(-3.0, 3.0, n)
    yd = np.full(n, np.nan)
    mod.scale(xd, yd, n, grid=grid, block=block, template=("double", "7"), target="c")
    np.testing.assert_allclose(yd, 3.0 * xd - 1.0 + 7.0, rtol=1e-12, atol=0)
    xi = rng.integers(-1000, 1000, n).astype(np.int32)
    yi = np.full(n, -12345, np.int32)
    kernel = compile_kernel(mod.SCALE, grid, block, template=("int", "3"), target="c")  # as generic templates
    mod.scale(xi, yi, n, grid=grid, block=block, template=("int", 3), target="c")
    assert kernel is not None
    np.testing.assert_array_equal(yi, xi * 5 - 2 + 3)
    with pytest.raises(LaunchError, match="not an instance"):
        mod.scale(x, y, n, grid=grid, block=block, template=("float", "2"), target="c")
    s = rng.uniform(0.0, 3.0, n)
    for functor, strike, want in (("PayoffCall", 1.5, np.maximum(s - 1.5, 0.0)),
                                  ("PayoffPut", 0.5, np.maximum(0.5 - s, 0.0))):
        got = np.full(n, np.nan)
        mod.payoff(s, got, n, (strike,), grid=grid, block=block, template=(functor,), target="c")
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    with pytest.raises(LaunchError):
        mod.payoff(s, got, n, (1.0,), grid=grid, block=block, template=("PayoffStraddle",), target="c")
