"""Block tiles: elements named by ``blockIdx.d * C`` plus an offset the block's threads sweep.

Tiled kernels do not always pair ``blockIdx.d`` with ``threadIdx.d``. A 32x8 block that owns a
32x32 tile walks it in row strips, ``for (j = 0; j < 32; j += 8)`` over ``threadIdx.y + j``, and
after a shared-memory transpose it pairs the block's y with the thread's x
(``blockIdx.y * 32 + threadIdx.x``). Once its threads are independent (a map) such a kernel is
still a map over elements: :func:`fold_block_tiles` names them.

Every integer expression (an affine form) that holds a term ``blockIdx.d * C`` (C a constant)
takes the thread indices and strip-loop variables of the same form, each with coefficient 1, as
the block's offset along d, and the pair becomes ``globalIdx.d`` of a domain of ``gridDim.d * C``
elements. The pairing is legal when the offset sweeps ``0 .. C-1`` exactly once per block:

- ``threadIdx.e`` alone, with ``blockDim.e == C``;
- ``threadIdx.e + j`` with the strip loop ``for (j = 0; j < C; j += S)`` (S divides C), with
  ``blockDim.e == S``;

those block sizes are asserted by the factory. Each thread dimension and strip loop belongs to
one block dimension, always with the same C; the kernel is declarations and at most one strip
loop (so each statement runs once per element), and no thread index or loop variable may be left
outside a pair. A leftover ``blockIdx.d`` is the element's tile, ``globalIdx.d / C``.
:func:`fold_block_tiles` raises :class:`~.base.NotLiftable` when the kernel does not fit.
"""
from __future__ import annotations

import dataclasses

from ... import dtypes
from ...ir import model as m
from ...ir.exprs import pure
from ...ir.visit import Transformer
from ..facts.affine import linear_form, rebuild
from ..facts.locals import assignment_counts, expand, single_assignment_locals
from ..prepare.dead_code import drop_dead_declarations

_INT = dtypes.FIXED_INTEGERS


class _NotTiles(Exception):
    pass


def _const(e) -> int | None:
    form = linear_form(e) if e is not None else None
    return form[1] if form is not None and not form[0] else None


def _strip_loop(stmt) -> tuple[str, int, int] | None:
    """(variable, extent C, step S) of ``for (int j = 0; j < C; j += S)``, S dividing C."""
    if not isinstance(stmt, m.For) or not isinstance(stmt.init, m.DeclStmt) or len(stmt.init.decls) != 1:
        return None
    decl = stmt.init.decls[0]
    cond, step = stmt.cond, stmt.step
    if _const(decl.init) != 0 or not (isinstance(cond, m.Binary) and cond.op == "<"):
        return None
    lhs = cond.lhs.operand if isinstance(cond.lhs, m.Cast) else cond.lhs
    if not (isinstance(lhs, m.Ref) and lhs.name == decl.name):
        return None
    if not (isinstance(step, m.Assign) and step.op == "+=" and isinstance(step.target, m.Ref)
            and step.target.name == decl.name):
        return None
    extent, stride = _const(cond.rhs), _const(step.value)
    if extent is None or stride is None or stride <= 0 or extent % stride:
        return None
    for n in m.walk(stmt.body):
        if isinstance(n, (m.Break, m.Continue, m.Return)):
            return None
        target = m.store_target(n)
        if isinstance(target, m.Ref) and target.name == decl.name:
            return None
    return decl.name, extent, stride


def has_strip_loop(fn: m.Function) -> bool:
    """Whether a statement of the kernel's body is a strip loop."""
    return fn.body is not None and any(_strip_loop(s) for s in fn.body.stmts)


def _is_int(e) -> bool:
    t = getattr(e, "type", None)
    return isinstance(t, m.Scalar) and t.dtype in _INT


class _Pairing:
    """The pairs found so far: block dim -> (C, offset keys); what they assert."""

    def __init__(self, loops: dict[str, tuple[int, int]]) -> None:
        self.loops = loops  # strip-loop variable -> (C, S)
        self.pairs: dict[str, tuple[int, frozenset]] = {}

    def offset_key(self, atom):
        if isinstance(atom, m.Builtin) and atom.var == "threadIdx":
            return ("t", atom.dim)
        if isinstance(atom, m.Ref) and atom.kind == "local" and atom.name in self.loops:
            return ("v", atom.name)
        return None

    def discover(self, e) -> None:
        """Record the pair of every outermost integer form under ``e``."""
        if _is_int(e) and isinstance(e, m.Binary) and e.op in ("+", "-", "*"):
            form = linear_form(e)
            if form is not None and not (len(form[0]) == 1 and next(iter(form[0].values())) == (1, e)):
                self.record(form, e)
                for c, a in form[0].values():
                    self.discover(a)
                return
        for child in m.children(e):
            self.discover(child)

    def record(self, form, like) -> None:
        terms = form[0]
        blocks = [(c, a) for c, a in terms.values() if isinstance(a, m.Builtin) and a.var == "blockIdx" and c > 1]
        offsets = [(c, a) for c, a in terms.values() if self.offset_key(a) is not None]
        if len(blocks) != 1 or not offsets:
            return
        (size, block), = blocks
        if any(c != 1 for c, _a in offsets):
            raise _NotTiles(f"the offset in the tile of blockIdx.{block.dim} at line {like.span.line} "
                            "is not a sum of thread indices (coefficient 1)")
        pair = (size, frozenset(self.offset_key(a) for _c, a in offsets))
        if self.pairs.setdefault(block.dim, pair) != pair:
            raise _NotTiles(f"blockIdx.{block.dim} is paired with different thread offsets "
                            f"(line {like.span.line})")

    def fold(self, node):
        """``node`` with the smallest integer form that holds a whole pair rewritten (the
        expressions around it keep their shape and casts)."""
        pairs = self.pairs

        class _Fold(Transformer):
            def leave_Binary(inner, e):
                if not (_is_int(e) and e.op in ("+", "-")):
                    return e
                form = linear_form(e)
                if form is None:
                    return e
                terms, const = form
                for d, (size, keys) in pairs.items():
                    block = [k for k, (c, a) in terms.items() if c == size and isinstance(a, m.Builtin)
                             and a.var == "blockIdx" and a.dim == d]
                    offsets = [k for k, (c, a) in terms.items() if c == 1 and self.offset_key(a) in keys]
                    if block and len(offsets) == len(keys):
                        terms = {k: v for k, v in terms.items() if k not in block + offsets}
                        g = m.Builtin("globalIdx", d, e.type, e.span)
                        terms[m.dump(g)] = (1, g)
                        return rebuild((terms, const), e)
                return e

        return _Fold().transform(node)

    def block_sizes(self) -> dict[str, int]:
        """The block size each thread dimension must have; raises when the pairs do not sweep
        their tiles exactly once."""
        sizes: dict[str, int] = {}
        owner: dict = {}
        for d, (size, keys) in sorted(self.pairs.items()):
            threads = [k for k in keys if k[0] == "t"]
            loops = [k for k in keys if k[0] == "v"]
            if len(threads) != 1 or len(loops) > 1:
                raise _NotTiles(f"the offset in the tile of blockIdx.{d} is not one thread index "
                                "(plus one strip loop)")
            for k in keys:
                if owner.setdefault(k, d) != d:
                    raise _NotTiles(f"'{k[1]}' is part of two block dimensions' tiles")
            extent, stride = self.loops[loops[0][1]] if loops else (size, size)
            if extent != size:
                raise _NotTiles(f"the strip loop over '{loops[0][1]}' covers {extent}, not the tile of "
                                f"{size} elements of blockIdx.{d}")
            e = threads[0][1]
            if sizes.setdefault(e, stride) != stride:
                raise _NotTiles(f"threadIdx.{e} would need two block sizes")
        return sizes


def fold_block_tiles(fn: m.Function) -> tuple[m.Function, dict[str, int], dict[str, m.Expr]]:
    """``fn`` over block tiles (see the module doc), the block sizes it asserts (thread dim ->
    size) and the domain extents (block dim -> ``gridDim.d * C``); raises
    :class:`~.base.NotLiftable` when the kernel does not fit."""
    from .base import NotLiftable
    try:
        return _fold(fn)
    except _NotTiles as exc:
        raise NotLiftable(str(exc)) from None


def _fold(fn: m.Function):
    stmts = fn.body.stmts if fn.body is not None else ()
    loops = {}
    body = []
    for s in stmts:
        found = _strip_loop(s)
        if found:
            loops[found[0]] = found[1:]
            body += list(s.body.stmts if isinstance(s.body, m.Block) else (s.body,))
        elif isinstance(s, m.Empty) or isinstance(s, m.DeclStmt) and all(
                d.init is None or pure(d.init) for d in s.decls):
            body.append(s)  # runs once per element instead of once per thread: no side effects
        else:
            raise _NotTiles(f"the statement at line {s.span.line} is neither a declaration without side "
                            "effects nor a strip loop")
    if len(loops) > 1:
        raise _NotTiles("it has more than one strip loop")
    # index locals spelled out, so that each index is one affine form
    block = m.Block(tuple(body), fn.body.span)
    # (those computed from loads, or from names assigned anywhere, keep their place)
    assigned = assignment_counts(block)
    table = {k: v for k, v in single_assignment_locals(block).items()
             if not any(isinstance(n, (m.Index, m.Call, m.MethodCall)) or
                        (isinstance(n, m.Ref) and n.name in assigned) for n in m.walk(v))}
    block = drop_dead_declarations(expand(block, table))
    pairing = _Pairing(loops)
    pairing.discover(block)
    block = pairing.fold(block)
    sizes = pairing.block_sizes()
    left = [n for n in m.walk(block) if (isinstance(n, m.Builtin) and n.var == "threadIdx")
            or (isinstance(n, m.Ref) and n.kind == "local" and n.name in loops)]
    if left:
        what = f"threadIdx.{left[0].dim}" if isinstance(left[0], m.Builtin) else f"'{left[0].name}'"
        raise _NotTiles(f"{what} is read at line {left[0].span.line} outside a block tile index")
    pairs = pairing.pairs

    def tile_of(node):
        if isinstance(node, m.Builtin) and node.var == "blockIdx":
            if node.dim not in pairs:
                raise _NotTiles(f"blockIdx.{node.dim} is read at line {node.span.line} without a tile")
            size = m.IntLit(pairs[node.dim][0], str(pairs[node.dim][0]), node.type, node.span)
            return m.Binary("/", m.Builtin("globalIdx", node.dim, node.type, node.span), size, node.type, node.span)
        return m.map_children(node, tile_of)

    block = tile_of(block)
    extents = {}
    for d, (size, _keys) in pairs.items():
        like = m.Scalar("int32")
        extents[d] = m.Binary("*", m.Builtin("gridDim", d, like, fn.span),
                              m.IntLit(size, str(size), like, fn.span), like, fn.span)
    return dataclasses.replace(fn, body=block), sizes, extents
