"""Straight-line reassignments of locals as names of their own (analysis.prepare.renaming)."""
from __future__ import annotations

from migrate.analysis.prepare.names import unique_names
from migrate.analysis.prepare.renaming import rename_reassigned_locals
from migrate.ir import model as m
from tests.analysis.support import nodes, unit


def test_straight_line_reassignments_get_names_of_their_own(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* out, int n) {
            int x = threadIdx.x;
            int y = 1;
            out[x] = 0.0f;
            __syncthreads();
            x = x + blockIdx.x;
            if (n > 0) y = 2;
            out[x] = y;
        }
    """)
    fn = rename_reassigned_locals(unique_names(u.kernel("k")))
    decls = {d.name: d.init for d in nodes(fn, m.VarDecl)}
    assert set(decls) == {"x", "x_2", "y"}
    # the new x reads the old one; the store after it reads the new one
    assert {r.name for r in m.walk(decls["x_2"]) if isinstance(r, m.Ref)} == {"x"}
    stores = [a for a in nodes(fn, m.Assign) if isinstance(a.target, m.Index)]
    assert [{r.name for r in m.walk(a.target.index) if isinstance(r, m.Ref)} for a in stores] == [{"x"}, {"x_2"}]
    # y is also assigned in a branch: which value reaches the store is not decided by the text
    assert [a.target.name for a in nodes(fn, m.Assign) if isinstance(a.target, m.Ref)] == ["y"]
