"""Shared-memory trees whose threads carry their partial sum in a register (miniFE's
``final_reduce``), rewritten to the tree :mod:`.reduce` lifts.

    S[tid] = acc;
    for (s = N / 2; s > 0; s /= 2) { __syncthreads(); if (tid < s) { acc += S[tid + s]; S[tid] = acc; } }
    if (tid == 0) out = acc;

Every thread's ``acc`` equals its cell ``S[tid]`` throughout (each step stores the new ``acc``
there), so the loop is the tree ``if (tid < s) S[tid] += S[tid + s]`` with its barrier moved
from before each step to after it (the barrier before the first step orders the stores of
``S[tid] = acc``; thread 0 reads its own register after the last step, which needs none), and
thread 0's ``acc`` after it is ``S[0]``. Only thread 0's ``acc`` holds the total: a kernel that
reads ``acc`` anywhere else after the loop is left alone.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.loops import Barrier, Phase, UniformIf, UniformLoop
from ...ir.visit import Transformer


def carried_trees(regions, lanes: set, is_lane, halving, is_lane_zero, later=()) -> tuple:
    """``regions`` with each register-carried tree (``[first, loop, last]``) rewritten to
    ``[first, barrier, tree, last]`` (``acc`` read as ``S[0]`` under ``if (tid == 0)``)."""
    rs = list(regions)
    out: list = []
    i = 0
    while i < len(rs):
        window = rs[i:i + 3]
        rewritten = _rewrite(window, lanes, is_lane, halving, is_lane_zero, tuple(rs[i + 3:]) + tuple(later)) \
            if len(window) == 3 else None
        if rewritten is not None:
            out.extend(rewritten)
            i += 3
            continue
        r = rs[i]
        if isinstance(r, UniformIf) and r.predicate is None:
            rest = tuple(rs[i + 1:]) + tuple(later)
            r = dataclasses.replace(r, then=carried_trees(r.then, lanes, is_lane, halving, is_lane_zero, rest),
                                    other=carried_trees(r.other, lanes, is_lane, halving, is_lane_zero, rest))
        out.append(r)
        i += 1
    return tuple(out)


def _rewrite(window, lanes, is_lane, halving, is_lane_zero, later):
    first, loop, last = window
    if not (isinstance(first, Phase) and isinstance(loop, UniformLoop) and isinstance(last, Phase) and first.stmts):
        return None
    found = halving(loop)
    if found is None:
        return None
    step_var, _size = found
    body = [b for b in loop.body if not (isinstance(b, Phase) and not b.stmts)]
    if len(body) != 2 or not isinstance(body[0], Barrier) or not isinstance(body[1], Phase) \
            or len(body[1].stmts) != 1:
        return None
    step = _step(body[1].stmts[0], lanes, is_lane, step_var)
    if step is None:
        return None
    shared, acc, cond = step
    store = first.stmts[-1]
    if not (isinstance(store, m.ExprStmt) and isinstance(store.expr, m.Assign) and store.expr.op == "="
            and _cell(store.expr.target, shared, lanes, is_lane)
            and isinstance(strip_casts(store.expr.value), m.Ref) and strip_casts(store.expr.value).name == acc):
        return None
    # after the loop only thread 0 reads acc: inside the leading ``if (tid == 0)`` of ``last``
    reads_acc = _reads(acc)
    final = []
    for k, st in enumerate(last.stmts):
        if isinstance(st, m.If) and st.other is None and is_lane_zero(st.cond, lanes):
            final.append(st)
            continue
        if reads_acc(st):
            return None
    if any(reads_acc(n) for r in later for n in _region_stmts(r)):
        return None
    if not any(reads_acc(st) for st in final):
        return None
    if any(isinstance(n, m.Assign) and isinstance(strip_casts(n.target), m.Ref) and strip_casts(n.target).name == acc
           or isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--", "&") and reads_acc(n.operand)
           for st in final for n in m.walk(st)):
        return None  # thread 0 changes its register: not a read of the total
    cell0 = m.Index(m.Ref(shared.name, shared.kind, shared.type, shared.span),
                    m.IntLit(0, "0", m.Scalar("int32"), shared.span), store.expr.target.type, shared.span)
    sub = _Acc(acc, cell0)
    new_last = dataclasses.replace(last, stmts=tuple(
        dataclasses.replace(st, then=sub.transform(st.then)) if any(st is f for f in final) else st
        for st in last.stmts))
    target = m.Index(m.Ref(shared.name, shared.kind, shared.type, shared.span), cond.lhs, store.expr.target.type,
                     cond.span)
    partner = m.Index(m.Ref(shared.name, shared.kind, shared.type, shared.span),
                      m.Binary("+", cond.lhs, cond.rhs, cond.lhs.type, cond.span), store.expr.target.type, cond.span)
    tree_if = m.If(cond, m.ExprStmt(m.Assign("+=", target, partner, target.type, cond.span), cond.span), None,
                   body[1].stmts[0].span)
    tree = dataclasses.replace(loop, body=(Phase((tree_if,), body[1].index, body[1].span), body[0]))
    return [first, Barrier(loop.span), tree, new_last]


def _step(st, lanes, is_lane, step_var):
    """(S, acc, the condition) when ``st`` is ``if (tid < s) { acc += S[tid + s]; S[tid] = acc; }``."""
    if not isinstance(st, m.If) or st.other is not None:
        return None
    c = strip_casts(st.cond)
    if not (isinstance(c, m.Binary) and c.op == "<" and is_lane(c.lhs, lanes)
            and isinstance(strip_casts(c.rhs), m.Ref) and strip_casts(c.rhs).name == step_var):
        return None
    body = st.then.stmts if isinstance(st.then, m.Block) else (st.then,)
    if len(body) != 2 or not all(isinstance(b, m.ExprStmt) and isinstance(b.expr, m.Assign) for b in body):
        return None
    add, put = body[0].expr, body[1].expr
    if not (isinstance(add.target, m.Ref) and add.target.kind == "local"):
        return None
    acc = add.target.name
    v = strip_casts(add.value)
    if add.op == "+=":
        partner = v
    elif add.op == "=" and isinstance(v, m.Binary) and v.op == "+" and isinstance(strip_casts(v.lhs), m.Ref) \
            and strip_casts(v.lhs).name == acc:
        partner = strip_casts(v.rhs)
    else:
        return None
    if not (isinstance(partner, m.Index) and isinstance(strip_casts(partner.base), m.Ref)
            and strip_casts(partner.base).kind in ("shared", "local")):
        return None
    shared = strip_casts(partner.base)
    i = strip_casts(partner.index)
    if not (isinstance(i, m.Binary) and i.op == "+" and is_lane(i.lhs, lanes)
            and isinstance(strip_casts(i.rhs), m.Ref) and strip_casts(i.rhs).name == step_var):
        return None
    if not (put.op == "=" and _cell(put.target, shared, lanes, is_lane)
            and isinstance(strip_casts(put.value), m.Ref) and strip_casts(put.value).name == acc):
        return None
    return shared, acc, c


def _cell(e, shared, lanes, is_lane) -> bool:
    e = strip_casts(e)
    return isinstance(e, m.Index) and isinstance(strip_casts(e.base), m.Ref) \
        and strip_casts(e.base).name == shared.name and is_lane(e.index, lanes)


def _reads(name):
    def reads(node) -> bool:
        return any(isinstance(n, (m.Ref, m.VarDecl)) and n.name == name for n in m.walk(node))
    return reads


def _region_stmts(r):
    if isinstance(r, Phase):
        yield from r.stmts
    elif isinstance(r, UniformIf):
        yield m.ExprStmt(r.cond, r.span)
        for x in r.then + r.other:
            yield from _region_stmts(x)
    elif isinstance(r, UniformLoop):
        for e in (r.init, r.cond, r.step):
            if e is not None:
                yield e
        for x in r.body:
            yield from _region_stmts(x)


class _Acc(Transformer):
    """``acc`` → ``S[0]`` (thread 0's register is the tree's first cell)."""

    def __init__(self, name: str, cell0: m.Expr) -> None:
        self.name, self.cell0 = name, cell0

    def leave_Ref(self, node: m.Ref):
        return self.cell0 if node.name == self.name else node
