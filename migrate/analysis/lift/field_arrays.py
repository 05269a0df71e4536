"""Shared arrays of vectors split into one array per field, for the trees that reduce the
fields together (f16sp's ``float2``/``half2`` scalar products).

The frontend stores a ``__shared__ float2 S[N]`` as ``2 * N`` scalars, ``S[i].y`` at ``S[i * 2 +
1]``. When every access of a shared array is ``S[X * K + c]`` (``K`` the same constant, ``0 <= c
< K``), the array is ``K`` arrays of ``N`` elements, ``S_x[X]``, ``S_y[X]``, ...: a tree step
``S[t].x += S[t + s].x; S[t].y += S[t + s].y`` becomes two tree steps over arrays of the block's
threads, which :mod:`.reduce` lifts to one reduction each.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.visit import Transformer

_FIELDS = "xyzw"


def split_fields(fn: m.Function, shared: set[str]) -> m.Function:
    """``fn`` with every shared array of ``shared`` that is only accessed field-wise split into
    one array per field; ``fn`` itself when there is none."""
    if fn.body is None:
        return fn
    split = {}
    for name in sorted(shared):
        k = _fields(fn.body, name)
        if k is not None:
            split[name] = k
    if not split:
        return fn
    return dataclasses.replace(fn, body=_Split(split).transform(fn.body))


def _field_index(e) -> tuple[m.Expr, int, int] | None:
    """(X, K, c) when ``e`` is ``X * K + c`` with constants K >= 2 and 0 <= c < K."""
    e = strip_casts(e)
    if not (isinstance(e, m.Binary) and e.op == "+" and isinstance(strip_casts(e.rhs), m.IntLit)):
        return None
    c = strip_casts(e.rhs).value
    mul = strip_casts(e.lhs)
    if not (isinstance(mul, m.Binary) and mul.op == "*" and isinstance(strip_casts(mul.rhs), m.IntLit)):
        return None
    k = strip_casts(mul.rhs).value
    return (mul.lhs, k, c) if 2 <= k <= len(_FIELDS) and 0 <= c < k else None


def _fields(body, name: str) -> int | None:
    """K when every use of the shared array ``name`` indexes a field ``X * K + c`` and its
    declared extent is a multiple of K; else None."""
    decls = [n for n in m.walk(body) if isinstance(n, m.VarDecl) and n.name == name]
    if len(decls) != 1 or decls[0].init is not None or decls[0].storage != "shared" \
            or not isinstance(decls[0].type, m.Array) or not isinstance(decls[0].type.extent, int) \
            or not isinstance(decls[0].type.element, m.Scalar):
        return None
    indexed = set()
    ks = set()
    for n in m.walk(body):
        if isinstance(n, m.Index) and isinstance(strip_casts(n.base), m.Ref) and strip_casts(n.base).name == name:
            f = _field_index(n.index)
            if f is None:
                return None
            ks.add(f[1])
            indexed.add(id(strip_casts(n.base)))
    refs = [n for n in m.walk(body) if isinstance(n, m.Ref) and n.name == name]
    if not ks or len(ks) != 1 or any(id(r) not in indexed for r in refs):
        return None  # also used whole (a pointer to it, an address)
    k = ks.pop()
    return k if decls[0].type.extent % k == 0 else None


def field_name(name: str, c: int) -> str:
    return f"{name}_{_FIELDS[c]}"


class _Split(Transformer):
    def __init__(self, split: dict[str, int]) -> None:
        self.split = split

    def leave_Index(self, node: m.Index):
        base = strip_casts(node.base)
        if isinstance(base, m.Ref) and base.name in self.split:
            x, k, c = _field_index(node.index)
            t = m.Array(base.type.element, base.type.extent // k, "", base.type.volatile)
            return m.Index(m.Ref(field_name(base.name, c), base.kind, t, base.span), x, node.type, node.span)
        return node

    def leave_DeclStmt(self, node: m.DeclStmt):
        if not any(d.name in self.split for d in node.decls):
            return node
        decls = []
        for d in node.decls:
            if d.name not in self.split:
                decls.append(d)
                continue
            k = self.split[d.name]
            t = m.Array(d.type.element, d.type.extent // k, "", d.type.volatile)
            decls += [dataclasses.replace(d, name=field_name(d.name, c), type=t) for c in range(k)]
        return dataclasses.replace(node, decls=tuple(decls))
