"""A device function overloaded on number types, called in a kernel template on the template's
type (``mix(keys[i])`` on a ``K`` key beside ``mix(uint32_t)`` and ``mix(uint64_t)``; ``expo(x)``
beside ``expo(float)`` and ``expo(double)``), the way hash tables and math helpers are written:
clang leaves the call unresolved in the template, and each instance reaches its own overload.
The call looks the overload up by the instance's dtype when TileLang traces the kernel; each
instance is replayed from the program's own run on the CPU (GCC spells one ``long unsigned int``)."""
from __future__ import annotations

import json

import pytest

from migrate.runtime.build import find_cxx
from tests.analysis.support import checked, program_converted

PROGRAM = """
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>
__device__ __forceinline__ uint32_t mix(uint32_t x) { x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; return x; }
__device__ __forceinline__ uint64_t mix(uint64_t x) { x ^= x >> 33; x *= 0xff51afd7ed558ccdULL; x ^= x >> 33; return x; }
__device__ __forceinline__ float expo(float x) { return expf(x); }
__device__ __forceinline__ double expo(double x) { return exp(x); }
__device__ void keep(float* p, float v) { *p = v; }
__device__ void keep(double* p, double v) { *p = v; }

template <typename K>
__global__ void hash_keys(const K* keys, K* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    K h = mix(keys[i]);
    out[i] = h % 1000;
  }
}

template <typename T>
__global__ void softish(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = expo(x[i]) / (expo(x[i]) + T(1));
}

template <typename T>
__global__ void kept(const T* x, T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) keep(&y[i], x[i]);
}

int main() {
  const int n = 300;
  uint32_t *k32, *o32; uint64_t *k64, *o64; float *xf, *yf; double *xd, *yd;
  cudaMallocManaged(&k32, n * 4); cudaMallocManaged(&o32, n * 4);
  cudaMallocManaged(&k64, n * 8); cudaMallocManaged(&o64, n * 8);
  cudaMallocManaged(&xf, n * 4); cudaMallocManaged(&yf, n * 4);
  cudaMallocManaged(&xd, n * 8); cudaMallocManaged(&yd, n * 8);
  for (int i = 0; i < n; i++) {
    k32[i] = i * 2654435761u; k64[i] = (uint64_t)i * 11400714819323198485ull;
    xf[i] = (i % 17) * 0.3f - 2.5f; xd[i] = (i % 13) * 0.4 - 2.0;
  }
  hash_keys<uint32_t><<<(n + 127) / 128, 128>>>(k32, o32, n);
  hash_keys<uint64_t><<<(n + 127) / 128, 128>>>(k64, o64, n);
  softish<float><<<(n + 127) / 128, 128>>>(xf, yf, n);
  softish<double><<<(n + 127) / 128, 128>>>(xd, yd, n);
  kept<float><<<(n + 127) / 128, 128>>>(xf, yf, n);
  kept<double><<<(n + 127) / 128, 128>>>(xd, yd, n);
  cudaDeviceSynchronize();
  printf("%u %llu %f %f\\n", o32[5], (unsigned long long)o64[5], yf[5], yd[5]);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_each_instance_reaches_its_own_overload(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "ov.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["hash_keys"]["form"] == kernels["softish"]["form"] == "tile"
    # overloads on pointers are not told apart by a dtype: the template is converted per instance
    # instead (migrate.emit.dispatch; tests/parse/test_instance_dispatch.py), its run checked below
    assert kernels["kept"]["form"] == "tile" and kernels["kept"]["reason"].startswith("converted per instance")
    text = (out / "ov.py").read_text()
    assert '{"uint32": mix, "uint64": mix_2}[str(K)](keys[i])' in text
    status, checks = checked(out, "--run", "")
    assert status == 0
    for name in ("hash_keys", "softish", "kept"):  # kept: each recorded instance replayed into its own
        assert checks[name]["inputs"] == "trace" and checks[name]["message"].startswith("2 recorded launches"), \
            checks[name]
    # the other instance's overload is not the same function: swapped, the check fails
    module = out / "ov.py"
    module.write_text(text.replace('{"uint32": mix, "uint64": mix_2}', '{"uint32": mix_2, "uint64": mix}'))
    status, checks = checked(out, "--run", "")
    assert status == 1
    assert checks["hash_keys"]["status"] == "fail" and checks["softish"]["status"] == "pass"
