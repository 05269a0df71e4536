"""analysis.prepare.names: every local gets a valid Python name of its own."""
from __future__ import annotations

from migrate.analysis.prepare.names import unique_names
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
    fn = unique_names(u.kernel("k"))
    decls = [d.name for d in nodes(fn, m.VarDecl)]
    assert len(set(decls)) == len(decls) and "lambda" not in decls and "lambda_" in decls
    assert fn.params[0].name == "T_"
    refs = {r.name for r in nodes(fn, m.Ref)}
    assert "T" not in refs and "T_" in refs
