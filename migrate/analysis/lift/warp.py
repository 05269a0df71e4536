"""Lift warp-shuffle trees to block reductions (tile form).

A warp reduces its 32 values with a butterfly of shuffles,

    for (int off = warpSize / 2; off > 0; off >>= 1) v = v OP __shfl_down_sync(0xffffffff, v, off);

after which lane 0 holds ``OP`` over the warp (with ``__shfl_xor_sync`` every lane does). Block
reductions are built from such trees in two ways, both recognised here in the portable plan
(where each shuffle is an :class:`~migrate.ir.loops.Exchange` inside a uniform loop):

- *one atomic per warp*: ``if (lane == 0) atomicOP(out, v)`` after the tree, the atomic's
  operation the tree's: the warps' atomics combine to one atomic of the block's total;
- *two levels*: ``if (lane == 0) S[warp] = v; __syncthreads(); if (warp == 0) { v = lane <
  nwarps ? S[lane] : identity; <tree>; if (lane == 0) <final> }``: thread 0 ends with the block's
  total. A final ``s = v`` into a ``__shared__`` scalar that every thread reads after a barrier
  broadcasts the total. NVIDIA's blockReduceSum loads ``v = lane < nwarps ? S[lane] : 0`` in
  every thread before ``if (warp == 0) v = <tree>`` and thread 0 reads ``v`` after the branch:
  the same reduction (what the other warps hold in ``v`` must not be read again, checked).

Either becomes a :class:`~migrate.ir.loops.BlockReduce` (``warps=True``): every lane (one per CUDA
thread) runs the code before the first tree and contributes its value, ``T.reduce_<op>``
combines, and the final statements run once with the total. What the proof requires: a full
mask, offsets halving from ``warpSize / 2`` to 1, a combine that is sum, max or min of the value
and its partner, lane 0 (of warp 0) reading the result, the second level padded with the
operation's identity. Anything else that shuffles is refused with the reason
(:class:`~.base.NotLiftable`). The launch must use whole warps (the factory asserts it).
A tree whose total each warp uses on its own is a reduction per warp (:mod:`.warp_rows`).
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ...ir import model as m
from ...ir.exprs import const_value, is_ref, pure, strip_casts
from ...ir.loops import Barrier, BlockReduce, Phase, UniformIf, UniformLoop
from .base import NotLiftable, REDUCTIONS
from .warp_rows import guarded_segment, segment_reduce
from .warp_trees import (Roles, Subst, WarpLift, WarpTree, copies, is_flag, map_region, prune_lane_code,
                         recomputable, then_stmts, type_of, walk_region, warp_tree)


def lift_warp_trees(regions, ctx: WarpLift) -> tuple:
    """``regions`` with every block reduction built from warp trees replaced by a BlockReduce."""
    rs = list(regions)
    out: list = []
    suffix: list[frozenset] = []  # suffix[j]: the names of rs[j:], made again when rs changes

    def names_after(j: int) -> frozenset:
        if len(suffix) != len(rs) + 1:
            acc = frozenset()
            suffix[:] = [acc]
            for x in reversed(rs):
                acc = acc | _names((x,))
                suffix.append(acc)
            suffix.reverse()
        return suffix[j + 1]

    i = 0
    while i < len(rs):
        r = rs[i]
        tree = warp_tree(r, ctx.roles) if isinstance(r, UniformLoop) else None
        if isinstance(r, UniformIf) and r.predicate is not None and len(r.then) == 3 and not r.other \
                and isinstance(r.then[1], UniformLoop) and warp_tree(r.then[1], ctx.roles) is not None:
            reduce = guarded_segment(out, r, rs[i + 1:], ctx)
            out.append(reduce)
            ctx.found.append(reduce)
            i += 1
            continue
        if tree is None:
            outer = ctx.later
            ctx.later = outer | names_after(i)
            if isinstance(r, UniformIf) and r.predicate is None:
                r = dataclasses.replace(r, then=lift_warp_trees(r.then, ctx), other=lift_warp_trees(r.other, ctx))
            elif isinstance(r, UniformLoop):
                ctx.later |= _names(r.body) | _names((r,))  # the next iteration
                r = dataclasses.replace(r, body=lift_warp_trees(r.body, ctx))
            ctx.later = outer
            out.append(r)
            i += 1
            continue
        if not out or not isinstance(out[-1], Phase):
            raise NotLiftable(f"the warp tree at line {tree.span.line} reduces no per-thread value")
        before = out.pop()
        uniform, before = _peel_uniform(before, ctx.roles)
        if uniform is not None:
            out.append(uniform)
        known = set(ctx.consumed)
        reduce, used, rest = _block_reduce(before, tree, rs, i, ctx)
        suffix.clear()  # (it may rewrite what follows in place)
        out.append(reduce)
        ctx.found.append(reduce)
        i += used
        if rest is not None:
            rs.insert(i, rest)
        gone = ctx.consumed - known
        late = [n for r in rs[i:] for n in walk_region(r) if isinstance(n, m.Ref) and n.name in gone]
        if late:
            raise NotLiftable(f"'{late[0].name}' holds a warp's partial result and is read again at line "
                              f"{late[0].span.line}")
    if not ctx.found:
        return tuple(out)
    split: list = []
    for r in out:  # what follows a reduction and reads its total once, at block level
        if isinstance(r, Phase):
            uniform, r = _peel_uniform(r, ctx.roles)
            split += [x for x in (uniform, r) if x is not None and x.stmts]
        else:
            split.append(r)
    return tuple(split)


def _names(regions) -> frozenset:
    return frozenset(n.name for r in regions for n in walk_region(r) if isinstance(n, (m.Ref, m.VarDecl)))


def _peel_uniform(phase: Phase, roles: Roles) -> tuple[Optional[Phase], Phase]:
    """The leading statements of ``phase`` that every thread computes alike (no thread index, no
    store, no per-thread variable), split off to run once at block level."""
    n = 0
    for s in phase.stmts:
        assigns = {d.name for d in m.walk(s) if isinstance(d, m.VarDecl)} | {
            a.target.name for a in m.walk(s) if isinstance(a, m.Assign) and isinstance(a.target, m.Ref)}
        if roles.mentions_thread(s) or assigns & roles.dependent or any(
                (isinstance(a, m.Assign) and not isinstance(a.target, m.Ref)) or
                (isinstance(a, m.Call) and a.kind in ("atomic", "warp", "sync")) for a in m.walk(s)):
            break
        n += 1
    if n == 0:
        return None, phase
    return Phase(phase.stmts[:n], phase.index, phase.span), Phase(phase.stmts[n:], phase.index, phase.span)


def _block_reduce(before: Phase, tree: WarpTree, rs: list, i: int, ctx: WarpLift):
    """(BlockReduce, regions consumed from ``rs[i]``, what remains of the last one) for the
    tree at ``rs[i]`` preceded by ``before``."""
    roles = ctx.roles
    line = tree.span.line
    after = rs[i + 1] if i + 1 < len(rs) else None
    if not isinstance(after, Phase):
        raise NotLiftable(f"nothing reads the warp tree's result at line {line}")
    held = [tree.var]
    k = copies(after.stmts, held)
    stmts = after.stmts[k:]
    ctx.consumed |= set(held) | set(tree.temps)
    lead = stmts[0] if stmts else None
    if tree.pair is not None or not (isinstance(lead, m.If) and lead.other is None and roles.is_leader(lead.cond)):
        if i + 2 != len(rs):
            raise NotLiftable(f"code follows the reduction per warp at line {line}")
        return segment_reduce((), None, before, tree, after, k, held, ctx), 2, None
    body = then_stmts(lead)
    rest = stmts[1:]
    store = _warp_store(body, held, roles, ctx)
    if store is not None:
        if rest:
            raise NotLiftable(f"statements follow the warp totals' store at line {lead.span.line}")
        return _second_level(before, tree, store, rs, i + 2, ctx)
    if not all(isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Call) and s.expr.kind == "atomic"
               and s.expr.callee == REDUCTIONS[tree.op].atomic for s in body):
        # lane 0 of each warp does its warp's work: a reduction per warp
        if i + 2 != len(rs):
            raise NotLiftable(f"code follows the reduction per warp at line {line}")
        return segment_reduce((), None, before, tree, after, k, held, ctx), 2, None
    # one atomic per warp: the warps' atomics are one atomic of the block's total
    final = []
    total_name = held[-1]
    for s in body:
        call = s.expr
        if len(call.args) != 2 or not (isinstance(strip_casts(call.args[1]), m.Ref) and strip_casts(call.args[1]).name in held):
            raise NotLiftable(f"the atomic at line {s.span.line} does not add the warp's total")
        if roles.mentions_thread(call.args[0]):
            raise NotLiftable(f"the atomic at line {s.span.line} targets a different place per thread")
        final.append(s)
    dtype = type_of(before, after, tree.var)
    result = m.Ref(f"{total_name}_total", "reduce_result", dtype, lead.span)
    after_stmts = Subst({n: result for n in held}).transform(tuple(final))
    keep = ctx.later | _names(rs[i + 2:]) | _names((Phase(tuple(rest), after.index, after.span),))
    lane_code, value = prune_lane_code(before.stmts, m.Ref(tree.var, "local", dtype, tree.span), keep=keep)
    reduce = BlockReduce(lane_code, value, tree.op, total_name, dtype, after_stmts, None, before.span, "",
                         warps=True)
    remaining = Phase(tuple(rest), after.index, after.span) if rest else None
    return reduce, 2, remaining


def _warp_store(body, held, roles: Roles, ctx: WarpLift):
    """``S[warp] = v`` (S a __shared__ array): the name S, else None."""
    if len(body) != 1 or not isinstance(body[0], m.ExprStmt) or not isinstance(body[0].expr, m.Assign):
        return None
    a = body[0].expr
    if a.op != "=" or not isinstance(a.target, m.Index) or not roles.is_warp(a.target.index):
        return None
    base = strip_casts(a.target.base)
    if not (isinstance(base, m.Ref) and base.name in ctx.shared_types):
        return None
    if not (isinstance(strip_casts(a.value), m.Ref) and strip_casts(a.value).name in held):
        raise NotLiftable(f"lane 0 stores something other than the warp's total at line {a.span.line}")
    return base.name


def _second_level(before: Phase, tree: WarpTree, shared: str, rs: list, j: int, ctx: WarpLift):
    """After ``S[warp] = v`` and a barrier: warp 0 reduces S with a second tree."""
    roles = ctx.roles
    if j >= len(rs) or not isinstance(rs[j], Barrier):
        raise NotLiftable(f"no barrier after the warp totals are stored in '{shared}'")
    k = j + 1
    uniform = []  # values every thread computes alike after the barrier (the number of warps)
    while k < len(rs) and isinstance(rs[k], Phase) and not is_flag(rs[k], rs[k + 1] if k + 1 < len(rs) else None):
        stores = [n for s in rs[k].stmts for n in m.walk(s) if (isinstance(n, m.Assign) and not isinstance(
            n.target, m.Ref)) or (isinstance(n, m.Call) and n.kind in ("atomic", "warp", "sync"))]
        if roles.mentions_thread(rs[k]) or stores:
            if not stores and _every_warp(rs, k, roles):
                break  # every warp reduces the totals (FasterTransformer's blockReduceSum)
            if not stores and _loaded_before_branch(rs, k, shared, roles, tree.op, ctx):
                break  # every thread loads, warp 0 reduces, thread 0 reads after the branch
            raise NotLiftable(f"threads do more than reduce the warp totals in '{shared}' (line {rs[k].span.line})")
        uniform += rs[k].stmts
        k += 1
    if _every_warp(rs, k, roles):
        # every warp runs the second tree; warp 0 ends with the block's total (its lanes read
        # the warp totals), which thread 0 alone reads
        inner, branch, last_at = list(rs[k:k + 3]), None, k + 2
    elif _loaded_before_branch(rs, k, shared, roles, tree.op, ctx):
        # NVIDIA's blockReduceSum: ``v = lane < nwarps ? S[lane] : 0; if (warp == 0) v = <tree>;``
        # then thread 0 reads v after the branch. Warp 0 runs the tree as in the form above, and
        # what the other warps hold in v no one reads (checked as there: thread 0 alone reads the
        # total, and the names the levels consumed are not read again)
        flag, branch_ = rs[k + 1], rs[k + 2]
        first, tree_, last_ = branch_.then
        ctx.consumed.add(branch_.predicate)
        inner = [Phase(rs[k].stmts + first.stmts, rs[k].index, rs[k].span), tree_,
                 Phase(last_.stmts + rs[k + 3].stmts, last_.index, last_.span)]
        branch, last_at = None, k + 3
    else:
        if k < len(rs) and isinstance(rs[k], Phase):
            k += 1  # the stored condition of the branch
        branch = rs[k] if k < len(rs) else None
        if not (isinstance(branch, UniformIf) and not branch.other and roles.is_first_warp(branch.cond)):
            raise NotLiftable(f"the warp totals in '{shared}' are not reduced by warp 0 after the barrier")
        if branch.predicate:
            ctx.consumed.add(branch.predicate)
        inner, last_at = list(branch.then), k
        if len(inner) != 3 or not isinstance(inner[0], Phase) or not isinstance(inner[1], UniformLoop) \
                or not isinstance(inner[2], Phase):
            raise NotLiftable(f"warp 0 does more than one warp tree over '{shared}' (line {branch.span.line})")
    second = warp_tree(inner[1], roles)
    if second is None:
        raise NotLiftable(f"warp 0 does not reduce '{shared}' with a warp tree (line {inner[1].span.line})")
    if second.op != tree.op or second.pair is not None:
        raise NotLiftable(f"the two levels combine differently ({tree.op}, then {second.op})")
    # v = lane < nwarps ? S[lane] : identity
    held: list[str] = []
    load = pad = None
    for s in inner[0].stmts:
        if load is None:
            load, pad = _warp_load(s, shared, roles, tree.op, ctx) or (None, None)
            if load is not None:
                held.append(load)
                continue
            if isinstance(s, m.DeclStmt) and all(d.init is None for d in s.decls):
                continue
            if recomputable(s) and not roles.mentions_thread(s):
                continue  # the number of warps, say (read through the locals table)
            raise NotLiftable(f"warp 0 computes something other than loading the warp totals (line {s.span.line})")
        if copies((s,), held) != 1:
            raise NotLiftable(f"warp 0 computes something other than loading the warp totals (line {s.span.line})")
    if second.var not in held:
        raise NotLiftable(f"the second warp tree (line {second.span.line}) does not reduce the warp totals")
    held2 = [second.var]
    last = inner[2]
    n = copies(last.stmts, held2)
    tail = last.stmts[n:]
    rest = None
    if branch is None and tail:
        # the leader's statements; what follows runs in every thread and may not read the
        # warps' partial totals (lift_warp_trees checks the names consumed here)
        tail, rest = tail[:1], tail[1:]
    if len(tail) != 1 or not isinstance(tail[0], m.If) or tail[0].other is not None \
            or not roles.is_leader(tail[0].cond, first_warp=True) \
            or (branch is None and not _thread_zero(tail[0].cond, roles)):
        raise NotLiftable(f"the block's total is not read by thread 0 after line {second.span.line}")
    ctx.consumed |= set(held) | set(held2) | set(second.temps)
    ctx.shared.add(shared)
    dtype = ctx.shared_types[shared]
    result = m.Ref(f"{shared}_total", "reduce_result", dtype, tail[0].span)
    total = result if pad is None else _padded(result, pad, tree.op, tail[0].span)
    final = uniform + list(Subst({n: total for n in held2}, roles).transform(then_stmts(tail[0])))
    used = last_at + 1 - (j - 2)
    # a total written to a __shared__ scalar that every thread reads after a barrier: broadcast
    # (or a function of it and of parameters: ``s_mean = sum / n``, read where ``s_mean`` was)
    broadcast = {}
    for s in list(final):
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
                and isinstance(s.expr.target, m.Ref) and s.expr.target.name in ctx.shared_types \
                and not isinstance(s.expr.target.type, m.Array) and s.expr.target.name not in broadcast \
                and _of_total(s.expr.value, result):
            broadcast[s.expr.target.name] = s.expr.value
            final.remove(s)
    if broadcast:
        if rest or last_at + 1 >= len(rs) or not isinstance(rs[last_at + 1], Barrier):
            raise NotLiftable(f"the block's total in '{sorted(broadcast)[0]}' is read without a barrier")
        used += 1
        ctx.shared |= set(broadcast)
        # the broadcast value is read where the scalar was: nothing it reads may change before
        read = set(broadcast) | {n.name for v in broadcast.values() for n in m.walk(v)
                                 if isinstance(n, m.Ref) and n is not result}
        writes = [n for r in rs[last_at + 2:] for n in walk_region(r)
                  if (isinstance(n, m.Assign) and isinstance(strip_casts(n.target), m.Ref)
                      and strip_casts(n.target).name in read) or
                  (isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--", "&")
                   and isinstance(strip_casts(n.operand), m.Ref) and strip_casts(n.operand).name in read)]
        if writes:
            name = writes[0].target if isinstance(writes[0], m.Assign) else writes[0].operand
            raise NotLiftable(f"'{strip_casts(name).name}' is written again at line {writes[0].span.line}")
        subst = Subst(broadcast)
        rs[last_at + 2:] = [map_region(r, subst) for r in rs[last_at + 2:]]
    keep = ctx.later | _names(rs[last_at + 1:]) | _names((Phase(tuple(rest or ()), last.index, last.span),))
    lane_code, value = prune_lane_code(before.stmts, m.Ref(tree.var, "local", type_of(before, before, tree.var),
                                                           tree.span), keep=keep - ctx.consumed)
    final, _ = prune_lane_code(tuple(final), m.IntLit(0, "0", m.Scalar("int32"), tree.span), fold=False)
    reduce = BlockReduce(lane_code, value, tree.op, shared, dtype, final, None, before.span, "", warps=True)
    return reduce, used, (Phase(tuple(rest), last.index, last.span) if rest else None)


def _of_total(value, result) -> bool:
    """Whether ``value`` is the total, or a pure function of it and of parameters and constants
    (``total / n + eps``): the same in every thread that reads it after the broadcast."""
    if value is result:
        return True
    refs = [n for n in m.walk(value) if isinstance(n, m.Ref)]
    if any(isinstance(n, (m.Index, m.Member)) for n in m.walk(value)):
        return False  # memory, which lane code may store to before the scalar is read
    return pure(value) and any(n is result for n in refs) and all(
        n is result or n.kind in ("param", "constant", "template", "enum") for n in refs)


def _thread_zero(cond, roles: Roles) -> bool:
    """``threadIdx.x == 0`` (not ``lane == 0``, which every warp has)."""
    c = strip_casts(cond)
    return isinstance(c, m.Binary) and c.op == "==" and any(
        const_value(o) == 0 and roles.is_thread(t) for t, o in ((c.lhs, c.rhs), (c.rhs, c.lhs)))


def _every_warp(rs: list, k: int, roles: Roles) -> bool:
    """Whether ``rs[k:k + 3]`` is the second level run by every warp, with no ``if (warp == 0)``:
    a phase (loading the warp totals), a warp tree, a phase (thread 0 reading the total)."""
    return k + 2 < len(rs) and isinstance(rs[k], Phase) and isinstance(rs[k + 1], UniformLoop) \
        and isinstance(rs[k + 2], Phase) and warp_tree(rs[k + 1], roles) is not None


def _loaded_before_branch(rs: list, k: int, shared: str, roles: Roles, op: str, ctx: WarpLift) -> bool:
    """Whether ``rs[k:k + 4]`` is the second level of NVIDIA's blockReduceSum: a phase in which
    every thread loads ``v = lane < nwarps ? S[lane] : identity`` (and declares locals without a
    value), the stored condition of ``if (warp == 0)``, the branch holding one warp tree between
    copies of the loaded value, and the phase after it (where thread 0 must read the total)."""
    if k + 3 >= len(rs) or not all(isinstance(r, Phase) for r in (rs[k], rs[k + 1], rs[k + 3])):
        return False
    branch = rs[k + 2]
    if not (is_flag(rs[k + 1], branch) and not branch.other and roles.is_first_warp(branch.cond)
            and len(branch.then) == 3 and isinstance(branch.then[0], Phase)
            and isinstance(branch.then[1], UniformLoop) and isinstance(branch.then[2], Phase)):
        return False
    loads = []
    for s in rs[k].stmts:
        if isinstance(s, m.DeclStmt) and all(d.init is None for d in s.decls):
            continue
        found = _warp_load(s, shared, roles, op, ctx)  # a load of another index or padding: the reason
        if found is None:
            return False
        loads.append(found)
    return len(loads) == 1 and warp_tree(branch.then[1], roles) is not None


def _warp_load(s, shared: str, roles: Roles, op: str, ctx: WarpLift) -> Optional[str]:
    """The local ``s`` loads warp 0's lane's warp total into: ``v = lane < nwarps ? S[lane] : id``."""
    if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and s.decls[0].init is not None:
        name, value = s.decls[0].name, s.decls[0].init
    elif isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
            and isinstance(s.expr.target, m.Ref):
        name, value = s.expr.target.name, s.expr.value
    else:
        return None
    v = strip_casts(value)
    if not isinstance(v, m.Ternary):
        return None
    c, then = strip_casts(v.cond), strip_casts(v.then)
    if not (isinstance(then, m.Index) and is_ref(then.base, shared)):
        return None
    if not (roles.is_lane(then.index) or roles.is_thread(then.index)):
        raise NotLiftable(f"warp 0 reads '{shared}' at another index than its lane (line {s.span.line})")
    if not (isinstance(c, m.Binary) and c.op == "<" and (roles.is_lane(c.lhs) or roles.is_thread(c.lhs))
            and roles.counts_warps(c.rhs)):
        raise NotLiftable(f"warp 0 does not read exactly one total per warp from '{shared}' (line {s.span.line})")
    pad = const_value(v.other, roles.single)
    if not REDUCTIONS[op].is_identity(ctx.shared_types[shared], pad):
        if op in ("max", "min") and isinstance(pad, (int, float)):
            return name, v.other  # a constant that a max or min takes in once (_padded)
        raise NotLiftable(f"the lanes past the last warp contribute {pad if pad is not None else 'a value'}, "
                          f"not the identity of {op} (line {s.span.line})")
    return name, None


def _padded(result: m.Ref, pad, op: str, span) -> m.Expr:
    """The second level's total when warp 0's lanes past the last warp take the constant ``pad``
    (``-1e20f`` for a max, not -inf): such lanes exist in blocks of fewer than 32 warps, and a max
    or min takes a constant in once however many lanes hold it: ``blockDim.x < 1024 ? fmaxf(total,
    pad) : total``."""
    dtype = result.type
    floating = isinstance(dtype, m.Scalar) and (dtype.dtype.startswith("float") or dtype.dtype in ("half", "bfloat16"))
    callee = ("fmaxf" if op == "max" else "fminf") if floating else op
    int32 = m.Scalar("int32")
    small = m.Binary("<", m.Builtin("blockDim", "x", m.Scalar("uint32"), span), m.IntLit(1024, "1024", int32, span),
                     m.Scalar("bool"), span)
    pad = pad if pad.type == dtype else m.Cast(dtype, pad, "c", dtype, span)
    return m.Ternary(small, m.Call(callee, (result, pad), "math", (), dtype, span), result, dtype, span)


