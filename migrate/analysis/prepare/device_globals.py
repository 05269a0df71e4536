"""Globals of device memory, on the whole unit before the passes of one kernel.

Scalar ``__device__`` (and ``__managed__``) globals as one-element buffers: ``topL`` is
``topL[0]``, ``atomicAdd(&topL, 1)`` is ``atomicAdd(&topL[0], 1)``. The kernels take every
``__device__`` global they name as a buffer after their parameters (a symbol, as ``__constant__``
arrays are; the launcher keeps its tensor between launches, emit.kernel.symbol_globals), so a
scalar one is read and written as the first element of its buffer.

``__shared__`` arrays declared at namespace scope (``__shared__ extern data sdata[];``, which a
program's reduction helpers name directly) as each kernel's own: declared at the top of every
kernel that names them, itself or through the device functions it calls, so the passes see them
as the block's shared memory they are."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ..facts.calls import callees_of
from ...ir.visit import Transformer


def shared_globals_into_kernels(unit: m.TranslationUnit) -> m.TranslationUnit:
    shared = {g.name: g for g in unit.globals if g.storage == "shared" and isinstance(g.type, m.Array)}
    if not shared:
        return unit
    device = {f.name: f for f in unit.device_functions}
    kernels = []
    for k in unit.kernels:
        named = {n.name for f in [k] + callees_of(k, device) for n in m.walk(f.body) if f.body
                 and isinstance(n, m.Ref) and n.kind == "shared" and n.name in shared}
        declared = {n.name for n in m.walk(k.body) if isinstance(n, m.VarDecl)} if k.body else set()
        decls = tuple(m.VarDecl(g.name, g.type, "extern_shared" if g.type.extent is None else "shared", False,
                                None, g.span) for name, g in shared.items() if name in named - declared)
        if decls and k.body is not None:
            k = dataclasses.replace(k, body=dataclasses.replace(
                k.body, stmts=(m.DeclStmt(decls, k.span),) + k.body.stmts))
        kernels.append(k)
    return dataclasses.replace(unit, kernels=tuple(kernels))


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
