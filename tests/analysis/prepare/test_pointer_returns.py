"""Pointers a device function returns and null pointers (analysis.prepare.pointer_returns,
moving_pointers' pointers that may be null, analysis.prepare.null_tests), written the way the
pool's RNA folding and MoE programs write them: ``v1 = array_val(v, i, j, n, s)`` returning
``can_pair(...) ? &a[ind(i, j, n)] : 0`` and tested before it is read (``if ((v1 = ...))``, ``v1 ?
*v1 : INF``, ``i < n - 1 && (v1 = ...)``), and a device function given ``nullptr`` for a mask it
tests (``mask == nullptr || mask[i]``). Each is checked on the CPU against the g++-built original."""
from __future__ import annotations

from migrate.analysis.prepare.pointer_returns import pointer_returns
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

CELLS = """
#include <cuda_runtime.h>
#define BIG 1000
__device__ static int pairs(int i, int j, int n, const int* s)
{
  if (j < i) {
    const int t = i;
    i = j;
    j = t;
  }
  return j - i > 1 && (s[i] + s[j]) % 3 != 0;
}
__device__ static int ind(int i, int j, int n) { return i * n + j; }
__device__ static int* cell(int* a, int i, int j, int n, const int* s)
{
  return pairs(i, j, n, s) ? &a[ind(i, j, n)] : 0;
}
__device__ static void keep_min(int* a, const int b) { if (b < *a) *a = b; }

// each thread scans its row of a table through a pointer that may be null
__global__ void best_cells(int n, const int* __restrict__ s, int* __restrict__ v, int* __restrict__ w)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int* p;
  int best = BIG * 4;
  for (int j = 0; j < n; j++) {
    p = cell(v, i, j, n, s);
    keep_min(&best, (p ? *p : BIG) + j);
    if ((p = cell(v, j, i, n, s)))
      keep_min(&best, *p - 1);
    if (j > 0 && (p = cell(v, i, j - 1, n, s)) && *p > 0)
      keep_min(&best, *p + 2);
    int* q;
    if ((q = cell(v, i, j, n, s)) != 0 && j % 4 == 0)
      keep_min(&best, -*q);
    if (!(q = cell(v, j, j / 2, n, s)))
      best += 1;
  }
  w[i] = best;
}

// a block per row: threads stride over it, each writing the cells that exist
__global__ void bump_cells(int n, const int* __restrict__ s, int* __restrict__ v)
{
  int i = blockIdx.x;
  int* c;
  for (int j = threadIdx.x; j < n; j += blockDim.x) {
    c = cell(v, i, j, n, s);
    if (c != 0) *c = *c * 2 + 1;
  }
}
"""

CELLS_SPEC = spec_kernel("best_cells", (2, 1, 1), (32, 1, 1), "exact", spec_scalar("n", "int32", 50),
                         spec_buffer("s", "int32", 50, "in", 0, 4), spec_buffer("v", "int32", 2500, "in", -50, 50),
                         spec_buffer("w", "int32", 64, "out")) + \
    spec_kernel("bump_cells", (40, 1, 1), (16, 1, 1), "exact", spec_scalar("n", "int32", 40),
                spec_buffer("s", "int32", 40, "in", 0, 4), spec_buffer("v", "int32", 1600, "inout", -50, 50))


def test_a_returned_view_is_the_expression_returned_at_each_call(tmp_path):
    u = unit(tmp_path, CELLS)
    device = {f.name: f for f in u.device_functions}
    fn = pointer_returns(u.kernel("best_cells"), device)
    assert "cell" not in [c.callee for c in nodes(fn, m.Call)] and "cell" not in fn.calls
    assert {"pairs", "ind"} <= set(fn.calls)
    ternaries = [n for n in nodes(fn, m.Ternary) if isinstance(n.type, m.Pointer)]
    assert len(ternaries) == 5  # one per call, the condition and the view in the caller's names


def test_pointers_that_may_be_null_convert_and_check_equal(tmp_path):
    out, kernels = converted(tmp_path, CELLS, CELLS_SPEC)
    for k in kernels:
        assert k["form"] not in ("hybrid", "unsupported"), (k["kernel"], k["reason"])
        assert k["check"]["status"] == "pass", (k["kernel"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "p_set" in text and "q_set" in text and "c_set" in text


def test_a_pointer_that_may_be_null_copied_stays_refused_by_name(tmp_path):
    source = CELLS.split("// each thread")[0] + """
__global__ void copied(int n, const int* __restrict__ s, int* __restrict__ v, int* __restrict__ w)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int* p;
  const int* r = v;
  p = cell(v, i, 0, n, s);
  r = p;
  w[i] = *r;
}
"""
    _out, (k,) = converted(tmp_path, source, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported") and "local pointer" in k["reason"], k["reason"]


MASKED = """
#include <cuda_runtime.h>
__device__ void count_tokens(const int* __restrict__ ids, int* __restrict__ hist, int numel, int per,
                             const int* mask)
{
  const int tid = blockIdx.x * blockDim.x + threadIdx.x;
  for (int i = tid; i < numel; i += blockDim.x * gridDim.x) {
    int weight = mask == nullptr ? 1 : mask[i / per];
    if (mask == nullptr || mask[i / per]) {
      atomicAdd(&hist[ids[i] & 7], weight + 1);
    }
  }
}

__global__ void count_all(const int* __restrict__ ids, int* __restrict__ hist, int numel, int per)
{
  count_tokens(ids, hist, numel, per, nullptr);
}
"""

MASKED_SPEC = spec_kernel("count_all", (2, 1, 1), (64, 1, 1), "exact", spec_buffer("ids", "int32", 300, "in", 0, 100),
                          spec_buffer("hist", "int32", 8, "inout", 0, 5), spec_scalar("numel", "int32", 300),
                          spec_scalar("per", "int32", 3))


def test_a_null_argument_tested_in_the_callee_takes_the_branch_c_takes(tmp_path):
    out, (k,) = converted(tmp_path, MASKED, MASKED_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    assert "mask" not in (out / "k.py").read_text().split("def count_all")[1].split("\n\n")[0]


STEPPED = """
#include <cuda_runtime.h>
// appends the run start..end to a row, as mergeVS's save_blocks appends to its stepped row
__device__ int save_run(int* out, int start, int end, int count)
{
  for (int k = start; k < end; k++) {
    out[count] = k * 2 + 1;
    count += 1;
  }
  return count;
}

__global__ void runs(const int* __restrict__ starts, int* __restrict__ out, int* __restrict__ counts, int rows, int per)
{
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  out += row * per;
  starts += row * 2;
  int c = save_run(out, starts[0], starts[0] + (starts[1] & 3), 0);
  c = save_run(out, 100 + starts[1], 102 + starts[1], c);
  counts[row] = c;
}

// a template's view of a stepped parameter (A--; then A + top types as dependent)
template <typename T>
__global__ void window(const T* __restrict__ a, T* __restrict__ c, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  a--;
  if (i < n) {
    const T* at = a + i;
    c[i] = at[1] * 2 + at[2];
  }
}
template __global__ void window<float>(const float* __restrict__, float* __restrict__, int);
"""

STEPPED_SPEC = spec_kernel("runs", (2, 1, 1), (32, 1, 1), "exact", spec_buffer("starts", "int32", 128, "in", -40, 40),
                           spec_buffer("out", "int32", 384, "inout", -9, 9), spec_buffer("counts", "int32", 64, "out"),
                           spec_scalar("rows", "int32", 60), spec_scalar("per", "int32", 6)) + \
    spec_kernel("window", (2, 1, 1), (32, 1, 1), "fp32", spec_buffer("a", "float32", 65, "in", -1.0, 1.0),
                spec_buffer("c", "float32", 64, "out"), spec_scalar("n", "int32", 64), template="float")


def test_a_stepped_parameter_passed_to_a_device_function_or_viewed_in_a_template(tmp_path):
    out, kernels = converted(tmp_path, STEPPED, STEPPED_SPEC)
    for k in kernels:
        assert k["form"] not in ("hybrid", "unsupported"), (k["kernel"], k["reason"])
        assert k["check"]["status"] == "pass", (k["kernel"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "out_off" in text and "a_off" in text


#: a pointer chosen between two buffers (storeKVCache's cache, heartwall's row of endo- or
#: epicardial points), and views made from it
CHOSEN = """
#include <cuda_runtime.h>
#include <stdint.h>
// half a warp copies keys, the other half values, each through a pointer chosen between the caches
__global__ void store_kv(uint64_t* __restrict__ k_cache, uint64_t* __restrict__ v_cache,
                         const int* __restrict__ out_loc, const uint64_t batch,
                         const uint64_t* __restrict__ k, const uint64_t* __restrict__ v,
                         const uint64_t cache_stride, const uint64_t input_stride, const uint64_t items)
{
  const auto idx = blockIdx.x * blockDim.x + threadIdx.x;
  const auto warp_id = idx / 32;
  const auto lane_id = idx % 32;
  if (warp_id >= batch) return;
  const auto offset = out_loc[warp_id];
  const auto copy_k = lane_id < 16;
  const auto copy_id = lane_id % 16;
  const auto cache = copy_k ? k_cache : v_cache;
  const auto input = copy_k ? k : v;
  const auto dst = cache + offset * cache_stride;
  const auto src = input + warp_id * input_stride;
  for (uint64_t i = 0; i < items; ++i) {
    dst[copy_id + i * 16] = src[copy_id + i * 16] + (copy_k ? 1 : 2);
  }
}
"""

CHOSEN_SPEC = """
[[kernel]]
name = "store_kv"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "k_cache"
buffer = "uint64"
elements = 512
role = "inout"
range = [0, 1000]
[[kernel.args]]
name = "v_cache"
buffer = "uint64"
elements = 512
role = "inout"
range = [0, 1000]
[[kernel.args]]
name = "out_loc"
buffer = "int32"
elements = 4
role = "in"
range = [0, 7]
[[kernel.args]]
name = "batch"
scalar = "uint64"
value = 4
[[kernel.args]]
name = "k"
buffer = "uint64"
elements = 256
role = "in"
range = [0, 100000]
[[kernel.args]]
name = "v"
buffer = "uint64"
elements = 256
role = "in"
range = [0, 100000]
[[kernel.args]]
name = "cache_stride"
scalar = "uint64"
value = 64
[[kernel.args]]
name = "input_stride"
scalar = "uint64"
value = 64
[[kernel.args]]
name = "items"
scalar = "uint64"
value = 4
"""


def test_a_pointer_chosen_between_two_buffers_stores_to_the_one_chosen(tmp_path):
    out, (k,) = converted(tmp_path, CHOSEN, CHOSEN_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    text = (out / "k.py").read_text()
    assert "dst_buf" in text and "T.int64" in text.split("dst_off = ")[1].split("\n")[0]


#: a pointer that starts set, at a buffer itself or a view of one, and is cleared on a condition
CLEARED = """
#include <cuda_runtime.h>
__global__ void cleared(const float* __restrict__ x, float* __restrict__ y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float* p = x;
  const float* q = x + i;
  if (x[i] < 0.0f) p = nullptr;
  if (i % 3 == 0) q = 0;
  float acc = p ? p[i] * 2.0f : -1.0f;
  if (q != nullptr) acc += *q;
  y[i] = acc;
}
"""

CLEARED_SPEC = spec_kernel("cleared", (2, 1, 1), (32, 1, 1), "fp32", spec_buffer("x", "float32", 64, "in", -1.0, 1.0),
                           spec_buffer("y", "float32", 64, "out"), spec_scalar("n", "int32", 64))


def test_a_pointer_that_starts_set_and_is_cleared(tmp_path):
    out, (k,) = converted(tmp_path, CLEARED, CLEARED_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    assert "p_set" in (out / "k.py").read_text()


def test_a_templated_device_function_whose_type_no_argument_has_is_refused_by_name(tmp_path):
    """``getPositiveInfinity<vec_t>()`` (merge's sentinels): its macro, printed outside the
    kernel's factory, cannot learn ``vec_t``; the kernel is refused rather than left to fail with
    a NameError when it is built."""
    source = """
#include <cuda_runtime.h>
template <typename vec_t> __device__ vec_t top() { return (vec_t)1000; }
template <typename vec_t>
__global__ void sentinel(vec_t* __restrict__ c, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = top<vec_t>();
}
template __global__ void sentinel<float>(float* __restrict__, int);
"""
    _out, (k,) = converted(tmp_path, source, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported") and "type parameter 'vec_t'" in k["reason"], k["reason"]
