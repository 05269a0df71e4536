"""Math calls that return their results through pointers, as assignments: the statement
``sincosf(a, &s, &c);`` becomes ``s = sinf(a); c = cosf(a);`` (likewise ``sincos``,
``__sincosf``, ``sincospif`` and ``sincospi``, each with the pair of math functions it computes).
A result pointer that is no address (``sincosf(a, sp, cp)`` in a device function taking ``float*
sp``) is stored through: ``*sp = sinf(a)``. Only a call that is a statement of its own, whose
angle has no side effect (it is evaluated twice); a call used as a value is left as it is, and the
compat table names it. Runs on kernels and on device functions."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.visit import expand_statements

#: the call -> the math functions giving its two results, in the order of its pointers
PAIRS = {
    "sincosf": ("sinf", "cosf"),
    "sincos": ("sin", "cos"),
    "__sincosf": ("__sinf", "__cosf"),
    "sincospif": ("sinpif", "cospif"),
    "sincospi": ("sinpi", "cospi"),
}


def _pure(e: m.Expr) -> bool:
    return not any(isinstance(n, (m.Assign, m.Call, m.MethodCall)) and not (isinstance(n, m.Call) and n.kind == "math")
                   or (isinstance(n, m.Unary) and n.op in ("++", "--")) for n in m.walk(e))


def _target(ptr: m.Expr) -> m.Expr | None:
    """The place a result pointer names: ``x`` for ``&x``, ``*p`` for a pointer ``p``."""
    ptr = strip_implicit_casts(ptr)
    if isinstance(ptr, m.Unary) and ptr.op == "&":
        return ptr.operand
    if isinstance(ptr.type, m.Pointer) and _pure(ptr):
        return m.Unary("*", ptr, False, ptr.type.pointee, ptr.span)
    return None


def _statement(s: m.ExprStmt) -> list[m.Stmt] | None:
    call = s.expr
    if not isinstance(call, m.Call) or call.kind != "math" or call.callee not in PAIRS or len(call.args) != 3:
        return None
    angle, *pointers = call.args
    targets = [_target(p) for p in pointers]
    if not _pure(angle) or None in targets:
        return None
    out = []
    for name, target in zip(PAIRS[call.callee], targets):
        value = m.Call(name, (angle,), "math", (), angle.type, call.span)
        if value.type != target.type:
            value = m.Cast(target.type, value, "implicit", target.type, call.span)
        out.append(m.ExprStmt(m.Assign("=", target, value, target.type, s.span), s.span))
    return out


def split_sincos(fn: m.Function) -> m.Function:
    """``fn`` with each sincos-like call statement as two assignments (see the module docstring)."""
    if fn.body is None:
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _statement))
