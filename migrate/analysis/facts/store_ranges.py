"""Disjoint stores by interval bounds: a vector body and its scalar tail write different places.

Two stores of one buffer at different index expressions (``c4[i]`` lanes for ``i < n/4`` and
``c[n/4*4 + i]`` for ``i < n%4``) race only if some place is in both of the sets they reach over
all elements. A store's index must be affine in the element index ``g`` (``globalIdx.x``):
``k*g + u`` with ``k`` a positive constant and ``u`` uniform; the guards around it bound ``g``
(``g < E``, ``g <= E``, ``g == E``, ``g >= E``, ``g > E`` with ``E`` uniform, the else of such a
test; ``g >= 0`` always), so it reaches ``[k*lo + u, k*hi + u]``. The stores are disjoint when
the upper end of one lies below the lower end of the other, proved on the difference of the two
ends as an affine form over uniform atoms, by interval arithmetic with these facts:

- ``x - d*(x / d)`` is ``x % d`` and ``x - 2**s * (x >> s)`` is ``x & (2**s - 1)`` (identities of
  C's truncating division and of the arithmetic shift); ``x << s`` is ``x * 2**s``;
- ``x % d`` lies in ``[0, d-1]`` when ``x >= 0`` (and is ``x & (d-1)`` for ``d`` a power of two);
  ``x & m`` lies in ``[0, m]``;
- both stores happen, so both ranges of ``g`` are non-empty (``lo <= hi``); from ``x / d >= 1``
  follows ``x >= d``, from ``x >> s >= 0`` follows ``x >= 0``;
- a uniform integer guard (``if (n & 1)``) is nonzero.

:func:`separated` answers whether two stores are proved disjoint, and if not, why (the two ends
that meet, in C).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import conjuncts, strip_bool_casts, strip_int_casts
from ...ir.visit import Transformer
from .affine import linear_form
from .divergence import same_for_every_element

INT = m.Scalar("int32")


@dataclasses.dataclass(frozen=True)
class Reach:
    """The places one store reaches: ``[lo, hi]`` as affine forms (one per bound of the guards;
    ``his`` empty: unbounded above), and the facts its guards add."""
    los: tuple
    his: tuple
    nonzero: tuple  # keys of uniform integer atoms the guards require nonzero
    g_ranges: tuple  # (lo, hi) forms of the element index, for the non-empty facts


class _Shifts(Transformer):
    """``x << s`` (s a constant) as ``x * 2**s``."""
    def leave_Binary(self, node: m.Binary):
        rhs = strip_int_casts(node.rhs)
        if node.op == "<<" and isinstance(rhs, m.IntLit) and 0 <= rhs.value < 31:
            return m.Binary("*", node.lhs, m.IntLit(1 << rhs.value, str(1 << rhs.value), node.type, rhs.span),
                            node.type, node.span)
        return node


class _NoIntCasts(Transformer):
    def leave_Cast(self, node):
        return strip_int_casts(node)


def _clean(e):
    return _Shifts().transform(_NoIntCasts().transform(e))


def key(e) -> str:
    import re
    text = m.dump(_clean(e))
    text = re.sub(r", text='[^']*'", "", text)
    return re.sub(r", type='[^']*'", "", text)


def _is_g(e) -> bool:
    e = strip_int_casts(e)
    while isinstance(e, m.Cast):
        e = e.operand
    return isinstance(e, m.Builtin) and e.var == "globalIdx" and e.dim == "x"




def _form(e):
    return linear_form(_clean(e))


def _add(a, b, sign=1):
    terms = dict(a[0])
    for k, (c, atom) in b[0].items():
        old = terms.get(k, (0, atom))[0]
        terms[k] = (old + sign * c, atom)
    return {k: v for k, v in terms.items() if v[0]}, a[1] + sign * b[1]


def _scale(a, c):
    return {k: (v * c, atom) for k, (v, atom) in a[0].items() if v * c}, a[1] * c


def _const(v):
    return {}, v




# g OP E: (lower offset, upper offset) added to E; None: no bound on that side
_G_BOUNDS = {"<": (None, -1), "<=": (None, 0), "==": (0, 0), ">=": (0, None), ">": (1, None)}
_MIRROR = {"<": ">", "<=": ">=", "==": "==", ">=": "<=", ">": "<"}


def reach(index, conds) -> Reach | None:
    """The places a store at ``index`` under ``conds`` (expanded: no element locals) reaches, or
    None when its index is not ``k*g + u`` with ``k > 0``."""
    form = _form(index)
    if form is None:
        return None
    k = 0
    rest = {}
    for kk, (c, atom) in form[0].items():
        if _is_g(atom):
            k += c
        elif same_for_every_element(atom):
            rest[kk] = (c, atom)
        else:
            return None
    if k < 0:
        return None
    u = (rest, form[1])
    los, his, nonzero = [_const(0)], [], []
    for c in (x for cond in conds for x in conjuncts(cond, strip_bool_casts)):
        if isinstance(c, m.Binary) and c.op in _G_BOUNDS:
            if _is_g(c.lhs) and same_for_every_element(c.rhs):
                op, e = c.op, c.rhs
            elif _is_g(c.rhs) and same_for_every_element(c.lhs):
                op, e = _MIRROR[c.op], c.lhs
            else:
                continue
            ef = _form(e)
            if ef is None:
                continue
            lo, hi = _G_BOUNDS[op]
            if lo is not None:
                los.append(_add(ef, _const(lo)))
            if hi is not None:
                his.append(_add(ef, _const(hi)))
        elif same_for_every_element(c) and isinstance(c.type, m.Scalar) and c.type.dtype != "bool" \
                or isinstance(c, m.Cast) and same_for_every_element(c.operand) and isinstance(c.operand.type, m.Scalar) \
                and c.operand.type.dtype != "bool":
            nonzero.append(key(c.operand if isinstance(c, m.Cast) else c))
    g_ranges = tuple((lo, hi) for lo in los for hi in his)
    if k == 0:
        return Reach((u,), (u,), tuple(nonzero), g_ranges)
    return Reach(tuple(_add(_scale(lo, k), u) for lo in los), tuple(_add(_scale(hi, k), u) for hi in his),
                 tuple(nonzero), g_ranges)


def separated(a: Reach, b: Reach) -> tuple[bool, str]:
    """(True, "") when the places ``a`` and ``b`` reach are proved disjoint; else (False, the
    ends that were compared, in C)."""
    facts = _Facts(a, b)
    for first, second in ((a, b), (b, a)):
        for hi in first.his:
            for lo in second.los:
                if facts.at_least(_add(lo, hi, -1), 1):
                    return True, ""
    if not a.his or not b.his:
        return False, "one of them has no upper bound on the element index"
    hi, lo = a.his[0], b.los[-1]
    return False, f"up to {c_text(hi)} and from {c_text(lo)}, which do not provably stay apart"


class _Facts:
    """Bounds on uniform atoms that hold whenever both stores happen."""

    def __init__(self, *reaches: Reach) -> None:
        self.nonzero = {k for r in reaches for k in r.nonzero}
        self.lower: dict[str, int] = {}
        self.atoms: dict[str, m.Expr] = {}
        for r in reaches:
            for lo, hi in r.g_ranges:  # the store happens: lo <= hi
                self._learn(_add(hi, lo, -1))
            for hi in (h for _lo, h in r.g_ranges):
                self._learn(hi)  # g >= 0 and g <= hi
        for _ in range(3):
            for kk, v in list(self.lower.items()):
                self._derive(self.atoms[kk], v)

    def _learn(self, form) -> None:
        """``form >= 0`` with ``form`` one atom times a positive coefficient plus a constant."""
        if len(form[0]) != 1:
            return
        (kk, (c, atom)), = form[0].items()
        if c <= 0:
            return
        bound = -(form[1] // c)  # c*atom + const >= 0  =>  atom >= ceil(-const / c)
        self._at_least(kk, atom, bound)

    def _at_least(self, kk, atom, bound) -> None:
        if kk not in self.lower or self.lower[kk] < bound:
            self.lower[kk], self.atoms[kk] = bound, atom

    def _derive(self, atom, bound) -> None:
        a = strip_int_casts(atom)
        if not isinstance(a, m.Binary):
            return
        d = _int(a.rhs)
        if a.op == "/" and d is not None and d > 0 and bound >= 1:
            self._at_least(key(a.lhs), strip_int_casts(a.lhs), d * bound)
        if a.op == ">>" and d is not None and 0 <= d < 31 and bound >= 0:
            self._at_least(key(a.lhs), strip_int_casts(a.lhs), bound << d)

    def nonneg(self, e) -> bool:
        return self.lower.get(key(e), -1) >= 0

    def range_of(self, atom) -> tuple[int | None, int | None]:
        a = strip_int_casts(atom)
        lo, hi = self.lower.get(key(a)), None
        if isinstance(a, m.Binary) and _int(a.rhs) is not None:
            d = _int(a.rhs)
            if a.op == "&" and d >= 0:
                lo, hi = max(lo or 0, 1 if key(a) in self.nonzero else 0), d
            elif a.op == "%" and d > 0 and self.nonneg(a.lhs):
                lo, hi = max(lo or 0, 0), d - 1
                if d & (d - 1) == 0 and _and_key(a.lhs, d - 1) in self.nonzero:
                    lo = max(lo, 1)
        return lo, hi

    def at_least(self, form, bound: int) -> bool:
        terms, const = _remainders(form)
        total = const
        for _k, (c, atom) in terms.items():
            lo, hi = self.range_of(atom)
            end = lo if c > 0 else hi
            if end is None:
                return False
            total += c * end
        return total >= bound


def _int(e):
    e = strip_int_casts(e)
    return e.value if isinstance(e, m.IntLit) else None


def _and_key(x, mask: int) -> str:
    return key(m.Binary("&", x, m.IntLit(mask, str(mask), INT, x.span), INT, x.span))


def _remainders(form):
    """``form`` with ``a*x - a*d*(x/d)`` written ``a*(x % d)`` and ``a*x - a*2**s*(x >> s)``
    written ``a*(x & (2**s - 1))``."""
    terms, const = dict(form[0]), form[1]
    for kk, (c, atom) in list(form[0].items()):
        q = strip_int_casts(atom)
        d = _int(q.rhs) if isinstance(q, m.Binary) and q.op in ("/", ">>") else None
        if d is None or kk not in terms:
            continue
        if q.op == ">>":
            if not 0 <= d < 31:
                continue
            d, op, rhs = 1 << d, "&", (1 << d) - 1
        else:
            if d <= 0:
                continue
            op, rhs = "%", d
        if c % d:
            continue
        a = -c // d
        x = _form(q.lhs)
        if x is None or a == 0:
            continue
        # the form holds a*x (every term of x's own affine form, a times) next to -a*d*(x/d)?
        if not x[0] or not all(terms.get(k2, (0, None))[0] == a * cx for k2, (cx, _a) in x[0].items()):
            continue
        rest = {k2: v for k2, v in terms.items() if k2 != kk and k2 not in x[0]}
        span = q.span
        r = m.Binary(op, strip_int_casts(q.lhs), m.IntLit(rhs, str(rhs), INT, span), INT, span)
        rest[key(r)] = (a, r)
        terms = rest
        const -= a * x[1]
    return terms, const


_C_OPS = {"+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"}


def c_text(form) -> str:
    """An affine form in C, for diagnostics."""
    out = ""
    for _k, (c, atom) in sorted(form[0].items(), key=lambda kv: kv[0]):
        mag = _c(atom) if abs(c) == 1 else f"{abs(c)} * {_c(atom, True)}"
        out = (mag if c > 0 else f"-{mag}") if not out else f"{out} {'+' if c > 0 else '-'} {mag}"
    if form[1] or not out:
        out = str(form[1]) if not out else f"{out} {'+' if form[1] > 0 else '-'} {abs(form[1])}"
    return out


def _c(e, nested=False) -> str:
    e = strip_int_casts(e)
    if isinstance(e, m.Ref):
        return e.name
    if isinstance(e, m.IntLit):
        return str(e.value)
    if isinstance(e, m.Builtin):
        return f"{e.var}.{e.dim}" if e.dim else e.var
    if isinstance(e, m.Binary) and e.op in _C_OPS:
        text = f"{_c(e.lhs, True)} {e.op} {_c(e.rhs, True)}"
        return f"({text})" if nested else text
    return "…"
