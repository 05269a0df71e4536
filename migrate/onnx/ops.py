"""The operator table: per ONNX op type, the kind of kernel it becomes and, for elementwise ops,
the TileLang expression of one element.

Kinds: ``map`` (elementwise: fused into the map, GEMM or convolution epilogue of its producer),
``matmul`` (``MatMul``/``Gemm``: a GEMM tile with the epilogue), ``conv`` (an implicit GEMM with
the epilogue), ``pool``, ``reduce``, ``softmax``, ``layernorm``, ``transpose``/``concat``/``slice``/
``gather`` (maps that read their input elsewhere), ``view`` (``Reshape`` and friends: a torch view
of the same memory, no kernel). An op type not in the table, or a node whose attributes or
types the row's ``check`` refuses, falls back to torch (:mod:`.fallback`) with the reason.

A ``map`` row's ``expr(a, d)`` gets the operands' TileLang expressions ``a`` and the
:class:`ExprCtx` ``d`` (output and operand dtypes, attributes) and returns the expression.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

FLOATS = ("float16", "float32", "float64")
INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
#: element types a kernel of this slice computes (bfloat16 and bool are not compiled by TileLang's C target)
NUMERIC = FLOATS + INTS


@dataclass(frozen=True)
class ExprCtx:
    out: str                  # output dtype
    ins: tuple[str, ...]      # operand dtypes
    attrs: dict

    def lit(self, value, dtype: str | None = None) -> str:
        return literal(value, dtype or self.out)


def literal(value, dtype: str) -> str:
    """A TileLang literal of ``dtype``."""
    v = float(value) if dtype in FLOATS else int(value)
    if dtype in FLOATS:
        if v != v:
            return f"T.Cast(T.{dtype}, T.float32(float('nan')))"
        if v in (float("inf"), float("-inf")):
            return ("" if v > 0 else "-") + f"T.infinity(T.{dtype})"
        return f"T.{dtype}({v!r})"
    return f"T.{dtype}({v})"


def _cast(expr: str, frm: str, to: str) -> str:
    return expr if frm == to else f"T.Cast(T.{to}, {expr})"


def _div(a, d):
    if d.out in FLOATS:
        return f"{a[0]} / {a[1]}"
    return f"T.truncdiv({a[0]}, {a[1]})"   # ONNX integer Div truncates, as C does


def _pow(a, d):
    if d.out in FLOATS:
        return f"T.pow({a[0]}, {_cast(a[1], d.ins[1], d.out)})"
    wide = "float64"
    return f"T.Cast(T.{d.out}, T.pow({_cast(a[0], d.ins[0], wide)}, {_cast(a[1], d.ins[1], wide)}))"


def _gelu(a, d):
    x = a[0]
    if d.attrs.get("approximate", "none") == "tanh":
        inner = f"{d.lit(0.7978845608028654)} * ({x} + {d.lit(0.044715)} * {x} * {x} * {x})"
        return f"{d.lit(0.5)} * {x} * ({d.lit(1)} + T.tanh({inner}))"
    return f"{d.lit(0.5)} * {x} * ({d.lit(1)} + T.erf({x} * {d.lit(0.7071067811865476)}))"


def _batchnorm(a, d):
    eps = d.lit(float(d.attrs.get("epsilon", 1e-5)))
    return f"({a[0]} - {a[3]}) / T.sqrt({a[4]} + {eps}) * {a[1]} + {a[2]}"


def _fold(fn):
    def expr(a, d):
        out = a[0]
        for b in a[1:]:
            out = f"T.{fn}({out}, {b})"
        return out
    return expr


@dataclass(frozen=True)
class OpRule:
    kind: str
    expr: Callable | None = None
    #: the dtypes it computes; None: any of NUMERIC
    dtypes: tuple[str, ...] | None = None
    note: str = ""
    #: input positions that are boolean (Where's condition)
    bool_inputs: tuple[int, ...] = ()
    #: input positions that are per-channel vectors of an NCHW input (indexed by the channel)
    channel_inputs: tuple[int, ...] = ()
    #: input positions the kernel does not read (a shape, which the output's shape already says)
    shape_inputs: tuple[int, ...] = ()


def _e(expr, dtypes=None):
    return OpRule("map", expr, dtypes)


OPS: dict[str, OpRule] = {
    # -- elementwise: one expression per element, fused into their producer's map ----------------
    "Add": _e(lambda a, d: f"{a[0]} + {a[1]}"),
    "Sub": _e(lambda a, d: f"{a[0]} - {a[1]}"),
    "Mul": _e(lambda a, d: f"{a[0]} * {a[1]}"),
    "Div": _e(_div),
    "Pow": _e(_pow),
    "Neg": _e(lambda a, d: f"-{a[0]}", FLOATS + ("int8", "int16", "int32", "int64")),
    "Abs": _e(lambda a, d: f"T.max({a[0]}, -{a[0]})", FLOATS + ("int8", "int16", "int32", "int64")),
    "Sqrt": _e(lambda a, d: f"T.sqrt({a[0]})", FLOATS),
    "Exp": _e(lambda a, d: f"T.exp({a[0]})", FLOATS),
    "Log": _e(lambda a, d: f"T.log({a[0]})", FLOATS),
    "Reciprocal": _e(lambda a, d: f"{d.lit(1)} / {a[0]}", FLOATS),
    "Relu": _e(lambda a, d: f"T.max({a[0]}, {d.lit(0)})"),
    "Sigmoid": _e(lambda a, d: f"{d.lit(1)} / ({d.lit(1)} + T.exp(-{a[0]}))", FLOATS),
    "Tanh": _e(lambda a, d: f"T.tanh({a[0]})", FLOATS),
    "Erf": _e(lambda a, d: f"T.erf({a[0]})", FLOATS),
    "Gelu": _e(_gelu, FLOATS),
    "Max": _e(_fold("max")),
    "Min": _e(_fold("min")),
    "Identity": _e(lambda a, d: a[0]),
    "Cast": _e(lambda a, d: _cast(a[0], d.ins[0], d.out)),
    "BatchNormalization": OpRule("map", _batchnorm, FLOATS, channel_inputs=(1, 2, 3, 4)),
    "Where": OpRule("map", lambda a, d: f"T.if_then_else({a[0]}, {a[1]}, {a[2]})", bool_inputs=(0,)),
    # a broadcast copy: the input read broadcast to the output's shape, as every map reads its inputs
    "Expand": OpRule("map", lambda a, d: a[0], shape_inputs=(1,)),
    # -- GEMM tiles with an elementwise epilogue ---------------------------------------------------
    "MatMul": OpRule("matmul", dtypes=FLOATS + ("int32", "int64")),
    "Gemm": OpRule("matmul", dtypes=FLOATS + ("int32", "int64")),
    "Conv": OpRule("conv", dtypes=FLOATS),
    "MaxPool": OpRule("pool", dtypes=FLOATS),
    "AveragePool": OpRule("pool", dtypes=FLOATS),
    # -- reductions ----------------------------------------------------------------------------------
    "ReduceSum": OpRule("reduce", dtypes=FLOATS + ("int32", "int64")),
    "ReduceMean": OpRule("reduce", dtypes=FLOATS + ("int32", "int64")),
    "ReduceMax": OpRule("reduce", dtypes=FLOATS + ("int32", "int64")),
    "GlobalAveragePool": OpRule("reduce", dtypes=FLOATS),
    "Softmax": OpRule("softmax", dtypes=FLOATS),
    "LayerNormalization": OpRule("layernorm", dtypes=FLOATS),
    # -- data movement ---------------------------------------------------------------------------------
    "Transpose": OpRule("transpose"),
    "Concat": OpRule("concat"),
    "Slice": OpRule("slice"),
    "Gather": OpRule("gather"),
    "Reshape": OpRule("view", dtypes=()),
    "Flatten": OpRule("view", dtypes=()),
    "Squeeze": OpRule("view", dtypes=()),
    "Unsqueeze": OpRule("view", dtypes=()),
}

#: reduction identities and combiners per op type: (TileLang reduce, identity, finish)
REDUCERS = {
    "ReduceSum": ("reduce_sum", 0, None),
    "ReduceMean": ("reduce_sum", 0, "mean"),
    "ReduceMax": ("reduce_max", "-inf", None),
    "GlobalAveragePool": ("reduce_sum", 0, "mean"),
}
