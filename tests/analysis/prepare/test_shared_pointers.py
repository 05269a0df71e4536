"""A pointer kept in a __shared__ variable, set by one thread and read by all after a barrier
(analysis.prepare.moving_pointers): its offset (and, where it points into several buffers, which
one) is the block's, a __shared__ variable too; every access an index of the buffer it views."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#define N 64
__global__ void rows_and_ping_pong(const float* __restrict__ x, float* __restrict__ y, int pitch, int rounds) {
  __shared__ const float* row;
  __shared__ float a[N], b[N];
  __shared__ float *cur, *nxt;
  int t = threadIdx.x;
  if (t == 0) {
    row = x + blockIdx.x * pitch;
    cur = a;
    nxt = b;
  }
  __syncthreads();
  cur[t] = row[t] * 2.0f + row[(t + 1) % N];
  __syncthreads();
  for (int r = 0; r < rounds; r++) {
    nxt[t] = cur[t] + 0.5f * cur[(t + r + 1) % N];
    __syncthreads();
    if (t == 0) {
      float* tmp = cur;
      cur = nxt;
      nxt = tmp;
    }
    __syncthreads();
  }
  y[blockIdx.x * N + t] = cur[t] - row[N - 1 - t];
}
"""

SPEC = spec_kernel("rows_and_ping_pong", (3, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("x", "float32", 3 * 80, "in", -1.0, 1.0),
                   spec_buffer("y", "float32", 3 * 64, "out"),
                   spec_scalar("pitch", "int32", 80), spec_scalar("rounds", "int32", 5))


def test_pointers_kept_in_shared_variables_convert_and_check_equal(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    text = next(out.glob("*.py")).read_text()
    assert "cur_off = T.alloc_shared((1,)" in text and "cur_buf = T.alloc_shared((1,)" in text
