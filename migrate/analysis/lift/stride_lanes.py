"""Thread and block indices read inside a grid-stride loop, as functions of the element.

A grid-stride loop ``for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x *
gridDim.x)`` hands element ``i`` to the thread whose global rank is ``i`` modulo the grid's
``blockDim.x * gridDim.x`` threads. That stride is a multiple of ``blockDim.x``, so the thread
that runs element ``i`` has

- ``threadIdx.x == i % blockDim.x`` (``atomicAdd(data + threadIdx.x, 1)``: a slot per lane), and
- ``blockIdx.x == i / blockDim.x % gridDim.x`` (not ``i / blockDim.x``: after the first sweep of
  the grid the blocks come round again).

:func:`indices_of_elements` writes the indices so where the map lift
(:func:`~migrate.analysis.lift.map.fold_elements`) turns such a loop into a domain of ``n``
elements, so that reading them is no reason to refuse the lift (nor read as the block's segment
of a domain of one element per thread, which the second sweep is not).
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.visit import Transformer


class _InStride(Transformer):
    def __init__(self, dims: set[str]) -> None:
        self.dims = dims

    def leave_Builtin(self, node: m.Builtin):
        if node.dim not in self.dims or node.var not in ("threadIdx", "blockIdx"):
            return node

        def b(var):
            return m.Builtin(var, node.dim, node.type, node.span)
        if node.var == "threadIdx":
            return m.Binary("%", b("globalIdx"), b("blockDim"), node.type, node.span)
        return m.Binary("%", m.Binary("/", b("globalIdx"), b("blockDim"), node.type, node.span), b("gridDim"),
                        node.type, node.span)


def indices_of_elements(stmts: tuple, dims) -> tuple:
    """``stmts`` (a grid-stride loop's body over the elements, with the declarations before it,
    after the global-index idioms are folded) with each ``threadIdx.d`` and ``blockIdx.d`` of a
    dimension ``d`` the loop strides in written as the element's lane and block (module doc)."""
    return _InStride(set(dims)).transform(tuple(stmts))
