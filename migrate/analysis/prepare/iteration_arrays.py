"""A thread's local array that each iteration of a loop around barriers writes whole before it
reads it, declared inside that iteration: ``uint8_t q[NUM];`` at the kernel's top, then in a
loop with a barrier ``for (j = 0; j < NUM; j++) q[j] = f(v[j]); ... out[i + k] = q[k];``
(quantBnB's ``kQuantize``, CUB's ``BlockStore`` of a thread's items).

Declared at the top, the array is named in two of the portable form's phases (its declaration's
and the loop's), so it was kept across the barriers as a shared array with a row per thread: a
shared store per element written and a load per element read, where the CUDA kept registers.
No value of it crosses a barrier: every iteration overwrites all its elements before anything
reads one. Declared where that write starts, it is a local of the one phase that uses it.

Moved only where that holds: every use after the declaration lies inside one loop (through
nested loops and blocks) whose body, from where the declaration goes, first names the array in
a counted loop from 0 to the array's extent that stores ``q[k] = ...`` unconditionally in each
iteration, reads no element of it and cannot leave early (no ``break``, ``continue`` or
``return`` of its own); and only where a barrier lies between the old place and the new and none
between the first use and the last after it (the array is then one phase's own: the placement
would not change otherwise). Runs on kernels in the portable form.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import counted_range, is_ref
from .inline import contains_barrier

_LOOPS = (m.For, m.While, m.DoWhile)


def iteration_arrays(fn: m.Function) -> m.Function:
    """``fn`` with each such array declared in the iteration that writes it whole (module
    docstring)."""
    if fn.body is None or not contains_barrier(fn.body):
        return fn
    return dataclasses.replace(fn, body=_block(fn.body))


def _block(block: m.Block) -> m.Block:
    stmts = [_inner(s) for s in block.stmts]
    p = 0
    while p < len(stmts):
        s = stmts[p]
        name = _array_decl(s)
        moved = _moved(s, name, stmts[p + 1:]) if name else None
        if moved is not None:
            stmts[p + 1:] = moved
            del stmts[p]
            continue
        p += 1
    return dataclasses.replace(block, stmts=tuple(stmts))


def _inner(s):
    """``s`` with its nested blocks done first."""
    if isinstance(s, m.Block):
        return _block(s)
    if isinstance(s, _LOOPS) and isinstance(s.body, m.Block):
        return dataclasses.replace(s, body=_block(s.body))
    if isinstance(s, m.If):
        then = _block(s.then) if isinstance(s.then, m.Block) else s.then
        other = _block(s.other) if isinstance(s.other, m.Block) else s.other
        return dataclasses.replace(s, then=then, other=other)
    return s


def _array_decl(s) -> str | None:
    if isinstance(s, m.DeclStmt) and len(s.decls) == 1:
        d = s.decls[0]
        t = d.type
        if d.init is None and d.storage == "local" and isinstance(t, m.Array) and not t.volatile \
                and isinstance(t.element, m.Scalar) and t.extent is not None and t.extent > 0:
            return d.name
    return None


def _names(node, name: str) -> bool:
    return any(isinstance(n, m.Ref) and n.name == name for n in m.walk(node))


def _moved(decl: m.DeclStmt, name: str, rest: list) -> list | None:
    """``rest`` (the statements after ``decl``, which declares ``name``) with the declaration
    inside the loop that writes the array whole each iteration, or None where it does not move."""
    using = [q for q, s in enumerate(rest) if _names(s, name)]
    if len(using) != 1:
        return None
    q = using[0]
    crossed = any(contains_barrier(s) for s in rest[:q])
    new = _into(rest[q], name, decl, crossed)
    if new is None:
        return None
    return rest[:q] + [new] + rest[q + 1:]


def _into(s, name: str, decl: m.DeclStmt, crossed: bool):
    """``s`` (the one statement naming the array) with the declaration moved into it, or None."""
    if isinstance(s, m.Block):
        stmts = list(s.stmts)
    elif isinstance(s, _LOOPS) and isinstance(s.body, m.Block):
        if isinstance(s, m.For) and any(_names(x, name) for x in (s.init, s.cond, s.step) if x is not None) \
                or isinstance(s, (m.While, m.DoWhile)) and _names(s.cond, name):
            return None
        crossed = crossed or contains_barrier(s)
        stmts = list(s.body.stmts)
    else:
        return None
    using = [q for q, x in enumerate(stmts) if _names(x, name)]
    if not using:
        return None
    q = using[0]
    crossed = crossed or any(contains_barrier(x) for x in stmts[:q])
    if _writes_whole(stmts[q], name):
        # moved only where it becomes one phase's own: no barrier between its first use and its last
        if not crossed or any(contains_barrier(x) for x in stmts[q:using[-1] + 1]):
            return None
        stmts.insert(q, decl)
    elif len(using) == 1:
        inner = _into(stmts[q], name, decl, crossed)
        if inner is None:
            return None
        stmts[q] = inner
    else:
        return None
    if isinstance(s, m.Block):
        return dataclasses.replace(s, stmts=tuple(stmts))
    return dataclasses.replace(s, body=dataclasses.replace(s.body, stmts=tuple(stmts)))


def _writes_whole(s, name: str) -> bool:
    """``s`` is ``for (int k = 0; k < N; k++) { ... name[k] = v; ... }`` over the whole array of
    extent ``N``, storing ``name[k]`` at the top of its body, naming the array nowhere else, and
    running every iteration to its end."""
    counted = counted_range(s)
    if counted is None or not isinstance(s.body, m.Block) or counted[1:] != (0, _extent(s, name)):
        return False
    k = counted[0]
    stores = set()
    for x in s.body.stmts:
        if isinstance(x, m.ExprStmt) and isinstance(x.expr, m.Assign) and x.expr.op == "=" \
                and isinstance(x.expr.target, m.Index) and is_ref(x.expr.target.base, name) \
                and is_ref(x.expr.target.index, k) and not _names(x.expr.value, name):
            stores.add(id(x.expr.target.base))
    if not stores:
        return False
    for n in m.walk(s.body):
        if isinstance(n, m.Ref) and n.name == name and id(n) not in stores:
            return False  # read, or stored elsewhere than at the top
        if isinstance(n, m.Return):
            return False
    return not _leaves(s.body)


def _leaves(node) -> bool:
    """A ``break`` or ``continue`` of this loop inside ``node`` (not of a loop or switch nested in it)."""
    if isinstance(node, (m.Break, m.Continue)):
        return True
    if isinstance(node, _LOOPS):
        return False
    if isinstance(node, m.Switch):
        return any(isinstance(n, m.Continue) for n in m.walk(node))
    if isinstance(node, m.Block):
        return any(_leaves(x) for x in node.stmts)
    if isinstance(node, m.If):
        return _leaves(node.then) or (node.other is not None and _leaves(node.other))
    if isinstance(node, m.Case):
        return _leaves(node.body)
    return False


def _extent(s, name: str):
    for n in m.walk(s):
        if isinstance(n, m.Ref) and n.name == name and isinstance(n.type, m.Array):
            return n.type.extent
    return None
