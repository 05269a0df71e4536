"""analysis.prepare.returns: early returns become guards."""
from __future__ import annotations

from migrate.analysis.prepare.returns import remaining_returns, returns_to_guards
from migrate.ir import model as m
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar, unit


def test_early_return_becomes_a_guard(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y, int n) {
            int i = threadIdx.x;
            if (i >= n) return;
            y[i] = 1.0f;
            __syncthreads();
            y[i] += 1.0f;
        }
    """)
    fn = returns_to_guards(u.kernel("k"))
    assert not remaining_returns(fn)
    guard = [s for s in fn.body.stmts if isinstance(s, m.If)][0]
    assert guard.cond.op == "<" and len(guard.then.stmts) == 3


#: Returns inside loops: a device function called with views (so inlined) returning from its loop
#: and from a nested loop, and a kernel leaving from inside its loop.
LOOP_RETURNS = """#include <cuda_runtime.h>
// the first bin whose cumulative share passes a draw (the way Monte Carlo lookups pick a material)
__device__ int pick(const float* __restrict__ cum, float r, int nbins) {
  for (int i = 0; i < nbins; i++) {
    if (r < cum[i]) return i;
  }
  return nbins - 1;
}
// the first cell of a 2-D table equal to a key, searched row by row (-1 when none)
__device__ int find2(const int* __restrict__ table, int rows, int cols, int key) {
  for (int r = 0; r < rows; r++)
    for (int c = 0; c < cols; c++)
      if (table[r * cols + c] == key) return r * cols + c;
  return -1;
}
__global__ void lookup(const float* __restrict__ draws, const float* __restrict__ cum, const int* __restrict__ table,
                       int* __restrict__ out, int n, int nbins, int rows, int cols) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int b = pick(cum + (i % 2) * nbins, draws[i], nbins);  // a view: inlined
  out[2 * i] = b;
  out[2 * i + 1] = find2(table + (i % 2) * cols, rows - 1, cols, b + i % 5);
}
// a kernel that leaves from inside its loop
__global__ void first_negative(const float* __restrict__ x, int* __restrict__ where, int n, int m) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  where[i] = -1;
  for (int j = 0; j < m; j++) {
    if (x[i * m + j] < 0.0f) { where[i] = j; return; }
  }
  where[i] = m;
}
"""

LOOP_RETURNS_SPEC = """[[kernel]]
name = "lookup"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "draws"
buffer = "float32"
elements = 100
role = "in"
range = [0.0, 1.0]
[[kernel.args]]
name = "cum"
buffer = "float32"
elements = 8
role = "in"
range = [0.0, 1.0]
[[kernel.args]]
name = "table"
buffer = "int32"
elements = 12
role = "in"
range = [0, 12]
[[kernel.args]]
name = "out"
buffer = "int32"
elements = 200
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 100
[[kernel.args]]
name = "nbins"
scalar = "int32"
value = 4
[[kernel.args]]
name = "rows"
scalar = "int32"
value = 3
[[kernel.args]]
name = "cols"
scalar = "int32"
value = 4

[[kernel]]
name = "first_negative"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 800
role = "in"
range = [-0.2, 1.0]
[[kernel.args]]
name = "where"
buffer = "int32"
elements = 100
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 100
[[kernel.args]]
name = "m"
scalar = "int32"
value = 8
"""


def test_a_return_inside_a_loop_leaves_it_through_a_flag_and_checks_equal(tmp_path):
    fn = returns_to_guards(unit(tmp_path, LOOP_RETURNS).kernel("first_negative"))
    assert not [n for n in m.walk(fn.body) if isinstance(n, m.Return)]
    assert [n for n in m.walk(fn.body) if isinstance(n, m.Break)]
    out, kernels = converted(tmp_path, LOOP_RETURNS, LOOP_RETURNS_SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in kernels} == {"lookup": "pass", "first_negative": "pass"}


#: Returns in the middle of a branch with statements after the branch: a kernel skipping its
#: coordinate axes, and an inlined device function (a view argument) returning from a nested if.
BRANCH_RETURNS = """#include <cuda_runtime.h>
// a return in the middle of a branch, with statements after the branch (the way image kernels
// skip their coordinate axes)
__global__ void color(unsigned char* __restrict__ pix, int* __restrict__ count, int size, int half) {
  int y = blockDim.y * blockIdx.y + threadIdx.y;
  int x = blockDim.x * blockIdx.x + threadIdx.x;
  if (y < size && x < size) {
    int idx = (y * size + x) * 3;
    pix[idx] = 7;
    if (x == half || y == half) return;
    pix[idx + 1] = (unsigned char)(x * y);
  } else {
    if (x >= size + 2) return;
  }
  if (y < size && x < size) pix[(y * size + x) * 3 + 2] = 1; else atomicAdd(count, 1);
}
// an inlined device function (a view argument) returning from inside a branch
__device__ float clipped(const float* __restrict__ row, int j, int n) {
  float v = row[j];
  if (j > 0) {
    if (v < 0.0f) return -1.0f;
    v += row[j - 1];
  }
  return v;
}
__global__ void rows(const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = clipped(x + (i / 8) * 8, i % 8, n);
}
"""

BRANCH_RETURNS_SPEC = """[[kernel]]
name = "color"
grid = [3, 3, 1]
block = [8, 8, 1]
tolerance = "exact"
[[kernel.args]]
name = "pix"
buffer = "uint8"
elements = 1200
role = "inout"
range = [0, 255]
[[kernel.args]]
name = "count"
buffer = "int32"
elements = 1
role = "inout"
range = [0, 3]
[[kernel.args]]
name = "size"
scalar = "int32"
value = 20
[[kernel.args]]
name = "half"
scalar = "int32"
value = 10

[[kernel]]
name = "rows"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 128
role = "in"
range = [-0.5, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 128
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 128
"""


def test_a_return_inside_a_branch_stops_what_follows_the_branch_and_checks_equal(tmp_path):
    fn = returns_to_guards(unit(tmp_path, BRANCH_RETURNS).kernel("color"))
    assert not remaining_returns(fn)
    assert "x_left" in {d.name for d in m.walk(fn.body) if isinstance(d, m.VarDecl)}
    out, kernels = converted(tmp_path, BRANCH_RETURNS, BRANCH_RETURNS_SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in kernels} == {"color": "pass", "rows": "pass"}


#: A hash's tail the way lookup3 writes it: a switch over the remaining length whose ``case 0``
#: returns early from the device function, the other cases falling to the final mix; and a
#: kernel whose thread leaves from a case (a subject the cases change: an if/else chain).
SWITCH_RETURNS = """#include <cuda_runtime.h>
__device__ unsigned tail(unsigned a, unsigned b, unsigned c, const unsigned* k, unsigned length)
{
    switch (length) {
        case 3: c += k[2] & 0xff;
        case 2: b += k[1];
        case 1: a += k[0]; break;
        case 0: return c;
        default: a ^= length;
    }
    c ^= b; c -= (b << 14) | (b >> 18);
    a ^= c; a -= (c << 11) | (c >> 21);
    return c + a;
}
__global__ void hash_tails(const unsigned* keys, const unsigned* lengths, unsigned* out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned m = lengths[i] % 6;
    switch (m) {
        case 5: m = 9; out[i] = 7u; return;
        case 4: out[i] = m; break;
        default: out[i] = tail(0xdeadbeefu + i, 17u, 29u, keys + 3 * i, m);
    }
}
"""

SWITCH_RETURNS_SPEC = spec_kernel("hash_tails", (2, 1, 1), (64, 1, 1), "exact",
                                  spec_buffer("keys", "uint32", 384, "in", 0, 4000000000),
                                  spec_buffer("lengths", "uint32", 128, "in", 0, 60),
                                  spec_buffer("out", "uint32", 128, "out"), spec_scalar("n", "int32", 128))


def test_a_return_inside_a_switch_case_is_guarded_and_checks_equal(tmp_path):
    u = unit(tmp_path, SWITCH_RETURNS)
    (tail,) = u.device_functions
    result = m.Ref("result_", "local", tail.returns, tail.span)
    assert remaining_returns(returns_to_guards(tail, result)) == []
    assert remaining_returns(returns_to_guards(u.kernel("hash_tails"))) == []
    out, (k,) = converted(tmp_path, SWITCH_RETURNS, SWITCH_RETURNS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
    assert "return c" not in (out / "k.py").read_text()
