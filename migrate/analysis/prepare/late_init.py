"""Declarations whose value comes later, declared where it comes: ``int tid; float v;`` followed in
the same block by ``tid = threadIdx.x + blockIdx.x * blockDim.x;`` becomes ``int tid = ...;`` at
that assignment (C89-style kernels declare every local at the top). Only where nothing reads or
writes the local between its declaration and that assignment, and the assigned value does not
read the local: the program means the same, and the passes that look for a local's defining
value (a global index, a grid stride) find it. Runs on kernels and on device functions."""
from __future__ import annotations

import dataclasses

from ...ir import model as m


def _named(node, name: str) -> bool:
    return any(isinstance(n, m.Ref) and n.name == name for n in m.walk(node))


def _assigns(s, name: str) -> m.Expr | None:
    """The value of ``s`` when it is the statement ``name = value;``, else None."""
    if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
            and isinstance(s.expr.target, m.Ref) and s.expr.target.name == name \
            and not _named(s.expr.value, name):
        return s.expr.value
    return None


def _block(stmts: tuple) -> tuple:
    out = list(stmts)
    names = [None] * len(out)  # the names each statement refers to, found when first asked

    def named(q: int) -> set[str]:
        if names[q] is None:
            names[q] = {n.name for n in m.walk(out[q]) if isinstance(n, m.Ref)}
        return names[q]

    p = 0
    while p < len(out):
        s = out[p]
        if isinstance(s, m.DeclStmt):
            kept = []
            for d in s.decls:
                if d.init is not None or d.storage != "local" or not isinstance(d.type, m.Scalar):
                    kept.append(d)
                    continue
                later = next((q for q in range(p + 1, len(out)) if d.name in named(q)), None)
                value = _assigns(out[later], d.name) if later is not None else None
                if value is None:
                    kept.append(d)
                    continue
                out[later] = m.DeclStmt((dataclasses.replace(d, init=value, span=out[later].span),),
                                        out[later].span)
                names[later] = None
            if len(kept) != len(s.decls):
                out[p] = dataclasses.replace(s, decls=tuple(kept)) if kept else m.Empty(s.span)
        p += 1
    return tuple(_inner(x) for x in out)


def _inner(s):
    """``s`` with the blocks inside it done too."""
    if isinstance(s, m.Block):
        return dataclasses.replace(s, stmts=_block(s.stmts))
    if isinstance(s, m.If):
        return dataclasses.replace(s, then=_inner(s.then), other=_inner(s.other) if s.other is not None else None)
    if isinstance(s, (m.For, m.While, m.DoWhile, m.Switch, m.Case)) and s.body is not None:
        return dataclasses.replace(s, body=_inner(s.body))
    return s


def late_initialisations(fn: m.Function) -> m.Function:
    """``fn`` with each late-initialised local declared at its first value (module docstring)."""
    if fn.body is None:
        return fn
    return dataclasses.replace(fn, body=_inner(fn.body))
