"""The CUDA -> TileLang compat table: one row per CUDA device API name (and overload), as data.

Each :class:`Row` says how a CUDA call is written in TileLang 0.1.15, how exact that is, and
whether it runs on TileLang's CPU ``c`` target. The layout follows HIPIFY's
``CUDA2HIP_Device_functions.cpp``: rows are data, unsupported names keep a row with an empty
target, and the coverage document (``docs/compat.md``) is generated from these rows.

A row owns its function end to end: its ``section`` files the name in the catalog the frontend
classifies calls with (:mod:`migrate.compat.catalog` derives its sections from the rows), and
an extern helper's C body (:mod:`migrate.compat.externs`) serves both the migrated kernel on
``c`` and the CPU executor running the original (``runtime/cpu/c2t_compat_math.h``, generated).
``docs/compat-howto.md`` lists the steps for a new function.

Forms
    ``tilelang`` is a Python expression template over the argument texts ``{0}``, ``{1}``…
    (e.g. ``"T.exp({0})"``). Templates use only calls and operators (no ``and``/``or``/ternary),
    so they work both as emitted source and when evaluated in Python (:mod:`cuda_math`).
    Pointer arguments (atomics) are passed as the element they point to: ``atomicAdd(&a[i], v)``
    has the arguments ``a[i]`` and ``v``. Two-lane vector arguments (``__half2``…) are passed as
    a 2-element buffer: ``{0}[0]`` is the low lane (``.x``), ``{0}[1]`` the high lane (``.y``).

Status (of the ``tilelang`` form on the CUDA target)
    ``EXACT``: lowers to the same CUDA function/instruction or to an expression with the same
    result for every input (up to the ULP bound CUDA documents for the function, ``ulp``).
    ``APPROX``: defined for every input but results may differ from CUDA's (see ``note``).
    ``UNSUPPORTED``: no expression form (``tilelang`` is None); ``note`` says why / what to do.

CPU
    ``cpu`` says whether the ``tilelang`` form compiles on the ``c`` target and gives CUDA's
    results there (verified by ``tests/compat/test_cpu.py``). When it is False, ``cpu_form`` is a
    form that does (it also lowers for CUDA). On ``c`` bfloat16 does not exist: bfloat16 data is
    held in float32 buffers there, and the CPU forms of bfloat16 rows follow that convention.

Extern helpers
    Where TileLang has no operator, the form calls ``T.call_extern(dtype, "c2t_<name>", ...)``;
    :mod:`migrate.compat.externs` holds the C body (``c``) and the CUDA body (the CUDA function
    itself), delivered with ``T.Kernel(..., prelude=cuda_math.prelude(target))``. The C body is
    also the CPU executor's definition of the CUDA function (``Extern.executor``).
"""
from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from enum import Enum

from migrate.compat.externs import EXTERNS, Extern


class Status(str, Enum):
    EXACT = "EXACT"
    APPROX = "APPROX"
    UNSUPPORTED = "UNSUPPORTED"

    def __str__(self) -> str:
        return self.value


EXACT, APPROX, UNSUPPORTED = Status.EXACT, Status.APPROX, Status.UNSUPPORTED

#: One-letter dtype codes used to write signatures compactly (``"f:fi"`` = float32(float32, int32)).
DTYPE_CODES = {
    "f": "float32", "d": "float64", "h": "float16", "b": "bfloat16",
    "i": "int32", "u": "uint32", "l": "int64", "L": "uint64",
    "s": "int16", "S": "uint16", "?": "bool",
    # a string literal argument (nanf's tag): passed through as text, never a tensor
    "z": "str",
    # two-lane vectors, passed as a 2-element buffer (see module docstring)
    "H": "float16x2", "B": "bfloat16x2",
}
#: Catalog sections of rows (the catalog's other sections, warp/sync/..., are API without rows).
SECTIONS = ("math", "conversion", "half", "atomic", "unsupported")
#: Row kinds: an expression, or an atomic read-modify-write returning the old value.
KINDS = ("expr", "atomic")
#: Input domains known to the verification tests (:mod:`migrate.compat.numpy_ref`).
DOMAINS = (
    "any", "finite", "unit", "unit2", "pos", "ge1", "small", "exp", "int", "bits", "nonneg",
    "f2i", "f2u", "f2ll", "f2ull", "powbase", "div", "shift", "ldexp", "bf16", "half",
    "halfpos", "halfunit", "f2h",
)

_EXTERN_RE = re.compile(r'"(c2t_\w+)"')


class TableError(ValueError):
    """A malformed compat row."""


@dataclass(frozen=True)
class Row:
    """How one CUDA name (one overload of it) is expressed in TileLang."""

    #: CUDA name as written in source (``expf``, ``__popc``, ``std::exp``, ``atomicAdd``)
    cuda: str
    #: catalog section (:data:`SECTIONS`): :mod:`migrate.compat.catalog` files the name there,
    #: which is how the frontend classifies the call
    section: str
    #: TileLang expression template, or None when unsupported
    tilelang: str | None
    status: Status
    #: accuracy: ULP bound, rounding mode, what differs, what to do instead
    note: str = ""
    #: a fast-math intrinsic (``__expf``…) or a form whose accuracy depends on fast-math flags
    fast_math: bool = False
    #: the ``tilelang`` form runs on the ``c`` target with CUDA's results
    cpu: bool = True
    #: a form that does, when ``cpu`` is False (None if there is none)
    cpu_form: str | None = None
    #: result dtype and argument dtypes (the overload this row describes / is tested with)
    ret: str = "float32"
    args: tuple[str, ...] = ()
    #: max error in ULP that CUDA documents for the function (None: not a plain ULP bound)
    ulp: int | None = 0
    #: for names with several rows: the dtype of the first argument selecting this row
    overload: str | None = None
    #: input domain the row is verified on
    domain: str = "any"
    kind: str = "expr"
    #: form to use when the value of an atomic is discarded
    stmt: str | None = None
    #: for vector (``__half2``) operations: the scalar row to apply to each lane
    lanewise: str | None = None
    #: diagnostic code the frontend reports for an unsupported name
    code: str | None = None
    #: an atomic on an element of the first argument's dtype whose address the CUDA casts to a
    #: pointer of this dtype (``atomicInc((unsigned*)&intbuf[i], n)``: "uint32")
    address_as: str | None = None

    def __post_init__(self) -> None:
        where = f"compat row {self.cuda!r}"
        if self.section not in SECTIONS:
            raise TableError(f"{where}: unknown section {self.section!r}")
        if self.kind not in KINDS:
            raise TableError(f"{where}: unknown kind {self.kind!r}")
        if self.domain not in DOMAINS:
            raise TableError(f"{where}: unknown domain {self.domain!r}")
        if (self.status is UNSUPPORTED) != (self.tilelang is None):
            raise TableError(f"{where}: UNSUPPORTED rows (and only they) have no TileLang form")
        if self.status is UNSUPPORTED and (self.cpu_form or not self.note):
            raise TableError(f"{where}: an UNSUPPORTED row needs a note and no cpu_form")
        if self.status is not UNSUPPORTED and not self.cpu and self.cpu_form is None \
                and "no CPU form" not in self.note:
            raise TableError(f"{where}: cpu=False needs a cpu_form or a note saying 'no CPU form'")
        if self.cpu and self.cpu_form is not None:
            raise TableError(f"{where}: cpu_form given but the form already runs on c")
        for form in (self.tilelang, self.cpu_form, self.stmt):
            if form is not None:
                check_template(form, len(self.args), where)
        for name in self.extern_names:
            if name not in EXTERNS:
                raise TableError(f"{where}: unknown extern helper {name}")

    # ------------------------------------------------------------------ derived
    @property
    def key(self) -> tuple[str, str | None]:
        return (self.cuda, self.overload)

    @property
    def label(self) -> str:
        """``name`` or ``name (overload)``: unique over the table."""
        return self.cuda if self.overload is None else f"{self.cuda} ({self.overload})"

    @property
    def extern_names(self) -> tuple[str, ...]:
        """Helper names referenced by any of the row's forms, in order."""
        found: list[str] = []
        for form in (self.tilelang, self.cpu_form, self.stmt):
            for name in _EXTERN_RE.findall(form or ""):
                if name not in found:
                    found.append(name)
        return tuple(found)

    @property
    def extern(self) -> tuple[Extern, ...]:
        """The extern helpers of the ``tilelang`` form (C body for c, CUDA body for the GPU)."""
        return tuple(EXTERNS[n] for n in _EXTERN_RE.findall(self.tilelang or ""))

    def form(self, target: str = "cuda") -> str | None:
        """The template to emit for ``target`` (``"cuda"`` or ``"c"``)."""
        if target == "c" and not self.cpu:
            return self.cpu_form
        return self.tilelang


def check_template(form: str, nargs: int, where: str = "template") -> None:
    """Raise :class:`TableError` unless ``form`` is a well-formed template over ``nargs`` args."""
    used = {int(m) for m in re.findall(r"\{(\d+)\}", form)}
    if used - set(range(nargs)):
        raise TableError(f"{where}: {form!r} uses arguments beyond {nargs}")
    try:
        tree = ast.parse(form.format(*[f"_a{i}" for i in range(nargs)]), mode="eval")
    except (SyntaxError, IndexError, KeyError, ValueError) as exc:
        raise TableError(f"{where}: {form!r} is not an expression template: {exc}") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and len(node.ops) > 1:
            raise TableError(f"{where}: chained comparison in {form!r}")
        if isinstance(node, (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)):
            raise TableError(f"{where}: {type(node).__name__} in {form!r} (use T.if_then_else, &, |)")


# ============================================================================ row builders
def _sig(sig: str) -> tuple[str, tuple[str, ...]]:
    ret, _, args = sig.partition(":")
    return DTYPE_CODES[ret], tuple(DTYPE_CODES[c] for c in args)


def _x(name: str) -> str:
    """The call template of an extern helper."""
    return EXTERNS[name].call()


def R(cuda: str, tilelang: str | None, sig: str, status: Status = EXACT, *, ulp: int | None = 0,
      note: str = "", section: str = "math", **kw) -> Row:
    ret, args = _sig(sig)
    return Row(cuda=cuda, section=section, tilelang=tilelang, status=status, note=note, ret=ret,
               args=args, ulp=ulp, **kw)


def U(cuda: str, note: str, sig: str = "f:", **kw) -> Row:
    """An unsupported name: no TileLang form."""
    return R(cuda, None, sig, UNSUPPORTED, ulp=None, note=note, **kw)


def _in_section(section: str):
    """``R`` and ``U`` filing their rows in ``section`` (unless a row names another)."""
    def r(*args, **kw) -> Row:
        kw.setdefault("section", section)
        return R(*args, **kw)

    def u(*args, **kw) -> Row:
        kw.setdefault("section", section)
        return U(*args, **kw)
    return r, u


_PREC = ("Same function on CUDA (max {u} ulp per the CUDA Programming Guide); on c the host "
         "libm computes it.")


def _prec(u: int | None) -> str:
    if u == 0:
        return "Correctly rounded on both targets."
    return _PREC.format(u=u)


# ============================================================================ float / double math
# (float name, double name, template, float ulp, double ulp, domain, sig-args, note)
_NATIVE_MATH = [
    ("expf", "exp", "T.exp({0})", 2, 1, "exp", "x", ""),
    ("exp2f", "exp2", "T.exp2({0})", 2, 1, "exp", "x", ""),
    ("logf", "log", "T.log({0})", 1, 1, "any", "x", ""),
    ("log2f", "log2", "T.log2({0})", 1, 1, "any", "x", ""),
    ("log10f", "log10", "T.log10({0})", 2, 1, "any", "x", ""),
    ("log1pf", "log1p", "T.log1p({0})", 1, 1, "any", "x", ""),
    ("sinf", "sin", "T.sin({0})", 2, 2, "any", "x", ""),
    ("cosf", "cos", "T.cos({0})", 2, 2, "any", "x", ""),
    ("tanf", "tan", "T.tan({0})", 4, 2, "any", "x", ""),
    ("asinf", "asin", "T.asin({0})", 2, 2, "unit", "x", ""),
    ("acosf", "acos", "T.acos({0})", 2, 2, "unit", "x", ""),
    ("atanf", "atan", "T.atan({0})", 2, 2, "any", "x", ""),
    ("atan2f", "atan2", "T.atan2({0}, {1})", 3, 2, "any", "xx", ""),
    ("sinhf", "sinh", "T.sinh({0})", 3, 2, "small", "x", ""),
    ("coshf", "cosh", "T.cosh({0})", 2, 1, "small", "x", ""),
    ("tanhf", "tanh", "T.tanh({0})", 2, 1, "any", "x", ""),
    ("asinhf", "asinh", "T.asinh({0})", 3, 3, "any", "x", ""),
    ("acoshf", "acosh", "T.acosh({0})", 4, 3, "ge1", "x", ""),
    ("atanhf", "atanh", "T.atanh({0})", 3, 2, "unit", "x", ""),
    ("erff", "erf", "T.erf({0})", 2, 2, "any", "x", ""),
    ("powf", "pow", "T.pow({0}, {1})", 4, 2, "any", "xx",
     "Pass a floating exponent: T.pow with a Python int exponent converts it to the base dtype. "),
    ("sqrtf", "sqrt", "T.sqrt({0})", 0, 0, "any", "x",
     "IEEE sqrt under nvcc's default -prec-sqrt=true; with -use_fast_math (or TileLang "
     "tl.enable_fast_math) the CUDA float version becomes approximate. "),
    ("rsqrtf", "rsqrt", "T.rsqrt({0})", 2, 1, "any", "x",
     "On c, T.rsqrt is 1/sqrt (two roundings, within the CUDA bound). "),
    ("hypotf", "hypot", "T.hypot({0}, {1})", 3, 2, "any", "xx", ""),
    ("floorf", "floor", "T.floor({0})", 0, 0, "any", "x", ""),
    ("ceilf", "ceil", "T.ceil({0})", 0, 0, "any", "x", ""),
    ("truncf", "trunc", "T.trunc({0})", 0, 0, "any", "x", ""),
    ("rintf", "rint", "T.nearbyint({0})", 0, 0, "any", "x",
     "Round half to even. Use T.nearbyint, not T.round: T.round is nearbyint on CUDA but C "
     "round (half away from zero) on c. "),
    ("nearbyintf", "nearbyint", "T.nearbyint({0})", 0, 0, "any", "x", "Round half to even. "),
    ("fmodf", "fmod", "T.truncmod({0}, {1})", 0, 0, "any", "xx",
     "T.truncmod on floats lowers to fmodf/fmod on both targets (T.fmod fails on c). "),
    ("copysignf", "copysign", "T.copysign({0}, {1})", 0, 0, "any", "xx", ""),
    ("ldexpf", "ldexp", "T.ldexp({0}, {1})", 0, 0, "ldexp", "xi", ""),
    ("scalbnf", "scalbn", "T.ldexp({0}, {1})", 0, 0, "ldexp", "xi",
     "scalbn(x, n) == ldexp(x, n) for binary floating point. "),
    ("nextafterf", "nextafter", "T.nextafter({0}, {1})", 0, 0, "any", "xx", ""),
]

# helper-backed functions: (float name, double name, helper stem, float ulp, double ulp, domain,
#                           sig-args, note)
_EXTERN_MATH = [
    ("expm1f", "expm1", "expm1", 1, 1, "exp", "x", ""),
    ("cbrtf", "cbrt", "cbrt", 1, 1, "any", "x", ""),
    ("rcbrtf", "rcbrt", "rcbrt", 1, 1, "any", "x", "C body: 1/cbrt computed in double. "),
    ("erfcf", "erfc", "erfc", 4, 5, "any", "x", ""),
    ("erfinvf", "erfinv", "erfinv", 2, 5, "unit", "x",
     "No libm erfinv on the host: the C body refines an initial guess with Newton steps on "
     "erf/erfc in double. "),
    ("erfcinvf", "erfcinv", "erfcinv", 4, 6, "unit2", "x",
     "C body: Newton on erf (centre) or log(erfc) (tails) in double. "),
    ("normcdff", "normcdf", "normcdf", 5, 5, "small", "x",
     "C body: 0.5*erfc(-x/sqrt(2)) with the scaling in double-double. "),
    ("normcdfinvf", "normcdfinv", "normcdfinv", 5, 8, "unit2", "x",
     "C body: -sqrt(2)*erfcinv(2p). Argument p in (0, 1). "),
    ("lgammaf", "lgamma", "lgamma", 6, 4, "pos", "x",
     "CUDA's bound holds outside [-10.001, -2.264] (larger near the poles); verified on x > 0. "),
    ("tgammaf", "tgamma", "tgamma", 5, 10, "small", "x", ""),
    ("sinpif", "sinpi", "sinpi", 1, 2, "any", "x",
     "C body: exact reduction mod 2, then sin/cos of pi*f in double-double. "),
    ("cospif", "cospi", "cospi", 1, 2, "any", "x", "C body as sinpi. "),
    ("remainderf", "remainder", "remainder", 0, 0, "any", "xx", ""),
    ("fdimf", "fdim", "fdim", 0, 0, "any", "xx", ""),
    ("logbf", "logb", "logb", 0, 0, "any", "x", ""),
    ("rhypotf", "rhypot", "rhypot", 2, 1, "any", "xx", "C body: 1/hypot in double. "),
]


def _math_rows() -> list[Row]:
    R, U = _in_section("math")
    rows: list[Row] = []
    for fname, dname, form, uf, ud, dom, ar, note in _NATIVE_MATH:
        for name, code, u in ((fname, "f", uf), (dname, "d", ud)):
            sig = f"{code}:" + ar.replace("x", code)
            rows.append(R(name, form, sig, ulp=u, domain=dom, note=note + _prec(u)))
    for fname, dname, stem, uf, ud, dom, ar, note in _EXTERN_MATH:
        for name, code, u, helper in ((fname, "f", uf, f"c2t_{stem}f"), (dname, "d", ud, f"c2t_{stem}")):
            sig = f"{code}:" + ar.replace("x", code)
            rows.append(R(name, _x(helper), sig, ulp=u, domain=dom,
                          note=f"No TileLang operator: helper {helper} calls CUDA {name}. "
                               + note + _prec(u)))
    for name, code in (("ilogbf", "f"), ("ilogb", "d")):
        rows.append(R(name, _x(f"c2t_{name}"), f"i:{code}", domain="any",
                      note=f"No TileLang operator: helper c2t_{name} calls CUDA {name} "
                           "(INT_MIN for 0 and NaN, INT_MAX for inf on both targets)."))
    # ------------------------------------------------ native on CUDA, helper on c
    for name, code, helper in (("exp10f", "f", "c2t_exp10f"), ("exp10", "d", "c2t_exp10")):
        u = 2 if code == "f" else 1
        rows.append(R(name, "T.exp10({0})", f"{code}:{code}", ulp=u, domain="exp", cpu=False,
                      cpu_form=_x(helper),
                      note=f"T.exp10 fails on c (tirx.exp10 unresolved); CPU form calls {helper}. "
                           + _prec(u)))
    for name, code, helper in (("roundf", "f", "c2t_roundf"), ("round", "d", "c2t_round")):
        rows.append(R(name, 'T.round({0}, "ties-away-from-zero")', f"{code}:{code}", cpu=False,
                      cpu_form=_x(helper),
                      note="Half away from zero (tl::RoundTiesAwayFromZero = roundf/round). "
                           "Plain T.round(x) is NOT roundf: it is nearbyint (half to even) on CUDA "
                           "but round on c. The ties-away mode fails on c; CPU form calls "
                           f"{helper}."))
    for name, code, helper in (("fabsf", "f", "c2t_fabsf"), ("fabs", "d", "c2t_fabs")):
        rows.append(R(name, "T.abs({0})", f"{code}:{code}", cpu=False, cpu_form=_x(helper),
                      note="T.abs lowers to fabsf/fabs on CUDA; on c tirx.fabs is unresolved "
                           f"(CPU form calls {helper}; T.max(x, -x) would get -0.0 and NaN signs wrong)."))
    for name, code, op, helper in (("fmaxf", "f", "max", "c2t_fmaxf"), ("fminf", "f", "min", "c2t_fminf"),
                                   ("fmax", "d", "max", "c2t_fmax"), ("fmin", "d", "min", "c2t_fmin")):
        rows.append(R(name, f"T.{op}({{0}}, {{1}})", f"{code}:{code}{code}", cpu=False,
                      cpu_form=_x(helper),
                      note=f"T.{op} lowers to CUDA {op}(float, float) = {name} (a NaN operand yields "
                           f"the other operand). On c T.{op} is `a {'>' if op == 'max' else '<'} b ? a : b`, "
                           f"which returns b when either is NaN: CPU form calls {helper}."))
    for name, code, helper in (("fmaf", "f", "c2t_fmaf"), ("fma", "d", "c2t_fma")):
        rows.append(R(name, "T.fma({0}, {1}, {2})", f"{code}:{code}{code}{code}", cpu=False,
                      cpu_form=_x(helper),
                      note="Fused, one rounding: T.fma lowers to __fmaf_rn/__fma_rn. tl.fma is "
                           f"unresolved on c; CPU form calls {helper}. Note nvcc contracts a*b+c "
                           "into an fma by default (-fmad=true), the c target does not."))
    # ------------------------------------------------ classification
    rows.append(R("isnan", "T.isnan({0})", "?:f", note="x != x on both targets (bool). "
                  "Overloaded: the same form serves float and double."))
    for code, sfx, ov in (("f", "f", "float32"), ("d", "", "float64")):
        rows.append(R("isinf", "T.isinf({0})", f"?:{code}", overload=ov, cpu=False,
                      cpu_form=f"{_x('c2t_isinf' + sfx)} != 0",
                      note="bool. T.isinf uses fabs, unresolved on c; CPU form calls c2t_isinf" + sfx + "."))
        rows.append(R("isfinite", "T.isfinite({0})", f"?:{code}", overload=ov, cpu=False,
                      cpu_form=f"{_x('c2t_isfinite' + sfx)} != 0",
                      note="bool. T.isfinite fails on c; CPU form calls c2t_isfinite" + sfx + "."))
        rows.append(R("signbit", f"{_x('c2t_signbit' + sfx)} != 0", f"?:{code}", overload=ov,
                      note="No TileLang operator: helper c2t_signbit" + sfx + " calls CUDA signbit "
                           "(bool; true for -0.0 and negative NaNs)."))
    # ------------------------------------------------ to integer
    for name, code in (("lrintf", "f"), ("lrint", "d")):
        rows.append(R(name, 'T.cast(T.nearbyint({0}), "int64")', f"l:{code}", domain="f2ll",
                      note="long is 64-bit on Linux. Half to even. Out-of-range results are "
                           "undefined in C (CUDA saturates)."))
    for name, code, helper in (("lroundf", "f", "c2t_roundf"), ("lround", "d", "c2t_round")):
        rows.append(R(name, 'T.cast(T.round({0}, "ties-away-from-zero"), "int64")', f"l:{code}",
                      domain="f2ll", cpu=False, cpu_form=f'T.cast({_x(helper)}, "int64")',
                      note="Half away from zero, then to 64-bit long. The ties-away rounding fails "
                           f"on c; CPU form calls {helper}."))
    # ------------------------------------------------ out-parameters / strings
    for name in ("frexpf", "frexp", "modff", "modf"):
        rows.append(U(name, "Returns a second result through a pointer: not an expression. A call "
                            "that is a statement of its own, an assignment's value or a "
                            "declaration's becomes assignments (analysis.prepare.sincos; frexp: the "
                            "exponent ilogb(x) + 1, 0 for 0, inf and NaN, the mantissa ldexp(x, "
                            "-e); modf: trunc(x) and copysign(x - trunc(x), x), 0 for inf); a call "
                            "inside an expression has no form."))
    for name in ("sincosf", "sincos", "sincospif", "sincospi"):
        stem = "sin/cos" if "pi" not in name else "sinpi/cospi"
        rows.append(U(name, f"Writes two results through pointers. A call that is a statement of its "
                            f"own becomes two assignments with the {stem} rows "
                            "(analysis.prepare.sincos); a call used as a value has no form."))
    for name, code, dt in (("nanf", "f", "float32"), ("nan", "d", "float64"),
                           ("__builtin_nanf", "f", "float32"), ("__builtin_nan", "d", "float64")):
        rows.append(R(name, f'T.{dt}(float("nan"))', f"{code}:z", APPROX, ulp=None,
                      note="A quiet NaN constant; the tag string is ignored (CUDA may encode it in "
                           "the payload, which no comparison observes)."
                           + (" clang's expansion of NAN / CUDART_NAN_F." if "builtin" in name else "")))
    for name, code, dt in (("__builtin_inff", "f", "float32"), ("__builtin_huge_valf", "f", "float32"),
                           ("__builtin_inf", "d", "float64"), ("__builtin_huge_val", "d", "float64")):
        rows.append(R(name, f'T.infinity("{dt}")', f"{code}:",
                      note="+inf (clang's expansion of INFINITY / HUGE_VAL / CUDART_INF_F)."))
    for name, code, helper in (("__builtin_fabsf", "f", "c2t_fabsf"), ("__builtin_fabs", "d", "c2t_fabs")):
        rows.append(R(name, "T.abs({0})", f"{code}:{code}", cpu=False, cpu_form=_x(helper),
                      note=f"clang builtin behind fabs{'f' if code == 'f' else ''}; as that row."))
    rows.append(R("__builtin_isnan", "T.isnan({0})", "?:f", note="clang builtin behind isnan."))
    for code, sfx, ov in (("f", "f", "float32"), ("d", "", "float64")):
        rows.append(R("__builtin_isinf", "T.isinf({0})", f"?:{code}", overload=ov, cpu=False,
                      cpu_form=f"{_x('c2t_isinf' + sfx)} != 0",
                      note="clang builtin behind isinf; as that row."))
    return rows


# ============================================================================ C++ overloads
def _overload_rows() -> list[Row]:
    R, _ = _in_section("math")
    rows: list[Row] = []
    # plain CUDA overloads abs/min/max (math_functions.hpp)
    for ov, code in (("int32", "i"), ("int64", "l")):
        rows.append(R("abs", "T.abs({0})", f"{code}:{code}", overload=ov,
                      note="Integer abs: TileLang emits `0 <= x ? x : 0 - x` (abs(INT_MIN) wraps "
                           "to INT_MIN, as on CUDA)."))
    for ov, code, helper in (("float32", "f", "c2t_fabsf"), ("float64", "d", "c2t_fabs")):
        rows.append(R("abs", "T.abs({0})", f"{code}:{code}", overload=ov, cpu=False,
                      cpu_form=_x(helper), note="abs(float) = fabsf on CUDA. tirx.fabs fails on c; "
                                                f"CPU form calls {helper}."))
    for op in ("min", "max"):
        for ov, code in (("int32", "i"), ("uint32", "u"), ("int64", "l"), ("uint64", "L")):
            rows.append(R(op, f"T.{op}({{0}}, {{1}})", f"{code}:{code}{code}", overload=ov,
                          note="Integer overload. Mixed int/unsigned arguments: CUDA picks the "
                               "unsigned overload and T." + op + " also converts the signed operand "
                               "to unsigned."))
        for ov, code, helper in (("float32", "f", f"c2t_f{op}f"), ("float64", "d", f"c2t_f{op}")):
            rows.append(R(op, f"T.{op}({{0}}, {{1}})", f"{code}:{code}{code}", overload=ov,
                          cpu=False, cpu_form=_x(helper),
                          note=f"{op}(float, float) is f{op}f on CUDA (NaN-ignoring). On c T.{op} is "
                               f"a ternary that mishandles NaN: CPU form calls {helper}. An int and a "
                               f"float argument: T.{op} converts the int to float, like CUDA."))
    for name, op, ov, code in (("umin", "min", "uint32", "u"), ("umax", "max", "uint32", "u"),
                               ("llmin", "min", "int64", "l"), ("llmax", "max", "int64", "l"),
                               ("ullmin", "min", "uint64", "L"), ("ullmax", "max", "uint64", "L")):
        rows.append(R(name, f"T.{op}({{0}}, {{1}})", f"{code}:{code}{code}",
                      note=f"Integer {op} on {DTYPE_CODES[code]} (exact)."))
    # std:: overloads: generic forms follow the argument dtype (tested as float32)
    generic = {
        "sqrt": ("T.sqrt({0})", 0), "exp": ("T.exp({0})", 2), "exp2": ("T.exp2({0})", 2),
        "log": ("T.log({0})", 1), "log2": ("T.log2({0})", 1), "log10": ("T.log10({0})", 2),
        "sin": ("T.sin({0})", 2), "cos": ("T.cos({0})", 2), "tan": ("T.tan({0})", 4),
        "tanh": ("T.tanh({0})", 2), "floor": ("T.floor({0})", 0), "ceil": ("T.ceil({0})", 0),
        "trunc": ("T.trunc({0})", 0), "erf": ("T.erf({0})", 2),
    }
    for fn, (form, u) in generic.items():
        dom = "exp" if fn.startswith("exp") else "any"
        rows.append(R(f"std::{fn}", form, "f:f", ulp=u, domain=dom,
                      note="Overloaded on the argument type; the form follows the argument dtype "
                           "(float shown). " + _prec(u)))
    rows.append(R("std::pow", "T.pow({0}, {1})", "f:ff", ulp=4,
                  note="Overloaded; std::pow(float, int) promotes to double in C++11: cast the "
                       "arguments to the intended dtype first. " + _prec(4)))
    rows.append(R("std::isnan", "T.isnan({0})", "?:f", note="bool; any float dtype."))
    rows.append(R("std::min", "T.if_then_else({1} < {0}, {1}, {0})", "f:ff",
                  note="std::min(a, b) is (b < a) ? b : a, which differs from fminf/T.min when an "
                       "operand is NaN; this form keeps the std semantics for every dtype."))
    rows.append(R("std::max", "T.if_then_else({0} < {1}, {1}, {0})", "f:ff",
                  note="std::max(a, b) is (a < b) ? b : a (NaN handling differs from fmaxf)."))
    for ov, code, sfx in (("float32", "f", "f"), ("float64", "d", "")):
        rows.append(R("std::fabs", "T.abs({0})", f"{code}:{code}", overload=ov, cpu=False,
                      cpu_form=_x(f"c2t_fabs{sfx}"), note=f"As fabs{sfx}."))
        rows.append(R("std::round", 'T.round({0}, "ties-away-from-zero")', f"{code}:{code}",
                      overload=ov, cpu=False, cpu_form=_x(f"c2t_round{sfx}"),
                      note="Half away from zero (see roundf: never plain T.round)."))
        rows.append(R("std::fma", "T.fma({0}, {1}, {2})", f"{code}:{code}{code}{code}",
                      overload=ov, cpu=False, cpu_form=_x(f"c2t_fma{sfx}"), note=f"As fma{sfx}."))
        for op in ("fmin", "fmax"):
            rows.append(R(f"std::{op}", f"T.{op[1:]}({{0}}, {{1}})", f"{code}:{code}{code}",
                          overload=ov, cpu=False, cpu_form=_x(f"c2t_{op}{sfx}"),
                          note=f"As {op}{sfx}."))
        rows.append(R("std::isinf", "T.isinf({0})", f"?:{code}", overload=ov, cpu=False,
                      cpu_form=f"{_x('c2t_isinf' + sfx)} != 0", note="As isinf."))
        rows.append(R("std::isfinite", "T.isfinite({0})", f"?:{code}", overload=ov, cpu=False,
                      cpu_form=f"{_x('c2t_isfinite' + sfx)} != 0", note="As isfinite."))
    for ov, code in (("int32", "i"), ("int64", "l")):
        rows.append(R("std::abs", "T.abs({0})", f"{code}:{code}", overload=ov, note="Integer abs."))
    for ov, code, sfx in (("float32", "f", "f"), ("float64", "d", "")):
        rows.append(R("std::abs", "T.abs({0})", f"{code}:{code}", overload=ov, cpu=False,
                      cpu_form=_x(f"c2t_fabs{sfx}"), note=f"As fabs{sfx}."))
    return rows


# ============================================================================ fast / IEEE intrinsics
def _intrinsic_rows() -> list[Row]:
    R, U = _in_section("math")
    fast = dict(fast_math=True, ulp=None)
    rows = [
        R("__expf", "T.__exp({0})", "f:f", cpu=False, cpu_form="T.exp({0})", domain="exp", **fast,
          note="T.__exp emits __expf (ex2.approx based; CUDA: max 2 + floor(|1.173x|) ulp). "
               "Fails on c: the CPU form is the precise expf, more accurate than the GPU."),
        R("__exp10f", "T.__exp10({0})", "f:f", cpu=False, cpu_form=_x("c2t_exp10f"), domain="exp",
          **fast, note="T.__exp10 emits __exp10f (CUDA: max 2 + floor(|2.97x|) ulp). CPU form: "
                       "precise exp10f."),
        R("__logf", "T.__log({0})", "f:f", cpu=False, cpu_form="T.log({0})", **fast,
          note="T.__log emits __logf (CUDA: abs error 2^-21.41 on [0.5, 2], else 3 ulp). "
               "CPU form: precise logf."),
        R("__log2f", "T.__log2({0})", "f:f", cpu=False, cpu_form="T.log2({0})", **fast,
          note="T.__log2 emits __log2f (CUDA: abs error 2^-22 on [0.5, 2], else 2 ulp). "
               "CPU form: precise log2f."),
        R("__log10f", "T.__log10({0})", "f:f", cpu=False, cpu_form="T.log10({0})", **fast,
          note="T.__log10 emits __log10f (CUDA: abs error 2^-24 on [0.5, 2], else 3 ulp). "
               "CPU form: precise log10f."),
        R("__sinf", "T.__sin({0})", "f:f", cpu=False, cpu_form="T.sin({0})", **fast,
          note="T.__sin emits __sinf (CUDA: abs error 2^-21.41 on [-pi, pi], larger outside). "
               "CPU form: precise sinf."),
        R("__cosf", "T.__cos({0})", "f:f", cpu=False, cpu_form="T.cos({0})", **fast,
          note="T.__cos emits __cosf (CUDA: abs error 2^-21.19 on [-pi, pi], larger outside). "
               "CPU form: precise cosf."),
        R("__tanf", "T.__tan({0})", "f:f", cpu=False, cpu_form="T.tan({0})", **fast,
          note="T.__tan emits __tanf (= __sinf/__cosf). CPU form: precise tanf."),
        R("__powf", _x("c2t___powf"), "f:ff", domain="powbase", **fast,
          note="No TileLang operator: helper calls CUDA __powf (exp2(y*log2(x)) approximations). "
               "The C body is the precise powf; for x <= 0 the GPU intrinsic differs from powf "
               "(verified on x > 0 only)."),
        R("__fdividef", _x("c2t___fdividef"), "f:ff", domain="div", **fast,
          note="No TileLang operator: helper calls CUDA __fdividef (max 2 ulp for |y| in "
               "[2^-126, 2^126]; 0 for 2^126 < |y| < 2^128). C body: x / y."),
        R("fdividef", "({0} / {1})", "f:ff", domain="div", **fast,
          note="CUDA's fdividef has __fdividef's accuracy (max 2 ulp; 0 for 2^126 < |y| < 2^128); "
               "the IEEE division is within it (the CPU executor's fdividef is its __fdividef, x / y)."),
        R("__saturatef", _x("c2t___saturatef"), "f:f", section="math",
          note="No TileLang operator: helper calls CUDA __saturatef (clamp to [0, 1], NaN -> 0)."),
        U("__sincosf", "Writes two results through pointers. A call that is a statement of its own "
                       "becomes two assignments with the __sinf and __cosf rows (analysis.prepare.sincos)."),
    ]
    # IEEE arithmetic with an explicit rounding mode: T.ieee_* lower to the CUDA intrinsic.
    ops = {"add": ("ieee_add", "{0} + {1}", 2), "sub": ("ieee_sub", "{0} - {1}", 2),
           "mul": ("ieee_mul", "{0} * {1}", 2), "div": ("ieee_fdiv", "{0} / {1}", 2)}
    # the rounding modes with a row, per operation (helpers exist for all four)
    modes = {"add": "rn rz ru rd", "sub": "rn rz", "mul": "rn rz ru rd", "div": "rn rz"}
    for op, (tl, plain, n) in ops.items():
        for m in modes[op].split():
            name = f"__f{op}_{m}"
            args = ", ".join(f"{{{i}}}" for i in range(n))
            form = f"T.{tl}({args})" if m == "rn" else f'T.{tl}({args}, "{m}")'
            cpu_form = (_x(f"c2t_f{op}_rn") if op in ("add", "sub") else plain) if m == "rn" else \
                _x(f"c2t___f{op}_{m}")
            rows.append(R(name, form, "f:ff", cpu=False, cpu_form=cpu_form,
                          domain="div" if op == "div" else "any",
                          note=f"T.{tl} emits {name}. tl.{tl} is unresolved on c; CPU form: "
                               + ("plain IEEE operator (the c target never contracts into fma). "
                                  if m == "rn" else f"helper {name} under fesetround(). ")
                               + ("The plain operator on CUDA may be fused with a neighbouring "
                                  "multiply/add by nvcc; the intrinsic never is." if m == "rn" else "")))
    for m in ("rn", "rz", "ru", "rd"):
        name = f"__fmaf_{m}"
        form = "T.ieee_fmaf({0}, {1}, {2})" if m == "rn" else f'T.ieee_fmaf({{0}}, {{1}}, {{2}}, "{m}")'
        cpu_form = _x("c2t_fmaf") if m == "rn" else _x(f"c2t___fmaf_{m}")
        rows.append(R(name, form, "f:fff", cpu=False, cpu_form=cpu_form,
                      note=f"T.ieee_fmaf emits {name}; unresolved on c (CPU form: fmaf"
                           + ("" if m == "rn" else " under fesetround") + ")."))
    rows += [
        R("__frcp_rn", "T.ieee_frcp({0})", "f:f", cpu=False, cpu_form="1.0 / {0}",
          note="T.ieee_frcp emits __frcp_rn (correctly rounded 1/x). CPU form: IEEE division."),
        R("__frcp_rz", 'T.ieee_frcp({0}, "rz")', "f:f", cpu=False, cpu_form=_x("c2t___frcp_rz"),
          note="T.ieee_frcp emits __frcp_rz. CPU form: 1/x under fesetround."),
        R("__fsqrt_rn", "T.ieee_fsqrt({0})", "f:f", cpu=False, cpu_form="T.sqrt({0})",
          note="T.ieee_fsqrt emits __fsqrt_rn (IEEE sqrt even under -use_fast_math)."),
        R("__fsqrt_rz", 'T.ieee_fsqrt({0}, "rz")', "f:f", cpu=False, cpu_form=_x("c2t___fsqrt_rz"),
          note="T.ieee_fsqrt emits __fsqrt_rz. CPU form: sqrtf under fesetround."),
        R("__frsqrt_rn", "T.ieee_frsqrt({0})", "f:f", cpu=False, cpu_form=_x("c2t___frsqrt_rn"),
          note="T.ieee_frsqrt emits __frsqrt_rn (correctly rounded). CPU form: 1/sqrt in double "
               "rounded once to float (correct except in astronomically rare cases). "
               "T.ieee_frsqrt rejects float64."),
        R("__dadd_rn", "T.ieee_add({0}, {1})", "d:dd", cpu=False, cpu_form=_x("c2t_dadd_rn"),
          note="T.ieee_add on float64 emits __dadd_rn (never contracted into fma). CPU form: a call "
               "(opaque to TVM's simplifier, like the intrinsic)."),
        R("__dsub_rn", "T.ieee_sub({0}, {1})", "d:dd", cpu=False, cpu_form=_x("c2t_dsub_rn"),
          note="T.ieee_sub on float64 emits __dsub_rn (never contracted into fma). CPU form: a call."),
        R("__dmul_rn", "T.ieee_mul({0}, {1})", "d:dd", cpu=False, cpu_form="{0} * {1}",
          note="T.ieee_mul on float64 emits __dmul_rn."),
        R("__fma_rn", "T.ieee_fmaf({0}, {1}, {2})", "d:ddd", cpu=False, cpu_form=_x("c2t_fma"),
          note="T.ieee_fmaf on float64 emits __fma_rn. CPU form: fma."),
        R("__drcp_rn", "T.ieee_frcp({0})", "d:d", cpu=False, cpu_form="1.0 / {0}",
          note="T.ieee_frcp on float64 emits __drcp_rn."),
        R("__dsqrt_rn", "T.ieee_fsqrt({0})", "d:d", cpu=False, cpu_form="T.sqrt({0})",
          note="T.ieee_fsqrt on float64 emits __dsqrt_rn."),
    ]
    return rows


# ============================================================================ integer intrinsics
def _integer_rows() -> list[Row]:
    R, _ = _in_section("math")
    def ext(name, sig, note="", **kw):
        return R(name, _x(f"c2t_{name}"), sig, domain=kw.pop("domain", "int"),
                 note=f"No TileLang operator: helper calls CUDA {name}. " + note, **kw)
    rows = [
        ext("__popc", "i:u", "(T.popcount is unresolved on both targets.)"),
        ext("__popcll", "i:L"),
        R("__clz", "T.clz({0})", "i:i", domain="int", cpu=False, cpu_form=_x("c2t___clz"),
          note="T.clz emits __clz (32 for 0). tirx.clz is unresolved on c; CPU form: helper."),
        R("__clzll", 'T.cast(T.clz({0}), "int32")', "i:l", domain="int", cpu=False,
          cpu_form=_x("c2t___clzll"),
          note="T.clz on int64 emits __clzll (result int64, cast to int). CPU form: helper."),
        R("__ffs", "T.__ffs({0})", "i:i", domain="int", cpu=False, cpu_form=_x("c2t___ffs"),
          note="T.__ffs emits __ffs (1-based index of the lowest set bit, 0 for 0). Fails on c; "
               "CPU form: helper."),
        R("__ffsll", 'T.cast(T.__ffs({0}), "int32")', "i:l", domain="int", cpu=False,
          cpu_form=_x("c2t___ffsll"), note="T.__ffs on int64 emits __ffsll. CPU form: helper."),
        ext("__brev", "u:u"), ext("__brevll", "L:L"),
        ext("__byte_perm", "u:uuu", "Selector bits above the low 3 of each nibble are ignored "
                                    "(the default mode).", domain="bits"),
        ext("__funnelshift_l", "u:uuu", domain="shift"),
        ext("__funnelshift_r", "u:uuu", domain="shift"),
        ext("__mul24", "i:ii", "Low 24 bits of each operand, sign-extended; low 32 bits of the product."),
        ext("__umul24", "u:uu"),
        R("__mulhi", 'T.cast((T.cast({0}, "int64") * T.cast({1}, "int64")) >> 32, "int32")',
          "i:ii", domain="int", note="High 32 bits of the 64-bit product (arithmetic shift)."),
        R("__umulhi", 'T.cast((T.cast({0}, "uint64") * T.cast({1}, "uint64")) >> 32, "uint32")',
          "u:uu", domain="int", note="High 32 bits of the 64-bit unsigned product."),
        ext("__mul64hi", "l:ll", "C body: __int128 product."),
        ext("__umul64hi", "L:LL", "C body: unsigned __int128 product."),
        ext("__sad", "u:iiu", "|x - y| + z, unsigned."),
        R("__dp4a", _x("c2t___dp4a_i32"), "i:iii", domain="int", overload="int32",
          note="No TileLang operator: helper calls CUDA __dp4a. The four signed bytes of x times "
               "those of y, summed, plus z (wrapping)."),
        R("__dp4a", _x("c2t___dp4a_u32"), "u:uuu", domain="int", overload="uint32",
          note="No TileLang operator: helper calls CUDA __dp4a. Unsigned bytes."),
        *[ext(f"__v{op}{kind}4", "u:uu", f"Per byte: the {'larger' if op == 'max' else 'smaller'} of each "
                                        f"pair of {'signed' if kind == 's' else 'unsigned'} bytes.")
          for op in ("max", "min") for kind in ("s", "u")],
        ext("__usad", "u:uuu"),
        R("__hadd", 'T.cast((T.cast({0}, "int64") + T.cast({1}, "int64")) >> 1, "int32")', "i:ii",
          overload="int32", domain="int",
          note="Integer average rounded down, without overflow (the int overload; __hadd on "
               "__half is the half addition)."),
        R("__rhadd", 'T.cast((T.cast({0}, "int64") + T.cast({1}, "int64") + 1) >> 1, "int32")',
          "i:ii", domain="int", note="Integer average rounded up, without overflow."),
        R("__uhadd", 'T.cast((T.cast({0}, "uint64") + T.cast({1}, "uint64")) >> 1, "uint32")',
          "u:uu", domain="int", note="Unsigned average rounded down."),
        R("__urhadd", 'T.cast((T.cast({0}, "uint64") + T.cast({1}, "uint64") + 1) >> 1, "uint32")',
          "u:uu", domain="int", note="Unsigned average rounded up."),
    ]
    return rows


# ============================================================================ conversions
def _conversion_rows() -> list[Row]:
    R, _ = _in_section("conversion")
    sat = ("Out-of-range inputs and NaN: CUDA saturates (NaN -> 0) both for the intrinsic and "
           "for a C cast; on c the C conversion is undefined (x86 gives the 'integer "
           "indefinite' value), so the CPU check covers in-range inputs.")
    rows = []
    # float and double to each integer type, in each rounding mode: round, then an exact cast
    for src, scode in (("float", "f"), ("double", "d")):
        for dst, code, dom in (("int", "i", "f2i"), ("uint", "u", "f2u"), ("ll", "l", "f2ll"),
                               ("ull", "L", "f2ull")):
            dt = DTYPE_CODES[code]
            for m, form in (("rn", 'T.cast(T.nearbyint({0}), "%s")'), ("rz", 'T.cast({0}, "%s")'),
                            ("rd", 'T.cast(T.floor({0}), "%s")'), ("ru", 'T.cast(T.ceil({0}), "%s")')):
                mode = {"rn": "half to even", "rz": "toward zero", "rd": "down", "ru": "up"}[m]
                rows.append(R(f"__{src}2{dst}_{m}", form % dt, f"{code}:{scode}", domain=dom,
                              note=f"Round {mode}, then an exact conversion. " + sat))
    # integers to float and double in the directed modes: no TileLang operator takes a rounding
    # mode, so a helper converts under fesetround (CUDA's own function on the GPU)
    for src, code in (("int", "i"), ("uint", "u"), ("ll", "l"), ("ull", "L")):
        for dst, dcode in (("float", "f"), ("double", "d")):
            for m in ("rz", "rd", "ru"):
                name = f"__{src}2{dst}_{m}"
                if name == "__int2float_rz" or (src in ("int", "uint") and dst == "double"):
                    continue  # a row of its own below; int and uint convert to double exactly
                mode = {"rz": "toward zero", "rd": "down", "ru": "up"}[m]
                rows.append(R(name, _x(f"c2t_{name}"), f"{dcode}:{code}", domain="int",
                              note=f"Round {mode}: no TileLang operator takes a rounding mode; the "
                                   f"helper calls CUDA {name} (C body: conversion under fesetround)."))
    rows += [
        R("__int2float_rn", 'T.cast({0}, "float32")', "f:i", domain="int",
          note="Round to nearest even (C conversion on both targets)."),
        R("__int2float_rz", _x("c2t___int2float_rz"), "f:i", domain="int",
          note="No TileLang operator for the toward-zero mode: helper calls CUDA __int2float_rz "
               "(C body: conversion under fesetround)."),
        R("__uint2float_rn", 'T.cast({0}, "float32")', "f:u", domain="int",
          note="Round to nearest even (C conversion on both targets)."),
        R("__ll2float_rn", 'T.cast({0}, "float32")', "f:l", domain="int",
          note="Round to nearest even, directly from 64 bits (no double rounding)."),
        R("__ull2float_rn", 'T.cast({0}, "float32")', "f:L", domain="int",
          note="Round to nearest even, directly from 64 bits."),
        R("__double2float_rn", 'T.cast({0}, "float32")', "f:d", domain="any",
          note="Round to nearest even; overflow gives inf."),
        R("__int2double_rn", 'T.cast({0}, "float64")', "d:i", domain="int", note="Exact."),
        R("__uint2double_rn", 'T.cast({0}, "float64")', "d:u", domain="int", note="Exact."),
        R("__ll2double_rn", 'T.cast({0}, "float64")', "d:l", domain="int",
          note="Round to nearest even (C conversion on both targets)."),
        R("__ull2double_rn", 'T.cast({0}, "float64")', "d:L", domain="int",
          note="Round to nearest even (C conversion on both targets)."),
        R("__float_as_int", 'T.reinterpret({0}, "int32")', "i:f", domain="any",
          note="Bit copy (T.reinterpret(value, dtype); the dtype-first order is deprecated)."),
        R("__int_as_float", 'T.reinterpret({0}, "float32")', "f:i", domain="bits", note="Bit copy."),
        R("__float_as_uint", 'T.reinterpret({0}, "uint32")', "u:f", domain="any", note="Bit copy."),
        R("__uint_as_float", 'T.reinterpret({0}, "float32")', "f:u", domain="bits", note="Bit copy."),
        R("__double_as_longlong", 'T.reinterpret({0}, "int64")', "l:d", domain="any",
          note="Bit copy."),
        R("__longlong_as_double", 'T.reinterpret({0}, "float64")', "d:l", domain="bits",
          note="Bit copy."),
        R("__double2hiint", 'T.cast(T.reinterpret({0}, "int64") >> 32, "int32")', "i:d",
          domain="any", note="High 32 bits of the double's bit pattern."),
        R("__double2loint", 'T.cast(T.reinterpret({0}, "int64"), "int32")', "i:d", domain="any",
          note="Low 32 bits (the int64 -> int32 conversion keeps the low bits)."),
        R("__hiloint2double",
          'T.reinterpret(T.shift_left(T.cast({0}, "int64"), 32) | T.cast(T.cast({1}, "uint32"), "int64"), '
          '"float64")', "d:ii", domain="int",
          note="The double whose bit pattern has hi as its high and lo as its low 32 bits."),
    ]
    return rows


# ============================================================================ half / bfloat16
_HALF_MATH = [  # name, TileLang op, float helper for the CPU form
    ("hexp", "T.exp"), ("hexp2", "T.exp2"), ("hlog", "T.log"), ("hlog2", "T.log2"),
    ("hsqrt", "T.sqrt"), ("hrsqrt", "T.rsqrt"), ("hsin", "T.sin"), ("hcos", "T.cos"),
    ("hfloor", "T.floor"), ("hceil", "T.ceil"), ("htrunc", "T.trunc"),
]
_H_NOTE = ("CUDA documents no ULP bound for half functions (hsqrt/hrsqrt are sqrt/rsqrt.approx.f32 "
           "rounded to half); verified within 1 half-ulp of the correctly rounded result. ")


def _half_rows() -> list[Row]:
    R, U = _in_section("half")
    h2f = 'T.cast({0}, "float32")'
    rows = [
        R("__half2float", h2f, "f:h", section="half", domain="half", note="Exact."),
        R("__float2half", 'T.cast({0}, "float16")', "h:f", domain="f2h",
          note="Round to nearest even; |x| >= 65520 gives inf."),
        R("__float2half_rn", 'T.cast({0}, "float16")', "h:f", domain="f2h",
          note="Round to nearest even."),
        R("__float2half_rz", _x("c2t___float2half_rz"), "h:f", domain="f2h",
          note="No TileLang operator for the mode: helper calls CUDA __float2half_rz "
               "(C body: half_float::half_cast with round_toward_zero)."),
        R("__hadd", "{0} + {1}", "h:hh", section="half", overload="float16", domain="half",
          note="half_t + half_t is cutlass's operator+, i.e. __hadd on the GPU; on c half.hpp "
               "adds with one rounding (the same correctly rounded result)."),
        R("__hsub", "{0} - {1}", "h:hh", domain="half", note="As __hadd."),
        R("__hmul", "{0} * {1}", "h:hh", domain="half", note="As __hadd."),
        R("__hdiv", "{0} / {1}", "h:hh", ulp=1, domain="half",
          note="half_t / half_t is cutlass's operator/, i.e. __hdiv on the GPU (rcp.approx times "
               "the dividend, rounded to half; not always correctly rounded). On c: correctly "
               "rounded division."),
        R("__hfma", "T.fma({0}, {1}, {2})", "h:hhh", domain="half", cpu=False,
          cpu_form='T.cast(T.cast({0}, "float64") * T.cast({1}, "float64") + T.cast({2}, "float64"), "float16")',
          note="T.fma on float16 emits __hfma (one rounding). tl.fma fails on c; the CPU form "
               "computes in double and rounds to half (may differ in the last bit in rare "
               "double-rounding cases)."),
        R("__hneg", "-{0}", "h:h", domain="half",
          note="TileLang emits x * -1 (__hmul): the same value; a NaN may come out with another "
               "sign/payload than __hneg gives."),
        R("__habs", "T.abs({0})", "h:h", domain="half", cpu=False,
          cpu_form=f'T.cast({_x("c2t_fabsf")}, "float16")',
          note="T.abs emits __habs. tirx.fabs fails on c; CPU form: fabsf through float (exact)."),
        R("__hmax", "T.max({0}, {1})", "h:hh", domain="half", cpu=False,
          cpu_form=f'T.cast({_x("c2t_fmaxf")}, "float16")',
          note="T.max on float16 emits __hmax (NaN operand -> the other). On c T.max is a ternary "
               "(wrong for NaN); CPU form: fmaxf through float (exact)."),
        R("__hmin", "T.min({0}, {1})", "h:hh", domain="half", cpu=False,
          cpu_form=f'T.cast({_x("c2t_fminf")}, "float16")',
          note="T.min emits __hmin; CPU form: fminf through float."),
        R("__heq", "{0} == {1}", "?:hh", domain="half", note="Ordered: false when either is NaN."),
        R("__hne", "({0} < {1}) | ({0} > {1})", "?:hh", domain="half",
          note="CUDA __hne is ordered (false for NaN), unlike C !=; this form keeps that."),
        R("__hlt", "{0} < {1}", "?:hh", domain="half", note="Ordered comparison (false for NaN)."),
        R("__hle", "{0} <= {1}", "?:hh", domain="half", note="Ordered comparison."),
        R("__hgt", "{0} > {1}", "?:hh", domain="half", note="Ordered comparison."),
        R("__hge", "{0} >= {1}", "?:hh", domain="half", note="Ordered comparison."),
        R("__hisnan", "T.isnan({0})", "?:h", domain="half", note="bool."),
        R("__hisinf", 'T.if_then_else({0} == T.infinity("float16"), 1, '
                      'T.if_then_else({0} == -T.infinity("float16"), -1, 0))', "i:h", domain="half",
          note="CUDA __hisinf returns int: 1 for +inf, -1 for -inf, 0 otherwise (not a bool)."),
        R("hrcp", _x("c2t_hrcp"), "h:h", ulp=1, domain="half",
          note="No TileLang operator: helper calls CUDA hrcp (rcp.approx.ftz.f32, then rounded "
               "to half: not always correctly rounded). C body: float division rounded once. "
               "(T.cast(1.0 / x, 'float16') would be the correctly rounded value; note a Python "
               "float literal promotes a float16 operand to float32 in TileLang.)"),
        R("__half2int_rn", 'T.cast(T.nearbyint(T.cast({0}, "float32")), "int32")', "i:h",
          domain="half", note="Round half to even (through float: exact)."),
        R("__int2half_rn", 'T.cast({0}, "float16")', "h:i", domain="int",
          note="Round to nearest even (int -> float -> half is exact or overflows to inf)."),
        R("__half_as_short", 'T.reinterpret({0}, "int16")', "s:h", domain="half", note="Bit copy."),
        R("__short_as_half", 'T.reinterpret({0}, "float16")', "h:s", domain="bits", note="Bit copy."),
        R("__half_as_ushort", 'T.reinterpret({0}, "uint16")', "S:h", domain="half", note="Bit copy."),
        R("__ushort_as_half", 'T.reinterpret({0}, "float16")', "h:S", domain="bits", note="Bit copy."),
        R("__low2float", 'T.cast({0}[0], "float32")', "f:H", domain="half",
          note="Two-lane values are 2-element buffers: [0] is the low lane (.x)."),
        R("__high2float", 'T.cast({0}[1], "float32")', "f:H", domain="half", note="[1] is .y."),
        R("__low2half", "{0}[0]", "h:H", domain="half", note="Lane [0] of the 2-element buffer."),
        R("__high2half", "{0}[1]", "h:H", domain="half", note="Lane [1] of the 2-element buffer."),
    ]
    for name, op in _HALF_MATH:
        dom = {"hexp": "halfunit", "hexp2": "halfunit", "hlog": "halfpos", "hlog2": "halfpos",
               "hsqrt": "halfpos", "hrsqrt": "halfpos"}.get(name, "half")
        exact = name in ("hfloor", "hceil", "htrunc")
        rows.append(R(name, f"{op}({{0}})", "h:h", ulp=0 if exact else 1, domain=dom, cpu=False,
                      cpu_form=f'T.cast({op}(T.cast({{0}}, "float32")), "float16")',
                      note=f"{op} on float16 emits {name}. Half math is unresolved on c; CPU form: "
                           "the float function rounded to half. " + ("" if exact else _H_NOTE)))
    # two-lane results: no expression form (a 2-element buffer is written lane by lane)
    vec = {
        "__hadd2": "__hadd", "__hsub2": "__hsub", "__hmul2": "__hmul", "__hfma2": "__hfma",
        "__hneg2": "__hneg", "__habs2": "__habs", "__hmax2": "__hmax", "__hmin2": "__hmin",
        "h2exp": "hexp", "h2sqrt": "hsqrt", "h2rsqrt": "hrsqrt",
        "__half2half2": None, "__halves2half2": None, "__floats2half2_rn": "__float2half_rn",
        "__float2half2_rn": "__float2half_rn", "__float22half2_rn": "__float2half_rn",
        "__half22float2": "__half2float", "__lows2half2": None, "__highs2half2": None,
        "__bfloat1622float2": "__bfloat162float", "__float22bfloat162_rn": "__float2bfloat16_rn",
        "__floats2bfloat162_rn": "__float2bfloat16_rn", "__bfloat162bfloat162": None,
        "__halves2bfloat162": None,
        # comparisons: each lane 1.0 where the scalar comparison holds, else 0.0
        "__heq2": "__heq", "__hne2": "__hne", "__hlt2": "__hlt", "__hle2": "__hle", "__hgt2": "__hgt",
        "__hge2": "__hge",
    }
    for name, lane in vec.items():
        how = (f"apply the {lane} row to lane [0] and lane [1]" if lane else
               "assign the lanes ([0], [1]) one by one")
        rows.append(U(name, "Returns a two-lane vector: no scalar expression form. With "
                            f"2-element buffers, {how}. (T.add2/T.max2… take float16x2 vector "
                            "values, which the c target cannot run.)", lanewise=lane))
    rows.append(U("__ldg_half", "Read-only cache load of a half: emit a plain load of the element."))
    # bfloat16: no bfloat16 type on c; there bfloat16 values are held in float32
    rows += [
        R("__hadd", "{0} + {1}", "b:bb", section="half", overload="bfloat16", domain="bf16", cpu=False,
          cpu_form=_x("c2t_bf16_rn").replace("{0}", "{0} + {1}"),
          note="__hadd on __nv_bfloat16 (not the int overload's average): bfloat16_t + bfloat16_t. On c "
               "(bfloat16 held in float32) the float32 sum rounded to bfloat16 precision."),
        R("__float2bfloat16", 'T.cast({0}, "bfloat16")', "b:f", domain="any", cpu=False,
          cpu_form=_x("c2t_bf16_rn"),
          note="Round to nearest even. bfloat16 cannot be compiled for c ('Cannot convert type "
               "bfloat16 to C type'): the CPU form rounds to bfloat16 precision and keeps float32."),
        R("__float2bfloat16_rn", 'T.cast({0}, "bfloat16")', "b:f", domain="any", cpu=False,
          cpu_form=_x("c2t_bf16_rn"), note="As __float2bfloat16."),
        R("__float2bfloat16_rz", 'T.cast(' + _x("c2t_bf16_rz") + ', "bfloat16")', "b:f",
          domain="any", cpu=False, cpu_form=_x("c2t_bf16_rz"),
          note="No TileLang operator for the mode: helper calls CUDA __float2bfloat16_rz (the "
               "value is exact in bfloat16, so the final cast does not round)."),
        R("__bfloat162float", 'T.cast({0}, "float32")', "f:b", domain="bf16",
          note="Exact. On c (bfloat16 held in float32) the cast is the identity."),
        R("__bfloat162int_rn", 'T.cast(T.nearbyint(T.cast({0}, "float32")), "int32")', "i:b", domain="bf16",
          note="Round half to even (through float: exact)."),
        R("__low2bfloat16", "{0}[0]", "b:B", domain="bf16", note="Lane [0] of the 2-element buffer."),
        R("__high2bfloat16", "{0}[1]", "b:B", domain="bf16", note="Lane [1] of the 2-element buffer."),
        R("__bfloat16_as_short", 'T.reinterpret({0}, "int16")', "s:b", domain="bf16", cpu=False,
          cpu_form='T.cast(T.reinterpret({0}, "int32") >> 16, "int16")',
          note="Bit copy. CPU form: the high half of the float32 holding the bfloat16."),
        R("__bfloat16_as_ushort", 'T.reinterpret({0}, "uint16")', "S:b", domain="bf16", cpu=False,
          cpu_form='T.cast(T.reinterpret({0}, "uint32") >> 16, "uint16")',
          note="Bit copy. CPU form: the high half of the float32."),
        R("__ushort_as_bfloat16", 'T.reinterpret({0}, "bfloat16")', "b:S", domain="bits",
          cpu=False, cpu_form='T.reinterpret(T.cast({0}, "uint32") << 16, "float32")',
          note="Bit copy. CPU form: the bits placed in the high half of a float32."),
    ]
    return rows


# ============================================================================ atomics
_U64_NOTE = ("T.{op} on uint64 lowers but does not compile with nvcc (TileLang's atomic templates "
             "take uint64_t = unsigned long, CUDA's atomics unsigned long long): the helper calls "
             "the CUDA atomic with the pointer cast. Plain read-modify-write on c.")


def _atomic_rows() -> list[Row]:
    R, _ = _in_section("atomic")
    A = dict(kind="atomic", domain="int")
    rows = []
    codes = {"int32": "i", "uint32": "u", "int64": "l", "uint64": "L", "float32": "f", "float64": "d"}
    short = {"int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64", "float32": "f32",
             "float64": "f64"}
    for dt in ("int32", "uint32", "float32", "float64"):
        c = codes[dt]
        rows.append(R("atomicAdd", "T.atomic_add({0}, {1}, return_prev=True)", f"{c}:{c}{c}",
                      overload=dt, stmt="T.atomic_add({0}, {1})", ulp=0,
                      note="Returns the old value (return_prev=True emits AtomicAddRet); the "
                           "statement form drops it. Float atomics make the sum order-dependent "
                           "across threads, as on CUDA. The c target runs the loop serially.",
                      **{**A, "domain": "int" if c in "iuL" else "small"}))
    rows.append(R("atomicAdd", _x("c2t_atomicAdd_u64"), "L:LL", overload="uint64",
                  note=_U64_NOTE.format(op="atomic_add"), **A))
    for dt, neg in (("int32", "-({1})"), ("uint32", "T.uint32(0) - {1}")):
        c = codes[dt]
        rows.append(R("atomicSub", f"T.atomic_add({{0}}, {neg}, return_prev=True)", f"{c}:{c}{c}",
                      overload=dt, stmt=f"T.atomic_add({{0}}, {neg})",
                      note="Adds the negation, modulo 2^32 like atomicSub"
                           + (" (unary minus on a uint32 PrimExpr raises in TVM: 0 - v)."
                              if dt == "uint32" else "."), **A))
    for op, tl in (("atomicMax", "atomic_max"), ("atomicMin", "atomic_min")):
        for dt in ("int32", "uint32"):
            c = codes[dt]
            rows.append(R(op, f"T.{tl}({{0}}, {{1}}, return_prev=True)", f"{c}:{c}{c}",
                          overload=dt, stmt=f"T.{tl}({{0}}, {{1}})", cpu=False,
                          cpu_form=_x(f"c2t_{op}_{short[dt]}"),
                          note=f"T.{tl} emits {'AtomicMaxRet' if 'Max' in op else 'AtomicMinRet'} "
                               "(cuda::atomic_ref fetch, relaxed, device scope). It fails to lower on "
                               "c; CPU form: a helper calling the CUDA atomic on the GPU.", **A))
        rows.append(R(op, _x(f"c2t_{op}_i64"), "l:ll", overload="int64",
                      note=f"T.{tl} on int64 does not compile with nvcc, and TileLang's atomic "
                           "templates normalise int64_t to unsigned long long (an unsigned "
                           "comparison): the helper calls the CUDA atomic on long long.", **A))
        rows.append(R(op, _x(f"c2t_{op}_u64"), "L:LL", overload="uint64",
                      note=_U64_NOTE.format(op=tl), **A))
    ext = {
        "atomicExch": ("int32", "uint32", "uint64", "float32"),
        "atomicCAS": ("int32", "uint32", "uint64"),
        "atomicAnd": ("int32", "uint32", "uint64"),
        "atomicOr": ("int32", "uint32", "uint64"),
        "atomicXor": ("int32", "uint32", "uint64"),
        "atomicInc": ("uint32", "int32"), "atomicDec": ("uint32", "int32"),
    }
    for op, dts in ext.items():
        for dt in dts:
            c = codes[dt]
            nargs = 3 if op == "atomicCAS" else 2
            # atomicInc/Dec count in unsigned; their int32 overload is an int element whose
            # address the program cast to unsigned* (the same update on its bits)
            rows.append(R(op, _x(f"c2t_{op}_{short[dt]}"), f"{c}:" + c * nargs,
                          overload=dt if len(dts) > 1 else None,
                          address_as="uint32" if op in ("atomicInc", "atomicDec") and dt != "uint32" else None,
                          note="No TileLang operator: the helper calls the CUDA atomic itself; on c "
                               "it is a plain read-modify-write (c runs kernels serially)."
                               + (" Wraps to 0 after reaching the limit." if op == "atomicInc" else "")
                               + (" Returns to the limit at 0 or above it." if op == "atomicDec" else ""),
                          **{**A, "domain": "small" if dt == "float32" else "int"}))
    rows.append(R("atomicAdd_block", "T.atomic_add({0}, {1}, return_prev=True)", "i:ii",
                  stmt="T.atomic_add({0}, {1})",
                  note="T.atomic_add is device scope, stronger than block scope: same results.", **A))
    for dt in ("int32", "float32"):
        c = codes[dt]
        rows.append(R("atomicAdd_system", _x(f"c2t_atomicAdd_system_{short[dt]}"), f"{c}:{c}{c}",
                      overload=dt,
                      note="T.atomic_add is only device scope; the helper calls atomicAdd_system "
                           "(host / peer-device coherence).",
                      **{**A, "domain": "int" if c == "i" else "small"}))
    for op in ("atomicExch", "atomicMax", "atomicMin", "atomicCAS", "atomicAnd", "atomicOr",
               "atomicXor"):
        nargs = 3 if op == "atomicCAS" else 2
        rows.append(R(f"{op}_block", _x(f"c2t_{op}_block_i32"), "i:" + "i" * nargs,
                      note=f"Helper calls {op}_block (int overload; add a helper per further type). "
                           f"The device-scope {op} would also be correct.", **A))
        rows.append(R(f"{op}_system", _x(f"c2t_{op}_system_i32"), "i:" + "i" * nargs,
                      note=f"Helper calls {op}_system (int overload; host / peer-device coherence, "
                           f"which no TileLang atomic has).", **A))
    return rows


# ============================================================================ unsupported section
#: names whose calls the frontend reports as unsupported, with the diagnostic code
_UNSUPPORTED = {
    **{n: "M1202" for n in """
        tex1Dfetch tex1D tex2D tex3D tex1DLayered tex2DLayered texCubemap tex2Dgather surf1Dread
        surf2Dread surf3Dread surf1Dwrite surf2Dwrite surf3Dwrite""".split()},
    "malloc": "M1210", "free": "M1210",
}


def _unsupported_rows() -> list[Row]:
    _, U = _in_section("unsupported")
    rows = []
    for name, code in _UNSUPPORTED.items():
        if name.startswith("tex"):
            note = ("Texture fetch: no TileLang equivalent. Bind the array as a plain tensor "
                    "and index it (with explicit clamping/interpolation if the texture used them).")
        elif name.startswith("surf"):
            note = "Surface access: no TileLang equivalent; use a plain tensor load/store."
        else:
            note = ("Device-side heap allocation: TileLang kernels cannot allocate global memory; "
                    "allocate on the host and pass a workspace tensor.")
        rows.append(U(name, note, code=code))
    return rows


ROWS: tuple[Row, ...] = tuple(
    _math_rows() + _overload_rows() + _intrinsic_rows() + _integer_rows() + _conversion_rows()
    + _half_rows() + _atomic_rows() + _unsupported_rows()
)

_BY_NAME: dict[str, list[Row]] = {}
for _row in ROWS:
    _BY_NAME.setdefault(_row.cuda, []).append(_row)
for _name, _rows in _BY_NAME.items():
    _keys = [r.overload for r in _rows]
    if len(set(_keys)) != len(_keys) or (len(_rows) > 1 and None in _keys):
        raise TableError(f"compat rows for {_name!r} need distinct overloads, got {_keys}")

#: C-style promotions used when no overload matches an argument dtype exactly.
_PROMOTE = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int32",
            "uint16": "int32", "float16": "float32", "bfloat16": "float32"}


def normalize_name(name: str) -> str:
    """``::expf`` -> ``expf``; ``std::exp`` stays."""
    return name[2:] if name.startswith("::") else name


def rows_for(name: str) -> list[Row]:
    """All rows (overloads) of a CUDA name, the default first."""
    return list(_BY_NAME.get(normalize_name(name), ()))


def lookup(name: str, dtypes=None) -> Row | None:
    """The row for a CUDA call, or None when the name is not in the table.

    ``dtypes`` (argument dtypes, optional) selects among overloads: an exact match on the first
    argument, then its C promotion (int16 -> int32, float16 -> float32…); otherwise the first
    (default) row.
    """
    rows = rows_for(name)
    if not rows:
        return None
    if len(rows) == 1 or not dtypes:
        return rows[0]
    first = str(dtypes[0])
    for candidate in (first, _PROMOTE.get(first)):
        for r in rows:
            if candidate is not None and r.overload == candidate:
                return r
    if _float(first) and not _float(rows[0].overload) and any(_float(r.overload) for r in rows):
        return None  # __hadd of bfloat16 values: not the int overload's average (the float16 row is half's)
    return rows[0]


def _float(dtype) -> bool:
    return bool(dtype) and str(dtype).startswith(("float", "bfloat"))


def counts() -> dict[str, int]:
    """Row count per status."""
    out = {s.value: 0 for s in Status}
    for r in ROWS:
        out[r.status.value] += 1
    return out
