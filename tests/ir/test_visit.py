"""ir.visit: Transformer rebuilds a model tree bottom-up, keeps what it did not change, and
never visits types or spans."""
from __future__ import annotations


from migrate.ir import model as m
from migrate.ir.visit import Transformer
from tests.analysis.support import nodes, unit

SCALE = """
    __global__ void scale(const float* x, float* y, float a, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = a * x[i];
    }
"""


class Rename(Transformer):
    """``i`` becomes ``j``; records the order in which it leaves the nodes."""

    def __init__(self) -> None:
        self.left = []

    def leave_Ref(self, node):
        self.left.append(node.name)
        return m.Ref("j", node.kind, node.type, node.span) if node.name == "i" else node

    def leave_Binary(self, node):
        # bottom-up: the operands are already the rebuilt ones
        self.left.append(node.op + "(" + ",".join(n.name for n in (node.lhs, node.rhs) if isinstance(n, m.Ref)) + ")")
        return node


def test_rebuilds_bottom_up(tmp_path):
    fn = unit(tmp_path, SCALE).kernel("scale")
    t = Rename()
    out = t.transform(fn.body)
    refs = [r.name for r in m.walk(out) if isinstance(r, m.Ref)]
    assert "i" not in refs and refs.count("j") == 3  # i < n, y[i], x[i]
    # in the guard ``i < n``: i and n are left before their comparison, which sees j
    k = t.left.index("<(j,n)")
    assert t.left[k - 2:k] == ["i", "n"]
    assert fn.body.stmts[0].decls[0].name == "i"  # declarations are not Refs: untouched
    assert out.stmts[0].decls[0].name == "i"


def test_unchanged_leaves_and_expressions_keep_their_identity(tmp_path):
    fn = unit(tmp_path, SCALE).kernel("scale")
    guard = nodes(fn, m.If)[0]
    store = guard.then.expr
    out = Rename().transform(store)
    assert out is not store and out.target.index.name == "j"
    assert out.value.lhs is store.value.lhs  # ``a``: not renamed, the same node
    assert out.target.base is store.target.base
    untouched = store.value.lhs
    assert Rename().transform(untouched) is untouched
    product = fn.body.stmts[0].decls[0].init.operand.lhs  # blockIdx.x * blockDim.x: no tuple inside
    assert Rename().transform(product) is product


def test_unchanged_statements_keep_their_identity(tmp_path):
    fn = unit(tmp_path, SCALE).kernel("scale")
    decl = fn.body.stmts[0]  # int i = ...: reads no i
    assert Rename().transform(decl) is decl
    assert Transformer().transform(fn.body) is fn.body


class Spy(Transformer):
    def __init__(self) -> None:
        self.seen = set()

    def __getattr__(self, name):
        if name.startswith("leave_"):
            self.seen.add(name.removeprefix("leave_"))
            return lambda node: node
        raise AttributeError(name)


def test_types_and_spans_are_not_visited(tmp_path):
    fn = unit(tmp_path, """
        __global__ void pack(const float4* x, float* y, int n) {
            __shared__ float s[64];
            int i = (int)threadIdx.x;
            s[i] = x[i].x + (float)n;
            y[i] = s[i];
        }
    """).kernel("pack")
    spy = Spy()
    assert spy.transform(fn) == fn
    assert {"Function", "Param", "VarDecl", "Cast", "Member", "Index", "Ref", "Builtin"} <= spy.seen
    assert not spy.seen & {"Span", "Scalar", "Pointer", "Array", "Vector", "Record"}
