"""The kernel model: what the frontend knows about a CUDA translation unit.

Frozen, slotted dataclasses, every node with a :class:`~migrate.ir.span.Span`. This is the one IR
between ``parse/`` and ``analysis/``; nothing downstream sees a libclang cursor. Edit nodes with
``dataclasses.replace``. :func:`dump` prints any node as a deterministic indented tree for golden
tests.
"""
from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Optional, Union

from .. import dtypes
from .span import Span

# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------

#: Canonical scalar dtype names, keyed by the canonical clang spelling (a view of migrate.dtypes).
SCALAR_DTYPES = dtypes.C_SPELLINGS

#: CUDA vector types: name -> (scalar dtype, lanes) (a view of migrate.dtypes).
VECTOR_TYPES = dtypes.VECTOR_TYPES


@dataclass(frozen=True, slots=True)
class Scalar:
    dtype: str  # a value of SCALAR_DTYPES

    def __str__(self) -> str:
        return self.dtype


@dataclass(frozen=True, slots=True)
class Vector:
    name: str  # float4, int2, __half2, ... or a plain struct whose fields share one scalar type
    dtype: str
    lanes: int
    fields: tuple[str, ...] = ()  # a struct's field names, its lanes in order (CUDA vectors: x, y, z, w)
    # A struct whose fields are of several types (a record): each lane's own dtype, and where it
    # lies in memory, the struct being ``words`` words of ``dtype`` (the widest field's size):
    # (word, byte offset in the word) per lane. Empty for vectors and one-type structs.
    lane_dtypes: tuple[str, ...] = ()
    slots: tuple[tuple[int, int], ...] = ()
    words: int = 0
    #: a struct whose default-constructed value has field values (a constructor, default member
    #: initialisers): a local declared without a value would need them
    initialised: bool = False

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Pointer:
    pointee: "CType"
    const: bool = False  # pointee is const
    restrict: bool = False
    volatile: bool = False  # pointee is volatile (warp-synchronous and spin-waiting code)

    def __str__(self) -> str:
        return f"{'const ' if self.const else ''}{'volatile ' if self.volatile else ''}{self.pointee}*" \
               f"{' __restrict__' if self.restrict else ''}"


@dataclass(frozen=True, slots=True)
class Reference:
    target: "CType"  # ``float&`` parameters of device functions

    def __str__(self) -> str:
        return f"{self.target}&"


@dataclass(frozen=True, slots=True)
class Array:
    element: "CType"
    extent: Optional[int]  # None: unsized (extern __shared__) or dependent on a template parameter
    extent_text: str = ""
    volatile: bool = False  # the elements are volatile (``__shared__ volatile float s[64]``)

    def __str__(self) -> str:
        return f"{'volatile ' if self.volatile else ''}{self.element}" \
               f"[{self.extent if self.extent is not None else self.extent_text}]"


@dataclass(frozen=True, slots=True)
class TemplateType:
    name: str  # a type template parameter, e.g. T

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Record:
    name: str  # dim3, uint3, cooperative_groups::thread_block, user structs
    #: a struct of plain data too large (or too nested) for lanes (parse.record_layouts): its
    #: size in bytes and its fields as (name, byte offset, type), a field's type a Scalar, an
    #: Array of them or another such Record; 0 and () for any other record
    size: int = 0
    fields: tuple = ()
    #: a plain struct of the project's that holds pointers (``struct {double *x, *y; int n;}``),
    #: which no vector models: its members in memory order, nested structs' by their path
    #: (``u.u0``), as (name, Pointer or Scalar, byte offset), for passing it by value member by
    #: member (analysis.prepare.struct_params); empty for any other record
    members: tuple = ()
    #: any other complete struct's size in bytes as clang lays it out (0 where it has none, or
    #: ``size`` says it): what the hybrid form passes of it by value, as its bytes (its entry
    #: asserts nvcc's size is the same)
    bytes: int = 0

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Opaque:
    spelling: str  # anything else (dependent expressions, function types, ...)

    def __str__(self) -> str:
        return self.spelling


CType = Union[Scalar, Vector, Pointer, Reference, Array, TemplateType, Record, Opaque]

# ---------------------------------------------------------------------------------------------
# Expressions
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IntLit:
    value: int
    text: str
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class FloatLit:
    value: float
    text: str
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class BoolLit:
    value: bool
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class StringLit:
    value: str
    type: CType
    span: Span


#: What a :class:`Ref` names.
REF_KINDS = ("param", "local", "shared", "constant", "global", "template", "function", "enum",
             "host")


@dataclass(frozen=True, slots=True)
class Ref:
    name: str
    kind: str  # one of REF_KINDS
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Builtin:
    """threadIdx/blockIdx/blockDim/gridDim with a dimension, or warpSize (dim None)."""

    var: str
    dim: Optional[str]
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Unary:
    op: str  # - + ! ~ ++ -- & * ; postfix for i++/i--
    operand: "Expr"
    postfix: bool
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Binary:
    op: str  # + - * / % << >> & | ^ && || == != < <= > >= ,
    lhs: "Expr"
    rhs: "Expr"
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Assign:
    op: str  # = += -= *= /= %= <<= >>= &= |= ^=
    target: "Expr"
    value: "Expr"
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Ternary:
    cond: "Expr"
    then: "Expr"
    other: "Expr"
    type: CType
    span: Span


#: Call categories, decided by the compat catalog (or by the callee's definition).
CALL_KINDS = ("device", "math", "atomic", "warp", "sync", "conversion", "memory", "cg", "io",
              "constructor", "var_template", "unknown")



#: the key of a dispatch's entry for an overload's primary template (:attr:`Call.dispatch`): an
#: instance whose dtypes no other entry has takes it
PRIMARY_TEMPLATE = ()
#: the same where overloads on structs or pointers (a ``float2`` specialisation) are left out of the
#: table: only an instance whose template types are bound to number types takes it, which no
#: overload left out matches exactly
PRIMARY_FOR_NUMBERS = ("<numbers>",)

@dataclass(frozen=True, slots=True)
class Call:
    callee: str
    args: tuple["Expr", ...]
    kind: str  # one of CALL_KINDS
    template_args: tuple[str, ...]
    type: CType
    span: Span
    # a device function overloaded on a template's types, called in the template (hash(key) on a
    # KeyT key): ((template type parameter, ...), ((their dtypes, model name), ...)), the overload
    # each instance reaches; ``callee`` is one of them. A variable template read in a template
    # (kind "var_template", HASHTABLE_EMPTY_KEY<KeyT, ValueT>): ((), ((dtypes, literal), ...)), its
    # value for each instance clang evaluated (parse.var_templates). An overload's primary template
    # (``template <typename T> T add(T, T)`` beside its specialisations) has the key PRIMARY_TEMPLATE
    # or PRIMARY_FOR_NUMBERS: the instances whose dtypes no other entry has take it
    dispatch: tuple = ()


@dataclass(frozen=True, slots=True)
class MethodCall:
    """``obj.method(args)``: cooperative-groups objects and vector/half helpers."""

    obj: "Expr"
    method: str
    args: tuple["Expr", ...]
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Cast:
    target: CType
    operand: "Expr"
    style: str  # implicit, c, static, reinterpret, const, functional
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Index:
    base: "Expr"
    index: "Expr"
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class Member:
    base: "Expr"
    field: str
    arrow: bool
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class SizeOf:
    of: str  # the type or expression text
    value: Optional[int]
    type: CType
    span: Span
    #: the type measured, where clang left the size open (``sizeof(T)``, ``sizeof(*out)`` on a
    #: template's ``T``/``OUTPUT* out``: a template type); None where ``value`` is known
    operand: Optional[CType] = None


@dataclass(frozen=True, slots=True)
class InitList:
    items: tuple["Expr", ...]
    type: CType
    span: Span


@dataclass(frozen=True, slots=True)
class UnsupportedExpr:
    what: str
    text: str
    type: CType
    span: Span


Expr = Union[IntLit, FloatLit, BoolLit, StringLit, Ref, Builtin, Unary, Binary, Assign, Ternary,
             Call, MethodCall, Cast, Index, Member, SizeOf, InitList, UnsupportedExpr]

# ---------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------

#: Storage of a variable: where it lives.
STORAGE = ("local", "shared", "extern_shared", "constant", "device", "managed", "static")


@dataclass(frozen=True, slots=True)
class VarDecl:
    name: str
    type: CType
    storage: str  # one of STORAGE
    const: bool
    init: Optional[Expr]
    span: Span


@dataclass(frozen=True, slots=True)
class DeclStmt:
    decls: tuple[VarDecl, ...]
    span: Span
    #: a lane of a whole vector of this many lanes that the CUDA loaded in one access into a local
    #: (``const float4 p = d[i]``), as ExprStmt.lanes: the printer loads the run whole again
    lanes: Optional[int] = None


@dataclass(frozen=True, slots=True)
class ExprStmt:
    expr: Expr
    span: Span
    #: a lane of a whole vector of this many lanes that the CUDA copied (or added atomically) in
    #: one access, aligned to its size (marked by analysis.prepare.vectors where
    #: analysis.facts.vector_lanes holds): the printer makes the run one vector access again
    lanes: Optional[int] = None
    #: with ``lanes``: True where the values are built otherwise (``d[i] = {ox, oy, oz, 0.f}``:
    #: only the store is a whole vector), None where they are a whole vector in memory too (a copy)
    built_values: Optional[bool] = None


@dataclass(frozen=True, slots=True)
class Block:
    stmts: tuple["Stmt", ...]
    span: Span


@dataclass(frozen=True, slots=True)
class If:
    cond: Expr
    then: "Stmt"
    other: Optional["Stmt"]
    span: Span


@dataclass(frozen=True, slots=True)
class For:
    init: Optional["Stmt"]
    cond: Optional[Expr]
    step: Optional[Expr]
    body: "Stmt"
    pragmas: tuple[str, ...]  # e.g. ("unroll",), ("unroll 4",)
    span: Span


@dataclass(frozen=True, slots=True)
class While:
    cond: Expr
    body: "Stmt"
    span: Span


@dataclass(frozen=True, slots=True)
class DoWhile:
    body: "Stmt"
    cond: Expr
    span: Span


@dataclass(frozen=True, slots=True)
class Switch:
    cond: Expr
    body: "Stmt"
    span: Span


@dataclass(frozen=True, slots=True)
class Case:
    value: Optional[Expr]  # None for default:
    body: "Stmt"
    span: Span


@dataclass(frozen=True, slots=True)
class Break:
    span: Span


@dataclass(frozen=True, slots=True)
class Continue:
    span: Span


@dataclass(frozen=True, slots=True)
class Return:
    value: Optional[Expr]
    span: Span


@dataclass(frozen=True, slots=True)
class Empty:
    span: Span


@dataclass(frozen=True, slots=True)
class UnsupportedStmt:
    what: str
    text: str
    span: Span


Stmt = Union[DeclStmt, ExprStmt, Block, If, For, While, DoWhile, Switch, Case, Break, Continue,
             Return, Empty, UnsupportedStmt]

# ---------------------------------------------------------------------------------------------
# Functions, launch sites, translation units
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: CType
    const: bool  # the parameter itself is const (``const int n``)
    span: Span
    #: a lane of a vector or struct the CUDA kernel takes by value (analysis.prepare.vectors):
    #: (the CUDA parameter, the lane's byte offset in it); empty for a parameter of its own
    lane_of: tuple = ()
    #: a pointer field of a struct the CUDA kernel takes by pointer (analysis.prepare.record_pointers):
    #: (the CUDA parameter, the field's name, its byte offset in the struct); empty otherwise
    field_of: tuple = ()
    #: a struct the CUDA kernel takes by value with too many fields to make each a parameter,
    #: taken as a buffer of its one element (analysis.prepare.struct_params): the launcher
    #: passes the struct's bytes
    whole: bool = False

    @property
    def restrict(self) -> bool:
        return isinstance(self.type, Pointer) and self.type.restrict


@dataclass(frozen=True, slots=True)
class TemplateParam:
    name: str
    kind: str  # "type" or "value"
    value_type: Optional[CType]  # for value parameters
    default: Optional[str]
    span: Span
    #: a value parameter of an enum type: ((its constants as a compiler spells them, value), ...)
    enumerators: tuple = ()


@dataclass(frozen=True, slots=True)
class Instantiation:
    """Template arguments a function is used with, in parameter order, as C++ text."""

    args: tuple[str, ...]
    span: Span  # where the instance is named (a launch site, a call, an explicit instantiation)
    #: the instance's values as its factory takes them, per template parameter: a type's dtype
    #: (or its C++ spelling where it has none: a functor struct), a value's integer; () unknown
    values: tuple = ()


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    kind: str  # "global", "device" or "host_device"
    params: tuple[Param, ...]
    returns: CType
    body: Optional[Block]
    template_params: tuple[TemplateParam, ...]
    instantiations: tuple[Instantiation, ...]
    launch_bounds: tuple[int, ...]
    calls: tuple[str, ...]  # names of user device functions called (directly)
    span: Span
    #: a kernel template with several instances that the generic form may not take: each
    #: instance's own model (no template parameters, its one instantiation with its values), named
    #: ``<kernel>__<instance>`` (:mod:`migrate.parse.instance_copies`)
    instances: tuple["Function", ...] = ()

    @property
    def is_kernel(self) -> bool:
        return self.kind == "global"


@dataclass(frozen=True, slots=True)
class HostExpr:
    """An expression in host code, kept as text; ``value`` when it is a compile-time constant
    (an int, or a float for floating-point arguments)."""

    text: str
    value: Optional[int | float]
    span: Span
    dims: Optional[tuple] = None  # a constant dim3: (x, y, z)


@dataclass(frozen=True, slots=True)
class LaunchSite:
    kernel: str
    template_args: tuple[str, ...]
    grid: HostExpr
    block: HostExpr
    shared_bytes: Optional[HostExpr]
    stream: Optional[HostExpr]
    args: tuple[HostExpr, ...]
    caller: str  # the enclosing function
    span: Span
    # per argument: the bytes a constant-size cudaMalloc/cudaMallocManaged in the caller gave the
    # pointer passed there (None when unknown or not a pointer)
    alloc_bytes: tuple = ()


@dataclass(frozen=True, slots=True)
class GlobalVar:
    name: str
    type: CType
    storage: str  # constant, device, managed
    init: Optional[Expr]
    span: Span
    # the C++ that names it where its name does not: a variable template's specialisation
    # (``mask<double>``, modelled as ``mask_double``: parse.var_templates)
    spelling: str = ""


@dataclass(frozen=True, slots=True)
class TranslationUnit:
    file: str
    kernels: tuple[Function, ...]
    device_functions: tuple[Function, ...]
    globals: tuple[GlobalVar, ...]
    launches: tuple[LaunchSite, ...]

    def kernel(self, name: str) -> Function:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(name)


Node = Union[Expr, Stmt, VarDecl, Param, TemplateParam, Instantiation, Function, HostExpr,
             LaunchSite, GlobalVar, TranslationUnit]

# ---------------------------------------------------------------------------------------------
# Traversal and dumping
# ---------------------------------------------------------------------------------------------

_TYPES = (Scalar, Vector, Pointer, Reference, Array, TemplateType, Record, Opaque)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}  # node class -> its fields that may hold nodes
_IS_NODE: dict[type, bool] = {}


#: field annotations that never hold a node: names, flags, numbers and types (a type is no node,
#: :func:`_is_node`); :func:`children` skips such fields without looking at their values
_LEAF_ANNOTATIONS = frozenset({
    "str", "bool", "int", "float", "Optional[str]", "Optional[int]", "Optional[int | float]",
    "tuple[str, ...]", "tuple[int, ...]", "tuple[tuple[int, int], ...]", "CType", "'CType'",
    "Optional[CType]", "Optional['CType']", "Span"})


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(f.name for f in fields(cls) if f.name not in ("span", "type")
                                           and str(f.type) not in _LEAF_ANNOTATIONS)
    return names


def children(node) -> list:
    """The model nodes directly under ``node`` (types and spans excluded), in field order."""
    # the passes call this millions of times a pool: each node class has a function of its own,
    # made once (_children_code), that reads its fields by name
    fn = _CHILDREN.get(type(node))
    if fn is None:
        fn = _children_function(type(node))
    return fn(node)


_CHILDREN: dict = {}  # node class -> its children function
_PUSH: dict = {}  # node class -> a function pushing its children onto a stack, last first


def _children_code(cls: type, reverse: bool) -> str:
    """The source of ``cls``'s children function: each field that may hold nodes (a node, None,
    or a tuple of them) read as an attribute, its values kept where they are nodes (``_is_node``,
    the answer per class kept in ``_IS_NODE``). With ``reverse``, the children are appended to
    the list given, last child first (the pre-order walk's stack)."""
    names = _child_fields(cls)
    lines = ["def _f(node, out):" if reverse else "def _f(node):"]
    if not reverse:
        lines.append("    out = []")
    for name in reversed(names) if reverse else names:
        lines += [f"    v = node.{name}",
                  "    if isinstance(v, tuple):",
                  f"        for x in {'reversed(v)' if reverse else 'v'}:",
                  "            k = _known.get(type(x))",
                  "            if k or k is None and _is_node(x):",
                  "                out.append(x)",
                  "    else:",
                  "        k = _known.get(type(v))",
                  "        if k or k is None and _is_node(v):",
                  "            out.append(v)"]
    if not reverse:
        lines.append("    return out")
    return "\n".join(lines) + "\n"


def _children_function(cls: type, reverse: bool = False):
    names = _child_fields(cls)  # (raises for what is no dataclass, as fields() does)
    if not names:  # a leaf: a name, a literal
        fn = (lambda node, out: None) if reverse else (lambda node: [])
    else:
        scope = {"_known": _IS_NODE, "_is_node": _is_node}
        exec(_children_code(cls, reverse), scope)
        fn = scope["_f"]
    (_PUSH if reverse else _CHILDREN)[cls] = fn
    return fn


def _is_node(value) -> bool:
    answer = _IS_NODE.get(type(value))
    return _is_node_class(type(value)) if answer is None else answer


def _is_node_class(cls: type) -> bool:
    answer = _IS_NODE.get(cls)
    if answer is None:
        answer = _IS_NODE[cls] = hasattr(cls, "__dataclass_fields__") and not issubclass(cls, (Span,) + _TYPES)
    return answer


def map_children(node, fn):
    """``node`` rebuilt with ``fn`` applied to each direct child node (types and spans kept);
    ``node`` itself when nothing changed."""
    f = _MAPS.get(type(node))
    if f is None:
        f = _map_function(type(node))
    return f(node, fn)


_MAPS: dict = {}  # node class -> its map_children function (_map_code)


def _map_code(cls: type) -> str:
    """The source of ``cls``'s map_children function ``_f(node, fn)``: ``fn`` applied to each
    field's node, or to each item of a tuple whose first item is a node, and the node rebuilt
    when one changed (_rebuild_code)."""
    names = _child_fields(cls)
    lines = ["def _f(node, fn):"]
    for i, name in enumerate(names):
        lines += [f"    x{i} = node.{name}",
                  f"    if isinstance(x{i}, tuple):",
                  f"        y{i} = _map_items(x{i}, fn) if x{i} and _is_node(x{i}[0]) else x{i}",
                  "    else:",
                  f"        y{i} = fn(x{i}) if _is_node(x{i}) else x{i}"]
    return "\n".join(lines + _rebuild_code(cls, names)) + "\n"


def _map_function(cls: type):
    names = _child_fields(cls)  # (raises for what is no dataclass, as fields() does)
    if not names:
        fn = _same
    else:
        scope = {"_is_node": _is_node, "_map_items": _map_items, "_cls": cls, "_replace": replace}
        exec(_map_code(cls), scope)
        fn = scope["_f"]
    _MAPS[cls] = fn
    return fn


def _map_items(items: tuple, fn) -> tuple:
    """``fn`` of each item; ``items`` itself when no item changed (unchanged subtrees stay shared;
    visit.Transformer's tuples too)."""
    new = tuple([fn(v) for v in items])
    for a, b in zip(new, items):
        if a is not b:
            return new
    return items


def _same(node, fn):
    """A leaf's map (a name, a literal): nothing under it to change."""
    return node


def _rebuild_code(cls: type, names) -> list[str]:
    """The lines that end a generated function of ``cls`` whose new values of the fields
    ``names`` are in ``y0``, ``y1``, ... (the old ones in ``x0``, ...): ``node`` rebuilt from them
    when one is another object (through the constructor, ``_cls``, as dataclasses.replace does but
    without its look at every field at every call), else ``node``. A class whose constructor does
    not take every field in order goes through dataclasses.replace (``_replace``)."""
    every = fields(cls)
    lines = ["    if " + " or ".join(f"y{i} is not x{i}" for i in range(len(names))) + ":"]
    if all(f.init and not f.kw_only for f in every):
        args = ", ".join(f"y{names.index(f.name)}" if f.name in names else f"node.{f.name}" for f in every)
        lines.append(f"        return _cls({args})")
    else:  # init=False or keyword-only fields: what changed, through dataclasses.replace
        lines.append("        changes = {}")
        lines += [f"        if y{i} is not x{i}: changes[{name!r}] = y{i}" for i, name in enumerate(names)]
        lines.append("        return _replace(node, **changes)")
    return lines + ["    return node"]


def access_root(e, through=None) -> "Ref | None":
    """The variable an access reaches through indexing, members, casts and unary operators
    (``*(float4*)&A[i]`` and ``A[i].x`` reach ``A``), or None; ``through`` narrows what is peeled."""
    through = through or (Index, Member, Cast, Unary)
    while isinstance(e, through):
        e = e.operand if isinstance(e, (Cast, Unary)) else e.base
    return e if isinstance(e, Ref) else None


def param_views(body) -> dict[str, str]:
    """The views of buffer parameters declared in ``body`` (``ptr_uint64``, a kernel's ``char*
    ptr`` read as words: analysis.prepare.pointer_views.TypedViews.of_param), view -> parameter:
    what is stored through a view is stored to its parameter."""
    return {d.name: d.init.name for d in walk(body) if isinstance(d, VarDecl) and d.storage == "shared"
            and isinstance(d.init, Ref) and d.init.kind == "param"} if body is not None else {}


def store_target(n):
    """The place one node stores to: an assignment's target (compound ones too) or the operand
    of ``++``/``--``; None for any other node."""
    if isinstance(n, Assign):
        return n.target
    return n.operand if isinstance(n, Unary) and n.op in ("++", "--") else None


def store_targets(node):
    """The places ``node`` (and everything under it) stores to: assignment targets, including
    compound ones, and the first argument of atomics."""
    for n in walk(node):
        if isinstance(n, Assign):
            yield n.target
        elif isinstance(n, Call) and n.kind == "atomic" and n.args:
            yield n.args[0]


def array_extents(t: CType) -> list:
    """The extents of a (nested) array type, outermost first (None where not a constant); [] for
    a type that is not an array."""
    out = []
    while isinstance(t, Array):
        out.append(t.extent)
        t = t.element
    return out


def element_type(t: CType) -> CType:
    """The type of the elements of a (nested) array type; ``t`` itself when it is not one."""
    while isinstance(t, Array):
        t = t.element
    return t


def elements(t: CType) -> int | None:
    """How many elements a (nested) array type holds, 1 for any other type; None where an extent
    is not a constant."""
    n = 1
    while isinstance(t, Array):
        if t.extent is None:
            return None
        n, t = n * t.extent, t.element
    return n


def _preorder(node) -> list:
    """``node`` and everything under it, in pre-order."""
    out = []
    fn = _APPEND.get(type(node))
    if fn is None:
        fn = _append_function(type(node))
    try:
        fn(node, out)
    except RecursionError:  # a tree deeper than Python's frames go: a stack of its own
        return _preorder_by_stack(node)
    return out


def _preorder_by_stack(node) -> list:
    out = []
    stack = [node]
    pop, append, push = stack.pop, out.append, _PUSH
    while stack:
        current = pop()
        append(current)
        fn = push.get(type(current))
        if fn is None:
            fn = _children_function(type(current), reverse=True)
        fn(current, stack)
    return out


#: class -> a function appending a value's pre-order to a list (_append_code): a node's generated
#: one, _append_items for a tuple, _append_nothing for any other value
_APPEND: dict = {}


def _append_code(cls: type) -> str:
    """The source of ``cls``'s function ``_f(node, out)``: ``node`` appended, then the pre-order of
    each value of its fields that may hold nodes, through the function of the value's class (one
    call per node: the walks recurse, which costs less than a stack of their own; no model tree
    is nearly as deep as Python's frames go)."""
    lines = ["def _f(node, out):", "    out.append(node)"]
    for name in _child_fields(cls):
        lines += [f"    v = node.{name}",
                  "    f = _append.get(type(v))",
                  "    if f is None:",
                  "        f = _append_function(type(v))",
                  "    f(v, out)"]
    return "\n".join(lines) + "\n"


def _append_function(cls: type):
    if issubclass(cls, tuple):
        fn = _append_items
    elif not _is_node_class(cls):
        fn = _append_nothing
    else:
        scope = {"_append": _APPEND, "_append_function": _append_function}
        exec(_append_code(cls), scope)
        fn = scope["_f"]
    _APPEND[cls] = fn
    return fn


def _append_items(items, out) -> None:
    """The pre-order of each node of a tuple field (a tuple in it holds no child: children)."""
    for x in items:
        f = _APPEND.get(type(x))
        if f is None:
            f = _append_function(type(x))
        if f is not _append_items:
            f(x, out)


def _append_nothing(value, out) -> None:
    pass


#: id(node) -> (node, its pre-order list), for the trees walked most recently: nodes are immutable
#: and the passes walk the same function body again and again (the node is held, so its id stays
#: its own while it is here)
_WALKS: dict[int, tuple] = {}
_WALKS_LIMIT = 400_000  # nodes held in all
_walks_held = [0]


def walk(node):
    """Pre-order iteration over ``node`` and everything under it."""
    hit = _WALKS.get(id(node))
    if hit is not None and hit[0] is node:
        return iter(hit[1])
    nodes = _preorder(node)
    if len(nodes) >= 64:
        while _WALKS and _walks_held[0] + len(nodes) > _WALKS_LIMIT:
            _old, dropped = _WALKS.pop(next(iter(_WALKS)))
            _walks_held[0] -= len(dropped)
        _WALKS[id(node)] = (node, nodes)
        _walks_held[0] += len(nodes)
    return iter(nodes)


def forget_walks() -> None:
    """Drop the kept pre-order walks and keys (:func:`walk`, :func:`key`): a parse worker does it
    between files, whose trees are never walked again; kept, they would hold up to the limit's
    nodes of earlier files alive for every full garbage collection to traverse."""
    _WALKS.clear()
    _walks_held[0] = 0
    _KEYS.clear()


def dump(node, indent: int = 0, spans: bool = False) -> str:
    """A deterministic, indented rendering of a model node, for golden tests and debugging."""
    pad = "  " * indent
    cls = type(node)
    name = cls.__name__
    attrs, kids = [], []
    names = _DUMP_FIELDS.get(cls)
    if names is None:  # (dataclasses.fields costs more than the rest of a small node's dump)
        names = _DUMP_FIELDS[cls] = tuple(f.name for f in fields(node) if f.name != "span")
    for field_name in names:
        value = getattr(node, field_name)
        if _is_node(value):
            kids.append((field_name, [value]))
        elif isinstance(value, tuple) and value and all(_is_node(v) for v in value):
            kids.append((field_name, list(value)))
        elif value is None or value == ():
            continue
        else:
            attrs.append(f"{field_name}={_fmt(value)}")
    head = f"{pad}{name}({', '.join(attrs)})"
    if spans and hasattr(node, "span"):
        head += f"  @{node.span.line}:{node.span.col}"
    lines = [head]
    for field_name, nodes in kids:
        lines.append(f"{pad}  .{field_name}:")
        lines.extend(dump(n, indent + 2, spans) for n in nodes)
    return "\n".join(lines)


_DUMP_FIELDS: dict[type, tuple[str, ...]] = {}  # node class -> its fields but span, in order (dump)
_KEYS: dict[int, tuple] = {}  # id(node) -> (node, its dump), for the nodes keyed most recently


def key(node) -> str:
    """``dump(node)``, a key that two nodes share when they are the same but for spans; kept for
    the nodes asked most recently (the facts key the same index expressions again and again)."""
    hit = _KEYS.get(id(node))
    if hit is not None and hit[0] is node:
        return hit[1]
    if len(_KEYS) > 50_000:
        _KEYS.clear()
    text = dump(node)
    _KEYS[id(node)] = (node, text)
    return text


def _fmt(value) -> str:
    if isinstance(value, _TYPES):
        return f"'{value}'"
    if isinstance(value, tuple):
        return "(" + ", ".join(_fmt(v) for v in value) + ")"
    return repr(value)
