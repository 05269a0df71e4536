"""CUDA device math for TileLang programs, generated from the compat table.

For hand-written TileLang::

    from migrate.compat import cuda_math
    ...
    with T.Kernel(n, prelude=cuda_math.prelude("c")):        # or "cuda"
        for i in T.Parallel(n):
            y[i] = cuda_math.expf(x[i]) + cuda_math.popc(k[i])

Each supported CUDA name is a function returning the TileLang expression (``PrimExpr``) of its
row (:mod:`migrate.compat.table`). Names:

* the CUDA name itself when it is a Python identifier (``cuda_math.expf``, ``cuda_math.__popc``,
  ``cuda_math.max``; reached through module ``__getattr__``, so builtins are not shadowed here);
* leading underscores stripped (``popc``, ``float2int_rn``, ``hadd``); a fast-math intrinsic whose
  stripped name is itself a CUDA function gets ``fast_`` instead (``__expf`` -> ``fast_expf``);
* ``std::name`` -> ``std_name``.

Overloaded names dispatch on the dtype of the first argument (``cuda_math.max(a, b)`` on int32 or
float32). Every function takes ``target=`` (``"cuda"``/``"c"``); the default is the module target
(:func:`set_target`, initially ``"cuda"``). With ``target="c"`` rows that fail on TileLang's CPU
target use their CPU form.

For the emitter: :func:`render` gives the Python source text of the expression,
:func:`externs_for` / :func:`prelude` the extern helper code for a kernel's ``prelude``.
"""
from __future__ import annotations

import ast
import functools
import keyword
import re
from typing import Callable, Iterable

from migrate.compat.externs import EXTERNS, FENCES, VOLATILE_BYTES, normalize_target, prelude_source
from migrate.compat.table import ROWS, UNSUPPORTED, Row, lookup, normalize_name, rows_for

__all__ = [
    "UnsupportedCall", "render", "render_template", "template", "externs_for", "helper_names", "prelude",
    "python_name", "names", "call", "set_target", "get_target", "numeric_limit", "c_div", "c_mod",
    "volatile_load", "volatile_store",
]


class UnsupportedCall(LookupError):
    """A CUDA name without a TileLang form (or not in the table)."""


_TARGET = "cuda"


def set_target(target) -> None:
    """Set the default target of the generated functions (``"cuda"`` or ``"c"``)."""
    global _TARGET
    _TARGET = normalize_target(target)


def get_target() -> str:
    return _TARGET


def volatile_load(ref, target=None):
    """A load of volatile global memory that other threads write (``ref`` a buffer element): on
    GPUs a relaxed atomic load, which no SM's L1 serves stale, except for one-byte elements, read
    by the CUDA's own volatile byte load (a ``c2t_volatile_load_*`` helper: libcu++ loads a byte
    atomically as 16 bits and a shift). The kernel's prelude must carry the helpers
    (:func:`externs_for` of the names in :data:`~migrate.compat.externs.VOLATILE_BYTES`)."""
    import tilelang.language as T
    helpers = _volatile_helpers(ref, target)
    if helpers:
        return T.call_extern(str(ref.dtype), helpers[0], T.address_of(ref))
    return T.atomic_load(ref, "relaxed")


def volatile_store(ref, value, target=None):
    """A store to volatile global memory (see :func:`volatile_load`): a relaxed atomic store, and
    for one-byte elements on GPUs the CUDA's own volatile byte store, where libcu++'s atomic byte
    store is a 32-bit compare-and-swap loop (mis's ``findmins`` ran 1.9x slower for it)."""
    import tilelang.language as T
    helpers = _volatile_helpers(ref, target)
    if helpers:
        return T.call_extern("int32", helpers[1], T.address_of(ref), T.cast(value, str(ref.dtype)))
    return T.atomic_store(ref, value, "relaxed")


def _volatile_helpers(ref, target):
    """The byte helpers for ``ref`` on ``target`` (GPUs only: TileLang's C target takes no address of
    an element it guards, and its threads run one at a time), else None."""
    tgt = normalize_target(target) if target is not None else _TARGET
    return VOLATILE_BYTES.get(str(ref.dtype)) if tgt == "cuda" else None


def _row(name: str, dtypes=None) -> Row:
    row = lookup(name, dtypes)
    if row is None:
        raise UnsupportedCall(f"'{name}' is not in the CUDA compat table")
    if row.status is UNSUPPORTED:
        raise UnsupportedCall(f"'{name}' has no TileLang form: {row.note}")
    return row


def template(name: str, *, target: str = "cuda", dtypes=None, statement: bool = False) -> str:
    """The template (``{0}``… placeholders) used for ``name`` on ``target``."""
    row = _row(name, dtypes)
    target = normalize_target(target)
    if statement and row.stmt is not None and (target == "cuda" or row.cpu):
        return row.stmt
    return row.form(target)


# ------------------------------------------------------------------------------------ render
class _Subst(ast.NodeTransformer):
    def __init__(self, args: list[ast.expr], dtypes):
        self.args = args
        self.dtypes = list(dtypes) if dtypes else []

    def visit_Name(self, node: ast.Name):
        m = re.fullmatch(r"_c2t_arg(\d+)", node.id)
        if m:
            return self.args[int(m.group(1))]
        return node

    def visit_Call(self, node: ast.Call):
        # T.cast(<arg i>, "<dtype>") where arg i already has that dtype: drop the cast
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr == "cast" and isinstance(f.value, ast.Name)
                and f.value.id == "T" and len(node.args) == 2 and not node.keywords
                and isinstance(node.args[0], ast.Name) and isinstance(node.args[1], ast.Constant)):
            m = re.fullmatch(r"_c2t_arg(\d+)", node.args[0].id)
            if m and int(m.group(1)) < len(self.dtypes) \
                    and str(self.dtypes[int(m.group(1))]) == node.args[1].value:
                return self.args[int(m.group(1))]
        self.generic_visit(node)
        return node


@functools.lru_cache(maxsize=None)
def _parsed_template(form: str, nargs: int) -> ast.Expression:
    return ast.parse(form.format(*[f"_c2t_arg{i}" for i in range(nargs)]), mode="eval")


def render(name: str, args: Iterable[str], *, target: str = "cuda", dtypes=None,
           statement: bool = False) -> str:
    """Python source of the TileLang expression for the CUDA call ``name(args...)``.

    ``args`` are the argument texts (already TileLang/Python expressions; pointer arguments of
    atomics as the element, ``a[i]`` for ``&a[i]``). ``dtypes`` (optional) selects the overload
    and drops casts that would be no-ops. ``target="c"`` gives the CPU form of rows that fail on
    TileLang's c target. ``statement=True`` gives the form for a discarded result (atomics).
    Parentheses are added only where precedence needs them::

        render("expf", ["x[i]"]) == "T.exp(x[i])"
    """
    args = list(args)
    form = template(name, target=target, dtypes=dtypes, statement=statement)
    row = _row(name, dtypes)
    if len(args) != len(row.args):
        raise TypeError(f"{name} takes {len(row.args)} argument(s), got {len(args)}")
    return render_template(form, args, dtypes=dtypes)


def render_template(form: str, args: Iterable[str], *, dtypes=None) -> str:
    """Substitute argument texts into a template (``"T.exp({0})"``), adding parentheses only
    where precedence needs them and dropping ``T.cast`` of an argument to its own dtype."""
    args = list(args)
    tree = _parsed_template(form, len(args))
    parsed = [ast.parse(a, mode="eval").body for a in args]
    new = _Subst(parsed, dtypes).visit(ast.parse(ast.unparse(tree), mode="eval"))
    return ast.unparse(ast.fix_missing_locations(new))


# ------------------------------------------------------------------------------------ externs
def helper_names(names: Iterable[str], target) -> list[str]:
    """Extern helpers needed by the calls ``names`` (all overloads) on ``target``."""
    target = normalize_target(target)
    out: list[str] = []
    for name in names:
        if name in FENCES:
            out += [FENCES[name]] if FENCES[name] not in out else []
            continue
        if name in EXTERNS:  # a helper the printer calls by its own name (volatile bytes)
            out += [name] if name not in out else []
            continue
        for row in rows_for(name):
            forms = [row.form("c")] if target == "c" else [row.tilelang, row.cpu_form, row.stmt]
            for form in forms:
                for h in re.findall(r'"(c2t_\w+)"', form or ""):
                    if h not in out:
                        out.append(h)
    return out


def gpu_call_helpers(names: Iterable[str]) -> list[str]:
    """The extern helpers that the GPU (TileLang ``cuda``) forms of the calls ``names`` call:
    function calls in the generated code, which TileLang's vectoriser leaves scalar."""
    out: list[str] = []
    for name in names:
        for row in rows_for(name):
            for h in re.findall(r'"(c2t_\w+)"', row.tilelang or ""):
                if h not in out:
                    out.append(h)
    return out


def externs_for(names: Iterable[str], target) -> str:
    """Prelude source with just the helpers the calls ``names`` need on ``target``.

    For ``"cuda"`` it also covers the CPU forms, so one program may use either form."""
    return prelude_source(helper_names(names, target), target)


def prelude(target) -> str:
    """Source of every extern helper for ``target`` (``"c"`` or ``"cuda"``); pass it to
    ``T.Kernel(..., prelude=...)``. Helpers are include-guarded: preludes may be concatenated."""
    return prelude_source(list(EXTERNS), target)


# ------------------------------------------------------------------------------------ functions
def python_name(cuda: str) -> str:
    """The cuda_math function name of a CUDA name (see the module docstring)."""
    cuda = normalize_name(cuda)
    if cuda.startswith("std::"):
        return "std_" + cuda[5:]
    stripped = cuda.lstrip("_")
    if stripped != cuda:
        clash = rows_for(stripped)
        if clash:
            return "fast_" + stripped
    if keyword.iskeyword(stripped):
        stripped += "_"
    return stripped


def _compile(form: str, nargs: int) -> Callable:
    code = compile(_parsed_template(form, nargs), f"<cuda_math {form}>", "eval")
    return lambda T, args: eval(code, {"T": T}, {f"_c2t_arg{i}": a for i, a in enumerate(args)})


def _convert(value, dtype: str):
    import tilelang  # noqa: F401  (puts TileLang's tvm on the path)
    from tvm import tirx
    if isinstance(value, (bool, int, float)) and not dtype.endswith("x2"):
        return tirx.const(value, dtype)
    return value


#: ``std::numeric_limits<T>::min()`` (the smallest normal number) and ``epsilon()`` of the
#: floating types; for integer types ``min()`` is the lowest value and ``epsilon()`` is 0.
_FLOAT_MIN = {"float16": 2.0 ** -14, "bfloat16": 2.0 ** -126, "float32": 2.0 ** -126, "float64": 2.0 ** -1022}
_FLOAT_EPSILON = {"float16": 2.0 ** -10, "bfloat16": 2.0 ** -7, "float32": 2.0 ** -23, "float64": 2.0 ** -52}


def numeric_limit(member: str, dtype):
    """``std::numeric_limits<dtype>::member()`` as a TileLang constant: ``max``, ``min``,
    ``lowest``, ``epsilon``, ``infinity``, ``quiet_NaN`` (C++'s values: ``infinity()`` and
    ``quiet_NaN()`` of an integer type are 0)."""
    import tilelang.language as T
    dt = str(dtype)
    floating = dt in _FLOAT_MIN
    if member == "max":
        return T.max_value(dt)
    if member == "lowest" or (member == "min" and not floating):
        return T.min_value(dt)
    if member == "min":
        return _convert(_FLOAT_MIN[dt], dt)
    if member == "epsilon":
        return _convert(_FLOAT_EPSILON[dt] if floating else 0, dt)
    if member in ("infinity", "quiet_NaN"):
        if not floating:
            return _convert(0, dt)
        return T.infinity(dt) if member == "infinity" else _convert(float("nan"), dt)
    raise UnsupportedCall(f"std::numeric_limits<{dt}>::{member}()")


def c_div(a, b):
    """C's ``a / b`` where the operands' type is a template's, known only to the factory: integers
    truncate (``T.truncdiv``), floats divide; a double literal on either side divides in double."""
    import tilelang.language as T
    da, db = _dtype_of(a), _dtype_of(b)
    if not any(d and d.startswith(("float", "bfloat")) for d in (da, db)):
        # a C double literal (printed as a Python float: 1.0 / n[i] on a template's INT_T n)
        # makes the division a double one, the integer operand converted
        if isinstance(a, float) and not isinstance(b, (int, float)):
            return T.float64(a) / T.Cast("float64", b)
        if isinstance(b, float) and not isinstance(a, (int, float)):
            return T.Cast("float64", a) / T.float64(b)
    dtype = da or db or ""
    return T.truncdiv(a, b) if dtype.startswith(("int", "uint")) else a / b


def c_mod(a, b):
    """C's ``a % b`` on a template's integer type (``T.truncmod``: the sign of ``a``)."""
    import tilelang.language as T
    return T.truncmod(a, b)


def c_neg(x):
    """C's ``-x`` where ``x``'s type is a template's (``atomicSub(&g[1], (T)10)``): an unsigned
    value is negated modulo 2**bits, a constant folded here (TVM refuses a negative unsigned
    constant, and its negation multiplies by one), another value subtracted from zero."""
    import tilelang  # noqa: F401  (puts TileLang's tvm on the path)
    import tvm
    from tvm import arith, tirx
    dt = _dtype_of(x)
    if dt is None or not dt.startswith("uint"):
        return -x
    folded = arith.Analyzer().simplify(x)
    bits = tvm.DataType(dt).bits
    if isinstance(folded, tirx.IntImm) and bits <= 32:
        return tirx.const((-int(folded.value)) % (1 << bits), dt)
    return tirx.const(0, dt) - x


def size_of(dtype) -> int:
    """C's ``sizeof(T)`` on a template's type: the bytes of the instance's dtype (``int32``: 4)."""
    import tvm
    t = tvm.DataType(str(dtype))
    return t.bits * t.lanes // 8


def dtype_of(value) -> str:
    """The dtype a template device function deduces from its argument ``value``: the value's own,
    or a C literal's (an int is ``int32``, a float ``float64``, a bool ``bool``), which TileLang
    passes to a macro as a Python number (``roundUpDiv(num, 256)``)."""
    dt = _dtype_of(value)
    if dt is not None:
        return dt
    if isinstance(value, bool):
        return "bool"
    return "int32" if isinstance(value, int) else "float64"


def _dtype_of(value) -> str | None:
    dt = getattr(value, "dtype", None)
    return str(dt) if dt is not None else None


def _make(name: str) -> Callable:
    rows = rows_for(name)
    supported = [r for r in rows if r.status is not UNSUPPORTED]

    def fn(*args, target=None, statement: bool = False):
        import tilelang.language as T
        tgt = normalize_target(target) if target is not None else _TARGET
        dts = [_dtype_of(a) for a in args]
        dts = dts if dts and dts[0] else None
        row = _row(name, dts)
        if len(args) != len(row.args):
            raise TypeError(f"{name} takes {len(row.args)} argument(s), got {len(args)}")
        vals = [_convert(a, dt) for a, dt in zip(args, row.args)]
        form = template(name, target=tgt, dtypes=dts, statement=statement)
        out = _compile_cached(form, len(vals))(T, vals)
        # ``a == b`` / ``a != b`` on PrimExprs give EqualOp/NotEqualOp wrappers in plain Python
        return out.asobject() if hasattr(out, "asobject") else out

    fn.__name__ = python_name(name)
    fn.__qualname__ = fn.__name__
    first = supported[0] if supported else rows[0]
    overloads = ", ".join(r.overload for r in rows if r.overload) or ", ".join(first.args)
    fn.__doc__ = (f"CUDA ``{name}`` ({overloads}) -> ``{first.tilelang}`` [{first.status}].\n\n"
                  f"{first.note}")
    return fn


_compile_cached = functools.lru_cache(maxsize=None)(_compile)

#: python name -> function, and CUDA name -> function
FUNCTIONS: dict[str, Callable] = {}
_BY_CUDA: dict[str, Callable] = {}
for _name in dict.fromkeys(r.cuda for r in ROWS):
    if all(r.status is UNSUPPORTED for r in rows_for(_name)):
        continue
    _f = _make(_name)
    if _f.__name__ in FUNCTIONS:
        raise ValueError(f"cuda_math name clash: {_name} -> {_f.__name__}")
    FUNCTIONS[_f.__name__] = _f
    _BY_CUDA[_name] = _f


def call(name: str, *args, **kw):
    """``call("__expf", x)``: the expression of any CUDA name, by its CUDA spelling."""
    fn = _BY_CUDA.get(normalize_name(name))
    if fn is None:
        _row(name)  # raises with the reason
    return fn(*args, **kw)


def names() -> list[str]:
    """All function names this module provides (python names)."""
    return sorted(FUNCTIONS)


def __getattr__(attr: str):
    fn = FUNCTIONS.get(attr) or _BY_CUDA.get(attr)
    if fn is not None:
        return fn
    row = lookup(attr)
    if row is not None and row.status is UNSUPPORTED:
        raise AttributeError(f"cuda_math has no '{attr}': {row.note}")
    raise AttributeError(f"module 'migrate.compat.cuda_math' has no attribute '{attr}'")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(FUNCTIONS) | {n for n in _BY_CUDA if n.isidentifier()})
