"""Lane exchanges (analysis.lift.xor_exchanges): warps' shuffle networks in tile form.

Sub-warp sorting networks written the way segsort's generated kernels are: each group of W
threads holds a row in registers, swaps them with ``__shfl_xor_sync`` partners under the row's
bound, and (across the groups of a warp) broadcasts a row's base from a constant lane. Checked on
the CPU against the CUDA (several blocks, the last one partly past the rows, keys with repeats so
that the equal-key swaps run), and what the lift must refuse, with its reason.
"""
from __future__ import annotations

import re

import pytest

from tests.analysis.lift.support import convert, factory, note

#: rows of up to 8 keys sorted by 4 lanes of 2 registers: a bitonic network of xor exchanges
#: (masks 1, 3, 1) through a helper, as segsort's exch_intxn; the key type a template parameter
SORT8 = """
    #define CMP_SWP(t1,_a,_b,t2,_c,_d) if(_a>_b)  {t1 _t=_a;_a=_b;_b=_t; t2 _s=_c;_c=_d;_d=_s;}
    #define EQL_SWP(t1,_a,_b,t2,_c,_d) if(_a!=_b) {t1 _t=_a;_a=_b;_b=_t; t2 _s=_c;_c=_d;_d=_s;}
    template<class K>
    __device__ inline void exch(K &k0, K &k1, int &v0, int &v1, int mask, const int bit) {
        K ex_k0, ex_k1;
        int ex_v0, ex_v1;
        ex_k0 = k0;
        ex_k1 = __shfl_xor_sync(0xffffffff, k1, mask);
        ex_v0 = v0;
        ex_v1 = __shfl_xor_sync(0xffffffff, v1, mask);
        CMP_SWP(K, ex_k0, ex_k1, int, ex_v0, ex_v1);
        if (bit) EQL_SWP(K, ex_k0, ex_k1, int, ex_v0, ex_v1);
        k0 = ex_k0;
        k1 = __shfl_xor_sync(0xffffffff, ex_k1, mask);
        v0 = ex_v0;
        v1 = __shfl_xor_sync(0xffffffff, ex_v1, mask);
    }
    template<class K>
    __global__ void sort8(const K* key, K* keyB, int* valB, const int* lens, int nseg) {
        const int gid = threadIdx.x + blockIdx.x * blockDim.x;
        const int seg = gid >> 2;
        const int tid = threadIdx.x & 3;
        const int bit1 = tid & 1;
        const int bit2 = (tid >> 1) & 1;
        K k0, k1;
        int v0, v1;
        if (seg < nseg) {
            int k = seg * 8;
            int n = lens[seg];
            k0 = (tid < n) ? key[k + tid] : 0x7fffffff;
            k1 = (tid + 4 < n) ? key[k + tid + 4] : 0x7fffffff;
            v0 = tid; v1 = tid + 4;
            CMP_SWP(K, k0, k1, int, v0, v1);
            exch(k0, k1, v0, v1, 0x1, bit1);
            CMP_SWP(K, k0, k1, int, v0, v1);
            exch(k0, k1, v0, v1, 0x3, bit2);
            exch(k0, k1, v0, v1, 0x1, bit1);
            CMP_SWP(K, k0, k1, int, v0, v1);
            if (2 * tid < n) { keyB[k + 2 * tid] = k0; valB[k + 2 * tid] = v0; }
            if (2 * tid + 1 < n) { keyB[k + 2 * tid + 1] = k1; valB[k + 2 * tid + 1] = v1; }
        }
    }
    template __global__ void sort8<int>(const int*, int*, int*, const int*, int);
"""

#: 40 rows over 3 blocks of 16 groups: the last block has 8 groups past the rows
SORT8_SPEC = """
    [[kernel]]
    name = "sort8"
    template = ["int"]
    grid = [3, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "key"
    buffer = "int32"
    elements = 384
    role = "in"
    range = [-20, 20]
    [[kernel.args]]
    name = "keyB"
    buffer = "int32"
    elements = 384
    role = "out"
    [[kernel.args]]
    name = "valB"
    buffer = "int32"
    elements = 384
    role = "out"
    [[kernel.args]]
    name = "lens"
    buffer = "int32"
    elements = 48
    role = "in"
    range = [1, 8]
    [[kernel.args]]
    name = "nseg"
    scalar = "int32"
    value = 40
"""


def test_sub_warp_sorting_network_becomes_lane_exchanges_and_agrees_on_cpu(tmp_path):
    """Each exchange reads the partner lane (lane ^ mask) of the values the lanes gave, under the
    row's bound; the factory asserts blocks of whole groups of 4; no CUDA barrier is left."""
    kernels, text = convert(tmp_path, SORT8, "--check", "cpu", spec=SORT8_SPEC)
    k = kernels["sort8"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "sort8")
    assert 'assert block_x % 4 == 0' in body
    for dtype in ("K", "int32"):  # the keys' buffer of the instance's type, the values'
        assert len(re.findall(rf"\] = xch_{dtype}\[lane \^ 1\]", body)) == 4, dtype
        assert len(re.findall(rf"\] = xch_{dtype}\[lane \^ 3\]", body)) == 2, dtype
    assert body.count("if cond_L") >= 12  # the row's bound, inside every lane loop under it
    assert not re.search(r"sync_threads|\btx\b|x_lane", body)


#: rows of 8 keys, 4 lanes each; a warp's rows swapped across groups (xor 0x10) where the warp
#: holds whole rows, each row's base broadcast from a constant lane (of 32 and of 16), the
#: remaining rows stored as they are
ACROSS_GROUPS = """
    #define SWP(t1,_a,_b,t2,_c,_d) {t1 _t=_a;_a=_b;_b=_t; t2 _s=_c;_c=_d;_d=_s;}
    #define CMP_SWP(t1,_a,_b,t2,_c,_d) if(_a>_b)  {t1 _t=_a;_a=_b;_b=_t; t2 _s=_c;_c=_d;_d=_s;}
    __global__ void rows8(const float* key, float* keyB, int* valB, const int* lens, int nrows) {
        const int gid = threadIdx.x + blockIdx.x * blockDim.x;
        const int row = gid >> 2;
        const int tid = threadIdx.x & 3;
        const int lane_id = threadIdx.x & 31;
        int full = (nrows / 8) * 8;
        float k0, k1;
        int v0, v1;
        int k, n;
        if (row < nrows) {
            k = row * 8;
            n = lens[row];
            k0 = (tid < n) ? key[k + tid] : 1e30f;
            k1 = (tid + 4 < n) ? key[k + tid + 4] : 1e30f;
            v0 = tid; v1 = tid + 4;
            CMP_SWP(float, k0, k1, int, v0, v1);
        }
        if (row < full) {
            k1 = __shfl_xor_sync(0xffffffff, k1, 0x10);
            v1 = __shfl_xor_sync(0xffffffff, v1, 0x10);
            if (lane_id & 0x10) SWP(float, k0, k1, int, v0, v1);
            int kk = __shfl_sync(0xffffffff, k, 4);
            int ss = __shfl_sync(0xffffffff, n, 4, 16);
            keyB[2 * gid] = k0 + kk; keyB[2 * gid + 1] = k1;
            valB[2 * gid] = v0 * 100 + ss; valB[2 * gid + 1] = v1;
        } else if (row < nrows) {
            keyB[2 * gid] = k0; valB[2 * gid] = v0;
            keyB[2 * gid + 1] = k1; valB[2 * gid + 1] = v1;
        }
    }
"""

#: 43 rows: the warps of the first 40 swap across groups, the last 3 rows are stored as they are
ACROSS_GROUPS_SPEC = """
    [[kernel]]
    name = "rows8"
    grid = [3, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "key"
    buffer = "float32"
    elements = 384
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "keyB"
    buffer = "float32"
    elements = 344
    role = "out"
    [[kernel.args]]
    name = "valB"
    buffer = "int32"
    elements = 344
    role = "out"
    [[kernel.args]]
    name = "lens"
    buffer = "int32"
    elements = 48
    role = "in"
    range = [1, 8]
    [[kernel.args]]
    name = "nrows"
    scalar = "int32"
    value = 43
"""


def test_exchanges_across_groups_and_broadcasts_from_a_constant_lane_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, ACROSS_GROUPS, "--check", "cpu", spec=ACROSS_GROUPS_SPEC)
    k = kernels["rows8"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "rows8")
    assert 'assert block_x % 32 == 0' in body
    assert "k1[lane] = xch_float32[lane ^ 16]" in body
    assert "kk[lane] = xch_int32[lane - lane % 32 + 4]" in body
    assert "ss[lane] = xch_int32[lane - lane % 16 + 4]" in body
    assert re.search(r"if not cond_L\d+\[lane\]:", body)  # the else branch, per lane
    assert not re.search(r"sync_threads|\btx\b", body)


@pytest.mark.parametrize("old, new, reason", [
    ("exch(k0, k1, v0, v1, 0x3, bit2);", "exch(k0, k1, v0, v1, nseg & 3, bit2);",
     "the xor mask of the shuffle at line 10 is not a constant below its width"),
    ("ex_k1 = __shfl_xor_sync(0xffffffff, k1, mask);", "ex_k1 = __shfl_xor_sync(0xf, k1, mask);",
     "the shuffle at line 10 names the lanes it runs in"),
    ("ex_k1 = __shfl_xor_sync(0xffffffff, k1, mask);", "ex_k1 = __shfl_xor_sync(0xffffffff, k1, mask, 2);",
     "the xor mask of the shuffle at line 10 is not a constant below its width"),
    ("ex_k1 = __shfl_xor_sync(0xffffffff, k1, mask);", "ex_k1 = __shfl_down_sync(0xffffffff, k1, mask);",
     "is not part of a block reduction"),
    ("int n = lens[seg];", "int n = t[threadIdx.x ^ 4];", "is not part of a block reduction"),
    ("v0 = tid; v1 = tid + 4;", "v0 = tid; v1 = tid + 4; valB[k + tid] = tid;",
     "a lane reads 'valB' after an earlier stretch of lane code stored to it"),
])
def test_lane_exchanges_it_must_refuse(tmp_path, old, new, reason):
    """Masks that are not constants (or reach past the width), shuffles in part of a warp,
    shuffles down, lanes that also talk through shared memory, a lane reading global memory
    another stretch of lane code stored (TileLang orders only the shared buffers between lane
    loops): the kernel stays portable."""
    assert old in SORT8
    source = SORT8.replace(old, new)
    if "t[threadIdx.x" in new:  # the rows' lengths staged in shared memory, read by another lane
        source = source.replace("K k0, k1;", "__shared__ int t[64]; t[threadIdx.x] = lens[gid >> 2]; __syncthreads(); "
                                              "K k0, k1;")
    if "valB[k + tid] = tid;" in new:  # read back after the exchanges
        source = source.replace("valB[k + 2 * tid] = v0;", "valB[k + 2 * tid] = v0 + valB[k + tid];")
    kernels, _ = convert(tmp_path, source)
    k = kernels["sort8"]
    assert k["form"] == "portable" and reason in note(k), note(k)
