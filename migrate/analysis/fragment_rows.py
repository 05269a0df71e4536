"""Per-thread arrays of the portable form kept across barriers that GPUs hold in registers: a
TileLang fragment with a row per thread (``alloc_thread((block_x, 4), ...)``), where they were a
shared array with a row per thread.

A thread's array that lives across a barrier (CUB-style ``float vals[NUM]`` loaded before the
barrier and read after it, quantBnB's ``kQuantize``) was a shared array indexed ``[tx, k]``: a
shared store per element where it is written and a shared load where it is read, and the loads
after the barrier ordered behind the stores, so nvcc could not interleave the thread's work on
its elements as it did with the CUDA's registers. A fragment is registers on GPUs (a shared array
on the CPU target, as before), but TileLang's layout inference takes one index per fragment in
each parallel loop (``RecordBufferAccess``: ``vals[tx, j]`` and ``vals[tx, k]`` in one phase are
refused). And nvcc keeps a thread's array in registers only where every index is known once
loops are unrolled, else in local memory. So an array is a fragment row where, in every phase,
each access indexes it the same way, by a constant or by the variable of one counted loop of that
phase with constant bounds inside the array (unrolled by nvcc); never whole, never an element's
address, never in a warp exchange, never with an initialiser (printed as a store per element,
each at its own index). Arrays used at constant indices only are split into scalars
before this (prepare.array_elements); an array used otherwise keeps its shared row.
"""
from __future__ import annotations

from ..ir import model as m
from ..ir.exprs import const_value, counted_range, strip_casts
from ..ir.loops import Exchange, KernelPlan, Phase, walk_regions

#: the most elements of a thread's row held in registers
MAX_ELEMENTS = 32


def fragment_rows(kplan: KernelPlan) -> set[str]:
    """The names of the portable plan's per-thread arrays (placement ``thread_array``) that can be
    fragment rows on GPUs (module docstring)."""
    if kplan.form != "portable":
        return set()
    # (an initialiser list is printed as a store per element: one index each, refused)
    out = {name for name, vp in kplan.vars.items()
           if vp.placement == "thread_array" and vp.decl.init is None and _small_row(vp.decl.type)}
    for r in walk_regions(kplan.regions):
        if not out:
            break
        if isinstance(r, Phase):
            out -= _refused_in(r, out)
        elif isinstance(r, Exchange):
            for e in (r.value, r.lane, r.width, r.target):
                out -= {n.name for n in m.walk(e) if isinstance(n, m.Ref)} if e is not None else set()
    return out


def _small_row(t) -> bool:
    return isinstance(t, m.Array) and not t.volatile and isinstance(t.element, m.Scalar) \
        and t.extent is not None and 0 < t.extent <= MAX_ELEMENTS


def _refused_in(phase: Phase, names: set[str]) -> set[str]:
    """Those of ``names`` that ``phase`` uses otherwise than at one index, a constant or a counted
    loop's variable (module docstring)."""
    body = m.Block(phase.stmts, phase.span)
    decls: dict[str, int] = {}
    loops: dict[str, m.For] = {}
    for n in m.walk(body):
        if isinstance(n, m.VarDecl):
            decls[n.name] = decls.get(n.name, 0) + 1
        elif isinstance(n, m.For) and isinstance(n.init, m.DeclStmt) and len(n.init.decls) == 1:
            loops[n.init.decls[0].name] = n
    refused: set[str] = set()
    keys: dict[str, object] = {}
    indexed: set[int] = set()
    for n in m.walk(body):
        if isinstance(n, m.Unary) and n.op == "&" and isinstance(n.operand, m.Index) \
                and isinstance(n.operand.base, m.Ref) and n.operand.base.name in names:
            refused.add(n.operand.base.name)
        if not (isinstance(n, m.Index) and isinstance(n.base, m.Ref) and n.base.name in names):
            continue
        name = n.base.name
        indexed.add(id(n.base))
        key = _index_key(n.index, phase, decls, loops, n.base.type.extent)
        if key is None or keys.setdefault(name, key) != key:
            refused.add(name)
    refused |= {n.name for n in m.walk(body) if isinstance(n, m.Ref) and n.name in names and id(n) not in indexed}
    return refused


def _index_key(index, phase, decls, loops, extent):
    """``("c", k)`` for a constant index inside the row, ``("v", name)`` for the variable of a
    counted loop of the phase that stays inside the row, else None."""
    e = strip_casts(index)
    k = const_value(e)
    if isinstance(k, int) and not isinstance(k, bool):
        return ("c", k) if 0 <= k < extent else None
    if isinstance(e, m.Ref) and e.kind == "local" and decls.get(e.name) == 1 and e.name in loops \
            and _counted_within(loops[e.name], e.name, extent):
        return ("v", e.name)
    return None


def _counted_within(loop: m.For, var: str, extent: int) -> bool:
    """``for (int var = a; var < b; var++)`` (ir.exprs.counted_range) with ``0 <= a`` and ``b`` at
    most ``extent``."""
    counted = counted_range(loop)
    return counted is not None and counted[0] == var and counted[1] >= 0 and counted[2] <= extent
