"""Index math: integer expressions as affine forms, for comparing and substituting indices.

:func:`linear_form` writes an integer expression as ``{atom: coefficient} + constant`` where
atoms are the non-affine parts kept explicit (a thread index, a parameter, a load, a product of
two variables) and coefficients are integers. :func:`canonical` rebuilds every integer
subexpression of an expression from its form, in a fixed order, so that two indices that are
equal as affine functions print and compare the same (``(by*32 + (r - j)) + j`` and
``r + by*32``). Casts between integer types are looked through (indices stay far below 2**31).
"""
from __future__ import annotations

from ... import dtypes
from ...ir import model as m
from ...ir.exprs import strip_int_casts
from ...ir.visit import Transformer

_INT = dtypes.FIXED_INTEGERS


def _is_int(t) -> bool:
    return isinstance(t, m.Scalar) and t.dtype in _INT


def atom_key(e) -> str:
    return m.key(e)


def linear_form(e) -> tuple[dict[str, tuple[int, m.Expr]], int] | None:
    """({key: (coefficient, atom)}, constant), or None for a non-integer expression."""
    e = strip_int_casts(e)
    if isinstance(e, m.IntLit):
        return {}, e.value
    if not _is_int(e.type) and not isinstance(e, m.Builtin):
        return None
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        lhs, rhs = linear_form(e.lhs), linear_form(e.rhs)
        if lhs is None or rhs is None:
            return {atom_key(e): (1, e)}, 0
        sign = 1 if e.op == "+" else -1
        terms = dict(lhs[0])
        const = lhs[1] + sign * rhs[1]
        for k, (c, a) in rhs[0].items():
            old = terms.get(k, (0, a))[0]
            terms[k] = (old + sign * c, a)
        terms = {k: v for k, v in terms.items() if v[0] != 0}
        return _merge_divmod(terms, const)
    if isinstance(e, m.Binary) and e.op == "*":
        lhs, rhs = linear_form(e.lhs), linear_form(e.rhs)
        if lhs is not None and rhs is not None:
            if not lhs[0]:
                return {k: (c * lhs[1], a) for k, (c, a) in rhs[0].items() if c * lhs[1]}, lhs[1] * rhs[1]
            if not rhs[0]:
                return {k: (c * rhs[1], a) for k, (c, a) in lhs[0].items() if c * rhs[1]}, lhs[1] * rhs[1]
        return {atom_key(e): (1, e)}, 0
    if isinstance(e, m.Unary) and e.op == "-" and not e.postfix:
        inner = linear_form(e.operand)
        if inner is not None:
            return {k: (-c, a) for k, (c, a) in inner[0].items()}, -inner[1]
    return {atom_key(e): (1, e)}, 0


def _constant(e) -> int | None:
    form = linear_form(e)
    return form[1] if form is not None and not form[0] else None


def _merge_divmod(terms: dict, const: int):
    """``(x / c) * c + x % c`` is ``x`` (C's truncating division and remainder agree on this for
    every x): a block index times the block plus the offset in the block is the element."""
    for key, (coef, atom) in list(terms.items()):
        a = strip_int_casts(atom)
        c = _constant(a.rhs) if isinstance(a, m.Binary) and a.op == "/" else None
        if c is None:
            continue
        if c <= 0 or coef % c:
            continue
        times = coef // c
        for key2, (coef2, atom2) in list(terms.items()):
            b = strip_int_casts(atom2)
            if coef2 == times and isinstance(b, m.Binary) and b.op == "%" and _constant(b.rhs) == c \
                    and m.dump(strip_int_casts(b.lhs)) == m.dump(strip_int_casts(a.lhs)):
                inner = linear_form(a.lhs)
                if inner is None:
                    continue
                del terms[key], terms[key2]
                for k, (ci, ai) in inner[0].items():
                    old = terms.get(k, (0, ai))[0]
                    terms[k] = (old + times * ci, ai)
                terms = {k: v for k, v in terms.items() if v[0] != 0}
                return _merge_divmod(terms, const + times * inner[1])
    return terms, const


def rebuild(form, like: m.Expr, order=None, wide: bool | None = None) -> m.Expr:
    """An expression for ``form`` (terms in key order, or sorted by ``order``, then the
    constant), in int64 when ``like`` is (or ``wide`` says so), else int32."""
    terms, const = form
    # index math is signed: offsets below zero (a halo left of the first element) stay negative
    if wide is None:
        wide = _is_int(like.type) and like.type.dtype.endswith("64")
    t = m.Scalar("int64" if wide else "int32")
    span = like.span

    def lit(v):
        return m.IntLit(v, str(v), t, span)

    out = None
    for key in sorted(terms, key=order):
        c, atom = terms[key]
        mag = atom if abs(c) == 1 else m.Binary("*", atom, lit(abs(c)), t, span)
        if out is None:
            out = mag if c > 0 else m.Unary("-", mag, False, t, span)
        else:
            out = m.Binary("+" if c > 0 else "-", out, mag, t, span)
    if out is None:
        return lit(const)
    if const:
        out = m.Binary("+" if const > 0 else "-", out, lit(abs(const)), t, span)
    return out


class _Canon(Transformer):
    def leave_Binary(self, node: m.Binary):
        if node.op in ("+", "-", "*") and _is_int(node.type):
            form = linear_form(node)
            if form is not None:
                return rebuild(form, node)
        return node


def canonical(e):
    """``e`` with its integer arithmetic in canonical affine form (see the module doc)."""
    return _Canon().transform(e)


def value_key(e) -> str:
    """A text that two expressions share when :func:`same_value` holds for them."""
    return _untyped(m.dump(canonical(_NoIntCasts().transform(e))))


def same_value(a, b) -> bool:
    """Whether ``a`` and ``b`` are the same expression up to integer arithmetic (and the integer
    types it is spelled in: indices, far from overflow)."""
    return value_key(a) == value_key(b)


class _NoIntCasts(Transformer):
    def leave_Cast(self, node):
        return node.operand if _is_int(node.target) and _is_int(node.operand.type) else node


def _untyped(text: str) -> str:
    import re
    text = re.sub(r", text='[^']*'", "", text)  # how a literal was spelled (a macro) does not matter
    return re.sub(r", type='u?int\d+'", "", text)
