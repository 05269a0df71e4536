"""A local pointer read or written through its own address, as the pointer itself.

A helper that swaps two pointers takes their addresses (``pointer_swap((void**)&m_cache,
(void**)&m_cache_swap)`` with ``void *tmp = *p1; *p1 = *p2; *p2 = tmp;``); inlined, it reads and
writes ``*(void**)&m_cache``: the local pointer ``m_cache``, through a pointer to a pointer of
another pointee type. A pointer's bits are its address whatever it points to, so that access is
the pointer itself (``tmp = m_cache; m_cache = m_cache_swap; m_cache_swap = tmp;``), which
analysis.prepare.moving_pointers then follows as offsets into the buffer they view. A local
``void*`` (or other) pointer that only ever holds such a pointer copy is given the type of the
pointers it holds, where they all have one, so it views their buffer alike.

Only ``*(U*)&p`` with ``p`` a local pointer variable and ``U`` a pointer type is rewritten;
anything else (``*(int*)&p``, the address used otherwise) is left for the passes that name it.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.visit import Transformer


def _copied(e, locals_: set[str]):
    """The local pointer ``p`` where ``e`` is ``*(U*)&p`` with ``U`` a pointer type, else None."""
    if not (isinstance(e, m.Unary) and e.op == "*" and isinstance(e.type, m.Pointer)):
        return None
    cast = strip_implicit_casts(e.operand)
    while isinstance(cast, m.Cast) and isinstance(cast.target, m.Pointer) \
            and isinstance(cast.target.pointee, m.Pointer):
        cast = strip_implicit_casts(cast.operand)
    if not (isinstance(cast, m.Unary) and cast.op == "&" and isinstance(cast.operand, m.Ref)):
        return None
    ref = cast.operand
    return ref if ref.name in locals_ and isinstance(ref.type, m.Pointer) else None


def pointer_copies(fn: m.Function) -> m.Function:
    """``fn`` with each ``*(U*)&p`` of a local pointer ``p`` read or written as ``p``."""
    if fn.body is None:
        return fn
    locals_ = {d.name for d in m.walk(fn.body) if isinstance(d, m.VarDecl) and d.storage == "local"
               and isinstance(d.type, m.Pointer)}
    if not any(_copied(n, locals_) is not None for n in m.walk(fn.body)):
        return fn

    class Copies(Transformer):
        def leave_Unary(self, node):
            found = _copied(node, locals_)
            return dataclasses.replace(found, span=node.span) if found is not None else node

    body = Copies().transform(fn.body)
    # void* tmp; tmp = a; a = b; b = tmp;  tmp holds int* pointers only: it is one
    held: dict[str, set] = {}
    for n in m.walk(body):
        if isinstance(n, m.Assign) and n.op == "=" and isinstance(n.target, m.Ref) and n.target.name in locals_:
            value = strip_implicit_casts(n.value)
            held.setdefault(n.target.name, set()).add(value.type if isinstance(value, m.Ref) else None)
        elif isinstance(n, m.VarDecl) and n.name in locals_ and n.init is not None:
            value = strip_implicit_casts(n.init)
            held.setdefault(n.name, set()).add(value.type if isinstance(value, m.Ref) else None)
    retyped = {}
    for d in m.walk(body):
        if isinstance(d, m.VarDecl) and d.name in held and isinstance(d.type, m.Pointer) \
                and isinstance(d.type.pointee, m.Scalar) and d.type.pointee.dtype == "void":
            types = held[d.name]
            if len(types) == 1 and None not in types and isinstance(next(iter(types)), m.Pointer):
                retyped[d.name] = next(iter(types))
    if not retyped:
        return dataclasses.replace(fn, body=body)

    class Retype(Transformer):
        def leave_VarDecl(self, node):
            return dataclasses.replace(node, type=retyped[node.name]) if node.name in retyped else node

        def leave_Ref(self, node):
            return dataclasses.replace(node, type=retyped[node.name]) if node.name in retyped \
                and node.kind == "local" else node

        def leave_Assign(self, node):
            # tmp = a: the value keeps its type; a = tmp: the void* cast of the old read is gone
            if isinstance(node.target, m.Ref) and node.target.name in retyped:
                return dataclasses.replace(node, type=retyped[node.target.name],
                                           value=strip_implicit_casts(node.value))
            value = strip_implicit_casts(node.value)
            if isinstance(value, m.Ref) and value.name in retyped:
                return dataclasses.replace(node, value=value)
            return node

    return dataclasses.replace(fn, body=Retype().transform(body))
