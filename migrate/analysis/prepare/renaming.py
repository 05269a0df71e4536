"""Give each straight-line reassignment of a local a name of its own (single assignment).

Kernels that stage data through shared memory often reuse their index variables: ``x`` is the
input column while the tile is loaded and, after the barrier, ``x = blockIdx.y * TILE +
threadIdx.x`` the output column. The lifting passes reason about locals declared once with a
value (their value is their initialiser everywhere); :func:`rename_reassigned_locals` makes such a
kernel fit: every reassignment ``x = E;`` that is a statement of the function body itself (not
inside a loop or branch, so it runs exactly once, in program order) becomes the declaration of a
fresh local ``x_2 = E;``, and the statements after it read ``x_2``. What each use reads is then
the definition that reaches it, which is all the renaming needs to know. Scalar parameters are
renamed alike, and a compound assignment ``x ^= E;`` is ``x_2 = x ^ E;`` (a device function's
hash stepping its parameter becomes an expression of its arguments: emit.device).

A local that is also assigned anywhere else (inside a loop or branch, by a compound assignment,
``++``/``--``) or whose address is taken keeps its name: which assignment reaches a use is then
no longer decided by the text.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.visit import Transformer
from ..facts.locals import assignment_counts


def _plain_reassignment(stmt) -> tuple[str, m.Expr] | None:
    """(name, value) when ``stmt`` is ``name = value;`` of a local or a scalar parameter, or
    ``name op= value;`` (the value ``name op value``)."""
    e = stmt.expr if isinstance(stmt, m.ExprStmt) else None
    if not (isinstance(e, m.Assign) and isinstance(e.target, m.Ref) and e.target.kind in ("local", "param")):
        return None
    if e.op == "=":
        return e.target.name, e.value
    return e.target.name, m.Binary(e.op[:-1], e.target, e.value, e.target.type, e.span)


class _Rename(Transformer):
    def __init__(self, table: dict[str, str]) -> None:
        self.table = table

    def leave_Ref(self, node: m.Ref):
        new = self.table.get(node.name) if node.kind in ("local", "param") else None
        return dataclasses.replace(node, name=new, kind="local") if new else node


def rename_reassigned_locals(fn: m.Function) -> m.Function:
    """``fn`` with its top-level reassignments of scalar locals turned into fresh declarations
    (see the module doc); ``fn`` itself when it has none."""
    if fn.body is None:
        return fn
    stmts = fn.body.stmts
    declared = {p.name: m.VarDecl(p.name, p.type, "local", False, None, p.span) for p in fn.params
                if isinstance(p.type, m.Scalar)}
    declared.update({d.name: d for s in stmts if isinstance(s, m.DeclStmt) for d in s.decls
                     if d.storage == "local" and isinstance(d.type, m.Scalar)})
    top = {}
    for s in stmts:
        found = _plain_reassignment(s)
        if found and found[0] in declared:
            top[found[0]] = top.get(found[0], 0) + 1
    counts = assignment_counts(fn.body)
    renamed = {name for name, n in top.items() if counts.get(name, 0) == n}
    if not renamed:
        return fn
    taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.Ref, m.VarDecl))} | {p.name for p in fn.params}
    current: dict[str, str] = {}
    out = []
    for s in stmts:
        found = _plain_reassignment(s)
        if found and found[0] in renamed:
            name, value = found
            fresh, k = f"{name}_2", 2
            while fresh in taken:
                k += 1
                fresh = f"{name}_{k}"
            taken.add(fresh)
            value = _Rename(current).transform(value)  # ``x = x + 1`` reads the previous x
            decl = dataclasses.replace(declared[name], name=fresh, const=False, init=value, span=s.span)
            out.append(m.DeclStmt((decl,), s.span))
            current = {**current, name: fresh}
            continue
        out.append(_Rename(current).transform(s) if current else s)
    return dataclasses.replace(fn, body=m.Block(tuple(out), fn.body.span))
