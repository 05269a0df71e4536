"""analysis.prepare.lockstep_steps: warp-synchronous code (the last warp of a reduction unrolled
on a volatile pointer to a namespace-scope __shared__ array, as hungarian writes it; a warp scan
called by every thread and again by the first warp only, as radixsort writes it) runs each store as
a lockstep step (read, barrier, write, barrier), the branch that only the first warp takes taken
apart around those barriers. The CPU executor cannot judge these originals (it runs a warp's
threads one after another, not in lockstep: its forward and reverse runs differ), so the migrated
kernels run on TileLang's C target against numpy's minimum and scans here, and against the
original on the GPU through bench/test_kernels.py (the specs below). A loop around the steps that
only some threads run is refused, naming the construct."""
from __future__ import annotations

import importlib.util

import numpy as np
import torch

from tests.analysis.support import converted, spec_buffer, spec_kernel

#: A block minimum whose last 64 values the first warp folds through a volatile pointer.
TAIL = """
#include <cuda_runtime.h>
#define THREADS 256
__shared__ int sdata[THREADS];

template <unsigned int blockSize>
__device__ void warp_min(volatile int* s, int tid) {
  if (blockSize >= 64) s[tid] = min(s[tid], s[tid + 32]);
  if (blockSize >= 32) s[tid] = min(s[tid], s[tid + 16]);
  if (blockSize >= 16) s[tid] = min(s[tid], s[tid + 8]);
  if (blockSize >= 8) s[tid] = min(s[tid], s[tid + 4]);
  if (blockSize >= 4) s[tid] = min(s[tid], s[tid + 2]);
  if (blockSize >= 2) s[tid] = min(s[tid], s[tid + 1]);
}

__global__ void block_min(const int* __restrict__ x, int* __restrict__ out) {
  unsigned int tid = threadIdx.x;
  sdata[tid] = min(x[blockIdx.x * 2 * THREADS + tid], x[blockIdx.x * 2 * THREADS + THREADS + tid]);
  __syncthreads();
  if (tid < 128) sdata[tid] = min(sdata[tid], sdata[tid + 128]);
  __syncthreads();
  if (tid < 64) sdata[tid] = min(sdata[tid], sdata[tid + 64]);
  __syncthreads();
  if (tid < 32) warp_min<THREADS>(sdata, tid);
  if (tid == 0) out[blockIdx.x] = sdata[0];
}
"""

TAIL_SPEC = spec_kernel("block_min", (4, 1, 1), (256, 1, 1), "exact",
                        spec_buffer("x", "int32", 4 * 512, "in", -100000, 100000),
                        spec_buffer("out", "int32", 4, "out"))

#: Per-warp exclusive scans of 0/1 flags, then a scan of the warps' totals by the first warp.
SCAN = """
#include <cuda_runtime.h>
#define WARP_SIZE 32
__device__ unsigned int scanwarp(unsigned int val, volatile unsigned int* sData, const int maxlevel) {
  int localId = threadIdx.x;
  int idx = 2 * localId - (localId & (WARP_SIZE - 1));
  sData[idx] = 0;
  idx += WARP_SIZE;
  sData[idx] = val;
  if (0 <= maxlevel) { sData[idx] += sData[idx - 1]; }
  if (1 <= maxlevel) { sData[idx] += sData[idx - 2]; }
  if (2 <= maxlevel) { sData[idx] += sData[idx - 4]; }
  if (3 <= maxlevel) { sData[idx] += sData[idx - 8]; }
  if (4 <= maxlevel) { sData[idx] += sData[idx - 16]; }
  return sData[idx] - val;
}

__global__ void ranks(const unsigned int* __restrict__ flags, unsigned int* __restrict__ rank) {
  __shared__ unsigned int s[2 * 128];
  __shared__ unsigned int totals[2 * 128];
  unsigned int idx = threadIdx.x;
  unsigned int f = flags[blockIdx.x * 128 + idx];
  unsigned int r = scanwarp(f, s, 4);
  __syncthreads();
  if ((idx & (WARP_SIZE - 1)) == WARP_SIZE - 1) totals[idx >> 5] = r + f;
  __syncthreads();
  if (idx < WARP_SIZE) totals[idx] = scanwarp(idx < 4 ? totals[idx] : 0u, s, 2);
  __syncthreads();
  rank[blockIdx.x * 128 + idx] = r + totals[idx >> 5];
}
"""

SCAN_SPEC = spec_kernel("ranks", (3, 1, 1), (128, 1, 1), "exact",
                        spec_buffer("flags", "uint32", 3 * 128, "in", 0, 1),
                        spec_buffer("rank", "uint32", 3 * 128, "out"))


def _module(out, name):
    spec = importlib.util.spec_from_file_location(name, out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_last_warp_of_a_reduction_is_the_block_minimum(tmp_path):
    out, (k,) = converted(tmp_path, TAIL)
    assert k["form"] == "portable", k["reason"]
    x = np.random.default_rng(7).integers(-100000, 100000, 4 * 512, dtype=np.int32)
    got = torch.full((4,), 2**31 - 1, dtype=torch.int32)  # poisoned: the largest int, no block's minimum
    _module(out, "k_tail").block_min(torch.from_numpy(x), got, grid=(4, 1, 1), block=(256, 1, 1), target="c")
    assert got.tolist() == x.reshape(4, 512).min(axis=1).tolist()


def test_warp_scans_are_the_blocks_exclusive_ranks(tmp_path):
    out, (k,) = converted(tmp_path, SCAN)
    assert k["form"] == "portable", k["reason"]
    flags = np.random.default_rng(11).integers(0, 2, 3 * 128, dtype=np.uint32)
    got = torch.full((3 * 128,), 0xDEADBEEF, dtype=torch.uint32)
    _module(out, "k_scan").ranks(torch.from_numpy(flags), got, grid=(3, 1, 1), block=(128, 1, 1), target="c")
    blocks = flags.reshape(3, 128).astype(np.int64)
    expected = np.cumsum(blocks, axis=1) - blocks  # exclusive ranks within each block
    assert got.numpy().astype(np.int64).reshape(3, 128).tolist() == expected.tolist()


def test_steps_under_a_loop_only_some_threads_run_are_refused(tmp_path):
    # each row's own tree depth (a length it loads): threads of other rows run the loop otherwise
    source = """
    #include <cuda_runtime.h>
    __global__ void rows(const int group, const int n, const int* __restrict__ depth, const float* __restrict__ v,
                         float* __restrict__ y) {
      int index = blockIdx.x * blockDim.x + threadIdx.x;
      int r = index / group;
      int lane = index % group;
      __shared__ volatile float result[128];
      result[threadIdx.x] = v[index];
      if (r < n) {
        int half = depth[r];
        while (half > 0) {
          if (lane < half) result[threadIdx.x] += result[threadIdx.x + half];
          half /= 2;
        }
        if (lane == 0) y[r] = result[threadIdx.x];
      }
    }
    """
    _, (k,) = converted(tmp_path, source, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported")
    assert k["reason"].startswith("warp-synchronous code: its steps in lockstep need a barrier"), k["reason"]


#: a sparse matrix-vector product with a group of lanes per row, written the way Lanczos solvers
#: write it: each lane sums its strided share into its own volatile cell (a loop whose bounds the
#: row gives), then the group's tree runs in lockstep under the row's bounds test, its depth the
#: same for every thread.
GROUP_ROWS = """
#include <cuda_runtime.h>
__global__ void group_rows(const int group, const int rows, const int* __restrict__ row_ptr,
                           const int* __restrict__ col, const float* __restrict__ val,
                           const float* __restrict__ x, float* __restrict__ y) {
  int index = blockIdx.x * blockDim.x + threadIdx.x;
  int r = index / group;
  int lane = index % group;
  __shared__ volatile float result[128];
  result[threadIdx.x] = 0;
  if (r < rows) {
    int start = row_ptr[r];
    int end = row_ptr[r + 1];
    for (int i = start + lane; i < end; i += group) {
      result[threadIdx.x] += val[i] * x[col[i]];
    }
    int half = group / 2;
    while (half > 0) {
      if (lane < half) {
        result[threadIdx.x] += result[threadIdx.x + half];
      }
      half /= 2;
    }
    if (lane == 0) {
      y[r] = result[threadIdx.x];
    }
  }
}
"""


def test_a_tree_of_uniform_depth_under_a_rows_bounds_runs_as_steps(tmp_path):
    from tests.analysis.support import module_of
    out, (k,) = converted(tmp_path, GROUP_ROWS, expect_ok=False)
    assert k["form"] == "portable", k["reason"]
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(3)
    rows, group = 45, 8
    lengths = rng.integers(0, 20, rows)
    row_ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(row_ptr[-1])
    col = rng.integers(0, 64, nnz).astype(np.int32)
    val = rng.uniform(-1.0, 1.0, nnz).astype(np.float32)
    x = rng.uniform(-1.0, 1.0, 64).astype(np.float32)
    y = np.full(rows, np.nan, np.float32)
    threads = 128
    grid = (rows * group + threads - 1) // threads
    mod.group_rows(group, rows, row_ptr, col, val, x, y, grid=grid, block=threads, target="c")
    want = np.array([np.dot(val[row_ptr[r]:row_ptr[r + 1]].astype(np.float64),
                            x[col[row_ptr[r]:row_ptr[r + 1]]]) for r in range(rows)])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)


def test_the_cpu_check_skips_them_naming_why(tmp_path):
    out, (k,) = converted(tmp_path, TAIL, TAIL_SPEC)
    assert [d["code"] for d in k["diagnostics"] if d["code"] == "M3007"] == ["M3007"]
    assert k["check"]["status"] == "skipped" and "warp-synchronous (M3007)" in k["check"]["message"]


#: dct8x8's shape: each group of eight threads writes its tile's columns through one pointer view
#: of a shared array and reads its rows through another, with no barrier between (the group is
#: part of one warp): each store through the views is a lockstep step too.
TRANSPOSE = """
#include <cuda_runtime.h>
#define B 8
__global__ void transpose8(const float* __restrict__ src, float* __restrict__ dst) {
  __shared__ float t[4 * B * (B + 1)];
  const unsigned int lx = threadIdx.x;
  const unsigned int g = lx / B, m = lx % B;
  const unsigned int base = blockIdx.x * 4 * B * B + g * B * B;
  float* v = &t[g * B * (B + 1) + m];
  float* h = &t[g * B * (B + 1) + m * (B + 1)];
  for (unsigned int i = 0; i < B; i++)
    v[i * (B + 1)] = src[base + i * B + m];
  float r[B];
  for (unsigned int i = 0; i < B; i++)
    r[i] = h[i];
  for (unsigned int i = 0; i < B; i++)
    dst[base + i * B + m] = r[i];
}
"""

TRANSPOSE_SPEC = spec_kernel("transpose8", (2, 1, 1), (32, 1, 1), "exact",
                             spec_buffer("src", "float32", 2 * 256, "in", -1.0, 1.0),
                             spec_buffer("dst", "float32", 2 * 256, "out"))


def test_two_views_exchanging_in_lockstep_transpose_each_tile(tmp_path):
    out, (k,) = converted(tmp_path, TRANSPOSE)
    assert k["form"] == "portable", k["reason"]
    src = np.random.default_rng(5).uniform(-1, 1, 2 * 256).astype(np.float32)
    got = torch.full((2 * 256,), float("nan"), dtype=torch.float32)
    _module(out, "k_t8").transpose8(torch.from_numpy(src), got, grid=(2, 1, 1), block=(32, 1, 1), target="c")
    tiles = src.reshape(2 * 4, 8, 8)
    assert np.array_equal(got.numpy().reshape(2 * 4, 8, 8), tiles.transpose(0, 2, 1))


def test_steps_in_a_kernel_kept_at_thread_level_are_refused(tmp_path):
    """A warp shuffle in a loop whose trip count differs per thread keeps the kernel at thread
    level, where the steps' barriers could sit in code not every thread reaches: refused."""
    source = TAIL.replace("  if (tid < 32) warp_min<THREADS>(sdata, tid);", """  if (tid < 32) warp_min<THREADS>(sdata, tid);
  int v = 0;
  for (int k = tid; k < 300; k += 32) v += __shfl_down_sync(0xffffffffu, k, 1);
  if (tid == 1) out[gridDim.x + blockIdx.x] = v;""")
    _, (k,) = converted(tmp_path, source, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported")
    assert k["reason"].startswith("warp-synchronous code: its lockstep steps would put barriers in thread-level"), \
        k["reason"]


def test_a_store_of_a_value_read_from_elsewhere_is_one_barrier_an_iteration(tmp_path):
    """``v[i * (B + 1)] = src[...]`` reads no memory the threads exchange: each thread computes the
    value where it stores it (no per-thread temporary, no barrier between the read and the write),
    and the barrier that would start every iteration is the one that ended the iteration before:
    one barrier before the loop, one after each store (dct8x8's loads: 16 warp barriers a loop
    before, 9 now). The CPU run above still transposes every tile."""
    out, (k,) = converted(tmp_path, TRANSPOSE)
    text = (out / "k.py").read_text()
    lines = text.splitlines()
    loop = next(n for n, line in enumerate(lines) if line.strip().startswith("while "))
    assert lines[loop - 2].strip().startswith("sync_step()"), "\n".join(lines[loop - 3:loop + 1])
    body = []
    for line in lines[loop + 1:]:
        if len(line) - len(line.lstrip()) <= len(lines[loop]) - len(lines[loop].lstrip()):
            break
        body.append(line.strip())
    assert sum(line.startswith("sync_step()") for line in body) == 1, "\n".join(body)
    assert not any(line.startswith("step") for line in body), "\n".join(body)
    assert "t[g * 8 * (8 + 1) + m + i * (8 + 1)] = src[base + i * 8 + m]" in text


def test_stores_with_no_exchange_between_them_share_their_barrier(tmp_path):
    """``sData[idx] = 0; idx += WARP_SIZE; sData[idx] = val;``: nothing between the first store's
    barrier and the second's touches the shared array, so one barrier orders both (the CPU run of
    test_warp_scans_are_the_blocks_exclusive_ranks checks the ranks)."""
    out, (k,) = converted(tmp_path, SCAN)
    lines = [line.strip() for line in (out / "k.py").read_text().splitlines()]
    zero = next(n for n, line in enumerate(lines) if line.endswith("= T.uint32(0)  # L7") and line.startswith("s["))
    val = next(n for n, line in enumerate(lines) if n > zero and line.startswith("s[") and "# L9" in line)
    between = lines[zero + 1:val]
    assert sum(line.startswith("sync_step()") for line in between) == 1, "\n".join(lines[zero:val + 1])
