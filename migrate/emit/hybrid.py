"""The hybrid form: a kernel the tool cannot migrate, kept as its original CUDA behind the same
factory, :class:`~.signature.Signature`, launcher and ``KERNELS`` entry as a migrated kernel.

The module's factory returns a ``T.prim_func`` whose body is ``T.CUDASourceCodeKernel``: the
kernel's source file (copied beside the module, ``#include``d, host code and ``main()`` too: nvcc
compiles it for the device only) followed by

- the kernel's definition copied as ``cuda2tile_body_<k>``, ``__global__`` made ``__device__
  __forceinline__`` (in the kernel's namespaces; a template stays a template), and
- an ``extern "C" __global__`` entry ``cuda2tile_<k>`` in TileLang's argument contract: the data
  pointers of the prim_func's tensors sorted by name (named ``p00_<param>``, ``p01_<param>``, ...
  so that the sorted order is the CUDA order; the scalars' bytes last, ``pNN_scalars``), then the
  tensors' size variables ``n00, n01, ...``. It calls the body with each pointer cast to its
  parameter's type and each scalar read from its byte offset (:func:`scalar_layout`).

A kernel template no launch site names an instance of is kept whole: its factory takes the
template arguments (C++ text or a dtype, a number), which the entry's call and launch bounds are
written with (``CUDA2TILE_TARGS``, ``CUDA2TILE_TARG_<i>``); a scalar of a type parameter has a
slot of :data:`TEMPLATE_SLOT` bytes. A template's explicit specialisations are copied as
specialisations of the body's template. The ``__constant__``/``__device__``/``__managed__``
globals the kernel's own body reads are passed by the launch as tensors (the Signature's
``symbols``; the body copy reads each through a pointer parameter). A kernel clang did not compile
with the tool's headers (M1001/M1101) takes its parameters as their declarations spell them.

A kernel whose parameters cannot be carried so (a reference, a function pointer, a type of
unknown size) or whose device functions read such a global is refused (:class:`NotHybrid`).
"""
from __future__ import annotations

import dataclasses
import keyword
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..dtypes import BY_NAME, TEMPLATE_SPELLINGS
from ..ir import model as m
from ..ir.loops import Form
from ..ir.names import template_param_name
from ..runtime.source import RewriteError, mask_source, match_forward, split_top_level
from .kernel import EmitError, KernelOutput, initial_values
from .printer import Line
from .signature import Signature

#: the entry TileLang launches and the kernel's body as a device function
ENTRY_PREFIX = "cuda2tile_"
BODY_PREFIX = "cuda2tile_body_"
#: where each scalar's bytes start: every offset a multiple of this (the entry copies them out
#: byte by byte, so any offset would do; aligned ones are easier to read)
SCALAR_ALIGN = 8
#: the bytes a scalar of a template's type parameter is given (a template kept whole, its
#: instance named by the launch): the widest scalar dtype's, a 16-byte vector's
TEMPLATE_SLOT = 16
#: what marks the template arguments in a template kept whole: ``CUDA2TILE_TARGS`` all of them
#: (its entry's call), ``CUDA2TILE_TARG_0`` the first (its launch bounds); the factory writes the
#: launch's arguments in (``runtime.tilelang_support.hybrid_source``)
TEMPLATE_MARK = "CUDA2TILE_TARG_"
#: CUDA handle types passed by value as a 64-bit integer
_HANDLES = {"cudaTextureObject_t": "uint64", "cudaSurfaceObject_t": "uint64"}
#: byte sizes of records CUDA defines
_RECORD_BYTES = {"dim3": 12, "uint3": 12, "int3": 12}
#: frontend errors that mean the kernel's file is no CUDA text: no wrapper can be built
_UNREADABLE = ("M1002", "M1004", "M1007")
#: frontend errors that mean clang could not compile the kernel's CUDA with the tool's headers
#: (a type or macro they lack, which the CUDA headers or the build's flags give nvcc): its model's
#: types may be clang's recovery (an unknown type read as ``int``)
_UNCOMPILED = ("M1001", "M1101")
#: what a parameter's declaration may spell besides its type
_QUALIFIERS = frozenset({"const", "volatile", "__restrict__", "__restrict", "restrict", "__grid_constant__",
                         "struct", "class", "signed"})


class NotHybrid(Exception):
    """The kernel cannot be kept as CUDA behind a migrated launcher; the message says why."""


@dataclass(frozen=True)
class HybridContext:
    """What the hybrid form of a file's kernels needs to know of the file and its build."""

    display: str  # the file as the module names it (relative to the converted root)
    file: str  # the file read (its kernels' definitions)
    includer: str | None = None  # the file whose translation unit it is part of, where it is none of its own
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    namespaces: dict = field(default_factory=dict)  # kernel -> its namespaces, outermost first
    specialised: frozenset = frozenset()  # kernel templates with explicit specialisations
    #: kernels (instances by their own names) whose wrapper nvcc did not build -> its first error
    #: (``migrate convert --verify-hybrid``)
    refused: dict = field(default_factory=dict)
    #: the folders the file's own headers need, asked when a kernel is kept (reading them costs)
    own_folders: Callable[[], tuple] = lambda: ()

    def include(self) -> str:
        """The file the hybrid source ``#include``s, relative to the module's folder (which mirrors
        the file's): the file's copy beside it, or its includer's."""
        if self.includer:
            return Path(os.path.relpath(self.includer, Path(self.file).resolve().parent)).as_posix()
        return Path(self.display).name

    def folders(self) -> tuple[str, ...]:
        """The folders nvcc searches after the module's own (absolute paths of the machine that
        converted it): the build's include folders, and the file's original folder where it
        includes headers the conversion does not copy beside the module."""
        return tuple(dict.fromkeys(str(Path(d).resolve()) for d in (*self.own_folders(), *self.include_dirs)))


def scalar_bytes(t: m.CType) -> int | None:
    """The size in bytes of a value of type ``t`` passed by value; None when unknown."""
    if isinstance(t, m.Scalar):
        return BY_NAME[t.dtype].size if t.dtype in BY_NAME else None
    if isinstance(t, m.Vector):
        size = BY_NAME[t.dtype].size if t.dtype in BY_NAME else None
        return None if size is None else (t.words or t.lanes) * size
    if isinstance(t, m.Record):
        return t.size or _RECORD_BYTES.get(t.name) or t.bytes or None
    if isinstance(t, m.Opaque) and t.spelling in _HANDLES:
        return 8
    return None


def hybrid_params(fn: m.Function, open_types: dict | None = None) -> tuple[tuple, tuple]:
    """(the Signature's params, the scalars' byte offsets ((param, offset, size), ...)) of a kernel
    kept as CUDA: a pointer is ``(name, "buffer", dtype)`` (``"bytes"`` where its element type has
    no dtype: any tensor is passed as its memory), a scalar ``(name, "scalar", dtype)``, a vector
    or struct passed by value ``(name, "value", its size)`` (the caller gives its bytes). In a
    template kept whole (no instance known), a scalar of a type parameter ``T`` is ``(name,
    "scalar", T's factory name)`` in a slot of :data:`TEMPLATE_SLOT` bytes (the launch's dtype
    for ``T`` says how many it fills); ``open_types``: such a template's type parameters -> their
    factory names."""
    open_types = open_types or {}
    params, layout, offset = [], [], 0
    for i, p in enumerate(fn.params):
        name = p.name or f"arg{i}"
        t = p.type
        if isinstance(t, (m.Pointer, m.Array)):
            target = t.pointee if isinstance(t, m.Pointer) else t.element
            if isinstance(target, m.Opaque) and "(" in target.spelling:
                raise NotHybrid(f"parameter '{name}' is a function pointer, which no tensor can carry")
            if isinstance(target, m.Scalar) and target.dtype != "bool":
                params.append((name, "buffer", target.dtype))
            else:
                params.append((name, "bytes", "uint8"))
            continue
        if isinstance(t, m.Reference):
            raise NotHybrid(f"parameter '{name}' is a reference, which no launch from the host can pass")
        if isinstance(t, m.TemplateType) and t.name in open_types:
            params.append((name, "scalar", open_types[t.name]))
            offset = -(-offset // SCALAR_ALIGN) * SCALAR_ALIGN
            layout.append((name, offset, TEMPLATE_SLOT))
            offset += TEMPLATE_SLOT
            continue
        size = scalar_bytes(t)
        if size is None:
            raise NotHybrid(f"parameter '{name}' of type '{t}' has no size the tool knows, so its bytes "
                            "cannot be passed")
        if isinstance(t, m.Scalar):
            params.append((name, "scalar", t.dtype))
        elif isinstance(t, m.Opaque):
            params.append((name, "scalar", _HANDLES[t.spelling]))
        else:
            params.append((name, "value", size))
        offset = -(-offset // SCALAR_ALIGN) * SCALAR_ALIGN
        layout.append((name, offset, size))
        offset += size
    return tuple(params), tuple(layout)


def _declaration(p: m.Param) -> str | None:
    """A parameter's declaration as its file spells it (None where it cannot be read)."""
    span = p.span
    try:
        lines = Path(span.file).read_text(errors="replace").splitlines()
    except (OSError, TypeError):
        return None
    if not 0 < span.line <= span.end_line <= len(lines):
        return None
    if span.line == span.end_line:
        return lines[span.line - 1][span.col - 1:span.end_col - 1]
    return " ".join([lines[span.line - 1][span.col - 1:], *lines[span.line:span.end_line - 1],
                     lines[span.end_line - 1][:span.end_col - 1]])


def spelled_params(fn: m.Function, params: tuple, code: str, open_types: dict | None = None) -> tuple:
    """``params`` (:func:`hybrid_params`) of a kernel clang did not compile with the tool's headers
    (``code``), each as its declaration spells it: a pointer to a type the declaration spells as a
    built-in one (``const float*``) keeps its dtype, any other is passed as its memory
    (``"bytes"``); a scalar must spell its built-in type, a struct passed by value its name (the
    entry asserts nvcc's size), or a template's type parameter (``open_types``: its name -> its
    factory name in a template kept whole, its dtype in an instance); :class:`NotHybrid` for
    another (clang's recovery typed it)."""
    open_types = open_types or {}
    out = []
    for (name, kind, dtype), p in zip(params, fn.params):
        text = _declaration(p)
        words = re.findall(r"[A-Za-z_][\w:]*|\*|&|\[", mask_source(text)) if text else []
        if words and words[-1] == (p.name or ""):
            words = words[:-1]
        if "[" in words:
            words = words[:words.index("[")]
        stars = words.count("*")
        spelled = " ".join(w for w in words if w not in _QUALIFIERS and w != "*").removeprefix("::")
        if kind in ("buffer", "bytes"):
            known = TEMPLATE_SPELLINGS.get(spelled) or open_types.get(spelled)
            out.append((name, kind, dtype) if known == dtype and stars == 1 else (name, "bytes", "uint8"))
        elif kind == "scalar" and not stars and (TEMPLATE_SPELLINGS.get(spelled) == dtype or spelled in _HANDLES
                                                  or spelled in open_types and open_types[spelled] == dtype) \
                or kind == "value" and isinstance(p.type, (m.Record, m.Vector)) and spelled.split("::")[-1] == \
                str(p.type).split("::")[-1] and not stars:
            out.append((name, kind, dtype))
        else:
            raise NotHybrid(f"its CUDA does not compile with the tool's headers ({code}) and parameter '{name}' "
                            f"is of a type they do not give ('{spelled or text}'): its size is not known")
    return tuple(out)


def _program_state(unit: m.TranslationUnit) -> dict:
    """name -> global of the unit's globals a wrapper compiled apart cannot hold itself: the
    ``__device__`` and ``__managed__`` ones and the ``__constant__`` ones with no initialiser."""
    return {g.name: g for g in unit.globals
            if g.storage in ("device", "managed") or g.storage == "constant" and g.init is None}


def host_filled_global(fn: m.Function, unit: m.TranslationUnit, callees, text: str | None = None) -> str | None:
    """The first global the kernel or a device function it calls names that a wrapper cannot
    give it: a ``__constant__`` without an initialiser (the program's host code fills it,
    cudaMemcpyToSymbol), a ``__device__`` or ``__managed__`` variable (state the host sets or
    other kernels share, which each wrapper, compiled apart, would hold its own copy of). With
    ``text`` (the kernel's definition, where clang's model of it is incomplete), a name it spells too."""
    names = _program_state(unit)
    if not names:
        return None
    if text is not None:
        spelled = set(re.findall(r"\b[A-Za-z_]\w*\b", mask_source(text)))
        for name in names:
            if name in spelled:
                return f"{names[name].storage} '{name}'"
    for f in (fn, *callees):
        if f.body is None:
            continue
        for node in m.walk(f.body):
            if isinstance(node, m.Ref) and node.name in names:
                return f"{names[node.name].storage} '{node.name}'"
    return None


def held_globals(fn: m.Function, unit: m.TranslationUnit, callees) -> tuple | None:
    """The globals of :func:`host_filled_global` the kernel reads, where a launch through the
    module can give them (the launcher passes each as a tensor, the body copy reads it through a
    pointer: :func:`symbol_parameters`, as a migrated kernel takes them: ``symbols={...}``, a
    ``__device__`` one kept between launches): each an array of a dtype or one value, read by the
    kernel's own body, no device function it calls; None where one is not so."""
    names = _program_state(unit)
    used = []
    for f in (fn, *callees):
        for node in m.walk(f.body) if f.body is not None else ():
            if isinstance(node, m.Ref) and node.name in names:
                if f is not fn or names[node.name].spelling:
                    return None  # a device function's copy is the wrapper's own
                if names[node.name] not in used:
                    used.append(names[node.name])
    for g in used:
        element = m.element_type(g.type)
        if not isinstance(element, m.Scalar) or element.dtype not in BY_NAME or not m.elements(g.type):
            return None
    return tuple(used)


def symbol_parameters(text: str, body: str, names) -> str:
    """The body copy ``text`` reading each global of ``names`` through a pointer parameter of its
    own (``cuda2tile_sym_<name>``, after the kernel's): ``#define name (*cuda2tile_sym_name)``
    over the copy, its pointer type taken before it (``typedef decltype(&name) ...``)."""
    code = mask_source(text)
    head = re.search(rf"\b{re.escape(body)}\s*\(", code)
    if head is None:
        raise NotHybrid("its definition's parameters cannot be found")
    close = _balanced(code, head.end() - 1) - 1
    inner = code[head.end():close].strip()
    extra = ", ".join(f"cuda2tile_symtype_{n} cuda2tile_sym_{n}" for n in names)
    if inner in ("", "void"):
        text = text[:head.end()] + extra + text[close:]
    else:
        text = text[:close] + ", " + extra + text[close:]
    before = "".join(f"typedef decltype(&{n}) cuda2tile_symtype_{n};\n" for n in names)
    defines = "".join(f"#define {n} (*cuda2tile_sym_{n})\n" for n in names)
    undefines = "".join(f"\n#undef {n}" for n in names)
    return f"// the globals it reads, passed by the launch\n{before}{defines}{text}{undefines}"


def _template_value(param: m.TemplateParam, arg: str):
    """A template argument as a factory takes it: a type's dtype (its spelling where it has
    none), a value's integer (its text where it is a name: ``BLOCK``)."""
    text = " ".join(arg.split())
    if param.kind == "type":
        return TEMPLATE_SPELLINGS.get(text.removeprefix("const "), text)
    try:
        return int(text.rstrip("uUlL"), 0) if text not in ("true", "false") else int(text == "true")
    except ValueError:
        return text


def _enumerator(param: m.TemplateParam, arg: str) -> str:
    """A template argument as C++ takes it: an enum parameter's value (``1``, as an instance's name
    spells it) as its constant (``MUL``), which C++ does not convert from an integer."""
    try:
        value = int(arg.strip().rstrip("uUlL"), 0)
    except ValueError:
        return arg
    named = [name for name, v in param.enumerators if v == value]
    return named[0] if named else arg


def _substituted(t: m.CType, types: dict) -> m.CType:
    if isinstance(t, m.TemplateType) and t.name in types:
        return types[t.name]
    if isinstance(t, m.Pointer):
        return m.Pointer(_substituted(t.pointee, types), t.const, t.restrict, t.volatile)
    return t


def instance_models(fn: m.Function) -> tuple[m.Function, ...]:
    """A kernel template's instances (from its launch sites: ``fn.instantiations``) as kernels of
    their own, for the hybrid form only: named ``<kernel>__<arguments>``, their parameters of the
    template's types those the arguments name (a type with no dtype stays the template's: a
    pointer to it is passed as its memory), their factory values derived where the frontend gave
    none; :class:`NotHybrid` without instances."""
    insts = [i for i in fn.instantiations if len(i.args) == len(fn.template_params)]
    if not insts:
        raise NotHybrid("a kernel template that no launch site instantiates with its arguments")
    out, seen = [], set()
    for inst in insts:
        values = tuple(inst.values) if len(inst.values) == len(fn.template_params) else \
            tuple(_template_value(p, a) for p, a in zip(fn.template_params, inst.args))
        suffix = "_".join(re.sub(r"\W+", "_", a).strip("_") for a in inst.args)
        name = f"{fn.name}__{suffix}"
        if name in seen:
            continue
        seen.add(name)
        types = {p.name: m.Scalar(v) for p, v in zip(fn.template_params, values)
                 if p.kind == "type" and isinstance(v, str) and v in BY_NAME and v != "void"}
        params = tuple(dataclasses.replace(p, type=_substituted(p.type, types)) for p in fn.params)
        out.append(dataclasses.replace(fn, name=name, params=params, template_params=(), instances=(),
                                       instantiations=(dataclasses.replace(inst, values=values),)))
    return tuple(out)


#: the names a hybrid factory binds besides its template arguments
_FACTORY_NAMES = frozenset({"grid", "block", "source", "hybrid_source", "source_kernel_with_shared"})


@dataclass(frozen=True)
class HeaderParam:
    """A template parameter as the kernel's ``template <...>`` spells it (a template kept whole)."""

    name: str
    kind: str  # "type", "value" or "template" (a template template parameter)
    default: str | None  # its default's text
    pack: bool  # a parameter pack (``typename... Ts``): the factory takes a sequence

    @property
    def factory(self) -> str:
        name = template_param_name(self.name)
        return f"{name}_" if name in _FACTORY_NAMES or keyword.iskeyword(name) else name

    @property
    def launch_kind(self) -> str:
        return "value" if self.kind == "value" else "type"


def template_header(text: str) -> tuple[HeaderParam, ...]:
    """The parameters of the ``template <...>`` a kernel template's definition ``text`` starts
    with (the text from the template's first token); () where they cannot be read (one without a
    name, a header that does not close)."""
    code = mask_source(text)
    head = re.match(r"\s*template\s*<", code)
    if head is None:
        return ()
    depth, start = 1, head.end()
    for i in range(start, len(code)):
        depth += {"<": 1, ">": -1, "(": 1, ")": -1}.get(code[i], 0)
        if depth == 0:
            inner = text[start:i]
            break
    else:
        return ()
    out = []
    for part in split_top_level(inner):
        spelled, _eq, default = part.partition("=")
        spelled = " ".join(spelled.split())
        pack = "..." in spelled
        words = re.findall(r"[A-Za-z_]\w*", spelled.replace("...", " "))
        if not words or words[-1] in ("typename", "class", "int", "bool", "unsigned", "auto"):
            return ()  # unnamed: the factory could not name it
        if re.match(r"template\s*<", spelled):
            kind = "template"
        elif re.match(r"(typename|class)\b", spelled):
            kind = "type"
        else:
            kind = "value"
        out.append(HeaderParam(words[-1], kind, " ".join(default.split()) or None if _eq else None, pack))
    return tuple(out)



# -- the CUDA text ---------------------------------------------------------------------------------

def definition_text(fn: m.Function) -> str:
    """The kernel's definition as its file spells it (from its first token to its closing brace)."""
    span = fn.span
    try:
        lines = Path(span.file).read_text(errors="replace").splitlines(keepends=True)
    except OSError as exc:
        raise NotHybrid(f"its definition cannot be read ({exc.strerror or exc})") from None
    if not 0 < span.line <= span.end_line <= len(lines):
        raise NotHybrid("its definition's text is not in its file")
    if span.line == span.end_line:
        return lines[span.line - 1][span.col - 1:span.end_col - 1]
    return "".join([lines[span.line - 1][span.col - 1:], *lines[span.line:span.end_line - 1],
                    lines[span.end_line - 1][:span.end_col - 1]])


def _balanced(text: str, start: int) -> int:
    """The index after the bracket that closes the one at ``text[start]`` (masked text)."""
    try:
        return match_forward(text, start)
    except RewriteError:
        raise NotHybrid("its definition's parentheses do not balance") from None


def body_copy(text: str, name: str, body: str, macros=(), head: str = r"\s*\(") -> tuple[str, str]:
    """(the definition ``text`` as device function ``body``, the ``__launch_bounds__(...)`` it had
    or ""): ``__global__`` (or one of ``macros``, the program's names of it: ``#define GLOBAL
    __global__``) becomes ``__device__ __forceinline__``, the launch bounds move to the entry, the
    name becomes ``body``, ``__grid_constant__`` (a kernel's parameters' only) is dropped. Comments
    and strings are searched past, never changed."""
    code = mask_source(text)  # same offsets, comments and literals blanked
    head = re.search(rf"\b{re.escape(name)}{head}", code)
    spellings = "|".join(["__global__", *(re.escape(w) for w in macros)])
    glob = re.search(rf"\b(?:{spellings})\b", code)
    if head is None or glob is None or glob.start() > head.start():
        raise NotHybrid("its definition does not spell `__global__` and its name (a macro writes it?)")
    bounds = ""
    found = re.search(r"\b__launch_bounds__\s*\(", code[:head.start()])
    edits = [(glob.start(), glob.end(), "__device__ __forceinline__"), (head.start(), head.start() + len(name), body)]
    if found:
        end = _balanced(code, found.end() - 1)
        bounds = text[found.start():end]
        while end < len(code) and code[end] in " \t":  # and the blank that followed them
            end += 1
        edits.append((found.start(), end, ""))
    brace = code.find("{", head.end())
    for found in re.finditer(r"\b__grid_constant__\b\s*", code[:brace] if brace > 0 else ""):
        edits.append((found.start(), found.end(), ""))  # (a __global__ function's parameters' only)
    out = text
    for start, end, new in sorted(edits, reverse=True):
        out = out[:start] + new + out[end:]
    return out, bounds


#: an explicit specialisation of a kernel template: ``template <> __global__ void k<float>(``
_SPECIALISATION = r"\btemplate\s*<\s*>\s*(?:__global__\s+)?(?:[\w:]+\s+)*?void\s+{name}\s*<"


def specialisation_copies(own: m.Function) -> str:
    """The explicit specialisations of the kernel template ``own`` its file defines, each copied
    as a specialisation of the body's template (``template <> __device__ __forceinline__ void
    cuda2tile_body_k<float>(...) {...}``), so that the entry's call of an instance runs the
    specialisation CUDA would; :class:`NotHybrid` where one cannot be copied."""
    try:
        text = Path(own.span.file).read_text(errors="replace")
    except OSError as exc:
        raise NotHybrid(f"its specialisations cannot be read ({exc.strerror or exc})") from None
    code = mask_source(text)
    out = []
    for found in re.finditer(_SPECIALISATION.format(name=re.escape(own.name)), code):
        paren = code.find("(", found.end())
        if paren < 0:
            continue
        close = _balanced(code, paren)
        rest = re.match(r"\s*(?:__launch_bounds__\s*\([^)]*\)\s*)?([{;])", code[close:])
        if rest is None or rest.group(1) == ";":
            continue  # a declaration
        try:
            end = match_forward(code, close + rest.start(1)) - 1  # its body's closing brace
        except RewriteError:
            raise NotHybrid("an explicit specialisation's braces do not balance") from None
        copy, _bounds = body_copy(re.sub(r"^template\s*<\s*>", "", text[found.start():end + 1]), own.name,
                                  BODY_PREFIX + own.name, head=r"\s*<")
        line = text.count("\n", 0, found.start()) + 1
        out.append(f"\n\n// its explicit specialisation (line {line}), renamed\ntemplate <>{copy}")
    if not out:
        raise NotHybrid("a kernel template with explicit specialisations the tool does not find in its file")
    return "".join(out)


#: a macro that names ``__global__`` (``#define GLOBAL __global__``)
_GLOBAL_MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+__global__[ \t]*(?://.*)?$", re.M)


def global_macros(ctx: HybridContext) -> tuple[str, ...]:
    """The macros the kernel's file, its includer and the headers beside them define as
    ``__global__``."""
    files = {Path(ctx.file)}
    if ctx.includer:
        files.add(Path(ctx.includer))
    for folder in {f.parent for f in files}:
        for ext in ("*.h", "*.cuh", "*.hpp"):
            files.update(sorted(folder.glob(ext))[:200])
    found = []
    for f in sorted(files):
        try:
            text = f.read_text(errors="replace")
        except OSError:
            continue
        if "__global__" in text:
            found += [w for w in _GLOBAL_MACRO.findall(text) if w not in found]
    return tuple(found)


def _namespaced(text: str, namespaces: tuple[str, ...]) -> str:
    for ns in reversed(namespaces):
        text = f"namespace {ns} {{\n{text}\n}}  // namespace {ns}" if ns else f"namespace {{\n{text}\n}}"
    return text


def entry_text(name: str, body: str, params: tuple, layout: tuple, bounds: str, template_args: tuple = (),
               symbols: tuple = ()) -> str:
    """The ``extern "C" __global__`` entry TileLang launches: the tensors' data pointers (the
    parameters' order is their names' sorted order), the scalars' bytes, the tensors' sizes; it
    calls ``body`` (a qualified name, with its template arguments)."""
    entry = ENTRY_PREFIX + name
    offsets = {p: (o, s) for p, o, s in layout}
    buffers = [(i, p[0]) for i, p in enumerate(params) if p[1] in ("buffer", "bytes")]
    tensors = [f"p{i:02d}_{p}" for i, p in buffers] + ([f"p{len(params):02d}_scalars"] if layout else [])
    tensors += [f"q{j:02d}_{sym}" for j, sym in enumerate(symbols)]  # (sorted after the p's)
    # (a global's tensor q<j>: its size n<len(params) + 1 + j>, so that the sizes sort as the tensors)
    sizes = [f"int n{t[1:3]}" if t[0] == "p" else f"int n{len(params) + 1 + int(t[1:3]):02d}" for t in tensors]
    callee = body + (f"<{', '.join(template_args)}>" if template_args else "")
    lines = []
    if bounds:  # a bound that is an expression with parentheses hides the entry from TileLang's search
        inner = bounds[bounds.index("(") + 1:-1]
        lines.append(f"#define CUDA2TILE_BOUNDS_{name.upper()} {inner}")
        bounds = f"__launch_bounds__(CUDA2TILE_BOUNDS_{name.upper()}) "
    lines.append(f'extern "C" __global__ void {bounds}{entry}('
                 + ", ".join([f"unsigned char* {t}" for t in tensors] + sizes) + ")")
    lines.append("{")
    lines.append(f"    typedef decltype(&{callee}) F;")
    args = []
    for i, (pname, kind, _dtype) in enumerate(params):
        arg_type = f"cuda2tile_arg<{i}, F>::type"
        if kind in ("buffer", "bytes"):
            args.append(f"({arg_type}) p{i:02d}_{pname}")
        else:
            offset, size = offsets[pname]
            if _dtype in BY_NAME or kind == "value":
                lines.append(f'    static_assert(sizeof({arg_type}) == {size}, "{pname}: the tool took it for {size} bytes");')
            else:  # of a template's type parameter: the instance's type, in a slot of ``size`` bytes
                lines.append(f'    static_assert(sizeof({arg_type}) <= {size}, "{pname}: its slot holds {size} bytes");')
            args.append(f"cuda2tile_scalar<{arg_type}>(p{len(params):02d}_scalars + {offset})")
    args += [f"(cuda2tile_arg<{len(params) + j}, F>::type) q{j:02d}_{sym}" for j, sym in enumerate(symbols)]
    lines.append(f"    {callee}(" + ",".join(f"\n        {a}" for a in args) + ");")
    lines.append("}")
    return "\n".join(lines)


# -- the factory ------------------------------------------------------------------------------------


def hybrid_output(fn: m.Function, reason: str, diagnostics: list, seen: list, ctx: HybridContext,
                  unit: m.TranslationUnit, callees=(), template: m.Function | None = None) -> KernelOutput:
    """The kernel ``fn`` (an instance of the kernel template ``template``: the template's text,
    called with the instance's arguments) kept as CUDA, with ``diagnostics``; :class:`NotHybrid`
    when it cannot be (``seen``: every diagnostic of the kernel, the frontend's too)."""
    own = template or fn
    if fn.name in ctx.refused:
        raise NotHybrid(f"its wrapper does not build with nvcc: {ctx.refused[fn.name]}")
    errors = [d for d in seen if d.code in _UNREADABLE]
    if errors:
        raise NotHybrid(f"its file cannot be read as CUDA ({errors[0].code}), so no wrapper is built")
    #: clang did not compile it with the tool's headers (nvcc, with the CUDA headers and the
    #: program's, may): its parameters are taken as their declarations spell them
    unsure = next((d for d in seen if d.code in _UNCOMPILED), None)
    specialisations = specialisation_copies(own) if own.name in ctx.specialised else ""
    whole = template_header(definition_text(own)) if fn.template_params and template is None else None
    if whole is not None and not whole:
        raise NotHybrid("a kernel template whose template parameters cannot be read from its definition")
    params, layout = hybrid_params(fn, {t.name: t.factory for t in whole or () if t.kind == "type"})
    if unsure is not None:  # the template's type parameters: a kept-whole one's factory names, an instance's dtypes
        named = {t.name: t.factory for t in whole or () if t.kind == "type"}
        if template is not None and fn.instantiations:
            named.update({t.name: v for t, v in zip(template.template_params, fn.instantiations[0].values)
                          if t.kind == "type" and isinstance(v, str) and v in BY_NAME})
        params = spelled_params(fn, params, unsure.code, named)
    state = host_filled_global(fn, unit, callees, definition_text(own) if unsure is not None else None)
    held = held_globals(fn, unit, callees) if state is not None and unsure is None else None
    if state is not None and held is None:
        raise NotHybrid(f"it reads {state}, which the program's host code fills or its kernels share: "
                        "a wrapper, compiled apart, would hold its own copy")
    held = held or ()
    namespaces = tuple(ctx.namespaces.get(own.name, ()))
    try:
        text, bounds = body_copy(definition_text(own), own.name, BODY_PREFIX + own.name)
    except NotHybrid:  # a macro may write __global__: the program's names of it
        text, bounds = body_copy(definition_text(own), own.name, BODY_PREFIX + own.name, global_macros(ctx))
    if held:
        text = symbol_parameters(text, BODY_PREFIX + own.name, [g.name for g in held])
    instance_args = tuple(_enumerator(t, a) for t, a in zip(own.template_params, fn.instantiations[0].args)) \
        if template is not None and fn.instantiations else ()
    # the entry is no template: the instance's values (those its launch leaves to their defaults too)
    values = tuple(fn.instantiations[0].values) if template is not None and fn.instantiations else ()
    for i, t in enumerate(own.template_params if template is not None else ()):
        arg = instance_args[i] if i < len(instance_args) else \
            values[i] if i < len(values) and isinstance(values[i], int) else t.default
        if t.name and arg is not None:
            bounds = re.sub(rf"\b{re.escape(t.name)}\b", f"({arg})", bounds)
    if whole:  # kept whole: marks the factory replaces with the launch's template arguments
        for i, t in enumerate(whole):
            mark = f"({TEMPLATE_MARK}{i})" if t.kind == "value" else f"{TEMPLATE_MARK}{i}"  # (T::N: no parentheses)
            bounds = re.sub(rf"\b{re.escape(t.name)}\b", mark, bounds)
        instance_args = ("CUDA2TILE_TARGS",)
    if '"""' in text:
        raise NotHybrid('its definition holds \'"""\', which the module\'s raw string cannot')
    qualified = "::".join([n for n in namespaces if n] + [BODY_PREFIX + own.name])
    args = instance_args
    cuda = (f"// {own.name} as a device function: its definition ({Path(ctx.display).name}, line {own.span.line}),"
            f" renamed\n{_namespaced(text + specialisations, namespaces)}\n\n"
            "// the entry T.CUDASourceCodeKernel launches: the tensors' data pointers sorted by name (the CUDA\n"
            "// order), the scalars' bytes last, then the tensors' sizes\n"
            + entry_text(fn.name, qualified, params, layout, bounds, args, tuple(g.name for g in held)))
    out = KernelOutput(fn.name, Form.HYBRID, reason, diagnostics=list(diagnostics))
    symbols = tuple((g.name, m.element_type(g.type).dtype, m.elements(g.type)) for g in held)
    try:
        kept = tuple((g.name, initial_values(g)) for g in held if g.storage != "constant")
    except EmitError as exc:
        raise NotHybrid(str(exc)) from None
    out.lines = factory_lines(fn, own, params, layout, cuda, ctx, whole or (), symbols)
    out.signature = Signature(fn.name, params=params, template=tuple((t.factory, t.launch_kind) for t in whole or ()),
                              symbols=symbols, state=kept, form="hybrid", hybrid=layout,
                              hybrid_include=ctx.include(), hybrid_folders=ctx.folders(),
                              hybrid_defines=tuple(ctx.defines))
    return out


def factory_lines(fn: m.Function, own: m.Function, params: tuple, layout: tuple, cuda: str,
                  ctx: HybridContext, whole: tuple = (), symbols: tuple = ()) -> list[Line]:
    """The module's CUDA text of the kernel and its factory ``make_<k>``; a template kept whole
    (``whole``: its :class:`HeaderParam`) takes its template arguments as keywords, C++ text or a
    dtype for a type, a number or text for a value (None: the template's default)."""
    tag = f"L{own.span.line}"
    constant = f"_{fn.name.upper()}_CUDA"
    tensors = [(f"p{i:02d}_{p[0]}", f"n{i:02d}") for i, p in enumerate(params) if p[1] in ("buffer", "bytes")]
    if layout:
        tensors.append((f"p{len(params):02d}_scalars", f"n{len(params):02d}"))
    tensors += [(f"q{j:02d}_{sym[0]}", f"n{len(params) + 1 + j:02d}") for j, sym in enumerate(symbols)]
    lines = [Line(0, f'{constant} = r"""', "")]
    lines += [Line(0, text, "") for text in cuda.splitlines()]
    lines += [Line(0, '"""', ""), Line(0, "", ""), Line(0, "", "")]
    keywords = "".join(f", {t.factory}=None" for t in whole)
    lines.append(Line(0, f"def make_{fn.name}(grid, block, shared_bytes=0{keywords}, target=\"cuda\"):", tag))
    lines.append(Line(1, f'"""The CUDA kernel `{fn.name}` as it is (hybrid form): compiled by nvcc from '
                         f'{ctx.include()}, GPUs only.' + (
                             " No launch site names its instance: the template arguments name it ("
                             + ", ".join(t.factory for t in whole) + ")." if whole else "") + '"""', ""))
    lines.append(Line(1, "if target == \"c\":", ""))
    lines.append(Line(2, f"raise NotImplementedError(\"{fn.name} is kept as CUDA (hybrid form): "
                         "it runs on GPUs only\")", ""))
    if whole:  # (factory name, C++ name, value, its default's text, a pack)
        args = ", ".join(f"({t.factory!r}, {t.name!r}, {t.factory}, {t.default!r}, {t.pack})" for t in whole)
        lines.append(Line(1, f"source = hybrid_source(__file__, {ctx.include()!r}, {constant}, template=({args},))", ""))
    else:
        lines.append(Line(1, f"source = hybrid_source(__file__, {ctx.include()!r}, {constant})", ""))
    names = [size for _t, size in tensors]
    if names:  # (T.dynamic of one name is that variable, of several a tuple)
        lines.append(Line(1, f"{', '.join(names)} = T.dynamic({', '.join(names)!r})", ""))
    lines.append(Line(0, "", ""))
    lines.append(Line(1, "@T.prim_func", ""))
    signature = ", ".join(f'{t}: T.Tensor(({n},), "uint8")' for t, n in tensors)
    lines.append(Line(1, f"def hybrid_{fn.name}({signature}):", ""))
    lines.append(Line(2, "if shared_bytes:  # extern __shared__: T.CUDASourceCodeKernel launches without "
                         "dynamic shared memory", ""))
    lines.append(Line(3, f"source_kernel_with_shared(grid, block, shared_bytes, source, "
                         f"\"{ENTRY_PREFIX}{fn.name}\")", ""))
    lines.append(Line(2, "else:", ""))
    lines.append(Line(3, f"T.CUDASourceCodeKernel(*grid, threads=list(block), source_code_or_path=source, "
                         f"entry_name=\"{ENTRY_PREFIX}{fn.name}\")", tag))
    lines.append(Line(0, "", ""))
    lines.append(Line(1, f"return hybrid_{fn.name}", ""))
    return lines
