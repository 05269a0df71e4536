"""The libclang boundary: loading, flags, and the entry points the Python bindings lack.

Everything that touches ``clang.cindex`` directly and is not a model-building visitor lives here.
"""
from __future__ import annotations

import ctypes
import functools
import json
import os
from pathlib import Path

import clang.cindex as ci

PRELUDE_DIR = Path(__file__).parent / "prelude"
PRELUDE_HEADER = PRELUDE_DIR / "cuda2tile_prelude.h"
STUB_INCLUDE_DIR = PRELUDE_DIR / "include"

#: Flags for parsing CUDA with no CUDA toolkit and no clang resource headers.
BASE_ARGS = (
    "-x", "cuda",
    "--cuda-device-only",
    "-nocudainc", "-nocudalib", "-nostdinc",
    "-Wno-unknown-cuda-version",
    "-ferror-limit=0",
)

# clang's enum CXUnaryOperatorKind (clang 17+): the bindings do not expose it.
_UNARY_OPS = {1: ("++", True), 2: ("--", True), 3: ("++", False), 4: ("--", False),
              5: ("&", False), 6: ("*", False), 7: ("+", False), 8: ("-", False),
              9: ("~", False), 10: ("!", False)}


@functools.cache
def _lib():
    lib = ci.conf.lib
    lib.clang_getCursorBinaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorBinaryOperatorKind.restype = ctypes.c_int
    lib.clang_getBinaryOperatorKindSpelling.argtypes = [ctypes.c_int]
    lib.clang_getBinaryOperatorKindSpelling.restype = ci._CXString
    lib.clang_getCursorUnaryOperatorKind.argtypes = [ci.Cursor]
    lib.clang_getCursorUnaryOperatorKind.restype = ctypes.c_int
    lib.clang_Cursor_Evaluate.argtypes = [ci.Cursor]
    lib.clang_Cursor_Evaluate.restype = ctypes.c_void_p
    lib.clang_EvalResult_getKind.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getKind.restype = ctypes.c_int
    lib.clang_EvalResult_isUnsignedInt.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_isUnsignedInt.restype = ctypes.c_uint
    lib.clang_EvalResult_getAsLongLong.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsLongLong.restype = ctypes.c_longlong
    lib.clang_EvalResult_getAsUnsigned.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsUnsigned.restype = ctypes.c_ulonglong
    lib.clang_EvalResult_getAsDouble.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_getAsDouble.restype = ctypes.c_double
    lib.clang_EvalResult_dispose.argtypes = [ctypes.c_void_p]
    lib.clang_EvalResult_dispose.restype = None
    lib.clang_getNumOverloadedDecls.argtypes = [ci.Cursor]
    lib.clang_getNumOverloadedDecls.restype = ctypes.c_uint
    lib.clang_getOverloadedDecl.argtypes = [ci.Cursor, ctypes.c_uint]
    lib.clang_getOverloadedDecl.restype = ci.Cursor
    lib.clang_Cursor_isMacroFunctionLike.argtypes = [ci.Cursor]
    lib.clang_Cursor_isMacroFunctionLike.restype = ctypes.c_uint
    return lib


def is_function_like_macro(cursor: ci.Cursor) -> bool:
    """Whether the MACRO_DEFINITION ``cursor`` takes arguments (``#define F(x) ...``)."""
    return bool(_lib().clang_Cursor_isMacroFunctionLike(cursor))


def macro_definition(tu: ci.TranslationUnit, name: str) -> ci.Cursor | None:
    """The user's macro ``name`` defined at the top level of ``tu`` (its last definition), or None;
    the table is built once per unit."""
    table = getattr(tu, "_c2t_macros", None)
    if table is None:
        table = {c.spelling: c for c in user_declarations(tu) if c.kind == ci.CursorKind.MACRO_DEFINITION}
        tu._c2t_macros = table
    return table.get(name)


def overloaded_decls(cursor: ci.Cursor) -> list[ci.Cursor]:
    """The candidate declarations of an OVERLOADED_DECL_REF (a call not yet resolved)."""
    lib = _lib()
    out = []
    for i in range(lib.clang_getNumOverloadedDecls(cursor)):
        decl = lib.clang_getOverloadedDecl(cursor, i)
        decl._tu = cursor._tu
        out.append(decl)
    return out


def specialized_template(cursor: ci.Cursor) -> ci.Cursor | None:
    """The function template ``cursor`` (a specialisation) instantiates, or None."""
    template = _lib().clang_getSpecializedCursorTemplate(cursor)  # the bindings give None for none
    return template if template is not None and template.kind != ci.CursorKind.NO_DECL_FOUND else None


def binary_op(cursor: ci.Cursor) -> str:
    """The spelling of a BINARY_OPERATOR / COMPOUND_ASSIGNMENT_OPERATOR (``+``, ``+=``, ...)."""
    lib = _lib()
    kind = lib.clang_getCursorBinaryOperatorKind(cursor)
    return ci._CXString.from_result(lib.clang_getBinaryOperatorKindSpelling(kind))


def unary_op(cursor: ci.Cursor) -> tuple[str, bool]:
    """(spelling, postfix) of a UNARY_OPERATOR; ("", False) for kinds the model does not know."""
    return _UNARY_OPS.get(_lib().clang_getCursorUnaryOperatorKind(cursor), ("", False))


_EVAL_INT, _EVAL_FLOAT = 1, 2


def evaluate(cursor: ci.Cursor):
    """The compile-time value of an expression cursor: int, float, or None."""
    lib = _lib()
    result = lib.clang_Cursor_Evaluate(cursor)
    if not result:
        return None
    try:
        kind = lib.clang_EvalResult_getKind(result)
        if kind == _EVAL_INT:
            if lib.clang_EvalResult_isUnsignedInt(result):
                return int(lib.clang_EvalResult_getAsUnsigned(result))
            return int(lib.clang_EvalResult_getAsLongLong(result))
        if kind == _EVAL_FLOAT:
            return float(lib.clang_EvalResult_getAsDouble(result))
        return None
    finally:
        lib.clang_EvalResult_dispose(result)


def build_args(include_dirs=(), defines=(), std: str = "c++17", arch: str = "sm_90",
               extra=()) -> list[str]:
    """The full clang command line (without the file name) for one translation unit."""
    args = list(BASE_ARGS)
    args.append(f"--cuda-gpu-arch={arch}")
    args.append(f"-std={std}")
    for d in defines:
        args.append(f"-D{d}")
    for inc in include_dirs:
        args.append(f"-I{inc}")
    args += list(extra)
    args += ["-include", str(PRELUDE_HEADER), "-isystem", str(STUB_INCLUDE_DIR)]
    return args


@functools.cache
def index() -> ci.Index:
    return ci.Index.create()


@functools.lru_cache(maxsize=4096)
def is_prelude_file(path: str | None) -> bool:
    """Whether ``path`` is one of the bundled prelude/stub headers (cached: asked per cursor)."""
    if not path:
        return True
    try:
        return Path(path).resolve().is_relative_to(_PRELUDE_RESOLVED)
    except OSError:
        return False


_PRELUDE_RESOLVED = PRELUDE_DIR.resolve()


_VISITOR = ctypes.CFUNCTYPE(ctypes.c_int, ci.Cursor, ci.Cursor, ctypes.py_object)
_NESTING = frozenset(k.value for k in (ci.CursorKind.NAMESPACE, ci.CursorKind.LINKAGE_SPEC,
                                        ci.CursorKind.UNEXPOSED_DECL))


#: a raw source location's offset (its macro bit cleared), and where the offsets of what a unit
#: loads from a precompiled header begin at the latest: clang gives the loaded places offsets
#: counting down from 2**31 (the prelude's take the top half megabyte) and the unit's own
#: offsets counting up from 0 (a file of at most a few megabytes, with its macro expansions)
_OFFSET_BITS, _LOADED_FROM = 0x7FFFFFFF, 1 << 30


def user_declarations(tu: ci.TranslationUnit) -> list[ci.Cursor]:
    """The top-level declarations of ``tu`` (through namespaces, ``extern "C"`` blocks) that lie
    in a file of the user's, not in the prelude or a stub header (``is_prelude_file``), or in no
    file. The prelude's four thousand declarations and macros are most of a unit's top level:
    each is asked only for its file (two libclang calls in the visitor, the answer kept per
    file handle), and a cursor object is kept only for the user's. In a unit read with a
    precompiled prelude that holds only prelude files (``_PCH_PRELUDE_ONLY``), a declaration
    whose place lies in the precompiled part is the prelude's: its raw location says so (the
    file lookup of such a place costs libclang most of this function's time)."""
    lib = ci.conf.lib
    loaded_prelude = getattr(tu, "_c2t_prelude_pch", False)
    seen: dict = {}
    out: list[ci.Cursor] = []
    handle = ci.c_object_p()
    where = ctypes.byref(handle)
    value = ctypes.c_void_p.from_address(ctypes.addressof(handle))  # the handle read as a number
    location, instantiation = lib.clang_getCursorLocation, lib.clang_getInstantiationLocation

    def visit(child, _parent, _data) -> int:
        place = location(child)
        if loaded_prelude and place.int_data & _OFFSET_BITS >= _LOADED_FROM:
            return 1  # a place in the precompiled prelude
        instantiation(place, where, None, None, None)
        key = value.value  # (ctypes.cast costs more than the two libclang calls)
        if key is None:
            return 1  # no file: the prelude's builtins
        prelude = seen.get(key)
        if prelude is None:
            prelude = seen[key] = is_prelude_file(ci.File(handle).name)
        if prelude:
            return 1
        child._tu = tu
        if child._kind_id in _NESTING:
            lib.clang_visitChildren(child, callback, None)
        else:
            out.append(child)
        return 1  # CXChildVisit_Continue

    callback = _VISITOR(visit)
    lib.clang_visitChildren(tu.cursor, callback, None)
    return out


def _children(self: ci.Cursor):
    """``Cursor.get_children`` without cindex's assertion that no child is the null cursor (which
    libclang never visits): that assertion asks libclang for the null cursor and compares each
    child with it, two more libclang calls per child of the model builder's every cursor."""
    found = [self._tu]  # the unit, then the children (one callback for every call: making a
    ci.conf.lib.clang_visitChildren(self, _COLLECT, found)  # ctypes callback costs as much as a visit)
    children = iter(found)
    next(children)
    return children


def _collect(child, _parent, found) -> int:
    child._tu = found[0]  # the unit is kept alive while its cursors are
    found.append(child)
    return 1  # CXChildVisit_Continue


_COLLECT = _VISITOR(_collect)


ci.Cursor.get_children = _children


class _Kinds(dict):
    """Cursor kind id -> CursorKind, as ``CursorKind.from_id`` gives it (which raises for an id
    the bindings do not know)."""

    def __missing__(self, kind_id: int):
        return ci.CursorKind.from_id(kind_id)


_CURSOR_KINDS = _Kinds((k.value, k) for k in ci.CursorKind.get_all_kinds())
#: ``Cursor.kind`` read from a table: the bindings' property calls ``from_id``, which checks the
#: id against its list each time (the model builder asks a kind five million times in a pool)
ci.Cursor.kind = property(lambda self: _CURSOR_KINDS[self._kind_id], doc=ci.Cursor.kind.__doc__)

_CALL_EXPR = ci.CursorKind.CALL_EXPR.value


def call_exprs(cursor: ci.Cursor) -> list[ci.Cursor]:
    """The call expressions of ``cursor``'s tree (itself included), in pre-order: what
    ``cursor.walk_preorder()`` gives of them, found in one libclang traversal that makes a
    cursor object only for the calls (a host ``main`` is thousands of cursors)."""
    tu = cursor._tu
    out = [cursor] if cursor._kind_id == _CALL_EXPR else []

    def visit(child, parent, _data) -> int:
        if child._kind_id == _CALL_EXPR:
            child._tu = tu
            if not ci.CursorKind.from_id(parent._kind_id).is_declaration():
                # the cursor's parent declaration, as walk_preorder's cursors have it: set only
                # where the parent is one (cursors equal only with it the same)
                child.data[0] = None
            out.append(child)
        return 2  # CXChildVisit_Recurse

    ci.conf.lib.clang_visitChildren(cursor, _VISITOR(visit), None)
    return out


def token_cursors(tokens: list) -> list[ci.Cursor]:
    """The cursor of each of ``tokens`` (tokens of one unit, in source order), as ``Token.cursor``
    gives it, found in one ``clang_annotateTokens`` call: each call walks the unit's declarations
    around the tokens it is given, so a call per token costs as much as a call for a run of them."""
    if not tokens:
        return []
    tu = tokens[0]._tu
    array = (ci.Token * len(tokens))()
    for i, token in enumerate(tokens):
        array[i].int_data = token.int_data
        array[i].ptr_data = token.ptr_data
    cursors = (ci.Cursor * len(tokens))()
    ci.conf.lib.clang_annotateTokens(tu, array, len(tokens), cursors)
    out = []
    for cursor in cursors:
        cursor._tu = tu
        out.append(cursor)
    return out


def parse(path: str, args: list[str], unsaved: list[tuple[str, str]] = ()) -> ci.TranslationUnit:
    """libclang's translation unit of ``path``; the prelude comes precompiled where it can
    (:func:`with_precompiled_prelude`), which gives the same unit about twice as fast."""
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    fast = with_precompiled_prelude(args)
    if fast is not None:
        try:
            tu = index().parse(os.fspath(path), args=fast, unsaved_files=list(unsaved) or None,
                               options=options)
            tu._c2t_prelude_pch = _PCH_PRELUDE_ONLY.get(fast[fast.index("-include-pch") + 1], False)
            return tu
        except ci.TranslationUnitLoadError:
            pass  # parsed again below with the prelude as text
    return index().parse(os.fspath(path), args=args, unsaved_files=list(unsaved) or None,
                         options=options)


# -- the precompiled prelude ---------------------------------------------------------------------
# Parsing the prelude is most of the cost of a small file (30 ms of 60 on this machine). It is the
# same text for every file whose flags differ only in their -I folders, so it is precompiled once
# per process and flag set (PCH files in the process's temporary folder, which `migrate` owns:
# migrate.scratch) and read back with -include-pch. The prelude's own #includes search the -I
# folders first: a file whose -I folders hold a header of the same name as one the prelude
# includes is parsed with the prelude as text, as is every file when precompiling fails.

_PCH: dict[tuple, tuple[str, tuple[str, ...]] | None] = {}  # key -> (PCH path, the prelude's headers)
_PCH_DIR: list[str] = []
_PCH_PRELUDE_ONLY: dict[str, bool] = {}  # PCH path -> every file it holds is a prelude file
_SHADOWS: dict[tuple[str, str], bool] = {}  # (-I folder, header) -> the folder has it


def _pch_dir() -> str:
    if not _PCH_DIR:
        import atexit
        import shutil
        import tempfile
        folder = tempfile.mkdtemp(prefix="c2t-pch-")
        atexit.register(shutil.rmtree, folder, True)
        _PCH_DIR.append(folder)
    return _PCH_DIR[0]


#: a folder the parse workers of one conversion share (``migrate convert`` makes it for the run and
#: removes it after): a prelude precompiled by one worker is read by the others, not made again
SHARED_PCH_ENV = "CUDA2TILE_PCH_DIR"


def _precompile(key: tuple) -> tuple[str, tuple[str, ...]] | None:
    shared = os.environ.get(SHARED_PCH_ENV)
    if shared and os.path.isdir(shared):
        import hashlib
        path = os.path.join(shared, "prelude-" + hashlib.sha1(repr(key).encode()).hexdigest() + ".pch")
        made = _shared_precompiled(path)
        if made is not None:
            return made
        made = _precompile_into(key, f"{path}.{os.getpid()}.tmp")
        if made is None:
            return None
        other = _shared_precompiled(path)  # another worker's, made meanwhile
        if other is not None:
            return other
        try:  # the file, then what it holds: a worker that finds the second finds the first whole
            os.replace(made[0], path)
        except OSError:
            return made
        _PCH_PRELUDE_ONLY[path] = _PCH_PRELUDE_ONLY.pop(made[0])
        try:
            with open(f"{path}.{os.getpid()}.json", "w") as f:
                json.dump({"headers": list(made[1]), "prelude_only": _PCH_PRELUDE_ONLY[path]}, f)
            os.replace(f"{path}.{os.getpid()}.json", path + ".json")
        except OSError:
            pass  # the others make their own
        return path, made[1]
    return _precompile_into(key, os.path.join(_pch_dir(), f"prelude-{len(_PCH)}.pch"))


def _shared_precompiled(path: str) -> tuple[str, tuple[str, ...]] | None:
    """The prelude another worker of the run precompiled at ``path``, or None where there is none."""
    try:
        with open(path + ".json") as f:
            data = json.load(f)
        headers, only = tuple(data["headers"]), bool(data["prelude_only"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not os.path.isfile(path):
        return None
    _PCH_PRELUDE_ONLY[path] = only
    return path, headers


def _precompile_into(key: tuple, path: str) -> tuple[str, tuple[str, ...]] | None:
    try:
        tu = index().parse(str(PRELUDE_HEADER), args=list(key), options=(
            ci.TranslationUnit.PARSE_INCOMPLETE))
        if any(d.severity >= ci.Diagnostic.Error for d in tu.diagnostics):
            return None
        headers = set()
        for inc in tu.get_includes():
            name = Path(inc.include.name).resolve()
            for root in (STUB_INCLUDE_DIR.resolve(), PRELUDE_DIR.resolve()):
                if name.is_relative_to(root):
                    headers.add(str(name.relative_to(root)))
                    break
        tu.save(path)
        _PCH_PRELUDE_ONLY[path] = is_prelude_file(str(PRELUDE_HEADER)) and all(
            is_prelude_file(inc.include.name) for inc in tu.get_includes())
        return path, tuple(sorted(headers))
    except (ci.TranslationUnitLoadError, ci.TranslationUnitSaveError, OSError):
        return None


def _shadows(folder: str, header: str) -> bool:
    answer = _SHADOWS.get((folder, header))
    if answer is None:
        answer = _SHADOWS[(folder, header)] = os.path.exists(os.path.join(folder, header))
    return answer


def with_precompiled_prelude(args: list[str]) -> list[str] | None:
    """``args`` with the prelude's ``-include`` replaced by a precompiled prelude of the same
    flags (its -I folders aside), or None where that would not give the same unit."""
    try:
        at = args.index("-include")
    except ValueError:
        return None
    if args[at + 1] != str(PRELUDE_HEADER) or os.environ.get("CUDA2TILE_NO_PCH"):
        return None
    rest = args[:at] + args[at + 2:]
    folders = [a[2:] for a in rest if a.startswith("-I") and len(a) > 2]
    key = tuple(a for a in rest if not (a.startswith("-I") and len(a) > 2))
    if key not in _PCH:
        _PCH[key] = _precompile(key)
    made = _PCH[key]
    if made is None:
        return None
    pch, headers = made
    if any(_shadows(folder, h) for folder in folders for h in headers):
        return None
    return rest + ["-include-pch", pch]
