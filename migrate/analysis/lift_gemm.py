"""Recognise a GEMM in a 2-D map and lift it to a tiled, pipelined TileLang GEMM.

A map (see :mod:`.lift_map`) whose element ``(row, col)`` runs

    acc = 0;  for (k = 0; k < K; ++k) acc += X(A[ia]) * Y(B[ib]);  <stores using acc>

with ``ia`` affine in ``row`` and ``k`` and ``ib`` affine in ``k`` and ``col`` (row-major or
transposed, uniform leading dimensions and offsets) computes one element of ``C = A·B``. The
tile form stages ``block_M × block_K`` and ``block_K × block_N`` tiles of A and B in shared
memory (zero-padded past the bounds the CUDA code checks) inside a ``T.Pipelined`` loop over K,
accumulates in a register fragment, and runs the CUDA statements after the loop once per element
with ``acc`` taken from the fragment.

By default the accumulation is explicit multiply-adds in ascending k, the order of the CUDA loop,
so fp32 stays fp32. With ``allow_tf32`` (fp32 inputs) or for half-precision inputs the factory
can use ``T.gemm`` on tensor cores instead; fp32 inputs then compute in tf32, which is reported
as its own tolerance class.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from ..parse import model as m
from .lift_map import _strip_casts
from .loop_ir import TileMap


@dataclass(frozen=True)
class GemmOperand:
    buffer: str
    index: m.Expr      # the CUDA index expression
    load: m.Index      # the load node inside the product
    factor: m.Expr     # the product's factor (the load, possibly converted)
    transposed: bool   # A: k-major (A[k * lda + row]); B: n-major (B[col * ldb + k])
    dtype: m.CType


@dataclass(frozen=True)
class GemmPlan:
    tile: TileMap
    acc: str                 # the accumulator local
    acc_type: m.CType
    k_var: str
    k_bound: m.Expr
    a: GemmOperand
    b: GemmOperand
    row_names: tuple[str, ...]  # locals equal to the row (y) index
    col_names: tuple[str, ...]
    prologue: tuple[m.Stmt, ...]  # statements before the guard (declarations)
    epilogue: tuple[m.Stmt, ...]  # statements after the k loop, inside the guard
    guard: Optional[m.Expr]
    span: object  # the k loop's
    guard_span: object = None


class NotGemm(Exception):
    pass


def _linear(e, names: dict[str, str]) -> dict[str, object] | None:
    """``e`` as {"row"|"col"|"k"|"1": coefficient} where the coefficient is an int or a
    uniform expression (kept as m.Expr); None when not affine in those variables."""
    e = _strip_casts(e)
    if isinstance(e, m.Ref) and e.name in names:
        return {names[e.name]: 1}
    if isinstance(e, m.Builtin) and e.var == "globalIdx":
        return {{"x": "col", "y": "row"}.get(e.dim, "?"): 1}
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        lhs, rhs = _linear(e.lhs, names), _linear(e.rhs, names)
        if lhs is None or rhs is None or e.op == "-" and set(rhs) - {"1"}:
            return None
        out = dict(lhs)
        for key, v in rhs.items():
            if key in out:
                if key != "1":
                    return None
                out[key] = ("+", out[key], v)
            else:
                out[key] = v if e.op == "+" else ("-", v)
        return out
    if isinstance(e, m.Binary) and e.op == "*":
        for var_side, coef_side in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if _uniform_expr(coef_side, names):
                inner = _linear(var_side, names)
                if inner is not None and len(inner) == 1 and "1" not in inner and inner[next(iter(inner))] == 1:
                    return {next(iter(inner)): coef_side}
        return None
    if _uniform_expr(e, names):
        return {"1": e}
    return None


def _uniform_expr(e, names) -> bool:
    for n in m.walk(e):
        if isinstance(n, m.Ref) and (n.name in names or n.kind not in ("param", "template")):
            return False
        if isinstance(n, (m.Builtin,)) and n.var in ("globalIdx", "threadIdx", "blockIdx"):
            return False
        if isinstance(n, (m.Index, m.Call, m.Assign)):
            return False
    return True


def _product(stmt, acc: str):
    """(X, Y) when ``stmt`` is ``acc += X * Y``, ``acc = acc + X * Y`` or ``acc = fmaf(X, Y, acc)``."""
    if not isinstance(stmt, m.ExprStmt) or not isinstance(stmt.expr, m.Assign):
        return None
    a = stmt.expr
    if not (isinstance(a.target, m.Ref) and a.target.name == acc):
        return None
    v = _strip_casts(a.value)
    if a.op == "+=" and isinstance(v, m.Binary) and v.op == "*":
        return v.lhs, v.rhs
    if a.op == "=" and isinstance(v, m.Binary) and v.op == "+":
        lhs, rhs = _strip_casts(v.lhs), _strip_casts(v.rhs)
        if isinstance(lhs, m.Ref) and lhs.name == acc and isinstance(rhs, m.Binary) and rhs.op == "*":
            return rhs.lhs, rhs.rhs
    if a.op == "=" and isinstance(v, m.Call) and v.callee in ("fmaf", "fma", "__fmaf_rn") and len(v.args) == 3:
        last = _strip_casts(v.args[2])
        if isinstance(last, m.Ref) and last.name == acc:
            return v.args[0], v.args[1]
    return None


def _load_of(factor):
    """The single buffer load inside a product factor (through casts and conversions)."""
    loads = [n for n in m.walk(factor) if isinstance(n, m.Index)]
    if len(loads) != 1:
        return None
    node = _strip_casts(factor)
    while isinstance(node, m.Call) and node.kind == "conversion" and len(node.args) == 1:
        node = _strip_casts(node.args[0])
    if node is not loads[0]:
        return None
    base = _strip_casts(loads[0].base)
    return loads[0] if isinstance(base, m.Ref) and base.kind == "param" else None


def _is_zero(e) -> bool:
    e = _strip_casts(e)
    return (isinstance(e, m.FloatLit) and e.value == 0.0) or (isinstance(e, m.IntLit) and e.value == 0)


def plan_gemm(tile: TileMap) -> GemmPlan:
    """The GEMM in a lifted 2-D map, or :class:`NotGemm` with the reason."""
    if tuple(tile.dims) != ("x", "y") or tile.extents:
        raise NotGemm("not a 2-D map over the launch grid")
    stmts = list(tile.stmts)
    names: dict[str, str] = {}
    prologue = []
    while stmts and isinstance(stmts[0], m.DeclStmt):
        for d in stmts[0].decls:
            init = _strip_casts(d.init) if d.init is not None else None
            if isinstance(init, m.Builtin) and init.var == "globalIdx":
                names[d.name] = {"x": "col", "y": "row"}[init.dim]
        prologue.append(stmts.pop(0))
    others = [d.name for st in prologue for d in st.decls if d.name not in names]
    if others:
        raise NotGemm(f"'{others[0]}' is computed before the guard")
    guard, guard_span = None, tile.span
    if len(stmts) == 1 and isinstance(stmts[0], m.If) and stmts[0].other is None:
        guard, guard_span = stmts[0].cond, stmts[0].span
        stmts = list(stmts[0].then.stmts if isinstance(stmts[0].then, m.Block) else (stmts[0].then,))
    if len(stmts) < 3 or not isinstance(stmts[0], m.DeclStmt) or len(stmts[0].decls) != 1:
        raise NotGemm("no accumulator declared before a loop")
    acc_decl = stmts[0].decls[0]
    if acc_decl.init is None or not _is_zero(acc_decl.init) or not isinstance(acc_decl.type, m.Scalar):
        raise NotGemm("the accumulator does not start at zero")
    loop = stmts[1]
    if not isinstance(loop, m.For) or not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1:
        raise NotGemm("no k loop after the accumulator")
    kd = loop.init.decls[0]
    if kd.init is None or not _is_zero(kd.init):
        raise NotGemm("the k loop does not start at 0")
    cond = _strip_casts(loop.cond) if loop.cond is not None else None
    if not (isinstance(cond, m.Binary) and cond.op == "<" and isinstance(_strip_casts(cond.lhs), m.Ref)
            and _strip_casts(cond.lhs).name == kd.name and _uniform_expr(cond.rhs, names)):
        raise NotGemm("the k loop bound is not uniform")
    step = loop.step
    unit = (isinstance(step, m.Unary) and step.op == "++") or (
        isinstance(step, m.Assign) and step.op == "+=" and isinstance(_strip_casts(step.value), m.IntLit)
        and _strip_casts(step.value).value == 1)
    if not unit:
        raise NotGemm("the k loop does not step by one")
    body = loop.body.stmts if isinstance(loop.body, m.Block) else (loop.body,)
    if len(body) != 1:
        raise NotGemm("the k loop does more than one multiply-add")
    prod = _product(body[0], acc_decl.name)
    if prod is None:
        raise NotGemm("the k loop body is not acc += x * y")
    names[kd.name] = "k"
    operands = []
    for factor in prod:
        load = _load_of(factor)
        if load is None:
            raise NotGemm("a factor is not one buffer load")
        lin = _linear(load.index, names)
        if lin is None or "?" in lin:
            raise NotGemm("a load index is not affine in row, col and k")
        operands.append((factor, load, lin))
    (fa, la, lina), (fb, lb, linb) = operands
    if "col" in lina or "row" in linb:
        (fa, la, lina), (fb, lb, linb) = (fb, lb, linb), (fa, la, lina)
    if set(lina) - {"1"} != {"row", "k"} or set(linb) - {"1"} != {"k", "col"}:
        raise NotGemm("the loads are not A[row, k] and B[k, col]")
    if not (lina["k"] == 1 or lina["row"] == 1) or not (linb["col"] == 1 or linb["k"] == 1):
        raise NotGemm("neither index of an operand is contiguous")
    a_t = lina["k"] != 1  # A[k * lda + row]
    b_t = linb["col"] != 1  # B[col * ldb + k]
    epilogue = tuple(stmts[2:])
    for st in epilogue:
        if any(isinstance(n, m.Ref) and n.name == kd.name for n in m.walk(st)):
            raise NotGemm("the loop variable is used after the loop")
    a = GemmOperand(_strip_casts(la.base).name, la.index, la, fa, a_t, la.type)
    b = GemmOperand(_strip_casts(lb.base).name, lb.index, lb, fb, b_t, lb.type)
    return GemmPlan(tile, acc_decl.name, acc_decl.type, kd.name, cond.rhs, a, b,
                    tuple(n for n, v in names.items() if v == "row"),
                    tuple(n for n, v in names.items() if v == "col"),
                    tuple(prologue), epilogue, guard, loop.span, guard_span)
