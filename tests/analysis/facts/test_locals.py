"""analysis.facts.locals: how often each local is assigned, which locals hold one value, and
those values expanded into the expressions that read them."""
from __future__ import annotations

from migrate.analysis.facts.locals import assignment_counts, expand, single_assignment_locals
from migrate.ir import model as m
from tests.analysis.support import nodes, unit

LOCALS = """
    __global__ void locals(const float* x, float* out, int n, int cols) {
        int i = threadIdx.x;
        const int tile = 16;
        int s = 0;
        s += i;
        s = s * 2;
        int c = 0;
        c++;
        --c;
        int a = 0;
        int* p = &a;
        *p = 3;
        float pair[2] = {x[0], x[1]};
        int z{5};
        int later;
        later = n;
        float* row = out + i * cols;
        out[i] = s + c + a + pair[0] + z + later + row[0] + tile;
    }
"""


def test_assignment_counts(tmp_path):
    fn = unit(tmp_path, LOCALS).kernel("locals")
    # s: += and =; c: ++ and --; a: its address is taken (as good as two stores); later: one
    # assignment after its declaration. Declarations, *p and out[i] are no assignments of a local.
    assert assignment_counts(fn.body) == {"s": 2, "c": 2, "a": 2, "later": 1}
    first_three = fn.body.stmts[:3]  # i, tile, s declared: nothing assigned yet
    assert assignment_counts(m.Block(first_three, fn.span)) == {}


def test_single_assignment_locals(tmp_path):
    fn = unit(tmp_path, LOCALS).kernel("locals")
    single = single_assignment_locals(fn.body)
    # not s, c, a (assigned), pair (an array), z (an init list), later (no initialiser),
    # p and row (pointers)
    assert set(single) == {"i", "tile"}
    assert isinstance(single["i"], m.Cast) and isinstance(single["i"].operand, m.Builtin)
    assert single["tile"].value == 16


CHAIN = """
    __global__ void chain(const float* in, float* out, int cols) {
        int row = blockIdx.y;
        int base = row * cols;
        int col = threadIdx.x;
        int idx = base + col;
        out[idx] = in[idx];
    }
"""


def _refs(e) -> set[str]:
    return {n.name for n in m.walk(e) if isinstance(n, m.Ref)}


def _builtins(e) -> set[tuple]:
    return {(n.var, n.dim) for n in m.walk(e) if isinstance(n, m.Builtin)}


def test_expand_follows_chains_through_several_locals(tmp_path):
    fn = unit(tmp_path, CHAIN).kernel("chain")
    table = single_assignment_locals(fn.body)
    store = nodes(fn, m.Assign)[0]
    index = store.target.index
    assert _refs(index) == {"idx"}
    out = expand(index, table)
    # idx -> base + col -> row * cols + threadIdx.x -> blockIdx.y * cols + threadIdx.x
    assert _refs(out) == {"cols"} and _builtins(out) == {("blockIdx", "y"), ("threadIdx", "x")}
    assert out.type == index.type
    assert expand(index, {}) is index


def test_expand_casts_a_value_of_another_type(tmp_path):
    fn = unit(tmp_path, CHAIN).kernel("chain")
    col = nodes(fn, m.Binary)[-1].rhs  # ``col`` in ``base + col``
    assert isinstance(col, m.Ref) and col.type == m.Scalar("int32")
    tx = next(b for b in nodes(fn, m.Builtin) if b.var == "threadIdx")
    assert tx.type == m.Scalar("uint32")
    out = expand(col, {"col": tx})
    assert isinstance(out, m.Cast) and out.target == m.Scalar("int32") and out.operand is tx
    same = m.IntLit(3, "3", m.Scalar("int32"), col.span)
    assert expand(col, {"col": same}) is same  # same type: no cast


def test_expand_stops_after_rounds(tmp_path):
    fn = unit(tmp_path, CHAIN).kernel("chain")
    table = single_assignment_locals(fn.body)
    index = nodes(fn, m.Assign)[0].target.index
    assert _refs(expand(index, table, rounds=1)) == {"base", "col"}
    assert _refs(expand(index, table, rounds=2)) == {"row", "cols"}
    # a value that reads itself would grow for ever: each round adds one ``+ 1``
    col = nodes(fn, m.Binary)[-1].rhs
    one = m.IntLit(1, "1", col.type, col.span)
    grows = {"col": m.Binary("+", col, one, col.type, col.span)}
    out = expand(col, grows, rounds=3)
    assert sum(isinstance(n, m.IntLit) for n in m.walk(out)) == 3 and _refs(out) == {"col"}
