"""A local pointer read and written through its own address (analysis.prepare.pointer_copies): a
helper swapping two views of a __shared__ cache through ``void**`` (the way a seam-carving
dynamic program swaps its rows), inlined, is a swap of the two pointers, which move as offsets."""
from __future__ import annotations

from migrate.analysis.prepare.pointer_copies import pointer_copies
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

SWAP = """
#define W 64
__device__ void pointer_swap(void **p1, void **p2) {
  void *tmp;
  tmp = *p1;
  *p1 = *p2;
  *p2 = tmp;
}

__global__ void rows(const int* __restrict__ cost, int* __restrict__ M, int h, int live) {
  __shared__ int cache[2 * W];
  int *cur = cache;
  int *next = &(cache[W]);
  int c = threadIdx.x;
  int ix = blockIdx.x * W * h + c;
  cur[c] = cost[ix];
  M[ix] = cur[c];
  __syncthreads();
  for (int row = 1; row < h; row++) {
    ix += W;
    int left = c > 0 ? cur[c - 1] : 1 << 30;
    int right = c < W - 1 ? cur[c + 1] : 1 << 30;
    int best = min(left, min(cur[c], right)) + cost[ix];
    __syncthreads();
    if (c < live) M[ix] = best;
    next[c] = c < live ? best : 0;
    __syncthreads();
    pointer_swap((void**)&cur, (void**)&next);
  }
  M[blockIdx.x * W * h + c] = cur[c] - cost[blockIdx.x * W * h + c];
}

__global__ void swap_in_branch(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float a[W], b[W];
  float *p = a, *q = b;
  int t = threadIdx.x;
  p[t] = x[blockIdx.x * W + t];
  q[t] = -x[blockIdx.x * W + (W - 1 - t)];
  __syncthreads();
  for (int i = 0; i < n; i++) {
    if (t % 3 == i % 2) pointer_swap((void**)&p, (void**)&q);
    y[(blockIdx.x * n + i) * W + t] = p[(t + i) % W] + 2.0f * q[t];
  }
}
"""

SPEC = spec_kernel("rows", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("cost", "int32", 2 * 64 * 5, "in", 0, 100),
                   spec_buffer("M", "int32", 2 * 64 * 5, "out"),
                   spec_scalar("h", "int32", 5), spec_scalar("live", "int32", 50)) \
    + spec_kernel("swap_in_branch", (2, 1, 1), (64, 1, 1), "fp32",
                  spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                  spec_buffer("y", "float32", 2 * 7 * 64, "out"), spec_scalar("n", "int32", 7))


def test_a_pointer_read_through_its_own_address_is_the_pointer(tmp_path):
    u = unit(tmp_path, SWAP)
    from migrate.analysis.prepare.inline import inline_calls
    device = {f.name: f for f in u.device_functions}
    fn = pointer_copies(inline_calls(u.kernel("rows"), device, {"pointer_swap"}))
    # no address of a pointer is left, and the swap's temporary is an int* like the views
    assert not [n for n in nodes(fn, m.Unary) if n.op == "&" and isinstance(n.operand, m.Ref)]
    (tmp,) = [d for d in nodes(fn, m.VarDecl) if "tmp" in d.name]
    assert str(tmp.type) == "int32*"


def test_pointers_swapped_through_void_pointers_convert_and_check_equal(tmp_path):
    _out, kernels = converted(tmp_path, SWAP, SPEC)
    # rows: its barrier-separated phases lift as tiled loops (analysis.lift.tile_loops)
    assert {k["kernel"]: k["form"] for k in kernels} == {"rows": "tile", "swap_in_branch": "portable"}
    assert all(k["check"]["status"] == "pass" for k in kernels), [k["check"] for k in kernels]
