"""Fold the lanes of CUDA vector accesses back into a lane dimension of a map's tile loop.

:mod:`migrate.analysis.prepare.vectors` writes a ``float4``/``half2`` access as its lanes: ``va_x = a[idx * 4 + 0]`` ...
``c[idx * 4 + 3] = vc_w``. In a map over elements those are four strided scalar accesses per
element, which TileLang cannot vectorise along the element loop (axpy_float4: scalar loads where
the CUDA has 128-bit ones). When L consecutive statements differ only in the lane -- the suffix
``_x``/``_y``/``_z``/``_w`` of a vector local and the constant ``k`` of an index ``E * L + k`` --
they are a *lane group*, and become one statement over a lane index ``il``: the tile loop then
runs over (element, lane), ``for ix, il in T.Parallel(tile_x, L)``, contiguous in ``il``, and
TileLang emits one 128-bit (64-bit for half2) access per element.

In the lane loop every statement runs once per lane, so a statement that is not a lane group
must be lane-free and store nothing (index math, a test around lane groups). Top-level statements
that store outside lane groups (a scalar tail) go to a second element loop after the first; the
two parts share only the declarations both may recompute (no loads, no calls), and neither reads
a buffer the other writes, so each element's accesses keep their CUDA order where it matters
(the elements themselves are independent: the map is proven first).

:func:`fold_lanes` returns ``(lanes, vector part, scalar part)`` or None when the body is not of
this shape.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.loops import LANE
from ...ir.exprs import reads_no_memory
from ...ir.visit import Transformer
from ..facts.vector_lanes import unwidened
from ..prepare.vectors import LANES



def _int(e):
    while isinstance(e, m.Cast):
        e = e.operand
    return e.value if isinstance(e, m.IntLit) else None


def _lane_offset(e, lanes: int):
    """k when ``e`` is ``E * lanes + k`` (0 <= k < lanes), else None."""
    if isinstance(e, m.Binary) and e.op == "+" and isinstance(e.lhs, m.Binary) and e.lhs.op == "*" \
            and _int(e.lhs.rhs) == lanes:
        k = _int(e.rhs)
        if k is not None and 0 <= k < lanes:
            return k
    return None


class _Lane(Transformer):
    """Lane 0 of a statement as lane ``k`` (``to`` an int) or as the folded lane (``to`` None)."""

    def __init__(self, lanes: int, bases: dict[str, str], to) -> None:
        self.lanes, self.bases, self.to = lanes, bases, to
        self.hits = 0
        self.mixed = False

    def _renamed(self, name: str):
        for base, folded in self.bases.items():
            for i, lane in enumerate(LANES[:self.lanes]):
                if name == f"{base}_{lane}":
                    if i != 0:
                        self.mixed = True
                    return folded if self.to is None else f"{base}_{LANES[self.to]}"
        return None

    def leave_Ref(self, node: m.Ref):
        new = self._renamed(node.name) if node.kind == "local" else None
        if new is None:
            return node
        self.hits += 1
        return dataclasses.replace(node, name=new)

    def leave_VarDecl(self, node: m.VarDecl):
        new = self._renamed(node.name)
        if new is None:
            return node
        self.hits += 1
        return dataclasses.replace(node, name=new)

    def leave_Binary(self, node: m.Binary):
        k = _lane_offset(node, self.lanes)
        if k is None:
            return node
        if k != 0:
            self.mixed = True
        self.hits += 1
        span = node.rhs.span
        if self.to is None:  # one access for the lanes: the element index in its own type
            lane = m.Ref(LANE, "local", m.Scalar("int32"), span)
            node = unwidened(node)
        else:
            lane = m.IntLit(self.to, str(self.to), node.rhs.type, span)
        return dataclasses.replace(node, rhs=lane)


def _stores(node) -> bool:
    for n in m.walk(node):
        if isinstance(n, m.Assign) and not isinstance(n.target, m.Ref):
            return True
        if isinstance(n, m.Unary) and n.op in ("++", "--") and not isinstance(n.operand, m.Ref):
            return True
        if isinstance(n, m.Call) and n.kind in ("atomic", "sync", "warp", "cg"):
            return True
    return False


def _single_decls(stmts) -> list:
    out = []
    for s in stmts:
        if isinstance(s, m.DeclStmt) and len(s.decls) > 1:
            out.extend(m.DeclStmt((d,), s.span) for d in s.decls)
        else:
            out.append(s)
    return out


class _Folder:
    def __init__(self, lanes: int, bases: dict[str, str]) -> None:
        self.lanes, self.bases = lanes, bases
        self.groups = 0

    def lane(self, s, to):
        t = _Lane(self.lanes, self.bases, to)
        return t.transform(s), t

    def is_group(self, stmts, p) -> bool:
        """Whether ``stmts[p:p + lanes]`` are one statement's lanes: lane 0 first, each lane
        the same statement in that lane, and no local but the lanes' own assigned."""
        s = stmts[p]
        first, t = self.lane(s, 0)
        if not t.hits or t.mixed or p + self.lanes > len(stmts):
            return False
        if any(isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and not self.lane(n.target, 0)[1].hits or
               isinstance(n, m.Unary) and n.op in ("++", "--") and isinstance(n.operand, m.Ref)
               for n in m.walk(s)):
            return False
        return all(m.dump(self.lane(s, k)[0]) == m.dump(stmts[p + k]) for k in range(1, self.lanes))

    def block(self, stmts, spill=None) -> list | None:
        """The statements folded, or None when one of them cannot be (with ``spill``, a list,
        such a statement goes there instead)."""
        stmts = _single_decls(stmts)
        out, p = [], 0
        while p < len(stmts):
            s = stmts[p]
            if self.is_group(stmts, p):
                out.append(self.lane(s, None)[0])
                self.groups += 1
                p += self.lanes
                continue
            before = self.groups
            folded = self.stmt(s)
            if folded is None:
                self.groups = before
                if spill is None:
                    return None
                spill.append(s)
            else:
                out.append(folded)
            p += 1
        return out

    def stmt(self, s):
        """A statement that is not a lane group: lane-free, storing only in lane groups inside."""
        if isinstance(s, m.Empty):
            return s
        if isinstance(s, m.Block):
            inner = self.block(s.stmts)
            return None if inner is None else dataclasses.replace(s, stmts=tuple(inner))
        if isinstance(s, m.If):
            if self.lane(s.cond, 0)[1].hits or _stores(s.cond):
                return None
            then = self.block(s.then.stmts if isinstance(s.then, m.Block) else (s.then,))
            other = None
            if s.other is not None:
                other = self.block(s.other.stmts if isinstance(s.other, m.Block) else (s.other,))
                if other is None:
                    return None
                other = m.Block(tuple(other), s.other.span)
            if then is None:
                return None
            return dataclasses.replace(s, then=m.Block(tuple(then), s.then.span), other=other)
        if isinstance(s, (m.DeclStmt, m.ExprStmt)) and not _stores(s) and not self.lane(s, 0)[1].hits:
            return s
        return None


def _vector_bases(stmts, lanes: int) -> set[str]:
    """Names ``v`` whose lanes ``v_x`` ... are all declared."""
    names = {n.name for s in stmts for n in m.walk(s) if isinstance(n, m.VarDecl)}
    return {n[:-2] for n in names if n.endswith("_x")
            and all(f"{n[:-2]}_{lane}" in names for lane in LANES[:lanes])}


_FLIP = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}


def _negate(cond):
    if isinstance(cond, m.Binary) and cond.op in _FLIP:
        return dataclasses.replace(cond, op=_FLIP[cond.op])
    return m.Unary("!", cond, False, cond.type, cond.span)


def _split_else(stmts) -> list:
    """Top-level ``if (c) A else B`` as ``if (c) A`` and ``if (!c) B`` when ``c`` is pure and
    ``A`` assigns nothing ``c`` reads (so that a scalar else can go to the second loop)."""
    out = []
    for s in stmts:
        if isinstance(s, m.If) and s.other is not None and reads_no_memory(s.cond):
            read = {n.name for n in m.walk(s.cond) if isinstance(n, m.Ref)}
            assigned = {n.target.name for n in m.walk(s.then) if isinstance(n, m.Assign)
                        and isinstance(n.target, m.Ref)}
            if not read & assigned:
                out.append(dataclasses.replace(s, other=None))
                out.append(m.If(_negate(s.cond), s.other, None, s.span))
                continue
        out.append(s)
    return out


def _written(stmts) -> set[str]:
    """Buffers a statement list stores to."""
    out = set()
    for s in stmts:
        for n in m.walk(s):
            if isinstance(n, m.Assign) and isinstance(n.target, m.Index):
                root = m.access_root(n.target, through=(m.Cast, m.Member, m.Index))
                if root is not None:
                    out.add(root.name)
    return out


def _reads(stmts) -> set[str]:
    """Buffers a statement list reads (an indexed access that is not only a store's target)."""
    targets = {id(n.target) for s in stmts for n in m.walk(s) if isinstance(n, m.Assign) and n.op == "="}
    out = set()
    for s in stmts:
        for n in m.walk(s):
            if isinstance(n, m.Index) and id(n) not in targets:
                root = m.access_root(n, through=(m.Cast, m.Member, m.Index))
                if root is not None:
                    out.add(root.name)
    return out


def _refs(node, name: str) -> bool:
    return any(isinstance(n, (m.Ref, m.VarDecl)) and n.name == name for n in m.walk(node))


def _late_inits(stmts, assigned: dict) -> list:
    """``T v; ... v = e;`` (the first use of ``v`` in the block, its only assignment) as
    ``T v = e;``: a folded vector lane that is a value, not a variable (TileLang vectorises
    values; a ``T.alloc_var`` cell is one per thread)."""
    stmts = list(stmts)
    out = []
    for i, st in enumerate(stmts):
        if st is None:
            continue
        if isinstance(st, m.If):
            st = dataclasses.replace(st, then=m.Block(tuple(_late_inits(_body(st.then), assigned)), st.then.span))
        if isinstance(st, m.DeclStmt) and len(st.decls) == 1 and st.decls[0].init is None \
                and isinstance(st.decls[0].type, m.Scalar) and assigned.get(st.decls[0].name) == 1:
            name = st.decls[0].name
            later = next((j for j in range(i + 1, len(stmts)) if stmts[j] is not None and _refs(stmts[j], name)), None)
            use = stmts[later] if later is not None else None
            if isinstance(use, m.ExprStmt) and isinstance(use.expr, m.Assign) and use.expr.op == "=" \
                    and isinstance(use.expr.target, m.Ref) and use.expr.target.name == name \
                    and not _refs(use.expr.value, name):
                decl = dataclasses.replace(st.decls[0], init=use.expr.value)
                stmts[later] = None
                out.append(m.DeclStmt((decl,), st.span))
                continue
        out.append(st)
    return out


def _used(stmts) -> tuple:
    """``stmts`` without the top-level pure declarations nothing after them reads (a shared
    declaration the other loop needs)."""
    stmts = list(stmts)
    changed = True
    while changed:
        changed = False
        for i, st in enumerate(stmts):
            if isinstance(st, m.DeclStmt) and reads_no_memory(st) and not any(
                    _refs(other, d.name) for d in st.decls for other in stmts[i + 1:]):
                del stmts[i]
                changed = True
                break
    return tuple(stmts)


def _body(s) -> tuple:
    return s.stmts if isinstance(s, m.Block) else (s,)


def _assignment_counts(stmts) -> dict:
    counts: dict[str, int] = {}
    for s in stmts:
        for n in m.walk(s):
            target = n.target if isinstance(n, m.Assign) else n.operand if isinstance(n, m.Unary) \
                and n.op in ("++", "--") else None
            if isinstance(target, m.Ref):
                counts[target.name] = counts.get(target.name, 0) + 1
    return counts


def fold_lanes(stmts) -> tuple[int, tuple, tuple] | None:
    """(lanes, the lane-folded statements, the scalar statements of a second loop), or None.
    The caller folds only buffers that cannot alias (``__restrict__``): an element's lanes and
    its scalar part run on other threads than in the CUDA, out of its program order."""
    for lanes in (4, 2):
        bases = _vector_bases(stmts, lanes)
        folded_names = {b: b for b in bases}
        declared = {n.name for s in stmts for n in m.walk(s) if isinstance(n, m.VarDecl)}
        for b in bases:
            if b in declared or b == LANE:
                folded_names[b] = f"{b}_lane"
        if LANE in declared:
            return None
        folder = _Folder(lanes, folded_names)
        top = _split_else(list(stmts))
        shared = [st for st in top if isinstance(st, m.DeclStmt) and reads_no_memory(st)]
        scalar = []
        vector = folder.block(top, spill=scalar)
        # a statement with no lane group and no store is the lanes' local work; a shared
        # declaration also goes to the scalar loop
        scalar = shared + scalar if scalar else []
        scalar.sort(key=lambda st: top.index(st) if st in top else 0)
        if not folder.groups:
            continue
        if scalar:
            # the scalar loop sees only the shared declarations, and no buffer the lanes write
            # (nor writes one they read)
            own = {d.name for s in shared for d in s.decls}
            if any(isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name in own
                   for s in top for n in m.walk(s)):
                continue
            vec_locals = {n.name for s in vector for n in m.walk(s) if isinstance(n, m.VarDecl)} - own
            if any(isinstance(n, m.Ref) and n.kind == "local" and n.name in vec_locals
                   for s in scalar for n in m.walk(s)):
                continue
            if _written(vector) & _reads(scalar) or _written(scalar) & _reads(vector):
                continue
        vector = _late_inits(vector, _assignment_counts(vector))
        return lanes, _used(vector), _used(scalar)
    return None
