"""Assignments used as values (analysis.prepare.value_assignments), the way real kernels chase
links, count halvings and cache values: ``while (v > (next = link[v]))``, ``while (k >>= 1)``,
``float s(cache[t] = f(x))``, ``for (a = c = 0; ...)``, ``return z = g(z)`` in a device function;
an assignment that is not always evaluated, or whose target the expression reads elsewhere, is
left for the emitter to refuse."""
from __future__ import annotations

from migrate.analysis.prepare.value_assignments import split_value_assignments
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, unit

KERNEL = """
#include <cuda_runtime.h>
__device__ unsigned int scramble(unsigned int z, unsigned int b)
{
    return z = (((z & 0xfffffff0u) << 3) ^ b);
}
__device__ float half_plus_one(float a) { return a * 0.5f + 1.0f; }
__global__ void walk(const int* link, const float* x, int* hops, float* y, unsigned int* r, int n)
{
    __shared__ float cache[64];
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    if (i >= n) return;
    int v = i, next, count = 0;
    while (v > (next = link[v])) { v = next; count++; }
    int k = blockDim.x, levels = 0;
    while (k >>= 1) levels++;
    float s(cache[t] = half_plus_one(x[i]));
    int a, c;
    for (a = c = 0; a < 4; ++a) c += a * i;
    hops[i] = count * 1000 + levels * 10 + c;
    y[i] = s + cache[t];
    r[i] = scramble((unsigned)i * 2654435761u, (unsigned)v);
}
"""

SPEC = """
[[kernel]]
name = "walk"
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "link"
buffer = "int32"
elements = 256
role = "in"
range = [0, 255]
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "hops"
buffer = "int32"
elements = 256
role = "out"
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "r"
buffer = "uint32"
elements = 256
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256
"""


def test_assignments_in_conditions_declarations_and_loop_headers_become_statements(tmp_path):
    fn = split_value_assignments(unit(tmp_path, KERNEL).kernel("walk"))
    for n in nodes(fn, m.Assign):  # none left inside another expression
        assert not [a for a in m.walk(n.value) if isinstance(a, m.Assign)]
    loops = nodes(fn, m.While)
    assert len(loops) == 2 and all(isinstance(w.cond, m.BoolLit) and w.cond.value for w in loops)
    (loop,) = nodes(fn, m.For)
    assert isinstance(loop.init, m.ExprStmt) and isinstance(loop.init.expr.value, m.Ref)


def test_assignments_used_as_values_convert_and_check_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]


def test_an_assignment_under_a_condition_or_read_elsewhere_is_left(tmp_path):
    fn = split_value_assignments(unit(tmp_path, """
        __global__ void k(float* m, const float* p, int* y, int n) {
            int i = threadIdx.x, j = 0;
            if (i < n && ((m[i] = p[i]) < 0.0f)) y[i] = 1;
            y[i] = (j = i) + j;
        }""").kernel("k"))
    inner = [a for n in nodes(fn, m.Assign) for a in m.walk(n.value) if isinstance(a, m.Assign)]
    conds = [a for s in nodes(fn, m.If) for a in m.walk(s.cond) if isinstance(a, m.Assign)]
    assert len(inner) == 1 and len(conds) == 1
