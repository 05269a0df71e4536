"""analysis.prepare.builtin_aliases: locals that only rename one builtin (through casts) are
replaced by it; anything computed from a builtin, or assigned again, stays a local."""
from __future__ import annotations

import dataclasses

from migrate.analysis.prepare.builtin_aliases import propagate_builtin_aliases
from migrate.ir import model as m
from tests.analysis.support import nodes, unit

ALIASES = """
    __global__ void tile(const float* in, float* out, int n) {
        const int tx = threadIdx.x;
        int bx = (int)blockIdx.x;
        unsigned w = blockDim.x;
        int row = blockIdx.y * 16 + threadIdx.y;
        int t2 = threadIdx.x;
        t2 += 1;
        out[row * n + bx * w + tx] = in[t2];
    }
"""


def _store(fn):
    return nodes(fn, m.Assign)[-1]


def _refs(e) -> set[str]:
    return {n.name for n in m.walk(e) if isinstance(n, m.Ref) and n.kind == "local"}


def test_aliases_of_one_builtin_are_replaced(tmp_path):
    fn = unit(tmp_path, ALIASES).kernel("tile")
    assert _refs(_store(fn)) == {"row", "bx", "w", "tx", "t2"}
    out = propagate_builtin_aliases(fn)
    store = _store(out)
    # row is computed from two builtins, t2 is assigned again: both stay
    assert _refs(store) == {"row", "t2"}
    assert {(b.var, b.dim) for b in m.walk(store) if isinstance(b, m.Builtin)} == {
        ("threadIdx", "x"), ("blockIdx", "x"), ("blockDim", "x")}
    # the aliases' declarations go (a threadIdx.x left in one reads as a use of the thread index);
    # the others stay, and the types read are kept
    assert [d.name for d in nodes(out, m.VarDecl)] == ["row", "t2"]
    index = store.target.index
    assert index.type == _store(fn).target.index.type


def test_nothing_to_propagate_returns_the_function(tmp_path):
    fn = unit(tmp_path, """
        __global__ void add(const float* a, float* b, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) b[i] += a[i];
        }
    """).kernel("add")
    assert propagate_builtin_aliases(fn) is fn
    bodiless = dataclasses.replace(fn, body=None)
    assert propagate_builtin_aliases(bodiless) is bodiless
