"""Chained assignments as one statement each: ``x = y = v;`` becomes ``y = v; x = y;`` (C's value
of an assignment is its left operand after the store, converted to that operand's type, which is
what reading it back gives). Only where the inner left operand can be read again unchanged: a
local, or an element whose index has no side effect. Runs on kernels and on device functions."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.visit import expand_statements


def _pure(e) -> bool:
    """Whether evaluating ``e`` again gives the same place and changes nothing."""
    return not any(isinstance(n, (m.Assign, m.Call, m.MethodCall)) or (isinstance(n, m.Unary) and n.op in ("++", "--"))
                   for n in m.walk(e))


def _split(expr: m.Assign, span) -> list[m.Stmt] | None:
    """The statements of ``x op= (y op2= v)`` (recursively), or None when it is no chain."""
    inner = strip_implicit_casts(expr.value)
    if not isinstance(inner, m.Assign) or not _pure(inner.target):
        return None
    first = _split(inner, span) or [m.ExprStmt(inner, span)]
    read = inner.target if expr.value is inner else m.Cast(expr.value.type, inner.target, "implicit",
                                                          expr.value.type, expr.value.span)
    return first + [m.ExprStmt(dataclasses.replace(expr, value=read), span)]


def _statement(s: m.ExprStmt) -> list[m.Stmt] | None:
    return _split(s.expr, s.span) if isinstance(s.expr, m.Assign) else None


def split_chained_assignments(fn: m.Function) -> m.Function:
    """``fn`` with every chained assignment statement split (see the module docstring)."""
    if fn.body is None:
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _statement))
