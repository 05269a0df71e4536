"""Chained assignments as one statement each: ``x = y = v;`` becomes ``y = v; x = y;`` (C's value
of an assignment is its left operand after the store, converted to that operand's type, which is
what reading it back gives). Where the inner left operand can be read again unchanged (a local,
or an element whose index has no side effect); else, for a plain ``=`` of a number, the value
stored held in a local first (``T chained = v; y[f(i)] = chained; x = chained;``), the inner
place evaluated once as in C. Runs on kernels and on device functions."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.names import fresh
from ...ir.visit import expand_statements


def _pure(e) -> bool:
    """Whether evaluating ``e`` again gives the same place and changes nothing."""
    return not any(isinstance(n, (m.Assign, m.Call, m.MethodCall)) or (isinstance(n, m.Unary) and n.op in ("++", "--"))
                   for n in m.walk(e))


def _split(expr: m.Assign, span, taken: set[str]) -> list[m.Stmt] | None:
    """The statements of ``x op= (y op2= v)`` (recursively), or None when it is no chain."""
    inner = strip_implicit_casts(expr.value)
    if not isinstance(inner, m.Assign):
        return None
    if not _pure(inner.target):
        if inner.op != "=" or not isinstance(inner.type, m.Scalar) or isinstance(strip_implicit_casts(inner.value),
                                                                                 m.Assign):
            return None
        # wl[ind(d, i)] = z[ind(i, j)] = v: the value stored, in the inner place's type, held once
        # (its place is not evaluated again: ind(...) is a call)
        t = inner.type
        held = m.Ref(fresh("chained", taken), "local", t, span)
        value = inner.value if inner.value.type == t else m.Cast(t, inner.value, "implicit", t, span)
        read = held if expr.value is inner else m.Cast(expr.value.type, held, "implicit", expr.value.type,
                                                       expr.value.span)
        return [m.DeclStmt((m.VarDecl(held.name, t, "local", False, value, span),), span),
                m.ExprStmt(dataclasses.replace(inner, value=held), span),
                m.ExprStmt(dataclasses.replace(expr, value=read), span)]
    first = _split(inner, span, taken) or [m.ExprStmt(inner, span)]
    read = inner.target if expr.value is inner else m.Cast(expr.value.type, inner.target, "implicit",
                                                          expr.value.type, expr.value.span)
    return first + [m.ExprStmt(dataclasses.replace(expr, value=read), span)]


def split_chained_assignments(fn: m.Function) -> m.Function:
    """``fn`` with every chained assignment statement split (see the module docstring)."""
    if fn.body is None:
        return fn
    taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.Ref, m.VarDecl))} | {p.name for p in fn.params}

    def statement(s: m.ExprStmt) -> list[m.Stmt] | None:
        return _split(s.expr, s.span, taken) if isinstance(s.expr, m.Assign) else None

    return dataclasses.replace(fn, body=expand_statements(fn.body, statement))
