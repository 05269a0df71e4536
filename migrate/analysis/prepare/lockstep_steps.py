"""Warp-synchronous code as barrier-separated steps: the last warp of a tree reduction and the
warp scans old CUDA code writes through ``volatile`` shared memory,

    if (tid < 32) {                                   // min_warp_reduce(volatile int* s, int tid)
      s[tid] = min(s[tid], s[tid + 32]);
      s[tid] = min(s[tid], s[tid + 16]); ...

rely on the threads of a warp running each statement in lockstep: every thread reads, then every
thread writes (so do two pointer views of one shared array, a column written through one and a
row read through the other: dct8x8's transpose). Each store to such memory becomes that step,
spelled out:

    T step = min(s[tid], s[tid + 32]); __syncthreads(); s[tid] = step; __syncthreads();

(:func:`lockstep_steps`, before inlining, on the function that exchanges: the kernel, or the
device function in the unit's table, where every kernel that calls it gets the same steps). A
branch that only some threads take and that now holds such barriers, ``if (tid < 32) {...}``, is
then taken apart around them (:func:`barriers_out_of_branches`, after inlining): each stretch
between barriers is guarded by the branch's condition, which must read nothing the branch
assigns, and the stretch's declarations move before it; a nested branch whose condition has no
effects and loads nothing is taken apart the same way. A branch with an ``else``, an exit, or a
loop around such barriers is left as it is, and a kernel whose steps would then sit under a
branch or loop only some threads run, or in thread-level code, is refused.

The barriers are block-wide where CUDA synchronised a warp: the same order for the warp's own
elements (warps of a block exchange nothing here: CUDA would race if they did).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import assigned_names, pure
from ...ir.names import fresh
from ...ir.visit import expand_statements
from ..facts.divergence import depends_on_thread, thread_dependent_names
from ..facts.lockstep import lockstep_functions

#: the template-argument mark of the barriers this pass writes (no CUDA barrier has one)
MARK = ("lockstep",)
VOID = m.Scalar("void")


def _barrier(span) -> m.ExprStmt:
    return m.ExprStmt(m.Call("__syncthreads", (), "sync", MARK, VOID, span), span)


def is_lockstep_barrier(node) -> bool:
    """Whether ``node`` is a barrier :func:`lockstep_steps` wrote."""
    return isinstance(node, m.Call) and node.callee == "__syncthreads" and node.template_args == MARK


def lockstep_steps(fn: m.Function, device: dict[str, m.Function]) -> m.Function:
    """``fn`` (and, in ``device``, the device functions it reaches) with each store to memory its
    threads exchange through in lockstep written as a read, a barrier, a write and a barrier."""
    found = lockstep_functions(fn, device)
    for name, watched in found.items():
        if name == fn.name:
            fn = _steps(fn, watched)
        else:
            device[name] = _steps(device[name], watched)
    return fn


def _steps(fn: m.Function, watched: set[str]) -> m.Function:
    taken = {n.name for n in m.walk(fn) if isinstance(n, (m.Ref, m.VarDecl))} | {p.name for p in fn.params}

    def element(e) -> bool:
        root = m.access_root(e)
        return root is not None and root.name in watched and isinstance(e, (m.Index, m.Unary))

    def split(s):
        if not isinstance(s, m.ExprStmt):
            return None
        e = s.expr
        if isinstance(e, m.Assign) and element(e.target):
            target, value = e.target, e.value
            if e.op != "=":
                value = m.Binary(e.op[:-1], target, value, target.type, e.span)
        elif isinstance(e, m.Unary) and e.op in ("++", "--") and element(e.operand):
            target = e.operand
            value = m.Binary(e.op[0], target, m.IntLit(1, "1", m.Scalar("int32"), e.span), target.type, e.span)
        else:
            return None
        name = fresh("step", taken)
        ctype = target.type
        step = m.Ref(name, "local", ctype, s.span)
        return [m.DeclStmt((m.VarDecl(name, ctype, "local", False, value, s.span),), s.span), _barrier(s.span),
                m.ExprStmt(m.Assign("=", target, step, ctype, s.span), s.span), _barrier(s.span)]

    return dataclasses.replace(fn, body=expand_statements(fn.body, split, every=True))


def barriers_out_of_branches(fn: m.Function) -> m.Function:
    """``if (c) { A; barrier; B; }`` as ``if (c) A; barrier; if (c) B;`` for the barriers
    :func:`lockstep_steps` wrote (see the module's text for when)."""
    if fn.body is None or not any(is_lockstep_barrier(n) for n in m.walk(fn.body)):
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _taken_apart, every=True))


def stranded_barrier(fn: m.Function):
    """The first barrier :func:`lockstep_steps` wrote that is left under a branch or loop whose
    condition differs between threads (where not every thread would reach it), or None."""
    if fn.body is None:
        return None
    dependent = thread_dependent_names(fn)

    def visit(node, divergent: bool):
        if is_lockstep_barrier(node):
            return node.span if divergent else None
        if isinstance(node, m.If):
            divergent = divergent or depends_on_thread(node.cond, dependent)
        elif isinstance(node, (m.While, m.DoWhile)):
            divergent = divergent or depends_on_thread(node.cond, dependent)
        elif isinstance(node, m.For):
            divergent = divergent or any(depends_on_thread(x, dependent) for x in (node.cond, node.step, node.init)
                                         if x is not None)
        for child in m.children(node):
            found = visit(child, divergent)
            if found is not None:
                return found
        return None

    return visit(fn.body, False)


def _holdsis_lockstep_barrier(node) -> bool:
    return any(is_lockstep_barrier(n) for n in m.walk(node))


def _stmts(s) -> tuple:
    return s.stmts if isinstance(s, m.Block) else (s,)


def _taken_apart(s) -> list | None:
    if not (isinstance(s, m.If) and s.other is None and _holdsis_lockstep_barrier(s.then)):
        return None
    return _distribute(s.cond, _stmts(s.then), s.span)


def _distribute(cond, stmts, span) -> list | None:
    """The statements ``if (cond) {stmts}`` becomes, or None where it cannot be taken apart."""
    if not pure(cond, math=True) or any(isinstance(n, (m.Return, m.Break, m.Continue)) for st in stmts
                                        for n in m.walk(st)):
        return None
    read = {n.name for n in m.walk(cond) if isinstance(n, m.Ref)}
    if read & set().union(*(assigned_names(st) for st in stmts)):
        return None
    out, pending = [], []

    def flush():
        if pending:
            out.append(m.If(cond, m.Block(tuple(pending), span), None, span))
            pending.clear()

    for st in stmts:
        if isinstance(st, m.ExprStmt) and is_lockstep_barrier(st.expr):
            flush()
            out.append(st)
        elif not _holdsis_lockstep_barrier(st):
            if isinstance(st, m.DeclStmt):  # declared before the stretch, assigned in it
                for d in st.decls:
                    out.append(m.DeclStmt((dataclasses.replace(d, init=None),), st.span))
                    if d.init is not None:
                        target = m.Ref(d.name, "local", d.type, d.span)
                        pending.append(m.ExprStmt(m.Assign("=", target, d.init, d.type, d.span), st.span))
            else:
                pending.append(st)
        elif isinstance(st, m.If) and st.other is None and pure(st.cond, math=True) \
                and not any(isinstance(n, (m.Index, m.Call, m.MethodCall)) for n in m.walk(st.cond)):
            inner = _distribute(cond, _stmts(st.then), st.span)
            if inner is None:
                return None
            flush()
            out.append(m.If(st.cond, m.Block(tuple(inner), st.span), None, st.span))
        elif isinstance(st, m.Block):
            inner = _distribute(cond, st.stmts, st.span)
            if inner is None:
                return None
            flush()
            out.extend(inner)
        else:
            return None  # a loop or an else around the barriers
    flush()
    return out
