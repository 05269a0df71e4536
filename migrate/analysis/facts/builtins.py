"""Which thread and block dimensions a kernel indexes (the launch asserts of its factory)."""
from __future__ import annotations

from ...ir import model as m


def builtin_dims(fns) -> tuple[set[str], set[str]]:
    """(thread dims, block dims) a kernel and its device functions use."""
    thread, block = set(), set()
    for fn in fns:
        for node in m.walk(fn.body) if fn.body else ():
            if isinstance(node, m.Builtin) and node.dim:
                (thread if node.var in ("threadIdx", "blockDim") else block).add(node.dim)
    return thread, block


def used_dims(dims: set[str]) -> list[str]:
    if "z" in dims:
        return ["x", "y", "z"]
    if "y" in dims:
        return ["x", "y"]
    return ["x"]
