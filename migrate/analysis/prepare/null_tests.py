"""Tests of a null pointer decided where both sides are the null pointer: a device function passed
``nullptr`` for a pointer it tests (``int mask = token_mask == nullptr ? 1 : token_mask[i / k];``,
``if (token_mask == nullptr || token_mask[i / k])``) reads, once inlined, ``0 == 0`` and an
index of the null pointer, which no buffer stands for. The test is a constant (``nullptr ==
nullptr`` holds), so the branch C takes is the one kept: ``true ? a : b`` is ``a``, ``true || b``
is true, ``false && b`` false, and the index of the null pointer is gone with the branch C never
evaluates. A test that compares anything else is left as it is."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.visit import Transformer
from .pointer_views import _null

_BOOL = m.Scalar("bool")


def _pointer(e) -> bool:
    """Whether ``e`` is a pointer (a cast to one, ``(int*)0``, and ``nullptr`` included)."""
    while isinstance(e, m.Cast):
        if isinstance(e.type, m.Pointer):
            return True
        e = e.operand
    t = getattr(e, "type", None)
    return isinstance(t, m.Pointer) or isinstance(t, m.Opaque) and t.spelling == "std::nullptr_t"


def _known(e):
    """The truth of ``e`` where it is a constant this pass decided (a bool literal), else None."""
    while isinstance(e, m.Cast) and isinstance(e.type, m.Scalar):
        e = e.operand
    return e.value if isinstance(e, m.BoolLit) else None


class _Fold(Transformer):
    def __init__(self):
        self.changed = False

    def leave_Binary(self, node):
        if node.op in ("==", "!=") and _null(node.lhs) and _null(node.rhs) \
                and (_pointer(node.lhs) or _pointer(node.rhs)):
            self.changed = True
            return m.BoolLit(node.op == "==", _BOOL, node.span)
        if node.op in ("&&", "||"):
            left = _known(node.lhs)
            if left is not None and left == (node.op == "||"):  # true || b, false && b: b is never evaluated
                self.changed = True
                return m.BoolLit(left, _BOOL, node.span)
        return node

    def leave_Ternary(self, node):
        cond = _known(node.cond)
        if cond is None:
            return node
        self.changed = True
        return node.then if cond else node.other


def null_tests(fn: m.Function) -> m.Function:
    if fn.body is None or not any(isinstance(n, m.Binary) and n.op in ("==", "!=") and _null(n.lhs) and _null(n.rhs)
                                  for n in m.walk(fn.body)):
        return fn
    fold = _Fold()
    body = fold.transform(fn.body)
    return dataclasses.replace(fn, body=body) if fold.changed else fn
