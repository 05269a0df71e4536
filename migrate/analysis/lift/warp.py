"""Lift warp-shuffle trees to block reductions (tile form).

A warp reduces its 32 values with a butterfly of shuffles,

    for (int off = warpSize / 2; off > 0; off >>= 1) v = v OP __shfl_down_sync(0xffffffff, v, off);

after which lane 0 holds ``OP`` over the warp (with ``__shfl_xor_sync`` every lane does). Block
reductions are built from such trees in two ways, both recognised here in the portable plan
(where each shuffle is an :class:`~.loop_ir.Exchange` inside a uniform loop):

- *one atomic per warp*: ``if (lane == 0) atomicOP(out, v)`` after the tree, the atomic's
  operation the tree's: the warps' atomics combine to one atomic of the block's total;
- *two levels*: ``if (lane == 0) S[warp] = v; __syncthreads(); if (warp == 0) { v = lane <
  nwarps ? S[lane] : identity; <tree>; if (lane == 0) <final> }``: thread 0 ends with the block's
  total. A final ``s = v`` into a ``__shared__`` scalar that every thread reads after a barrier
  broadcasts the total.

Either becomes a :class:`~.loop_ir.BlockReduce` (``warps=True``): every lane (one per CUDA
thread) runs the code before the first tree and contributes its value, ``T.reduce_<op>``
combines, and the final statements run once with the total. What the proof requires: a full
mask, offsets halving from ``warpSize / 2`` to 1, a combine that is sum, max or min of the value
and its partner, lane 0 (of warp 0) reading the result, the second level padded with the
operation's identity. Anything else that shuffles is refused with the reason
(:class:`~.lift_map.NotLiftable`). The launch must use whole warps (the factory asserts it).
A tree whose total each warp uses on its own is a reduction per warp (:mod:`.lift_warp_rows`).
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Optional

from ...ir import model as m
from ...ir.span import Span
from ..facts.divergence import thread_dependent_names
from .forward_shared import single_assignment_locals
from .map import NotLiftable, _strip_casts as _strip
from ...ir.loops import Barrier, BlockReduce, Exchange, Phase, UniformIf, UniformLoop
from ..prepare.rewrite import Transformer

WARP = 32
FULL_MASK = 0xFFFFFFFF

#: Combining calls → the reduction they perform.
_COMBINE_CALLS = {"fmaxf": "max", "fmax": "max", "max": "max", "fminf": "min", "fmin": "min", "min": "min"}
#: The atomic that adds a partial result into a global accumulator, per reduction.
_ATOMIC_OF = {"sum": "atomicAdd", "max": "atomicMax", "min": "atomicMin"}


@dataclass(frozen=True)
class WarpTree:
    var: str  # the value the tree reduces in place
    op: str  # sum, max, min
    everywhere: bool  # xor butterfly: every lane holds the result (else lane 0 only)
    temps: tuple[str, ...]  # the shuffles' targets and the offset variable
    span: Span
    pair: Optional[str] = None  # an online softmax: the denominator merged with the maximum ``var``
    exp: str = ""  # the exp function of its rescaling


# -- constants and thread-index roles ------------------------------------------------------------

def const_value(e, names: dict | None = None, block: int | None = None):
    """The value of a constant expression (``warpSize`` is 32, ``blockDim.x`` is ``block`` when
    given, locals in ``names`` are expanded), or None."""
    e = _strip(e)
    if isinstance(e, (m.IntLit, m.FloatLit)):
        return e.value
    if isinstance(e, m.Builtin):
        if e.var == "warpSize":
            return WARP
        if e.var == "blockDim" and e.dim == "x":
            return block
        return None
    if isinstance(e, m.Ref) and names is not None and e.kind == "local" and e.name in names:
        return const_value(names[e.name], names, block)
    if isinstance(e, m.Call) and e.callee in ("__builtin_inff", "__builtin_huge_valf", "__builtin_inf",
                                              "__builtin_huge_val") and not e.args:
        return math.inf
    if isinstance(e, m.Unary) and e.op in ("-", "+", "~"):
        v = const_value(e.operand, names, block)
        if v is None:
            return None
        return -v if e.op == "-" else (v if e.op == "+" else (~v if isinstance(v, int) else None))
    if isinstance(e, m.Binary):
        a, b = const_value(e.lhs, names, block), const_value(e.rhs, names, block)
        if a is None or b is None:
            return None
        if e.op in ("+", "-", "*"):
            return a + b if e.op == "+" else (a - b if e.op == "-" else a * b)
        if not (isinstance(a, int) and isinstance(b, int)):
            return a / b if e.op == "/" and b else None
        if e.op == "/" and b:
            return int(a / b)  # C truncation
        if e.op == "%" and b:
            return a - b * int(a / b)
        ops = {">>": lambda: a >> b, "<<": lambda: a << b, "&": lambda: a & b, "|": lambda: a | b,
               "^": lambda: a ^ b}
        return ops[e.op]() if e.op in ops and b >= 0 else None
    return None


class Roles:
    """How a kernel's locals relate to the thread index: ``threadIdx.x``, the lane within the
    warp (``threadIdx.x % warpSize``, ``& 31``) and the warp (``/ warpSize``, ``>> 5``)."""

    def __init__(self, fn: m.Function, lanes: set[str]) -> None:
        self.single = single_assignment_locals(fn.body) if fn.body is not None else {}
        self.threads = set(lanes)
        self.dependent = thread_dependent_names(fn)

    def _expand(self, e):
        e = _strip(e)
        seen = 0
        while isinstance(e, m.Ref) and e.kind == "local" and e.name in self.single and seen < 8:
            e = _strip(self.single[e.name])
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
        c = _strip(cond)
        if not (isinstance(c, m.Binary) and c.op == "=="):
            return False
        for side, other in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
            if const_value(other) == 0 and (self.is_lane(side) or (first_warp and self.is_thread(side))):
                return True
        return False

    def is_first_warp(self, cond) -> bool:
        """``warp == 0`` or ``threadIdx.x < warpSize``."""
        c = _strip(cond)
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


# -- the tree ------------------------------------------------------------------------------------

def _is_ref(e, name: str) -> bool:
    e = _strip(e)
    return isinstance(e, m.Ref) and e.name == name


def combine_op(stmt, v: str, t: str) -> Optional[str]:
    """The reduction ``stmt`` performs when it combines ``v`` with its partner ``t`` in place:
    ``v += t``, ``v = v + t``, ``v = fmaxf(v, t)``, ``v = (t > v) ? t : v``, ... (either order)."""
    if not (isinstance(stmt, m.ExprStmt) and isinstance(stmt.expr, m.Assign) and _is_ref(stmt.expr.target, v)):
        return None
    a = stmt.expr
    val = _strip(a.value)

    def pair(x, y):
        return (_is_ref(x, v) and _is_ref(y, t)) or (_is_ref(x, t) and _is_ref(y, v))

    if a.op == "+=":
        return "sum" if _is_ref(val, t) else None
    if a.op != "=":
        return None
    if isinstance(val, m.Binary) and val.op == "+" and pair(val.lhs, val.rhs):
        return "sum"
    if isinstance(val, m.Call) and val.callee.removeprefix("std::") in _COMBINE_CALLS and len(val.args) == 2 \
            and pair(*val.args):
        return _COMBINE_CALLS[val.callee.removeprefix("std::")]
    if isinstance(val, m.Ternary):
        c = _strip(val.cond)
        if isinstance(c, m.Binary) and c.op in (">", ">=", "<", "<=") and pair(c.lhs, c.rhs):
            x, y = _strip(c.lhs), _strip(c.rhs)
            picks_first = _is_ref(val.then, x.name) and _is_ref(val.other, y.name)
            picks_second = _is_ref(val.then, y.name) and _is_ref(val.other, x.name)
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
        op = combine_op(combine[0], v, t) if len(combine) == 1 else None
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
    if not _is_ref(x.lane, off):
        raise NotLiftable(f"the shuffle at line {x.span.line} does not take the loop's offset")
    v = _strip(x.value)
    if not (isinstance(v, m.Ref) and v.kind == "local") or not isinstance(_strip(x.target), m.Ref):
        raise NotLiftable(f"the shuffle at line {x.span.line} does not exchange a local value")
    return v.name, _strip(x.target).name


_EXPS = ("__expf", "expf", "exp", "std::exp")


def online_merge(stmts, pairs) -> Optional[tuple[tuple[str, str], str]]:
    """((m, d), exp) when ``stmts`` merge the running (max, denominator) pairs (m, d) and their
    partners (mo, do) of an online softmax: ``mn = fmaxf(m, mo); d = d * exp(m - mn) + do *
    exp(mo - mn); m = mn`` (copies of the partners allowed, either order of the operands)."""
    alias = {t: t for _, t in pairs}
    rest = []
    for st in _flat(stmts):  # the partners copied into the merge's parameters
        d0 = st.decls[0] if isinstance(st, m.DeclStmt) and len(st.decls) == 1 else None
        if d0 is not None and isinstance(_strip(d0.init), m.Ref) and _strip(d0.init).name in alias:
            alias[d0.name] = alias[_strip(d0.init).name]
        else:
            rest.append(st)
    if len(rest) != 3:
        return None
    first, update, assign = rest
    if not (isinstance(first, m.DeclStmt) and len(first.decls) == 1 and isinstance(_strip(first.decls[0].init), m.Call)):
        return None
    mn, call = first.decls[0].name, _strip(first.decls[0].init)
    if _COMBINE_CALLS.get(call.callee.removeprefix("std::")) != "max" or len(call.args) != 2:
        return None
    args = [_strip(a) for a in call.args]
    if not all(isinstance(a, m.Ref) for a in args):
        return None
    for (mv, mo), (dv, do) in (pairs, pairs[::-1]):
        mos = {a for a, t in alias.items() if t == mo}
        dos = {a for a, t in alias.items() if t == do}
        if sorted([args[0].name in mos, args[1].name in mos]) != [False, True] or mv not in (args[0].name, args[1].name):
            continue
        if not (isinstance(assign, m.ExprStmt) and isinstance(assign.expr, m.Assign) and assign.expr.op == "="
                and _is_ref(assign.expr.target, mv) and _is_ref(assign.expr.value, mn)):
            continue
        exp = _rescaled_sum(update, dv, mv, dos, mos, mn)
        if exp is not None:
            return (mv, dv), exp
    return None


def _rescaled_sum(st, d: str, mv: str, dos: set, mos: set, mn: str) -> Optional[str]:
    """The exp function when ``st`` is ``d = d * exp(m - mn) + do * exp(mo - mn)``."""
    if not (isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "="
            and _is_ref(st.expr.target, d)):
        return None
    v = _strip(st.expr.value)
    if not (isinstance(v, m.Binary) and v.op == "+"):
        return None

    def term(e, value: set, shift: set):
        e = _strip(e)
        if not (isinstance(e, m.Binary) and e.op == "*"):
            return None
        for a, b in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            a, b = _strip(a), _strip(b)
            if isinstance(a, m.Ref) and a.name in value and isinstance(b, m.Call) and b.callee in _EXPS \
                    and len(b.args) == 1:
                x = _strip(b.args[0])
                if isinstance(x, m.Binary) and x.op == "-" and isinstance(_strip(x.lhs), m.Ref) \
                        and _strip(x.lhs).name in shift and _is_ref(x.rhs, mn):
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
    c = _strip(loop.cond) if loop.cond is not None else None
    if not (isinstance(c, m.Binary) and _is_ref(c.lhs, d.name) and
            ((c.op == ">" and const_value(c.rhs) == 0) or (c.op == ">=" and const_value(c.rhs) == 1))):
        return None
    st = loop.step
    if not (isinstance(st, m.Assign) and _is_ref(st.target, d.name)):
        return None
    if (st.op, const_value(st.value)) in ((">>=", 1), ("/=", 2)):
        return d.name
    v = _strip(st.value)
    if st.op == "=" and isinstance(v, m.Binary) and _is_ref(v.lhs, d.name) and \
            (v.op, const_value(v.rhs)) in ((">>", 1), ("/", 2)):
        return d.name
    return None


# -- the block around the trees -----------------------------------------------------------------

class _Subst(Transformer):
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


def _copies(stmts, held: list[str]) -> int:
    """How many leading statements only copy a held value (``r = v``; ``T r = v``; or declare a
    local without a value); the copies' targets join ``held``."""
    n = 0
    for s in stmts:
        if isinstance(s, m.DeclStmt) and len(s.decls) == 1:
            d = s.decls[0]
            if d.init is None:
                n += 1
                continue
            if isinstance(_strip(d.init), m.Ref) and _strip(d.init).name in held:
                held.append(d.name)
                n += 1
                continue
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
                and isinstance(s.expr.target, m.Ref) and isinstance(_strip(s.expr.value), m.Ref) \
                and _strip(s.expr.value).name in held:
            held.append(s.expr.target.name)
            n += 1
            continue
        break
    return n


def _body(stmt) -> tuple:
    return stmt.then.stmts if isinstance(stmt.then, m.Block) else (stmt.then,)


def _identity(op: str, dtype: m.CType, value) -> bool:
    if value is None:
        return False
    if op == "sum":
        return value == 0
    name = dtype.dtype if isinstance(dtype, m.Scalar) else ""
    if name.startswith("float") or name in ("half", "bfloat16"):
        return value == (-math.inf if op == "max" else math.inf)
    if name.startswith("uint"):
        return value == (0 if op == "max" else (1 << int(name[4:])) - 1)
    if name.startswith("int"):
        bits = int(name[3:])
        return value == (-(1 << (bits - 1)) if op == "max" else (1 << (bits - 1)) - 1)
    return False


@dataclass
class WarpLift:
    """What lifting the warp trees consumed: shared arrays, names that must not be read again."""

    roles: Roles
    shared_types: dict
    shared: set = dataclasses.field(default_factory=set)
    consumed: set = dataclasses.field(default_factory=set)
    found: list = dataclasses.field(default_factory=list)


def lift_warp_trees(regions, ctx: WarpLift) -> tuple:
    """``regions`` with every block reduction built from warp trees replaced by a BlockReduce."""
    rs = list(regions)
    out: list = []
    i = 0
    while i < len(rs):
        r = rs[i]
        tree = warp_tree(r, ctx.roles) if isinstance(r, UniformLoop) else None
        if isinstance(r, UniformIf) and r.predicate is not None and len(r.then) == 3 and not r.other \
                and isinstance(r.then[1], UniformLoop) and warp_tree(r.then[1], ctx.roles) is not None:
            from .warp_rows import guarded_segment
            reduce = guarded_segment(out, r, rs[i + 1:], ctx)
            out.append(reduce)
            ctx.found.append(reduce)
            i += 1
            continue
        if tree is None:
            if isinstance(r, UniformIf) and r.predicate is None:
                r = dataclasses.replace(r, then=lift_warp_trees(r.then, ctx), other=lift_warp_trees(r.other, ctx))
            elif isinstance(r, UniformLoop):
                r = dataclasses.replace(r, body=lift_warp_trees(r.body, ctx))
            out.append(r)
            i += 1
            continue
        if not out or not isinstance(out[-1], Phase):
            raise NotLiftable(f"the warp tree at line {tree.span.line} reduces no per-thread value")
        before = out.pop()
        uniform, before = _peel_uniform(before, ctx.roles)
        if uniform is not None:
            out.append(uniform)
        known = set(ctx.consumed)
        reduce, used, rest = _block_reduce(before, tree, rs, i, ctx)
        out.append(reduce)
        ctx.found.append(reduce)
        i += used
        if rest is not None:
            rs.insert(i, rest)
        gone = ctx.consumed - known
        late = [n for r in rs[i:] for n in _walk_region(r) if isinstance(n, m.Ref) and n.name in gone]
        if late:
            raise NotLiftable(f"'{late[0].name}' holds a warp's partial result and is read again at line "
                              f"{late[0].span.line}")
    if not ctx.found:
        return tuple(out)
    split: list = []
    for r in out:  # what follows a reduction and reads its total once, at block level
        if isinstance(r, Phase):
            uniform, r = _peel_uniform(r, ctx.roles)
            split += [x for x in (uniform, r) if x is not None and x.stmts]
        else:
            split.append(r)
    return tuple(split)


def _peel_uniform(phase: Phase, roles: Roles) -> tuple[Optional[Phase], Phase]:
    """The leading statements of ``phase`` that every thread computes alike (no thread index, no
    store, no per-thread variable), split off to run once at block level."""
    n = 0
    for s in phase.stmts:
        assigns = {d.name for d in m.walk(s) if isinstance(d, m.VarDecl)} | {
            a.target.name for a in m.walk(s) if isinstance(a, m.Assign) and isinstance(a.target, m.Ref)}
        if roles.mentions_thread(s) or assigns & roles.dependent or any(
                (isinstance(a, m.Assign) and not isinstance(a.target, m.Ref)) or
                (isinstance(a, m.Call) and a.kind in ("atomic", "warp", "sync")) for a in m.walk(s)):
            break
        n += 1
    if n == 0:
        return None, phase
    return Phase(phase.stmts[:n], phase.index, phase.span), Phase(phase.stmts[n:], phase.index, phase.span)


def _block_reduce(before: Phase, tree: WarpTree, rs: list, i: int, ctx: WarpLift):
    """(BlockReduce, regions consumed from ``rs[i]``, what remains of the last one) for the
    tree at ``rs[i]`` preceded by ``before``."""
    from .warp_rows import segment_reduce  # a reduction per warp (that module builds on this one)
    roles = ctx.roles
    line = tree.span.line
    after = rs[i + 1] if i + 1 < len(rs) else None
    if not isinstance(after, Phase):
        raise NotLiftable(f"nothing reads the warp tree's result at line {line}")
    held = [tree.var]
    k = _copies(after.stmts, held)
    stmts = after.stmts[k:]
    ctx.consumed |= set(held) | set(tree.temps)
    lead = stmts[0] if stmts else None
    if tree.pair is not None or not (isinstance(lead, m.If) and lead.other is None and roles.is_leader(lead.cond)):
        if i + 2 != len(rs):
            raise NotLiftable(f"code follows the reduction per warp at line {line}")
        return segment_reduce((), None, before, tree, after, k, held, ctx), 2, None
    body = _body(lead)
    rest = stmts[1:]
    store = _warp_store(body, held, roles, ctx)
    if store is not None:
        if rest:
            raise NotLiftable(f"statements follow the warp totals' store at line {lead.span.line}")
        return _second_level(before, tree, store, rs, i + 2, ctx)
    if not all(isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Call) and s.expr.kind == "atomic"
               and s.expr.callee == _ATOMIC_OF[tree.op] for s in body):
        # lane 0 of each warp does its warp's work: a reduction per warp
        if i + 2 != len(rs):
            raise NotLiftable(f"code follows the reduction per warp at line {line}")
        return segment_reduce((), None, before, tree, after, k, held, ctx), 2, None
    # one atomic per warp: the warps' atomics are one atomic of the block's total
    final = []
    total_name = held[-1]
    for s in body:
        call = s.expr
        if len(call.args) != 2 or not (isinstance(_strip(call.args[1]), m.Ref) and _strip(call.args[1]).name in held):
            raise NotLiftable(f"the atomic at line {s.span.line} does not add the warp's total")
        if roles.mentions_thread(call.args[0]):
            raise NotLiftable(f"the atomic at line {s.span.line} targets a different place per thread")
        final.append(s)
    dtype = _type_of(before, after, tree.var)
    result = m.Ref(f"{total_name}_total", "reduce_result", dtype, lead.span)
    after_stmts = _Subst({n: result for n in held}).transform(tuple(final))
    lane_code, value = prune_lane_code(before.stmts, m.Ref(tree.var, "local", dtype, tree.span))
    reduce = BlockReduce(lane_code, value, tree.op, total_name, dtype, after_stmts, None, before.span, "",
                         warps=True)
    remaining = Phase(tuple(rest), after.index, after.span) if rest else None
    return reduce, 2, remaining


def _type_of(before: Phase, after: Phase, name: str) -> m.CType:
    for s in before.stmts + after.stmts:
        for n in m.walk(s):
            if isinstance(n, m.VarDecl) and n.name == name:
                return n.type
            if isinstance(n, m.Ref) and n.name == name:
                return n.type
    raise NotLiftable(f"the type of '{name}' is unknown")


def _warp_store(body, held, roles: Roles, ctx: WarpLift):
    """``S[warp] = v`` (S a __shared__ array): the name S, else None."""
    if len(body) != 1 or not isinstance(body[0], m.ExprStmt) or not isinstance(body[0].expr, m.Assign):
        return None
    a = body[0].expr
    if a.op != "=" or not isinstance(a.target, m.Index) or not roles.is_warp(a.target.index):
        return None
    base = _strip(a.target.base)
    if not (isinstance(base, m.Ref) and base.name in ctx.shared_types):
        return None
    if not (isinstance(_strip(a.value), m.Ref) and _strip(a.value).name in held):
        raise NotLiftable(f"lane 0 stores something other than the warp's total at line {a.span.line}")
    return base.name


def _second_level(before: Phase, tree: WarpTree, shared: str, rs: list, j: int, ctx: WarpLift):
    """After ``S[warp] = v`` and a barrier: warp 0 reduces S with a second tree."""
    roles = ctx.roles
    if j >= len(rs) or not isinstance(rs[j], Barrier):
        raise NotLiftable(f"no barrier after the warp totals are stored in '{shared}'")
    k = j + 1
    uniform = []  # values every thread computes alike after the barrier (the number of warps)
    while k < len(rs) and isinstance(rs[k], Phase) and not _is_flag(rs[k], rs[k + 1] if k + 1 < len(rs) else None):
        stores = [n for s in rs[k].stmts for n in m.walk(s) if (isinstance(n, m.Assign) and not isinstance(
            n.target, m.Ref)) or (isinstance(n, m.Call) and n.kind in ("atomic", "warp", "sync"))]
        if roles.mentions_thread(rs[k]) or stores:
            raise NotLiftable(f"threads do more than reduce the warp totals in '{shared}' (line {rs[k].span.line})")
        uniform += rs[k].stmts
        k += 1
    if k < len(rs) and isinstance(rs[k], Phase):
        k += 1  # the stored condition of the branch
    branch = rs[k] if k < len(rs) else None
    if not (isinstance(branch, UniformIf) and not branch.other and roles.is_first_warp(branch.cond)):
        raise NotLiftable(f"the warp totals in '{shared}' are not reduced by warp 0 after the barrier")
    if branch.predicate:
        ctx.consumed.add(branch.predicate)
    inner = list(branch.then)
    if len(inner) != 3 or not isinstance(inner[0], Phase) or not isinstance(inner[1], UniformLoop) \
            or not isinstance(inner[2], Phase):
        raise NotLiftable(f"warp 0 does more than one warp tree over '{shared}' (line {branch.span.line})")
    second = warp_tree(inner[1], roles)
    if second is None:
        raise NotLiftable(f"warp 0 does not reduce '{shared}' with a warp tree (line {branch.span.line})")
    if second.op != tree.op or second.pair is not None:
        raise NotLiftable(f"the two levels combine differently ({tree.op}, then {second.op})")
    # v = lane < nwarps ? S[lane] : identity
    held: list[str] = []
    load = None
    for s in inner[0].stmts:
        if load is None:
            load = _warp_load(s, shared, roles, tree.op, ctx)
            if load is not None:
                held.append(load)
                continue
            if isinstance(s, m.DeclStmt) and all(d.init is None for d in s.decls):
                continue
            if _recomputable(s) and not roles.mentions_thread(s):
                continue  # the number of warps, say (read through the locals table)
            raise NotLiftable(f"warp 0 computes something other than loading the warp totals (line {s.span.line})")
        if _copies((s,), held) != 1:
            raise NotLiftable(f"warp 0 computes something other than loading the warp totals (line {s.span.line})")
    if second.var not in held:
        raise NotLiftable(f"the second warp tree (line {second.span.line}) does not reduce the warp totals")
    held2 = [second.var]
    last = inner[2]
    n = _copies(last.stmts, held2)
    tail = last.stmts[n:]
    if len(tail) != 1 or not isinstance(tail[0], m.If) or tail[0].other is not None \
            or not roles.is_leader(tail[0].cond, first_warp=True):
        raise NotLiftable(f"the block's total is not read by thread 0 after line {second.span.line}")
    ctx.consumed |= set(held) | set(held2) | set(second.temps)
    ctx.shared.add(shared)
    dtype = ctx.shared_types[shared]
    result = m.Ref(f"{shared}_total", "reduce_result", dtype, tail[0].span)
    final = uniform + list(_Subst({n: result for n in held2}, roles).transform(_body(tail[0])))
    used = k + 1 - (j - 2)
    # a total written to a __shared__ scalar that every thread reads after a barrier: broadcast
    broadcast = {}
    for s in list(final):
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
                and isinstance(s.expr.target, m.Ref) and s.expr.target.name in ctx.shared_types \
                and not isinstance(s.expr.target.type, m.Array) and s.expr.value is result:
            broadcast[s.expr.target.name] = result
            final.remove(s)
    if broadcast:
        if k + 1 >= len(rs) or not isinstance(rs[k + 1], Barrier):
            raise NotLiftable(f"the block's total in '{sorted(broadcast)[0]}' is read without a barrier")
        used += 1
        ctx.shared |= set(broadcast)
        writes = [n for r in rs[k + 2:] for n in _walk_region(r)
                  if isinstance(n, m.Assign) and isinstance(_strip(n.target), m.Ref)
                  and _strip(n.target).name in broadcast]
        if writes:
            raise NotLiftable(f"'{sorted(broadcast)[0]}' is written again at line {writes[0].span.line}")
        subst = _Subst(broadcast)
        rs[k + 2:] = [_map_region(r, subst) for r in rs[k + 2:]]
    lane_code, value = prune_lane_code(before.stmts, m.Ref(tree.var, "local", _type_of(before, before, tree.var),
                                                           tree.span))
    final, _ = prune_lane_code(tuple(final), m.IntLit(0, "0", m.Scalar("int32"), tree.span), fold=False)
    reduce = BlockReduce(lane_code, value, tree.op, shared, dtype, final, None, before.span, "", warps=True)
    return reduce, used, None


def _warp_load(s, shared: str, roles: Roles, op: str, ctx: WarpLift) -> Optional[str]:
    """The local ``s`` loads warp 0's lane's warp total into: ``v = lane < nwarps ? S[lane] : id``."""
    if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and s.decls[0].init is not None:
        name, value = s.decls[0].name, s.decls[0].init
    elif isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
            and isinstance(s.expr.target, m.Ref):
        name, value = s.expr.target.name, s.expr.value
    else:
        return None
    v = _strip(value)
    if not isinstance(v, m.Ternary):
        return None
    c, then = _strip(v.cond), _strip(v.then)
    if not (isinstance(then, m.Index) and _is_ref(then.base, shared)):
        return None
    if not (roles.is_lane(then.index) or roles.is_thread(then.index)):
        raise NotLiftable(f"warp 0 reads '{shared}' at another index than its lane (line {s.span.line})")
    if not (isinstance(c, m.Binary) and c.op == "<" and (roles.is_lane(c.lhs) or roles.is_thread(c.lhs))
            and roles.counts_warps(c.rhs)):
        raise NotLiftable(f"warp 0 does not read exactly one total per warp from '{shared}' (line {s.span.line})")
    pad = const_value(v.other, roles.single)
    if not _identity(op, ctx.shared_types[shared], pad):
        raise NotLiftable(f"the lanes past the last warp contribute {pad if pad is not None else 'a value'}, "
                          f"not the identity of {op} (line {s.span.line})")
    return name


def _walk_region(r):
    if isinstance(r, Phase):
        for s in r.stmts:
            yield from m.walk(s)
    elif isinstance(r, UniformIf):
        yield from m.walk(r.cond)
        for x in r.then + r.other:
            yield from _walk_region(x)
    elif isinstance(r, UniformLoop):
        for e in (r.init, r.cond, r.step):
            if e is not None:
                yield from m.walk(e)
        for x in r.body:
            yield from _walk_region(x)
    elif isinstance(r, Exchange):
        for e in (r.value, r.lane, r.width, r.target):
            if e is not None:
                yield from m.walk(e)


def _map_region(r, t: Transformer):
    if isinstance(r, Phase):
        return dataclasses.replace(r, stmts=t.transform(r.stmts))
    if isinstance(r, UniformIf):
        return dataclasses.replace(r, cond=t.transform(r.cond), then=tuple(_map_region(x, t) for x in r.then),
                                   other=tuple(_map_region(x, t) for x in r.other))
    if isinstance(r, UniformLoop):
        return dataclasses.replace(r, init=t.transform(r.init), cond=t.transform(r.cond), step=t.transform(r.step),
                                   body=tuple(_map_region(x, t) for x in r.body))
    if isinstance(r, Exchange):
        return dataclasses.replace(r, value=t.transform(r.value), target=t.transform(r.target))
    return r


def _pure(e) -> bool:
    return not any(isinstance(n, (m.Assign, m.Call)) or (isinstance(n, m.Unary) and n.op in ("++", "--", "p++", "p--"))
                   for n in m.walk(e))


def _is_flag(phase: Phase, branch) -> bool:
    """``phase`` only stores the condition of the predicated ``branch`` that follows it."""
    return isinstance(branch, UniformIf) and branch.predicate is not None and len(phase.stmts) == 1 \
        and isinstance(phase.stmts[0], m.DeclStmt) and [d.name for d in phase.stmts[0].decls] == [branch.predicate]


def prune_lane_code(stmts: tuple, value: m.Expr, fold: bool = True) -> tuple[tuple, m.Expr]:
    """``stmts`` (a lane's code before a reduction, contributing ``value``) without the locals the
    trees left unused (the lane and warp numbers, the device functions' result slots), and the
    value read from the local it was last copied from (``T v = sum;`` → ``sum``)."""
    stmts = list(stmts)
    changed = True
    while changed:
        changed = False
        if fold and stmts and isinstance(value, m.Ref) and isinstance(stmts[-1], m.DeclStmt) and len(stmts[-1].decls) == 1 \
                and stmts[-1].decls[0].name == value.name and isinstance(_strip(stmts[-1].decls[0].init), m.Ref):
            value = stmts.pop().decls[0].init
            changed = True
        elif fold and stmts and isinstance(value, m.Ref) and isinstance(stmts[-1], m.ExprStmt) \
                and isinstance(stmts[-1].expr, m.Assign) and stmts[-1].expr.op == "=" \
                and _is_ref(stmts[-1].expr.target, value.name) and isinstance(_strip(stmts[-1].expr.value), m.Ref) \
                and not any(isinstance(n, m.Ref) and n.name == value.name for st in stmts[:-1] for n in m.walk(st)):
            value = stmts.pop().expr.value  # ``v = x;`` last, v read nowhere else
            changed = True
        for k, st in enumerate(stmts):
            if not (isinstance(st, m.DeclStmt) and len(st.decls) == 1 and
                    (st.decls[0].init is None or _pure(st.decls[0].init))):
                continue
            name = st.decls[0].name
            rest = stmts[:k] + stmts[k + 1:] + [m.ExprStmt(value, value.span)]
            if not any(isinstance(n, (m.Ref, m.VarDecl)) and n.name == name for r in rest for n in m.walk(r)):
                del stmts[k]
                changed = True
                break
    return tuple(stmts), value


def _recomputable(st) -> bool:
    return isinstance(st, m.DeclStmt) and all(d.init is not None and _pure(d.init) for d in st.decls)


def _assigned(stmts, name) -> bool:
    return any(isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name == name
               for st in stmts for n in m.walk(st))
