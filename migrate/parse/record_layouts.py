"""The memory layout of a plain-data struct too large (or too nested) to be lanes: a parameter
table such as ``struct fparam {int use_dna; int stack[4][4][4][4]; ... struct triloop_t {int
seq[5]; int val;} triloop[40]; float prelog; ...}`` passed to kernels by pointer, or a structure
of arrays ``struct {unsigned s0[4096]; ... unsigned sf[4096];}``. Its fields with their byte
offsets (clang's layout), each a scalar, a fixed array of them or such a struct again; the
kernels read it as a buffer of words (analysis.prepare.record_buffers). A field may also be a
pointer to scalars (``struct {float* N; float* means; ...}``, a struct of device buffers:
analysis.prepare.record_pointers). A struct with a bit-field, a base, a virtual method, a union
member or a pointer to anything else has no such layout (None)."""
from __future__ import annotations

import clang.cindex as ci

from .. import dtypes
from ..ir import model as m
from . import clang as cl

K = ci.CursorKind
T = ci.TypeKind

#: what a struct may declare beside its fields: access, attributes, constructors, methods, the
#: types (nested structs among them) and constants it declares
_BESIDE = frozenset({K.CXX_ACCESS_SPEC_DECL, K.PACKED_ATTR, K.ALIGNED_ATTR, K.CONSTRUCTOR, K.DESTRUCTOR,
                     K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL, K.ENUM_DECL,
                     K.VAR_DECL, K.STATIC_ASSERT, K.FRIEND_DECL, K.STRUCT_DECL, K.UNION_DECL, K.CLASS_DECL})


def laid_out_record(ctype: ci.Type, spelling: str) -> m.Record | None:
    """``ctype`` (a struct's canonical type) as a :class:`~migrate.ir.model.Record` with its
    size and fields, or None where it is no plain data of the project's."""
    fields = _fields(ctype)
    size = ctype.get_size()
    if fields is None or size <= 0:
        return None
    return m.Record(spelling, size, fields)


def _fields(ctype: ci.Type) -> tuple | None:
    decl = ctype.get_declaration()
    if decl is None or decl.kind not in (K.STRUCT_DECL, K.CLASS_DECL) or \
            cl.is_prelude_file(decl.location.file.name if decl.location.file else None):
        return None
    kids = list(decl.get_children())
    if not kids:  # a struct template's implicit instance: its fields by its type, the rest by its template
        template = cl.specialized_template(decl)
        pattern = list(template.get_children()) if template is not None else []
        kids = [k for k in pattern if k.kind not in (K.TEMPLATE_TYPE_PARAMETER, K.FIELD_DECL)] \
            + list(ctype.get_fields()) if pattern else []
    fields = [k for k in kids if k.kind == K.FIELD_DECL]
    if not fields or any(k.kind not in _BESIDE and k.kind != K.FIELD_DECL for k in kids) \
            or any(k.is_bitfield() for k in fields) \
            or any(k.kind == K.CXX_METHOD and k.is_virtual_method() for k in kids):
        return None
    out = []
    for k in fields:
        offset = ctype.get_offset(k.spelling)
        if offset is None or offset < 0 or offset % 8:
            return None
        t = _type(k.type.get_canonical())
        if t is None:
            return None
        out.append((k.spelling, offset // 8, t))
    return tuple(out)


def _type(t: ci.Type) -> m.CType | None:
    """A field's type: a scalar, a fixed array, or a struct laid out again; None for anything else."""
    if t.kind == T.CONSTANTARRAY:
        element = _type(t.element_type.get_canonical())
        return m.Array(element, t.element_count) if element is not None and t.element_count > 0 else None
    if t.kind == T.POINTER:  # a pointer to scalars: the struct holds buffers (analysis.prepare.record_pointers)
        pointee = t.get_pointee()
        target = _scalar(pointee.get_canonical())  # (never a struct: a list's node points to its own type)
        return m.Pointer(target, pointee.is_const_qualified()) if target is not None else None
    if t.kind == T.RECORD:
        fields = _fields(t)
        return m.Record(t.spelling.removeprefix("struct ").strip(), t.get_size(), fields) \
            if fields is not None and t.get_size() > 0 else None
    return _scalar(t)


def _scalar(t: ci.Type) -> m.Scalar | None:
    """A scalar type (an enum's int32), or None."""
    if t.kind == T.ENUM:
        return m.Scalar("int32") if t.get_size() == 4 else None
    name = " ".join(w for w in t.spelling.split() if w not in ("const", "volatile")).removeprefix("::")
    dtype = m.SCALAR_DTYPES.get(name) or dtypes.TEMPLATE_SPELLINGS.get(name)
    if dtype is None or dtype not in dtypes.SIZES or dtypes.SIZES[dtype] != t.get_size():
        return None
    return m.Scalar(dtype)

