"""Lift warps' xor exchange networks to lane exchanges (tile form).

A sub-warp sorting network (segsort's generated kernels) keeps a few values per thread and swaps
them with partners in a group of W lanes:

    if (row < rows) {                      // the same in the W lanes of a row
        k0 = ...; k1 = ...;                // the row's elements, R per lane
        ex = __shfl_xor_sync(0xffffffff, k1, 0x1);  if (k0 > ex) ...   // compare-swap with lane ^ 1
        ...
        out[...] = k0;
    }

Its portable plan is phases and :class:`~migrate.ir.loops.Exchange` regions inside a branch on a
per-thread flag. Its tile form runs one *lane* per CUDA thread: each stretch of per-thread code
is a lane loop, with the flag as a guard inside it (the row's bound, tested per lane), and each
shuffle is a :class:`~migrate.ir.loops.LaneExchange`: every lane stores its value into the
exchange buffer, each lane reads its partner's, ``lane ^ mask`` (or, for ``__shfl_sync(v, src)``
that broadcasts a row's value, lane ``src`` of its group of ``width``). The values that cross
exchanges stay in lane-indexed buffers, and TileLang places the barriers its lane loops need (no
CUDA barrier is written out). The partner is exact because the mask (source lane) is a constant
below the shuffle's width: it stays in the lane's aligned group of the next power of two above
the mask (of the width), and the factory asserts blocks of whole groups.

Refused (the kernel keeps its portable form): shuffles up and down and votes, masks and source
lanes that are not constants, partial lane masks, CUDA barriers and ``__shared__`` arrays (lanes
that communicate through the block's memory are not a warp's exchange network), and kernels with
no exchange.
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.loops import (Barrier, Exchange, KernelPlan, LaneExchange, LanePhase, Phase, UniformIf,
                         UniformLoop, walk_regions)
from .base import NotExchanges


def plan_xor_exchanges(fn: m.Function, kplan: KernelPlan) -> KernelPlan:
    """The tile plan of a portable kernel whose threads communicate only through shuffles of
    constant xor masks or source lanes; :class:`~.base.NotExchanges` says why not."""
    if kplan.form != "portable":
        raise NotExchanges("it needs thread-level code")
    exchanges = [r for r in walk_regions(kplan.regions) if isinstance(r, Exchange)]
    if not exchanges:
        raise NotExchanges("it has no warp exchange")
    other = next((r for r in exchanges if r.op not in ("shfl_xor", "shfl")), None)
    if other is not None:
        raise NotExchanges(f"its {other.op} at line {other.span.line} is not an xor shuffle or a shuffle from a "
                          "constant lane")
    shared = sorted(name for name, vp in kplan.vars.items() if vp.placement == "shared")
    if shared:
        raise NotExchanges(f"its threads also share '{shared[0]}' through shared memory")
    for r in walk_regions(kplan.regions):
        if isinstance(r, Barrier):
            raise NotExchanges(f"a barrier at line {r.span.line} orders memory the block's threads share")
        if isinstance(r, UniformLoop) or isinstance(r, UniformIf) and r.predicate is None:
            raise NotExchanges(f"{type(r).__name__.lower()} at line {r.span.line} encloses warp exchanges")
    lift = _Lift(kplan, constants(fn))
    regions = lift.regions(kplan.regions, None)
    _check_no_memory_traffic(regions, {p.name for p in fn.params if isinstance(p.type, m.Pointer)})
    return KernelPlan(fn, "tile", regions, kplan.vars, kplan.aliases, flags=kplan.flags,
                      exchange_dtypes=kplan.exchange_dtypes)


def constants(fn: m.Function) -> dict[str, int]:
    """Locals every assignment of which (the declaration's initialiser included) sets the same
    integer literal: the masks of an inlined ``exch(..., 0x3, ...)`` call."""
    values: dict[str, set] = {}
    for n in m.walk(fn.body):
        if isinstance(n, m.VarDecl):
            values.setdefault(n.name, set()).add(_int(n.init) if n.init is not None else None)
        elif isinstance(n, m.Assign) and isinstance(strip_casts(n.target), m.Ref):
            values.setdefault(strip_casts(n.target).name, set()).add(_int(n.value) if n.op == "=" else None)
        elif isinstance(n, m.Unary) and n.op in ("++", "--") and isinstance(strip_casts(n.operand), m.Ref):
            values.setdefault(strip_casts(n.operand).name, set()).add(None)
        elif isinstance(n, m.Unary) and n.op == "&" and isinstance(strip_casts(n.operand), m.Ref):
            values.setdefault(strip_casts(n.operand).name, set()).add(None)  # its address taken
        elif isinstance(n, m.Call) and n.kind in ("device", "unknown"):
            for a in n.args:  # a device function may take it by reference
                if isinstance(strip_casts(a), m.Ref):
                    values.setdefault(strip_casts(a).name, set()).add(None)
    out = {}
    for name, vals in values.items():
        if len(vals) == 1 and None not in vals:
            out[name] = next(iter(vals))
    return out


def _int(e) -> int | None:
    e = strip_casts(e)
    return e.value if isinstance(e, m.IntLit) else None


class _Lift:
    def __init__(self, kplan: KernelPlan, consts: dict[str, int]) -> None:
        self.kplan, self.consts = kplan, consts

    def value(self, e) -> int | None:
        v = _int(e)
        if v is None and isinstance(strip_casts(e), m.Ref):
            v = self.consts.get(strip_casts(e).name)
        return v

    def regions(self, regions, guard) -> tuple:
        out = []
        for r in regions:
            if isinstance(r, Phase):
                stmts = tuple(st for st in r.stmts if not self._storage_only(st))
                if stmts:
                    if guard is not None:
                        stmts = (m.If(guard, m.Block(stmts, r.span), None, r.span),)
                    out.append(LanePhase(stmts, r.span))
            elif isinstance(r, Exchange):
                out.append(self.exchange(r, guard))
            elif isinstance(r, UniformIf) and r.predicate is not None:
                vp = self.kplan.vars.get(r.predicate)
                if vp is None or vp.placement != "thread_array":
                    raise NotExchanges(f"the condition at line {r.span.line} has no per-lane flag")
                flag = m.Ref(r.predicate, "local", vp.type, r.span)
                out.extend(self.regions(r.then, _and(guard, flag)))
                if r.other:
                    out.extend(self.regions(r.other, _and(guard, m.Unary("!", flag, False, flag.type, r.span))))
            else:  # barriers, uniform loops and branches: refused before
                raise NotExchanges(f"{type(r).__name__.lower()} at line {r.span.line} is not a lane's code")
        return tuple(out)

    def _storage_only(self, st) -> bool:
        """A declaration without initialiser of a value that lives outside the lane loops."""
        return isinstance(st, m.Empty) or isinstance(st, m.DeclStmt) and all(
            d.init is None and self.kplan.vars.get(d.name) is not None
            and self.kplan.vars[d.name].placement in ("thread_array", "kernel_var") for d in st.decls)

    def exchange(self, r: Exchange, guard) -> LaneExchange:
        line = r.span.line
        arg = self.value(r.lane)
        width = 32 if r.width is None else self.value(r.width)
        if r.mask is not None and self.value(r.mask) not in (0xffffffff, -1):
            raise NotExchanges(f"the shuffle at line {line} names the lanes it runs in",
                               candidate=True)
        if width is None or width <= 0 or width > 32 or width & (width - 1):
            raise NotExchanges(f"the width of the shuffle at line {line} is not a constant power of two up to 32",
                               candidate=True)
        if r.op == "shfl_xor" and (arg is None or not 0 < arg < width):
            raise NotExchanges(f"the xor mask of the shuffle at line {line} is not a constant below its width",
                               candidate=True)
        if r.op == "shfl" and (arg is None or arg < 0):
            raise NotExchanges(f"the source lane of the shuffle at line {line} is not a constant",
                               candidate=True)
        if r.decl is not None and self.kplan.vars.get(r.decl.name) is not None \
                and self.kplan.vars[r.decl.name].placement == "phase":
            raise NotExchanges(f"the result of the shuffle at line {line} has no per-lane home",
                               candidate=True)
        # CUDA reads lane srcLane % width of the lane's group
        return LaneExchange(r.op, r.value, arg if r.op == "shfl_xor" else arg % width, width, r.target, r.decl,
                            guard, r.span)


def _check_no_memory_traffic(regions, buffers: set[str]) -> None:
    """No lane loop reads a buffer an earlier one stored to: TileLang orders the lane-indexed
    shared buffers between lane loops, not global memory (where CUDA's exchanges left a lane
    reading back what a lane stored, the lanes of the lifted loops would not wait for it)."""
    stored: set[str] = set()

    def named(e) -> str | None:  # a pointer parameter or a __device__ global
        r = m.access_root(e)
        return r.name if r is not None and (r.name in buffers or r.kind == "global") else None

    def stores(stmts) -> set[str]:
        return {name for st in stmts for t in m.store_targets(st) if (name := named(t))}

    def reads(stmts) -> set[str]:
        plain = set()  # the places plain assignments store to (not their indices)
        for st in stmts:
            for n in m.walk(st):
                if isinstance(n, m.Assign) and n.op == "=":
                    e = n.target
                    while isinstance(e, (m.Index, m.Member, m.Cast)):
                        plain.add(id(e))
                        e = e.operand if isinstance(e, m.Cast) else e.base
        return {name for st in stmts for n in m.walk(st)
                if isinstance(n, (m.Index, m.Member)) and id(n) not in plain and (name := named(n))}

    for r in regions:
        stmts = r.stmts if isinstance(r, LanePhase) else (m.ExprStmt(r.value, r.span),
                                                         m.ExprStmt(r.target, r.span))
        if isinstance(r, LaneExchange) and r.guard is not None:
            stmts += (m.ExprStmt(r.guard, r.span),)
        clash = reads(stmts) & stored
        if clash:
            raise NotExchanges(f"a lane reads '{sorted(clash)[0]}' after an earlier stretch of lane code stored to it",
                               candidate=True)
        stored |= stores(stmts)


def _and(a, b):
    return b if a is None else m.Binary("&&", a, b, b.type, b.span)
