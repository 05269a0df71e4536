"""An unsigned index into a global buffer that TileLang cannot bound from the launch (a column
walked in a ``while`` loop through a ``__device__`` array, as the pool's Hungarian solver takes
column minima): TileLang guards
the access, and TVM's bound solver negated the buffer's extent in the index's unsigned type
("Literal value -4096 is negative for unsigned integer type uint32"), so the kernel did not build
for the GPU. Such an index is printed as its int64 value; the kernel checks equal on the CPU and
lowers for sm_90a. Indices TileLang bounds, and shared arrays (never guarded), print as they were."""
from __future__ import annotations

import importlib.util

from tests.analysis.support import converted, spec_kernel
from tests.lowering import lower_sm90

COLUMN_MINIMA = """
#define N 64
#define COLS 4
#define THREADS 64
__device__ int m[N * N];
__device__ int out[N];
__global__ void column_minima() {
  __shared__ int s[THREADS];
  unsigned int tid = threadIdx.x;
  unsigned int c = blockIdx.x * COLS + tid % COLS;
  unsigned int l = tid / COLS;
  int best = 2147483647;
  while (l < N) {
    unsigned int i = c * N + l;
    best = min(best, m[i]);
    l += THREADS / COLS;
  }
  s[tid] = best;
  __syncthreads();
  for (unsigned int k = THREADS / 2; k >= COLS; k >>= 1) {
    if (tid < k) s[tid] = min(s[tid], s[tid + k]);
    __syncthreads();
  }
  if (tid < COLS) out[blockIdx.x * COLS + tid] = s[tid];
}
"""

SPEC = spec_kernel("column_minima", (16, 1, 1), (64, 1, 1), "exact") + (
    '[[kernel.symbols]]\nname = "m"\ndtype = "int32"\nelements = 4096\nrange = [-1000, 1000]\n'
    '[[kernel.symbols]]\nname = "out"\ndtype = "int32"\nelements = 64\nrange = [-7, -7]\n')


def test_an_unsigned_index_walked_in_a_loop_checks_equal_and_lowers_for_cuda(tmp_path):
    out, (k,) = converted(tmp_path, COLUMN_MINIMA, SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "m[T.Cast(T.int64, i)]" in text  # the guarded global read
    assert "s[tid]" in text or "s[tid[tx]]" in text  # shared arrays keep their unsigned index
    spec = importlib.util.spec_from_file_location("k_unsigned_index", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["column_minima"], (16, 1, 1), (64, 1, 1))
    assert "min(" in source
