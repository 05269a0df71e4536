"""Assignments used as values, as statements of their own, the way real kernels write loops and
tests: ``while (k >>= 1) {...}``, ``while (v > (next = link[v])) {...}``, ``return z = f(z);``,
``float v(cache[t] = f(x));``, ``for (k = i = 0; ...)``. The assignment is stored first and its
value read back from its left operand (C's value of an assignment is that operand after the
store): ``x = e; if (...x...)``; a ``while`` whose condition assigns becomes ``while (true) {
x = e; if (!cond) break; body }``.

Only where it is the same program: the assignment is always evaluated (not right of ``&&``/``||``
nor in a branch of ``?:``), its left operand can be read again unchanged (a local, or an element
whose index has no effect) and the expression names that local or buffer nowhere else. Others
are left for the emitter to refuse."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import always_evaluated, pure
from ...ir.visit import expand_statements


def split_value_assignments(fn: m.Function) -> m.Function:
    if fn.body is None:
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _statement, every=True))


def _statement(s) -> list | None:
    if isinstance(s, m.ExprStmt):
        e = s.expr
        if isinstance(e, m.Assign):  # the statement's own assignment stays; its operands may hold others
            hoisted = _hoist_all((e.target, e.value), s.span)
            if hoisted is None:
                return None
            pre, (target, value) = hoisted
            return pre + [dataclasses.replace(s, expr=dataclasses.replace(e, target=target, value=value))]
        return _with(s, "expr", s.span)
    if isinstance(s, (m.If, m.Switch)):
        return _with(s, "cond", s.span)
    if isinstance(s, m.Return) and s.value is not None:
        return _with(s, "value", s.span)
    if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and s.decls[0].init is not None:
        hoisted = _hoist_all((s.decls[0].init,), s.span)
        if hoisted is None:
            return None
        pre, (init,) = hoisted
        return pre + [dataclasses.replace(s, decls=(dataclasses.replace(s.decls[0], init=init),))]
    if isinstance(s, m.For) and isinstance(s.init, m.ExprStmt):
        parts = _statement(s.init)
        if parts is None:
            return None
        return parts[:-1] + [dataclasses.replace(s, init=parts[-1])]
    if isinstance(s, m.While):
        hoisted = _hoist_all((s.cond,), s.span)
        if hoisted is None:
            return None
        pre, (cond,) = hoisted
        boolean = m.Scalar("bool")
        stop = m.If(m.Unary("!", cond, False, boolean, cond.span), m.Block((m.Break(s.span),), s.span), None, s.span)
        body = m.Block(tuple(pre) + (stop, s.body), s.span)
        return [m.While(m.BoolLit(True, boolean, s.span), body, s.span)]
    return None


def _with(s, field: str, span) -> list | None:
    hoisted = _hoist_all((getattr(s, field),), span)
    if hoisted is None:
        return None
    pre, (e,) = hoisted
    return pre + [dataclasses.replace(s, **{field: e})]


def _hoist_all(exprs: tuple, span) -> tuple[list, tuple] | None:
    """(the statements storing the assignments inside ``exprs``, ``exprs`` reading them back), or
    None when there is none or one cannot move."""
    found = [n for e in exprs for n in m.walk(e) if isinstance(n, m.Assign)]
    if not found:
        return None
    names = [n.name for e in exprs for n in m.walk(e) if isinstance(n, m.Ref)]
    always = {id(n) for e in exprs for n in always_evaluated(e)}
    for a in found:
        base = _base_name(a.target)
        inside = [n.name for n in m.walk(a) if isinstance(n, m.Ref)]
        if id(a) not in always or not pure(a.target, math=False) or base is None \
                or names.count(base) != inside.count(base):
            return None  # read elsewhere in the expression: its value there depends on the order
    if any(isinstance(n, m.Unary) and n.op in ("++", "--") for e in exprs for n in m.walk(e)):
        return None
    pre: list = []

    def visit(node):
        node = m.map_children(node, visit)
        if isinstance(node, m.Assign):
            pre.append(m.ExprStmt(node, span))
            return node.target
        return node

    return pre, tuple(visit(e) for e in exprs)


def _base_name(e) -> str | None:
    while isinstance(e, (m.Index, m.Member)):
        e = e.base
    return e.name if isinstance(e, m.Ref) else None
