"""Tiled loops (analysis.lift.tile_loops): a block-uniform loop whose barriers separate map
phases (a tile of points loaded into shared memory, then read by every thread) is lifted with
its loop serial, each phase a loop over the block's lanes and the values a thread carries
across the phases in lane buffers. Checked on the CPU against the CUDA (``--check cpu``) and
against numpy, outputs poisoned; kernels that exchange values through global memory across a
barrier, or set a block value under a lane's condition, keep the portable form."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import factory, note
from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar

#: an n-body sum: each thread's own point against every point, 64 at a time through shared
#: memory; the tail tile partly loaded, the threads past n in the last block load too but store
#: nothing
NBODY = """
#include <cuda_runtime.h>
#define TILE 64
__global__ void potential(const float* __restrict__ px, const float* __restrict__ py,
                          const float* __restrict__ q, float* __restrict__ out, int n)
{
  __shared__ float sx[TILE];
  __shared__ float sy[TILE];
  __shared__ float sq[TILE];
  int gid = blockIdx.x * blockDim.x + threadIdx.x;
  float mx = gid < n ? px[gid] : 0.0f;
  float my = gid < n ? py[gid] : 0.0f;
  float acc = 0.0f;
  for (int t = 0; t < n; t += TILE) {
    int j = t + threadIdx.x;
    if (j < n) {
      sx[threadIdx.x] = px[j];
      sy[threadIdx.x] = py[j];
      sq[threadIdx.x] = q[j];
    }
    __syncthreads();
    int count = min(TILE, n - t);
    for (int k = 0; k < count; k++) {
      float dx = mx - sx[k], dy = my - sy[k];
      acc += sq[k] / sqrtf(dx * dx + dy * dy + 0.01f);
    }
    __syncthreads();
  }
  if (gid < n) out[gid] = acc;
}
int main()
{
  float *x, *y, *q, *o;
  cudaMalloc(&x, 4 * 1000); cudaMalloc(&y, 4 * 1000); cudaMalloc(&q, 4 * 1000); cudaMalloc(&o, 4 * 1000);
  potential<<<16, 64>>>(x, y, q, o, 1000);
}
"""

NBODY_SPEC = spec_kernel("potential", (4, 1, 1), (64, 1, 1), "fp32_accum",
                         spec_buffer("px", "float32", 230, "in", -1, 1),
                         spec_buffer("py", "float32", 230, "in", -1, 1),
                         spec_buffer("q", "float32", 230, "in", 0.5, 2),
                         spec_buffer("out", "float32", 256, "out"),
                         spec_scalar("n", "int32", 230))


def _potential(px, py, q):
    dx = px[:, None].astype(np.float64) - px[None, :]
    dy = py[:, None].astype(np.float64) - py[None, :]
    return (q[None, :] / np.sqrt(dx * dx + dy * dy + np.float32(0.01))).sum(axis=1)


def test_tiled_nbody_loop_lifts_and_agrees_with_cuda_and_numpy(tmp_path):
    import torch

    out, kernels = converted(tmp_path, NBODY, NBODY_SPEC)
    assert [(k["kernel"], k["form"], k["check"]["status"]) for k in kernels] == [("potential", "tile", "pass")]
    body = factory((out / "k.py").read_text(), "potential")
    assert "T.sync_threads" not in body and "get_thread_binding" not in body
    assert "acc = alloc_lanes((block_x,), T.float32)" in body  # carried across the tiles
    assert "for lane in lane_loop(block_x):" in body and "sx = T.alloc_shared((64,)" in body
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(11)
    for n, blocks in ((230, 4), (64, 1), (97, 2)):
        px, py = (rng.uniform(-1, 1, n).astype(np.float32) for _ in range(2))
        q = rng.uniform(0.5, 2, n).astype(np.float32)
        res = torch.full((blocks * 64,), float("nan"), dtype=torch.float32)
        mod.potential(*(torch.from_numpy(a) for a in (px, py, q)), res, n, grid=blocks, block=64, target="c")
        got = res.numpy()
        np.testing.assert_allclose(got[:n], _potential(px, py, q), rtol=1e-4)
        assert np.isnan(got[n:]).all()  # the threads past n store nothing


#: the way interpolation codes write it: threads past the points leave first (they load nothing
#: and take part in no phase), a block value the loop's bound reads computed after the exit
EARLY_EXIT = """
#include <cuda_runtime.h>
#define BS 32
__global__ void idw(const float* __restrict__ dx, const float* __restrict__ dz, int dnum,
                    const float* __restrict__ ix, float* __restrict__ iz, int inum)
{
  __shared__ float sdx[BS];
  __shared__ float sdz[BS];
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  if (tid >= inum) return;
  int part = (dnum - 1) / BS;
  float me = ix[tid];
  float num = 0.f, den = 0.f, w;
  int m, e;
  int lid = threadIdx.x;
  for (m = 0; m <= part; m++) {
    int live = min(BS, dnum - BS * m);
    if (lid < live) {
      sdx[lid] = dx[lid + BS * m];
      sdz[lid] = dz[lid + BS * m];
    }
    __syncthreads();
    for (e = 0; e < live; e++) {
      w = 1.f / (fabsf(me - sdx[e]) + 0.5f);
      den += w;
      num += w * sdz[e];
    }
    __syncthreads();
  }
  iz[tid] = num / den;
}
int main()
{
  float *a, *b, *c, *d;
  cudaMalloc(&a, 4 * 100); cudaMalloc(&b, 4 * 100); cudaMalloc(&c, 4 * 64); cudaMalloc(&d, 4 * 64);
  idw<<<2, 32>>>(a, b, 100, c, d, 64);
}
"""

EARLY_EXIT_SPEC = spec_kernel("idw", (2, 1, 1), (32, 1, 1), "fp32_accum",
                              spec_buffer("dx", "float32", 100, "in", -2, 2),
                              spec_buffer("dz", "float32", 100, "in", -1, 1),
                              spec_scalar("dnum", "int32", 100),
                              spec_buffer("ix", "float32", 64, "in", -2, 2),
                              spec_buffer("iz", "float32", 64, "out"),
                              spec_scalar("inum", "int32", 64))


def test_early_exit_before_the_tiled_loop_keeps_its_threads_out_of_every_phase(tmp_path):
    import torch

    out, kernels = converted(tmp_path, EARLY_EXIT, EARLY_EXIT_SPEC)
    assert [(k["kernel"], k["form"], k["check"]["status"]) for k in kernels] == [("idw", "tile", "pass")]
    body = factory((out / "k.py").read_text(), "idw")
    # the loop's bound is the block's, computed before the lanes' guarded statements
    assert body.index("part = T.truncdiv(dnum - 1, 32)") < body.index("while m <= part:")
    assert "e = alloc_lanes" not in body  # set before it is read in every phase: a local of the lanes
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(4)
    dx, dz = rng.uniform(-2, 2, 100).astype(np.float32), rng.uniform(-1, 1, 100).astype(np.float32)
    ix = rng.uniform(-2, 2, 64).astype(np.float32)
    iz = torch.full((64,), float("nan"), dtype=torch.float32)
    mod.idw(torch.from_numpy(dx), torch.from_numpy(dz), 100, torch.from_numpy(ix), iz, 64, grid=2, block=32,
            target="c")
    w = 1 / (np.abs(ix[:, None].astype(np.float64) - dx[None, :]) + 0.5)
    np.testing.assert_allclose(iz.numpy(), (w * dz).sum(axis=1) / w.sum(axis=1), rtol=1e-4, atol=1e-5)


#: the lanes hand values on through global memory: the barrier orders it in CUDA, TileLang orders
#: shared memory only
THROUGH_GLOBAL = """
#include <cuda_runtime.h>
__global__ void relay(float* buf, float* out, int steps)
{
  __shared__ float s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int t = 0; t < steps; t++) {
    buf[i] = buf[i] * 0.5f + 1.0f;
    s[threadIdx.x] = buf[i];
    __syncthreads();
    out[i] += buf[blockIdx.x * blockDim.x + (threadIdx.x + 1) % blockDim.x] + s[0];
    __syncthreads();
  }
}
"""

#: the loop's bound read from memory after the early exit: only the threads that stay read it,
#: and the block cannot compute it before them (it may not read memory they would not)
BOUND_AFTER_EXIT = """
__global__ void bound(const int* __restrict__ counts, const float* __restrict__ x, float* __restrict__ out, int n)
{
  __shared__ float s[64];
  int tid = threadIdx.x, gid = blockIdx.x * 64 + tid;
  if (gid >= n) return;
  int tiles = counts[blockIdx.x];
  float acc = 0.f;
  for (int t = 0; t < tiles; t++) {
    s[tid] = x[t * 64 + tid];
    __syncthreads();
    for (int k = 0; k < 64; k++) acc += s[k];
    __syncthreads();
  }
  out[gid] = acc;
}
"""


@pytest.mark.parametrize("source, reason", [
    (THROUGH_GLOBAL, "lanes exchange 'buf' through memory across a barrier"),
    (BOUND_AFTER_EXIT, "'tiles', a value the block's loops or branches read, is set at line"),
])
def test_tiled_loops_that_need_more_than_shared_memory_stay_portable(tmp_path, source, reason):
    _, kernels = converted(tmp_path, "#include <cuda_runtime.h>\n" + source)
    (k,) = kernels
    assert k["form"] == "portable" and reason in note(k), note(k)
