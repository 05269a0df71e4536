"""Lift shared-memory tree reductions to ``T.reduce_*`` (tile form).

The CUDA block reduction

    <per-thread work>; S[tid] = v; __syncthreads();
    for (s = blockDim.x / 2; s > 0; s >>= 1) { if (tid < s) S[tid] += S[tid + s]; __syncthreads(); }
    if (tid == 0) <use S[0]>;

combines one value per thread. Its tile form computes the values as a ``T.Parallel`` loop over
the block's *lanes* (one per CUDA thread: the per-thread accumulation stays as it was), combines
them with ``T.reduce_sum`` (``max``/``min`` for ``fmaxf``/``fminf`` trees) into a one-element
buffer, and runs the final statements once. The tree loop, its barriers and the shared array
disappear. The CUDA tree assumes a power-of-two block; the factory asserts it. A per-thread
value that several lane loops use (computed before one tree, reduced by a later one) lives in a
buffer of the block's lanes. A 2-D block whose trees rank its threads ``threadIdx.x + W *
threadIdx.y`` is lifted as a 1-D block of lanes in that order (:mod:`.flat_block`). A tree whose
cells each thread fills in place is first rewritten to store once (:mod:`.own_cells`), and a sum
through ``atomicAdd`` on a shared scalar is the same reduction on any block size
(:mod:`.shared_atomics`). A butterfly ``t = S[tid] + S[tid ^ bit]; S[tid] = t`` over a constant
power-of-two width leaves the total in every cell: each lane reads the total where it read its cell.

Reductions inside a block-uniform loop (a grid-stride loop over rows, a loop over tiles) lift
the same way, one ``T.reduce`` per iteration; a per-thread value carried across iterations is
a buffer of the lanes. Statements that read a local whose value differs between threads
(:func:`~..facts.divergence.thread_dependent_names`) are lane code even when they name no thread
index; lane code after a tree may read its total (``S[0]``). Lanes may not exchange data through
memory across the barriers that are gone, a loop's next iteration included (checked).

The combination order differs from the tree's, which matters for floating point only within
rounding (the check compares with the dtype's tolerance). :func:`plan_block_reduce` raises
:class:`~.base.NotLiftable` when the kernel is not made of such reductions and uniform code.
"""
from __future__ import annotations

import dataclasses
import functools

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.loops import Barrier, BlockReduce, KernelPlan, LanePhase, Phase, UniformIf, UniformLoop, VarPlan
from ...ir.visit import Transformer
from ..facts.divergence import thread_dependent_names
from ..facts.locals import single_assignment_locals
from ..phases import NotPortable, plan_portable
from .base import NoReduction, NotLiftable, combine_call
from .field_arrays import split_fields
from .own_cells import own_cells
from .register_trees import carried_trees
from .shared_atomics import match_atomic_sum, predicated_window
from .block_shape_reason import what_it_is_instead
from .flat_block import flat_width, flatten_block, rename_last_reassignments, why_not_flat
from .warp import lift_warp_trees
from .warp_rows import own_elements
from .warp_trees import Roles, WarpLift, combine_functions


def is_lane(e, aliases: set[str]) -> bool:
    e = strip_casts(e)
    return (isinstance(e, m.Builtin) and e.var == "threadIdx" and e.dim == "x") or \
        (isinstance(e, m.Ref) and e.name in aliases)


def lane_aliases(fn: m.Function) -> set[str]:
    """Locals that hold ``threadIdx.x`` and are never reassigned (``const int tid = threadIdx.x``)."""
    assigned = {n.target.name for n in m.walk(fn.body) if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)}
    return {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.init is not None
            and n.name not in assigned and is_lane(n.init, set())}


def _shared_name(e) -> str | None:
    e = strip_casts(e)
    return e.name if isinstance(e, m.Ref) and e.kind in ("shared", "local") else None


def _tree_step(stmt, lanes: set[str], step_var: str) -> tuple[str, str] | None:
    """(shared array, op) when ``stmt`` is ``if (tid < s) S[tid] op= S[tid + s]``."""
    if not isinstance(stmt, m.If) or stmt.other is not None:
        return None
    c = strip_casts(stmt.cond)
    if isinstance(c, m.Binary) and c.op == "&&" and _partner_in_block(c.rhs, lanes, step_var):
        c = strip_casts(c.lhs)  # tid < s && tid + s < blockDim.x: the tree's block holds every partner
    if not (isinstance(c, m.Binary) and c.op == "<" and is_lane(c.lhs, lanes)
            and isinstance(strip_casts(c.rhs), m.Ref) and strip_casts(c.rhs).name == step_var):
        return None
    body = stmt.then.stmts if isinstance(stmt.then, m.Block) else (stmt.then,)
    if len(body) != 1 or not isinstance(body[0], m.ExprStmt) or not isinstance(body[0].expr, m.Assign):
        return None
    a = body[0].expr
    if not isinstance(a.target, m.Index) or not is_lane(a.target.index, lanes):
        return None
    name = _shared_name(a.target.base)

    def is_partner(e):
        e = strip_casts(e)
        if not (isinstance(e, m.Index) and _shared_name(e.base) == name):
            return False
        i = strip_casts(e.index)
        return isinstance(i, m.Binary) and i.op == "+" and is_lane(i.lhs, lanes) and \
            isinstance(strip_casts(i.rhs), m.Ref) and strip_casts(i.rhs).name == step_var

    def is_self(e):
        e = strip_casts(e)
        return isinstance(e, m.Index) and _shared_name(e.base) == name and is_lane(e.index, lanes)

    v = strip_casts(a.value)
    if a.op == "+=" and is_partner(v):
        return name, "sum"
    if a.op == "=" and isinstance(v, m.Binary) and v.op == "+" and is_self(v.lhs) and is_partner(v.rhs):
        return name, "sum"
    if a.op == "=" and isinstance(v, m.Call) and combine_call(v.callee) \
            and len(v.args) == 2 and is_self(v.args[0]) and is_partner(v.args[1]):
        return name, combine_call(v.callee)
    return None


def _guarded(stmt: m.If, lanes: set[str], step_var: str) -> bool:
    """Whether the tree step ``stmt`` is ``if (tid < s && tid + s < blockDim.x)``: from a constant
    width N, its steps fold every lane of a block of at most N threads into lane 0 (lane j meets
    lane j - s at the step with s <= j < 2s), so the block need not be a power of two."""
    c = strip_casts(stmt.cond)
    return isinstance(c, m.Binary) and c.op == "&&" and _partner_in_block(c.rhs, lanes, step_var)


def _partner_in_block(e, lanes: set[str], step_var: str) -> bool:
    """Whether ``e`` is ``tid + s < blockDim.x``: true of every lane the tree's ``tid < s`` admits
    in the power-of-two block of the tree's width (which the factory asserts)."""
    e = strip_casts(e)
    if not (isinstance(e, m.Binary) and e.op == "<" and isinstance(strip_casts(e.rhs), m.Builtin)
            and strip_casts(e.rhs).var == "blockDim" and strip_casts(e.rhs).dim == "x"):
        return False
    i = strip_casts(e.lhs)
    return isinstance(i, m.Binary) and i.op == "+" and is_lane(i.lhs, lanes) and \
        isinstance(strip_casts(i.rhs), m.Ref) and strip_casts(i.rhs).name == step_var


def _halving(loop: UniformLoop) -> tuple[str, m.Expr] | None:
    """(s, N) when ``loop`` is ``for (s = N / 2; s > 0; s >>= 1)`` (or ``s /= 2``; or ``s = 128``, a
    power of two, for ``N`` = 256)."""
    if loop.kind != "for" or not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1:
        return None
    d = loop.init.decls[0]
    init = strip_casts(d.init) if d.init is not None else None
    start = _int(init) if init is not None else None
    if isinstance(start, int) and start > 0 and start & (start - 1) == 0:
        init = m.Binary("/", m.IntLit(2 * start, str(2 * start), init.type, init.span),
                        m.IntLit(2, "2", init.type, init.span), init.type, init.span)
    if not (isinstance(init, m.Binary) and ((init.op == "/" and _int(init.rhs) == 2) or
                                            (init.op == ">>" and _int(init.rhs) == 1))):
        return None
    c = strip_casts(loop.cond) if loop.cond is not None else None
    ok_cond = isinstance(c, m.Binary) and isinstance(strip_casts(c.lhs), m.Ref) and strip_casts(c.lhs).name == d.name and (
        (c.op == ">" and _int(c.rhs) == 0) or (c.op == ">=" and _int(c.rhs) == 1))
    st = loop.step
    v = strip_casts(st.value) if isinstance(st, m.Assign) else None
    ok_step = isinstance(st, m.Assign) and isinstance(strip_casts(st.target), m.Ref) and \
        strip_casts(st.target).name == d.name and ((st.op == ">>=" and _int(st.value) == 1) or
                                              (st.op == "/=" and _int(st.value) == 2) or
                                              # s = s / 2, s = s >> 1
                                              (st.op == "=" and isinstance(v, m.Binary) and
                                               isinstance(strip_casts(v.lhs), m.Ref) and strip_casts(v.lhs).name == d.name
                                               and ((v.op == "/" and _int(v.rhs) == 2) or (v.op == ">>" and _int(v.rhs) == 1))))
    return (d.name, strip_casts(init.lhs)) if ok_cond and ok_step else None


def _int(e):
    e = strip_casts(e)
    return e.value if isinstance(e, m.IntLit) else None


def _final_phase(phase: Phase, lanes: set[str], per_lane: frozenset = frozenset()) -> tuple[tuple, tuple] | None:
    """The phase after a tree split in two: the leading statements every thread runs alike (they
    may read the result, ``shared[0]``; ``if (tid == 0) {...}`` becomes its body), and the rest,
    which runs per lane (a block-stride loop over the row, say). A statement that reads a
    ``per_lane`` local (one whose value differs between threads) is lane code too."""
    out = []
    stmts = list(phase.stmts)
    while stmts:
        st = stmts[0]
        if _reads_per_lane(st, per_lane):
            break
        if isinstance(st, m.If) and st.other is None and _is_lane_zero(st.cond, lanes):
            then = st.then
            out.extend(then.stmts if isinstance(then, m.Block) else (then,))
        elif any((isinstance(n, m.Builtin) and n.var == "threadIdx") or (isinstance(n, m.Ref) and n.name in lanes)
                 for n in m.walk(st)):
            break
        else:
            out.append(st)
        stmts.pop(0)
    for st in out:
        for n in m.walk(st):
            if (isinstance(n, m.Builtin) and n.var == "threadIdx") or (isinstance(n, m.Ref) and n.name in lanes):
                return None
    return tuple(out), tuple(stmts)


def _reads_per_lane(st, per_lane) -> bool:
    return bool(per_lane) and any(isinstance(n, (m.Ref, m.VarDecl)) and n.name in per_lane for n in m.walk(st))


def _is_lane_zero(cond, lanes) -> bool:
    """``tid == 0``, or ``tid == blockDim.x - 1``: one thread every block has (the statements it
    guards read no thread index, checked by the caller, so which one does not matter)."""
    c = strip_casts(cond)
    return isinstance(c, m.Binary) and c.op == "==" and (
        (is_lane(c.lhs, lanes) and _one_lane(c.rhs)) or (is_lane(c.rhs, lanes) and _one_lane(c.lhs)))


def _one_lane(e) -> bool:
    e = strip_casts(e)
    if _int(e) == 0:
        return True
    return isinstance(e, m.Binary) and e.op == "-" and _int(e.rhs) == 1 and \
        isinstance(strip_casts(e.lhs), m.Builtin) and strip_casts(e.lhs).var == "blockDim" and strip_casts(e.lhs).dim == "x"


class _Replace(Transformer):
    """``S[0]`` → the result, the lane index → 0 (the final statements run once, as thread 0)."""

    def __init__(self, shared: str, result: m.Expr, lanes: set[str], *, lanes_to_zero: bool = True) -> None:
        self.shared, self.result, self.lanes = shared, result, lanes
        self.other_reads = False
        self.lanes_to_zero = lanes_to_zero  # False: lane code, which keeps its thread index
        self.own_cell = None  # the lane aliases whose S[lane] holds the total too (a butterfly)

    def leave_Index(self, node: m.Index):
        if _shared_name(node.base) == self.shared:
            if _int(node.index) == 0 or self.own_cell is not None and is_lane(node.index, self.own_cell):
                return self.result
            self.other_reads = True
        return node

    def leave_Builtin(self, node: m.Builtin):
        if node.var == "threadIdx" and self.lanes_to_zero:
            return m.IntLit(0, "0", node.type, node.span)
        return node

    def leave_Ref(self, node: m.Ref):
        if node.name in self.lanes:
            return m.IntLit(0, "0", node.type, node.span)
        return node


def _lift_regions(regions, lanes, shared_types, found: list, per_lane: frozenset = frozenset(),
                  consts=None, values=None) -> tuple:
    consts = consts if consts is not None else {}
    out = []
    i = 0
    regions = list(regions)
    while i < len(regions):
        r = regions[i]
        window = regions[i:i + 4]
        if len(window) == 4 and isinstance(window[0], Phase) and isinstance(window[1], Barrier) \
                and isinstance(window[2], UniformLoop) and isinstance(window[3], Phase):
            matched = _match(window, lanes, shared_types, per_lane)
            if matched is not None:
                reduced, lane_rest = matched
                reduced = reduced if isinstance(reduced, tuple) else (reduced,)  # a tree over several fields
                out.extend(reduced)
                found.extend(reduced)
                if lane_rest is not None:
                    out.append(lane_rest)
                i += 4
                continue
        butterfly = _match_butterfly(regions[i:i + 6], lanes, shared_types, per_lane, consts)
        if butterfly is not None:  # every thread's cell ends with the total (gmm's parallelSum)
            (reduced, lane_rest), used = butterfly
            out.append(reduced)
            found.append(reduced)
            if lane_rest is not None:
                out.append(lane_rest)
            i += used
            continue
        atomic = match_atomic_sum(regions[i:i + 5], lanes, shared_types,
                                  functools.partial(_final_phase, per_lane=per_lane), _drop_shared_decls) \
            if len(regions) - i >= 5 else None
        window = predicated_window(r, lanes, values) if atomic is None and values is not None else None
        if window is not None:  # the same, under a branch around its barriers (lift.shared_atomics)
            atomic = match_atomic_sum(window, lanes, shared_types,
                                      functools.partial(_final_phase, per_lane=per_lane), _drop_shared_decls)
            if atomic is not None:
                i -= 4  # one region, not five
                flag = out[-1].stmts if out and isinstance(out[-1], (Phase, LanePhase)) else ()
                if len(flag) == 1 and isinstance(flag[0], m.DeclStmt) and [d.name for d in flag[0].decls] == [r.predicate]:
                    out.pop()  # the predicate's flag: the window reads its condition instead
        if atomic is not None:  # block sums through atomics on shared scalars (lift.shared_atomics)
            reduced, lane_rest = atomic
            out.extend(reduced)
            found.extend(reduced)
            if lane_rest is not None:
                out.append(lane_rest)
            i += 5
            continue
        if isinstance(r, BlockReduce):  # lifted from warp trees (lift.warp)
            out.append(dataclasses.replace(r, before=_drop_shared_decls(r.before, shared_types)))
        elif isinstance(r, UniformIf) and r.predicate is None:
            out.append(dataclasses.replace(r, then=_lift_regions(r.then, lanes, shared_types, found, per_lane, consts),
                                           other=_lift_regions(r.other, lanes, shared_types, found, per_lane, consts)))
        elif isinstance(r, UniformLoop) and _halving(r) is None and not _reads_lane(r, lanes):
            # a block-uniform loop around reductions (a grid-stride loop over rows, a loop over
            # tiles): its body lifted the same way, one T.reduce per iteration
            count = len(found)
            body = _lift_regions(r.body, lanes, shared_types, found, per_lane, consts)
            if len(found) == count:  # its barriers order something else
                raise NoReduction(f"uniformloop at line {r.span.line} is not part of a block reduction")
            out.append(dataclasses.replace(r, body=body))
        elif isinstance(r, Phase):
            # the shared arrays' declarations go with them
            r = dataclasses.replace(r, stmts=_drop_shared_decls(r.stmts, shared_types))
            if any(_names_lane(st, lanes) for st in r.stmts) and not any(
                    isinstance(n, m.Builtin) and n.var == "threadIdx" or isinstance(n, m.Ref) and n.name in lanes
                    for st in r.stmts if not _names_lane(st, lanes) for n in m.walk(st)):
                # ``int tid = threadIdx.x`` beside block code: lane code reads the lane for it
                r = dataclasses.replace(r, stmts=tuple(st for st in r.stmts if not _names_lane(st, lanes)))
            if any(isinstance(n, m.Builtin) and n.var == "threadIdx" or isinstance(n, m.Ref) and n.name in lanes
                   for s in r.stmts for n in m.walk(s)) or any(_reads_per_lane(s, per_lane) for s in r.stmts):
                out.append(LanePhase(r.stmts, r.span))  # per-lane work outside the trees
            else:
                out.append(r)
        elif isinstance(r, Barrier):
            pass  # the shared arrays it ordered are gone; lanes do not share memory (checked below)
        else:
            raise NoReduction(f"{type(r).__name__.lower()} at line {r.span.line} is not part of a block reduction")
        i += 1
    return tuple(out)


def _names_lane(st, lanes) -> bool:
    """Whether ``st`` declares only lane aliases (``const int tid = threadIdx.x``)."""
    return isinstance(st, m.DeclStmt) and all(d.name in lanes for d in st.decls)


def _reads_lane(loop: UniformLoop, lanes) -> bool:
    """Whether the loop's own header (init, condition, step) reads the thread index."""
    return any(isinstance(n, m.Builtin) and n.var == "threadIdx" or isinstance(n, m.Ref) and n.name in lanes
               for x in (loop.init, loop.cond, loop.step) if x is not None for n in m.walk(x))


def _drop_shared_decls(stmts, shared_types) -> tuple:
    return tuple(st for st in stmts if not (isinstance(st, m.DeclStmt) and all(d.name in shared_types
                                                                               for d in st.decls)))


def _match(window, lanes, shared_types, per_lane=frozenset()) -> BlockReduce | None:
    first, _barrier, loop, last = window
    halving = _halving(loop)
    if halving is None:
        return None
    step_var, size = halving
    body = [b for b in loop.body if not (isinstance(b, Phase) and not b.stmts)]
    if len(body) != 2 or not isinstance(body[0], Phase) or not isinstance(body[1], Barrier) \
            or len(body[0].stmts) != 1:
        return None
    step = _tree_step(body[0].stmts[0], lanes, step_var)
    if step is None:
        steps = _field_steps(body[0].stmts[0], lanes, step_var)
        return _match_fields(steps, first, last, lanes, shared_types, per_lane, size, step_var) if steps else None
    shared, op = step
    stmts = list(first.stmts)
    store = stmts[-1] if stmts else None
    if not (isinstance(store, m.ExprStmt) and isinstance(store.expr, m.Assign) and store.expr.op == "="
            and isinstance(store.expr.target, m.Index) and _shared_name(store.expr.target.base) == shared
            and is_lane(store.expr.target.index, lanes)):
        return None
    stmts = list(_drop_shared_decls(stmts, shared_types))  # the trees' arrays go with them
    stmts = _drop_overwritten(stmts, shared, lanes)
    if any(isinstance(n, m.Ref) and n.name == shared for s in stmts[:-1] for n in m.walk(s)):
        return None
    split = _final_phase(last, lanes, per_lane)
    if split is None:
        return None
    final, rest = split
    dtype = shared_types[shared]
    result = m.Ref(f"{shared}_total", "reduce_result", dtype, last.span)
    replace = _Replace(shared, result, lanes)
    after = replace.transform(tuple(final))
    if replace.other_reads:
        return None
    if any(isinstance(n, m.Ref) and n.name == shared for st in rest for n in m.walk(st)):
        # the lane code after the tree may read the total (every CUDA thread reads S[0] alike)
        if _writes_shared(rest, shared):
            return None
        lane_replace = _Replace(shared, result, set(), lanes_to_zero=False)
        rest = tuple(lane_replace.transform(tuple(rest)))
        if lane_replace.other_reads or any(isinstance(n, m.Ref) and n.name == shared for st in rest
                                           for n in m.walk(st)):
            return None
    size_const = _constant_width(size)
    reduce = BlockReduce(tuple(stmts[:-1]), store.expr.value, op, shared, dtype, after, size_const,
                         first.span, step_var,
                         bounded=size_const is not None and _guarded(body[0].stmts[0], lanes, step_var))
    return reduce, (LanePhase(rest, last.span) if rest else None)


def _constant_width(size):
    """A tree's width as the factory asserts it: None where it is ``blockDim.x`` itself."""
    return None if isinstance(size, m.Builtin) and size.var == "blockDim" else size


def _field_steps(stmt, lanes: set[str], step_var: str) -> list | None:
    """[(array, op), ...] when ``stmt`` is ``if (tid < s) { S1[tid] op= S1[tid + s]; S2[tid] ...; }``,
    one step per array (the fields of a vector tree, split by :mod:`.field_arrays`)."""
    if not isinstance(stmt, m.If) or stmt.other is not None or not isinstance(stmt.then, m.Block) \
            or len(stmt.then.stmts) < 2:
        return None
    steps = [_tree_step(m.If(stmt.cond, st, None, stmt.span), lanes, step_var) for st in stmt.then.stmts]
    if any(x is None for x in steps) or len({name for name, _ in steps}) != len(steps):
        return None
    return steps


def _match_fields(steps, first, last, lanes, shared_types, per_lane, size, step_var):
    """The reductions of a tree over several arrays at once (``S_x``, ``S_y``): one BlockReduce
    per array, the first running the lane code, the last the final statements (which read
    every total); the values of the later ones cross to their lanes in lane buffers."""
    n = len(steps)
    stmts = list(_drop_shared_decls(first.stmts, shared_types))
    if len(stmts) < n:
        return None
    values = {}
    for st in stmts[-n:]:
        a = st.expr if isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) else None
        if a is None or a.op != "=" or not isinstance(a.target, m.Index) or not is_lane(a.target.index, lanes):
            return None
        values[_shared_name(a.target.base)] = a.value
    names = [name for name, _ in steps]
    if set(values) != set(names) or any(isinstance(n_, m.Ref) and n_.name in names
                                        for st in stmts[:-n] + [m.ExprStmt(v, first.span) for v in values.values()]
                                        for n_ in m.walk(st)):
        return None
    split = _final_phase(last, lanes, per_lane)
    if split is None:
        return None
    final, rest = split
    if any(isinstance(n_, m.Ref) and n_.name in names for st in rest for n_ in m.walk(st)):
        return None
    after = tuple(final)
    for name in names:
        result = m.Ref(f"{name}_total", "reduce_result", shared_types[name], last.span)
        replace = _Replace(name, result, lanes)
        after = replace.transform(after)
        if replace.other_reads:
            return None
    size_const = _constant_width(size)
    reduces = tuple(BlockReduce(tuple(stmts[:-n]) if j == 0 else (), values[name], op, name, shared_types[name],
                                after if j == n - 1 else (), size_const, first.span, step_var)
                    for j, (name, op) in enumerate(steps))
    return reduces, (LanePhase(rest, last.span) if rest else None)


def _butterfly(loop: UniformLoop, lanes, consts) -> tuple[str, int, str, str] | None:
    """(bit, N, shared array, op) when ``loop`` is the butterfly
    ``for (bit = N >> 1; bit > 0; bit >>= 1) { t = S[tid] + S[tid ^ bit]; __syncthreads(); S[tid] = t;
    __syncthreads(); }`` (``fmaxf``/``fminf`` for ``+``), N a constant power of two: afterwards each
    of the N cells holds the combination of all N."""
    if loop.kind != "for" or not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1:
        return None
    d = loop.init.decls[0]
    init = strip_casts(d.init) if d.init is not None else None
    if not (isinstance(init, m.Binary) and ((init.op == ">>" and _int(init.rhs) == 1) or
                                            (init.op == "/" and _int(init.rhs) == 2))):
        return None
    size = _constant(init.lhs, consts)
    if not (isinstance(size, int) and size > 1 and size & (size - 1) == 0):
        return None
    bit = d.name
    c = strip_casts(loop.cond) if loop.cond is not None else None
    st = loop.step
    if not (isinstance(c, m.Binary) and c.op == ">" and _int(c.rhs) == 0 and isinstance(strip_casts(c.lhs), m.Ref)
            and strip_casts(c.lhs).name == bit and isinstance(st, m.Assign) and isinstance(strip_casts(st.target), m.Ref)
            and strip_casts(st.target).name == bit and ((st.op == ">>=" and _int(st.value) == 1) or
                                                         (st.op == "/=" and _int(st.value) == 2))):
        return None
    body = [b for b in loop.body if not (isinstance(b, Phase) and not b.stmts)]
    if len(body) != 4 or not (isinstance(body[0], Phase) and isinstance(body[1], Barrier) and
                              isinstance(body[2], Phase) and isinstance(body[3], Barrier)) \
            or len(body[0].stmts) != 1 or len(body[2].stmts) != 1:
        return None
    first, second = _assignment(body[0].stmts[0]), _assignment(body[2].stmts[0])
    if first is None or second is None or not isinstance(first.target, m.Ref):
        return None
    temp = first.target.name
    if not (isinstance(second.target, m.Index) and is_lane(second.target.index, lanes)
            and isinstance(strip_casts(second.value), m.Ref) and strip_casts(second.value).name == temp):
        return None
    name = _shared_name(second.target.base)

    def own(e):
        e = strip_casts(e)
        return isinstance(e, m.Index) and _shared_name(e.base) == name and is_lane(e.index, lanes)

    def partner(e):
        e = strip_casts(e)
        if not (isinstance(e, m.Index) and _shared_name(e.base) == name):
            return False
        i = strip_casts(e.index)
        return isinstance(i, m.Binary) and i.op == "^" and is_lane(i.lhs, lanes) and \
            isinstance(strip_casts(i.rhs), m.Ref) and strip_casts(i.rhs).name == bit

    v = strip_casts(first.value)
    if isinstance(v, m.Binary) and v.op == "+" and own(v.lhs) and partner(v.rhs):
        op = "sum"
    elif isinstance(v, m.Call) and combine_call(v.callee) and len(v.args) == 2 and own(v.args[0]) \
            and partner(v.args[1]):
        op = combine_call(v.callee)
    else:
        return None
    return (bit, size, name, op) if name is not None else None


def _assignment(st) -> m.Assign | None:
    """The plain assignment ``st`` is (a declaration with an initialiser counts)."""
    if isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "=":
        return st.expr
    if isinstance(st, m.DeclStmt) and len(st.decls) == 1 and st.decls[0].init is not None:
        d = st.decls[0]
        return m.Assign("=", m.Ref(d.name, "local", d.type, d.span), d.init, d.type, d.span)
    return None


def _constant(e, consts) -> int | None:
    """An integer constant, or a local in ``consts`` (a local a single declaration sets to one,
    never assigned: an inlined device function's parameter, ``const unsigned int ndata = 256``)."""
    e = strip_casts(e)
    if _int(e) is not None:
        return _int(e)
    return consts.get(e.name) if isinstance(e, m.Ref) else None


def declared_constants(fn: m.Function) -> dict:
    assigned = {t.name for t in m.store_targets(fn.body) if isinstance(t, m.Ref)} | \
        {n.operand.name for n in m.walk(fn.body) if isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--", "&")
         and isinstance(n.operand, m.Ref)}
    return {n.name: _int(n.init) for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.init is not None
            and _int(n.init) is not None and n.name not in assigned}


def _match_butterfly(window, lanes, shared_types, per_lane, consts):
    """``S[tid] = v; __syncthreads(); [<declarations>; __syncthreads();] <butterfly>; <use S[tid]>``
    as a reduction whose total every lane reads where it read its cell, and how many regions it
    took; else None."""
    if len(window) >= 4 and isinstance(window[0], Phase) and isinstance(window[1], Barrier) \
            and isinstance(window[2], UniformLoop) and isinstance(window[3], Phase):
        first, loop, last, middle, used = window[0], window[2], window[3], (), 4
    elif len(window) >= 6 and isinstance(window[0], Phase) and isinstance(window[1], Barrier) \
            and isinstance(window[2], Phase) and isinstance(window[3], Barrier) \
            and isinstance(window[4], UniformLoop) and isinstance(window[5], Phase):
        first, loop, last, middle, used = window[0], window[4], window[5], window[2].stmts, 6
    else:
        return None
    fly = _butterfly(loop, lanes, consts)
    if fly is None:
        return None
    bit, size, shared, op = fly
    stmts = list(first.stmts)
    store = _assignment(stmts[-1]) if stmts else None
    if not (store is not None and isinstance(store.target, m.Index) and _shared_name(store.target.base) == shared
            and is_lane(store.target.index, lanes)):
        return None
    middle = tuple(_drop_shared_decls(middle, shared_types))
    stmts = _drop_overwritten(list(_drop_shared_decls(stmts, shared_types)), shared, lanes)
    # the statements between the store and the butterfly (an inlined call's parameters) run
    # before the value is taken: they may not touch the array nor change what the value reads
    changed = {t.name for st in middle for t in m.store_targets(st) if isinstance(t, m.Ref)} | \
        {n.name for st in middle for n in m.walk(st) if isinstance(n, m.VarDecl)}
    if any(isinstance(n, m.Ref) and (n.name == shared or n.name in changed) for n in m.walk(store.value)) or \
            any(isinstance(n, m.Ref) and n.name == shared for st in tuple(stmts[:-1]) + middle for n in m.walk(st)):
        return None
    split = _final_phase(last, lanes, per_lane)
    if split is None or _writes_shared(last.stmts, shared):
        return None
    final, rest = split
    dtype = shared_types[shared]
    result = m.Ref(f"{shared}_total", "reduce_result", dtype, last.span)
    replace = _Replace(shared, result, lanes)
    after = replace.transform(tuple(final))
    lane_replace = _Replace(shared, result, set(), lanes_to_zero=False)
    lane_replace.own_cell = lanes
    rest = tuple(lane_replace.transform(tuple(rest)))
    if replace.other_reads or lane_replace.other_reads or any(
            isinstance(n, m.Ref) and n.name == shared for st in rest for n in m.walk(st)):
        return None
    size_lit = m.IntLit(size, str(size), m.Scalar("int32"), loop.span)
    reduce = BlockReduce(tuple(stmts[:-1]) + middle, store.value, op, shared, dtype, after, size_lit,
                         first.span, bit)
    return (reduce, (LanePhase(rest, last.span) if rest else None)), used


def _writes_shared(stmts, shared: str) -> bool:
    """Whether ``stmts`` store to, increment or take the address of an element of ``shared``."""
    def names(e):
        return any(isinstance(n, m.Ref) and n.name == shared for n in m.walk(e))
    return any(names(t) for st in stmts for t in m.store_targets(st)) or any(
        isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--", "&") and names(n.operand)
        for st in stmts for n in m.walk(st))


def _drop_overwritten(stmts: list, shared: str, lanes) -> list:
    """``stmts`` (ending with the store ``S[tid] = v``) without the earlier top-level stores
    ``S[tid] = c`` of a value without effects that it overwrites (``S[tid] = 0`` first), when
    nothing in between reads ``S``: no thread reads another's cell before the barrier."""
    def dead(st):
        a = _assignment(st) if isinstance(st, m.ExprStmt) else None
        return a is not None and isinstance(a.target, m.Index) and _shared_name(a.target.base) == shared \
            and is_lane(a.target.index, lanes) and not any(
                isinstance(n, (m.Call, m.Assign, m.Index)) or isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--")
                for n in m.walk(a.value))
    kept = [st for st in stmts[:-1] if not dead(st)]
    if len(kept) == len(stmts) - 1 or any(isinstance(n, m.Ref) and n.name == shared for st in kept for n in m.walk(st)):
        return stmts
    return kept + stmts[-1:]


def _check_no_lane_traffic(regions) -> None:
    """Lanes may communicate only through the reductions: no buffer one stretch of lane code
    stores to is read by a later one (the CUDA barriers that ordered that are gone)."""
    written: set[str] = set()

    def root(e):  # the array an index's base is, through casts
        return m.access_root(e, through=(m.Cast,))

    def own(r):  # a thread's local array: each lane has its own (a row of a lane buffer)
        return r.kind == "local" and isinstance(r.type, m.Array)

    def stores(stmts):
        return {root(n.target.base).name for st in stmts for n in m.walk(st)
                if isinstance(n, m.Assign) and isinstance(n.target, m.Index) and root(n.target.base)
                and not own(root(n.target.base))}

    def reads(stmts, block=False):
        # the target of a plain store counts as read (two lanes storing to one place in two
        # stretches race), except in code the block runs once: a loop's next iteration storing
        # again from block code is no exchange
        targets = {id(n.target) for st in stmts for n in m.walk(st)
                   if isinstance(n, m.Assign) and n.op == "="} if block else set()
        return {root(n.base).name for st in stmts for n in m.walk(st)
                if isinstance(n, m.Index) and root(n.base) and id(n) not in targets}

    def visit(rs):
        for r in rs:
            if isinstance(r, UniformIf):  # one branch runs: the other sees only what came before
                before = set(written)
                visit(r.then)
                after_then = set(written)
                written.clear()
                written.update(before)
                visit(r.other)
                written.update(after_then)
                continue
            if isinstance(r, UniformLoop):  # twice: an iteration reads what the one before stored
                visit(r.body)
                visit(r.body)
                continue
            if isinstance(r, BlockReduce) and r.per_warp:
                # the lane code after the tree may read back what the same lane stored before it
                own = own_elements(r.before, r.after, stores(r.before) & reads(r.after), r.prefix)
                parts = [r.prefix + r.before + (m.ExprStmt(r.value, r.span),),
                         tuple(_DropReads(own).transform(r.prefix + r.after))]
                read = [reads(p) for p in parts]
            elif isinstance(r, BlockReduce):
                lanes_part = r.before + (m.ExprStmt(r.value, r.span),)
                parts = [lanes_part + r.after]
                read = [reads(lanes_part) | reads(r.after, block=True)]
            else:
                parts = [r.stmts if isinstance(r, (Phase, LanePhase)) else ()]
                read = [reads(parts[0], block=isinstance(r, Phase))]
            for stmts, seen in zip(parts, read):
                clash = seen & written
                if clash:
                    raise NotLiftable(f"lanes exchange '{sorted(clash)[0]}' through memory across a barrier")
                written.update(stores(stmts))

    visit(regions)


def plan_block_reduce(fn: m.Function, kplan: KernelPlan, tdims, launch_x: int | None = None,
                      callees=()) -> KernelPlan:
    """The tile form of a kernel made of block reductions and uniform code, or NotLiftable;
    ``launch_x``: the block width every launch in the file gives (a 2-D block ranked with
    another width is refused: the factory would refuse its launches); ``callees``: the device
    functions it calls (a warp tree may combine through one, ``add(v, t)``). A kernel refused
    as it is may reduce the fields of a shared array of vectors together: it is tried again
    with one array per field (:mod:`.field_arrays`)."""
    try:
        return _plan_block_reduce(fn, kplan, tdims, launch_x, callees)
    except NotLiftable as refused:
        split = split_fields(fn, {n for n, vp in kplan.vars.items() if vp.placement == "shared"})
        instead = what_it_is_instead(fn) if list(tdims) != ["x"] else None
        if split is fn:
            # a ranked 2-D or 3-D kernel that is no reduction at all: what it is says more than
            # the step of the reduction lift that stopped it
            if instead is not None:
                raise NotLiftable(instead) from None
            raise
        try:
            return _plan_block_reduce(split, plan_portable(split), tdims, launch_x, callees)
        except (NotLiftable, NotPortable):
            if instead is not None:
                raise NotLiftable(instead) from None
            raise refused from None


def _plan_block_reduce(fn: m.Function, kplan: KernelPlan, tdims, launch_x: int | None, callees) -> KernelPlan:
    if kplan.form != "portable":
        raise NotLiftable("it needs thread-level code")
    width = None
    if list(tdims) != ["x"]:
        width = flat_width(fn)
        if width is None:
            fn, kplan = _ranks_as_x(fn, set(tdims))
        elif isinstance(width, int) and launch_x is not None and launch_x != width:
            raise NotLiftable(f"it ranks its threads threadIdx.x + {width} * threadIdx.y, and its launches give "
                              f"blocks {launch_x} threads wide")
        elif isinstance(width, tuple) and launch_x is not None and launch_x != width[0]:
            raise NotLiftable(f"it ranks its threads threadIdx.x + {width[0]} * threadIdx.y + "
                              f"{width[0] * width[1]} * threadIdx.z, and its launches give blocks {launch_x} threads wide")
        else:  # a 2-D block reducing over its threads' rank: its lanes in that order
            fn = rename_last_reassignments(flatten_block(fn, width))
            kplan = plan_portable(fn)
    lanes = lane_aliases(fn)
    owned = own_cells(fn, lanes)  # a tree's cells filled in place: in registers until the tree
    if owned is not fn:
        fn, kplan = owned, plan_portable(owned)
    views = m.param_views(fn.body)  # a buffer parameter read as another type: the parameter's memory
    shared_types = {n: (vp.type.element if isinstance(vp.type, m.Array) else vp.type)
                    for n, vp in kplan.vars.items() if vp.placement == "shared" and n not in views}
    warp = WarpLift(Roles(fn, lanes, combine_functions(callees)), shared_types)
    regions = lift_warp_trees(kplan.regions, warp)
    found: list[BlockReduce] = list(warp.found)
    # locals whose value differs between threads: statements that read them are lane code
    # (a shared variable is the block's, one value for all: the fields of a shared vector split
    # into scalars, ``lsums_x``, are written under ``tid == 0`` yet read alike by every thread)
    per_lane = frozenset(thread_dependent_names(fn)) - lanes - set(shared_types)
    regions = carried_trees(regions, lanes, is_lane, _halving, _is_lane_zero)  # acc += S[tid + s]; S[tid] = acc
    regions = _lift_regions(regions, lanes, shared_types, found, per_lane, declared_constants(fn),
                            single_assignment_locals(fn.body))
    if not found:
        raise NotLiftable("it has barriers or warp operations that are not a recognised block reduction")
    used_shared = {r.shared for r in found} | warp.shared
    if set(shared_types) - used_shared:
        raise NotLiftable(f"it keeps other values in shared memory ('{sorted(set(shared_types) - used_shared)[0]}')")
    left_atomic = sorted({r.shared for r in found if r.atomics} & {name for name, _kind in _shared_refs(regions)})
    if left_atomic:
        raise NotLiftable(f"the shared '{left_atomic[0]}' that atomics sum is used outside the sum")
    _check_no_lane_traffic(regions)
    variables: dict[str, VarPlan] = {}
    kvars = dict(kplan.vars)
    for r in found:  # the registers atomics sum in (lift.shared_atomics): the later sums' cross to their lanes
        for st in r.before if r.atomics else ():
            for d in st.decls if isinstance(st, m.DeclStmt) else ():
                kvars.setdefault(d.name, VarPlan(d.name, d.type, "phase", False, d))
    tree_steps = {r.step_var for r in found}
    seen_in = _regions_using(regions)
    lane_written = _lane_written(regions)
    outside = sorted(name for name, kind in _shared_refs(regions) if name not in shared_types)
    if outside:
        raise NotLiftable(f"it uses the __shared__ variable '{outside[0]}' declared outside the kernel")
    left = sorted(warp.shared & set(seen_in))
    if left:
        raise NotLiftable(f"'{left[0]}' is used outside the warp-shuffle reduction")
    for name, vp in kvars.items():
        if name in views:
            variables[name] = vp  # declared on the parameter's memory, as in the portable form
            continue
        if vp.placement == "shared" or name in tree_steps or name not in seen_in:
            continue  # gone with the trees
        lane_stretches = {w for w in seen_in.get(name, ()) if w.startswith("lanes")}
        if vp.placement == "phase" and name not in lanes and len(lane_stretches) > 1 \
                and "block" not in seen_in.get(name, ()):
            # one CUDA phase split into several lane loops (a tree over the fields of a vector):
            # a value one computes and the next reads is kept per lane
            vp = dataclasses.replace(vp, placement="thread_array")
        if vp.placement == "thread_array" and isinstance(vp.type, (m.Scalar, m.TemplateType)) and name not in lanes \
                and name not in per_lane and name not in lane_written and "block" in seen_in.get(name, ()):
            # the same in every thread and set by code the block runs once (``logits += off``
            # before the trees): a block-level variable that the lanes read
            vp = dataclasses.replace(vp, placement="kernel_var")
        elif vp.placement == "thread_array":
            # a per-thread value used by one stretch of lane code lives in that lane loop; one
            # that several stretches use, in a buffer of the block's lanes (as the CUDA thread's
            # register kept it across the barriers)
            if name not in lanes and "block" in seen_in.get(name, ()):
                raise NotLiftable(f"'{name}' is a per-thread value that crosses a barrier to code the "
                                  "block runs once")
            if name in lanes or len(seen_in.get(name, ())) <= 1:
                vp = dataclasses.replace(vp, placement="phase")
            elif not (isinstance(vp.type, (m.Scalar, m.TemplateType)) or isinstance(vp.type, m.Array)
                      and isinstance(m.element_type(vp.type), m.Scalar)):
                raise NotLiftable(f"'{name}' is a per-thread array that crosses a barrier")
            elif isinstance(vp.type, m.Array):
                # a row per lane in a GPU fragment: TileLang's layout inference takes one index
                # per fragment in a lane loop, so each access must name its element by a loop
                # variable alone (a half2 array's lanes at i * 2 and i * 2 + 1 did not build)
                computed = next((n for n in m.walk(fn.body) if isinstance(n, m.Index)
                                 and isinstance(strip_casts(n.base), m.Ref) and strip_casts(n.base).name == name
                                 and not isinstance(strip_casts(n.index), m.Ref)), None)
                if computed is not None:
                    raise NotLiftable(f"the per-thread array '{name}' kept across the reductions is indexed "
                                      f"at line {computed.span.line} by a computed place, which a GPU "
                                      "fragment of the lanes cannot take")
        variables[name] = vp
    return KernelPlan(fn, "tile", regions, variables, kplan.aliases, flat_width=width)


def _lane_written(regions) -> set:
    """Locals that lane code (a reduction's per-lane part, a lane phase) declares or assigns."""
    out: set = set()

    def note(stmts):
        for st in stmts:
            for n in m.walk(st):
                if isinstance(n, m.VarDecl) and n.init is not None:  # a declaration alone writes nothing
                    out.add(n.name)
                elif isinstance(n, m.Assign) and isinstance(strip_casts(n.target), m.Ref):
                    out.add(strip_casts(n.target).name)
                elif isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--", "&") \
                        and isinstance(strip_casts(n.operand), m.Ref):
                    out.add(strip_casts(n.operand).name)

    def visit(rs):
        for r in rs:
            if isinstance(r, UniformIf):
                visit(r.then)
                visit(r.other)
            elif isinstance(r, UniformLoop):
                visit(r.body)
            elif isinstance(r, BlockReduce):
                note(r.prefix + r.before + (m.ExprStmt(r.value, r.span),) + (r.after if r.per_warp else ()))
            elif isinstance(r, LanePhase):
                note(r.stmts)

    visit(regions)
    return out


def _regions_using(regions) -> dict[str, set]:
    """Local name -> the lifted regions that declare or read it: ``lanes<k>`` for the k-th stretch
    of lane code (a reduction's per-lane part, a lane phase), ``block`` for block-level code."""
    out: dict[str, set] = {}
    count = 0

    def note(stmts, where):
        for st in stmts:
            for n in m.walk(st):
                name = n.name if isinstance(n, (m.Ref, m.VarDecl)) else None
                if name is not None:
                    out.setdefault(name, set()).add(where)

    def visit(rs):
        nonlocal count
        for r in rs:
            if isinstance(r, UniformIf):
                note((r.cond,), "block")
                visit(r.then)
                visit(r.other)
            elif isinstance(r, UniformLoop):
                note(tuple(m.ExprStmt(x, r.span) if isinstance(x, m.Expr) else x
                           for x in (r.init, r.cond, r.step) if x is not None), "block")
                visit(r.body)
            elif isinstance(r, BlockReduce) and r.per_warp:  # its lane loops recompute the prefix
                count += 1
                note(r.prefix + r.before + (m.ExprStmt(r.value, r.span),) + r.after +
                     ((m.ExprStmt(r.guard, r.span),) if r.guard is not None else ()), f"lanes{count}")
            elif isinstance(r, BlockReduce):
                count += 1
                note(r.before + (m.ExprStmt(r.value, r.span),), f"lanes{count}")
                note(r.after, "block")
            elif isinstance(r, LanePhase):
                count += 1
                note(r.stmts, f"lanes{count}")
            elif isinstance(r, Phase):
                note(r.stmts, "block")

    visit(regions)
    return out


def reduction_kinds(kplan: KernelPlan) -> str:
    """What the lifted kernel's reductions were in CUDA, for its reason."""
    kinds = set()

    def visit(rs):
        for r in rs:
            if isinstance(r, BlockReduce):
                kinds.add("warp-shuffle" if r.warps else "shared-memory atomic" if r.atomics else "shared-memory tree")
            elif isinstance(r, UniformIf):
                visit(r.then)
                visit(r.other)
            elif isinstance(r, UniformLoop):
                visit(r.body)

    visit(kplan.regions)
    return " and ".join(sorted(kinds, reverse=True))


class _Ranks(Transformer):
    """The block's linear thread rank and size (as cooperative groups spell them) → threadIdx.x
    and blockDim.x: exact for blocks with y and z of 1, which the lifted factory asserts."""

    def leave_Binary(self, node: m.Binary):
        if _rank(node):
            return m.Builtin("threadIdx", "x", node.type, node.span)
        if _size(node):
            return m.Builtin("blockDim", "x", node.type, node.span)
        return node


def _dim(e, var, d) -> bool:
    e = strip_casts(e)
    return isinstance(e, m.Builtin) and e.var == var and e.dim == d


def _rank(e) -> bool:
    """threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)"""
    e = strip_casts(e)
    if not (isinstance(e, m.Binary) and e.op == "+" and _dim(e.lhs, "threadIdx", "x")):
        return False
    r = strip_casts(e.rhs)
    if not (isinstance(r, m.Binary) and r.op == "*" and _dim(r.lhs, "blockDim", "x")):
        return False
    inner = strip_casts(r.rhs)
    if not (isinstance(inner, m.Binary) and inner.op == "+" and _dim(inner.lhs, "threadIdx", "y")):
        return False
    yz = strip_casts(inner.rhs)
    return isinstance(yz, m.Binary) and yz.op == "*" and _dim(yz.lhs, "blockDim", "y") and _dim(yz.rhs, "threadIdx", "z")


def _size(e) -> bool:
    """blockDim.x * blockDim.y * blockDim.z"""
    e = strip_casts(e)
    if not (isinstance(e, m.Binary) and e.op == "*" and _dim(e.rhs, "blockDim", "z")):
        return False
    xy = strip_casts(e.lhs)
    return isinstance(xy, m.Binary) and xy.op == "*" and _dim(xy.lhs, "blockDim", "x") and _dim(xy.rhs, "blockDim", "y")


def _ranks_as_x(fn: m.Function, tdims: set) -> tuple[m.Function, KernelPlan]:
    """A kernel that reads y and z only through the block's linear rank and size (cooperative
    groups) as a 1-D kernel, planned again; NotLiftable for one that is 2-D."""
    own = {n.dim for n in m.walk(fn.body) if isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockDim")}
    if fn.body is not None and tdims <= own:
        flat = dataclasses.replace(fn, body=_Ranks().transform(fn.body))
        if not any(isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockDim") and n.dim in ("y", "z")
                   for n in m.walk(flat.body)):
            return flat, plan_portable(flat)
    raise NotLiftable(why_not_flat(fn))


class _DropReads(Transformer):
    """Reads of the named buffers hidden from the traffic check (``x[i]`` → ``0``)."""

    def __init__(self, names) -> None:
        self.names = set(names)

    def leave_Index(self, node: m.Index):
        b = strip_casts(node.base)
        return m.IntLit(0, "0", node.type, node.span) if isinstance(b, m.Ref) and b.name in self.names else node


def _shared_refs(regions) -> set:
    """(name, kind) of every ``__shared__`` reference left in the lifted regions."""
    out = set()

    def note(nodes):
        out.update((n.name, n.kind) for x in nodes if x is not None for n in m.walk(x)
                   if isinstance(n, m.Ref) and n.kind == "shared")

    def visit(rs):
        for r in rs:
            if isinstance(r, UniformIf):
                note((r.cond,))
                visit(r.then)
                visit(r.other)
            elif isinstance(r, UniformLoop):
                note((r.init, r.cond, r.step))
                visit(r.body)
            elif isinstance(r, BlockReduce):
                note(r.prefix + r.before + r.after + r.rescale + (r.value, r.guard, r.pair_value))
            elif isinstance(r, (Phase, LanePhase)):
                note(r.stmts)

    visit(regions)
    return out
