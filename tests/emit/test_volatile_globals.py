"""Volatile global memory in kernels whose threads may exchange values through it (portable and
simt forms), as the pool's Barnes-Hut tree summation spins on ``volatile float4* posMassd`` cells
that other blocks fill and reads their ``volatile int* countd``: TileLang has no volatile buffer,
and its plain loads may be served from the SM's L1, stale where another block wrote the value
(163 of bh's 200000 counts differed on the H200). Such loads and stores are relaxed atomics
(``T.atomic_load``/``T.atomic_store``, coherent across the GPU), also through a ``float4`` buffer
taken apart into floats; plain loads on the CPU target, where the kernel checks equal. Tile forms
(elements proven independent) and atomics' addresses keep plain elements."""
from __future__ import annotations

import importlib.util

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar
from tests.lowering import lower_sm90

#: Each cell of the upper half sums its four children of the lower half (a tree level), counts
#: through ``volatile int*``, weights through ``volatile float4*``, the count exchanged with the
#: neighbouring thread through shared memory (a barrier: the portable form).
TALLY = """
__global__ void tally(volatile int* __restrict__ counts, volatile float4* __restrict__ cells,
                      const int* __restrict__ child, int* __restrict__ hits, int n) {
  __shared__ int s[64];
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  int cnt = 0;
  float w = 0.0f;
  if (k < n) {
    for (int i = 0; i < 4; i++) {
      int ch = child[k * 4 + i];
      if (ch >= 0) {
        cnt += counts[ch];
        w += cells[ch].w;
      }
    }
    atomicAdd(&hits[k % 4], cnt);
  }
  s[threadIdx.x] = cnt;
  __syncthreads();
  if (k < n) {
    counts[n + k] = s[threadIdx.x ^ 1];
    cells[n + k].w = w;
    cells[n + k].x = w * 0.5f;
  }
}
"""

TALLY_SPEC = spec_kernel("tally", (2, 1, 1), (64, 1, 1), "fp32",
                         spec_buffer("counts", "int32", 256, "inout", 0, 9),
                         spec_buffer("cells", "float32", 1024, "inout", 0.5, 2.0),
                         spec_buffer("child", "int32", 512, "in", -3, 127),
                         spec_buffer("hits", "int32", 4, "inout", 0, 3),
                         spec_scalar("n", "int32", 128))


def test_volatile_global_memory_is_read_and_written_through_relaxed_atomics(tmp_path):
    out, (k,) = converted(tmp_path, TALLY, TALLY_SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert 'cnt = cnt + T.atomic_load(counts[ch], "relaxed")' in text
    assert 'T.atomic_load(cells[ch * 4 + 3], "relaxed")' in text
    assert 'T.atomic_store(cells[(n + k) * 4 + 0], w[tx] * 0.5, "relaxed")' in text
    assert "T.atomic_add(hits[" in text  # an atomic's own element stays plain
    assert "child[k * 4 + i]" in text and 'T.atomic_load(child' not in text
    spec = importlib.util.spec_from_file_location("k_volatile", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["tally"], (2, 1, 1), (64, 1, 1))
    assert source.count("AtomicLoad(") == 2 and source.count("AtomicStore(") == 3, source
