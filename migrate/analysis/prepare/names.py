"""Every local variable of a function gets a name of its own that is a valid, non-reserved
Python identifier (shadowed and reused C names are renamed; spans are kept)."""
from __future__ import annotations

import dataclasses
import keyword

from ...ir import model as m
from ...ir.names import RESERVED


def _py_name(name: str, taken: set[str]) -> str:
    base = name if name.isidentifier() and not keyword.iskeyword(name) and name not in RESERVED \
        else f"{name}_"
    candidate, n = base, 2
    while candidate in taken:
        candidate = f"{base}_{n}"
        n += 1
    return candidate


def unique_names(fn: m.Function, taken: set[str] | None = None) -> m.Function:
    """Rename locals so that each declaration has a distinct, safe Python name."""
    taken = set(taken or ())
    renamed_params = {}
    for p in fn.params:
        renamed_params[p.name] = _py_name(p.name, taken)
        taken.add(renamed_params[p.name])
    scopes: list[dict[str, str]] = [dict(renamed_params)]

    def lookup(name: str) -> str:
        for scope in reversed(scopes):
            if name in scope:
                return scope[name]
        return name

    def expr(e):
        if e is None:
            return None
        if isinstance(e, m.Ref) and e.kind in ("local", "shared", "param"):
            new = lookup(e.name)
            return e if new == e.name else dataclasses.replace(e, name=new)
        return m.map_children(e, expr)

    def decl(d: m.VarDecl) -> m.VarDecl:
        init = expr(d.init)
        new = _py_name(d.name, taken)
        taken.add(new)
        scopes[-1][d.name] = new
        return dataclasses.replace(d, name=new, init=init)

    def stmt(s):
        if s is None:
            return None
        if isinstance(s, m.DeclStmt):
            return dataclasses.replace(s, decls=tuple(decl(d) for d in s.decls))
        if isinstance(s, m.Block):
            scopes.append({})
            out = dataclasses.replace(s, stmts=tuple(stmt(x) for x in s.stmts))
            scopes.pop()
            return out
        if isinstance(s, m.For):
            scopes.append({})
            out = dataclasses.replace(s, init=stmt(s.init), cond=expr(s.cond), step=expr(s.step),
                                      body=stmt(s.body))
            scopes.pop()
            return out
        if isinstance(s, m.ExprStmt):
            return dataclasses.replace(s, expr=expr(s.expr))
        if isinstance(s, m.If):
            return dataclasses.replace(s, cond=expr(s.cond), then=stmt(s.then), other=stmt(s.other))
        if isinstance(s, m.While):
            return dataclasses.replace(s, cond=expr(s.cond), body=stmt(s.body))
        if isinstance(s, m.DoWhile):
            return dataclasses.replace(s, body=stmt(s.body), cond=expr(s.cond))
        if isinstance(s, m.Switch):
            return dataclasses.replace(s, cond=expr(s.cond), body=stmt(s.body))
        if isinstance(s, m.Case):
            return dataclasses.replace(s, value=expr(s.value), body=stmt(s.body))
        if isinstance(s, m.Return):
            return dataclasses.replace(s, value=expr(s.value))
        return s

    params = tuple(dataclasses.replace(p, name=renamed_params[p.name]) for p in fn.params)
    if fn.body is None:
        return dataclasses.replace(fn, params=params)
    return dataclasses.replace(fn, params=params, body=stmt(fn.body))
