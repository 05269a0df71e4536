"""The rewrites of analysis.prepare.rewrite: unique names, early returns as guards, buffer views folded into indices."""
from __future__ import annotations

from migrate.analysis.prepare import rewrite
from migrate.ir import model as m
from tests.analysis.support import nodes, unit


def test_unique_names_renames_shadowed_and_reserved(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* T, int n) {
            int i = 0;
            for (int i = 1; i < n; ++i) { T[i] = i; }
            { float lambda = 2; T[0] = lambda + i; }
        }
    """)
    fn = rewrite.unique_names(u.kernel("k"))
    decls = [d.name for d in nodes(fn, m.VarDecl)]
    assert len(set(decls)) == len(decls) and "lambda" not in decls and "lambda_" in decls
    assert fn.params[0].name == "T_"
    refs = {r.name for r in nodes(fn, m.Ref)}
    assert "T" not in refs and "T_" in refs


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
    fn = rewrite.returns_to_guards(u.kernel("k"))
    assert not rewrite.remaining_returns(fn)
    guard = [s for s in fn.body.stmts if isinstance(s, m.If)][0]
    assert guard.cond.op == "<" and len(guard.then.stmts) == 3


def test_buffer_views_fold_into_indices(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(const float* x, float* y, int cols) {
            extern __shared__ float smem[];
            float* s_red = smem + cols;
            const float* row = x + blockIdx.x * cols;
            s_red[threadIdx.x] = row[threadIdx.x];
            y[0] = s_red[0];
        }
    """)
    fn, aliases, unresolved = rewrite.pointer_aliases(u.kernel("k"))
    assert set(aliases) == {"s_red", "row"} and not unresolved
    bases = {n.base.name: n.base.kind for n in nodes(fn, m.Index) if isinstance(n.base, m.Ref)}
    assert bases == {"smem": "shared", "x": "param", "y": "param"}
