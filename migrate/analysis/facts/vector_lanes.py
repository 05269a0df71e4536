"""Whether statements copy the lanes of one whole vector between contiguous array elements.

Real kernels move data in 8- and 16-byte packs (``uint4 p = reinterpret_cast<const
uint4*>(row)[k];`` read as eight halves, ``reinterpret_cast<uint4*>(out)[k] = p;``): one load or
store instruction per pack, which the CUDA's vector type promises is aligned to its size.
Scalarised (:mod:`migrate.analysis.prepare.vectors`), such a copy is one statement per lane,
``p[j] = row[8*k + j]``, which no compiler merges back, not knowing that the first lane's address
is aligned. The scalariser marks these statements (``ExprStmt.lanes``) where
:func:`lane_copies` holds, and the printer writes a marked run that still holds it as one
vectorised loop over the lanes, each index spelled as the multiple of the lane count it is.
"""
from __future__ import annotations

from ... import dtypes
from ...ir import model as m
from .affine import linear_form

#: the sizes, in bytes, of the vector accesses kept whole (the GPU's 8- and 16-byte loads and stores)
WHOLE_BYTES = (8, 16)


def _element(e) -> m.Index | None:
    """``e`` where it is a plain element of an array (a buffer, a view of one, a local array)."""
    if isinstance(e, m.Index) and isinstance(e.base, m.Ref) and isinstance(e.type, m.Scalar):
        return e
    return None


def _offset(a: m.Expr, b: m.Expr) -> int | None:
    """``b - a`` where it is a constant, else None."""
    fa, fb = linear_form(a), linear_form(b)
    if fa is None or fb is None or set(fa[0]) != set(fb[0]) or any(fa[0][k][0] != fb[0][k][0] for k in fa[0]):
        return None
    return fb[1] - fa[1]


def lane_copies(stmts) -> bool:
    """Whether ``stmts`` are ``a[x + j] = b[y + j]`` for ``j`` = 0, 1, ... in order: one array
    element of one scalar type copied each, to and from the same two arrays, their ``len(stmts)``
    lanes :data:`WHOLE_BYTES` in all."""
    n = len(stmts)
    if n < 2:
        return False
    pairs = []
    for s in stmts:
        a = s.expr if isinstance(s, m.ExprStmt) else None
        if not isinstance(a, m.Assign) or a.op != "=":
            return False
        dst, src = _element(a.target), _element(a.value)
        if dst is None or src is None or dst.type != src.type:
            return False
        pairs.append((dst, src))
    first_dst, first_src = pairs[0]
    if dtypes.SIZES.get(first_dst.type.dtype, 0) * n not in WHOLE_BYTES:
        return False
    return all(dst.type == first_dst.type and dst.base.name == first_dst.base.name
               and src.base.name == first_src.base.name
               and _offset(first_dst.index, dst.index) == j and _offset(first_src.index, src.index) == j
               for j, (dst, src) in enumerate(pairs))
