"""A block sum through atomics on a shared scalar, as a block reduction.

    if (threadIdx.x == 0) S = 0;
    __syncthreads();
    ... atomicAdd(&S, v); ...            // every thread, any number of times, under any condition
    __syncthreads();
    if (threadIdx.x == 0) out[blockIdx.x] = S;

adds every thread's contributions to zero: the block's sum, whatever order the atomics ran in.
Its tile form is the block reduction :mod:`.reduce` prints (:class:`~migrate.ir.loops.BlockReduce`
with ``atomics``): each lane adds its contributions into a register (``S_own``, from zero), the
lanes' registers are combined by ``T.reduce_sum``, and the statements after the second barrier
that every thread runs alike (``if (threadIdx.x == 0) ...`` among them) run once, reading the
total where the CUDA read ``S``. Unlike a tree, any block size gives that sum.

Matched on the portable plan's regions ``Phase, Barrier, Phase, Barrier, Phase``: the first
phase ends with the zeroing (its other statements join the lanes' work when the barrier after
them ordered nothing else: no shared memory, atomic or call there, no buffer they store that
the lanes then read); the middle phase touches ``S`` only through ``atomicAdd(&S, v)`` as a
statement (its old value unread); after the second barrier ``S`` is read only by the statements
the block runs once. Anything else leaves the regions to the other reduction lifts.

Several cells zeroed before the first barrier (``if (tid == 0) { S = 0; Q = 0; }``, or the
fields of a ``__shared__ double3`` the frontend splits into ``S_x``, ``S_y``, ``S_z``), each
summed only by its own atomics, are one reduction each: the first reduction's lane loop adds
every cell's contributions into its register, the later cells' registers cross to their lane
loops in buffers of the lanes, and the last reduction runs the block's statements.

The five regions may sit under a branch around the barriers that depends on the thread
(``if (gid < n) { ... }``, which the portable plan predicates): :func:`predicated_window` moves
the branch into the lanes' work and, evaluated for thread 0, around the block's statements.

A kernel that uses the old value of an atomic on shared memory (``pos = atomicAdd(&l_n, 1)``,
a slot handed out) is not lifted: which thread gets which slot depends on the order the
atomics run in (:func:`slot_atomic` names it in the refusal).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import read_roots, stored_roots, strip_casts
from ...ir.loops import Barrier, BlockReduce, LanePhase, Phase, UniformIf
from ..facts.locals import expand
from ...ir.visit import Transformer


def _zero(e) -> bool:
    e = strip_casts(e)
    return (isinstance(e, m.IntLit) and e.value == 0) or (isinstance(e, m.FloatLit) and e.value == 0.0)


def _is_lane(e, lanes: set[str]) -> bool:
    e = strip_casts(e)
    return (isinstance(e, m.Builtin) and e.var == "threadIdx" and e.dim == "x") or \
        (isinstance(e, m.Ref) and e.name in lanes)


def _lane_zero(cond, lanes: set[str]) -> bool:
    c = strip_casts(cond)
    return isinstance(c, m.Binary) and c.op == "==" and (
        (_is_lane(c.lhs, lanes) and _zero(c.rhs) and isinstance(strip_casts(c.rhs), m.IntLit)) or
        (_is_lane(c.rhs, lanes) and _zero(c.lhs) and isinstance(strip_casts(c.lhs), m.IntLit)))


def _shared(e, shared: frozenset) -> bool:
    """A shared variable: declared so, or a field of a shared vector split into its own scalar
    (``lsums.x`` of a ``__shared__ double3 lsums`` is ``lsums_x``, which the plan places in shared
    memory)."""
    return isinstance(e, m.Ref) and (e.kind in ("shared", "extern_shared") or e.name in shared)


def _cell(e, shared: frozenset = frozenset()) -> tuple[str, int | None] | None:
    """(name, None) for a shared scalar ``S``; (name, c) for a constant cell ``S[c]`` of a
    shared array (``extern __shared__ int S[]; ... S[0]``)."""
    e = strip_casts(e)
    if _shared(e, shared):
        return e.name, None
    if isinstance(e, m.Index) and isinstance(strip_casts(e.index), m.IntLit):
        base = strip_casts(e.base)
        if _shared(base, shared):
            return base.name, strip_casts(e.index).value
    return None


def _zeroing(st, lanes: set[str], shared: frozenset) -> list[tuple[str, int | None]] | None:
    """The shared scalars (or constant cells) ``st`` zeroes as ``if (threadIdx.x == 0) S = 0;``
    (``{ S = 0; Q = 0; }`` for several), in order."""
    if not (isinstance(st, m.If) and st.other is None and _lane_zero(st.cond, lanes)):
        return None
    body = st.then.stmts if isinstance(st.then, m.Block) else (st.then,)
    cells = []
    for one in body:
        if not isinstance(one, m.ExprStmt):
            return None
        a = one.expr
        if not (isinstance(a, m.Assign) and a.op == "=" and _zero(a.value)):
            return None
        cell = _cell(a.target, shared)
        if cell is None or cell in cells:
            return None
        cells.append(cell)
    return cells or None


def _zeroings(stmts, lanes: set[str], shared: frozenset) -> tuple[int, list[tuple[str, int | None]]]:
    """(how many statements at the end of ``stmts`` zero cells, the cells in order)."""
    n, cells = 0, []
    while n < len(stmts):
        found = _zeroing(stmts[len(stmts) - 1 - n], lanes, shared)
        if found is None or set(found) & set(cells):
            break
        cells = found + cells
        n += 1
    return n, cells


def _atomic_add(e, cell: tuple[str, int | None], shared: frozenset):
    """``v`` when ``e`` is ``atomicAdd(&S, v)`` (``atomicAdd(&S[c], v)`` or ``atomicAdd(S + c, v)``
    for a cell of an array)."""
    if not (isinstance(e, m.Call) and e.kind == "atomic" and e.callee == "atomicAdd" and len(e.args) == 2):
        return None
    p = strip_casts(e.args[0])
    if isinstance(p, m.Unary) and p.op == "&" and _cell(p.operand, shared) == cell:
        return e.args[1]
    name, c = cell
    if c is not None and isinstance(p, m.Ref) and p.name == name and c == 0:
        return e.args[1]  # atomicAdd(S, v): the array's first cell
    if c is not None and isinstance(p, m.Binary) and p.op == "+" and isinstance(strip_casts(p.lhs), m.Ref) \
            and strip_casts(p.lhs).name == name and isinstance(strip_casts(p.rhs), m.IntLit) \
            and strip_casts(p.rhs).value == c:
        return e.args[1]
    return None


def summed_cells(fn: m.Function) -> frozenset:
    """The shared variables of ``fn`` that atomics update, when every such atomic is a statement
    (its old value unread): the cells a block may sum (:func:`match_atomic_sum`)."""
    if fn.body is None:
        return frozenset()
    shared = {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.storage in ("shared", "extern_shared")}
    if slot_atomic(fn.body, shared) is not None:
        return frozenset()
    return frozenset(r.name for n in m.walk(fn.body) if isinstance(n, m.Call) and n.kind == "atomic"
                     for a in n.args[:1] for r in m.walk(a) if isinstance(r, m.Ref) and r.name in shared)


def slot_atomic(body, shared: set[str]):
    """The first atomic on a shared variable of ``shared`` in ``body`` whose old value is used
    (``pos = atomicAdd(&l_n, 1)``: a slot handed out), or None. Which thread gets which slot
    depends on the order the atomics run in, which no tile form can promise."""
    used = set()
    for n in m.walk(body):
        if isinstance(n, m.ExprStmt) and isinstance(n.expr, m.Call):
            used.add(id(n.expr))  # a statement: its value is dropped
    for n in m.walk(body):
        if isinstance(n, m.Call) and n.kind == "atomic" and id(n) not in used and any(
                isinstance(r, m.Ref) and r.name in shared for a in n.args[:1] for r in m.walk(a)):
            return n
    return None


def _written(stmts, name: str) -> bool:
    """Whether ``stmts`` assign ``name``, step it or take its address."""
    def named(e):  # S, or a cell S[i] of it
        e = strip_casts(e)
        while isinstance(e, m.Index):
            e = strip_casts(e.base)
        return isinstance(e, m.Ref) and e.name == name
    return any((isinstance(n, m.Assign) and named(n.target)) or
               (isinstance(n, m.Unary) and n.op in ("&", "++", "--") and named(n.operand))
               for st in stmts for n in m.walk(st))


def _pure_call(n: m.Call) -> bool:
    """A call that stores nothing other threads read: math, a conversion, or a device function
    given only numbers (no pointer, array or address to store through)."""
    if n.kind in ("math", "conversion"):
        return True
    return n.kind == "device" and all(isinstance(a.type, (m.Scalar, m.TemplateType)) and not any(
        isinstance(x, m.Unary) and x.op == "&" for x in m.walk(a)) for a in n.args)


def _refs(stmts, name: str) -> int:
    return sum(1 for st in stmts for n in m.walk(st) if isinstance(n, m.Ref) and n.name == name)


class _Accumulate(Transformer):
    """``atomicAdd(&S, v);`` → ``S_own += (T) v;``, counting them."""

    def __init__(self, cell: tuple[str, int | None], local: m.Ref, shared: frozenset) -> None:
        self.cell, self.local, self.shared, self.count = cell, local, shared, 0

    def leave_ExprStmt(self, node: m.ExprStmt):
        v = _atomic_add(node.expr, self.cell, self.shared)
        if v is None:
            return node
        self.count += 1
        if v.type != self.local.type:
            v = m.Cast(self.local.type, v, "implicit", self.local.type, v.span)
        return m.ExprStmt(m.Assign("+=", self.local, v, self.local.type, node.span), node.span)


class _Total(Transformer):
    """Reads of ``S`` (of the cell ``S[c]``) → the block's total."""

    def __init__(self, cell: tuple[str, int | None], total: m.Ref, shared: frozenset) -> None:
        self.cell, self.total, self.shared = cell, total, shared

    def leave_Ref(self, node: m.Ref):
        return self.total if self.cell[1] is None and node.name == self.cell[0] else node

    def leave_Index(self, node: m.Index):
        return self.total if self.cell[1] is not None and _cell(node, self.shared) == self.cell else node


class _LaneZero(Transformer):
    """``threadIdx.x`` → 0: an expression as CUDA's thread 0 evaluates it."""

    def leave_Builtin(self, node: m.Builtin):
        if node.var == "threadIdx" and node.dim == "x":
            return m.IntLit(0, "0", node.type, node.span)
        return node


def _block_value(e) -> bool:
    """Whether ``e`` is the same for every thread of a block and reads no memory: block and
    grid indices, sizes, scalar parameters and constants."""
    for n in m.walk(e):
        if isinstance(n, m.Builtin):
            if n.var == "threadIdx":
                return False
        elif isinstance(n, m.Ref):
            if n.kind != "param" or not isinstance(n.type, m.Scalar):
                return False
        elif not isinstance(n, (m.IntLit, m.Binary, m.Unary, m.Cast)):
            return False
    return True


def predicated_window(r, lanes: set[str], values: dict):
    """The five regions of a block sum (module doc) that a branch around barriers predicates,
    ``if (gid < n) { zero S; sync; atomics; sync; if (tid == 0) use S; }`` (sad's count of a
    value's occurrences), with the predicate moved into them: the lanes' work runs where it
    holds, the block's statements where it holds for thread 0 (``values``: the kernel's
    single-assignment locals, expanded to evaluate it there); else None. The zeroing runs
    unguarded: where thread 0 skips it, it skips the statements that read the sum too."""
    if not (isinstance(r, UniformIf) and r.predicate is not None and not r.other and len(r.then) == 5):
        return None
    first, b1, middle, b2, last = r.then
    if not (isinstance(first, Phase) and isinstance(middle, Phase) and isinstance(last, Phase)
            and isinstance(b1, Barrier) and isinstance(b2, Barrier)):
        return None
    if any(isinstance(n, (m.Index, m.Call)) or isinstance(n, m.Unary) and n.op == "*" for n in m.walk(r.cond)):
        return None  # a condition that reads memory: the lanes evaluate it again later
    if any(_written(first.stmts + middle.stmts + last.stmts, n.name) for n in m.walk(r.cond) if isinstance(n, m.Ref)):
        return None  # nor one whose locals the window changes
    at_zero = _LaneZero().transform(expand(r.cond, values))
    if not _block_value(at_zero):
        return None
    final = []
    for st in last.stmts:  # each an ``if (tid == 0) ...``: thread 0's statements
        if not (isinstance(st, m.If) and st.other is None and _lane_zero(st.cond, lanes)):
            return None
        final.append(dataclasses.replace(st, then=m.If(at_zero, st.then, None, st.span)))
    used, _cells = _zeroings(first.stmts, lanes, frozenset())
    ahead = first.stmts[:len(first.stmts) - used]
    if not used or not middle.stmts or any(isinstance(st, m.DeclStmt) for st in ahead):
        return None
    declared = {d.name for st in middle.stmts for d in m.walk(st) if isinstance(d, m.VarDecl)}
    if any(isinstance(n, m.Ref) and n.name in declared for st in last.stmts for n in m.walk(st)):
        return None  # the block's statements read a value the guarded lanes' code declares
    guard = (lambda stmts, span: (m.If(r.cond, m.Block(tuple(stmts), span), None, span),) if stmts else ())
    return (dataclasses.replace(first, stmts=guard(ahead, first.span) + first.stmts[len(ahead):]), b1,
            dataclasses.replace(middle, stmts=guard(middle.stmts, middle.span)), b2,
            dataclasses.replace(last, stmts=tuple(final)))


def match_atomic_sum(window, lanes: set[str], shared_types: dict, final_phase, drop_decls):
    """(the reductions, the lane code after them or None) when ``window`` (five regions) is a
    block sum through atomics on shared scalars (module doc): one BlockReduce per cell zeroed
    before the first barrier (``lsums.x``, ``lsums.y``, ``lsums.z`` of a shared vector are three),
    the first running the lanes' code, the last the statements the block runs once; else None.
    ``final_phase`` and ``drop_decls`` are the tree lift's (:mod:`.reduce`): the split of the
    last phase into the statements the block runs once and the lane code after them, and the
    removal of the shared arrays' declarations."""
    first, b1, middle, b2, last = window
    if not (isinstance(first, Phase) and isinstance(b1, Barrier) and isinstance(middle, Phase)
            and isinstance(b2, Barrier) and isinstance(last, Phase)) or not first.stmts:
        return None
    shared = frozenset(shared_types)
    used, cells = _zeroings(first.stmts, lanes, shared)
    if not cells:
        return None
    names = {name for name, _ in cells}
    dtypes = {}
    for name, c in cells:
        dtype = shared_types.get(name)  # an array's element type
        if not isinstance(dtype, (m.Scalar, m.TemplateType)):
            return None  # a number, or a template's type parameter (a number in every instance)
        if isinstance(dtype, m.Scalar) and dtype.dtype in ("bool", "void"):
            return None
        dtypes[(name, c)] = dtype
    ahead = list(drop_decls(first.stmts[:-used], shared_types))
    work = list(drop_decls(middle.stmts, shared_types))
    if any(_refs(ahead, name) for name in names):
        return None
    # the statements before the zeroing join the lanes' work: the barrier ordered only the cells
    if any(isinstance(n, m.Call) and not _pure_call(n) for st in ahead for n in m.walk(st)):
        return None
    if any(_shared(n, shared) for st in ahead for n in m.walk(st)):
        return None
    if stored_roots(ahead) & (read_roots(work) | {"?"}):
        return None
    span = middle.span
    taken = {n.name for st in ahead + work + list(last.stmts) for n in m.walk(st) if isinstance(n, (m.Ref, m.VarDecl))}
    taken |= set(shared_types)
    # each cell's reduction is named for its scalar, or for its array when it is the array's only cell
    keys = {(name, c): name if c is None or sum(1 for n_, _ in cells if n_ == name) == 1 else f"{name}_{c}"
            for name, c in cells}
    summed, decls, locals_ = tuple(work), [], []
    for cell in cells:
        dtype = dtypes[cell]
        own = f"{keys[cell]}_own"
        while own in taken:
            own += "_"
        taken.add(own)
        local = m.Ref(own, "local", dtype, span)
        acc = _Accumulate(cell, local, shared)
        summed = acc.transform(summed)
        if acc.count == 0:
            return None
        if isinstance(dtype, m.TemplateType):
            zero = m.Cast(dtype, m.IntLit(0, "0", m.Scalar("int32"), span), "implicit", dtype, span)
        elif dtype.dtype.startswith(("float", "bfloat", "half")):
            zero = m.FloatLit(0.0, "0.0", dtype, span)
        else:
            zero = m.IntLit(0, "0", dtype, span)
        decls.append(m.DeclStmt((m.VarDecl(own, dtype, "local", False, zero, span),), span))
        locals_.append(local)
    if any(_refs(summed, name) for name in names):
        return None  # a cell used other than through atomicAdd(&S, v) statements
    split = final_phase(last, lanes)
    if split is None:
        return None
    final, rest = split
    if any(_refs(rest, name) or _written(final, name) for name in names):
        return None  # lanes read the sum, or the block changes it: not a value read once
    after, totals = tuple(final), []
    for cell in cells:
        total = m.Ref(f"{keys[cell]}_total", "reduce_result", dtypes[cell], last.span)
        after = _Total(cell, total, shared).transform(after)
        totals.append(total)
    if any(_refs(after, name) for name in names):
        return None  # the block's statements read other cells of the array
    n = len(cells)
    reduces = tuple(
        BlockReduce(tuple(ahead) + tuple(decls) + tuple(summed) if j == 0 else (), locals_[j], "sum",
                    keys[cell], dtypes[cell], after if j == n - 1 else (), None,
                    first.span, atomics=True)
        for j, cell in enumerate(cells))
    return reduces, (LanePhase(rest, last.span) if rest else None)
