"""Kernels launched inside host function templates (a stream benchmark's ``template <class T>
void init_arrays(T* a, ...) { init_kernel<<<...>>>(a, ...); }``, a similarity code's ``fill<W,
T><<<...>>>`` in ``template <bool W, typename T> void run(...)``): their template arguments, written
at the launch or deduced from its arguments, take the values of the host template's own instances
(its calls with arguments clang resolved, or from another host template, two levels down), so the
kernels are instantiated (no M1208) and the report lists their instances."""
from __future__ import annotations

from migrate.parse.frontend import parse_file

PROGRAM = """
#include <cuda_runtime.h>
template <typename T>
__global__ void init_kernel(T* a, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}
template <bool W, typename T>
__global__ void fill(T* a, T v, int n) {
  int i = threadIdx.x;
  if (i < n) a[i] = W ? v : -v;
}
template <int N, typename T>
__global__ void scaled(T* a) { a[threadIdx.x] *= N; }
template <typename T>
__global__ void never(T* a) { a[threadIdx.x] = 0; }

template <class T> void init_arrays(T* a, T v, int n) { init_kernel<<<(n + 63) / 64, 64>>>(a, v, n); }
template <bool W, typename T> void run(T* a, int n) { fill<W, T><<<1, 64>>>(a, (T)1, n); }
template <int K, typename T> void scale(T* a) { scaled<2 * K + 1, T><<<1, 64>>>(a); }
template <typename T> void both(T* a, int n) {
  run<true, T>(a, n);
  init_arrays(a, (T)2, n);
}

int main() {
  float* a; double* d;
  cudaMalloc(&a, 256); cudaMalloc(&d, 512);
  init_arrays<float>(a, 1.0f, 64);
  init_arrays(d, 2.0, 64);
  run<false, double>(d, 64);
  both<int>((int*)a, 64);
  scale<3, float>(a);
  return 0;
}
"""


def test_launches_in_host_templates_take_their_instances(tmp_path):
    (tmp_path / "p.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "p.cu")
    found = {k.name: sorted(i.args for i in k.instantiations) for k in parsed.unit.kernels}
    assert found["init_kernel"] == [("double",), ("float",), ("int",)]  # written, deduced, through both<int>
    assert found["fill"] == [("0", "double"), ("1", "int")]  # run<false, double>; run<true, T> in both<int>
    assert found["scaled"] == [("7", "float")]  # 2 * K + 1 at K = 3
    assert found["never"] == []
    unlaunched = {d.message.split("'")[1] for d in parsed.diagnostics if d.code == "M1208"}
    assert unlaunched == {"never"}


def test_explicit_instantiations_are_instances(tmp_path):
    source = """
    template <typename T, int S>
    __global__ void order(T* a, int n) { int i = threadIdx.x; if (i < n) a[i] = a[i] >> S; }
    template __global__ void order<unsigned int, 3>(unsigned int*, int);
    template __global__ void order<int, 1>(int*, int);
    """
    (tmp_path / "e.cu").write_text(source)
    parsed = parse_file(tmp_path / "e.cu")
    (k,) = parsed.unit.kernels
    assert sorted(i.args for i in k.instantiations) == [("int", "1"), ("unsigned int", "3")]
    assert not [d for d in parsed.diagnostics if d.code == "M1208"]
