"""Pointers that move as integer offsets: a pointer parameter or local view into a buffer that the
body steps (``src += blockIdx.y * pitch + threadIdx.x;``, ``++p``, ``q = q + stride``, ``q =
x + base``) becomes an integer local holding its offset into that buffer (``src_off``), and every
access through it an index of the buffer (``src[i]`` → ``src[src_off + i]``, ``*q`` →
``x[q_off]``). The offset is a per-thread local like any other, so it survives the barriers the
portable form splits phases at.

Only pointers whose every use can be rewritten are: accessed by index or dereference (``p[i]``,
``*p``, ``*(p + k)``), stepped by statements of their own (not ``*p++ = v``), every assignment a
view of the same buffer. Any other use (a comparison, a call argument, a view taken from it)
leaves the function as it was, and the diagnostics that name the pointer stay."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.names import fresh
from ...ir.visit import Transformer
from .pointer_views import Alias, _as_alias, view_buffers

_WIDE = ("int64", "uint64")


def moving_pointers(fn: m.Function) -> m.Function:
    if fn.body is None:
        return fn
    buffers = view_buffers(fn)
    decls = {n.name: n for n in m.walk(fn.body)
             if isinstance(n, m.VarDecl) and n.storage == "local" and isinstance(n.type, m.Pointer)}
    steps = _steps(fn.body, set(buffers) | set(decls))
    if not steps:
        return fn
    taken = _names(fn)
    moving: dict[str, tuple[str, m.Expr | None, str]] = {}  # name -> (buffer, start offset, offset name)
    # the local views the steps assign from or subtract (end = start + n; end - start) move with them
    views = {name: _as_alias(d.init, buffers, {}) for name, d in decls.items() if d.init is not None}
    views = {name: a for name, a in views.items() if a is not None}
    named = {r.name for stmts in steps.values() for s in stmts for r in m.walk(s) if isinstance(r, m.Ref)}
    named |= {r.name for b in m.walk(fn.body) if isinstance(b, m.Binary) and b.op == "-"
              and isinstance(b.lhs, m.Ref) and b.lhs.name in steps and isinstance(b.rhs, m.Ref)
              for r in (b.rhs,)}
    for name in list(steps) + sorted((named & set(views)) - set(steps)):
        if name in buffers and buffers[name] == "param":
            base, start = name, None
        elif name in views:
            base, start = views[name].buffer, views[name].offset
        elif name in decls and decls[name].init is None:  # float* p; ... p = x + off;
            first = next((_as_alias(s.value, buffers, views) for s in steps[name]
                          if isinstance(s, m.Assign) and s.op == "="), None)
            if first is None:
                continue
            base, start = first.buffer, None
        else:
            continue
        off = fresh(f"{name}_off", taken)
        moving[name] = (base, start, off)
    if not moving:
        return fn
    offsets = {name: m.Ref(off, "local", _offset_type(steps.get(name, []), start), fn.span)
               for name, (_b, start, off) in moving.items()}
    rewrite = _Rewrite(moving, offsets, buffers)
    rewritten = rewrite.transform(fn.body)
    if any(isinstance(n, m.Ref) and n.name in moving and id(n) not in rewrite.made for n in m.walk(rewritten)):
        return fn  # a use it cannot rewrite: the pointer keeps its diagnostic
    starts = tuple(m.DeclStmt((m.VarDecl(offsets[name].name, offsets[name].type, "local", False,
                                         _int(0, offsets[name].type, fn.span), fn.span),), fn.span)
                   for name in moving if name in buffers)
    if starts:
        rewritten = dataclasses.replace(rewritten, stmts=starts + rewritten.stmts)
    return dataclasses.replace(fn, body=rewritten)


def _steps(body, pointers: set[str]) -> dict[str, list]:
    """Pointer name -> the statements that step or assign it; a pointer stepped inside an
    expression whose value is used (``*p++ = v``) is left out."""
    out: dict[str, list] = {}
    bad: set[str] = set()
    as_statement = set()
    for node in m.walk(body):
        if isinstance(node, m.ExprStmt):
            as_statement.add(id(node.expr))
        elif isinstance(node, m.For) and node.step is not None:
            for part in _comma_parts(node.step):
                as_statement.add(id(part))
    for node in m.walk(body):
        name = None
        if isinstance(node, m.Assign) and isinstance(node.target, m.Ref) and node.target.name in pointers:
            name = node.target.name
        elif isinstance(node, m.Unary) and node.op in ("++", "--") and isinstance(node.operand, m.Ref) \
                and node.operand.name in pointers:
            name = node.operand.name
        if name is None:
            continue
        if id(node) in as_statement and not (isinstance(node, m.Assign) and node.op not in ("=", "+=", "-=")):
            out.setdefault(name, []).append(node)
        else:
            bad.add(name)
    return {k: v for k, v in out.items() if k not in bad}


def _comma_parts(e):
    if isinstance(e, m.Binary) and e.op == ",":
        yield from _comma_parts(e.lhs)
        yield from _comma_parts(e.rhs)
    else:
        yield e


def _offset_type(steps, start) -> m.Scalar:
    exprs = [s.value for s in steps if isinstance(s, m.Assign)] + ([start] if start is not None else [])
    wide = any(getattr(getattr(n, "type", None), "dtype", None) in _WIDE for e in exprs for n in m.walk(e))
    return m.Scalar("int64" if wide else "int32")


def _int(value: int, t, span) -> m.IntLit:
    return m.IntLit(value, str(value), t, span)


def _names(fn: m.Function) -> set[str]:
    names = {p.name for p in fn.params}
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl):
            names.add(node.name)
        elif isinstance(node, m.Ref):
            names.add(node.name)
    return names


class _Rewrite(Transformer):
    def __init__(self, moving, offsets, buffers):
        self.moving, self.offsets, self.buffers = moving, offsets, buffers
        self.made: set[int] = set()  # the buffer references it wrote (a parameter's is its own name)

    def _buffer(self, name, t, span) -> m.Ref:
        base = self.moving[name][0]
        ref = m.Ref(base, self.buffers[base], t, span)
        self.made.add(id(ref))
        return ref

    def _at(self, name, index, t, span) -> m.Index:
        off = dataclasses.replace(self.offsets[name], span=span)
        wide = off.type if index is None or getattr(index.type, "dtype", None) not in _WIDE else index.type
        at = off if index is None else m.Binary("+", off, index, wide, span)
        return m.Index(self._buffer(name, m.Pointer(t), span), at, t, span)

    def leave_Index(self, node):
        if isinstance(node.base, m.Ref) and node.base.name in self.moving:
            return self._at(node.base.name, node.index, node.type, node.span)
        return node

    def leave_Unary(self, node):
        e = node.operand
        if node.op == "*" and isinstance(e, m.Ref) and e.name in self.moving:
            return self._at(e.name, None, node.type, node.span)
        if node.op == "*" and isinstance(e, m.Binary) and e.op in ("+", "-") and isinstance(e.lhs, m.Ref) \
                and e.lhs.name in self.moving and not isinstance(e.rhs.type, m.Pointer):
            k = e.rhs if e.op == "+" else m.Unary("-", e.rhs, False, e.rhs.type, e.rhs.span)
            return self._at(e.lhs.name, k, node.type, node.span)
        if node.op in ("++", "--") and isinstance(e, m.Ref) and e.name in self.moving:
            off = dataclasses.replace(self.offsets[e.name], span=e.span)
            return m.Assign(node.op[0] + "=", off, _int(1, off.type, node.span), off.type, node.span)
        return node

    def leave_Assign(self, node):
        t = node.target
        if not (isinstance(t, m.Ref) and t.name in self.moving):
            return node
        off = dataclasses.replace(self.offsets[t.name], span=t.span)
        if node.op in ("+=", "-="):
            return m.Assign(node.op, off, node.value, off.type, node.span)
        base = self.moving[t.name][0]
        others = {k: v for k, v in self.buffers.items() if k not in self.moving}  # p = p + k: p's own offset
        moved = {name: Alias(b, dataclasses.replace(self.offsets[name], span=t.span))
                 for name, (b, _s, _o) in self.moving.items()}
        alias = _as_alias(node.value, others, moved)
        if alias is None or alias.buffer != base:
            return node  # stays a reference to the pointer: the function is left as it was
        value = alias.offset if alias.offset is not None else _int(0, off.type, node.span)
        return m.Assign("=", off, value, off.type, node.span)

    def leave_Binary(self, node):  # end - start on two pointers into one buffer: their offsets' difference
        if node.op == "-" and isinstance(node.lhs, m.Ref) and isinstance(node.rhs, m.Ref) \
                and node.lhs.name in self.moving and node.rhs.name in self.moving \
                and self.moving[node.lhs.name][0] == self.moving[node.rhs.name][0]:
            a, b = self.offsets[node.lhs.name], self.offsets[node.rhs.name]
            return m.Binary("-", dataclasses.replace(a, span=node.span), dataclasses.replace(b, span=node.span),
                            a.type, node.span)
        return node

    def leave_VarDecl(self, node):
        if node.name not in self.moving or node.storage != "local":
            return node
        off = self.offsets[node.name]
        start = self.moving[node.name][1]
        return dataclasses.replace(node, name=off.name, type=off.type, const=False,
                                   init=start if start is not None else _int(0, off.type, node.span))
