"""Shared arrays staged from a read-only buffer and read at places the same in every thread, as
the loads they stage.

gmm's covariance step stages a cluster's means, one cell per thread, and every thread then reads
the two cells its block's matrix entry needs:

    __shared__ float means[24];
    if (tid < num_dimensions) means[tid] = clusters_means[c * num_dimensions + tid];
    __syncthreads();
    ... (x[row * n + e] - means[row]) * (x[col * n + e] - means[col]) ...

A read ``means[e]`` at a place ``e`` the same in every thread is the value thread ``e`` stored:
``clusters_means[c * num_dimensions + e]`` when ``e < num_dimensions`` (the guard of the store with
the thread index replaced by ``e``; a cell no thread stored held no value in CUDA: 0 here, and the
load is not made). Every read becomes that, the store and the array go, and the lifts see one
shared array fewer.

Taken for a 1-D ``__shared__`` array of numbers (not ``extern``, its address never taken) in a
kernel that indexes threads in x only, stored by exactly one statement ``A[k] = v;`` with ``k``
the thread index (through single-assignment locals), standing in code every thread runs or under
one ``if (g)`` (no ``else``) that does, where ``v`` and ``g`` read only parameters, launch sizes,
block indices, locals that are the same in every thread and buffers the kernel never writes, and
differ between threads through ``threadIdx.x`` alone; every other use of the array is a read at an
index the same in every thread, after that statement. Anything else leaves the function as it is.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import pure, strip_casts
from ...ir.visit import Transformer
from ..facts.builtins import builtin_dims
from ..facts.divergence import depends_on_thread, thread_dependent_names
from ..facts.locals import expand, single_assignment_locals


class _ThreadAs(Transformer):
    """``threadIdx.x`` replaced by an expression."""

    def __init__(self, value: m.Expr) -> None:
        self.value = value

    def leave_Builtin(self, node: m.Builtin):
        if node.var == "threadIdx" and node.dim == "x":
            return m.Cast(node.type, self.value, "static", node.type, node.span)
        return node


def _written(fn: m.Function) -> set[str]:
    """Buffers whose cells may change while the kernel runs: stored to, or passed to a call."""
    out = {root.name for n in m.walk(fn.body) for t in (m.store_target(n),)
           if t is not None and not isinstance(t, m.Ref) for root in (m.access_root(t),) if root is not None}
    for n in m.walk(fn.body):
        if isinstance(n, m.Call):
            for a in n.args:
                a = strip_casts(a)
                root = m.access_root(strip_casts(a.operand) if isinstance(a, m.Unary) and a.op == "&" else a)
                if root is not None:
                    out.add(root.name)
    return out


def _loads_only_inputs(e, written: set[str]) -> bool:
    for n in m.walk(e):
        if isinstance(n, (m.Index, m.Member)) or isinstance(n, m.Unary) and n.op == "*":
            root = m.access_root(n)
            if root is None or root.kind != "param" or root.name in written:
                return False
        if isinstance(n, m.Ref) and n.kind not in ("param", "local", "constant", "template", "enum", "function"):
            return False
    return pure(e)


def _unchanged_between(stmts, value) -> bool:
    """Whether the buffers ``value`` loads keep their cells through ``stmts`` (from the staging
    store to the last read): they are ``__restrict__``, or ``stmts`` store to no memory but shared
    arrays (another pointer the kernel writes through may alias them)."""
    roots = {r for n in m.walk(value) if isinstance(n, (m.Index, m.Member)) or isinstance(n, m.Unary) and n.op == "*"
             for r in (m.access_root(n),) if r is not None}
    if all(isinstance(r.type, m.Pointer) and r.type.restrict for r in roots):
        return True
    for n in (n for st in stmts for n in m.walk(st)):
        target = m.store_target(n)
        if target is not None and not isinstance(target, m.Ref):
            root = m.access_root(target)
            if root is None or root.kind not in ("shared", "local"):
                return False
        if isinstance(n, m.Call) and n.kind in ("atomic", "memory", "device", "unknown"):
            return False
    return True


class _Staged:
    """The array's one store and the guard around it."""

    def __init__(self, fn: m.Function, name: str) -> None:
        self.name = name
        self.dependent = thread_dependent_names(fn)
        self.stores: list = []  # (statement, guard or None, uniform context)
        self.bad = False

    def visit(self, node, uniform: bool, guard=None) -> None:
        if isinstance(node, m.If):
            then = node.then.stmts if isinstance(node.then, m.Block) else (node.then,)
            if uniform and node.other is None and len(then) == 1 and self._store(then[0]):
                self.stores.append((then[0], node.cond, True))
                self.visit(node.cond, uniform)
                return
            inner = uniform and not depends_on_thread(node.cond, self.dependent)
            self.visit(node.cond, uniform)
            self.visit(node.then, inner)
            if node.other is not None:
                self.visit(node.other, inner)
            return
        if isinstance(node, (m.For, m.While, m.DoWhile, m.Switch)):
            cond = node.cond
            inner = uniform and (cond is None or not depends_on_thread(cond, self.dependent))
            for child in m.children(node):
                self.visit(child, inner)
            return
        if self._store(node):
            self.stores.append((node, None, uniform))
            return
        if isinstance(node, m.Ref) and node.name == self.name:
            self.bad = True  # a use that is not an element read: the array itself, a pointer to it
            return
        if isinstance(node, m.Index) and isinstance(strip_casts(node.base), m.Ref) \
                and strip_casts(node.base).name == self.name:
            self.visit(node.index, uniform)
            return
        for child in m.children(node):
            self.visit(child, uniform)

    def _store(self, st) -> bool:
        return isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "=" \
            and isinstance(st.expr.target, m.Index) and isinstance(strip_casts(st.expr.target.base), m.Ref) \
            and strip_casts(st.expr.target.base).name == self.name


class _Replace(Transformer):
    def __init__(self, name: str, store, value, guard, reads_ok) -> None:
        self.name, self.store, self.value, self.guard, self.reads_ok = name, store, value, guard, reads_ok
        self.ok = True

    def transform(self, node):
        if node is self.store:
            return m.Empty(node.span)
        return super().transform(node)

    def leave_Index(self, node: m.Index):
        base = strip_casts(node.base)
        if not (isinstance(base, m.Ref) and base.name == self.name):
            return node
        if not self.reads_ok(node.index):
            self.ok = False
            return node
        value = _ThreadAs(node.index).transform(self.value)
        if self.guard is None:
            return value
        cond = _ThreadAs(node.index).transform(self.guard)
        zero = m.Cast(node.type, m.IntLit(0, "0", m.Scalar("int32"), node.span), "implicit", node.type, node.span)
        return m.Ternary(cond, value, zero, node.type, node.span)

    def leave_If(self, node: m.If):
        if isinstance(node.then, m.Empty) or isinstance(node.then, m.Block) and all(
                isinstance(s, m.Empty) for s in node.then.stmts) and node.then.stmts:
            return m.Empty(node.span) if node.other is None else node
        return node

    def leave_DeclStmt(self, node: m.DeclStmt):
        decls = tuple(d for d in node.decls if d.name != self.name)
        if len(decls) == len(node.decls):
            return node
        return dataclasses.replace(node, decls=decls) if decls else m.Empty(node.span)


def staged_tables(fn: m.Function) -> m.Function:
    """``fn`` with its staged shared tables read as the loads they stage (module doc); ``fn``
    itself when it has none."""
    if fn.body is None or builtin_dims([fn])[0] - {"x"}:
        return fn
    decls = [d for d in m.walk(fn.body) if isinstance(d, m.VarDecl) and d.storage == "shared" and d.init is None
             and isinstance(d.type, m.Array) and isinstance(d.type.element, m.Scalar) and d.type.extent is not None]
    table = single_assignment_locals(fn.body)
    written = _written(fn)
    for d in decls:
        staged = _Staged(fn, d.name)
        staged.visit(fn.body, True)
        if staged.bad or len(staged.stores) != 1 or not staged.stores[0][2]:
            continue
        store, guard, _ = staged.stores[0]
        # the store first, at the kernel's top level, every read after it
        tops = fn.body.stmts
        at = next((i for i, st in enumerate(tops) if any(n is store for n in m.walk(st))), None)
        if at is None or any(isinstance(n, m.Ref) and n.name == d.name for st in tops[:at] for n in m.walk(st)) \
                or sum(isinstance(n, m.Ref) and n.name == d.name for n in m.walk(tops[at])) != 1:
            continue
        key = strip_casts(expand(store.expr.target.index, table))
        if not (isinstance(key, m.Builtin) and key.var == "threadIdx" and key.dim == "x"):
            continue
        last = max(i for i, st in enumerate(tops) if any(isinstance(n, m.Ref) and n.name == d.name for n in m.walk(st)))
        if not _unchanged_between(tops[at:last + 1], store.expr.value):
            continue
        value = expand(store.expr.value, table)
        guard = expand(guard, table) if guard is not None else None
        dependent = staged.dependent
        if not all(_loads_only_inputs(e, written) and not depends_on_thread(_ThreadAs(m.IntLit(
                0, "0", m.Scalar("int32"), e.span)).transform(e), dependent) for e in (value, guard) if e is not None):
            continue
        # the thread-dependent locals the store read are spelled out; any left reads one that differs

        def reads_ok(index, dependent=dependent):
            return pure(index) and not depends_on_thread(index, dependent) and not any(
                isinstance(n, m.Ref) and n.name == d.name for n in m.walk(index))

        replace = _Replace(d.name, store, value, guard, reads_ok)
        body = replace.transform(fn.body)
        if replace.ok and not any(isinstance(n, m.Ref) and n.name == d.name for n in m.walk(body)):
            fn = dataclasses.replace(fn, body=body)
    return fn
