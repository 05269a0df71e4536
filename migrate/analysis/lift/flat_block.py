"""A 2-D block that reduces over its threads' row-major rank, as a 1-D block of lanes.

A kernel launched on ``(W, H)`` blocks often reduces over the whole block through the thread's
rank ``threadIdx.x + W * threadIdx.y`` (spelled in any order, through integer casts): the tree
``if (tid < s) S[tid] += S[tid + s]`` or a CUB ``BlockReduce<T, W, ..., H>``. With ``W`` a
constant, the CUDA thread ``(x, y)`` is lane ``L = x + W * y`` of a 1-D block of ``W * H`` lanes,
and the kernel reads the same values when it is rewritten over ``L``:

    threadIdx.x → L % W      threadIdx.y → L / W      blockDim.x → W      blockDim.y → blockDim / W

with every rank ``threadIdx.x + W * threadIdx.y`` → ``L``. That holds exactly when the launch's
block is ``W`` threads wide, which the lifted factory asserts before it counts the block's lanes
(``block_x * block_y``). A rank spelled ``threadIdx.x + blockDim.x * threadIdx.y`` (no constant
width anywhere) is the same with ``W`` the launch's width, which the factory keeps as
``block_width`` (:data:`LAUNCH_WIDTH`, a factory-level value like a template parameter). Warps are unchanged: CUDA forms them from the same rank. The 1-D kernel
then goes through the block-reduction lift as any other (analysis.lift.reduce), which proves or
refuses the reductions over ``L``; a reduction along x alone (one per row) does not take this
form, as its trees do not index by the rank.

A 3-D block ranked ``threadIdx.x + W * threadIdx.y + W * H * threadIdx.z`` (W and H constants,
metropolis's ``threadIdx.z * BY * BX + threadIdx.y * BX + threadIdx.x``) is flattened the same
way: ``threadIdx.y → L / W % H``, ``threadIdx.z → L / (W * H)``, ``blockDim.y → H``,
``blockDim.z → blockDim / (W * H)``, the block's size ``blockDim.x * blockDim.y * blockDim.z`` →
``blockDim`` and every rank → ``L``; the factory asserts the launch's block is W x H x any. A
kernel that is no ranked reduction is refused with what it computes
(:mod:`.block_shape_reason`).
"""
from __future__ import annotations

import dataclasses
import math

from ...ir import model as m
from ...ir.exprs import strip_int_casts
from ...ir.visit import Transformer
from ..facts.locals import assignment_counts
from .block_shape_reason import what_it_computes

U32 = m.Scalar("uint32")

#: The factory's name for the launch's block width, where the rank is spelled with blockDim.x.
LAUNCH_WIDTH = "block_width"


def _is(e, var: str, dim: str) -> bool:
    e = strip_int_casts(e)
    return isinstance(e, m.Builtin) and e.var == var and e.dim == dim


def _int(e):
    e = strip_int_casts(e)
    return e.value if isinstance(e, m.IntLit) else None


def rank_width(e) -> int | str | None:
    """W when ``e`` is ``threadIdx.x + W * threadIdx.y`` (the sides and factors in any order,
    through integer casts) with W a positive integer constant, or :data:`LAUNCH_WIDTH` for W
    ``blockDim.x``."""
    e = strip_int_casts(e)
    if not (isinstance(e, m.Binary) and e.op == "+"):
        return None
    for x, yw in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
        yw = strip_int_casts(yw)
        if _is(x, "threadIdx", "x") and isinstance(yw, m.Binary) and yw.op == "*":
            for y, w in ((yw.lhs, yw.rhs), (yw.rhs, yw.lhs)):
                if _is(y, "threadIdx", "y") and isinstance(_int(w), int) and _int(w) > 0:
                    return _int(w)
                if _is(y, "threadIdx", "y") and _is(w, "blockDim", "x"):
                    return LAUNCH_WIDTH
    return None


def _linear(e) -> dict | None:
    """``e`` as a sum of constant multiples of ``threadIdx.x/y/z`` and a constant (key ``""``),
    through integer casts; None for anything else."""
    e = strip_int_casts(e)
    if isinstance(e, m.Builtin) and e.var == "threadIdx":
        return {e.dim: 1}
    if isinstance(e, m.IntLit):
        return {"": e.value}
    if isinstance(e, m.Binary) and e.op in ("+", "*"):
        a, b = _linear(e.lhs), _linear(e.rhs)
        if a is None or b is None:
            return None
        if e.op == "+":
            return {k: a.get(k, 0) + b.get(k, 0) for k in a.keys() | b.keys()}
        for c, v in ((a, b), (b, a)):
            if set(c) == {""}:
                return {k: c[""] * x for k, x in v.items()}
    return None


def rank_shape(e) -> tuple[int, int] | None:
    """(W, H) when ``e`` is the rank ``threadIdx.x + W * threadIdx.y + W * H * threadIdx.z`` of a
    3-D block (the terms and factors in any order, constants multiplied out, through integer
    casts) with W and H positive constants."""
    lin = _linear(e) if isinstance(strip_int_casts(e), m.Binary) else None
    if lin is None or {k for k, v in lin.items() if v} != {"x", "y", "z"} or lin["x"] != 1:
        return None
    w, wh = lin["y"], lin["z"]
    return (w, wh // w) if w > 0 and wh > 0 and wh % w == 0 else None


def _rank_shapes(fn: m.Function) -> set[tuple[int, int]]:
    """The (W, H) of every 3-D rank the kernel computes (:func:`rank_shape`)."""
    return {s for n in m.walk(fn.body) if isinstance(n, m.Binary) for s in (rank_shape(n),) if s is not None}


def flat_width(fn: m.Function) -> int | str | tuple[int, int] | None:
    """The one width W of the ranks ``threadIdx.x + W * threadIdx.y`` the kernel computes, if it
    computes any, all with the same constant W or blockDim.x (W: the constant, else
    :data:`LAUNCH_WIDTH`), and indexes threads in x and y only; for a kernel that indexes
    threads in z, the one (W, H) of the ranks ``threadIdx.x + W * threadIdx.y + W * H *
    threadIdx.z`` it computes (:func:`rank_shape`)."""
    if fn.body is None:
        return None
    if any(isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockDim") and n.dim == "z" for n in m.walk(fn.body)):
        shapes = _rank_shapes(fn)
        return shapes.pop() if len(shapes) == 1 else None
    widths = {w for n in m.walk(fn.body) if isinstance(n, m.Binary) for w in (rank_width(n),) if w is not None}
    constants = widths - {LAUNCH_WIDTH}
    if len(constants) > 1:
        return None
    return constants.pop() if constants else widths.pop() if widths else None


def why_not_flat(fn: m.Function) -> str:
    """Why a kernel that indexes threads in more than x is not flattened (:func:`flat_width` None)."""
    head = ("block reductions are lifted for 1-D blocks only, and for 2-D blocks whose threads are "
            "ranked threadIdx.x + W * threadIdx.y (W a constant or blockDim.x)")
    if fn.body is not None and any(isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockDim") and n.dim == "z"
                                   for n in m.walk(fn.body)):
        shapes = sorted(_rank_shapes(fn))
        if len(shapes) > 1:
            return (f"{head}, and for 3-D blocks ranked threadIdx.x + W * threadIdx.y + W * H * threadIdx.z: "
                    f"this kernel ranks them with several shapes ({', '.join(f'{w}x{h}' for w, h in shapes)})")
        what = what_it_computes(fn)
        if what is not None:
            return f"{what} (block reductions are lifted for 1-D blocks only, and for 3-D blocks ranked threadIdx.x " \
                   "+ W * threadIdx.y + W * H * threadIdx.z, W and H constants)"
        return (f"{head}, and for 3-D blocks ranked threadIdx.x + W * threadIdx.y + W * H * threadIdx.z (W, H "
                "constants): this kernel indexes threads in z and computes no such rank")
    widths = sorted(w for w in {rank_width(n) for n in m.walk(fn.body) if isinstance(n, m.Binary)} - {None, LAUNCH_WIDTH})
    if len(widths) > 1:
        return f"{head}: this kernel ranks them with several widths ({', '.join(map(str, widths))})"
    what = what_it_computes(fn)
    if what is not None:
        return f"{what} (block reductions are lifted for 1-D blocks only, and for 2-D blocks ranked threadIdx.x + " \
               "W * threadIdx.y)"
    return f"{head}, which this kernel does not compute"


class _Flatten(Transformer):
    """The rewriting of the module docstring; bottom-up, so a rank is recognised in its
    rewritten form ``L % W + W * (L / W)`` (the nodes this pass made, by identity)."""

    def __init__(self, width: int | str) -> None:
        self.width = width
        self.mine: set[int] = set()

    def _lit(self, span) -> m.Expr:
        if self.width == LAUNCH_WIDTH:
            return m.Ref(LAUNCH_WIDTH, "template", U32, span)
        return m.IntLit(self.width, str(self.width), U32, span)

    def _is_width(self, e) -> bool:
        e = strip_int_casts(e)
        if self.width == LAUNCH_WIDTH:
            return isinstance(e, m.Ref) and e.kind == "template" and e.name == LAUNCH_WIDTH
        return _int(e) == self.width

    def _made(self, node):
        self.mine.add(id(node))
        return node

    def leave_Builtin(self, node: m.Builtin):
        lane = m.Builtin("threadIdx", "x", U32, node.span)
        if node.var == "threadIdx" and node.dim == "x":
            return self._made(m.Binary("%", lane, self._lit(node.span), U32, node.span))
        if node.var == "threadIdx" and node.dim == "y":
            return self._made(m.Binary("/", lane, self._lit(node.span), U32, node.span))
        if node.var == "blockDim" and node.dim == "x":
            return self._lit(node.span)
        if node.var == "blockDim" and node.dim == "y":
            block = m.Builtin("blockDim", "x", U32, node.span)
            return self._made(m.Binary("/", block, self._lit(node.span), U32, node.span))
        return node

    def _mine(self, e, op: str):
        e = strip_int_casts(e)
        return e if isinstance(e, m.Binary) and id(e) in self.mine and e.op == op else None

    def _times_width(self, e, op: str):
        """The ``L / W`` (or ``blockDim / W``) of ``W * (L / W)``, either order."""
        e = strip_int_casts(e)
        if not (isinstance(e, m.Binary) and e.op == "*"):
            return None
        for a, b in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if self._is_width(b) and self._mine(a, op) is not None:
                return self._mine(a, op)
        return None

    def leave_Binary(self, node: m.Binary):
        if node.op == "+":
            for x, yw in ((node.lhs, node.rhs), (node.rhs, node.lhs)):
                mod, div = self._mine(x, "%"), self._times_width(yw, "/")
                if mod is not None and div is not None and _is(mod.lhs, "threadIdx", "x") \
                        and _is(div.lhs, "threadIdx", "x"):
                    return m.Cast(node.type, m.Builtin("threadIdx", "x", U32, node.span), "implicit",
                                  node.type, node.span)
        if node.op == "*":  # W * blockDim.y: the block's lanes
            div = self._times_width(node, "/")
            if div is not None and _is(div.lhs, "blockDim", "x"):
                return m.Cast(node.type, m.Builtin("blockDim", "x", U32, node.span), "implicit",
                              node.type, node.span)
        return node


def flatten_block(fn: m.Function, width: int | str | tuple[int, int]) -> m.Function:
    """``fn`` over the lanes of its ``width``-wide 2-D block, or of its (W, H) 3-D block (module
    docstring)."""
    if isinstance(width, tuple):
        body = _Ranks3(width).transform(fn.body)
        body = _Flatten3(width).transform(body)
        return dataclasses.replace(fn, body=_Lane().transform(body))
    return dataclasses.replace(fn, body=_Flatten(width).transform(fn.body))


#: What stands for the lane while a 3-D block is flattened (a name no C++ local can have).
_LANE = "lane@rank"


class _Ranks3(Transformer):
    """Every rank ``threadIdx.x + W * threadIdx.y + W * H * threadIdx.z`` of the block → the lane
    (a placeholder, so the next pass leaves its indices alone)."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.shape = shape

    def leave_Binary(self, node: m.Binary):
        return m.Ref(_LANE, "template", node.type, node.span) if rank_shape(node) == self.shape else node


class _Flatten3(Transformer):
    """The other thread indices and sizes of a (W, H, D) block over its lanes L (L = the rank):

        threadIdx.x → L % W    threadIdx.y → L / W % H    threadIdx.z → L / (W * H)
        blockDim.x → W         blockDim.y → H             blockDim.z → blockDim / (W * H)

    and a product ``blockDim.x * blockDim.y * blockDim.z`` (any order) → the block's lanes."""

    def __init__(self, shape: tuple[int, int]) -> None:
        self.w, self.h = shape
        self.mine: set[int] = set()

    def _lit(self, v, span) -> m.Expr:
        return m.IntLit(v, str(v), U32, span)

    def leave_Builtin(self, node: m.Builtin):
        s = node.span
        lane = m.Builtin("threadIdx", "x", U32, s)
        if node.var == "threadIdx" and node.dim == "x":
            return m.Binary("%", lane, self._lit(self.w, s), U32, s)
        if node.var == "threadIdx" and node.dim == "y":
            return m.Binary("%", m.Binary("/", lane, self._lit(self.w, s), U32, s), self._lit(self.h, s), U32, s)
        if node.var == "threadIdx" and node.dim == "z":
            return m.Binary("/", lane, self._lit(self.w * self.h, s), U32, s)
        if node.var == "blockDim" and node.dim in ("x", "y"):
            return self._lit(self.w if node.dim == "x" else self.h, s)
        if node.var == "blockDim" and node.dim == "z":
            div = m.Binary("/", m.Builtin("blockDim", "x", U32, s), self._lit(self.w * self.h, s), U32, s)
            self.mine.add(id(div))
            return div
        return node

    def leave_Binary(self, node: m.Binary):
        if node.op != "*":
            return node
        factors, stack = [], [node]
        while stack:
            e = strip_int_casts(stack.pop())
            if isinstance(e, m.Binary) and e.op == "*" and id(e) not in self.mine:
                stack += [e.lhs, e.rhs]
            else:
                factors.append(e)
        depth = [f for f in factors if id(f) in self.mine]
        rest = [_int(f) for f in factors if id(f) not in self.mine]
        if len(depth) == 1 and all(isinstance(v, int) for v in rest) and math.prod(rest) == self.w * self.h:
            return m.Cast(node.type, m.Builtin("blockDim", "x", U32, node.span), "implicit", node.type, node.span)
        return node


class _Lane(Transformer):
    def leave_Ref(self, node: m.Ref):
        if node.kind == "template" and node.name == _LANE:
            return m.Cast(node.type, m.Builtin("threadIdx", "x", U32, node.span), "implicit", node.type, node.span)
        return node


class _Rename(Transformer):
    def __init__(self, table: dict[str, str]) -> None:
        self.table = table

    def leave_Ref(self, node: m.Ref):
        new = self.table.get(node.name) if node.kind == "local" else None
        return dataclasses.replace(node, name=new) if new else node


def rename_last_reassignments(fn: m.Function) -> m.Function:
    """``fn`` with each top-level ``x = E;`` of a scalar local that follows every other
    assignment of ``x`` (in the function body's statement order; its address never taken) turned
    into the declaration of a fresh local that the statements after it read.

    A CUB ``s = BlockReduce(t).Sum(s)`` gives ``s = t[0]`` after the tree: ``s`` is the thread's
    value before it and the block's total after it, two values the lift keeps apart (the first
    per lane, the second at block level). No assignment of ``x`` runs after ``E``'s, so every
    later read of ``x`` reads it: the renaming is exact. (analysis.prepare.renaming renames only
    locals assigned at top level alone.)"""
    if fn.body is None:
        return fn
    stmts = list(fn.body.stmts)
    scalars = {d.name: d for s in stmts if isinstance(s, m.DeclStmt) for d in s.decls
               if d.storage == "local" and isinstance(d.type, m.Scalar)}
    taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.Ref, m.VarDecl))} | {p.name for p in fn.params}
    addressed = {n.operand.name for n in m.walk(fn.body)
                 if isinstance(n, m.Unary) and n.op == "&" and isinstance(n.operand, m.Ref)}
    last: dict[str, int] = {}
    for i, s in enumerate(stmts):
        for name, n in assignment_counts(s).items():
            last[name] = i if n == 1 and _plain(s) == name else -1
    out, table = [], {}
    for i, s in enumerate(stmts):
        name = _plain(s)
        if name in scalars and name not in addressed and last.get(name) == i:
            fresh, k = f"{name}_2", 2
            while fresh in taken:
                k += 1
                fresh = f"{name}_{k}"
            taken.add(fresh)
            value = _Rename(table).transform(s.expr.value)
            decl = dataclasses.replace(scalars[name], name=fresh, const=False, init=value, span=s.span)
            out.append(m.DeclStmt((decl,), s.span))
            table = {**table, name: fresh}
            continue
        out.append(_Rename(table).transform(s) if table else s)
    if not table:
        return fn
    # a renamed local declared without a value and no longer read or assigned: its declaration goes
    used = {n.name for st in out for n in m.walk(st) if isinstance(n, m.Ref)}
    dead = {name for name in table if name not in used and scalars[name].init is None}
    out = [dataclasses.replace(st, decls=tuple(d for d in st.decls if d.name not in dead))
           if isinstance(st, m.DeclStmt) and any(d.name in dead for d in st.decls) else st for st in out]
    return dataclasses.replace(fn, body=m.Block(tuple(st for st in out if not (isinstance(st, m.DeclStmt)
                                                                            and not st.decls)), fn.body.span))


def _plain(s) -> str | None:
    e = s.expr if isinstance(s, m.ExprStmt) else None
    if isinstance(e, m.Assign) and e.op == "=" and isinstance(e.target, m.Ref) and e.target.kind == "local":
        return e.target.name
    return None
