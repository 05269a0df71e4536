"""A ``__shared__`` variable holding a pointer (``__shared__ int *Q_row;`` that thread 0 points at
the block's row for every thread, ``__shared__ T *s, *sn;`` swapped between two arrays) has no
TileLang form; the kernel is refused with the variable named, where it used to be refused with
"type 'int32*' has no TileLang dtype" at the kernel's first line."""
from __future__ import annotations

from tests.analysis.support import converted

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


def test_a_shared_pointer_is_refused_with_its_name(tmp_path):
    _, rows = converted(tmp_path, KERNEL, expect_ok=False)
    kernels = {r["kernel"]: r for r in rows}
    for name, var, line in (("rows", "Q_row", 4), ("swap_halves", "s", 13)):
        k = kernels[name]
        assert k["form"] == "unsupported", k
        errors = [d for d in k["diagnostics"] if d["severity"] == "error"]
        assert errors and errors[0]["code"] == "M3001", errors
        assert f"__shared__ variable '{var}' holds a pointer" in errors[0]["message"], errors
        assert errors[0]["line"] == line, errors
