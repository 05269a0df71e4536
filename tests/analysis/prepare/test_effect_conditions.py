"""analysis.prepare.effect_conditions: conditions whose effects C evaluates only sometimes (right of
``&&``/``||``) or that step a counter become a test local computed operand by operand, so the
kernels holding them convert; checked equal on the CPU against the original. Conditions without
such effects are left as they were."""
from __future__ import annotations

from migrate.analysis.prepare.effect_conditions import effect_conditions_as_tests
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

#: A walk down a list while a computed range stays large (rainflow), a store inside a test that
#: only runs for some elements (bh's summarisation), a wrapping counter stepped in its test
#: (tpacf's histogram), a state read with a step in a loop condition (bn's scores).
WALKS = """
#include <cuda_runtime.h>

__device__ int next_state(const int* chain, int start, int t) {
  return chain[(start + t) % 64] > 2;
}

__global__ void walks(const float* __restrict__ x, const int* __restrict__ chain, float* __restrict__ mass,
                      int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int p = i % 16 + 2;
  float range;
  int steps = 0;
  while (p >= 2 && (range = fabsf(x[(i + p) % n] - x[(i + p - 1) % n])) > 0.25f) {
    p -= 1;
    steps += 1;
  }
  int flags = 0;
  if ((i % 3 != 0) && ((mass[i] = x[i] - 0.5f) < 0.0f)) flags |= 1;
  int accum = i % 5;
  for (int k = 0; k < 4; k++) {
    if (++accum == 6) accum = 0;
  }
  int t = 0;
  while (next_state(chain, i, t++)) {
    if (t > 40) break;
  }
  out[i] = steps + 100 * flags + 1000 * accum + 10000 * t;
}
"""

SPEC = spec_kernel("walks", (2, 1, 1), (128, 1, 1), "exact",
                   spec_buffer("x", "float32", 256, "in", 0.0, 1.0),
                   spec_buffer("chain", "int32", 64, "in", 0, 4),
                   spec_buffer("mass", "float32", 256, "inout", 5.0, 6.0),
                   spec_buffer("out", "int32", 256, "out"),
                   spec_scalar("n", "int32", 256))


def test_the_conditions_become_tests_computed_where_c_evaluates_them(tmp_path):
    k = unit(tmp_path, WALKS.replace("#include <cuda_runtime.h>\n", "")).kernel("walks")
    done = effect_conditions_as_tests(k)
    # the && walk, the store under a test, the stepped counter, the stepped loop: four test locals
    tests = [d.name for d in nodes(done, m.VarDecl) if d.name.startswith("test_")]
    assert len(tests) == 4, tests
    # the loops test at their top and leave with a break
    loops = nodes(done, m.While)
    assert len(loops) == 2 and all(isinstance(w.cond, m.BoolLit) and w.cond.value for w in loops)
    # no effect is left right of && / || in any condition
    for n in m.walk(done.body):
        if isinstance(n, m.Binary) and n.op in ("&&", "||"):
            assert not any(isinstance(x, (m.Assign,)) or isinstance(x, m.Unary) and x.op in ("++", "--")
                           for x in m.walk(n.rhs))


def test_conditions_without_such_effects_are_left(tmp_path):
    source = """
    __global__ void k(const int* x, int* y, int n) {
      int i = threadIdx.x, v;
      if ((v = x[i]) > 0 && i < n) y[i] = v;
      while (i < n && x[i] > 0) i += 32;
    }
    """
    k = unit(tmp_path, source).kernel("k")
    assert effect_conditions_as_tests(k) is k


def test_the_kernel_converts_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, WALKS, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]


#: Two nested do/while loops that step their counters in their conditions (a docking code's loops
#: over ligand and protein atoms), and one whose body continues, which keeps its shape.
DO_WHILE = """
__global__ void pairs(const float* __restrict__ lig, const float* __restrict__ prot, float* __restrict__ etot,
                      int natlig, int natpro) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float e = 0.0f;
  int il = 0;
  do {
    const float l = lig[(il + i) % natlig];
    int ip = 0;
    do {
      const float d = l - prot[ip];
      e += d * d;
    } while (++ip < natpro);
  } while (++il < natlig);
  int k = 0;
  int visits = 0;
  do visits += 2; while ((k += 3) < i % 11);
  etot[i] = e + visits;
}
"""

DO_SPEC = spec_kernel("pairs", (2, 1, 1), (64, 1, 1), "fp32_accum",
                      spec_buffer("lig", "float32", 16, "in", -1.0, 1.0),
                      spec_buffer("prot", "float32", 24, "in", -1.0, 1.0),
                      spec_buffer("etot", "float32", 128, "out"),
                      spec_scalar("natlig", "int32", 5), spec_scalar("natpro", "int32", 7))


def test_do_while_conditions_with_steps_test_at_the_end_of_the_body(tmp_path):
    k = unit(tmp_path, DO_WHILE).kernel("pairs")
    done = effect_conditions_as_tests(k)
    assert not nodes(done, m.DoWhile)
    loops = nodes(done, m.While)
    assert len(loops) == 3 and all(isinstance(w.cond, m.BoolLit) for w in loops)
    # the test is the body's last step: the body first, then the test, then the break
    for w in loops:
        last = w.body.stmts[-1]
        assert isinstance(last, m.If) and isinstance(last.then.stmts[0], m.Break)


def test_a_do_while_whose_body_continues_is_left(tmp_path):
    source = """
    __global__ void k(const int* x, int* y, int n) {
      int i = threadIdx.x, s = 0;
      do { if (x[i] < 0) continue; s += x[i]; } while (++i < n);
      y[threadIdx.x] = s;
    }
    """
    k = unit(tmp_path, source).kernel("k")
    assert nodes(effect_conditions_as_tests(k), m.DoWhile)


def test_the_do_while_kernel_converts_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, DO_WHILE, DO_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]


#: Device functions that are no expression of their arguments (a swap of the arguments, a loop with
#: an early return) tested in conditions the way RNA folding and n-queens programs test them:
#: right of && and ||, under !, on the left of &&, in an else-if.
OPAQUE_CALLS = """
#include <cuda_runtime.h>
__device__ int can_pair(int i, int j, int n, const int* s) {
  if (j < i) { const int t = i; i = j; j = t; }
  return s[i] + s[j] == 3 && (j + 1 < n ? s[j + 1] != 0 : 1);
}
__device__ bool legal(const int* row, int r) {
  for (int k = 0; k < r; k++)
    if (row[k] == row[r]) return false;
  return true;
}
__global__ void pairs(const int* s, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int j = (i * 7 + 3) % n;
  int v = 0;
  if ((i % 3 == 0 && !can_pair(i, j, n, s)) || (j % 5 == 1)) v = 1;
  else if (i % 2 == 1 && legal(s, i % 8)) v = 2;
  if (can_pair(j, i, n, s) && !(i < 4)) v += 10;
  if (!(s[i] > 1 || can_pair(i, (i + 1) % n, n, s))) v += 100;
  out[i] = v;
}
"""

OPAQUE_SPEC = spec_kernel("pairs", (2, 1, 1), (64, 1, 1), "exact",
                          spec_buffer("s", "int32", 100, "in", 0, 3),
                          spec_buffer("out", "int32", 100, "out"),
                          spec_scalar("n", "int32", 100))


def test_device_functions_that_are_no_expression_are_called_where_c_calls_them(tmp_path):
    out, (k,) = converted(tmp_path, OPAQUE_CALLS, OPAQUE_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"])
    assert "test_" in (out / "k.py").read_text()
