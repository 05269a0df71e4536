"""Whether a user's overloaded operator on CUDA vector types acts lane by lane.

The frontend models an overloaded operator call as plain syntax (``a + b``), which is what the
operator means for ``__half`` and for the ``float4`` helpers that CUDA samples ship
(``helper_math.h``: ``make_float4(a.x + b.x, ...)``). A project may define its own operator on a
vector type with another meaning (``float2`` as a complex number, ``operator*`` a complex
product), so an operator on vectors is modelled as plain syntax only when its definition is
lane by lane, which :func:`not_lanewise` checks on the model of the definition's body:

- ``T operator OP(A a, B b) { return make_T(a.x OP b.x, a.y OP b.y, ...); }`` (each of ``a``, ``b``
  a vector, whose lane ``i`` is taken, or a scalar, used in every lane), also through a local
  ``T r; r.x = ...; ...; return r;`` or ``T(...)``/``{...}``;
- ``T operator-(T a) { return make_T(-a.x, ...); }``;
- ``void operator OP=(T& a, B b) { a.x OP= b.x; ... }`` (or ``a.x = a.x OP b.x``), optionally
  returning ``a``.
"""
from __future__ import annotations

from ..ir import model as m

LANES = ("x", "y", "z", "w")


def _vector(t) -> m.Vector | None:
    if isinstance(t, m.Vector):
        return t
    if isinstance(t, m.Reference) and isinstance(t.target, m.Vector):
        return t.target
    return None


def _plain(e):
    while isinstance(e, m.Cast) and e.style in ("implicit", "functional") and not _vector(e.type):
        e = e.operand
    while isinstance(e, m.Cast) and e.style == "implicit":
        e = e.operand
    return e


def _lane_of(e, param: tuple[str, object], i: int) -> bool:
    """Whether ``e`` is lane ``i`` of the vector parameter, or the scalar parameter itself."""
    name, ptype = param
    e = _plain(e)
    if _vector(ptype):
        return isinstance(e, m.Member) and e.field == LANES[i] and isinstance(_plain(e.base), m.Ref) \
            and _plain(e.base).name == name
    return isinstance(e, m.Ref) and e.name == name


def _lane_values(stmts: list) -> list | None:
    """The lane expressions a body returns: ``return make_T(...)`` / ``T(...)`` / ``{...}``, or a
    local ``r`` whose lanes are assigned one by one and then returned."""
    if len(stmts) == 1 and isinstance(stmts[0], m.Return) and stmts[0].value is not None:
        value = _plain(stmts[0].value)
        if isinstance(value, m.Call) and (value.callee.startswith("make_") or value.kind == "constructor"):
            return list(value.args)
        if isinstance(value, m.InitList):
            return list(value.items)
        return None
    if len(stmts) >= 2 and isinstance(stmts[0], m.DeclStmt) and len(stmts[0].decls) == 1 \
            and isinstance(stmts[-1], m.Return) and isinstance(_plain(stmts[-1].value), m.Ref):
        local = stmts[0].decls[0].name
        if _plain(stmts[-1].value).name != local:
            return None
        lanes = {}
        for s in stmts[1:-1]:
            if not (isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "="
                    and isinstance(s.expr.target, m.Member) and isinstance(s.expr.target.base, m.Ref)
                    and s.expr.target.base.name == local and s.expr.target.field in LANES):
                return None
            lanes[LANES.index(s.expr.target.field)] = s.expr.value
        return [lanes.get(i) for i in range(len(lanes))] if set(lanes) == set(range(len(lanes))) else None
    return None


def not_lanewise(op: str, params: list[tuple[str, object]], body: m.Block | None, lanes: int) -> str | None:
    """None when the operator ``op`` defined with ``params`` (name, type) and ``body`` acts lane by
    lane on ``lanes`` lanes; else why not."""
    if body is None:
        return "its definition is not visible"
    stmts = [s for s in body.stmts if not isinstance(s, m.Empty)]
    compound = op.endswith("=") and op not in ("==", "!=", "<=", ">=")
    base = op[:-1] if compound else op
    if compound:
        if len(params) != 2 or not _vector(params[0][1]):
            return "it does not update a vector"
        if stmts and isinstance(stmts[-1], m.Return):
            stmts = stmts[:-1]
        if len(stmts) != lanes:
            return f"its body is not one update per lane ({len(stmts)} statements for {lanes} lanes)"
        for i, s in enumerate(stmts):
            a = s.expr if isinstance(s, m.ExprStmt) else None
            if not isinstance(a, m.Assign) or not _lane_of(a.target, params[0], i):
                return f"statement {i + 1} is not an update of lane {LANES[i]}"
            if a.op == op and _lane_of(a.value, params[1], i):
                continue
            v = _plain(a.value)
            if a.op == "=" and isinstance(v, m.Binary) and v.op == base and _lane_of(v.lhs, params[0], i) \
                    and _lane_of(v.rhs, params[1], i):
                continue
            return f"lane {LANES[i]} is not updated with '{op}' by the same lane"
        return None
    values = _lane_values(stmts)
    if values is None or len(values) != lanes:
        return "its body is not a return of one value per lane"
    for i, v in enumerate(values):
        v = _plain(v)
        if len(params) == 1:
            if not (isinstance(v, m.Unary) and v.op == op and _lane_of(v.operand, params[0], i)):
                return f"lane {LANES[i]} is not '{op}' of the same lane"
        elif len(params) == 2:
            if not (isinstance(v, m.Binary) and v.op == op and _lane_of(v.lhs, params[0], i)
                    and _lane_of(v.rhs, params[1], i)):
                return f"lane {LANES[i]} is not the same lanes combined with '{op}'"
        else:
            return f"it takes {len(params)} operands"
    return None
