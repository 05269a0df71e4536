"""Forward shared-memory caches: a read of a shared tile becomes the expression its writer stored.

Many kernels stage data through ``__shared__`` arrays only so that neighbouring threads can read
what another thread loaded (stencil halos, GEMM tiles). When every write of a shared array ``S``
is ``S[t + u] = V(t)`` (each thread index ``t`` appearing once, with coefficient 1, in the
index; ``u`` uniform) and ``V`` depends only on thread indices, uniform values and the
iteration of the loops around both the writes and the reads, the element ``S[r]`` holds
``V(t := r - u)``: the read is replaced by that expression. Several writes (a tile and its halos)
must store the same function of the element index (compared in canonical affine form); a single
write under a thread-dependent condition keeps it as ``cond ? V : 0`` (an element no thread wrote
is undefined in CUDA, and the condition keeps the load in bounds).

An index dimension may also be a thread index plus the variables of loops around the write
(``S[threadIdx.y + j][threadIdx.x]`` in a loop over row strips ``j``): it is solved for the thread
index, and the value must not depend on the other variables once the index math cancels them.
Locals reassigned between the phases are renamed first (:mod:`migrate.analysis.prepare.renaming`). A read's inner indices
must stay inside their rows (``S[i][33]`` of a ``[32][33]`` array is ``S[i + 1][0]``): their
ranges come from the block sizes the lifted kernel asserts and the constant bounds of loops.

Two more shapes of write: a *fixed cell* (``if (threadIdx.x == 0) s[0] = V``, or a
``__shared__`` scalar) holds ``V`` with the thread indices its condition pins substituted, read
under the condition that the cell is the one stored; and a 2-D block's *rows laid out in one
dimension* (``s[threadIdx.y * (blockDim.x + k) + threadIdx.x]``) is solved with a division and a
remainder by the row width, under the condition that the element is one a thread stored (a thread
reading back its own element reads its value directly). Atomics on global memory stay where they
are; a cached value that reads a buffer they update, or that an atomic returned, is refused.

When every shared array has been forwarded, the barriers only ordered those writes and reads and
are removed too; the kernel is then a map for :mod:`.map`. :func:`forward_shared` returns
the function unchanged when it has nothing to forward, and raises
:class:`~.base.NotLiftable` when a shared array is used any other way.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import conjuncts, pure, strip_casts
from ...ir.visit import Transformer
from ..facts.affine import linear_form, rebuild, same_value
from ..facts.locals import Expand, assignment_counts, expand, single_assignment_locals
from ..prepare.builtin_aliases import propagate_builtin_aliases
from ..prepare.dead_code import DropStmts, drop_dead_declarations
from ..prepare.renaming import rename_reassigned_locals
from .base import NotLiftable
from .shared_atomics import slot_atomic

_PURE_LEAVES = (m.Builtin, m.IntLit)


# ---------------------------------------------------------------------------------------------


def _index_chain(e):
    """(array name, [index, ...]) of ``S[i][j]``, or None."""
    idx = []
    while isinstance(e, m.Index):
        idx.insert(0, e.index)
        e = strip_casts(e.base)
    return (e.name, idx) if isinstance(e, m.Ref) and e.kind in ("shared", "local") else None


@dataclasses.dataclass(frozen=True, eq=False)
class _Branch:
    """A path entry: inside the then (``taken``) or else branch of ``node``."""

    node: m.If
    taken: bool


class _Site:
    def __init__(self, node, path, order) -> None:
        self.node, self.path, self.order = node, path, order  # path: enclosing stmts, outermost first


def _collect(fn: m.Function, shared: set[str], scalars: frozenset = frozenset()):
    """The writes, reads and barriers of the shared arrays ``shared``; ``scalars`` are those of
    them that are single values (``__shared__ int first;``), read by name."""
    writes: dict[str, list[_Site]] = {s: [] for s in shared}
    reads: dict[str, list[_Site]] = {s: [] for s in shared}
    barriers: list[_Site] = []
    order = [0]

    def visit(node, path):
        order[0] += 1
        if isinstance(node, m.ExprStmt) and isinstance(node.expr, m.Assign) and node.expr.op == "=":
            chain = _index_chain(node.expr.target)
            if chain and chain[0] in shared:
                writes[chain[0]].append(_Site(node, path, order[0]))
                for i in chain[1]:
                    visit(i, path)
                visit(node.expr.value, path)
                return
        if isinstance(node, m.ExprStmt) and isinstance(node.expr, m.Call) and node.expr.callee == "__syncthreads":
            barriers.append(_Site(node, path, order[0]))
            return
        if isinstance(node, m.Index):
            chain = _index_chain(node)
            if chain and chain[0] in shared:
                reads[chain[0]].append(_Site(node, path, order[0]))
                for i in chain[1]:
                    visit(i, path)
                return
        if isinstance(node, m.Assign) and isinstance(strip_casts(node.target), m.Ref) \
                and strip_casts(node.target).name in scalars:
            raise NotLiftable(f"shared value '{strip_casts(node.target).name}' is updated in place "
                              f"(line {node.span.line})")
        if isinstance(node, m.Unary) and node.op in ("++", "--") and isinstance(strip_casts(node.operand), m.Ref) \
                and strip_casts(node.operand).name in scalars:
            raise NotLiftable(f"shared value '{strip_casts(node.operand).name}' is updated in place "
                              f"(line {node.span.line})")
        if isinstance(node, m.Ref) and node.name in scalars:
            reads[node.name].append(_Site(node, path, order[0]))
            return
        if isinstance(node, m.Ref) and node.name in shared:
            raise NotLiftable(f"shared array '{node.name}' is used other than by element (line {node.span.line})")
        if isinstance(node, m.If):
            visit(node.cond, path)
            visit(node.then, path + (_Branch(node, True),))
            if node.other is not None:
                visit(node.other, path + (_Branch(node, False),))
            return
        if isinstance(node, m.Switch):
            raise NotLiftable(f"a switch at line {node.span.line} in a kernel with shared memory")
        inner = path + (node,) if isinstance(node, (m.For, m.While, m.DoWhile)) else path
        for child in m.children(node):
            visit(child, inner)

    visit(fn.body, ())
    return writes, reads, barriers


def _loops(path):
    return [p for p in path if isinstance(p, (m.For, m.While, m.DoWhile))]


def _loop_vars(loops) -> set[str]:
    out = set()
    for lp in loops:
        if isinstance(lp, m.For) and isinstance(lp.init, m.DeclStmt):
            out |= {d.name for d in lp.init.decls}
    return out


def _thread_atoms(e) -> set[str]:
    return {n.dim for n in m.walk(e) if isinstance(n, m.Builtin) and n.var == "threadIdx"}


class _SubstThreads(Transformer):
    """Thread indices and loop variables of a write -> their values for element ``r``."""

    def __init__(self, table: dict) -> None:
        self.table = table

    def leave_Builtin(self, node):
        if node.var == "threadIdx" and ("t", node.dim) in self.table:
            return m.Cast(node.type, self.table[("t", node.dim)], "implicit", node.type, node.span)
        return node

    def leave_Ref(self, node):
        if node.kind == "local" and ("v", node.name) in self.table:
            return m.Cast(node.type, self.table[("v", node.name)], "implicit", node.type, node.span)
        return node


def _own_refs(e, own_loops) -> set[str]:
    return {n.name for n in m.walk(e) if isinstance(n, m.Ref) and n.kind == "local" and n.name in own_loops}


def _stored_function(site: _Site, locals_: dict, common: set[str], depth: int):
    """(F as a function of the element index placeholders, guard or None) for one write."""
    stmt = site.node
    _name, index = _index_chain(stmt.expr.target)
    value = expand(stmt.expr.value, locals_)
    index = [expand(i, locals_) for i in index]
    loops = _loops(site.path)
    start = site.path.index(loops[depth - 1]) + 1 if depth else 0
    inner_path = site.path[start:]
    own_loops = _loop_vars(_loops(inner_path))
    conds = []
    for p in inner_path:
        if isinstance(p, _Branch):
            c = expand(p.node.cond, locals_)
            conds.append(c if p.taken else m.Unary("!", c, False, c.type, c.span))
    for e in [value] + conds:
        for n in m.walk(e):
            if isinstance(n, m.Ref) and n.kind == "local" and n.name not in common and n.name not in own_loops:
                what = "a per-thread value"
                raise NotLiftable(f"the value stored to shared memory at line {stmt.span.line} depends on "
                                  f"'{n.name}' ({what})")
    table: dict = {}  # index variable (thread dim or loop var of the write) -> its value for element r
    free: set = set()  # index variables that share a dimension with a solved one
    extra: list = []  # conditions on the element index placeholders: the element is one the write stores
    flat = _flat_rows(index, own_loops, stmt.span.line) if len(index) == 1 else None
    cell = flat is None and all(_fixed(comp, own_loops) for comp in index)
    if cell:  # a fixed cell (``if (threadIdx.x == 0) s[0] = V``): the pinned thread's value
        _pin_threads(conds, table, extra, stmt.span.line)
        for pos, comp in enumerate(index):
            ph = m.Ref(f"__r{pos}", "local", comp.type, comp.span)
            extra.append(m.Binary("==", ph, comp, _BOOL, comp.span))
    elif flat is not None:  # rows of a 2-D thread block laid out in one dimension
        table, extra = flat
    for comp in index if flat is not None or cell else ():
        for n in m.walk(comp):
            if isinstance(n, m.Ref) and n.kind == "local" and n.name not in common and n.name not in own_loops:
                raise NotLiftable(f"the shared store index at line {stmt.span.line} depends on '{n.name}'")
    for pos, comp in enumerate(index if flat is None and not cell else ()):
        form = linear_form(comp)
        if form is None:
            raise NotLiftable(f"the shared store index at line {stmt.span.line} is not an integer expression")
        terms, const = form
        index_terms = [k for k, (c, a) in terms.items()
                       if (isinstance(a, m.Builtin) and a.var == "threadIdx")
                       or (isinstance(a, m.Ref) and a.kind == "local" and a.name in own_loops)]
        if not index_terms or any(terms[k][0] != 1 for k in index_terms):
            raise NotLiftable(f"the shared store at line {stmt.span.line} is not indexed by thread indices "
                              "(or loop variables) with coefficient 1 in each dimension")
        # solved for one index variable (a thread index first); the others of the dimension
        # (``threadIdx.y + j``: a strip loop) stay free and must cancel out of the value
        solved = sorted(index_terms, key=lambda k: not isinstance(terms[k][1], m.Builtin))[0]
        atom = terms[solved][1]
        key = ("t", atom.dim) if isinstance(atom, m.Builtin) else ("v", atom.name)
        free |= {_index_key(terms[k][1]) for k in index_terms if k != solved}
        others = {k: v for k, v in terms.items() if k != solved}
        if key in table or key in free or any(_thread_atoms(a) or _own_refs(a, own_loops)
                                              for k, (c, a) in others.items() if k not in index_terms):
            raise NotLiftable(f"the shared store index at line {stmt.span.line} mixes thread indices")
        for n in m.walk(comp):
            if isinstance(n, m.Ref) and n.kind == "local" and n.name not in common and n.name not in own_loops:
                raise NotLiftable(f"the shared store index at line {stmt.span.line} depends on '{n.name}'")
        ph = m.Ref(f"__r{pos}", "local", comp.type, comp.span)
        if not others and const == 0:
            table[key] = ph
        else:
            rest = rebuild((others, const), comp)  # element r = index variable + rest
            table[key] = m.Binary("-", ph, rest, comp.type, comp.span)
    sub = _SubstThreads(table)
    # with free index variables the value is a function of the element only where the index
    # math cancels them (the sums they cancel in are rebuilt without them); else it is refused
    settle = _Cancel(free).transform if free else (lambda e: e)
    for e in [value] + conds:
        left = settle(sub.transform(e))
        missing = sorted(_thread_atoms(left)) + sorted(_own_refs(left, own_loops))
        if missing:
            raise NotLiftable(f"the value stored to shared memory at line {stmt.span.line} depends on "
                              f"'{missing[0]}', which its index does not determine")
    thread_conds = [c for c in conds if _thread_atoms(c) or _own_refs(c, own_loops)]
    f_value = settle(sub.transform(value))
    guard = None
    if thread_conds:
        guard = thread_conds[0]
        for c in thread_conds[1:]:
            guard = m.Binary("&&", guard, c, c.type, c.span)
        guard = settle(sub.transform(guard))
    own = None
    if flat is not None and len(extra) == 2:  # rows exactly the block's width: a thread's own element
        own_guard = None
        for c in thread_conds:
            own_guard = c if own_guard is None else m.Binary("&&", own_guard, c, c.type, c.span)
        own = (index[0], value, own_guard)
    for c in extra:  # checked first: the element's thread conditions assume a stored element
        guard = c if guard is None else m.Binary("&&", c, guard, _BOOL, c.span)
    return _Stored(f_value, guard, len(index), bool(extra), own)


@dataclasses.dataclass(frozen=True)
class _Stored:
    """What one write stores: the value as a function of the element index placeholders, the
    condition under which an element holds it (None: every element read), the index rank, whether
    the write is a fixed cell or a flat row layout (its guard must stay even where several writes
    agree), and, for rows exactly the block's width, the write as the thread that reads its
    own element sees it (``s[ty * blockDim.x + tx]`` read at that index is what the thread stored,
    no index arithmetic)."""

    value: m.Expr
    guard: m.Expr | None
    rank: int
    guarded: bool
    own: tuple | None = None  # (index, value, condition) a thread reads back at its own element


_BOOL = m.Scalar("bool")


def _mentions_index(e, own_loops) -> bool:
    return bool(_thread_atoms(e) or _own_refs(e, own_loops))


def _fixed(comp, own_loops) -> bool:
    """The index component names one cell: no thread index or loop variable of the write."""
    return linear_form(comp) is not None and not _mentions_index(comp, own_loops)


def _pin_threads(conds, table: dict, extra: list, line: int) -> None:
    """The thread indices a fixed-cell write's conditions pin (``threadIdx.x == 0``): their
    values go into ``table``; the pinned thread must exist (``0 < blockDim.x``)."""
    for c in conds:
        for t in conjuncts(c):
            if not (isinstance(t, m.Binary) and t.op == "=="):
                continue
            for a, b in ((t.lhs, t.rhs), (t.rhs, t.lhs)):
                a = strip_casts(a)
                if isinstance(a, m.Builtin) and a.var == "threadIdx" and not _thread_atoms(b) \
                        and ("t", a.dim) not in table and linear_form(b) is not None:
                    table[("t", a.dim)] = b
                    extent = m.Builtin("blockDim", a.dim, a.type, a.span)
                    extra.append(m.Binary("<", m.Cast(a.type, b, "implicit", a.type, b.span), extent, _BOOL, t.span))
                    break


def _thread_terms(comp, own_loops):
    """({thread dimension: its coefficient}, the rest) of an index that is a sum of thread
    indices times uniform coefficients (``threadIdx.y * (blockDim.x + 1) + threadIdx.x``); None
    when a thread index or loop variable appears any other way."""
    form = linear_form(comp)
    if form is None:
        return None
    coeffs, rest = {}, {}
    for key, (c, atom) in form[0].items():
        a = strip_casts(atom)
        if isinstance(a, m.Builtin) and a.var == "threadIdx":
            coef = m.IntLit(c, str(c), comp.type, comp.span)
        elif isinstance(a, m.Binary) and a.op == "*" and any(
                isinstance(strip_casts(x), m.Builtin) and strip_casts(x).var == "threadIdx" for x in (a.lhs, a.rhs)):
            t, other = (a.lhs, a.rhs) if isinstance(strip_casts(a.lhs), m.Builtin) and \
                strip_casts(a.lhs).var == "threadIdx" else (a.rhs, a.lhs)
            a = strip_casts(t)
            if _mentions_index(other, own_loops) or linear_form(other) is None:
                return None
            coef = other if c == 1 else m.Binary("*", m.IntLit(c, str(c), comp.type, comp.span), other,
                                                 comp.type, comp.span)
        elif _mentions_index(atom, own_loops):
            return None
        else:
            rest[key] = (c, atom)
            continue
        if a.dim in coeffs:
            return None
        coeffs[a.dim] = coef
    return coeffs, (rest, form[1])


def _flat_rows(index, own_loops, line: int):
    """(table, conditions) of a one-dimensional store ``s[ty * W + tx + u]``: a 2-D block's rows
    laid out one after another, ``W`` the block's width ``blockDim.x`` plus a constant ``k >= 0``
    (each element is stored by at most one thread). Element ``r`` holds what thread
    ``((r - u) % W, (r - u) / W)`` stored, where ``0 <= r - u``, ``(r - u) / W < blockDim.y`` and,
    for ``k > 0``, ``(r - u) % W < blockDim.x``; None when the index is not of that shape. (A
    constant width is refused: a block wider than it would make two threads store one element.)"""
    comp = index[0]
    split = _thread_terms(comp, own_loops)
    if split is None or len(split[0]) != 2:
        return None
    coeffs, rest = split
    ones = [d for d, c in coeffs.items() if _int(c) == 1]
    if len(ones) != 1:
        return None
    inner = ones[0]
    outer = next(d for d in coeffs if d != inner)
    width = coeffs[outer]
    wform = linear_form(width)
    if wform is None:
        return None
    terms = list(wform[0].values())
    if len(terms) != 1 or terms[0][0] != 1 or wform[1] < 0 or not (
            isinstance(strip_casts(terms[0][1]), m.Builtin) and strip_casts(terms[0][1]).var == "blockDim"
            and strip_casts(terms[0][1]).dim == inner):
        raise NotLiftable(f"the row width of the shared store at line {line} is not the block's width along "
                          f"{inner} (plus a constant): its rows are not proven to hold one row of threads each")
    exact = wform[1] == 0
    ty = comp.type
    w = width if width.type == ty else m.Cast(ty, width, "implicit", ty, width.span)
    ph = m.Ref("__r0", "local", ty, comp.span)
    off = ph if not rest[0] and rest[1] == 0 else m.Binary("-", ph, rebuild(rest, comp), ty, comp.span)
    col = m.Binary("%", off, w, ty, comp.span)
    row = m.Binary("/", off, w, ty, comp.span)

    def dim(d):
        return m.Cast(ty, m.Builtin("blockDim", d, ty, comp.span), "implicit", ty, comp.span)
    extra = [m.Binary(">=", off, m.IntLit(0, "0", ty, comp.span), _BOOL, comp.span),
             m.Binary("<", row, dim(outer), _BOOL, comp.span)]
    if not exact:
        extra.append(m.Binary("<", col, dim(inner), _BOOL, comp.span))
    return {("t", inner): col, ("t", outer): row}, extra


def _int(e):
    form = linear_form(e)
    return form[1] if form is not None and not form[0] else None


class _Cancel(Transformer):
    """The smallest integer sums in which the index variables ``keys`` cancel, rebuilt without them
    (``(by*32 + (r - j)) + j`` is ``by*32 + r``); everything else keeps its shape."""

    def __init__(self, keys: set) -> None:
        self.keys = keys  # ("t", dim) or ("v", loop variable), as in _stored_function's table

    def _mentions(self, e) -> bool:
        return any((isinstance(n, m.Builtin) and n.var == "threadIdx" and ("t", n.dim) in self.keys)
                   or (isinstance(n, m.Ref) and n.kind == "local" and ("v", n.name) in self.keys) for n in m.walk(e))

    def leave_Binary(self, node):
        if node.op not in ("+", "-") or not self._mentions(node):
            return node
        form = linear_form(node)
        if form is None or any(self._mentions(a) for _c, a in form[0].values()):
            return node
        return rebuild(form, node)


def _index_key(atom):
    return ("t", atom.dim) if isinstance(atom, m.Builtin) else ("v", atom.name)


class _ReplaceReads(Transformer):
    def __init__(self, name: str, f_value, guard, rank: int, locals_=None, own=None) -> None:
        self.name, self.f_value, self.guard, self.rank = name, f_value, guard, rank
        self.locals = locals_ or {}
        self.own = own

    def leave_Ref(self, node):
        if self.rank == 0 and node.name == self.name and node.kind in ("shared", "local"):
            return self.leave_Index(node)
        return node

    def leave_Index(self, node):
        chain = _index_chain(node)
        if not chain or chain[0] != self.name or len(chain[1]) != self.rank:
            return node
        # the reader's index with its thread-derived locals spelled out, so that index math
        # (global indices, cancelling offsets) sees through them
        table = {f"__r{i}": expand(idx, self.locals) for i, idx in enumerate(chain[1])}
        value = Expand(table).transform(self.f_value)
        guard = Expand(table).transform(self.guard) if self.guard is not None else None
        if self.own is not None and len(chain[1]) == 1 and same_value(table["__r0"], self.own[0]):
            value, guard = self.own[1], self.own[2]
        if guard is not None:
            terms = [t for t in _and_terms(guard) if _known(t) is not True]
            zero = m.FloatLit(0.0, "0.0", node.type, node.span) if getattr(node.type, "dtype", "").startswith(
                ("float", "bfloat")) else m.IntLit(0, "0", node.type, node.span)
            if any(_known(t) is False for t in terms):
                value = zero  # an element no thread stored: undefined in CUDA
            elif terms:
                cond = terms[0]
                for t in terms[1:]:
                    cond = m.Binary("&&", cond, t, _BOOL, t.span)
                value = m.Ternary(cond, value, zero, node.type, node.span)
        if value.type != node.type:
            value = m.Cast(node.type, value, "implicit", node.type, node.span)
        return value


def _and_terms(c) -> list:
    c = strip_casts(c)
    if isinstance(c, m.Binary) and c.op == "&&":
        return _and_terms(c.lhs) + _and_terms(c.rhs)
    return [c]


def _known(c):
    """True or False for a condition of a forwarded read that holds or fails whatever the
    thread (``0 == 0``, ``0 < blockDim.x``, an unsigned ``r >= 0``); None otherwise."""
    c = strip_casts(c)
    if not (isinstance(c, m.Binary) and c.op in ("==", "!=", "<", "<=", ">", ">=")):
        return None
    lhs, rhs = strip_casts(c.lhs), strip_casts(c.rhs)
    if c.op == "<" and _int(lhs) == 0 and isinstance(rhs, m.Builtin) and rhs.var == "blockDim":
        return True
    if c.op == ">=" and _int(rhs) == 0 and isinstance(lhs.type, m.Scalar) and lhs.type.dtype.startswith("uint"):
        return True
    lf, rf = linear_form(c.lhs), linear_form(c.rhs)
    if lf is None or rf is None or {k: v[0] for k, v in lf[0].items()} != {k: v[0] for k, v in rf[0].items()}:
        return None
    if lf[0] and c.op not in ("==", "!="):
        return None  # (unsigned sums may wrap)
    d = lf[1] - rf[1]
    return {"==": d == 0, "!=": d != 0, "<": d < 0, "<=": d <= 0, ">": d > 0, ">=": d >= 0}[c.op]


def forward_shared(fn: m.Function, keep: frozenset = frozenset()) -> m.Function:
    """``fn`` with its shared-memory caches forwarded and its barriers removed (see the module
    doc); ``fn`` itself when it has no shared arrays. The shared variables of ``keep`` (the cells
    a block sums through atomics, :mod:`.shared_atomics`) are left as they are, atomics on them
    allowed, and the barriers with them."""
    if fn.body is None:
        return fn
    decls = [n for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.storage in ("shared", "extern_shared")]
    if not decls:
        return fn
    if any(isinstance(n, m.Call) and n.kind in ("warp", "cg") for n in m.walk(fn.body)):
        raise NotLiftable("it combines shared memory with warp operations")
    shared = {d.name for d in decls} - keep
    if keep and not shared:
        return fn
    # atomics on global memory stay as they are (the map combines them); on a shared array they
    # are a block reduction, not a cache
    atomic_targets = set()
    for n in m.walk(fn.body):
        if isinstance(n, m.Call) and n.kind == "atomic":
            refs = [r for a in n.args[:1] for r in m.walk(a) if isinstance(r, m.Ref)]
            bases = [r for r in refs if isinstance(r.type, (m.Pointer, m.Array))]
            if any(r.name in keep for r in refs):
                continue  # a cell the block sums, kept
            if any(r.name in shared for r in refs):
                slot = slot_atomic(fn.body, shared)
                if slot is not None:
                    raise NotLiftable(f"it hands out slots through the old value of an atomic on shared memory "
                                      f"(line {slot.span.line}): which thread gets which slot depends on the "
                                      "order the atomics run in")
                raise NotLiftable(f"it combines shared memory with atomics on shared memory (line {n.span.line})")
            if not bases or any(r.kind != "param" for r in bases):
                raise NotLiftable(f"it combines shared memory with atomics on other memory than a buffer "
                                  f"parameter (line {n.span.line})")
            atomic_targets |= {r.name for r in bases}
    fn = propagate_builtin_aliases(rename_reassigned_locals(fn))
    scalars = frozenset(d.name for d in decls if isinstance(d.type, m.Scalar) and d.name in shared)
    writes, reads, barriers = _collect(fn, shared, scalars)
    locals_ = single_assignment_locals(fn.body)
    drop = []
    replacements = []
    rows = []  # (array, inner index of a read, its extent, the loops around the read, line)
    for name in sorted(shared):
        ws, rs = writes[name], reads[name]
        if not ws:
            raise NotLiftable(f"shared array '{name}' is read but never stored to")
        for w in ws:  # a store is dropped and its value evaluated again at each read: no atomic in it
            if any(isinstance(n, m.Call) and n.kind == "atomic" for n in m.walk(w.node)):
                raise NotLiftable(f"the value stored to '{name}' at line {w.node.span.line} comes from an atomic")
        drop += [w.node for w in ws]
        if not rs:
            continue
        first_read = min(r.order for r in rs)
        if max(w.order for w in ws) > first_read:
            raise NotLiftable(f"shared array '{name}' is stored to after it is read (line {rs[0].node.span.line})")
        if not any(w.order < b.order < first_read for w in ws for b in barriers):
            raise NotLiftable(f"no barrier between the stores to '{name}' and its reads")
        # the loops around every write and read: their variables are the same in writer and reader
        common_loops = _common_prefix([_loops(s.path) for s in ws + rs])
        common = _loop_vars(common_loops)
        functions = [_stored_function(w, locals_, common, len(common_loops)) for w in ws]
        f_value, guard, rank, own = functions[0].value, functions[0].guard, functions[0].rank, functions[0].own
        if len(functions) > 1:
            if any(f.guarded for f in functions):
                raise NotLiftable(f"shared array '{name}' is stored to more than once, and a store goes to a "
                                  f"fixed cell or to rows laid out in one dimension (line {ws[0].node.span.line})")
            if not all(same_value(f.value, f_value) and f.rank == rank for f in functions[1:]):
                raise NotLiftable(f"the stores to '{name}' do not all store the same function of the element")
            guard = None
        for part in (f_value, guard, own[1] if own else None):
            hit = sorted(atomic_targets & {r.name for r in m.walk(part) if isinstance(r, m.Ref)}) if part else []
            if hit:
                raise NotLiftable(f"the value stored to '{name}' reads '{hit[0]}', which atomics update: "
                                  "read after the barrier it could see their updates")
        replacements.append(_ReplaceReads(name, f_value, guard, rank, locals_, own))
        extents = m.array_extents(next(d.type for d in decls if d.name == name))
        for r in rs:
            for pos, idx in enumerate(_index_chain(r.node)[1][1:len(extents)], start=1):
                rows.append((name, expand(idx, locals_), extents[pos], _loops(r.path), r.node.span.line))
    body = DropStmts(drop, shared).transform(fn.body)
    if not keep:
        body = DropStmts([b.node for b in barriers]).transform(body)
    for rep in replacements:
        body = rep.transform(body)
    body = drop_known_guards(body, single_assignment_locals(body))
    body = drop_dead_declarations(body)
    left = [n for n in m.walk(body) if isinstance(n, m.Ref) and n.name in shared]
    if left:
        raise NotLiftable(f"shared array '{left[0].name}' is still read after forwarding (line {left[0].span.line})")
    forwarded = dataclasses.replace(fn, body=body)
    _check_rows(rows, forwarded)
    return forwarded


def _check_rows(rows, forwarded: m.Function) -> None:
    """Each inner index of a forwarded read must stay inside its row: ``s[i][33]`` of a
    ``[32][33]`` array is the element ``s[i + 1][0]``, which the forwarded value would not be. The
    ranges of thread indices come from the block sizes the lifted kernel asserts, those of loop
    variables from their constant bounds."""
    if not rows:
        return
    from .map import fold_elements
    sizes = fold_elements(forwarded)[2]  # (a kernel that does not fold is not a map after all)
    for name, index, extent, loops, line in rows:
        span = _value_range(index, sizes, {v: r for lp in loops for v, r in [_loop_range(lp)] if v})
        if extent is None or span is None or span[0] < 0 or span[1] >= extent:
            raise NotLiftable(f"the read of '{name}' at line {line} is not proven to stay inside its rows of "
                              f"{extent} elements (past them it reads another row)")


def _loop_range(loop) -> tuple:
    """(variable, (first, last)) of ``for (int v = a; v < b; v += s)`` (or ``<=``, ``++v``) with
    constant a, b, s; (None, None) otherwise."""
    if not isinstance(loop, m.For) or not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1:
        return None, None
    decl, cond, step = loop.init.decls[0], strip_casts(loop.cond) if loop.cond is not None else None, loop.step
    first = _constant(decl.init)
    if first is None or not (isinstance(cond, m.Binary) and cond.op in ("<", "<=")
                             and isinstance(strip_casts(cond.lhs), m.Ref) and strip_casts(cond.lhs).name == decl.name):
        return None, None
    bound = _constant(cond.rhs)
    stride = 1 if isinstance(step, m.Unary) and step.op == "++" else (
        _constant(step.value) if isinstance(step, m.Assign) and step.op == "+=" else None)
    if bound is None or stride is None or stride <= 0 or any(isinstance(t, m.Ref) and t.name == decl.name for t in (
            [n.target for n in m.walk(loop.body) if isinstance(n, m.Assign)] +
            [n.operand for n in m.walk(loop.body) if isinstance(n, m.Unary) and n.op in ("++", "--")])):
        return None, None
    last = bound - 1 if cond.op == "<" else bound
    return decl.name, (first, first + (last - first) // stride * stride)


def _constant(e) -> int | None:
    form = linear_form(e) if e is not None else None
    return form[1] if form is not None and not form[0] else None


def _value_range(index, sizes: dict, loops: dict):
    """(lowest, highest) value of an affine ``index`` of thread indices (within the block sizes
    ``sizes``) and loop variables (within ``loops``); None when something else moves it."""
    form = linear_form(index)
    if form is None:
        return None
    lo = hi = form[1]
    for c, atom in form[0].values():
        atom = strip_casts(atom)
        if isinstance(atom, m.Builtin) and atom.var == "threadIdx" and atom.dim in sizes:
            r = (0, sizes[atom.dim] - 1)
        elif isinstance(atom, m.Ref) and atom.kind == "local" and atom.name in loops:
            r = loops[atom.name]
        else:
            return None
        lo, hi = lo + min(c * r[0], c * r[1]), hi + max(c * r[0], c * r[1])
    return lo, hi




def drop_known_guards(node, locals_: dict, known: tuple = ()):
    """``c ? v : 0`` (the guard of a forwarded read) becomes ``v`` where an enclosing ``if``
    already tests every conjunct of ``c`` (same value up to integer arithmetic, locals spelled
    out), on values that nothing in between assigns and no load."""
    if isinstance(node, m.If):
        cond = expand(node.cond, locals_)
        assigned = assignment_counts(node.then)
        stable = pure(cond) and not any(isinstance(n, m.Index) or (isinstance(n, m.Ref) and n.name in assigned)
                                         for n in m.walk(cond))
        inner = known + (tuple(conjuncts(cond)) if stable else ())
        other = drop_known_guards(node.other, locals_, known) if node.other is not None else None
        return dataclasses.replace(node, then=drop_known_guards(node.then, locals_, inner), other=other)
    if isinstance(node, m.Ternary) and known and all(
            any(same_value(c, k) for k in known) for c in conjuncts(expand(node.cond, locals_))):
        value = drop_known_guards(node.then, locals_, known)
        return value if value.type == node.type else m.Cast(node.type, value, "implicit", node.type, node.span)
    return m.map_children(node, lambda c: drop_known_guards(c, locals_, known))


def _common_prefix(lists):
    out = []
    for items in zip(*lists):
        if all(x is items[0] for x in items):
            out.append(items[0])
        else:
            break
    return out



