"""Late initialisations (analysis.prepare.late_init): C89-style kernels declare their locals at the
top and give them values later; a local is declared at its value only where nothing names it in
between and the value does not read it."""
from __future__ import annotations

from migrate.analysis.prepare.late_init import late_initialisations
from migrate.ir import model as m
from tests.analysis.support import nodes, unit

KERNEL = """
__global__ void k(const float* x, float* y, int n)
{
    int tid, row, col;
    float v, w;
    int used;
    used = 0;
    used = used + 1;
    tid = threadIdx.x + blockIdx.x * blockDim.x;
    row = tid / 4;
    if (tid < n) {
        float inner;
        inner = x[tid];
        col = tid % 4;
        v = inner * 2.0f;
        y[tid] = v + (float)(row + col + used);
    }
    w = 1.0f;
    w = w * (float)tid;
    if (tid == 0) y[0] = w;
}
"""


def _decls(fn):
    return {d.name: d for d in nodes(fn, m.VarDecl)}


def test_locals_are_declared_at_their_first_value_in_the_same_block(tmp_path):
    fn = late_initialisations(unit(tmp_path, KERNEL).kernel("k"))
    decls = _decls(fn)
    # declared where their first value is given, in the block that declared them
    for name in ("tid", "row", "used", "w", "inner"):
        assert decls[name].init is not None, name
    top = fn.body.stmts
    first = [d.name for s in top if isinstance(s, m.DeclStmt) for d in s.decls]
    assert first.index("used") < first.index("tid") < first.index("row") < first.index("w")
    # the later assignments to the same local stay assignments
    assigned = [n.target.name for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref)]
    assert assigned.count("used") == 1 and assigned.count("w") == 1


def test_a_local_first_given_a_value_in_an_inner_block_keeps_its_declaration(tmp_path):
    fn = late_initialisations(unit(tmp_path, KERNEL).kernel("k"))
    decls = _decls(fn)
    # col and v get their values inside the if: moving the declaration would change its scope
    assert decls["col"].init is None and decls["v"].init is None
    assigned = [n.target.name for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref)]
    assert "col" in assigned and "v" in assigned


def test_a_value_that_reads_the_local_is_not_an_initialisation(tmp_path):
    fn = late_initialisations(unit(tmp_path, """
        __global__ void k(int* out) {
            int s;
            s = s + 1;
            out[0] = s;
        }
    """).kernel("k"))
    assert _decls(fn)["s"].init is None
