"""Visitors over the model: :class:`Transformer` rebuilds a tree bottom-up.

Reading a tree needs no visitor class: :func:`~.model.walk` yields every node, :func:`~.model.children`
a node's direct children and :func:`~.model.map_children` rebuilds a node from new children.
"""
from __future__ import annotations

import dataclasses

from . import model as m


class Transformer:
    """Rebuilds a model tree bottom-up; subclasses override ``leave_<Class>(node)``. A node none of
    whose children changed is returned as it is (the same object)."""

    def transform(self, node):
        if isinstance(node, tuple):  # the same tuple when no item changed: unchanged subtrees stay shared
            items = tuple([self.transform(n) for n in node])
            return node if all(a is b for a, b in zip(items, node)) else items
        cls = type(node)
        known = _IS_NODE.get(cls)
        if not (known or known is None and m._is_node(node)):
            return node
        changes = None
        for name in m._child_fields(cls):  # every field but span and type
            value = getattr(node, name)
            kind = type(value)
            if kind is tuple or isinstance(value, tuple) or _IS_NODE.get(kind) \
                    or kind not in _IS_NODE and m._is_node(value):
                new = self.transform(value)
                if new is not value:
                    if changes is None:
                        changes = {}
                    changes[name] = new
        if changes:
            node = dataclasses.replace(node, **changes)
        # the leave_ method of the node's class, looked for once per transformer class and node
        # class (most have none, and a failed lookup costs more than the rest of a visit); kept
        # in the transformer class itself (passes make classes of their own per call)
        leaves = type(self).__dict__.get("_leave_names")
        if leaves is None:
            kind = type(self)
            # a class that makes attributes as they are asked (__getattr__) is asked every time
            dynamic = hasattr(kind, "__getattr__") or kind.__getattribute__ is not object.__getattribute__
            leaves = kind._leave_names = False if dynamic else {}
        if leaves is False:
            leave = getattr(self, f"leave_{cls.__name__}", None)
            return leave(node) if leave is not None else node
        leave = leaves.get(cls, _UNKNOWN)
        if leave is _UNKNOWN:
            name = f"leave_{cls.__name__}"
            leave = leaves[cls] = name if getattr(type(self), name, None) is not None else None
        return getattr(self, leave)(node) if leave is not None else node


_IS_NODE = m._IS_NODE  # node class -> whether it is a model node (filled by model._is_node)
_UNKNOWN = object()


def expand_statements(s, split, every: bool = False):
    """``s`` with every expression statement ``e`` (in blocks, branches, loop, switch and case
    bodies) replaced by the statements ``split(e)`` gives; one it answers None for stays. With
    ``every``, ``split`` sees every statement, after the statements inside it were expanded.
    Where one statement stood alone (a branch, a loop body), its replacements become a block."""
    def expand(x) -> list:
        if every:
            x = one(x)
            parts = split(x)
        else:
            parts = split(x) if isinstance(x, m.ExprStmt) else None
        return parts if parts is not None else [one(x) if not every else x]

    def many(stmts) -> tuple:
        return tuple(p for x in stmts for p in expand(x))

    def body(x):
        if x is None:
            return None
        parts = expand(x)
        return parts[0] if len(parts) == 1 else m.Block(tuple(parts), x.span)

    def one(x):
        if isinstance(x, m.Block):
            return dataclasses.replace(x, stmts=many(x.stmts))
        if isinstance(x, m.If):
            return dataclasses.replace(x, then=body(x.then), other=body(x.other))
        if isinstance(x, (m.For, m.While, m.DoWhile, m.Switch, m.Case)):
            return dataclasses.replace(x, body=body(x.body))
        return x

    return one(s)
