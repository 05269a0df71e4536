"""``__shared__`` scalars that carry one block-wide value, as variables every thread computes.

A block often hands one value to all its threads through a shared scalar that thread 0 sets
before a barrier (moe's softmax, vLLM's quantisers, a row's label):

    const float m = <block reduction of v>;        // the same in every thread
    if (threadIdx.x == 0) { s_max = m; out[blockIdx.x] = m; }
    __syncthreads();
    ... x[i] - s_max ...

When the stored value is the same in every thread — it reads only parameters, launch sizes, block
indices, constants, locals that are the same in every thread (:func:`~..facts.divergence.thread_dependent_names`)
and buffers the kernel never writes, at such places — every thread can compute it where thread 0
stored it, and the scalar is a variable of each thread holding that value: the barrier that
published it orders nothing any more, and the lifts see one shared value fewer (a block reduction
whose total is broadcast this way lifts as the reduction and the code after it).

Taken for a scalar (not an array, not ``extern``) whose every use is a read or a plain
``S = e;`` statement, whose address is never taken, and each of whose stores stands in code every
thread of the block runs (its enclosing branches and loops test values the same in every thread),
either on its own (every thread stored the same value: nothing changes) or among the statements
that open an ``if`` taken by thread 0 alone (``threadIdx.x == 0`` in a kernel that indexes threads
in x only, or the same test of every thread dimension it uses), with no ``else``: those leading
stores move before the ``if``, which keeps the rest. A read of the scalar in the CUDA sees the
last store before a barrier (a read the barrier does not order is a race in CUDA); every thread
now reads its own copy, stored at the same place in its program, so it reads the same value.
Anything else leaves the function as it is.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import assigned_names, changed_names, conjuncts, const_value, pure, strip_casts
from ...ir.visit import Transformer
from ..facts.builtins import builtin_dims
from ..facts.divergence import depends_on_thread, thread_dependent_names
from ..facts.locals import expand, single_assignment_locals


def _candidates(fn: m.Function) -> dict[str, m.VarDecl]:
    return {d.name: d for d in m.walk(fn.body) if isinstance(d, m.VarDecl) and d.storage == "shared"
            and isinstance(d.type, (m.Scalar, m.TemplateType)) and d.init is None}


def _plain_store(st, names) -> str | None:
    """The scalar of ``names`` that ``st`` stores by ``S = e;``, or None."""
    if isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "=" \
            and isinstance(st.expr.target, m.Ref) and st.expr.target.kind == "shared" and st.expr.target.name in names:
        return st.expr.target.name
    return None


def _is_thread_zero(cond, table, dims: set[str]) -> bool:
    """``cond`` holds for thread 0 alone: ``threadIdx.d == 0`` for every thread dimension ``dims``."""
    tested = set()
    for c in conjuncts(cond):
        c = strip_casts(c)
        if not (isinstance(c, m.Binary) and c.op == "=="):
            return False
        for t, z in ((c.lhs, c.rhs), (c.rhs, c.lhs)):
            t = strip_casts(expand(t, table))
            if isinstance(t, m.Builtin) and t.var == "threadIdx" and const_value(z) == 0:
                tested.add(t.dim)
                break
        else:
            return False
    return tested == dims


def _assigned_value(st):
    """(local, value) that ``st`` stores by ``L = e;`` or declares ``T L = e;``, or None."""
    if isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "=" \
            and isinstance(st.expr.target, m.Ref) and st.expr.target.kind == "local":
        return st.expr.target.name, st.expr.value
    if isinstance(st, m.DeclStmt) and len(st.decls) == 1 and st.decls[0].init is not None \
            and not isinstance(st.decls[0].init, m.InitList):
        return st.decls[0].name, st.decls[0].init
    return None


class _Scan:
    """Finds the stores of the candidates and where they stand."""

    def __init__(self, fn: m.Function, names: set[str]) -> None:
        self.names = names
        self.dependent = self.thread_dependent = thread_dependent_names(fn)
        self.table = single_assignment_locals(fn.body)
        self.dims = builtin_dims([fn])[0] or {"x"}
        written = {m.access_root(t).name for n in m.walk(fn.body) for t in (m.store_target(n),)
                   if t is not None and not isinstance(t, m.Ref) and m.access_root(t) is not None}
        # buffers whose cells may change while the kernel runs: written, or passed on, or atomics' targets
        for n in m.walk(fn.body):
            if isinstance(n, m.Call):
                for a in n.args:
                    root = m.access_root(strip_casts(a.operand) if isinstance(strip_casts(a), m.Unary)
                                         and strip_casts(a).op == "&" else strip_casts(a))
                    if root is not None:
                        written.add(root.name)
        self.written = written
        self.declared: dict[str, int] = {}
        for n in m.walk(fn.body):
            if isinstance(n, m.VarDecl):
                self.declared[n.name] = self.declared.get(n.name, 0) + 1
        for p in fn.params:
            self.declared[p.name] = self.declared.get(p.name, 0) + 1
        self.refused: set[str] = set()
        self.hoist: dict[int, set] = {}  # id of a thread-0 If -> the ids of its statements that move out
        self.stores: dict[str, list] = {n: [] for n in names}

    def uniform(self, e) -> bool:
        if not pure(e) or depends_on_thread(e, self.dependent):
            return False
        for n in m.walk(e):
            if isinstance(n, (m.Index, m.Member)) or isinstance(n, m.Unary) and n.op == "*":
                root = m.access_root(n)
                if root is None or root.kind != "param" or root.name in self.written:
                    return False  # memory some thread may change between thread 0's read and another's
            if isinstance(n, m.Ref) and n.kind not in ("param", "local", "constant", "template", "enum", "function") \
                    and not (n.kind == "shared" and n.name in self.names):
                return False
            if isinstance(n, m.Ref) and n.kind == "local" and n.name in self.dependent:
                return False
        return True

    def hoistable_decl(self, st) -> bool:
        """``st`` declares locals, each with a value the same in every thread, and no other
        declaration of the function has their names (they may move out of their branch)."""
        return isinstance(st, m.DeclStmt) and all(
            d.storage == "local" and isinstance(d.type, (m.Scalar, m.TemplateType)) and d.init is not None
            and not isinstance(d.init, m.InitList) and self.uniform(d.init) and self.declared.get(d.name) == 1
            for d in st.decls)

    def visit(self, node, uniform: bool) -> None:
        """``uniform``: every thread of the block runs ``node``."""
        if isinstance(node, m.If):
            if uniform and node.other is None and _is_thread_zero(node.cond, self.table, self.dims):
                stmts = node.then.stmts if isinstance(node.then, m.Block) else (node.then,)
                moved, kept_writes, kept_reads, outer = [], set(), set(), self.dependent
                for st in stmts:
                    name = _plain_store(st, self.names)
                    value = st.expr.value if name is not None else None
                    reads = {n.name for n in m.walk(st) if isinstance(n, m.Ref)}
                    if (name is not None and self.uniform(value) and name not in kept_reads
                            or name is None and self.hoistable_decl(st)) and not reads & kept_writes:
                        moved.append(st)
                        if name is not None:
                            self.stores[name].append(st)
                        else:  # the locals it declares hold the same value in every thread
                            self.dependent = self.dependent - {d.name for d in st.decls}
                        continue
                    kept_writes |= assigned_names(st) | {n.name for n in m.walk(st) if isinstance(n, m.VarDecl)}
                    kept_reads |= reads
                    self.visit(st, False)
                self.dependent = outer
                while moved and not _plain_store(moved[-1], self.names):
                    moved.pop()  # declarations no moved store reads stay where they are
                if any(_plain_store(st, self.names) for st in moved):
                    self.hoist[id(node)] = {id(st) for st in moved}
                else:
                    for st in moved:
                        self.visit(st, False)
                return
            inner = uniform and not depends_on_thread(node.cond, self.dependent)
            self.visit(node.then, inner)
            if node.other is not None:
                self.visit(node.other, inner)
            return
        if isinstance(node, m.Block) and uniform:
            # a local that differs between threads somewhere may hold, after a statement every
            # thread runs stores the same value into it, that value (a block reduction's total
            # stored back into the variable each thread summed into)
            outer, settled = self.dependent, set()
            for st in node.stmts:
                self.dependent = outer - settled
                self.visit(st, True)
                new = _assigned_value(st)
                settled -= changed_names(st)
                if new is not None and new[0] in outer and pure(new[1]) \
                        and not depends_on_thread(new[1], outer - settled):
                    settled.add(new[0])
            self.dependent = outer
            return
        if isinstance(node, (m.For, m.While, m.DoWhile)):
            outer = self.dependent  # an iteration starts from what the one before left
            self.dependent = outer | (changed_names(node) & self.thread_dependent)
            inner = uniform and (node.cond is None or not depends_on_thread(node.cond, self.dependent))
            if isinstance(node, m.For):
                if node.init is not None:
                    self.visit(node.init, uniform)
                if node.step is not None:
                    self.visit(node.step, inner)
            self.visit(node.body, inner)
            self.dependent = outer
            return
        if isinstance(node, m.Switch):
            self.visit(node.body, uniform and not depends_on_thread(node.cond, self.dependent))
            return
        if isinstance(node, (m.Return, m.Break, m.Continue)) and not uniform:
            self.refused |= self.names  # a thread leaves the code the others run: nothing is block-wide after
            return
        name = _plain_store(node, self.names)
        if name is not None:
            if uniform and self.uniform(node.expr.value):
                self.stores[name].append(node)
            else:
                self.refused.add(name)
            self.visit(node.expr.value, uniform)
            return
        if isinstance(node, m.Assign) and isinstance(node.target, m.Ref) and node.target.name in self.names:
            self.refused.add(node.target.name)  # a compound assignment, or an assignment used as a value
        if isinstance(node, m.Unary) and node.op in ("&", "++", "--") and isinstance(strip_casts(node.operand), m.Ref) \
                and strip_casts(node.operand).name in self.names:
            self.refused.add(strip_casts(node.operand).name)
        for child in m.children(node):
            self.visit(child, uniform)


class _Rewrite(Transformer):
    def __init__(self, names: set[str], hoist: dict[int, int]) -> None:
        self.names, self.hoist = names, hoist
        self.done: set[int] = set()

    def transform(self, node):
        if isinstance(node, m.Block):
            out, changed = [], False
            for st in node.stmts:
                ids = self.hoist.get(id(st)) if isinstance(st, m.If) else None
                if ids:
                    stmts = st.then.stmts if isinstance(st.then, m.Block) else (st.then,)
                    out += [super(_Rewrite, self).transform(s) for s in stmts if id(s) in ids]
                    rest = tuple(s for s in stmts if id(s) not in ids)
                    if rest:
                        then = m.Block(rest, st.then.span) if isinstance(st.then, m.Block) else rest[0]
                        out.append(super(_Rewrite, self).transform(dataclasses.replace(st, then=then)))
                    changed = True
                    self.done.add(id(st))
                else:
                    new = self.transform(st)
                    changed |= new is not st
                    out.append(new)
            return dataclasses.replace(node, stmts=tuple(out)) if changed else node
        return super().transform(node)

    def leave_Ref(self, node: m.Ref):
        if node.kind == "shared" and node.name in self.names:
            return dataclasses.replace(node, kind="local")
        return node

    def leave_VarDecl(self, node: m.VarDecl):
        if node.storage == "shared" and node.name in self.names:
            return dataclasses.replace(node, storage="local")
        return node


def block_scalars(fn: m.Function) -> m.Function:
    """``fn`` with its block-wide shared scalars as every thread's variables (module doc); ``fn``
    itself when it has none."""
    if fn.body is None:
        return fn
    names = set(_candidates(fn))
    while names:
        scan = _Scan(fn, names)
        scan.visit(fn.body, True)
        refused = scan.refused | {n for n in names if not scan.stores[n]}
        if not refused & names:
            break
        names -= refused
    if not names:
        return fn
    rewrite = _Rewrite(names, scan.hoist)
    body = rewrite.transform(fn.body)
    if rewrite.done != set(scan.hoist):
        return fn  # a thread-0 branch that is no statement of a block: its stores cannot move out
    return dataclasses.replace(fn, body=body)
