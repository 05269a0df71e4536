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
        # what to do with a value of each class, worked out once per transformer class and value
        # class (_step) and kept in the transformer class itself (passes make classes of their
        # own per call): the function that transforms its children (None for what is no node nor
        # tuple) and the name of its leave_ method (None where it has none)
        kind = type(self)
        plan = kind.__dict__.get("_plan")
        if plan is None:
            plan = kind._plan = {}
        step = plan.get(type(node))
        if step is None:
            step = _step(plan, kind, node)
        inside, leave = step
        if inside is None:
            return node
        node = inside(node, self.transform)
        if leave is None:
            return node
        method = getattr(self, leave, None)
        return method(node) if method is not None else node


def _step(plan: dict, kind: type, value) -> tuple:
    cls = type(value)
    if isinstance(value, tuple):
        step = (m._map_items, None)  # the same tuple when no item changed: unchanged subtrees stay shared
    elif not m._is_node(value):
        step = (None, None)
    else:
        name = f"leave_{cls.__name__}"
        # a class that makes attributes as they are asked (__getattr__) is asked at every node
        asks = hasattr(kind, "__getattr__") or kind.__getattribute__ is not object.__getattribute__
        step = (_inside_function(cls), name if asks or getattr(kind, name, None) is not None else None)
    plan[cls] = step
    return step


_INSIDE: dict = {}  # node class -> the function that transforms its children (_inside_code)
#: class -> what transform looks inside of: _NODE, _TUPLE or None (neither); a class not yet
#: seen (get's default 0) is classified by _value_kind
_VALUE_KINDS: dict = {}
_NODE, _TUPLE = 1, 2


def _value_kind(value):
    cls = type(value)
    kind = _VALUE_KINDS[cls] = _TUPLE if isinstance(value, tuple) else _NODE if m._is_node(value) else None
    return kind


def _inside_code(cls: type) -> str:
    """The source of ``cls``'s function ``_f(node, transform)``: each field that may hold nodes
    (model._child_fields) transformed where it holds a node or a non-empty tuple, and the node
    rebuilt when one changed (model._rebuild_code)."""
    names = m._child_fields(cls)
    lines = ["def _f(node, transform):"]
    for i, name in enumerate(names):
        lines += [f"    x{i} = node.{name}",
                  f"    k = _kinds.get(type(x{i}), 0)",
                  "    if k == 0:",
                  f"        k = _value_kind(x{i})",
                  f"    y{i} = transform(x{i}) if k == _NODE or k == _TUPLE and x{i} else x{i}"]
    return "\n".join(lines + m._rebuild_code(cls, names)) + "\n"


def _inside_function(cls: type):
    fn = _INSIDE.get(cls)
    if fn is None:
        if not m._child_fields(cls):  # a leaf: a name, a literal
            fn = m._same
        else:
            scope = {"_kinds": _VALUE_KINDS, "_value_kind": _value_kind, "_NODE": _NODE, "_TUPLE": _TUPLE,
                     "_cls": cls, "_replace": dataclasses.replace}
            exec(_inside_code(cls), scope)
            fn = scope["_f"]
        _INSIDE[cls] = fn
    return fn


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
