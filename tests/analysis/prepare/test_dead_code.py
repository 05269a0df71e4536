"""analysis.prepare.dead_code: declarations nothing reads (with pure initialisers), loops and
branches left with nothing to do, and the statements DropStmts is told to drop."""
from __future__ import annotations

from migrate.analysis.prepare.dead_code import DropStmts, drop_dead_declarations
from migrate.ir import model as m
from tests.analysis.support import unit

DEAD = """
    __global__ void dead(const float* x, float* y, int* counter, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float unused = x[i] * 2.0f;
        int ticket = atomicAdd(counter, 1);
        float root = sqrtf(x[i]);
        float shifted = root + 1.0f;
        int never;
        for (int k = 0; k < n; ++k) { float t = x[k]; }
        if (i < n) { float z = x[i] * x[i]; }
        for (int k = 0; k < n; ++k) y[k] = 0.0f;
        if (i < n) y[i] = x[i];
    }
"""


def _decls(body) -> list[str]:
    return [n.name for n in m.walk(body) if isinstance(n, m.VarDecl)]


def _kinds(body) -> list[str]:
    return [type(s).__name__ for s in body.stmts]


def test_dead_pure_locals_and_empty_loops_go(tmp_path):
    fn = unit(tmp_path, DEAD).kernel("dead")
    body = drop_dead_declarations(fn.body)
    # unused, never: read by nothing; shifted, then root (only shifted read it); t, z with their
    # loop and branch. ticket stays: its atomicAdd must run even if nothing reads the result.
    assert _decls(body) == ["i", "ticket", "k"]
    assert _kinds(body) == ["DeclStmt", "Empty", "DeclStmt", "Empty", "Empty", "Empty", "Empty", "Empty",
                            "For", "If"]
    assert body.stmts[-2] == fn.body.stmts[-2] and body.stmts[-1] == fn.body.stmts[-1]


def test_live_code_is_kept(tmp_path):
    fn = unit(tmp_path, """
        __global__ void live(const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            float acc = 0.0f;
            for (int k = 0; k < n; ++k) acc += x[k];
            if (i < n) y[i] = acc;
        }
    """).kernel("live")
    assert drop_dead_declarations(fn.body) == fn.body


def test_a_search_loop_with_an_empty_body_is_kept(tmp_path):
    fn = unit(tmp_path, """
        __global__ void bins(const float* edges, const float* x, int* bin, int nedges, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n) return;
            float v = x[i];
            int j;
            for (j = 0; j < nedges && edges[j] <= v; ++j) {}
            bin[i] = j;
        }
    """).kernel("bins")
    body = drop_dead_declarations(fn.body)
    assert any(isinstance(s, m.For) for s in body.stmts)


def test_drop_stmts(tmp_path):
    fn = unit(tmp_path, """
        __global__ void two(float* y, int n) {
            int a = 1, b = 2;
            y[0] = a;
            y[1] = b;
            __syncthreads();
            y[2] = n;
        }
    """).kernel("two")
    decl, store0, store1, sync, store2 = fn.body.stmts
    out = DropStmts([store1, sync]).transform(fn.body)
    assert _kinds(out) == ["DeclStmt", "ExprStmt", "Empty", "Empty", "ExprStmt"]
    assert out.stmts[1] == store0 and out.stmts[4] == store2
    only_b = DropStmts([], {"a"}).transform(fn.body).stmts[0]
    assert [d.name for d in only_b.decls] == ["b"]
    assert isinstance(DropStmts([], {"a", "b"}).transform(fn.body).stmts[0], m.Empty)
    assert DropStmts([], {"c"}).transform(fn.body) == fn.body
