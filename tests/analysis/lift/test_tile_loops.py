"""Tiled loops (analysis.lift.tile_loops): a block-uniform loop whose barriers separate map
phases (a tile of points loaded into shared memory, then read by every thread) is lifted with
its loop serial, each phase a loop over the block's lanes and the values a thread carries
across the phases in lane buffers. Checked on the CPU against the CUDA (``--check cpu``) and
against numpy, outputs poisoned; kernels that exchange values through global memory across a
barrier keep the CUDA barriers; kernels whose block values only some threads compute, or whose
lanes compare and exchange shared cells, keep the portable form."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.lift.support import factory, note
from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar

#: an n-body sum the way molecular codes write it: each thread's own point against every point,
#: a block of them at a time through dynamic shared memory (three values a point); the last tile
#: shrinks the block value ``lsize`` that bounds the inner loop
NBODY = """
#include <cuda_runtime.h>
__global__ void potential(const float* __restrict__ px, const float* __restrict__ py,
                          const float* __restrict__ q, float* __restrict__ out, int n)
{
  extern __shared__ float sh[];
  int lid = threadIdx.x;
  int lsize = blockDim.x;
  int gid = blockIdx.x * lsize + lid;
  float mx = px[gid], my = py[gid];
  float acc = 0.0f;
  for (int j = 0; j < n; j += lsize) {
    if (j + lsize > n) lsize = n - j;
    if (j + lid < n) {
      sh[lid * 3] = px[j + lid];
      sh[lid * 3 + 1] = py[j + lid];
      sh[lid * 3 + 2] = q[j + lid];
    }
    __syncthreads();
    for (int k = 0; k < lsize; k++) {
      float dx = mx - sh[k * 3], dy = my - sh[k * 3 + 1];
      acc += sh[k * 3 + 2] / sqrtf(dx * dx + dy * dy + 0.01f);
    }
    __syncthreads();
  }
  out[gid] = acc;
}
int main()
{
  float *x, *y, *q, *o;
  cudaMalloc(&x, 4 * 1024); cudaMalloc(&y, 4 * 1024); cudaMalloc(&q, 4 * 1024); cudaMalloc(&o, 4 * 1024);
  potential<<<16, 64, 64 * 3 * sizeof(float)>>>(x, y, q, o, 1000);
}
"""

NBODY_SPEC = spec_kernel("potential", (4, 1, 1), (64, 1, 1), "fp32_accum",
                         spec_buffer("px", "float32", 256, "in", -1, 1),
                         spec_buffer("py", "float32", 256, "in", -1, 1),
                         spec_buffer("q", "float32", 256, "in", 0.5, 2),
                         spec_buffer("out", "float32", 256, "out"),
                         spec_scalar("n", "int32", 230)).replace(
    "block = [64, 1, 1]\n", "block = [64, 1, 1]\nshared_bytes = 768\n")


def _potential(px, py, q, n):
    dx = px[:, None].astype(np.float64) - px[None, :n]
    dy = py[:, None].astype(np.float64) - py[None, :n]
    return (q[None, :n] / np.sqrt(dx * dx + dy * dy + np.float32(0.01))).sum(axis=1)


def test_tiled_nbody_loop_lifts_and_agrees_with_cuda_and_numpy(tmp_path):
    import torch

    out, kernels = converted(tmp_path, NBODY, NBODY_SPEC)
    assert [(k["kernel"], k["form"], k["check"]["status"]) for k in kernels] == [("potential", "tile", "pass")]
    body = factory((out / "k.py").read_text(), "potential")
    assert "get_thread_binding" not in body and "T.Parallel(block_x)" not in body
    assert "acc = alloc_lanes((block_x,), T.float32)" in body  # carried across the tiles
    assert "for lane in lane_loop(block_x):" in body and "sh = T.alloc_shared((shared_bytes // 4,)" in body
    loop = body.index("while j < n:")
    # the block's own value, computed by the block (not by each lane) before the loads
    assert loop < body.index("if j + lsize > n:") < body.index("for lane in lane_loop(block_x):", loop)
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(11)
    for n, blocks in ((230, 4), (64, 1), (97, 2)):
        px, py = (rng.uniform(-1, 1, blocks * 64).astype(np.float32) for _ in range(2))
        q = rng.uniform(0.5, 2, blocks * 64).astype(np.float32)
        res = torch.full((blocks * 64,), float("nan"), dtype=torch.float32)
        mod.potential(*(torch.from_numpy(a) for a in (px, py, q)), res, n, grid=blocks, block=64,
                      shared_bytes=64 * 3 * 4, target="c")
        np.testing.assert_allclose(res.numpy(), _potential(px, py, q, n), rtol=1e-4)


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
    assert not re.search(r"^ +e = alloc_lanes", body, re.M)  # set before every read: a local of the lanes
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(4)
    dx, dz = rng.uniform(-2, 2, 100).astype(np.float32), rng.uniform(-1, 1, 100).astype(np.float32)
    ix = rng.uniform(-2, 2, 64).astype(np.float32)
    iz = torch.full((64,), float("nan"), dtype=torch.float32)
    mod.idw(torch.from_numpy(dx), torch.from_numpy(dz), 100, torch.from_numpy(ix), iz, 64, grid=2, block=32,
            target="c")
    w = 1 / (np.abs(ix[:, None].astype(np.float64) - dx[None, :]) + 0.5)
    np.testing.assert_allclose(iz.numpy(), (w * dz).sum(axis=1) / w.sum(axis=1), rtol=1e-4, atol=1e-5)


#: the lanes hand values on through global memory: the CUDA barriers, which order it, stay
RELAY = """
#include <cuda_runtime.h>
__global__ void relay(float* buf, float* out, int steps)
{
  __shared__ float s[64];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  for (int t = 0; t < steps; t++) {
    buf[i] = buf[i] * 0.5f + 1.0f;
    s[threadIdx.x] = buf[i];
    __syncthreads();
    out[i] += buf[blockIdx.x * blockDim.x + (threadIdx.x + 1) % blockDim.x] + s[(threadIdx.x + 7) % blockDim.x];
    __syncthreads();
  }
}
int main()
{
  float *b, *o;
  cudaMalloc(&b, 4 * 128); cudaMalloc(&o, 4 * 128);
  relay<<<2, 64>>>(b, o, 5);
}
"""

RELAY_SPEC = spec_kernel("relay", (2, 1, 1), (64, 1, 1), "fp32",
                         spec_buffer("buf", "float32", 128, "inout", -1, 1),
                         spec_buffer("out", "float32", 128, "inout", -1, 1),
                         spec_scalar("steps", "int32", 5))


def test_lanes_handing_values_through_global_memory_keep_the_cuda_barriers(tmp_path):
    import torch

    out, kernels = converted(tmp_path, RELAY, RELAY_SPEC)
    assert [(k["kernel"], k["form"], k["check"]["status"]) for k in kernels] == [("relay", "tile", "pass")]
    body = factory((out / "k.py").read_text(), "relay")
    assert body.count("T.sync_threads()") == 2 and "for lane in lane_loop(block_x):" in body
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(8)
    buf0, out0 = rng.uniform(-1, 1, 128).astype(np.float32), rng.uniform(-1, 1, 128).astype(np.float32)
    buf, res = torch.from_numpy(buf0.copy()), torch.from_numpy(out0.copy())
    mod.relay(buf, res, 5, grid=2, block=64, target="c")
    want_buf, want = buf0.astype(np.float64), out0.astype(np.float64)
    lanes = np.arange(64)
    for _ in range(5):
        want_buf = want_buf * 0.5 + 1.0
        for b in range(2):
            row = want_buf[b * 64:(b + 1) * 64]
            want[b * 64:(b + 1) * 64] += row[(lanes + 1) % 64] + row[(lanes + 7) % 64]
    np.testing.assert_allclose(buf.numpy(), want_buf, rtol=1e-6)
    np.testing.assert_allclose(res.numpy(), want, rtol=1e-5, atol=1e-5)


#: a 2-D block (8 points by 4 queries): its threads run as one row of lanes in the order of their
#: rank; the points past np leave first, the query tile shrinks at the end
NEAREST = """
#include <cuda_runtime.h>
__global__ void nearest(const float* __restrict__ p, const float* __restrict__ q, float* __restrict__ dmin,
                        int* __restrict__ imin, int np, int nq)
{
  __shared__ float sq[4][3];
  __shared__ float d[4][8];
  int tx = threadIdx.x, ty = threadIdx.y;
  int i = blockIdx.x * blockDim.x + tx;
  if (i >= np) return;
  float best = 1e30f;
  int at = -1;
  for (int j0 = 0; j0 < nq; j0 += blockDim.y) {
    if (tx < 3) sq[ty][tx] = j0 + ty < nq ? q[(j0 + ty) * 3 + tx] : 0.f;
    __syncthreads();
    float dx = p[i * 3] - sq[ty][0], dy = p[i * 3 + 1] - sq[ty][1], dz = p[i * 3 + 2] - sq[ty][2];
    d[ty][tx] = j0 + ty < nq ? dx * dx + dy * dy + dz * dz : 1e30f;
    __syncthreads();
    if (ty == 0)
      for (int k = 0; k < blockDim.y; k++)
        if (d[k][tx] < best) { best = d[k][tx]; at = j0 + k; }
    __syncthreads();
  }
  if (ty == 0) { dmin[i] = best; imin[i] = at; }
}
int main()
{
  float *p, *q, *d; int *m;
  cudaMalloc(&p, 4 * 96); cudaMalloc(&q, 4 * 60); cudaMalloc(&d, 4 * 32); cudaMalloc(&m, 4 * 32);
  nearest<<<4, dim3(8, 4)>>>(p, q, d, m, 32, 20);
}
"""

NEAREST_SPEC = spec_kernel("nearest", (4, 1, 1), (8, 4, 1), "fp32",
                           spec_buffer("p", "float32", 96, "in", -1, 1),
                           spec_buffer("q", "float32", 63, "in", -1, 1),
                           spec_buffer("dmin", "float32", 30, "out"),
                           spec_buffer("imin", "int32", 30, "out"),
                           spec_scalar("np", "int32", 30),
                           spec_scalar("nq", "int32", 21))


def test_2d_block_runs_as_one_row_of_lanes(tmp_path):
    import torch

    out, kernels = converted(tmp_path, NEAREST, NEAREST_SPEC)
    assert [(k["kernel"], k["form"], k["check"]["status"]) for k in kernels] == [("nearest", "tile", "pass")]
    body = factory((out / "k.py").read_text(), "nearest")
    assert "block_x, block_y = block_x * block_y, 1" in body and "ty_[lane] = lane // block_width" in body
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(21)
    p, q = rng.uniform(-1, 1, 96).astype(np.float32), rng.uniform(-1, 1, 63).astype(np.float32)
    dmin = torch.full((32,), float("nan"), dtype=torch.float32)
    imin = torch.full((32,), -7, dtype=torch.int32)
    mod.nearest(torch.from_numpy(p), torch.from_numpy(q), dmin, imin, 30, 21, grid=(4, 1, 1), block=(8, 4, 1),
                target="c")
    dist = ((p.reshape(32, 3)[:30, None, :].astype(np.float64) - q.reshape(21, 3)[None, :, :]) ** 2).sum(axis=2)
    np.testing.assert_allclose(dmin.numpy()[:30], dist.min(axis=1), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(imin.numpy()[:30], dist.argmin(axis=1))
    assert np.isnan(dmin.numpy()[30:]).all() and (imin.numpy()[30:] == -7).all()  # the points that left


#: an odd-even sort of a tile in shared memory: each lane compares and swaps two cells that
#: the stretch also reads, which TileLang would order with a barrier inside the lanes' code
COMPARE_EXCHANGE = """
__global__ void sort_tiles(float* __restrict__ x)
{
  __shared__ float s[128];
  int t = threadIdx.x;
  s[t] = x[blockIdx.x * 128 + t];
  s[t + 64] = x[blockIdx.x * 128 + t + 64];
  __syncthreads();
  for (int round = 0; round < 128; round++) {
    int a = 2 * t + (round & 1);
    if (a + 1 < 128 && s[a] > s[a + 1]) {
      float v = s[a];
      s[a] = s[a + 1];
      s[a + 1] = v;
    }
    __syncthreads();
  }
  x[blockIdx.x * 128 + t] = s[t];
  x[blockIdx.x * 128 + t + 64] = s[t + 64];
}
"""


#: the loop's bound read from memory after the early exit: only the threads that stay read it,
#: and the block cannot compute it for them (it may not read memory they would not)
BOUND_AFTER_EXIT = EARLY_EXIT.replace("int dnum,", "int dnum, const int* __restrict__ parts,").replace(
    "int part = (dnum - 1) / BS;", "int part = parts[blockIdx.x];").replace("(a, b, 100,", "(a, b, 100, 0,")


#: a z-march the way 3-D stencils write it: each thread keeps a window of its column in a
#: per-thread array and shifts it after every plane (``win[i] = win[i + 1]``); a lane loop
#: naming the array at several places has no fragment form on GPUs (one index map per loop)
REGISTER_SHIFT = """
__global__ void zmarch(const float* __restrict__ in, float* __restrict__ out, int nz)
{
  __shared__ float plane[64];
  int t = threadIdx.x;
  int g = blockIdx.x * 64 + t;
  float win[3];
  for (int i = 0; i < 3; i++) win[i] = in[i * 256 + g];
  for (int z = 0; z < nz; z++) {
    plane[t] = win[1];
    __syncthreads();
    out[z * 256 + g] = win[0] + win[2] + plane[(t + 1) % 64];
    __syncthreads();
    for (int i = 0; i < 2; i++) win[i] = win[i + 1];
    win[2] = in[(z + 3) * 256 + g];
  }
}
"""


@pytest.mark.parametrize("source, reason", [
    (REGISTER_SHIFT, "lane code names per-thread array 'win' at 2 places in one stretch (a lane loop on GPUs "
                     "holds it as a fragment, which takes one index per loop)"),
    (BOUND_AFTER_EXIT, "'part', a value the block's loops or branches read, is set at line 11 in lane code "
                       "that only some threads run"),
    (COMPARE_EXCHANGE, "lane code stores to shared 's' at 2 places in the stretch that reads it"),
])
def test_tiled_loops_the_lanes_cannot_run_stay_portable(tmp_path, source, reason):
    _, kernels = converted(tmp_path, source if "#include" in source else "#include <cuda_runtime.h>\n" + source)
    (k,) = kernels
    assert k["form"] == "portable" and reason in note(k), note(k)
