"""Model-to-model rewrites that prepare a function for emission, one small pass each.

- :func:`unique_names` — every local variable of a function gets a name of its own that is a
  valid, non-reserved Python identifier (shadowed and reused C names are renamed).
- :func:`returns_to_guards` — ``if (c) return; rest`` becomes ``if (!c) { rest }`` in kernels,
  so no statement after a thread's exit runs for it (TileLang phases cannot ``return``).
- :func:`pointer_aliases` — local pointers derived from a buffer (``const float* row = x + r*n``)
  are folded into the buffer's index (``row[j]`` → ``x[r*n + j]``).

Each pass copies spans onto the nodes it builds.
"""
from __future__ import annotations

import dataclasses
import keyword

from ...ir import model as m
from ...ir.exprs import negate
from ...ir.names import RESERVED
from ...ir.visit import Transformer

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


@dataclasses.dataclass(frozen=True)
class Alias:
    buffer: str  # the parameter it points into
    offset: m.Expr | None


def pointer_aliases(fn: m.Function) -> tuple[m.Function, dict[str, Alias], list[m.VarDecl]]:
    """Fold local pointers derived from buffer parameters into index expressions.

    Returns the rewritten function, the aliases found, and the pointer declarations that could
    not be folded (reassigned pointers, pointers into locals).
    """
    buffers = {p.name: "param" for p in fn.params if isinstance(p.type, m.Pointer)}
    for node in m.walk(fn.body) if fn.body else ():  # views into __shared__ arrays too
        if isinstance(node, m.VarDecl) and node.storage in ("shared", "extern_shared") \
                and isinstance(node.type, m.Array) and not isinstance(node.type.element, m.Array):
            buffers[node.name] = "shared"
    assigned = {n.target.name for n in m.walk(fn.body) if isinstance(n, m.Assign)
                and isinstance(n.target, m.Ref)} if fn.body else set()
    aliases: dict[str, Alias] = {}
    unresolved: list[m.VarDecl] = []
    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.VarDecl) and isinstance(node.type, m.Pointer) and node.storage == "local":
            alias = _as_alias(node.init, buffers, aliases) if node.name not in assigned else None
            if alias is None:
                unresolved.append(node)
            else:
                aliases[node.name] = alias
    if not aliases:
        return fn, aliases, unresolved

    class Fold(Transformer):
        def leave_Index(self, node):
            base = node.base
            if isinstance(base, m.Ref) and base.name in aliases:
                alias = aliases[base.name]
                index = node.index if alias.offset is None else m.Binary(
                    "+", alias.offset, node.index, node.index.type, node.span)
                return dataclasses.replace(node, base=dataclasses.replace(base, name=alias.buffer,
                                                                          kind=buffers[alias.buffer]),
                                           index=index)
            return node

        def leave_Unary(self, node):  # *p  ->  p[0]
            if node.op == "*" and isinstance(node.operand, m.Ref) and node.operand.name in aliases:
                zero = m.IntLit(0, "0", m.Scalar("int32"), node.span)
                return self.leave_Index(m.Index(node.operand, zero, node.type, node.span))
            return node

        def leave_DeclStmt(self, node):
            kept = tuple(d for d in node.decls if d.name not in aliases)
            return dataclasses.replace(node, decls=kept) if kept else m.Empty(node.span)

    return Fold().transform(fn), aliases, unresolved


def _as_alias(init, buffers, aliases) -> Alias | None:
    while isinstance(init, m.Cast) and isinstance(init.type, m.Pointer):
        init = init.operand
    if isinstance(init, m.Ref) and init.name in buffers:
        return Alias(init.name, None)
    if isinstance(init, m.Ref) and init.name in aliases:
        return aliases[init.name]
    if isinstance(init, m.Binary) and init.op in ("+", "-"):
        base = _as_alias(init.lhs, buffers, aliases)
        if base is not None:
            off = init.rhs if init.op == "+" else m.Unary("-", init.rhs, False, init.rhs.type, init.rhs.span)
            return Alias(base.buffer, off if base.offset is None else
                         m.Binary("+", base.offset, off, off.type, init.span))
    if isinstance(init, m.Unary) and init.op == "&" and isinstance(init.operand, m.Index):
        base = _as_alias(init.operand.base, buffers, aliases)
        if base is not None:
            idx = init.operand.index
            return Alias(base.buffer, idx if base.offset is None else
                         m.Binary("+", base.offset, idx, idx.type, init.span))
    return None
