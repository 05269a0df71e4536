"""Early returns as guards: ``if (c) return; rest`` becomes ``if (!c) { rest }`` in kernels, so
no statement after a thread's exit runs for it (TileLang phases cannot ``return``); a device
function's returns store its result instead. Spans are copied onto the nodes built."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import negate


def _ends_with_return(s: m.Stmt) -> bool:
    if isinstance(s, m.Return):
        return True
    if isinstance(s, m.Block) and s.stmts:
        return _ends_with_return(s.stmts[-1])
    if isinstance(s, m.If) and s.other is not None:
        return _ends_with_return(s.then) and _ends_with_return(s.other)
    return False


def _has_return(s) -> bool:
    return any(isinstance(n, m.Return) for n in m.walk(s))


def _span_over(stmts) -> "m.Span":
    first, last = stmts[0].span, stmts[-1].span
    return dataclasses.replace(first, end_line=last.end_line, end_col=last.end_col)


class _Guards:
    """Replace returns by guarding the statements after them.

    ``result`` names the variable a returned value is stored in (device functions); kernels
    return nothing and pass None.
    """

    def __init__(self, result: m.Ref | None) -> None:
        self.result = result

    def on_return(self, ret: m.Return) -> tuple[m.Stmt, ...]:
        if ret.value is None or self.result is None:
            return ()
        assign = m.Assign("=", self.result, ret.value, self.result.type, ret.span)
        return (m.ExprStmt(assign, ret.span),)

    def as_list(self, s) -> tuple:
        if s is None:
            return ()
        return s.stmts if isinstance(s, m.Block) else (s,)

    def block(self, stmts, span) -> m.Block:
        return m.Block(tuple(stmts), span)

    def guard(self, stmts: tuple[m.Stmt, ...]) -> tuple[m.Stmt, ...]:
        out: list[m.Stmt] = []
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(s, m.Return):
                out.extend(self.on_return(s))
                return tuple(out)  # nothing after a return runs
            if isinstance(s, m.Block) and _has_return(s):
                return tuple(out) + self.guard(s.stmts + rest)
            if isinstance(s, m.If) and _has_return(s):
                then = self.guard(self.as_list(s.then))
                then_exits = _ends_with_return(s.then)
                other_exits = s.other is not None and _ends_with_return(s.other)
                if then_exits and other_exits:
                    other = self.guard(self.as_list(s.other))
                    out.append(m.If(s.cond, self.block(then, s.then.span),
                                    self.block(other, s.other.span), s.span))
                    return tuple(out)
                if then_exits:
                    other = self.guard(self.as_list(s.other) + rest)
                    if not then:
                        if other:
                            out.append(m.If(negate(s.cond), self.block(other, _span_over(other)), None, s.span))
                        return tuple(out)
                    out.append(m.If(s.cond, self.block(then, s.then.span),
                                    self.block(other, _span_over(other)) if other else None, s.span))
                    return tuple(out)
                if other_exits:
                    other = self.guard(self.as_list(s.other))
                    then = self.guard(self.as_list(s.then) + rest)
                    out.append(m.If(s.cond, self.block(then, s.then.span),
                                    self.block(other, s.other.span), s.span))
                    return tuple(out)
                # a return nested deeper (inside loops): leave it for the caller to reject
            out.append(s)
        return tuple(out)


def returns_to_guards(fn: m.Function, result: m.Ref | None = None) -> m.Function:
    """Remove ``return`` statements by guarding what follows them.

    In a kernel (``result`` None) ``if (c) return; rest`` becomes ``if (!c) { rest }``. In a
    device function, ``return e`` becomes ``result = e`` and the rest is guarded likewise, so the
    function can end with a single ``return result``.
    """
    if fn.body is None or not _has_return(fn.body):
        return fn
    body = _Guards(result).guard(fn.body.stmts)
    return dataclasses.replace(fn, body=dataclasses.replace(fn.body, stmts=body))


def remaining_returns(fn: m.Function) -> list[m.Return]:
    return [n for n in m.walk(fn.body) if isinstance(n, m.Return)] if fn.body else []
