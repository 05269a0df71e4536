"""Extern helpers: CUDA device functions TileLang has no operator for, as data.

A row of :mod:`migrate.compat.table` whose TileLang form needs a helper calls it through
``T.call_extern(ret, "c2t_<name>", args...)``. Each helper has two bodies:

* ``cuda``: the CUDA device function itself (``static __device__ __forceinline__``), so on the
  GPU the migrated kernel executes exactly the call the CUDA kernel made;
* ``c``: a C implementation for TileLang's CPU ``c`` target (``extern "C"`` linkage: the C code
  generator declares every ``call_extern`` callee as ``extern "C" <ret> name(<arg types>);``).

The helpers reach the kernel through ``T.Kernel(..., prelude=cuda_math.prelude(target))`` (or
``externs_for(names, target)``). Every definition sits behind an include guard, so preludes built
from different name sets may be concatenated.

The C body is the ONE C implementation of the CUDA function: the CPU executor, which runs the
*original* CUDA program on the CPU (``runtime/cpu``), gets the same text. ``executor`` names the
CUDA functions the body defines there; :mod:`migrate.compat.cpu_header` writes them (and the
:data:`SUPPORT` blocks they need) into ``runtime/cpu/c2t_compat_math.h``, and
``python -m migrate.compat.generate`` regenerates that file. A helper without ``executor`` names
either calls the C library function CUDA names (``c`` equals ``cuda``: the executor compiles the
same call against the same libm) or says in ``executor_note`` why the executor keeps its own
definition (half types, atomics: ``runtime/cpu/c2t_types.h`` / ``c2t_device.h``).

Parameters are named ``x, y, z`` in the bodies. A body without ``;`` is an expression (``return``
is added). Argument types must match the C declaration TileLang emits from the *argument*
dtypes, so the call templates cast every argument to the parameter dtype (``T.cast`` is the
identity when the dtype already matches).
"""
from __future__ import annotations

from dataclasses import dataclass

#: TileLang dtype -> C type on the ``c`` target (as TileLang's C codegen spells it).
C_TYPES = {
    "float32": "float", "float64": "double", "float16": "half",
    "int8": "int8_t", "int16": "int16_t", "int32": "int32_t", "int64": "int64_t",
    "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t", "uint64": "uint64_t",
}
#: TileLang dtype -> C++ type in TileLang's CUDA output (pointer parameters must match exactly).
CUDA_TYPES = {
    "float32": "float", "float64": "double", "float16": "half_t", "bfloat16": "bfloat16_t",
    "int8": "signed char", "int16": "short", "int32": "int", "int64": "int64_t",
    "uint8": "unsigned char", "uint16": "unsigned short", "uint32": "unsigned int",
    "uint64": "uint64_t",
}

_PARAM_NAMES = ("x", "y", "z", "w")


@dataclass(frozen=True)
class Extern:
    """One helper function: signature in TileLang dtypes, a C body and a CUDA body."""

    name: str
    ret: str
    params: tuple[str, ...]
    c: str
    cuda: str
    #: names of :data:`SUPPORT` blocks the C body needs
    needs: tuple[str, ...] = ()
    #: CUDA functions the CPU executor defines with this C body (runtime/cpu/c2t_compat_math.h)
    executor: tuple[str, ...] = ()
    #: why the executor does not use this body, when ``executor`` is empty and the body is not
    #: the C library call itself
    executor_note: str = ""

    def __post_init__(self) -> None:
        check_extern(self)

    def call(self) -> str:
        """The TileLang call template, ``{0}``… standing for the argument texts."""
        args = []
        for i, p in enumerate(self.params):
            if p.endswith("*"):
                args.append(f"T.address_of({{{i}}})")
            else:
                args.append(f'T.cast({{{i}}}, "{p}")')
        return f'T.call_extern("{self.ret}", "{self.name}", {", ".join(args)})'

    def _sig(self, types: dict[str, str]) -> str:
        ps = []
        for n, p in zip(_PARAM_NAMES, self.params):
            base = p.rstrip("*")
            ps.append(f"{types[base]}{'*' if p.endswith('*') else ''} {n}")
        return f"{types[self.ret]} {self.name}({', '.join(ps)})"

    def statements(self, target: str = "c") -> str:
        """The body for ``target`` as statements (an expression body gets its ``return``)."""
        body = self.c if target == "c" else self.cuda
        return body if ";" in body else f"return {body};"

    def source(self, target: str) -> str:
        """The guarded definition for ``target`` (``"c"`` or ``"cuda"``)."""
        body = self.statements(target)
        if target == "c":
            head = f'extern "C" {self._sig(C_TYPES)}'
        else:
            head = f"static __device__ __forceinline__ {self._sig(CUDA_TYPES)}"
        guard = f"C2T_DEF_{self.name}"
        return f"#ifndef {guard}\n#define {guard}\n{head} {{ {body} }}\n#endif\n"


#: Static C support code shared by several C bodies (``c`` target only).
SUPPORT: dict[str, str] = {
    "erfinv": r"""
#ifndef C2T_SUPPORT_erfinv
#define C2T_SUPPORT_erfinv
/* erfinv / erfcinv in double: an initial guess refined by Newton steps on erf (centre) or on
   log(erfc) (tails, where erf(x) - y would cancel). */
static double c2t__erfcinv_d(double y) {
  if (y != y || y < 0.0 || y > 2.0) return NAN;
  if (y == 0.0) return INFINITY;
  if (y == 2.0) return -INFINITY;
  if (y > 1.0) return -c2t__erfcinv_d(2.0 - y);
  double x;
  if (y > 0.0625) {
    double p = 1.0 - y, w = -log((1.0 - p) * (1.0 + p));
    if (w < 5.0) {
      w -= 2.5;
      double q = 2.81022636e-08; q = 3.43273939e-07 + q * w; q = -3.5233877e-06 + q * w;
      q = -4.39150654e-06 + q * w; q = 0.00021858087 + q * w; q = -0.00125372503 + q * w;
      q = -0.00417768164 + q * w; q = 0.246640727 + q * w; q = 1.50140941 + q * w;
      x = q * p;
    } else {
      w = sqrt(w) - 3.0;
      double q = -0.000200214257; q = 0.000100950558 + q * w; q = 0.00134934322 + q * w;
      q = -0.00367342844 + q * w; q = 0.00573950773 + q * w; q = -0.0076224613 + q * w;
      q = 0.00943887047 + q * w; q = 1.00167406 + q * w; q = 2.83297682 + q * w;
      x = q * p;
    }
  } else {
    double t = sqrt(-log(y));
    x = t - (log(t) + 0.5723649429247001) / (2.0 * t);  /* asymptotic start */
  }
  for (int k = 0; k < 60; ++k) {
    double step;
    if (x < 0.5) {
      /* centre: f(x) = erf(x) - (1 - y) */
      step = (erf(x) - (1.0 - y)) / (1.1283791670955126 * exp(-x * x));
    } else {
      /* tail: f(x) = log(erfc(x)) - log(y) */
      double e = erfc(x);
      if (e == 0.0) { x -= 0.5; continue; }
      step = (log(e) - log(y)) / (-1.1283791670955126 * exp(-x * x) / e);
    }
    x -= step;
    if (fabs(step) <= 1e-17 * fabs(x)) break;
  }
  return x;
}
static double c2t__erfinv_d(double y) {
  if (y != y || y < -1.0 || y > 1.0) return NAN;
  if (y == 0.0) return y;
  if (y < 0.0) return -c2t__erfinv_d(-y);
  if (y == 1.0) return INFINITY;
  if (y > 0.5) return c2t__erfcinv_d(1.0 - y);  /* 1 - y is exact here */
  double x = y * 0.886226925452758;
  for (int k = 0; k < 60; ++k) {
    double step = (erf(x) - y) / (1.1283791670955126 * exp(-x * x));
    x -= step;
    if (fabs(step) <= 1e-17 * fabs(x)) break;
  }
  return x;
}
/* normcdf with the argument scaling done in double-double (erfc is steep). */
static double c2t__normcdf_d(double a) {
  if (a != a) return a;
  if (a == INFINITY) return 1.0;
  if (a == -INFINITY) return 0.0;
  const double hi = 0.70710678118654757, lo = -4.8336466567264567e-17;
  double u = -a, t = u * hi;
  double err = fma(u, hi, -t) + u * lo;
  double r = erfc(t);
  r -= err * 1.1283791670955126 * exp(-t * t);
  return 0.5 * r;
}
#endif
""",
    "pi": r"""
#ifndef C2T_SUPPORT_pi
#define C2T_SUPPORT_pi
/* sin(pi*x) and cos(pi*x): exact reduction to |f| <= 1/4, pi*f in double-double. */
static void c2t__sincospi_d(double a, double* s, double* c) {
  if (a != a || a == INFINITY || a == -INFINITY) { *s = NAN; *c = NAN; return; }
  double r = fmod(a, 2.0);              /* exact */
  double n = nearbyint(2.0 * r);        /* quadrant */
  double f = r - 0.5 * n;               /* exact, |f| <= 1/4 */
  const double pih = 3.141592653589793, pil = 1.2246467991473532e-16;
  double p = pih * f, pe = fma(pih, f, -p) + pil * f;
  double sf = sin(p) + pe * cos(p), cf = cos(p) - pe * sin(p);
  int q = ((int)fmod(n, 4.0) + 4) % 4;
  double ss, cc;
  switch (q) {
    case 0: ss = sf; cc = cf; break;
    case 1: ss = cf; cc = -sf; break;
    case 2: ss = -sf; cc = -cf; break;
    default: ss = -cf; cc = sf; break;
  }
  if (ss == 0.0) ss = copysign(0.0, a);      /* sinpi(+-n) = +-0 */
  if (cc == 0.0) cc = 0.0;                   /* cospi(n + 1/2) = +0 */
  *s = ss; *c = cc;
}
#endif
""",
}


def _directed(expr: str, ctype: str, mode: str, n: int = 2, rtype: str | None = None) -> str:
    """A C body evaluating ``expr`` over volatile copies ``vx, vy, vz`` of the first ``n``
    parameters with the FPU in rounding ``mode`` (rn/rz/ru/rd), then restoring the mode."""
    fe = {"rn": "FE_TONEAREST", "rz": "FE_TOWARDZERO", "ru": "FE_UPWARD", "rd": "FE_DOWNWARD"}[mode]
    copies = " ".join(f"volatile {ctype} v{p} = {p};" for p in _PARAM_NAMES[:n])
    return (f"int o = fegetround(); {copies} fesetround({fe}); "
            f"volatile {rtype or ctype} r = {expr}; fesetround(o); return r;")


class ExternError(ValueError):
    """A malformed extern helper."""


def check_extern(e: Extern) -> None:
    """Raise :class:`ExternError` unless ``e`` has a C body, a CUDA body and an executor decision
    (executor names, the C library call itself, or a note saying why not)."""
    where = f"extern helper {e.name!r}"
    if not e.name.startswith("c2t_"):
        raise ExternError(f"{where}: helper names start with c2t_")
    if not e.c.strip() or not e.cuda.strip():
        raise ExternError(f"{where}: needs a C body (c) and a CUDA body (cuda)")
    for s in e.needs:
        if s not in SUPPORT:
            raise ExternError(f"{where}: unknown support block {s!r}")
    if not e.executor and e.c != e.cuda and not e.executor_note:
        raise ExternError(f"{where}: say which CUDA functions the CPU executor defines with this "
                          "C body (executor=...), or why it does not (executor_note=...)")
    if e.executor and e.executor_note:
        raise ExternError(f"{where}: executor names and an executor_note exclude each other")
    if any(p.endswith("*") for p in e.params) and e.executor:
        raise ExternError(f"{where}: pointer helpers (atomics) are not generated for the executor")


def _ext(name, ret, params, c, cuda=None, needs=(), executor=None, note=""):
    """A helper. ``executor`` (names, or True for the CUDA name ``name`` minus ``c2t_``) lists the
    CUDA functions the CPU executor defines with the C body ``c``."""
    if executor is True:
        executor = (name[len("c2t_"):],)
    return Extern(name, ret, tuple(params.split()) if isinstance(params, str) else tuple(params),
                  c, c if cuda is None else cuda, tuple(needs), tuple(executor or ()), note)


_F, _D = "float32", "float64"

#: why the CPU executor keeps its own definitions of these CUDA functions
_HALF_NOTE = ("half: the body is written for TileLang's c half type (half_float::half); the "
              "executor's __half and __nv_bfloat16 (runtime/cpu/c2t_types.h) define the function "
              "once for both types, with the same rounding.")
_BF16_NOTE = ("not a CUDA function: the CPU form of bfloat16 rows, whose values are held in float32 "
              "on c; the executor has a real __nv_bfloat16 (runtime/cpu/c2t_types.h).")
_ATOMIC_NOTE = ("atomic: the executor's atomics (runtime/cpu/c2t_device.h) are overloads on every "
                "pointer type CUDA has, doing the same read-modify-write (fibers run one at a time).")

EXTERNS_LIST: list[Extern] = [
    # ---------------------------------------------------------------- float/double math
    # C library functions: the body is the call CUDA makes (c == cuda), and the executor calls
    # the same libm function; exp10f's body is also the executor's (precise) __exp10f
    *[_ext(f"c2t_{fn}f", _F, _F, f"{fn}f(x)", executor=["__exp10f"] if fn == "exp10" else None)
      for fn in "exp10 expm1 cbrt erfc lgamma tgamma logb".split()],
    *[_ext(f"c2t_{fn}", _D, _D, f"{fn}(x)") for fn in
      "exp10 expm1 cbrt erfc lgamma tgamma logb".split()],
    *[_ext(f"c2t_{fn}f", _F, "float32 float32", f"{fn}f(x, y)") for fn in "remainder fdim".split()],
    *[_ext(f"c2t_{fn}", _D, "float64 float64", f"{fn}(x, y)") for fn in "remainder fdim".split()],
    # CUDA functions libm lacks: the C body is also the CPU executor's definition
    _ext("c2t_rcbrtf", _F, _F, "(float)(1.0 / cbrt((double)x))", "rcbrtf(x)", executor=True),
    _ext("c2t_rcbrt", _D, _D, "1.0 / cbrt(x)", "rcbrt(x)", executor=True),
    _ext("c2t_rhypotf", _F, "float32 float32", "(float)(1.0 / hypot((double)x, (double)y))",
         "rhypotf(x, y)", executor=True),
    _ext("c2t_rhypot", _D, "float64 float64", "1.0 / hypot(x, y)", "rhypot(x, y)", executor=True),
    _ext("c2t_ilogbf", "int32", _F, "ilogbf(x)"),
    _ext("c2t_ilogb", "int32", _D, "ilogb(x)"),
    _ext("c2t_erfinvf", _F, _F, "(float)c2t__erfinv_d((double)x)", "erfinvf(x)", ["erfinv"],
         executor=True),
    _ext("c2t_erfinv", _D, _D, "c2t__erfinv_d(x)", "erfinv(x)", ["erfinv"], executor=True),
    _ext("c2t_erfcinvf", _F, _F, "(float)c2t__erfcinv_d((double)x)", "erfcinvf(x)", ["erfinv"],
         executor=True),
    _ext("c2t_erfcinv", _D, _D, "c2t__erfcinv_d(x)", "erfcinv(x)", ["erfinv"], executor=True),
    _ext("c2t_normcdff", _F, _F, "(float)c2t__normcdf_d((double)x)", "normcdff(x)", ["erfinv"],
         executor=True),
    _ext("c2t_normcdf", _D, _D, "c2t__normcdf_d(x)", "normcdf(x)", ["erfinv"], executor=True),
    _ext("c2t_normcdfinvf", _F, _F, "(float)(-1.4142135623730951 * c2t__erfcinv_d(2.0 * (double)x))",
         "normcdfinvf(x)", ["erfinv"], executor=True),
    _ext("c2t_normcdfinv", _D, _D, "-1.4142135623730951 * c2t__erfcinv_d(2.0 * x)",
         "normcdfinv(x)", ["erfinv"], executor=True),
    _ext("c2t_sinpif", _F, _F, "double s, c; c2t__sincospi_d((double)x, &s, &c); return (float)s;",
         "sinpif(x)", ["pi"], executor=True),
    _ext("c2t_cospif", _F, _F, "double s, c; c2t__sincospi_d((double)x, &s, &c); return (float)c;",
         "cospif(x)", ["pi"], executor=True),
    _ext("c2t_sinpi", _D, _D, "double s, c; c2t__sincospi_d(x, &s, &c); return s;", "sinpi(x)", ["pi"],
         executor=True),
    _ext("c2t_cospi", _D, _D, "double s, c; c2t__sincospi_d(x, &s, &c); return c;", "cospi(x)", ["pi"],
         executor=True),
    # helpers behind the CPU forms of rows whose TileLang operator fails on target c
    _ext("c2t_roundf", _F, _F, "roundf(x)"),
    _ext("c2t_round", _D, _D, "round(x)"),
    _ext("c2t_fabsf", _F, _F, "fabsf(x)"),
    _ext("c2t_fabs", _D, _D, "fabs(x)"),
    _ext("c2t_fmaxf", _F, "float32 float32", "fmaxf(x, y)"),
    _ext("c2t_fminf", _F, "float32 float32", "fminf(x, y)"),
    _ext("c2t_fmax", _D, "float64 float64", "fmax(x, y)"),
    _ext("c2t_fmin", _D, "float64 float64", "fmin(x, y)"),
    # (fmaf/fma are also the CPU forms of __fmaf_rn/__fma_rn: the executor's definitions)
    _ext("c2t_fmaf", _F, "float32 float32 float32", "fmaf(x, y, z)", executor=["__fmaf_rn"]),
    _ext("c2t_fma", _D, "float64 float64 float64", "fma(x, y, z)", executor=["__fma_rn"]),
    _ext("c2t_isinff", "int32", _F, "isinf(x) ? 1 : 0"),
    _ext("c2t_isinf", "int32", _D, "isinf(x) ? 1 : 0"),
    _ext("c2t_isfinitef", "int32", _F, "isfinite(x) ? 1 : 0"),
    _ext("c2t_isfinite", "int32", _D, "isfinite(x) ? 1 : 0"),
    _ext("c2t_signbitf", "int32", _F, "signbit(x) ? 1 : 0"),
    _ext("c2t_signbit", "int32", _D, "signbit(x) ? 1 : 0"),
    # ---------------------------------------------------------------- fast / rounding intrinsics
    # (the executor computes fast intrinsics at full precision: c2t_math.h's precision table)
    _ext("c2t___powf", _F, "float32 float32", "powf(x, y)", "__powf(x, y)", executor=True),
    _ext("c2t___fdividef", _F, "float32 float32", "x / y", "__fdividef(x, y)", executor=True),
    _ext("c2t___saturatef", _F, _F, "x != x ? 0.0f : (x <= 0.0f ? 0.0f : (x >= 1.0f ? 1.0f : x))",
         "__saturatef(x)", executor=True),
    _ext("c2t___frsqrt_rn", _F, _F, "(float)(1.0 / sqrt((double)x))", "__frsqrt_rn(x)",
         executor=True),
    _ext("c2t___int2float_rz", _F, "int32", _directed("(float)vx", "int32_t", "rz", 1, "float"),
         "__int2float_rz(x)", executor=True),
    # the other integer-to-floating conversions in a directed mode; the executor's own
    # definitions of int and uint to float (runtime/cpu/c2t_math.h) round the same way
    *[_ext(f"c2t___{src}2{dst}_{m}", _F if dst == "float" else _D, dt,
           _directed(f"({dst})vx", ctype, m, 1, dst), f"__{src}2{dst}_{m}(x)",
           executor=True if src in ("ll", "ull") else None,
           note="" if src in ("ll", "ull") else
           "the executor's own definition (runtime/cpu/c2t_math.h: C2T_I2F, __uint2float_rz) rounds "
           "through double in the same mode, exact for 32-bit integers")
      for src, dt, ctype in (("int", "int32", "int32_t"), ("uint", "uint32", "uint32_t"),
                             ("ll", "int64", "int64_t"), ("ull", "uint64", "uint64_t"))
      for dst in ("float", "double") for m in ("rz", "rd", "ru")
      if not (src == "int" and dst == "float" and m == "rz") and not (src in ("int", "uint") and dst == "double")],
    *[_ext(f"c2t___f{op}_{m}", _F, "float32 float32", _directed(f"vx {sym} vy", "float", m),
           f"__f{op}_{m}(x, y)", executor=True)
      for op, sym in (("add", "+"), ("sub", "-"), ("mul", "*"), ("div", "/"))
      for m in ("rz", "ru", "rd")],
    *[_ext(f"c2t___fmaf_{m}", _F, "float32 float32 float32", _directed("fmaf(vx, vy, vz)", "float", m, 3),
           f"__fmaf_{m}(x, y, z)", executor=True) for m in ("rz", "ru", "rd")],
    # round-to-nearest sums as calls: the CPU forms of __fadd_rn & co. TVM's simplifier rewrites
    # (a + b) - a to b in any dtype, which float rounding tricks rely on not happening; a call is
    # opaque to it (on CUDA T.ieee_add is, emitting the intrinsic)
    *[_ext(f"c2t_{t}{op}_rn", d, f"{d} {d}", f"x {sym} y", f"__{t}{op}_rn(x, y)",
           note="opaque to TVM's arithmetic simplifier")
      for t, d in (("f", _F), ("d", _D)) for op, sym in (("add", "+"), ("sub", "-"))],
    _ext("c2t___frcp_rz", _F, _F, _directed("1.0f / vx", "float", "rz", 1), "__frcp_rz(x)",
         executor=True),
    _ext("c2t___fsqrt_rz", _F, _F, _directed("sqrtf(vx)", "float", "rz", 1), "__fsqrt_rz(x)",
         executor=True),
    # ---------------------------------------------------------------- integer intrinsics
    _ext("c2t___popc", "int32", "uint32", "__builtin_popcount(x)", "__popc(x)", executor=True),
    _ext("c2t___popcll", "int32", "uint64", "__builtin_popcountll(x)", "__popcll(x)", executor=True),
    _ext("c2t___clz", "int32", "int32", "x == 0 ? 32 : __builtin_clz((uint32_t)x)", "__clz(x)",
         executor=True),
    _ext("c2t___clzll", "int32", "int64", "x == 0 ? 64 : __builtin_clzll((uint64_t)x)", "__clzll(x)",
         executor=True),
    _ext("c2t___ffs", "int32", "int32", "__builtin_ffs(x)", "__ffs(x)", executor=True),
    _ext("c2t___ffsll", "int32", "int64", "__builtin_ffsll(x)", "__ffsll((long long)x)",
         executor=True),
    _ext("c2t___brev", "uint32", "uint32",
         "uint32_t r = 0; for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i); return r;",
         "__brev(x)", executor=True),
    _ext("c2t___brevll", "uint64", "uint64",
         "uint64_t r = 0; for (int i = 0; i < 64; ++i) r |= ((x >> i) & 1ull) << (63 - i); return r;",
         "__brevll((unsigned long long)x)", executor=True),
    _ext("c2t___byte_perm", "uint32", "uint32 uint32 uint32",
         "uint64_t v = ((uint64_t)y << 32) | x; uint32_t r = 0; "
         "for (int i = 0; i < 4; ++i) { uint32_t s = (z >> (4 * i)) & 7u; "
         "r |= (uint32_t)((v >> (8 * s)) & 0xffu) << (8 * i); } return r;",
         "__byte_perm(x, y, z)", executor=True),
    _ext("c2t___funnelshift_l", "uint32", "uint32 uint32 uint32",
         "uint64_t v = ((uint64_t)y << 32) | x; return (uint32_t)((v << (z & 31u)) >> 32);",
         "__funnelshift_l(x, y, z)", executor=True),
    _ext("c2t___funnelshift_r", "uint32", "uint32 uint32 uint32",
         "uint64_t v = ((uint64_t)y << 32) | x; return (uint32_t)(v >> (z & 31u));",
         "__funnelshift_r(x, y, z)", executor=True),
    _ext("c2t___mul24", "int32", "int32 int32",
         "int64_t a = (int32_t)((uint32_t)x << 8) >> 8, b = (int32_t)((uint32_t)y << 8) >> 8; "
         "return (int32_t)(uint32_t)(uint64_t)(a * b);", "__mul24(x, y)", executor=True),
    _ext("c2t___umul24", "uint32", "uint32 uint32",
         "return (uint32_t)((uint64_t)(x & 0xffffffu) * (uint64_t)(y & 0xffffffu));", "__umul24(x, y)",
         executor=True),
    _ext("c2t___mul64hi", "int64", "int64 int64",
         "return (int64_t)(((__int128)x * (__int128)y) >> 64);",
         "__mul64hi((long long)x, (long long)y)", executor=True),
    _ext("c2t___umul64hi", "uint64", "uint64 uint64",
         "return (uint64_t)(((unsigned __int128)x * (unsigned __int128)y) >> 64);",
         "__umul64hi((unsigned long long)x, (unsigned long long)y)", executor=True),
    _ext("c2t___sad", "uint32", "int32 int32 uint32",
         "return (uint32_t)(x > y ? (int64_t)x - y : (int64_t)y - x) + z;", "__sad(x, y, z)",
         executor=True),
    _ext("c2t___usad", "uint32", "uint32 uint32 uint32",
         "return (x > y ? x - y : y - x) + z;", "__usad(x, y, z)", executor=True),
    _ext("c2t___dp4a_i32", "int32", "int32 int32 int32",
         "uint32_t r = (uint32_t)z; for (int i = 0; i < 4; ++i) "
         "r += (uint32_t)((int32_t)(int8_t)(x >> (8 * i)) * (int32_t)(int8_t)(y >> (8 * i))); return (int32_t)r;",
         "__dp4a(x, y, z)",
         note="the executor's own __dp4a overloads (runtime/cpu/c2t_math.h) take char4 too"),
    _ext("c2t___dp4a_u32", "uint32", "uint32 uint32 uint32",
         "uint32_t r = z; for (int i = 0; i < 4; ++i) r += ((x >> (8 * i)) & 0xffu) * ((y >> (8 * i)) & 0xffu); "
         "return r;", "__dp4a(x, y, z)",
         note="the executor's own __dp4a overloads (runtime/cpu/c2t_math.h) take char4 too"),
    *[_ext(f"c2t___v{op}{kind}4", "uint32", "uint32 uint32",
           f"uint32_t r = 0; for (int i = 0; i < 4; ++i) {{ {lane} a = ({lane})(x >> (8 * i)), "
           f"b = ({lane})(y >> (8 * i)); r |= (uint32_t)(uint8_t)(a {'>' if op == 'max' else '<'} b ? a : b) "
           f"<< (8 * i); }} return r;", f"__v{op}{kind}4(x, y)", executor=True)
      for op in ("max", "min") for kind, lane in (("s", "int8_t"), ("u", "uint8_t"))],
    # ---------------------------------------------------------------- half / bfloat16
    _ext("c2t___float2half_rz", "float16", _F,
         "half_float::half_cast<half, std::round_toward_zero>(x)", "half_t(__float2half_rz(x))",
         note=_HALF_NOTE),
    _ext("c2t_hrcp", "float16", "float16", "half(1.0f / (float)x)", "half_t(hrcp(x.to_half()))",
         note=_HALF_NOTE),
    # On target c there is no bfloat16 type: bfloat16 data is held in float32 and these round
    # a float to bfloat16 precision (the CUDA bodies do the same through the CUDA conversions).
    _ext("c2t_bf16_rn", _F, _F,
         "uint32_t u; memcpy(&u, &x, 4); if (x != x) return x; "
         "u += 0x7fffu + ((u >> 16) & 1u); u &= 0xffff0000u; float r; memcpy(&r, &u, 4); return r;",
         "__bfloat162float(__float2bfloat16_rn(x))", note=_BF16_NOTE),
    _ext("c2t_bf16_rz", _F, _F,
         "uint32_t u; memcpy(&u, &x, 4); if (x != x) return x; "
         "u &= 0xffff0000u; float r; memcpy(&r, &u, 4); return r;",
         "__bfloat162float(__float2bfloat16_rz(x))", note=_BF16_NOTE),
]


def _atomic(op: str, dt: str, c_update: str, cuda_call: str, nargs: int = 2,
            suffix: str = "") -> Extern:
    """A read-modify-write helper: plain C on target c (its loops run serially), the CUDA atomic
    on the GPU. ``c_update`` computes the new value from ``old`` and ``y`` (``z``)."""
    short = {"int32": "i32", "uint32": "u32", "int64": "i64", "uint64": "u64",
             "float32": "f32", "float64": "f64"}[dt]
    params = [dt + "*", dt] + ([dt] if nargs == 3 else [])
    c = f"{C_TYPES[dt]} old = *x; *x = {c_update}; return old;"
    return _ext(f"c2t_{op}{suffix}_{short}", dt, params, c, cuda_call, note=_ATOMIC_NOTE)


_ULL = "(unsigned long long*)x"
EXTERNS_LIST += [
    _atomic("atomicAdd", "uint64", "old + y", f"atomicAdd({_ULL}, (unsigned long long)y)"),
    *[_atomic("atomicMax", dt, "old > y ? old : y", call) for dt, call in (
        ("int32", "atomicMax(x, y)"), ("uint32", "atomicMax(x, y)"),
        ("int64", "atomicMax((long long*)x, (long long)y)"),
        ("uint64", f"atomicMax({_ULL}, (unsigned long long)y)"))],
    *[_atomic("atomicMin", dt, "old < y ? old : y", call) for dt, call in (
        ("int32", "atomicMin(x, y)"), ("uint32", "atomicMin(x, y)"),
        ("int64", "atomicMin((long long*)x, (long long)y)"),
        ("uint64", f"atomicMin({_ULL}, (unsigned long long)y)"))],
    *[_atomic("atomicExch", dt, "y", call) for dt, call in (
        ("int32", "atomicExch(x, y)"), ("uint32", "atomicExch(x, y)"),
        ("uint64", f"atomicExch({_ULL}, (unsigned long long)y)"), ("float32", "atomicExch(x, y)"))],
    *[_atomic("atomicCAS", dt, "old == y ? z : old", call, nargs=3) for dt, call in (
        ("int32", "atomicCAS(x, y, z)"), ("uint32", "atomicCAS(x, y, z)"),
        ("uint64", f"atomicCAS({_ULL}, (unsigned long long)y, (unsigned long long)z)"))],
    _atomic("atomicInc", "uint32", "old >= y ? 0u : old + 1u", "atomicInc(x, y)"),
    _atomic("atomicDec", "uint32", "(old == 0u || old > y) ? y : old - 1u", "atomicDec(x, y)"),
    # an int element counted through its address cast to unsigned (``atomicInc((unsigned*)&g[i],
    # n)``): the unsigned update on the element's bits, the old bits returned as an int
    *[_ext(f"c2t_{op}_i32", "int32", ["int32*", "int32"],
           f"uint32_t* u = (uint32_t*)x; uint32_t old = *u, y_ = (uint32_t)y; *u = {update}; "
           "return (int32_t)old;",
           f"(int)atomic{op[6:]}((unsigned int*)x, (unsigned int)y)", note=_ATOMIC_NOTE)
      for op, update in (("atomicInc", "old >= y_ ? 0u : old + 1u"),
                         ("atomicDec", "(old == 0u || old > y_) ? y_ : old - 1u"))],
    *[_atomic(f"atomic{name}", dt, f"old {sym} y", call.format(name=name)) for name, sym in
      (("And", "&"), ("Or", "|"), ("Xor", "^")) for dt, call in (
          ("int32", "atomic{name}(x, y)"), ("uint32", "atomic{name}(x, y)"),
          ("uint64", "atomic{name}(" + _ULL + ", (unsigned long long)y)"))],
    # scoped variants: same read-modify-write on c, the scoped CUDA atomic on the GPU
    _atomic("atomicAdd", "int32", "old + y", "atomicAdd_system(x, y)", suffix="_system"),
    _atomic("atomicAdd", "float32", "old + y", "atomicAdd_system(x, y)", suffix="_system"),
    _atomic("atomicExch", "int32", "y", "atomicExch_block(x, y)", suffix="_block"),
    _atomic("atomicMax", "int32", "old > y ? old : y", "atomicMax_block(x, y)", suffix="_block"),
    _atomic("atomicMin", "int32", "old < y ? old : y", "atomicMin_block(x, y)", suffix="_block"),
    _atomic("atomicCAS", "int32", "old == y ? z : old", "atomicCAS_block(x, y, z)", nargs=3,
            suffix="_block"),
    _atomic("atomicAnd", "int32", "old & y", "atomicAnd_block(x, y)", suffix="_block"),
    _atomic("atomicOr", "int32", "old | y", "atomicOr_block(x, y)", suffix="_block"),
    _atomic("atomicXor", "int32", "old ^ y", "atomicXor_block(x, y)", suffix="_block"),
    *[_atomic(op, "int32", update, f"{op}_system(x, y{', z' if op == 'atomicCAS' else ''})",
              nargs=3 if op == "atomicCAS" else 2, suffix="_system")
      for op, update in (("atomicExch", "y"), ("atomicMax", "old > y ? old : y"), ("atomicMin", "old < y ? old : y"),
                         ("atomicCAS", "old == y ? z : old"), ("atomicAnd", "old & y"), ("atomicOr", "old | y"),
                         ("atomicXor", "old ^ y"))],
]

# memory fences: the CUDA fence on the GPU; nothing on c, whose kernels run one thread at a time
# (the T.Parallel loops are serial), so there is no other thread to order memory for
_FENCE_NOTE = ("a fence: the executor's fibers run one at a time (runtime/cpu), so its own fences "
               "order nothing either")
EXTERNS_LIST += [_ext(f"c2t_{name}", "int32", [], "return 0;", f"{name}(); return 0;",
                      note=_FENCE_NOTE)
                 for name in ("__threadfence", "__threadfence_block", "__threadfence_system")]

#: CUDA fences (catalog section ``sync``, no compat row: they are no expression) -> their helper,
#: called as a statement wherever the fence stands
FENCES = {name: f"c2t_{name}" for name in ("__threadfence", "__threadfence_block", "__threadfence_system")}

# volatile bytes: CUDA's `volatile unsigned char*` access is one byte load or store; the relaxed
# atomics that stand for other volatile global accesses (emit.printer) have no 8-bit store in
# libcu++, which emulates it with a 32-bit compare-and-swap loop (mis's findmins ran 1.9x slower)
_VOLATILE_NOTE = ("a volatile access: the executor compiles the CUDA's own volatile loads and stores; "
                  "fibers run one at a time, so nothing else is needed there")
_VOLATILE_SHORT = {"uint8": "u8", "int8": "i8"}
EXTERNS_LIST += [
    helper
    for dt, short in _VOLATILE_SHORT.items()
    for helper in (
        _ext(f"c2t_volatile_load_{short}", dt, [f"{dt}*"],
             f"return *(volatile {C_TYPES[dt]}*)x;", f"return *(volatile {CUDA_TYPES[dt]}*)x;",
             note=_VOLATILE_NOTE),
        _ext(f"c2t_volatile_store_{short}", "int32", [f"{dt}*", dt],
             f"*(volatile {C_TYPES[dt]}*)x = y; return 0;", f"*(volatile {CUDA_TYPES[dt]}*)x = y; return 0;",
             note=_VOLATILE_NOTE))
]

#: element dtype -> (load helper, store helper) for volatile global memory of one byte
VOLATILE_BYTES = {dt: (f"c2t_volatile_load_{short}", f"c2t_volatile_store_{short}")
                  for dt, short in _VOLATILE_SHORT.items()}

EXTERNS: dict[str, Extern] = {}
for _e in EXTERNS_LIST:
    if _e.name in EXTERNS:
        raise ValueError(f"duplicate extern helper {_e.name}")
    EXTERNS[_e.name] = _e

#: Source placed once at the top of a prelude, per target.
HEADER = {
    "c": "// cuda2tile compat helpers (target c)\n#include <math.h>\n#include <fenv.h>\n"
         "#include <stdint.h>\n#include <string.h>\n",
    # TileLang pastes the prelude *before* its own includes, so bring in half_t/bfloat16_t here.
    "cuda": "// cuda2tile compat helpers (target cuda)\n#include <tl_templates/cuda/common.h>\n",
}


def prelude_source(names, target: str) -> str:
    """Prelude text defining the helpers ``names`` (and their support code) for ``target``."""
    target = normalize_target(target)
    out = [HEADER[target]]
    seen_support: list[str] = []
    for n in names:
        e = EXTERNS[n]
        if target == "c":
            for s in e.needs:
                if s not in seen_support:
                    seen_support.append(s)
                    out.append(SUPPORT[s])
        out.append(e.source(target))
    return "".join(out)


def normalize_target(target) -> str:
    """``"c"``/``"cpu"``/a c ``Target`` -> ``"c"``; ``"cuda"``/dict/``Target`` of kind cuda -> ``"cuda"``."""
    kind = target
    if isinstance(target, dict):
        kind = target.get("kind")
    elif not isinstance(target, str):
        kind = getattr(getattr(target, "kind", None), "name", None)
    if kind in ("c", "cpu", "llvm"):
        return "c"
    if kind in ("cuda", "nvidia", "gpu"):
        return "cuda"
    raise ValueError(f"unknown target {target!r} (expected 'c' or 'cuda')")
