"""A ``__shared__`` variable holding a pointer (``__shared__ int *Q_row;`` that thread 0 points at
the block's row for every thread, ``__shared__ T *s, *sn;`` set to two arrays): once refused with
the variable named (it had been refused with "type 'int32*' has no TileLang dtype" at the kernel's
first line), now held as a ``__shared__`` offset and a choice of array
(analysis.prepare.moving_pointers), checked against the CUDA on the CPU."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cstddef>
__global__ void rows(const int* __restrict__ Q, int* out, size_t pitch, int n) {
  __shared__ int *Q_row;
  if (threadIdx.x == 0) Q_row = (int*)((char*)Q + blockIdx.x * pitch);
  __syncthreads();
  for (int k = threadIdx.x; k < n; k += blockDim.x) out[blockIdx.x * n + k] = Q_row[k] + 1;
}

template <class T>
__global__ void swap_halves(T* d) {
  __shared__ T a[64], b[64];
  __shared__ T *s, *sn;
  a[threadIdx.x] = d[threadIdx.x];
  if (threadIdx.x == 0) { s = a; sn = b; }
  __syncthreads();
  sn[63 - threadIdx.x] = s[threadIdx.x];
  __syncthreads();
  d[threadIdx.x] = sn[threadIdx.x];
}

void host(float* d) { swap_halves<float><<<1, 64>>>(d); }
"""


SPEC = (spec_kernel("rows", (3, 1, 1), (32, 1, 1), "exact",
                    spec_buffer("Q", "int32", 3 * 48, "in", -50, 50), spec_buffer("out", "int32", 3 * 40, "out"),
                    spec_scalar("pitch", "uint64", 48 * 4), spec_scalar("n", "int32", 40))
        + spec_kernel("swap_halves", (1, 1, 1), (64, 1, 1), "exact",
                      spec_buffer("d", "float32", 64, "inout", -4, 4), template="float"))


def test_a_shared_pointer_is_an_offset_checked_on_the_cpu(tmp_path):
    _, rows = converted(tmp_path, KERNEL, SPEC)
    kernels = {r["kernel"]: r for r in rows}
    for name in ("rows", "swap_halves"):
        k = kernels[name]
        assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["form"], k["check"])
        assert not [d for d in k["diagnostics"] if d["severity"] == "error"], k["diagnostics"]
