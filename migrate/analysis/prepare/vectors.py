"""Scalarise CUDA vector types (``float4``, ``float2``, ``int4``, ``__half2``, ...).

TileLang kernels here work on flat scalar buffers, so every vector value becomes its lanes:

- a ``float4*`` parameter becomes a ``float*`` buffer of four times as many elements (the
  launcher and the spec already count scalars): ``x[i].y`` → ``x[4*i + 1]``; an unsigned 32-bit
  ``i`` is converted to int64 first, as C's pointer arithmetic does (``x[(int64)i*4 + 1]``: one
  address for the lanes on the GPU; :func:`~migrate.analysis.facts.vector_lanes.widened`);
- ``reinterpret_cast<const float4*>(a)`` of a scalar buffer is a view: ``v4[i].z`` → ``a[4*i + 2]``;
  the other way, ``(float*) v2`` of a ``float2`` buffer is its scalar buffer, lanes in order;
- a vector local ``float4 v`` becomes ``v_x, v_y, v_z, v_w``; assigning a vector assigns each lane;
- a vector or struct the kernel takes by value (``float3 w``, ``Params p``) becomes one scalar
  parameter per lane (``w_x``, ``p_width``), each marked with the CUDA parameter and the byte offset
  it comes from (``Param.lane_of``): the launcher takes them out of the struct's value;
- an array of vectors (``__shared__ uchar4 s[64]``, ``float4 t[3][4]``) becomes an array of their
  scalars, the last extent times the lanes: ``t[i][j].y`` → ``t[i][4*j + 1]``; a pointer into a
  one-dimensional one is a view like a parameter's;
- ``make_float4(a, b, c, d)``, ``__floats2half2_rn``, ``__hadd2``/``__hmul2``/``__hfma2``,
  ``__half22float2``, ``__low2float``/``__high2float`` act lane by lane, as does every two-lane
  function the compat table gives a scalar row for (``__hgt2`` is ``__hgt`` on each lane, its bool
  the lane's 1.0 or 0.0; ``__hmax2``, ``h2sqrt``).

Anything else of vector type raises :class:`VectorError` with the span.
"""
from __future__ import annotations

import dataclasses
import re

from ...compat.catalog import CACHED_LOADS
from ...compat.table import lookup
from ...dtypes import SIZES
from ...ir import model as m
from ...ir.exprs import pure, strip_implicit_casts
from ...ir.names import fresh
from ...ir.span import Span
from ...ir.visit import Transformer
from ..facts.vector_lanes import WIDE, is_widened, lane_adds, lane_copies, lane_loads, lane_stores, widened, wrapping_locals
from .vector_bits import retype_bit_containers

LANES = ("x", "y", "z", "w")
#: the most lanes a vector or record local (or by-value parameter) may have: each lane is a local
#: (a parameter) of its own
LOCAL_LANES = 64


def lane_names(v: m.Vector) -> tuple[str, ...]:
    """The names of a vector's lanes: a struct's fields (``pos.x`` for a field's own lanes), else
    x, y, z, w."""
    return v.fields or LANES[:v.lanes]


def lane_local(name: str, v: m.Vector, i: int) -> str:
    """The local holding lane ``i`` of the vector local ``name`` (``p_pos_x``, ``a_u_1``)."""
    return f"{name}_{lane_names(v)[i].replace('.', '_').replace('[', '_').replace(']', '')}"


def stride(v: m.Vector) -> int:
    """How many scalars of the buffer one vector takes: its lanes, or a record's words."""
    return v.words or v.lanes


def lane_dtype(v: m.Vector, i: int) -> str:
    return v.lane_dtypes[i] if v.lane_dtypes else v.dtype


def lane_offset(v: m.Vector, i: int) -> int:
    """Where lane ``i`` lies in the vector's bytes."""
    if v.slots:
        word, at = v.slots[i]
        return word * SIZES[v.dtype] + at
    return i * SIZES[v.dtype]


def _overlapping(v: m.Vector) -> bool:
    """Whether lanes of ``v`` share their bytes (a union's members): a local of it is its words,
    each lane read and written through their bits, never a local per lane."""
    return bool(v.slots) and len(set(v.slots)) < len(v.slots)


def _word(v: m.Vector, i: int) -> int:
    return v.slots[i][0] if v.slots else i


def _packed(v: m.Vector, i: int) -> bool:
    """Whether lane ``i`` of a record is held in its word other than as the word's own dtype (an
    int among floats, a bool or an int in a double's word): read and written through its bits."""
    return bool(v.lane_dtypes) and (v.lane_dtypes[i] != v.dtype or v.slots[i][1] != 0)


_INT = {1: "int8", 2: "int16", 4: "int32", 8: "int64"}
_BITCAST = {("float32", "int32"): "__float_as_int", ("int32", "float32"): "__int_as_float",
            ("float64", "int64"): "__double_as_longlong", ("int64", "float64"): "__longlong_as_double"}


def _bits(e: m.Expr, dtype: str) -> m.Expr:
    """``e`` (a scalar) with its bits read as ``dtype`` of the same size."""
    src = e.type.dtype
    if src == dtype:
        return e
    t = m.Scalar(dtype)
    ints = (src.startswith(("int", "uint")) or src == "bool") and dtype.startswith(("int", "uint"))
    if ints:
        return m.Cast(t, e, "implicit", t, e.span)
    if (src, dtype) in _BITCAST:
        return m.Call(_BITCAST[(src, dtype)], (e,), "math", (), t, e.span)
    signed = _INT.get(SIZES.get(src, 0))
    if signed and src.startswith("uint") and (signed, dtype) in _BITCAST:  # uint64 -> float64
        return _bits(_bits(e, signed), dtype)
    signed = _INT.get(SIZES.get(dtype, 0))
    if signed and dtype.startswith("uint") and (src, signed) in _BITCAST:  # float32 -> uint32
        return _bits(_bits(e, signed), dtype)
    raise VectorError(f"a record lane of '{dtype}' held in '{src}' words", e.span)


def _int_lit(value: int, dtype: str, span) -> m.IntLit:
    bits = 8 * SIZES[dtype]
    value &= (1 << bits) - 1
    if value >= 1 << (bits - 1):
        value -= 1 << bits
    return m.IntLit(value, str(value), m.Scalar(dtype), span)


def unpack(word: m.Expr, v: m.Vector, i: int) -> m.Expr:
    """Lane ``i`` of a record read out of its storage word ``word``."""
    lane, span = lane_dtype(v, i), word.span
    wsize, lsize, at = SIZES[v.dtype], SIZES[lane], v.slots[i][1]
    if lsize == wsize and lane != "bool":
        return _bits(word, lane)
    wint = _INT[wsize]
    bits = _bits(word, wint)
    if at:
        bits = m.Binary(">>", bits, _int_lit(8 * at, wint, span), m.Scalar(wint), span)
    if lsize < wsize:
        bits = m.Binary("&", bits, _int_lit((1 << (8 * lsize)) - 1, wint, span), m.Scalar(wint), span)
    if lane == "bool":
        return m.Binary("!=", bits, _int_lit(0, wint, span), m.Scalar("bool"), span)
    narrow = m.Cast(m.Scalar(_INT[lsize]), bits, "implicit", m.Scalar(_INT[lsize]), span)
    return _bits(narrow, lane)


def pack(word: m.Expr, v: m.Vector, i: int, value: m.Expr) -> m.Expr:
    """The storage word ``word`` with lane ``i`` of its record set to ``value``."""
    lane, span = lane_dtype(v, i), word.span
    if value.type != m.Scalar(lane):
        value = m.Cast(m.Scalar(lane), value, "implicit", m.Scalar(lane), span)
    wsize, lsize, at = SIZES[v.dtype], SIZES[lane], v.slots[i][1]
    if lsize == wsize and lane != "bool":
        return _bits(value, v.dtype)
    wint = _INT[wsize]
    mine = m.Cast(m.Scalar(_INT[lsize]), value, "implicit", m.Scalar(_INT[lsize]), span) if lane == "bool" \
        else _bits(value, _INT[lsize])
    mine = m.Binary("&", m.Cast(m.Scalar(wint), mine, "implicit", m.Scalar(wint), span),
                    _int_lit((1 << (8 * lsize)) - 1, wint, span), m.Scalar(wint), span)
    if at:
        mine = m.Binary("<<", mine, _int_lit(8 * at, wint, span), m.Scalar(wint), span)
    kept = m.Binary("&", _bits(word, wint), _int_lit(~(((1 << (8 * lsize)) - 1) << (8 * at)), wint, span),
                    m.Scalar(wint), span)
    return _bits(m.Binary("|", kept, mine, m.Scalar(wint), span), v.dtype)


class VectorError(Exception):
    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.span = span


def _vec(t) -> m.Vector | None:
    if isinstance(t, m.Vector):
        return t
    if isinstance(t, m.Reference) and isinstance(t.target, m.Vector):
        return t.target
    return None


def _array_vec(t) -> m.Vector | None:
    """The vector type an array (of arrays) of vectors holds; None for any other type."""
    while isinstance(t, m.Array):
        t = t.element
    return t if isinstance(t, m.Vector) else None


def _scalar_array(t: m.Array, unsized: bool = False) -> m.Array:
    """``t`` (an array of vectors) as an array of their scalars, the last extent times the lanes;
    ``unsized``: an ``extern __shared__`` one, whose size the launch gives in bytes."""
    if isinstance(t.element, m.Array):
        return dataclasses.replace(t, element=_scalar_array(t.element))
    v = t.element
    if t.extent is None:
        if unsized:
            return m.Array(m.Scalar(v.dtype), None, "", t.volatile)
        if t.extent_text:  # float2 lpoint[tile_size] in a template: the extent its instance binds, in lanes
            return m.Array(m.Scalar(v.dtype), None, f"({t.extent_text}) * {stride(v)}", t.volatile)
        raise VectorError(f"array of '{v}' with no constant extent")
    return m.Array(m.Scalar(v.dtype), t.extent * stride(v), "", t.volatile)


def _plain_lanes(v: m.Vector) -> bool:
    """Whether the record ``v`` is its words in order, each lane one word of its one type
    (``struct alignas(16) data_t { int data[4]; }``): a view of a buffer of that type reads its
    elements as a CUDA vector's lanes."""
    return set(v.lane_dtypes) == {v.dtype} and v.words == v.lanes \
        and tuple(v.slots) == tuple((i, 0) for i in range(v.lanes))


def _constant_words(v: m.Vector) -> m.Array:
    """A ``__constant__`` struct (or vector) as the array of its words: the same bytes."""
    return m.Array(m.Scalar(v.dtype), stride(v))


def uses_vectors(fn: m.Function) -> bool:
    if any(_vec(p.type) or (isinstance(p.type, m.Pointer) and _vec(p.type.pointee)) for p in fn.params):
        return True
    return any(hasattr(n, "type") and (_vec(n.type) or _array_vec(n.type)
                                       or (isinstance(n.type, m.Pointer) and _vec(n.type.pointee)))
               for n in m.walk(fn.body)) if fn.body else False


def _int(value: int, span: Span) -> m.IntLit:
    return m.IntLit(value, str(value), m.Scalar("int32"), span)


def _add(a: m.Expr | None, b: m.Expr, span: Span) -> m.Expr:
    """``a + b`` in ``b``'s type; in int64 where ``a`` is a lane's place in 64 bits (a lane or a
    field's element added to it)."""
    if a is None:
        return b
    return m.Binary("+", a, b, WIDE if _wide_place(a) else b.type, span)


def _wide_place(e: m.Expr) -> bool:
    """Whether ``e`` is a sum holding an element index that :func:`widened` made int64, scaled:
    ``(int64)E * L``."""
    if isinstance(e, m.Binary) and e.op == "+":
        return _wide_place(e.lhs) or _wide_place(e.rhs)
    return isinstance(e, m.Binary) and e.op == "*" and is_widened(e.lhs)


def _equals(index: m.Expr, k: int, span: Span) -> m.Expr:
    return m.Binary("==", index, _int(k, span), m.Scalar("bool"), span)


def _mul(a: m.Expr, k: int, span: Span) -> m.Expr:
    return m.Binary("*", a, _int(k, span), a.type if isinstance(a.type, m.Scalar) else m.Scalar("int32"), span)


@dataclasses.dataclass(frozen=True)
class _View:
    buffer: str  # the scalar buffer (parameter, or array of vectors made scalars) holding the lanes
    lanes: int
    offset: m.Expr | None  # in vectors
    scalar: m.Scalar
    kind: str = "param"  # the buffer's Ref kind
    array: m.Array | None = None  # the buffer's type where it is an array, not a pointer
    start: m.Expr | None = None  # in scalars: a vector view of a scalar buffer from some element on
    volatile: bool = False  # the vectors are volatile (a parameter ``volatile float4*``)
    rows: tuple = ()  # the leading indices of a row of an array of several dimensions (``&s[y][x]``)
    vec: m.Vector | None = None  # the vector or record a parameter's view holds (its lanes' words)

    def ref(self, span: Span, const: bool = False) -> m.Expr:
        out = m.Ref(self.buffer, self.kind, self.array or m.Pointer(self.scalar, const, volatile=self.volatile), span)
        for index in self.rows:  # s[y]: the row the lanes lie in
            out = m.Index(out, index, out.type.element, span)
        return out

    def first_lane(self, index: m.Expr | None, span: Span, element: frozenset | None = None) -> m.Expr | None:
        """Where vector ``index`` of the view (its start with None) begins in the scalar buffer:
        ``start + (offset + index) * lanes``; None for the buffer's own first element. For an
        element read or written lane by lane (``element``: the locals that may wrap below zero),
        an unsigned 32-bit index into a global buffer is scaled in 64 bits
        (:func:`~migrate.analysis.facts.vector_lanes.widened`)."""
        vectors = _add(self.offset, index, span) if index is not None else self.offset
        if element is not None and vectors is not None and self.kind == "param" and self.lanes > 1:
            vectors = widened(vectors, element)
        at = _mul(vectors, self.lanes, span) if vectors is not None else None
        if self.start is not None:
            at = _add(self.start, at, span) if at is not None else self.start
        return at


#: atomics CUDA overloads on vectors (``__half2``, ``float2``, ``float4``), atomic lane by lane
_LANE_ATOMICS = ("atomicAdd", "atomicAdd_block", "atomicAdd_system")
_HALF2_BINARY = {"__hadd2": "+", "__hsub2": "-", "__hmul2": "*"}
#: arithmetic a vector operand or result takes lane by lane (the frontend keeps a user's operator
#: on vectors as this syntax only where its definition is lane by lane: parse/lanewise.py)
_LANE_OPS = ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>")
_LANE_PICK = {"__low2float": (0, "float32"), "__high2float": (1, "float32"),
              "__low2half": (0, "float16"), "__high2half": (1, "float16")}


#: CUDA's two-lane half types, whose header defines + - * / lane by lane (``__hadd2``, ``__hmul2``)
_HALF_PAIRS = ("__half2", "half2", "__nv_bfloat162", "nv_bfloat162")


def _half_pair(e) -> m.Vector | None:
    """The ``__half2`` (or ``__nv_bfloat162``) type of ``a + b`` on two of them where clang left
    the operator's type dependent (a template's body, ``return a + b + c;`` inlined for the
    instance on ``half2``); None for any other expression."""
    if not (isinstance(e, m.Binary) and e.op in ("+", "-", "*", "/") and not _vec(e.type)):
        return None
    sides = [_vec(x.type) or _half_pair(x) for x in (e.lhs, e.rhs)]
    if sides[0] is None or sides[0] != sides[1] or sides[0].name not in _HALF_PAIRS:
        return None
    return sides[0]


#: cuComplex.h's functions of complex values (float2, double2) that return one: what each lane is
_COMPLEX = {"cuConjf": "conj", "cuConj": "conj", "cuCaddf": "+", "cuCadd": "+", "cuCsubf": "-", "cuCsub": "-",
            "cuCmulf": "*", "cuCmul": "*", "cuCdivf": "/", "cuCdiv": "/"}
#: ... and those that return a number: a lane (0 the real part, 1 the imaginary) or the magnitude
_COMPLEX_SCALAR = {"cuCrealf": 0, "cuCreal": 0, "cuCimagf": 1, "cuCimag": 1, "cuCabsf": "abs", "cuCabs": "abs"}


def _lanewise(name: str) -> str | None:
    """The scalar CUDA function a vector function applies to each lane (``__hgt2``: ``__hgt``), as
    the compat table's row for it says (:attr:`~migrate.compat.table.Row.lanewise`); None for any
    other name."""
    row = lookup(name)
    return row.lanewise if row is not None and row.lanewise and lookup(row.lanewise) is not None else None


def _field_chain(e) -> tuple[m.Member, list] | None:
    """``p.data[i][j]`` (any number of indices on a struct's field): (the field ``p.data``, its
    indices in order); None for anything else."""
    indices = []
    while isinstance(e, m.Index) and not isinstance(e.base, m.Member):
        indices.insert(0, e.index)
        e = e.base
    if isinstance(e, m.Index) and isinstance(e.base, m.Member):
        return e.base, [e.index] + indices
    return None


def _flat_index(indices: list, last: str, span: Span) -> m.Expr | None:
    """The place in memory order of the element ``indices`` pick in an array field whose last
    element is the lane ``last`` (``data[2][2]``: extents 3 by 3); None unless every extent is indexed."""
    found = re.fullmatch(r"[^\[]*((?:\[\d+\])+)", last)
    extents = [int(k) + 1 for k in found.group(1).strip("[]").split("][")] if found else []
    if len(extents) != len(indices):
        return None
    flat = indices[0]
    for index, extent in zip(indices[1:], extents[1:]):
        flat = _add(_mul(flat, extent, span), index, span)
    return flat


def _record_path(e) -> tuple[m.Expr, list] | None:
    """``e`` a place inside a record reached through its fields and the elements of its array
    fields (``s.stepinfo[o].block_z``, ``a->e[j][i]``, ``r.board[k]``): (the record, the path: field
    names and index expressions in order); None where ``e`` is no such place."""
    parts = []
    while True:
        if isinstance(e, m.Member):
            base = e.base
            if e.arrow and isinstance(base.type, m.Pointer):
                base = m.Index(base, _int(0, e.span), base.type.pointee, e.span)
            parts.insert(0, e.field)
            e = base
            continue
        inner = e
        while isinstance(inner, m.Index) and isinstance(inner.base.type, m.Array):
            inner = inner.base
        if isinstance(e, m.Index) and isinstance(e.base.type, m.Array) and isinstance(inner, m.Member):
            parts.insert(0, e.index)
            e = e.base
            continue
        break
    if not parts or not isinstance(parts[0], str) or _vec(e.type) is None:
        return None
    return e, parts


def _path_lanes(v: m.Vector, parts: list, suffix: str) -> list[tuple[int, tuple[int, ...]]]:
    """The lanes of record ``v`` the path ``parts`` (then ``suffix``, a lane of a struct the path
    names) may pick: (lane, the value of each index of the path that is no constant)."""
    pattern = ""
    for part in parts:
        if isinstance(part, str):
            pattern += ("." if pattern else "") + re.escape(part)
        elif isinstance(part, m.IntLit):
            pattern += re.escape(f"[{part.value}]")
        else:
            pattern += r"\[(\d+)\]"
    pattern += re.escape(suffix)
    out = []
    for k, name in enumerate(lane_names(v)):
        found = re.fullmatch(pattern, name)
        if found:
            out.append((k, tuple(int(g) for g in found.groups())))
    return out


def _pointer_step(s, names) -> tuple[str, str, m.Expr] | None:
    """(pointer, "+=" or "-=", amount) where statement ``s`` steps one of the pointers ``names``
    (``k++``, ``--k``, ``k += n``, ``k -= n``, ``k = k + n``); None for any other statement."""
    if not isinstance(s, m.ExprStmt):
        return None
    e = s.expr
    if isinstance(e, m.Unary) and e.op in ("++", "--") and isinstance(e.operand, m.Ref) and e.operand.name in names:
        return e.operand.name, "+=" if e.op == "++" else "-=", _int(1, s.span)
    if isinstance(e, m.Assign) and isinstance(e.target, m.Ref) and e.target.name in names:
        if e.op in ("+=", "-="):
            return e.target.name, e.op, e.value
        v = strip_implicit_casts(e.value)
        if e.op == "=" and isinstance(v, m.Binary) and v.op in ("+", "-") and isinstance(v.lhs, m.Ref) \
                and v.lhs.name == e.target.name and not isinstance(getattr(v.rhs, "type", None), m.Pointer):
            return e.target.name, v.op + "=", v.rhs
    return None


def _pointer_steps(body, name: str) -> bool | None:
    """True when every assignment of pointer ``name`` in ``body`` is a step (:func:`_pointer_step`)
    made as a statement of its own; None otherwise."""
    steps = {id(st.expr) for st in m.walk(body) if isinstance(st, m.ExprStmt) and _pointer_step(st, {name})}
    for n in m.walk(body):
        if isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name == name and id(n) not in steps:
            return None
        if isinstance(n, m.Unary) and n.op in ("++", "--") and isinstance(n.operand, m.Ref) \
                and n.operand.name == name and id(n) not in steps:
            return None
    return True


def _vector_place(e) -> bool:
    """Whether ``e`` names a vector in memory (a variable, an element of a vector array or view,
    a field, ``*p`` of a vector pointer): an access the CUDA makes whole, aligned to its size."""
    e = strip_implicit_casts(e)
    return isinstance(e, (m.Ref, m.Index, m.Member)) or isinstance(e, m.Unary) and e.op == "*"


class _Scalarizer:
    def __init__(self, fn: m.Function) -> None:
        self.body_of = fn.body
        self.wrapping = wrapping_locals(fn.body)  # (unsigned element indices kept narrow: facts.vector_lanes.widened)
        self.pending: list = []  # record words and complex parts the statement being scalarised reads
        self.counter = 0
        self.written = {r.name for t in (m.store_targets(fn.body) if fn.body else ())
                        for r in (m.access_root(t),) if r is not None} | \
            {r.name for n in (m.walk(fn.body) if fn.body else ()) if isinstance(n, m.Unary) and n.op in ("++", "--")
             for r in (m.access_root(n.operand),) if r is not None}
        self.views: dict[str, _View] = {}
        # local vector pointers the body steps (v = *k; k++): name -> the local counting its vectors
        self.steps: dict[str, str] = {}
        self.moved = {n.target.name for n in (m.walk(fn.body) if fn.body else ()) if isinstance(n, m.Assign)
                      and isinstance(n.target, m.Ref)} | \
            {n.operand.name for n in (m.walk(fn.body) if fn.body else ()) if isinstance(n, m.Unary)
             and n.op in ("++", "--") and isinstance(n.operand, m.Ref)}
        self.aliases: dict[str, m.Index] = {}  # local references to a buffer's element
        self.taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))} if fn.body else set()
        self.locals: dict[str, m.Vector] = {}
        # vector locals whose address is cast to another pointer type ((half2*)&v): an array of
        # their lanes, which the cast views
        self.held: dict[str, m.Array] = {}
        for n in m.walk(fn.body) if fn.body else ():
            inner = strip_implicit_casts(n.operand) if isinstance(n, m.Cast) and isinstance(n.type, m.Pointer) \
                else None
            if isinstance(inner, m.Unary) and inner.op == "&" and isinstance(inner.operand, m.Ref) \
                    and isinstance(inner.operand.type, m.Vector) and not inner.operand.type.lane_dtypes \
                    and (inner.operand.type.name in m.VECTOR_TYPES or not inner.operand.type.fields) \
                    and n.type.pointee != inner.operand.type:  # (a struct vector_bits retyped has no fields)
                v = inner.operand.type
                self.held[inner.operand.name] = m.Array(m.Scalar(v.dtype), stride(v))
        self.complex_held: set[str] = set()  # locals holding parts of complex values (complex_temp)
        self.by_value: set[str] = set()  # vector parameters passed by value: their lanes are parameters
        self.unions: set[str] = set()  # union locals: an array of their words, viewed like a buffer
        self.arrays: dict[str, m.Array] = {}  # arrays of vectors: their scalar type
        for p in fn.params:
            if isinstance(p.type, m.Pointer) and _vec(p.type.pointee):
                v = _vec(p.type.pointee)
                self.views[p.name] = _View(p.name, stride(v), None, m.Scalar(v.dtype),
                                           volatile=p.type.volatile, vec=v)
            elif _vec(p.type):
                if _overlapping(_vec(p.type)) and p.name in self.written:
                    raise VectorError(f"union parameter '{p.name}' of '{p.type}' passed by value and written: its "
                                      "lanes would be parameters of their own, not one word", p.span)
                if _vec(p.type).lanes > LOCAL_LANES:
                    raise VectorError(f"parameter '{p.name}' of '{p.type}' passed by value, whose "
                                      f"{_vec(p.type).lanes} fields would each be a parameter", p.span)
                self.locals[p.name] = _vec(p.type)
                self.by_value.add(p.name)

    # -- lanes of a vector expression -------------------------------------------------------------
    def lane(self, e: m.Expr, i: int, raw: bool = False) -> m.Expr:
        """Lane ``i`` of the vector expression ``e``; with ``raw``, a record lane held in memory
        is its storage word (to write through :func:`pack`), not the lane read out of it."""
        span = e.span
        if isinstance(e, m.Ref) and e.name in self.aliases:  # a reference to a buffer's element
            return self.lane(self.aliases[e.name], i, raw)
        if isinstance(e, m.Ref) and e.name in self.unions:  # its words: lanes through their bits
            return self.lane(m.Index(e, _int(0, span), e.type, span), i, raw)
        if isinstance(e, m.Ref) and e.name in self.held:
            array = self.held[e.name]
            return m.Index(m.Ref(e.name, "local", array, span), _int(i, span), array.element, span)
        if isinstance(e, m.Ref) and e.kind == "constant" and isinstance(e.type, m.Vector):
            # a __constant__ struct (or vector): the buffer of its words the launcher fills from the
            # symbol's bytes (scalar_constants), a lane read out of its word
            v = e.type
            words = m.Ref(e.name, "constant", _constant_words(v), span)
            word = m.Index(words, _int(_word(v, i), span), m.Scalar(v.dtype), span)
            return unpack(word, v, i) if _packed(v, i) and not raw else word
        if isinstance(e, m.Ref) and e.name in self.locals:
            v = self.locals[e.name]
            kind = "param" if e.name in self.by_value else "local"
            return m.Ref(lane_local(e.name, v, i), kind, m.Scalar(lane_dtype(v, i)), span)
        if isinstance(e, m.Index):
            view = self.view_of(e.base)
            # (an element read in a template keeps clang's dependent type: the view knows the record)
            v = _vec(e.type) or (view.vec if view is not None and view.vec is not None
                                 and view.lanes == stride(view.vec) else None)
            if view is not None:  # (the index may read a struct's field: input[x + y * p.iWidth])
                index = _add(view.first_lane(self.scalar(e.index), span, element=self.wrapping),
                             _int(_word(v, i) if v else i, span), span)
                word = m.Index(view.ref(span), index, view.scalar, span)
                return unpack(self.word_local(word), v, i) if v is not None and _packed(v, i) and not raw else word
            array = self.array_of(e.base)
            if array is not None:
                index = _add(_mul(self.scalar(e.index), stride(v), span), _int(_word(v, i), span), span)
                word = m.Index(array, index, m.Scalar(v.dtype), span)
                return unpack(self.word_local(word), v, i) if _packed(v, i) and not raw else word
        if isinstance(e, m.Unary) and e.op == "*":
            return self.lane(m.Index(e.operand, _int(0, span), e.type, span), i, raw)
        if isinstance(e, m.Index) and isinstance(e.base, m.Unary) and e.base.op == "&" \
                and isinstance(e.index, m.IntLit) and e.index.value == 0:
            return self.lane(e.base.operand, i, raw)  # (&v)->x: a device function's pointer to a local, inlined
        if isinstance(e, m.Member) and _vec(e.type):  # p.pos of a struct holding float3 pos: its lanes
            outer = e.base
            if e.arrow and isinstance(outer.type, m.Pointer):
                outer = m.Index(outer, _int(0, span), outer.type.pointee, span)
            whole = _vec(outer.type)
            name = f"{e.field}.{lane_names(_vec(e.type))[i]}"
            if whole is not None and name in lane_names(whole):
                return self.lane(outer, lane_names(whole).index(name), raw)
        if isinstance(e, m.Call):
            name = e.callee
            if name.startswith("make_"):
                return self.scalar(e.args[i])
            if e.kind == "constructor" and _vec(e.type) and _vec(e.type).name == "dim3" \
                    and all(not _vec(a.type) for a in e.args):  # dim3 idx(x, y): z is 1
                return self.scalar(e.args[i]) if i < len(e.args) else _int(1, span)
            if e.kind == "constructor" and _vec(e.type) and _vec(e.type).name in m.VECTOR_TYPES:
                # CUDA's own vector made of its lanes (__half2 v{lo, hi}) or copied (half2 w(v))
                v = _vec(e.type)
                if len(e.args) == v.lanes and not any(_vec(a.type) for a in e.args):
                    value, dtype = self.scalar(e.args[i]), m.Scalar(lane_dtype(v, i))
                    return value if value.type == dtype else m.Cast(dtype, value, "implicit", dtype, span)
                if len(e.args) == 1 and _vec(e.args[0].type) and _vec(e.args[0].type).lanes == v.lanes:
                    return self.lane(e.args[0], i)
                if not e.args:  # value-initialised (h2 = {} once nvcc's overload picks it): zeros
                    dtype = m.Scalar(lane_dtype(v, i))
                    if "float" in dtype.dtype:
                        return m.FloatLit(0.0, "0.0", dtype, span)
                    return m.IntLit(0, "0", dtype, span)
            if e.kind == "constructor" and _vec(e.type) and _vec(e.type).initialised:
                raise VectorError(f"a '{e.type}' made by its constructor ({e.callee}(...)), whose body is "
                                  "not modelled", span)
            if name in ("__floats2half2_rn", "__halves2half2", "__floats2bfloat162_rn", "__halves2bfloat162"):
                arg = self.scalar(e.args[i])
                target = m.Scalar("bfloat16" if "bfloat" in name else "float16")
                return arg if "halves" in name else m.Cast(target, arg, "implicit", target, span)
            if name in ("__float2half2_rn", "__float2bfloat162_rn", "__half2half2", "__bfloat162bfloat162"):
                arg = self.scalar(e.args[0])
                if name.startswith("__float2"):  # the float rounded to the nearest, in both lanes
                    target = m.Scalar("bfloat16" if "bfloat" in name else "float16")
                    return m.Cast(target, arg, "implicit", target, span)
                return arg
            if name in _HALF2_BINARY:
                a, b = self.lane(e.args[0], i), self.lane(e.args[1], i)
                return m.Binary(_HALF2_BINARY[name], a, b, a.type, span)
            if name == "__hfma2":
                args = tuple(self.lane(a, i) for a in e.args)
                return m.Call("__hfma", args, "math", (), args[0].type, span)
            if name == "__hneg2":
                a = self.lane(e.args[0], i)
                return m.Unary("-", a, False, a.type, span)
            if name in ("__half22float2", "__bfloat1622float2"):
                return m.Cast(m.Scalar("float32"), self.lane(e.args[0], i), "implicit", m.Scalar("float32"), span)
            if name in ("__float22half2_rn", "__float22bfloat162_rn"):
                target = m.Scalar("bfloat16" if "bfloat" in name else "float16")
                return m.Cast(target, self.lane(e.args[0], i), "implicit", target, span)
            scalar = _lanewise(name) if _vec(e.type) else None
            if scalar is not None:  # __hgt2, __hmax2, h2sqrt: the compat table's scalar row on each lane
                args = tuple(self.lane_or_scalar(a, i) for a in e.args)
                row = lookup(scalar, tuple(a.type.dtype for a in args if isinstance(a.type, m.Scalar)))
                dtype = m.Scalar(lane_dtype(_vec(e.type), i))
                value = m.Call(scalar, args, "math", (), m.Scalar(row.ret), span)
                # (a comparison's bool is the lane's 1.0 or 0.0)
                return value if value.type == dtype else m.Cast(dtype, value, "implicit", dtype, span)
        if isinstance(e, m.Call) and e.callee in _COMPLEX and _vec(e.type):
            return self.complex_lane(e, i)
        pair = _half_pair(e)
        if pair is not None:  # a + b on __half2 in a template's body: the header's __hadd2, lane by lane
            return m.Binary(e.op, self.lane(e.lhs, i), self.lane(e.rhs, i), m.Scalar(pair.dtype), span)
        if isinstance(e, m.Binary) and e.op in _LANE_OPS and _vec(e.type):
            # an operator the frontend kept as syntax only where its definition is lane by lane
            # (parse/lanewise.py); a scalar operand is used in every lane
            a, b = self.lane_or_scalar(e.lhs, i), self.lane_or_scalar(e.rhs, i)
            return m.Binary(e.op, a, b, m.Scalar(_vec(e.type).dtype), span)
        if isinstance(e, m.Unary) and e.op == "-" and _vec(e.type):
            return m.Unary("-", self.lane(e.operand, i), False, m.Scalar(_vec(e.type).dtype), span)
        if isinstance(e, m.InitList) and len(e.items) == _vec(e.type).lanes if _vec(e.type) else False:
            return self.scalar(e.items[i])  # {re, im}: a struct's (or vector's) lanes in order
        if isinstance(e, m.Ternary):
            return m.Ternary(self.scalar(e.cond), self.lane(e.then, i), self.lane(e.other, i),
                             m.Scalar(_vec(e.type).dtype) if _vec(e.type) else e.type, span)
        if isinstance(e, m.Cast) and e.style in ("implicit", "functional") and _vec(e.operand.type):
            return self.lane(e.operand, i)
        if isinstance(e, m.Call) and e.kind != "device":
            raise VectorError(f"call of '{e.callee}' returning '{e.type}', which has no lane form", span)
        picked = self.path_lane(e, i, raw)  # s.stepinfo[o] of a record whose field is an array of structs
        if picked is not None:
            return picked
        foreign = self.foreign_view(e)
        if foreign is not None:
            raise VectorError(f"'{e.type}' read through a view of a buffer of {foreign}: its lanes are another "
                              "type's bits (modelled only for a local copied whole and read through views of the "
                              "buffer's element type)", span)
        raise VectorError(f"vector expression of type '{e.type}' has no lane form", span)

    def complex_lane(self, e: m.Call, i: int) -> m.Expr:
        """Lane ``i`` (0 the real part, 1 the imaginary) of a cuComplex.h function's value, as its
        header computes it (``cuCmulf``: ``x.x*y.x - x.y*y.y``; ``cuCdivf`` scaled by ``|y.x| + |y.y|``)."""
        op, span = _COMPLEX[e.callee], e.span
        t = m.Scalar(_vec(e.type).dtype)

        def b(o, x, y):
            return m.Binary(o, x, y, t, span)

        if op == "conj":
            return self.lane(e.args[0], 0) if i == 0 else m.Unary("-", self.lane(e.args[0], 1), False, t, span)
        if op in ("+", "-"):
            return b(op, self.lane(e.args[0], i), self.lane(e.args[1], i))
        x = [self.complex_part(e.args[0], k) for k in (0, 1)]
        y = [self.complex_part(e.args[1], k) for k in (0, 1)]
        if op == "*":
            return b("-", b("*", x[0], y[0]), b("*", x[1], y[1])) if i == 0 else \
                b("+", b("*", x[0], y[1]), b("*", x[1], y[0]))
        # "/": s = |y.x| + |y.y|, each part scaled by 1/s, then the product with the conjugate over |y|^2
        fabs = "fabsf" if t.dtype == "float32" else "fabs"
        s = b("+", m.Call(fabs, (y[0],), "math", (), t, span), m.Call(fabs, (y[1],), "math", (), t, span))
        oos = self.complex_temp(b("/", m.FloatLit(1.0, "1.0", t, span), s))
        ars, ais = self.complex_temp(b("*", x[0], oos)), self.complex_temp(b("*", x[1], oos))
        brs, bis = self.complex_temp(b("*", y[0], oos)), self.complex_temp(b("*", y[1], oos))
        oos2 = self.complex_temp(b("/", m.FloatLit(1.0, "1.0", t, span), b("+", b("*", brs, brs), b("*", bis, bis))))
        if i == 0:
            return b("*", b("+", b("*", ars, brs), b("*", ais, bis)), oos2)
        return b("*", b("-", b("*", ais, brs), b("*", ars, bis)), oos2)

    def complex_scalar(self, e: m.Call) -> m.Expr:
        """``cuCrealf``, ``cuCimagf``, ``cuCabsf`` (and their double forms) of a complex value, as
        cuComplex.h computes them (``cuCabsf``: ``v * sqrt(1 + (w/v)^2)`` of the larger and smaller
        magnitude, ``v + w`` where ``v`` is 0 or either is past the largest finite value).

        ``cuCabsf``'s magnitudes and its scaled value are computed before the statement into
        variables (:meth:`complex_cell`), as cuComplex.h computes them, and only the choice
        between ``v + w`` and the scaled value is left in the expression: held in bound values,
        TileLang pasted the magnitudes' conditionals into each use and the scaled value into a
        branch of its own, and nvcc no longer saw one division and one square root a call
        (complex's ``ref_complex_float``: 9 divisions a thread against the CUDA's 7)."""
        what, span = _COMPLEX_SCALAR[e.callee], e.span
        if what in (0, 1):
            return self.lane(e.args[0], what)
        t = m.Scalar(_vec(e.args[0].type).dtype)
        fabs, sqrt = ("fabsf", "sqrtf") if t.dtype == "float32" else ("fabs", "sqrt")
        top = m.FloatLit(3.402823466e38 if t.dtype == "float32" else 1.79769313486231570e+308,
                         "3.402823466e38f" if t.dtype == "float32" else "1.79769313486231570e+308", t, span)
        a = self.complex_temp(m.Call(fabs, (self.complex_part(e.args[0], 0),), "math", (), t, span))
        c = self.complex_temp(m.Call(fabs, (self.complex_part(e.args[0], 1),), "math", (), t, span))
        bigger = m.Binary(">", a, c, m.Scalar("bool"), span)
        v = self.complex_cell(m.Ternary(bigger, a, c, t, span))
        w = self.complex_cell(m.Ternary(bigger, c, a, t, span))
        one = m.FloatLit(1.0, "1.0", t, span)
        scaled = self.complex_cell(m.Binary("/", w, v, t, span))  # t = w / v;
        self.complex_set(scaled, m.Binary("+", one, m.Binary("*", scaled, scaled, t, span), t, span))  # 1 + t * t
        self.complex_set(scaled, m.Binary("*", v, m.Call(sqrt, (scaled,), "math", (), t, span), t, span))
        zero = m.FloatLit(0.0, "0.0", t, span)
        edge = m.Binary("||", m.Binary("||", m.Binary("==", v, zero, m.Scalar("bool"), span),
                                       m.Binary(">", v, top, m.Scalar("bool"), span), m.Scalar("bool"), span),
                        m.Binary(">", w, top, m.Scalar("bool"), span), m.Scalar("bool"), span)
        return m.Ternary(edge, m.Binary("+", v, w, t, span), scaled, t, span)

    def complex_cell(self, value: m.Expr) -> m.Ref:
        """A variable declared before the statement and assigned ``value`` (printed as a
        ``T.alloc_var``, which TileLang keeps: a bound value it pastes into each use, a
        conditional there becoming a branch). ``value`` reads only locals held already."""
        self.counter += 1
        name = fresh(f"complex_{self.counter}", self.taken)
        self.taken.add(name)
        self.complex_held.add(name)
        self.pending.append(m.DeclStmt((m.VarDecl(name, value.type, "local", False, None, value.span),), value.span))
        ref = m.Ref(name, "local", value.type, value.span)
        self.complex_set(ref, value)
        return ref

    def complex_set(self, cell: m.Ref, value: m.Expr) -> None:
        """``cell = value;`` before the statement."""
        self.pending.append(m.ExprStmt(m.Assign("=", cell, value, cell.type, value.span), value.span))

    def mark(self) -> tuple[int, int]:
        """Where the statement's locals stand (:meth:`rewind`)."""
        return len(self.pending), self.counter

    def rewind(self, mark: tuple[int, int]) -> None:
        """Forget the locals declared for the statement since ``mark``: a value scalarised once more
        declares them again (a second set, never read, was left before the statement)."""
        for st in self.pending[mark[0]:]:
            if isinstance(st, m.DeclStmt):
                for d in st.decls:
                    self.taken.discard(d.name)
                    self.complex_held.discard(d.name)
        del self.pending[mark[0]:]
        self.counter = mark[1]

    def complex_part(self, e, k: int) -> m.Expr:
        """Lane ``k`` of a complex operand, held in a local where the function reads it more than once."""
        return self.complex_temp(self.lane(e, k))

    def complex_temp(self, value: m.Expr) -> m.Expr:
        """``value`` in a local declared before the statement (a reference or a constant as it is).
        Only values of locals and parameters are held early: one that reads memory (which a
        condition around the call may guard) is refused."""
        if isinstance(value, (m.Ref, m.FloatLit, m.IntLit)):
            return value
        if any(isinstance(n, (m.Index, m.Member, m.Assign)) or isinstance(n, m.Unary) and n.op in ("*", "++", "--")
               or isinstance(n, m.Call) and n.kind not in ("math",) for n in m.walk(value)) \
                or any(isinstance(n, m.Ref) and n.kind not in ("local", "param") for n in m.walk(value)):
            raise VectorError("a cuComplex.h function of a complex value read from memory (its parts are held in "
                              "locals before the statement)", value.span)
        self.counter += 1
        name = fresh(f"complex_{self.counter}", self.taken)
        self.taken.add(name)
        self.pending.append(m.DeclStmt((m.VarDecl(name, value.type, "local", False, value, value.span),), value.span))
        self.complex_held.add(name)
        return m.Ref(name, "local", value.type, value.span)

    def foreign_view(self, e) -> str | None:
        """The element dtype of the buffer ``e`` (``view[i]``, ``*view``) reads vectors of another
        lane type from (``reinterpret_cast<const float4*>(half_buffer)[i]``); None otherwise."""
        base = e.base if isinstance(e, m.Index) else e.operand if isinstance(e, m.Unary) and e.op == "*" else None
        while isinstance(base, m.Binary) and base.op in ("+", "-"):
            base = base.lhs
        v = _vec(e.type)
        if isinstance(base, m.Cast) and isinstance(base.type, m.Pointer) and v is not None:
            scalars = self.scalar_start(base.operand)
            if scalars is not None:
                ref = scalars[0]
                element = ref.type.pointee if isinstance(ref.type, m.Pointer) else ref.type.element
                return element.dtype if element.dtype != v.dtype else None
            inner = self.view_of(base.operand)  # (short4*) of an anchor_dt buffer (four uint16 fields)
            if inner is not None and inner.scalar.dtype != v.dtype:
                return f"'{base.operand.type.pointee}' ({inner.scalar.dtype} lanes)" \
                    if isinstance(base.operand.type, m.Pointer) else inner.scalar.dtype
        return None

    def lane_or_scalar(self, e: m.Expr, i: int) -> m.Expr:
        return self.lane(e, i) if _vec(getattr(e, "type", None)) else self.scalar(e)

    def array_of(self, e: m.Expr) -> m.Expr | None:
        """``e`` (an array of vectors, or a row of one: ``t``, ``t[i]``) as the same expression over
        the arrays of scalars they become; None where ``e`` is no such array."""
        if isinstance(e, m.Ref) and e.name in self.arrays and isinstance(e.type, m.Array):
            return dataclasses.replace(e, type=self.arrays[e.name])
        if isinstance(e, m.Ref) and e.kind == "constant" and _array_vec(e.type) is not None:
            return dataclasses.replace(e, type=_scalar_array(e.type))  # see scalar_constants
        if isinstance(e, m.Index) and isinstance(e.type, m.Array):
            base = self.array_of(e.base)
            if base is not None and isinstance(base.type, m.Array):
                return m.Index(base, self.scalar(e.index), base.type.element, e.span)
        return None

    def scalar_start(self, e: m.Expr) -> tuple[m.Ref, m.Expr | None] | None:
        """``e`` as a scalar buffer (a pointer, or a one-dimensional array of scalars) and the
        element it starts at (``data + i * 4``, ``&partial[k]``); None for anything else."""
        if isinstance(e, m.Ref) and (isinstance(e.type, m.Pointer) and isinstance(e.type.pointee, m.Scalar)
                                     or isinstance(e.type, m.Array) and isinstance(e.type.element, m.Scalar)):
            return e, None
        if isinstance(e, m.Unary) and e.op == "&" and isinstance(e.operand, m.Ref) and e.operand.name in self.held:
            return m.Ref(e.operand.name, "local", self.held[e.operand.name], e.span), None  # (half2*)&v
        if isinstance(e, m.Index) and isinstance(e.type, m.Array) and isinstance(e.type.element, m.Scalar):
            # a row of an array of several dimensions (st_vec(&lhs_s[y][xo], v) on float lhs_s[128][32])
            root = e
            while isinstance(root, m.Index):
                root = root.base
            if isinstance(root, m.Ref) and isinstance(root.type, m.Array):
                return self.scalar(e), None
        if isinstance(e, m.Binary) and e.op in ("+", "-") and isinstance(e.rhs.type, m.Scalar):
            inner = self.scalar_start(e.lhs)
            if inner is not None:
                step = self.scalar(e.rhs) if e.op == "+" else m.Unary("-", self.scalar(e.rhs), False, e.rhs.type, e.span)
                return inner[0], _add(inner[1], step, e.span)
        if isinstance(e, m.Unary) and e.op == "&" and isinstance(e.operand, m.Index):
            inner = self.scalar_start(e.operand.base)
            if inner is not None:
                return inner[0], _add(inner[1], self.scalar(e.operand.index), e.span)
        return None

    def view_of(self, base: m.Expr) -> _View | None:
        while isinstance(base, m.Cast) and isinstance(base.type, m.Pointer):
            inner = base.operand
            target = _vec(base.type.pointee)
            scalars = self.scalar_start(inner) if target is not None else None
            if target is not None and target.lane_dtypes and not _plain_lanes(target):
                return None  # a record over another buffer's bits: no lane view
            if scalars is not None:
                ref, start = scalars
                element = ref.type.pointee if isinstance(ref.type, m.Pointer) else ref.type.element
                if element.dtype != target.dtype:
                    return None  # the bits of another type (float4 over int): no lane view
                rows = []
                while isinstance(ref, m.Index):  # a row of an array: its leading indices
                    rows.insert(0, ref.index)
                    ref = ref.base
                return _View(ref.name, target.lanes, None, m.Scalar(target.dtype), ref.kind,
                             ref.type if isinstance(ref.type, m.Array) else None, start, rows=tuple(rows))
            if target is not None:  # a vector view of another vector buffer (float4 over float2)
                view = self.view_of(inner)
                if view is None or view.scalar.dtype != target.dtype:
                    return None
                if view.lanes == target.lanes:
                    return view
                # the same scalars in wider (or narrower) vectors; an offset in the old vectors
                # need not be a whole number of the new ones
                return dataclasses.replace(view, lanes=target.lanes) if view.offset is None else None
            base = inner
        if isinstance(base, m.Unary) and base.op == "&" and isinstance(base.operand, m.Ref) \
                and base.operand.name in self.held:  # &v of a local held as an array: its lanes
            array = self.held[base.operand.name]
            return _View(base.operand.name, array.extent, None, array.element, "local", array)
        if isinstance(base, m.Ref) and base.name in self.views:
            return self.views[base.name]
        if isinstance(base, m.Binary) and base.op == "+":
            view = self.view_of(base.lhs)
            if view is not None:
                return dataclasses.replace(view, offset=_add(view.offset, base.rhs, base.span))
        if isinstance(base, m.Unary) and base.op == "&" and isinstance(base.operand, m.Index):  # &p[i]
            view = self.view_of(base.operand.base)
            if view is not None:
                return dataclasses.replace(view, offset=_add(view.offset, base.operand.index, base.span))
        return None

    def flat_view(self, e) -> m.Expr | None:
        """``(float*) v2`` of a ``float2`` buffer (or view, or one-dimensional array) ``v2``: its
        scalar buffer, the lanes in order (``(float*) (v2 + k)`` starts ``2*k`` lanes in); None for anything else."""
        if not (isinstance(e, m.Cast) and isinstance(e.type, m.Pointer) and isinstance(e.type.pointee, m.Scalar)):
            return None
        inner = e.operand
        while isinstance(inner, m.Cast) and isinstance(inner.type, m.Pointer) and _vec(inner.type.pointee):
            inner = inner.operand  # (float*)(const float2*) v2
        t = getattr(inner, "type", None)
        if not (isinstance(t, m.Pointer) and _vec(t.pointee)
                or isinstance(t, m.Array) and isinstance(inner, m.Ref) and inner.name in self.views):
            return None
        view = self.view_of(inner)
        if view is None:
            return None
        if view.scalar.dtype != e.type.pointee.dtype:
            # (const uint16_t*)&A[i] of an int4 buffer: the bytes of its words, a pointer into
            # the word buffer cast as written, for the pointer views to read as a view of the
            # parameter (analysis.prepare.pointer_views.TypedViews.of_param). A CUDA vector's
            # words lie in its bytes in order, without padding; a record's may not
            v = _vec(t.pointee) if isinstance(t, m.Pointer) else None
            if v is None or v.name not in m.VECTOR_TYPES or v.lane_dtypes or view.kind != "param" \
                    or view.array is not None or view.rows or view.lanes != v.lanes:
                return None
            ref = view.ref(e.span, getattr(t, "const", False))
            offset = view.first_lane(None, e.span)
            words = ref if offset is None else m.Binary("+", ref, offset, ref.type, e.span)
            return m.Cast(e.type, words, e.style, e.type, e.span)
        ref = view.ref(e.span, e.type.const)
        offset = view.first_lane(None, e.span)
        if offset is None:
            return ref
        return m.Binary("+", ref, offset, ref.type, e.span)

    # -- scalar expressions that may contain vectors ---------------------------------------------
    def lane_target(self, e) -> tuple[m.Expr, int] | None:
        """(the vector, the lane) that ``e`` names when it is a lane of a vector or record:
        ``p.x``, ``p->val``, ``a[i].pos[2]``."""
        if isinstance(e, m.Member) and _vec(e.base.type) and e.field in lane_names(_vec(e.base.type)):
            return e.base, lane_names(_vec(e.base.type)).index(e.field)
        if isinstance(e, m.Member) and e.arrow and isinstance(e.base.type, m.Pointer) and _vec(e.base.type.pointee) \
                and e.field in lane_names(_vec(e.base.type.pointee)):  # p->re: lane of p[0]
            v = _vec(e.base.type.pointee)
            return m.Index(e.base, _int(0, e.span), v, e.span), lane_names(v).index(e.field)
        chain = _field_chain(e)  # a[i].pos[2], m.data[1][2]: the element's own lane
        if chain is not None and all(isinstance(k, m.IntLit) for k in chain[1]):
            member, indices = chain
            inner = self.lane_target(dataclasses.replace(
                member, field=member.field + "".join(f"[{k.value}]" for k in indices)))
            if inner is not None:
                return inner
        return None

    def array_field(self, e: m.Index):
        """``a[i].pos[j]`` of a record held in memory, ``j`` not a constant: the element of its
        storage (the field's elements are consecutive words of the storage's own dtype); of a
        local, the element the index picks. A field of several dimensions (``m.data[r][c]``) is
        indexed by its elements' place in memory order."""
        chain = _field_chain(e)
        if chain is None:
            return None
        member, indices = chain
        outer = member.base
        if member.arrow and isinstance(outer.type, m.Pointer):
            outer = m.Index(outer, _int(0, e.span), outer.type.pointee, e.span)
        v = _vec(outer.type)
        if v is None or not v.lane_dtypes:
            return None
        names = [k for k, n in enumerate(lane_names(v)) if n.startswith(f"{member.field}[")]
        if not names or any(_packed(v, k) or _word(v, k) != _word(v, names[0]) + j for j, k in enumerate(names)):
            return None
        flat = _flat_index(indices, lane_names(v)[names[-1]], e.span)
        if flat is None:
            return None
        if not isinstance(outer, m.Index):
            # a local's fields are locals of their own: the element the index picks, by comparison
            index = self._pick_index(flat, member.field)
            value = self.lane(outer, names[-1])
            for j in range(len(names) - 2, -1, -1):
                value = m.Ternary(_equals(index, j, e.span), self.lane(outer, names[j]), value, value.type, e.span)
            return value
        first = self.lane(outer, names[0], raw=True)
        return m.Index(first.base, _add(first.index, self.scalar(flat), e.span), first.type, e.span)

    def path_candidates(self, e, i: int | None):
        """``e`` a place in a record through an array field indexed by other than constants
        (:func:`_record_path`; with ``i``, lane ``i`` of the struct it names): (the record, the
        lanes the path may pick, the indices that choose among them); None otherwise."""
        found = _record_path(e)
        if found is None:
            return None
        root, parts = found
        whole = _vec(root.type)
        inner = _vec(e.type)
        if i is not None and inner is None:
            return None
        suffix = "" if i is None else "." + lane_names(inner)[i]
        picks = _path_lanes(whole, parts, suffix)
        indices = [p for p in parts if not isinstance(p, (str, m.IntLit))]
        if not picks or (not indices and len(picks) != 1):
            return None
        return root, picks, indices

    def path_lane(self, e, i: int | None, raw: bool = False) -> m.Expr | None:
        """The value (with ``raw``, the place) of a record's lane that ``e`` names through the
        elements of its array fields (``s.stepinfo[octant].block_z``, ``a->e[j][i].real``); None
        where ``e`` names none. In memory, the element of the storage the indices reach (the
        lanes a path picks lie at evenly spaced bytes); of a local or a by-value parameter,
        whose lanes are locals of their own, the one the indices pick."""
        found = self.path_candidates(e, i)
        if found is None:
            return None
        root, picks, indices = found
        whole, span = _vec(root.type), e.span
        if not indices:
            return self.lane(root, picks[0][0], raw)
        first = self.lane(root, picks[0][0], raw=True)
        if isinstance(first, m.Index):
            return self.memory_path(root, whole, picks, indices, raw, span)
        value = None
        for k, values in reversed(picks):
            lane = self.lane(root, k)
            if value is None:
                value = lane
                continue
            value = m.Ternary(self.path_test(indices, values, span), lane, value, lane.type, span)
        return value

    def path_test(self, indices, values, span) -> m.Expr:
        """Whether the path's ``indices`` are ``values``."""
        test = None
        for index, value in zip(indices, values):
            one = _equals(self._pick_index(index, "array"), value, span)
            test = one if test is None else m.Binary("&&", test, one, m.Scalar("bool"), span)
        return test

    def memory_path(self, root, whole: m.Vector, picks, indices, raw: bool, span) -> m.Expr:
        """The word of a record in memory holding the lane an indexed path picks: the lanes lie at
        a first byte plus a constant step per index (checked for every lane the path may pick)."""
        at = {values: lane_offset(whole, k) for k, values in picks}
        zero = (0,) * len(indices)
        steps = []
        for d in range(len(indices)):
            one = tuple(1 if j == d else 0 for j in range(len(indices)))
            steps.append(at[one] - at[zero] if one in at and zero in at else None)
        if zero not in at or None in steps or any(
                offset != at[zero] + sum(c * x for c, x in zip(steps, values)) for values, offset in at.items()):
            raise VectorError(f"an element of an array field of '{whole}' indexed by a variable, its lanes "
                              "not evenly spaced in memory", span)
        base = self.lane(root, picks[0][0], raw=True)
        dtype = lane_dtype(whole, picks[0][0])
        wsize = SIZES[whole.dtype]
        if all(not _packed(whole, k) for k, _ in picks) and all(c % wsize == 0 for c in steps):
            index = base.index
            for c, x in zip(steps, indices):
                words = self.scalar(x) if c == wsize else _mul(self.scalar(x), c // wsize, span)
                index = _add(index, words, span)
            return m.Index(base.base, index, base.type, span)
        if raw or any(lane_dtype(whole, k) != dtype for k, _ in picks):
            raise VectorError(f"an element of an array field of '{whole}' held with others in one word, "
                              "indexed by a variable and written", span)
        # (int8_t board[12] among ints: byte k of the storage, its word and place computed)
        first = at[zero] - _word(whole, picks[0][0]) * wsize  # bytes into the first lane's word
        byte = _int(first, span)
        for c, x in zip(steps, indices):
            byte = _add(byte, _mul(self.scalar(x), c, span), span)
        wint = _INT[wsize]
        word = m.Index(base.base, _add(base.index, m.Binary("/", byte, _int(wsize, span), byte.type, span), span),
                       base.type, span)
        shift = m.Binary("*", m.Binary("%", byte, _int(wsize, span), byte.type, span), _int(8, span), byte.type, span)
        bits = m.Binary(">>", _bits(self.word_local(word), wint), m.Cast(m.Scalar(wint), shift, "implicit",
                                                                          m.Scalar(wint), span), m.Scalar(wint), span)
        lsize = SIZES[dtype]
        if dtype == "bool":
            masked = m.Binary("&", bits, _int_lit(0xFF, wint, span), m.Scalar(wint), span)
            return m.Binary("!=", masked, _int_lit(0, wint, span), m.Scalar("bool"), span)
        narrow = m.Cast(m.Scalar(_INT[lsize]), bits, "implicit", m.Scalar(_INT[lsize]), span)
        return _bits(narrow, dtype)

    def path_place(self, target) -> m.Expr | None:
        """The word of a record in memory that ``target``, a lane an indexed path names, is
        written to (refused where the lane shares its word); None for any other target."""
        found = self.path_candidates(target, None)
        if found is None or not found[2]:
            return None
        return self.path_lane(target, None, raw=True)

    def path_store(self, target, i: int | None, value, op: str, span) -> m.Stmt | None:
        """``target op value`` where ``target`` is a lane of a local (or by-value) record an indexed
        path names (``v.c[i].real += x``): one branch per lane the indices may pick; None for any
        other target."""
        found = self.path_candidates(target, i)
        if found is None or not found[2]:
            return None
        root, picks, indices = found
        if isinstance(self.lane(root, picks[0][0], raw=True), m.Index):
            return None  # in memory: the element itself is the place
        out = None
        for k, values in reversed(picks):
            store = self.store(root, k, value, op, span)
            out = store if out is None else m.If(self.path_test(indices, values, span), m.Block((store,), span),
                                                 m.Block((out,), span), span)
        return out

    def _pick_index(self, index: m.Expr, field: str) -> m.Expr:
        """The index of a local record's array field, read once per element it may pick."""
        if not pure(index, math=False):
            raise VectorError(f"record field '{field}' of a local indexed by an expression with effects", index.span)
        return self.scalar(index)

    def local_field_store(self, s: m.ExprStmt) -> list | None:
        """``p.data[j] op= v`` on a local record ``p``, ``j`` not a constant: one branch per element
        the index may pick (a local's fields are locals of their own); None for other statements."""
        a = s.expr
        chain = _field_chain(a.target) if isinstance(a, m.Assign) else None
        if chain is None:
            return None
        member, indices = chain
        if not (not member.arrow and isinstance(member.base, m.Ref) and member.base.name in self.locals
                and not all(isinstance(k, m.IntLit) for k in indices)):
            return None
        v = self.locals[member.base.name]
        names = [k for k, n in enumerate(lane_names(v)) if n.startswith(f"{member.field}[")]
        flat = _flat_index(indices, lane_names(v)[names[-1]], s.span) if names else None
        if flat is None:
            return None
        index, value = self._pick_index(flat, member.field), self.scalar(a.value)
        out = None
        for k in reversed(range(len(names))):
            store = self.store(member.base, names[k], value, a.op, s.span)
            out = m.If(_equals(index, k, s.span), m.Block((store,), s.span),
                       None if out is None else m.Block((out,), s.span), s.span)
        return [out]

    def scalar(self, e):
        if e is None:
            return None
        if isinstance(e, m.Call) and e.kind == "memory" and e.callee in CACHED_LOADS and len(e.args) == 1:
            address = strip_implicit_casts(e.args[0])
            if isinstance(address, m.Unary) and address.op == "&" and self._packed_target(address.operand):
                # __ldg(&R[i].rate): the read of the field it addresses (the printer reads any cached
                # load of an address so), not the field's address
                return self.scalar(address.operand)
        if isinstance(e, (m.Assign, m.Unary)) and self._packed_target(e.target if isinstance(e, m.Assign) else
                                                                      e.operand if e.op in ("++", "--", "&") else None):
            raise VectorError("a field of a record held with others in one word, assigned or addressed "
                              "inside an expression", e.span)
        written = e.target if isinstance(e, m.Assign) else e.operand \
            if isinstance(e, m.Unary) and e.op in ("++", "--", "&") else None
        if written is not None and not _vec(getattr(written, "type", None)):
            found = self.path_candidates(written, None)
            chain = _field_chain(written) if isinstance(written, m.Index) else None
            if found is not None and found[2] and chain is not None and isinstance(chain[0].type, m.Array) \
                    and isinstance(self.lane(found[0], found[1][0][0], raw=True), m.Index) \
                    and self.array_field(written) is not None:
                found = None  # an array field of scalars in memory: the element array_field reaches, as before
            if found is not None and found[2]:
                place = self.path_place(written)
                if not isinstance(place, m.Index):
                    raise VectorError("a field of a local record picked by a variable index, assigned or addressed "
                                      "inside an expression", e.span)
                if isinstance(e, m.Assign):
                    return dataclasses.replace(e, target=place, value=self.scalar(e.value))
                return dataclasses.replace(e, operand=place)
        target = self.lane_target(e)  # p.x, p->re, a[i].pos[2]
        if target is not None:
            return self.lane(*target)
        chain = _field_chain(e) if isinstance(e, m.Index) else None
        if chain is not None and isinstance(chain[0].type, m.Array):
            whole = self.array_field(e)
            if whole is not None:
                return whole
        if isinstance(e, (m.Index, m.Member)) and not _vec(e.type) and not isinstance(e.type, m.Array):
            picked = self.path_lane(e, None)  # r.board[k], s.stepinfo[o].block_z
            if picked is not None:
                return picked
        flat = self.flat_view(e)
        if flat is not None:
            return flat
        if isinstance(e, m.Call) and e.callee in _COMPLEX_SCALAR and len(e.args) == 1 and _vec(e.args[0].type):
            return self.complex_scalar(e)
        if isinstance(e, m.Call) and e.callee in _LANE_PICK:
            index, dtype = _LANE_PICK[e.callee]
            value = self.lane(e.args[0], index)
            if value.type == m.Scalar(dtype):
                return value
            return m.Cast(m.Scalar(dtype), value, "implicit", m.Scalar(dtype), e.span)
        if isinstance(e, m.MethodCall) and _vec(getattr(e.obj, "type", None)):
            raise VectorError(f"call of the method '{e.method}' of '{e.obj.type}': member functions of structs "
                              "are not modelled", e.span)
        if _vec(getattr(e, "type", None)):
            raise VectorError(f"vector value of type '{e.type}' used where a scalar is expected", e.span)
        return m.map_children(e, self.scalar)

    def _packed_target(self, e) -> bool:
        if e is None:
            return False
        found = self.lane_target(e)
        if found is None:
            return False
        vec, i = found
        v = _vec(vec.type)
        return v is not None and _packed(v, i) and not (isinstance(vec, m.Ref) and vec.name in self.locals)

    def copy(self, target, value, v: m.Vector, span) -> list:
        """``target = value`` of the vector type ``v``, lane by lane; the lanes of a whole 8- or
        16-byte vector copied between arrays marked as such (``ExprStmt.lanes``:
        :mod:`..facts.vector_lanes`), for the printer to make them one access again."""
        lanes = [self.store(target, i, self.lane(value, i), "=", span) for i in range(v.lanes)]
        if self.pending or not _vector_place(target):
            return lanes
        whole = _vector_place(value) and lane_copies(lanes)
        if whole or lane_stores(lanes):
            # (a vector built of scalars, make_float4(a[i], ...), promises no alignment of its
            # loads: only its store is whole, the printer packing the values first)
            return [dataclasses.replace(s, lanes=len(lanes), built_values=None if whole else True) for s in lanes]
        return lanes

    def store(self, target, i: int, value, op: str, span) -> m.ExprStmt:
        """``target``'s lane ``i`` ``op`` ``value`` as a statement; a record lane held with others in
        one word is written through its word."""
        branches = self.path_store(target, i, value, op, span) if _vec(target.type) else None
        if branches is not None:  # v.c[i] = x on a local record: a branch per element
            return branches
        v = _vec(target.type)
        place = self.lane(target, i, raw=True)
        if v is None or not _packed(v, i) or isinstance(place, m.Ref):
            return m.ExprStmt(m.Assign(op, place, value, m.Scalar(lane_dtype(v, i)) if v else place.type, span), span)
        word = self.word_local(place)
        if op != "=":
            value = m.Binary(op[:-1], unpack(word, v, i), value, m.Scalar(lane_dtype(v, i)), span)
        return m.ExprStmt(m.Assign("=", place, pack(word, v, i, value), place.type, span), span)

    def word_local(self, word: m.Index) -> m.Ref:
        """A local holding the storage word ``word``, declared just before the statement being
        scalarised: a record lane is read through the bits of a local, never of a load (TVM's C
        and CUDA code generators bind the operand of a bit cast once per expression text, so a
        second read of the same word after a store would see the first one's value)."""
        root = m.access_root(word)
        # stores through a local view (Particle* part = &particles[p]; part->x = ...) write its buffer
        written = self.written | {view.buffer for name, view in self.views.items() if name in self.written}
        if root is not None and root.name not in written:
            return word  # no store can make a second read of it stale
        self.counter += 1
        name = f"record_word_{self.counter}"
        self.pending.append(m.DeclStmt((m.VarDecl(name, word.type, "local", False, word, word.span),), word.span))
        return m.Ref(name, "local", word.type, word.span)

    def lane_atomics(self, call: m.Call, span) -> list:
        """``atomicAdd(&h2[i], v)`` of a vector, its old value unused: one atomic add per lane (CUDA
        makes each lane's add atomic, not the vector's: the same). The two lanes of a ``__half2``
        element of an array are marked (``ExprStmt.lanes``) for the printer to add them in one
        32-bit atomic, as the CUDA does (:func:`..facts.vector_lanes.lane_adds`)."""
        address = strip_implicit_casts(call.args[0])
        v = _vec(call.args[1].type)
        if isinstance(address, m.Unary) and address.op == "&":
            element = address.operand
        elif isinstance(address.type, m.Pointer):
            element = m.Index(address, _int(0, span), v, span)
        else:
            element = None
        out = []
        for i in range(v.lanes):
            place = self.lane(element, i, raw=True) if element is not None else None
            if not isinstance(place, m.Index) or _packed(v, i):
                raise VectorError(f"'{call.callee}' of '{v}' on an address that is no element of a buffer", span)
            dtype = m.Scalar(lane_dtype(v, i))
            pointer = m.Unary("&", place, False, m.Pointer(dtype), span)
            value = self.lane(call.args[1], i)
            out.append(m.ExprStmt(dataclasses.replace(call, args=(pointer, value), type=dtype), span))
        if lane_adds(out):  # the two halves of a __half2 in memory: one 32-bit atomic again
            return [dataclasses.replace(s, lanes=len(out)) for s in out]
        return out

    # -- statements --------------------------------------------------------------------------------
    def array_decl(self, d: m.VarDecl) -> m.DeclStmt:
        """An array of vectors declared as the array of their scalars (its initial values lane by
        lane); a one-dimensional one is also a view for the pointers made into it."""
        try:
            scalar_type = _scalar_array(d.type, d.storage == "extern_shared")
        except VectorError as exc:
            raise VectorError(str(exc), d.span) from None
        self.arrays[d.name] = scalar_type
        v = _array_vec(d.type)
        if v.initialised and d.init is None and d.storage not in ("shared", "extern_shared"):
            raise VectorError(f"a local array '{d.name}' of '{v}' declared without values: its constructor "
                              "or default member initialisers would give their fields values", d.span)
        if not isinstance(d.type.element, m.Array):
            kind = "shared" if d.storage in ("shared", "extern_shared") else "local"
            self.views[d.name] = _View(d.name, stride(v), None, m.Scalar(v.dtype), kind, scalar_type)
        init = d.init
        if init is not None:
            init = self.flat_init(init, d.type)
        return m.DeclStmt((dataclasses.replace(d, type=scalar_type, init=init),), d.span)

    def flat_init(self, init: m.Expr, t: m.Array) -> m.Expr:
        """``{make_uchar4(2, 0, 0, 0), ...}`` for an array of vectors: the same list of lists, each
        vector's lanes in its place (missing trailing elements stay missing: zero, as in C++)."""
        if not isinstance(init, m.InitList):
            raise VectorError(f"array of '{_array_vec(t)}' initialised with no list", init.span)
        if isinstance(t.element, m.Array):
            items = tuple(self.flat_init(x, t.element) for x in init.items)
            return m.InitList(items, _scalar_array(t), init.span)
        v = t.element
        if v.lane_dtypes:
            raise VectorError(f"array of records '{v}' initialised in the kernel", init.span)
        items = tuple(self.lane(x, i) for x in init.items for i in range(v.lanes))
        return m.InitList(items, _scalar_array(t), init.span)

    def stmts(self, stmts) -> tuple:
        out = []
        for s in stmts:
            out.extend(self.stmt(s))
        return tuple(out)

    def body(self, s):
        if s is None:
            return None
        if isinstance(s, m.Block):
            return dataclasses.replace(s, stmts=self.stmts(s.stmts))
        inner = self.stmt(s)
        return inner[0] if len(inner) == 1 else m.Block(tuple(inner), s.span)

    def stmt(self, s) -> list:
        saved, self.pending = self.pending, []
        try:
            out = self._stmt(s)
            words = self.pending
        finally:
            self.pending = saved
        if words and isinstance(s, (m.For, m.While, m.DoWhile)) and any(
                isinstance(d, m.DeclStmt) and d.decls[0].name in self.complex_held for d in words):
            raise VectorError("a cuComplex.h function in a loop header (its parts are held in locals before the "
                              "statement)", s.span)
        if words and isinstance(s, (m.For, m.While, m.DoWhile)):
            raise VectorError("a field of a record held with others in one word, in a buffer the kernel writes, "
                              "read in a loop header", s.span)
        return words + out

    def _stmt(self, s) -> list:
        if isinstance(s, m.DeclStmt):
            out = []
            for d in s.decls:
                v = _vec(d.type)
                if v is None and isinstance(d.type, (m.TemplateType, m.Opaque)) and d.init is not None \
                        and isinstance(getattr(d.init, "type", None), m.Vector):
                    # T c = a; of a template inlined on a struct (swap(einfo[i], einfo[j])): the value's type
                    v = d.init.type
                    d = dataclasses.replace(d, type=v)
                if v is not None and isinstance(d.type, m.Reference) and isinstance(d.init, m.Index) \
                        and self.view_of(d.init.base) is not None:
                    # uchar3& ref = output[i]; ref = make_uchar3(...): the element itself, its
                    # index kept in a local (later statements may change what it reads)
                    at = fresh(f"{d.name}_at", self.taken)
                    index = self.scalar(d.init.index)
                    itype = index.type if isinstance(index.type, m.Scalar) else m.Scalar("int64")
                    out.append(m.DeclStmt((m.VarDecl(at, itype, "local", False, index, d.span),), d.span))
                    self.aliases[d.name] = dataclasses.replace(d.init, index=m.Ref(at, "local", itype, d.span))
                    continue
                if v is not None and v.lanes > LOCAL_LANES:
                    raise VectorError(f"a local '{d.name}' of '{v}', whose {v.lanes} fields would each be a local",
                                      d.span)
                if v is not None and _overlapping(v) and not isinstance(d.type, m.Reference):
                    # union un {float f; unsigned ui;} u: one word, u.ui the bits of u.f
                    array = m.Array(m.Scalar(v.dtype), stride(v))
                    self.unions.add(d.name)
                    self.views[d.name] = _View(d.name, stride(v), None, m.Scalar(v.dtype), "local", array, vec=v)
                    value = d.init
                    if isinstance(value, m.Call) and value.kind == "constructor" and not value.args:
                        value = None
                    if value is None and v.initialised:
                        raise VectorError(f"a local '{d.name}' of '{v}' declared without a value: its constructor "
                                          "or default member initialisers would give its fields values", d.span)
                    out.append(m.DeclStmt((m.VarDecl(d.name, array, d.storage, False, None, d.span),), d.span))
                    if value is not None:
                        if isinstance(value, m.InitList) and len(value.items) == 1:
                            # un u = {1.0f}: its first member
                            out.append(self.store(m.Ref(d.name, "local", v, d.span), 0, self.scalar(value.items[0]),
                                                  "=", d.span))
                        else:  # a copy: its words
                            out += [self.store(m.Ref(d.name, "local", v, d.span), i, self.lane(value, i), "=", d.span)
                                    for i in range(v.lanes) if lane_dtype(v, i) == v.dtype]
                    continue
                if v is not None and d.name in self.held:  # an array of its lanes, filled lane by lane
                    value = d.init
                    if isinstance(value, m.Call) and value.kind == "constructor" and not value.args:
                        value = None
                    out.append(m.DeclStmt((m.VarDecl(d.name, self.held[d.name], d.storage, False, None, d.span),),
                                          d.span))
                    target = m.Ref(d.name, "local", v, d.span)
                    out += self.copy(target, value, v, d.span) if value is not None else []
                    continue
                if v is not None:
                    self.locals[d.name] = v
                    value = d.init
                    if isinstance(value, m.Call) and value.kind == "constructor" and not value.args:
                        value = None  # float4 v;  (default-constructed: no initial value)
                    if value is None and v.initialised:
                        raise VectorError(f"a local '{d.name}' of '{v}' declared without a value: its constructor "
                                          "or default member initialisers would give its fields values", d.span)
                    decls = []
                    for i in range(v.lanes):
                        init = self.lane(value, i) if value is not None else None
                        decls.append(m.DeclStmt((m.VarDecl(lane_local(d.name, v, i), m.Scalar(lane_dtype(v, i)),
                                                           d.storage, d.const, init, d.span),), d.span))
                    if not self.pending and value is not None and _vector_place(value) and lane_loads(decls):
                        # a vector loaded whole from memory (const float4 p = d[i]): its lanes marked
                        # for the printer to load them in one access again (..facts.vector_lanes)
                        decls = [dataclasses.replace(x, lanes=len(decls)) for x in decls]
                    out.extend(decls)
                elif _array_vec(d.type) is not None:
                    out.append(self.array_decl(d))
                elif isinstance(d.type, m.Pointer) and _vec(d.type.pointee):
                    view = self.view_of(d.init) if d.init is not None else None
                    if view is None:
                        raise VectorError(f"vector pointer '{d.name}' is not a view of a buffer", d.span)
                    if d.name in self.moved:  # stepped (k++, k += n): the view counts from a local
                        steps = _pointer_steps(self.body_of, d.name)
                        if steps is None:
                            raise VectorError(f"vector pointer '{d.name}' is assigned other than by a step", d.span)
                        at = fresh(f"{d.name}_at", self.taken)
                        self.steps[d.name] = at
                        itype = m.Scalar("int64")
                        out.append(m.DeclStmt((m.VarDecl(at, itype, "local", False, _int_lit(0, "int64", d.span),
                                                         d.span),), d.span))
                        view = dataclasses.replace(view, offset=_add(view.offset, m.Ref(at, "local", itype, d.span),
                                                                     d.span))
                    self.views[d.name] = view
                else:
                    out.append(m.DeclStmt((dataclasses.replace(d, init=self.scalar(d.init)),), d.span))
            return out
        stepped = _pointer_step(s, self.steps)
        if stepped is not None:  # k++ / k += n on a stepped view: its counter
            name, op, amount = stepped
            at = m.Ref(self.steps[name], "local", m.Scalar("int64"), s.span)
            return [m.ExprStmt(m.Assign(op, at, self.scalar(amount), at.type, s.span), s.span)]
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Call) and s.expr.callee in _LANE_ATOMICS \
                and len(s.expr.args) == 2 and _vec(s.expr.args[1].type):
            return self.lane_atomics(s.expr, s.span)
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and _vec(s.expr.target.type):
            a = s.expr
            v = _vec(a.target.type)
            if a.op != "=":
                if a.op[:-1] not in _LANE_OPS or any(isinstance(n, m.Assign) or (isinstance(n, m.Unary) and
                                                                                 n.op in ("++", "--"))
                                                     for n in m.walk(a.target)):
                    raise VectorError(f"compound assignment '{a.op}' of a vector", s.span)
                # each lane updated with its own (the target read once a lane, as CUDA does)
                return [self.store(a.target, i, self.lane_or_scalar(a.value, i), a.op, s.span)
                        for i in range(v.lanes)]
            return self.copy(a.target, a.value, v, s.span)
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign):
            branches = self.local_field_store(s)
            if branches is not None:
                return branches
            if not _vec(s.expr.target.type):  # v.c[i].real += x on a local record: a branch per lane
                mark = self.mark()
                value = self.scalar(s.expr.value)
                branches = self.path_store(s.expr.target, None, value, s.expr.op, s.span)
                if branches is not None:
                    return [branches]
                place = self.path_place(s.expr.target)  # r[i].c[k].real = x: the word the indices reach
                if place is not None:
                    return [m.ExprStmt(dataclasses.replace(s.expr, target=place, value=value), s.span)]
                self.rewind(mark)  # the value is scalarised again with its target below
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Unary) and s.expr.op in ("++", "--"):
            one = m.IntLit(1, "1", m.Scalar("int32"), s.span)
            branches = self.path_store(s.expr.operand, None, one, "+=" if s.expr.op == "++" else "-=", s.span)
            if branches is not None:
                return [branches]
            place = self.path_place(s.expr.operand)
            if place is not None:
                return [m.ExprStmt(dataclasses.replace(s.expr, operand=place), s.span)]
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and self._packed_target(s.expr.target):
            vec, i = self.lane_target(s.expr.target)
            return [self.store(vec, i, self.scalar(s.expr.value), s.expr.op, s.span)]
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Unary) and s.expr.op in ("++", "--") \
                and self._packed_target(s.expr.operand):
            vec, i = self.lane_target(s.expr.operand)
            one = m.IntLit(1, "1", m.Scalar("int32"), s.span)
            return [self.store(vec, i, one, "+=" if s.expr.op == "++" else "-=", s.span)]
        if isinstance(s, m.ExprStmt):
            return [dataclasses.replace(s, expr=self.scalar(s.expr))]
        if isinstance(s, m.Block):
            return [self.body(s)]
        if isinstance(s, m.If):
            return [dataclasses.replace(s, cond=self.scalar(s.cond), then=self.body(s.then),
                                        other=self.body(s.other))]
        if isinstance(s, m.For):
            init = self.stmt(s.init) if s.init is not None else [None]
            if len(init) > 1 and isinstance(s.init, m.DeclStmt) and len(init) == len(s.init.decls) \
                    and all(isinstance(x, m.DeclStmt) and len(x.decls) == 1 for x in init) \
                    and not any(_vec(d.type) or _array_vec(d.type) for d in s.init.decls):
                # for (size_t i = n / 2, old_i = n; ...): scalars declared together, as written
                init = [dataclasses.replace(s.init, decls=tuple(x.decls[0] for x in init))]
            if len(init) != 1:
                raise VectorError("vector declared in a loop header", s.span)
            return [dataclasses.replace(s, init=init[0], cond=self.scalar(s.cond), step=self.scalar(s.step),
                                        body=self.body(s.body))]
        if isinstance(s, (m.While, m.DoWhile)):
            return [dataclasses.replace(s, cond=self.scalar(s.cond), body=self.body(s.body))]
        if isinstance(s, m.Switch):
            return [dataclasses.replace(s, cond=self.scalar(s.cond), body=self.body(s.body))]
        if isinstance(s, m.Case):
            return [dataclasses.replace(s, body=self.body(s.body))]
        if isinstance(s, m.Return) and s.value is not None:
            if _vec(s.value.type):
                raise VectorError("a device function returning a vector must be inlined", s.span)
            return [dataclasses.replace(s, value=self.scalar(s.value))]
        return [s]


def scalar_constants(unit: m.TranslationUnit) -> m.TranslationUnit:
    """``unit`` with each ``__constant__`` array of vectors (``__constant__ kValues ck[N]``, a plain
    struct of three floats) an array of their scalars, and each ``__constant__`` struct (``__constant__
    pixel BORDER = {0, 0, 0}``) the array of its words, as the kernels' reads of it become
    (:func:`scalarize_vectors`): the symbol the launcher fills holds the same bytes."""
    changed = False
    globals_ = []
    for g in unit.globals:
        if g.storage == "constant" and isinstance(g.type, m.Array) and _array_vec(g.type) is not None:
            try:
                g = dataclasses.replace(g, type=_scalar_array(g.type))
                changed = True
            except VectorError:
                pass  # an extent the kernels' reads will report
        elif g.storage == "constant" and isinstance(g.type, m.Vector):
            g = dataclasses.replace(g, type=_constant_words(g.type))  # its words, as the kernels read it
            changed = True
        globals_.append(g)
    return dataclasses.replace(unit, globals=tuple(globals_)) if changed else unit


def _typed_elements(fn: m.Function) -> m.Function:
    """``fn`` with each element of an array of vectors whose extent a template parameter gives
    (``float2 lpoint[tile_size]``) typed as the vector: clang leaves ``lpoint[ti]`` a dependent
    type until the template is instantiated."""
    class Elements(Transformer):
        def leave_Index(self, node):
            base = node.base.type if isinstance(node.base, m.Ref) else None
            if isinstance(node.type, m.Opaque) and isinstance(base, m.Array) and base.extent is None \
                    and isinstance(base.element, m.Vector):
                return dataclasses.replace(node, type=base.element)
            return node

    return dataclasses.replace(fn, body=Elements().transform(fn.body))


def scalarize_vectors(fn: m.Function) -> m.Function:
    """``fn`` with every vector value split into its lanes (see the module docstring)."""
    if fn.body is None or not uses_vectors(fn):
        return fn
    fn = _typed_elements(retype_bit_containers(fn))
    sc = _Scalarizer(fn)
    body = dataclasses.replace(fn.body, stmts=sc.stmts(fn.body.stmts))
    params = []
    for p in fn.params:
        v = _vec(p.type) or (_vec(p.type.pointee) if isinstance(p.type, m.Pointer) else None)
        if v is None:
            params.append(p)
        elif isinstance(p.type, m.Pointer):
            params.append(dataclasses.replace(p, type=m.Pointer(m.Scalar(v.dtype), p.type.const, p.type.restrict,
                                                                p.type.volatile)))
        else:  # by value: one scalar parameter per lane, which the launcher takes out of the struct
            params += [m.Param(lane_local(p.name, v, i), m.Scalar(lane_dtype(v, i)), p.const, p.span,
                               (p.name, lane_offset(v, i))) for i in range(v.lanes)]
    return dataclasses.replace(fn, params=tuple(params), body=body)
