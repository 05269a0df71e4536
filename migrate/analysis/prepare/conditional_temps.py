"""Conditionals inside conditions computed once, into a local of their own.

Nested ``MAX``/``MIN`` macros expand to ``(a > b ? a : b) > c ? (a > b ? a : b) : c``: the inner
conditional appears in the outer one's condition and again in its branches, so the tree doubles
at each level. TileLang 0.1.15's layout inference takes time exponential in that nesting (three
levels of such a macro: 27 s; a generated kernel with a few more: past any time limit), even
when each level is bound to a name (TileLang inlines the bindings). Here such a conditional is
stored in a local variable (printed as ``T.alloc_var``: a store TileLang does not inline) before
the statement, and every copy of it in the statement reads the local.

Only a conditional the statement always evaluates is moved (one in a condition, an operand, an
index, a call argument: not one inside a branch of another conditional or the right side of
``&&``/``||``, which may not run, e.g. ``i < n ? x[i] : 0``), and only in statements without side
effects other than their own store (no ``++``, assignment or call in the value).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.visit import Transformer

_PURE_CALLS = ("math", "builtin")


def _pure(e) -> bool:
    for n in m.walk(e):
        if isinstance(n, (m.Assign, m.MethodCall)) or (isinstance(n, m.Unary) and n.op in ("++", "--")):
            return False
        if isinstance(n, m.Call) and n.kind not in _PURE_CALLS:
            return False
    return True


def _always(e, out: list) -> None:
    """The conditionals of ``e`` that are evaluated whenever ``e`` is, in post order."""
    if isinstance(e, m.Ternary):
        _always(e.cond, out)
        out.append(e)
        return
    if isinstance(e, m.Binary) and e.op in ("&&", "||"):
        _always(e.lhs, out)
        return
    for child in m.children(e):
        _always(child, out)


def _nested_in_conditions(e) -> list:
    """Conditionals the statement always evaluates that sit in the condition of another."""
    found = []
    for t in _all_ternaries(e):
        inner: list = []
        _always(t.cond, inner)
        found += [c for c in inner if c not in found]
    always: list = []
    _always(e, always)
    keys = {m.dump(a) for a in always}
    return [c for c in found if m.dump(c) in keys]


def _all_ternaries(e):
    return [n for n in m.walk(e) if isinstance(n, m.Ternary)]


class _Replace(Transformer):
    """Every copy of ``target`` (the same expression wherever it is written: spans aside) reads ``ref``."""

    def __init__(self, target, ref):
        self.key, self.ref = m.dump(target), ref

    def leave_Ternary(self, node):
        return self.ref if m.dump(node) == self.key else node


def _hoist(value: m.Expr, span, counter: list) -> tuple[list, m.Expr]:
    """(statements computing the moved conditionals, the value reading them)."""
    stmts = []
    for _ in range(64):
        nested = _nested_in_conditions(value)
        if not nested:
            break
        target = nested[0]
        counter[0] += 1
        name = f"cond_{counter[0]}"
        ref = m.Ref(name, "local", target.type, span)
        stmts.append(m.DeclStmt((m.VarDecl(name, target.type, "local", False, None, span),), span))
        stmts.append(m.ExprStmt(m.Assign("=", ref, target, target.type, span), span))
        value = _Replace(target, ref).transform(value)
    return stmts, value


def conditional_temps(fn: m.Function) -> m.Function:
    """``fn`` with conditionals nested in conditions stored in locals (see the module docstring)."""
    if fn.body is None or not any(isinstance(n, m.Ternary) and any(isinstance(c, m.Ternary) for c in m.walk(n.cond))
                                  for n in m.walk(fn.body)):
        return fn
    counter = [0]

    def stmts(items) -> tuple:
        out = []
        for s in items:
            if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and _pure(s.expr.value) \
                    and _pure(s.expr.target):
                pre, value = _hoist(s.expr.value, s.span, counter)
                out += pre + [dataclasses.replace(s, expr=dataclasses.replace(s.expr, value=value))]
            elif isinstance(s, m.DeclStmt) and len(s.decls) == 1 and s.decls[0].init is not None \
                    and _pure(s.decls[0].init) and not isinstance(s.decls[0].type, (m.Array, m.Pointer)):
                pre, value = _hoist(s.decls[0].init, s.span, counter)
                out += pre + [dataclasses.replace(s, decls=(dataclasses.replace(s.decls[0], init=value),))]
            else:
                out.append(stmt(s))
        return tuple(out)

    def body(s):
        if s is None:
            return None
        if isinstance(s, m.Block):
            return dataclasses.replace(s, stmts=stmts(s.stmts))
        inner = stmts((s,))
        return inner[0] if len(inner) == 1 else m.Block(inner, s.span)

    def stmt(s):
        if isinstance(s, m.Block):
            return body(s)
        if isinstance(s, m.If):
            return dataclasses.replace(s, then=body(s.then), other=body(s.other))
        if isinstance(s, (m.For, m.While, m.DoWhile, m.Switch, m.Case)):
            return dataclasses.replace(s, body=body(s.body))
        return s

    return dataclasses.replace(fn, body=body(fn.body))
