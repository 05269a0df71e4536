"""Mixed-radix index arithmetic: an element's flat index taken apart into digits and put back.

Real kernels take a flat element index apart (``i = idx / (S * N); j = idx / N % S; k = idx % N``,
or ``k = idx % M; j = (idx - k) / M % N; ...``) and store to the place those digits name again
(``out[i * S * N + j * N + k]``), which is the element itself. The affine forms of
:mod:`.affine` see only constant divisors; here an index is a polynomial over atoms (uniform
values, the element index, and quotients and remainders by products of them) that puts the
digits back together by identities that hold for C's truncating division whatever the signs:

- ``(x / a) * a + x % a`` is ``x``;
- ``((x / a) % b) * a + x % a`` is ``x % (a * b)``;
- ``(x / a) / b`` is ``x / (a * b)``;
- ``(x - x % a) / a`` is ``x / a``, and a sum whose every term ``a`` divides, divided by ``a``,
  is the sum of the quotients.

:func:`injective` then answers whether an index tells the elements of a map apart along one
dimension: the element index appears in one term only, times uniform values, or the index grows
with it (a remainder below its quotient's step: a map that skips a column of each row).
"""
from __future__ import annotations

from collections import Counter

from ...ir import model as m
from ...ir.exprs import strip_int_casts
from .affine import value_key
from .divergence import same_for_every_element

Mono = tuple  # the sorted keys of a term's factors (a repeated factor repeated)
Poly = dict  # Mono -> nonzero integer coefficient


def _key(p: Poly) -> str:
    return repr(sorted(p.items()))


def _is_int(t) -> bool:
    return isinstance(t, m.Scalar) and t.dtype.startswith(("int", "uint"))


class Algebra:
    """Polynomials over the atoms of the expressions it has read (``atoms``: key -> the leaf
    expression, or ("/" | "%", numerator, divisor) for a quotient or remainder)."""

    def __init__(self) -> None:
        self.atoms: dict[str, object] = {}
        self.unsigned: set[str] = set()  # quotients by a divisor of an unsigned type (never negative)

    # -- arithmetic ------------------------------------------------------------------------------
    @staticmethod
    def add(a: Poly, b: Poly, sign: int = 1) -> Poly:
        out = dict(a)
        for mono, c in b.items():
            out[mono] = out.get(mono, 0) + sign * c
        return {k: v for k, v in out.items() if v}

    @staticmethod
    def mul(a: Poly, b: Poly) -> Poly:
        out: Poly = {}
        for ma, ca in a.items():
            for mb, cb in b.items():
                mono = tuple(sorted(ma + mb))
                out[mono] = out.get(mono, 0) + ca * cb
        return {k: v for k, v in out.items() if v}

    def atom(self, key: str, value) -> Poly:
        self.atoms.setdefault(key, value)
        return {(key,): 1}

    # -- reading an expression ---------------------------------------------------------------------
    def poly(self, e) -> Poly:
        e = strip_int_casts(e)
        if isinstance(e, m.IntLit):
            return {(): e.value} if e.value else {}
        if isinstance(e, m.Binary) and _is_int(e.type) and e.op in ("+", "-"):
            return self.recompose(self.add(self.poly(e.lhs), self.poly(e.rhs), 1 if e.op == "+" else -1))
        if isinstance(e, m.Binary) and _is_int(e.type) and e.op == "*":
            return self.recompose(self.mul(self.poly(e.lhs), self.poly(e.rhs)))
        if isinstance(e, m.Unary) and e.op == "-" and not e.postfix and _is_int(e.type):
            return {k: -v for k, v in self.poly(e.operand).items()}
        if isinstance(e, m.Binary) and _is_int(e.type) and e.op in ("/", "%"):
            num, den = self.poly(e.lhs), self.poly(e.rhs)
            if e.type.dtype.startswith("uint"):
                self.unsigned.add(f"/({_key(num)}|{_key(den)})")
            if len(den) == 1 and next(iter(den.values())) > 0:
                return self.divide(num, den) if e.op == "/" else self.remainder(num, den)
            if len(den) > 1:  # x % (rows * (cols - 1)): a digit of a radix of several terms, as it is
                return self.atom(f"{e.op}({_key(num)}|{_key(den)})", (e.op, num, den))
        return self.atom("L" + value_key(e), e)

    def quotient(self, num: Poly, den: Poly) -> Poly | None:
        """``num / den`` when ``den`` (one term) divides every term of ``num``, else None."""
        (dmono, dc), = den.items()
        out: Poly = {}
        for mono, c in num.items():
            rest = Counter(mono)
            rest.subtract(Counter(dmono))
            if c % dc or any(v < 0 for v in rest.values()):
                return None
            out[tuple(sorted(rest.elements()))] = c // dc
        return out

    def divide(self, num: Poly, den: Poly) -> Poly:
        exact = self.quotient(num, den)
        if exact is not None:
            return exact
        for mono, c in num.items():  # (x - x % a) / a
            at = self.atoms.get(mono[0]) if len(mono) == 1 else None
            if c == -1 and isinstance(at, tuple) and at[0] == "%" and _key(at[2]) == _key(den) \
                    and _key(self.add(num, {mono: c}, -1)) == _key(at[1]):
                return self.divide(at[1], den)
        if len(num) == 1:  # (x / a) / b
            (mono, c), = num.items()
            at = self.atoms.get(mono[0]) if len(mono) == 1 and c == 1 else None
            if isinstance(at, tuple) and at[0] == "/":
                return self.divide(at[1], self.mul(at[2], den))
        return self.atom(f"/({_key(num)}|{_key(den)})", ("/", num, den))

    def remainder(self, num: Poly, den: Poly) -> Poly:
        return self.atom(f"%({_key(num)}|{_key(den)})", ("%", num, den))

    def recompose(self, p: Poly) -> Poly:
        """``p`` with the digits of each taken-apart index put back (the module docstring)."""
        changed = True
        while changed:
            changed = False
            for mono, c in p.items():
                for i, k in enumerate(mono):
                    at = self.atoms.get(k)
                    if not (isinstance(at, tuple) and at[0] == "%"):
                        continue
                    x, a = at[1], at[2]
                    if len(a) != 1:
                        continue
                    rest = {mono[:i] + mono[i + 1:]: c}  # P * c, the factors beside x % a
                    (amono, ac), = a.items()
                    for mono2, c2 in p.items():
                        if mono2 == mono:
                            continue
                        new = self._digit_pair(mono2, c2, x, a, rest, amono, ac)
                        if new is not None:
                            p = self.add(self.add(p, {mono: c, mono2: c2}, -1), new)
                            changed = True
                            break
                    if changed:
                        break
                if changed:
                    break
        return p

    def _digit_pair(self, mono2, c2, x, a, rest, amono, ac) -> Poly | None:
        """What ``x % a * rest`` and the term ``c2 * mono2`` add up to when the term is the next
        digit (``x / a * a * rest`` or ``(x / a % b) * a * rest``), else None."""
        (pmono, pc), = rest.items()
        if c2 != pc * ac:
            return None
        left = Counter(mono2)
        left.subtract(Counter(pmono) + Counter(amono))
        if any(v < 0 for v in left.values()) or sum(left.values()) != 1:
            return None
        (k2,) = [k for k, v in left.items() if v]
        at2 = self.atoms.get(k2)
        if not isinstance(at2, tuple):
            return None
        div_key = f"/({_key(x)}|{_key(a)})"
        if at2[0] == "/" and k2 == div_key:  # x / a * a + x % a
            return self.mul(x, {pmono: pc})
        if at2[0] == "%" and _key(at2[1]) == _key({(div_key,): 1}):  # (x / a % b) * a + x % a
            return self.mul(self.remainder(x, self.mul(a, at2[2])), {pmono: pc})
        return None

    # -- questions ---------------------------------------------------------------------------------
    def mentions(self, p: Poly, d: str) -> bool:
        """Whether the element index along ``d`` appears anywhere in ``p``."""
        return any(self._atom_mentions(k, d) for mono in p for k in mono)

    def _atom_mentions(self, k: str, d: str) -> bool:
        at = self.atoms[k]
        if isinstance(at, tuple):
            return self.mentions(at[1], d) or self.mentions(at[2], d)
        return any(isinstance(n, m.Builtin) and n.var == "globalIdx" and n.dim == d for n in m.walk(at))

    def element_free(self, p: Poly) -> bool:
        """Whether every atom of ``p`` is a uniform value or an element index (no load, no local
        whose value is not known)."""
        for mono in p:
            for k in mono:
                at = self.atoms[k]
                if isinstance(at, tuple):
                    if not (self.element_free(at[1]) and self.element_free(at[2])):
                        return False
                elif not (same_for_every_element(at) or _is_global(at)):
                    return False
        return True


def apart(a, b) -> bool:
    """Whether two store indices never name one place: ``a - b`` is a constant that the
    multiples of the gcd of their other coefficients cannot reach (the lanes of a vector at
    ``2 * idx`` and ``2 * idx + 1``, whatever ``idx`` is)."""
    from math import gcd
    alg = Algebra()
    pa, pb = alg.poly(a), alg.poly(b)
    delta = alg.add(pa, pb, -1)
    if set(delta) - {()}:
        return False
    g = 0
    for mono, c in pa.items():
        if mono:
            g = gcd(g, c)
    return g > 1 and delta.get((), 0) % g != 0


def _increasing(alg: Algebra, hits, d: str) -> bool:
    """Whether the terms of an index that mention the element index ``x`` along ``d`` grow with
    it: ``x % a`` read as ``x - (x / a) * a``, they must come to ``Cx * x + sum Cq * (x / a)``
    with ``Cx`` at least 1 and each ``Cq`` and ``a`` nonnegative (a quotient never falls as ``x``
    grows; a divisor of an unsigned type is never negative), so that no two elements meet. A map that skips a column of each row (``id % (rows *
    (cols - 1)) + id / (rows * (cols - 1)) * (rows * cols)``) is ``x + (x / a) * rows``.
    Nonnegative: sums of positive multiples of products of unsigned values (C's unsigned types,
    CUDA's built-in indices); every other factor of a term must be the same for every element."""
    coeffs: dict[str, Poly] = {}  # "x" or a quotient's atom key -> its coefficient
    divisors: dict[str, Poly] = {}
    for mono, c in hits:
        inner = [k for k in mono if alg._atom_mentions(k, d)]
        rest = tuple(k for k in mono if k not in inner)
        if len(inner) != 1 or not all(same_for_every_element(alg.atoms[k]) for k in rest
                                      if not isinstance(alg.atoms[k], tuple)):
            return False
        k = inner[0]
        at = alg.atoms[k]
        cof = {rest: c}
        if not isinstance(at, tuple):
            if not _is_global(at, d):
                return False
            coeffs["x"] = alg.add(coeffs.get("x", {}), cof)
            continue
        op, x, a = at
        if len(x) != 1 or next(iter(x.values())) != 1 or len(next(iter(x))) != 1 \
                or not _is_global(alg.atoms[next(iter(x))[0]], d) or alg.mentions(a, d):
            return False
        q = f"/({_key(x)}|{_key(a)})"
        divisors[q] = a
        if op == "/":
            coeffs[q] = alg.add(coeffs.get(q, {}), cof)
        else:  # x % a = x - (x / a) * a
            coeffs["x"] = alg.add(coeffs.get("x", {}), cof)
            coeffs[q] = alg.add(coeffs.get(q, {}), alg.mul(cof, a), -1)
    cx = coeffs.pop("x", {})
    if cx.get((), 0) < 1 or not _nonnegative(alg, cx):
        return False
    return all(_nonnegative(alg, c) and (q in alg.unsigned or _nonnegative(alg, divisors[q]))
               for q, c in coeffs.items())


def _nonnegative(alg: Algebra, p: Poly) -> bool:
    """Whether ``p`` is a sum of positive multiples of products of unsigned values (zero too)."""
    def unsigned(k) -> bool:
        at = alg.atoms[k]
        if isinstance(at, tuple):
            return _nonnegative(alg, at[1]) and _nonnegative(alg, at[2])
        t = getattr(strip_int_casts(at), "type", None)
        return isinstance(t, m.Scalar) and t.dtype.startswith("uint")
    return all(c > 0 and all(unsigned(k) for k in mono) for mono, c in p.items())


def _is_global(e, d: str | None = None) -> bool:
    e = strip_int_casts(e)
    return isinstance(e, m.Builtin) and e.var == "globalIdx" and (d is None or e.dim == d)


def injective(index, d: str) -> bool:
    """Whether ``index`` (an element's locals expanded) separates elements along ``d``: as a
    polynomial whose digits are put back together, the element index along ``d`` appears in one
    term only, as a factor of its own times uniform values, and every other atom is a uniform
    value or another dimension's element index; or the terms that mention it grow with it
    (:func:`_increasing`)."""
    alg = Algebra()
    p = alg.poly(index)
    if not alg.element_free(p):
        return False
    hits = [(mono, c) for mono, c in p.items() if any(alg._atom_mentions(k, d) for k in mono)]
    if len(hits) != 1:
        return _increasing(alg, hits, d)
    mono, _c = hits[0]
    direct = [k for k in mono if not isinstance(alg.atoms[k], tuple) and _is_global(alg.atoms[k], d)]
    others = [k for k in mono if k not in direct]
    return len(direct) == 1 and all(not isinstance(alg.atoms[k], tuple) and same_for_every_element(alg.atoms[k])
                                    for k in others)
