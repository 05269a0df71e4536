"""The model's fast walks give what the plain definitions give: ``children`` (a generated
function per node class) the nodes of each field in field order, ``walk`` the pre-order,
``reread_branch`` (one walk) the branch the loop-by-loop search finds, and ``Transformer`` the
``leave_`` methods of each transformer class, local classes and subclasses included."""
from __future__ import annotations

import dataclasses

from migrate.analysis.facts import reread_branches as rb
from migrate.ir import model as m
from migrate.ir.visit import Transformer
from tests.analysis.support import unit

SOURCE = """
    struct P { float a; int b; };
    __device__ float twice(float v) { return 2.f * v; }
    __global__ void k(float* out, const float* in, int* idx, P p, int n) {
        __shared__ float s[64];
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float acc = 0.f;
        s[threadIdx.x % 64] = i < n ? in[i] : 0.f;
        __syncthreads();
        for (int j = 0; j < 4; j++) {
            while (acc < 10.f) { acc += twice(s[j]) + p.a; }
            for (int r = 0; r < 3; r++) {
                if (out[r] > acc) { out[r] = acc; idx[r] = j; }
            }
        }
        do { acc -= 1.f; } while (acc > 0.f);
        switch (n & 3) { case 0: acc += 1.f; break; default: acc *= 2.f; }
        if (i < n && in[i] > 0.f) { out[i] = acc + p.b; } else if (i < n) { out[i] = -acc; }
        if (s[0] > 1.f) { s[0] = 1.f; s[1] = 2.f; }
    }
"""


def _reference_children(node):
    out = []
    for f in dataclasses.fields(node):
        if f.name in ("span", "type"):
            continue
        value = getattr(node, f.name)
        for v in value if isinstance(value, tuple) else (value,):
            if dataclasses.is_dataclass(v) and not isinstance(v, type) and m._is_node(v):
                out.append(v)
    return out


def _reference_preorder(node):
    return [node] + [d for c in _reference_children(node) for d in _reference_preorder(c)]


def test_children_and_walk_match_the_plain_definitions(tmp_path):
    u = unit(tmp_path, SOURCE)
    fns = list(u.kernels) + list(u.device_functions)
    classes = set()
    for fn in fns:
        for node in _reference_preorder(fn):
            assert [id(c) for c in m.children(node)] == [id(c) for c in _reference_children(node)]
            classes.add(type(node))
        assert [id(n) for n in m.walk(fn)] == [id(n) for n in _reference_preorder(fn)]
    # the kernel reaches most kinds of statement and expression
    assert {m.For, m.While, m.DoWhile, m.Switch, m.Case, m.If, m.Ternary, m.Call, m.Member, m.Index,
            m.Assign, m.DeclStmt, m.VarDecl, m.Builtin, m.Param, m.Function} <= classes
    assert m.children(m.IntLit(3, "3", m.Scalar("int32"), fns[0].span)) == []


def _reread_reference(body, in_loops=True):
    """reread_branch as it was defined: each loop's body searched in turn."""
    if body is None:
        return None
    for loop in m.walk(body):
        if in_loops and not isinstance(loop, rb.LOOPS):
            continue
        for node in m.walk(loop.body if in_loops else loop):
            if isinstance(node, m.If) and rb._rereads(node):
                return node.span
    return None


def test_reread_branch_finds_the_loop_searchs_branch(tmp_path):
    u = unit(tmp_path, SOURCE)
    body = u.kernels[0].body
    found = rb.reread_branch(body)
    assert found is not None and found == _reread_reference(body)
    assert found.line == SOURCE.strip("\n").splitlines().index(
        "                if (out[r] > acc) { out[r] = acc; idx[r] = j; }") + 5  # (4 header lines)
    # outside loops too: the first such branch of the body, the one after the loops here
    outside = rb.reread_branch(body, in_loops=False)
    assert outside == _reread_reference(body, in_loops=False) == found
    tail = m.Block(body.stmts[-1:], body.span)  # the s[0] branch alone, in no loop
    assert rb.reread_branch(tail) is None and _reread_reference(tail) is None
    assert rb.reread_branch(tail, in_loops=False) == _reread_reference(tail, in_loops=False) == body.stmts[-1].span


def test_transformers_find_their_leave_methods_per_class(tmp_path):
    u = unit(tmp_path, SOURCE)
    body = u.kernels[0].body

    class Count(Transformer):
        def __init__(self):
            self.seen = []

        def leave_IntLit(self, node):
            self.seen.append(node.value)
            return node

    class Bump(Count):
        def leave_IntLit(self, node):
            return dataclasses.replace(node, value=node.value + 1)

        leave_FloatLit = None  # no leave_ method after all

    def local_zero():
        class Zero(Transformer):  # a class of its own per call, as passes make
            def leave_IntLit(self, node):
                return dataclasses.replace(node, value=0)
        return Zero()

    c = Count()
    assert c.transform(body) is body  # nothing changed: the same tree
    want = [n.value for n in m.walk(body) if isinstance(n, m.IntLit)]
    assert sorted(c.seen) == sorted(want) and len(want) > 5
    bumped = Bump().transform(body)
    assert [n.value for n in m.walk(bumped) if isinstance(n, m.IntLit)] == [v + 1 for v in
                                                                           [n.value for n in _reference_preorder(body)
                                                                            if isinstance(n, m.IntLit)]]
    for _ in range(2):
        zeroed = local_zero().transform(body)
        assert {n.value for n in m.walk(zeroed) if isinstance(n, m.IntLit)} == {0}
    assert Count().transform(body) is body  # the subclass's methods stay its own

    class Asked(Transformer):  # leave_ methods made as they are asked
        def __getattr__(self, name):
            if name == "leave_IntLit":
                return lambda node: dataclasses.replace(node, value=7)
            raise AttributeError(name)

    assert {n.value for n in m.walk(Asked().transform(body)) if isinstance(n, m.IntLit)} == {7}


def _reference_transform(t, node):
    """Transformer.transform as it was defined: every field but span and type transformed,
    tuples item by item, the node rebuilt by dataclasses.replace, then its leave_ method."""
    if isinstance(node, tuple):
        items = tuple(_reference_transform(t, n) for n in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if not m._is_node(node):
        return node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name in ("span", "type"):
            continue
        value = getattr(node, f.name)
        new = _reference_transform(t, value)
        if new is not value:
            changes[f.name] = new
    if changes:
        node = dataclasses.replace(node, **changes)
    leave = getattr(t, f"leave_{type(node).__name__}", None)
    return leave(node) if leave is not None else node


@dataclasses.dataclass(frozen=True)
class _Pairs:
    """A node of no model class: nodes in nested tuples, a keyword-only field and one the
    constructor does not take (the generated rebuild leaves such a class to dataclasses.replace)."""
    pairs: tuple
    note: str = dataclasses.field(default="", kw_only=True)
    made: int = dataclasses.field(default=0, init=False)


class _Rename(Transformer):
    def leave_Ref(self, node):
        return dataclasses.replace(node, name=node.name + "_") if node.name in ("i", "acc") else node

    def leave_VarDecl(self, node):
        return dataclasses.replace(node, name=node.name + "_") if node.name == "j" else node


def test_transform_rebuilds_what_the_plain_definition_does(tmp_path):
    u = unit(tmp_path, SOURCE)
    fn = u.kernels[0]
    out = _Rename().transform(fn)
    assert out == _reference_transform(_Rename(), fn) and out != fn
    # what no rename reaches is shared, not copied
    for old, new in zip(fn.params, out.params):
        assert old is new
    assert out.body.stmts[0] is fn.body.stmts[0]  # __shared__ float s[64]
    # nodes in nested tuples, and a class the generated rebuild does not make
    refs = [n for n in m.walk(fn.body) if isinstance(n, m.Ref)]
    odd = _Pairs(((refs[0], refs[1]), (refs[2], "x")), note="n")
    new = _Rename().transform(odd)
    assert new == _reference_transform(_Rename(), odd) and new != odd and new.note == "n"
    assert _Rename().transform(_Pairs(((fn.params[0], 3),))) == _Pairs(((fn.params[0], 3),))
    # map_children rebuilds the same way: a tuple of nodes item by item, the node only where one changed
    call = next(n for n in m.walk(fn.body) if isinstance(n, m.Call) and n.args)
    def prime(c):  # every variable renamed
        return m.Ref(c.name + "'", c.kind, c.type, c.span) if isinstance(c, m.Ref) else m.map_children(c, prime)
    assert m.map_children(call, prime) == dataclasses.replace(call, args=tuple(prime(a) for a in call.args)) != call
    assert m.map_children(call, lambda c: c) is call
    flat = _Pairs(tuple(refs[:3]), note="n")
    assert m.map_children(flat, lambda c: _Rename().transform(c)) == _reference_transform(_Rename(), flat)


def test_walk_of_a_tree_deeper_than_the_recursion_limit(tmp_path):
    import sys
    fn = unit(tmp_path, SOURCE).kernels[0]
    i = e = [n for n in m.walk(fn.body) if isinstance(n, m.Ref)][0]
    for k in range(sys.getrecursionlimit() + 100):  # -(-(... + i) + i)
        e = m.Unary("-", e, False, e.type, e.span) if k % 2 else m.Binary("+", e, i, e.type, e.span)
    deep = m.ExprStmt(e, e.span)
    order, stack = [], [deep]  # the pre-order, by a stack of its own
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(_reference_children(node)))
    assert [id(n) for n in m.walk(deep)] == [id(n) for n in order]
