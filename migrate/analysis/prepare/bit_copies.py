"""A scalar's bits read as another scalar type through its address, as the cast it is.

Kernels and their helpers reinterpret a number's bits by reading it through a pointer of another
type of the same size::

    __device__ inline unsigned int as_unsigned(int i) { return *reinterpret_cast<unsigned int*>(&i); }
    int bits = *(int*)&x;                                  // float x

TileLang has no addresses of scalars. Such a read (``*(U*)&x`` of a scalar variable ``x``, ``U``
a number type of ``x``'s size) is the bit copy it means: between two integer types of one width
the conversion (which keeps the bits), between a float and an integer the CUDA intrinsic that
copies the bits (``__float_as_int``, ``__uint_as_float``, ``__double_as_longlong``,
``__longlong_as_double``; a 64-bit unsigned integer through ``long long``; a half or a bfloat16
and a 16-bit integer through ``__half_as_ushort`` and its kin). Only reads are rewritten: a store
through such a pointer (``*(int*)&x = b``), a step of it, a size that differs, a bool are left as
they are (the emitter refuses them by name).
"""
from __future__ import annotations

import dataclasses

from ...dtypes import SIZES
from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.names import fresh
from ...ir.visit import Transformer, expand_statements

#: (from dtype, to dtype) -> the CUDA intrinsic that copies the bits
_INTRINSICS = {
    ("float32", "int32"): "__float_as_int", ("int32", "float32"): "__int_as_float",
    ("float32", "uint32"): "__float_as_uint", ("uint32", "float32"): "__uint_as_float",
    ("float64", "int64"): "__double_as_longlong", ("int64", "float64"): "__longlong_as_double",
    ("float16", "int16"): "__half_as_short", ("int16", "float16"): "__short_as_half",
    ("float16", "uint16"): "__half_as_ushort", ("uint16", "float16"): "__ushort_as_half",
    ("bfloat16", "int16"): "__bfloat16_as_short",
    ("bfloat16", "uint16"): "__bfloat16_as_ushort", ("uint16", "bfloat16"): "__ushort_as_bfloat16",
}
_INTS = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")


def _source(e: m.Unary) -> tuple[m.Expr, str, str] | None:
    """(the variable, its dtype, the dtype read) where ``e`` is ``*(U*)&x`` on a scalar variable."""
    if e.op != "*":
        return None
    cast = e.operand
    if not isinstance(cast, m.Cast) or cast.style not in ("c", "reinterpret") or not isinstance(cast.target, m.Pointer):
        return None
    # an inlined template's instance: the cast names the type read where the read has a parameter's
    read_type = e.type if isinstance(e.type, m.Scalar) else cast.target.pointee
    if not isinstance(read_type, m.Scalar):
        return None
    address = strip_implicit_casts(cast.operand)
    if not isinstance(address, m.Unary) or address.op != "&" or not isinstance(address.operand, m.Ref) \
            or not isinstance(address.operand.type, m.Scalar):
        return None
    held, read = address.operand.type.dtype, read_type.dtype
    if held not in SIZES or read not in SIZES or SIZES[held] != SIZES[read]:
        return None
    return address.operand, held, read


def _bits(x: m.Expr, held: str, read: str, span) -> m.Expr | None:
    """``x``'s bits as ``read``; None where no cast or intrinsic copies them."""
    target = m.Scalar(read)
    if held in _INTS and read in _INTS:
        return m.Cast(target, x, "static", target, span)
    if (held, read) in _INTRINSICS:
        return m.Call(_INTRINSICS[held, read], (x,), "conversion", (), target, span)
    wide = m.Scalar("int64")
    if (held, read) == ("float64", "uint64"):
        return m.Cast(target, m.Call("__double_as_longlong", (x,), "conversion", (), wide, span), "static", target, span)
    if (held, read) == ("uint64", "float64"):
        signed = m.Cast(wide, x, "static", wide, span)
        return m.Call("__longlong_as_double", (signed,), "conversion", (), target, span)
    return None


_UNSIGNED = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}
_LANES = ("x", "y", "z", "w")
#: the lane dtypes whose bits a lane's unsigned word holds through a call (else a conversion)
_AS_WORD = {"float16": "__half_as_ushort", "bfloat16": "__bfloat16_as_ushort", "float32": "__float_as_uint"}
_FROM_WORD = {"float16": "__ushort_as_half", "bfloat16": "__ushort_as_bfloat16", "float32": "__uint_as_float"}
#: the calls that make a CUDA vector of its lanes (others: make_<name>, as vectors.py reads them)
_MAKE = {"__half2": "__halves2half2", "half2": "__halves2half2", "__nv_bfloat162": "__halves2bfloat162",
         "nv_bfloat162": "__halves2bfloat162"}


def _word_vector(t) -> m.Vector | None:
    """``t`` where it is a CUDA vector of 2 to 4 lanes whose lane words a scalar can carry."""
    if not (isinstance(t, m.Vector) and t.name in m.VECTOR_TYPES and not t.lane_dtypes and 2 <= t.lanes <= 4
            and t.dtype in SIZES and (t.dtype in _INTS or t.dtype in _AS_WORD)):
        return None
    return t if SIZES[t.dtype] * t.lanes in _UNSIGNED else None


def _vector_source(e: m.Unary):
    """(the variable, the vector type, the scalar dtype) where ``e`` is ``*(U*)&v`` reading a CUDA
    vector ``v``'s bits as a number ``U`` of its size, or ``*(V*)&w`` a number ``w``'s as a vector
    ``V``; else None."""
    if e.op != "*":
        return None
    cast = e.operand
    if not isinstance(cast, m.Cast) or cast.style not in ("c", "reinterpret") or not isinstance(cast.target, m.Pointer):
        return None
    address = strip_implicit_casts(cast.operand)
    if not isinstance(address, m.Unary) or address.op != "&" or not isinstance(address.operand, m.Ref):
        return None
    held, read = address.operand.type, cast.target.pointee
    v = _word_vector(held)
    if v is not None and isinstance(read, m.Scalar) and read.dtype in _INTS and SIZES[read.dtype] == SIZES[v.dtype] * v.lanes:
        return address.operand, v, read.dtype
    v = _word_vector(read)
    if v is not None and isinstance(held, m.Scalar) and held.dtype in _INTS \
            and SIZES[held.dtype] == SIZES[v.dtype] * v.lanes:
        return address.operand, v, held.dtype
    return None


def _vector_bits(x: m.Ref, v: m.Vector, word: str, span) -> m.Expr:
    """``x``'s bits (a vector ``v``) as the number ``word``, or a number ``x``'s as the vector
    ``v``: lane ``i`` is the ``i``-th group of ``SIZES[v.dtype]`` bytes from the lowest (CUDA's
    little-endian layout)."""
    bits = 8 * SIZES[v.dtype]
    lane_word = m.Scalar(_UNSIGNED[SIZES[v.dtype]])
    target = m.Scalar(word)
    if isinstance(x.type, m.Vector):  # v -> word: the lanes' words shifted into place, or'ed
        total = None
        for i in range(v.lanes):
            lane = m.Member(x, _LANES[i], False, m.Scalar(v.dtype), span)
            if v.dtype in _AS_WORD:
                part = m.Call(_AS_WORD[v.dtype], (lane,), "conversion", (), lane_word, span)
            else:
                part = m.Cast(lane_word, lane, "static", lane_word, span)
            part = m.Cast(target, part, "static", target, span)
            if i:
                part = m.Binary("<<", part, m.IntLit(i * bits, str(i * bits), m.Scalar("int32"), span), target, span)
            total = part if total is None else m.Binary("|", total, part, target, span)
        return total
    unsigned = m.Scalar(_UNSIGNED[SIZES[word]])  # word -> v: each lane's group of bits
    whole = m.Cast(unsigned, x, "static", unsigned, span)
    lanes = []
    for i in range(v.lanes):
        shifted = m.Binary(">>", whole, m.IntLit(i * bits, str(i * bits), m.Scalar("int32"), span), unsigned,
                           span) if i else whole
        part = m.Cast(lane_word, shifted, "static", lane_word, span)
        lane_t = m.Scalar(v.dtype)
        if v.dtype in _FROM_WORD:
            lanes.append(m.Call(_FROM_WORD[v.dtype], (part,), "conversion", (), lane_t, span))
        else:
            lanes.append(m.Cast(lane_t, part, "static", lane_t, span))
    return m.Call(_MAKE.get(v.name, f"make_{v.name}"), tuple(lanes), "math", (), v, span)


def _array_words(e, arrays: set[str]):
    """(the local array, its element dtype, the word dtype, the word index) where ``e`` reads a
    word of a local array of smaller integers (``((unsigned int*)key)[1]`` of ``unsigned char
    key[8]``, ``*(unsigned*)key``); else None."""
    if isinstance(e, m.Index):
        base, index = strip_implicit_casts(e.base), e.index
    elif isinstance(e, m.Unary) and e.op == "*":
        base, index = strip_implicit_casts(e.operand), None
    else:
        return None
    if not (isinstance(base, m.Cast) and base.style in ("c", "reinterpret") and isinstance(base.target, m.Pointer)
            and isinstance(base.target.pointee, m.Scalar)):
        return None
    array = strip_implicit_casts(base.operand)
    if not (isinstance(array, m.Ref) and array.name in arrays and isinstance(array.type, m.Array)
            and isinstance(array.type.element, m.Scalar)):
        return None
    held, read = array.type.element.dtype, base.target.pointee.dtype
    if held not in _INTS or read not in _INTS or SIZES[read] <= SIZES[held] or SIZES[read] % SIZES[held]:
        return None
    if index is not None and any(isinstance(n, (m.Assign, m.Call, m.MethodCall)) or isinstance(n, m.Unary)
                                 and n.op in ("++", "--") for n in m.walk(index)):
        return None  # (read once per element below)
    return array, held, read, index


def _words(array: m.Ref, held: str, read: str, index, span) -> m.Expr:
    """The word ``index`` of ``array``'s elements as ``read``: its elements little-endian, each
    element's bits (as unsigned) shifted into place."""
    n = SIZES[read] // SIZES[held]
    target, unsigned = m.Scalar(read), m.Scalar(_UNSIGNED[SIZES[held]])
    i32 = m.Scalar("int32")
    total = None
    for j in range(n):
        at = m.IntLit(j, str(j), i32, span)
        if index is not None:
            start = m.Binary("*", index, m.IntLit(n, str(n), i32, span), index.type, span)
            at = m.Binary("+", start, at, index.type, span) if j else start
        element = m.Index(array, at, m.Scalar(held), span)
        part = m.Cast(target, m.Cast(unsigned, element, "static", unsigned, span), "static", target, span)
        if j:
            shift = 8 * SIZES[held] * j
            part = m.Binary("<<", part, m.IntLit(shift, str(shift), i32, span), target, span)
        total = part if total is None else m.Binary("|", total, part, target, span)
    return total


def bit_copies(fn: m.Function) -> m.Function:
    """``fn`` with each read ``*(U*)&x`` of a scalar's bits as the cast or intrinsic it means."""
    if fn.body is None:
        return fn
    written = set()  # the *(U*)&x that are stored to, stepped or addressed: left alone
    for n in m.walk(fn.body):
        if isinstance(n, m.Assign):
            written.add(id(n.target))
        elif isinstance(n, m.Unary) and n.op in ("++", "--", "&"):
            written.add(id(n.operand))
    arrays = {d.name for d in m.walk(fn.body) if isinstance(d, m.VarDecl) and d.storage == "local"
              and isinstance(d.type, m.Array)}
    if not any(isinstance(n, m.Unary) and id(n) not in written and (_source(n) or _vector_source(n))
               or isinstance(n, (m.Index, m.Unary)) and id(n) not in written and _array_words(n, arrays)
               for n in m.walk(fn.body)):
        return fn

    class Reads(Transformer):
        def transform(self, node):
            if isinstance(node, m.Unary) and id(node) not in written:
                found = _source(node)
                copy = _bits(*found, node.span) if found is not None else None
                if copy is not None:
                    return copy
                found = _vector_source(node)
                if found is not None:
                    return _vector_bits(*found, node.span)
            if isinstance(node, (m.Index, m.Unary)) and id(node) not in written:
                found = _array_words(node, arrays)
                if found is not None:
                    array, held, read, index = found
                    return _words(array, held, read, None if index is None else self.transform(index), node.span)
            return super().transform(node)

    body = Reads().transform(fn.body)
    if any(isinstance(n, m.Assign) and _array_words(n.target, arrays) for n in m.walk(body)):
        body = _word_stores(body, arrays, {n.name for n in m.walk(body) if isinstance(n, (m.Ref, m.VarDecl))}
                            | {p.name for p in fn.params})
    return dataclasses.replace(fn, body=body)


def _word_stores(body, arrays: set[str], taken: set[str]):
    """``*(uint64*)buff -= v;`` of a local ``uint32 buff[7]``, a statement of its own, as the word
    computed into a local and stored back element by element (``uint64 w = words - v; buff[0] =
    (uint32)w; buff[1] = (uint32)(w >> 32);``)."""
    def split(s):
        e = s.expr
        if not (isinstance(e, m.Assign) and _array_words(e.target, arrays)):
            return None
        array, held, read, index = _array_words(e.target, arrays)
        if index is not None and not isinstance(index, m.IntLit) and not isinstance(index, m.Ref):
            return None  # (an index read twice must read the same)
        span = s.span
        target = m.Scalar(read)
        value = e.value
        if e.op != "=":
            value = m.Binary(e.op[:-1], _words(array, held, read, index, span), value, target, span)
        word = m.Ref(fresh(f"{array.name}_word", taken), "local", target, span)
        out = [m.DeclStmt((m.VarDecl(word.name, target, "local", False,
                                     m.Cast(target, value, "implicit", target, span), span),), span)]
        n = SIZES[read] // SIZES[held]
        i32 = m.Scalar("int32")
        for j in range(n):
            at = m.IntLit(j, str(j), i32, span)
            if index is not None:
                start = m.Binary("*", index, m.IntLit(n, str(n), i32, span), index.type, span)
                at = m.Binary("+", start, at, index.type, span) if j else start
            shift = 8 * SIZES[held] * j
            part = m.Binary(">>", word, m.IntLit(shift, str(shift), i32, span), target, span) if j else word
            element = m.Index(array, at, m.Scalar(held), span)
            out.append(m.ExprStmt(m.Assign("=", element, m.Cast(m.Scalar(held), part, "static", m.Scalar(held), span),
                                           m.Scalar(held), span), span))
        return out

    return expand_statements(body, split)
