"""A tree's shared array that each thread fills at its own cell, as a register until the tree.

The block-reduction lift (:mod:`.reduce`) takes a tree whose values are stored once, by the
statement before the tree's barrier (``S[tid] = v; __syncthreads(); for (s = ...) ...``). Kernels
often build the value in the cell itself instead:

    S[tid] = 0; __syncthreads();                       // or: if (i < n) S[tid] = a; else S[tid] = 0;
    for (i = tid; i < n; i += blockDim.x) S[tid] += x[i];
    __syncthreads();
    for (s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) S[tid] += S[tid + s]; __syncthreads(); }

Until the tree no thread touches another thread's cell, so the cell is the thread's own
register: this pass rewrites every ``S[tid]`` before the tree's barrier into the local
``S_own`` (declared where the array is first used, holding zero: a cell read before any store
held no value in CUDA either), stores ``S[tid] = S_own`` just before the barrier, and drops the
barriers between the first use and that store, which ordered nothing but the cells (checked: no
other shared array, atomic or call there, and no buffer one stretch stores is read by a later
one). The result is the form :func:`.reduce.plan_block_reduce` already proves. Only the
function's top-level statements are looked at; anything else leaves the function as it is.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import read_roots, stored_roots, strip_casts
from ...ir.visit import Transformer
from ..phases import contains_barrier, is_barrier_call


def _is_sync(st) -> bool:
    return isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Call) and st.expr.callee == "__syncthreads"


def _is_lane(e, lanes: set[str]) -> bool:
    e = strip_casts(e)
    return (isinstance(e, m.Builtin) and e.var == "threadIdx" and e.dim == "x") or \
        (isinstance(e, m.Ref) and e.name in lanes)


def _base_name(e) -> str | None:
    e = strip_casts(e)
    return e.name if isinstance(e, m.Ref) else None


def _refs(stmts, name: str) -> list:
    return [n for st in stmts for n in m.walk(st) if isinstance(n, m.Ref) and n.name == name]


def _cells(stmts, name: str) -> list:
    return [n for st in stmts for n in m.walk(st) if isinstance(n, m.Index) and _base_name(n.base) == name]


class _OwnCell(Transformer):
    def __init__(self, name: str, local: m.Ref) -> None:
        self.name, self.local = name, local

    def leave_Index(self, node: m.Index):
        return self.local if _base_name(node.base) == self.name else node


def _plain_store(st, name: str, lanes: set[str]) -> bool:
    """``S[tid] = v`` with ``v`` not reading ``S``: the form the lift takes as it is."""
    return isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "=" \
        and isinstance(st.expr.target, m.Index) and _base_name(st.expr.target.base) == name \
        and _is_lane(st.expr.target.index, lanes) and not _refs((st.expr.value,), name)


def _tree_array(loop, shared: dict) -> str | None:
    """The one shared array a top-level loop around barriers indexes."""
    names = {n for n in (_base_name(x.base) for x in m.walk(loop) if isinstance(x, m.Index)) if n in shared}
    return next(iter(names)) if len(names) == 1 else None


def own_cells(fn: m.Function, lanes: set[str]) -> m.Function:
    """``fn`` with the own-cell fills of its trees' arrays in registers (module doc); ``fn``
    itself where there are none, or where the rewriting is not proven."""
    if fn.body is None:
        return fn
    shared = {d.name: d for d in m.walk(fn.body) if isinstance(d, m.VarDecl)
              and d.storage in ("shared", "extern_shared")}
    if not shared:
        return fn
    stmts = list(fn.body.stmts)
    for k, loop in enumerate(stmts):
        if k == 0 or not isinstance(loop, m.For) or not contains_barrier(loop) or not _is_sync(stmts[k - 1]):
            continue
        name = _tree_array(loop, shared)
        if name is None:
            continue
        rewritten = _rewrite(stmts[:k - 1], name, shared, lanes)
        if rewritten is not None:
            body = dataclasses.replace(fn.body, stmts=tuple(rewritten + stmts[k - 1:]))
            return dataclasses.replace(fn, body=body)
    return fn


def _rewrite(prefix: list, name: str, shared: dict, lanes: set[str]) -> list | None:
    users = [i for i, st in enumerate(prefix) if _refs((st,), name)]
    if not users:
        return None
    first = users[0]
    if users == [len(prefix) - 1] and _plain_store(prefix[-1], name, lanes):
        return None  # stored once before the tree: the lift's own form
    element = shared[name].type
    if not (isinstance(element, m.Array) and isinstance(element.element, m.Scalar)) \
            or element.element.dtype in ("bool", "void"):
        return None
    dtype = element.element
    span_stmts = prefix[first:]
    cells = _cells(span_stmts, name)
    if len(cells) != len(_refs(span_stmts, name)) or not all(_is_lane(c.index, lanes) for c in cells):
        return None  # another thread's cell, or the array used other than by element
    if any(isinstance(n, m.Unary) and n.op == "&" and isinstance(strip_casts(n.operand), m.Index)
           and _base_name(strip_casts(n.operand).base) == name for st in span_stmts for n in m.walk(st)):
        return None  # a cell's address taken (an atomic on it): not a register
    # the barriers between the first use and the tree's: top-level, ordering only the cells
    stretches, current = [], []
    for st in span_stmts:
        if _is_sync(st):
            stretches.append(current)
            current = []
        elif contains_barrier(st) or any(is_barrier_call(n) for n in m.walk(st)):
            return None
        else:
            current.append(st)
    stretches.append(current)
    if len(stretches) > 1:
        rest = [st for s in stretches for st in s]
        if any(isinstance(n, m.Call) and n.kind not in ("math", "conversion") for st in rest for n in m.walk(st)):
            return None
        if any(isinstance(n, m.Ref) and n.kind == "shared" and n.name != name for st in rest for n in m.walk(st)):
            return None
        written: set[str] = set()
        for s in stretches:
            if "?" in written or read_roots(s) & written:
                return None
            written |= stored_roots(s) - {name}
    taken = {n.name for st in prefix for n in m.walk(st) if isinstance(n, (m.Ref, m.VarDecl))}
    local_name = f"{name}_own"
    while local_name in taken or local_name in shared:
        local_name += "_"
    span = span_stmts[0].span
    local = m.Ref(local_name, "local", dtype, span)
    zero = m.FloatLit(0.0, "0.0", dtype, span) if dtype.dtype.startswith(("float", "bfloat", "half")) \
        else m.IntLit(0, "0", dtype, span)
    decl = m.DeclStmt((m.VarDecl(local_name, dtype, "local", False, zero, span),), span)
    owned = _OwnCell(name, local).transform(tuple(st for s in stretches for st in s))
    lane = m.Builtin("threadIdx", "x", m.Scalar("uint32"), span)
    store = m.ExprStmt(m.Assign("=", m.Index(m.Ref(name, "shared", shared[name].type, span), lane, dtype, span),
                                local, dtype, span), span)
    return prefix[:first] + [decl] + list(owned) + [store]
