"""Branches that store to an array their own condition reads, in a loop:

    for (i = 0; i < NRX; i++)
      if (score[dy][i] > max_score[i]) { max_score[i] = score[dy][i]; index[i] = bp2 + dy; }

When TileLang 0.1.15 vectorises such a loop for CUDA it binds the condition to each store of the
branch and splits the stores into loops of their own: the second loop tests the condition again
after the first has changed ``max_score[i]``, so ``index[i]`` is never written (seen on the H200:
match's ``Match10`` returned -1 for every index; the CPU target, which does not vectorise, was
right). A kernel holding such a branch is compiled with TVM's vectorisation off
(``tirx.disable_vectorize``), which keeps the branch whole.
"""
from __future__ import annotations

from ...ir import model as m
from ...ir.span import Span

LOOPS = (m.For, m.While, m.DoWhile)


def reread_branch(body, in_loops: bool = True) -> Span | None:
    """The first branch inside a loop of ``body`` (anywhere in it, ``in_loops`` false: the body
    of a device function a loop may call) whose condition reads an element of an array that the
    branch stores to, with more than that one store in the branch; None if there is none."""
    if body is None:
        return None
    # one pre-order walk: the first such branch of the first loop (in pre-order) holding one is
    # the first in pre-order that lies in some loop's body (a loop inside holds no earlier one)
    stack = [(body, not in_loops)]
    while stack:
        node, inside = stack.pop()
        if inside and isinstance(node, m.If) and _rereads(node):
            return node.span
        kids = m.children(node)
        if not inside and isinstance(node, LOOPS):
            stack.extend((k, k is node.body) for k in reversed(kids))
        else:
            stack.extend((k, inside) for k in reversed(kids))
    return None


def _rereads(branch: m.If) -> bool:
    read = {root.name for n in m.walk(branch.cond) if isinstance(n, m.Index)
            for root in (m.access_root(n),) if root is not None}
    if not read:
        return False
    for side in (branch.then, branch.other):
        if side is None:
            continue
        stored = [m.access_root(n.target) for n in m.walk(side)
                  if isinstance(n, m.Assign) and isinstance(n.target, m.Index)]
        stores = sum(1 for n in m.walk(side) if isinstance(n, m.Assign) or
                     (isinstance(n, m.Unary) and n.op in ("++", "--")))
        if stores > 1 and any(r is not None and r.name in read for r in stored):
            return True
    return False
