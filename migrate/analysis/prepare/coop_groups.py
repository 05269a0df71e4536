"""Cooperative groups in terms of the CUDA builtins they stand for.

``cg::thread_block`` and ``cg::thread_block_tile<N>`` objects made by ``this_thread_block()`` and
``tiled_partition<N>(block)`` are replaced by the index arithmetic and intrinsics they wrap, so
the rest of the pipeline sees plain CUDA:

- block: ``thread_rank()`` → the linear thread index, ``size()``/``num_threads()`` → the block's
  thread count, ``sync()`` → ``__syncthreads()``;
- tile of N: ``thread_rank()`` → ``rank % N``, ``meta_group_rank()`` → ``rank / N``,
  ``meta_group_size()``, ``size()`` → N, ``sync()`` → ``__syncwarp()``, ``shfl*(v, x)`` →
  ``__shfl*_sync(0xffffffff, v, x, N)``, ``any/all/ballot``;
- ``cg::reduce(tile, v, op)`` → an xor butterfly over the tile (every lane gets the result, as
  with ``cg::reduce``), with ``plus``, ``less``, ``greater``, ``bit_and/or/xor``.

Anything else about a group raises :class:`GroupError`.
"""
from __future__ import annotations

import dataclasses
import re

from ...ir import model as m
from ...ir.span import Span
from .inline import Inliner

U32 = m.Scalar("uint32")
I32 = m.Scalar("int32")


class GroupError(Exception):
    def __init__(self, message: str, span: Span | None = None) -> None:
        super().__init__(message)
        self.span = span


def _lit(value: int, span: Span, t=U32) -> m.IntLit:
    return m.IntLit(value, str(value), t, span)


def _bin(op: str, a, b, span, t=U32) -> m.Binary:
    return m.Binary(op, a, b, t, span)


def _dim(var: str, d: str, span: Span) -> m.Builtin:
    return m.Builtin(var, d, U32, span)


def linear_rank(span: Span) -> m.Expr:
    """threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)"""
    inner = _bin("+", _dim("threadIdx", "y", span),
                 _bin("*", _dim("blockDim", "y", span), _dim("threadIdx", "z", span), span), span)
    return _bin("+", _dim("threadIdx", "x", span), _bin("*", _dim("blockDim", "x", span), inner, span), span)


def block_size(span: Span) -> m.Expr:
    return _bin("*", _bin("*", _dim("blockDim", "x", span), _dim("blockDim", "y", span), span),
                _dim("blockDim", "z", span), span)


_GROUP_TYPE = re.compile(r"cooperative_groups::(?:__v1::)?(thread_block_tile<(\d+)[^>]*>|thread_block(?!\w))")
_SHFL = {"shfl": "__shfl_sync", "shfl_down": "__shfl_down_sync", "shfl_up": "__shfl_up_sync",
         "shfl_xor": "__shfl_xor_sync"}
_VOTE = {"any": "__any_sync", "all": "__all_sync", "ballot": "__ballot_sync"}
_OPS = {"plus": "+", "bit_and": "&", "bit_or": "|", "bit_xor": "^"}


def group_kind(ctype) -> int | None:
    """0 for a thread block, N for a tile of N threads, None for anything else."""
    text = str(ctype)
    match = _GROUP_TYPE.search(text)
    if match is None:
        return None
    return int(match.group(2)) if match.group(2) else 0


class _Lower(Inliner):
    """Statement-level part: ``cg::reduce`` calls become butterfly loops (hoisted first)."""

    def __init__(self, groups: dict[str, int]) -> None:
        super().__init__({}, {"cooperative_groups::reduce"})
        self.groups = groups

    def result_base(self, call) -> str:
        return "reduced"

    def expand(self, call: m.Call, result: m.Ref | None, depth) -> list:
        if result is None or len(call.args) != 3:
            raise GroupError("cg::reduce must give its value to a variable", call.span)
        size = self.tile_size(call.args[0])
        op_name = _functor(call.args[2])
        span = call.span
        t = result.type
        width = _lit(size, span, I32)
        offset = m.Ref(f"{result.name}_offset", "local", I32, span)
        shfl = m.Call("__shfl_xor_sync", (_lit(0xFFFFFFFF, span), result, offset, width), "warp", (), t, span)
        if op_name in _OPS:
            combined = m.Binary(_OPS[op_name], result, shfl, t, span)
        elif op_name in ("less", "greater"):
            cmp = m.Binary("<" if op_name == "less" else ">", shfl, result, m.Scalar("bool"), span)
            combined = m.Ternary(cmp, shfl, result, t, span)
        else:
            raise GroupError(f"cg::reduce with '{op_name}'", span)
        init = m.DeclStmt((m.VarDecl(offset.name, I32, "local", False, _lit(size // 2, span, I32), span),), span)
        loop = m.For(init, m.Binary(">", offset, _lit(0, span, I32), m.Scalar("bool"), span),
                     m.Assign(">>=", offset, _lit(1, span, I32), I32, span),
                     m.Block((m.ExprStmt(m.Assign("=", result, combined, t, span), span),), span), (), span)
        return [m.ExprStmt(m.Assign("=", result, call.args[1], t, span), span), loop]

    def tile_size(self, e) -> int:
        e = _unwrap(e)
        if isinstance(e, m.Ref) and self.groups.get(e.name, 0) > 0:
            return self.groups[e.name]
        raise GroupError("cg::reduce over something other than a thread_block_tile", e.span)


def _unwrap(e):
    """A group passed on: through casts and copy constructions to the variable."""
    while isinstance(e, m.Cast) or (isinstance(e, m.Call) and e.kind == "constructor" and len(e.args) == 1):
        e = e.operand if isinstance(e, m.Cast) else e.args[0]
    return e


def _functor(e) -> str:
    while isinstance(e, m.Cast):
        e = e.operand
    if isinstance(e, m.Call):
        return e.callee.rsplit("::", 1)[-1].split("<", 1)[0]
    return str(e.type).rsplit("::", 1)[-1].split("<", 1)[0]


def lower_cooperative_groups(fn: m.Function) -> m.Function:
    """``fn`` with its thread-block and tile objects replaced by builtins (see the module doc)."""
    if fn.body is None:
        return fn
    groups: dict[str, int] = {}
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl):
            kind = group_kind(node.type)
            if kind is not None:
                groups[node.name] = kind
    uses_cg = groups or any(isinstance(n, m.Call) and n.kind == "cg" for n in m.walk(fn.body))
    if not uses_cg:
        return fn
    lowered = _Lower(groups)
    body = dataclasses.replace(fn.body, stmts=lowered.stmts(fn.body.stmts))

    def expr(e):
        e = m.map_children(e, expr)
        if isinstance(e, m.MethodCall) and isinstance(e.obj, m.Ref) and e.obj.name in groups:
            return _method(groups[e.obj.name], e)
        if isinstance(e, m.Call) and e.callee in ("cooperative_groups::sync",) and e.args \
                and isinstance(e.args[0], m.Ref) and e.args[0].name in groups:
            return _method(groups[e.args[0].name], m.MethodCall(e.args[0], "sync", (), e.type, e.span))
        return e

    def stmt(s):
        if isinstance(s, m.DeclStmt):
            kept = tuple(d for d in s.decls if d.name not in groups)
            if len(kept) != len(s.decls):
                return m.DeclStmt(tuple(dataclasses.replace(d, init=expr(d.init) if d.init else None)
                                        for d in kept), s.span) if kept else m.Empty(s.span)
        if isinstance(s, m.ExprStmt):
            return dataclasses.replace(s, expr=expr(s.expr))
        out = m.map_children(s, lambda c: stmt(c) if _is_stmt(c) else expr(c))
        return out

    body = stmt(body)
    for node in m.walk(body):
        if isinstance(node, m.Ref) and node.name in groups:
            raise GroupError(f"cooperative group '{node.name}' used as a value", node.span)
        if isinstance(node, m.Call) and node.kind == "cg":
            raise GroupError(f"'{node.callee}' has no lowering", node.span)
    return dataclasses.replace(fn, body=body)


def _is_stmt(node) -> bool:
    return isinstance(node, (m.DeclStmt, m.ExprStmt, m.Block, m.If, m.For, m.While, m.DoWhile, m.Switch,
                             m.Case, m.Break, m.Continue, m.Return, m.Empty, m.UnsupportedStmt, m.VarDecl))


def _method(size: int, e: m.MethodCall) -> m.Expr:
    span = e.span
    rank = linear_rank(span)
    if size == 0:  # thread block
        if e.method == "thread_rank":
            return rank
        if e.method in ("size", "num_threads"):
            return block_size(span)
        if e.method == "sync":
            return m.Call("__syncthreads", (), "sync", (), m.Scalar("void"), span)
        raise GroupError(f"thread_block::{e.method}()", span)
    n = _lit(size, span)
    if e.method == "thread_rank":
        return _bin("%", rank, n, span)
    if e.method == "meta_group_rank":
        return _bin("/", rank, n, span)
    if e.method == "meta_group_size":
        return _bin("/", _bin("-", _bin("+", block_size(span), n, span), _lit(1, span), span), n, span)
    if e.method in ("size", "num_threads"):
        return n
    if e.method == "sync":
        return m.Call("__syncwarp", (), "sync", (), m.Scalar("void"), span)
    full = _lit(0xFFFFFFFF, span)
    if e.method in _SHFL:
        value, lane = e.args[0], e.args[1]
        return m.Call(_SHFL[e.method], (full, value, lane, _lit(size, span, I32)), "warp", (), e.type, span)
    if e.method in _VOTE and size == 32:
        return m.Call(_VOTE[e.method], (full, e.args[0]), "warp", (), e.type, span)
    raise GroupError(f"thread_block_tile<{size}>::{e.method}()", span)
