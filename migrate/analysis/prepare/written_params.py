"""Scalar parameters the body assigns, as locals: ``index = index + 1;`` in a loop, ``n >>= 1``,
``m++``. TileLang binds a parameter once; an assignment to it is a new binding that lives only in
the block it is made in, so a parameter assigned inside a loop or a branch did not build
("Immutable variable ... used outside its defining region"; 20 thread-level kernels of one real
program). Each such parameter is copied into a local at the top of the body (``index_v``), and
every use in the body reads and writes the local. Pointer parameters that the body steps are
:mod:`.moving_pointers`' business."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.names import fresh
from ...ir.visit import Transformer


def _assigned(body, scalars: set[str]) -> set[str]:
    out = set()
    for node in m.walk(body):
        target = node.target if isinstance(node, m.Assign) else \
            node.operand if isinstance(node, m.Unary) and node.op in ("++", "--") else None
        if isinstance(target, m.Ref) and target.kind == "param" and target.name in scalars:
            out.add(target.name)
    return out


def written_parameters(fn: m.Function, addressed: bool = False) -> m.Function:
    """``fn`` with each scalar parameter it assigns read and written through a local copy; with
    ``addressed``, only (and each of) those whose address it takes (``lcg(&seed)`` on a parameter
    ``seed``: the function writing through the pointer is inlined as for a local's address)."""
    if fn.body is None:
        return fn
    scalars = {p.name: p for p in fn.params if isinstance(p.type, (m.Scalar, m.TemplateType))}
    written = {x.operand.name for x in m.walk(fn.body) if isinstance(x, m.Unary) and x.op == "&"
               and isinstance(x.operand, m.Ref) and x.operand.kind == "param" and x.operand.name in scalars} \
        if addressed else _assigned(fn.body, set(scalars))
    if not written:
        return fn
    taken = {p.name for p in fn.params} | {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))}
    local = {name: fresh(f"{name}_v", taken) for name in scalars if name in written}

    class Rename(Transformer):
        def leave_Ref(self, node):
            if node.kind == "param" and node.name in local:
                return dataclasses.replace(node, name=local[node.name], kind="local")
            return node

    body = Rename().transform(fn.body)
    copies = tuple(m.DeclStmt((m.VarDecl(local[p.name], p.type, "local", False,
                                         m.Ref(p.name, "param", p.type, p.span), p.span),), p.span)
                   for p in fn.params if p.name in local)
    return dataclasses.replace(fn, body=dataclasses.replace(body, stmts=copies + body.stmts))
