"""Corpus spec files (``NAME.toml`` beside ``NAME.cu``) loaded into frozen dataclasses.

The format is described in ``corpus/README.md``. One file holds one or more ``[[kernel]]``
tables; each becomes a :class:`KernelSpec` whose ``args`` are :class:`ArgSpec` in parameter
order and whose ``symbols`` are :class:`SymbolSpec` (``__constant__``/``__device__`` globals).

    >>> from migrate.runtime.spec import load_spec
    >>> kernels = load_spec("corpus/elementwise/saxpy.toml")
    >>> kernels[0].name, kernels[0].grid
    ('saxpy', (160, 1, 1))

Any malformed spec raises :class:`SpecError` naming the file and the offending table.
"""
from __future__ import annotations

import math
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import numpy as np

from .. import dtypes as _dtypes

__all__ = [
    "DTYPES", "FLOAT_DTYPES", "INT_DTYPES", "TOLERANCE_CLASSES", "ROLES",
    "SpecError", "ArgSpec", "SymbolSpec", "KernelSpec",
    "load_spec", "read_spec", "parse_spec", "parse_spec_tables", "DEFAULT_MAX_CHECK_BYTES", "kernel_from_dict", "dtype_itemsize", "numpy_dtype",
]

#: scalar dtypes a spec may name, with their size in bytes (views of migrate.dtypes)
DTYPES: dict[str, int] = _dtypes.SPEC_SIZES
FLOAT_DTYPES = _dtypes.SPEC_FLOATS
INT_DTYPES = _dtypes.SPEC_INTS
TOLERANCE_CLASSES = ("exact", "fp32", "fp32_accum", "fp64", "fp16", "bf16", "tf32")
ROLES = ("in", "out", "inout")

_KERNEL_KEYS = {"name", "id", "template", "grid", "block", "shared_bytes", "tolerance",
                "description", "note", "notes", "comment", "args", "symbols", "flops"}
_ARG_KEYS = {"name", "scalar", "value", "buffer", "elements", "role", "range", "description",
             "note", "comment"}
_SYMBOL_KEYS = {"name", "dtype", "elements", "range", "values", "description", "note", "comment"}


def dtype_itemsize(dtype: str) -> int:
    return DTYPES[dtype]


def numpy_dtype(dtype: str) -> np.dtype:
    """The numpy dtype that holds values of a spec dtype (bfloat16 is held as float32)."""
    return np.dtype(_dtypes.NUMPY_HOLDERS.get(dtype, dtype))


#: spec diagnostic codes (migrate/codes.py): the file is no spec, a key is unknown, a value has
#: the wrong type (or is missing), a value is out of its range, the buffers are too large, the
#: spec names a kernel the source does not have
SPEC_MALFORMED, SPEC_UNKNOWN_KEY, SPEC_TYPE, SPEC_VALUE, SPEC_TOO_LARGE, SPEC_NO_KERNEL = \
    "M4100", "M4101", "M4102", "M4103", "M4104", "M4105"
#: the default limit on the bytes of one check's buffers and symbols (``--max-check-bytes``)
DEFAULT_MAX_CHECK_BYTES = 4 * 1024 ** 3


class SpecError(ValueError):
    """A malformed spec: ``path`` is the file, ``where`` the table (``kernel[0].args[2]``),
    ``code`` its diagnostic code, ``line`` the line of the spec it is about (0: unknown) and
    ``kernel`` the name of the kernel whose table it is in ("" when it is about the whole file)."""

    def __init__(self, path: str | os.PathLike | None, message: str, where: str = "", *,
                 code: str = SPEC_TYPE, line: int = 0, kernel: str = "", key: str | None = None):
        self.key = key
        self.path = str(path) if path is not None else "<spec>"
        self.where = where
        self.message = message
        self.code = code
        self.line = line
        self.kernel = kernel
        super().__init__(self._text())

    def _text(self) -> str:
        at = f"{self.path}:{self.line}" if self.line else self.path
        return f"{at}: {self.where}: {self.message}" if self.where else f"{at}: {self.message}"

    def located(self, line: int, kernel: str | None = None) -> "SpecError":
        self.line = line
        if kernel is not None:
            self.kernel = kernel
        self.args = (self._text(),)
        return self


@dataclass(frozen=True)
class ArgSpec:
    """One kernel parameter: a by-value ``scalar`` or a pointer to a ``buffer``."""

    name: str
    kind: str                      # "scalar" | "buffer"
    dtype: str                     # scalar dtype (for buffers: of the elements)
    value: int | float | None = None               # scalars
    elements: int = 0                              # buffers: scalar elements
    role: str = "in"                               # buffers: in | out | inout
    range: tuple[float, float] | None = None       # buffers with role in/inout
    description: str = ""

    @property
    def is_buffer(self) -> bool:
        return self.kind == "buffer"

    @property
    def is_scalar(self) -> bool:
        return self.kind == "scalar"

    @property
    def is_output(self) -> bool:
        return self.kind == "buffer" and self.role in ("out", "inout")

    @property
    def is_input(self) -> bool:
        return self.kind == "buffer" and self.role in ("in", "inout")

    @property
    def nbytes(self) -> int:
        return self.elements * DTYPES[self.dtype] if self.kind == "buffer" else DTYPES[self.dtype]


@dataclass(frozen=True)
class SymbolSpec:
    """A ``__constant__`` or ``__device__`` global the host fills before the launch."""

    name: str
    dtype: str
    elements: int
    range: tuple[float, float] | None = None
    values: tuple | None = None
    description: str = ""

    @property
    def nbytes(self) -> int:
        return self.elements * DTYPES[self.dtype]


@dataclass(frozen=True)
class KernelSpec:
    """One ``[[kernel]]`` table: the instance to launch, its launch shape and its arguments."""

    name: str
    id: str
    template: tuple[str, ...] = ()
    grid: tuple[int, int, int] = (1, 1, 1)
    block: tuple[int, int, int] = (1, 1, 1)
    shared_bytes: int = 0
    tolerance: str = "fp32"
    args: tuple[ArgSpec, ...] = ()
    symbols: tuple[SymbolSpec, ...] = ()
    description: str = ""
    spec_path: str | None = None        # the .toml it came from
    cu_path: str | None = None          # the .cu beside it
    index: int = 0                      # position in the file
    flops: int = 0                      # arithmetic work of one launch (migrate bench: TFLOP/s)

    @property
    def instance(self) -> str:
        """C++ text naming the kernel instance, e.g. ``reduce<float, 256>``."""
        if self.template:
            return f"{self.name}<{', '.join(self.template)}>"
        return self.name

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1] * self.block[2]

    @property
    def num_blocks(self) -> int:
        return self.grid[0] * self.grid[1] * self.grid[2]

    @property
    def buffers(self) -> tuple[ArgSpec, ...]:
        return tuple(a for a in self.args if a.is_buffer)

    @property
    def outputs(self) -> tuple[ArgSpec, ...]:
        return tuple(a for a in self.args if a.is_output)

    def arg(self, name: str) -> ArgSpec:
        for a in self.args:
            if a.name == name:
                return a
        raise KeyError(name)

    def reference_key(self, corpus_root: str | os.PathLike | None = None) -> str:
        """``"<path of the .cu under corpus/>:<id>"``, the key of ``tests.references``."""
        cu = Path(self.cu_path or "")
        if corpus_root is not None:
            rel = cu.resolve().relative_to(Path(corpus_root).resolve())
        else:
            parts = cu.resolve().parts
            rel = Path(*parts[len(parts) - 1 - parts[::-1].index("corpus") + 1:]) \
                if "corpus" in parts else Path(cu.name)
        return f"{rel.as_posix()}:{self.id}"


# --------------------------------------------------------------------------- parsing

def load_spec(path: str | os.PathLike, max_bytes: int | None = None) -> list[KernelSpec]:
    """Read a spec TOML and return its kernels in file order (the first error raised)."""
    kernels, errors = read_spec(path, max_bytes)
    if errors:
        raise errors[0]
    return kernels


def read_spec(path: str | os.PathLike, max_bytes: int | None = None) -> tuple[list[KernelSpec], list[SpecError]]:
    """Read a spec TOML: the kernels of its good ``[[kernel]]`` tables and a :class:`SpecError`
    (code, line, kernel name) for each bad one, so that one bad table costs only its kernel."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return [], [SpecError(path, f"cannot read spec: {why}", code=SPEC_MALFORMED)]
    return parse_spec_tables(text, path, max_bytes)


def parse_spec(text: str, path: str | os.PathLike | None = None, max_bytes: int | None = None) -> list[KernelSpec]:
    """Parse spec TOML text; ``path`` is used for messages and to locate the ``.cu``."""
    kernels, errors = parse_spec_tables(text, path, max_bytes)
    if errors:
        raise errors[0]
    return kernels


def parse_spec_tables(text: str, path: str | os.PathLike | None = None,
                      max_bytes: int | None = None) -> tuple[list[KernelSpec], list[SpecError]]:
    """Parse spec TOML text table by table: (good kernels, errors located at their lines).
    ``max_bytes`` (default :data:`DEFAULT_MAX_CHECK_BYTES`) bounds one kernel's buffers and
    symbols together."""
    max_bytes = DEFAULT_MAX_CHECK_BYTES if max_bytes is None else int(max_bytes)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        at = re.search(r"\(at line (\d+), column (\d+)\)", str(e))
        line = getattr(e, "lineno", 0) or (int(at.group(1)) if at else 0)
        col = f" (column {at.group(2)})" if at else ""
        msg = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(e))
        return [], [SpecError(path, f"invalid TOML: {msg}{col}", code=SPEC_MALFORMED, line=line)]
    unknown = sorted(set(data) - {"kernel"})
    if unknown:
        err = SpecError(path, f"unknown top-level key(s) {unknown}; expected [[kernel]] tables{_nearest(unknown[0], {'kernel'})}",
                        code=SPEC_UNKNOWN_KEY)
        return [], [err.located(_top_key_line(text, unknown[0]))]
    tables = data.get("kernel")
    if not isinstance(tables, list) or not tables:
        return [], [SpecError(path, "no [[kernel]] table", code=SPEC_MALFORMED, line=1)]
    cu_path = None
    if path is not None:
        cu_path = str(Path(path).with_suffix(".cu"))
    kernels, errors = [], []
    for i, t in enumerate(tables):
        name = t.get("name") if isinstance(t, dict) and isinstance(t.get("name"), str) else ""
        try:
            k = kernel_from_dict(t, path=path, index=i, cu_path=cu_path)
            total = sum(a.nbytes for a in k.buffers) + sum(s.nbytes for s in k.symbols)
            if total > max_bytes:
                big = max(range(len(k.args)), key=lambda j: k.args[j].nbytes if k.args[j].is_buffer else -1)
                raise SpecError(path, f"its buffers and symbols hold {total:,} bytes ({_human(total)}), above the "
                                      f"limit of {max_bytes:,} bytes ({_human(max_bytes)}); give smaller sizes "
                                      "or raise --max-check-bytes",
                                f"kernel[{i}] ({k.name}).args[{big}] ({k.args[big].name})",
                                code=SPEC_TOO_LARGE, key="elements")
            kernels.append(k)
        except SpecError as e:
            errors.append(e.located(_error_line(text, e), name.strip()))
    ids = [k.id for k in kernels]
    dup = sorted({i for i in ids if ids.count(i) > 1})
    if dup:
        for k in [k for k in kernels if k.id in dup][1:]:
            err = SpecError(path, f"duplicate kernel id {k.id!r}: give each [[kernel]] a distinct 'id'",
                            f"kernel[{k.index}]", code=SPEC_VALUE, key="name")
            errors.append(err.located(_error_line(text, err), k.name))
        kernels = [k for k in kernels if k.id not in dup or k is next(x for x in kernels if x.id == k.id)]
    return kernels, errors


def _human(n: int) -> str:
    for unit, size in (("TiB", 1024 ** 4), ("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def _nearest(word: str, allowed) -> str:
    import difflib
    close = difflib.get_close_matches(word, sorted(allowed), n=1, cutoff=0.5)
    return f" (did you mean '{close[0]}'?)" if close else ""


_HEADER = re.compile(r"^\s*\[\[\s*kernel(?:\.(args|symbols))?\s*\]\]")


def _top_key_line(text: str, key: str) -> int:
    for n, line in enumerate(text.splitlines(), 1):
        if re.match(rf"^\s*\[*\s*{re.escape(key)}\b", line):
            return n
    return 0


def _error_line(text: str, err: SpecError) -> int:
    """The line of the spec text an error is about: the line of its key in its table (its
    ``[[kernel]]`` and, inside it, its ``[[kernel.args]]``/``[[kernel.symbols]]``), else the
    table's header."""
    m = re.match(r"kernel\[(\d+)\](?: \([^)]*\))?(?:\.(args|symbols)\[(\d+)\])?", err.where)
    if not m:
        return err.line
    want_kernel, sub, want_sub = int(m.group(1)), m.group(2), int(m.group(3) or 0)
    lines = text.splitlines()
    kernel_no, sub_no, start, end = -1, {"args": -1, "symbols": -1}, 0, len(lines)
    in_target = False
    for n, line in enumerate(lines):
        h = _HEADER.match(line)
        if not h:
            continue
        if h.group(1) is None:
            kernel_no += 1
            sub_no = {"args": -1, "symbols": -1}
        else:
            sub_no[h.group(1)] += 1
        here = kernel_no == want_kernel and (h.group(1) == sub if sub else h.group(1) is None) and \
            (not sub or sub_no[sub] == want_sub)
        if here:
            start, in_target = n, True
        elif in_target:
            end = n
            break
    if not in_target:
        return 0
    key = err.key
    if key is None:
        q = re.search(r"'(\w+)'", err.message)
        key = q.group(1) if q else None
    if key:
        for n in range(start + 1, end):
            if re.match(rf"^\s*{re.escape(key)}\s*=", lines[n]):
                return n + 1
    return start + 1


def kernel_from_dict(t: Any, path=None, index: int = 0, cu_path: str | None = None) -> KernelSpec:
    """Build a :class:`KernelSpec` from one parsed ``[[kernel]]`` table."""
    where = f"kernel[{index}]"
    if not isinstance(t, dict):
        raise SpecError(path, "a [[kernel]] entry must be a table", where)
    if isinstance(t.get("name"), str):
        where = f"kernel[{index}] ({t['name']})"
    _check_keys(t, _KERNEL_KEYS, path, where)
    name = _req_str(t, "name", path, where)
    kid = t.get("id", name)
    if not isinstance(kid, str) or not kid:
        raise SpecError(path, "'id' must be a non-empty string", where)
    template = t.get("template", [])
    if isinstance(template, (str, int)):
        template = [template]
    if not isinstance(template, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                                 for x in template):
        raise SpecError(path, "'template' must be a list of C++ template arguments (strings)", where)
    template = tuple(str(x) for x in template)
    grid = _dim3(t, "grid", path, where)
    block = _dim3(t, "block", path, where)
    nthreads = block[0] * block[1] * block[2]
    if nthreads > 1024:
        raise SpecError(path, f"block {list(block)} has {nthreads} threads; CUDA allows at most 1024", where,
                        code=SPEC_VALUE, key="block")
    if block[2] > 64:
        raise SpecError(path, f"blockDim.z = {block[2]} exceeds 64", where, code=SPEC_VALUE, key="block")
    shared = t.get("shared_bytes", 0)
    if not _is_int(shared):
        raise SpecError(path, f"'shared_bytes' must be a non-negative integer, not {shared!r}", where)
    if shared < 0:
        raise SpecError(path, f"'shared_bytes' must be a non-negative integer, not {shared}", where, code=SPEC_VALUE)
    tol = t.get("tolerance")
    if tol is None:
        raise SpecError(path, f"missing 'tolerance' (one of {', '.join(TOLERANCE_CLASSES)})", where)
    if tol not in TOLERANCE_CLASSES:
        raise SpecError(path, f"unknown tolerance class {tol!r}; expected one of {', '.join(TOLERANCE_CLASSES)}", where)
    desc = t.get("description", "")
    if not isinstance(desc, str):
        raise SpecError(path, "'description' must be a string", where)
    raw_args = t.get("args", [])
    if not isinstance(raw_args, list):
        raise SpecError(path, "'args' must be [[kernel.args]] tables", where)
    args = tuple(_arg(a, path, f"{where}.args[{i}]") for i, a in enumerate(raw_args))
    names = [a.name for a in args]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SpecError(path, f"duplicate argument name(s) {dup}", where)
    raw_syms = t.get("symbols", [])
    if not isinstance(raw_syms, list):
        raise SpecError(path, "'symbols' must be [[kernel.symbols]] tables", where)
    symbols = tuple(_symbol(s, path, f"{where}.symbols[{i}]") for i, s in enumerate(raw_syms))
    flops = t.get("flops", 0)
    if not _is_int(flops) or flops < 0:
        raise SpecError(path, "'flops' must be a non-negative integer (operations per launch)", where)
    return KernelSpec(name=name, id=kid, template=template, grid=grid, block=block,
                      shared_bytes=int(shared), tolerance=tol, args=args, symbols=symbols,
                      description=desc, spec_path=str(path) if path is not None else None,
                      cu_path=cu_path, index=index, flops=int(flops))


def _arg(a: Any, path, where: str) -> ArgSpec:
    if not isinstance(a, dict):
        raise SpecError(path, "a [[kernel.args]] entry must be a table", where)
    if isinstance(a.get("name"), str):
        where = f"{where} ({a['name']})"
    _check_keys(a, _ARG_KEYS, path, where)
    name = _req_str(a, "name", path, where)
    if not name.isidentifier():
        raise SpecError(path, f"argument name {name!r} is not an identifier", where)
    desc = a.get("description", "")
    has_s, has_b = "scalar" in a, "buffer" in a
    if has_s == has_b:
        raise SpecError(path, "an argument needs exactly one of 'scalar = DTYPE' or 'buffer = DTYPE'", where)
    if has_s:
        dtype = _dtype(a["scalar"], path, where)
        for k in ("elements", "role", "range"):
            if k in a:
                raise SpecError(path, f"'{k}' applies to buffers, not to scalar arguments", where)
        if "value" not in a:
            raise SpecError(path, "a scalar argument needs a 'value'", where)
        value = _scalar_value(a["value"], dtype, path, where)
        return ArgSpec(name=name, kind="scalar", dtype=dtype, value=value, description=desc)
    dtype = _dtype(a["buffer"], path, where)
    if "value" in a:
        raise SpecError(path, "'value' applies to scalar arguments; buffers take 'range'", where)
    elements = a.get("elements")
    if not _is_int(elements):
        got = "" if elements is None else f", not {elements!r} ({type(elements).__name__})"
        raise SpecError(path, f"a buffer needs 'elements', a positive integer (count of scalar elements){got}", where)
    if elements <= 0:
        raise SpecError(path, f"'elements' must be a positive integer, not {elements}", where, code=SPEC_VALUE)
    role = a.get("role", "in")
    if role not in ROLES:
        raise SpecError(path, f"'role' must be one of {', '.join(ROLES)}, not {role!r}", where)
    rng = None
    if role in ("in", "inout"):
        if "range" not in a:
            raise SpecError(path, f"an '{role}' buffer needs 'range = [lo, hi]'", where)
    if "range" in a:
        rng = _range(a["range"], dtype, path, where)
    return ArgSpec(name=name, kind="buffer", dtype=dtype, elements=int(elements), role=role,
                   range=rng, description=desc)


def _symbol(s: Any, path, where: str) -> SymbolSpec:
    if not isinstance(s, dict):
        raise SpecError(path, "a [[kernel.symbols]] entry must be a table", where)
    if isinstance(s.get("name"), str):
        where = f"{where} ({s['name']})"
    _check_keys(s, _SYMBOL_KEYS, path, where)
    name = _req_str(s, "name", path, where)
    if not all(part.isidentifier() for part in name.split("::")):
        raise SpecError(path, f"symbol name {name!r} is not a C++ (qualified) identifier", where)
    dtype = _dtype(s.get("dtype"), path, where)
    elements = s.get("elements", 1)
    if not _is_int(elements):
        raise SpecError(path, f"'elements' must be a positive integer, not {elements!r}", where)
    if elements <= 0:
        raise SpecError(path, f"'elements' must be a positive integer, not {elements}", where, code=SPEC_VALUE)
    values = None
    rng = None
    if "values" in s:
        vals = s["values"]
        if not isinstance(vals, list) or len(vals) != elements:
            raise SpecError(path, f"'values' must be a list of {elements} numbers", where)
        values = tuple(_scalar_value(v, dtype, path, where) for v in vals)
    if "range" in s:
        rng = _range(s["range"], dtype, path, where)
    if values is None and rng is None:
        raise SpecError(path, "a symbol needs 'range = [lo, hi]' (or explicit 'values')", where)
    return SymbolSpec(name=name, dtype=dtype, elements=int(elements), range=rng, values=values,
                      description=s.get("description", ""))


def _check_keys(t: dict, allowed: Iterable[str], path, where: str) -> None:
    unknown = sorted(set(t) - set(allowed))
    if unknown:
        raise SpecError(path, f"unknown key {unknown[0]!r}{_nearest(unknown[0], allowed)}"
                              + (f" (and {unknown[1:]})" if unknown[1:] else "") + f"; allowed: {sorted(allowed)}",
                        where, code=SPEC_UNKNOWN_KEY, key=unknown[0])


def _req_str(t: dict, key: str, path, where: str) -> str:
    v = t.get(key)
    if not isinstance(v, str) or not v.strip():
        raise SpecError(path, f"missing or empty '{key}'", where)
    return v.strip()


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _dim3(t: dict, key: str, path, where: str) -> tuple[int, int, int]:
    v = t.get(key)
    if v is None:
        raise SpecError(path, f"missing '{key}' (1 to 3 positive integers)", where)
    if _is_int(v):
        v = [v]
    if not isinstance(v, list) or not 1 <= len(v) <= 3 or not all(_is_int(x) for x in v):
        raise SpecError(path, f"'{key}' must be 1 to 3 positive integers, not {v!r}", where, key=key)
    if not all(x > 0 for x in v):
        raise SpecError(path, f"'{key}' must be 1 to 3 positive integers, not {v!r}", where, code=SPEC_VALUE, key=key)
    v = list(v) + [1] * (3 - len(v))
    if key == "grid" and (v[0] > 2**31 - 1 or v[1] > 65535 or v[2] > 65535):
        raise SpecError(path, f"grid {v} exceeds CUDA's limits", where, code=SPEC_VALUE, key=key)
    return (int(v[0]), int(v[1]), int(v[2]))


def _dtype(v, path, where: str) -> str:
    if v not in DTYPES:
        raise SpecError(path, f"unknown dtype {v!r}; expected one of {', '.join(DTYPES)}", where)
    return v


def _int_limits(dtype: str) -> tuple[int, int]:
    info = np.iinfo(np.dtype(dtype))
    return int(info.min), int(info.max)


def _scalar_value(v, dtype: str, path, where: str):
    if dtype in INT_DTYPES:
        if not _is_int(v):
            raise SpecError(path, f"value {v!r} must be an integer for dtype {dtype}", where, key="value")
        lo, hi = _int_limits(dtype)
        if not lo <= v <= hi:
            raise SpecError(path, f"value {v} does not fit {dtype}", where, code=SPEC_VALUE, key="value")
        return int(v)
    if not _is_num(v):
        raise SpecError(path, f"value {v!r} must be a number for dtype {dtype}", where, key="value")
    return float(v)


def _range(v, dtype: str, path, where: str) -> tuple:
    if not isinstance(v, list) or len(v) != 2 or not all(_is_num(x) for x in v):
        raise SpecError(path, f"'range' must be [lo, hi], not {v!r}", where, key="range")
    lo, hi = v
    if dtype in INT_DTYPES:
        if not (_is_int(lo) and _is_int(hi)):
            raise SpecError(path, f"an integer range needs integer bounds, not {v!r}", where)
        ilo, ihi = _int_limits(dtype)
        if lo < ilo or hi > ihi:
            raise SpecError(path, f"range {v} does not fit {dtype} [{ilo}, {ihi}]", where, code=SPEC_VALUE, key="range")
    else:
        if not all(math.isfinite(x) for x in v):
            raise SpecError(path, f"range bounds must be finite, not {v!r}", where)
    if lo > hi:
        raise SpecError(path, f"range {v}: lo > hi", where, code=SPEC_VALUE, key="range")
    if lo == 0 and hi == 0:
        raise SpecError(path, "range [0, 0] admits only zeros; inputs must never be all zero", where,
                        code=SPEC_VALUE, key="range")
    if dtype in INT_DTYPES:
        return (int(lo), int(hi))
    return (float(lo), float(hi))
