"""Scalar ``__device__`` (and ``__managed__``) globals as one-element buffers: ``topL`` is
``topL[0]``, ``atomicAdd(&topL, 1)`` is ``atomicAdd(&topL[0], 1)``. The kernels take every
``__device__`` global they name as a buffer after their parameters (a symbol, as ``__constant__``
arrays are; the launcher keeps its tensor between launches, emit.kernel.symbol_globals), so a
scalar one is read and written as the first element of its buffer. Runs on the whole unit, kernels
and device functions alike, before the passes of one kernel."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.visit import Transformer


def scalar_globals_as_buffers(unit: m.TranslationUnit) -> m.TranslationUnit:
    scalars = {g.name: g.type for g in unit.globals
               if g.storage in ("device", "managed") and isinstance(g.type, m.Scalar)}
    if not scalars:
        return unit

    class Element(Transformer):
        def leave_Ref(self, node):
            if node.kind != "global" or node.name not in scalars:
                return node
            zero = m.IntLit(0, "0", m.Scalar("int32"), node.span)
            buffer = dataclasses.replace(node, type=m.Pointer(scalars[node.name]))
            return m.Index(buffer, zero, scalars[node.name], node.span)

    rewrite = Element()

    def each(fns):
        return tuple(rewrite.transform(f) for f in fns)

    return dataclasses.replace(unit, kernels=each(unit.kernels), device_functions=each(unit.device_functions))
