"""Register micro-tiles as elements: one thread's ``TM × TN`` accumulators become TM·TN threads.

A register-blocked kernel gives each thread a constant-size array of accumulators, walked by
constant loops whose variables meet the thread index in strided rows and columns:

    float acc[TM][TN];                        // rows ty + B_y * i, columns tx + B_x * j
    for (i = 0; i < TM; ++i) for (j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);

With ``B_d`` the block's threads along ``d`` (which the factory asserts), ``t + B_d * i`` runs
over ``[0, B_d · TM)`` once for each pair (t, i): the micro-tiles of a block's threads are
disjoint and together cover its tile. :func:`expand_micro_tiles` rewrites the kernel for a block
of ``B_d · TM`` *virtual* threads along ``d``, each running one element: thread ``T`` stands for
the CUDA thread ``T % B_d`` at micro index ``i = T / B_d``. The micro loops disappear (their
bodies run once, for the element's ``i``), the arrays become scalars, and ``t + B_d * i`` is
``T`` again, an ordinary thread index the other passes fold into a global index.

That is the CUDA computation exactly when no value flows between the elements of one thread:

- every access of a micro-tile array is at the element of the micro loops around it
  (``acc[i][j]``, ``a[i]``; never ``acc[i][0]`` or the whole array);
- a scalar assigned inside a micro loop is declared inside it (no sum over the elements);
- statements outside the micro loops run once per element instead of once per thread: they
  may compute locals and store plain values (the same ones, to the same places), not update
  memory (compound stores, atomics); no barrier inside a micro loop;
- the loops and arrays have constant sizes, every use of a micro index is in ``t + B_d * i``,
  and the block's tile (``blockIdx.d * C``) is ``C = B_d · TM``.

Cooperative fills of shared memory are rewritten first (:mod:`.coop_fills`), for the block
sizes ``B_d``. Fragment arrays (``a[i] = As[ty + 16 * i][kk]`` read in the same block) become
the value they hold. :class:`~.base.NotLiftable` says why a micro-tiled kernel is refused;
a kernel without micro-tiles comes back unchanged.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ...ir import model as m
from ...ir.exprs import const_value, negate, strip_casts
from ...ir.visit import Transformer
from ..facts.affine import linear_form, rebuild
from ..facts.locals import expand, single_assignment_locals
from ..phases import is_barrier_call
from ..prepare.builtin_aliases import propagate_builtin_aliases
from ..prepare.dead_code import drop_dead_declarations
from ..prepare.global_index import assumed_block_sizes
from .base import MicroTilesRefused, NotLiftable
from .coop_fills import rewrite_cooperative_fills


@dataclass(frozen=True)
class MicroTiling:
    """Per thread dimension: elements per CUDA thread (``per_thread``) and the CUDA block's
    threads (``block``, which the launch must use)."""

    per_thread: dict
    block: dict


class _FoldConstants(Transformer):
    """Integer arithmetic on literals (``64 / 4`` from macros) as one literal."""

    def leave_Binary(self, node):
        if isinstance(node.type, m.Scalar) and node.type.dtype.startswith(("int", "uint")) \
                and node.op in ("+", "-", "*", "/", "%"):
            v = const_value(node)
            if isinstance(v, int):
                return m.IntLit(v, str(v), node.type, node.span)
        return node


def _counted_loop(loop) -> tuple[str, int] | None:
    """(var, C) of ``for (int v = 0; v < C; ++v)`` with a constant C and ``v`` not assigned."""
    if not isinstance(loop, m.For) or not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1:
        return None
    d = loop.init.decls[0]
    cond, step = strip_casts(loop.cond) if loop.cond is not None else None, loop.step
    if d.init is None or const_value(d.init) != 0 or not (
            isinstance(cond, m.Binary) and cond.op == "<" and isinstance(strip_casts(cond.lhs), m.Ref)
            and strip_casts(cond.lhs).name == d.name):
        return None
    if not ((isinstance(step, m.Unary) and step.op == "++") or
            (isinstance(step, m.Assign) and step.op == "+=" and const_value(step.value) == 1)):
        return None
    bound = const_value(cond.rhs)
    if not isinstance(bound, int) or any(
            (isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name == d.name) or
            (isinstance(n, m.Unary) and n.op in ("++", "--") and isinstance(n.operand, m.Ref)
             and n.operand.name == d.name) for n in m.walk(loop.body)):
        return None
    return d.name, bound


def _chain(e):
    """(array name, [indices]) of ``a[i][j]`` on a local, or None."""
    idx = []
    while isinstance(e, m.Index):
        idx.insert(0, e.index)
        e = strip_casts(e.base)
    return (e.name, idx) if isinstance(e, m.Ref) and e.kind == "local" else None


class _Union:
    def __init__(self) -> None:
        self.parent: dict = {}

    def find(self, a):
        self.parent.setdefault(a, a)
        while self.parent[a] != a:
            a = self.parent[a]
        return a

    def join(self, a, b) -> None:
        self.parent[self.find(a)] = self.find(b)


def _thread_pairs(fn: m.Function, loop_vars: set[str]):
    """(loop var, dim, coefficient of threadIdx.dim, coefficient of the var) of every integer
    sum in which a loop variable meets a thread index."""
    out = []
    for n in m.walk(fn.body):
        if not (isinstance(n, m.Binary) and n.op in ("+", "-")):
            continue
        form = linear_form(n)
        if form is None:
            continue
        threads = {a.dim: c for c, a in ((c, strip_casts(a)) for c, a in form[0].values())
                   if isinstance(a, m.Builtin) and a.var == "threadIdx"}
        loops = {a.name: c for c, a in ((c, strip_casts(a)) for c, a in form[0].values())
                 if isinstance(a, m.Ref) and a.kind == "local" and a.name in loop_vars}
        if len(threads) == 1 and loops:
            (d, ct), = threads.items()
            out += [(v, d, ct, cv, n.span.line) for v, cv in loops.items()]
    return out


def expand_micro_tiles(fn: m.Function) -> tuple[m.Function, MicroTiling | None]:
    """``fn`` with its register micro-tiles as elements of a larger block (see the module doc),
    and how many elements each CUDA thread had; ``(fn, None)`` when it has no micro-tiles."""
    if fn.body is None:
        return fn, None
    arrays = {n.name: n for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.storage == "local"
              and isinstance(n.type, m.Array)}
    if not arrays:
        return fn, None
    fn = propagate_builtin_aliases(dataclasses.replace(fn, body=_FoldConstants().transform(fn.body)))
    loops, loose = {}, {}  # loop var -> C; var of a loop without a constant count -> its line
    for n in m.walk(fn.body):
        found = _counted_loop(n)
        if found:
            loops[found[0]] = found[1]
        elif isinstance(n, m.For) and isinstance(n.init, m.DeclStmt) and len(n.init.decls) == 1:
            loose[n.init.decls[0].name] = n.span.line
    # which loop variables index which array positions; which meet which thread index
    links = _Union()
    accesses, inner, loops_without_count = [], set(), set()
    for n in m.walk(fn.body):
        chain = _chain(n) if isinstance(n, m.Index) and id(n) not in inner else None
        if chain and chain[0] in arrays:
            base = strip_casts(n.base)
            while isinstance(base, m.Index):  # a[i] of a[i][j] is part of this access
                inner.add(id(base))
                base = strip_casts(base.base)
            for pos, idx in enumerate(chain[1]):
                v = strip_casts(idx)
                if isinstance(v, m.Ref) and v.name in loops:
                    links.join(("v", v.name), ("a", chain[0], pos))
                elif isinstance(v, m.Ref) and v.name in loose:
                    links.join(("v", v.name), ("a", chain[0], pos))
                    loops_without_count.add(v.name)
            accesses.append((chain[0], chain[1], n))
    pairs = _thread_pairs(fn, set(loops) | loops_without_count)
    dims: dict = {}  # component -> {(dim, ct, cv)}
    for v, d, ct, cv, line in pairs:
        dims.setdefault(links.find(("v", v)), set()).add((d, ct, cv, line))
    micro = {links.find(("a", a, p)) for a, d in arrays.items() for p in range(len(m.array_extents(d.type)))}
    micro &= set(dims)
    if not micro:
        return fn, None  # per-thread arrays, but none walked along a thread dimension
    # -- the layout of each micro dimension ---------------------------------------------------
    comp_dim: dict = {}
    layout: dict = {}  # dim -> (B, TM)
    for comp in micro:
        found = {d for d, _ct, _cv, _l in dims[comp]}
        if len(found) != 1:
            raise MicroTilesRefused("a micro-tile index meets thread indices of several dimensions "
                                    f"({', '.join(sorted(found))})")
        d = found.pop()
        coefs = {(ct, cv) for _d, ct, cv, _l in dims[comp]}
        sizes = {loops.get(k[1]) for k in links.parent if k[0] == "v" and links.find(k) == comp} | {
            m.array_extents(arrays[k[1]].type)[k[2]] for k in links.parent if k[0] == "a" and links.find(k) == comp}
        line = min(l for *_x, l in dims[comp])
        uncounted = sorted(k[1] for k in links.parent if k[0] == "v" and links.find(k) == comp
                           and k[1] in loops_without_count)
        if uncounted or None in sizes:
            what = f"the loop over '{uncounted[0]}' (line {loose[uncounted[0]]}) does not run a constant count" \
                if uncounted else "an array of it has no constant extent"
            raise MicroTilesRefused(f"the micro-tile along {d} has no constant size: {what}")
        if len(sizes) != 1:
            raise MicroTilesRefused(f"the micro-tile along {d} (line {line}) has loops and arrays of different "
                                    f"sizes ({', '.join(map(str, sorted(sizes)))})")
        tm = sizes.pop()
        if len(coefs) != 1:
            raise MicroTilesRefused(f"the micro-tile along {d} (line {line}) is indexed in several ways: "
                                    + ", ".join(f"{ct} * threadIdx.{d} + {cv} * i" for ct, cv in sorted(coefs)))
        ct, cv = coefs.pop()
        if ct != 1 or cv <= 1:
            raise MicroTilesRefused(f"the micro-tile rows {ct} * threadIdx.{d} + {cv} * i (line {line}) are not "
                                    f"strided by the block (threadIdx.{d} + B * i): only those are lifted")
        if layout.get(d, (cv, tm)) != (cv, tm):
            raise MicroTilesRefused(f"two micro-tiles along {d} differ in size or stride (line {line})")
        layout[d] = (cv, tm)
        comp_dim[comp] = d
    for a, decl in arrays.items():
        ranks = range(len(m.array_extents(decl.type)))
        inside = [links.find(("a", a, p)) in micro for p in ranks]
        if any(inside) and not all(inside):
            raise MicroTilesRefused(f"'{a}' is a micro-tile along some dimensions only")
        if all(inside) and len({comp_dim[links.find(("a", a, p))] for p in ranks}) != len(ranks):
            raise MicroTilesRefused(f"'{a}' has two positions along the same thread dimension")
    tiles = {a for a, d in arrays.items() if links.find(("a", a, 0)) in micro}
    micro_vars = {k[1]: comp_dim[links.find(k)] for k in links.parent if k[0] == "v" and links.find(k) in micro}
    _check_accesses(fn, tiles, accesses, micro_vars, links, comp_dim, arrays)
    _check_elements(fn.body, micro_vars, tiles)
    block = {d: b for d, (b, _tm) in layout.items()}
    # -- the rewrite ----------------------------------------------------------------------------
    try:
        fn = rewrite_cooperative_fills(fn, block)
    except MicroTilesRefused:
        raise
    except NotLiftable as exc:
        raise MicroTilesRefused(str(exc)) from None
    body = _Virtualise(layout, micro_vars, tiles).transform(fn.body)
    body = _expand_block_offsets(body)
    body = drop_dead_declarations(_Merge().transform(body))
    for n in m.walk(body):
        if isinstance(n, m.Binary) and n.op in ("/", "%") and any(
                isinstance(a, m.Builtin) and a.var == "threadIdx" for a in m.walk(n.lhs)) and \
                isinstance(strip_casts(n.rhs), m.IntLit) and strip_casts(n.rhs).value in {b for b, _t in layout.values()}:
            raise MicroTilesRefused(f"a micro-tile index or thread index is used other than in threadIdx + B * i "
                                    f"(line {n.span.line})")
    virtual = dataclasses.replace(fn, body=body)
    assumed = assumed_block_sizes(virtual)
    for d, (b, tm) in layout.items():
        if assumed.get(d) != b * tm:
            raise MicroTilesRefused(f"the block's tile along {d} is {assumed.get(d, 'not a constant')}, not the "
                                    f"{b} × {tm} elements its threads' micro-tiles cover")
    body = _first_assignments(body, tiles)
    body = _forward_fragments(body)
    return dataclasses.replace(fn, body=body), MicroTiling({d: tm for d, (_b, tm) in layout.items()}, block)


def _check_accesses(fn, tiles, accesses, micro_vars, links, comp_dim, fn_arrays) -> None:
    indexed = set()
    for a, idx, node in accesses:
        if a not in tiles:
            continue
        indexed |= {id(n) for n in m.walk(node)}
        if len(idx) != len(m.array_extents(fn_arrays[a].type)):
            raise MicroTilesRefused(f"a part of the micro-tile '{a}' is used as a whole at line {node.span.line}")
        for pos, i in enumerate(idx):
            v = strip_casts(i)
            if not (isinstance(v, m.Ref) and v.name in micro_vars and micro_vars[v.name] ==
                    comp_dim[links.find(("a", a, pos))]):
                raise MicroTilesRefused(f"'{a}' is accessed at line {node.span.line} other than at the element of "
                                        "the micro loops around it: a value would cross micro-tile elements")
    for n in m.walk(fn.body):
        if isinstance(n, m.Ref) and n.name in tiles and id(n) not in indexed:
            raise MicroTilesRefused(f"the micro-tile '{n.name}' is used as a whole at line {n.span.line}")


def _check_elements(body, micro_vars, tiles) -> None:
    """No value crosses from one micro-tile element to another (see the module doc)."""

    def visit(node, inside: dict):  # inside: micro loop var -> names declared in its body
        if isinstance(node, m.For) and _counted_loop(node) and _counted_loop(node)[0] in micro_vars:
            v = _counted_loop(node)[0]
            if micro_vars[v] in {micro_vars[w] for w in inside}:
                raise MicroTilesRefused(f"micro loops along {micro_vars[v]} are nested (line {node.span.line})")
            declared = {d.name for n in m.walk(node.body) if isinstance(n, m.VarDecl) for d in (n,)}
            for n in m.walk(node.body):
                target = m.store_target(n)
                if isinstance(target, m.Ref) and target.kind == "local" and target.name not in declared:
                    raise MicroTilesRefused(f"'{target.name}' is assigned in the micro loop over '{v}' (line "
                                            f"{n.span.line}) but lives outside it: it carries a value across "
                                      "micro-tile elements")
                if isinstance(n, m.Call) and is_barrier_call(n):
                    raise MicroTilesRefused(f"a barrier inside the micro loop over '{v}' (line {n.span.line})")
            visit(node.body, {**inside, v: declared})
            return
        if not inside:
            if isinstance(node, m.Call) and node.kind == "atomic":
                raise MicroTilesRefused(f"an atomic outside the micro loops (line {node.span.line}) would run once "
                                        "per micro-tile element")
            target = node.target if isinstance(node, m.Assign) else (
                node.operand if isinstance(node, m.Unary) and node.op in ("++", "--") else None)
            if target is not None and not isinstance(target, m.Ref) and (
                    not isinstance(node, m.Assign) or node.op != "="):
                raise MicroTilesRefused(f"a memory update outside the micro loops (line {node.span.line}) would run "
                                        "once per micro-tile element")
        for child in m.children(node):
            visit(child, inside)

    visit(body, {})


class _Virtualise(Transformer):
    """Micro loops dropped (their body runs for the element's index), micro arrays as scalars,
    ``threadIdx.d`` -> ``T % B``, micro index -> ``T / B``."""

    def __init__(self, layout: dict, micro_vars: dict, tiles: set) -> None:
        self.layout, self.micro_vars, self.tiles = layout, micro_vars, tiles

    def leave_Builtin(self, node):
        if node.var == "threadIdx" and node.dim in self.layout:
            b = self.layout[node.dim][0]
            return m.Binary("%", node, m.IntLit(b, str(b), node.type, node.span), node.type, node.span)
        return node

    def leave_Ref(self, node):
        if node.kind == "local" and node.name in self.micro_vars:
            d = self.micro_vars[node.name]
            b = self.layout[d][0]
            t = m.Builtin("threadIdx", d, m.Scalar("uint32"), node.span)
            q = m.Binary("/", t, m.IntLit(b, str(b), t.type, node.span), t.type, node.span)
            return m.Cast(node.type, q, "implicit", node.type, node.span)
        return node

    def leave_Index(self, node):
        chain = _chain(node)
        if chain and chain[0] in self.tiles:
            root = node
            while isinstance(root, m.Index):
                root = strip_casts(root.base)
            return m.Ref(root.name, "local", node.type, node.span)
        return node

    def leave_VarDecl(self, node):
        if node.name in self.tiles:
            return dataclasses.replace(node, type=m.element_type(node.type))
        return node

    def leave_For(self, node):
        found = _counted_loop_after(node)
        if found not in self.micro_vars:
            return node
        stmts = list(node.body.stmts if isinstance(node.body, m.Block) else (node.body,))
        return m.Block(_continues_to_guards(stmts, node.span.line), node.span)


def _counted_loop_after(loop) -> str | None:
    """The variable of a counted loop (its body already rewritten: the bound is what matters)."""
    if isinstance(loop, m.For) and isinstance(loop.init, m.DeclStmt) and len(loop.init.decls) == 1:
        return loop.init.decls[0].name
    return None


def _continues_to_guards(stmts: list, line: int) -> tuple:
    """A dropped loop's body with ``if (c) continue; rest`` as ``if (!c) { rest }``."""
    out = []
    for k, st in enumerate(stmts):
        if isinstance(st, m.If) and st.other is None and (
                isinstance(st.then, m.Continue) or (isinstance(st.then, m.Block) and len(st.then.stmts) == 1
                                                    and isinstance(st.then.stmts[0], m.Continue))):
            rest = _continues_to_guards(stmts[k + 1:], line)
            out.append(m.If(negate(st.cond), m.Block(rest, st.span), None, st.span))
            return tuple(out)
        if _own_jumps(st):
            raise MicroTilesRefused(f"the micro loop at line {line} leaves an element early other than by "
                                    "'if (...) continue;'")
        out.append(st)
    return tuple(out)


def _own_jumps(node) -> bool:
    """Whether a break or continue in ``node`` belongs to the enclosing loop."""
    if isinstance(node, (m.Break, m.Continue)):
        return True
    if isinstance(node, (m.For, m.While, m.DoWhile, m.Switch)):
        return False
    return any(_own_jumps(c) for c in m.children(node))


def _expand_block_offsets(body):
    """Locals set once from block indices and constants (``row0 = blockIdx.y * 64``) spelled out,
    so that ``row0 + T`` reads as the global index it is."""
    table = {}
    for name, init in single_assignment_locals(body).items():
        nodes = list(m.walk(init))
        if any(isinstance(n, m.Builtin) and n.var == "blockIdx" for n in nodes) and not any(
                isinstance(n, (m.Index, m.Call, m.Ref, m.MethodCall)) or
                (isinstance(n, m.Builtin) and n.var == "threadIdx") for n in nodes):
            table[name] = init
    return expand(body, table) if table else body


class _Merge(Transformer):
    """Sums in which a virtual thread's ``T % B`` and ``T / B`` meet again rebuilt as ``T``."""

    def leave_Binary(self, node):
        if node.op not in ("+", "-") or not any(
                isinstance(n, m.Binary) and n.op in ("/", "%") and isinstance(strip_casts(n.lhs), m.Builtin)
                and strip_casts(n.lhs).var == "threadIdx" for n in m.walk(node)):
            return node
        form = linear_form(node)
        if form is None or any(isinstance(strip_casts(a), m.Binary) and strip_casts(a).op in ("/", "%")
                               and isinstance(strip_casts(strip_casts(a).lhs), m.Builtin)
                               for _c, a in form[0].values()):
            return node
        return rebuild(form, node)


def _first_assignments(body, names: set[str]):
    """``float acc; acc = 0;`` (a micro array's declaration and its first store, now scalars) as
    ``float acc = 0;`` where nothing comes between them but other such pairs."""

    def block(stmts):
        out = list(stmts)
        for k, st in enumerate(out):
            if not (isinstance(st, m.DeclStmt) and len(st.decls) == 1 and st.decls[0].name in names
                    and st.decls[0].init is None):
                continue
            name = st.decls[0].name
            for k2 in range(k + 1, len(out)):
                nxt = _single(out[k2])
                if isinstance(nxt, m.ExprStmt) and isinstance(nxt.expr, m.Assign) and nxt.expr.op == "=" and \
                        isinstance(nxt.expr.target, m.Ref) and nxt.expr.target.name == name and \
                        not any(isinstance(n, m.Ref) and n.name == name for n in m.walk(nxt.expr.value)):
                    out[k] = m.DeclStmt((dataclasses.replace(st.decls[0], init=nxt.expr.value),), st.span)
                    out[k2] = m.Empty(out[k2].span)
                    break
                if any(isinstance(n, m.Ref) and n.name == name for n in m.walk(out[k2])) or not isinstance(
                        out[k2], (m.DeclStmt, m.Empty)):
                    break
        return tuple(out)

    class _Blocks(Transformer):
        def leave_Block(self, node):
            return dataclasses.replace(node, stmts=block(node.stmts))

    return _Blocks().transform(body)


def _single(st):
    while isinstance(st, m.Block) and len(st.stmts) == 1:
        st = st.stmts[0]
    return st


def _forward_fragments(body):
    """A local declared in a block and stored once there (``a = As[T][kk]``, a fragment array
    become a scalar) replaced by that value where it is read later in the block, when nothing in
    between stores to memory or to a local the value reads."""

    def flat(stmts):  # nested blocks (dropped micro loops) and one declaration a statement
        out = []
        for st in stmts:
            if isinstance(st, m.Block):
                out += flat(st.stmts)
            elif isinstance(st, m.DeclStmt) and len(st.decls) > 1:
                out += [m.DeclStmt((d,), st.span) for d in st.decls]
            else:
                out.append(st)
        return out

    def block(stmts):
        stmts = flat(stmts)
        for k, st in enumerate(stmts):
            if not (isinstance(st, m.DeclStmt) and len(st.decls) == 1 and st.decls[0].init is None
                    and isinstance(st.decls[0].type, m.Scalar)):
                continue
            name = st.decls[0].name
            stores = [j for j, s in enumerate(stmts) if any(
                (isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name == name) or
                (isinstance(n, m.Unary) and n.op in ("++", "--", "&") and isinstance(n.operand, m.Ref)
                 and n.operand.name == name) for n in m.walk(s))]
            if len(stores) != 1:
                continue
            j = stores[0]
            s = stmts[j]
            if not (isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "="
                    and isinstance(s.expr.target, m.Ref)):
                continue
            value = s.expr.value
            if any(isinstance(n, (m.Call, m.MethodCall, m.Assign)) and not (
                    isinstance(n, m.Call) and n.kind in ("math", "conversion")) for n in m.walk(value)):
                continue
            reads = {n.name for n in m.walk(value) if isinstance(n, m.Ref)}
            later = stmts[j + 1:]
            last = max([i for i, t in enumerate(later) if any(isinstance(n, m.Ref) and n.name == name
                                                              for n in m.walk(t))], default=-1)
            if any(_clobbers(t, reads) for t in later[:last]):  # before the last read
                continue
            if any(isinstance(n, m.Ref) and n.name == name for t in stmts[:j] for n in m.walk(t)
                   if t is not st):
                continue
            table = {name: value}
            rest = tuple(expand(t, table, rounds=1) for t in later)
            return block(tuple(stmts[:k]) + tuple(stmts[k + 1:j]) + rest)
        return tuple(stmts)

    class _Blocks(Transformer):
        def leave_Block(self, node):
            return dataclasses.replace(node, stmts=block(node.stmts))

    return _Blocks().transform(body)


def _clobbers(stmt, reads: set[str]) -> bool:
    """Whether ``stmt`` may change a value that reads the locals ``reads`` and memory."""
    for n in m.walk(stmt):
        if isinstance(n, m.Assign) and (not isinstance(n.target, m.Ref) or n.target.name in reads):
            return True
        if isinstance(n, m.Unary) and n.op in ("++", "--") and (
                not isinstance(n.operand, m.Ref) or n.operand.name in reads):
            return True
        if isinstance(n, m.Call) and n.kind not in ("math", "conversion"):
            return True
    return False
