"""A kernel template the program uses with one instance, whose body means something only for that
instance (``Op::apply(x)`` of the class the instance passes, as a pool's ``PoolProcess`` or a
reduction's overloaded ``BlockReduce``): the file is parsed again with a copy of the kernel written
for its instance, so clang resolves the call; the copy stands for the kernel, with the template's
lines, and runs on the CPU against a reference computed here (a functor passed by value too: its
``operator()`` is a method of the instance's struct). A template with two instances keeps its own
model and diagnostic, and gains one model per instance, which convert and run
(tests/parse/test_instance_dispatch.py)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.parse.frontend import parse_file
from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

struct Square {
  __device__ static float apply(float v) { return v * v + 1.0f; }
};
struct Negate {
  __device__ static float apply(float v) { return -v; }
};
struct Halve {
  float scale;
  __device__ float operator()(float v) const { return v * scale; }
};

namespace ops {
template <typename Op>
__global__ void apply(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Op::apply(x[i]);
}
}

template <typename Op>
__global__ void both(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = Op::apply(x[i]);
}

template <typename F>
__global__ void mapped(const float* __restrict__ x, float* __restrict__ y, int n, F f) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = f(x[i]);
}

int main() {
  const int n = 1000;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  ops::apply<Square><<<(n + 127) / 128, 128>>>(x, y, n);
  both<Square><<<(n + 127) / 128, 128>>>(x, y, n);
  both<Negate><<<(n + 127) / 128, 128>>>(x, y, n);
  Halve h{0.5f};
  mapped<Halve><<<(n + 127) / 128, 128>>>(x, y, n, h);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_one_instance_is_modelled_as_written_for_it(tmp_path):
    (tmp_path / "k.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "k.cu")
    kernels = {k.name: k for k in parsed.unit.kernels}
    apply = kernels["apply"]
    assert apply.template_params == () and [i.args for i in apply.instantiations] == [("Square",)]
    assert (apply.span.line, apply.span.end_line) == (15, 19)  # the template's lines, not the copy's
    assert not parsed.kernel_errors("apply")
    assert not [d for d in parsed.diagnostics if d.span.line > PROGRAM.count("\n")]  # nothing of the copies
    # two instances: the generic model stays, with its diagnostic, and a model per instance
    assert [i.name for i in kernels["both"].instances] == ["both__Square", "both__Negate"]
    assert kernels["both"].template_params and [d.code for d in parsed.kernel_errors("both")] == ["M1209"]
    # a functor passed by value: the copy calls its operator(), a method of the instance's struct
    assert kernels["mapped"].template_params == () and not parsed.kernel_errors("mapped")


def test_the_copy_converts_and_runs(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "k.cu")  # every kernel converts: no error left
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert rows["apply"]["form"] not in ("hybrid", "unsupported"), rows["apply"]["reason"]
    assert rows["apply"]["line"] == 15 and rows["apply"]["template_instances"] == [["Square"]]
    # two instances: each converted as its own kernel, the template's launcher runs the one named
    assert rows["both"]["form"] not in ("hybrid", "unsupported") and rows["mapped"]["form"] not in ("hybrid", "unsupported")
    assert "M1209" not in {d["code"] for d in rows["both"]["diagnostics"]}  # the generic model's
    text = (out / "k.py").read_text()
    assert "__c2t_instance" not in text
    assert "Square_apply(x[i])  # L18" in text  # provenance: the template's line
    mod = module_of(out / "k.py")
    n = 1000
    x = np.random.default_rng(5).uniform(-2.0, 2.0, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    mod.apply(x, y, n, grid=(n + 127) // 128, block=128, target="c")
    np.testing.assert_allclose(y, x.astype(np.float64) ** 2 + 1.0, rtol=1e-6, atol=1e-6)
    for op, want in (("Square", x.astype(np.float64) ** 2 + 1.0), ("Negate", -x)):
        y = np.full(n, np.nan, np.float32)
        mod.both(x, y, n, grid=(n + 127) // 128, block=128, template=(op,), target="c")
        np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)
    y = np.full(n, np.nan, np.float32)
    mod.mapped(x, y, n, (0.75,), grid=(n + 127) // 128, block=128, target="c")  # Halve{0.75f}, its lanes
    np.testing.assert_allclose(y, x * np.float32(0.75), rtol=1e-6, atol=0)


#: a pixel template whose one instance is a CUDA vector: the body reads the pixel's fields, which
#: only the instance's type has (the way overlay kernels blend ``px.x`` of a ``T px``)
PIXELS = """#include <cuda_runtime.h>
template <typename T>
__global__ void blend(const T* __restrict__ in, T* __restrict__ out, int n, const float4 color) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  T px = in[i];
  const float a = color.w / 255.0f;
  px.x = a * color.x + (1.0f - a) * px.x;
  px.y = a * color.y + (1.0f - a) * px.y;
  px.z = a * color.z + (1.0f - a) * px.z;
  out[i] = px;
}

int main() {
  const int n = 300;
  float3 *in, *out;
  cudaMalloc(&in, n * sizeof(float3));
  cudaMalloc(&out, n * sizeof(float3));
  blend<float3><<<(n + 63) / 64, 64>>>(in, out, n, make_float4(10.0f, 20.0f, 30.0f, 128.0f));
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_fields_of_a_template_typed_value_are_read_from_the_instances_type(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PIXELS, "k.cu")
    (row,) = json.loads((out / "report.json").read_text())["kernels"]
    assert row["form"] not in ("hybrid", "unsupported") and row["template_instances"] == [["float3"]], row["reason"]
    mod = module_of(out / "k.py")
    n = 300
    x = np.random.default_rng(7).uniform(0.0, 255.0, (n, 3)).astype(np.float32)
    y = np.full((n, 3), np.nan, np.float32)
    color = np.array([10.0, 20.0, 30.0, 128.0], np.float32)
    mod.blend(x.reshape(-1), y.reshape(-1), n, tuple(float(c) for c in color), grid=(n + 63) // 64, block=64, target="c")
    a = np.float32(color[3] / np.float32(255.0))
    np.testing.assert_allclose(y, a * color[:3] + (np.float32(1.0) - a) * x, rtol=1e-6, atol=1e-4)


def test_diagnostics_never_show_the_name_of_a_templates_copy():
    # the copy's name (and its local types': packed__c2t_instance_Pack) is the frontend's own
    from migrate.diagnostics import _COPY_SUFFIX, make
    from migrate.ir.span import Span
    from migrate.parse.instance_copies import SUFFIX
    assert _COPY_SUFFIX == SUFFIX
    d = make("M3001", Span.point("k.cu", 3), f"vector expression of type 'packed{SUFFIX}_Pack' has no lane form")
    assert d.message == "vector expression of type 'packed_Pack' has no lane form"


#: a struct's overloaded static methods, one called by a plain kernel, the other by a template's
#: one instance: the copy's parse meets them in another order than the file's first parse did
OVERLOADS = """#include <cuda_runtime.h>

struct Acc {
  __device__ static float apply(int v) { return v * 2.0f + 3.0f; }
  __device__ static float apply(float v) { return v * 0.5f - 1.0f; }
};

__global__ void ints(const int* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = Acc::apply(in[i]);
}

template <typename Op>
__global__ void typed(const float* __restrict__ in, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = Op::apply(in[i]);
}

int main() {
  const int n = 500;
  int* ki; float *kf, *y;
  cudaMalloc(&ki, n * sizeof(int));
  cudaMalloc(&kf, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  ints<<<(n + 127) / 128, 128>>>(ki, y, n);
  typed<Acc><<<(n + 127) / 128, 128>>>(kf, y, n);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_overloads_met_in_another_order_by_the_copy_keep_their_own_bodies(tmp_path):
    (tmp_path / "k.cu").write_text(OVERLOADS)
    parsed = parse_file(tmp_path / "k.cu")
    kernels = {k.name: k for k in parsed.unit.kernels}
    device = {f.name: f.span.line for f in parsed.unit.device_functions}
    assert device[kernels["ints"].calls[0]] == 4 and device[kernels["typed"].calls[0]] == 5
    pytest.importorskip("tilelang")
    assert not [d for d in parsed.diagnostics if d.code == "M1209"]  # the template's generic call: its copy stands
    out = program_converted(tmp_path, OVERLOADS, "k.cu")
    mod = module_of(out / "k.py")
    n = 500
    rng = np.random.default_rng(11)
    ki = rng.integers(-50, 50, n).astype(np.int32)
    kf = rng.uniform(-4.0, 4.0, n).astype(np.float32)
    y = np.full(n, np.nan, np.float32)
    mod.ints(ki, y, n, grid=(n + 127) // 128, block=128, target="c")
    np.testing.assert_allclose(y, ki * 2.0 + 3.0, rtol=1e-6, atol=0)
    y = np.full(n, np.nan, np.float32)
    mod.typed(kf, y, n, grid=(n + 127) // 128, block=128, target="c")
    np.testing.assert_allclose(y, kf * np.float32(0.5) - np.float32(1.0), rtol=1e-6, atol=1e-6)
