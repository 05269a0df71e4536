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
        + spec_kernel("labelled", (2, 1, 1), (64, 1, 1), "exact",
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
    assert k["form"] == "unsupported" and "break inside a switch case body" in k["reason"]
