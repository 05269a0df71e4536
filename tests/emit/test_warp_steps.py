"""The barriers of warp-synchronous code's lockstep steps are a warp's own barrier on GPUs. A warp
scan through volatile shared memory (``if (lane >= 1) s[idx] += s[idx - 1];`` ..., no barrier
between the steps: the threads of a warp run them in lockstep) becomes read, barrier, write,
barrier per step (analysis.prepare.lockstep_steps); the steps exchange values only inside a warp,
so on the CUDA target those barriers are ``__syncwarp()`` (``sync_step()``, defined in the
factory), while the CUDA's own ``__syncthreads()`` stay the block's. split's radixSortBlocksKeysK
had 137 block barriers per block against the CUDA's 25 for its two warp scans (1.78x slower on an
H100). A block whose last warp is partial, and the CPU target, keep the block's barrier.
Checked: the module's text, its CPU run against numpy, and the sm_90a CUDA TileLang writes (no GPU
here)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

#: per-warp inclusive scans in lockstep, the warps' totals scanned by the first warp, then combined
SCAN = """
#include <cuda_runtime.h>
#define WARP 32

__device__ int scan_warp(volatile int* s, int idx, int lane) {
  if (lane >= 1) s[idx] += s[idx - 1];
  if (lane >= 2) s[idx] += s[idx - 2];
  if (lane >= 4) s[idx] += s[idx - 4];
  if (lane >= 8) s[idx] += s[idx - 8];
  if (lane >= 16) s[idx] += s[idx - 16];
  return s[idx];
}

__global__ void block_scan(const int* __restrict__ in, int* __restrict__ out) {
  __shared__ int s[128];
  __shared__ int sums[WARP];
  int tid = threadIdx.x;
  int lane = tid & (WARP - 1);
  int warp = tid >> 5;
  s[tid] = in[blockIdx.x * blockDim.x + tid];
  if (tid < WARP) sums[tid] = 0;
  int v = scan_warp(s, tid, lane);
  __syncthreads();
  if (lane == WARP - 1 || tid == blockDim.x - 1) sums[warp] = v;
  __syncthreads();
  if (warp == 0) scan_warp(sums, tid, lane);
  __syncthreads();
  out[blockIdx.x * blockDim.x + tid] = warp > 0 ? v + sums[warp - 1] : v;
}
"""

STEPS = 2 * 5  # two scans of five steps, each with a barrier after its reads and one after its write


@pytest.fixture(scope="module")
def scan(tmp_path_factory):
    pytest.importorskip("tilelang")
    out, (k,) = converted(tmp_path_factory.mktemp("warp_steps"), SCAN)
    assert k["form"] == "portable", k["reason"]
    return out


def test_the_steps_barriers_are_sync_step(scan):
    text = (scan / "k.py").read_text()
    assert 'sync_step = T.sync_warp if target == "cuda" and block_x % 32 == 0 else T.sync_threads' in text, text
    assert len(re.findall(r"^\s+sync_step\(\)  # L", text, re.M)) == 2 * STEPS, text
    assert len(re.findall(r"^\s+T\.sync_threads\(\)  # L", text, re.M)) == 3, text  # the CUDA's own


@pytest.mark.parametrize("block", [128, 48])
def test_the_cpu_run_is_each_blocks_inclusive_scan(scan, block):
    mod = module_of(scan / "k.py")
    blocks = 3
    x = np.random.default_rng(block).integers(-1000, 1000, blocks * block, dtype=np.int32)
    got = np.full(blocks * block, -2**31, np.int32)  # poisoned: no scan of these values reaches it
    mod.block_scan(x, got, grid=blocks, block=block, target="c")
    want = np.cumsum(x.reshape(blocks, block).astype(np.int64), axis=1).reshape(-1)
    np.testing.assert_array_equal(got.astype(np.int64), want)


def test_the_cuda_orders_a_warp_at_the_steps(scan):
    from tests.lowering import lower_sm90
    sig = module_of(scan / "k.py").KERNELS["block_scan"]
    source = lower_sm90(sig, (3, 1, 1), (128, 1, 1))
    assert source.count("__syncwarp()") == 2 * STEPS, source
    assert source.count("__syncthreads()") == 3, source  # was 3 + 2 * STEPS
    # each phase's iteration is its thread (not a loop over several): the exchange stays in the warp
    assert "(s[((int)threadIdx.x)] + s[(((int)threadIdx.x) - 16)])" in source, source
    assert "s[((int)threadIdx.x)] = scan_warp_2_step_5[0];" in source, source


def test_a_partial_last_warp_keeps_the_blocks_barrier(scan):
    from tests.lowering import lower_sm90
    sig = module_of(scan / "k.py").KERNELS["block_scan"]
    source = lower_sm90(sig, (3, 1, 1), (48, 1, 1))
    assert "__syncwarp" not in source, source
    assert source.count("__syncthreads()") == 3 + 2 * STEPS, source
