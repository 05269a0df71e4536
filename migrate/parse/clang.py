"""The libclang boundary: loading, flags, and the entry points the Python bindings lack.

Everything that touches ``clang.cindex`` directly and is not a model-building visitor lives here.
"""
from __future__ import annotations

import ctypes
import functools
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
    return lib


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


def in_prelude(cursor: ci.Cursor, seen: dict) -> bool:
    """Whether ``cursor`` lies in no file or in a bundled prelude/stub header, like
    ``is_prelude_file(cursor.location.file.name)`` but with one libclang call per cursor: the
    answer is kept in ``seen`` per file handle, which is only valid inside one translation unit
    (give each unit a dict of its own)."""
    handle = ci.c_object_p()
    ci.conf.lib.clang_getInstantiationLocation(cursor.location, ctypes.byref(handle), None, None, None)
    key = ctypes.cast(handle, ctypes.c_void_p).value
    if key is None:
        return True
    answer = seen.get(key)
    if answer is None:
        answer = seen[key] = is_prelude_file(ci.File(handle).name)
    return answer


def parse(path: str, args: list[str], unsaved: list[tuple[str, str]] = ()) -> ci.TranslationUnit:
    options = ci.TranslationUnit.PARSE_DETAILED_PROCESSING_RECORD
    return index().parse(os.fspath(path), args=args, unsaved_files=list(unsaved) or None,
                         options=options)
