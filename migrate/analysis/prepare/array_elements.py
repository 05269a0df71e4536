"""A thread's small local array that the kernel reads and writes only at constant indices
(``unsigned sum[3]; sum[0] = v.x; sum[1] = v.y + sum[0]; ...``, radixsort's ``scan4``) as one
local per element (``sum_0``, ``sum_1``, ``sum_2``).

The portable form keeps a thread's array that lives across barriers as a shared array with a row
per thread (``T.alloc_shared((block_x, 3))``): each access a shared load or store, where the CUDA
held the elements in registers (split's ``scan4``: 4 more LDS and 3 more STS per iteration of its
loop, 1536 more bytes of shared memory per block). Its elements as locals are per-thread scalars,
which the portable form keeps in registers on GPUs (emit.kernel.per_thread_scalars: a fragment
per scalar; a fragment of a row per thread takes one index per parallel loop in TileLang's layout
inference, ``[tx, 0]`` and ``[tx, 1]`` in one phase are refused: analysis.fragment_rows holds
those indexed one way per phase). :mod:`..phases` asks this of the arrays it places per thread.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.names import fresh
from ...ir.visit import Transformer

#: the most elements an array is split into
MAX_ELEMENTS = 16


def constant_element_arrays(fn: m.Function, names: set[str]) -> set[str]:
    """Those of the local arrays ``names`` that ``fn`` declares once, without an initialiser, as a
    one-dimensional array of at most :data:`MAX_ELEMENTS` scalars, and uses only as elements at
    constant indices inside it (never whole, never an element's address)."""
    if not names or fn.body is None:
        return set()
    decls: dict[str, list] = {}
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl) and node.name in names:
            decls.setdefault(node.name, []).append(node)
    out = set()
    for name, found in decls.items():
        d = found[0]
        if len(found) == 1 and d.init is None and d.storage == "local" and isinstance(d.type, m.Array) \
                and not d.type.volatile and isinstance(d.type.element, m.Scalar) \
                and d.type.extent is not None and 0 < d.type.extent <= MAX_ELEMENTS:
            out.add(name)
    if not out:
        return out
    elements: set[int] = set()  # the ids of the Refs that are the base of a constant-index element
    for node in m.walk(fn.body):
        if isinstance(node, m.Index) and isinstance(node.base, m.Ref) and node.base.name in out:
            k = _constant(node.index)
            if k is None or not 0 <= k < decls[node.base.name][0].type.extent:
                out.discard(node.base.name)
            else:
                elements.add(id(node.base))
        elif isinstance(node, m.Unary) and node.op == "&" and isinstance(node.operand, m.Index) \
                and isinstance(node.operand.base, m.Ref):
            out.discard(node.operand.base.name)  # an element's address
    for node in m.walk(fn.body):
        if isinstance(node, m.Ref) and node.name in out and id(node) not in elements:
            out.discard(node.name)  # the array whole (passed, or a pointer into it)
    return out


def array_elements(fn: m.Function, arrays: set[str]) -> m.Function:
    """``fn`` with each array of ``arrays`` (:func:`constant_element_arrays`) as one local per
    element: ``T a[3];`` as ``T a_0, a_1, a_2;``, ``a[k]`` as ``a_k``."""
    if not arrays:
        return fn
    taken = {n.name for n in m.walk(fn) if isinstance(n, (m.Ref, m.VarDecl))} | {p.name for p in fn.params}
    names: dict[str, list[str]] = {}
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl) and node.name in arrays:
            names[node.name] = [fresh(f"{node.name}_{k}", taken) for k in range(node.type.extent)]
    return dataclasses.replace(fn, body=_Elements(names).transform(fn.body))


class _Elements(Transformer):
    def __init__(self, names: dict[str, list[str]]) -> None:
        self.names = names

    def leave_Index(self, e: m.Index):
        if isinstance(e.base, m.Ref) and e.base.name in self.names:
            return m.Ref(self.names[e.base.name][_constant(e.index)], "local", e.type, e.span)
        return e

    def leave_DeclStmt(self, s: m.DeclStmt):
        if not any(d.name in self.names for d in s.decls):
            return s
        decls = []
        for d in s.decls:
            if d.name in self.names:
                decls += [dataclasses.replace(d, name=name, type=d.type.element) for name in self.names[d.name]]
            else:
                decls.append(d)
        return dataclasses.replace(s, decls=tuple(decls))


def _constant(e) -> int | None:
    e = strip_casts(e)
    return e.value if isinstance(e, m.IntLit) else None
