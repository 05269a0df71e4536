"""Choose the migrated form of a kernel from its model: ``portable``, ``simt`` or ``unsupported``.

- ``unsupported``: the frontend reported an error-severity diagnostic inside the kernel.
- ``simt``: the kernel needs thread-level TileLang: warp-synchronous code (shuffles, votes,
  cooperative-group tiles) or a barrier under control flow that depends on the thread index.
- ``portable``: everything else; barriers are uniform, so each stretch between barriers can
  become a tile-level ``T.Parallel`` phase.

The reason for the choice is returned with it, for the report.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..codes import Severity
from ..parse import model as m


@dataclass(frozen=True)
class FormChoice:
    form: str
    reason: str


def thread_dependent_names(fn: m.Function) -> set[str]:
    """Local variables whose value can differ between the threads of a block (a fixpoint).

    A variable is thread-dependent when a value assigned to it depends on the thread, or when
    it is assigned under control flow that does.
    """
    assigned: list[tuple[str, m.Expr, tuple[m.Expr, ...]]] = []

    def target_name(e):
        while isinstance(e, (m.Index, m.Member)):
            e = e.base
        return e.name if isinstance(e, m.Ref) and e.kind == "local" else None

    # A guard is (condition, names declared under it): a variable declared inside a branch is
    # only ever seen by the threads that take it, so the branch does not make it differ.
    def declared(node) -> frozenset:
        return frozenset(n.name for n in m.walk(node) if isinstance(n, m.VarDecl))

    def record(name, value, guards):
        assigned.append((name, value, tuple(c for c, inside in guards if name not in inside)))

    def visit(node, guards: tuple):
        if isinstance(node, m.VarDecl):
            if node.init is not None:
                record(node.name, node.init, guards)
            return
        if isinstance(node, m.Assign):
            name = target_name(node.target)
            if name:
                record(name, node.value, guards)
                if isinstance(node.target, m.Index):
                    record(name, node.target.index, guards)
        if isinstance(node, m.Unary) and node.op in ("++", "--"):
            name = target_name(node.operand)
            if name:
                record(name, node.operand, guards)
        if isinstance(node, m.If):
            visit(node.cond, guards)
            inner = guards + ((node.cond, declared(node)),)
            visit(node.then, inner)
            if node.other is not None:
                visit(node.other, inner)
            return
        if isinstance(node, (m.For, m.While, m.DoWhile)):
            if isinstance(node, m.For) and node.init is not None:
                visit(node.init, guards)
            inner = guards + (((node.cond, declared(node)),) if node.cond is not None else ())
            if isinstance(node, m.For) and node.step is not None:
                visit(node.step, inner)
            visit(node.body, inner)
            return
        if isinstance(node, m.Switch):
            visit(node.body, guards + ((node.cond, declared(node)),))
            return
        for child in m.children(node):
            visit(child, guards)

    if fn.body is not None:
        visit(fn.body, ())
    dependent: set[str] = set()
    changed = True
    while changed:
        changed = False
        for name, value, guards in assigned:
            if name in dependent:
                continue
            if depends_on_thread(value, dependent) or any(depends_on_thread(g, dependent) for g in guards):
                dependent.add(name)
                changed = True
    return dependent


def depends_on_thread(expr: m.Expr, dependent: set[str]) -> bool:
    for node in m.walk(expr):
        if isinstance(node, m.Builtin) and node.var == "threadIdx":
            return True
        if isinstance(node, m.Ref) and node.name in dependent:
            return True
        if isinstance(node, m.Call) and node.kind in ("warp", "atomic"):
            return True
        if isinstance(node, m.MethodCall) and node.method in ("thread_rank", "meta_group_rank"):
            return True
        if isinstance(node, m.Index):
            # a value loaded from memory may differ per thread unless the index is uniform
            if depends_on_thread(node.index, dependent):
                return True
    return False


def _barrier_under_divergence(stmt: m.Stmt, dependent: set[str], divergent: bool) -> bool:
    if isinstance(stmt, m.ExprStmt):
        return divergent and any(
            (isinstance(n, m.Call) and n.kind == "sync" and n.callee.startswith("__syncthreads"))
            or (isinstance(n, m.MethodCall) and n.method == "sync")
            for n in m.walk(stmt.expr))
    if isinstance(stmt, m.If):
        inner = divergent or depends_on_thread(stmt.cond, dependent)
        return _barrier_under_divergence(stmt.then, dependent, inner) or (
            stmt.other is not None and _barrier_under_divergence(stmt.other, dependent, inner))
    if isinstance(stmt, (m.For, m.While, m.DoWhile)):
        cond = stmt.cond
        inner = divergent or (cond is not None and depends_on_thread(cond, dependent))
        return _barrier_under_divergence(stmt.body, dependent, inner)
    if isinstance(stmt, (m.Switch,)):
        return _barrier_under_divergence(stmt.body, dependent, divergent or depends_on_thread(stmt.cond, dependent))
    if isinstance(stmt, m.Case):
        return _barrier_under_divergence(stmt.body, dependent, divergent)
    if isinstance(stmt, m.Block):
        return any(_barrier_under_divergence(s, dependent, divergent) for s in stmt.stmts)
    return False


def choose_form(fn: m.Function, diagnostics, device_functions: dict[str, m.Function] = {}) -> FormChoice:
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        return FormChoice("unsupported", f"{errors[0].code}: {errors[0].message}")
    if fn.body is None:
        return FormChoice("unsupported", "kernel has no body")
    bodies = [fn] + [device_functions[c] for c in _callees(fn, device_functions)]
    for f in bodies:
        for node in m.walk(f.body) if f.body else ():
            if isinstance(node, m.Call) and node.kind in ("warp", "cg"):
                return FormChoice("simt", f"warp-level operation '{node.callee}'")
            if isinstance(node, m.MethodCall) and node.method.startswith(("shfl", "ballot", "any", "all")):
                return FormChoice("simt", f"cooperative-groups tile operation '{node.method}'")
            if isinstance(node, m.Call) and node.callee == "__syncwarp":
                return FormChoice("simt", "warp barrier '__syncwarp'")
    for f in bodies:
        if f.body is not None and _barrier_under_divergence(f.body, thread_dependent_names(f), False):
            return FormChoice("simt", "barrier under thread-dependent control flow")
    return FormChoice("portable", "uniform barriers")


def _callees(fn: m.Function, table: dict[str, m.Function]) -> list[str]:
    seen, stack = [], list(fn.calls)
    while stack:
        name = stack.pop()
        if name in seen or name not in table:
            continue
        seen.append(name)
        stack.extend(table[name].calls)
    return seen
