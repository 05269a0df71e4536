"""Delinearise buffer parameters: a flat ``A[row * K + k]`` becomes ``A[row, k]`` of a ``(M, K)`` array.

A CUDA kernel receives pointers and computes flat offsets; TileLang reads better (and its
compiler knows more) with shaped tensors. For each buffer parameter this pass looks at *every*
access and asks whether all of them are

    sum_d idx_d * stride_d,   stride_{n-1} = 1,  stride_d = stride_{d+1} * extent_{d+1}

with each extent a scalar parameter of the kernel (never assigned), and each ``idx_d`` for
``d > 0`` proven ``0 <= idx_d < extent_d`` by the guards and loop bounds around the access. Then
the buffer is the array ``(extent_0, ..., extent_{n-1})``, where ``extent_0`` is a scalar
parameter that bounds ``idx_0`` at every access when the guards prove one, else the remaining
length (``None``). Legality first: without the proof ``row * K + k`` may run into the next
row, and the flat buffer is the only honest reading — the buffer stays flat and
:attr:`Shapes.refused` says why.

Index math is polynomial here (``(b * M + i) * K + k`` has the monomials ``b·M·K``, ``i·K``,
``k``): a monomial's *stride* is its product of scalar parameters, the rest is its index part.
Bounds are proven over :func:`~migrate.analysis.facts.affine.linear_form` forms, with locals that are assigned once
replaced by their values; the rewritten index is printed at the shallowest such replacement
that still names the same values (``C[idx]`` with ``idx = row * N + col`` becomes ``C[row, col]``).

Entry points: :func:`sites_in_regions` and :func:`sites_in_gemm` collect the accesses (with the
facts known at each) of what a tile-form kernel prints; :func:`delinearise` decides the shapes
and the new indices; :func:`apply` rewrites the printed plan.
"""
from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass, field
from collections.abc import Mapping
from itertools import combinations

from ...ir import model as m
from ...ir.exprs import conjuncts, negations, pure, strip_int_casts as _strip
from ...ir.loops import KernelPlan
from ..facts.affine import linear_form, rebuild as rebuild_form

#: Scalar parameter types that may be an extent (the shape variable is the parameter itself).
EXTENT_DTYPES = ("int32", "int64")


@dataclass(frozen=True)
class Site:
    """One access ``buffer[index]`` and the conditions known true where it runs."""

    buffer: str
    node: m.Index
    facts: tuple


@dataclass
class Shapes:
    """The outcome per buffer parameter: ``shapes[name]`` is the tuple of extents (a scalar
    parameter's name, or None for the remaining length), ``indices[id(Index node)]`` the new
    per-dimension indices of each access, ``refused[name]`` why a buffer stays flat;
    ``kept_flat[name]`` is ``(span, reason)`` for the flat buffers worth a note: indexed with a
    row stride that is a scalar parameter, but with an index not proven inside its row."""

    shapes: dict = field(default_factory=dict)
    indices: dict = field(default_factory=dict)
    refused: dict = field(default_factory=dict)
    kept_flat: dict = field(default_factory=dict)


class _Refuse(Exception):
    def __init__(self, reason: str, span=None) -> None:
        super().__init__(reason)
        self.span = span  # of the access whose index is not proven in its row (M3005)


# -- collecting the accesses ---------------------------------------------------------------------


def _jumps(st) -> bool:
    """Whether ``st`` only leaves: ``continue``, ``break`` or ``return`` (alone in a block)."""
    while isinstance(st, m.Block) and len(st.stmts) == 1:
        st = st.stmts[0]
    return isinstance(st, (m.Continue, m.Break, m.Return))


class _Collector:
    """Walks statements and expressions, recording each buffer access with the facts on its path,
    and every other use of a buffer parameter (which keeps it flat)."""

    def __init__(self, buffers: set[str]) -> None:
        self.buffers = buffers
        self.sites: list[Site] = []
        self.other_uses: dict[str, str] = {}

    def stmts(self, stmts, facts: tuple) -> None:
        for st in stmts:
            self.stmt(st, facts)
            if isinstance(st, m.If) and st.other is None and _jumps(st.then):
                facts = facts + tuple(negations(st.cond, _strip))  # `if (h < 0 || h >= H) continue;`

    def stmt(self, st, facts: tuple) -> None:
        if isinstance(st, m.Block):
            self.stmts(st.stmts, facts)
            return
        if isinstance(st, m.If):
            self.expr(st.cond, facts)
            self.stmt(st.then, facts + tuple(conjuncts(st.cond, _strip)))
            if st.other is not None:
                self.stmt(st.other, facts + tuple(negations(st.cond, _strip)))
            return
        if isinstance(st, m.For):
            if st.init is not None:
                self.stmt(st.init, facts)
            inner = facts + _loop_facts(st)
            for part in (st.cond, st.step):
                if part is not None:
                    self.expr(part, inner)
            self.stmt(st.body, inner)
            return
        for child in m.children(st):
            if _is_expr(child):
                self.expr(child, facts)
            else:
                self.stmt(child, facts)

    def expr(self, e, facts: tuple) -> None:
        if isinstance(e, m.Ternary):
            self.expr(e.cond, facts)
            self.expr(e.then, facts + tuple(conjuncts(e.cond, _strip)))
            self.expr(e.other, facts)
            return
        if isinstance(e, m.Binary) and e.op == "&&":
            self.expr(e.lhs, facts)
            self.expr(e.rhs, facts + tuple(conjuncts(e.lhs, _strip)))
            return
        if isinstance(e, m.Index):
            base = _strip(e.base)
            if isinstance(base, m.Ref) and base.kind == "param" and base.name in self.buffers:
                self.sites.append(Site(base.name, e, facts))
                self.expr(e.index, facts)
                return
        # atomicAdd(&A[i], v), __ldg(&A[i]): the element is what they access
        if isinstance(e, m.Call) and e.kind in ("atomic", "memory") and e.args:
            target = e.args[0]
            if isinstance(target, m.Unary) and target.op == "&" and isinstance(target.operand, m.Index):
                self.expr(target.operand, facts)
                for a in e.args[1:]:
                    self.expr(a, facts)
                return
        if isinstance(e, m.Unary) and e.op == "&" and isinstance(e.operand, m.Index):
            base = _strip(e.operand.base)
            if isinstance(base, m.Ref) and base.name in self.buffers:
                self.other_uses.setdefault(base.name, f"an element's address is taken at line {e.span.line}")
                return
        if isinstance(e, m.Ref) and e.kind == "param" and e.name in self.buffers:
            self.other_uses.setdefault(e.name, f"its address is used at line {e.span.line} other than "
                                                "by indexing")
            return
        for child in m.children(e):
            if _is_expr(child):
                self.expr(child, facts)
            else:
                self.stmt(child, facts)


_EXPR_TYPES = typing.get_args(m.Expr)


def _is_expr(node) -> bool:
    return isinstance(node, _EXPR_TYPES)


def _loop_facts(st: m.For) -> tuple:
    """``v >= start`` and the loop condition of ``for (v = start; v < bound; v += step)`` whose
    variable only its step changes (counting up)."""
    if not isinstance(st.init, m.DeclStmt) or len(st.init.decls) != 1 or st.cond is None:
        return ()
    d = st.init.decls[0]
    if d.init is None or _assigns(st.body, d.name):
        return ()
    step = st.step
    up = (isinstance(step, m.Unary) and step.op == "++" and _names_ref(step.operand, d.name)) or (
        isinstance(step, m.Assign) and step.op == "+=" and _names_ref(step.target, d.name)
        and _positive(step.value))
    if not up:
        return ()
    ref = m.Ref(d.name, "local", d.type, d.span)
    return (m.Binary(">=", ref, d.init, m.Scalar("bool"), d.span),) + tuple(conjuncts(st.cond, _strip))


def _names_ref(e, name: str) -> bool:
    e = _strip(e)
    return isinstance(e, m.Ref) and e.name == name


def _positive(e) -> bool:
    """Whether a loop step is at least 1: a positive constant plus nonnegative atoms, or launch
    sizes (``blockDim.x`` is at least 1)."""
    form = linear_form(e)
    if form is None:
        return False
    terms, const = form
    launch = bool(terms) and all(c > 0 and isinstance(_strip(a), m.Builtin)
                                 and _strip(a).var in ("blockDim", "gridDim") for c, a in terms.values())
    return (const > 0 and all(c > 0 and _nonneg_atom(a) for c, a in terms.values())) or (launch and const >= 0)


def _assigned_refs(node) -> set[str]:
    """The names of the variables ``node`` stores to (:func:`_assigns` of each of them is true)."""
    out = set()
    for n in m.walk(node):
        target = m.store_target(n)
        if target is not None:
            target = _strip(target)
            if isinstance(target, m.Ref):
                out.add(target.name)
    return out


def _assigns(node, name: str) -> bool:
    for n in m.walk(node):
        target = m.store_target(n)
        if target is not None and _names_ref(target, name):
            return True
    return False


def sites_in_regions(regions, buffers: set[str]) -> _Collector:
    """The accesses in a tile-form kernel's regions (maps, reductions and the uniform code around
    them): the facts of uniform branches and loops apply to what they enclose."""
    from ...ir.loops import BlockReduce, LanePhase, Phase, TileMap, UniformIf, UniformLoop
    c = _Collector(buffers)

    def visit(rs, facts):
        for r in rs:
            if isinstance(r, (TileMap, LanePhase, Phase)):
                c.stmts(r.stmts, facts)
                if isinstance(r, TileMap):
                    c.stmts(r.rest, facts)
            elif isinstance(r, BlockReduce):
                c.stmts(r.before, facts)
                c.expr(r.value, facts)
                c.stmts(r.after, facts)
            elif isinstance(r, UniformIf):
                c.expr(r.cond, facts)
                visit(r.then, facts + tuple(conjuncts(r.cond, _strip)))
                visit(r.other, facts)
            elif isinstance(r, UniformLoop):
                loop = m.For(r.init, r.cond, r.step, m.Empty(r.span), (), r.span) if r.kind == "for" else None
                inner = facts + (_loop_facts(loop) if loop is not None else ())
                if r.init is not None:
                    c.stmt(r.init, facts)
                for part in (r.cond, r.step):
                    if part is not None:
                        c.expr(part, inner)
                visit(r.body, inner)
    visit(regions, ())
    return c


def sites_in_gemm(g, buffers: set[str]) -> _Collector:
    """The accesses of a lifted GEMM as its factory prints them: the staged operands under the
    checks the staging makes, the statements after the loop under the CUDA guard."""
    c = _Collector(buffers)
    span = g.span
    guard = tuple(conjuncts(g.guard, _strip)) if g.guard is not None and g.loop_guarded else ()
    i32 = m.Scalar("int32")
    zero = m.IntLit(0, "0", i32, span)
    kvar = m.Ref(g.k.var, "local", i32, span)
    k_facts = (m.Binary(">=", kvar, zero, m.Scalar("bool"), span),)
    if g.k.inner is None:
        k_facts += (m.Binary("<", kvar, g.k.bound, m.Scalar("bool"), span),)
    else:
        inner = m.Ref(g.k.inner, "local", i32, span)
        size = m.IntLit(g.k.size, str(g.k.size), i32, span)
        k_facts += (m.Binary(">=", inner, zero, m.Scalar("bool"), span),
                    m.Binary("<", inner, size, m.Scalar("bool"), span))
    c.stmts(g.prologue, ())
    c.stmts(g.setup, ())
    for op, dim in ((g.a, "y"), (g.b, "x")):
        # what the staging checks before it loads: the CUDA tail bounds of the operand's own index
        # (when the k loop ran inside the guard) and the k loop's bounds
        index = next((n for st in g.tile.stmts for n in m.walk(st)
                      if isinstance(n, m.Builtin) and n.var == "globalIdx" and n.dim == dim),
                     m.Builtin("globalIdx", dim, m.Scalar("uint32"), span))
        tail = tuple(m.Binary("<", index, b, m.Scalar("bool"), span)
                     for b in (g.tile.bounds.get(dim, ()) if g.loop_guarded else ()))
        c.expr(op.staged, tail + k_facts)
    if g.guard is not None and g.loop_guarded:
        c.expr(g.guard, ())
    c.stmts(g.epilogue, guard)
    return c


# -- polynomial index forms ----------------------------------------------------------------------


def _poly(e) -> dict | None:
    """``e`` as {monomial: (coefficient, atoms)}: a monomial is the sorted tuple of its atoms' keys
    (a product of sums is multiplied out); None when ``e`` is not integer arithmetic."""
    e = _strip(e)
    if isinstance(e, m.Binary) and e.op in ("+", "-", "*"):
        lhs, rhs = _poly(e.lhs), _poly(e.rhs)
        if lhs is None or rhs is None:
            return None
        if e.op == "*":
            out: dict = {}
            for ka, (ca, aa) in lhs.items():
                for kb, (cb, ab) in rhs.items():
                    _add(out, tuple(sorted(ka + kb)), ca * cb, aa + ab)
            return out
        out = dict(lhs)
        for k, (c, atoms) in rhs.items():
            _add(out, k, c if e.op == "+" else -c, atoms)
        return out
    if isinstance(e, m.Unary) and e.op == "-" and not e.postfix:
        inner = _poly(e.operand)
        return None if inner is None else {k: (-c, a) for k, (c, a) in inner.items()}
    form = linear_form(e)
    if form is None:
        return None
    terms, const = form
    out = {(): (const, ())} if const else {}
    for key, (c, atom) in terms.items():
        _add(out, (key,), c, (atom,))
    return out


def _add(poly: dict, key, c: int, atoms) -> None:
    old = poly.get(key, (0, atoms))[0] + c
    if old:
        poly[key] = (old, tuple(sorted(atoms, key=m.dump)))
    else:
        poly.pop(key, None)


def _linear(poly: dict):
    """A polynomial whose monomials are single atoms, as an affine form; else None."""
    terms, const = {}, 0
    for key, (c, atoms) in poly.items():
        if not key:
            const += c
        elif len(key) == 1:
            terms[key[0]] = (c, atoms[0])
        else:
            prod = atoms[0]
            for a in atoms[1:]:
                prod = m.Binary("*", prod, a, m.Scalar("int32"), a.span)
            terms[m.dump(prod)] = (c, prod)
    return terms, const


# -- proving bounds ------------------------------------------------------------------------------


def _nonneg_atom(a) -> bool:
    a = _strip(a)
    if isinstance(a, m.Builtin):
        return True
    t = getattr(a, "type", None)
    return isinstance(t, m.Scalar) and t.dtype.startswith("uint")


def _difference(a, b):
    """The affine form ``a - b`` of two expressions, or None."""
    fa, fb = linear_form(a), linear_form(b)
    if fa is None or fb is None:
        return None
    terms = dict(fa[0])
    for k, (c, atom) in fb[0].items():
        terms[k] = (terms.get(k, (0, atom))[0] - c, atom)
    return {k: v for k, v in terms.items() if v[0]}, fa[1] - fb[1]


def _fact_forms(fact):
    """Forms ``L`` with ``L >= 0`` that a comparison states."""
    f = _strip(fact)
    if not isinstance(f, m.Binary) or f.op not in ("<", "<=", ">", ">=", "=="):
        return []
    if f.op in ("<", "<="):
        d = _difference(f.rhs, f.lhs)
        return [] if d is None else [(d[0], d[1] - (1 if f.op == "<" else 0))]
    if f.op in (">", ">="):
        d = _difference(f.lhs, f.rhs)
        return [] if d is None else [(d[0], d[1] - (1 if f.op == ">" else 0))]
    d = _difference(f.lhs, f.rhs)
    return [] if d is None else [d, ({k: (-c, a) for k, (c, a) in d[0].items()}, -d[1])]


def _obviously_nonneg(form, lower: dict) -> bool:
    """A constant plus atoms with positive coefficients, at least 0 with each atom at its lower
    bound (``lower``: atom key -> bound; builtins and unsigned values are at least 0)."""
    terms, const = form
    low = const
    for key, (c, atom) in terms.items():
        bound = lower.get(key, 0 if _nonneg_atom(atom) else None)
        if c < 0 or bound is None:
            return False
        low += c * bound
    return low >= 0


def _lower_bounds(facts: list) -> dict:
    """Constant lower bounds of single atoms that facts state (``c * a + k >= 0``, c > 0)."""
    out: dict = {}
    for terms, const in facts:
        if len(terms) == 1:
            (key, (c, _atom)), = terms.items()
            if c > 0:
                bound = -(const // c)  # ceil(-const / c)
                out[key] = max(out.get(key, bound), bound)
    return out


def _minus(form, other):
    terms = dict(form[0])
    for k, (c, atom) in other[0].items():
        terms[k] = (terms.get(k, (0, atom))[0] - c, atom)
    return {k: v for k, v in terms.items() if v[0]}, form[1] - other[1]


def proves_nonneg(form, facts: list) -> bool:
    """Whether ``form >= 0`` follows from the facts (each a form ``>= 0``): the form minus at most
    two of them is a nonnegative constant plus atoms at or above their lower bounds."""
    lower = _lower_bounds(facts)
    if _obviously_nonneg(form, lower):
        return True
    for f in facts:
        if _obviously_nonneg(_minus(form, f), lower):
            return True
    for f, g in combinations(facts, 2):
        if _obviously_nonneg(_minus(_minus(form, f), g), lower):
            return True
    return False


# -- the decision --------------------------------------------------------------------------------


def _param_name(atom, extents: set[str]) -> str | None:
    a = _strip(atom)
    return a.name if isinstance(a, m.Ref) and a.kind == "param" and a.name in extents else None


def _split(poly: dict, extents: set[str]):
    """Per monomial: (sorted extent-parameter names, coefficient, other atoms)."""
    out = []
    for key, (c, atoms) in poly.items():
        params = tuple(sorted(n for n in (_param_name(a, extents) for a in atoms) if n))
        rest = tuple(a for a in atoms if _param_name(a, extents) is None)
        out.append((params, c, rest))
    return out


def _chains(strides: set[tuple]) -> list[tuple]:
    """Row-major stride chains (largest first, ending in ``()`` = 1) built from the candidate
    strides, each one parameter more than the next; longest first."""
    cands = sorted((s for s in strides if s), key=lambda s: (len(s), s))
    found = []

    def extend(chain):
        if len(chain) > 1:
            found.append(chain)
        for s in cands:
            if len(s) == len(chain[0]) + 1 and _divides(chain[0], s):
                extend((s,) + chain)

    extend(((),))
    found.sort(key=lambda ch: (-len(ch), ch))
    return found


def _divides(a: tuple, b: tuple) -> bool:
    rest = list(b)
    for x in a:
        if x not in rest:
            return False
        rest.remove(x)
    return True


def _quotient(b: tuple, a: tuple) -> tuple:
    rest = list(b)
    for x in a:
        rest.remove(x)
    return tuple(rest)


def _decompose(split, chain: tuple, params: dict) -> list | None:
    """The per-dimension index polynomials of one access against a stride chain (each monomial
    goes to the largest stride dividing its parameters)."""
    dims = [dict() for _ in chain]
    for names, c, rest in split:
        for d, stride in enumerate(chain):
            if _divides(stride, names):
                atoms = rest + tuple(params[n] for n in _quotient(names, stride))
                key = tuple(sorted(m.dump(a) for a in atoms))
                _add(dims[d], key, c, atoms)
                break
    return dims


class _Levels:
    """An index at successive depths of single-assignment replacement, down to the fixpoint."""

    def __init__(self, index, table: dict, stable: set[str]) -> None:
        from ..facts.locals import Expand
        self.levels = [index]
        for _ in range(8):
            nxt = Expand(table).transform(self.levels[-1])
            if nxt == self.levels[-1]:
                break
            self.levels.append(nxt)
        self.stable = stable

    def usable(self, level: int) -> bool:
        """Whether the names a replaced index mentions hold the same values at the access (locals
        assigned once, loop variables only their step changes)."""
        if level == 0:
            return True
        before = {n.name for n in m.walk(self.levels[0]) if isinstance(n, m.Ref) and n.kind == "local"}
        return all(n.name in self.stable or n.name in before
                   for n in m.walk(self.levels[level]) if isinstance(n, m.Ref) and n.kind == "local")


def delinearise(collector: _Collector, buffers: dict, extents: dict, table: dict, stable: set[str]) -> Shapes:
    """Shapes for the buffers of ``collector``'s accesses. ``buffers``: buffer parameter name ->
    pointee type; ``extents``: scalar parameter name -> Ref, those that may be extents (int32/int64,
    never assigned); ``table``: single-assignment locals (name -> value); ``stable``: names that
    keep their value (single-assignment locals, loop variables inside their loop, parameters never
    assigned), so a guard on them still holds at the access it encloses and a local computed from
    them still names the same place."""
    out = Shapes()
    by_buffer: dict[str, list[Site]] = {}
    for s in collector.sites:
        by_buffer.setdefault(s.buffer, []).append(s)
    from ..facts.locals import expand
    for name in sorted(buffers):
        if name in collector.other_uses:
            out.refused[name] = collector.other_uses[name]
            continue
        sites = by_buffer.get(name, [])
        if not sites:
            continue
        try:
            shape, indices = _shape_of(name, sites, extents, table, stable, expand)
        except _Refuse as why:
            out.refused[name] = str(why)
            if why.span is not None and _indexed_as_rows(sites, extents, table, expand):
                # the reason without its "'A' at line N: " (the span says it)
                out.kept_flat[name] = (why.span, str(why).split(": ", 1)[-1])
            continue
        out.shapes[name] = shape
        out.indices.update(indices)
    return out


def _indexed_as_rows(sites, extents, table, expand) -> bool:
    """Whether an access scales a varying index by a scalar parameter (``row * K``): a buffer
    indexed only at ``n - 1`` or ``i * 2 + l`` is flat by nature, not for want of a proof."""
    names = set(extents)
    for s in sites:
        poly = _poly(expand(s.node.index, table))
        if poly and any(params and rest for params, _c, rest in _split(poly, names)):
            return True
    return False


def _shape_of(name, sites, extents, table, stable, expand):
    names = set(extents)
    full = []
    for s in sites:
        if isinstance(_strip(s.node.base), m.Index) or isinstance(s.node.type, (m.Pointer, m.Array)):
            raise _Refuse(f"'{name}' is indexed as an array of arrays")
        poly = _poly(expand(s.node.index, table))
        if poly is None:
            raise _Refuse(f"an index of '{name}' at line {s.node.span.line} is not integer arithmetic")
        full.append(_split(poly, names))
    strides = {names_ for split in full for names_, _c, _r in split}
    chains = _chains(strides)
    if not chains:
        raise _Refuse(f"no access of '{name}' is scaled by a scalar parameter")
    last = _Refuse("")
    for chain in chains:
        dims = [_quotient(a, b) for a, b in zip(chain, chain[1:])]
        ext = [d[0] for d in dims]  # each step is one parameter
        try:
            per_site = []
            for s, split in zip(sites, full):
                idx = _decompose(split, chain, extents)
                facts = [f for fact in s.facts if _still_true(fact, stable)
                         for f in _fact_forms(expand(fact, table))]
                for d in range(1, len(chain)):
                    lin = _linear(idx[d])
                    bound = linear_form(extents[ext[d - 1]])
                    if not proves_nonneg(lin, facts):
                        raise _Refuse(f"'{name}' at line {s.node.span.line}: index {d} is not proven >= 0",
                                      s.node.span)
                    if not proves_nonneg(_minus(_minus(bound, lin), ({}, 1)), facts):
                        raise _Refuse(f"'{name}' at line {s.node.span.line}: index {d} is not proven below "
                                      f"'{ext[d - 1]}' (it could run into the next row)", s.node.span)
                per_site.append((s, idx, facts))
        except _Refuse as why:
            last = why
            continue
        first = _first_extent(per_site, extents)
        indices = {}
        for s, idx, _facts in per_site:
            printed = _printed(s, chain, idx, extents, table, stable)
            if printed is None:
                raise _Refuse(f"'{name}' at line {s.node.span.line}: its index reads locals that may have "
                              "changed since it was computed", s.node.span)
            indices[id(s.node)] = printed
        return (first,) + tuple(ext), indices
    raise last


def _still_true(fact, stable: set[str]) -> bool:
    """Whether a condition checked on the way to an access still holds there: it reads no memory
    itself and only names that keep their value (locals assigned once — also one that holds a
    load —, loop variables inside their loop, parameters never assigned)."""
    for n in m.walk(fact):
        if isinstance(n, (m.Index, m.Assign, m.MethodCall)) or (
                isinstance(n, m.Call) and n.kind not in ("math", "conversion")):
            return False
        if isinstance(n, m.Unary) and n.op in ("++", "--", "*"):
            return False
        if isinstance(n, m.Ref) and n.kind in ("local", "param") and n.name not in stable:
            return False
    return True


def _first_extent(per_site, extents) -> str | None:
    """A scalar parameter that bounds the first index at every access, if the facts prove one."""
    for cand in sorted(extents):
        bound = linear_form(extents[cand])
        if all(proves_nonneg(_minus(_minus(bound, _linear(idx[0])), ({}, 1)), facts)
               for _s, idx, facts in per_site):
            return cand
    return None


def _printed(site, chain, full_idx, extents, table, stable) -> tuple:
    """The per-dimension indices to print: at the shallowest replacement depth whose
    decomposition names the same values as the fully replaced one."""
    from ..facts.locals import expand
    levels = _Levels(site.node.index, table, stable)
    names = set(extents)
    want = [_canon(_linear(d)) for d in full_idx]
    for level, e in enumerate(levels.levels):
        if not levels.usable(level):
            continue
        poly = _poly(e)
        if poly is None:
            continue
        idx = _decompose(_split(poly, names), chain, extents)
        if [_canon(_linear(_poly(expand(_rebuild(d, site.node), table)) or {})) for d in idx] == want:
            return tuple(_rebuild(d, site.node) for d in idx)
    return None


def _canon(form) -> str:
    terms, const = form
    return repr((sorted((k, c) for k, (c, _a) in terms.items()), const))


def _rebuild(poly: dict, like) -> m.Expr:
    """An expression for an index polynomial, its terms in the order the CUDA index wrote them
    (``t * 16 + k``, not sorted), then the constant."""
    text = m.dump(like.index)

    def place(key):
        at = text.find(key)
        return (at if at >= 0 else len(text), key)

    return rebuild_form(_linear(poly), like, order=place, wide=False)


# -- applying the shapes -------------------------------------------------------------------------


def apply(obj, indices: dict):
    """``obj`` (a plan, a region, statements) with each delinearised access ``A[flat]`` replaced by
    ``A[i0][i1]...`` (the printer writes ``A[i0, i1]``); shared subtrees stay shared. Locals that
    only the flat indices read (``idx = row * N + col``) are declared no more."""
    new = _rewrite(obj, indices)
    dead = _local_refs(obj) - _local_refs(new)
    return _drop_decls(new, dead) if dead else new


def _local_refs(obj) -> set[str]:
    return {n.name for n in _nodes(obj) if isinstance(n, m.Ref) and n.kind == "local"}


def _nodes(obj):
    seen: set[int] = set()
    stack = [obj]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, (tuple, list)):
            stack.extend(x)
        elif isinstance(x, Mapping):
            stack.extend(x.values())
        elif dataclasses.is_dataclass(x) and not isinstance(x, type) and not isinstance(x, _LEAVES):
            yield x
            stack.extend(getattr(x, f.name) for f in dataclasses.fields(x) if f.name not in ("span", "type"))


_COMPOUND = (m.Block, m.If, m.For, m.While, m.DoWhile, m.Switch, m.Case)


def _drop_decls(obj, dead: set[str]):
    def keep(d):
        return not (d.name in dead and d.storage == "local" and d.init is not None and pure(d.init))

    def visit(x):
        if isinstance(x, m.DeclStmt) and not all(keep(d) for d in x.decls):
            kept = tuple(d for d in x.decls if keep(d))
            return dataclasses.replace(x, decls=kept) if kept else m.Empty(x.span)
        if isinstance(x, _COMPOUND):
            return m.map_children(x, visit)
        return x

    def rebuild(x):
        if isinstance(x, tuple):
            items = tuple(rebuild(v) for v in x)
            return x if all(a is b for a, b in zip(items, x)) else items
        if isinstance(x, list):
            return [rebuild(v) for v in x]
        if isinstance(x, Mapping):
            return {k: rebuild(v) for k, v in x.items()}
        if isinstance(x, (m.DeclStmt,) + _COMPOUND):
            return visit(x)
        if dataclasses.is_dataclass(x) and not isinstance(x, type) and not isinstance(x, _LEAVES) \
                and not _is_expr(x) and not isinstance(x, m.Function):
            changes = {f.name: rebuild(getattr(x, f.name)) for f in dataclasses.fields(x)
                       if f.name not in ("span", "type")}
            changes = {k: v for k, v in changes.items() if v is not getattr(x, k)}
            return dataclasses.replace(x, **changes) if changes else x
        return x

    return rebuild(obj)


def _rewrite(obj, indices: dict):
    memo: dict[int, object] = {}

    def rebuild(x):
        key = id(x)
        if key in memo:
            return memo[key]
        if isinstance(x, m.Index) and key in indices:
            base = x.base
            new_idx = indices[key]
            node = base
            for d, i in enumerate(new_idx):
                node = m.Index(node, i, x.type if d == len(new_idx) - 1 else base.type, x.span)
            out = node
        elif isinstance(x, tuple):
            items = tuple(rebuild(v) for v in x)
            out = x if all(a is b for a, b in zip(items, x)) else items
        elif isinstance(x, list):
            out = [rebuild(v) for v in x]
        elif isinstance(x, Mapping):
            out = {k: rebuild(v) for k, v in x.items()}
        elif dataclasses.is_dataclass(x) and not isinstance(x, type) and not isinstance(x, _LEAVES):
            changes = {}
            for f in dataclasses.fields(x):
                if f.name in ("span", "type"):
                    continue
                value = getattr(x, f.name)
                new = rebuild(value)
                if new is not value:
                    changes[f.name] = new
            out = dataclasses.replace(x, **changes) if changes else x
        else:
            out = x
        memo[key] = out
        return out

    return rebuild(obj)


_LEAVES = tuple(t for t in (getattr(m, n, None) for n in ("Scalar", "Pointer", "Reference", "Array", "Vector",
                                                           "TemplateType", "Opaque")) if isinstance(t, type))


def kernel_inputs(fn: m.Function):
    """(buffers: name -> pointee type, extents: name -> Ref, table of single-assignment locals,
    stable names) of a prepared kernel."""
    from ..facts.locals import single_assignment_locals
    body = fn.body if fn.body is not None else m.Block((), fn.span)
    stored = _assigned_refs(body)  # (one walk for all the parameters)
    assigned = {p.name for p in fn.params if p.name in stored}
    buffers = {p.name: p.type.pointee for p in fn.params
               if isinstance(p.type, m.Pointer) and isinstance(p.type.pointee, m.Scalar)}
    extents = {p.name: m.Ref(p.name, "param", p.type, p.span) for p in fn.params
               if isinstance(p.type, m.Scalar) and p.type.dtype in EXTENT_DTYPES and p.name not in assigned}
    table = single_assignment_locals(body)
    stable = set(table) | _loop_vars(body) | {p.name for p in fn.params if p.name not in assigned}
    return buffers, extents, table, stable


def _loop_vars(body) -> set[str]:
    """Variables of counted loops that only the loop's step changes."""
    out = set()
    for n in m.walk(body):
        if isinstance(n, m.For) and _loop_facts(n):
            out.add(n.init.decls[0].name)
    return out


def shape_plan(plan: KernelPlan, excluded) -> tuple[KernelPlan, dict]:
    """``plan`` (a tile-form plan) with the buffers the analysis proves row-major arrays indexed
    by dimension, and their shapes in ``plan.shapes``; with the flat buffers worth a note
    (``Shapes.kept_flat``). ``excluded(name, fn)``: scalar parameters that cannot be extents."""
    found = _shapes(plan.fn, sites_in_regions(plan.regions, set(kernel_inputs(plan.fn)[0])), excluded)
    shaped = apply(plan, found.indices) if found.indices else plan
    return dataclasses.replace(shaped, shapes=found.shapes), found.kept_flat


def shape_gemm(fn: m.Function, g, excluded) -> tuple:
    """The GEMM plan ``g`` of ``fn`` with its operands' buffers shaped: (g, shapes, kept_flat)."""
    found = _shapes(fn, sites_in_gemm(g, set(kernel_inputs(fn)[0])), excluded)
    return (apply(g, found.indices) if found.indices else g), found.shapes, found.kept_flat


def _shapes(fn: m.Function, sites, excluded) -> Shapes:
    buffers, extents, table, stable = kernel_inputs(fn)
    extents = {n: r for n, r in extents.items() if not excluded(n, fn)}
    return delinearise(sites, buffers, extents, table, stable)
