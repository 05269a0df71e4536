"""Cooperative fills of shared memory as fills every thread could run alone.

A block often loads a shared tile with all its threads taking turns over the tile's elements:

    for (int e = tid; e < ROWS * W; e += nthreads) {   // tid = threadIdx.y * Bx + threadIdx.x
        const int r = e / W, c = e % W;
        S[r][c] = V(r, c);
    }

When ``tid`` is the block's flat thread index, ``nthreads`` its thread count (both for the block
sizes the caller proves and the factory asserts), the bound a constant and ``V`` a function of
the element only (uniform values and ``e``), the threads together store ``V(e)`` at every ``e``
below the bound, each exactly once. After the barrier that follows, the tile holds what

    for (int r = 0; r < ROWS; ++r) for (int c = 0; c < W; ++c) S[r][c] = V(r, c);

stores in any one thread; :func:`rewrite_cooperative_fills` rewrites such loops into that form,
which :mod:`.forward_shared` forwards (each read ``S[a][b]`` becomes ``V(a, b)``).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import const_value, strip_casts
from ...ir.visit import Transformer
from ..facts.affine import linear_form
from ..facts.locals import expand, single_assignment_locals
from .base import NotLiftable


def _const(e, locals_) -> int | None:
    v = const_value(expand(e, locals_)) if e is not None else None
    return v if isinstance(v, int) else None


def _flat_thread_index(e, block: dict[str, int]) -> bool:
    """Whether ``e`` is ``threadIdx.x + Bx * threadIdx.y (+ Bx * By * threadIdx.z)`` for the
    block sizes ``block`` (dims not in it have one thread)."""
    form = linear_form(e)
    if form is None or form[1] != 0:
        return False
    want, stride = {}, 1
    for d in ("x", "y", "z"):
        if d in block:
            want[d] = stride
            stride *= block[d]
    got = {}
    for c, atom in form[0].values():
        atom = strip_casts(atom)
        if not (isinstance(atom, m.Builtin) and atom.var == "threadIdx"):
            return False
        got[atom.dim] = c
    return got == want


class _Replace(Transformer):
    def __init__(self, name: str, value: m.Expr) -> None:
        self.name, self.value = name, value

    def leave_Ref(self, node):
        if node.kind == "local" and node.name == self.name:
            return m.Cast(node.type, self.value, "implicit", node.type, node.span) \
                if self.value.type != node.type else self.value
        return node


def _lit(v: int, like) -> m.IntLit:
    return m.IntLit(v, str(v), m.Scalar("int32"), like.span)


def _counted(var: str, extent: int, body, like) -> m.For:
    t = m.Scalar("int32")
    decl = m.VarDecl(var, t, "local", False, _lit(0, like), like.span)
    cond = m.Binary("<", m.Ref(var, "local", t, like.span), _lit(extent, like), m.Scalar("bool"), like.span)
    step = m.Unary("++", m.Ref(var, "local", t, like.span), False, t, like.span)
    return m.For(m.DeclStmt((decl,), like.span), cond, step, body, (), like.span)


def _fill(loop: m.For, locals_: dict, block: dict[str, int], shared: set[str], uniform: set[str]):
    """The rewritten loop, or None when ``loop`` is not a cooperative fill; raises
    :class:`NotLiftable` when it walks the block's threads but cannot be proved a fill."""
    if not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1 or loop.init.decls[0].init is None:
        return None
    decl = loop.init.decls[0]
    if not _flat_thread_index(expand(decl.init, locals_), block):
        return None
    line = loop.span.line
    cond, step = strip_casts(loop.cond) if loop.cond is not None else None, loop.step
    if not (isinstance(cond, m.Binary) and cond.op == "<" and isinstance(strip_casts(cond.lhs), m.Ref)
            and strip_casts(cond.lhs).name == decl.name):
        raise NotLiftable(f"the cooperative loop at line {line} does not run up to a bound")
    bound = _const(cond.rhs, locals_)
    threads = 1
    for size in block.values():
        threads *= size
    stride = _const(step.value, locals_) if isinstance(step, m.Assign) and step.op == "+=" else None
    if bound is None or bound <= 0:
        raise NotLiftable(f"the cooperative loop at line {line} runs up to a bound that is not a constant")
    if stride != threads:
        raise NotLiftable(f"the cooperative loop at line {line} steps by {stride}, not by the block's "
                          f"{threads} threads")
    body = list(loop.body.stmts if isinstance(loop.body, m.Block) else (loop.body,))
    for n in m.walk(loop.body):
        if isinstance(n, (m.Break, m.Continue, m.Return)) or (isinstance(n, m.Call) and n.kind != "math") \
                or (isinstance(n, m.Builtin) and n.var == "threadIdx"):
            raise NotLiftable(f"the cooperative loop at line {line} does more than store a function of "
                              "its element")
        if isinstance(n, m.Assign) and isinstance(n.target, m.Ref) or isinstance(n, m.Unary) and n.op in ("++", "--"):
            raise NotLiftable(f"the cooperative loop at line {line} assigns a local")
        if isinstance(n, m.Assign):
            root = m.access_root(n.target)
            if root is None or root.name not in shared or n.op != "=":
                raise NotLiftable(f"the cooperative loop at line {line} stores other than to shared memory")
    inner = {d.name for n in m.walk(loop.body) if isinstance(n, m.DeclStmt) for d in n.decls}
    for n in m.walk(loop.body):
        if isinstance(n, m.Ref) and n.kind == "local" and n.name not in inner and n.name != decl.name \
                and n.name not in uniform:
            init = locals_.get(n.name)
            if init is None or any(isinstance(a, m.Builtin) and a.var == "threadIdx"
                                   for a in m.walk(expand(init, locals_))):
                raise NotLiftable(f"the cooperative loop at line {line} stores a value that depends on "
                                  f"'{n.name}', a per-thread value")
    # ``r = e / W, c = e % W``: two loops over the tile's rows and columns
    width, row, col = None, None, None
    for st in body:
        if isinstance(st, m.DeclStmt):
            for d in st.decls:
                v = strip_casts(d.init) if d.init is not None else None
                if isinstance(v, m.Binary) and v.op in ("/", "%") and isinstance(strip_casts(v.lhs), m.Ref) \
                        and strip_casts(v.lhs).name == decl.name and _const(v.rhs, locals_):
                    w = _const(v.rhs, locals_)
                    if width not in (None, w):
                        return None
                    width = w
                    if v.op == "/":
                        row = d.name
                    else:
                        col = d.name
    t = decl.type
    if width is None or row is None or col is None:
        return _counted(decl.name, bound, loop.body, loop)
    if bound % width:
        raise NotLiftable(f"the cooperative loop at line {line} fills {bound} elements, not whole rows of {width}")
    kept = []
    for st in body:
        if isinstance(st, m.DeclStmt):
            decls = tuple(d for d in st.decls if d.name not in (row, col))
            if decls:
                kept.append(dataclasses.replace(st, decls=decls))
        else:
            kept.append(st)
    flat = m.Binary("+", m.Binary("*", m.Ref(row, "local", t, loop.span), _lit(width, loop), t, loop.span),
                    m.Ref(col, "local", t, loop.span), t, loop.span)
    inner_body = _Replace(decl.name, flat).transform(m.Block(tuple(kept), loop.body.span))
    return _counted(row, bound // width, m.Block((_counted(col, width, inner_body, loop),), loop.span), loop)


def rewrite_cooperative_fills(fn: m.Function, block: dict[str, int]) -> m.Function:
    """``fn`` with its cooperative fills of shared memory (for a launch with block sizes
    ``block``: dim -> threads) as fills each thread runs alone; see the module doc."""
    if fn.body is None:
        return fn
    locals_ = single_assignment_locals(fn.body)
    shared = {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.storage in ("shared", "extern_shared")}

    def visit(node, uniform: frozenset):
        if isinstance(node, m.For):
            found = _fill(node, locals_, block, shared, uniform)
            if found is not None:
                return found
            var = _uniform_counter(node)
            if var:
                uniform = uniform | {var}
        return m.map_children(node, lambda c: visit(c, uniform))

    return dataclasses.replace(fn, body=visit(fn.body, frozenset()))


def _uniform_counter(loop: m.For) -> str | None:
    """The variable of ``for (int v = a; v < b; v += s)`` when a, b and s read no thread index
    nor local, and only the step assigns ``v``: the same in every thread of the block."""
    if not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1 or loop.init.decls[0].init is None:
        return None
    var = loop.init.decls[0].name
    header = [loop.init.decls[0].init, loop.cond, loop.step]
    for e in header:
        for n in m.walk(e) if e is not None else ():
            if (isinstance(n, m.Builtin) and n.var == "threadIdx") or isinstance(n, (m.Index, m.Call)) or (
                    isinstance(n, m.Ref) and n.kind == "local" and n.name != var):
                return None
    for n in m.walk(loop.body):
        target = n.target if isinstance(n, m.Assign) else (
            n.operand if isinstance(n, m.Unary) and n.op in ("++", "--", "&") else None)
        if isinstance(target, m.Ref) and target.name == var:
            return None
    return var
