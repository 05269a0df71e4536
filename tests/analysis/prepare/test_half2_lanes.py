"""Two-lane half functions as lane-wise scalar operations (analysis.prepare.vectors): ``__hgt2``
and the other comparisons give each lane 1.0 or 0.0, ``__hmax2``/``__hmin2`` each lane's maximum
or minimum, as the compat table's scalar rows do; the migrated kernels run on TileLang's C target
against numpy."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.analysis.support import converted, module_of

#: a ReLU gradient the way half kernels write it: two halves at a time through half2 views of the
#: half buffers, a mask from a comparison multiplied in
MASKS = """
#include <cuda_fp16.h>
__global__ void half2_masks(const __half* __restrict__ a, const __half* __restrict__ b,
                            __half* __restrict__ out, int n2) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n2) return;
  half2 x = reinterpret_cast<const half2*>(a)[i];
  half2 y = reinterpret_cast<const half2*>(b)[i];
  const half2 zero = __float2half2_rn(0.f);
  half2* o = reinterpret_cast<half2*>(out) + 4 * i;
  o[0] = __hmul2(__hgt2(x, zero), y);
  o[1] = __hadd2(__hle2(x, y), __hge2(x, y));
  o[2] = __hsub2(__heq2(x, y), __hne2(x, y));
  o[3] = __hadd2(__hmax2(x, y), __hlt2(y, x));
}
"""


def test_half2_comparisons_are_each_lanes_one_or_zero(tmp_path):
    out, (k,) = converted(tmp_path, MASKS)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    rng = np.random.default_rng(5)
    n2 = 200
    a = rng.uniform(-2, 2, 2 * n2).astype(np.float16)
    b = rng.uniform(-2, 2, 2 * n2).astype(np.float16)
    b[::7] = a[::7]  # some lanes equal, so == and != are both seen
    got = torch.full((8 * n2,), 9.0, dtype=torch.float16)  # poisoned: 9 is no lane's value
    module_of(out / "k.py").half2_masks(torch.from_numpy(a), torch.from_numpy(b), got, n2,
                                        grid=(2, 1, 1), block=(128, 1, 1), target="c")
    f16 = np.float16
    expected = np.stack([(a > 0).astype(f16) * b,
                         (a <= b).astype(f16) + (a >= b).astype(f16),
                         (a == b).astype(f16) - (a != b).astype(f16),
                         np.maximum(a, b) + (b < a).astype(f16)], axis=0)
    # each thread writes its four half2 one after another: [i][slot][lane]
    expected = expected.reshape(4, n2, 2).transpose(1, 0, 2).reshape(-1)
    # each lane one half operation on halves, rounded once in the kernel as in numpy: equal
    assert np.array_equal(got.numpy(), expected)


#: counters kept as half2 pairs, the way atomic benchmarks write them: a __half2 made of its two
#: halves (brace initialised), added atomically through a half2 view of the half buffer
ATOMICS = """
#include <cuda_fp16.h>
__global__ void half2_counts(__half* result, const int* __restrict__ w, int n) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid >= n) return;
  __half2* pairs = reinterpret_cast<__half2*>(result);
  __half2 val {__float2half(1.0f), __int2half_rn(w[tid])};
  atomicAdd(&pairs[tid % 16], val);
  atomicAdd(pairs + 16 + tid % 5, __half2(val));
}
"""


def test_a_half2_atomic_add_is_an_atomic_add_per_lane(tmp_path):
    out, (k,) = converted(tmp_path, ATOMICS)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    rng = np.random.default_rng(9)
    n = 300
    w = rng.integers(-3, 4, n).astype(np.int32)
    start = rng.integers(-20, 20, 2 * 21).astype(np.float16)
    got = torch.from_numpy(start.copy())
    module_of(out / "k.py").half2_counts(got, torch.from_numpy(w), n, grid=(3, 1, 1), block=(128, 1, 1),
                                         target="c")
    expected = start.astype(np.int64).reshape(21, 2)
    for tid in range(n):
        for slot in (tid % 16, 16 + tid % 5):
            expected[slot] += (1, w[tid])
    # every partial sum is an integer of magnitude under 2048: exact in half, in any order
    assert np.array_equal(got.numpy().astype(np.int64), expected.reshape(-1))


#: eight halves moved as one float4 (a 16-byte load and store of half buffers), worked on through
#: half2 views of the float4 locals: the float4's own float lanes are never read
EIGHT_HALVES = """
#include <cuda_fp16.h>
__global__ void scaled_relu8(const __half* __restrict__ g, const __half* __restrict__ f,
                             __half* __restrict__ out, int n8) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n8) return;
  float4 g8 = reinterpret_cast<const float4*>(g)[i];
  float4 f8 = *(reinterpret_cast<const float4*>(f) + i);
  half2* g2 = reinterpret_cast<half2*>(&g8);
  const half2* f2 = reinterpret_cast<const half2*>(&f8);
  float4 r8;
  half2* r2 = reinterpret_cast<half2*>(&r8);
  const half2 zero = __float2half2_rn(0.f);
  for (int j = 0; j < 4; j++) r2[j] = __hmul2(__hgt2(f2[j], zero), g2[j]);
  __half* r = reinterpret_cast<__half*>(&r8);
  r[7] = __hadd(r[7], r[0]);
  float4* out8 = reinterpret_cast<float4*>(out) + i;
  *out8 = r8;
}
"""


def test_a_float4_carrying_eight_halves_is_eight_half_lanes(tmp_path):
    out, (k,) = converted(tmp_path, EIGHT_HALVES)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    rng = np.random.default_rng(13)
    n8 = 150
    g = rng.uniform(-4, 4, 8 * n8).astype(np.float16)
    f = rng.uniform(-1, 1, 8 * n8).astype(np.float16)
    got = torch.full((8 * n8,), 99.0, dtype=torch.float16)  # poisoned: no lane's value
    module_of(out / "k.py").scaled_relu8(torch.from_numpy(g), torch.from_numpy(f), got, n8,
                                         grid=(2, 1, 1), block=(128, 1, 1), target="c")
    expected = ((f > 0).astype(np.float16) * g).reshape(n8, 8)
    expected[:, 7] = expected[:, 7] + expected[:, 0]  # one half addition, rounded once as in the kernel
    assert np.array_equal(got.numpy(), expected.reshape(-1))


def test_a_float4_lane_of_half_bits_read_as_a_float_is_refused_by_name(tmp_path):
    from migrate.analysis.prepare.vectors import VectorError, scalarize_vectors
    from tests.analysis.support import unit
    u = unit(tmp_path, """
        __global__ void k(const __half* g, float* out) {
          float4 g8 = reinterpret_cast<const float4*>(g)[threadIdx.x];
          half2* g2 = reinterpret_cast<half2*>(&g8);
          out[threadIdx.x] = g8.x + __low2float(g2[1]);
        }
    """)
    with pytest.raises(VectorError, match="'float4' read through a view of a buffer of float16: its lanes are another type's bits"):
        scalarize_vectors(u.kernel("k"))


#: a dequantising dot product the way quantised mat-vec kernels write it: a half2 accumulator
#: reset by empty braces (``res2 = {};``, the value-initialised vector: both lanes zero) for each
#: group of columns, fed by __hfma2, its two lanes summed as floats
RESET_BY_BRACES = """
#include <cuda_fp16.h>
__global__ void grouped_dot(const half2* __restrict__ vec, const int* __restrict__ mat,
                            float* __restrict__ mul, int groups) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  half2 scale = __float2half2_rn(2.0f);
  half2 res2;
  float res = 0;
  for (int g = 0; g < groups; g++) {
    res2 = {};
    for (int k = 0; k < 4; k++) {
      int q = mat[(g * 4 + k) * blockDim.x * gridDim.x + col];
      half2 w = __halves2half2(__int2half_rn(q & 7), __int2half_rn(q >> 3));
      res2 = __hfma2(__hmul2(w, scale), vec[g * 4 + k], res2);
    }
    res += __half2float(res2.x) + __half2float(res2.y);
  }
  mul[col] = res;
}
"""


def test_a_half2_reset_by_empty_braces_is_zero_in_both_lanes(tmp_path):
    out, (k,) = converted(tmp_path, RESET_BY_BRACES)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    rng = np.random.default_rng(17)
    groups, cols = 3, 256
    vec = rng.integers(-3, 4, 2 * 4 * groups).astype(np.float16)
    mat = rng.integers(0, 64, 4 * groups * cols).astype(np.int32)
    got = torch.full((cols,), float("nan"), dtype=torch.float32)  # poisoned
    module_of(out / "k.py").grouped_dot(torch.from_numpy(vec), torch.from_numpy(mat), got, groups,
                                        grid=(2, 1, 1), block=(128, 1, 1), target="c")
    q = mat.reshape(groups, 4, cols)
    lo, hi = (q & 7) * 2, (q >> 3) * 2
    v = vec.astype(np.float32).reshape(groups, 4, 2)
    # each partial sum is an integer under 2048 in magnitude: exact in half, whatever the rounding
    expected = ((lo * v[:, :, :1] + hi * v[:, :, 1:]).sum(axis=1)).sum(axis=0).astype(np.float32)
    assert np.array_equal(got.numpy(), expected)
