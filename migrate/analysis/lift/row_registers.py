"""Keep a row in registers: the lanes' strided loops of a lifted reduction, unrolled when the
row length is compiled in.

The lanes of a lifted reduction (:mod:`.reduce`) walk a row as CUDA's threads did,
``for (c = tid; c < cols; c += blockDim.x)`` in a block reduction, ``for (c = lane; c < cols;
c += 32)`` in a reduction per warp (:mod:`.warp_rows`, one warp per row): at run-time sizes
a loop with one load in flight per lane, and every phase reads the row from memory again. When
all these loops are bounded by the same scalar parameter and step alike, the launcher may compile
that parameter in (``Signature.specialize``): each loop then runs ``ceil(cols / step)`` times and
unrolls (:class:`~migrate.ir.loops.RowLoop`), and an element that several lane phases read at the
lane's strided position is loaded once, by the first of them, into a per-lane register array
that the later phases read (:class:`~migrate.ir.loops.RowCache`), where a lane holds at most
``MAX_ROW_STEPS`` elements (longer rows run the CUDA loops). A kernel with no element to keep
in registers is not compiled per length: unrolling alone gained nothing measurable.

A read ``B[u..., c]`` (or ``B[u + c]`` of a flat buffer) is kept in registers only when it is
provably the same value in every phase that reads it:

- its last index is the loop's variable ``c`` (the lane's own element) and the others are the
  same in every phase of the lane (parameters, block indices, constants; in a reduction per warp
  also the locals its lane loops recompute alike, such as the warp's row);
- ``B`` changes only where the register array follows it: the kernel's only stores to ``B`` are
  plain stores ``B[u..., c] = v`` of that element in the sequence's strided loops, which store
  to the register too (a lane's own element, as :func:`~.warp_rows.own_elements` proves
  for reductions per warp); nothing stores to it through another buffer (``B`` is
  ``__restrict__``, or the kernel stores to no buffer at all);
- the phases are top-level loops of lane phases in one block-level sequence (not in branches of
  their own), and the first of them that touches the element reads or stores it on every
  iteration, so the load runs where CUDA's did (or no load is needed).

:func:`plan_row_registers` returns the plan with its strided loops as RowLoops and a
:class:`~migrate.ir.loops.RowPlan`, or the plan unchanged and the reason (None: no strided loop).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.names import fresh
from ...ir.visit import Transformer
from ...ir.exprs import strip_int_casts
from ...ir.loops import BlockReduce, KernelPlan, LanePhase, RowCache, RowLoop, RowPlan, UniformIf, UniformLoop
from ..facts.affine import value_key
from .reduce import is_lane, lane_aliases
from .warp_trees import Roles

_POSITION = "@lane_position"  # the loop variable in a read's key


@dataclasses.dataclass
class _Loop:
    loop: m.For
    var: str
    limit: m.Ref
    step: m.Expr
    top: bool  # a top-level statement of its lane phase
    per_warp: bool  # in a reduction per warp's lane loops


def strided_loop(f: m.For, is_lane) -> tuple[str, m.Expr, m.Expr] | None:
    """(variable, bound, step) of ``for (int c = <lane>; c < bound; c += step)`` whose body
    leaves ``c`` alone and does not leave the loop early (``is_lane(e)``: ``e`` is the lane's
    index, a thread's in its block or a lane's in its warp); None for any other loop."""
    if not (isinstance(f.init, m.DeclStmt) and len(f.init.decls) == 1 and f.init.decls[0].init is not None):
        return None
    var = f.init.decls[0].name
    if not is_lane(f.init.decls[0].init):
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
    """A step the factory knows: the block size, a constant, a template value, ``warpSize``."""
    e = strip_int_casts(e)
    return (isinstance(e, m.Builtin) and (e.var == "blockDim" and e.dim == "x" or e.var == "warpSize")) \
        or isinstance(e, m.IntLit) or (isinstance(e, m.Ref) and e.kind == "template")


def _scalar_param(e, fn: m.Function) -> bool:
    """``e`` names an integer scalar parameter that the kernel never assigns."""
    if not (isinstance(e, m.Ref) and e.kind == "param"):
        return False
    p = next((p for p in fn.params if p.name == e.name), None)
    if p is None or not isinstance(p.type, m.Scalar) or p.type.dtype not in ("int32", "int64"):
        return False
    return not any(isinstance(t, m.Ref) and t.name == e.name for t in m.store_targets(fn.body))


def _lane_parts(r) -> list[tuple[tuple, bool]]:
    """(statements, per warp) of each stretch of ``r`` that runs once per lane: a block
    reduction's code before its tree, a reduction per warp's code before and after its tree
    (lanes as (warp, lane) pairs), a lane phase."""
    if isinstance(r, BlockReduce):
        return [(r.before, True), (r.after, True)] if r.per_warp else [(r.before, False)]
    if isinstance(r, LanePhase):
        return [(r.stmts, False)]
    return []


def _sequences(regions):
    """Each block-level sequence of regions (the top level, each branch of a uniform if)."""
    yield regions
    for r in regions:
        if isinstance(r, UniformIf):
            yield from _sequences(r.then)
            yield from _sequences(r.other)


def _loops_in(stmts, is_lane) -> list[tuple[m.For, bool]]:
    """The strided lane loops under ``stmts`` (not inside one another), each with whether it is
    a top-level statement."""
    found = []

    def visit(node, top):
        if isinstance(node, m.For) and strided_loop(node, is_lane) is not None:
            found.append((node, top))
            return
        for child in m.children(node):
            visit(child, False)

    for st in stmts:
        visit(st, True)
    return found


class _Lanes:
    """The lane index of the kernel's lane stretches: ``threadIdx.x`` (its aliases) in a block,
    the lane in its warp (``threadIdx.x & 31``, ``% warpSize``) in a reduction per warp."""

    def __init__(self, fn: m.Function) -> None:
        self.aliases = lane_aliases(fn)
        self.roles = Roles(fn, self.aliases)

    def of(self, per_warp: bool):
        return self.roles.is_lane if per_warp else (lambda e: is_lane(e, self.aliases))


def _warp_constants(kplan: KernelPlan, fn: m.Function) -> set[str]:
    """Locals that every lane loop of a reduction per warp recomputes alike from its prefix
    (``row = blockIdx.x * 4 + warp``): declared there from parameters, thread and block indices
    and constants (no loads, no calls), and never changed."""
    changed = {t.name for t in m.store_targets(fn.body) if isinstance(t, m.Ref)}
    changed |= {n.operand.name for n in m.walk(fn.body)
                if isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--", "&") and isinstance(n.operand, m.Ref)}
    out: set[str] = set()

    def regions(rs):
        for r in rs:
            if isinstance(r, UniformIf):
                yield from regions(r.then)
                yield from regions(r.other)
            else:
                yield r

    for r in regions(kplan.regions):
        if not (isinstance(r, BlockReduce) and r.per_warp):
            continue
        for d in (d for st in r.prefix if isinstance(st, m.DeclStmt) for d in st.decls):
            if d.init is None or d.name in changed:
                continue
            if all(_uniform_node(n, out, threads=True) for n in m.walk(d.init)):
                out.add(d.name)
    return out


def _uniform_node(n, allowed: set[str], threads: bool = False) -> bool:
    if isinstance(n, m.Ref) and n.kind not in ("param", "template", "enum") and n.name not in allowed:
        return False
    if isinstance(n, m.Builtin) and n.var == "threadIdx" and not threads:
        return False
    return not (isinstance(n, (m.Index, m.Call, m.Assign, m.Unary)) and not (isinstance(n, m.Unary) and n.op == "-"))


def _uniform(e, allowed: set[str]) -> bool:
    """``e`` is the same in every phase of a lane: parameters, block indices, constants, the
    ``allowed`` locals."""
    return all(_uniform_node(n, allowed) for n in m.walk(e))


def _offset(ix: m.Index, var: str):
    """``u`` of ``B[..., u + var]`` (``B[..., var]``: None), or False when the last index is not
    the lane's position ``var`` plus something."""
    last = strip_int_casts(ix.index)
    if isinstance(last, m.Ref) and last.name == var:
        return None
    if isinstance(last, m.Binary) and last.op == "+":
        for a, b in ((last.lhs, last.rhs), (last.rhs, last.lhs)):
            a = strip_int_casts(a)
            if isinstance(a, m.Ref) and a.name == var and not any(
                    isinstance(n, m.Ref) and n.name == var for n in m.walk(b)):
                return b
    return False


def _at_position(ix: m.Index, var: str, allowed: set[str]) -> bool:
    """``ix`` is ``B[u..., var]`` (or ``B[u + var]``) with every ``u`` the same in every phase
    of the lane (parameters, block indices, constants, ``allowed`` locals)."""
    offset = _offset(ix, var)
    if offset is False or (offset is not None and not _uniform(offset, allowed)):
        return False
    base = ix.base
    while isinstance(base, m.Index):
        if not _uniform(base.index, allowed):
            return False
        base = base.base
    return True


def _with_position(ix: m.Index, var: str):
    def swap(node):
        if isinstance(node, m.Ref) and node.name == var:
            return m.Ref(_POSITION, "local", node.type, node.span)
        return m.map_children(node, swap)
    return swap(ix)


def read_key(ix: m.Index, var: str) -> str | None:
    """The key of an access at the lane's position ``var`` (None for another access); the
    analysis has checked the other indices of the keys it keeps in registers."""
    return value_key(_with_position(ix, var)) if _offset(ix, var) is not False else None


@dataclasses.dataclass
class _Access:
    key: str
    index: m.Index
    unconditional: bool
    store: m.Assign | None = None  # a plain store ``B[...] = v`` (a statement of its own)


def _accesses(body, var: str, fn: m.Function, allowed: set[str]) -> list[_Access]:
    """The body's reads ``B[u..., var]`` of pointer parameters whose other indices are the same
    in every phase, and its plain stores there, in the order they run."""
    pointers = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
    out = []

    def ours(ix) -> bool:
        root = m.access_root(ix, (m.Index,))
        return root is not None and root.kind == "param" and root.name in pointers and _at_position(ix, var, allowed)

    def visit(node, cond, target):
        if isinstance(node, m.ExprStmt) and isinstance(node.expr, m.Assign) and node.expr.op == "=" \
                and isinstance(node.expr.target, m.Index):
            a = node.expr
            visit(a.target, cond, True)
            visit(a.value, cond, False)
            if ours(a.target):
                out.append(_Access(value_key(_with_position(a.target, var)), a.target, not cond, a))
            return
        if isinstance(node, m.Index) and not target and ours(node):
            out.append(_Access(value_key(_with_position(node, var)), node, not cond))
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


def _names(fn: m.Function) -> set[str]:
    out = {p.name for p in fn.params}
    out |= {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl)}
    return out


def plan_row_registers(kplan: KernelPlan) -> tuple[KernelPlan, str | None]:
    fn = kplan.fn
    lanes = _Lanes(fn)
    found: list[_Loop] = []
    for seq in _sequences(kplan.regions):
        for r in seq:
            if isinstance(r, UniformLoop) and any(
                    isinstance(n, m.For) and strided_loop(n, lanes.of(per_warp))
                    for stmts, per_warp in _loop_parts(r) for st in stmts for n in m.walk(st)):
                return kplan, "a lane's strided loop runs inside a loop around barriers"
            for stmts, per_warp in _lane_parts(r):
                for f, top in _loops_in(stmts, lanes.of(per_warp)):
                    var, limit, step = strided_loop(f, lanes.of(per_warp))
                    found.append(_Loop(f, var, limit, step, top, per_warp))
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
        if lp.per_warp != first.per_warp:
            return kplan, "some lanes' strided loops run in a block's lanes, others in a warp's"
    allowed = _warp_constants(kplan, fn) if first.per_warp else set()
    caches, uses = _plan_caches(kplan, fn, lanes, allowed)
    if not caches:  # unrolling alone gained nothing measurable (H200: row_mean x1.02; gemv_warp_per_row 0.97 -> 1.02)
        return kplan, None
    by_loop = {id(lp.loop): lp for lp in found}
    index = "lane_w, lane_l" if first.per_warp else "lane"

    def rewrite(node):
        if isinstance(node, m.For) and id(node) in by_loop:
            lp = by_loop[id(node)]
            u = uses.get(id(node), _Uses())
            return _with_registers(RowLoop(node, lp.var, tuple(u.loads), tuple(u.reads), node.span, tuple(u.stores),
                                           index))
        return m.map_children(node, rewrite)

    regions = _rewrite_regions(kplan.regions, rewrite)
    rows = RowPlan(first.limit.name, first.step, tuple(caches), first.loop.span, first.per_warp)
    return dataclasses.replace(kplan, regions=regions, rows=rows), None


def _loop_parts(r: UniformLoop):
    for x in r.body:
        yield from _lane_parts(x)
        if isinstance(x, UniformLoop):
            yield from _loop_parts(x)


@dataclasses.dataclass
class _Uses:
    """What a strided loop does with the register arrays: ``loads`` (array, read) at the top of
    its body, ``reads`` (key, array) taken from them, ``stores`` (key, array) copied into them."""
    loads: list = dataclasses.field(default_factory=list)
    reads: list = dataclasses.field(default_factory=list)
    stores: list = dataclasses.field(default_factory=list)


def _plan_caches(kplan: KernelPlan, fn: m.Function, lanes: _Lanes, allowed: set[str]):
    """The register arrays of each block-level sequence, and for each loop (by id) its uses of
    them."""
    targets = [t for t in m.store_targets(fn.body)]
    stored = {root.name for t in targets if (root := m.access_root(t)) is not None}
    pointers = {p.name: p for p in fn.params if isinstance(p.type, m.Pointer)}
    stores_buffers = bool(stored & set(pointers))
    taken = _names(fn)
    caches: list[RowCache] = []
    uses: dict[int, _Uses] = {}
    for seq in _sequences(kplan.regions):
        loops = []
        for r in seq:
            for stmts, per_warp in _lane_parts(r):
                for f, top in _loops_in(stmts, lanes.of(per_warp)):
                    if top:
                        var = strided_loop(f, lanes.of(per_warp))[0]
                        body = f.body.stmts if isinstance(f.body, m.Block) else (f.body,)
                        loops.append((f, _accesses(body, var, fn, allowed)))
        followed = _followed_stores(loops, targets)
        seen: dict[str, str] = {}  # key -> register array
        for i, (f, found) in enumerate(loops):
            u = uses.setdefault(id(f), _Uses())
            touched: set[str] = set()  # keys the body accessed before the one at hand
            for a in found:
                before, _ = a.key in touched, touched.add(a.key)
                if a.key in seen:
                    pairs = u.stores if a.store is not None else u.reads
                    if (a.key, seen[a.key]) not in pairs:
                        pairs.append((a.key, seen[a.key]))
                    continue
                buffer = m.access_root(a.index, (m.Index,)).name
                later = any(b.key == a.key and b.store is None for _, other in loops[i + 1:] for b in other)
                if not (a.unconditional and later) or (a.store is not None and before):
                    continue  # (a store may start the register array only before any read of it)
                if buffer in stored and followed.get(buffer) != a.key:
                    continue  # stored elsewhere than at this element, or not as a statement of its own
                if stores_buffers and not pointers[buffer].restrict:
                    continue
                name = fresh(f"{buffer}_regs", taken)
                seen[a.key] = name
                caches.append(RowCache(name, buffer, a.index.type, a.index.span))
                if a.store is None:  # a read: loaded at the top of the body, every read taken from it
                    u.loads.append((name, a.index))
                    u.reads.append((a.key, name))
                else:  # a store on every iteration before any read: no load
                    u.stores.append((a.key, name))
                    u.reads.append((a.key, name))
    return caches, uses


def _followed_stores(loops, targets) -> dict[str, str]:
    """For each buffer whose every store (``targets``: all the kernel's) is a plain store
    statement at the lane's element in ``loops``, all at one key: that key. A register array
    kept for that element can follow each store."""
    keys: dict[str, set] = {}
    ids: dict[str, set] = {}
    for _, found in loops:
        for a in found:
            if a.store is not None:
                buffer = m.access_root(a.index, (m.Index,)).name
                keys.setdefault(buffer, set()).add(a.key)
                ids.setdefault(buffer, set()).add(id(a.store.target))
    out = {}
    for buffer, ks in keys.items():
        every = {id(t) for t in targets if (root := m.access_root(t)) is not None and root.name == buffer}
        if len(ks) == 1 and every == ids[buffer]:
            out[buffer] = next(iter(ks))
    return out


def _rewrite_regions(regions, rewrite):
    out = []
    for r in regions:
        if isinstance(r, BlockReduce) and r.per_warp:
            r = dataclasses.replace(r, before=tuple(rewrite(s) for s in r.before),
                                    after=tuple(rewrite(s) for s in r.after))
        elif isinstance(r, BlockReduce):
            r = dataclasses.replace(r, before=tuple(rewrite(s) for s in r.before))
        elif isinstance(r, LanePhase):
            r = dataclasses.replace(r, stmts=tuple(rewrite(s) for s in r.stmts))
        elif isinstance(r, UniformIf):
            r = dataclasses.replace(r, then=_rewrite_regions(r.then, rewrite), other=_rewrite_regions(r.other, rewrite))
        out.append(r)
    return tuple(out)


def _with_registers(r: RowLoop) -> RowLoop:
    """``r`` with its unrolled body: the reads of elements kept in registers taken from them, and
    ``B[c] = v`` of such an element written ``B_regs[...] = v; B[c] = B_regs[...]``."""
    cached, followed = dict(r.reads), dict(r.stores)

    def register(name, node):
        return m.Ref(r.register(name), "param", node.type, node.span)

    class Registers(Transformer):
        def transform(self, node):
            if isinstance(node, m.ExprStmt) and isinstance(node.expr, m.Assign) and node.expr.op == "=" \
                    and isinstance(node.expr.target, m.Index) and read_key(node.expr.target, r.var) in followed:
                a = node.expr
                reg = register(followed[read_key(a.target, r.var)], a.target)
                return m.Block((m.ExprStmt(dataclasses.replace(a, target=reg, value=self.transform(a.value)), node.span),
                                m.ExprStmt(dataclasses.replace(a, value=reg), node.span)), node.span)
            return super().transform(node)

        def leave_Index(self, node):
            name = cached.get(read_key(node, r.var))
            return node if name is None else register(name, node)

    body = r.loop.body.stmts if isinstance(r.loop.body, m.Block) else (r.loop.body,)
    return dataclasses.replace(r, unrolled=tuple(Registers().transform(st) for st in body))
