"""A local pointer into an array field of a struct value, read as the field itself.

A kernel given a struct of tables by value (flame's ``ConstMemParams params`` holding
``VariationParameter variation_parameters[20][5]``) may name one row through a pointer::

    const VariationParameter *vp = &params.variation_parameters[idx][0];
    for (int i = 0; i < 5; i++) point_out.x += vp[i].factor * point.x;

The struct is no buffer (its fields are lanes or parameters), so the pointer views nothing the
later passes know. Where the pointer is declared once, never assigned, and the indices of its row
are fixed for the whole body (no local of them assigned, the struct never assigned whole), each
use is the field's element it reaches: ``vp[i]`` is ``params.variation_parameters[idx][0 + i]``,
``*vp`` and ``vp->f`` the element at the row's own index. Any other use of the pointer (passed on,
stepped, compared) leaves it as it is, for the passes that name it.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import assigned_names, strip_implicit_casts
from ...ir.visit import Transformer


def _field_element(init) -> m.Index | None:
    """``X.f[a]..[b]`` where ``init`` is ``&X.f[a]..[b]`` (or the row ``X.f[a]`` decaying to its
    first element) and ``X`` a struct value (no pointer): the element the pointer starts at."""
    if init is None:
        return None
    e = strip_implicit_casts(init)
    if isinstance(e, m.Unary) and e.op == "&":
        place = strip_implicit_casts(e.operand)
    elif isinstance(init, m.Cast) and isinstance(e.type, m.Array):  # the row decays: its element 0
        place = m.Index(e, m.IntLit(0, "0", m.Scalar("int32"), e.span), e.type.element, e.span)
    else:
        return None
    if not isinstance(place, m.Index):
        return None
    node, member = place, False
    while isinstance(node, (m.Index, m.Member)):
        if isinstance(node, m.Member):
            if node.arrow:
                return None
            member = True
        node = node.base
    if not (member and isinstance(node, m.Ref) and not isinstance(node.type, (m.Pointer, m.Array))):
        return None
    return place


def _fixed(place: m.Index, assigned: set[str]) -> bool:
    """Whether the element ``place`` names is the same wherever the body reads it: no variable of
    its indices is assigned, nor the struct it starts from."""
    return not any(isinstance(n, m.Ref) and n.name in assigned for n in m.walk(place))


def field_pointers(fn: m.Function) -> m.Function:
    """``fn`` with each use of a local pointer into an array field of a struct value (``vp[i]``,
    ``*vp``, ``vp->f``) read as the field's element it reaches."""
    if fn.body is None:
        return fn
    decls: dict[str, list] = {}
    for d in m.walk(fn.body):
        if isinstance(d, m.VarDecl):
            decls.setdefault(d.name, []).append(d)
    assigned = assigned_names(fn.body)
    places: dict[str, m.Index] = {}
    for name, ds in decls.items():
        d = ds[0]
        if len(ds) != 1 or d.storage != "local" or not isinstance(d.type, m.Pointer) or name in assigned:
            continue
        place = _field_element(d.init)
        if place is not None and _fixed(place, assigned):
            places[name] = place
    if not places:
        return fn

    def at(name, k, span):
        place = places[name]
        index = place.index
        if k is not None:
            first = strip_implicit_casts(index)
            index = k if isinstance(first, m.IntLit) and first.value == 0 else \
                m.Binary("+", index, k, k.type, span)
        return m.Index(place.base, index, place.type, span)

    def pointer(e):
        e = strip_implicit_casts(e)
        return e.name if isinstance(e, m.Ref) and e.name in places and e.kind == "local" else None

    class Uses(Transformer):
        def leave_Index(self, node):
            name = pointer(node.base)
            return at(name, node.index, node.span) if name else node

        def leave_Unary(self, node):
            name = pointer(node.operand) if node.op == "*" else None
            return at(name, None, node.span) if name else node

        def leave_Member(self, node):
            name = pointer(node.base) if node.arrow else None
            if not name:
                return node
            return dataclasses.replace(node, base=at(name, None, node.span), arrow=False)

    body = Uses().transform(fn.body)
    left = {n.name for n in m.walk(body) if isinstance(n, m.Ref) and n.name in places}
    gone = set(places) - left

    class Drop(Transformer):  # the pointers no use reads any more
        def leave_DeclStmt(self, node):
            kept = tuple(d for d in node.decls if d.name not in gone)
            if len(kept) == len(node.decls):
                return node
            return dataclasses.replace(node, decls=kept) if kept else m.Empty(node.span)

    return dataclasses.replace(fn, body=Drop().transform(body) if gone else body)
