"""Early returns as guards: ``if (c) return; rest`` becomes ``if (!c) { rest }`` in kernels, so
no statement after a thread's exit runs for it (TileLang phases cannot ``return``); a device
function's returns store its result instead; a ``switch`` whose case returns (a hash's ``case 0:
return c;``) is guarded as the ifs of its cases. Spans are copied onto the nodes built."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import negate
from ...ir.loops import NoTileLangForm
from ...ir.names import fresh
from ...ir.switches import as_ifs


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

    def __init__(self, result: m.Ref | None, flag: m.Ref | None = None, sets_flag: bool = False) -> None:
        self.result = result
        self.flag = flag  # set where a return inside an if's branch must also stop what follows the if
        self.sets_flag = sets_flag
        self.flag_used = False

    def on_return(self, ret: m.Return) -> tuple[m.Stmt, ...]:
        out = ()
        if ret.value is not None and self.result is not None:
            out = (m.ExprStmt(m.Assign("=", self.result, ret.value, self.result.type, ret.span), ret.span),)
        if self.sets_flag:
            one = m.IntLit(1, "1", m.Scalar("int32"), ret.span)
            out += (m.ExprStmt(m.Assign("=", self.flag, one, self.flag.type, ret.span), ret.span),)
        return out

    def branch_returns(self, s: m.If, rest: tuple) -> tuple | None:
        """``if (c) { a; if (d) return; b; } rest`` (a return inside a branch that the branch does
        not end with): the branches guarded with the flag set where they return, then ``if (flag)
        return;`` guarding ``rest``. None where there is no flag to use."""
        if self.flag is None:
            return None
        inner = _Guards(self.result, self.flag, True)
        then = inner.guard(self.as_list(s.then))
        other = inner.guard(self.as_list(s.other)) if s.other is not None else ()
        if any(isinstance(n, m.Return) for st in then + other for n in m.walk(st)):
            return None  # a return inside a loop there: the caller refuses it
        self.flag_used = True
        branch = m.If(s.cond, self.block(then, s.then.span),
                      self.block(other, s.other.span) if other else None, s.span)
        leave = m.If(self.flag, m.Block((m.Return(None, s.span),), s.span), None, s.span)
        return (branch,) + self.guard((leave,) + rest)

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
            if isinstance(s, m.Switch) and _has_return(s):  # case 0: return c; -- its cases as ifs, guarded
                try:
                    return tuple(out) + self.guard(tuple(as_ifs(s)) + rest)
                except NoTileLangForm:
                    pass  # a switch the printer refuses as well: left for it to name
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
                flagged = self.branch_returns(s, rest)
                if flagged is not None:
                    return tuple(out) + flagged
                # a return nested deeper (inside loops): leave it for the caller to reject
            out.append(s)
        return tuple(out)


_LOOPS = (m.For, m.While, m.DoWhile)


class _LoopReturns:
    """A ``return`` inside a loop as ``flag = 1; break;`` (its value stored first), each loop that
    holds one followed by ``if (flag) break;`` inside another loop, else by ``if (flag) return;``,
    which :class:`_Guards` then turns into a guard of what follows. A return inside a ``switch``
    inside a loop is left (``break`` would leave the switch only)."""

    def __init__(self, result: m.Ref | None, flag: m.Ref) -> None:
        self.flag = flag
        self.returning = _Guards(result, flag, sets_flag=True)  # its on_return: store, set the flag
        self.used = False

    def stmts(self, stmts, in_loop: bool) -> tuple:
        out = []
        for s in stmts:
            out.extend(self.stmt(s, in_loop))
        return tuple(out)

    def body(self, s, in_loop: bool):
        if s is None:
            return None
        inner = self.stmt(s, in_loop)
        return inner[0] if len(inner) == 1 and isinstance(inner[0], m.Block) else m.Block(tuple(inner), s.span)

    def stmt(self, s, in_loop: bool) -> list:
        if not _has_return(s):
            return [s]
        if isinstance(s, m.Return) and in_loop:
            self.used = True
            return list(self.returning.on_return(s)) + [m.Break(s.span)]
        if isinstance(s, m.Block):
            return [dataclasses.replace(s, stmts=self.stmts(s.stmts, in_loop))]
        if isinstance(s, m.If):
            return [dataclasses.replace(s, then=self.body(s.then, in_loop), other=self.body(s.other, in_loop))]
        if isinstance(s, _LOOPS):
            if any(isinstance(n, m.Switch) and _has_return(n) for n in m.walk(s.body)):
                return [s]  # break would leave the switch, not the loop: the caller refuses it
            loop = dataclasses.replace(s, body=self.body(s.body, True))
            exit_stmt = m.Break(s.span) if in_loop else m.Return(None, s.span)
            return [loop, m.If(self.flag, m.Block((exit_stmt,), s.span), None, s.span)]
        return [s]


def returns_to_guards(fn: m.Function, result: m.Ref | None = None) -> m.Function:
    """Remove ``return`` statements by guarding what follows them.

    In a kernel (``result`` None) ``if (c) return; rest`` becomes ``if (!c) { rest }``. In a
    device function, ``return e`` becomes ``result = e`` and the rest is guarded likewise, so the
    function can end with a single ``return result``. A return inside a loop leaves the loop
    through a flag first (:class:`_LoopReturns`).
    """
    if fn.body is None or not _has_return(fn.body):
        return fn
    # one flag, "the function has returned", for the returns inside loops and inside branches
    taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))} | {p.name for p in fn.params}
    flag = m.Ref(fresh(f"{result.name}_left" if result is not None else "x_left", taken), "local",
                 m.Scalar("int32"), fn.body.span)
    loops = _LoopReturns(result, flag)
    stmts = loops.stmts(fn.body.stmts, False) \
        if any(isinstance(n, _LOOPS) and _has_return(n.body) for n in m.walk(fn.body)) else fn.body.stmts
    guards = _Guards(result, flag)
    body = guards.guard(stmts)
    if loops.used or guards.flag_used:
        zero = m.IntLit(0, "0", m.Scalar("int32"), fn.body.span)
        body = (m.DeclStmt((m.VarDecl(flag.name, flag.type, "local", False, zero, fn.body.span),), fn.body.span),) + body
    return dataclasses.replace(fn, body=dataclasses.replace(fn.body, stmts=body))


def remaining_returns(fn: m.Function) -> list[m.Return]:
    return [n for n in m.walk(fn.body) if isinstance(n, m.Return)] if fn.body else []
