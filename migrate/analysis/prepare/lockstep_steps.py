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

A store whose value reads none of that memory (``l_V[i * 33] = d_Src[i * stride]``) needs no
temporary: ``__syncthreads(); l_V[i * 33] = d_Src[i * stride]; __syncthreads();``. A loop whose
body then starts and ends with a step's barrier keeps one before it instead of one at the start
of every iteration, and a step's barrier with nothing between it and the one before that touches
the exchanged memory is dropped.

(:func:`lockstep_steps`, before inlining, on the function that exchanges: the kernel, or the
device function in the unit's table, where every kernel that calls it gets the same steps). A
branch that only some threads take and that now holds such barriers, ``if (tid < 32) {...}``, is
then taken apart around them (:func:`barriers_out_of_branches`, after inlining): each stretch
between barriers is guarded by the branch's condition, which must read nothing the branch
assigns, and the stretch's declarations move before it; a nested branch whose condition has no
effects and loads nothing is taken apart the same way. A branch with an ``else``, an exit, or a
loop around such barriers is left as it is unless every thread would run it alike (a loop of
uniform bounds, :class:`_Apart`), and a kernel whose steps would then sit under a branch or loop
only some threads run, or in thread-level code, is refused.

The barriers are block-wide where CUDA synchronised a warp: the same order for the warp's own
elements (warps of a block exchange nothing here: CUDA would race if they did). They carry
:data:`MARK`, which the phase split keeps (``Barrier.warp``): the portable form orders only each
warp there on GPUs (emit.kernel.warp_barriers).
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

    own = _own_element_loops(fn.body, element)

    def split(s):
        if isinstance(s, (m.For, m.While)) and (s.span, type(s).__name__) in own:
            return [s, _barrier(s.span)]  # its stores are each thread's own: one barrier after it
        if not isinstance(s, m.ExprStmt) or any(s.span == span for span, _k in own_spans(s)):
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
        if e.op == "=" and pure(value) and not any(element(n) for n in m.walk(value)) \
                and not any(element(n) for n in m.walk(target) if n is not target):
            # the value reads no memory the threads exchange (``l_V[i * 33] = src[i * stride]``):
            # every thread may compute it where it stores it, after the step's first barrier (which
            # orders earlier reads of the element before the store), with no temporary; the
            # barriers of consecutive such steps are one
            return [_barrier(s.span), s, _barrier(s.span)]
        name = fresh("step", taken)
        ctype = target.type
        step = m.Ref(name, "local", ctype, s.span)
        return [m.DeclStmt((m.VarDecl(name, ctype, "local", False, value, s.span),), s.span), _barrier(s.span),
                m.ExprStmt(m.Assign("=", target, step, ctype, s.span), s.span), _barrier(s.span)]

    inside = {id(n) for loop in m.walk(fn.body) if isinstance(loop, (m.For, m.While))
              and (loop.span, type(loop).__name__) in own for n in m.walk(loop.body)}

    def own_spans(s):
        return [(s.span, "")] if id(s) in inside else []

    def hoist(s):
        # a loop whose body starts and ends with a step's barrier: the leading one of every
        # iteration but the first follows the trailing one of the iteration before, with nothing
        # between that reads or writes memory (the loop's own condition and step read none the
        # threads exchange): one barrier before the loop orders the first iteration's
        if not isinstance(s, (m.For, m.While)) or not isinstance(s.body, m.Block) or len(s.body.stmts) < 3:
            return None
        first, last = s.body.stmts[0], s.body.stmts[-1]
        if not (_is_barrier_stmt(first) and _is_barrier_stmt(last)):
            return None
        heads = (getattr(s, "init", None), s.cond, getattr(s, "step", None))
        if any(element(n) or isinstance(n, (m.Call, m.MethodCall)) for x in heads if x is not None for n in m.walk(x)):
            return None
        return [first, dataclasses.replace(s, body=dataclasses.replace(s.body, stmts=s.body.stmts[1:]))]

    def touches(x) -> bool:
        return any(element(n) or isinstance(n, m.MethodCall) or isinstance(n, m.Call) and n.kind not in ("math", "conversion")
                   for n in m.walk(x))

    def merged(b):
        # a step's barrier after another with nothing between that touches the memory the threads
        # exchange (``idx += 32`` between ``s[idx] = 0`` and ``s[idx] = v``) orders nothing more
        if not isinstance(b, m.Block):
            return None
        out, quiet = [], False
        for x in b.stmts:
            if _is_barrier_stmt(x):
                if quiet:
                    continue
                quiet = True
            elif touches(x):
                quiet = False
            out.append(x)
        return [dataclasses.replace(b, stmts=tuple(out))]

    body = expand_statements(fn.body, split, every=True)
    body = expand_statements(body, hoist, every=True)
    body = expand_statements(body, merged, every=True)
    return dataclasses.replace(fn, body=merged(body)[0] if isinstance(body, m.Block) else body)


def _is_barrier_stmt(s) -> bool:
    return isinstance(s, m.ExprStmt) and is_lockstep_barrier(s.expr)


def _own_element_loops(body, element) -> set:
    """The loops (their span and kind) that touch the memory threads exchange through only at one
    element, the same index in every access, which the loop does not change (``for (i = start +
    lane; i < end; i += g) result[threadIdx.x] += values[i] * x[col[i]];``): a thread's own
    partial sum, which no other thread reads while the loop runs. Such a loop needs no lockstep
    steps inside (whose barriers a loop of per-thread bounds could not hold), only one barrier
    after it, before another thread reads the element."""
    out = set()
    for loop in m.walk(body) if body is not None else ():
        if not isinstance(loop, (m.For, m.While)):
            continue
        accesses = [n for n in m.walk(loop) if isinstance(n, (m.Index, m.Unary)) and element(n)]
        if not accesses or not all(isinstance(a, m.Index) for a in accesses):
            continue
        keys = {m.key(a.index) for a in accesses}
        changed = assigned_names(loop)
        if len(keys) == 1 and not ({n.name for n in m.walk(accesses[0].index) if isinstance(n, m.Ref)} & changed) \
                and not any(isinstance(n, (m.Index, m.Unary)) and element(n) for n in m.walk(accesses[0].index)):
            out.add((loop.span, type(loop).__name__))
    return out


def barriers_out_of_branches(fn: m.Function) -> m.Function:
    """``if (c) { A; barrier; B; }`` as ``if (c) A; barrier; if (c) B;`` for the barriers
    :func:`lockstep_steps` wrote (see the module's text for when)."""
    if fn.body is None or not any(is_lockstep_barrier(n) for n in m.walk(fn.body)):
        return fn
    apart = _Apart(fn)
    return dataclasses.replace(fn, body=expand_statements(fn.body, apart.taken_apart, every=True))


def stranded_barrier(fn: m.Function):
    """The first barrier :func:`lockstep_steps` wrote that is left under a branch or loop whose
    condition differs between threads (where not every thread would reach it), or None."""
    if fn.body is None or not any(is_lockstep_barrier(n) for n in m.walk(fn.body)):
        return None  # (no barrier of lockstep_steps': none stranded; most kernels)
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


class _Apart:
    """Takes branches apart around the lockstep barriers in them (:meth:`distribute`). A loop
    around such barriers inside the branch is kept whole where every thread would run it alike
    (``int half = group_size / 2; while (half > 0) { if (lane < half) {steps} half /= 2; }``):
    its condition reads only uniform values (parameters, locals no thread's path changes, and
    locals the branch declares from such values), and each assignment it makes to what its
    condition reads is a statement of its own, of such values; those run for every thread,
    unguarded, as do the declarations they start from, while the rest of the loop is guarded by
    the branch's condition."""

    def __init__(self, fn: m.Function):
        self.dependent = thread_dependent_names(fn)
        self.params = {p.name for p in fn.params}

    def taken_apart(self, s) -> list | None:
        if not (isinstance(s, m.If) and s.other is None and _holdsis_lockstep_barrier(s.then)):
            return None
        return self.distribute(s.cond, _stmts(s.then), s.span, set())

    def uniform(self, e, known: set[str]) -> bool:
        """Every thread computes ``e`` alike, and evaluating it anywhere is harmless: no thread
        index, no load, no effect, no division by what may be zero."""
        if e is None:
            return True
        if not pure(e, math=True):
            return False
        for n in m.walk(e):
            if isinstance(n, (m.Index, m.Call, m.MethodCall, m.Member)) or isinstance(n, m.Builtin) \
                    and n.var == "threadIdx" or isinstance(n, m.Unary) and n.op in ("*", "&"):
                return False
            if isinstance(n, m.Binary) and n.op in ("/", "%") and not isinstance(n.rhs, m.IntLit):
                return False
            if isinstance(n, m.Ref) and not (n.name in known or n.name in self.params
                                             or n.kind == "local" and n.name not in self.dependent):
                return False
        return True

    def uniform_loop(self, st, known: set[str]) -> bool:
        """Whether loop ``st`` runs alike for every thread (see the class's text)."""
        if isinstance(st, m.While):
            control = [st.cond]
        elif isinstance(st, m.For) and not isinstance(st.init, m.DeclStmt):
            control = [st.cond, st.step, st.init]
        else:
            return False
        reads = {n.name for c in control if c is not None for n in m.walk(c) if isinstance(n, m.Ref)}
        if not all(self.uniform(c, known | reads) for c in control):
            return False
        for top in _stmts(st.body):
            if reads & assigned_names(top) and not self.update(top, reads, known | reads):
                return False
        return all(self.uniform(x, known | reads) for x in (st.cond,))

    def update(self, st, control: set[str], known: set[str]) -> bool:
        """``half /= 2``: a statement assigning a control name only, of uniform values."""
        e = st.expr if isinstance(st, m.ExprStmt) else None
        return isinstance(e, m.Assign) and isinstance(e.target, m.Ref) and e.target.name in control \
            and self.uniform(e.value, known)

    def distribute(self, cond, stmts, span, known: set[str]) -> list | None:
        """The statements ``if (cond) {stmts}`` becomes, or None where it cannot be taken apart;
        ``known``: the locals the branch declared from uniform values."""
        if not pure(cond, math=True) or any(isinstance(n, (m.Return, m.Break, m.Continue)) for st in stmts
                                            for n in m.walk(st)):
            return None
        read = {n.name for n in m.walk(cond) if isinstance(n, m.Ref)}
        if read & set().union(*(assigned_names(st) for st in stmts)):
            return None
        known = set(known)
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
                        if d.init is not None and isinstance(d.type, m.Scalar) and self.uniform(d.init, known):
                            out.append(m.DeclStmt((d,), st.span))  # the same for every thread: kept whole
                            known.add(d.name)
                            continue
                        out.append(m.DeclStmt((dataclasses.replace(d, init=None),), st.span))
                        if d.init is not None:
                            target = m.Ref(d.name, "local", d.type, d.span)
                            pending.append(m.ExprStmt(m.Assign("=", target, d.init, d.type, d.span), st.span))
                else:
                    pending.append(st)
            elif isinstance(st, m.If) and st.other is None and pure(st.cond, math=True) \
                    and not any(isinstance(n, (m.Index, m.Call, m.MethodCall)) for n in m.walk(st.cond)):
                inner = self.distribute(cond, _stmts(st.then), st.span, known)
                if inner is None:
                    return None
                flush()
                out.append(m.If(st.cond, m.Block(tuple(inner), st.span), None, st.span))
            elif isinstance(st, m.Block):
                inner = self.distribute(cond, st.stmts, st.span, known)
                if inner is None:
                    return None
                flush()
                out.extend(inner)
            elif isinstance(st, (m.While, m.For)) and self.uniform_loop(st, known):
                flush()
                control = {n.name for c in ((st.cond,) if isinstance(st, m.While) else (st.cond, st.step, st.init))
                           if c is not None for n in m.walk(c) if isinstance(n, m.Ref)}
                body, rest = [], []
                for top in _stmts(st.body):
                    if assigned_names(top) & control:
                        inner = self.distribute(cond, rest, st.span, known | control) if rest else []
                        if inner is None:
                            return None
                        body += inner + [top]
                        rest = []
                    else:
                        rest.append(top)
                inner = self.distribute(cond, rest, st.span, known | control) if rest else []
                if inner is None:
                    return None
                body += inner
                if isinstance(st, m.While) and body and isinstance(body[-1], m.ExprStmt) \
                        and assigned_names(body[-1]) & control \
                        and not any(assigned_names(b) & control for b in body[:-1]):
                    # while (half > 0) {...; half /= 2;}: a for loop stepping half, which the
                    # portable form keeps at the block's level (not a thread's value in a phase)
                    out.append(m.For(None, st.cond, body[-1].expr, m.Block(tuple(body[:-1]), st.span), (), st.span))
                else:
                    out.append(dataclasses.replace(st, body=m.Block(tuple(body), st.span)))
            else:
                return None  # an else, or a loop only some threads would run, around the barriers
        flush()
        return out
