"""Device-side ``memcpy`` and ``memset`` of typed arrays, as element loops: ``memcpy(y, ytemp, N *
sizeof(double));`` between arrays (or pointers) of ``double`` becomes ``for (int k = 0; k < N; k++)
y[k] = ytemp[k];``, and ``memset(acc, 0, sizeof(acc));`` a loop storing zeros.

Only a call that is a statement of its own, whose byte count is a whole number of the elements
(``N * sizeof(E)``, ``sizeof(E) * N``, ``sizeof(a)`` of an array of ``E``), whose pointers hold
the same scalar element type and have no side effects; ``memset`` only with the value 0 (every
type's zero is all zero bytes) or on one-byte elements. Anything else is left as it is, and the
compat table names the call. Runs on kernels and on device functions."""
from __future__ import annotations

import dataclasses

from ...dtypes import SIZES
from ...ir import model as m
from ...ir.exprs import pure, strip_implicit_casts
from ...ir.names import fresh
from ...ir.visit import expand_statements

INDEX = m.Scalar("int32")


def _element(e: m.Expr) -> m.Scalar | None:
    """The scalar an array or pointer argument holds (``double ytemp[6]``, ``double* y``)."""
    t = getattr(e, "type", None)
    inner = t.pointee if isinstance(t, m.Pointer) else t.element if isinstance(t, m.Array) else None
    if isinstance(inner, m.Scalar) and inner.dtype in SIZES:
        return inner
    return None


def _count(nbytes: m.Expr, size: int, dst: m.Expr) -> m.Expr | None:
    """How many elements of ``size`` bytes ``nbytes`` counts, as an int32 expression; None unless
    it is a whole number of them by its form."""
    nbytes = strip_implicit_casts(nbytes)
    if isinstance(nbytes, m.SizeOf) and nbytes.value is not None:
        if isinstance(dst.type, m.Array) and nbytes.value == SIZES.get(getattr(dst.type.element, "dtype", ""), 0) \
                * (dst.type.extent or 0) and nbytes.value % size == 0:
            return m.IntLit(nbytes.value // size, str(nbytes.value // size), INDEX, nbytes.span)
        return None
    if isinstance(nbytes, m.IntLit) and nbytes.value % size == 0:
        return m.IntLit(nbytes.value // size, str(nbytes.value // size), INDEX, nbytes.span)
    if isinstance(nbytes, m.Binary) and nbytes.op == "*":
        for sizeof, other in ((nbytes.rhs, nbytes.lhs), (nbytes.lhs, nbytes.rhs)):
            sizeof = strip_implicit_casts(sizeof)
            if isinstance(sizeof, m.SizeOf) and sizeof.value == size:
                other = strip_implicit_casts(other)
                return other if other.type == INDEX else m.Cast(INDEX, other, "implicit", INDEX, other.span)
    return None


class _Copies:
    def __init__(self, fn: m.Function) -> None:
        self.taken = {n.name for n in m.walk(fn) if isinstance(n, (m.Ref, m.VarDecl))} | {p.name for p in fn.params}

    def statement(self, s) -> list | None:
        call = s.expr if isinstance(s, m.ExprStmt) else None
        if not (isinstance(call, m.Call) and call.callee in ("memcpy", "memset") and len(call.args) == 3):
            return None
        dst, src, nbytes = (strip_implicit_casts(a) for a in call.args)
        element = _element(dst)
        if element is None or not pure(dst, math=False) or not pure(nbytes, math=False):
            return None
        size = SIZES[element.dtype]
        if call.callee == "memcpy":
            if _element(src) != element or not pure(src, math=False):
                return None
        elif not (isinstance(src, m.IntLit) and (src.value == 0 or size == 1)):
            return None
        count = _count(nbytes, size, dst)
        if count is None:
            return None
        name = fresh("k", self.taken)
        k = m.Ref(name, "local", INDEX, s.span)
        value = m.Index(src, k, element, s.span) if call.callee == "memcpy" else \
            m.Cast(element, src, "implicit", element, s.span)
        store = m.ExprStmt(m.Assign("=", m.Index(dst, k, element, s.span), value, element, s.span), s.span)
        zero = m.IntLit(0, "0", INDEX, s.span)
        init = m.DeclStmt((m.VarDecl(name, INDEX, "local", False, zero, s.span),), s.span)
        step = m.Unary("++", k, False, INDEX, s.span)
        loop = m.For(init, m.Binary("<", k, count, m.Scalar("bool"), s.span), step,
                     m.Block((store,), s.span), (), s.span)
        return [loop]


def memory_copies(fn: m.Function) -> m.Function:
    """``fn`` with each device-side memcpy/memset of typed arrays as an element loop (see the
    module docstring)."""
    if fn.body is None or not any(isinstance(n, m.Call) and n.callee in ("memcpy", "memset")
                                  for n in m.walk(fn.body)):
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _Copies(fn).statement))
