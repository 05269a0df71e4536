"""A ``switch`` as the cases C runs: each case's statements from its label (falling through into the
next case's up to a ``break``), the ``break`` dropped; what the printer prints as an if-chain and
what :func:`~migrate.analysis.prepare.returns.returns_to_guards` guards when a case returns."""
from __future__ import annotations

import dataclasses

from . import model as m
from .exprs import assigned_names, pure
from .loops import NoTileLangForm


def leaves(s) -> bool:
    """Whether a case's last statement leaves it: break (the case's own, which the if-chain drops),
    return, or a continue of the loop around (alone or at the end of a block: a strided loop's
    continue steps first; a break inside a block would leave the loop once printed)."""
    if isinstance(s, m.Break):
        return True
    while isinstance(s, m.Block) and s.stmts:
        s = s.stmts[-1]
    return isinstance(s, (m.Return, m.Continue))


def switch_cases(s: m.Switch):
    """The cases of a switch as (values or None for default, statements, span), each case's
    statements those C runs from its label: its own, then, where it falls through, the next
    case's (``case 14: k ^= t[13] << 40;`` into ``case 13: ...``, a hash's tail), up to the
    break, which is dropped (also one closing a case's block, ``case 1: { ...; break; }``); an
    early ``if (c) break;`` among a case's statements guards the rest (``if (!(c)) { rest }``)."""
    body = s.body.stmts if isinstance(s.body, m.Block) else (s.body,)
    cases = []
    current = None
    for st in body:
        if isinstance(st, m.Case):
            inner = st
            values = []
            while isinstance(inner, m.Case):
                values.append(inner.value)
                inner = inner.body
            vals = None if any(v is None for v in values) else tuple(values)
            current = (vals, [inner], st.span)
            cases.append(current)
        elif current is not None:
            current[1].append(st)
        else:
            raise NoTileLangForm("statement before the first case of a switch", st.span)
    own = []
    for values, stmts, span in cases:
        stmts, ended = case_body(stmts)
        if any(_own_breaks(st) for st in stmts):
            raise NoTileLangForm("break inside a switch case body", span)
        own.append((values, stmts, ended or bool(stmts) and leaves(stmts[-1]), span))
    out: list = []
    run: list = []  # what C runs from the next case's label on
    for values, stmts, ends, span in reversed(own):
        run = list(stmts) if ends else list(stmts) + run
        out.append((values, run, span))
    return out[::-1]


def _own_breaks(s) -> bool:
    """Whether ``s`` holds a break of the switch around it: one not inside a loop or a switch of
    its own (``case 14: switch (q) { case 3: ...; break; }``: the inner switch's breaks are its own)."""
    if isinstance(s, m.Break):
        return True
    if isinstance(s, (m.For, m.While, m.DoWhile, m.Switch)):
        return False
    return any(_own_breaks(c) for c in m.children(s))


def case_body(stmts: list) -> tuple[list, bool]:
    """A case's statements without the break that ends it (at its end, or closing its last
    block), each ``if (c) break;`` guarding the statements after it; and whether a break ended
    it. A loop's own breaks are left to the loop."""
    stmts = list(stmts)
    ended = False
    if stmts and isinstance(stmts[-1], m.Break):
        stmts.pop()
        ended = True
    elif stmts and isinstance(stmts[-1], m.Block) and stmts[-1].stmts:
        inner, ended = case_body(list(stmts[-1].stmts))
        if ended:
            stmts[-1] = dataclasses.replace(stmts[-1], stmts=tuple(inner))
    for i, st in enumerate(stmts):
        if isinstance(st, m.If) and st.other is None and (
                isinstance(st.then, m.Break) or isinstance(st.then, m.Block) and len(st.then.stmts) == 1
                and isinstance(st.then.stmts[0], m.Break)):
            rest, _ = case_body(stmts[i + 1:]) if i + 1 < len(stmts) else ([], False)
            skip = m.Unary("!", st.cond, False, m.Scalar("bool"), st.cond.span)
            guarded = [m.If(skip, m.Block(tuple(rest), st.span), None, st.span)] if rest else []
            return stmts[:i] + guarded, True
    return stmts, ended


def as_ifs(s: m.Switch) -> list[m.Stmt]:
    """The switch as ifs: one per case testing its values, the default last testing none of them;
    flat (each case an ``if`` of its own) where the subject is pure and no case changes what it
    reads, else an if/else chain."""
    cases = switch_cases(s)
    read = {n.name for n in m.walk(s.cond) if isinstance(n, m.Ref)}
    flat = pure(s.cond) and not any(read & assigned_names(b) for _v, body, _s in cases for b in body)
    boolean = m.Scalar("bool")

    def test(values, span):
        out = None
        for v in values:
            if isinstance(v, m.IntLit) and isinstance(s.cond.type, m.Scalar):
                v = dataclasses.replace(v, type=s.cond.type)  # a case label has the subject's type
            t = m.Binary("==", s.cond, v, boolean, span)
            out = t if out is None else m.Binary("||", out, t, boolean, span)
        return out

    tests = [(test(values, span), m.Block(tuple(body), span), span) for values, body, span in cases if values]
    default = next(((m.Block(tuple(body), span), span) for values, body, span in cases if values is None), None)
    if flat:
        out: list[m.Stmt] = [m.If(t, b, None, span) for t, b, span in tests]
        if default is not None:
            if tests:
                any_case = tests[0][0]
                for t, _b, span in tests[1:]:
                    any_case = m.Binary("||", any_case, t, boolean, span)
                out.append(m.If(m.Unary("!", any_case, False, boolean, default[1]), default[0], None, default[1]))
            else:
                out.append(default[0])
        return out
    chain = default[0] if default is not None else None
    for t, b, span in reversed(tests):
        chain = m.If(t, b, chain, span)
    return [chain] if chain is not None else []
