"""Lift a kernel whose threads are independent into a map over its element domain (tile form).

A kernel qualifies when, after :func:`~migrate.analysis.prepare.global_index.fold_global_indices`, it has no barrier,
shared memory or warp operation, reads no ``threadIdx`` except through a global index, and each
element stores only to places no other element stores to. It becomes a :class:`~migrate.ir.loops.TileMap`:
the domain is tiled, each tile one TileLang block, the elements of a tile one ``T.Parallel``
loop, so TileLang picks the thread mapping and vectorises full tiles.

Normalisations on the way:

- a grid-stride loop ``for (i = globalIdx; i < n; i += blockDim * gridDim)`` that makes up the
  kernel becomes a domain of ``n`` elements (the launch size no longer matters);
- a leftover ``blockIdx.d`` becomes the element's segment ``globalIdx.d / blockDim.d``;
- a block whose threads sweep its tile in row strips or along another dimension
  (``blockIdx.y * 32 + threadIdx.x``) gets element indices from :mod:`.block_tiles`;
- the bounds of the CUDA tail guard (``if (i < n)``) are recorded: a tile entirely inside them is
  a *full tile*, which TileLang compiles without the guard.

:func:`plan_map` raises :class:`NotLiftable` with the reason when the kernel does not qualify.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import assigned_names, conjuncts, factors, stored_roots, strip_casts
from ...ir.loops import KernelPlan, Phase, TileMap
from ...ir.visit import Transformer
from ..facts import radix
from ..facts.divergence import same_for_every_element
from ..phases import place_variables
from ..prepare.global_index import (blocks_as_segments, domain_dims, flat_grid_index, fold_global_indices,
                                    leftover_thread_indices, threads_as_lanes)
from .base import MayRace, NotLiftable
from .fold_lanes import fold_lanes
from .place_values import store_values, stores_place_value
from .stride_lanes import indices_of_elements


def _is_global(e, dim=None) -> str | None:
    e = strip_casts(e)
    if isinstance(e, m.Builtin) and e.var == "globalIdx" and (dim is None or e.dim == dim):
        return e.dim
    return None





def _stride_dim(step, value=None) -> str | None:
    """d when ``step`` is ``i += blockDim.d * gridDim.d`` (either order; ``value`` gives what a
    local read there holds)."""
    if not (isinstance(step, m.Assign) and step.op == "+=") or step.value is None:
        return None
    return _grid_stride(value(step.value) if value is not None else step.value)


def _grid_stride(v) -> str | None:
    """d when ``v`` is ``blockDim.d * gridDim.d`` (either order)."""
    v = strip_casts(v) if v is not None else None
    if isinstance(v, m.Binary) and v.op == "*":
        a, b = strip_casts(v.lhs), strip_casts(v.rhs)
        if isinstance(a, m.Builtin) and isinstance(b, m.Builtin) and a.dim == b.dim \
                and {a.var, b.var} == {"blockDim", "gridDim"}:
            return a.dim
    return None


def normalise_grid_stride(stmts: tuple, outer: dict | None = None) -> tuple[tuple, dict]:
    """A kernel that is (uniform declarations +) one grid-stride loop: the loop's body, with the
    loop variable declared from the global index, and the domain extent the loop bound. The
    start and the stride may be locals declared before the loop and never assigned again
    (``int index = ...; int stride = blockDim.x * gridDim.x; for (int i = index; ...; i += stride)``),
    the loop a ``while (index < n) { ...; index += stride; }`` over such a start, and the loop
    (with declarations before it) inside a test every element takes the same way
    (``if (B >= 0) { for (...) }``). ``outer``: such locals declared outside ``stmts``."""
    *head, last = stmts if stmts else (None,)
    if any(not isinstance(s, (m.DeclStmt, m.Empty)) for s in head):
        return stmts, {}
    assigned = set().union(*(assigned_names(s) for s in stmts))
    defs = dict(outer or {})
    defs.update({d.name: d.init for s in head if isinstance(s, m.DeclStmt) for d in s.decls
                 if d.init is not None and d.name not in assigned})
    if isinstance(last, m.If) and same_for_every_element(last.cond):
        inner, extents = normalise_grid_stride(last.then.stmts if isinstance(last.then, m.Block) else (last.then,),
                                               defs)
        if not extents:
            return stmts, {}
        if last.other is None:
            return tuple(head) + (dataclasses.replace(last, then=m.Block(inner, last.then.span)),), extents
        # if (B >= 0) { grid-stride loop over E1 } else { grid-stride loop over E2 }: one domain
        # of B >= 0 ? E1 : E2 elements, each running the branch its loop ran it in
        other, other_extents = normalise_grid_stride(
            last.other.stmts if isinstance(last.other, m.Block) else (last.other,), defs)
        if set(other_extents) != set(extents):
            return stmts, {}
        both = {d: m.Ternary(last.cond, extents[d], other_extents[d], extents[d].type, last.span)
                for d in extents}
        return tuple(head) + (dataclasses.replace(last, then=m.Block(inner, last.then.span),
                                                  other=m.Block(other, last.other.span)),), both

    def value(e):
        e = strip_casts(e) if e is not None else None
        return defs[e.name] if isinstance(e, m.Ref) and e.name in defs else e

    if isinstance(last, m.While):
        return _grid_stride_while(tuple(head), last, defs, value)
    if not isinstance(last, m.For) or last.init is None or not isinstance(last.init, m.DeclStmt):
        return stmts, {}
    decls = last.init.decls
    dim = _stride_dim(last.step, value)
    if len(decls) != 1 or dim is None or _is_global(value(decls[0].init), dim) is None:
        return stmts, {}
    var = decls[0].name
    cond = last.cond
    if not (isinstance(cond, m.Binary) and cond.op == "<" and isinstance(strip_casts(cond.lhs), m.Ref)
            and strip_casts(cond.lhs).name == var and same_for_every_element(cond.rhs)):
        return stmts, {}
    if var in assigned_names(last.body) or any(isinstance(n, (m.Break, m.Continue, m.Return))
                                                for n in m.walk(last.body)):
        return stmts, {}
    body = last.body.stmts if isinstance(last.body, m.Block) else (last.body,)
    if _carried(tuple(head), body):
        return stmts, {}
    return _unused_strides(tuple(head), (last.init,) + tuple(body)), {dim: cond.rhs}


def _grid_stride_while(head: tuple, loop: m.While, defs: dict, value) -> tuple[tuple, dict]:
    """``while (i < n) { body; i += stride; }`` with ``i`` a local declared from the global index
    and never assigned elsewhere: the body, over a domain of ``n`` elements."""
    cond = loop.cond
    body = loop.body.stmts if isinstance(loop.body, m.Block) else (loop.body,)
    whole = head + (loop,)
    if not (isinstance(cond, m.Binary) and cond.op == "<" and isinstance(strip_casts(cond.lhs), m.Ref)
            and same_for_every_element(cond.rhs) and body and isinstance(body[-1], m.ExprStmt)):
        return whole, {}
    var = strip_casts(cond.lhs).name
    start = next((d for s in head if isinstance(s, m.DeclStmt) for d in s.decls if d.name == var), None)
    dim = _stride_dim(body[-1].expr, value)
    if start is None or start.init is None or dim is None or _is_global(value(start.init), dim) is None:
        return whole, {}
    step = body[-1].expr
    if not (isinstance(step.target, m.Ref) and step.target.name == var) \
            or any(var in assigned_names(s) for s in body[:-1]) \
            or any(isinstance(n, (m.Break, m.Continue, m.Return)) for n in m.walk(loop.body)) \
            or _carried(head, body[:-1]):
        return whole, {}
    return _unused_strides(head, tuple(body[:-1])), {dim: cond.rhs}


def _carried(head: tuple, body: tuple) -> bool:
    """Whether a local declared in ``head`` carries a value from one iteration of the grid-stride
    loop ``body`` to the next: the body changes it and reads it before a plain assignment at its
    top level has given it the iteration's own value (a random generator's state, ``w = w * a +
    c; out[i] = w;``; a local array the body stores into and reads). A map starts every element
    from the value before the loop, so such a loop is no map."""
    declared = {d.name for s in head if isinstance(s, m.DeclStmt) for d in s.decls}
    changed = declared & (set().union(*(assigned_names(s) for s in body)) if body else set())
    arrays = declared & (stored_roots(body) if body else set())
    killed: set = set()
    for s in body:
        plain = s.expr if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
            and isinstance(s.expr.target, m.Ref) else None
        reads = [n.name for n in m.walk(plain.value if plain is not None else s) if isinstance(n, m.Ref)]
        if any(name in arrays or (name in changed and name not in killed) for name in reads):
            return True
        if plain is not None:
            killed.add(plain.target.name)
    return False


def _unused_strides(head: tuple, rest: tuple) -> tuple:
    """``head + rest`` without the declarations in ``head`` of a grid stride that nothing reads
    any more (the loop that stepped by it is gone)."""
    read = {n.name for s in head + rest for n in m.walk(s) if isinstance(n, m.Ref)}
    out = []
    for s in head:
        if isinstance(s, m.DeclStmt):
            kept = tuple(d for d in s.decls if d.name in read or _grid_stride(d.init) is None)
            if not kept:
                continue
            s = dataclasses.replace(s, decls=kept) if len(kept) != len(s.decls) else s
        out.append(s)
    return tuple(out) + rest


def normalise_block_stride(fn: m.Function) -> tuple[m.Function, dict]:
    """A 1-D kernel that is (per-block declarations +) one block-stride loop
    ``for (k = threadIdx.x; k < E; k += blockDim.x)``: each block handles E elements, so the
    domain is ``gridDim.x * E`` elements, ``k`` is ``globalIdx.x % E`` and the block
    ``globalIdx.x / E``."""
    stmts = fn.body.stmts if fn.body is not None else ()
    if not stmts:
        return fn, {}
    *head, last = stmts
    if not isinstance(last, m.For) or not isinstance(last.init, m.DeclStmt) or len(last.init.decls) != 1:
        return fn, {}
    decl = last.init.decls[0]
    init = strip_casts(decl.init) if decl.init is not None else None
    step = last.step
    if not (isinstance(init, m.Builtin) and init.var == "threadIdx" and init.dim == "x"):
        return fn, {}
    if not (isinstance(step, m.Assign) and step.op == "+=" and isinstance(strip_casts(step.value), m.Builtin)
            and strip_casts(step.value).var == "blockDim" and strip_casts(step.value).dim == "x"):
        return fn, {}
    cond = last.cond
    if not (isinstance(cond, m.Binary) and cond.op == "<" and isinstance(strip_casts(cond.lhs), m.Ref)
            and strip_casts(cond.lhs).name == decl.name and same_for_every_element(cond.rhs)):
        return fn, {}
    if any(not isinstance(st, (m.DeclStmt, m.Empty)) for st in head):
        return fn, {}
    builtins = [n for n in m.walk(fn.body) if isinstance(n, m.Builtin) and n.dim]
    if any(n.dim != "x" for n in builtins) or any(
            isinstance(n, m.Builtin) and n.var == "threadIdx" for st in head for n in m.walk(st)):
        return fn, {}
    body = last.body
    if decl.name in assigned_names(body) or any(isinstance(n, (m.Break, m.Continue, m.Return, m.Call))
                                                 and (not isinstance(n, m.Call) or n.kind in ("sync", "warp"))
                                                 for n in m.walk(body)):
        return fn, {}
    if any(n.var == "threadIdx" for n in m.walk(body) if isinstance(n, m.Builtin)):
        return fn, {}
    per = cond.rhs
    g = m.Builtin("globalIdx", "x", init.type, init.span)
    block = m.Binary("/", g, per, init.type, init.span)

    class _Blocks(Transformer):
        def leave_Builtin(self, node):
            return block if node.var == "blockIdx" else node

    new_decl = dataclasses.replace(decl, init=m.Cast(decl.type, m.Binary("%", g, per, init.type, init.span),
                                                     "implicit", decl.type, init.span))
    inner = body.stmts if isinstance(body, m.Block) else (body,)
    new_stmts = _Blocks().transform(tuple(head)) + (m.DeclStmt((new_decl,), last.init.span),) + \
        _Blocks().transform(tuple(inner))
    extent = m.Binary("*", m.Builtin("gridDim", "x", init.type, init.span), per, init.type, init.span)
    return dataclasses.replace(fn, body=m.Block(new_stmts, fn.body.span)), {"x": extent}


def _aliases_of_global(stmts, assigned: set[str]) -> dict[str, str]:
    """Locals declared as a global index and never reassigned: name -> dim."""
    out = {}
    for s in stmts:
        for n in m.walk(s):
            if isinstance(n, m.VarDecl) and n.init is not None and n.name not in assigned:
                d = _is_global(n.init)
                if d:
                    out[n.name] = d
    return out


def tail_bounds(stmts, aliases: dict[str, str]) -> dict[str, list[m.Expr]]:
    """Per dimension, the uniform bounds ``E`` of the guard ``if (i < E ...)`` that encloses the
    rest of the kernel (``i`` a global index or a local copy of one)."""
    bounds: dict[str, list[m.Expr]] = {}

    def index_dim(e):
        e = strip_casts(e)
        if isinstance(e, m.Ref) and e.name in aliases:
            return aliases[e.name]
        return _is_global(e)


    def visit(seq):
        seq = [s for s in seq if not isinstance(s, (m.DeclStmt, m.Empty))]
        if len(seq) != 1 or not isinstance(seq[0], m.If) or seq[0].other is not None:
            return
        for c in conjuncts(seq[0].cond):
            if isinstance(c, m.Binary) and c.op == "<" and index_dim(c.lhs) and same_for_every_element(c.rhs):
                bounds.setdefault(index_dim(c.lhs), []).append(c.rhs)
            elif isinstance(c, m.Binary) and c.op == ">" and index_dim(c.rhs) and same_for_every_element(c.lhs):
                bounds.setdefault(index_dim(c.rhs), []).append(c.lhs)
        then = seq[0].then
        visit(then.stmts if isinstance(then, m.Block) else (then,))

    visit(stmts)
    return bounds


def _dims_of(e, deps: dict[str, set[str]]) -> set[str]:
    out = set()
    for n in m.walk(e):
        if isinstance(n, m.Builtin) and n.var == "globalIdx":
            out.add(n.dim)
        elif isinstance(n, m.Ref) and n.name in deps:
            out |= deps[n.name]
    return out


def _local_assignments(stmts) -> list[tuple[str, m.Expr]]:
    """(local, value) of every declaration with a value and every assignment to a local."""
    assigned: list[tuple[str, m.Expr]] = []
    for s in stmts:
        for n in m.walk(s):
            if isinstance(n, m.VarDecl) and n.init is not None:
                assigned.append((n.name, n.init))
            elif isinstance(n, m.Assign) and isinstance(n.target, m.Ref):
                assigned.append((n.target.name, n.value))
    return assigned


def element_dependence(stmts) -> dict[str, set[str]]:
    """For each local, the domain dimensions its value depends on (a fixpoint over assignments)."""
    return _dependence(_local_assignments(stmts))


def _dependence(assigned) -> dict[str, set[str]]:
    """The fixpoint of ``(name, value)`` assignments: each name's dimensions, through the others'."""
    deps: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for name, value in assigned:
            new = _dims_of(value, deps) - deps.get(name, set())
            if new:
                deps.setdefault(name, set()).update(new)
                changed = True
    return deps


def _base_buffer(e) -> str | None:
    """The buffer parameter an indexed base is (through casts and members), or None."""
    root = m.access_root(e, through=(m.Cast, m.Member))
    return root.name if root is not None and root.kind == "param" else None


def check_stores(stmts, dims: list[str], threads: bool = False) -> tuple[str, ...]:
    """Each element must store only where no other element does: store indices that separate
    elements along every domain dimension (affine in the element index, see
    :func:`injective_in`; or stores under a condition that pins it), never on loaded data, and no
    two stores of a buffer that can meet; and a buffer that is written is read only at the
    element it writes. (Distinct buffers that may alias keep CUDA's meaning: each element's
    accesses stay in program order, and the emitter tells TileLang they may alias.)

    ``threads``: each element is one CUDA thread (no loop of the CUDA ran several elements in
    one thread). Then two elements that store to one place are two CUDA threads doing so with no
    barrier between them: a data race in the CUDA as well, whose outcome CUDA leaves open. Stores
    that cannot be proven apart are then no reason to refuse: the reasons come back, and the lift
    reports them (note M3006); each element keeps its own accesses in program order. A read
    where another element may store, and a store to a place an atomic hands out, are refused all
    the same (see below)."""
    unproven: list[str] = []

    def race(reason: str) -> None:
        if not threads:
            raise MayRace(reason)
        unproven.append(reason)

    stores: list[tuple[str, m.Expr, m.Stmt]] = []
    loads: list[tuple[str, m.Expr]] = []

    def visit(node, conds: tuple):
        if isinstance(node, m.If):
            visit(node.cond, conds)
            visit(node.then, conds + (node.cond,))
            if node.other is not None:
                visit(node.other, conds + (m.Unary("!", node.cond, False, node.cond.type, node.cond.span),))
            return
        if isinstance(node, (m.For, m.While, m.DoWhile)):
            for child in m.children(node):
                visit(child, conds + ((node.cond,) if getattr(node, "cond", None) is not None else ()))
            return
        if isinstance(node, m.Assign) and isinstance(node.target, m.Index):
            buf = _base_buffer(node.target.base)
            if buf is not None:
                stores.append((buf, node.target.index, node, conds))
                if node.op != "=":
                    loads.append((buf, node.target.index))
                visit(node.target.index, conds)
                visit(node.value, conds)
                return
        if isinstance(node, m.Unary) and node.op in ("++", "--") and isinstance(node.operand, m.Index):
            buf = _base_buffer(node.operand.base)
            if buf is not None:
                stores.append((buf, node.operand.index, node, conds))
                loads.append((buf, node.operand.index))
        if isinstance(node, m.Index):
            buf = _base_buffer(node.base)
            if buf is not None:
                loads.append((buf, node.index))
        if isinstance(node, m.Call) and node.kind == "atomic":
            return  # atomics combine: any element may update any place
        for child in m.children(node):
            visit(child, conds)

    for s in stmts:
        visit(s, ())
    def read_elsewhere(buf, index, line):
        """Refuse a read of ``buf`` at another place than the store ``index``; on the race rule
        (``threads``), a read where the element also stores (a swap of two places: bitonic steps)
        is a place no other element of a race-free run touches. A read where only another
        element may store is refused all the same, since real kernels that do so count on the
        CUDA's schedule (a scan with no barrier that warps keep in step, an in-place relaxation)."""
        own = [i for b, i, _n, _c in stores if b == buf]
        stored = _field_offsets(own)
        for other, at in loads:
            if other != buf or same_element(at, index) or _unstored_field(at, stored):
                continue
            why = f"'{buf}' is written at line {line} and read at another element"
            if any(same_element(at, i) for i in own):
                race(f"{why}: the result would depend on the order elements run in")
                return
            if threads:
                why += " where it does not store"
            raise NotLiftable(f"{why}: the result would depend on the order elements run in")

    from_atomics = atomic_results(stmts)
    placed = None  # the stores with their locals spelled out (analysis.lift.place_values)
    for buf, index, node, conds in stores:
        line = node.span.line
        if any(isinstance(n, (m.Index, m.Call)) for n in m.walk(index)):
            race(f"the store to '{buf}' at line {line} has a data-dependent index (a scatter)")
        else:
            expanded = expand_locals(index, stmts)
            pinned = {d for c in conds for d in _pinned_dims(expand_locals(c, stmts))}
            missing = [d for d in dims if d not in pinned and not injective_in(expanded, d)
                       and not radix.injective(expanded, d)]
            if not missing:
                read_elsewhere(buf, index, line)
                continue
            if placed is None:
                placed = store_values(stmts)
            if not any(b == buf for b, _i in loads) and len(placed.get(buf, ())) == sum(b == buf for b, *_ in stores) \
                    and stores_place_value(placed[buf], {b for b, *_ in stores}):
                continue  # elements that meet store the same value there (analysis.lift.place_values)
            race(f"the store to '{buf}' at line {line} does not tell elements apart along "
                 f"{'/'.join(missing)}: elements would race")
        # on the race rule (``threads``): a place an atomic hands out is refused (a slot from
        # atomicAdd: the places follow the order the threads run in), and reads as above
        if any(isinstance(n, m.Call) and n.kind == "atomic" or isinstance(n, m.Ref) and n.name in from_atomics
               for n in m.walk(index)):
            raise NotLiftable(f"the store to '{buf}' at line {line} goes to a place an atomic hands out: "
                              "the places follow the order the threads run in")
        read_elsewhere(buf, index, line)
    if unproven:
        return tuple(unproven)
    for i, (buf, index, node, conds) in enumerate(stores):
        for buf2, index2, node2, conds2 in stores[i + 1:]:
            if buf2 != buf or not stores_overlap(expand_locals(index, stmts), expand_locals(index2, stmts)):
                continue
            if _exclusive(conds, conds2):
                continue  # the two branches of a test every element takes the same way
            apart, why = _apart_by_guards((index, conds), (index2, conds2), stmts, dims)
            if not apart:
                race(f"the stores to '{buf}' at lines {node.span.line} and {node2.span.line} "
                     f"reach the same place from different elements{why}: elements would race")
                return tuple(unproven)
    return ()


def atomic_results(stmts) -> set[str]:
    """The locals whose value depends on what an atomic returned (``slot = atomicAdd(n, 1)``,
    ``at = base + slot``): a fixpoint over the assignments."""
    assigned = _local_assignments(stmts)
    out: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value in assigned:
            if name not in out and any(isinstance(n, m.Call) and n.kind == "atomic" or
                                       isinstance(n, m.Ref) and n.name in out for n in m.walk(value)):
                out.add(name)
                changed = True
    return out


def _exclusive(conds, conds2) -> bool:
    """Whether two stores sit on the two sides of one test that is the same for every element
    (``if (B >= 0) ... else ...``): no element's run, and no launch, makes both."""
    def negated(c):
        return c.operand if isinstance(c, m.Unary) and c.op == "!" else None
    for c in conds:
        for c2 in conds2:
            for a, b in ((c, c2), (c2, c)):
                inner = negated(b)
                if inner is not None and inner is a and same_for_every_element(a):
                    return True
    return False


def _apart_by_guards(a, b, stmts, dims) -> tuple[bool, str]:
    """Whether two stores (index, guards) of a 1-D map reach disjoint index ranges
    (:mod:`migrate.analysis.facts.store_ranges`), and if not, why (empty when the ranges are not known)."""
    from ..facts.store_ranges import reach, separated
    if dims != ["x"]:
        return False, ""
    ra, rb = (reach(expand_locals(i, stmts), [expand_locals(c, stmts) for c in cs]) for i, cs in (a, b))
    if ra is None or rb is None:
        return False, ""
    apart, why = separated(ra, rb)
    return apart, f" (their index ranges under the guards: {why})" if why else ""


def expand_locals(e, stmts):
    """``e`` with the element's single-assignment locals replaced by their values."""
    from ..facts.locals import expand
    return expand(e, _single_locals(tuple(stmts)))


_LOCALS: dict[tuple, tuple] = {}  # ids of statements -> (them, their single-assignment locals)


def _single_locals(stmts: tuple) -> dict:
    """The statements' single-assignment locals; the check asks for them once per index it
    compares, over the same statements, so the last few answers are kept."""
    from ..facts.locals import single_assignment_locals
    if not stmts:
        return {}
    key = tuple(id(s) for s in stmts)
    known = _LOCALS.get(key)
    if known is None or any(a is not b for a, b in zip(known[0], stmts)):
        if len(_LOCALS) > 32:
            _LOCALS.clear()
        known = _LOCALS[key] = (stmts, single_assignment_locals(m.Block(stmts, stmts[0].span)))
    return known[1]


def _global_atom(a, d) -> bool:
    a = strip_casts(a)
    return isinstance(a, m.Builtin) and a.var == "globalIdx" and a.dim == d


def injective_in(index, d) -> bool:
    """Whether ``index`` separates elements along dimension d: an affine form with a term
    ``globalIdx.d * c`` (c a nonzero constant or a uniform value), and ``globalIdx.d`` nowhere else
    (not under a division, a modulo, a load)."""
    from ..facts.affine import linear_form
    form = linear_form(index)
    if form is None:
        return False
    found = False
    for c, atom in form[0].values():
        if _global_atom(atom, d) and c != 0:
            found = True
            continue
        if isinstance(atom, m.Binary) and atom.op == "*":
            parts = factors(atom)
            hits = [f for f in parts if _global_atom(f, d)]
            if len(hits) == 1 and all(same_for_every_element(f) for f in parts if f is not hits[0]):
                found = True
            elif any(_global_atom(n, d) for n in m.walk(atom)):
                return False
            continue
        if any(_global_atom(n, d) for n in m.walk(atom)):
            return False
    return found


def _pinned_dims(cond) -> set[str]:
    """Dimensions a condition pins to one element (``i == 0`` with ``i`` the global index, a
    conjunct of it: not under a negation or an or)."""
    out = set()
    for n in conjuncts(cond):
        if isinstance(n, m.Binary) and n.op == "==":
            for g, other in ((n.lhs, n.rhs), (n.rhs, n.lhs)):
                g = strip_casts(g)
                if isinstance(g, m.Builtin) and g.var == "globalIdx" and same_for_every_element(other):
                    out.add(g.dim)
    return out


def stores_overlap(a, b) -> bool:
    """Whether two store indices of one buffer can name the same place for different elements:
    they differ by a constant that a multiple of the x stride reaches (lanes of a vector, at
    offsets below the stride, do not; where the index is not affine in the element, the
    polynomial rule of :func:`~migrate.analysis.facts.radix.apart`). Indices that are equal never
    overlap."""
    from ..facts.affine import linear_form, same_value
    if same_value(a, b):
        return False
    fa, fb = linear_form(a), linear_form(b)
    if fa is None or fb is None:
        return not radix.apart(a, b)  # x2[2 * (i % w + i / w * s)] and its next lane
    if set(fa[0]) != set(fb[0]):
        return True
    if any(fa[0][k][0] != fb[0][k][0] for k in fa[0]):
        return True
    delta = fa[1] - fb[1]
    strides = [c for c, atom in fa[0].values() if _global_atom(atom, "x")]
    if not strides:  # the element index inside what is not affine
        return not radix.apart(a, b)
    return delta % strides[0] == 0


def _const_split(e) -> tuple[str, int, int]:
    """(key of the base, constant offset, stride of the base) of ``base * k + c`` forms."""
    e = strip_casts(e)
    const = 0
    if isinstance(e, m.Binary) and e.op == "+" and isinstance(strip_casts(e.rhs), m.IntLit):
        const, e = strip_casts(e.rhs).value, strip_casts(e.lhs)
    stride = 1
    if isinstance(e, m.Binary) and e.op == "*" and isinstance(strip_casts(e.rhs), m.IntLit):
        stride = strip_casts(e.rhs).value
    return m.key(e), const, stride


def _field_offsets(indices) -> tuple[int, frozenset] | None:
    """(k, the offsets c) when every index is ``base * k + c`` with one constant k and
    0 <= c < k: the stored fields of an array of k-word records (``p[i].density``)."""
    splits = [_const_split(i) for i in indices]
    if not splits or len({k for _b, _c, k in splits}) != 1:
        return None
    k = splits[0][2]
    if k < 2 or any(not 0 <= c < k for _b, c, _k in splits):
        return None
    return k, frozenset(c for _b, c, _k in splits)


def _unstored_field(at, stored) -> bool:
    """Whether the read index ``at`` (``base * k + c``) is a field no store reaches: every
    place it names is c modulo k, every stored one another offset modulo k (``q[j].pos`` of
    another record while only ``p[i].density`` is written): no element's store meets it."""
    if stored is None:
        return False
    k, offsets = stored
    _base, c, stride = _const_split(at)
    return stride == k and 0 <= c < k and c not in offsets


def same_element(a, b) -> bool:
    """Whether indices ``a`` and ``b`` name places of the same element: equal, or lanes
    ``i * k + c`` (0 <= c < k) of one vector element (float4, half2 ... split into lanes)."""
    ka, ca, sa = _const_split(a)
    kb, cb, sb = _const_split(b)
    return ka == kb and (ca == cb or (sa == sb and 0 <= ca < sa and 0 <= cb < sb))


def strided_in_x(stmts) -> bool:
    """Whether some global access moves by more than one element when x does (``out[col * rows
    + row]``): such maps get square tiles, so both sides of the access stay partly contiguous.
    A factor that depends on x only through data (a place computed from a load or a float value:
    ``img[(int)floorf(r) * cols + c]``, a gather) is no stride: no tile shape makes it
    contiguous (distort's bilinear read made its map square, four elements a thread)."""
    deps = coordinate_dependence(stmts)
    for st in stmts:
        for n in m.walk(st):
            if isinstance(n, m.Index) and _base_buffer(n.base) is not None:
                for sub in m.walk(n.index):
                    if isinstance(sub, m.Binary) and sub.op == "*" and (
                            "x" in _coordinate_dims(sub.lhs, deps) and not isinstance(strip_casts(sub.rhs), m.IntLit)
                            or "x" in _coordinate_dims(sub.rhs, deps) and not isinstance(strip_casts(sub.lhs), m.IntLit)):
                        return True
    return False


def _data(e) -> bool:
    """Whether ``e`` reads memory, calls a function or computes in floating point: a value of
    data, not an integer coordinate."""
    return any(isinstance(n, (m.Index, m.Call, m.Member)) or isinstance(getattr(n, "type", None), m.Scalar)
               and n.type.dtype.startswith(("float", "bfloat")) for n in m.walk(e))


def coordinate_dependence(stmts) -> dict[str, set[str]]:
    """:func:`element_dependence` through integer coordinates only: a local assigned a value of
    data (:func:`_data`) depends on no dimension here."""
    return _dependence([(name, value) for name, value in _local_assignments(stmts) if not _data(value)])


def _coordinate_dims(e, deps) -> set[str]:
    return set() if _data(e) else _dims_of(e, deps)


def no_unit_stride_in_x(stmts) -> bool:
    """Whether no global access of the elements moves by one element when x does, so that none
    is one that a thread's several neighbouring elements would widen: each access is the same
    for every x (``prop->width``), strided (``dst[(row * cols + col) * 3 + 1]``, a CUDA vector's
    lane; ``a * K`` with K free of the domain and not 1) or a gather (its x-dependent part holds
    a load or a float value). An access of any other shape (``a[row * cols + col]``, a shift, a
    division) answers False."""
    deps = element_dependence(stmts)
    found = False
    for st in stmts:
        for n in m.walk(st):
            if not (isinstance(n, m.Index) and _base_buffer(n.base) is not None):
                continue
            found = True
            for term in _sum_terms(n.index):
                if "x" in _dims_of(term, deps) and not _strided(term, deps) and not _data(term):
                    return False
    return found


def stores_follow_y(stmts) -> bool:
    """Whether every store to a buffer parameter moves by one element when y does and by a stride
    when x does (nms: ``bitmap[i * MAX_DETECTIONS + j]``, i the x and j the y element): a sum
    whose terms that depend on x are products with a factor that does not (and is not 1), and
    whose terms that depend on y are not products and do not depend on x. Such a map runs its
    elements y-fastest (TileMap.y_major), so that a warp stores one contiguous run instead of one
    element in each of 32 rows; its loads of x-indexed data then read one place per warp."""
    deps = element_dependence(stmts)
    found = False
    for st in stmts:
        for n in m.walk(st):
            target = m.store_target(n)
            target = strip_casts(target) if target is not None else None
            if not isinstance(target, m.Index) or _base_buffer(target.base) is None:
                continue
            terms = _sum_terms(target.index)
            x_terms = [t for t in terms if "x" in _dims_of(t, deps)]
            y_terms = [t for t in terms if "y" in _dims_of(t, deps)]
            if not x_terms or not y_terms or any("x" in _dims_of(t, deps) for t in y_terms):
                return False
            if not all(_strided(t, deps) for t in x_terms) or any(_product(t) for t in y_terms):
                return False
            found = True
    return found


def _sum_terms(e) -> list:
    e = strip_casts(e)
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        return _sum_terms(e.lhs) + _sum_terms(e.rhs)
    return [e]


def _product(e) -> bool:
    e = strip_casts(e)
    return isinstance(e, m.Binary) and e.op in ("*", "<<")


def _strided(e, deps) -> bool:
    """``a * K`` (or ``a << s``) with K free of the domain's dimensions and not the literal 1."""
    e = strip_casts(e)
    if not _product(e):
        return False
    for a, k in ((e.lhs, e.rhs), (e.rhs, e.lhs)) if e.op == "*" else ((e.lhs, e.rhs),):
        k = strip_casts(k)
        if _dims_of(a, deps) and not _dims_of(k, deps) and not (isinstance(k, m.IntLit) and k.value in (0, 1)):
            return True
    return False


def normalise_flat_grid(fn: m.Function) -> tuple[m.Function, dict]:
    """A 1-D block kernel that numbers its threads across a 2-D grid row by row
    (``#define THREADID (((gridDim.x)*(blockIdx.y) + (blockIdx.x))*(blockDim.x) + (threadIdx.x))``):
    that rank is the global index of a domain of ``gridDim.x * gridDim.y * blockDim.x`` elements,
    where the kernel reads the thread and block indices no other way."""
    if fn.body is None:
        return fn, {}
    if not any(isinstance(n, m.Builtin) and n.var == "gridDim" and n.dim == "x" for n in m.walk(fn)):
        return fn, {}  # (no rank of that form without gridDim.x: the tree is not rebuilt)
    found = []

    class _Flat(Transformer):
        def leave_Binary(self, node):
            if flat_grid_index(node):
                found.append(node)
                return m.Builtin("globalIdx", "x", node.type, node.span)
            return node

    new = _Flat().transform(fn)
    if not found or any(isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockIdx") or
                        (isinstance(n, m.Builtin) and n.dim in ("y", "z") and n.var == "blockDim")
                        for n in m.walk(new.body)):
        return fn, {}
    like = found[0]

    def dim(var, d):
        return m.Builtin(var, d, like.type, like.span)
    extent = m.Binary("*", m.Binary("*", dim("gridDim", "x"), dim("gridDim", "y"), like.type, like.span),
                      dim("blockDim", "x"), like.type, like.span)
    return new, {"x": extent}


def fold_elements(fn: m.Function) -> tuple[m.Function, tuple, dict[str, int], dict[str, m.Expr], bool]:
    """A prepared kernel's thread indices as element indices: (the function, its statements,
    the block sizes the factory must assert, the domain extents that differ from grid × block,
    whether each element is one CUDA thread: no block-stride, strip or grid-stride loop of the
    CUDA ran several elements in one thread)."""
    from .block_tiles import fold_block_tiles, has_strip_loop
    from ..prepare.builtin_aliases import propagate_builtin_aliases
    fn = propagate_builtin_aliases(fn)
    fn, block_extents = normalise_block_stride(fn)
    threads = not block_extents
    fn, flat_extents = normalise_flat_grid(fn)
    block_extents = {**block_extents, **flat_extents}
    folded, block_sizes = fold_global_indices(fn)
    left = leftover_thread_indices(folded)
    tiles, not_tiles = None, None
    if left or has_strip_loop(fn):
        try:  # a tile per block, swept in strips or by other thread dimensions
            tiles = fold_block_tiles(fn)
        except NotLiftable as why:
            not_tiles = why
    if tiles is not None:
        folded, block_sizes, extents = tiles
        return folded, folded.body.stmts, block_sizes, extents, False
    _loop, strided = normalise_grid_stride(folded.body.stmts)
    if strided:  # thread and block indices in a grid-stride loop: the element's lane and block
        folded = dataclasses.replace(folded, body=m.Block(indices_of_elements(folded.body.stmts, strided),
                                                          folded.body.span))
        left = leftover_thread_indices(folded)
    folded = blocks_as_segments(folded)
    stmts = folded.body.stmts
    stmts, strided = normalise_grid_stride(stmts)
    if left and (strided or block_extents or not_tiles is not None and has_strip_loop(fn)):
        raise NotLiftable(f"threadIdx.{left[0].dim} is read at line {left[0].span.line} other than "
                          f"in the global index blockIdx.{left[0].dim} * blockDim.{left[0].dim} + "
                          f"threadIdx.{left[0].dim} (nor in a block tile: {not_tiles})")
    if left:
        # one element per CUDA thread, numbered as the CUDA numbers them: the thread index is the
        # element's place in its block (``threadIdx.d`` is ``globalIdx.d % blockDim.d``). A
        # kernel that sweeps its block's tile in strips is a block tile or nothing: why its tile
        # failed is the reason (above)
        stmts = threads_as_lanes(folded.body.stmts)
        folded = dataclasses.replace(folded, body=m.Block(stmts, folded.body.span))
    return folded, stmts, block_sizes, {**block_extents, **strided}, threads and not strided


def without_closing_barriers(fn: m.Function, kplan: KernelPlan) -> tuple[m.Function, KernelPlan]:
    """The kernel without the barriers that end its body (``...; __syncthreads(); }``), and its
    portable plan then: a barrier that no statement follows orders nothing (the kernel's end
    makes every store visible to what runs after it), so the statements before it are the whole
    kernel."""
    from ..phases import NotPortable, is_barrier_call, plan_portable
    stmts = fn.body.stmts if fn.body is not None else ()
    n = len(stmts)
    while n and (isinstance(stmts[n - 1], m.Empty) or isinstance(stmts[n - 1], m.ExprStmt)
                 and is_barrier_call(stmts[n - 1].expr)):
        n -= 1
    if n == len(stmts) or not any(isinstance(s, m.ExprStmt) and is_barrier_call(s.expr) for s in stmts[n:]):
        return fn, kplan
    trimmed = dataclasses.replace(fn, body=m.Block(stmts[:n], fn.body.span))
    try:
        return trimmed, dataclasses.replace(plan_portable(trimmed), aliases=kplan.aliases)
    except NotPortable:
        return fn, kplan


@dataclasses.dataclass(frozen=True)
class Elements:
    """A kernel's statements as the elements of a map (:func:`map_elements`), before their stores
    are checked: what :func:`plan_elements` needs, so that the check can be made again on CUDA's
    race rule without folding the kernel again."""

    fn: m.Function  # the kernel (without the barriers that end it)
    aliases: object  # its portable plan's pointer aliases
    folded: m.Function  # its thread indices as element indices (fold_elements)
    stmts: tuple
    block_sizes: dict
    extents: dict
    one_each: bool  # each element is one CUDA thread
    dims: tuple  # the domain's dimensions, x first


def plan_map(fn: m.Function, kplan: KernelPlan, device_fns: list[m.Function], threads: bool = True) -> KernelPlan:
    """The tile-form plan of a prepared kernel whose portable plan is ``kplan``. ``threads``:
    the kernel's threads are its own (not register micro-tiles expanded into elements), so that
    stores the lift cannot prove apart are left to CUDA's race rule (:func:`check_stores`)."""
    return plan_elements(map_elements(fn, kplan, device_fns), threads)


def map_elements(fn: m.Function, kplan: KernelPlan, device_fns: list[m.Function]) -> Elements:
    """The first half of :func:`plan_map`: the kernel's elements, or :class:`NotLiftable` where it
    has barriers, shared memory, warp operations or stores to no place."""
    fn, kplan = without_closing_barriers(fn, kplan)
    if kplan.form != "portable" or len(kplan.regions) != 1 or not isinstance(kplan.regions[0], Phase):
        raise NotLiftable("it has barriers or warp operations")
    views = m.param_views(fn.body)  # a buffer parameter read as another type: the parameter's memory
    shared = [n for n, vp in kplan.vars.items() if vp.placement in ("shared", "thread_array") and n not in views]
    if shared:
        raise NotLiftable(f"it keeps values in shared memory ('{shared[0]}')")
    for dev in device_fns:
        for n in m.walk(dev.body) if dev.body else ():
            if isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockIdx"):
                raise NotLiftable(f"device function '{dev.name}' reads {n.var}.{n.dim}")
    if any(isinstance(n, m.Call) and n.kind in ("warp", "cg", "sync") for n in m.walk(fn.body)):
        raise NotLiftable("it uses warp or cooperative-group operations")
    for n in m.walk(fn.body):  # stores a rewrite left where the CUDA has none (see below)
        target = m.store_target(n)
        if target is not None and not isinstance(strip_casts(target), (m.Ref, m.Index, m.Member, m.Unary)):
            raise NotLiftable(f"the assignment at line {n.span.line} stores to no variable or place")
        root = m.access_root(target, through=(m.Cast, m.Member, m.Index)) if isinstance(target, m.Index) else None
        if root is not None and root.kind == "param" and isinstance(root.type, m.Pointer) and root.type.const:
            # a rewrite that moved a store into an input (forward_shared: an in-place update of a staged cell)
            raise NotLiftable(f"the store at line {n.span.line} goes to '{root.name}', which the CUDA declares const")
    folded, stmts, block_sizes, extents, one_each = fold_elements(fn)
    dims = domain_dims(m.Block(stmts, fn.span))
    return Elements(fn, kplan.aliases, folded, tuple(stmts), block_sizes, extents, one_each, tuple(dims))


def plan_elements(elements: Elements, threads: bool = True) -> KernelPlan:
    """The second half of :func:`plan_map` (``threads`` as there): the elements' stores checked,
    their tail bounds and lanes found, the map's plan built."""
    fn, folded, stmts, dims = elements.fn, elements.folded, elements.stmts, list(elements.dims)
    races = check_stores(stmts, dims, threads=threads and elements.one_each)
    aliases = _aliases_of_global(stmts, set().union(*(assigned_names(s) for s in stmts)) if stmts else set())
    bounds = tail_bounds(stmts, aliases)
    square = len(dims) == 2 and strided_in_x(stmts)
    y_major = True if sorted(dims) == ["x", "y"] and not square and stores_follow_y(stmts) else None
    lanes, rest = 0, ()
    # CUDA vector lanes fold into a lane dimension (one wide access per element) where the
    # buffers cannot alias: lanes run on other threads than the CUDA element's
    restrict = all(p.restrict for p in fn.params if isinstance(p.type, m.Pointer))
    lane_form = fold_lanes(stmts) if dims == ["x"] and restrict and not races else None
    if lane_form is not None:
        lanes, stmts, rest = lane_form
    body_fn = dataclasses.replace(folded, body=m.Block(tuple(stmts) + tuple(rest), fn.body.span))
    # (a map run y-fastest has stores contiguous along y, and lanes folded back are one wide access)
    narrow = True if not lanes and not square and not y_major and no_unit_stride_in_x(tuple(stmts) + tuple(rest)) else None
    tile = TileMap(tuple(stmts), tuple(dims), elements.extents, bounds, fn.span, elements.block_sizes, square=square,
                   lanes=lanes, rest=tuple(rest), races=races, y_major=y_major, narrow=narrow)
    variables = place_variables(body_fn, (tile,), set(), portable=False)
    return KernelPlan(body_fn, "tile", (tile,), variables, elements.aliases)


def static_sizes(fn: m.Function, tile_map: TileMap, single: set[str]) -> tuple[str, ...]:
    """The integer scalar parameters a looped map compiles as constants on GPUs: those its
    statements read, when it keeps divisions by them in cells (``Scope.keep_divisions``: the
    coordinates of a flat index ``idx / (P * Q) % K``). At run-time
    sizes TileLang cannot bound the cells, nor products of sizes, and widens every index they
    reach to int64 (its ConfigIndexBitwidth pass); at constant sizes the divisions are values it
    bounds, and the index math stays int32 as in the CUDA."""
    nodes = [n for st in tile_map.stmts + tile_map.rest for n in m.walk(st)]
    if not any(isinstance(n, (m.For, m.While, m.DoWhile)) for n in nodes):
        return ()
    ints = {p.name for p in fn.params if isinstance(p.type, m.Scalar) and p.type.dtype in ("int32", "int64")}

    def by_size(e) -> bool:  # divides by a size: a scalar parameter (not by a constant)
        return any(isinstance(d, m.Binary) and d.op in ("/", "%") and any(
            isinstance(r, m.Ref) and r.kind == "param" and r.name in ints for r in m.walk(d.rhs)) for d in m.walk(e))
    if not any(isinstance(n, m.VarDecl) and n.init is not None and n.name in single and by_size(n.init)
               and isinstance(n.type, m.Scalar) for n in nodes):
        return ()
    read = {n.name for n in nodes if isinstance(n, m.Ref) and n.kind == "param"}
    return tuple(p.name for p in fn.params if p.name in ints & read)
