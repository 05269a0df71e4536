"""Facts about a function's locals: how often each is assigned, which hold one value, and
that value spelled out in the expressions that read them."""
from __future__ import annotations

from ...ir import model as m
from ...ir.visit import Transformer


def assignment_counts(node) -> dict[str, int]:
    """How often each local is assigned after its declaration in ``node`` (a function body or
    statements); taking its address counts as assigning it."""
    counts: dict[str, int] = {}
    for node in m.walk(node):
        if isinstance(node, m.Assign) and isinstance(node.target, m.Ref):
            counts[node.target.name] = counts.get(node.target.name, 0) + 1
        elif isinstance(node, m.Unary) and node.op in ("++", "--") and isinstance(node.operand, m.Ref):
            counts[node.operand.name] = counts.get(node.operand.name, 0) + 1
        elif isinstance(node, m.Unary) and node.op == "&" and isinstance(node.operand, m.Ref):
            counts[node.operand.name] = counts.get(node.operand.name, 0) + 2  # address taken
    return counts


def single_assignment_locals(node) -> dict[str, m.Expr]:
    """Scalar locals of ``node`` (a function body or statements) declared with a value and never
    assigned again: name -> initialiser."""
    counts = assignment_counts(node)
    out = {}
    for n in m.walk(node):
        if isinstance(n, m.VarDecl) and n.init is not None and counts.get(n.name, 0) == 0 \
                and n.storage == "local" and isinstance(n.type, m.Scalar) and not isinstance(n.init, m.InitList):
            out[n.name] = n.init
    return out


class Expand(Transformer):
    """Locals replaced by their values (``table``: name -> value; ``only``: just these names)."""

    def __init__(self, table: dict[str, m.Expr], only=None) -> None:
        self.table, self.only = table, only

    def leave_Ref(self, node: m.Ref):
        if node.kind == "local" and node.name in self.table and (self.only is None or node.name in self.only):
            value = self.table[node.name]
            return m.Cast(node.type, value, "implicit", node.type, node.span) if value.type != node.type else value
        return node


def expand(e, table: dict[str, m.Expr], rounds: int = 8):
    """``e`` with the locals of ``table`` replaced by their values, again in the values (up to
    ``rounds`` deep)."""
    for _ in range(rounds):
        new = Expand(table).transform(e)
        if new == e:
            return e
        e = new
    return e
