"""switch statements the way real kernels write them (emit.printer._switch_cases): a hash's tail
whose cases fall through into each other, cases that close their block with the break
(``case 1: { ...; break; }``), an early ``if (c) break;`` inside a case, a default in the
middle. Each case runs what C runs from its label; checked equal on the CPU."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
#include <cuda_runtime.h>
#include <stdint.h>

// the tail of a block hash: the bytes left over fall through from the highest case down
__global__ void tail_mix(const uint8_t* __restrict__ data, uint32_t* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const uint8_t* tail = data + i * 4;
  uint32_t k = 0x9e3779b9u;
  switch (i & 3) {
  case 3: k ^= ((uint32_t)tail[2]) << 16;
  case 2: k ^= ((uint32_t)tail[1]) << 8;
  case 1: k ^= tail[0];
          k *= 0xcc9e2d51u;
  };
  out[i] = k;
}

// a label per case, the break closing each block; an early break; a default between cases
__global__ void labelled(const float* __restrict__ x, float* __restrict__ y, const int* __restrict__ label, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i];
  switch (label[i]) {
    case 1: {
      v += 1.0f;
      break;
    }
    case 2:
      if (v > 0.5f) break;
      v = v * 2.0f;
      v -= 0.25f;
      break;
    default:
      v = -v;
    case 3: {
      v *= 3.0f;
    }
    case 4:
      v += 4.0f;
      break;
  }
  y[i] = v;
}
"""

SPEC = (spec_kernel("tail_mix", (2, 1, 1), (64, 1, 1), "exact",
                    spec_buffer("data", "uint8", 4 * 128, "in", 0, 255),
                    spec_buffer("out", "uint32", 128, "out"),
                    spec_scalar("n", "int32", 128))
        + spec_kernel("labelled", (2, 1, 1), (64, 1, 1), "fp32",
                      spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                      spec_buffer("y", "float32", 128, "out"),
                      spec_buffer("label", "int32", 128, "in", 0, 6),
                      spec_scalar("n", "int32", 128)))


def test_switch_cases_run_what_c_runs_from_their_label(tmp_path):
    out, kernels = converted(tmp_path, KERNELS, SPEC)
    assert {k["kernel"]: k["form"] for k in kernels} == {"tail_mix": "tile", "labelled": "tile"}
    assert all(k["check"]["status"] == "pass" for k in kernels), [k["check"]["message"] for k in kernels]


def test_a_break_deeper_than_a_case_guard_is_still_refused(tmp_path):
    source = """
    #include <cuda_runtime.h>
    __global__ void deep(const int* c, int* y, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i >= n) return;
      int v = 0;
      switch (c[i]) {
        case 0:
          if (i > 3) { v = 1; if (i > 9) break; v = 2; }
          v += 5;
          break;
        default: v = 7;
      }
      y[i] = v;
    }
    """
    _, (k,) = converted(tmp_path, source, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported") and "break inside a switch case body" in k["reason"]


#: A 128-bit hash's tail: sixteen cases falling through, inside a loop over keys and a branch
#: (as murmur hashes write it). As an if/elif chain each case was one block deeper in Python's
#: syntax tree, past the 20 nested blocks TileLang's frontend can compile; the cases are flat ifs.
LONG_TAIL = """
#include <cuda_runtime.h>
#include <stdint.h>
__global__ void tail16(const uint8_t* __restrict__ data, const int* __restrict__ len,
                       uint64_t* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    for (int r = 0; r < 2; r++) {
      const uint8_t* tail = data + i * 16;
      uint64_t k1 = 0, k2 = 0;
      if (r == 0 || len[i] > 3) {
        switch (len[i] & 15) {
        case 15: k2 ^= ((uint64_t)tail[14]) << 48;
        case 14: k2 ^= ((uint64_t)tail[13]) << 40;
        case 13: k2 ^= ((uint64_t)tail[12]) << 32;
        case 12: k2 ^= ((uint64_t)tail[11]) << 24;
        case 11: k2 ^= ((uint64_t)tail[10]) << 16;
        case 10: k2 ^= ((uint64_t)tail[9]) << 8;
        case 9: k2 ^= ((uint64_t)tail[8]) << 0;
        case 8: k1 ^= ((uint64_t)tail[7]) << 56;
        case 7: k1 ^= ((uint64_t)tail[6]) << 48;
        case 6: k1 ^= ((uint64_t)tail[5]) << 40;
        case 5: k1 ^= ((uint64_t)tail[4]) << 32;
        case 4: k1 ^= ((uint64_t)tail[3]) << 24;
        case 3: k1 ^= ((uint64_t)tail[2]) << 16;
        case 2: k1 ^= ((uint64_t)tail[1]) << 8;
        case 1: k1 ^= ((uint64_t)tail[0]) << 0;
          break;
        default: k1 = 7;
        }
      }
      out[2 * i + r] = k1 * 31 + k2;
    }
  }
}
"""

LONG_TAIL_SPEC = spec_kernel("tail16", (1, 1, 1), (64, 1, 1), "exact",
                             spec_buffer("data", "uint8", 1024, "in", 0, 255),
                             spec_buffer("len", "int32", 64, "in", 0, 40),
                             spec_buffer("out", "uint64", 128, "out"),
                             spec_scalar("n", "int32", 64))


def test_a_sixteen_case_tail_is_flat_ifs_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, LONG_TAIL, LONG_TAIL_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "elif" not in text and "if not (len_[i] & 15 == 15 or" in text
