"""Inlining device functions (analysis.prepare.inline): what the phase split must see, what cannot be
hoisted, and warp calls as statements of their own."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.inline import InlineError, hoist_warp_calls, inline_calls, needs_inlining
from migrate.ir import model as m
from tests.analysis.support import calls, converted, nodes, unit


INLINE = """
__device__ float block_sum(float v, float* scratch) {
    scratch[threadIdx.x] = v;
    __syncthreads();
    if (threadIdx.x == 0) { float t = 0; for (int i = 0; i < blockDim.x; ++i) t += scratch[i]; scratch[0] = t; }
    __syncthreads();
    return scratch[0];
}
__device__ float twice(float v) { return 2 * v; }
__device__ void bump(float& acc, float v) { acc += v; }
__global__ void k(const float* x, float* y) {
    __shared__ float s[128];
    float acc = 0;
    bump(acc, x[threadIdx.x]);
    float total = twice(block_sum(acc, s)) + 1.0f;
    y[blockIdx.x] = total;
}
"""


def test_inline_only_what_the_phase_split_must_see(tmp_path):
    u = unit(tmp_path, INLINE)
    device = {f.name: f for f in u.device_functions}
    assert needs_inlining(device) == {"block_sum", "bump"}
    assert needs_inlining(device, portable=False) == {"bump"}  # reference parameter only
    fn = inline_calls(u.kernel("k"), device, needs_inlining(device))
    assert "block_sum" not in calls(fn) and "bump" not in calls(fn)
    assert "twice" in calls(fn) and fn.calls == ("twice",)  # a plain helper stays a macro
    assert calls(fn).count("__syncthreads") == 2
    # the shared array reaches the inlined body through the pointer parameter
    assert any(isinstance(n, m.Index) and isinstance(n.base, m.Ref) and n.base.name == "s"
               for n in m.walk(fn.body))
    # the reference parameter writes the caller's variable
    assigns = [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref) and n.target.name == "acc"]
    assert assigns and assigns[0].op == "+="


def test_inline_refuses_calls_it_cannot_hoist(tmp_path):
    u = unit(tmp_path, INLINE.replace("float total = twice(block_sum(acc, s)) + 1.0f;",
                                      "float total = acc > 0 && block_sum(acc, s) > 0;"))
    device = {f.name: f for f in u.device_functions}
    with pytest.raises(InlineError, match="after '&&'"):
        inline_calls(u.kernel("k"), device, needs_inlining(device))


def test_warp_calls_get_statements_of_their_own(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y) {
            float v = y[threadIdx.x];
            v += __shfl_down_sync(0xffffffffu, v, 1) * 2.0f;
            y[threadIdx.x] = v;
        }
    """)
    fn = hoist_warp_calls(u.kernel("k"))
    decls = [d for d in nodes(fn, m.VarDecl) if d.name.startswith("shfl_down")]
    assert len(decls) == 1
    assigns = [a for a in nodes(fn, m.Assign) if isinstance(a.value, m.Call)]
    assert assigns and assigns[0].value.callee == "__shfl_down_sync"


#: Random draws through a pointer into the state buffer in branch conditions (an if, its else-if)
#: and a vote in an if condition: Monte Carlo kernels accepting a move.
BRANCH_CALLS = """#include <cuda_runtime.h>
__device__ float LCG_random(unsigned int * seed) {
  const unsigned int m = 2147483648u;
  *seed = (26757677u * (*seed) + 1u) % m;
  return (float) (*seed) / (float) m;
}
// Metropolis steps: random draws in the branch condition (the way Monte Carlo kernels accept a move)
__global__ void propagate(unsigned int* __restrict__ states, float* __restrict__ x, int n, int nstep) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i >= n) return;
  float xi = x[i];
  for (int s = 0; s < nstep; s++) {
    float xnew = xi + (LCG_random(states + i) - 0.5f) * 0.3f;
    if (xnew * xnew < xi * xi * LCG_random(&states[i]) + 0.25f) xi = xnew;
    else if (LCG_random(states + i) > 0.75f) xi = -xi;
  }
  x[i] = xi;
}
__global__ void vote(const int* x, int* y) {  // a vote in a branch condition
  if (__any_sync(0xffffffffu, x[threadIdx.x] > 0)) y[threadIdx.x] = 1; else y[threadIdx.x] = 2;
}
"""

BRANCH_CALLS_SPEC = """[[kernel]]
name = "propagate"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "states"
buffer = "uint32"
elements = 100
role = "inout"
range = [1, 2000000000]
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 100
role = "inout"
range = [-1.0, 1.0]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 100
[[kernel.args]]
name = "nstep"
scalar = "int32"
value = 20

[[kernel]]
name = "vote"
grid = [1, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "int32"
elements = 64
role = "in"
range = [-100, 3]
[[kernel.args]]
name = "y"
buffer = "int32"
elements = 64
role = "out"
"""


def test_calls_in_a_branch_condition_run_before_the_branch_and_check_equal(tmp_path):
    u = unit(tmp_path, BRANCH_CALLS)
    device = {f.name: f for f in u.device_functions}
    fn = inline_calls(u.kernel("propagate"), device, {"LCG_random"})
    assert "LCG_random" not in calls(fn)
    (outer,) = [s for s in nodes(fn, m.If) if isinstance(s.other, (m.If, m.Block)) and s.other is not None
                and any(isinstance(n, m.If) for n in m.walk(s.other))]
    # the else-if's draw is computed inside the else branch, not before the outer if
    assert any(isinstance(n, m.Assign) and isinstance(n.target, m.Index) for n in m.walk(outer.other))
    out, kernels = converted(tmp_path, BRANCH_CALLS, BRANCH_CALLS_SPEC)
    assert {k["kernel"]: k["check"]["status"] for k in kernels} == {"propagate": "pass", "vote": "pass"}


#: A task iterator kept through a pointer to a local, the way partitioned kernels walk their tasks
#: (``for (t = first(&p); more(&p); t = next(&p))``): a condition that only reads is its returned
#: expression in place; a step that writes makes the loop a while loop with the step at the end of
#: its body; a view given to a one-expression function right of ``&&`` or in ``?:`` is its value.
ITERATOR = """
#include <cuda_runtime.h>
__device__ int first(int* cur, int base) { *cur = base + blockIdx.x; return *cur; }
__device__ bool more(const int* cur, int n) { return *cur < n; }
__device__ int next(int* cur) { *cur = *cur + gridDim.x; return *cur; }
__device__ bool positive(const float* v) { return *v > 0.0f; }
__global__ void walk(const float* __restrict__ x, float* __restrict__ y, int tasks, int n) {
  int cur;
  for (int t = first(&cur, 0); more(&cur, tasks); t = next(&cur)) {
    int i = t * blockDim.x + threadIdx.x;
    y[i] = (i < n && positive(&x[i])) ? 2.0f * x[i] : (positive(&x[(i + 1) % n]) ? -1.0f : x[i]);
  }
}
"""

ITERATOR_SPEC = "\n".join([
    '[[kernel]]', 'name = "walk"', 'grid = [3, 1, 1]', 'block = [32, 1, 1]', 'tolerance = "exact"',
    '[[kernel.args]]', 'name = "x"', 'buffer = "float32"', 'elements = 320', 'role = "in"', 'range = [-1.0, 1.0]',
    '[[kernel.args]]', 'name = "y"', 'buffer = "float32"', 'elements = 320', 'role = "out"',
    '[[kernel.args]]', 'name = "tasks"', 'scalar = "int32"', 'value = 10',
    '[[kernel.args]]', 'name = "n"', 'scalar = "int32"', 'value = 320', ''])


def test_calls_in_loop_headers_and_conditions_through_a_local_iterator(tmp_path):
    from tests.analysis.support import converted
    out, (k,) = converted(tmp_path, ITERATOR, ITERATOR_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])


#: A loop whose condition calls a device function with barriers (a Steiner-tree code's ``do {...}
#: while (insertPoints(...));`` and a ``while (grow(...))``): the condition becomes a test local
#: computed by a statement at its place in the loop, so the call is inlined there. (Checked on the
#: GPU by bench/test_kernels.py.)
LOOP_CONDITIONS = """
#include <cuda_runtime.h>
__device__ bool grow(float* s, int round) {
  __syncthreads();
  float v = s[(threadIdx.x + 1) % blockDim.x];
  __syncthreads();
  s[threadIdx.x] += v * 0.5f;
  __syncthreads();
  return round < 3 && s[0] < 100.0f;
}
__global__ void rounds(const float* __restrict__ x, float* __restrict__ y, int* __restrict__ counts) {
  __shared__ float s[64];
  s[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
  int r = 0;
  do {
    s[threadIdx.x] *= 0.75f;
    r++;
  } while (grow(s, r));
  int w = 0;
  while (grow(s, w + r)) w++;
  y[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x];
  if (threadIdx.x == 0) counts[blockIdx.x] = 10 * r + w;
}
"""

LOOP_CONDITIONS_SPEC = "\n".join([
    '[[kernel]]', 'name = "rounds"', 'grid = [2, 1, 1]', 'block = [64, 1, 1]', 'tolerance = "fp32"',
    '[[kernel.args]]', 'name = "x"', 'buffer = "float32"', 'elements = 128', 'role = "in"', 'range = [-1.0, 1.0]',
    '[[kernel.args]]', 'name = "y"', 'buffer = "float32"', 'elements = 128', 'role = "out"',
    '[[kernel.args]]', 'name = "counts"', 'buffer = "int32"', 'elements = 2', 'role = "out"', ''])


def test_a_loop_condition_calling_a_function_with_barriers_is_tested_by_a_statement(tmp_path):
    from tests.analysis.support import converted
    u = unit(tmp_path, LOOP_CONDITIONS)
    device = {f.name: f for f in u.device_functions}
    fn = inline_calls(u.kernel("rounds"), device, needs_inlining(device))
    assert "grow" not in calls(fn) and calls(fn).count("__syncthreads") == 6
    loops = nodes(fn, m.While)
    assert len(loops) == 2 and all(isinstance(w.cond, m.BoolLit) for w in loops)
    # the loops leave by a break around barriers: thread-level code, which runs on GPUs only (the
    # CPU check cannot run it); the module lowers for sm_90a
    out, (k,) = converted(tmp_path, LOOP_CONDITIONS, LOOP_CONDITIONS_SPEC, expect_ok=False)
    assert k["form"] == "simt", k["reason"]
    import importlib.util

    from tests.lowering import lower_sm90
    spec = importlib.util.spec_from_file_location("k_loop_conditions", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["rounds"], (2, 1, 1), (64, 1, 1))
    assert source.count("__syncthreads()") >= 6


#: device functions with barriers calling each other ten times a level (a hash's rounds): inlined
#: they would be a few hundred thousand model nodes, refused before inlining by its estimate
ROUNDS = """
#include <cuda_runtime.h>
#define TEN(f, s) f(s); f(s); f(s); f(s); f(s); f(s); f(s); f(s); f(s); f(s);
__device__ void r0(float* s) { __syncthreads(); s[threadIdx.x] = s[(threadIdx.x + 1) % 64] * 0.5f + 1.0f; }
__device__ void r1(float* s) { TEN(r0, s) }
__device__ void r2(float* s) { TEN(r1, s) }
__device__ void r3(float* s) { TEN(r2, s) }
__device__ void r4(float* s) { TEN(r3, s) }
__global__ void hash(float* x) {
  __shared__ float s[64];
  s[threadIdx.x] = x[threadIdx.x];
  r4(s);
  x[threadIdx.x] = s[threadIdx.x];
}
"""


def test_a_kernel_too_large_once_inlined_is_refused_by_its_estimate(tmp_path):
    from tests.analysis.support import converted
    _out, (k,) = converted(tmp_path, ROUNDS, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported")
    assert "model nodes once its device functions are inlined" in k["reason"], k["reason"]


#: a random-restart search's loops whose trip count is drawn in the condition (a columnar
#: cipher solver's ``for (j = 0; j < 1 + LCG_random_float(&state) * HOP; j++)``): the generator
#: steps the thread's state through a pointer, so it is inlined; the for becomes a while whose
#: condition a statement computes before each iteration, the step after the body
DRAWN_TRIPS = """
#include <cuda_runtime.h>
__device__ float lcg_float(unsigned int* seed) {
  const unsigned int m = 2147483648u;
  *seed = (26757677u * (*seed) + 1u) % m;
  return (float)(*seed) / (float)m;
}
__global__ void shuffle_rounds(const int* __restrict__ seeds, int* __restrict__ out, int* __restrict__ trips) {
  int tid = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned int state = (unsigned int)seeds[tid];
  int key[8];
  for (int j = 0; j < 8; ++j) key[j] = j;
  int n = 0;
  for (int j = 0; j < 1 + lcg_float(&state) * 6; j++) {
    int a = (int)(lcg_float(&state) * 8);
    int b = (int)(lcg_float(&state) * 8);
    int t = key[a]; key[a] = key[b]; key[b] = t;
    n++;
  }
  int v = 0;
  for (int j = 0; j < 8; ++j) v = v * 8 + key[j];
  out[tid] = v;
  trips[tid] = n;
}
"""

DRAWN_TRIPS_SPEC = "\n".join([
    '[[kernel]]', 'name = "shuffle_rounds"', 'grid = [2, 1, 1]', 'block = [64, 1, 1]', 'tolerance = "exact"',
    '[[kernel.args]]', 'name = "seeds"', 'buffer = "int32"', 'elements = 128', 'role = "in"', 'range = [1, 100000]',
    '[[kernel.args]]', 'name = "out"', 'buffer = "int32"', 'elements = 128', 'role = "out"',
    '[[kernel.args]]', 'name = "trips"', 'buffer = "int32"', 'elements = 128', 'role = "out"', ''])


def test_a_for_condition_drawing_from_a_generator_is_tested_by_a_statement(tmp_path):
    u = unit(tmp_path, DRAWN_TRIPS)
    device = {f.name: f for f in u.device_functions}
    fn = inline_calls(u.kernel("shuffle_rounds"), device, needs_inlining(device, True) | {"lcg_float"})
    assert "lcg_float" not in calls(fn)
    assert len(nodes(fn, m.While)) == 1  # the drawn loop; the counted ones stay for loops
    out, (k,) = converted(tmp_path, DRAWN_TRIPS, DRAWN_TRIPS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"])
