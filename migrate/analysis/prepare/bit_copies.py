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
from ...ir.visit import Transformer

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
    if not any(isinstance(n, m.Unary) and id(n) not in written and _source(n) for n in m.walk(fn.body)):
        return fn

    class Reads(Transformer):
        def transform(self, node):
            if isinstance(node, m.Unary) and id(node) not in written:
                found = _source(node)
                copy = _bits(*found, node.span) if found is not None else None
                if copy is not None:
                    return copy
            return super().transform(node)

    return dataclasses.replace(fn, body=Reads().transform(fn.body))
