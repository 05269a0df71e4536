"""A thread's small local array that lives across barriers and is used at constant indices only
(``unsigned sum[3]`` in radixsort's ``scan4``: ``sum[0] = v.x; sum[1] = v.y + sum[0]; ...``) is
one per-thread scalar per element in the portable form, registers on GPUs, where it was a shared
array with a row per thread (``T.alloc_shared((block_x, 3))``: a shared load or store per access,
and split's scan4 took 1536 more bytes of shared memory per block than the CUDA). An array indexed
by a value keeps its row. Checked: the module's text, its CPU run against numpy, and the sm_90a
CUDA TileLang writes (no GPU here)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

#: each thread scans its four values (the partial sums in part[3]), the block's threads' totals
#: are combined after a barrier, and every value gets the sum of the values before it in the block
SCAN = """
#include <cuda_runtime.h>
__global__ void quad_scan(const int* __restrict__ in, int* __restrict__ out) {
  __shared__ int tot[128];
  int tid = threadIdx.x;
  int g = 4 * (blockIdx.x * blockDim.x + tid);
  int part[3];
  int pick[2];
  part[0] = in[g];
  part[1] = in[g + 1] + part[0];
  part[2] = in[g + 2] + part[1];
  pick[0] = part[2];
  pick[1] = -part[2];
  tot[tid] = in[g + 3] + part[2];
  __syncthreads();
  int pre = 0;
  for (int i = 0; i < tid; i++) pre += tot[i];
  out[g] = pre;
  out[g + 1] = pre + part[0];
  out[g + 2] = pre + part[1];
  out[g + 3] = pre + part[2] + pick[tid & 1] + pick[1 - (tid & 1)];  // + part[2] - part[2]
}
"""


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    pytest.importorskip("tilelang")
    out, (k,) = converted(tmp_path_factory.mktemp("array_elements"), SCAN)
    assert k["form"] == "portable", k["reason"]
    return out


def test_a_constant_index_array_is_a_scalar_per_element(scan):
    text = (scan / "k.py").read_text()
    for k in range(3):
        assert f"part_{k} = alloc_thread((block_x,), T.int32, scope=thread_scope)" in text, text
    assert "part =" not in text and "part[" not in text, text
    assert "part_1[tx] = in_[g + 1] + part_0[tx]" in text, text
    # indexed by a value: its row per thread stays
    assert 'pick = T.alloc_shared((block_x, 2,), T.int32, scope="shared")' in text, text


def test_the_cpu_run_is_each_blocks_exclusive_scan(scan):
    mod = module_of(scan / "k.py")
    blocks, block = 3, 128
    x = np.random.default_rng(3).integers(-1000, 1000, 4 * blocks * block, dtype=np.int32)
    got = np.full(x.shape, -2**31, np.int32)  # poisoned: no sum of these values reaches it
    mod.quad_scan(x, got, grid=blocks, block=block, target="c")
    runs = x.reshape(blocks, 4 * block).astype(np.int64)
    want = (np.cumsum(runs, axis=1) - runs).reshape(-1)
    np.testing.assert_array_equal(got.astype(np.int64), want)


def test_the_cuda_keeps_the_elements_out_of_shared_memory(scan):
    from tests.lowering import lower_sm90
    source = lower_sm90(module_of(scan / "k.py").KERNELS["quad_scan"], (3, 1, 1), (128, 1, 1))
    shared = re.findall(r"__shared__[^;]*;", source)
    assert not any("part" in s for s in shared) and any("pick[256]" in s for s in shared), shared
    assert "int part_0[1];" in source, source  # a thread's register
