"""Pointers to plain-data structs too large for lanes (parse.record_layouts), the way parameter
tables and structures of arrays are passed to kernels (``const fparam_t p`` with ``p->stack[a][b]
[c][d]``, ``p->triloop[i].seq[k]``; ``dest->s3[tid] += src->s3[tid]``), as buffers of the struct's
words: every field reached from the pointer is the word at its byte offset, the indices of its
arrays scaled by their strides (``p->stack[a][b][c][d]`` is ``p[1 + ((a * 4 + b) * 4 + c) * 4 + d]``).

The struct's fields must all be of one size (the word): ``int`` tables with a ``float`` among
them are words of int32, the float read through its bits (``__int_as_float(p[k])``) and stored
the same way. A pointer into the struct (``&p->loops[k].val``, an array field passed on) is a view
of the buffer at the word offset; ``p + 1`` and ``&p[k]`` step whole structs. What cannot be
words is refused with its reason: fields of several sizes, a struct copied whole (``params q =
*p``), a compound assignment to a field held through another type's bits.

The launcher takes the struct's bytes as a buffer of its word type (a recorded launch passes the
allocation's bytes the same way)."""
from __future__ import annotations

import dataclasses
from collections import Counter

from ... import dtypes
from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.loops import NoTileLangForm
from ...ir.visit import Transformer
from .vectors import _bits


def size_of(t: m.CType) -> int:
    """The bytes of a laid-out field's type (a scalar, a fixed array, a laid-out record)."""
    if isinstance(t, m.Array):
        return t.extent * size_of(t.element)
    if isinstance(t, m.Record):
        return t.size
    return dtypes.SIZES[t.dtype]


def _leaves(t: m.CType):
    for leaf in _leaf_types(t):
        yield leaf.dtype


def word_dtype(record: m.Record) -> str | None:
    """The word a laid-out record is read in: the dtype most of its fields have, where all its
    fields are of that size (bool aside); None where they are not."""
    leaves = list(_leaves(record))
    if not leaves or "bool" in leaves or any(d in ("float16", "bfloat16") for d in leaves) \
            or len({dtypes.SIZES[d] for d in leaves}) != 1:
        return None
    counts = Counter(leaves)
    return max(counts, key=lambda d: (counts[d], -leaves.index(d)))


def laid_out(t: m.CType) -> m.Record | None:
    """The laid-out record ``t`` points to, or None."""
    if isinstance(t, m.Pointer) and isinstance(t.pointee, m.Record) and t.pointee.fields \
            and not any(isinstance(leaf, m.Pointer) for leaf in _leaf_types(t.pointee)):
        return t.pointee
    return None


def _leaf_types(t: m.CType):
    if isinstance(t, m.Array):
        yield from _leaf_types(t.element)
    elif isinstance(t, m.Record):
        for _name, _offset, f in t.fields:
            yield from _leaf_types(f)
    else:
        yield t


@dataclasses.dataclass(frozen=True)
class _Place:
    """Where an access chain from a record pointer lands: ``ptr`` (a pointer to ``type``) or an
    lvalue of ``type``, ``words`` words from the buffer's start (an int64 expression)."""

    root: m.Ref
    ptr: bool
    type: m.CType
    words: m.Expr | None  # None: the start


def record_buffers(fn: m.Function) -> m.Function:
    records = {p.name: laid_out(p.type) for p in fn.params if laid_out(p.type) is not None}
    if not records or fn.body is None:
        return fn
    words = {}
    for p in fn.params:
        if p.name in records:
            word = word_dtype(records[p.name])
            if word is None:
                sizes = sorted({dtypes.SIZES.get(d, 0) for d in _leaves(records[p.name])})
                raise NoTileLangForm(f"parameter '{p.name}' points to '{records[p.name]}', whose fields are of "
                                     f"{', '.join(map(str, sizes))} bytes: it is no buffer of one word type", p.span)
            words[p.name] = word
    pointer = {p.name: m.Pointer(m.Scalar(words[p.name]), p.type.const, p.type.restrict, p.type.volatile)
               for p in fn.params if p.name in records}
    body = _Words(records, words, pointer).transform(fn.body)
    params = tuple(dataclasses.replace(p, type=pointer[p.name]) if p.name in records else p for p in fn.params)
    return dataclasses.replace(fn, params=params, body=body)


class _Words(Transformer):
    def __init__(self, records, words, pointer) -> None:
        self.records, self.words, self.pointer = records, words, pointer

    # -- where a chain lands ------------------------------------------------------------------
    def place(self, e) -> _Place | None:
        e = strip_implicit_casts(e)
        span = e.span
        if isinstance(e, m.Ref) and e.name in self.records:
            return _Place(e, True, self.records[e.name], None)
        if isinstance(e, m.Unary) and e.op == "*":
            return self._element(self.place(e.operand), m.IntLit(0, "0", m.Scalar("int32"), span), span)
        if isinstance(e, m.Unary) and e.op == "&":
            inner = self.place(e.operand)
            return dataclasses.replace(inner, ptr=True) if inner is not None and not inner.ptr else None
        if isinstance(e, m.Index):
            return self._element(self.place(e.base), e.index, span)
        if isinstance(e, m.Binary) and e.op in ("+", "-"):
            base = self.place(e.lhs)
            if base is None or not base.ptr:
                return None
            index = e.rhs if e.op == "+" else m.Unary("-", e.rhs, False, e.rhs.type, span)
            return dataclasses.replace(self._element(base, index, span), ptr=True)
        if isinstance(e, m.Member):
            base = self.place(e.base)
            if base is None:
                return None
            if e.arrow:
                if not base.ptr:
                    return None
                base = dataclasses.replace(base, ptr=False)
            if base.ptr or not isinstance(base.type, m.Record):
                return None
            for name, offset, t in base.type.fields:
                if name == e.field:
                    return _Place(base.root, False, t, self._add(base, offset, None, span))
            return None
        return None

    def _element(self, base: _Place | None, index: m.Expr, span) -> _Place | None:
        """Element ``index`` of what ``base`` points to (or of the array it is)."""
        if base is None:
            return None
        if base.ptr:
            element = base.type
        elif isinstance(base.type, m.Array):
            element = base.type.element
        else:
            return None
        return _Place(base.root, False, element, self._add(base, 0, (self.transform(index), size_of(element)), span))

    def _add(self, base: _Place, offset: int, scaled, span) -> m.Expr | None:
        """``base``'s words plus ``offset`` bytes plus ``index * size`` bytes (``scaled``)."""
        w = dtypes.SIZES[self.words[base.root.name]]
        itype = m.Scalar("int64")
        out = base.words
        if offset:
            lit = m.IntLit(offset // w, str(offset // w), itype, span)
            out = lit if out is None else _fold(m.Binary("+", out, lit, itype, span))
        if scaled is not None:
            index, size = scaled
            if isinstance(index, m.IntLit) and index.value == 0:
                return out
            term = index if size == w else m.Binary("*", index, m.IntLit(size // w, str(size // w), itype, span),
                                                    itype, span)
            out = term if out is None else m.Binary("+", out, term, itype, span)
        return out

    # -- the chains rewritten -----------------------------------------------------------------
    def transform(self, node):
        if isinstance(node, m.Assign):
            return self._assign(node)
        if isinstance(node, (m.Member, m.Index, m.Unary, m.Binary, m.Cast)) and not (
                isinstance(node, m.Unary) and node.op not in ("*", "&")) and not (
                isinstance(node, m.Binary) and node.op not in ("+", "-")):
            place = self.place(node)
            if place is not None:
                return self._value(place, node)
        return super().transform(node)

    def leave_Ref(self, node):
        if node.name in self.records:
            return dataclasses.replace(node, type=self.pointer[node.name])
        return node

    def _word_ref(self, place: _Place, span) -> m.Index:
        word = self.words[place.root.name]
        zero = m.IntLit(0, "0", m.Scalar("int64"), span)
        root = dataclasses.replace(place.root, type=self.pointer[place.root.name])
        return m.Index(root, place.words if place.words is not None else zero, m.Scalar(word), span)

    def _value(self, place: _Place, node) -> m.Expr:
        """The expression ``node`` (which lands at ``place``) reading the words."""
        span, word = node.span, self.words[place.root.name]
        root = dataclasses.replace(place.root, type=self.pointer[place.root.name])
        if not place.ptr and isinstance(place.type, m.Scalar):
            value = _bits(self._word_ref(place, span), place.type.dtype)
            return value if not isinstance(node, m.Cast) or node.type == value.type else \
                dataclasses.replace(node, operand=value)
        target = place.type if place.ptr else (place.type.element if isinstance(place.type, m.Array) else None)
        if target is not None and (isinstance(target, m.Record) or
                                   all(d == word for d in _leaves(target))):
            # a pointer into the struct: a view of the words (a whole struct, or elements of the word type)
            if place.words is None:
                return root
            return m.Binary("+", root, place.words, self.pointer[place.root.name], span)
        raise NoTileLangForm(f"'{place.root.name}' points to '{self.records[place.root.name]}', read here as "
                             f"a whole '{place.type}' or a pointer to another type than its {word} words", span)

    def _assign(self, node: m.Assign):
        place = self.place(node.target)
        if place is None:
            return super().transform(node)
        span, word = node.span, self.words[place.root.name]
        if place.ptr or not isinstance(place.type, m.Scalar):
            raise NoTileLangForm(f"a whole '{place.type}' of '{self.records[place.root.name]}' assigned: only "
                                 "its scalar fields are words", span)
        value = self.transform(node.value)
        target = self._word_ref(place, span)
        if place.type.dtype == word:
            return dataclasses.replace(node, target=target, value=value)
        if node.op != "=":
            raise NoTileLangForm(f"'{node.op}' on a {place.type.dtype} field of '{self.records[place.root.name]}' "
                                 f"held in its {word} words: a compound assignment through the bits", span)
        lane = place.type
        if value.type != lane:
            value = m.Cast(lane, value, "implicit", lane, span)
        return m.Assign("=", target, _bits(value, word), m.Scalar(word), span)


def _fold(e: m.Binary) -> m.Expr:
    """``a + c1 + c2`` with its two literals added."""
    if isinstance(e.rhs, m.IntLit) and isinstance(e.lhs, m.IntLit):
        v = e.lhs.value + e.rhs.value
        return m.IntLit(v, str(v), e.type, e.span)
    if isinstance(e.rhs, m.IntLit) and isinstance(e.lhs, m.Binary) and e.lhs.op == "+" \
            and isinstance(e.lhs.rhs, m.IntLit):
        v = e.lhs.rhs.value + e.rhs.value
        return m.Binary("+", e.lhs.lhs, m.IntLit(v, str(v), e.type, e.span), e.type, e.span)
    return e
