"""Volatile global bytes are CUDA's own byte loads and stores in a portable kernel. Other volatile
global elements are relaxed atomics (threads of other blocks poll them), but libcu++ has no one-byte
atomic store: it writes a byte through a 32-bit compare-and-swap loop, and each load became a
16-bit load and a shift. mis's ``findmins`` (``volatile unsigned char* nstat``, a graph's vertex
states read and knocked out by neighbours) ran 1.9x slower than the CUDA on an H100 for it. The
bytes now go through extern helpers whose bodies are the volatile access itself (the CUDA's
``ld/st.volatile.global.u8``). On TileLang's C target (threads run one at a time) they stay relaxed atomics.
Checked: the module's text, its CPU run against a Python run of the same schedule, and the sm_90a
CUDA TileLang writes (no GPU here)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
typedef unsigned char state_t;
static const state_t IN = 0xfe;
static const state_t OUT = 0;

// a pending vertex (odd state) that outranks every neighbour joins the set and knocks its
// neighbours out; states live in volatile memory that the other threads poll
__global__ void peel(const int* __restrict__ idx, const int* __restrict__ nbr,
                     volatile state_t* const __restrict__ st, int n)
{
  const int incr = gridDim.x * blockDim.x;
  for (int v = blockIdx.x * blockDim.x + threadIdx.x; v < n; v += incr) {
    const state_t sv = st[v];
    if (sv & 1) {
      int i = idx[v];
      while (i < idx[v + 1] && (sv > st[nbr[i]] || (sv == st[nbr[i]] && v > nbr[i]))) i++;
      if (i == idx[v + 1]) {
        for (int j = idx[v]; j < idx[v + 1]; j++) st[nbr[j]] = OUT;
        st[v] = IN;
      }
    }
  }
}

int main() {
  int *idx, *nbr; state_t *st;
  cudaMalloc(&idx, 101 * sizeof(int)); cudaMalloc(&nbr, 400 * sizeof(int));
  cudaMalloc(&st, 100);
  peel<<<2, 32>>>(idx, nbr, st, 100);
  cudaDeviceSynchronize();
  return 0;
}
"""

IN, OUT = 0xFE, 0


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("volatile_bytes"), PROGRAM, "k.cu")


def test_volatile_bytes_go_through_the_byte_helpers(converted):
    text = (converted / "k.py").read_text()
    assert "(portable)" in text or "peel: portable" in text, text
    assert "prelude=cuda_math.externs_for(['c2t_volatile_load_u8', 'c2t_volatile_store_u8'], target)" in text
    assert len(re.findall(r"cuda_math\.volatile_load\(st\[", text)) == 3, text
    assert len(re.findall(r"cuda_math\.volatile_store\(st\[", text)) == 2, text
    assert "atomic_store" not in text and "atomic_load" not in text


def _graph(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    lists = [sorted(set(rng.integers(0, n, rng.integers(1, 6)).tolist()) - {v}) for v in range(n)]
    idx = np.zeros(n + 1, np.int32)
    idx[1:] = np.cumsum([len(x) for x in lists])
    return idx, np.array([u for x in lists for u in x], np.int32)


def _serial(idx, nbr, st, n, grid, block):
    """The kernel run one thread after another (block by block, thread by thread, each thread's
    whole loop): the schedule a C target's phase runs, and one the CUDA allows."""
    st = st.copy()
    for b in range(grid):
        for t in range(block):
            for v in range(b * block + t, n, grid * block):
                sv = int(st[v])
                if sv & 1:
                    i = int(idx[v])
                    while i < idx[v + 1] and (sv > st[nbr[i]] or (sv == st[nbr[i]] and v > nbr[i])):
                        i += 1
                    if i == idx[v + 1]:
                        st[nbr[idx[v]:idx[v + 1]]] = OUT
                        st[v] = IN
    return st


def test_the_cpu_run_matches_the_serial_schedule(converted):
    mod = module_of(converted / "k.py")
    rng = np.random.default_rng(5)
    n = 100
    idx, nbr = _graph(n, rng)
    st = (rng.integers(0, 127, n) * 2 + 1).astype(np.uint8)     # every vertex pending, odd
    want = _serial(idx, nbr, st, n, 2, 32)
    assert 0 < (want == IN).sum() < n and (want == OUT).any()     # the run decides something
    got = st.copy()
    mod.peel(idx, nbr, got, n, grid=2, block=32, target="c")
    np.testing.assert_array_equal(got, want)


def test_the_cuda_accesses_bytes_without_atomics(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["peel"], (2, 1, 1), (32, 1, 1))
    assert "return *(volatile unsigned char*)x;" in source
    assert "*(volatile unsigned char*)x = y; return 0;" in source
    assert re.search(r"c2t_volatile_store_u8\(\(&\(st\[", source), source
    # no atomic byte access: libcu++'s one-byte atomic store is a compare-and-swap loop
    assert "atomic_ref" not in source and "AtomicStore" not in source and "AtomicLoad" not in source, source
