"""Index expressions: how a kernel reads an operand at the element it computes.

A kernel walks its output through a few loop variables (a row ``r`` and column ``c`` of the
output viewed as a matrix, a batch ``bz``, ...). :func:`unravel` turns a flat variable into one
index per dimension; :func:`broadcast_index` gives an operand's indices under ONNX (numpy)
broadcasting from the output's indices.
"""
from __future__ import annotations

import math


def prod(shape) -> int:
    return math.prod(shape)


def unravel(var: str, shape) -> list[str]:
    """The indices of the row-major ``shape`` whose flat index is ``var``."""
    out = []
    stride = prod(shape)
    for i, d in enumerate(shape):
        stride //= d
        e = var if stride == 1 else f"{var} // {stride}"
        if i > 0:
            e = f"({e}) % {d}" if stride != 1 else f"{var} % {d}"
        if d == 1:
            e = "0"
        out.append(e)
    return out


def broadcast_index(shape, out_shape, out_index: list[str]) -> list[str]:
    """The indices of an operand of ``shape`` broadcast to ``out_shape`` (aligned on the right)."""
    lead = len(out_shape) - len(shape)
    return ["0" if d == 1 else out_index[lead + k] for k, d in enumerate(shape)]


def broadcast_shapes(*shapes) -> tuple:
    """numpy's broadcast of ``shapes`` (ints or declared extents: equal ones, or 1 and another)."""
    from .dims import NeedsValue

    rank = max((len(s) for s in shapes), default=0)
    out = []
    for k in range(rank):
        d = 1
        for s in shapes:
            e = s[k - rank + len(s)] if k - rank + len(s) >= 0 else 1
            if e == 1 or e == d:
                continue
            if d != 1:
                raise NeedsValue(f"broadcasting {d} with {e}")
            d = e
        out.append(d)
    return tuple(out)


def subscript(name: str, index: list[str]) -> str:
    return f"{name}[{', '.join(index) if index else '0'}]"
