"""Symbolic dimensions: the extents a model declares by name (``dim_param``, e.g. ``batch``).

A :class:`Dim` is a polynomial with integer coefficients over the declared names (``batch * 512``,
``batch * seq + 1``). Shapes hold ints and Dims side by side; ``*``, ``+``, exact ``//`` and
equality work on them, so the kernel emitters compute views and extents as with numbers and write
them into the kernel text as expressions of the names (``str(Dim)`` is that expression, valid in
TileLang, where each name is a ``T.dynamic`` variable, and in Python, where it is an int).

What needs the value (an order comparison: a Slice clamped to a symbolic extent, say) raises
:class:`NeedsValue`; the group is then specialised per value at run time (:mod:`.specialise`).
"""
from __future__ import annotations


class NeedsValue(Exception):
    """A decision that needs a symbolic extent's value (the group is specialised per value)."""


class Dim:
    __slots__ = ("terms",)

    def __init__(self, terms: dict):
        self.terms = {k: v for k, v in terms.items() if v}

    @staticmethod
    def named(name: str) -> Dim:
        return Dim({(name,): 1})

    @staticmethod
    def of(value) -> Dim:
        return value if isinstance(value, Dim) else Dim({(): int(value)})

    def _norm(self):
        """An int when no name is left."""
        if not self.terms:
            return 0
        if set(self.terms) == {()}:
            return self.terms[()]
        return self

    @property
    def names(self) -> set[str]:
        return {n for k in self.terms for n in k}

    def __add__(self, other):
        out = dict(self.terms)
        for k, v in Dim.of(other).terms.items():
            out[k] = out.get(k, 0) + v
        return Dim(out)._norm()

    __radd__ = __add__

    def __sub__(self, other):
        return self + (-1) * Dim.of(other)

    def __rsub__(self, other):
        return Dim.of(other) + (-1) * self

    def __mul__(self, other):
        out: dict = {}
        for k1, v1 in self.terms.items():
            for k2, v2 in Dim.of(other).terms.items():
                k = tuple(sorted(k1 + k2))
                out[k] = out.get(k, 0) + v1 * v2
        return Dim(out)._norm()

    __rmul__ = __mul__

    def __floordiv__(self, other):
        """Exact division by a monomial (an int or a product of names), else :class:`NeedsValue`."""
        o = Dim.of(other)
        if len(o.terms) != 1:
            raise NeedsValue(f"({self}) // ({other})")
        (ok, ov), = o.terms.items()
        out = {}
        for k, v in self.terms.items():
            rest = list(k)
            for n in ok:
                if n not in rest:
                    raise NeedsValue(f"({self}) // ({other})")
                rest.remove(n)
            if v % ov:
                raise NeedsValue(f"({self}) // ({other})")
            out[tuple(rest)] = v // ov
        return Dim(out)._norm()

    def __rfloordiv__(self, other):
        raise NeedsValue(f"{other} // ({self})")

    def __mod__(self, other):
        raise NeedsValue(f"({self}) % {other}")

    def __neg__(self):
        return (-1) * self

    def __eq__(self, other):
        if isinstance(other, (int, Dim)):
            return isinstance(other, Dim) and self.terms == other.terms
        return NotImplemented

    def __hash__(self):
        return hash(tuple(sorted(self.terms.items())))

    def _order(self, other):
        raise NeedsValue(f"comparing {self} with {other}")

    __lt__ = __le__ = __gt__ = __ge__ = _order

    def __bool__(self):
        return True          # a declared extent: not known to be zero

    def __int__(self):
        raise NeedsValue(f"the value of {self}")

    __index__ = __float__ = __int__

    def __str__(self):
        parts = []
        for k, v in sorted(self.terms.items(), key=lambda kv: (-len(kv[0]), kv[0])):
            factors = list(k) + ([str(abs(v))] if abs(v) != 1 or not k else [])
            parts.append(("- " if v < 0 else "+ ") + " * ".join(factors))
        text = " ".join(parts)
        text = text[2:] if text.startswith("+ ") else "-" + text[2:]
        bare = len(self.terms) == 1 and next(iter(self.terms.values())) == 1 and len(next(iter(self.terms))) == 1
        return text if bare else f"({text})"   # parenthesised: it goes into expressions as one operand

    __repr__ = __str__


class Floor:
    """``num // den + add``: the count of a strided window's places along a declared extent
    (``(H - 1) // 2 + 1``), which no polynomial spells. It is the definition of a derived extent
    (the graph names it, and kernels take that name), never an extent of a shape itself."""
    __slots__ = ("num", "den", "add")

    def __init__(self, num, den: int, add: int = 0):
        self.num, self.den, self.add = num, int(den), int(add)

    @property
    def names(self) -> set[str]:
        return self.num.names if isinstance(self.num, Dim) else set()

    def __add__(self, other):
        if isinstance(other, int):
            return Floor(self.num, self.den, self.add + other)
        raise NeedsValue(f"{self} + {other}")

    __radd__ = __add__

    def __eq__(self, other):
        return isinstance(other, Floor) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __str__(self):
        tail = f" + {self.add}" if self.add > 0 else f" - {-self.add}" if self.add < 0 else ""
        return f"({self.num} // {self.den}{tail})"

    __repr__ = __str__


def window_count(n, size: int, stride: int, begin: int = 0, end: int = 0, ceil: bool = False):
    """How many windows of ``size`` places, ``stride`` apart, fit in ``n`` padded by ``begin`` and
    ``end`` (ONNX Conv and pools; ``ceil``: a pool's ceil_mode, a last partial window counted
    unless it would start in the end padding): an int, a Dim where the division is exact, else a
    :class:`Floor`. Raises NeedsValue for ceil_mode along a declared extent where that last rule
    could apply (``end + stride > size``: no one expression counts for every value)."""
    room = n + begin + end - size + (stride - 1 if ceil else 0)
    if not isinstance(room, Dim):
        count = room // stride + 1
        return count - 1 if ceil and (count - 1) * stride >= n + begin else count
    if ceil and end + stride > size:
        raise NeedsValue(f"a ceil_mode window count along {n} (padding {end}, stride {stride}, window {size})")
    try:
        return room // stride + 1
    except NeedsValue:
        return Floor(room, stride, 1)


def is_sym(value) -> bool:
    return isinstance(value, Dim)


def many(n) -> bool:
    """Whether an extent may be more than 1 (a declared one may: it is treated so)."""
    return isinstance(n, Dim) or n > 1


def symbols(shape) -> set[str]:
    """The names in ``shape``."""
    out: set[str] = set()
    for d in shape:
        if isinstance(d, Dim):
            out |= d.names
    return out


def substitute(value, values: dict):
    """``value`` (an int, a Dim or a tuple of them) with the names in ``values`` replaced by ints."""
    if isinstance(value, tuple):
        return tuple(substitute(v, values) for v in value)
    if isinstance(value, Floor):
        return substitute(value.num, values) // value.den + value.add
    if not isinstance(value, Dim):
        return value
    total = 0
    for k, v in value.terms.items():
        term = v
        for n in k:
            if n not in values:
                raise NeedsValue(f"no value for {n}")
            term *= int(values[n])
        total += term
    return total


def factors(d) -> tuple:
    """A Dim that is one term (``batch * seq * 8``) as its factors (``batch, seq, 8``): a shape of the
    same size in which each name is a whole extent; None for a sum."""
    if not isinstance(d, Dim) or len(d.terms) != 1:
        return None
    (k, v), = d.terms.items()
    return tuple(Dim.named(n) for n in k) + ((v,) if v != 1 else ())
