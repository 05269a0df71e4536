"""Warp-shuffle trees: what a tree of shuffles reduces, and how the lanes and warps of a block
are named (the roles of its thread indices), for the lifts built on them.

A warp reduces its 32 values with a butterfly of shuffles,

    for (int off = warpSize / 2; off > 0; off >>= 1) v = v OP __shfl_down_sync(0xffffffff, v, off);

after which lane 0 holds ``OP`` over the warp (with ``__shfl_xor_sync`` every lane does).
:func:`warp_tree` recognises such a loop in the portable plan (each shuffle an
:class:`~migrate.ir.loops.Exchange`), :func:`combine_op` its combine, :func:`online_merge` the
rescaled pairs of an online softmax. :mod:`.warp` builds block reductions from the trees,
:mod:`.warp_rows` reductions per warp.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

from ...ir import model as m
from ...ir.exprs import WARP_SIZE, const_value, is_ref, pure, strip_casts
from ...ir.loops import Exchange, Phase, UniformIf, UniformLoop
from ...ir.span import Span
from ...ir.visit import Transformer
from ..facts.divergence import thread_dependent_names
from ..facts.locals import single_assignment_locals
from .base import NotLiftable, combine_call

WARP = WARP_SIZE


FULL_MASK = 0xFFFFFFFF


@dataclass(frozen=True)
class WarpTree:
    var: str  # the value the tree reduces in place
    op: str  # sum, max, min
    everywhere: bool  # xor butterfly: every lane holds the result (else lane 0 only)
    temps: tuple[str, ...]  # the shuffles' targets and the offset variable
    span: Span
    pair: Optional[str] = None  # an online softmax: the denominator merged with the maximum ``var``
    exp: str = ""  # the exp function of its rescaling


class Roles:
    """How a kernel's locals relate to the thread index: ``threadIdx.x``, the lane within the
    warp (``threadIdx.x % warpSize``, ``& 31``) and the warp (``/ warpSize``, ``>> 5``)."""

    def __init__(self, fn: m.Function, lanes: set[str], combines: Optional[dict] = None) -> None:
        self.single = single_assignment_locals(fn.body) if fn.body is not None else {}
        self.threads = set(lanes)
        self.dependent = thread_dependent_names(fn)
        #: device functions that combine their two parameters (:func:`combine_functions`)
        self.combines = combines or {}

    def _expand(self, e):
        e = strip_casts(e)
        seen = 0
        while isinstance(e, m.Ref) and e.kind == "local" and e.name in self.single and seen < 8:
            e = strip_casts(self.single[e.name])
            seen += 1
        return e

    def is_thread(self, e) -> bool:
        e = self._expand(e)
        return (isinstance(e, m.Builtin) and e.var == "threadIdx" and e.dim == "x") or \
            (isinstance(e, m.Ref) and e.name in self.threads)

    def is_lane(self, e) -> bool:
        e = self._expand(e)
        return isinstance(e, m.Binary) and self.is_thread(e.lhs) and (
            (e.op == "%" and const_value(e.rhs, self.single) == WARP) or
            (e.op == "&" and const_value(e.rhs, self.single) == WARP - 1))

    def is_warp(self, e) -> bool:
        e = self._expand(e)
        return isinstance(e, m.Binary) and self.is_thread(e.lhs) and (
            (e.op == "/" and const_value(e.rhs, self.single) == WARP) or
            (e.op == ">>" and const_value(e.rhs, self.single) == 5))

    def is_leader(self, cond, first_warp: bool = False) -> bool:
        """``lane == 0`` (in warp 0 also ``threadIdx.x == 0``)."""
        c = strip_casts(cond)
        if not (isinstance(c, m.Binary) and c.op == "=="):
            return False
        for side, other in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
            if const_value(other) == 0 and (self.is_lane(side) or (first_warp and self.is_thread(side))):
                return True
        return False

    def is_first_warp(self, cond) -> bool:
        """``warp == 0`` or ``threadIdx.x < warpSize``."""
        c = strip_casts(cond)
        if not isinstance(c, m.Binary):
            return False
        if c.op == "==":
            return any(const_value(o) == 0 and self.is_warp(s) for s, o in ((c.lhs, c.rhs), (c.rhs, c.lhs)))
        return c.op == "<" and self.is_thread(c.lhs) and const_value(c.rhs, self.single) == WARP

    def counts_warps(self, e) -> bool:
        """``e`` is the number of warps of the block for every block of whole warps (checked
        for each of the 32 possible sizes)."""
        return all(const_value(e, self.single, b) == b // WARP for b in range(WARP, 1025, WARP))

    def mentions_thread(self, node) -> bool:
        return any((isinstance(n, m.Builtin) and n.var == "threadIdx") or
                   (isinstance(n, m.Ref) and n.kind == "local" and (n.name in self.dependent or n.name in self.threads))
                   for n in m.walk(node))


def combine_functions(functions) -> dict[str, str]:
    """Device function name -> the reduction it is, for the functions of two parameters whose
    body returns their sum, ``fmaxf`` or ``fminf`` (``template <typename T> T add(T a, T b) {
    return a + b; }``): a call of one combines like its body."""
    out = {}
    for f in functions:
        body = f.body.stmts if f.body is not None else ()
        if len(f.params) != 2 or len(body) != 1 or not isinstance(body[0], m.Return) or body[0].value is None:
            continue
        a, b = (p.name for p in f.params)
        if a == b or any(isinstance(n, m.Assign) or isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--")
                         for n in m.walk(body[0])):
            continue
        v = strip_casts(body[0].value)
        args = (v.lhs, v.rhs) if isinstance(v, m.Binary) and v.op == "+" else \
            tuple(v.args) if isinstance(v, m.Call) and combine_call(v.callee) and len(v.args) == 2 else None
        if args is None or not {strip_casts(x).name if isinstance(strip_casts(x), m.Ref) else None
                                for x in args} == {a, b} or \
                any(strip_casts(x).kind != "param" for x in args if isinstance(strip_casts(x), m.Ref)):
            continue
        out[f.name] = "sum" if isinstance(v, m.Binary) else combine_call(v.callee)
    return out


def combine_op(stmt, v: str, t: str, functions: Optional[dict] = None) -> Optional[str]:
    """The reduction ``stmt`` performs when it combines ``v`` with its partner ``t`` in place:
    ``v += t``, ``v = v + t``, ``v = fmaxf(v, t)``, ``v = (t > v) ? t : v``, ... (either order);
    ``functions``: device functions that combine their parameters (:func:`combine_functions`)."""
    if not (isinstance(stmt, m.ExprStmt) and isinstance(stmt.expr, m.Assign) and is_ref(stmt.expr.target, v)):
        return None
    a = stmt.expr
    val = strip_casts(a.value)

    def pair(x, y):
        return (is_ref(x, v) and is_ref(y, t)) or (is_ref(x, t) and is_ref(y, v))

    if a.op == "+=":
        return "sum" if is_ref(val, t) else None
    if a.op != "=":
        return None
    if isinstance(val, m.Binary) and val.op == "+" and pair(val.lhs, val.rhs):
        return "sum"
    if isinstance(val, m.Call) and combine_call(val.callee) and len(val.args) == 2 \
            and pair(*val.args):
        return combine_call(val.callee)
    if isinstance(val, m.Call) and val.kind == "device" and not val.dispatch and len(val.args) == 2 \
            and (functions or {}).get(val.callee) and pair(*val.args):
        return functions[val.callee]
    if isinstance(val, m.Ternary):
        c = strip_casts(val.cond)
        if isinstance(c, m.Binary) and c.op in (">", ">=", "<", "<=") and pair(c.lhs, c.rhs):
            x, y = strip_casts(c.lhs), strip_casts(c.rhs)
            picks_first = is_ref(val.then, x.name) and is_ref(val.other, y.name)
            picks_second = is_ref(val.then, y.name) and is_ref(val.other, x.name)
            greater = c.op in (">", ">=")
            if picks_first:
                return "max" if greater else "min"
            if picks_second:
                return "min" if greater else "max"
    return None


def warp_tree(loop: UniformLoop, roles: Roles) -> Optional[WarpTree]:
    """The tree ``loop`` is, None when it shuffles nothing; NotLiftable with the reason when it
    shuffles but is not a tree this lift can prove."""
    body = [r for r in loop.body if not (isinstance(r, Phase) and all(
        isinstance(s, m.DeclStmt) and all(d.init is None for d in s.decls) for s in r.stmts))]
    exchanges = [r for r in body if isinstance(r, Exchange)]
    if not exchanges:
        return None
    line = loop.span.line
    n = len(exchanges)
    if n > 2 or len(body) != n + 1 or not all(isinstance(r, Exchange) for r in body[:n]) \
            or not isinstance(body[n], Phase):
        raise NotLiftable(f"the warp loop at line {line} is not its shuffles and one combine per step")
    off = _offsets(loop, roles)
    if off is None:
        raise NotLiftable(f"the offsets of the warp loop at line {line} do not halve from warpSize / 2 to 1")
    pairs = [_shuffled(x, off, line, roles) for x in exchanges]
    if len({x.op for x in exchanges}) != 1:
        raise NotLiftable(f"the warp loop at line {line} mixes shuffles")
    everywhere = exchanges[0].op == "shfl_xor"
    temps = tuple(t for _, t in pairs) + (off,)
    combine = body[n].stmts
    if n == 1:
        (v, t), = pairs
        op = combine_op(combine[0], v, t, roles.combines) if len(combine) == 1 else None
        if op is None:
            raise NotLiftable(f"the combine at line {combine[0].span.line} is not a sum, max or min "
                              "of the value and its partner")
        return WarpTree(v, op, everywhere, temps, loop.span)
    merged = online_merge(combine, pairs)
    if merged is None:
        raise NotLiftable(f"the combine at line {combine[0].span.line} of two shuffled values is not an "
                          "online-softmax merge (max, and the sum rescaled by exp of the differences)")
    (m_, d_), exp = merged
    return WarpTree(m_, "max", everywhere, temps + _merge_temps(combine), loop.span, d_, exp)


def _shuffled(x: Exchange, off: str, line: int, roles: Roles) -> tuple[str, str]:
    """(value, partner) of a proven tree shuffle."""
    if x.op not in ("shfl_down", "shfl_xor"):
        raise NotLiftable(f"the warp loop at line {line} uses {x.op}, not a shfl_down or shfl_xor tree")
    mask = const_value(x.mask, roles.single) if x.mask is not None else None
    if mask is None or mask & FULL_MASK != FULL_MASK:
        raise NotLiftable(f"the shuffle at line {x.span.line} does not take the full mask (0xffffffff)")
    if x.width is not None and const_value(x.width, roles.single) != WARP:
        raise NotLiftable(f"the shuffle at line {x.span.line} works on segments narrower than a warp")
    if not is_ref(x.lane, off):
        raise NotLiftable(f"the shuffle at line {x.span.line} does not take the loop's offset")
    v = strip_casts(x.value)
    if not (isinstance(v, m.Ref) and v.kind == "local") or not isinstance(strip_casts(x.target), m.Ref):
        raise NotLiftable(f"the shuffle at line {x.span.line} does not exchange a local value")
    return v.name, strip_casts(x.target).name


_EXPS = ("__expf", "expf", "exp", "std::exp")


def online_merge(stmts, pairs) -> Optional[tuple[tuple[str, str], str]]:
    """((m, d), exp) when ``stmts`` merge the running (max, denominator) pairs (m, d) and their
    partners (mo, do) of an online softmax: ``mn = fmaxf(m, mo); d = d * exp(m - mn) + do *
    exp(mo - mn); m = mn`` (copies of the partners allowed, either order of the operands)."""
    alias = {t: t for _, t in pairs}
    rest = []
    for st in _flat(stmts):  # the partners copied into the merge's parameters
        d0 = st.decls[0] if isinstance(st, m.DeclStmt) and len(st.decls) == 1 else None
        if d0 is not None and isinstance(strip_casts(d0.init), m.Ref) and strip_casts(d0.init).name in alias:
            alias[d0.name] = alias[strip_casts(d0.init).name]
        else:
            rest.append(st)
    if len(rest) != 3:
        return None
    first, update, assign = rest
    if not (isinstance(first, m.DeclStmt) and len(first.decls) == 1 and isinstance(strip_casts(first.decls[0].init), m.Call)):
        return None
    mn, call = first.decls[0].name, strip_casts(first.decls[0].init)
    if combine_call(call.callee) != "max" or len(call.args) != 2:
        return None
    args = [strip_casts(a) for a in call.args]
    if not all(isinstance(a, m.Ref) for a in args):
        return None
    for (mv, mo), (dv, do) in (pairs, pairs[::-1]):
        mos = {a for a, t in alias.items() if t == mo}
        dos = {a for a, t in alias.items() if t == do}
        if sorted([args[0].name in mos, args[1].name in mos]) != [False, True] or mv not in (args[0].name, args[1].name):
            continue
        if not (isinstance(assign, m.ExprStmt) and isinstance(assign.expr, m.Assign) and assign.expr.op == "="
                and is_ref(assign.expr.target, mv) and is_ref(assign.expr.value, mn)):
            continue
        exp = _rescaled_sum(update, dv, mv, dos, mos, mn)
        if exp is not None:
            return (mv, dv), exp
    return None


def _rescaled_sum(st, d: str, mv: str, dos: set, mos: set, mn: str) -> Optional[str]:
    """The exp function when ``st`` is ``d = d * exp(m - mn) + do * exp(mo - mn)``."""
    if not (isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "="
            and is_ref(st.expr.target, d)):
        return None
    v = strip_casts(st.expr.value)
    if not (isinstance(v, m.Binary) and v.op == "+"):
        return None

    def term(e, value: set, shift: set):
        e = strip_casts(e)
        if not (isinstance(e, m.Binary) and e.op == "*"):
            return None
        for a, b in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            a, b = strip_casts(a), strip_casts(b)
            if isinstance(a, m.Ref) and a.name in value and isinstance(b, m.Call) and b.callee in _EXPS \
                    and len(b.args) == 1:
                x = strip_casts(b.args[0])
                if isinstance(x, m.Binary) and x.op == "-" and isinstance(strip_casts(x.lhs), m.Ref) \
                        and strip_casts(x.lhs).name in shift and is_ref(x.rhs, mn):
                    return b.callee
        return None

    for own, other in ((v.lhs, v.rhs), (v.rhs, v.lhs)):
        e1, e2 = term(own, {d}, {mv}), term(other, dos, mos)
        if e1 is not None and e1 == e2:
            return e1
    return None


def _merge_temps(stmts) -> tuple[str, ...]:
    return tuple(d.name for st in _flat(stmts) if isinstance(st, m.DeclStmt) for d in st.decls)


def _flat(stmts) -> list:
    """Statements with nested blocks (an inlined function's body) spliced in."""
    out = []
    for st in stmts:
        out.extend(_flat(st.stmts) if isinstance(st, m.Block) else (st,))
    return out


def _offsets(loop: UniformLoop, roles: Roles) -> Optional[str]:
    """The offset variable when ``loop`` is ``for (off = warpSize / 2; off > 0; off >>= 1)``
    (or ``off /= 2``, ``off >= 1``)."""
    if loop.kind != "for" or not isinstance(loop.init, m.DeclStmt) or len(loop.init.decls) != 1:
        return None
    d = loop.init.decls[0]
    if d.init is None or const_value(d.init, roles.single) != WARP // 2:
        return None
    c = strip_casts(loop.cond) if loop.cond is not None else None
    if not (isinstance(c, m.Binary) and is_ref(c.lhs, d.name) and
            ((c.op == ">" and const_value(c.rhs) == 0) or (c.op == ">=" and const_value(c.rhs) == 1))):
        return None
    st = loop.step
    if not (isinstance(st, m.Assign) and is_ref(st.target, d.name)):
        return None
    if (st.op, const_value(st.value)) in ((">>=", 1), ("/=", 2)):
        return d.name
    v = strip_casts(st.value)
    if st.op == "=" and isinstance(v, m.Binary) and is_ref(v.lhs, d.name) and \
            (v.op, const_value(v.rhs)) in ((">>", 1), ("/", 2)):
        return d.name
    return None


class Subst(Transformer):
    """Names → expressions; with ``zero`` the thread index and its roles become 0 (thread 0)."""

    def __init__(self, table: dict, roles: Roles | None = None) -> None:
        self.table, self.roles = table, roles

    def leave_Ref(self, node: m.Ref):
        if node.kind in ("local", "shared") and node.name in self.table:
            return self.table[node.name]
        if self.roles is not None and node.kind == "local" and (
                node.name in self.roles.threads or self.roles.is_lane(node) or self.roles.is_warp(node)):
            return m.IntLit(0, "0", node.type, node.span)
        return node

    def leave_Builtin(self, node: m.Builtin):
        if self.roles is not None and node.var == "threadIdx":
            return m.IntLit(0, "0", node.type, node.span)
        return node


def copies(stmts, held: list[str]) -> int:
    """How many leading statements only copy a held value (``r = v``; ``T r = v``; or declare a
    local without a value); the copies' targets join ``held``."""
    n = 0
    for s in stmts:
        if isinstance(s, m.DeclStmt) and len(s.decls) == 1:
            d = s.decls[0]
            if d.init is None:
                n += 1
                continue
            if isinstance(strip_casts(d.init), m.Ref) and strip_casts(d.init).name in held:
                held.append(d.name)
                n += 1
                continue
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
                and isinstance(s.expr.target, m.Ref) and isinstance(strip_casts(s.expr.value), m.Ref) \
                and strip_casts(s.expr.value).name in held:
            held.append(s.expr.target.name)
            n += 1
            continue
        break
    return n


def then_stmts(stmt) -> tuple:
    """The statements of an ``if``'s then branch."""
    return stmt.then.stmts if isinstance(stmt.then, m.Block) else (stmt.then,)


@dataclass
class WarpLift:
    """What lifting the warp trees consumed: shared arrays, names that must not be read again."""

    roles: Roles
    shared_types: dict
    shared: set = dataclasses.field(default_factory=set)
    consumed: set = dataclasses.field(default_factory=set)
    found: list = dataclasses.field(default_factory=list)
    #: names read by the regions after the ones being lifted (of the enclosing levels)
    later: frozenset = frozenset()


def type_of(before: Phase, after: Phase, name: str) -> m.CType:
    for s in before.stmts + after.stmts:
        for n in m.walk(s):
            if isinstance(n, m.VarDecl) and n.name == name:
                return n.type
            if isinstance(n, m.Ref) and n.name == name:
                return n.type
    raise NotLiftable(f"the type of '{name}' is unknown")


def walk_region(r):
    if isinstance(r, Phase):
        for s in r.stmts:
            yield from m.walk(s)
    elif isinstance(r, UniformIf):
        yield from m.walk(r.cond)
        for x in r.then + r.other:
            yield from walk_region(x)
    elif isinstance(r, UniformLoop):
        for e in (r.init, r.cond, r.step):
            if e is not None:
                yield from m.walk(e)
        for x in r.body:
            yield from walk_region(x)
    elif isinstance(r, Exchange):
        for e in (r.value, r.lane, r.width, r.target):
            if e is not None:
                yield from m.walk(e)


def map_region(r, t: Transformer):
    if isinstance(r, Phase):
        return dataclasses.replace(r, stmts=t.transform(r.stmts))
    if isinstance(r, UniformIf):
        return dataclasses.replace(r, cond=t.transform(r.cond), then=tuple(map_region(x, t) for x in r.then),
                                   other=tuple(map_region(x, t) for x in r.other))
    if isinstance(r, UniformLoop):
        return dataclasses.replace(r, init=t.transform(r.init), cond=t.transform(r.cond), step=t.transform(r.step),
                                   body=tuple(map_region(x, t) for x in r.body))
    if isinstance(r, Exchange):
        return dataclasses.replace(r, value=t.transform(r.value), target=t.transform(r.target))
    return r


def is_flag(phase: Phase, branch) -> bool:
    """``phase`` only stores the condition of the predicated ``branch`` that follows it."""
    return isinstance(branch, UniformIf) and branch.predicate is not None and len(phase.stmts) == 1 \
        and isinstance(phase.stmts[0], m.DeclStmt) and [d.name for d in phase.stmts[0].decls] == [branch.predicate]


def prune_lane_code(stmts: tuple, value: m.Expr, fold: bool = True, keep=frozenset()) -> tuple[tuple, m.Expr]:
    """``stmts`` (a lane's code before a reduction, contributing ``value``) without the locals the
    trees left unused (the lane and warp numbers, the device functions' result slots), and the
    value read from the local it was last copied from (``T v = sum;`` → ``sum``); locals named
    in ``keep`` (read after the reduction: ``float variance = 0`` declared before the first of
    two) stay."""
    stmts = list(stmts)
    changed = True
    while changed:
        changed = False
        if fold and stmts and isinstance(value, m.Ref) and value.name not in keep \
                and isinstance(stmts[-1], m.DeclStmt) and len(stmts[-1].decls) == 1 \
                and stmts[-1].decls[0].name == value.name and isinstance(strip_casts(stmts[-1].decls[0].init), m.Ref):
            value = stmts.pop().decls[0].init
            changed = True
        elif fold and stmts and isinstance(value, m.Ref) and value.name not in keep \
                and isinstance(stmts[-1], m.ExprStmt) \
                and isinstance(stmts[-1].expr, m.Assign) and stmts[-1].expr.op == "=" \
                and is_ref(stmts[-1].expr.target, value.name) and isinstance(strip_casts(stmts[-1].expr.value), m.Ref) \
                and not any(isinstance(n, m.Ref) and n.name == value.name for st in stmts[:-1] for n in m.walk(st)):
            value = stmts.pop().expr.value  # ``v = x;`` last, v read nowhere else
            changed = True
        for k, st in enumerate(stmts):
            if not (isinstance(st, m.DeclStmt) and len(st.decls) == 1 and
                    (st.decls[0].init is None or pure(st.decls[0].init, math=False))):
                continue
            name = st.decls[0].name
            if name in keep:
                continue
            rest = stmts[:k] + stmts[k + 1:] + [m.ExprStmt(value, value.span)]
            if not any(isinstance(n, (m.Ref, m.VarDecl)) and n.name == name for r in rest for n in m.walk(r)):
                del stmts[k]
                changed = True
                break
    return tuple(stmts), value


def recomputable(st) -> bool:
    return isinstance(st, m.DeclStmt) and all(d.init is not None and pure(d.init, math=False) for d in st.decls)


def assigned(stmts, name) -> bool:
    return any(isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name == name
               for st in stmts for n in m.walk(st))
