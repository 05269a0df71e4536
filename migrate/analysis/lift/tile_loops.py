"""Lift block-uniform loops whose body is barrier-separated map phases (tiled loops) to tile form.

The classic tiled loop of an n-body or interpolation kernel

    float acc = 0;                                   // per-thread values carried across iterations
    for (int t = 0; t < n; t += BLOCK) {             // the same bounds in every thread
        if (t + tid < n) sh[tid] = g[t + tid];       // phase 1: a map filling shared memory
        __syncthreads();
        for (int j = 0; j < BLOCK; j++) acc += f(mine, sh[j]);   // phase 2: a map reading it
        __syncthreads();
    }
    out[gid] = acc;

has no reduction, scan or exchange: its threads share data through the shared tiles (and
memory), which every phase reads after the barrier that ends the phase filling them. Its tile
form keeps the loop as a serial loop of the block and each phase as a loop over the block's
*lanes* (one per CUDA thread: ``T.Parallel`` on GPUs, a serial loop on the CPU target, as the
lifted reductions' lane loops); the shared arrays stay shared, and a per-thread value that crosses
a barrier (the accumulator, the thread's own point) lives in a buffer of the lanes, or in a local
of each lane loop where no phase reads the value an earlier one left. The CUDA barriers stay,
between the lane loops, at block level: TileLang's own barrier placement sees no hazard carried
around a ``while`` loop, nor one through global memory (lanes that hand values on through a
buffer). A 2-D block runs as one row of lanes in the order of the threads' rank
(:mod:`.flat_block`, at the launch's width).

A thread that left the kernel before the loop (``if (gid >= n) return;``, a predicated branch of
the phase split) still takes part in no phase: each lane phase inside runs under the lane's flag,
so the tile form stores exactly what the CUDA threads stored. The block's own values that its
loops and branches read (``int part = (n - 1) / BLOCK;``, ``if (j + size > n) size = n - j;``)
are computed by the block before the lanes of their phase (where only some threads run the
phase, from no memory); every thread computes them alike.

Refused (:class:`NotTileLoop`, the reason its note M3003): warp exchanges, warp-synchronous code
(which no CPU check could see lifted), 3-D blocks, a block value that lane code sets where the
block cannot compute it (from a lane's value, or memory only some threads read), and a stretch of
lane code that reads a shared array it stores to at another place or stores to it at several
places it reads (a compare-exchange of two cells): TileLang's barrier placement could not tell
the lanes' cells apart and would put a barrier inside the lanes' code, which not every thread
reaches.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import changed_names, is_block_vote, strip_casts
from ...ir.loops import Barrier, Exchange, KernelPlan, LanePhase, Phase, UniformIf, UniformLoop, walk_regions
from ..facts.calls import with_effects
from ..facts.divergence import thread_dependent_names
from ..prepare.lockstep_steps import is_lockstep_barrier
from ..phases import NotPortable, plan_portable
from .base import NotLiftable
from .flat_block import LAUNCH_WIDTH, flatten_block


class NotTileLoop(NotLiftable):
    """Not a tiled loop; ``candidate`` when the kernel has a block-uniform loop or branch around its
    barriers and no warp exchange, so that the reason is worth reporting; ``decisive`` when the
    lift took the kernel but for this reason (the reason to report above the other lifts')."""

    def __init__(self, reason: str, candidate: bool = True, decisive: bool = False) -> None:
        super().__init__(reason)
        self.candidate = candidate
        self.decisive = decisive


def plan_tile_loops(fn: m.Function, kplan: KernelPlan, tdims, callees=()) -> KernelPlan:
    """The tile form of a portable kernel whose barriers separate map phases inside block-uniform
    loops (and around them), or :class:`NotTileLoop`; ``callees``: the device functions it calls
    (the block may compute a value through those without effects)."""
    if kplan.form != "portable":
        raise NotTileLoop("it needs thread-level code", candidate=False)
    if not any(isinstance(r, (UniformLoop, UniformIf)) and any(isinstance(b, Barrier) for b in walk_regions(
            r.body if isinstance(r, UniformLoop) else r.then + r.other)) for r in walk_regions(kplan.regions)):
        raise NotTileLoop("no block-uniform loop or branch encloses its barriers", candidate=False)
    exchange = next((r for r in walk_regions(kplan.regions) if isinstance(r, Exchange)), None)
    if exchange is not None:
        raise NotTileLoop(f"its warp operation at line {exchange.span.line} is not a map phase", candidate=False)
    step = next((n for n in m.walk(fn.body) if is_lockstep_barrier(n)), None)
    if step is not None:  # the CPU executor cannot run the original in lockstep: no check would see the lift
        raise NotTileLoop(f"its warp-synchronous code (line {step.span.line}) runs as lockstep steps, which only "
                          "GPUs could check")
    volatile = next((n for n in m.walk(fn.body) if isinstance(n, m.Ref) and n.kind in ("param", "global")
                     and getattr(n.type, "volatile", False)), None)
    if volatile is not None:  # the printer reads volatile memory through atomics in thread-level forms only
        raise NotTileLoop(f"it exchanges values between blocks through volatile '{volatile.name}' (line "
                          f"{volatile.span.line}), which the tile form would read as plain memory")
    width = None
    if list(tdims) == ["x", "y"]:  # a 2-D block: its threads as lanes in the order of their rank
        fn, kplan, width = _flat(fn, callees)
    elif list(tdims) != ["x"]:
        raise NotTileLoop(f"its block is {len(tdims)}-D: the tiled loops are lifted for 1-D and 2-D blocks")
    per_lane = frozenset(thread_dependent_names(fn))
    lifter = _Lifter(kplan, per_lane, with_effects({f.name: f for f in callees}))
    regions = lifter.regions(kplan.regions, ())
    _check_own_cells(regions, kplan)
    variables = dict(kplan.vars)
    local = _lane_locals(regions, kplan, lifter.flags)
    for name in local:  # a value no stretch of lane code reads before it sets it: a local of each
        variables[name] = dataclasses.replace(variables[name], placement="phase")
    _check_lane_arrays(regions, variables)
    regions = _finish(regions, lifter.flags, {name: variables[name].type for name in local})
    return KernelPlan(fn, "tile", regions, variables, kplan.aliases, flat_width=width)


def _sets_vote(st) -> bool:
    """``st`` is ``n = __syncthreads_and(p)`` (_or, _count), a native vote's statement: ``n`` is
    the block's value though the lanes set it (each thread runs its lane: emit.portable)."""
    return isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and isinstance(st.expr.target, m.Ref) \
        and is_block_vote(st.expr.value)


def _flat(fn: m.Function, callees) -> tuple:
    """A kernel of a 2-D block over the block's lanes ``L``, the thread ``(x, y)`` lane ``x + W * y``
    for the launch's width ``W`` (:mod:`.flat_block`; exact for every launch, as the factory counts
    the lanes of the block it is given): (the kernel, its portable plan, the width's name)."""
    inner = next((c.name for c in callees for n in m.walk(c.body) if c.body is not None
                  and isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockDim")), None)
    if inner is not None:
        raise NotTileLoop(f"its device function '{inner}' reads the thread index of its 2-D block")
    flat = flatten_block(fn, LAUNCH_WIDTH)
    try:
        return flat, plan_portable(flat), LAUNCH_WIDTH
    except NotPortable as exc:
        raise NotTileLoop(f"its 2-D block as one row of lanes: {exc}") from None


class _Lifter:
    """Rebuilds the portable regions as tile regions: each phase a lane phase (under the flags of
    the predicated branches around it), the block variables a phase sets computed by the block
    before it, the barriers kept where the CUDA has them."""

    def __init__(self, kplan: KernelPlan, per_lane: frozenset, effects=frozenset()) -> None:
        self.vars = kplan.vars
        self.per_lane = per_lane
        self.effects = effects  # device functions whose calls do more than compute a value
        #: id(lane phase) -> the flags its lanes run under (wrapped around it by :func:`_finish`)
        self.flags: dict[int, tuple] = {}

    def regions(self, regions, flags: tuple) -> tuple:
        out = []
        for r in regions:
            if isinstance(r, Barrier):
                out.append(r)
            elif isinstance(r, Phase):
                out.extend(self.phase(r, flags))
            elif isinstance(r, UniformIf) and r.predicate is not None:
                # the threads that take the branch run its phases: each lane under its flag
                then = self.regions(r.then, flags + (r.predicate,))
                other = self.regions(r.other, flags + (("!", r.predicate),)) if r.other else ()
                out.extend(then + other)
            elif isinstance(r, UniformIf):
                out.append(dataclasses.replace(r, then=self.regions(r.then, flags),
                                               other=self.regions(r.other, flags)))
            elif isinstance(r, UniformLoop):
                out.append(dataclasses.replace(r, body=self.regions(r.body, flags)))
            else:
                raise NotTileLoop(f"{type(r).__name__.lower()} at line {r.span.line} is not a map phase")
        return tuple(out)

    def phase(self, r: Phase, flags: tuple) -> list:
        stmts = [st for st in r.stmts if not self.storage_only(st)]
        if not stmts:
            return []
        block, stmts = self.hoist(stmts, guarded=bool(flags))
        for st in stmts:
            if not flags and _sets_vote(st):
                continue  # a block vote's result: every lane gets the block's (prepare.block_votes)
            for n in _assigned_refs(st):
                if self.placement(n.name) == "kernel_var":
                    raise NotTileLoop(f"'{n.name}', a value the block's loops or branches read, is set at line "
                                      f"{n.span.line} in lane code" + (" that only some threads run" if flags else
                                                                        ", where the block cannot compute it"))
        out = [Phase(tuple(block), r.index, r.span)] if block else []
        if stmts:
            lanes = LanePhase(tuple(stmts), r.span)
            self.flags[id(lanes)] = flags
            out.append(lanes)
        return out

    def storage_only(self, st) -> bool:
        """Declarations of storage the kernel allocates once (shared arrays, lane buffers, block
        variables) without a value: nothing to run."""
        return isinstance(st, m.Empty) or isinstance(st, m.DeclStmt) and all(
            d.init is None and self.placement(d.name) in ("shared", "thread_array", "kernel_var") for d in st.decls)

    def placement(self, name: str):
        vp = self.vars.get(name)
        return str(vp.placement) if vp is not None else None

    def hoist(self, stmts: list, guarded: bool) -> tuple[list, list]:
        """(statements the block runs before the phase, the lanes' statements): the top-level
        statements that set block variables (``int part = (n - 1) / BLOCK;``, ``if (j + size > n)
        size = n - j;``), with the single-assignment locals they read, computed once by the block
        (every thread runs them alike: a lane loop on a GPU may leave threads without a lane).
        They read no lane's value, and no memory where only some threads run the phase; moving
        them before the lane statements they follow must change nothing those read or write."""
        sets_block = [bool({n.name for n in _assigned_refs(st)} & self.block_vars()) for st in stmts]
        if not any(sets_block):
            return [], stmts
        chosen = set()
        needed: set[str] = set()
        for k in reversed(range(len(stmts))):
            st = stmts[k]
            names = {n.name for n in _assigned_refs(st)}
            if sets_block[k] or (names & needed and isinstance(st, m.DeclStmt)):
                if not self.block_value(st, guarded):
                    return [], stmts  # left in the lanes: refused there if it sets a block variable
                chosen.add(k)
                needed |= _read_names(st)
        lanes_before: list = []
        for k, st in enumerate(stmts):
            if k not in chosen:
                lanes_before.append(st)
                continue
            written = set().union(*(changed_names(x) for x in lanes_before)) if lanes_before else set()
            touched = written | (set().union(*(_read_names(x) for x in lanes_before)) if lanes_before else set())
            stored = {r.name for x in lanes_before for t in m.store_targets(x) for r in [_root(t)] if r is not None}
            if changed_names(st) & touched or _read_names(st) & (written | stored):
                return [], stmts
        return [stmts[k] for k in sorted(chosen)], [st for k, st in enumerate(stmts) if k not in chosen]

    def block_vars(self) -> set:
        return {n for n, vp in self.vars.items() if vp.placement == "kernel_var"}

    def block_value(self, st, guarded: bool) -> bool:
        """Whether the block may run ``st`` for its threads: a declaration of block variables or
        single-assignment locals, an assignment of a block variable, or a branch on such values
        around them, that reads no lane's value (no thread index, no per-thread local), calls
        nothing with effects and, where only some threads would run it, reads no memory."""
        if isinstance(st, m.DeclStmt):
            if not all(d.init is not None and (self.placement(d.name) == "kernel_var" or
                                               self.placement(d.name) == "phase" and self.vars[d.name].single_assignment)
                       for d in st.decls):
                return False
            return all(self.uniform(d.init, guarded) for d in st.decls)
        if isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and isinstance(st.expr.target, m.Ref):
            return self.placement(st.expr.target.name) == "kernel_var" and self.uniform(st.expr.value, guarded)
        if isinstance(st, m.Block):
            return all(self.block_value(x, guarded) for x in st.stmts)
        if isinstance(st, m.If):
            return self.uniform(st.cond, guarded) and self.block_value(st.then, guarded) and (
                st.other is None or self.block_value(st.other, guarded))
        return False

    def uniform(self, e, guarded: bool) -> bool:
        for n in m.walk(e):
            if isinstance(n, m.Builtin) and n.var == "threadIdx":
                return False
            if isinstance(n, m.Assign) or isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--"):
                return False
            if isinstance(n, m.Call) and not (n.kind == "math" or n.kind == "device" and n.callee not in self.effects
                                              and not guarded):
                return False
            if guarded and (isinstance(n, (m.Index, m.Member)) or isinstance(n, m.Unary) and n.op == "*"
                            or isinstance(n, m.Ref) and n.kind == "shared"):
                return False
            if isinstance(n, m.Ref) and n.kind == "local" and (
                    n.name in self.per_lane or self.placement(n.name) == "thread_array"):
                return False
        return True


def _assigned_refs(st):
    """The locals ``st`` declares with a value, assigns or steps, as references."""
    for n in m.walk(st):
        if isinstance(n, m.VarDecl) and n.init is not None:
            yield m.Ref(n.name, "local", n.type, n.span)
        elif isinstance(n, m.Assign) and isinstance(strip_casts(n.target), m.Ref):
            yield strip_casts(n.target)
        elif isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--") and isinstance(strip_casts(n.operand), m.Ref):
            yield strip_casts(n.operand)


def _finish(regions, flags: dict, local: dict) -> tuple:
    """The lane phases with declarations of the lane values each keeps as a local (``local``:
    name -> type) and under the flags their lanes run under."""
    out = []
    for r in regions:
        if isinstance(r, LanePhase):
            stmts = _declare_locals(r.stmts, local, r.span)
            if flags.get(id(r)):
                stmts = (m.If(_flag_condition(flags[id(r)], r.span), m.Block(stmts, r.span), None, r.span),)
            out.append(LanePhase(stmts, r.span))
        elif isinstance(r, UniformLoop):
            out.append(dataclasses.replace(r, body=_finish(r.body, flags, local)))
        elif isinstance(r, UniformIf):
            out.append(dataclasses.replace(r, then=_finish(r.then, flags, local), other=_finish(r.other, flags, local)))
        else:
            out.append(r)
    return tuple(out)


def _declare_locals(stmts, local: dict, span) -> tuple:
    """``stmts`` without the declarations of ``local`` names that set no value, with one at the top
    for each such name they use and do not declare with a value."""
    kept, declared = [], set()
    for st in stmts:
        if isinstance(st, m.DeclStmt):
            decls = tuple(d for d in st.decls if not (d.name in local and d.init is None))
            declared |= {d.name for d in decls if d.name in local}
            if decls:
                kept.append(dataclasses.replace(st, decls=decls) if decls != st.decls else st)
            continue
        kept.append(st)
    used = [n for n in dict.fromkeys(x.name for st in kept for x in m.walk(st) if isinstance(x, m.Ref))
            if n in local and n not in declared]
    head = tuple(m.DeclStmt((m.VarDecl(n, local[n], "local", False, None, span),), span) for n in used)
    return head + tuple(kept)


def _lane_locals(regions, kplan: KernelPlan, flags: dict) -> set:
    """The per-thread scalars the phase split kept across barriers that every stretch of lane code
    using them sets before it reads them (the loop variable and temporaries of an inner loop
    declared at the top of the kernel): a local of each lane loop, not a lane buffer."""
    candidates = {n for n, vp in kplan.vars.items() if vp.placement == "thread_array" and isinstance(vp.type, m.Scalar)
                  and n not in kplan.flags}
    used_in_block = set()
    phases = []
    for kind, stmts in _stretches(regions):
        if kind == "lanes":
            phases.append(stmts)
        else:
            used_in_block |= {n.name for st in stmts for n in m.walk(st) if isinstance(n, (m.Ref, m.VarDecl))}
    for r in walk_regions(regions):  # loop headers and branch conditions of the block
        if isinstance(r, (UniformLoop, UniformIf)):
            heads = (r.init, r.cond, r.step) if isinstance(r, UniformLoop) else (r.cond,)
            used_in_block |= {n.name for x in heads if x is not None for n in m.walk(x) if isinstance(n, m.Ref)}
    out = set()
    for name in sorted(candidates - used_in_block):
        if all(_set_first(stmts, name) for stmts in phases):
            out.add(name)
    return out


def _mentions(node, name: str) -> bool:
    return any(isinstance(n, (m.Ref, m.VarDecl)) and n.name == name for n in m.walk(node))


def _set_first(stmts, name: str) -> bool:
    """Whether ``stmts`` never read the value ``name`` has before them: the first statement that
    uses it sets it without reading it (an assignment, a declaration with a value, a ``for`` whose
    init assigns it), or is a loop or branch that does not test it and whose bodies each do so,
    with no use after it (a body that does not run leaves the earlier value); a declaration
    without a value is no use."""
    stmts = list(stmts)
    for k, st in enumerate(stmts):
        if not _mentions(st, name):
            continue
        if isinstance(st, m.DeclStmt):
            for d in st.decls:
                if d.name == name:
                    if d.init is not None:
                        return True
                elif d.init is not None and _mentions(d.init, name):
                    return False
            continue
        if _sets(st.init if isinstance(st, m.For) else st, name):
            return True
        rest = stmts[k + 1:]
        if any(_mentions(x, name) for x in rest):
            return False
        if isinstance(st, m.For) and not any(x is not None and _mentions(x, name) for x in (st.init, st.cond, st.step)):
            return _set_first(_body(st.body), name)
        if isinstance(st, (m.While, m.DoWhile)) and not _mentions(st.cond, name):
            return _set_first(_body(st.body), name)
        if isinstance(st, m.If) and not _mentions(st.cond, name):
            return _set_first(_body(st.then), name) and (st.other is None or _set_first(_body(st.other), name))
        if isinstance(st, m.Block):
            return _set_first(st.stmts, name)
        return False
    return True


def _body(st) -> tuple:
    return st.stmts if isinstance(st, m.Block) else (st,)


def _sets(st, name: str) -> bool:
    if not (isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "="):
        return False
    t = strip_casts(st.expr.target)
    return isinstance(t, m.Ref) and t.name == name and not _mentions(st.expr.value, name)


def _flag_condition(flags: tuple, span) -> m.Expr:
    cond = None
    for f in flags:
        negated = isinstance(f, tuple)
        name = f[1] if negated else f
        e = m.Ref(name, "local", m.Scalar("bool"), span)
        if negated:
            e = m.Unary("!", e, False, m.Scalar("bool"), span)
        cond = e if cond is None else m.Binary("&&", cond, e, m.Scalar("bool"), span)
    return cond


def _read_names(st) -> set:
    return {n.name for n in m.walk(st) if isinstance(n, m.Ref)}


# -- what the lanes may share ---------------------------------------------------------------------


def _stretches(regions):
    """The lifted regions' statements in program order, each a (kind, statements) pair: ``lanes``
    for a lane phase, ``block`` for block-level code, with ``loop`` markers around a uniform
    loop's body (which runs again after itself)."""
    for r in regions:
        if isinstance(r, LanePhase):
            yield "lanes", r.stmts
        elif isinstance(r, Phase):
            yield "block", r.stmts
        elif isinstance(r, UniformLoop):
            body = list(_stretches(r.body))
            yield from body
            yield from body  # the next iteration reads what this one stored
        elif isinstance(r, UniformIf):
            yield from _stretches(r.then)
            yield from _stretches(r.other)


def _root(e):
    return m.access_root(e, through=(m.Cast, m.Index, m.Member))


def _address(e):
    """The place an address names: ``&a[i]`` → ``a[i]``; anything else as it is."""
    e = strip_casts(e)
    return strip_casts(e.operand) if isinstance(e, m.Unary) and e.op == "&" else e


def _key(e):
    """The indices of an access (all of them, outermost array first) as a comparable value; None
    where it is not an index."""
    if not isinstance(e, m.Index):
        return None
    indices = []
    while isinstance(e, m.Index):
        indices.append(strip_casts(e.index))
        e = strip_casts(e.base)
    return _Key(tuple(reversed(indices)))


class _Key:
    """Index expressions compared by their printed form."""

    __slots__ = ("exprs", "text")

    def __init__(self, exprs) -> None:
        self.exprs, self.text = exprs, "|".join(m.dump(x) for x in exprs)

    def __eq__(self, other) -> bool:
        return isinstance(other, _Key) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _check_own_cells(regions, kplan: KernelPlan) -> None:
    """A stretch of lane code that stores to a shared array and reads it too stores to one place
    of it (the same index) and reads it only there: a read of another cell in the same stretch
    would race in CUDA too, and where the stores and reads of one stretch name several places (a
    compare-exchange of two cells), TileLang could not tell the lanes' cells apart and would order
    them with a barrier inside the lanes' code, which not every thread may reach. (Stores to
    several places that the stretch does not read need no barrier.)"""
    shared = {n for n, vp in kplan.vars.items() if vp.placement == "shared"}
    for kind, stmts in _stretches(regions):
        if kind != "lanes":
            continue
        stores: dict[str, set] = {}
        targets = set()
        for st in stmts:
            for t in m.store_targets(st):
                t = _address(t)  # an atomic's &s[i]: the cell it updates
                r = _root(t)
                if r is not None and r.name in shared:
                    stores.setdefault(r.name, set()).add(_key(t) if isinstance(t, m.Index) else None)
                    targets |= {id(x) for x in m.walk(t)}
        reads: dict[str, list] = {}
        for st in stmts:
            indexed = {id(x) for n in m.walk(st) if isinstance(n, m.Index) for x in m.walk(n.base)}
            for n in m.walk(st):
                if id(n) in targets or id(n) in indexed:  # a store, or the array an access indexes
                    continue
                if isinstance(n, m.Index) or isinstance(n, m.Ref) and n.kind == "shared":
                    r = _root(n) if isinstance(n, m.Index) else n
                    if r is not None and r.name in stores:
                        reads.setdefault(r.name, []).append((n, _key(n) if isinstance(n, m.Index) else None))
        for name, read in reads.items():
            keys = stores[name]
            where = read[0][0].span.line
            if len(keys) > 1:
                raise NotTileLoop(f"lane code stores to shared '{name}' at {len(keys)} places in the stretch that "
                                  f"reads it (line {where})")
            wrong = next((n for n, k in read if k not in keys), None)
            if wrong is not None:
                raise NotTileLoop(f"lane code reads shared '{name}' (line {wrong.span.line}) in the stretch "
                                  "that stores to it at another place")


def _check_lane_arrays(regions, variables) -> None:
    """A per-thread array that crosses a barrier is a lane buffer, a row of it per lane: on GPUs a
    TileLang fragment, which one lane loop must index alike wherever it names it (layout
    inference gives a fragment one index map per parallel loop). A stretch of lane code that
    reads or writes such an array at two places (``behind[i] = behind[i - 1]``, a register shift)
    has no fragment form: refused, so that the kernel keeps its portable form (where the array
    is a shared array indexed by the thread), not a tile form that builds on the CPU only."""
    arrays = {n for n, vp in variables.items() if vp.placement == "thread_array" and isinstance(vp.type, m.Array)}
    if not arrays:
        return
    for kind, stmts in _stretches(regions):
        if kind != "lanes":
            continue
        keys: dict[str, set] = {}
        for st in stmts:
            inner = set()  # the array names under an access already counted
            for n in m.walk(st):
                if id(n) in inner:
                    continue
                if isinstance(n, m.Index):
                    r = _root(n)
                    if r is not None and r.name in arrays:
                        keys.setdefault(r.name, set()).add(_key(n))
                        inner |= {id(x) for x in m.walk(n)}
                        continue
                if isinstance(n, m.Ref) and n.name in arrays:  # the whole array (passed to a function)
                    keys.setdefault(n.name, set()).add(None)
                    keys[n.name].add(("whole", n.span.line))
        for name, found in keys.items():
            if len(found) > 1:
                raise NotTileLoop(f"lane code names per-thread array '{name}' at {len(found)} places in one stretch "
                                  "(a lane loop on GPUs holds it as a fragment, which takes one index per loop)", decisive=True)
