"""Math calls that return their results through pointers, as assignments: the statement
``sincosf(a, &s, &c);`` becomes ``s = sinf(a); c = cosf(a);`` (likewise ``sincos``,
``__sincosf``, ``sincospif`` and ``sincospi``, each with the pair of math functions it computes).
A result pointer that is no address (``sincosf(a, sp, cp)`` in a device function taking ``float*
sp``) is stored through: ``*sp = sinf(a)``. ``frexpf(x, &e)`` and ``modff(x, &ip)`` (and their
double forms) likewise, as a statement or as the value of an assignment statement (``m =
frexpf(x, &e);``, ``float m = frexpf(x, &e);``): ``e`` is ``ilogbf(x) + 1`` (0 for 0, infinities and NaN, as CUDA gives), the
mantissa ``ldexpf(x, -e)``; ``ip`` is ``truncf(x)``, the fraction ``x - truncf(x)`` with the sign
of ``x`` (0 for an infinity). Only a call whose argument has no side effect (it is evaluated more
than once); a call used inside an expression is left as it is, and the compat table names it.
Runs on kernels and on device functions."""
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


#: frexp and modf: the call -> (the exponent's or whole part's functions, the other result's)
_FREXP = {"frexpf": ("ilogbf", "ldexpf", "float32"), "frexp": ("ilogb", "ldexp", "float64")}
_MODF = {"modff": ("truncf", "copysignf", "float32"), "modf": ("trunc", "copysign", "float64")}


def _math(name, args, t, span) -> m.Call:
    return m.Call(name, tuple(args), "math", (), t, span)


def _split_results(call: m.Call, result: m.Expr | None, span) -> list[m.Stmt] | None:
    """``[result =] frexpf(x, &e)`` / ``modff(x, &ip)`` as assignments, or None."""
    if call.callee not in _FREXP and call.callee not in _MODF or len(call.args) != 2:
        return None
    x, target = strip_implicit_casts(call.args[0]), _target(call.args[1])
    if target is None or not _pure(x) or not isinstance(x.type, m.Scalar):
        return None
    ft, bt, it = x.type, m.Scalar("bool"), m.Scalar("int32")

    def zero(t):
        return m.FloatLit(0.0, "0.0", t, span) if t.dtype.startswith("float") else m.IntLit(0, "0", t, span)

    def either(*conds):
        out = conds[0]
        for c in conds[1:]:
            out = m.Binary("||", out, c, bt, span)
        return out

    special = either(m.Binary("==", x, zero(ft), bt, span), _math("isinf", (x,), bt, span),
                     _math("isnan", (x,), bt, span))
    out = []
    if call.callee in _FREXP:
        ilogb, ldexp, _dt = _FREXP[call.callee]
        one = m.IntLit(1, "1", it, span)
        exp = m.Ternary(special, zero(it), m.Binary("+", _math(ilogb, (x,), it, span), one, it, span), it, span)
        out.append(m.ExprStmt(m.Assign("=", target, _cast(exp, target.type, span), target.type, span), span))
        other = _math(ldexp, (x, m.Unary("-", target, False, it, span)), ft, span)
    else:
        trunc, copysign, _dt = _MODF[call.callee]
        out.append(m.ExprStmt(m.Assign("=", target, _cast(_math(trunc, (x,), ft, span), target.type, span),
                                       target.type, span), span))
        frac = m.Ternary(_math("isinf", (x,), bt, span), zero(ft),
                         m.Binary("-", x, _math(trunc, (x,), ft, span), ft, span), ft, span)
        other = _math(copysign, (frac, x), ft, span)
    if result is not None:
        out.append(m.ExprStmt(m.Assign("=", result, _cast(other, result.type, span), result.type, span), span))
    return out


def _cast(e, t, span):
    return e if e.type == t else m.Cast(t, e, "implicit", t, span)


def _results(s: m.Stmt) -> list[m.Stmt] | None:
    if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and s.decls[0].init is not None:
        d = s.decls[0]  # float m = frexpf(x, &e);
        value = strip_implicit_casts(d.init)
        if not (isinstance(value, m.Call) and value.kind == "math"):
            return None
        split = _split_results(value, m.Ref(d.name, "local", d.type, d.span), s.span)
        return None if split is None else [dataclasses.replace(s, decls=(dataclasses.replace(d, init=None),))] + split
    if not isinstance(s, m.ExprStmt):
        return None
    e = s.expr
    if isinstance(e, m.Call) and e.kind == "math":
        return _statement(s) if e.callee in PAIRS else _split_results(e, None, s.span)
    if isinstance(e, m.Assign) and e.op == "=":
        value = strip_implicit_casts(e.value)
        if isinstance(value, m.Call) and value.kind == "math" and _pure(e.target):
            return _split_results(value, e.target, s.span)
    return None


def split_sincos(fn: m.Function) -> m.Function:
    """``fn`` with each sincos-like call statement as two assignments (see the module docstring)."""
    if fn.body is None:
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _results, every=True))
