"""Block-wide votes (``__syncthreads_count``/``_and``/``_or``) as barriers around a shared counter
(analysis.prepare.block_votes), written the way pruning and clustering programs use them: a count
that decides a flag, an and in a device function storing through a pointer, an or in a condition,
in 1-D and 2-D blocks. Checked on the CPU against the g++-built original."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

VOTES = """
#include <cuda_runtime.h>
__device__ void mark(unsigned char* out, int cond) { *out = __syncthreads_and(cond); }
__global__ void votes(const float* x, int* counts, unsigned char* all, int* any, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float v = i < n ? x[i] : 0.f;
  int c = __syncthreads_count(v > 0);
  if (threadIdx.x == 0) counts[blockIdx.x] = c;
  mark(&all[blockIdx.x], v > -1.99f);
  if (__syncthreads_or(v > 1.9f) && threadIdx.x == 1) any[blockIdx.x] = 1;
  else if (threadIdx.x == 1) any[blockIdx.x] = 0;
}
__global__ void tiles(const int* m, int* nonzero, int w) {
  int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
  int count = __syncthreads_count(m[r * w + c] != 0);
  if (threadIdx.x == 0 && threadIdx.y == 0) nonzero[blockIdx.y * gridDim.x + blockIdx.x] = count;
}
"""

SPEC = (spec_kernel("votes", (6, 1, 1), (64, 1, 1), "exact",
                    spec_buffer("x", "float32", 400, "in", -2, 2),
                    spec_buffer("counts", "int32", 6, "out"),
                    spec_buffer("all", "uint8", 6, "out"),
                    spec_buffer("any", "int32", 6, "out"),
                    spec_scalar("n", "int32", 380))
        + spec_kernel("tiles", (2, 3, 1), (8, 4, 1), "exact",
                      spec_buffer("m", "int32", 16 * 12, "in", -1, 1),
                      spec_buffer("nonzero", "int32", 6, "out"),
                      spec_scalar("w", "int32", 16)))


def test_block_votes_count_the_threads_whose_predicate_holds(tmp_path):
    out, kernels = converted(tmp_path, VOTES, SPEC)
    # the count of a 1-D block is a block sum through atomicAdd on a shared scalar, lifted
    # (analysis.lift.shared_atomics); the 2-D block's vote, a branch between the native vote and
    # the counter's barriers, runs as one row of lanes (analysis.lift.tile_loops, flat_block)
    forms = {"votes": "tile", "tiles": "tile"}
    for k in kernels:
        assert k["form"] == forms[k["kernel"]] and k["check"]["status"] == "pass", (k["kernel"], k["reason"], k["check"])
    text = (out / "k.py").read_text()
    assert "block_votes" in text
    # the vote adds no dimension to a kernel that indexes its block in x only
    assert "threads=block_x)" in text and "block_x, block_y = block_x * block_y, 1" in text
