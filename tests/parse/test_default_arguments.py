"""Default arguments of device functions (the pool's bmf: ``template <typename T> T
warpReduceSum(T val, const unsigned width = warpSize)`` called as ``warpReduceSum(val)`` in a
kernel that has a parameter ``width`` of its own). In a template clang's call names only the
arguments written, so the inlined body read the kernel's ``width`` for the default: the reduction
ran ``width / 2`` steps. Each call now carries its defaults, read off the callee's declaration."""
from __future__ import annotations

import re

from tests.analysis.support import converted, spec_buffer, spec_kernel, unit

KERNELS = """
#define FULL 0xffffffffu
template <typename T>
__device__ T warp_sum(T v, const unsigned width = warpSize) {
  for (int off = width / 2; off > 0; off /= 2) v += __shfl_down_sync(FULL, v, off);
  return v;
}

template <typename T>
__device__ T block_sum(T v, T* partial, int warps = 4) {
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) partial[threadIdx.x / 32] = v;
  __syncthreads();
  v = threadIdx.x < warps ? partial[threadIdx.x] : T(0);
  if (threadIdx.x < 32) v = warp_sum(v, 4);
  return v;
}

template <typename T>
__global__ void rowsum(const T* __restrict__ x, T* __restrict__ out, int width) {
  T v = x[blockIdx.x * blockDim.x + threadIdx.x];
  v = warp_sum(v);
  if (threadIdx.x % 32 == 0) out[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = v * width;
}

__global__ void blocksum(const float* __restrict__ x, float* __restrict__ out, int width) {
  __shared__ float partial[4];
  float v = block_sum(x[blockIdx.x * blockDim.x + threadIdx.x] * width, partial);
  if (threadIdx.x == 0) out[blockIdx.x] = v;
}
template __global__ void rowsum<float>(const float*, float*, int);
"""

WIDTH = '[[kernel.args]]\nname = "width"\nscalar = "int32"\nvalue = 3\n'
SPEC = (spec_kernel("rowsum", (2, 1, 1), (128, 1, 1), "fp32",
                    spec_buffer("x", "float32", 256, "in", -1.0, 1.0),
                    spec_buffer("out", "float32", 8, "out"), WIDTH).replace("grid =", 'template = ["float"]\ngrid =', 1)
        + spec_kernel("blocksum", (2, 1, 1), (128, 1, 1), "fp32",
                      spec_buffer("x", "float32", 256, "in", -1.0, 1.0),
                      spec_buffer("out", "float32", 2, "out"), WIDTH))


def test_a_call_carries_the_default_arguments_it_leaves_out(tmp_path):
    u = unit(tmp_path, KERNELS)
    calls = {(c.callee, len(c.args)) for f in u.device_functions + u.kernels for c in _calls(f)}
    assert ("warp_sum", 2) in calls and ("block_sum", 3) in calls and ("warp_sum", 1) not in calls, calls


def test_a_defaulted_parameter_is_not_read_as_the_kernels_parameter_of_its_name(tmp_path):
    out, ks = converted(tmp_path, KERNELS, SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in ks} == {"rowsum": "pass", "blocksum": "pass"}, ks
    assert not re.search(r"(?<![\w])width // 2", (out / "k.py").read_text())


def _calls(fn):
    from migrate.ir import model as m
    return [n for n in m.walk(fn.body) if isinstance(n, m.Call) and n.kind == "device"]
