"""Conditions with effects C evaluates only sometimes, as statements that compute a test: the way
real kernels walk lists and counters in their conditions,

    while (pidx >= 2 && (xRange = fabs(e[p[pidx - 1]] - e[p[pidx]])) >= range) {...}
    if ((ch >= n) && ((mass[k] = posMass[ch].w) < 0.0f)) {...}
    if (++accum == NUMTHREADS) accum = 0;
    while (D_getState(par, state, t++)) {...}
    if ((is_interior(i, j) && !can_pair(i, j, n, s)) || ...) {...}   (a device function that is
        no expression of its arguments, right of && or ||, is an effect too: left of one, the
        emitter calls its macro before the test, as C does)

An ``if`` whose condition holds an assignment or a step right of ``&&``/``||`` (C evaluates it
only when the left side did not decide), or a step anywhere, tests a local computed first, one
operand at a time: ``bool test = A; if (test) test = B; if (test) ...`` (``if (!test)`` for
``||``); a ``while`` does the same at the top of ``while (true) { ...; if (!test) break; body }``
(a ``continue`` still reaches the test), and a ``do``/``while`` whose condition has any effect
(``do {...} while (++ip < natpro);``) computes its test at the end of ``while (true) { body; ...;
if (!test) break; }`` where its body has no ``continue`` of its own. The assignments and steps
left in those statements are always evaluated there, so the passes after this one (steps and
assignments used as values) take them. Conditions whose effects are always evaluated, or that
have none, are left as they are.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...compat.catalog import CACHED_LOADS
from ..facts.calls import one_expression_functions
from .renaming import rename_reassigned_locals
from ...ir.exprs import has_continue
from ...ir.visit import expand_statements

BOOL = m.Scalar("bool")


def _effects(e, opaque=frozenset()) -> bool:
    """An assignment or a step in ``e``, or a call of a device function of ``opaque``: one that
    is no expression of its arguments, so runs statements (``can_pair(i, j)`` swapping its
    arguments, then testing memory), which no expression can stand for where C may skip it."""
    return any(isinstance(n, m.Assign) or (isinstance(n, m.Unary) and n.op in ("++", "--"))
               or isinstance(n, m.Call) and n.kind == "device" and n.callee in opaque for n in m.walk(e))


def _device_call_in_chain(cond) -> bool:
    return any(isinstance(n, m.Binary) and n.op in ("&&", "||") and any(
        isinstance(c, m.Call) and c.kind == "device" for c in m.walk(n)) for n in m.walk(cond))


def _splits(e, opaque, left: bool = False) -> bool:
    """``e`` is a ``&&``/``||`` whose operands are tested one at a time: an effect right of it,
    a call of an ``opaque`` device function among them (a statement can call it where C does;
    TileLang's ``and``/``or`` would run its macro's statements whatever the left side gives),
    with ``left`` one left of it too (an ``if``'s condition prints no macro inside and/or; a
    loop's test is computed in a statement of its own, which calls a macro on the left first)."""
    return isinstance(e, m.Binary) and e.op in ("&&", "||") and (
        _effects(e.rhs, opaque) or left and bool(opaque) and any(
            isinstance(n, m.Call) and n.kind == "device" and n.callee in opaque for n in m.walk(e.lhs)))


def _needs_tests(cond, opaque=frozenset(), left: bool = False) -> bool:
    """An effect (or an opaque call) right of ``&&``/``||`` (with ``left``, either side), or a
    step anywhere in ``cond``."""
    if any(isinstance(n, m.Unary) and n.op in ("++", "--") for n in m.walk(cond)):
        return True
    return any(_splits(n, opaque, left) for n in m.walk(cond))


class _Tests:
    def __init__(self, fn: m.Function, opaque=frozenset()) -> None:
        self.opaque = opaque
        self.left = False  # an if's condition being computed: opaque calls left of && too
        self.taken = {n.name for n in m.walk(fn) if isinstance(n, (m.Ref, m.VarDecl))} | {p.name for p in fn.params}
        self.count = 0

    def fresh(self) -> str:
        while True:
            self.count += 1
            name = f"test_{self.count}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def compute(self, cond, test: m.Ref) -> list:
        """Statements leaving ``cond``'s truth in ``test``, each operand of ``&&``/``||`` evaluated
        only where C evaluates it."""
        if _splits(cond, self.opaque, self.left):
            first = self.compute(cond.lhs, test)
            go = test if cond.op == "&&" else m.Unary("!", test, False, BOOL, cond.span)
            rest = self.compute(cond.rhs, test)
            return first + [m.If(go, m.Block(tuple(rest), cond.span), None, cond.span)]
        if isinstance(cond, m.Unary) and cond.op == "!" and any(_splits(n, self.opaque, self.left)
                                                                for n in m.walk(cond.operand)):
            flip = m.Unary("!", test, False, BOOL, cond.span)  # !(a && f(x)): the test, then its negation
            return self.compute(cond.operand, test) + [m.ExprStmt(m.Assign("=", test, flip, BOOL, cond.span), cond.span)]
        value = cond if isinstance(cond.type, m.Scalar) and cond.type.dtype == "bool" else \
            m.Cast(BOOL, cond, "implicit", BOOL, cond.span)
        return [m.ExprStmt(m.Assign("=", test, value, BOOL, cond.span), cond.span)]

    def tested(self, cond, span) -> tuple[list, m.Ref]:
        name = self.fresh()
        test = m.Ref(name, "local", BOOL, span)
        decl = m.DeclStmt((m.VarDecl(name, BOOL, "local", False, None, span),), span)
        return [decl] + self.compute(cond, test), test

    def statement(self, s) -> list | None:
        if isinstance(s, m.If) and _needs_tests(s.cond, self.opaque, left=True) and _scalar(s.cond):
            self.left = True
            pre, test = self.tested(s.cond, s.span)
            self.left = False
            return pre + [dataclasses.replace(s, cond=test)]
        if isinstance(s, m.While) and _needs_tests(s.cond, self.opaque) and _scalar(s.cond) or \
                isinstance(s, m.DoWhile) and _effects(s.cond) and _scalar(s.cond) \
                and not has_continue(s.body):
            pre, test = self.tested(s.cond, s.span)
            return [tested_loop(s, pre, test)]
        return None


def tested_loop(loop, pre: list, test: m.Ref) -> m.While:
    """``loop`` (a while or do/while loop) as ``while (true)`` whose test ``test`` the statements
    ``pre`` compute, where C evaluates the condition: at the top of a while loop's body (a
    ``continue`` still reaches it), at the end of a do/while's (whose body must have no
    ``continue`` of its own), and a break where it fails."""
    span = loop.span
    stop = m.If(m.Unary("!", test, False, BOOL, span), m.Block((m.Break(span),), span), None, span)
    stmts = tuple(pre) + (stop, loop.body) if isinstance(loop, m.While) else (loop.body,) + tuple(pre) + (stop,)
    return m.While(m.BoolLit(True, BOOL, span), m.Block(stmts, span), span)


def _scalar(cond) -> bool:
    """Every operand of the ``&&``/``||`` chain is a number (a pointer's truth is left alone), or
    a pointer assigned there (``i < n && (v1 = array_val(v, i, k))``: the assignment becomes a
    statement and the test reads the pointer's truth, which the pointer passes follow)."""
    if isinstance(cond, m.Binary) and cond.op in ("&&", "||"):
        return _scalar(cond.lhs) and _scalar(cond.rhs)
    while isinstance(cond, m.Cast) and cond.style == "implicit":
        cond = cond.operand
    return isinstance(cond.type, m.Scalar) or isinstance(cond, m.Assign) and cond.op == "=" \
        and isinstance(cond.type, m.Pointer) and isinstance(cond.target, m.Ref)


def effect_conditions_as_tests(fn: m.Function, device: dict[str, m.Function] | None = None) -> m.Function:
    """``fn`` with its conditions with effects as tests (module docstring); the calls of
    ``device`` functions that are no expression of their arguments count as effects."""
    if fn.body is None:
        return fn
    opaque = frozenset()
    if device and any(isinstance(n, (m.If, m.While, m.DoWhile)) and _device_call_in_chain(n.cond)
                      for n in m.walk(fn.body)):
        # judged as the emitter judges them: each straight-line reassignment a value of its own
        values = {name: rename_reassigned_locals(f) for name, f in device.items()}
        opaque = frozenset(device) - one_expression_functions(values, CACHED_LOADS)
    if not any(isinstance(n, m.If) and _needs_tests(n.cond, opaque, left=True)
               or isinstance(n, m.While) and _needs_tests(n.cond, opaque)
               or isinstance(n, m.DoWhile) and _effects(n.cond) for n in m.walk(fn.body)):
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _Tests(fn, opaque).statement, every=True))
