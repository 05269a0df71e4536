"""Pointer parameters to arrays (``double phi[][NY][NZ]``, ``float (*img)[W]``), the way stencil
codes pass their grids, as flat buffers of the element type: ``phi[x][y][z]`` becomes
``phi[(x * NY + y) * NZ + z]`` (the same element: C lays the rows out one after the other). A
use other than a full index (``phi[x]`` passed on as a row) is left, and refused by the emitter
as before."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.visit import Transformer


def flatten_array_params(fn: m.Function) -> m.Function:
    extents = {p.name: _row_extents(p.type) for p in fn.params}
    extents = {name: ext for name, ext in extents.items() if ext}
    if not extents or fn.body is None:
        return fn
    element = {p.name: _element(p.type) for p in fn.params if p.name in extents}

    class Flatten(Transformer):
        def leave_Index(self, node):
            indices, base = [], node
            while isinstance(base, m.Index):
                indices.insert(0, base.index)
                base = base.base
            if not (isinstance(base, m.Ref) and base.name in extents) or len(indices) != len(extents[base.name]) + 1:
                return node
            flat = indices[0]
            for extent, index in zip(extents[base.name], indices[1:]):
                itype = m.Scalar("int64")
                size = m.IntLit(extent, str(extent), itype, node.span)
                flat = m.Binary("+", m.Binary("*", flat, size, itype, node.span), index, itype, node.span)
            ptype = m.Pointer(element[base.name])
            return m.Index(dataclasses.replace(base, type=ptype), flat, node.type, node.span)

    body = Flatten().transform(fn.body)
    params = tuple(dataclasses.replace(p, type=m.Pointer(element[p.name], restrict=_restrict(p.type)))
                   if p.name in extents else p for p in fn.params)
    return dataclasses.replace(fn, params=params, body=body)


def _row_extents(t) -> tuple[int, ...]:
    """The extents of the rows a pointer-to-array parameter points to (``[NY][NZ]``), or ()."""
    if isinstance(t, m.Pointer):
        row = t.pointee
    elif isinstance(t, m.Array) and t.extent is None:  # p[][NY][NZ], adjusted to a pointer by C
        row = t.element
    else:
        return ()
    out = []
    while isinstance(row, m.Array):
        if row.extent is None:
            return ()
        out.append(row.extent)
        row = row.element
    return tuple(out) if out and isinstance(row, m.Scalar) else ()


def _element(t):
    while isinstance(t, (m.Pointer, m.Array)):
        t = t.pointee if isinstance(t, m.Pointer) else t.element
    return t


def _restrict(t) -> bool:
    return isinstance(t, m.Pointer) and t.restrict
