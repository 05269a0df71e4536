"""Stores whose value the place they store to determines: elements that meet there agree.

A map whose stores the lift cannot prove apart (:func:`~migrate.analysis.lift.map.check_stores`)
may still not depend on the order its elements run in: when every element that stores to a
place stores the same value there. That holds for the one store of a buffer whose value is a
function of the store index alone: ``out[idx] = 0`` (a fill), ``out[idx] = in[idx]`` (a copy),
``out[idx] = -in[idx - rows]`` (a boundary copy; tgvnn's ``idx = id % rows + id / rows * (rows *
cols) + ...`` separates elements only when ``cols >= 1``). Whichever of the elements that meet
runs last, the place ends up holding that value, as in any order the CUDA's threads could run.

:func:`stores_place_value` answers it for the stores of one buffer (its one store, or the lanes
of one record: ``out[idx * 2 + c]``): with each occurrence of the store's base index replaced,
the value is the same for every element (literals, parameters, launch sizes, pure math, and loads
of buffers the kernel does not store to, at such indices). :func:`store_values` first spells out
the locals the stores read as the values they hold there. The buffer must not be read (an
element could read a place before or after another element's store).
"""
from __future__ import annotations

import typing

from ...ir import model as m
from ...ir.exprs import assigned_names, strip_casts
from ...ir.visit import Transformer

#: calls whose result is a function of their arguments only
_PURE_CALLS = ("math", "conversion", "constructor")
_EXPRS = typing.get_args(m.Expr)


def _uniform(e, written: set[str]) -> bool:
    """``e`` has one value for every element: no thread, block or element index, no local, no
    store or impure call, and loads only of buffers nothing stores to, at such indices."""
    for n in m.walk(e):
        if isinstance(n, m.Builtin) and n.var in ("globalIdx", "threadIdx", "blockIdx"):
            return False
        if isinstance(n, m.Ref) and (n.kind not in ("param", "template", "enum", "constant", "function")
                                     or n.name in written):
            return False
        if isinstance(n, (m.Assign, m.MethodCall)) or isinstance(n, m.Unary) and n.op in ("++", "--", "&", "*"):
            return False
        if isinstance(n, m.Call) and n.kind not in _PURE_CALLS:
            return False
        if isinstance(n, m.Index):
            root = m.access_root(n, through=(m.Cast, m.Member, m.Index))
            if root is None or root.kind != "param":
                return False
    return True


class _Substitute(Transformer):
    """Each subexpression equal to ``key`` (through casts), outermost first, as ``placeholder``."""

    def __init__(self, key: str, placeholder) -> None:
        self.k, self.placeholder = key, placeholder

    def transform(self, node):
        if isinstance(node, _EXPRS) and m.key(strip_casts(node)) == self.k:
            return self.placeholder
        return super().transform(node)


def _split(e) -> tuple[object, int, int]:
    """(base, k, c) of an index ``base * k + c`` (k and c constants; 1 and 0 where absent)."""
    e = strip_casts(e)
    c = 0
    if isinstance(e, m.Binary) and e.op == "+" and isinstance(strip_casts(e.rhs), m.IntLit):
        c, e = strip_casts(e.rhs).value, strip_casts(e.lhs)
    if isinstance(e, m.Binary) and e.op == "*" and isinstance(strip_casts(e.rhs), m.IntLit):
        return strip_casts(e.lhs), strip_casts(e.rhs).value, c
    return e, 1, c


def stores_place_value(stores: list, written: set[str]) -> bool:
    """Whether the stores of one buffer (``(index, op, value)`` each, their locals spelled out
    by :func:`store_values`) store values their places determine (module doc). Several stores
    are the lanes of one record (``out[idx * 2 + 0]`` and ``out[idx * 2 + 1]``, a float2 split
    into lanes): one base ``idx``, offsets below the stride that tell them apart, each value a
    function of the base. ``written``: the buffers the kernel stores to."""
    if not stores or any(op != "=" or value is None for _i, op, value in stores):
        return False
    splits = [(_split(index), value) for index, _op, value in stores]
    (base, k, _c), _v = splits[0]
    if k < 1:  # base * 0: one place for every element
        return False
    offsets = [c for (b, kk, c), _v in splits if kk == k and m.key(b) == m.key(base) and 0 <= c < k]
    if len(offsets) != len(splits) or len(set(offsets)) != len(offsets):
        return False
    placeholder = m.IntLit(0, "0", base.type, base.span)
    return all(_uniform(_Substitute(m.key(base), placeholder).transform(v), written) for _s, v in splits)


class _Expand(Transformer):
    def __init__(self, env: dict) -> None:
        self.env = env

    def leave_Ref(self, node):
        value = self.env.get(node.name) if node.kind == "local" else None
        return value if value is not None else node


def store_values(stmts) -> dict[str, list]:
    """Per buffer, each store to it as ``(index, op, value)`` with the locals they read spelled
    out as the values those hold at the store (a run through the statements in order: a local
    assigned in a branch or a loop, or whose address is taken, holds no known value after it)."""
    out: dict[str, list] = {}
    addressed = {strip_casts(n.operand).name for s in stmts for n in m.walk(s)
                 if isinstance(n, m.Unary) and n.op == "&" and isinstance(strip_casts(n.operand), m.Ref)}

    def expand(e, env):
        return _Expand(env).transform(e) if e is not None else None

    def record(node, env):
        for n in m.walk(node):
            target = m.store_target(n)
            if isinstance(target, m.Index):
                root = m.access_root(target.base, through=(m.Cast, m.Member))
                if root is not None and root.kind == "param":
                    out.setdefault(root.name, []).append(
                        (expand(target.index, env), n.op,
                         expand(n.value, env) if isinstance(n, m.Assign) else None))

    def forget(node, env):
        for name in assigned_names(node):
            env[name] = None

    def step(s, env):
        if isinstance(s, m.DeclStmt):
            for d in s.decls:
                if d.init is not None:
                    record(d.init, env)
                env[d.name] = expand(d.init, env) if d.init is not None and d.name not in addressed \
                    and isinstance(d.type, m.Scalar) and not assigned_names(d.init) else None
        elif isinstance(s, m.ExprStmt):
            record(s.expr, env)
            e = s.expr
            forget(e, env)
            if isinstance(e, m.Assign) and e.op == "=" and isinstance(e.target, m.Ref) \
                    and e.target.name not in addressed and not assigned_names(e.value):
                env[e.target.name] = expand(e.value, env)
        elif isinstance(s, m.Block):
            for x in s.stmts:
                step(x, env)
        elif isinstance(s, m.If):
            record(s.cond, env)
            for branch in (s.then, s.other):
                if branch is not None:
                    inner = dict(env)
                    step(branch, inner)
            forget(s, env)
        elif isinstance(s, m.For):
            if s.init is not None:
                step(s.init, env)
            forget(s, env)
            for part in (s.cond, s.step):
                if part is not None:
                    record(part, env)
            step(s.body, dict(env))
        elif isinstance(s, (m.While, m.DoWhile)):
            forget(s, env)
            record(s.cond, env)
            step(s.body, dict(env))
        else:  # a switch, a return ...: its stores with what no branch or loop of it changes
            forget(s, env)
            record(s, env)

    env: dict = {}
    for s in stmts:
        step(s, env)
    return out
