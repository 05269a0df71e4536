"""Cursor → kernel model: one ``visit_<CURSOR_KIND>`` method per construct.

:class:`ModelBuilder` turns the libclang cursors of one function into :mod:`migrate.ir.model` nodes.
Anything the model cannot represent becomes an ``Unsupported*`` node plus a coded diagnostic;
the builder never raises on user input.
"""
from __future__ import annotations

import ast
import ctypes
import dataclasses
import itertools
import math
import re
from pathlib import Path

import clang.cindex as ci

from .. import dtypes
from ..compat.catalog import UNSUPPORTED_CODES, section_of
from ..diagnostics import DiagnosticBag
from ..ir import model as m
from ..ir.exprs import pure
from ..ir.span import Span
from . import clang as cl
from . import inline_ptx, lambdas, lanewise, var_templates
from .local_types import local_type_name
from .member_types import member_spelling
from .record_layouts import laid_out_record

K = ci.CursorKind
T = ci.TypeKind

BUILTIN_VARS = {"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize"}

#: Catalog section -> model call kind.
_SECTION_KIND = {"math": "math", "half": "math", "conversion": "conversion", "atomic": "atomic",
                 "warp": "warp", "sync": "sync", "memory": "memory", "cg": "cg", "io": "io",
                 "constructor": "constructor", "unsupported": "unknown"}

_TEXTURE_TYPE = re.compile(r"\b(cudaTextureObject_t|cudaSurfaceObject_t|texture\s*<|surface\s*<)")

_CAST_STYLES = {K.CSTYLE_CAST_EXPR: "c", K.CXX_STATIC_CAST_EXPR: "static",
                K.CXX_REINTERPRET_CAST_EXPR: "reinterpret", K.CXX_CONST_CAST_EXPR: "const",
                K.CXX_FUNCTIONAL_CAST_EXPR: "functional"}

_OPERATOR_NAME = re.compile(r"^operator(\W+)$")
def _calls_itself(template: ci.Cursor) -> bool:
    """Whether the function template's body names the template itself (a call of another
    instance: ``f<N - 1>(x)``)."""
    body = next((c for c in template.get_children() if c.kind == K.COMPOUND_STMT), None)
    return body is not None and any(
        n.kind in (K.OVERLOADED_DECL_REF, K.DECL_REF_EXPR) and n.spelling == template.spelling
        for n in body.walk_preorder())


#: a template argument computed from the caller's value parameters (``f<N - 1>``, ``f<2 * K>``)
_VALUE_EXPRESSION = re.compile(r"[A-Za-z_\d][\w\s+\-*/%()]*")
_OPERATOR_WORDS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "^": "xor", "&": "and", "|": "or",
                   "~": "inv", "!": "not", "<": "lt", ">": "gt", "<=": "le", ">=": "ge", "==": "eq", "!=": "ne",
                   "<<": "shl", ">>": "shr", "&&": "land", "||": "lor", "++": "inc", "--": "dec", "()": "call",
                   "[]": "index"}


def function_model_name(spelling: str) -> str:
    """The name a user function is modelled and emitted under: its own, but for an overloaded
    operator a name Python can print (``operator*`` is ``operator_mul``, ``operator*=``
    ``operator_mul_assign``, the conversion ``operator int`` ``operator_int``)."""
    match = _OPERATOR_NAME.match(spelling)
    if not match and spelling.startswith("operator "):  # a conversion operator: operator int() is operator_int
        return "operator_" + re.sub(r"\W+", "_", spelling.removeprefix("operator ")).strip("_")
    if not match:
        return spelling
    op = match.group(1)
    if op in _OPERATOR_WORDS:
        return f"operator_{_OPERATOR_WORDS[op]}"
    if op.endswith("=") and op[:-1] in _OPERATOR_WORDS:
        return f"operator_{_OPERATOR_WORDS[op[:-1]]}_assign"
    return "operator_op"


def _no_data(record: ci.Cursor) -> bool:
    """Whether the struct or class ``record`` holds no data: no field, no base (a functor class of
    methods only, ``template <class T> class AvgPoolGrad { void compute(...); }``)."""
    if record.kind not in (K.STRUCT_DECL, K.CLASS_DECL, K.CLASS_TEMPLATE):
        return False
    # (an implicit instance lists no children: its template's say what it holds)
    template = cl.specialized_template(record) if record.kind != K.CLASS_TEMPLATE else None
    kids = list(record.get_children()) + (list(template.get_children()) if template is not None else [])
    return not any(c.kind in (K.FIELD_DECL, K.CXX_BASE_SPECIFIER, K.UNION_DECL) for c in kids) \
        and (record.kind == K.CLASS_TEMPLATE or not list(record.type.get_canonical().get_fields()))


def method_model_name(definition: ci.Cursor, functions: dict[str, ci.Cursor], model_names: dict[str, str]) -> str:
    """The name the method ``definition`` of a struct is modelled under, as a device function
    whose first parameter is the object (``Projectile_getangle``), registered in ``functions``
    (model name -> cursor) and ``model_names`` (USR -> model name) on first use; a name another
    function holds gets a number."""
    usr = definition.get_usr()
    if usr in model_names:
        return model_names[usr]
    record = re.sub(r"\W+", "_", _bare(definition.semantic_parent.spelling or "struct")).strip("_")
    base = f"{record}_{function_model_name(definition.spelling)}"
    name, n = base, 1
    while name in functions:
        n += 1
        name = f"{base}_{n}"
    functions[name] = definition
    model_names[usr] = name
    return name


_FILE, _LINE, _COL = ci.c_object_p(), ctypes.c_uint(), ctypes.c_uint()
_WHERE = (ctypes.byref(_FILE), ctypes.byref(_LINE), ctypes.byref(_COL), None)
_FILE_KEY = ctypes.c_void_p.from_address(ctypes.addressof(_FILE))  # the handle read as a number
#: the unit whose tables are kept, and its tables: its file handles' names (:func:`_place`), the
#: places of its raw source locations (:func:`span_of`) and the kinds of its variables
#: (:func:`_var_kind`). A handle or a declaration is a pointer into its unit and a raw location an
#: offset into its source manager, which another unit may reuse once this one is gone (the unit
#: is held meanwhile)
_UNIT_TABLES: list = [None, {}, {}, {}]


def _place(location, names: dict | None) -> tuple[str | None, int, int]:
    """(file or None, line, column) of a source location: one libclang call, the file's name
    kept per handle in ``names`` (cindex asks libclang again for every property)."""
    ci.conf.lib.clang_getInstantiationLocation(location, *_WHERE)
    key = _FILE_KEY.value  # (ctypes.cast costs more than the libclang call)
    if key is None:
        return None, _LINE.value, _COL.value
    name = names.get(key) if names is not None else None
    if name is None:
        name = ci.File(_FILE).name
        if names is not None:
            names[key] = name
    return name, _LINE.value, _COL.value


_OFFSET = ctypes.c_uint()
_WHERE_OFFSET = (ctypes.byref(_FILE), None, None, ctypes.byref(_OFFSET))


def _file_offset(location, names: dict | None) -> tuple[str | None, int]:
    """(file or None, byte offset) of a source location, as :func:`_place` finds its place."""
    ci.conf.lib.clang_getInstantiationLocation(location, *_WHERE_OFFSET)
    key = _FILE_KEY.value
    if key is None:
        return None, _OFFSET.value
    name = names.get(key) if names is not None else None
    if name is None:
        name = ci.File(_FILE).name
        if names is not None:
            names[key] = name
    return name, _OFFSET.value


def _unit_tables(cursor: ci.Cursor) -> list | None:
    """The tables kept for ``cursor``'s unit (:data:`_UNIT_TABLES`), None where it has none."""
    tu = getattr(cursor, "_tu", None)
    if tu is None:
        return None
    if _UNIT_TABLES[0] is not tu:
        _UNIT_TABLES[:] = [tu, {}, {}, {}]
    return _UNIT_TABLES


def _unit_file_names(cursor: ci.Cursor) -> dict | None:
    """The file names kept for ``cursor``'s unit, None where it has none."""
    tables = _unit_tables(cursor)
    return tables[1] if tables is not None else None


def cursor_file(cursor: ci.Cursor) -> str | None:
    """The name of the file ``cursor``'s location lies in (cindex's ``location.file.name``), or None."""
    return _file_offset(ci.conf.lib.clang_getCursorLocation(cursor), _unit_file_names(cursor))[0]


def span_of(cursor: ci.Cursor) -> Span:
    """The cursor's extent in its file (its location where the extent has no file). The place of
    each raw location is kept per unit: an expression's extent begins where its first operand's
    does and its implicit conversions' extents are its own (half the places are asked again)."""
    lib = ci.conf.lib
    tables = _unit_tables(cursor)
    names = tables[1] if tables is not None else None
    extent = lib.clang_getCursorExtent(cursor)
    if tables is None:
        file, line, col = _place(lib.clang_getRangeStart(extent), None)
        end_file, end_line, end_col = _place(lib.clang_getRangeEnd(extent), None)
    else:
        places = tables[2]
        start = places.get(extent.begin_int_data)
        if start is None:
            start = places[extent.begin_int_data] = _place(lib.clang_getRangeStart(extent), names)
        end = places.get(extent.end_int_data)
        if end is None:
            end = places[extent.end_int_data] = _place(lib.clang_getRangeEnd(extent), names)
        (file, line, col), (end_file, end_line, end_col) = start, end
    if file is None:
        file, line, col = _place(lib.clang_getCursorLocation(cursor), names)
        file = file or ""
    return Span(file, line, col, end_line if end_file else line, end_col if end_file else col)


class SourceText:
    """Byte-offset access to the files of a translation unit, for host expressions and pragmas."""

    def __init__(self, unsaved: dict[str, str] | None = None) -> None:
        # files parsed with a text of their own (a copy appended: parse.instance_copies)
        self._cache: dict[str, bytes] = {k: v.encode("utf-8") for k, v in (unsaved or {}).items()}

    def _data(self, name: str) -> bytes:
        if name not in self._cache:
            try:
                self._cache[name] = Path(name).read_bytes()
            except OSError:
                self._cache[name] = b""
        return self._cache[name]

    def of(self, cursor: ci.Cursor) -> str:
        lib = ci.conf.lib
        names = _unit_file_names(cursor)
        extent = lib.clang_getCursorExtent(cursor)
        # (what cindex's extent.start.file.name and .offset give, in one libclang call an end)
        start_file, start = _file_offset(lib.clang_getRangeStart(extent), names)
        end_file, end = _file_offset(lib.clang_getRangeEnd(extent), names)
        if start_file is None or end_file is None or start_file != end_file:
            return " ".join(t.spelling for t in cursor.get_tokens())
        return self._data(start_file)[start:end].decode("utf-8", "replace")

    def file(self, name: str) -> str:
        """The whole text of the file ``name`` (empty where it cannot be read)."""
        return self._data(name).decode("utf-8", "replace")

    def line(self, file: str, line: int) -> str:
        lines = self._data(file).decode("utf-8", "replace").splitlines()
        return lines[line - 1] if 0 < line <= len(lines) else ""


def convert_type(ctype: ci.Type, template_names: frozenset[str] = frozenset()) -> m.CType:
    """A clang type as a model type (typedefs resolved, CUDA vector and half types recognised)."""
    kind = ctype.kind
    if kind == T.LVALUEREFERENCE or kind == T.RVALUEREFERENCE:
        return m.Reference(convert_type(ctype.get_pointee(), template_names))
    if kind in (T.ELABORATED, T.TYPEDEF, T.UNEXPOSED, T.AUTO):
        spelling = _bare(ctype.spelling)
        if spelling in template_names:
            return m.TemplateType(spelling)
        member = getattr(template_names, "members", None) and member_spelling(spelling)
        if member and member in template_names.members:  # typename V::Scalar as a parameter (parse.member_types)
            return m.TemplateType(template_names.members[member])
        named = _named_type(spelling)
        if named is not None:
            return named
        canon = ctype.get_canonical()
        if canon.kind != kind or canon.spelling != ctype.spelling:
            return convert_type(canon, template_names)
        if kind == T.UNEXPOSED:
            return m.Opaque(spelling)
    if kind == T.POINTER:
        pointee = ctype.get_pointee()
        return m.Pointer(convert_type(pointee, template_names), pointee.is_const_qualified(),
                         ctype.is_restrict_qualified(), pointee.is_volatile_qualified())
    if kind == T.CONSTANTARRAY:
        return m.Array(convert_type(ctype.element_type, template_names), ctype.element_count,
                       volatile=ctype.element_type.is_volatile_qualified())
    if kind in (T.INCOMPLETEARRAY, T.DEPENDENTSIZEDARRAY, T.VARIABLEARRAY):
        text = ""  # the outer extent is the first bracket: T[dim][32 * 4] is dim arrays of T[32 * 4]
        match = re.search(r"\[([^\]]*)\](?:\s*\[[^\]]*\])*\s*$", ctype.spelling)
        if match:
            text = match.group(1).strip()
        return m.Array(convert_type(ctype.element_type, template_names), None, text,
                       ctype.element_type.is_volatile_qualified())
    spelling = _bare(ctype.get_canonical().spelling)
    named = _named_type(spelling)
    if named is not None:
        return named
    if kind == T.RECORD:
        spelling = local_type_name(ctype) or spelling
        return _lane_struct(ctype, spelling) or _record(ctype, spelling) or _union(ctype, spelling) \
            or _struct_record(ctype, spelling)
    if kind == T.ENUM:
        return m.Scalar("int32")
    if spelling in template_names:
        return m.TemplateType(spelling)
    return m.Opaque(spelling or ctype.spelling)


#: what a struct may hold beside its fields and still be laid out as lanes: its members' access,
#: attributes (packed, aligned), constructors, methods and the types and constants it declares
#: (a method call is refused where it is made; a constructor marks the type ``initialised``)
_BESIDE_FIELDS = frozenset({K.CXX_ACCESS_SPEC_DECL, K.PACKED_ATTR, K.ALIGNED_ATTR, K.CONSTRUCTOR, K.DESTRUCTOR,
                            K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL,
                            K.ENUM_DECL, K.VAR_DECL, K.STATIC_ASSERT, K.FRIEND_DECL, K.CONVERSION_FUNCTION})


#: what in a struct template has a body that may name its value parameters
_BODIES = frozenset({K.CONSTRUCTOR, K.DESTRUCTOR, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONVERSION_FUNCTION,
                     K.FRIEND_DECL})


#: what in a struct template has a body that may name its value parameters
_BODIES = frozenset({K.CONSTRUCTOR, K.DESTRUCTOR, K.CXX_METHOD, K.FUNCTION_TEMPLATE, K.CONVERSION_FUNCTION,
                     K.FRIEND_DECL})


def _plain_fields(ctype: ci.Type) -> list | None:
    """The fields of a struct of the project's that has fields (no bases, virtual methods or
    bit-fields; constructors and methods beside them), or None."""
    decl = ctype.get_declaration()
    if decl is None or decl.kind not in (K.STRUCT_DECL, K.CLASS_DECL) or \
            cl.is_prelude_file(decl.location.file.name if decl.location.file else None):
        return None
    kids = list(decl.get_children())
    if not kids or all(k.kind in (K.ALIGNED_ATTR, K.PACKED_ATTR) for k in kids) \
            and cl.specialized_template(decl) is not None:
        # a struct template's implicit instance (block_record<float>; data_t<int, 4>, which keeps
        # its alignas attribute): its fields by its type, what it declares beside them by its
        # template; a template of values too (Subg<nCap>) is left where it has methods: their
        # bodies, taken from the template, would name the value unresolved
        template = cl.specialized_template(decl)
        pattern = list(template.get_children()) if template is not None else []
        if template is not None and template.kind == K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION:
            # (vec_t<T, 3>: the arguments it is written for, ``T`` and ``3``, are among its children)
            pattern = [k for k in pattern if not (k.kind.is_reference() or k.kind.is_expression())]
        if not any(k.kind in _BODIES for k in pattern):  # (data_t<T, N> of fields only: no body names N)
            pattern = [k for k in pattern if k.kind != K.TEMPLATE_NON_TYPE_PARAMETER]
        if not any(k.kind in _BODIES for k in pattern):  # (data_t<T, N>, fields only: no body names N)
            pattern = [k for k in pattern if k.kind != K.TEMPLATE_NON_TYPE_PARAMETER]
        kids = [k for k in pattern if k.kind not in (K.TEMPLATE_TYPE_PARAMETER, K.FIELD_DECL)] \
            + list(ctype.get_fields()) if pattern else []
    fields = [k for k in kids if k.kind == K.FIELD_DECL]
    anonymous = [k for k in kids if k.kind in (K.STRUCT_DECL, K.UNION_DECL) and k.is_anonymous()]
    if anonymous:  # a union of views (vec_t's {x, y, z} | {r, s, t}): the fields of its first
        fields = _opened(list(ctype.get_fields()))
        kids = [k for k in kids if k not in anonymous and k.kind != K.FIELD_DECL] + (fields or [])
    if not fields or any(k.kind not in _BESIDE_FIELDS and k.kind != K.FIELD_DECL for k in kids) \
            or any(k.is_bitfield() for k in fields) \
            or any(k.kind == K.CXX_METHOD and k.is_virtual_method() for k in kids):
        return None
    return fields


def _anonymous_record(field: ci.Cursor) -> ci.Cursor | None:
    """The anonymous struct or union that the field ``field`` is (the unnamed member of
    ``struct {union {struct {int x, y;}; int el[2];};}``), or None."""
    decl = field.type.get_canonical().get_declaration()
    return decl if decl is not None and decl.kind in (K.STRUCT_DECL, K.UNION_DECL) and decl.is_anonymous() \
        else None


def _opened(fields: list) -> list | None:
    """``fields`` with each anonymous struct member replaced by its fields and each anonymous
    union member by its first alternative's (an anonymous struct's fields, or one field), the
    alternative the struct's lanes are made of: the union's other alternatives are other names
    for the same bytes (:meth:`ModelBuilder._anonymous_member`); None where the first alternative
    is smaller than the union (its other alternatives hold bytes it has no name for)."""
    out = []
    for k in fields:
        record = _anonymous_record(k)
        if record is None:
            out.append(k)
            continue
        t = k.type.get_canonical()
        inner = list(t.get_fields())
        if not inner:
            return None
        if record.kind == K.UNION_DECL:
            if inner[0].type.get_canonical().get_size() != t.get_size():
                return None
            inner = inner[:1]
        opened = _opened(inner)
        if opened is None:
            return None
        out += opened
    return out


def _first_alternative(record: ci.Type, field: ci.Cursor) -> str | None:
    """The name the lanes of ``record`` (a struct with anonymous members: :func:`_opened`) give
    the bytes of its field ``field`` (a member of an anonymous union or struct): the field of the
    union's first alternative at the same offset and of the same type (``x`` for vec_t's ``r``,
    ``x`` itself); None where there is none (``el`` of ``union {struct {int x, y;}; int el[2];}``,
    an array over several of them)."""
    opened = _opened(list(record.get_fields())) if record.kind == T.RECORD else None
    if not opened:
        return None
    at = record.get_offset(field.spelling)
    want = field.type.get_canonical().spelling
    for k in opened:
        if record.get_offset(k.spelling) == at and at >= 0 and k.type.get_canonical().spelling == want:
            return k.spelling
    return None


def _initialised(ctype: ci.Type) -> bool:
    """Whether a default-constructed value of the struct has field values: it declares a
    constructor, or a field has a default member initialiser."""
    decl = ctype.get_declaration()
    kids = list(decl.get_children()) if decl is not None else []
    if decl is not None and not kids and cl.specialized_template(decl) is not None:  # a template's instance
        kids = list(cl.specialized_template(decl).get_children())
    return any(k.kind == K.CONSTRUCTOR for k in kids) or \
        any(t.spelling in ("=", "{") for k in kids if k.kind == K.FIELD_DECL for t in k.get_tokens()) or \
        any(_initialised(k.type.get_canonical()) for k in kids
            if k.kind == K.FIELD_DECL and k.type.get_canonical().kind == T.RECORD)


def _lane_struct(ctype: ci.Type, spelling: str) -> m.Vector | None:
    """A plain struct of the project's (:func:`_plain_fields`) whose
    fields are all of one scalar type and which has no padding (``struct {double re, im;}``,
    ``{float x, y, z;}``), as a vector whose lanes are its fields; None for any other record."""
    kids = _plain_fields(ctype)
    if kids is None:
        return None
    # the fields' own spellings, never convert_type (a field pointing to its struct would recurse);
    # a field of a CUDA vector type, or of another such struct, is its lanes (``pos.x``, ``pos.y``)
    types = [_named_type(_bare(k.type.get_canonical().spelling)) or _nested_lanes(k.type) for k in kids]
    if not all(isinstance(t, (m.Scalar, m.Vector)) for t in types) or len({t.dtype for t in types}) != 1:
        return None
    dtype = types[0].dtype
    fields = tuple(name for k, t in zip(kids, types)
                   for name in ((k.spelling,) if isinstance(t, m.Scalar)
                                else (f"{k.spelling}.{lane}" for lane in (t.fields or lanewise.LANES[:t.lanes]))))
    if dtype not in dtypes.SIZES or ctype.get_size() != len(fields) * dtypes.SIZES[dtype]:
        return None
    return m.Vector(spelling, dtype, len(fields), fields, initialised=_initialised(ctype))


#: the most lanes a record may have (a record local may have fewer: analysis.prepare.vectors)
RECORD_LANES = 4096


def _record_lanes(ctype: ci.Type, prefix: str = "", base: int = 0) -> list | None:
    """The scalar lanes of a plain struct (:func:`_plain_fields`: no bases, unions or bit-fields)
    in memory order: (name, dtype, byte offset); a field that is a fixed array of
    scalars, or a struct of the same kind, gives one lane per element (``pos[1]``, ``p.x``); an
    array of CUDA vectors or of such structs, one per element's lane (``uv[1].x``, ``e[0][2].imag``)."""
    kids = _plain_fields(ctype)
    if kids is None:
        return None
    out = []
    for k in kids:
        offset = ctype.get_offset(k.spelling)
        if offset is None or offset < 0 or offset % 8:
            return None
        at = base + offset // 8
        t = k.type.get_canonical()
        name = f"{prefix}{k.spelling}"
        if t.kind == T.CONSTANTARRAY:
            extents = []  # double data[3][3]: its elements in memory order (data[0][0], data[0][1], ...)
            while t.kind == T.CONSTANTARRAY:
                extents.append(t.element_count)
                t = t.element_type.get_canonical()
            element = _named_type(_bare(t.spelling))
            if len(out) + math.prod(extents) > RECORD_LANES:
                return None
            places = list(itertools.product(*(range(n) for n in extents)))
            if t.kind == T.RECORD and element is None:
                # StepInfo stepinfo[8], fcomplex e[3][3]: each element's own lanes (e[0][1].real)
                size = t.get_size()
                for k, place in enumerate(places):
                    inner = _record_lanes(t, name + "".join(f"[{i}]" for i in place) + ".", at + k * size)
                    if inner is None or size <= 0 or len(out) + len(inner) > RECORD_LANES:
                        return None
                    out += inner
                continue
            if isinstance(element, m.Vector) and not element.lane_dtypes and element.dtype in dtypes.SIZES:
                size = dtypes.SIZES[element.dtype]  # float2 uv[4]: uv[0].x, uv[0].y, uv[1].x, ...
                out += [(name + "".join(f"[{i}]" for i in place) + f".{lane}", element.dtype,
                         at + (k * element.lanes + j) * size)
                        for k, place in enumerate(places)
                        for j, lane in enumerate(element.fields or lanewise.LANES[:element.lanes])]
                if len(out) > RECORD_LANES:
                    return None
                continue
            if not isinstance(element, m.Scalar) or element.dtype not in dtypes.SIZES:
                return None
            size = dtypes.SIZES[element.dtype]
            out += [(name + "".join(f"[{i}]" for i in place), element.dtype, at + k * size)
                    for k, place in enumerate(places)]
            continue
        named = _named_type(_bare(t.spelling))
        if isinstance(named, m.Scalar) and named.dtype in dtypes.SIZES:
            out.append((name, named.dtype, at))
        elif isinstance(named, m.Vector) and named.dtype in dtypes.SIZES:
            size = dtypes.SIZES[named.dtype]
            out += [(f"{name}.{lane}", named.dtype, at + i * size) for i, lane in enumerate(lanewise.LANES[:named.lanes])]
        elif t.kind == T.RECORD:
            inner = _record_lanes(t, f"{name}.", at)
            if inner is None:
                return None
            out += inner
        else:
            return None
        if len(out) > RECORD_LANES:
            return None
    return out


def _record(ctype: ci.Type, spelling: str) -> m.Vector | None:
    """A plain struct of fields of several scalar types (``{float K; int width; ...}``, ``{size_t
    pos; float val;}``) as a record: a vector whose lanes have their own dtypes, held in memory as
    words of its widest field's size (a narrower field is part of a word); None where the fields
    are not all scalars of 1, 2, 4 or 8 bytes (half types aside) or the layout is not whole words."""
    lanes = _record_lanes(ctype)
    if not lanes or any(dt in ("float16", "bfloat16") for _n, dt, _o in lanes):
        return None
    width = max(dtypes.SIZES[dt] for _n, dt, _o in lanes)
    size = ctype.get_size()
    if width not in (1, 2, 4, 8) or size <= 0 or size % width:
        return None
    wide = [dt for _n, dt, _o in lanes if dtypes.SIZES[dt] == width]
    storage = max(wide, key=lambda dt: (wide.count(dt), -wide.index(dt)))
    slots = []
    for _n, dt, off in lanes:
        if off // width != (off + dtypes.SIZES[dt] - 1) // width:
            return None  # a field across two words (packed structs)
        slots.append((off // width, off % width))
    return m.Vector(spelling, storage, len(lanes), tuple(n for n, _d, _o in lanes),
                    tuple(dt for _n, dt, _o in lanes), tuple(slots), size // width, _initialised(ctype))


def _union(ctype: ci.Type, spelling: str) -> m.Vector | None:
    """A union of the project's whose members are scalars of one size (``union {float f;
    unsigned int ui;}``, read as the bits of the other) as a record of one word, every lane in
    it at byte 0; None for any other union."""
    decl = ctype.get_declaration()
    if decl is None or decl.kind != K.UNION_DECL or \
            cl.is_prelude_file(decl.location.file.name if decl.location.file else None):
        return None
    kids = list(decl.get_children())
    if not kids:  # a struct template's implicit instance (block_record<float>): its fields by its
        # type, what it declares beside them by its template; a template of values too (Subg<nCap>)
        # is left: its methods' bodies, taken from the template, would name the value unresolved
        template = cl.specialized_template(decl)
        pattern = list(template.get_children()) if template is not None else []
        kids = [k for k in pattern if k.kind not in (K.TEMPLATE_TYPE_PARAMETER, K.FIELD_DECL)] \
            + list(ctype.get_fields()) if pattern else []
    fields = [k for k in kids if k.kind == K.FIELD_DECL]
    if not fields or any(k.kind not in _BESIDE_FIELDS and k.kind != K.FIELD_DECL for k in kids) \
            or any(k.is_bitfield() for k in fields):
        return None
    types = [_named_type(_bare(k.type.get_canonical().spelling)) for k in fields]
    if not all(isinstance(t, m.Scalar) and t.dtype in dtypes.SIZES and t.dtype not in ("float16", "bfloat16", "bool")
               for t in types) or {dtypes.SIZES[t.dtype] for t in types} != {ctype.get_size()}:
        return None
    return m.Vector(spelling, types[0].dtype, len(fields), tuple(k.spelling for k in fields),
                    tuple(t.dtype for t in types), ((0, 0),) * len(fields), 1, _initialised(ctype))


#: the most fields a struct of pointers may have (each is a parameter of the kernel that takes it)
POINTER_FIELDS = 64


def _struct_record(ctype, spelling: str) -> m.Record:
    """A struct of the project's: laid out where it is plain data (parse.record_layouts), with
    its members where it holds pointers (:func:`_pointer_fields`), its size in bytes otherwise."""
    record = laid_out_record(ctype, spelling) or m.Record(spelling)
    members = _pointer_fields(ctype)
    if not record.size and ctype.get_size() > 0:  # its bytes, for the hybrid form
        record = dataclasses.replace(record, bytes=ctype.get_size())
    return dataclasses.replace(record, members=members) if members else record


def _pointer_fields(ctype: ci.Type, prefix: str = "", base: int = 0) -> tuple | None:
    """The fields of a plain struct (:func:`_plain_fields`) that holds pointers to numbers beside
    numbers (``struct cartesian {double *x, *y, *z; int *jk;}``, lbm's ``{lbm_u u; double *f0;
    ...}``), nested structs' fields by their path (``u.u0``): (name, type, byte offset) in memory
    order; None where a field is anything else (an array, a pointer to a struct or to a pointer)
    or the struct holds no pointer."""
    kids = _plain_fields(ctype)
    if kids is None:
        return None
    out = []
    for k in kids:
        offset = ctype.get_offset(k.spelling)
        if offset is None or offset < 0 or offset % 8:
            return None
        at, t, name = base + offset // 8, k.type.get_canonical(), f"{prefix}{k.spelling}"
        if t.kind == T.POINTER:
            pointee = _named_type(_bare(t.get_pointee().get_canonical().spelling))
            if not isinstance(pointee, m.Scalar) or pointee.dtype not in dtypes.SIZES:
                return None
            out.append((name, m.Pointer(pointee, t.get_pointee().is_const_qualified()), at))
        elif t.kind == T.RECORD:
            inner = _pointer_fields(t, f"{name}.", at) if _plain_fields(t) is not None else None
            if inner is None:
                lanes = _record_lanes(t, f"{name}.", at)  # a struct of numbers inside: its lanes
                if lanes is None:
                    return None
                inner = tuple((n, m.Scalar(dt), o) for n, dt, o in lanes)
            out += inner
        else:
            named = _named_type(_bare(t.spelling))
            if t.kind == T.ENUM:
                named = m.Scalar("int32")
            if not isinstance(named, m.Scalar) or named.dtype not in dtypes.SIZES:
                return None
            out.append((name, named, at))
        if len(out) > POINTER_FIELDS:
            return None
    if prefix == "" and not any(isinstance(t, m.Pointer) for _n, t, _o in out):
        return None
    return tuple(out)


def _nested_lanes(ctype: ci.Type) -> m.Vector | None:
    """A struct field's type when it is itself a plain struct of one scalar type (its lanes)."""
    canonical = ctype.get_canonical()
    if canonical.kind != T.RECORD:
        return None
    return _lane_struct(canonical, _bare(canonical.spelling))


def _dependent_member(target: ci.Cursor) -> str:
    """The member a call names in a template (``BlockReduce(temp).Sum(v)`` with T unknown: clang's
    cursor leaves it unnamed): the identifier after the last ``.`` or ``->`` of its tokens."""
    tokens = [t.spelling for t in target.get_tokens()]
    for i in range(len(tokens) - 2, -1, -1):
        if tokens[i] in (".", "->") and re.match(r"^[A-Za-z_]\w*$", tokens[i + 1]):
            return tokens[i + 1]
    return ""


def _bare(spelling: str) -> str:
    for word in ("const ", "volatile ", "struct ", "class ", "__restrict", "restrict "):
        spelling = spelling.replace(word, "")
    return spelling.strip()


def _named_type(spelling: str) -> m.CType | None:
    name = spelling.removeprefix("::")
    if name in m.SCALAR_DTYPES:
        return m.Scalar(m.SCALAR_DTYPES[name])
    if name in dtypes.TEMPLATE_SPELLINGS:  # typedefs: half, size_t, int32_t, ...
        return m.Scalar(dtypes.TEMPLATE_SPELLINGS[name])
    name = dtypes.VECTOR_ALIASES.get(name, name)
    if name in m.VECTOR_TYPES:
        dtype, lanes = m.VECTOR_TYPES[name]
        return m.Vector(name, dtype, lanes)
    if name == "dim3":  # three unsigned lanes, each 1 unless constructed with its value
        return m.Vector(name, "uint32", 3, initialised=True)
    return None


_METHODS: dict = {}  # (builder class, prefix, cursor kind id) -> the name of its visit function, or None
_UNSET = object()


class ModelBuilder:
    """Builds the model of one function; collects diagnostics into ``bag``."""

    def __init__(self, bag: DiagnosticBag, text: SourceText, user_functions: dict[str, ci.Cursor],
                 template_names: frozenset[str] = frozenset(), overloads: dict | None = None,
                 model_names: dict[str, str] | None = None, this_type: m.CType | None = None,
                 device_specialisations: dict[str, tuple] | None = None) -> None:
        self.bag = bag
        # model name -> (declaration, C++ text) of each specialisation of a device variable template
        # the unit's functions read (``mask<double>``: parse.var_templates), shared with the unit,
        # which models each as a global of its own; None where none is modelled
        self.device_specialisations = device_specialisations
        self.text = text
        self.user_functions = user_functions
        # USR -> model name of the unit's functions named apart (overloads, methods): shared with
        # the unit, which models each function a call reaches under that name
        self.model_names = model_names if model_names is not None else {}
        # in a method of a struct: the struct's type, which ``this_`` (its first parameter) refers to
        self.this_type = this_type
        self.template_names = template_names
        # name -> ((USR, model name, parameter count), ...) of user functions defined more than once
        self.overloads = overloads or {}
        self.called: list[str] = []
        self.deduced: dict[int, m.CType] = {}  # a template's auto local (by its cursor's hash) -> type
        self._types: dict[tuple, m.CType] = {}  # clang type -> model type (type_of)
        # the local lambdas defined so far (parse.lambdas): the variable's USR -> (model name, captures)
        self.lambdas: dict[str, tuple[str, list]] = {}
        # in a lambda's body: the USRs of the variables it captures, which are its parameters
        self.captured: set[str] = set()
        # in a lambda's body: the closure copies of the lambdas it calls that it takes (parse.lambdas)
        self.captured_copies: set[str] = set()

    # -- helpers ----------------------------------------------------------------------------
    def type_of(self, cursor: ci.Cursor) -> m.CType:
        t = cursor.type
        # a clang type is its kind and two pointers into its unit, which this builder's unit
        # holds while it runs: the same three name the same type (most expressions share a few)
        key = (t._kind_id, t.data[0], t.data[1])
        known = self._types.get(key)
        if known is None:
            known = self._types[key] = convert_type(t, self.template_names)
        return known

    def unsupported_stmt(self, cursor: ci.Cursor, code: str, what: str) -> m.UnsupportedStmt:
        span = span_of(cursor)
        self.bag.add(code, span, what)
        return m.UnsupportedStmt(what, self.text.of(cursor)[:200], span)

    def unsupported_expr(self, cursor: ci.Cursor, code: str, what: str) -> m.UnsupportedExpr:
        span = span_of(cursor)
        self.bag.add(code, span, what)
        return m.UnsupportedExpr(what, self.text.of(cursor)[:200], self.type_of(cursor), span)

    @classmethod
    def _method(cls, prefix: str, cursor: ci.Cursor):
        """The builder's ``<prefix><KIND>`` function for the cursor's kind, or None: whether there is
        one is found once per kind (a failed ``getattr`` costs more than the rest of a small
        expression's visit); the function itself is looked up by name each time, so that one
        replaced on the class (a test's monkeypatch) is the one called, and only while replaced."""
        key = (cls, prefix, cursor._kind_id)
        name = _METHODS.get(key, _UNSET)
        if name is _UNSET:
            name = f"{prefix}{cursor.kind.name}"
            name = _METHODS[key] = name if hasattr(cls, name) else None
        return None if name is None else getattr(cls, name)

    # -- statements -------------------------------------------------------------------------
    def stmt(self, cursor: ci.Cursor) -> m.Stmt:
        visit = self._method("visit_", cursor)
        if visit is not None:
            return visit(self, cursor)
        if cursor.kind.is_expression():
            return m.ExprStmt(self.expr(cursor), span_of(cursor))
        name = cursor.kind.name.lower().replace("_", " ")
        return self.unsupported_stmt(cursor, "M1206", f"statement kind '{name}' is not modelled")

    def block(self, cursor: ci.Cursor) -> m.Block:
        return m.Block(tuple(self.stmt(c) for c in cursor.get_children()), span_of(cursor))

    visit_COMPOUND_STMT = block

    def visit_DECL_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        decls = []
        for child in cursor.get_children():
            if child.kind == K.VAR_DECL and lambdas.lambda_of(child) is not None:
                copies = self._define_lambda(child, lambdas.lambda_of(child))
                if isinstance(copies, m.UnsupportedStmt):
                    return copies
                decls.extend(copies)
            elif child.kind == K.VAR_DECL:
                decls.append(self.var_decl(child))
            elif child.kind in (K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL, K.TYPE_ALIAS_TEMPLATE_DECL):
                # a local name for a type (using vec_t = uint4;): its uses carry the type itself
                continue
            elif child.kind in (K.STRUCT_DECL, K.CLASS_DECL, K.UNION_DECL, K.ENUM_DECL):
                continue  # a local type: its uses carry the type itself, as one of namespace scope
            elif child.kind == K.STATIC_ASSERT:
                continue
        return m.DeclStmt(tuple(decls), span_of(cursor))

    def _define_lambda(self, var: ci.Cursor, lam: ci.Cursor) -> list[m.VarDecl] | m.UnsupportedStmt:
        """Registers the lambda ``lam`` that initialises the local ``var`` as a device function of the
        unit (parse.lambdas); the copies its by-value captures hold, as locals declared here."""
        found = lambdas.captures(lam)
        if isinstance(found, str):
            return self.unsupported_stmt(lam, "M1206", found)
        copies = []
        for capture in found:
            if capture.by_ref:
                continue
            ctype = convert_type(capture.var.type, self.template_names)
            if isinstance(ctype, m.Array):
                return self.unsupported_stmt(lam, "M1206", f"a lambda capturing the array '{capture.name}' by "
                                                           "value is not modelled")
            source = self._captured_ref(capture, ctype, span_of(var))
            copies.append(m.VarDecl(lambdas.copy_name(var.spelling, capture.name), ctype, "local", False,
                                    source, span_of(var)))
        parent = var.semantic_parent
        base = re.sub(r"\W+", "_", f"{parent.spelling if parent is not None else ''}_{var.spelling}").strip("_")
        name, n = base, 1
        while name in self.user_functions and self.user_functions[name] != lam:
            n += 1
            name = f"{base}_{n}"
        self.user_functions[name] = lam
        self.model_names[lambdas.key(lam)] = name
        self.lambdas[var.get_usr()] = (name, found)
        return copies

    def _captured_ref(self, capture, ctype: m.CType, span: Span) -> m.Ref:
        """The enclosing function's own variable a capture names."""
        var = capture.var
        if capture.copy:  # the copy g__x a lambda g holds, declared where g is written
            return m.Ref(capture.name, "param" if capture.name in self.captured_copies else "local", ctype, span)
        kind = "param" if var.kind == K.PARM_DECL or var.get_usr() in self.captured else _var_kind(var)
        return m.Ref(capture.name, kind, ctype, span)

    def _lambda_call(self, cursor: ci.Cursor, kids: list[ci.Cursor]) -> m.Expr | None:
        """``f(args)`` of a local lambda ``f``: the call of its device function with the captured
        variables (or their copies) after the arguments; None for any other call."""
        if cursor.spelling != "operator()" or not kids:
            return None
        obj = kids[0]
        while obj.kind == K.UNEXPOSED_EXPR and len(list(obj.get_children())) == 1:
            obj = next(obj.get_children())
        if obj.kind != K.DECL_REF_EXPR or obj.referenced is None:
            return None
        var = obj.referenced
        outer = None
        if var.get_usr() not in self.lambdas:
            # a lambda of the enclosing function that this lambda captures: its captures are this
            # lambda's parameters (parse.lambdas), its by-value copies under their own names
            outer = lambdas.lambda_name(var, self.model_names) if self.captured or self.captured_copies else None
            found = lambdas.captures(lambdas.lambda_of(var)) if outer is not None else None
            if outer is None or isinstance(found, str):
                return None
            name = outer
        else:
            name, found = self.lambdas[var.get_usr()]
        span = span_of(cursor)
        args = tuple(self.expr(a) for a in kids[2:] if not _is_default_arg(a))
        for capture in found:
            ctype = convert_type(capture.var.type, self.template_names)
            if outer is not None:
                args += (m.Ref(capture.name if capture.by_ref else lambdas.copy_name(var.spelling, capture.name),
                               "param", ctype, span),)
            elif capture.by_ref:
                args += (self._captured_ref(capture, ctype, span),)
            else:
                args += (m.Ref(lambdas.copy_name(var.spelling, capture.name), "local", ctype, span),)
        self.called.append(name)
        return m.Call(name, args, "device", (), self.type_of(cursor), span)

    def var_decl(self, cursor: ci.Cursor) -> m.VarDecl:
        attrs = {c.kind for c in cursor.get_children()}
        ctype = self.type_of(cursor)
        if K.CUDASHARED_ATTR in attrs:
            storage = "extern_shared" if cursor.storage_class == ci.StorageClass.EXTERN else "shared"
        elif K.CUDACONSTANT_ATTR in attrs:
            storage = "constant"
        elif cursor.storage_class == ci.StorageClass.STATIC:
            storage = "static"
        else:
            storage = "local"
        if _TEXTURE_TYPE.search(cursor.type.spelling):
            self.bag.add("M1202", span_of(cursor), f"variable '{cursor.spelling}' is a texture/surface object")
        init = None
        exprs = [c for c in cursor.get_children() if c.kind.is_expression()]
        if exprs and isinstance(ctype, m.Array) and exprs[-1].kind != K.INIT_LIST_EXPR and _has_initialiser(cursor):
            # char s[] = "ABC": its bytes (the other expression an array's declaration holds is its size)
            init = _string_init(exprs[-1], ctype, span_of(cursor))
            if init is None and any(n.kind == K.STRING_LITERAL for n in exprs[-1].walk_preorder()):
                self.bag.add("M1206", span_of(cursor), f"initialiser of the array '{cursor.spelling}' "
                                                       "(a string literal of other characters) is not modelled")
        elif exprs and not isinstance(ctype, m.Array) or (exprs and exprs[-1].kind == K.INIT_LIST_EXPR):
            init = self.expr(exprs[-1])
            if _undeduced(ctype):  # auto in a template (auto v = x + off on a T* x): the value's type
                ctype = _value_type(init) or ctype
                self.deduced[cursor.hash] = ctype
        return m.VarDecl(cursor.spelling, ctype, storage, cursor.type.is_const_qualified(), init,
                         span_of(cursor))

    def visit_IF_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = list(cursor.get_children())
        if kids and kids[0].kind == K.VAR_DECL:  # if (T x = e) A else B: {T x = e; if (x) A else B}
            decl, test = self._condition_declaration(kids[0])
            if isinstance(decl, m.UnsupportedStmt):
                return decl
            other = self.stmt(kids[-1]) if len(kids) > 3 else None
            then = self.stmt(kids[2]) if len(kids) > 2 else m.Block((), span_of(cursor))
            return m.Block((decl, m.If(test, then, other, span_of(cursor))), span_of(cursor))
        cond = self.expr(kids[0])
        then = self.stmt(kids[1])
        other = self.stmt(kids[2]) if len(kids) > 2 else None
        return m.If(cond, then, other, span_of(cursor))

    def visit_FOR_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = list(cursor.get_children())
        body = kids[-1]
        init = cond = step = None
        semis = self._for_header_semicolons(cursor)
        header = kids[:-1]
        offsets = [c.extent.start.offset for c in header]
        if semis is None or len(set(offsets)) < len(offsets) or not all(
                semis[2] < offset < semis[3] for offset in offsets):
            # a loop written by a macro (CUDA_KERNEL_LOOP(i, n)): its parts all start at the macro's
            # name, so they are told apart by what they are
            parts = _for_parts(header)
            if parts is None:
                return self.unsupported_stmt(cursor, "M1206", "a 'for' loop written by a macro whose header parts "
                                                              "cannot be told apart")
            init = self.stmt(parts[0]) if parts[0] is not None else None
            cond = self.expr(parts[1]) if parts[1] is not None else None
            step = self.expr(parts[2]) if parts[2] is not None else None
            header = ()
        for child in header:
            offset = child.extent.start.offset
            if offset < semis[0]:
                init = self.stmt(child)
            elif offset < semis[1]:
                cond = self.expr(child)
            else:
                step = self.expr(child)
        pragmas = self._pragmas_before(cursor)
        return m.For(init, cond, step, self.stmt(body), pragmas, span_of(cursor))

    def _for_header_semicolons(self, cursor: ci.Cursor) -> tuple[int, int, int, int] | None:
        """The offsets of a ``for`` header's two semicolons and of its parentheses."""
        depth, semis, parens = 0, [], []
        for token in cursor.get_tokens():
            spelling = token.spelling
            if spelling == "(":
                depth += 1
                if depth == 1:
                    parens.append(token.extent.start.offset)
            elif spelling == ")":
                depth -= 1
                if depth == 0:
                    parens.append(token.extent.start.offset)
                    break
            elif spelling == ";" and depth == 1:
                semis.append(token.extent.start.offset)
        return (semis[0], semis[1], parens[0], parens[1]) if len(semis) >= 2 and len(parens) == 2 else None

    def _pragmas_before(self, cursor: ci.Cursor) -> tuple[str, ...]:
        loc = cursor.extent.start
        if not loc.file:
            return ()
        pragmas = []
        line = loc.line - 1
        while line > 0:
            text = self.text.line(loc.file.name, line).strip()
            match = re.match(r"#\s*pragma\s+(unroll(?:\s*\(?\s*\w+\s*\)?)?|nounroll)", text)
            if not match:
                break
            pragmas.append(re.sub(r"[()]", " ", match.group(1)).split() and
                           " ".join(re.sub(r"[()]", " ", match.group(1)).split()))
            line -= 1
        return tuple(reversed(pragmas))

    def visit_WHILE_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = list(cursor.get_children())
        if kids[0].kind == K.VAR_DECL:
            # while (T x = e) S: while (true) {T x = e; if (!x) break; S}, x declared afresh each round
            decl, test = self._condition_declaration(kids[0])
            if isinstance(decl, m.UnsupportedStmt):
                return decl
            span = span_of(cursor)
            body = self.stmt(kids[-1]) if len(kids) > 2 else m.Block((), span)
            stop = m.If(m.Unary("!", test, False, m.Scalar("bool"), test.span), m.Break(span), None, span)
            return m.While(m.BoolLit(True, m.Scalar("bool"), span), m.Block((decl, stop, body), span), span)
        return m.While(self.expr(kids[0]), self.stmt(kids[1]), span_of(cursor))

    def _condition_declaration(self, var: ci.Cursor):
        """The declaration of an ``if``/``while`` condition (``while (auto w = __ballot_sync(...))``)
        as a statement, and the test of its variable (its value converted to bool, as C++ does)."""
        if lambdas.lambda_of(var) is not None:
            return self.unsupported_stmt(var, "M1206", "a lambda declared in a condition is not modelled"), None
        d = self.var_decl(var)
        return m.DeclStmt((d,), span_of(var)), m.Ref(d.name, "local", d.type, span_of(var))

    def visit_DO_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        body, cond = list(cursor.get_children())
        return m.DoWhile(self.stmt(body), self.expr(cond), span_of(cursor))

    def visit_SWITCH_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = list(cursor.get_children())
        return m.Switch(self.expr(kids[0]), self.stmt(kids[-1]), span_of(cursor))

    def visit_CASE_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = list(cursor.get_children())
        return m.Case(self.expr(kids[0]), self.stmt(kids[-1]), span_of(cursor))

    def visit_DEFAULT_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = list(cursor.get_children())
        return m.Case(None, self.stmt(kids[-1]), span_of(cursor))

    def visit_BREAK_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        return m.Break(span_of(cursor))

    def visit_CONTINUE_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        return m.Continue(span_of(cursor))

    def visit_RETURN_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = list(cursor.get_children())
        return m.Return(self.expr(kids[0]) if kids else None, span_of(cursor))

    def visit_NULL_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        return m.Empty(span_of(cursor))

    def visit_GOTO_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        return self.unsupported_stmt(cursor, "M1205", "goto is not supported")

    visit_INDIRECT_GOTO_STMT = visit_GOTO_STMT

    def visit_LABEL_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        return self.unsupported_stmt(cursor, "M1205", f"label '{cursor.spelling}' (goto target) is not supported")

    def visit_ASM_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        # one instruction that is an expression of its operands (lop3.b32): that expression
        asm = inline_ptx.asm_text([t.spelling for t in cursor.get_tokens()])
        if asm is not None:
            operands = [c for c in cursor.get_children() if c.kind.is_expression()]
            if len(operands) == len(asm.outputs) + len(asm.inputs):
                outputs = [self.expr(c) for c in operands[:len(asm.outputs)]]
                inputs = [self.expr(c) for c in operands[len(asm.outputs):]]
                read = inline_ptx.lowered(asm, outputs, inputs, span_of(cursor))
                if read is not None:
                    return read
        return self.unsupported_stmt(cursor, "M1201", "inline PTX assembly (asm statement)")

    visit_GCC_ASM_STMT = visit_ASM_STMT
    visit_MS_ASM_STMT = visit_ASM_STMT

    def visit_ATTRIBUTED_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = [c for c in cursor.get_children() if not c.kind.is_attribute()]
        return self.stmt(kids[-1]) if kids else m.Empty(span_of(cursor))

    def visit_UNEXPOSED_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        kids = [c for c in cursor.get_children() if not c.kind.is_attribute()]
        if len(kids) == 1 and (kids[0].kind.is_statement() or kids[0].kind.is_expression()):
            return self.stmt(kids[0])
        return self.unsupported_stmt(cursor, "M1206", "statement is not modelled")

    def visit_CXX_TRY_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        return self.unsupported_stmt(cursor, "M1206", "exceptions (try/catch) are not supported in device code")

    def visit_CXX_FOR_RANGE_STMT(self, cursor: ci.Cursor) -> m.Stmt:
        return self.unsupported_stmt(cursor, "M1206", "range-based for loop is not modelled")

    # -- expressions ------------------------------------------------------------------------
    def expr(self, cursor: ci.Cursor) -> m.Expr:
        visit = self._method("expr_", cursor)
        if visit is not None:
            return visit(self, cursor)
        name = cursor.kind.name.lower().replace("_", " ")
        return self.unsupported_expr(cursor, "M1206", f"expression kind '{name}' is not modelled")

    def expr_PAREN_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        return self.expr(next(cursor.get_children()))

    def expr_StmtExpr(self, cursor: ci.Cursor) -> m.Expr:  # libclang names the kind so
        """A GNU statement expression of the kind ``min``/``max`` macros are written as (``({
        __typeof__(a) _a = (a); __typeof__(b) _b = (b); _a > _b ? _a : _b; })``): locals each
        given a value that has no effect, then the value, which is that value with each local's
        own in its place (the macro's operands are evaluated once in C; having no effect, twice
        is the same). Anything else is refused."""
        kids = list(cursor.get_children())
        body = self.block(kids[0]) if len(kids) == 1 and kids[0].kind == K.COMPOUND_STMT else None
        stmts = list(body.stmts) if body is not None else []
        if not stmts or not isinstance(stmts[-1], m.ExprStmt):
            return self.unsupported_expr(cursor, "M1206", "statement expression other than locals and a value")
        values: dict[str, m.Expr] = {}
        for st in stmts[:-1]:
            decls = st.decls if isinstance(st, m.DeclStmt) else ()
            if not decls or any(d.init is None or not isinstance(d.type, m.Scalar) or not pure(d.init, math=False)
                                for d in decls):
                return self.unsupported_expr(cursor, "M1206", "statement expression other than locals and a value")
            for d in decls:
                init = _substituted(d.init, values)
                values[d.name] = init if init.type == d.type else m.Cast(d.type, init, "implicit", d.type, d.span)
        value = stmts[-1].expr
        if not pure(value, math=False):
            return self.unsupported_expr(cursor, "M1206", "statement expression other than locals and a value")
        return _substituted(value, values)

    def expr_UNEXPOSED_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        kids = list(cursor.get_children())
        if len(kids) == 1:
            inner = self.expr(kids[0])
            outer_type = self.type_of(cursor)
            if _is_value_conversion(inner.type, outer_type):
                return m.Cast(outer_type, inner, "implicit", outer_type, span_of(cursor))
            return inner
        if not kids:
            value = cl.evaluate(cursor)
            if isinstance(value, int):
                return m.IntLit(value, str(value), self.type_of(cursor), span_of(cursor))
            if isinstance(value, float):
                return m.FloatLit(value, repr(value), self.type_of(cursor), span_of(cursor))
        # Dependent calls in templates (``f<T>(x)`` before instantiation) come out unexposed.
        if kids and kids[0].kind in (K.OVERLOADED_DECL_REF, K.DECL_REF_EXPR, K.UNEXPOSED_EXPR,
                                     K.MEMBER_REF_EXPR):
            return self.call_like(cursor, kids)
        return self.unsupported_expr(cursor, "M1206", "expression is not modelled")

    def expr_INTEGER_LITERAL(self, cursor: ci.Cursor) -> m.Expr:
        value = cl.evaluate(cursor)
        text = self.text.of(cursor)
        return m.IntLit(int(value) if value is not None else 0, text, self.type_of(cursor), span_of(cursor))

    def expr_FLOATING_LITERAL(self, cursor: ci.Cursor) -> m.Expr:
        value = cl.evaluate(cursor)
        text = self.text.of(cursor)
        return m.FloatLit(float(value) if value is not None else float("nan"), text,
                          self.type_of(cursor), span_of(cursor))

    def expr_CXX_BOOL_LITERAL_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        return m.BoolLit(self.text.of(cursor).strip() == "true", m.Scalar("bool"), span_of(cursor))

    def expr_CHARACTER_LITERAL(self, cursor: ci.Cursor) -> m.Expr:
        value = cl.evaluate(cursor)
        return m.IntLit(int(value or 0), self.text.of(cursor), m.Scalar("int8"), span_of(cursor))

    def expr_CXX_NULL_PTR_LITERAL_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        return m.IntLit(0, "nullptr", self.type_of(cursor), span_of(cursor))

    def expr_GNU_NULL_EXPR(self, cursor: ci.Cursor) -> m.Expr:  # NULL from <stddef.h>
        return m.IntLit(0, "NULL", self.type_of(cursor), span_of(cursor))

    def expr_STRING_LITERAL(self, cursor: ci.Cursor) -> m.Expr:
        return m.StringLit(cursor.spelling, self.type_of(cursor), span_of(cursor))

    def expr_DECL_REF_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        ref = cursor.referenced
        span = span_of(cursor)
        ctype = self.type_of(cursor)
        if ref is None:
            if cursor.spelling in self.template_names:
                return m.Ref(cursor.spelling, "template", ctype, span)
            return self.unsupported_expr(cursor, "M1206", f"unresolved name '{cursor.spelling}'")
        name = ref.spelling
        if ref.kind == K.VAR_DECL and name in BUILTIN_VARS and cl.is_prelude_file(
                ref.location.file.name if ref.location.file else None):
            return m.Builtin(name, None, ctype, span)
        # (a USR is three libclang calls: asked only in a lambda, or where the function defines one)
        if ref.kind == K.PARM_DECL or ref.kind == K.VAR_DECL and self.captured and ref.get_usr() in self.captured:
            return m.Ref(name, "param", ctype, span)
        if ref.kind == K.VAR_DECL and self.lambdas and ref.get_usr() in self.lambdas:
            return self.unsupported_expr(cursor, "M1206", f"the lambda '{name}' used other than by calling it "
                                                          "is not modelled")
        if ref.kind == K.VAR_DECL:
            kind = _var_kind(ref)
            if _undeduced(ctype):
                ctype = self.deduced.get(ref.hash, ctype)
            if kind == "host":  # a host constant (const int TPB = 256; constexpr float PI = ...): its value
                value = _host_constant(ref)
                member = ref.semantic_parent is not None and ref.semantic_parent.kind not in (
                    K.TRANSLATION_UNIT, K.NAMESPACE)
                if value is None and member:  # a static member of a template's instance: the reference's value
                    value = cl.evaluate(cursor)
                if value is None and member:
                    return self.unsupported_expr(cursor, "M1206", f"static member '{self.text.of(cursor)}' "
                                                 "has no value the tool can read")
                if isinstance(value, bool) or (isinstance(value, int) and isinstance(ctype, m.Scalar)
                                               and ctype.dtype == "bool"):
                    return m.BoolLit(bool(value), ctype, span)
                if isinstance(value, int):
                    return m.IntLit(value, str(value), ctype, span)
                if isinstance(value, float):
                    return m.FloatLit(value, repr(value), ctype, span)
            return m.Ref(name, kind, ctype, span)
        if ref.kind == K.ENUM_CONSTANT_DECL:
            return m.IntLit(ref.enum_value, name, m.Scalar("int32"), span)
        if ref.kind == K.TEMPLATE_NON_TYPE_PARAMETER:
            return m.Ref(name, "template", ctype, span)
        if ref.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD):
            return m.Ref(qualified_name(ref), "function", ctype, span)
        if self.device_specialisations is not None and var_templates.device_specialisation(ref):
            # ``mask<double>[j]`` in an instance's copy of a kernel (``template <typename T>
            # __constant__ T mask[10];``): the instance's own global
            written = self.text.of(cursor)
            name = var_templates.specialisation_name(ref.spelling, written)
            known, _ = self.device_specialisations.setdefault(name, (ref, written))
            if known.get_usr() != ref.get_usr():
                return self.unsupported_expr(cursor, "M1206", f"two specialisations of the variable template "
                                                              f"'{ref.spelling}' are both named '{name}'")
            return m.Ref(name, _var_kind(ref), convert_type(ref.type, self.template_names), span)
        if ref.kind == K.UNEXPOSED_DECL and isinstance(ctype, m.Scalar):
            # a constexpr variable template (HASHTABLE_EMPTY_VALUE<uint64, uint32>): its value
            value = cl.evaluate(cursor)
            if isinstance(value, int):
                return m.BoolLit(bool(value), ctype, span) if ctype.dtype == "bool" else \
                    m.IntLit(value, self.text.of(cursor), ctype, span)
            if isinstance(value, float):
                return m.FloatLit(value, self.text.of(cursor), ctype, span)
        if ref.kind == K.OVERLOADED_DECL_REF:
            decls = cl.overloaded_decls(ref)
            if decls and all(d.kind == K.UNEXPOSED_DECL for d in decls):
                # a variable template on the template's types (HASHTABLE_EMPTY_KEY<KeyT, ValueT> in a
                # device function template): each instance's value is clang's (parse.var_templates)
                return m.Call(qualified_name(decls[0]), (), "var_template",
                              explicit_template_args(cursor, self.text), ctype, span)
        return self.unsupported_expr(cursor, "M1206", f"reference to a {ref.kind.name.lower()} is not modelled")

    def expr_MEMBER_REF_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        kids = list(cursor.get_children())
        span = span_of(cursor)
        field = cursor.referenced
        if field is not None and field.kind == K.FIELD_DECL and (
                _anonymous_record(field) is not None or field.semantic_parent is not None
                and field.semantic_parent.kind in (K.STRUCT_DECL, K.UNION_DECL) and field.semantic_parent.is_anonymous()):
            return self._anonymous_member(cursor, kids, span)
        if not kids or kids[0].kind == K.CXX_THIS_EXPR:  # a field in a method: this_.field
            if self.this_type is None:
                return self.unsupported_expr(cursor, "M1206", f"implicit member access '{cursor.spelling}'")
            return m.Member(self._this(span), cursor.spelling, False, self.type_of(cursor), span)
        base = self.expr(kids[0])
        if isinstance(base, m.Builtin) and base.dim is None and base.var != "warpSize":
            return m.Builtin(base.var, cursor.spelling, m.Scalar("uint32"), span)
        arrow = isinstance(base.type, m.Pointer)
        return m.Member(base, cursor.spelling, arrow, self.type_of(cursor), span)

    def expr_ARRAY_SUBSCRIPT_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        base, index = list(cursor.get_children())
        return m.Index(self.expr(base), self.expr(index), self.type_of(cursor), span_of(cursor))

    def expr_UNARY_OPERATOR(self, cursor: ci.Cursor) -> m.Expr:
        op, postfix = cl.unary_op(cursor)
        operand = next(cursor.get_children())
        if not op:
            return self.unsupported_expr(cursor, "M1206", "unary operator is not modelled")
        if op == "*" and operand.kind == K.CXX_THIS_EXPR and self.this_type is not None:
            return self._this(span_of(cursor))  # *this in a method: the object (this_, a reference)
        return m.Unary(op, self.expr(operand), postfix, self.type_of(cursor), span_of(cursor))

    def expr_BINARY_OPERATOR(self, cursor: ci.Cursor) -> m.Expr:
        lhs, rhs = list(cursor.get_children())
        op = cl.binary_op(cursor)
        span = span_of(cursor)
        if op == "=":
            return m.Assign("=", self.expr(lhs), self.expr(rhs), self.type_of(cursor), span)
        return m.Binary(op, self.expr(lhs), self.expr(rhs), self.type_of(cursor), span)

    def expr_COMPOUND_ASSIGNMENT_OPERATOR(self, cursor: ci.Cursor) -> m.Expr:
        lhs, rhs = list(cursor.get_children())
        return m.Assign(cl.binary_op(cursor), self.expr(lhs), self.expr(rhs), self.type_of(cursor),
                        span_of(cursor))

    def expr_CONDITIONAL_OPERATOR(self, cursor: ci.Cursor) -> m.Expr:
        cond, then, other = list(cursor.get_children())
        return m.Ternary(self.expr(cond), self.expr(then), self.expr(other), self.type_of(cursor),
                         span_of(cursor))

    def _constructed(self, ctor: ci.Cursor | None, args: tuple, ctype: m.CType, span: Span) -> m.Call | None:
        """``Position(x, y)``, ``Local l(p)`` with the project's own constructor (``ctor``, its
        definition) on a struct modelled as lanes: a call of the constructor, modelled as a method
        that fills its object (analysis.prepare.constructors); None for any other construction."""
        if not isinstance(ctype, m.Vector) or ctor is None or ctor.kind != K.CONSTRUCTOR \
                or ctor.location.file is None or cl.is_prelude_file(ctor.location.file.name):
            return None
        name = method_model_name(ctor, self.user_functions, self.model_names)
        self.called.append(name)
        return m.Call(name, args, "constructor", (), ctype, span)

    def _record_constructor(self, ctype: ci.Type, nargs: int) -> ci.Cursor | None:
        """The one constructor definition of ``nargs`` parameters the struct ``ctype`` declares."""
        decl = ctype.get_canonical().get_declaration()
        found = [c.get_definition() for c in (decl.get_children() if decl is not None else ())
                 if c.kind == K.CONSTRUCTOR
                 and len([a for a in c.get_children() if a.kind == K.PARM_DECL]) == nargs]
        return found[0] if len(found) == 1 else None

    def _cast(self, cursor: ci.Cursor) -> m.Expr:
        kids = [c for c in cursor.get_children() if c.kind.is_expression()]
        target = self.type_of(cursor)
        span = span_of(cursor)
        style = _CAST_STYLES[cursor.kind]
        if style == "functional" and len(kids) != 1:
            args = tuple(self.expr(k) for k in kids)
            return self._constructed(self._record_constructor(cursor.type, len(args)), args, target, span) or \
                m.Call(str(target), args, "constructor", (), target, span)
        if not kids:
            return m.Call(str(target), (), "constructor", (), target, span)
        return m.Cast(target, self.expr(kids[-1]), style, target, span)

    expr_CSTYLE_CAST_EXPR = _cast
    expr_CXX_STATIC_CAST_EXPR = _cast
    expr_CXX_REINTERPRET_CAST_EXPR = _cast
    expr_CXX_CONST_CAST_EXPR = _cast
    expr_CXX_FUNCTIONAL_CAST_EXPR = _cast

    def expr_CXX_UNARY_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        value = cl.evaluate(cursor)
        text = self.text.of(cursor)
        operand = None
        if not isinstance(value, int):  # sizeof(T), sizeof(*out) in a template: the type measured
            kids = list(cursor.get_children())
            if kids and kids[0].kind == K.TYPE_REF:
                operand = convert_type(kids[0].type, self.template_names)
            elif kids and kids[0].kind.is_expression():
                operand = _value_type(self.expr(kids[0]))
            operand = _target(operand) if operand is not None else None
        return m.SizeOf(text, value if isinstance(value, int) else None, self.type_of(cursor),
                        span_of(cursor), operand)

    def expr_INIT_LIST_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        return m.InitList(tuple(self.expr(c) for c in cursor.get_children()), self.type_of(cursor),
                          span_of(cursor))

    def expr_COMPOUND_LITERAL_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        """A C compound literal of a CUDA vector type with one value per lane (fft's ``(T2){ cos(
        phi), sin(phi) }`` on ``#define T2 float2``): the ``make_float2(...)`` it equals. Another
        (a struct's, one leaving lanes zero) is refused."""
        kids = list(cursor.get_children())
        items = list(kids[-1].get_children()) if kids and kids[-1].kind == K.INIT_LIST_EXPR else None
        ctype = self.type_of(cursor)
        make = f"make_{ctype.name}" if isinstance(ctype, m.Vector) else None
        if items is None or make is None or section_of(make) != "constructor" or len(items) != ctype.lanes:
            return self.unsupported_expr(cursor, "M1206", "a compound literal other than one of a CUDA vector "
                                                          "type with a value per lane is not modelled")
        return m.Call(make, tuple(self.expr(c) for c in items), "constructor", (), ctype, span_of(cursor))

    def expr_LAMBDA_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        # a local variable's lambda is a device function (parse.lambdas, visit_DECL_STMT)
        return self.unsupported_expr(cursor, "M1206", "a lambda that is not a local variable's initialiser "
                                                      "(called where it is written, passed on) is not modelled")

    def expr_CXX_NEW_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        return self.unsupported_expr(cursor, "M1210", "'new' in device code")

    def expr_CXX_DELETE_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        return self.unsupported_expr(cursor, "M1210", "'delete' in device code")

    def expr_CXX_THIS_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        return self.unsupported_expr(cursor, "M1206", "member functions ('this') are not modelled")

    def expr_CALL_EXPR(self, cursor: ci.Cursor) -> m.Expr:
        kids = list(cursor.get_children())
        if len(kids) >= 2 and is_push_config(kids[1]):
            return self.unsupported_expr(
                cursor, "M1203", f"kernel '{cursor.spelling}' is launched from device code")
        if kids and kids[0].kind == K.TYPE_REF:  # T(x) or T{x} on a dependent type
            args = [k for k in kids[1:]]
            if len(args) == 1 and args[0].kind == K.INIT_LIST_EXPR:
                args = list(args[0].get_children())
            target = self.type_of(cursor)
            if len(args) == 1:
                return m.Cast(target, self.expr(args[0]), "functional", target, span_of(cursor))
            exprs = tuple(self.expr(a) for a in args)
            return self._constructed(self._record_constructor(cursor.type, len(exprs)), exprs, target,
                                     span_of(cursor)) or \
                m.Call(str(target), exprs, "constructor", (), target, span_of(cursor))
        if not cursor.spelling and len(kids) == 1 and _builtin_functional_cast(cursor):
            # int(v) or float(v) on a template's T v: clang leaves the cast a callee-less call
            target = self.type_of(cursor)
            return m.Cast(target, self.expr(kids[0]), "functional", target, span_of(cursor))
        lambda_call = self._lambda_call(cursor, kids)
        if lambda_call is not None:
            return lambda_call
        # An overloaded-operator call lists its operands in source order with the operator's
        # reference between them (``a = b`` → a, operator=, b); in a template the call itself
        # may have no spelling, only the (unresolved) operator reference names it.
        names = [_callee_name(k) or "" for k in kids]
        op_index = next((i for i, n in enumerate(names) if _OPERATOR_NAME.match(n)), None)
        if op_index is not None and len(kids) >= 2 and (
                _OPERATOR_NAME.match(cursor.spelling or "") or not cursor.spelling):
            operator = _OPERATOR_NAME.match(names[op_index])
            operands = [k for i, k in enumerate(kids) if i != op_index]
            ref = _callee_cursor(kids[op_index])
            return self._operator(operator.group(1), tuple(self.expr(k) for k in operands),
                                  self.type_of(cursor), span_of(cursor), cursor,
                                  ref.referenced if ref is not None and ref.kind == K.DECL_REF_EXPR else None)
        ref = cursor.referenced
        if ref is not None and ref.kind == K.CONSTRUCTOR:
            # cg::plus<float>(): the namespace/template/type references name the type
            args = tuple(self.expr(k) for k in kids if k.kind.is_expression() and not _is_default_arg(k))
            ctype = self.type_of(cursor)
            if len(args) == 1 and args[0].type == ctype:
                return args[0]  # a copy: float4 v = x[i];
            return self._constructed(ref.get_definition(), args, ctype, span_of(cursor)) or \
                m.Call(_bare(cursor.type.spelling), args, "constructor", (), ctype, span_of(cursor))
        return self.call_like(cursor, kids)

    def call_like(self, cursor: ci.Cursor, kids: list[ci.Cursor]) -> m.Expr:
        span = span_of(cursor)
        if not kids:
            return self.unsupported_expr(cursor, "M1206", "call without a callee")
        callee, arg_cursors = kids[0], kids[1:]
        limit = self._numeric_limit(callee, arg_cursors)
        if limit is not None:
            return limit
        if _callee_name(callee) in ("__assert_fail", "__assertfail"):
            # assert() in a template: its __PRETTY_FUNCTION__ stays dependent, an unexposed
            # expression of no parts; the message is not migrated (the printer drops the call)
            args = tuple(m.StringLit("", m.Pointer(m.Scalar("int8"), True), span_of(a))
                         if a.kind == K.UNEXPOSED_EXPR and not list(a.get_children()) else self.expr(a)
                         for a in arg_cursors)
        else:
            args = tuple(self.expr(a) for a in arg_cursors if not _is_default_arg(a))
        ctype = self.type_of(cursor)
        target = _callee_cursor(callee)
        if target is not None and target.kind == K.MEMBER_REF_EXPR:
            obj_kids = list(target.get_children())
            method = target.spelling or _dependent_member(target)
            operator = _OPERATOR_NAME.match(method)
            if obj_kids and operator:
                return self._operator(operator.group(1), (self.expr(obj_kids[0]),) + args, ctype, span, cursor)
            call = self._method_call(target.referenced, obj_kids, args, ctype, span)
            if call is not None:
                return call
            if not obj_kids:
                return self.unsupported_expr(cursor, "M1206", f"call of member '{method}' is not modelled")
            obj = self.expr(obj_kids[0])
            if method.startswith("operator ") and not args and isinstance(obj.type, m.Scalar) \
                    and isinstance(ctype, m.Scalar):
                # static_cast<float>(h) of a __half: its conversion operator, a conversion
                return m.Cast(ctype, obj, "implicit", ctype, span)
            return m.MethodCall(obj, method, args, ctype, span)
        name, decl, template_args = self._resolve_callee(cursor, callee)
        if name is None:
            return self.unsupported_expr(cursor, "M1209", "call through a function pointer")
        if decl is not None and decl.kind == K.CXX_METHOD and decl.is_static_method():
            call = self._method_call(decl, (), args, ctype, span, template_args)  # Block::rotl(x, 16)
            if call is not None:
                return call
        operator = _OPERATOR_NAME.match(name.rsplit("::", 1)[-1])
        if operator:
            return self._operator(operator.group(1), args, ctype, span, cursor, decl)
        legacy = LEGACY_WARP_CALLS.get(name.rsplit("::", 1)[-1])
        if legacy is not None and decl is not None and cl.is_prelude_file(
                decl.location.file.name if decl.location.file else None):
            # __shfl_down(v, 16) of CUDA before 9: the whole warp takes part, as in its _sync form
            # with the full mask
            name, args = legacy, (m.IntLit(0xFFFFFFFF, "0xffffffffu", m.Scalar("uint32"), span),) + args
        kind = self._call_kind(name, decl, cursor)
        if kind == "device":
            # a user device function is modelled, and emitted, under its own name (``lit::node``
            # calls the macro ``node``): the namespace is C++ scoping, not part of the name
            unresolved = target is not None and target.kind == K.OVERLOADED_DECL_REF  # in a template
            short = name.rsplit("::", 1)[-1]
            name = self._overload(short, None if unresolved else decl, len(args))
            dispatch = ()
            if name is None and unresolved:
                name, dispatch, dtype = self._dispatch(short, args)
                if name is None and template_args:
                    name, dispatch, dtype = self._specialisations(short, template_args)
                if dtype is not None:
                    ctype = dtype
            if name is None:
                return self.unsupported_expr(cursor, "M1209", f"call to the overloaded device function "
                                                              f"'{short}' is not resolved here")
            if dispatch:
                self.called.extend(model for _, model in dispatch[1])
                return m.Call(name, args, kind, template_args, ctype, span, dispatch)
            self.called.append(name)
            if _undeduced(ctype):  # f(x / scale) in a template: the call's type is f's return type
                ctype = self._declared_return(name) or ctype
            # f(keys + k + off) on a template's K* keys: the address typed a K* (which deduces the
            # callee's template arguments and makes it a view of keys)
            args = tuple(_typed(a) if isinstance(_value_type(a), m.Pointer) else a for a in args)
        elif _undeduced(ctype):  # __shfl_down_sync(mask, v, k) on a template's T v: v's type
            ctype = _builtin_value_type(name.rsplit("::", 1)[-1], args) or ctype
        if args and kind in ("atomic", "memory") and _undeduced(getattr(args[0], "type", None)):
            # __ldg(X + off), atomicAdd(p + i, v) on a template's T* X: the address's type
            address = _typed(args[0])
            args = (address,) + args[1:]
            if _undeduced(ctype) and kind == "memory" and isinstance(address.type, m.Pointer):
                ctype = address.type.pointee
        return m.Call(name, args, kind, template_args, ctype, span)

    def _declared_return(self, name: str) -> m.CType | None:
        """The return type the user function ``name`` declares, where it names a type outside
        every template (clang leaves a call with a dependent argument typeless in a template)."""
        user = self.user_functions.get(name)
        if user is None or user.kind not in (K.FUNCTION_DECL, K.CXX_METHOD):
            return None
        ctype = convert_type(user.result_type)
        return None if _undeduced(ctype) or isinstance(ctype, (m.Opaque, m.TemplateType)) else ctype

    def _anonymous_member(self, cursor: ci.Cursor, kids: list, span: Span) -> m.Expr:
        """``w.xmin`` where ``xmin`` is a member of an anonymous struct or union of ``w``'s struct
        (clang's member expressions of the unnamed members between them dropped): the field of the
        lanes that hold its bytes (:func:`_first_alternative`: ``v.r`` of vec_t is ``v.x``)."""
        field = cursor.referenced
        base = kids[0] if kids else None
        while base is not None and base.kind == K.MEMBER_REF_EXPR and base.referenced is not None \
                and _anonymous_record(base.referenced) is not None:
            inner = list(base.get_children())
            base = inner[0] if inner else None
        if _anonymous_record(field) is not None:  # the unnamed member itself, used as a value
            return self.unsupported_expr(cursor, "M1206", "an anonymous struct or union used whole is not modelled")
        if base is None or base.kind == K.CXX_THIS_EXPR:
            if self.this_type is None:
                return self.unsupported_expr(cursor, "M1206", f"implicit member access '{cursor.spelling}'")
            record = field.semantic_parent
            while record is not None and record.kind in (K.STRUCT_DECL, K.UNION_DECL) and record.is_anonymous():
                record = record.semantic_parent
            name = _first_alternative(record.type.get_canonical(), field) if record is not None else None
            obj, arrow = self._this(span), False
        else:
            t = base.type.get_canonical()
            arrow = t.kind == T.POINTER
            name = _first_alternative(t.get_pointee().get_canonical() if arrow else t, field)
            obj = None
        if name is None:
            return self.unsupported_expr(cursor, "M1206", f"member '{cursor.spelling}' of an anonymous union that is "
                                                          "not a field of its first alternative is not modelled")
        if obj is None:
            obj = self.expr(base)
            arrow = isinstance(obj.type, m.Pointer)
        return m.Member(obj, name, arrow, self.type_of(cursor), span)

    def _this(self, span: Span) -> m.Ref:
        return m.Ref("this_", "param", m.Reference(self.this_type), span)

    def _method_call(self, decl: ci.Cursor | None, obj_kids: list, args: tuple, ctype: m.CType,
                     span: Span, template_args: tuple = ()) -> m.Call | None:
        """A call of a method of one of the project's structs (``obj[i].get()``, ``p->set(v)``,
        ``get()`` inside another method) as a call of the device function the method is
        modelled as (:func:`method_model_name`), the object its first argument (``this_``, a
        reference); a static method (``Acc::twice(v)``, ``obj.twice(v)``) takes no object. None
        for any other member call."""
        if decl is None or decl.kind not in (K.CXX_METHOD, K.CONVERSION_FUNCTION):  # (operator int(), called)
            return None
        definition = decl.get_definition()
        if definition is None or cl.is_prelude_file(definition.location.file.name if definition.location.file else None):
            return None
        if decl.is_static_method():
            name = method_model_name(definition, self.user_functions, self.model_names)
            self.called.append(name)
            return m.Call(name, args, "device", template_args, ctype, span)
        record = convert_type(definition.semantic_parent.type, self.template_names)
        if not isinstance(record, m.Vector) and not _no_data(definition.semantic_parent):
            return None  # (an object of no data, pool's AvgPoolGrad<T>: its methods read only arguments)
        if obj_kids and obj_kids[0].kind != K.CXX_THIS_EXPR:
            obj = self.expr(obj_kids[0])
            if isinstance(obj.type, m.Pointer):  # p->set(v): the object p points to
                obj = m.Index(obj, m.IntLit(0, "0", m.Scalar("int32"), span), record, span)
        elif self.this_type is not None:
            obj = self._this(span)
        else:
            return None
        name = method_model_name(definition, self.user_functions, self.model_names)
        self.called.append(name)
        return m.Call(name, (obj,) + args, "device", (), ctype, span)

    def _overload(self, name: str, decl: ci.Cursor | None, nargs: int) -> str | None:
        """The model name of the definition a call reaches where ``name`` is overloaded: by the
        declaration the call resolves to, else (a call in a template, resolved per instance) the
        one definition taking ``nargs`` parameters; None when that leaves a choice."""
        defs = self.overloads.get(name)
        if not defs:
            return name
        if decl is not None:
            template = cl.specialized_template(decl)
            # the definition itself first (an explicit specialisation ``template <> int2
            # init_vector(int)`` is its own definition), else the template it instantiates
            found = [model for usr, model, _ in defs if usr == decl.get_usr()] or \
                [model for usr, model, _ in defs if template is not None and usr == template.get_usr()]
            if found:
                return found[0]
        fits = [model for _, model, count in defs if count == nargs]
        return fits[0] if len(fits) == 1 else None

    def _dispatch(self, name: str, args: tuple) -> tuple:
        """A call of the overloaded ``name`` in a template, which each instance resolves by the
        dtypes of its template-typed arguments (``hash(key)`` on a ``KeyT key``, beside ``hash(
        uint32)`` and ``hash(uint64)``): (the first overload's model name, the dispatch (see
        :class:`~migrate.ir.model.Call`), the call's type where clang left it dependent, or None).
        (None, (), None) where the overloads are not told apart that way: other parameter kinds
        than numbers, two overloads for one key, no template-typed argument."""
        none = (None, (), None)
        typed = [i for i, a in enumerate(args) if isinstance(_target(a.type), m.TemplateType)]
        if not typed:
            return none
        # the key: one dtype per template type the arguments have (f(a, b) on two values of one T: one)
        names = tuple(dict.fromkeys(_target(args[i].type).name for i in typed))
        firsts = {n: next(i for i in typed if _target(args[i].type).name == n) for n in names}
        keys, returns, others, generic = [], [], 0, []
        for _usr, model, count in self.overloads.get(name, ()):
            cursor = self.user_functions.get(model)
            if count != len(args) or cursor is None:
                continue
            params = [_target(convert_type(c.type)) for c in cursor.get_children() if c.kind == K.PARM_DECL]
            if len(params) != len(args):
                return none
            if cursor.kind == K.FUNCTION_TEMPLATE:
                # the primary template (``template <typename T> T add(T a, T b)`` beside its explicit
                # specialisations): an instance no other definition matches exactly instantiates it,
                # where it takes each template-typed argument as a template type of its own
                if not all(_template_typed(params[i]) for i in typed):
                    return none
                generic.append(model)
                returns.append((_target(convert_type(cursor.result_type)), params))
                continue
            if not all(isinstance(p, m.Scalar) for p in params):
                others += 1  # an overload on pointers, structs or a template's own types
                continue
            if any(i not in typed and isinstance(_target(a.type), m.Scalar) and _target(a.type) != params[i]
                   for i, a in enumerate(args)):
                continue  # a number argument of another type: not this overload's (exact match only)
            if any(_target(args[i].type) == _target(args[j].type) and params[i] != params[j]
                   for i in typed for j in typed):
                continue  # f(float, double) for f(a, b) on two values of one T: no exact match
            keys.append((tuple(params[firsts[n]].dtype for n in names), model))
            returns.append((_target(convert_type(cursor.result_type)), params))
        if len(generic) > 1 or (others and not generic):
            return none
        # with the primary template, an instance's number type either is an exact match of an
        # overload or takes the template (C++ prefers an exact template to any conversion, and no
        # overload on a struct or pointer matches a number): its entry's key says which
        if len(keys) + len(generic) < 2 or len({k for k, _ in keys}) != len(keys):
            return none
        keys += [(m.PRIMARY_FOR_NUMBERS if others else m.PRIMARY_TEMPLATE, model) for model in generic]
        dtype = None
        if all(r == p[typed[0]] for r, p in returns):
            dtype = _target(args[typed[0]].type)  # float f(float), double f(double): the instance's T
        elif len({r for r, _ in returns}) == 1 and isinstance(returns[0][0], m.Scalar):
            dtype = returns[0][0]
        return keys[0][1], (names, tuple(keys)), dtype

    def _specialisations(self, name: str, template_args: tuple) -> tuple:
        """A call ``f<N>(x)`` in a template, on the template's own value parameters, of a function
        template whose definitions are explicit specialisations by value (``template <> float
        f<3>(float)``, ``f<MorphOpType::ERODE>``): (the first's model name, the dispatch keyed by
        the specialisations' values, their common return type or None); the instance's values pick
        one (analysis.prepare.instances, or the factory when the kernel takes them). (None, (),
        None) for anything else."""
        none = (None, (), None)
        if not all(re.fullmatch(r"[A-Za-z_]\w*", a) or _VALUE_EXPRESSION.fullmatch(a) for a in template_args):
            return none
        keys, returns, primary = [], set(), None
        for _usr, model, _count in self.overloads.get(name, ()):
            cursor = self.user_functions.get(model)
            if cursor is None:
                continue
            if cursor.kind == K.FUNCTION_TEMPLATE:
                # the primary template: no instance in the table reaches it, unless it calls
                # itself (f<N - 1>(x), a recursion its specialisations end: f<0>), where the
                # instances no specialisation names take it
                if _calls_itself(cursor):
                    primary = model
                    returns.add(convert_type(cursor.result_type))
                continue
            count = cursor.get_num_template_arguments()
            if count != len(template_args) or any(
                    cursor.get_template_argument_kind(i) != ci.TemplateArgumentKind.INTEGRAL for i in range(count)):
                return none
            keys.append((tuple(str(cursor.get_template_argument_value(i)) for i in range(count)), model))
            returns.add(convert_type(cursor.result_type))
        if len(keys) < (1 if primary is not None else 2) or len({k for k, _ in keys}) != len(keys):
            return none
        if primary is not None:
            keys.append((m.PRIMARY_TEMPLATE, primary))
        dtype = next(iter(returns)) if len(returns) == 1 and isinstance(next(iter(returns)), m.Scalar) else None
        return keys[0][1], (tuple(template_args), tuple(keys)), dtype

    def _numeric_limit(self, callee: ci.Cursor, args: list[ci.Cursor]) -> m.Call | None:
        """``std::numeric_limits<K>::max()`` (also on a template's type ``K``, where clang leaves
        the call unresolved) as the constant call ``numeric_limits::max`` of type ``K``."""
        if args:
            return None
        tokens = [t.spelling for t in callee.get_tokens()]
        if "numeric_limits" not in tokens or len(tokens) < 5 or tokens[-2] != "::" \
                or tokens[-1] not in NUMERIC_LIMITS or tokens[-3] != ">":
            return None
        start = tokens.index("numeric_limits")
        if tokens[start + 1] != "<":
            return None
        type_refs = [k for k in callee.walk_preorder() if k.kind == K.TYPE_REF]
        if type_refs:
            ctype = convert_type(type_refs[-1].type, self.template_names)
        else:  # a builtin type argument: the call resolved, its type is the limit's
            ctype = convert_type(callee.type.get_result(), self.template_names) \
                if callee.type.kind == T.FUNCTIONPROTO else _named_type(" ".join(tokens[start + 2:-3]))
        if not isinstance(ctype, (m.Scalar, m.TemplateType)):
            return None
        return m.Call(f"numeric_limits::{tokens[-1]}", (), "math", (), ctype, span_of(callee))

    def _operator(self, op: str, args: tuple[m.Expr, ...], ctype: m.CType, span: Span,
                  cursor: ci.Cursor, decl: ci.Cursor | None = None) -> m.Expr:
        """An overloaded operator call (``__half`` arithmetic, ``float4`` helpers) as plain syntax;
        one on vector types only where its definition acts lane by lane (:mod:`.lanewise`)."""
        vector = next((v for v in (lanewise._vector(ctype), *(lanewise._vector(getattr(a, "type", None))
                                                                for a in args)) if v is not None), None)
        if vector is not None and op not in ("=", "==", "!=", "[]"):
            why = self._not_lanewise(op, decl, vector.lanes)
            if why:
                call = self._operator_call(op, args, ctype, span, decl) or self._member_operator(args, ctype, span, decl)
                if call is not None:
                    return call
                return self.unsupported_expr(cursor, "M1206", f"operator{op} on '{vector.name}' is not modelled: {why}")
        if len(args) == 2:
            if op.endswith("=") and op not in ("==", "!=", "<=", ">="):
                return m.Assign(op, args[0], args[1], ctype, span)
            if op == "[]":
                return m.Index(args[0], args[1], ctype, span)
            if op in ("++", "--"):
                return m.Unary(op, args[0], True, ctype, span)
            return m.Binary(op, args[0], args[1], ctype, span)
        if len(args) == 1:
            return m.Unary(op, args[0], False, ctype, span)
        return self.unsupported_expr(cursor, "M1206", f"operator{op} call is not modelled")

    def _operator_call(self, op: str, args: tuple[m.Expr, ...], ctype: m.CType, span: Span,
                       decl: ci.Cursor | None) -> m.Call | None:
        """A call of the user's ``__device__`` operator function ``decl`` (``float2`` as complex
        numbers: ``a * b`` a complex product), which inlining gives its meaning; None where the
        operator is no such function (a member, a template, a compound assignment)."""
        defn = decl.get_definition() if decl is not None else None
        if defn is None or defn.kind != K.FUNCTION_DECL or (op.endswith("=") and op not in ("<=", ">=")) \
                or K.CUDADEVICE_ATTR not in {c.kind for c in defn.get_children()}:
            return None
        name = self._overload(defn.spelling, defn, len(args))
        name = function_model_name(name) if name == defn.spelling else name
        if name is None or name not in self.user_functions:
            return None
        self.called.append(name)
        return m.Call(name, args, "device", (), ctype, span)

    def _member_operator(self, args: tuple[m.Expr, ...], ctype: m.CType, span: Span,
                         decl: ci.Cursor | None) -> m.Call | None:
        """A call of an operator method of one of the project's structs (a functor's
        ``operator()``: ``f(x)`` on a ``Halve f`` passed by value) as a call of the device function
        the method is modelled as, the object its first argument; None for any other operator."""
        definition = decl.get_definition() if decl is not None and decl.kind == K.CXX_METHOD else None
        if definition is None or decl.is_static_method() or not args \
                or cl.is_prelude_file(definition.location.file.name if definition.location.file else None) \
                or K.CUDADEVICE_ATTR not in {c.kind for c in definition.get_children()}:
            return None
        record = convert_type(definition.semantic_parent.type, self.template_names)
        if not isinstance(record, m.Vector) and not _no_data(definition.semantic_parent):
            return None  # (an object of no data, pool's AvgPoolGrad<T>: its methods read only arguments)
        name = method_model_name(definition, self.user_functions, self.model_names)
        self.called.append(name)
        return m.Call(name, args, "device", (), ctype, span)

    def _not_lanewise(self, op: str, decl: ci.Cursor | None, lanes: int) -> str | None:
        """Why the operator ``decl`` on vectors of ``lanes`` lanes is not lane by lane (None when
        it is, or when the prelude defines it)."""
        if decl is None:
            return "its definition is not visible"
        defn = decl.get_definition() or decl
        where = defn.location.file.name if defn.location.file else None
        if where is None or cl.is_prelude_file(where):
            return None
        body = next((c for c in defn.get_children() if c.kind == K.COMPOUND_STMT), None)
        params = [(p.spelling, convert_type(p.type, self.template_names)) for p in defn.get_arguments()]
        model = ModelBuilder(DiagnosticBag(), self.text, self.user_functions, self.template_names,
                             self.overloads).block(body) \
            if body is not None else None
        why = lanewise.not_lanewise(op, params, model, lanes)
        return f"its definition ({Path(where).name}:{defn.location.line}) is not lane by lane: {why}" if why else None

    def _resolve_callee(self, cursor: ci.Cursor, callee: ci.Cursor):
        target = _callee_cursor(callee)
        if target is None:
            return None, None, ()
        if target.kind == K.OVERLOADED_DECL_REF:
            name = target.spelling
            decls = cl.overloaded_decls(target)
            decl = decls[0] if decls else None
            qual = qualified_name(decl) if decl is not None else name
            return qual, decl, explicit_template_args(callee, self.text)
        ref = target.referenced if target.kind == K.DECL_REF_EXPR else None
        if ref is None:
            if target.kind == K.DECL_REF_EXPR and target.spelling:
                return target.spelling, None, explicit_template_args(callee, self.text)
            ref = cursor.referenced
        if ref is None or ref.kind not in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD):
            return None, None, ()
        args = template_args_of(ref)
        return qualified_name(ref), ref, args or explicit_template_args(callee, self.text)

    def _call_kind(self, name: str, decl: ci.Cursor | None, cursor: ci.Cursor) -> str:
        short = name.rsplit("::", 1)[-1]
        builtin = decl is not None and cl.is_prelude_file(decl.location.file.name if decl.location.file else None)
        # a call that resolves to CUDA's own function is CUDA's even where the project overloads
        # its name (helper_math's make_float4(float3, float) beside make_float4(x, y, z, w))
        if not builtin and (name in self.user_functions or short in self.user_functions):
            user = self.user_functions.get(name) or self.user_functions.get(short)
            if user is not None and not cl.is_prelude_file(
                    user.location.file.name if user.location.file else None):
                return "device"
        section = section_of(name)
        if section is None and decl is not None and cl.is_prelude_file(
                decl.location.file.name if decl.location.file else None):
            section = section_of(short)
        if section == "unsupported":
            code = UNSUPPORTED_CODES.get(short, "M1206")
            what = "texture/surface fetch" if code == "M1202" else "device-side memory allocation"
            self.bag.add(code, span_of(cursor), f"{what} '{short}'")
            return "unknown"
        if section is not None:
            return _SECTION_KIND[section]
        if decl is not None and cl.is_prelude_file(decl.location.file.name if decl.location.file else None):
            return "math" if decl.location.file and "math" in decl.location.file.name else "unknown"
        self.bag.add("M1207", span_of(cursor),
                     f"call to '{short}', which is neither a visible __device__ function nor a known CUDA API")
        return "unknown"


#: The warp shuffles and votes of CUDA before 9, which take no mask (the prelude declares them),
#: and the ``_sync`` form each is read as, with the full mask first
LEGACY_WARP_CALLS = {"__shfl": "__shfl_sync", "__shfl_up": "__shfl_up_sync",
                     "__shfl_down": "__shfl_down_sync", "__shfl_xor": "__shfl_xor_sync",
                     "__any": "__any_sync", "__all": "__all_sync", "__ballot": "__ballot_sync"}


#: The members of ``std::numeric_limits`` migrated as constants (see ``cuda_math.numeric_limit``).
NUMERIC_LIMITS = ("max", "min", "lowest", "epsilon", "infinity", "quiet_NaN")


def _target(ctype):
    """A reference's target (``const T&`` is ``T``); any other type as it is."""
    return ctype.target if isinstance(ctype, m.Reference) else ctype


def _has_initialiser(decl: ci.Cursor) -> bool:
    """Whether a variable's declaration has an initialiser: an ``=`` outside its brackets (an
    array's size is an expression too, which may read a string: ``int d[LEN]`` with ``LEN``
    ``sizeof("...") - 1``)."""
    depth = 0
    for tok in decl.get_tokens():
        text = tok.spelling
        if text in ("[", "(", "{"):
            depth += 1
        elif text in ("]", ")", "}"):
            depth -= 1
        elif text == "=" and depth == 0:
            return True
    return False


def _string_init(cursor: ci.Cursor, ctype: m.Array, span: Span) -> m.InitList | None:
    """``char s[N] = "text"``'s initialiser as the list of its bytes, the terminating NUL
    included where the array holds it (and zeros up to N, as C fills the rest); None for any other
    initialiser of an array, or a literal that is not a plain narrow one."""
    node = cursor
    while node.kind != K.STRING_LITERAL:
        kids = list(node.get_children())
        if node.kind not in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) or len(kids) != 1:
            return None
        node = kids[0]
    elem = ctype.element
    if not (isinstance(elem, m.Scalar) and elem.dtype in ("int8", "uint8")):
        return None
    spelling = "".join(t.spelling for t in node.get_tokens())
    parts = re.findall(r'"((?:[^"\\]|\\.)*)"', spelling)  # adjacent literals concatenate
    if not parts or not spelling.lstrip().startswith('"'):
        return None  # u8"", L"", u"", U"": not plain bytes
    try:
        data = b"".join(ast.literal_eval('b"' + p + '"') for p in parts) + b"\0"
    except (ValueError, SyntaxError):
        return None
    size = ctype.extent if ctype.extent is not None else len(data)
    if len(data) - 1 > size:
        return None
    data = (data + b"\0" * size)[:size]
    signed = elem.dtype == "int8"
    items = tuple(m.IntLit(v - 256 if signed and v > 127 else v, str(v - 256 if signed and v > 127 else v), elem, span)
                  for v in data)
    return m.InitList(items, ctype, span)


def _template_typed(ctype) -> bool:
    """A parameter type that is a template's own type (``T``, as clang spells it in a template:
    ``type-parameter-0-0``)."""
    return isinstance(ctype, m.TemplateType) or (isinstance(ctype, m.Opaque) and "type-parameter" in ctype.spelling)


def _undeduced(ctype) -> bool:
    """``auto`` (or a dependent type) clang could not deduce in a template's body."""
    return isinstance(ctype, m.Opaque) and (ctype.spelling in ("auto", "const auto", "<dependent type>")
                                            or "type-parameter" in ctype.spelling)


def _value_type(e) -> m.CType | None:
    """The type of a template body's expression clang leaves dependent, where its operands tell:
    ``x + off`` on a pointer, ``x[i]`` and ``*x`` of one, arithmetic on one type, a cast."""
    t = getattr(e, "type", None)
    if t is not None and not _undeduced(t):
        return t
    if isinstance(e, m.Cast):
        return e.target if not _undeduced(e.target) else None
    if isinstance(e, m.Unary) and e.op == "&":  # &x[i]: a pointer to the element's type
        inner = _value_type(e.operand)
        return m.Pointer(inner) if inner is not None and not isinstance(inner, m.Pointer) else None
    if isinstance(e, m.Index) or (isinstance(e, m.Unary) and e.op == "*"):
        base = _value_type(e.base if isinstance(e, m.Index) else e.operand)
        return base.pointee if isinstance(base, m.Pointer) else base.element if isinstance(base, m.Array) else None
    if isinstance(e, m.Binary) and e.op in ("+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>"):
        lhs, rhs = _value_type(e.lhs), _value_type(e.rhs)
        if e.op in ("+", "-"):  # smem + off on a template's K smem[N]: the array read as a K*
            lhs, rhs = (m.Pointer(t.element) if isinstance(t, m.Array) else t for t in (lhs, rhs))
        if isinstance(lhs, m.Pointer) or isinstance(rhs, m.Pointer):
            return lhs if isinstance(lhs, m.Pointer) else rhs
        return lhs if lhs == rhs else None
    if isinstance(e, m.Ternary):
        then, other = _value_type(e.then), _value_type(e.other)
        return then if then == other else None
    return None


#: CUDA functions whose value is of the type of one of their arguments: the shuffles (the value
#: shuffled, argument 1) and the atomics (the element their address points to, argument 0)
_VALUE_ARGUMENT = {**{f: 1 for f in ("__shfl_sync", "__shfl_up_sync", "__shfl_down_sync", "__shfl_xor_sync")},
                   **{f: 0 for f in ("atomicAdd", "atomicSub", "atomicExch", "atomicMin", "atomicMax",
                                     "atomicAnd", "atomicOr", "atomicXor", "atomicCAS", "atomicInc", "atomicDec")}}


def _typed(e):
    """``e`` with the types :func:`_value_type` works out where clang left them dependent, for an
    address (``X + a + b`` on a template's ``T* X``: each sum is a ``T*``)."""
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        e = dataclasses.replace(e, lhs=_typed(e.lhs), rhs=_typed(e.rhs))
    t = _value_type(e)
    return dataclasses.replace(e, type=t) if t is not None and _undeduced(getattr(e, "type", None)) else e


def _builtin_value_type(callee: str, args: tuple) -> m.CType | None:
    """The type of a call of a CUDA function that clang leaves dependent in a template, where an
    argument's type tells it (:data:`_VALUE_ARGUMENT`; ``min``/``max`` of two values of one type)."""
    if callee in _VALUE_ARGUMENT and len(args) > _VALUE_ARGUMENT[callee]:
        t = _value_type(args[_VALUE_ARGUMENT[callee]])
        if callee.startswith("atomic"):
            t = t.pointee if isinstance(t, m.Pointer) else None
        return t
    if callee in ("min", "max") and len(args) == 2:
        a, b = _value_type(args[0]), _value_type(args[1])
        return a if a == b else None
    return None


_SCALAR_KINDS = frozenset({T.BOOL, T.CHAR_S, T.CHAR_U, T.SCHAR, T.UCHAR, T.SHORT, T.USHORT, T.INT, T.UINT, T.LONG,
                           T.ULONG, T.LONGLONG, T.ULONGLONG, T.FLOAT, T.DOUBLE})
#: the one-word builtin types a functional cast may name (``int(x)``; ``unsigned int(x)`` is no C++)
_FUNCTIONAL_CAST_TYPES = frozenset({"int", "short", "long", "char", "float", "double", "bool", "unsigned", "signed"})


def _builtin_functional_cast(cursor: ci.Cursor) -> bool:
    """Whether a call with no callee is a builtin type's functional cast: ``int(`` ... ``)``
    (clang's unresolved construct expression on a template's value), of a builtin scalar type."""
    if cursor.type.get_canonical().kind not in _SCALAR_KINDS:
        return False
    tokens = cursor.get_tokens()
    first, second = next(tokens, None), next(tokens, None)
    return first is not None and second is not None and first.spelling in _FUNCTIONAL_CAST_TYPES \
        and second.spelling == "("


def _substituted(e: m.Expr, values: dict[str, m.Expr]) -> m.Expr:
    """``e`` with each local of ``values`` replaced by its value."""
    from ..ir.visit import Transformer

    class Substitute(Transformer):
        def leave_Ref(self, node):
            return values.get(node.name, node) if node.kind == "local" else node

    return Substitute().transform(e) if values else e


def _for_parts(header: list[ci.Cursor]) -> tuple | None:
    """(init, cond, step) among a ``for`` header's cursors when their positions cannot tell: a
    declaration is the initialiser, a ``bool`` expression that assigns nothing the condition, an
    assignment or step after the condition the step, one before it the initialiser. None when
    that leaves a doubt (``for (i = 0;;)`` and ``for (;; i++)`` look alike)."""
    if len(header) == 3:
        return tuple(header)
    parts = [None, None, None]
    rest = list(header)
    if rest and rest[0].kind == K.DECL_STMT:
        parts[0] = rest.pop(0)
    conds = [i for i, c in enumerate(rest) if not _assigns(c) and c.type.get_canonical().kind == T.BOOL]
    if len(conds) > 1:
        return None
    if conds:
        (i,) = conds
        if i > 1 or (i == 1 and parts[0] is not None):
            return None
        if i == 1:
            parts[0] = rest[0]
        parts[1], rest = rest[i], rest[i + 1:]
        parts[2] = rest[0] if rest else None
        return tuple(parts) if len(rest) <= 1 else None
    if len(rest) == 2 and parts[0] is None:
        return rest[0], None, rest[1]
    if len(rest) == 1 and parts[0] is not None:
        return parts[0], None, rest[0]
    return tuple(parts) if not rest else None


def _assigns(cursor: ci.Cursor) -> bool:
    """An assignment, ``++``/``--`` or a comma expression (what a ``for`` header's ends hold)."""
    while cursor.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) and len(list(cursor.get_children())) == 1:
        cursor = next(cursor.get_children())
    if cursor.kind == K.COMPOUND_ASSIGNMENT_OPERATOR:
        return True
    if cursor.kind == K.BINARY_OPERATOR:
        return cl.binary_op(cursor) in ("=", ",")
    if cursor.kind == K.UNARY_OPERATOR:
        return cl.unary_op(cursor)[0] in ("++", "--")
    return False


def _is_value_conversion(inner: m.CType, outer: m.CType) -> bool:
    if isinstance(inner, m.Scalar) and isinstance(outer, m.Scalar):
        return inner.dtype != outer.dtype
    return False


def _is_default_arg(cursor: ci.Cursor) -> bool:
    return cursor.kind == K.UNEXPOSED_EXPR and not list(cursor.get_children()) and cl.evaluate(cursor) is None \
        and cursor.extent.start.file is None


def is_push_config(cursor: ci.Cursor) -> bool:
    """The launch-configuration call clang puts in a ``<<<...>>>`` kernel call."""
    return cursor.kind == K.CALL_EXPR and cursor.spelling in ("__cudaPushCallConfiguration",
                                                              "cudaConfigureCall")


def _callee_cursor(cursor: ci.Cursor) -> ci.Cursor | None:
    """The DECL_REF/OVERLOADED_DECL_REF/MEMBER_REF under implicit casts and parentheses."""
    current = cursor
    for _ in range(8):
        kids = list(current.get_children())
        if current.kind == K.DECL_REF_EXPR:  # warps::unit(...) in a template: after its qualifier
            overloaded = next((k for k in kids if k.kind == K.OVERLOADED_DECL_REF), None)
            if overloaded is not None and all(k.kind in (K.NAMESPACE_REF, K.TYPE_REF, K.TEMPLATE_REF)
                                              for k in kids[:kids.index(overloaded)]):
                return overloaded
        if current.kind in (K.DECL_REF_EXPR, K.OVERLOADED_DECL_REF, K.MEMBER_REF_EXPR):
            return current
        if current.kind not in (K.UNEXPOSED_EXPR, K.PAREN_EXPR) or not kids:
            return None
        current = kids[0]
    return None


def _callee_name(cursor: ci.Cursor) -> str | None:
    target = _callee_cursor(cursor)
    if target is None or target.kind == K.MEMBER_REF_EXPR:
        return None
    return target.spelling


def qualified_name(cursor: ci.Cursor) -> str:
    parts = [cursor.spelling]
    parent = cursor.semantic_parent
    while parent is not None and parent.kind == K.NAMESPACE:
        parts.append(parent.spelling)
        parent = parent.semantic_parent
    return "::".join(reversed(parts))


def template_args_of(cursor: ci.Cursor) -> tuple[str, ...]:
    count = cursor.get_num_template_arguments()
    if count <= 0:
        return ()
    args = []
    for i in range(count):
        kind = cursor.get_template_argument_kind(i)
        if kind == ci.TemplateArgumentKind.TYPE:
            args.append(_bare(cursor.get_template_argument_type(i).spelling))
        elif kind in (ci.TemplateArgumentKind.INTEGRAL,):
            args.append(str(cursor.get_template_argument_value(i)))
        else:
            args.append("?")
    return tuple(args)


def explicit_template_args(callee: ci.Cursor, text: SourceText | None = None) -> tuple[str, ...]:
    """Template arguments written at a call (``f<float, 4>(...)``), from the tokens; a host
    constant named there (``f<STACK_SIZE>`` on ``const int STACK_SIZE = 192;``) is its value.
    With the unit's ``text``: none where the callee's text has no ``<`` (libclang tokenises a
    callee spelled inside a macro from the macro's definition to its use, hundreds of tokens)."""
    if text is not None and "<" not in text.of(callee):
        return ()
    tokens = list(callee.get_tokens())
    spellings = [t.spelling for t in tokens]
    if "<" not in spellings:
        return ()
    first = spellings.index("<") + 1
    inner, depth = [], 0
    for token, tok in zip(tokens[first:], spellings[first:]):
        if tok == "<":
            depth += 1
        elif tok == ">" and depth == 0:
            break
        elif tok == ">":
            depth -= 1
        inner.append((token, tok, depth))
    cursors = _token_cursors([t for t, _s, _d in inner])
    current, args = [], []
    for (token, tok, depth), cursor in zip(inner, cursors):
        # (libclang places a token only where it is an argument's: a host constant's)
        if tok == "," and depth == 0:
            args.append(" ".join(current))
            current = []
        else:
            current.append(_constant_token(token, cursor))
    if current:
        args.append(" ".join(current))
    return tuple(a for a in args if a)


def _macro_text(definition, name: str, depth: int = 0) -> str:
    """The text of the object-like macro ``definition``, its own macros expanded in turn, in
    parentheses where it is more than one token; ``name`` where it is function-like or unknown."""
    if definition is None or definition.kind != K.MACRO_DEFINITION or depth > 8 \
            or cl.is_function_like_macro(definition):
        return name
    tokens = list(definition.get_tokens())[1:]
    if not tokens:
        return name
    out = []
    for t in tokens:
        inner = cl.macro_definition(definition.translation_unit, t.spelling) \
            if t.kind == ci.TokenKind.IDENTIFIER else None
        out.append(_macro_text(inner, t.spelling, depth + 1) if inner is not None else t.spelling)
    return out[0] if len(out) == 1 else "(" + " ".join(out) + ")"


def _token_cursors(tokens: list) -> list:
    """Each token's cursor (:func:`cl.token_cursors`, one libclang call for them all), or
    ``_UNPLACED`` where libclang cannot place the tokens; only identifiers' cursors are asked."""
    if not any(t.kind == ci.TokenKind.IDENTIFIER for t in tokens):
        return [None] * len(tokens)
    try:
        return cl.token_cursors(tokens)
    except Exception:  # (a token libclang cannot place: each is asked on its own)
        return [_UNPLACED] * len(tokens)


_UNPLACED = object()


def _constant_token(token, cursor=_UNPLACED) -> str:
    """A token's text, or the value of the host constant an identifier names, or the text an
    object-like macro stands for (``f<TILE, BS>`` with ``#define BS (8 * 4)``); ``cursor``: the
    token's, where :func:`_token_cursors` found it."""
    if token.kind != ci.TokenKind.IDENTIFIER:
        return token.spelling
    if cursor is _UNPLACED:
        try:
            cursor = token.cursor
        except Exception:  # (a token libclang cannot place)
            return token.spelling
    if cursor is not None and cursor.kind == K.MACRO_INSTANTIATION:
        return _macro_text(cursor.referenced, token.spelling)
    ref = cursor.referenced if cursor is not None and cursor.kind == K.DECL_REF_EXPR else None
    if ref is None or ref.kind != K.VAR_DECL or ref.spelling != token.spelling or _var_kind(ref) != "host":
        return token.spelling
    value = _host_constant(ref)
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else token.spelling


def _host_constant(ref: ci.Cursor):
    """The value of a host variable device code may read: const (or constexpr) of a scalar type
    with a constant initializer (CUDA lets device code use it as its value); else None."""
    if not ref.type.is_const_qualified() or not isinstance(convert_type(ref.type), m.Scalar):
        return None
    defn = ref.get_definition() or ref
    return cl.evaluate(defn)


def is_constant(var: ci.Cursor, attrs: set) -> bool:
    """Whether a variable (with the attribute kinds ``attrs``) is modelled as ``__constant__``: it
    is one, or it is a ``__device__`` constant table (:func:`_is_device_table`)."""
    return K.CUDACONSTANT_ATTR in attrs or (K.CUDADEVICE_ATTR in attrs and _is_device_table(var))


def _is_device_table(var: ci.Cursor) -> bool:
    """Whether a ``__device__`` variable is a constant table: const and initialised
    (``__device__ const double D3[512] = {...};``), which no kernel can write."""
    t = var.type
    while t.kind in (T.CONSTANTARRAY, T.INCOMPLETEARRAY):
        t = t.element_type
    defn = var.get_definition() or var
    return t.is_const_qualified() and any(c.kind.is_expression() for c in defn.get_children())


def _var_kind(ref: ci.Cursor) -> str:
    """Where the variable ``ref`` lives (``shared``, ``constant``, ``global``, ``host`` or
    ``local``), kept per declaration in its unit's tables: a function reads its locals again and
    again, and each answer is a walk of the declaration's children. (A declaration cursor's kind
    and first two data name it in its unit.)"""
    tables = _unit_tables(ref)
    if tables is None:
        return _var_kind_of(ref)
    key = (ref._kind_id, ref.data[0], ref.data[1])
    kind = tables[3].get(key)
    if kind is None:
        kind = tables[3][key] = _var_kind_of(ref)
    return kind


def _var_kind_of(ref: ci.Cursor) -> str:
    attrs = {c.kind for c in ref.get_children()}
    if K.CUDASHARED_ATTR in attrs:
        return "shared"
    if is_constant(ref, attrs):
        return "constant"
    parent = ref.semantic_parent
    if parent is not None and parent.kind in (K.TRANSLATION_UNIT, K.NAMESPACE):
        return "global" if K.CUDADEVICE_ATTR in attrs else "host"
    if parent is not None and parent.kind in (K.STRUCT_DECL, K.CLASS_DECL, K.CLASS_TEMPLATE,
                                              K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION, K.UNION_DECL):
        return "host"  # a static data member (std::is_same<float, half>::value): a constant of the host
    return "local"
