"""Keep a row in registers: the lanes' strided loops of a lifted block reduction, unrolled when
the row length is compiled in.

The lanes of a lifted reduction (:mod:`.lift_reduce`) walk a row as CUDA's threads did,
``for (c = tid; c < cols; c += blockDim.x)``: at run-time sizes a while loop with one load in
flight per lane, and every phase reads the row from memory again. When all these loops are
bounded by the same scalar parameter and step alike, the launcher may compile that parameter in
(``Signature.specialize``): each loop then runs ``ceil(cols / step)`` times and unrolls
(:class:`~.loop_ir.RowLoop`), and an element that several lane phases read at the lane's
strided position is loaded once, by the first of them, into a per-lane register array that the
later phases read (:class:`~.loop_ir.RowCache`).

A read ``B[u..., c]`` is kept in registers only when it is provably the same value in every
phase that reads it:

- its last index is the loop's variable ``c`` (the lane's own element) and the others are the
  same in every lane and phase (parameters, block indices, constants);
- the kernel stores to ``B`` nowhere, nor through another buffer (``B`` is ``__restrict__``, or
  the kernel stores to no buffer at all);
- the phases are top-level loops of lane phases in one block-level sequence (not in branches of
  their own), and the loading loop reads it on every iteration, so the load runs where CUDA's did.

:func:`plan_row_registers` returns the plan with its strided loops as RowLoops and a
:class:`~.loop_ir.RowPlan`, or the plan unchanged and the reason (None: no strided loop).
"""
from __future__ import annotations

import dataclasses

from ..parse import model as m
from .affine import strip_int_casts, value_key
from .lift_reduce import _is_lane, lane_aliases
from .loop_ir import BlockReduce, KernelPlan, LanePhase, RowCache, RowLoop, RowPlan, UniformIf, UniformLoop

#: The most elements a lane keeps of a row (registers per thread; beyond, the loops stay loops).
MAX_ROW_STEPS = 64
#: The longest row the launcher compiles in (a kernel per distinct length up to it).
MAX_ROW_LENGTH = 8192

_POSITION = "@lane_position"  # the loop variable in a read's key


@dataclasses.dataclass
class _Loop:
    loop: m.For
    var: str
    limit: m.Ref
    step: m.Expr
    top: bool  # a top-level statement of its lane phase


def strided_loop(f: m.For, lanes: set[str]) -> tuple[str, m.Expr, m.Expr] | None:
    """(variable, bound, step) of ``for (int c = <lane>; c < bound; c += step)`` whose body
    leaves ``c`` alone and does not leave the loop early; None for any other loop."""
    if not (isinstance(f.init, m.DeclStmt) and len(f.init.decls) == 1 and f.init.decls[0].init is not None):
        return None
    var = f.init.decls[0].name
    if not _is_lane(f.init.decls[0].init, lanes):
        return None
    c, s = f.cond, f.step
    if not (isinstance(c, m.Binary) and c.op == "<" and isinstance(strip_int_casts(c.lhs), m.Ref)
            and strip_int_casts(c.lhs).name == var):
        return None
    if not (isinstance(s, m.Assign) and s.op == "+=" and isinstance(s.target, m.Ref) and s.target.name == var):
        return None
    for n in m.walk(f.body):
        if isinstance(n, (m.Break, m.Continue, m.Return)):
            return None
        if isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name == var:
            return None
        if isinstance(n, m.Unary) and n.op in ("++", "--", "&") and isinstance(n.operand, m.Ref) \
                and n.operand.name == var:
            return None
    return var, strip_int_casts(c.rhs), s.value


def _fixed_step(e) -> bool:
    """A step the factory knows: the block size, a constant, a template value."""
    e = strip_int_casts(e)
    return (isinstance(e, m.Builtin) and e.var == "blockDim" and e.dim == "x") or isinstance(e, m.IntLit) \
        or (isinstance(e, m.Ref) and e.kind == "template")


def _scalar_param(e, fn: m.Function) -> bool:
    """``e`` names an integer scalar parameter that the kernel never assigns."""
    if not (isinstance(e, m.Ref) and e.kind == "param"):
        return False
    p = next((p for p in fn.params if p.name == e.name), None)
    if p is None or not isinstance(p.type, m.Scalar) or p.type.dtype not in ("int32", "int64"):
        return False
    return not any(isinstance(t, m.Ref) and t.name == e.name for t in m.store_targets(fn.body))


def _lane_stmts(r):
    """The statements ``r`` runs once per lane, or None."""
    if isinstance(r, BlockReduce) and not r.per_warp:
        return r.before
    if isinstance(r, LanePhase):
        return r.stmts
    return None


def _sequences(regions):
    """Each block-level sequence of regions (the top level, each branch of a uniform if)."""
    yield regions
    for r in regions:
        if isinstance(r, UniformIf):
            yield from _sequences(r.then)
            yield from _sequences(r.other)


def _loops_in(stmts, lanes) -> list[tuple[m.For, bool]]:
    """The strided lane loops under ``stmts`` (not inside one another), each with whether it is
    a top-level statement."""
    found = []

    def visit(node, top):
        if isinstance(node, m.For) and strided_loop(node, lanes) is not None:
            found.append((node, top))
            return
        for child in m.children(node):
            visit(child, False)

    for st in stmts:
        visit(st, True)
    return found


def _reads(body, var: str, fn: m.Function) -> list[tuple[str, m.Index, bool]]:
    """(key, read, unconditional) of the body's reads ``B[u..., var]`` of pointer parameters
    whose other indices are uniform."""
    pointers = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
    out = []

    def visit(node, cond, target):
        if isinstance(node, m.Index) and not target:
            root = m.access_root(node, (m.Index,))
            if root is not None and root.kind == "param" and root.name in pointers and _at_position(node, var):
                key = value_key(_with_position(node, var))
                out.append((key, node, not cond))
        if isinstance(node, m.Index):
            visit(node.index, cond, False)
            if isinstance(node.base, m.Index):
                visit(node.base, cond, True)  # the row of a read, not a read of its own
            return
        if isinstance(node, m.Assign):
            visit(node.target, cond, node.op == "=")
            visit(node.value, cond, False)
            return
        branchy = isinstance(node, (m.If, m.For, m.While, m.DoWhile, m.Switch, m.Ternary)) or \
            (isinstance(node, m.Binary) and node.op in ("&&", "||"))
        for i, child in enumerate(m.children(node)):
            # a condition runs every time; what it guards does not
            visit(child, cond or (branchy and not (i == 0 and isinstance(node, (m.If, m.Ternary, m.Binary)))),
                  False)

    for st in body:
        visit(st, False, False)
    return out


def _at_position(ix: m.Index, var: str) -> bool:
    """``ix`` is ``B[u..., var]`` with every ``u`` the same in every lane (parameters, block
    indices, constants)."""
    last = strip_int_casts(ix.index)
    if not (isinstance(last, m.Ref) and last.name == var):
        return False
    base = ix.base
    while isinstance(base, m.Index):
        if not _uniform(base.index):
            return False
        base = base.base
    return True


def _uniform(e) -> bool:
    for n in m.walk(e):
        if isinstance(n, m.Ref) and n.kind not in ("param", "template", "enum"):
            return False
        if isinstance(n, m.Builtin) and n.var == "threadIdx":
            return False
        if isinstance(n, (m.Index, m.Call, m.Assign, m.Unary)) and not (isinstance(n, m.Unary) and n.op == "-"):
            return False
    return True


def _with_position(ix: m.Index, var: str):
    def swap(node):
        if isinstance(node, m.Ref) and node.name == var:
            return m.Ref(_POSITION, "local", node.type, node.span)
        return m.map_children(node, swap)
    return swap(ix)


def read_key(ix: m.Index, var: str) -> str | None:
    """The key of a read at the lane's position ``var`` (None for another read)."""
    return value_key(_with_position(ix, var)) if _at_position(ix, var) else None


def _names(fn: m.Function) -> set[str]:
    out = {p.name for p in fn.params}
    out |= {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl)}
    return out


def plan_row_registers(kplan: KernelPlan) -> tuple[KernelPlan, str | None]:
    fn = kplan.fn
    lanes = lane_aliases(fn)
    found: list[_Loop] = []
    for seq in _sequences(kplan.regions):
        for r in seq:
            if isinstance(r, UniformLoop) and any(
                    isinstance(n, m.For) and strided_loop(n, lanes) for st in _loop_stmts(r) for n in m.walk(st)):
                return kplan, "a lane's strided loop runs inside a loop around barriers"
            stmts = _lane_stmts(r)
            for f, top in _loops_in(stmts or (), lanes):
                var, limit, step = strided_loop(f, lanes)
                found.append(_Loop(f, var, limit, step, top))
    if not found:
        return kplan, None
    first = found[0]
    for lp in found:
        if not _scalar_param(lp.limit, fn):
            return kplan, f"the bound of the lanes' loop over '{lp.var}' is not a scalar parameter"
        if not _fixed_step(lp.step):
            return kplan, f"the lanes' loop over '{lp.var}' steps by an amount known only at run time"
        if lp.limit.name != first.limit.name:
            return kplan, (f"the lanes' strided loops run over different ranges "
                           f"('{first.limit.name}', '{lp.limit.name}')")
        if value_key(lp.step) != value_key(first.step):
            return kplan, "the lanes' strided loops step by different amounts"
    caches, loads, reads = _plan_caches(kplan, fn, lanes)
    by_loop = {id(lp.loop): lp for lp in found}

    def rewrite(node):
        if isinstance(node, m.For) and id(node) in by_loop:
            lp = by_loop[id(node)]
            return RowLoop(node, lp.var, tuple(loads.get(id(node), ())), tuple(reads.get(id(node), ())), node.span)
        return m.map_children(node, rewrite)

    regions = _rewrite_regions(kplan.regions, rewrite)
    rows = RowPlan(first.limit.name, first.step, tuple(caches), first.loop.span)
    return dataclasses.replace(kplan, regions=regions, rows=rows), None


def _loop_stmts(r: UniformLoop):
    for x in r.body:
        stmts = _lane_stmts(x)
        if stmts:
            yield from stmts
        if isinstance(x, UniformLoop):
            yield from _loop_stmts(x)


def _plan_caches(kplan: KernelPlan, fn: m.Function, lanes):
    """The register arrays of each block-level sequence, and for each loop (by id) the arrays it
    loads and the reads it takes from them."""
    stored = {root.name for t in m.store_targets(fn.body) if (root := m.access_root(t)) is not None}
    pointers = {p.name: p for p in fn.params if isinstance(p.type, m.Pointer)}
    stores_buffers = bool(stored & set(pointers))
    taken = _names(fn)
    caches: list[RowCache] = []
    loads: dict[int, list] = {}
    reads: dict[int, list] = {}
    for seq in _sequences(kplan.regions):
        loops = []
        for r in seq:
            for f, top in _loops_in(_lane_stmts(r) or (), lanes):
                if top:
                    var = strided_loop(f, lanes)[0]
                    loops.append((f, _reads(f.body.stmts if isinstance(f.body, m.Block) else (f.body,), var, fn)))
        seen: dict[str, str] = {}  # key -> register array
        for i, (f, found) in enumerate(loops):
            for key, ix, unconditional in found:
                if key in seen:
                    if (key, seen[key]) not in reads.setdefault(id(f), []):
                        reads[id(f)].append((key, seen[key]))
                    continue
                buffer = m.access_root(ix, (m.Index,)).name
                later = any(key in {k for k, _, _ in other} for _, other in loops[i + 1:])
                if not (unconditional and later) or buffer in stored:
                    continue
                if stores_buffers and not pointers[buffer].restrict:
                    continue
                name = _fresh(f"{buffer}_regs", taken)
                seen[key] = name
                caches.append(RowCache(name, buffer, ix.type, ix.span))
                loads.setdefault(id(f), []).append((name, ix))
                reads.setdefault(id(f), []).append((key, name))
    return caches, loads, reads


def _fresh(base: str, taken: set[str]) -> str:
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def _rewrite_regions(regions, rewrite):
    out = []
    for r in regions:
        if isinstance(r, BlockReduce) and not r.per_warp:
            r = dataclasses.replace(r, before=tuple(rewrite(s) for s in r.before))
        elif isinstance(r, LanePhase):
            r = dataclasses.replace(r, stmts=tuple(rewrite(s) for s in r.stmts))
        elif isinstance(r, UniformIf):
            r = dataclasses.replace(r, then=_rewrite_regions(r.then, rewrite), other=_rewrite_regions(r.other, rewrite))
        out.append(r)
    return tuple(out)
