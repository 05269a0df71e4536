"""The warp shuffles and votes of CUDA before 9 (``__shfl(v, 0)``, ``__shfl_down(v, 16)``,
``__ballot(p)``: no mask, the whole warp) are declared by the prelude and read as their ``_sync``
forms with the full mask (``parse.build.LEGACY_WARP_CALLS``). Kernels written the way older
programs write them (a warp's dot product summed by ``__shfl_down`` and broadcast by ``__shfl``)
convert and agree with the original on the CPU; a program's own macro or overload of such a name
still wins."""
from __future__ import annotations

import re

from tests.analysis.lift.support import convert

#: A per-warp dot product: the tree by __shfl_down, lane 0's total broadcast by __shfl, each lane
#: writing its own multiple of it; and the votes and the other two shuffles on one value.
LEGACY = """
    __global__ void warp_dot(const float* __restrict__ a, const float* __restrict__ b, float* out, int n) {
      int lane = threadIdx.x % 32;
      int wid = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
      float v = 0.f;
      for (int i = lane; i < n; i += 32) v += a[wid * n + i] * b[wid * n + i];
      v += __shfl_down(v, 16);
      v += __shfl_down(v, 8);
      v += __shfl_down(v, 4);
      v += __shfl_down(v, 2);
      v += __shfl_down(v, 1);
      v = __shfl(v, 0);
      out[wid * 32 + lane] = v * (lane + 1);
    }
    __global__ void votes(const int* __restrict__ x, unsigned* out) {
      int t = blockIdx.x * blockDim.x + threadIdx.x;
      int p = x[t] > 0;
      unsigned bits = __ballot(p);
      int some = __any(p);
      int every = __all(x[t] > -3);
      int up = __shfl_up(x[t], 1);
      int other = __shfl_xor(x[t], 3);
      out[t] = bits + 3u * some + 5u * every + 7u * (unsigned)up + 11u * (unsigned)other;
    }
"""

SPEC = """
    [[kernel]]
    name = "warp_dot"
    grid = [3, 1, 1]
    block = [64, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "a"
    buffer = "float32"
    elements = 384
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "b"
    buffer = "float32"
    elements = 384
    role = "in"
    range = [0.5, 2.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 192
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 64

    [[kernel]]
    name = "votes"
    grid = [2, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "x"
    buffer = "int32"
    elements = 128
    role = "in"
    range = [-3, 3]
    [[kernel.args]]
    name = "out"
    buffer = "uint32"
    elements = 128
    role = "out"
"""


def test_legacy_shuffles_and_votes_convert_and_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, LEGACY, "--check", "cpu", spec=SPEC)
    for name in ("warp_dot", "votes"):
        k = kernels[name]
        assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
        assert k["check"]["status"] == "pass", k["check"]
        assert not [d for d in k["diagnostics"] if d["severity"] == "error"], k["diagnostics"]
    # __shfl_up's delta is a plain index term: an unsigned 1 (tx - T.uint32(1)) is an unsigned
    # subtraction TileLang refuses where it folds tx to 0
    assert re.search(r"xch_int32\[tx - 1\]", text), text
    assert "T.uint32(1)]" not in text


def test_a_programs_own_legacy_shuffle_still_wins(tmp_path):
    """A macro of the program's own (``#define __shfl_down(v, d) __shfl_down_sync(...)``) and an
    overload for a type the prelude has none for (``float2``) are the program's, as before."""
    source = """
        #define __shfl_down(v, d) __shfl_down_sync(0xffffffff, v, d)
        __device__ float2 __shfl_xor(const float2 v, int m) {
          return make_float2(__shfl_xor_sync(0xffffffff, v.x, m), __shfl_xor_sync(0xffffffff, v.y, m));
        }
        __global__ void own(const float* __restrict__ x, float* out) {
          int t = blockIdx.x * blockDim.x + threadIdx.x;
          float v = x[t];
          v += __shfl_down(v, 1);
          float2 w = __shfl_xor(make_float2(v, -v), 1);
          out[t] = w.x + 2.f * w.y;
        }
    """
    spec = """
        [[kernel]]
        name = "own"
        grid = [2, 1, 1]
        block = [64, 1, 1]
        tolerance = "fp32"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 128
        role = "in"
        range = [-1.0, 1.0]
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 128
        role = "out"
    """
    kernels, _ = convert(tmp_path, source, "--check", "cpu", spec=spec)
    k = kernels["own"]
    assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
    assert k["check"]["status"] == "pass", k["check"]


def test_legacy_shuffles_in_templates_resolve_per_instance(tmp_path):
    """A warp sum template (``__shfl_down(v, o)`` on a ``T v``) and the kernel template calling
    it: the shuffles on the template's type are read as their _sync forms too."""
    source = """
        template <typename T>
        __device__ T warp_sum(T v) {
          for (int o = 16; o > 0; o /= 2) v += __shfl_down(v, o);
          return __shfl(v, 0);
        }
        template <typename T>
        __global__ void sums(const T* __restrict__ x, T* out) {
          int t = blockIdx.x * blockDim.x + threadIdx.x;
          T v = warp_sum(x[t]);
          out[t] = v + __shfl_xor(x[t], 1);
        }
        void host(const float* x, float* o, const int* xi, int* oi) {
          sums<float><<<2, 64>>>(x, o);
          sums<int><<<2, 64>>>(xi, oi);
        }
    """
    spec = """
        [[kernel]]
        name = "sums"
        template = ["float"]
        grid = [2, 1, 1]
        block = [64, 1, 1]
        tolerance = "fp32_accum"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 128
        role = "in"
        range = [-1.0, 1.0]
        [[kernel.args]]
        name = "out"
        buffer = "float32"
        elements = 128
        role = "out"
    """
    kernels, _ = convert(tmp_path, source, "--check", "cpu", spec=spec)
    k = kernels["sums"]
    assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
    assert k["check"]["status"] == "pass", k["check"]
