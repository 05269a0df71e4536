"""Per-thread values of the portable form recomputed in each phase that reads them, instead of
being kept across barriers in a shared array.

The portable form runs each barrier interval as its own ``T.Parallel`` loop over the block's
threads, so a thread's local that a later interval reads lives in a shared array indexed by
the thread (``i[tx]``): a store, a load and ``block_x`` words of shared memory where the CUDA
kept a register. Real kernels mostly carry their indices this way (``int i = threadIdx.x +
blockIdx.x * blockDim.x;`` before the tile is loaded, ``out[i] = s;`` after the barrier). A
value that is a small expression of what every phase sees unchanged (the thread and block
indices and sizes, scalar parameters the kernel never assigns, literals, and other such
values) is computed again at the start of each later phase that reads it: the same value, in
a register, for a few integer operations.

Only locals declared at the kernel's top level (not inside a loop or branch around barriers,
where a later phase could read an earlier iteration's value), initialised once and never
assigned, of a scalar type, are recomputed; one that a warp exchange reads keeps its array.
"""
from __future__ import annotations

import dataclasses

from ..ir import model as m
from ..ir.loops import Exchange, KernelPlan, Phase, UniformIf, UniformLoop, walk_regions
from .facts.locals import assignment_counts

#: the builtins every phase sees with the same value
_BUILTINS = ("threadIdx", "blockIdx", "blockDim", "gridDim")
#: operators of a recomputed value (no assignment, no increment, no comma)
_BINARY = {"+", "-", "*", "/", "%", "<<", ">>", "&", "|", "^", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}
_UNARY = {"-", "+", "!", "~"}
#: the largest initialiser recomputed (nodes): an index, not a computation
_MAX_NODES = 24


def _cheap(e, known: set[str], params: set[str]) -> bool:
    """Whether ``e`` is a small expression of builtins, unassigned scalar parameters, literals and
    the ``known`` recomputable locals."""
    nodes = list(m.walk(e))
    if len(nodes) > _MAX_NODES:
        return False
    for n in nodes:
        if isinstance(n, (m.IntLit, m.FloatLit, m.BoolLit, m.Cast, m.Ternary)):
            continue
        if isinstance(n, m.Builtin):
            if n.var not in _BUILTINS:
                return False
        elif isinstance(n, m.Ref):
            if not (n.kind == "param" and n.name in params or n.kind == "local" and n.name in known):
                return False
        elif isinstance(n, m.Binary):
            if n.op not in _BINARY:
                return False
        elif isinstance(n, m.Unary):
            if n.op not in _UNARY or n.postfix:
                return False
        else:
            return False
    return True


def _reads(node, names: set[str]) -> set[str]:
    return {n.name for n in m.walk(node) if isinstance(n, m.Ref) and n.name in names}


def recompute_thread_values(kplan: KernelPlan) -> KernelPlan:
    """``kplan`` (portable) with its recomputable per-thread values (see the module doc) declared
    again in each later phase that reads them, no longer in shared arrays."""
    fn = kplan.fn
    if fn.body is None:
        return kplan
    counts = assignment_counts(fn.body)
    params = {p.name for p in fn.params if isinstance(p.type, m.Scalar) and counts.get(p.name, 0) == 0}
    # the recomputable top-level declarations, in order: name -> declaration
    known: dict[str, m.VarDecl] = {}
    for region in kplan.regions:
        for st in region.stmts if isinstance(region, Phase) else ():
            for d in st.decls if isinstance(st, m.DeclStmt) else ():
                vp = kplan.vars.get(d.name)
                if vp is not None and vp.single_assignment and vp.placement in ("thread_array", "phase", "kernel_var") \
                        and isinstance(d.type, m.Scalar) and d.storage == "local" and d.init is not None \
                        and _cheap(d.init, set(known), params):
                    known[d.name] = d
    exchanged = set()
    for region in walk_regions(kplan.regions):
        if isinstance(region, Exchange):
            for e in (region.value, region.lane, region.width):
                exchanged |= _reads(e, set(known)) if e is not None else set()
    targets = {n for n in known if kplan.vars[n].placement == "thread_array" and n not in exchanged
               and n not in kplan.flags}   # a branch's flag is read as an array by the phases it guards
    if not targets:
        return kplan
    needs = {}  # name -> the recomputable names its value reads, itself included, in declaration order
    for name in known:
        deps = {name}
        for r in _reads(known[name].init, set(known)):
            deps |= needs[r]
        needs[name] = deps
    position = {name: k for k, name in enumerate(known)}

    def phase(region: Phase) -> Phase:
        declared = {d.name for st in region.stmts if isinstance(st, m.DeclStmt) for d in st.decls}
        read = _reads(m.Block(region.stmts, region.span), targets) - declared
        if not read:
            return region
        wanted = sorted(set().union(*(needs[n] for n in read)) - declared, key=position.get)
        wanted = [n for n in wanted if n in targets or kplan.vars[n].placement == "phase"]
        decls = tuple(m.DeclStmt((known[n],), known[n].span) for n in wanted)
        return dataclasses.replace(region, stmts=decls + tuple(region.stmts))

    def walk(regions) -> tuple:
        out = []
        for r in regions:
            if isinstance(r, Phase):
                r = phase(r)
            elif isinstance(r, UniformLoop):
                r = dataclasses.replace(r, body=walk(r.body))
            elif isinstance(r, UniformIf):
                r = dataclasses.replace(r, then=walk(r.then), other=walk(r.other))
            out.append(r)
        return tuple(out)

    variables = dict(kplan.vars)
    for name in targets:
        variables[name] = dataclasses.replace(variables[name], placement="phase")
    return dataclasses.replace(kplan, regions=walk(kplan.regions), vars=variables)
