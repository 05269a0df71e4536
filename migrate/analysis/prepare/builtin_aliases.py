"""Locals that only rename a builtin (``const int tx = threadIdx.x``) replaced by the builtin, so
that the index idioms the lifts look for are visible wherever the kernel spelled them."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_casts
from ...ir.visit import expand_statements
from ..facts.locals import Expand, single_assignment_locals


def propagate_builtin_aliases(fn: m.Function) -> m.Function:
    """Locals that only rename builtins (``const int tx = threadIdx.x``, ``int row = blockIdx.y *
    TILE + threadIdx.y`` is not one: only casts of a single builtin) are replaced by the builtin,
    and their declarations dropped (a ``threadIdx.x`` left in one would read as a use of it)."""
    if fn.body is None:
        return fn
    table = {name: init for name, init in single_assignment_locals(fn.body).items()
             if isinstance(strip_casts(init), m.Builtin)}
    if not table:
        return fn
    return dataclasses.replace(fn, body=expand_statements(Expand(table).transform(fn.body),
                                                          lambda s: _without(s, table), every=True))


def _without(s, names) -> list | None:
    """``s`` without the declarations of ``names`` (None: unchanged)."""
    if not isinstance(s, m.DeclStmt) or not any(d.name in names for d in s.decls):
        return None
    kept = tuple(d for d in s.decls if d.name not in names)
    return [dataclasses.replace(s, decls=kept)] if kept else []
