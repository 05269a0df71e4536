"""An overloaded device function with a primary template beside its explicit specialisations and a
plain overload (``template <typename T> T add(T, T)``, ``add<double>``, ``add<float2>``, ``int
add(int, int)``), the way precision helpers of layer-norm and reduction codes are written, called
on a template's type: in a device function template that a kernel template calls (``s = add(s,
x[j])`` in ``accumulate<T>``), and directly in a kernel template (``scale(x[i], w)`` beside
``scale<double>``).

clang leaves each call unresolved in the template. As C++ does, an instance whose type an overload
or specialisation matches exactly takes it, any other instance the primary template (an exact
template beats a conversion). Where overloads on structs are beside it (``add<float2>``), a traced
dtype does not tell them apart: the device function is inlined and each instance's types pick
(the kernel is converted per instance); where there are none, the call looks the overload up by
the dtype when TileLang traces the kernel, the primary template its default. The specialisations
differ from the primary template on purpose, so a wrong choice fails the replay of the program's
own launches (compiled with g++) on the CPU."""
from __future__ import annotations

import json

import pytest

from migrate.runtime.build import find_cxx
from tests.analysis.support import checked, program_converted

PROGRAM = """
#include <cstdio>
#include <cuda_runtime.h>
template <typename T> __device__ __forceinline__ T add(T a, T b) { return a + b; }
template <> __device__ __forceinline__ double add<double>(double a, double b) { return a + b + 0.5; }
template <> __device__ __forceinline__ float2 add<float2>(float2 a, float2 b) { return make_float2(a.x + b.x, a.y - b.y); }
__device__ __forceinline__ int add(int a, int b) { return a + 2 * b; }

template <typename T> __device__ __forceinline__ T scale(T a, T w) { return a * w; }
template <> __device__ __forceinline__ double scale<double>(double a, double w) { return a * w - 1.0; }

template <typename T>
__device__ T accumulate(const T* x, int i, int n) {
  T s = x[i];
  for (int k = 1; k < 4; ++k) s = add(s, x[(i + k) % n]);
  return s;
}

template <typename T>
__global__ void smooth(const T* __restrict__ x, T* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = accumulate(x, i, n);
}

template <typename T>
__global__ void weigh(const T* __restrict__ x, T* __restrict__ y, T w, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = scale(x[i], w);
}

int main() {
  const int n = 300;
  float *xf, *yf; double *xd, *yd; int *xi, *yi;
  cudaMallocManaged(&xf, n * 4); cudaMallocManaged(&yf, n * 4);
  cudaMallocManaged(&xd, n * 8); cudaMallocManaged(&yd, n * 8);
  cudaMallocManaged(&xi, n * 4); cudaMallocManaged(&yi, n * 4);
  for (int i = 0; i < n; i++) {
    xf[i] = (i % 17) * 0.3f - 2.5f; xd[i] = (i % 13) * 0.4 - 2.0; xi[i] = (i * 7) % 23 - 11;
  }
  smooth<float><<<(n + 127) / 128, 128>>>(xf, yf, n);
  smooth<double><<<(n + 127) / 128, 128>>>(xd, yd, n);
  smooth<int><<<(n + 127) / 128, 128>>>(xi, yi, n);
  weigh<float><<<(n + 127) / 128, 128>>>(xf, yf, 1.5f, n);
  weigh<double><<<(n + 127) / 128, 128>>>(xd, yd, 2.5, n);
  cudaDeviceSynchronize();
  printf("%f %f %d\\n", yf[5], yd[5], yi[5]);
  return 0;
}
"""


def test_each_instance_takes_its_specialisation_or_the_primary_template(tmp_path):
    out = program_converted(tmp_path, PROGRAM, "acc.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert not [d for k in kernels.values() for d in k["diagnostics"] if d["code"] == "M1209"]
    smooth, weigh = kernels["smooth"], kernels["weigh"]
    assert smooth["form"] == "tile" and smooth["reason"].startswith("converted per instance (3)"), smooth["reason"]
    assert weigh["form"] == "tile" and not weigh["reason"].startswith("converted per instance"), weigh["reason"]
    text = (out / "acc.py").read_text()
    # per instance: float the primary template (add), double its specialisation (add_2), int the
    # plain overload (add_4)
    parts = text.split("def make_smooth__")
    assert [p.split("(")[0] for p in parts[1:]] == ["float", "double", "int"]
    for part, callee in zip(parts[1:], ("add(", "add_2(", "add_4(")):
        body = part.split("\ndef ")[0]
        assert f"= {callee}accumulate" in body, callee
    # traced: the double's specialisation by its dtype, the primary template for any other
    assert '{"float64": scale_2}.get(str(T_), scale)(' in text


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_the_choices_replay_the_programs_launches_on_the_cpu(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "acc.cu")
    status, checks = checked(out, "--run", "")
    assert status == 0, checks
    assert checks["smooth"]["inputs"] == "trace" and checks["smooth"]["message"].startswith("3 recorded launches")
    assert checks["weigh"]["inputs"] == "trace" and checks["weigh"]["message"].startswith("2 recorded launches")
    # the primary template and the specialisation are not the same function: swapped, checks fail
    module = out / "acc.py"
    text = module.read_text()
    swapped = text.replace('{"float64": scale_2}.get(str(T_), scale)', '{"float64": scale}.get(str(T_), scale_2)')
    float_part, rest = swapped.split("def make_smooth__double(")
    module.write_text(float_part.replace("= add(accumulate", "= add_4(accumulate") + "def make_smooth__double(" + rest)
    assert module.read_text() != text
    status, checks = checked(out, "--run", "")
    assert status == 1
    assert checks["smooth"]["status"] == "fail" and checks["weigh"]["status"] == "fail"


AMBIGUOUS = """
#include <cuda_runtime.h>
template <typename K, typename V> struct Pair { K k; V v; };
template <typename T> __device__ T swap_lanes(const T v, int m) { return __shfl_xor_sync(0xffffffff, v, m); }
template <typename K, typename V> __device__ Pair<K, V> swap_lanes(const Pair<K, V>& p, int m) {
  return Pair<K, V>{__shfl_xor_sync(0xffffffff, p.k, m), __shfl_xor_sync(0xffffffff, p.v, m)};
}
template <typename T> __device__ T lower_of(T x, int m) { T y = swap_lanes(x, m); return y < x ? y : x; }
__global__ void lows(const int* x, int* y) { y[threadIdx.x] = lower_of(x[threadIdx.x], 1); }
"""


def test_two_primary_templates_stay_a_coded_diagnostic(tmp_path):
    """Two function templates of one name (one on ``T``, one on ``Pair<K, V>``, as a warp sort's
    shuffles are written): which one an instance reaches is not told by a number type, so the call
    keeps its diagnostic (M1209) rather than guessing."""
    from migrate.parse.frontend import parse_file
    (tmp_path / "amb.cu").write_text(AMBIGUOUS)
    parsed = parse_file(tmp_path / "amb.cu")
    assert [d.code for d in parsed.kernel_errors("lows")] == ["M1209"]
    assert "swap_lanes" in parsed.kernel_errors("lows")[0].message
