"""Steps used as values in a statement as statements of their own: ``pre[j++] = i;`` becomes
``pre[j] = i; j += 1;`` and ``result[++e] = h;`` becomes ``e += 1; result[e] = h;`` (the way real
kernels append to a per-thread list). Only where it is the same program: the stepped local is
named nowhere else in the statement, and the step is always evaluated (not right of ``&&``/``||``
nor in a branch of ``?:``). Other steps used as values are left for the emitter to refuse."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import always_evaluated
from ...ir.visit import Transformer, expand_statements


def split_value_steps(fn: m.Function) -> m.Function:
    if fn.body is None:
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _split))


def _split(s: m.ExprStmt) -> list[m.Stmt] | None:
    e = s.expr
    if isinstance(e, m.Unary) and e.op in ("++", "--"):
        return None  # a step that is the statement: nothing to split
    steps = [n for n in always_evaluated(e) if isinstance(n, m.Unary) and n.op in ("++", "--")
             and isinstance(n.operand, m.Ref) and n.operand.kind == "local" and isinstance(n.operand.type, m.Scalar)]
    if not steps:
        return None
    names = [n.name for n in m.walk(e) if isinstance(n, m.Ref)]
    if any(names.count(u.operand.name) != 1 for u in steps):
        return None
    moved = {id(u) for u in steps}
    if any(isinstance(n, m.Unary) and n.op in ("++", "--") and id(n) not in moved for n in m.walk(e)):
        return None  # a step this pass cannot move (under a condition): the emitter refuses it

    def step(u: m.Unary) -> m.ExprStmt:
        one = m.IntLit(1, "1", u.operand.type, u.span)
        return m.ExprStmt(m.Assign(u.op[0] + "=", u.operand, one, u.operand.type, u.span), s.span)

    class Read(Transformer):
        def leave_Unary(self, node):
            if node.op in ("++", "--") and isinstance(node.operand, m.Ref) \
                    and any(node.operand.name == u.operand.name for u in steps):
                return node.operand
            return node

    before = [step(u) for u in steps if not u.postfix]
    after = [step(u) for u in steps if u.postfix]
    return before + [dataclasses.replace(s, expr=Read().transform(e))] + after
