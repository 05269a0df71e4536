"""Model expressions and statements → TileLang Python source.

:class:`ExprPrinter` prints one expression with the fewest parentheses Python needs;
:class:`StmtPrinter` prints statements as indented lines, each tagged with its CUDA source line
(the provenance that the report aligns on). Names are resolved through :class:`Scope`, which
knows where each variable lives (the loop IR's :class:`~migrate.ir.loops.VarPlan`).

Anything that has no TileLang spelling raises :class:`EmitError` with the node's span; the
emitter turns it into a diagnostic and a different form, never into wrong code.
"""
from __future__ import annotations

import itertools
import json
import math
import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from .. import dtypes as _dtypes
from ..analysis.facts.bounds import nonneg
from ..analysis.facts.calls import reads_memory
from ..analysis.facts.vector_lanes import lane_adds, lane_copies, lane_loads, lane_stores, unwidened
from ..compat.catalog import CACHED_LOADS
from ..compat.externs import FENCES, VOLATILE_BYTES
from ..ir import model as m
from ..ir.exprs import assigned_names, const_value, has_continue, is_block_vote, is_native_votes, pure, strip_casts
from ..ir.loops import NoTileLangForm
from ..ir.names import CHAIN_FLAGS, LANE_VAR, LOOP_FLAGS, PACK_VAR, TEST_FLAGS, template_param_name
from ..ir.span import Span
from ..ir.switches import switch_cases


#: Builtins that are int32 TileLang variables (the others print as Python ints): thread and block
#: indices, and the element index of the tile form (``globalIdx``, see analysis.global_index).
_INDEX_BUILTINS = ("threadIdx", "blockIdx", "globalIdx")


class EmitError(NoTileLangForm):
    """The printer meets a construct it cannot print in the form being printed."""


#: dtype -> TileLang dtype expression (a view of migrate.dtypes)
DTYPES = _dtypes.TILELANG
#: the most elements an initialiser list leaves out that get a store each (more: a loop)
ZERO_STORES = 8

_PREC = {"or": 2, "and": 3, "not": 4, "cmp": 5, "|": 6, "^": 7, "&": 8, "<<": 9, ">>": 9,
         "+": 10, "-": 10, "*": 11, "/": 11, "//": 11, "%": 11, "unary": 12, "atom": 16}
_CMP = {"<", "<=", ">", ">=", "==", "!="}
#: the largest float32; a float64 constant beyond it cannot be spelled T.float64(x) (see _float)
_FLOAT32_MAX = 3.4028234663852886e38
_INT = _dtypes.INTEGERS
_UNSIGNED = _dtypes.UNSIGNED
_INT32 = m.Scalar("int32")


def _method_call(e: m.MethodCall) -> EmitError:
    """The refusal of a method call left in the model: the object's type and why it stayed."""
    t = getattr(e.obj, "type", None)
    if isinstance(t, m.Reference):
        t = t.target
    why = "each instance of the template calls its own, which the generic form cannot tell apart" \
        if isinstance(t, m.TemplateType) else "its body is not a device function the tool can inline"
    return EmitError(f"call of the method '{e.method}' on an object of type '{t}': {why}", e.span)


def dtype_of(ctype: m.CType, scope: "Scope | None" = None) -> str:
    """The TileLang dtype expression (Python source) of a model type."""
    if isinstance(ctype, m.Scalar) and ctype.dtype in DTYPES:
        return DTYPES[ctype.dtype]
    if isinstance(ctype, m.TemplateType) and scope is not None and ctype.name in scope.type_params:
        return scope.type_params[ctype.name]
    if isinstance(ctype, m.Reference):
        return dtype_of(ctype.target, scope)
    raise EmitError(f"type '{ctype}' has no TileLang dtype")


def scalar_name(ctype: m.CType) -> str | None:
    return ctype.dtype if isinstance(ctype, m.Scalar) else None


@dataclass
class Scope:
    """How names print inside one kernel (or device function) being emitted."""

    thread_vars: dict[str, str] = field(default_factory=dict)  # 'x' -> 'tx' (portable) or bound names
    global_vars: dict[str, str] = field(default_factory=dict)  # 'x' -> 'gx' (tile form: element index)
    thread_index: str = ""  # how a thread array is indexed in a phase, e.g. "ty, tx"
    # per-thread values kept across barriers that the phase being printed holds in registers:
    # name -> the register (emit.portable.RegionPrinter.phase_body)
    registers: dict[str, str] = field(default_factory=dict)
    block_vars: dict[str, str] = field(default_factory=dict)  # 'x' -> 'bx'
    placements: dict[str, str] = field(default_factory=dict)  # local name -> placement
    type_params: dict[str, str] = field(default_factory=dict)  # template type name -> python name
    value_params: set[str] = field(default_factory=set)
    buffers: set[str] = field(default_factory=set)
    nonneg: set[str] = field(default_factory=set)
    simt: bool = False
    # printing CUDA's threads (portable and simt forms, device functions), not tiles: TileLang
    # guards global memory accesses, so an unsigned index it cannot bound into a __device__ array
    # is printed as an int64 (ExprPrinter._signed_index); threads may exchange values through
    # global memory, so volatile global memory is read and written through relaxed atomics, which
    # the GPU keeps coherent between blocks as CUDA's volatile accesses are (ExprPrinter.e_Index)
    threads: bool = False
    # a device function's macro: TileLang inlines it into the caller's T.Parallel phase, where its
    # parameters may differ between the phase's threads
    params_vary: bool = False
    single: set[str] = field(default_factory=set)  # locals assigned exactly once, at declaration
    # locals read twice or more, or in a loop (ir.exprs.reused_names); None: not known (all are)
    reused: set[str] | None = None
    # tile form, elements that run loops: single-assignment integer divisions are kept as
    # variables (TileLang inlines a let into every use, and recomputed 64-bit divisions inside a
    # convolution's loops ran 8x slower than the CUDA on the H200, 2026-11-29)
    keep_divisions: bool = False
    static_switch: bool = False  # the factory's `static`: kept divisions are values at constant sizes
    device_extra: dict[str, list[str]] = field(default_factory=dict)  # builtins a macro takes
    macro_params: dict[str, tuple[str, ...]] = field(default_factory=dict)  # device function -> its parameters
    # device function -> the positions of its pointer parameters (``float G[][7]`` too), which it
    # indexes flat: an array of several dimensions passed there is passed as its flat view
    pointer_params: dict[str, frozenset[int]] = field(default_factory=dict)
    # device functions are macros, whose statements TileLang runs where the call stands; where C
    # may not evaluate a call (right of && or ||, a branch of ?:), one that computes an expression
    # of its arguments (emit.device.expression_functions) is called through its plain function
    # instead, named here, and recorded in expressions_used (shared by the unit's printers)
    expression_fns: dict[str, str] = field(default_factory=dict)
    expressions_used: set[str] = field(default_factory=set)
    effects: frozenset[str] = frozenset()  # device functions that store, synchronise or do atomics
    loads: frozenset[str] = frozenset()  # device functions that read memory (facts.calls.with_loads)
    # printing such a plain function, which TileLang does not parse: C's &&, ||, ! are the
    # nodes its parser would build for `and`, `or`, `not` (T.And, T.Or, T.Not)
    plain_function: bool = False
    shim_calls: set[str] = field(default_factory=set)  # CUDA names printed as cuda_math.<name>()
    file_tags: dict[str, str] = field(default_factory=dict)  # file -> tag used in provenance

    def tag(self, span: Span) -> str:
        if not self.file_tags or span.file in self.file_tags and self.file_tags[span.file] == "":
            return f"L{span.line}"
        return f"{self.file_tags.get(span.file, span.file.rsplit('/', 1)[-1])}:L{span.line}"


class ExprPrinter:
    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        # id(node) -> (node, value), the node kept so that its id is not reused: a long sum's
        # levels each ask for the dtype and (_rounding_kept) the text of every term below them,
        # quadratic in its length without these (a 100-term Rys quadrature took minutes)
        self._dtypes: dict[int, tuple] = {}
        self._texts: dict[tuple, tuple] = {}
        #: locals printed as values (the statement printer's: TileLang inlines them)
        self.values: dict[str, m.Expr] = {}
        #: per-thread arrays passed to a device function through a copy: name -> the copy
        self.arg_copies: dict[str, str] = {}
        self.bare_index = False  # printing an element stored to or an atomic's address (bare)

    # -- entry points --------------------------------------------------------------------------
    def __call__(self, e: m.Expr) -> str:
        return self.expr(e)[0]

    in_condition = False
    #: where the expression being printed is one C may not evaluate: "right of '&&'", ...
    conditional: tuple[str, ...] = ()
    #: printing a loop condition, which C evaluates at every test, whose device functions all
    #: have plain functions (StmtPrinter.open_loop): a macro's statements would run once, before
    #: the loop, where TileLang parses the call
    every_test = False

    def cond(self, e: m.Expr) -> str:
        """A branch or loop condition: C truthiness made explicit (``x`` → ``x != 0``)."""
        self.in_condition = True
        try:
            return self.expr(_as_bool(e))[0]
        finally:
            self.in_condition = False

    # -- core ----------------------------------------------------------------------------------
    def expr(self, e: m.Expr, typed: bool = True) -> tuple[str, int]:
        method = getattr(self, f"e_{type(e).__name__}", None)
        if method is None:
            if isinstance(e, m.MethodCall):
                raise _method_call(e)
            raise EmitError(f"expression '{type(e).__name__}' has no TileLang form", e.span)
        return method(e, typed) if method.__code__.co_argcount > 2 else method(e)

    def tir_dtype(self, e: m.Expr) -> str | None:
        """The dtype TileLang gives the printed expression (None: a literal that adapts).

        It differs from the C type where CUDA builtins are involved: ``threadIdx.x`` is
        ``unsigned`` in CUDA but an ``int32`` thread variable in TileLang."""
        if isinstance(e, (m.IntLit, m.FloatLit)):
            return None
        if isinstance(e, m.Builtin):
            # thread and block indices are int32 variables; dimensions are Python ints
            return "int32" if e.var in _INDEX_BUILTINS else None
        if isinstance(e, m.Ref) and e.kind == "template":
            return None
        if isinstance(e, m.Cast):
            if self._python_int(e.operand) and scalar_name(e.target) in _INT:
                return None
            return scalar_name(e.target)
        if isinstance(e, m.Binary):
            if e.op in _CMP or e.op in ("&&", "||"):
                return "bool"
            known = self._dtypes.get(id(e))
            if known is not None and known[0] is e:
                return known[1]
            out = self._binary_dtype(e)
            self._dtypes[id(e)] = (e, out)
            return out
        if isinstance(e, m.Unary):
            if e.op == "!":
                return "bool"
            return self.tir_dtype(e.operand)
        if isinstance(e, m.Ternary):
            return self.tir_dtype(e.then) or self.tir_dtype(e.other)
        return scalar_name(e.type)

    def _binary_dtype(self, e: m.Binary) -> str | None:
        lt, rt = self.tir_dtype(e.lhs), self.tir_dtype(e.rhs)
        if e.op in ("<<", ">>"):
            return lt
        if lt is None or rt is None:
            out = lt or rt
        else:
            out = lt if lt == rt else scalar_name(e.type)
        if e.op == "-" and scalar_name(e.type) in _UNSIGNED and out not in _UNSIGNED:
            return scalar_name(e.type)
        return out

    def _python_int(self, e: m.Expr) -> bool:
        """Printed as a Python int (a literal, a block/grid dimension, warpSize, a template value),
        which takes the dtype of whatever TileLang expression it meets."""
        if isinstance(e, m.IntLit):
            return True
        if isinstance(e, m.Builtin):
            return e.var not in _INDEX_BUILTINS
        if isinstance(e, m.Ref):
            return e.kind == "template"
        if isinstance(e, m.Cast):
            return self._python_int(e.operand) and scalar_name(e.target) in _INT
        if isinstance(e, m.Binary) and e.op in ("+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^"):
            return self._python_int(e.lhs) and self._python_int(e.rhs)
        return False

    def coerce(self, e: m.Expr, dtype: str | None, min_prec: int = 0) -> str:
        """``e`` printed so that its TileLang dtype is ``dtype`` (a cast where they differ)."""
        e = _strip_roundtrip(e, dtype, self)
        have = self.tir_dtype(e)
        if have is None and _dependent(e) and dtype in DTYPES:
            # const int c = (x[i] >> s) & 1; on a template's T* x: clang leaves the value's type
            # open, so no conversion was written; C converts it to the declared type
            return f"T.Cast({DTYPES[dtype]}, {self.expr(e)[0]})"
        if dtype is None or have is None or have == dtype or dtype not in DTYPES:
            return self.sub(e, min_prec) if min_prec else self.expr(e)[0]
        return f"T.Cast({DTYPES[dtype]}, {self.expr(e)[0]})"

    def named(self, e: m.Expr, text: str, name: str | None = None) -> str:
        """``text``, the printed ``e``, where TileLang binds it to ``name`` (a local's single
        assignment, a macro's parameter). Its front end gives a bare variable that name, a
        kernel's scalar parameter included: ``m = NI`` or ``blend(k, mu, NI)`` would rename the
        parameter (two passed to one macro both took its parameter's name, and the kernel then
        had two parameters of one name). A kernel parameter bound to another name than its own
        goes as a cast to its own type, a new value the binding may name."""
        r = strip_casts(e)
        if self.scope.params_vary or not (isinstance(r, m.Ref) and r.kind == "param" and isinstance(r.type, m.Scalar)) \
                or not text.isidentifier() or r.name == name:
            return text
        dtype = self.tir_dtype(e) or scalar_name(r.type)
        return f"T.Cast({DTYPES[dtype]}, {text})" if dtype in DTYPES else text

    def sub(self, e: m.Expr, min_prec: int, typed: bool = True) -> str:
        text, prec = self.expr(e, typed)
        return f"({text})" if prec < min_prec else text

    def e_IntLit(self, e: m.IntLit, typed: bool = True):
        dtype = scalar_name(e.type) or "int32"
        if dtype in _WIDTHS and not _fits(e.value, dtype):
            # a constant converted to a type it does not fit (``(unsigned)MSB`` on an int MSB of
            # 1 << 31): C's value modulo 2**bits; TVM refuses T.uint32(-2147483648)
            e = m.IntLit(_wrapped(e.value, dtype), e.text, e.type, e.span)
        # an untyped Python int takes the dtype of the expression it meets, unless it does not fit
        # int32: TVM then makes it int64 and the operation with it no longer wraps at 32 bits
        # (`u * 2654435761u` on a uint32 u); such a literal keeps its own C type
        if not typed and not -2 ** 31 <= e.value < 2 ** 31 and dtype in DTYPES:
            typed = True
        if dtype in ("int32", "bool") or not typed:
            return (str(e.value), _PREC["atom"]) if e.value >= 0 else (str(e.value), _PREC["unary"])
        if dtype in DTYPES:
            return f"{DTYPES[dtype]}({e.value})", _PREC["atom"]
        return str(e.value), _PREC["atom"]

    def e_FloatLit(self, e: m.FloatLit, typed: bool = True):
        return self._float(e.value, scalar_name(e.type) or "float64", typed)

    def _float(self, value: float, dtype: str, typed: bool):
        text = repr(float(value))
        if text in ("inf", "-inf", "nan"):
            return f"T.{'infinity' if 'inf' in text else 'nan'}({DTYPES.get(dtype, 'T.float32')})", _PREC["atom"]
        if dtype == "float64" and abs(value) > _FLOAT32_MAX:
            # T.float64(1e300) goes through a float32 constant, which it overflows (DBL_MAX)
            return f"T.FloatImm(T.float64, {text})", _PREC["atom"]
        if typed and dtype in DTYPES:
            return f"{DTYPES[dtype]}({text})", _PREC["atom"]
        return text, (_PREC["atom"] if value >= 0 else _PREC["unary"])

    def e_BoolLit(self, e: m.BoolLit):
        return ("True" if e.value else "False"), _PREC["atom"]

    def e_Ref(self, e: m.Ref):
        s = self.scope
        if e.kind in ("local", "shared") and s.placements.get(e.name) == "shared" \
                and not isinstance(e.type, (m.Array, m.Pointer)):
            return f"{e.name}[0]", _PREC["atom"]  # a __shared__ scalar: a one-element buffer
        if e.kind == "local":
            placement = s.placements.get(e.name, "phase")
            if e.name in self.arg_copies:  # a thread's row passed to a device function (its copy)
                return self.arg_copies[e.name], _PREC["atom"]
            if placement == "thread_array":
                if isinstance(e.type, m.Array):
                    raise EmitError(f"per-thread array '{e.name}' kept across barriers used whole "
                                    "(only a device function called as a statement takes it)", e.span)
                if not s.thread_index:
                    raise EmitError(f"per-thread value '{e.name}' used outside a phase", e.span)
                if e.name in s.registers:
                    return s.registers[e.name], _PREC["atom"]
                return f"{e.name}[{s.thread_index}]", _PREC["atom"]
            return e.name, _PREC["atom"]
        if e.kind == "template":  # the factory's parameter (``bx_`` for a value parameter ``bx``)
            return template_param_name(e.name), _PREC["atom"]
        if e.kind in ("param", "shared", "constant", "global"):
            return e.name, _PREC["atom"]
        if e.kind == "reduce_result":  # the one-element result buffer of a lifted reduction
            return f"{e.name}[0]", _PREC["atom"]
        raise EmitError(f"reference to {e.kind} '{e.name}' has no TileLang form", e.span)

    def e_Builtin(self, e: m.Builtin):
        s = self.scope
        if e.var == "warpSize":
            return "32", _PREC["atom"]
        if e.var == "threadIdx":
            name = s.thread_vars.get(e.dim)
            if name is None:
                raise EmitError("threadIdx used outside a phase", e.span)
            return name, _PREC["atom"]
        if e.var == "blockIdx":
            return s.block_vars[e.dim], _PREC["atom"]
        if e.var == "globalIdx":
            return s.global_vars[e.dim], _PREC["atom"]
        if e.var == "blockDim":
            return f"block_{e.dim}", _PREC["atom"]
        if e.var == "gridDim":
            return f"grid_{e.dim}", _PREC["atom"]
        raise EmitError(f"builtin '{e.var}'", e.span)

    def e_Unary(self, e: m.Unary):
        if e.op == "-":
            return self.negated(e.operand, self.tir_dtype(e.operand))
        if e.op == "+":
            return self.expr(e.operand)
        if e.op == "~":
            return "~" + self.sub(e.operand, _PREC["unary"]), _PREC["unary"]
        if e.op == "!":
            if _buffer_param(e.operand):  # !bias: the pointer is null
                return self._null_test(e.operand), _PREC["atom"]
            if self.scope.plain_function:
                return f"T.Not({self.expr(_as_bool(e.operand))[0]})", _PREC["atom"]
            return "not " + self.sub(_as_bool(e.operand), _PREC["not"]), _PREC["not"]
        if e.op == "*":  # *p on a buffer parameter: element 0
            if isinstance(e.operand, m.Ref) and e.operand.name in self.scope.buffers:
                return f"{e.operand.name}[0]", _PREC["atom"]
        raise EmitError(f"operator '{e.op}' used as a value has no TileLang form", e.span)

    def e_Binary(self, e: m.Binary):
        op = e.op
        if op in ("==", "!="):  # mask == nullptr on a buffer parameter: its data handle tested
            buf = e.lhs if _is_null(e.rhs) else e.rhs if _is_null(e.lhs) else None
            if _buffer_param(buf):
                test = self._null_test(buf)
                return (test, _PREC["atom"]) if op == "==" else (f"not {test}", _PREC["not"])
        if op in _CMP and all(isinstance(x.type, (m.Pointer, m.Array)) and not _is_null(x) for x in (e.lhs, e.rhs)):
            # p < end on two pointers: TileLang compares buffers' data handles, not the elements
            # they point at (a view folded into an index has no handle of its own)
            raise EmitError("two pointers compared have no TileLang form", e.span)
        lhs_lit = isinstance(e.lhs, (m.IntLit, m.FloatLit)) or _is_lit_cast(e.lhs)
        rhs_lit = isinstance(e.rhs, (m.IntLit, m.FloatLit)) or _is_lit_cast(e.rhs)
        # a literal beside a typed expression takes that expression's dtype in TVM
        lt, rt = not (lhs_lit and not rhs_lit), not (rhs_lit and not lhs_lit)
        if op in ("&&", "||"):
            if self.scope.plain_function:  # the node TileLang's parser builds for `and`/`or`
                fn = "T.And" if op == "&&" else "T.Or"
                lhs = self.expr(_as_bool(e.lhs))[0]
                with self._sometimes(f"right of '{op}'"):
                    return f"{fn}({lhs}, {self.expr(_as_bool(e.rhs))[0]})", _PREC["atom"]
            word = "and" if op == "&&" else "or"
            p = _PREC[word]
            lhs = self.sub(_as_bool(e.lhs), p)
            with self._sometimes(f"right of '{op}'"):
                return (f"{lhs} {word} {self.sub(_as_bool(e.rhs), p + 1)}", p)
        if op in _CMP and _int_literal(strip_casts(e.rhs)) == 0:
            # (long long)ran < 0 on an unsigned ran tests its top bit. TVM takes the cast for a
            # change of value, which keeps an unsigned value non-negative, and folded the test to
            # false; the top bit itself it keeps (T.reinterpret, the other way to say it, met a C
            # code generator that reused the first reinterpretation of ran after ran changed)
            sign_test = self._sign_test(e.lhs, op)
            if sign_test is not None:
                return sign_test
        if op in ("+", "-") and scalar_name(e.type) in ("float32", "float64"):
            kept = self._rounding_kept(e)
            if kept is not None:
                return kept
        unsigned = scalar_name(e.lhs.type)
        if op in _CMP and unsigned in ("uint64", "uint32", "uint16", "uint8") and \
                any(self.tir_dtype(x) in _UNSIGNED for x in (e.lhs, e.rhs)) and \
                (unsigned != "uint64" or self.in_condition):
            # TVM's bound solver fails on unsigned branch conditions ("cannot make uint from
            # negative value"). An unsigned 32-bit comparison is exact in int64; a 64-bit one
            # is exact as a signed comparison once the sign bit is flipped.
            def widen(x):
                if unsigned != "uint64" and (isinstance(x, (m.IntLit, m.FloatLit)) or _is_lit_cast(x)):
                    return self.sub(x, _PREC["cmp"] + 1, typed=False)
                value = self.coerce(x, unsigned)
                if unsigned == "uint64":
                    inner = strip_casts(x)
                    if isinstance(inner, m.Binary) and inner.op == "|" and not _one_call(value):
                        value = f"({value})"  # (lo | hi << 32) ^ sign: | binds more loosely than ^
                    value = f"{value} ^ T.uint64(0x8000000000000000)"
                if unsigned == "uint32" and _wraps(x):
                    # `n - 1` is printed `n + (2**32 - 1)`; TVM moves the cast inside the sum, where
                    # it no longer wraps (`i < n - 1` held for every i): the mask wraps it again
                    return f"(T.Cast(T.int64, {value}) & T.int64(4294967295))"
                return f"T.Cast(T.int64, {value})"
            return f"{widen(e.lhs)} {op} {widen(e.rhs)}", _PREC["cmp"]
        k = _int_literal(e.rhs)
        wrap = scalar_name(e.type)
        if op == "-" and wrap in ("uint32", "uint64") and k is not None and k > 0 and \
                (self.tir_dtype(e.lhs) is not None or _cast_constant(e.lhs)):
            # `x - k` on an unsigned x is printed `x + (2**N - k)`, the same value modulo 2**N:
            # TileLang's vectoriser evaluates indices at thread 0, and TVM refuses to fold an
            # unsigned `0 - k` ("Minuend's value is 0U ... will cause a negative uint"); a
            # launch-constant lhs (`blockDim.x + 31 - 1`) is a Python int and stays as written; a
            # cast constant (ans's `mask = (UNIT_TYPE)(0) - 1`) is a TIR constant, folded so too
            p = _PREC["+"]
            bits = 32 if wrap == "uint32" else 64
            return f"{self._typed_operand(e.lhs, wrap, p, lt)} + {DTYPES[wrap]}(2**{bits} - {k})", p
        ld, rd = self.tir_dtype(e.lhs), self.tir_dtype(e.rhs)
        if ld is not None and rd is not None and ld != rd or (
                op == "-" and scalar_name(e.type) in _UNSIGNED and (ld or rd) not in _UNSIGNED | {None}):
            # operands TileLang types differently (a builtin beside an unsigned value, or an
            # unsigned subtraction that must wrap): cast to the C operand type
            want = scalar_name(e.lhs.type) if op in _CMP else scalar_name(e.type)
            if op in ("<<", ">>"):
                want_l, want_r = scalar_name(e.type), ld
            else:
                want_l = want_r = want
            if want_l in DTYPES:
                p = _PREC["cmp"] if op in _CMP else _PREC.get(op, _PREC["atom"])
                lhs = self._typed_operand(e.lhs, want_l, p, lt)
                rhs = self._typed_operand(e.rhs, want_r, p + 1, rt)
                if op in ("/", "%") and self._is_int(e) and not (self._nonneg(e.lhs) and self._nonneg(e.rhs)):
                    fn = "T.truncdiv" if op == "/" else "T.truncmod"
                    return f"{fn}({lhs}, {rhs})", _PREC["atom"]
                pyop = {"/": "//"}.get(op, op) if self._is_int(e) else op
                return f"{lhs} {pyop} {rhs}", p
        if op in _CMP:
            p = _PREC["cmp"]
            return f"{self.sub(e.lhs, p + 1, lt)} {op} {self.sub(e.rhs, p + 1, rt)}", p
        if op in ("/", "%") and self._is_int(e):
            if self._nonneg(e.lhs) and self._nonneg(e.rhs):
                pyop = "//" if op == "/" else "%"
                p = _PREC[pyop]
                return f"{self.sub(e.lhs, p, lt)} {pyop} {self.sub(e.rhs, p + 1, rt)}", p
            fn = "T.truncdiv" if op == "/" else "T.truncmod"
            return f"{fn}({self.expr(e.lhs, lt)[0]}, {self.expr(e.rhs, rt)[0]})", _PREC["atom"]
        if op == ",":
            raise EmitError("the comma operator has no TileLang form", e.span)
        if op in ("/", "%") and not isinstance(e.type, m.Scalar):
            # on a template's type (index_type n): C's division truncates integers and divides
            # floats; which one is known once the instance's dtype is (cuda_math.c_div)
            fn = "cuda_math.c_div" if op == "/" else "cuda_math.c_mod"
            return f"{fn}({self.expr(e.lhs, lt)[0]}, {self.expr(e.rhs, rt)[0]})", _PREC["atom"]
        p = _PREC[op]
        return f"{self.sub(e.lhs, p, lt)} {op} {self.sub(e.rhs, p + 1, rt)}", p

    def _rounding_kept(self, e: m.Binary):
        """A float sum or difference one of whose operands is itself a sum or difference sharing a
        term with the other operand (``(f + x) - f``, ``x - (x - y)``): TVM's simplifier rewrites
        such an expression algebraically in every dtype (``(f + x) - f`` to ``x``), which drops the
        rounding a CUDA program computes on purpose (rounding to a grid, compensated sums). The
        inner operation is printed as a call of its round-to-nearest intrinsic (``__fadd_rn``,
        ``__fsub_rn``; on the CPU target a helper), which the simplifier cannot see through and
        which rounds as C's operator does. None where no operand cancels."""
        def terms(x: m.Expr, out: list) -> list:
            if isinstance(x, m.Binary) and x.op in ("+", "-") and scalar_name(x.type) == dtype:
                terms(x.lhs, out)
                terms(x.rhs, out)
            else:
                key = (id(x), self.conditional, self.in_condition, self.every_test)
                known = self._texts.get(key)
                if known is None or known[0] is not x:
                    known = self._texts[key] = (x, self.expr(x)[0])
                out.append(known[1])
            return out

        def inner(x: m.Expr) -> bool:
            return isinstance(x, m.Binary) and x.op in ("+", "-") and scalar_name(x.type) == dtype

        dtype = scalar_name(e.type)
        lhs_terms, rhs_terms = terms(e.lhs, []), terms(e.rhs, [])
        if not set(lhs_terms) & set(rhs_terms) or not (inner(e.lhs) or inner(e.rhs)):
            return None
        p = _PREC[e.op]

        def kept(x: m.Expr, prec: int) -> str:
            if not inner(x):
                return self.sub(x, prec)
            name = {("+", "float32"): "__fadd_rn", ("-", "float32"): "__fsub_rn",
                    ("+", "float64"): "__dadd_rn", ("-", "float64"): "__dsub_rn"}[(x.op, dtype)]
            text = render_math(name, [self.expr(x.lhs)[0], self.expr(x.rhs)[0]], [dtype, dtype], self.scope)
            if text is None:
                raise EmitError(f"no round-to-nearest form for a {dtype} '{x.op}'", x.span)
            return text

        return f"{kept(e.lhs, p)} {e.op} {kept(e.rhs, p + 1)}", p

    def _typed_operand(self, e: m.Expr, dtype: str | None, prec: int, typed: bool) -> str:
        have = self.tir_dtype(e)
        if have is None or have == dtype or dtype not in DTYPES:
            return self.sub(e, prec, typed)
        return f"T.Cast({DTYPES[dtype]}, {self.expr(e)[0]})"

    def _is_int(self, e: m.Expr) -> bool:
        return scalar_name(e.type) in _INT

    def _nonneg(self, e: m.Expr) -> bool:
        return nonneg(e, self.scope.nonneg)

    @contextmanager
    def _sometimes(self, where: str):
        """Print inside a part of an expression that C evaluates only sometimes (``where``)."""
        self.conditional += (where,)
        try:
            yield
        finally:
            self.conditional = self.conditional[:-1]

    def e_Ternary(self, e: m.Ternary):
        cond = self.cond(e.cond)
        if self.tir_dtype(_as_bool(e.cond)) is None:  # a Python value (a template's `bool W`): TVM
            cond = f"T.bool({cond})"                  # takes it as an integer, not a condition
        with self._sometimes("in a branch of '?:'"):
            return f"T.if_then_else({cond}, {self.expr(e.then)[0]}, {self.expr(e.other)[0]})", _PREC["atom"]

    def dispatch_call(self, e: m.Call) -> str:
        """A call of an overloaded device function that each instance of the template resolves by
        its types: the overload is looked up when TileLang traces the kernel, by the dtypes the
        factory was given (``{"uint32": hash_2, "uint64": hash}[str(KeyT)](key)``)."""
        params, table = e.dispatch
        if any(tuple(k) == m.PRIMARY_FOR_NUMBERS for k, _ in table):
            # overloads on structs are not in the table: a traced dtype may not tell them apart
            raise EmitError(f"call to the overloaded device function '{e.callee}' is not resolved for this "
                            "kernel's types (overloads on structs beside its primary template)", e.span)
        primary = [model for k, model in table if tuple(k) == m.PRIMARY_TEMPLATE]
        table = [(k, model) for k, model in table if tuple(k) != m.PRIMARY_TEMPLATE]
        models = [model for _, model in table] + primary
        extras = {tuple(self.scope.device_extra.get(x, [])) for x in models}
        if len(extras) > 1:
            raise EmitError(f"overloads of '{e.callee}' take different builtins", e.span)
        try:  # a type parameter by its dtype's name; a value parameter by its value's digits
            key = [self.scope.type_params[p] if p in self.scope.type_params else
                   f"int({p})" if p in self.scope.value_params else self.scope.type_params[p] for p in params]
        except KeyError:
            raise EmitError(f"call to the overloaded device function '{e.callee}' on a type this "
                            "kernel does not take", e.span) from None
        chosen = _by_instance([(k, self.device_call_name(e, x)) for k, x in table], key,
                              self.device_call_name(e, primary[0]) if primary else None)
        args = [self.named(a, self.expr(a)[0]) for a in e.args]
        args += [f"{x}={self.builtin_name(x)}" for x in next(iter(extras))]
        return f"{chosen}({', '.join(args)})"

    def device_call_name(self, e: m.Call, name: str) -> str:
        """The name a device function is called by: its macro, or its plain function where C may
        not evaluate the call (a macro there would run its statements every time, and TileLang
        refuses one inside ``and``/``or``)."""
        s = self.scope
        if not (self.conditional or s.plain_function or self.every_test):
            return name
        if name in s.expression_fns:
            s.expressions_used.add(name)
            return s.expression_fns[name]
        if self.every_test and not (self.conditional or s.plain_function):
            raise EmitError(f"device function '{name}' called in a loop condition printed as an expression: "
                            "it is not one expression of its arguments", e.span)
        where = self.conditional[-1] if self.conditional else "inside an expression"
        if s.plain_function or any(not w.endswith("'?:'") for w in self.conditional):
            raise EmitError(f"device function '{name}' called {where}, which C evaluates only sometimes: "
                            "it is not one expression of its arguments, and TileLang runs a macro's "
                            "statements whatever the condition (it refuses one inside and/or)", e.span)
        if name in s.effects:
            raise EmitError(f"device function '{name}' called {where}, which C evaluates only sometimes: "
                            "its stores would run whatever the condition", e.span)
        if name in s.loads or any(self._reads(a) for a in e.args):
            # TileLang runs the macro's statements, and binds its arguments, before the ?: chooses:
            # a read C guards with the condition (i < n ? load(x, i) : 0) would run past the end
            what = "it reads memory" if name in s.loads else "its arguments read memory"
            raise EmitError(f"device function '{name}' called {where}, which C evaluates only sometimes: "
                            f"{what}, which would happen whatever the condition (a read C guards "
                            "could fall outside the buffer)", e.span)
        return name

    def _reads(self, e: m.Expr) -> bool:
        """Whether evaluating ``e`` reads memory, itself or through a device function."""
        return reads_memory(e) or any(isinstance(n, m.Call) and n.kind == "device" and
                                      n.callee.lstrip(":").removeprefix("std::") in self.scope.loads
                                      for n in m.walk(e))

    def _sign_test(self, e: m.Expr, op: str) -> tuple[str, int] | None:
        """``(long long)x op 0`` for an unsigned ``x`` of the same width, as a test of ``x``'s top
        bit (``x >> 63 != 0`` for ``< 0``); None for any other operand."""
        while isinstance(e, m.Cast) and isinstance(e.operand, m.Cast) and e.operand.target == e.target:
            e = e.operand  # (long long)x, read implicitly as long long again
        if not (isinstance(e, m.Cast) and isinstance(e.target, m.Scalar) and
                (self.tir_dtype(e.operand), e.target.dtype) in (("uint32", "int32"), ("uint64", "int64"))):
            return None
        x = self.sub(e.operand, _PREC["<<"] + 1)
        top = f"{x} >> {DTYPES[self.tir_dtype(e.operand)]}({31 if e.target.dtype == 'int32' else 63})"
        zero = self.sub(e.operand, _PREC["cmp"] + 1)
        if op in ("==", "!="):
            return f"{zero} {op} 0", _PREC["cmp"]
        tests = {"<": f"{top} != 0", ">=": f"{top} == 0",
                 ">": f"{top} == 0 and {zero} != 0", "<=": f"{top} != 0 or {zero} == 0"}
        return tests[op], (_PREC["cmp"] if op in ("<", ">=") else _PREC["and" if op == ">" else "or"])

    def negated(self, x: m.Expr, dtype: str | None):
        """``-x`` in ``dtype``. C negates an unsigned value modulo 2**bits (sobol's ``mask = -(g &
        1)``, ``atomicSub(&u, 1)``): a constant is printed wrapped, another value subtracted from
        zero; TVM's negation multiplies by a constant -1 of the unsigned type, which it refuses."""
        if dtype in _UNSIGNED:
            amount = _int_literal(x)
            if amount is not None:
                return self.e_IntLit(m.IntLit(_wrapped(-amount, dtype), "", m.Scalar(dtype), x.span))
            p = _PREC["+"]
            return f"{DTYPES[dtype]}(0) - {self.sub(x, p + 1)}", p
        return "-" + self.sub(x, _PREC["unary"]), _PREC["unary"]

    def _null_test(self, buf: m.Expr) -> str:
        """Whether a buffer parameter is a null pointer (an optional buffer the launch leaves out):
        its data handle tested. TVM takes a buffer's handle for non-null, so ``mask == 0`` folds
        to False; ``T.isnullptr`` asks at run time."""
        return f"T.isnullptr({self.expr(strip_casts(buf))[0]}.data)"

    def e_Cast(self, e: m.Cast, typed: bool = True):
        target = e.target
        inner = e.operand
        if isinstance(target, m.Scalar) and target.dtype == "bool":
            if scalar_name(inner.type) == "bool":
                return self.expr(inner)
            if _buffer_param(inner):  # if (bias): the pointer is not null
                return f"not {self._null_test(inner)}", _PREC["not"]
            p = _PREC["cmp"]
            zero = "0.0" if scalar_name(inner.type) and "float" in scalar_name(inner.type) else "0"
            return f"{self.sub(inner, p + 1)} != {zero}", p
        if isinstance(target, m.Scalar) and target.dtype in _WIDTHS and not isinstance(inner, m.IntLit):
            value = _int_literal(inner)  # (unsigned)~63: the constant converted (TVM folds the
            if value is not None and not _fits(value, target.dtype):  # cast and refuses -64u)
                return self.e_IntLit(m.IntLit(value, "", target, e.span), typed)
        if isinstance(target, m.Scalar) and target.dtype in _INT and target.dtype != "bool" \
                and self._python_int(inner) and not isinstance(inner, m.IntLit):
            return self.expr(inner, typed)
        if isinstance(inner, m.IntLit) and isinstance(target, m.Scalar):
            if "float" in target.dtype:
                return self._float(float(inner.value), target.dtype, typed)
            return self.e_IntLit(m.IntLit(inner.value, inner.text, target, inner.span), typed)
        if isinstance(inner, m.FloatLit) and isinstance(target, m.Scalar) and "float" in target.dtype:
            return self._float(inner.value, target.dtype, typed)
        if isinstance(target, m.Scalar) and isinstance(inner.type, m.Pointer):  # (unsigned long)&buf[i]
            raise EmitError(f"pointer cast to '{target}' (an address used as an integer) has no TileLang form",
                            e.span)
        if isinstance(target, m.Pointer) or isinstance(inner.type, m.Pointer):
            raise EmitError(f"pointer cast to '{target}' has no TileLang form", e.span)
        if target == inner.type and self.tir_dtype(inner) in (None, scalar_name(target)):
            return self.expr(inner, typed)
        if isinstance(target, m.Scalar) and self.tir_dtype(inner) == target.dtype:
            return self.expr(inner, typed)
        if isinstance(target, m.Scalar) and isinstance(inner, m.Binary) and inner.op == "-" and \
                (scalar_name(inner.type), target.dtype) in (("int32", "uint32"), ("int64", "uint64")) and \
                (_int_literal(inner.rhs) or 0) > 0 and self.tir_dtype(inner.lhs) is not None:
            # `(unsigned)(i - k)` on a signed i: `(unsigned)i + (2**N - k)`, the same bits; TVM
            # refuses to fold the cast of a negative value ("cannot make uint from negative value")
            # where it evaluates the index at i = 0 under a guard that keeps CUDA from reading it
            p = _PREC["+"]
            bits = 32 if target.dtype == "uint32" else 64
            return (f"{self._typed_operand(inner.lhs, target.dtype, p, True)} + "
                    f"{DTYPES[target.dtype]}(2**{bits} - {_int_literal(inner.rhs)})"), p
        if isinstance(target, m.Scalar) and isinstance(inner, m.Binary) and inner.op == "-" and \
                (scalar_name(inner.type), target.dtype) in (("uint32", "int32"), ("uint64", "int64")) and \
                (_int_literal(inner.rhs) or 0) > 0 and self.tir_dtype(inner.lhs) is not None:
            # `(int)(x - k)` on an unsigned x has the bits of `(int)x - k`, printed so: TVM folds the
            # cast into the unsigned form's constant (x + (2**32 - k)), which no int32 holds
            p = _PREC["+"]
            return f"{self._typed_operand(inner.lhs, target.dtype, p, True)} - {_int_literal(inner.rhs)}", p
        if isinstance(target, m.Scalar) and isinstance(inner, m.Binary) and inner.op == "-" and \
                (scalar_name(inner.type), target.dtype) in (("uint32", "int32"), ("uint64", "int64")) and \
                _int_literal(inner.rhs) is None and \
                None not in (self.tir_dtype(inner.lhs), self.tir_dtype(inner.rhs)):
            # `(int)(x - y)` on unsigned operands has the bits of `(int)x - (int)y`, printed so (the
            # operands' casts from int dropped): TVM refused the unsigned form ("0U - 32U", bh's
            # `diff = threadIdx.x - sbase`) where it folded both operands to constants
            p = _PREC["+"]
            lhs, rhs = (_signed_source(x, target.dtype, self.tir_dtype) for x in (inner.lhs, inner.rhs))
            return (f"{self._typed_operand(lhs, target.dtype, p, True)} - "
                    f"{self._typed_operand(rhs, target.dtype, p + 1, True)}"), p
        if isinstance(target, m.Scalar) and isinstance(inner, m.Binary) and inner.op in ("+", "*") and \
                (scalar_name(inner.type), target.dtype) in (("uint32", "int32"), ("uint64", "int64")) and \
                _scaled_difference(inner):
            # `(int)((blockIdx.x - 1) * blockDim.x + threadIdx.x)`: the unsigned form's constant
            # (2**32 - 1) times a launch constant folds to one no int32 holds when TVM moves the
            # cast inside (convolution1D's halo index); the same sums and products in the signed
            # type have the same bits
            return self._signed_tree(inner, target.dtype, 0)
        return f"T.Cast({dtype_of(target, self.scope)}, {self.expr(inner)[0]})", _PREC["atom"]

    def _signed_tree(self, e: m.Expr, dtype: str, prec: int) -> tuple[str, int]:
        """An unsigned tree of ``+``, ``-`` and ``*`` printed in the signed ``dtype`` of its width:
        each leaf read as ``dtype`` (a small literal as itself), the same bits modulo 2**N."""
        unsigned = "uint32" if dtype == "int32" else "uint64"
        if isinstance(e, m.Binary) and e.op in ("+", "-", "*") and scalar_name(e.type) == unsigned:
            p = _PREC[e.op]
            lhs = self._signed_tree(e.lhs, dtype, p)[0]
            rhs = self._signed_tree(e.rhs, dtype, p + 1)[0]
            text = f"{lhs} {e.op} {rhs}"
            return (f"({text})", _PREC["atom"]) if p < prec else (text, p)
        k = _int_literal(e)
        if k is not None and 0 <= k < 2 ** 31:
            return str(k), _PREC["atom"]
        return self._typed_operand(_signed_source(e, dtype, self.tir_dtype), dtype, prec, True), prec

    def e_Index(self, e: m.Index):
        base, indices = e, []
        while isinstance(base, m.Index):
            indices.append(base.index)
            base = base.base
        indices.reverse()
        if not isinstance(base, m.Ref):
            raise EmitError("indexing something that is not a named array", e.span)
        # (a parameter's buffer has a symbolic extent, which the solver negates without fault)
        guarded = self.scope.threads and base.kind in ("constant", "global")
        texts = [self._signed_index(i) if guarded else self.expr(i)[0] for i in indices]
        if len(indices) > 1:
            texts = [self._signed_difference(i) or t for i, t in zip(indices, texts)]
        if base.kind == "local" and self.scope.placements.get(base.name) == "thread_array":
            texts = [self.scope.thread_index] + texts
        elif base.kind == "param" and base.name not in self.scope.buffers:
            raise EmitError(f"'{base.name}' is indexed but is not a buffer", e.span)
        text = f"{base.name}[{', '.join(texts)}]"
        if not self.bare_index and self.volatile_global(e):
            # a plain load may be served from the SM's L1, stale where another block wrote it
            # (bh's tree summation spins on volatile cells that other blocks fill)
            if self.volatile_byte(e):
                return f"cuda_math.volatile_load({text})", _PREC["atom"]
            return f'T.atomic_load({text}, "relaxed")', _PREC["atom"]
        return text, _PREC["atom"]

    def volatile_global(self, e: m.Expr) -> bool:
        """Whether ``e`` is an element of volatile global memory that this kernel's threads may
        exchange values through (``scope.threads``)."""
        if not self.scope.threads or not isinstance(e, m.Index):
            return False
        base = e
        while isinstance(base, m.Index):
            base = base.base
        return isinstance(base, m.Ref) and base.kind in ("param", "global") \
            and getattr(base.type, "volatile", False)

    def volatile_byte(self, e: m.Index) -> bool:
        """Whether ``e``, a volatile global element, is one byte: accessed through
        ``cuda_math.volatile_load``/``volatile_store`` (the CUDA's byte access on GPUs, where a
        relaxed atomic byte store is a 32-bit compare-and-swap loop), whose helpers join the
        kernel's prelude."""
        helpers = VOLATILE_BYTES.get(getattr(getattr(e, "type", None), "dtype", None))
        if helpers is None:
            return False
        self.scope.shim_calls.update(helpers)
        return True

    def bare(self, e: m.Expr) -> str:
        """``e`` printed as an element to store to or take the address of (no volatile load)."""
        self.bare_index = True
        try:
            return self.expr(e)[0]
        finally:
            self.bare_index = False

    def _signed_difference(self, index: m.Expr) -> str | None:
        """``63 - threadIdx.x`` (unsigned in C) indexing an array of several dimensions, as the
        int32 difference: for every index in the array's bounds (below 2^31) it is the same
        value, and TileLang's vectorize planner refused the unsigned one there ("Minuend's value
        is 0U", then "cannot make uint from negative value"). None for any other index."""
        e = index if isinstance(index, m.Binary) else strip_casts(index)
        if not (isinstance(e, m.Binary) and e.op == "-" and scalar_name(e.type) == "uint32"):
            return None
        amount = _int_literal(e.lhs)
        inner = e.rhs.operand if isinstance(e.rhs, m.Cast) else e.rhs  # threadIdx.x: int32 in TileLang
        if amount is None or not 0 <= amount < 2 ** 31 or self.tir_dtype(inner) != "int32" \
                or not self._nonneg(inner):
            return None
        return f"{amount} - {self.sub(inner, _PREC['+'] + 1)}"

    def _signed_index(self, index: m.Expr) -> str:
        """An index into a ``__device__`` or ``__constant__`` array (a constant extent) that
        TileLang guards (``scope.threads``), as TileLang may bound it: an unsigned one computed
        from variables is indexed through its (exact) int64 value. TVM's bound solver negates the
        buffer's extent in the index's type when it guards an access it cannot prove in range,
        which fails for unsigned types ("Literal value -1048576 is negative for unsigned integer
        type", hungarian's ``slack[c * nrows + l]`` in a while loop)."""
        text = self.expr(index)[0]
        dtype = self.tir_dtype(index)
        if dtype is None or not dtype.startswith("uint") or not self._unbounded(index, set()):
            return text
        return f"T.Cast(T.int64, {text})"

    def _unbounded(self, e: m.Expr, seen: set) -> bool:
        """Whether TileLang cannot bound ``e`` from the launch: it reads memory or a variable
        (a local assigned more than once), itself or through the locals printed as values."""
        for node in m.walk(e):
            if isinstance(node, m.Index) or isinstance(node, m.Unary) and node.op == "*":
                return True
            if isinstance(node, m.Ref) and node.kind == "local" and node.name not in seen:
                seen.add(node.name)
                value = self.values.get(node.name)
                if value is None or self._unbounded(value, seen):
                    return True
        return False

    def e_SizeOf(self, e: m.SizeOf):
        if e.value is None:
            t = e.operand
            if isinstance(t, m.TemplateType) and t.name in self.scope.type_params:
                # sizeof(T), sizeof(*out): the instance dtype's size, known when the factory runs
                return f"cuda_math.size_of({self.scope.type_params[t.name]})", _PREC["atom"]
            raise EmitError(f"'{e.of}' has no constant size", e.span)
        return str(e.value), _PREC["atom"]

    def e_Assign(self, e: m.Assign):
        raise EmitError("an assignment used as a value has no TileLang form", e.span)

    def e_Call(self, e: m.Call):
        return self.call(e, value=True)

    def call(self, e: m.Call, value: bool) -> tuple[str, int]:
        name = e.callee.lstrip(":").removeprefix("std::")
        if e.kind == "device" and e.dispatch:
            return self.dispatch_call(e), _PREC["atom"]
        if e.kind == "device":
            callee = self.device_call_name(e, name)
            names = self.scope.macro_params.get(callee, ()) if callee == name else None
            flat = self.scope.pointer_params.get(name, frozenset())
            args = [self._flat_view(a) if i in flat else self.expr(a)[0] for i, a in enumerate(e.args)]
            if names is not None:  # a macro binds its parameters (a plain function does not)
                args = [self.named(a, text, names[i] if i < len(names) else None)
                        for i, (a, text) in enumerate(zip(e.args, args))]
            args += [f"{x}={self.builtin_name(x)}" for x in self.scope.device_extra.get(name, [])]
            return f"{callee}({', '.join(args)})", _PREC["atom"]
        if e.kind == "atomic":
            return self.atomic(e, value)
        if e.kind == "var_template" and e.dispatch and e.template_args and all(
                a in self.scope.type_params for a in e.template_args):
            # read in a kernel template on its own types: the instance's value, looked up when TileLang
            # traces the kernel by the dtypes the factory was given (as overloads are, dispatch_call)
            return _by_instance([(k, self.expr(lit)[0]) for k, lit in e.dispatch[1]],
                                [self.scope.type_params[a] for a in e.template_args]), _PREC["atom"]
        if e.kind == "var_template":  # left dependent: no instance bound it, or clang gave no value
            raise EmitError(f"variable template '{e.callee}<{', '.join(e.template_args)}>' has no value here: "
                            "only instances that the program's calls name are valued", e.span)
        if e.kind == "memory" and name in CACHED_LOADS:
            return self.expr(_deref(e.args[0]))
        if e.kind == "sync" and name in FENCES:  # a statement of the thread, in a phase too
            self.scope.shim_calls.add(name)
            return f'T.call_extern("int32", "{FENCES[name]}")', _PREC["atom"]
        if is_native_votes(e):  # the native branch of a block vote (analysis.prepare.block_votes)
            return 'target == "cuda"', _PREC["cmp"]
        if is_block_vote(e) and e.kind == "sync":
            # the CUDA's own vote, one BAR.RED: every thread of the block runs it (emit.portable)
            return f'T.call_extern("int32", "{name}", {self.coerce(e.args[0], "int32")})', _PREC["atom"]
        if e.kind == "sync":
            if not self.scope.simt:
                raise EmitError(f"'{name}' inside a phase", e.span)
            if name == "__syncthreads":
                return "T.sync_threads()", _PREC["atom"]
            if name == "__syncwarp":
                return "T.sync_warp()", _PREC["atom"]
            raise EmitError(f"'{name}' has no TileLang form", e.span)
        if e.kind == "warp":
            return self.warp(e)
        if e.kind == "constructor" and isinstance(e.type, m.Scalar):
            # __half(x), float(x): a conversion
            if len(e.args) == 1:
                return self.e_Cast(m.Cast(e.type, e.args[0], "functional", e.type, e.span))
            if not e.args:
                return self.expr(m.IntLit(0, "0", e.type, e.span))
        special = _BUILTIN_CONSTANTS.get(name)
        if special is not None:
            return special, _PREC["atom"]
        if name.startswith("numeric_limits::"):
            member, dtype = name.split("::")[1], dtype_of(e.type, self.scope)
            if member in ("max", "lowest"):
                return f"T.{'max' if member == 'max' else 'min'}_value({dtype})", _PREC["atom"]
            return f'cuda_math.numeric_limit("{member}", {dtype})', _PREC["atom"]
        call_args = e.args
        if name in _FLOAT_EXPONENT and len(call_args) == 2 and scalar_name(call_args[1].type) in _INT \
                and isinstance(call_args[0].type, m.Scalar) and scalar_name(call_args[0].type) in _FLOATS:
            # pow(x, 2) (C++'s pow(double, int)): TileLang makes an integer exponent tl.pow_of_int,
            # which its C target cannot compile; the exponent as the base's type computes the same
            base = call_args[0].type
            call_args = (call_args[0], m.Cast(base, call_args[1], "implicit", base, call_args[1].span))
        args = [self.expr(a)[0] for a in call_args]
        dtypes = [scalar_name(a.type) for a in call_args]
        text = render_math(name, args, dtypes, self.scope)
        if text is None:
            raise EmitError(f"'{name}' has no TileLang mapping", e.span)
        return text, _PREC["atom"]

    def _flat_view(self, a: m.Expr) -> str:
        """An argument for a pointer parameter: an array of several dimensions (xlqc's local
        ``float G[7][7]`` for ``float G[][7]``, which the callee indexes flat) as its flat view."""
        text = self.expr(a)[0]
        if isinstance(a, m.Ref) and a.kind in ("local", "shared") and isinstance(a.type, m.Array) \
                and isinstance(a.type.element, m.Array) and self.scope.placements.get(a.name) != "thread_array":
            extents = array_shape(a.type, self.scope)
            return f"T.reshape({text}, ({' * '.join(extents)},))"
        return text

    def builtin_name(self, extra: str) -> str:
        """How a builtin passed to a macro (``tx``, ``bx``, ``block_x``) is named here."""
        if extra[0] == "t" and len(extra) == 2:
            return self.scope.thread_vars.get(extra[1], "0")
        if extra[0] == "b" and len(extra) == 2:
            return self.scope.block_vars.get(extra[1], "0")
        return extra

    def atomic(self, e: m.Call, value: bool):
        name = e.callee.removesuffix("_block").removesuffix("_system")
        address = e.args[0].type
        element = _deref(e.args[0])
        held = element.type.pointee if isinstance(element.type, m.Pointer) else element.type
        pointee64 = isinstance(address, m.Pointer) and scalar_name(address.pointee) == "uint64"
        unsigned64 = name == "atomicAdd" and pointee64
        if name == "atomicSub" and pointee64 or unsigned64 and scalar_name(held) != "uint64":
            # TileLang 0.1.15's AtomicAdd passes a uint64_t* (unsigned long) to CUDA's atomicAdd,
            # which takes unsigned long long*: nvcc finds no overload (atomicAdd on a uint64
            # element goes through the compat table's helper, below)
            raise EmitError(f"'{e.callee}' on an unsigned 64-bit value has no TileLang form (0.1.15)", e.span)
        target = self.bare(element)
        ops = {"atomicAdd": "T.atomic_add", "atomicMax": "T.atomic_max", "atomicMin": "T.atomic_min"}
        pointee = scalar_name(address.pointee) if isinstance(address, m.Pointer) else None
        held = scalar_name(held)
        recast = bool(pointee and held and pointee != held)
        if recast and (frozenset({pointee, held}) not in _SAME_WIDTH
                       or name in ("atomicMax", "atomicMin")):
            # an address cast to another type (``atomicMax((unsigned*)&intbuf[i], v)``): the
            # element is read as the cast's type. Same-width integers pass their address to the
            # helper (or add the same bits); an ordering or another width has no form here.
            raise EmitError(f"'{e.callee}' reads an element of type {held} as {pointee} (its "
                            "address is cast): no TileLang form", e.span)
        signed64 = name in ("atomicMax", "atomicMin") and (held if recast else pointee) == "int64"
        # a system-scope atomic (host / peer-device coherence: atomicSystemWide's host adds to the
        # same managed word while the kernel runs) goes through the table's helper, which calls
        # the CUDA one: TileLang's atomics are device scope (updates were lost on the H100)
        system = e.callee.endswith("_system")
        if (name not in ops and name != "atomicSub") or signed64 or unsigned64 or system:
            # (T.atomic_max/min on int64 does not compile with nvcc in TileLang 0.1.15, and its
            # atomic_ref would compare as unsigned long long: the table's helper on long long;
            # T.atomic_add on uint64 passes uint64_t* where CUDA takes unsigned long long*: the
            # table's helper casts the pointer)
            # atomicCAS, atomicExch, atomicAnd, ...: the compat table's helper on the element
            # (through a cast address: the helper of the element's type, the same bits)
            dtypes = [held if recast else pointee] + [scalar_name(a.type) for a in e.args[1:]]
            text = render_math(e.callee, [target] + [self.expr(a)[0] for a in e.args[1:]], dtypes, self.scope)
            if text is None:
                raise EmitError(f"'{e.callee}' has no TileLang form", e.span)
            if recast and value:  # the old value as the cast's type
                text = f"T.reinterpret(T.{pointee}, {text})"
            return text, _PREC["atom"]
        if name == "atomicSub" and pointee is None:  # a template's type: negated as its instance's
            fn, val = "T.atomic_add", f"cuda_math.c_neg({self.expr(e.args[1])[0]})"
        elif name == "atomicSub":
            fn, val = "T.atomic_add", self.negated(e.args[1], pointee)[0]
        else:
            val, fn = self.expr(e.args[1])[0], ops[name]
        if recast:  # atomicAdd((unsigned*)&intbuf[i], v): the same bits added as the element's type
            val = f"T.reinterpret(T.{held}, {val})"
        if value and recast:
            return f"T.reinterpret(T.{pointee}, {fn}({target}, {val}, return_prev=True))", _PREC["atom"]
        prev = ", return_prev=True" if value else ""
        return f"{fn}({target}, {val}{prev})", _PREC["atom"]

    def warp(self, e: m.Call):
        if not self.scope.simt:
            raise EmitError(f"warp operation '{e.callee}' inside a phase", e.span)
        name = e.callee
        args = [self.expr(a)[0] for a in e.args]
        shfl = {"__shfl_sync": "T.shfl_sync", "__shfl_xor_sync": "T.shfl_xor",
                "__shfl_down_sync": "T.shfl_down", "__shfl_up_sync": "T.shfl_up"}
        if name in shfl:
            mask, val, lane = args[:3]
            width = f", width={args[3]}" if len(args) > 3 else ""
            mask_arg = _mask_arg(mask)
            if name == "__shfl_sync":
                return f"T.shfl_sync({val}, {lane}{width}{mask_arg})", _PREC["atom"]
            return f"{shfl[name]}({val}, {lane}{width}{mask_arg})", _PREC["atom"]
        votes = {"__ballot_sync": "T.ballot_sync", "__any_sync": "T.any_sync", "__all_sync": "T.all_sync"}
        if name in votes:
            # TileLang's votes take (predicate, mask), CUDA's (mask, predicate): the mask first
            # made the predicate the mask (bh's __all_sync: an illegal instruction on the H200)
            mask, pred = args[:2]
            text = f"{votes[name]}({pred}{_mask_arg(mask)})"
            if name == "__ballot_sync":  # CUDA's ballot is 32 bits; TileLang's is a uint64
                text = f"T.Cast(T.uint32, {text})"
            return text, _PREC["atom"]
        if name == "__activemask":
            return "T.activemask()", _PREC["atom"]
        raise EmitError(f"warp operation '{name}' has no TileLang form", e.span)


#: clang builtins that math.h macros (INFINITY, NAN, HUGE_VALF) expand to.
_BUILTIN_CONSTANTS = {
    "__builtin_inff": "T.infinity(T.float32)", "__builtin_huge_valf": "T.infinity(T.float32)",
    "__builtin_inf": "T.infinity(T.float64)", "__builtin_huge_val": "T.infinity(T.float64)",
}


def needs_prelude(names) -> bool:
    """Whether the shim calls ``names`` need extern helpers (the kernel's ``prelude=``)."""
    from ..compat import cuda_math
    return bool(cuda_math.helper_names(names, "c") or cuda_math.helper_names(names, "cuda"))


#: math functions whose exponent is printed in the base's float type when the CUDA passes an integer
_FLOAT_EXPONENT = frozenset({"pow", "powf"})
_FLOATS = frozenset({"float32", "float64"})


def render_math(name: str, args: list[str], dtypes: list, scope: "Scope") -> str | None:
    """The TileLang text of a CUDA math/intrinsic call, from the compat table.

    Where the table's CPU and CUDA forms agree the form itself is printed (``T.exp(x)``);
    otherwise the call goes through the shim, ``cuda_math.fmaxf(x, y)``, which picks the form of
    the target the module is compiled for.
    """
    from ..compat import cuda_math

    dtypes = [d for d in dtypes] if all(dtypes) else None
    try:
        cpu = cuda_math.render(name, args, target="c", dtypes=dtypes)
        gpu = cuda_math.render(name, args, target="cuda", dtypes=dtypes)
    except Exception:  # not in the table, no TileLang form, wrong arity: the caller reports it
        return None
    if cpu == gpu and "c2t_" not in cpu:
        return cpu
    scope.shim_calls.add(name)
    return f"cuda_math.{cuda_math.python_name(name)}({', '.join(args)})"


def _buffer_param(e) -> bool:
    """Whether ``e`` is a pointer parameter of the kernel (a buffer whose handle may be null)."""
    e = strip_casts(e) if e is not None else None
    return isinstance(e, m.Ref) and e.kind == "param" and isinstance(e.type, m.Pointer)


def _is_null(e: m.Expr) -> bool:
    """``NULL``, ``nullptr``, ``0`` (as a pointer): a buffer compared with it is compared by its
    data handle, which is what C compares (a kernel's pointer parameter asks at run time,
    :meth:`ExprPrinter._null_test`: the launch may leave an optional buffer out)."""
    while isinstance(e, m.Cast):
        e = e.operand
    return isinstance(e, m.IntLit) and e.value == 0


def _mask_arg(mask: str) -> str:
    """A warp operation's ``mask=`` keyword for the printed CUDA mask; none for the full warp."""
    return "" if mask in ("4294967295", "0xffffffff", "T.uint32(4294967295)") else f", mask={mask}"


#: the bits of the integer dtypes a constant is wrapped into (ExprPrinter.e_IntLit)
_WIDTHS = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16, "int32": 32, "uint32": 32, "int64": 64, "uint64": 64}


def _fits(value: int, dtype: str) -> bool:
    bits = _WIDTHS[dtype]
    return (0 <= value < 2 ** bits) if dtype.startswith("u") else (-2 ** (bits - 1) <= value < 2 ** (bits - 1))


def _wrapped(value: int, dtype: str) -> int:
    """``value`` converted to ``dtype`` as C converts it (modulo 2**bits, two's complement)."""
    bits = _WIDTHS[dtype]
    value %= 2 ** bits
    return value - 2 ** bits if not dtype.startswith("u") and value >= 2 ** (bits - 1) else value


def _deref(e: m.Expr) -> m.Expr:
    """``&x[i]`` → ``x[i]``; a bare buffer ``p`` → ``p[0]``."""
    if isinstance(e, m.Unary) and e.op == "&":
        return e.operand
    if isinstance(e, m.Cast) and isinstance(e.type, m.Pointer):
        return _deref(e.operand)
    if isinstance(e, m.Ref):
        return m.Index(e, m.IntLit(0, "0", m.Scalar("int32"), e.span), e.type, e.span)
    if isinstance(e, m.Binary) and e.op == "+" and isinstance(e.lhs, m.Ref):
        return m.Index(e.lhs, e.rhs, e.type, e.span)
    raise EmitError("address expression has no TileLang form", e.span)


_SAME_WIDTH = {frozenset({"int32", "uint32"}), frozenset({"int64", "uint64"}),
               frozenset({"int16", "uint16"}), frozenset({"int8", "uint8"})}


def _dependent(e: m.Expr) -> bool:
    """Whether clang left ``e``'s type open (an expression on a template's types)."""
    return isinstance(e.type, m.Opaque) and e.type.spelling == "<dependent type>"


def _strip_roundtrip(e: m.Expr, dtype: str | None, printer: "ExprPrinter") -> m.Expr:
    """``(unsigned)x`` read back as ``int`` is ``x`` when ``x`` is already an ``int``."""
    if isinstance(e, m.Cast) and isinstance(e.target, m.Scalar) and dtype is not None:
        inner = printer.tir_dtype(e.operand)
        if inner == dtype and frozenset({e.target.dtype, dtype}) in _SAME_WIDTH:
            return e.operand
    return e


def _cast_constant(e) -> bool:
    """An integer literal cast to a type (``(unsigned)(0)``), through any casts."""
    if not isinstance(e, m.Cast):
        return False
    while isinstance(e, m.Cast):
        e = e.operand
    return isinstance(e, m.IntLit)


def _one_call(text: str) -> bool:
    """Whether ``text`` is one call (``T.Cast(T.uint64, a | b)``), its parentheses closing at its end."""
    start = text.find("(")
    if start <= 0 or not text.endswith(")") or not text[:start].replace(".", "").replace("_", "").isalnum():
        return False
    depth = 0
    for i, ch in enumerate(text[start:], start):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return i == len(text) - 1
    return False


def _is_lit_cast(e) -> bool:
    return isinstance(e, m.Cast) and isinstance(e.operand, (m.IntLit, m.FloatLit)) and e.style == "implicit"


def _as_bool(e: m.Expr) -> m.Expr:
    if scalar_name(e.type) == "bool":
        return e
    if isinstance(e, m.Binary) and (e.op in _CMP or e.op in ("&&", "||")):
        return e  # a test is a truth value whatever type clang gave it (one left open in a template)
    # an integer cast that keeps every bit (`(int)u` of an unsigned u: vote's `__any_sync(mask,
    # input[i])`) is zero exactly where its operand is: tested without it. TVM took `(int)u != 0`
    # for `0 < (int)u` (an unsigned value is not negative), false for u >= 2**31 on the GPU
    while isinstance(e, m.Cast) and _WIDTHS.get(scalar_name(e.target) or "", 0) >= \
            _WIDTHS.get(scalar_name(e.operand.type) or "", 99):
        e = e.operand
    if scalar_name(e.type) == "bool":
        return e
    return m.Cast(m.Scalar("bool"), e, "implicit", m.Scalar("bool"), e.span)


# ---------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------


@dataclass
class Line:
    indent: int
    text: str
    origin: str  # provenance tag ("L12"), or "" for lines with no CUDA counterpart


class StmtPrinter:
    def __init__(self, scope: Scope, indent: int = 0) -> None:
        self.scope = scope
        self.expr = ExprPrinter(scope)
        self.lines: list[Line] = []
        self.indent = indent
        self.loop_stack: list[str] = []  # "serial", "while", or a loop's flag (open_loop)
        self.values: dict[str, m.Expr] = {}  # locals printed as values (TileLang inlines them)
        self.expr.values = self.values
        self.flag_loops = 0  # loops on a flag (open_flag_loop) around the current statement
        self.retests: dict[str, m.Expr] = {}  # flag -> the condition it holds (open_loop)
        self.do_tests: dict[str, m.Expr] = {}  # a do-while loop's flag -> its condition (s_DoWhile)
        self.chains = 0  # long else-if chains written flat around the current statement (s_If)

    def open_loop(self, cond: m.Expr | None, span: Span | None) -> None:
        """Opens a ``while`` loop that tests ``cond`` (None: always) before each iteration; close it
        with :meth:`close_loop`. A condition that always holds (``for (;;)``, ``while (1)``) runs on
        a flag that stays true (TileLang refuses a ``while`` on a constant; the loop's ``break``
        ends it, :meth:`open_flag_loop`). TileLang runs the statements of a macro called in an
        expression, and binds its arguments, where the statement that holds the call stands: for
        ``while f(x):`` once, before the loop. A condition whose device functions all compute one
        expression calls their plain functions; any other that calls one is kept in a flag (one
        per depth of such loops) set before the loop and again at the end of each iteration and
        before each ``continue``."""
        if cond is None or always_true(cond):
            self.open_flag_loop(span)
            self.loop_stack.append("flag")
            return
        calls = {n.callee.lstrip(":").removeprefix("std::") for n in m.walk(cond) if isinstance(n, m.Call)
                 and n.kind == "device"}
        if not calls:
            self.emit(f"while {self.expr.cond(cond)}:", span)
            self.loop_stack.append("while")
            return
        if calls <= set(self.scope.expression_fns):
            self.expr.every_test = True
            try:
                self.emit(f"while {self.expr.cond(cond)}:", span)
            finally:
                self.expr.every_test = False
            self.loop_stack.append("while")
            return
        if len(self.retests) >= len(TEST_FLAGS):
            raise EmitError(f"loops whose conditions call device functions nested more than {len(TEST_FLAGS)} deep",
                            span)
        flag = TEST_FLAGS[len(self.retests)]
        self.retests[flag] = cond
        self.emit(f"{flag} = T.alloc_var(T.bool)", span)
        self.retest(flag, span)
        self.emit(f"while {flag}:", span)
        self.loop_stack.append(flag)

    def retest(self, flag: str, span: Span | None) -> None:
        self.emit(f"{flag} = {self.expr.cond(self.retests[flag])}", span)

    def close_loop(self, span: Span | None) -> None:
        """Ends the body of the loop :meth:`open_loop` opened (at the body's indent)."""
        top = self.loop_stack.pop()
        if top in self.retests:
            self.retest(top, span)
            del self.retests[top]
        elif top == "flag":
            self.close_flag_loop()

    def open_flag_loop(self, span: Span | None) -> str:
        """Opens ``while <flag>:`` on a fresh boolean that starts true and returns the flag. TileLang
        refuses a ``while`` whose condition is a constant (``while True:`` raises "Infinite while
        loop detected"), so a ``do {} while (c)`` loop sets its flag to ``c`` after its body and
        a ``for (;;)``/``while (1)`` loop never clears it (its ``break`` ends it). Close it with
        :meth:`close_flag_loop`; a nested one gets a flag of its own."""
        if self.flag_loops >= len(LOOP_FLAGS):
            raise EmitError(f"do-while or endless loops nested more than {len(LOOP_FLAGS)} deep", span)
        flag = LOOP_FLAGS[self.flag_loops]
        self.flag_loops += 1
        self.emit(f"{flag} = T.alloc_var(T.bool)", span)
        self.emit(f"{flag} = True", span)
        self.emit(f"while {flag}:", span)
        return flag

    def close_flag_loop(self) -> None:
        self.flag_loops -= 1

    def emit(self, text: str, span: Span | None) -> None:
        self.lines.append(Line(self.indent, text, self.scope.tag(span) if span else ""))

    def block(self, stmts) -> None:
        before = len(self.lines)
        self.stmts(stmts)
        if len(self.lines) == before:
            self.emit("pass", None)

    def stmts(self, stmts, divisions: bool = True) -> None:
        """``stmts`` in order: runs of kept divisions as values (with ``divisions``), a vector's
        lanes copied whole as one vectorised loop, each other statement as itself."""
        stmts = list(stmts)
        i = 0
        while i < len(stmts):
            run = self._kept_divisions(stmts, i) if divisions else 0
            if run:
                self._static_values(stmts[i:i + run])
                i += run
                continue
            lanes = stmts[i].lanes if isinstance(stmts[i], (m.ExprStmt, m.DeclStmt)) else None
            run = stmts[i:i + lanes] if lanes else []
            if len(run) == lanes and all(getattr(s, "lanes", None) == lanes for s in run) and self._whole(run):
                i += lanes
                continue
            self.stmt(stmts[i])
            i += 1

    def _whole(self, run: list) -> bool:
        """A complete run of marked lanes (``lanes``) printed as the one vector access the CUDA
        made, where the fact it was marked for still holds (a run a pass changed prints lane by
        lane); False, printing nothing, where none does."""
        if not any(getattr(s, "built_values", True) for s in run) and lane_copies(run):  # both sides whole
            self._lane_loop(run[0], len(run))
        elif lane_stores(run):
            self._packed_store(run)
        elif lane_loads(run):
            self._packed_load(run)
        elif lane_adds(run):
            self._paired_add(run)
        else:
            return False
        return True

    def _lane_loop(self, first: m.ExprStmt, lanes: int) -> None:
        """The ``lanes`` copies from ``first`` on, the lanes of a vector the CUDA copied whole in
        one access aligned to its size (``ExprStmt.lanes``), as one loop TileLang vectorises: each
        index ``x`` of the first lane written ``(x / lanes) * lanes`` (the same number: TileLang
        then proves the alignment and makes one 8- or 16-byte access, as the CUDA did)."""
        span = first.span
        lane = m.Ref(LANE_VAR, "local", _INT32, span)

        def at_lane(e: m.Index) -> m.Index:
            if isinstance(e.index, m.IntLit) and e.index.value == 0:
                return replace(e, index=lane)
            e = replace(e, index=unwidened(e.index))  # one address: the element index in its own type
            t = e.index.type if isinstance(e.index.type, m.Scalar) else _INT32
            n = m.IntLit(lanes, str(lanes), t, span)
            start = m.Binary("*", m.Binary("/", e.index, n, t, span), n, t, span)
            return replace(e, index=m.Binary("+", start, lane, t, span))

        a = first.expr
        self.emit(f"for {LANE_VAR} in T.vectorized({lanes}):", span)
        self.indent += 1
        self.loop_stack.append("serial")
        self.s_ExprStmt(m.ExprStmt(replace(a, target=at_lane(a.target), value=at_lane(a.value)), span))
        self.loop_stack.pop()
        self.indent -= 1

    def _packed_store(self, run: list) -> None:
        """The lanes of a vector built of values (``d[i] = {ox, oy, oz, 0.f}``) stored whole, as
        the CUDA did: the values into a local pack first (C++ builds the vector before it stores
        it), then one vectorised loop stores the pack (:meth:`_lane_loop`)."""
        first = run[0].expr
        lane = self._pack(first.target.type, len(run), run[0].span)
        for j, s in enumerate(run):
            self.emit(f"{PACK_VAR}[{j}] = {self._value(s.expr.value, first.target.type)}", s.span)
        self._lane_loop(m.ExprStmt(replace(first, value=lane(0)), run[0].span), len(run))

    def _packed_load(self, run: list) -> None:
        """The lanes of a vector the CUDA loaded whole into a local (``const float4 p = d[i]``):
        one vectorised loop loads them into a local pack (:meth:`_lane_loop`), then each lane's
        local is declared with its element of the pack."""
        first, span = run[0].decls[0], run[0].span
        lane = self._pack(first.type, len(run), span)
        self._lane_loop(m.ExprStmt(m.Assign("=", lane(0), first.init, first.type, span), span), len(run))
        for j, s in enumerate(run):
            self.decl(replace(s.decls[0], init=lane(j)))

    def _paired_add(self, run: list) -> None:
        """The two lane adds of a ``__half2`` that the CUDA added in one 32-bit atomic
        (``ExprStmt.lanes``, :func:`lane_adds`), as one again: ``T.atomic_addx2`` takes its
        values from a two-element local (on CUDA, ``atomicAdd`` on the element's address read as
        a ``half2*``)."""
        span = run[0].span
        self._pack(run[0].expr.type, 2, span)
        for j, s in enumerate(run):
            self.emit(f"{PACK_VAR}[{j}] = {self.expr(s.expr.args[1])}", span)
        self.emit(f"T.atomic_addx2({self.expr.bare(run[0].expr.args[0].operand)}, {PACK_VAR}[0])", span)

    def _pack(self, ctype: m.CType, lanes: int, span: Span):
        """Declare the local pack of a vector's ``lanes`` lanes of ``ctype``; the function giving
        its element ``j``."""
        self.emit(f"{PACK_VAR} = T.alloc_local(({lanes},), {dtype_of(ctype, self.scope)})", span)
        pack = m.Ref(PACK_VAR, "local", m.Array(ctype, lanes), span)
        return lambda j: m.Index(pack, m.IntLit(j, str(j), _INT32, span), ctype, span)

    def _kept_division(self, s) -> bool:
        """A declaration whose value divides, kept in a cell (``keep_divisions``)."""
        if not (self.scope.keep_divisions and isinstance(s, m.DeclStmt)):
            return False
        return all(d.init is not None and self.scope_single(d.name) and _divides(d.init)
                   and isinstance(d.type, m.Scalar) and self.scope.placements.get(d.name, "phase") == "phase"
                   for d in s.decls)

    def _kept_divisions(self, stmts, i) -> int:
        """How many declarations from ``stmts[i]`` on are kept divisions that a kernel compiled at
        constant sizes (``scope.static_switch``) declares as values instead."""
        if not self.scope.static_switch:
            return 0
        n = 0
        while i + n < len(stmts) and self._kept_division(stmts[i + n]):
            n += 1
        return n

    def _static_values(self, decls) -> None:
        """Divisions by sizes: values at constant sizes (TileLang bounds them, so the index math
        stays int32 and the divisions fold), cells at run-time sizes (computed once, not again
        in the loops that use them)."""
        self.emit("if static:  # constant sizes: values TileLang bounds (int32 index math)", decls[0].span)
        self.indent += 1
        for s in decls:
            for d in s.decls:
                self.values[d.name] = d.init
                self.emit(f"{d.name} = {self.expr.named(d.init, self._value(d.init, d.type))}", d.span)
        self.indent -= 1
        self.emit("else:", decls[0].span)
        self.indent += 1
        for s in decls:
            self.stmt(s)
        self.indent -= 1

    def body(self, s) -> None:
        self.indent += 1
        self.block(s.stmts if isinstance(s, m.Block) else (s,))
        self.indent -= 1

    def stmt(self, s: m.Stmt) -> None:
        method = getattr(self, f"s_{type(s).__name__}", None)
        if method is None:
            raise EmitError(f"statement '{type(s).__name__}' has no TileLang form", s.span)
        method(s)

    def s_Empty(self, s):
        pass

    def s_Block(self, s: m.Block):
        self.stmts(s.stmts, divisions=False)

    def s_DeclStmt(self, s: m.DeclStmt):
        for d in s.decls:
            self.decl(d)

    def decl(self, d: m.VarDecl) -> None:
        placement = self.scope.placements.get(d.name, "phase")
        if placement == "shared":
            return
        if d.storage in ("shared", "extern_shared"):  # one the kernel did not place: a device function's
            raise EmitError(f"__shared__ array '{d.name}' declared inside a device function", d.span)
        if isinstance(d.type, m.Array):
            if placement == "phase":
                shape = ", ".join(str(x) for x in array_shape(d.type, self.scope))
                self.emit(f"{d.name} = T.alloc_local(({shape},), {dtype_of(m.element_type(d.type), self.scope)})",
                          d.span)
            if isinstance(d.init, m.InitList):
                self._init_list(d, d.init, [])
            elif d.init is not None:
                raise EmitError(f"initialiser of array '{d.name}'", d.span)
            return
        if isinstance(d.type, m.Pointer):
            raise EmitError(f"local pointer '{d.name}' that is not a view of a buffer", d.span)
        try:
            dtype = dtype_of(d.type, self.scope)
        except EmitError as exc:  # where it stands: the local and its line
            raise EmitError(f"local '{d.name}': {exc}", d.span) from None
        target = self.expr.e_Ref(m.Ref(d.name, "local", d.type, d.span))[0]
        if placement == "phase":
            single = self.scope_single(d.name)
            if single and d.init is not None and not (self.scope.keep_divisions and _divides(d.init)
                                                      and _int_literal(d.init) is None) \
                    and not (_computes_functions(d.init) and self._reused(d.name)):
                self.values[d.name] = d.init
                self.emit(f"{d.name} = {self.expr.named(d.init, self._value(d.init, d.type))}", d.span)
                return
            self.emit(f"{d.name} = T.alloc_var({dtype})", d.span)
        if d.init is not None:
            self.emit(f"{target} = {self._value(d.init, d.type)}", d.span)

    def _reused(self, name: str) -> bool:
        return self.scope.reused is None or name in self.scope.reused

    def scope_single(self, name: str) -> bool:
        return name in self.scope.single

    def _value(self, value: m.Expr, target_type: m.CType) -> str:
        return self.expr.coerce(value, scalar_name(target_type))

    def _init_list(self, d: m.VarDecl, init: m.InitList, prefix: list[str]) -> None:
        """The elements ``init`` lists, then zero for those it leaves out: C++ value-initialises
        them (``int pre[45] = {0}`` is 45 zeros; a local array has no zeros of its own)."""
        for i, item in enumerate(init.items):
            if isinstance(item, m.InitList):
                self._init_list(d, item, prefix + [str(i)])
                continue
            self.emit(f"{d.name}[{', '.join(self._element_index(d, prefix + [str(i)]))}] = {self.expr(item)}",
                      d.span)
        shape = array_shape(d.type, self.scope)[len(prefix):]
        given = len(init.items)
        if shape and not (shape[0].isdigit() and int(shape[0]) <= given):
            self._zero_rest(d, prefix, given, shape)

    def _element_index(self, d: m.VarDecl, idx: list[str]) -> list[str]:
        return [self.scope.thread_index] + idx if self.scope.placements.get(d.name) == "thread_array" else idx

    def _zero_rest(self, d: m.VarDecl, prefix: list[str], start: int, shape: list[str]) -> None:
        """Zero into ``d[prefix..., start:, ...]``: the elements an initialiser list leaves out,
        a store each where they are few, else loops."""
        element = m.element_type(d.type)
        if not isinstance(element, m.Scalar):
            raise EmitError(f"array '{d.name}' of '{element}' partly initialised", d.span)
        zero = self._value(m.IntLit(0, "0", m.Scalar("int32"), d.span), element)
        sizes = [int(x) - (start if j == 0 else 0) if x.isdigit() else None for j, x in enumerate(shape)]
        if None not in sizes and math.prod(sizes) <= ZERO_STORES:
            for rest in itertools.product(*(range(n) for n in sizes)):
                idx = [str(start + rest[0])] + [str(k) for k in rest[1:]]
                self.emit(f"{d.name}[{', '.join(self._element_index(d, prefix + idx))}] = {zero}", d.span)
            return
        counts = [str(n) if n is not None else f"{x} - {start}" if j == 0 and start else x
                  for j, (n, x) in enumerate(zip(sizes, shape))]
        with self._loops(counts, "zero", d.span) as names:
            idx = [f"{start} + {names[0]}" if start else names[0]] + names[1:]
            self.emit(f"{d.name}[{', '.join(self._element_index(d, prefix + idx))}] = {zero}", d.span)

    def s_ExprStmt(self, s: m.ExprStmt):
        e = s.expr
        if isinstance(e, m.Binary) and e.op == ",":  # a, b; (for steps `a += s, b += s` too): in order
            self.s_ExprStmt(m.ExprStmt(e.lhs, s.span))
            self.s_ExprStmt(m.ExprStmt(e.rhs, s.span))
            return
        if isinstance(e, m.Assign):
            if e.op == "=":
                self._store(e.target, self._value(e.value, e.target.type), s.span)
            else:
                op = e.op[:-1]
                combined = m.Binary(op, e.target, e.value, e.target.type, e.span)
                self._store(e.target, self._value(combined, e.target.type), s.span)
            return
        if isinstance(e, m.Unary) and e.op in ("++", "--"):
            one = m.IntLit(1, "1", e.operand.type if isinstance(e.operand.type, m.Scalar) else m.Scalar("int32"), e.span)
            combined = m.Binary("+" if e.op == "++" else "-", e.operand, one, e.operand.type, e.span)
            self._store(e.operand, self.expr(combined), s.span)
            return
        if isinstance(e, m.Call):
            if e.kind == "io":
                return  # printf/assert: host-visible side effects are not migrated
            copies = self._thread_array_copies(e, s.span) if e.kind == "device" else []
            text, _ = self.expr.call(e, value=False)
            self.emit(text, s.span)
            for copy, name, shape in copies:  # and back: the function may have written it
                self._copy_thread_array(f"{name}[{self.scope.thread_index}, {{}}]", f"{copy}[{{}}]", shape, s.span)
            self.expr.arg_copies = {}
            return
        if isinstance(e, m.Cast) and isinstance(e.operand, m.Call):  # (void)call(...)
            self.s_ExprStmt(m.ExprStmt(e.operand, s.span))
            return
        if _no_effect(e, self.scope.effects):  # (void)x; an assert: C evaluates it for nothing migrated
            self.emit("pass  # an expression without effect: C discards its value", s.span)
            return
        if isinstance(e, m.MethodCall):
            raise _method_call(e)
        raise EmitError("expression statement without effect", s.span)

    def _store(self, target: m.Expr, value: str, span: Span) -> None:
        """``target = value``; to volatile global memory a relaxed atomic store (e_Index)."""
        if self.expr.volatile_global(target):
            if self.expr.volatile_byte(target):
                self.emit(f"cuda_math.volatile_store({self.expr.bare(target)}, {value})", span)
                return
            self.emit(f'T.atomic_store({self.expr.bare(target)}, {value}, "relaxed")', span)
        else:
            self.emit(f"{self.expr(target)} = {value}", span)

    def _thread_array_copies(self, call: m.Call, span: Span) -> list[tuple[str, str, list[str]]]:
        """A per-thread array kept across barriers (one row per thread of a shared array) passed
        to a device function, which indexes its own array: each goes through a local copy of the
        thread's row, made here and written back after the call (``DCT8(D)`` on dct8x8's
        ``float D[8]``). ((copy, array, shape), ...); ``self.expr.arg_copies`` prints the copies."""
        copies = []
        for a in call.args:
            if isinstance(a, m.Ref) and a.kind == "local" and isinstance(a.type, m.Array) \
                    and self.scope.placements.get(a.name) == "thread_array" and a.name not in self.expr.arg_copies:
                shape = array_shape(a.type, self.scope)
                copy = f"{a.name}_row_"
                self.emit(f"{copy} = T.alloc_local(({', '.join(shape)},), "
                          f"{dtype_of(m.element_type(a.type), self.scope)})", span)
                self._copy_thread_array(f"{copy}[{{}}]", f"{a.name}[{self.scope.thread_index}, {{}}]", shape, span)
                self.expr.arg_copies[a.name] = copy
                copies.append((copy, a.name, shape))
        return copies

    def _copy_thread_array(self, target: str, source: str, shape: list[str], span: Span) -> None:
        """``target`` = ``source`` element by element (each a format string of the indices)."""
        with self._loops(shape, "row", span) as names:
            index = ", ".join(names)
            self.emit(f"{target.format(index)} = {source.format(index)}", span)

    @contextmanager
    def _loops(self, counts: list[str], stem: str, span: Span):
        """A nest of ``T.serial`` loops of ``counts`` iterations, outermost first, whose variables
        (``{stem}_0_``, ...) it gives; what is emitted inside is their body."""
        names = [f"{stem}_{i}_" for i in range(len(counts))]
        for name, count in zip(names, counts):
            self.emit(f"for {name} in T.serial({count}):", span)
            self.indent += 1
        yield names
        self.indent -= len(counts)

    def s_If(self, s: m.If):
        branches, last = _else_if_chain(s)
        if len(branches) >= LONG_CHAIN and self.chains < len(CHAIN_FLAGS):
            self._flat_chain(branches, last)
            return
        for i, b in enumerate(branches):
            self.emit(f"{'elif' if i else 'if'} {self.expr.cond(b.cond)}:", b.span)
            self.body(b.then)
        if last is not None:
            self.emit("else:", last.span)
            self.body(last)

    def _flat_chain(self, branches: list[m.If], last) -> None:
        """``if a: .. elif b: .. else: ..`` with many tests, written as one ``if`` per test on a
        flag that says a branch was taken: TileLang's front end nests every ``elif`` two Python
        blocks deeper, and Python refuses more than 20 ("too many statically nested blocks"; a
        real program's 13-way size binning). Each test still runs only if those before it failed."""
        flag = CHAIN_FLAGS[self.chains]
        self.chains += 1
        first = branches[0]
        self.emit(f"# an else-if chain of {len(branches)} tests, one `if` each: {flag} says one was taken", first.span)
        self.emit(f"{flag} = T.alloc_var(T.bool)", first.span)
        self.emit(f"{flag} = False", first.span)
        for i, b in enumerate(branches):
            if i:
                self.emit(f"if not {flag}:", b.span)
                self.indent += 1
            self.emit(f"if {self.expr.cond(b.cond)}:", b.span)
            if i < len(branches) - 1 or last is not None:
                self.indent += 1
                self.emit(f"{flag} = True", b.span)
                self.indent -= 1
            self.body(b.then)
            self.indent -= 1 if i else 0
        if last is not None:
            self.emit(f"if not {flag}:", last.span)
            self.body(last)
        self.chains -= 1

    def s_For(self, s: m.For):
        canon = canonical_loop(s, self.scope, self.values)
        if canon is not None and (canon[3] == "1" and self._varies(s.init.decls[0].init)
                                  or self._varies(s.init.decls[0].init, s.cond.rhs)
                                  and any(isinstance(n, m.For) or isinstance(n, m.ExprStmt) and n.lanes
                                          for n in m.walk(s.body))):
            # TileLang (LowerTileOp) binds a counted loop's range for the T.Parallel loop around it
            # and again once that loop is mapped onto the threads; a range that differs between
            # the threads then reads differently, and when another counted loop is nested inside,
            # lowering fails ("Trying to update var 'i' with a different minimum value", on the
            # CUDA and the CPU target): such a loop keeps the while form, which binds no range.
            # A start that differs between the threads fails the same way with no loop inside
            # when the loop counts one by one (pool: mnist's ``for (n = N * pos / size; n < N *
            # (pos+1) / size; ++n)``); a loop striding by the warp or block (c = lane; c += 32)
            # lowers as it is
            canon = None
        if canon is not None:
            var, start, stop, step = canon
            loop = "T.unroll" if any(p.startswith("unroll") for p in s.pragmas) else "T.serial"
            args = f"{start}, {stop}" + (f", {step}" if step != "1" else "")
            if start == "0" and step == "1":
                args = stop
            unsigned = scalar_name(s.init.decls[0].type) == "uint32"
            self.emit(f"for {var + '_n' if unsigned else var} in {loop}({args}):", s.span)
            self.loop_stack.append("serial")
            if unsigned:   # the C variable: the count as its unsigned value
                self.indent += 1
                self.emit(f"{var} = T.Cast(T.uint32, {var}_n)", s.span)
                self.indent -= 1
            self.body(s.body)
            self.loop_stack.pop()
            return
        if s.init is not None:
            self.stmt(s.init)
        body = s.body
        if s.step is not None and has_continue(body):
            # printed as a while loop with the step at the end, which a continue would skip: each
            # continue of this loop steps first
            body = _step_before_continue(body, s.step)
        self.open_loop(s.cond, s.span)
        self.indent += 1
        self.block(body.stmts if isinstance(body, m.Block) else (body,))
        if s.step is not None:
            self.s_ExprStmt(m.ExprStmt(s.step, s.step.span))
        self.close_loop(s.cond.span if s.cond is not None else s.span)
        self.indent -= 1

    def _varies(self, *exprs: m.Expr) -> bool:
        """Whether one of ``exprs`` may differ between the iterations of the ``T.Parallel`` loop
        it is printed in (a thread or element index, a per-thread array, a local printed as a value
        of one, or, in a device function's macro, a parameter)."""
        scope = self.scope
        if scope.simt and not scope.params_vary:
            return False  # thread-level code: no T.Parallel loop around it
        for e in exprs:
            for node in m.walk(e):
                if isinstance(node, m.Builtin) and (
                        node.var == "globalIdx" or node.var == "threadIdx" and scope.thread_vars.get(node.dim, "0") != "0"):
                    return True
                if isinstance(node, m.Ref) and node.kind == "param" and scope.params_vary \
                        and node.name not in scope.buffers:
                    return True
                if isinstance(node, m.Ref) and node.kind == "local" and scope.placements.get(node.name) == "thread_array":
                    return True  # printed indexed by the thread
                if isinstance(node, m.Ref) and node.kind == "local" and node.name in self.values \
                        and self._varies(self.values[node.name]):
                    return True
        return False

    def s_RowLoop(self, r):
        """A lane's strided loop over a row (analysis.lift.row_registers): unrolled over
        ``row_steps`` with its register reads and stores when the row length is compiled in,
        else the CUDA loop."""
        loop = r.loop
        self.emit("if row_steps:", loop.span)
        self.indent += 1
        self.emit(f"for {r.step_var} in T.unroll(row_steps):", loop.span)
        self.indent += 1
        self.emit(f"{r.var} = {self.expr(loop.init.decls[0].init)} + {r.step_var} * {self.expr.sub(loop.step.value, 12)}",
                  loop.span)
        self.emit(f"if {self.expr.cond(loop.cond)}:", loop.span)
        self.indent += 1
        for name, read in r.loads:
            self.emit(f"{r.register(name)} = {self.expr(read)}", read.span)
        self.block(r.unrolled)
        self.indent -= 3
        self.emit("else:", loop.span)
        self.indent += 1
        self.s_For(loop)
        self.indent -= 1

    def s_While(self, s: m.While):
        self.open_loop(s.cond, s.span)
        self.indent += 1
        self.block(s.body.stmts if isinstance(s.body, m.Block) else (s.body,))
        self.close_loop(s.cond.span)
        self.indent -= 1

    def s_DoWhile(self, s: m.DoWhile):
        flag = self.open_flag_loop(s.span)
        self.indent += 1
        self.loop_stack.append(flag)
        self.do_tests[flag] = s.cond  # a continue tests the condition first, as C does (s_Continue)
        self.block(s.body.stmts if isinstance(s.body, m.Block) else (s.body,))
        del self.do_tests[flag]
        self.loop_stack.pop()
        self.emit(f"{flag} = {self.expr.cond(s.cond)}", s.cond.span)
        self.indent -= 1
        self.close_flag_loop()

    def s_Break(self, s):
        self.emit("break", s.span)

    def s_Continue(self, s):
        top = self.loop_stack[-1] if self.loop_stack else None
        if top in self.retests:
            self.retest(top, s.span)  # C tests the condition before the next iteration
        elif top in self.do_tests:  # do {...; continue; ...} while (c): the flag takes c, then the test
            self.emit(f"{top} = {self.expr.cond(self.do_tests[top])}", s.span)
        self.emit("continue", s.span)

    def s_Return(self, s: m.Return):
        if s.value is None:
            raise EmitError("'return' inside a kernel phase", s.span)
        self.emit(f"return {self.expr(s.value)}", s.span)

    def s_Switch(self, s: m.Switch):
        try:
            cases = switch_cases(s)
        except NoTileLangForm as exc:
            raise EmitError(str(exc), exc.span) from None
        subject = self.expr(s.cond)
        widths = {"uint8": 8, "uint16": 16, "uint32": 32}
        bits = widths.get(scalar_name(s.cond.type))
        if bits is not None:
            # TVM's bound solver fails on unsigned branch conditions ("cannot make uint from negative
            # value"): an unsigned subject of at most 32 bits is compared exactly in int64
            subject = f"T.Cast(T.int64, {subject})"
        # cases as an if/elif chain, each elif one block deeper in Python's syntax tree (whose
        # limit of 20 nested blocks TileLang's frontend reached at a hash's 16 tail cases); a
        # subject no case body changes is tested by a flat if per case instead
        read = {n.name for n in m.walk(s.cond) if isinstance(n, m.Ref)}
        flat = len(cases) > 4 and pure(s.cond) and not any(
            read & assigned_names(b) for values, body, _ in cases for b in body)
        first = True
        default = None
        tests = []
        for values, body, span in cases:
            if values is None:
                default = (body, span)
                continue
            test = " or ".join(f"{subject} == {self._case_value(v, bits)}" for v in values)
            tests.append(test)
            self.emit(f"{'if' if first or flat else 'elif'} {test}:", span)
            first = False
            self.indent += 1
            self.block(body)
            self.indent -= 1
        if default is not None:
            if first:
                self.block(default[0])
            else:
                self.emit(f"if not ({' or '.join(tests)}):" if flat else "else:", default[1])
                self.indent += 1
                self.block(default[0])
                self.indent -= 1

    def _case_value(self, v: m.Expr, bits: int | None) -> str:
        """A case's value, compared with a subject widened from ``bits`` unsigned bits to int64
        (None: as written)."""
        if bits is None:
            return self.expr(v)
        value = const_value(v)
        if isinstance(value, int):
            return str(value % (1 << bits))  # the case's value converted to the subject's type
        return f"T.Cast(T.int64, {self.coerce(v, 'uint' + str(bits))})"

    def s_UnsupportedStmt(self, s):
        raise EmitError(s.what, s.span)


def always_true(cond: m.Expr) -> bool:
    """A loop condition that is a constant that holds (``true``, ``1``): TileLang takes
    ``while True:`` for an infinite loop and refuses it."""
    cond = strip_casts(cond)
    if isinstance(cond, m.BoolLit):
        return cond.value
    value = const_value(cond)
    return value is not None and value != 0


def _step_before_continue(s, step: m.Expr):
    """``s`` with each ``continue`` of this loop (not of a nested one) preceded by ``step``."""
    if isinstance(s, m.Continue):
        return m.Block((m.ExprStmt(step, s.span), s), s.span)
    if isinstance(s, (m.For, m.While, m.DoWhile)) or not has_continue(s):
        return s
    if isinstance(s, m.Block):
        return replace(s, stmts=tuple(_step_before_continue(x, step) for x in s.stmts))
    if isinstance(s, m.If):
        return replace(s, then=_step_before_continue(s.then, step),
                                   other=_step_before_continue(s.other, step) if s.other is not None else None)
    if isinstance(s, (m.Switch, m.Case)):
        return replace(s, body=_step_before_continue(s.body, step))
    return s


def _by_instance(table, keys, default: str | None = None) -> str:
    """``{key: value, ...}[lookup]``: what each instance of a template picks, looked up when TileLang
    traces the kernel by the template arguments the factory was given (``keys``: its parameters'
    Python names, ``int(N)`` for a value); ``table`` pairs an instance's key (dtype names or
    digits, one per template argument) with its value's text. With a ``default`` (an overload's
    primary template), ``{...}.get(lookup, default)``."""
    entries = ", ".join(f"{json.dumps(k[0]) if len(k) == 1 else repr(tuple(k))}: {v}" for k, v in table)
    look = f"str({keys[0]})" if len(keys) == 1 else "(" + ", ".join(f"str({k})" for k in keys) + ",)"
    return f"{{{entries}}}.get({look}, {default})" if default is not None else f"{{{entries}}}[{look}]"


def _scaled_difference(e) -> bool:
    """Whether ``e`` multiplies an unsigned difference of a constant (``(x - 1) * n``)."""
    return any(isinstance(n, m.Binary) and n.op == "*" and any(
        isinstance(x, m.Binary) and x.op == "-" and (_int_literal(x.rhs) or 0) > 0 for x in (n.lhs, n.rhs))
        for n in m.walk(e))


def _wraps(e) -> bool:
    """Whether ``e`` (an unsigned value) holds a subtraction, unsigned or made unsigned by a cast
    (``(unsigned)(i - 1)``, printed as a wrapping sum too): a value that wraps below zero. A
    device function's result may hide one (fpc's ``my_abs``: ``(x ^ t) - t``): TVM's
    NarrowDataType took ``(int64)my_abs(x) <= 255`` for ``(int)my_abs(x) <= 255``, a signed test
    that INT_MIN's absolute value 0x80000000 passed on the GPU (not on the CPU target)."""
    return any(isinstance(n, m.Binary) and n.op == "-" or isinstance(n, m.Call) and n.kind == "device"
               for n in m.walk(e))


def array_shape(t: m.CType, scope: Scope) -> list[str]:
    dims = []
    while isinstance(t, m.Array):
        if t.extent is not None:
            dims.append(str(t.extent))
        elif t.extent_text and t.extent_text.replace("_", "").replace(" ", "").isalnum():
            dims.append(t.extent_text)
        else:
            extent = _value_template_extent(t.extent_text, scope)
            if extent is None:
                raise EmitError(f"array extent '{t.extent_text}' is not a constant")
            dims.append(extent)
        t = t.element
    return dims


_EXTENT_TOKEN = re.compile(r"\s*(?:([A-Za-z_]\w*)|(\d+)[uUlL]*|(<<|>>|[-+*/%()]))")


def _value_template_extent(text: str, scope: Scope) -> str | None:
    """An array extent written with the template's value parameters (``float s[(bx + 2) * (by +
    2)]`` in ``template <int bx, int by>``) as the factory's Python expression of them (C's
    division of non-negative sizes is ``//``); None for any other text."""
    text = (text or "").strip()
    if not text or not scope.value_params:
        return None
    out, at, named = [], 0, False
    while at < len(text):
        match = _EXTENT_TOKEN.match(text, at)
        if match is None:
            return None
        name, number, op = match.groups()
        if name is not None and name not in scope.value_params:
            return None
        named = named or name is not None
        out.append(template_param_name(name) if name else number or {"/": "//"}.get(op, op))
        at = match.end()
    if not named:
        return None
    return "(" + re.sub(r"\( | \)", lambda x: x.group(0).strip(), " ".join(out)) + ")"


def canonical_loop(s: m.For, scope: Scope, values: dict | None = None):
    """(var, start, stop, step) texts when ``s`` is ``for (int v = a; v < b; v += c)`` with
    ``v`` an int32 the body never assigns; None otherwise. With ``values`` (the locals printed as
    values: name -> initialiser), also ``for (unsigned v = a; v < b; ...)`` whose start and bound
    are constants below 2**31 (``i < pack_size`` with ``const unsigned pack_size = 16 /
    sizeof(T)``): the loop counts in int32 and the caller binds ``v`` as its uint32 value."""
    if not isinstance(s.init, m.DeclStmt) or len(s.init.decls) != 1:
        return None
    d = s.init.decls[0]
    if d.init is None or s.cond is None or s.step is None:
        return None
    if scalar_name(d.type) != "int32" and not (values is not None and scalar_name(d.type) == "uint32"
                                                and _small_constant(d.init, values) is not None
                                                and isinstance(s.cond, m.Binary)
                                                and _small_constant(s.cond.rhs, values) is not None):
        return None
    if scope.placements.get(d.name, "phase") not in ("phase", "kernel_var"):
        return None
    var = d.name
    cond = s.cond
    if not (isinstance(cond, m.Binary) and cond.op in ("<", "<=") and isinstance(cond.lhs, m.Ref)
            and cond.lhs.name == var):
        return None
    step = s.step
    inc = None
    if isinstance(step, m.Unary) and step.op == "++" and isinstance(step.operand, m.Ref) and step.operand.name == var:
        inc = 1
    elif isinstance(step, m.Assign) and step.op == "+=" and isinstance(step.target, m.Ref) \
            and step.target.name == var and isinstance(step.value, m.IntLit) and step.value.value > 0:
        inc = step.value.value
    if inc is None:
        return None
    if any(isinstance(n, m.Call) and n.kind == "device" for n in m.walk(cond.rhs)):
        # C tests the bound at every iteration; a macro's statements would run once, before the
        # loop (the while form retests it: StmtPrinter.open_loop)
        return None
    for node in m.walk(s.body):
        if isinstance(node, m.Assign) and isinstance(node.target, m.Ref) and node.target.name == var:
            return None
        if isinstance(node, m.Unary) and node.op in ("++", "--", "&") and isinstance(node.operand, m.Ref) \
                and node.operand.name == var:
            return None
    for bound in (d.init, cond.rhs):
        # a bound read from memory makes TileLang's CUDA lowering fail ("allow_append_"):
        # such loops keep the while form
        for node in m.walk(bound):
            if isinstance(node, m.Index) or (isinstance(node, m.Ref) and scope.placements.get(node.name)
                                              in ("thread_array", "shared")):
                return None
    printer = ExprPrinter(scope)
    stop_expr = cond.rhs
    if scalar_name(d.type) == "uint32":   # constants (above): counted as int32 literals
        start, stop = str(_small_constant(d.init, values)), str(_small_constant(stop_expr, values))
        if cond.op == "<=":
            stop = str(int(stop) + 1)
        return var, start, stop, str(inc)
    if scalar_name(stop_expr.type) not in ("int32",) or scalar_name(d.init.type) not in ("int32",):
        return None
    start = printer(d.init)
    stop = printer(stop_expr)
    if cond.op == "<=":
        stop = f"{printer.sub(stop_expr, _PREC['+'])} + 1"
    return var, start, stop, str(inc)


def _small_constant(e: m.Expr, values: dict) -> int | None:
    """The value of ``e`` when it is an integer constant in [0, 2**31) (``values``: a local
    printed as a value stands for its initialiser; casts convert as C's do), else None."""
    value = const_value(e, values)
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2 ** 31 else None


#: math functions that cost much more than an operator, named without the ``__``/``h``/``h2``
#: prefix and ``f`` suffix of their CUDA variants (``__expf``, ``hexp``, ``powf``): a value bound to
#: one is computed once (bit counts, rounding, conversions and fma are as cheap as an operator)
_COSTLY_MATH = frozenset({
    "sqrt", "rsqrt", "cbrt", "rcbrt", "pow", "powi", "exp", "exp2", "exp10", "expm1", "log", "log2",
    "log10", "log1p", "logb", "sin", "cos", "tan", "sincos", "sinpi", "cospi", "sincospi", "asin", "acos",
    "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv",
    "erfcinv", "erfcx", "normcdf", "normcdfinv", "lgamma", "tgamma", "hypot", "rhypot", "norm3d",
    "rnorm3d", "norm4d", "rnorm4d", "fmod", "remainder", "remquo", "j0", "j1", "jn", "y0", "y1", "yn",
    "cyl_bessel_i0", "cyl_bessel_i1", "ldexp", "frexp", "modf", "fdivide", "rcp",
})


def _costly_math(callee: str) -> bool:
    name = callee.removeprefix("__").removeprefix("h2").removeprefix("h")
    rounded = re.sub(r"_r[nzud]$", "", name)
    if rounded != name:  # a rounding-mode variant (__fsqrt_rn, __drcp_rz, __fdiv_rn): f/d, the function
        return rounded[1:] in _COSTLY_MATH or rounded[1:] == "div"
    return name in _COSTLY_MATH or name.removesuffix("f") in _COSTLY_MATH


def _computes_functions(e: m.Expr) -> bool:
    """Whether ``e`` calls a math function that costs more than an operator (``pow``, ``exp``,
    ``sqrt``, ...) or a device function (which may call one: s3d's ``LOG(x)`` wraps ``log``). A
    value bound to it and read more than once is kept in a variable: TileLang inlines a bound
    value into each use, and cooling's rates (``pow``, ``exp`` and ``sqrt`` of a temperature,
    read in a 20-step loop) were recomputed at every read, 2.8x slower than the CUDA on the H100
    (s3d's ``ALOGT = LOG(TEMP)``, read in a hundred rates, up to 6x)."""
    return any(isinstance(n, m.Call) and (n.kind == "math" and _costly_math(n.callee) or n.kind == "device")
               for n in m.walk(e))


def _divides(e: m.Expr) -> bool:
    """Whether ``e`` computes an integer division or remainder."""
    return any(isinstance(n, m.Binary) and n.op in ("/", "%") and isinstance(n.type, m.Scalar)
               and scalar_name(n.type) not in (None, "float16", "bfloat16", "float32", "float64")
               for n in m.walk(e))


def _signed_source(e: m.Expr, dtype: str, tir_dtype) -> m.Expr:
    """``e`` without the casts to its unsigned type around a value of ``dtype`` (``(unsigned)i``
    on an int ``i`` is ``i``, read as ``dtype`` again)."""
    while isinstance(e, m.Cast) and tir_dtype(e.operand) == dtype:
        e = e.operand
    return e


def _int_literal(e: m.Expr) -> int | None:
    """The value of an integer literal, seen through its implicit conversion, or of a constant
    integer expression of literals (``BLOCK_SIZE / 2``); else None."""
    if _is_lit_cast(e):
        e = e.operand
    if isinstance(e, m.IntLit):
        return e.value
    value = const_value(e) if isinstance(e, (m.Binary, m.Unary, m.Cast)) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


#: else-if chains of this many tests or more are written flat (StmtPrinter._flat_chain)
LONG_CHAIN = 6


def _else_if_chain(s: m.If) -> tuple[list[m.If], object]:
    """The tests of ``if .. else if .. else ..`` in order, and the final ``else`` (None without one)."""
    branches, other = [s], s.other
    while True:
        if isinstance(other, m.Block) and len(other.stmts) == 1 and isinstance(other.stmts[0], m.If):
            other = other.stmts[0]
        if not isinstance(other, m.If):
            return branches, other
        branches.append(other)
        other = other.other


def _no_effect(e, effects=None) -> bool:
    """Whether evaluating ``e`` changes nothing that is migrated: no store, step, call or volatile
    access (printf and assert's failure call are not migrated: ``assert(c)`` is ``c ? (void)0 :
    __assert_fail(...)``); a math function, or a device function not in ``effects`` (the device
    functions that store or synchronise), computes a value only (``assert(id(lit) < n)``)."""
    for n in m.walk(e):
        if isinstance(n, m.Call) and (n.kind in ("io", "math", "conversion") or (
                effects is not None and n.kind == "device" and n.callee not in effects)):
            continue
        if isinstance(n, (m.Assign, m.Call, m.MethodCall)) or (isinstance(n, m.Unary) and n.op in ("++", "--")):
            return False
        if getattr(getattr(n, "type", None), "volatile", False):
            return False
    return True
