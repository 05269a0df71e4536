"""Which integer values cannot be negative, read off the expressions themselves (no guards):
unsigned values, builtins, non-negative literals, and sums, products, quotients, remainders,
shifts and bitwise combinations of such values; and the locals that only ever hold them.

The printer asks it to print C's truncating ``/`` and ``%`` as TileLang's (flooring) ``//`` and
``%`` where the two agree; delinearise asks it of the atoms of index forms. The interval
reasoning from guards (``if (i < n)``) is delinearise's ``proves_nonneg`` and store_ranges'.
"""
from __future__ import annotations

from ... import dtypes
from ...ir import model as m

_CLOSED_OPS = ("+", "*", "/", "%", ">>", "&", "|", "<<")  # non-negative operands: a non-negative result


def nonneg(e: m.Expr, names=frozenset()) -> bool:
    """``e`` is never negative; ``names``: locals known to hold non-negative values."""
    if isinstance(e.type, m.Scalar) and e.type.dtype in dtypes.UNSIGNED:
        return True
    if isinstance(e, m.IntLit):
        return e.value >= 0
    if isinstance(e, (m.Builtin, m.SizeOf)):
        return True
    if isinstance(e, m.Ref):
        return e.name in names or e.kind == "template"
    if isinstance(e, m.Cast):
        return nonneg(e.operand, names)
    if isinstance(e, m.Binary) and e.op in _CLOSED_OPS:
        return nonneg(e.lhs, names) and nonneg(e.rhs, names)
    return False


def nonneg_locals(fn: m.Function) -> set[str]:
    """The locals of ``fn`` that only ever hold non-negative values: every value assigned to them
    is (given the others), and they are never decremented or assigned otherwise (a fixpoint)."""
    assigned: dict[str, list] = {}
    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.VarDecl):
            assigned.setdefault(node.name, []).append(node.init)
        elif isinstance(node, m.Assign) and isinstance(node.target, m.Ref):
            if node.op in ("=", "+=", "*=", "/=", "%=", ">>=", "&=", "|="):
                assigned.setdefault(node.target.name, []).append(node.value)
            else:
                assigned.setdefault(node.target.name, []).append(None)
        elif isinstance(node, m.Unary) and node.op == "--" and isinstance(node.operand, m.Ref):
            assigned.setdefault(node.operand.name, []).append(None)
    good: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, values in assigned.items():
            if name in good or any(v is None for v in values):
                continue
            if all(nonneg(v, good) for v in values):
                good.add(name)
                changed = True
    return good
