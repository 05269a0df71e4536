"""Lift reductions per warp to tile form (one warp per row: gemv, row norms, online softmax).

After a warp tree (:mod:`.warp_trees`) whose total each warp uses on its own, under a condition
the same in all its lanes (``if (row >= rows) return;``), the tile form runs the lanes as
(warp, lane) pairs: one lane loop computes the values, ``T.reduce_*`` combines each warp's along
dim 1, a second lane loop runs what followed the tree, reading its warp's total. Per-lane values
the second loop needs (the row) are recomputed there; a lane may read back what it stored before
the tree only where :func:`own_elements` proves it its own.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.loops import BlockReduce, Phase, UniformIf
from ...ir.visit import Transformer
from .base import NotLiftable
from .warp_trees import (Roles, Subst, WarpLift, WarpTree, assigned, copies, is_flag, prune_lane_code,
                         recomputable, type_of, warp_tree)


def guarded_segment(out: list, branch: UniformIf, following, ctx: WarpLift) -> BlockReduce:
    """``if (row < rows) { <lane code>; <warp tree>; <use> }`` where the condition is the same in
    every lane of a warp (one warp per row): the per-lane values the condition needs (the
    phase before it, which ``out`` ends with) are recomputed in each lane loop."""
    roles = ctx.roles
    a, loop, b = branch.then
    if not (isinstance(a, Phase) and isinstance(b, Phase)):
        raise NotLiftable(f"the branch at line {branch.span.line} does more than one warp reduction")
    if following:
        raise NotLiftable(f"code follows the reduction per warp at line {branch.span.line}")
    if not (out and isinstance(out[-1], Phase) and is_flag(out[-1], branch)):
        raise NotLiftable(f"the condition of the branch at line {branch.span.line} is not stored before it")
    out.pop()
    prefix = out.pop().stmts if out and isinstance(out[-1], Phase) else ()
    bad = [st for st in prefix if not recomputable(st)]
    if bad:
        raise NotLiftable(f"line {bad[0].span.line} cannot be recomputed in each lane loop around the reduction "
                          "per warp")
    if not _same_in_warp(branch.cond, prefix, roles):
        raise NotLiftable(f"the condition at line {branch.span.line} differs between the lanes of a warp")
    ctx.consumed.add(branch.predicate)
    tree = warp_tree(loop, roles)
    held = [tree.var]
    k = copies(b.stmts, held)
    return segment_reduce(prefix, branch.cond, a, tree, b, k, held, ctx)


def _same_in_warp(cond, prefix, roles: Roles) -> bool:
    """``cond`` reads the thread index only through the warp number (checked on the expanded
    locals of ``prefix``)."""
    table = {d.name: d.init for st in prefix for d in st.decls}

    def ok(e) -> bool:
        e = strip_casts(e)
        if roles.is_warp(e):
            return True
        if isinstance(e, m.Builtin):
            return e.var != "threadIdx"
        if isinstance(e, m.Ref) and e.kind == "local":
            if e.name in table:
                return ok(table[e.name])
            return e.name not in roles.dependent
        return all(ok(c) for c in m.children(e))

    return ok(cond)


def segment_reduce(prefix, guard, before: Phase, tree: WarpTree, after: Phase, k: int, held: list,
                   ctx: WarpLift) -> BlockReduce:
    """The tree reduces each warp on its own: lanes as (warp, lane) pairs, ``T.reduce`` along the
    lanes, the code after the tree in a second lane loop that reads its warp's total."""
    roles = ctx.roles
    ctx.consumed |= set(held) | set(tree.temps)
    stmts = after.stmts[k:]
    held = held + ([tree.pair] if tree.pair is not None else [])
    for st in stmts:
        for n in m.walk(st):
            if isinstance(n, m.Call) and n.kind == "atomic" and _reads(n, held) and not _under_leader(stmts, n, roles):
                raise NotLiftable(f"the atomic at line {n.span.line} runs in every lane, not once per warp")
    if not tree.everywhere:
        for n in (n for st in stmts for n in m.walk(st) if isinstance(n, m.Ref) and n.name in held):
            if not _under_leader(stmts, n, roles):
                raise NotLiftable(f"lanes other than 0 read the partial sums of the shfl_down tree at line "
                                  f"{n.span.line}")
    dtype = type_of(before, after, tree.var)
    name = held[-2] if tree.pair is not None else held[-1]
    result = _lanes_of(f"{name}_total", dtype, after.span, per_lane=False)
    table = {n: result for n in held}
    pair = {}
    if tree.pair is not None:
        pair_type = type_of(before, after, tree.pair)
        table[tree.pair] = _lanes_of(f"{tree.pair}_total", pair_type, after.span, per_lane=False)
        d_lane = _lanes_of(f"{tree.pair}_lanes", pair_type, after.span)
        shift = m.Binary("-", _lanes_of(f"{name}_lanes", dtype, after.span), result, dtype, after.span)
        scale = m.Call(tree.exp, (shift,), "math", (), dtype, after.span)
        rescale = m.ExprStmt(m.Assign("=", d_lane, m.Binary("*", d_lane, scale, pair_type, after.span), pair_type,
                                      after.span), after.span)
        pair = dict(pair_value=m.Ref(tree.pair, "local", pair_type, tree.span), pair_name=tree.pair,
                    rescale=(rescale,))
    after_stmts = Subst(table).transform(tuple(stmts))
    # the lane's own values that the code after the tree reads: recomputed there
    lane_code = list(before.stmts)
    prefix = list(prefix)
    defined = {d.name for st in prefix for d in st.decls}
    wanted = _free_locals(after_stmts) - defined
    while wanted:
        name_ = wanted.pop()
        decl = next((st for st in lane_code if isinstance(st, m.DeclStmt) and [d.name for d in st.decls] == [name_]),
                    None)
        if decl is None or not recomputable(decl) or assigned(lane_code + list(after_stmts), name_):
            raise NotLiftable(f"'{name_}' is computed per lane before the warp tree and read after it")
        lane_code.remove(decl)
        prefix.append(decl)
        defined.add(name_)
        wanted |= _free_locals((decl,)) - defined
    prefix = _in_order(prefix, before.stmts)
    for d in (d for st in prefix for d in st.decls):
        if assigned(lane_code + list(after_stmts), d.name):
            raise NotLiftable(f"'{d.name}' changes in the lane code but is recomputed in each lane loop")
    value = m.Ref(tree.var, "local", dtype, tree.span)
    if tree.pair is None:
        lane_code, value = prune_lane_code(tuple(lane_code), value)
    else:  # the denominator is stored beside the maximum: both stay, no copy folded
        both = m.Binary("+", value, pair["pair_value"], dtype, tree.span)
        lane_code, _ = prune_lane_code(tuple(lane_code), both, fold=False)
    return BlockReduce(lane_code, value, tree.op, name, dtype, after_stmts, None, before.span, "", warps=True,
                       per_warp=True, prefix=tuple(prefix), guard=guard, **pair)


def _lanes_of(buffer: str, dtype, span, per_lane: bool = True) -> m.Index:
    """``buffer[lane_w, lane_l]`` (``buffer[lane_w]`` for a warp's total)."""
    ix = m.Index(m.Ref(buffer, "reduce_result", dtype, span), m.Ref("lane_w", "param", m.Scalar("int32"), span), dtype,
                 span)
    return m.Index(ix, m.Ref("lane_l", "param", m.Scalar("int32"), span), dtype, span) if per_lane else ix


def _reads(node, held) -> bool:
    return any(isinstance(n, m.Ref) and n.name in held for n in m.walk(node))


def _under_leader(stmts, target, roles: Roles) -> bool:
    """``target`` (a node in ``stmts``) runs only in lane 0: inside ``if (lane == 0)``."""
    def visit(node, led) -> Optional[bool]:
        if node is target:
            return led
        if isinstance(node, m.If) and roles.is_leader(node.cond):
            found = visit(node.then, True)
            if found is not None:
                return found
            return visit(node.other, led) if node.other is not None else None
        for c in m.children(node):
            found = visit(c, led)
            if found is not None:
                return found
        return None

    return any(visit(st, False) for st in stmts)


def _free_locals(stmts) -> set:
    declared = {n.name for st in stmts for n in m.walk(st) if isinstance(n, m.VarDecl)}
    return {n.name for st in stmts for n in m.walk(st)
            if isinstance(n, m.Ref) and n.kind == "local" and n.name not in declared}


def _in_order(prefix: list, lane_code) -> list:
    """The prefix's own statements first, then those taken from the lane code in its order."""
    taken = [st for st in lane_code if st in prefix]
    return [st for st in prefix if st not in taken] + taken


# -- a lane reading back its own stores ------------------------------------------------------------

class _Canon(Transformer):
    """Loop variables renamed by depth (``_loop0``, ...), so two loops compare equal."""

    def __init__(self, names: dict) -> None:
        self.names = names

    def leave_Ref(self, node: m.Ref):
        return dataclasses.replace(node, name=self.names[node.name]) if node.name in self.names else node

    def leave_VarDecl(self, node: m.VarDecl):
        return dataclasses.replace(node, name=self.names[node.name]) if node.name in self.names else node


def _accesses(stmts, name: str, writes: bool) -> list:
    """The signature of every store (``writes``) or load of buffer ``name`` in ``stmts``: its
    index and the headers of the counted loops around it, loop variables renamed; None when the
    access sits under a branch or another kind of loop."""
    found = []

    def base_is(ix) -> bool:
        b = strip_casts(ix.base)
        return isinstance(b, m.Ref) and b.name == name

    def visit(node, loops: list, plain: bool):
        if isinstance(node, m.For):
            d = node.init.decls[0] if isinstance(node.init, m.DeclStmt) and len(node.init.decls) == 1 else None
            counted = d is not None and not assigned((node.body,), d.name) and not any(
                isinstance(n, (m.Break, m.Continue)) for n in m.walk(node.body))
            for part in (node.init, node.cond, node.step):
                if part is not None:
                    visit(part, loops, plain)
            visit(node.body, loops + [node] if counted else loops, plain and counted)
            return
        if isinstance(node, (m.If, m.While, m.DoWhile, m.Switch)):
            for c in m.children(node):
                visit(c, loops, False)
            return
        if isinstance(node, m.Assign) and isinstance(node.target, m.Index) and base_is(node.target):
            if writes or node.op != "=":  # a compound assignment loads too
                found.append(_signature(node.target, loops) if plain else None)
            visit(node.target.index, loops, plain)
            visit(node.value, loops, plain)
            return
        if isinstance(node, m.Index) and not writes and base_is(node):
            found.append(_signature(node, loops) if plain else None)
        for c in m.children(node):
            visit(c, loops, plain)

    for st in stmts:
        visit(st, [], True)
    return found


def _signature(ix: m.Index, loops: list) -> str:
    names = {}
    for k, loop in enumerate(loops):
        names[loop.init.decls[0].name] = f"_loop{k}"
    canon = _Canon(names)
    heads = [m.dump(canon.transform(m.For(l.init, l.cond, l.step, m.Empty(l.span), (), l.span))) for l in loops]
    return "\n".join(heads + [m.dump(canon.transform(ix.index))])


def own_elements(before, after, buffers: set, prefix=()) -> set:
    """The buffers of ``buffers`` that each lane reads after the tree only where it stored before
    it: every load and every store is the same index in the same counted loops (loop variables
    renamed), over values the lane code does not change. A well-defined CUDA kernel has no two
    lanes storing to one element, so the loads see the lane's own stores, as in the lifted form.
    NotLiftable names the first buffer that lanes exchange."""
    changed = {n.target.name for st in tuple(before) + tuple(after) for n in m.walk(st)
               if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)}
    for name in sorted(buffers):
        stores = _accesses(before, name, True)
        loads = _accesses(after, name, False)
        sigs = set(stores + loads)
        if len(sigs) != 1 or None in sigs or not stores:
            raise NotLiftable(f"lanes exchange '{name}' through memory around the warp tree")
        (sig,) = sigs
        if any(f"name='{v}'" in sig for v in changed):
            raise NotLiftable(f"'{name}' is indexed by values the lane code changes around the warp tree")
    return set(buffers)
