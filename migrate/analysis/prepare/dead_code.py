"""Dead code: declarations nothing reads any more, loops left with nothing to do, and statements a
pass has taken over (after forwarding or folding rewrote their readers)."""
from __future__ import annotations

from ...ir import model as m
from ...ir.exprs import pure
from ...ir.visit import Transformer


class DropStmts(Transformer):
    """Statements equal to one of ``drop`` become empty; so do declarations of ``names``."""

    def __init__(self, drop, names=frozenset()) -> None:
        self.drop, self.drop_names = drop, names

    def leave_ExprStmt(self, node):
        return m.Empty(node.span) if any(node == d for d in self.drop) else node

    def leave_DeclStmt(self, node):
        kept = tuple(d for d in node.decls if d.name not in self.drop_names)
        return node if len(kept) == len(node.decls) else (
            m.DeclStmt(kept, node.span) if kept else m.Empty(node.span))


class _DropEmptyLoops(Transformer):
    """Loops left with nothing to do (their stores forwarded away), whose header has no effect
    outside the loop: the init declares the loop's own variables with pure values, the
    condition is pure, the step assigns only those variables. (``for (j = 0; j < n && a[j] <= v;
    ++j) {}`` is a search: its work is the header, and ``j`` is read after it.)"""

    def leave_For(self, node):
        inner = [n for n in m.walk(node.body) if not isinstance(n, (m.Block, m.Empty, m.DeclStmt, m.VarDecl))
                 and isinstance(n, (m.ExprStmt, m.If, m.For, m.While, m.DoWhile, m.Return, m.Break, m.Continue))]
        decls_pure = all(pure(d.init) for d in m.walk(node.body) if isinstance(d, m.VarDecl) and d.init is not None)
        own = {d.name for d in node.init.decls} if isinstance(node.init, m.DeclStmt) else set()
        init_pure = node.init is None or (isinstance(node.init, m.DeclStmt) and all(
            d.init is None or pure(d.init) for d in node.init.decls))
        cond_pure = node.cond is None or pure(node.cond)
        step_own = node.step is None or _assigns_only(node.step, own)
        dead = not inner and decls_pure and init_pure and cond_pure and step_own
        return m.Empty(node.span) if dead else node

    def leave_If(self, node):
        parts = [node.then] + ([node.other] if node.other is not None else [])
        effects = [n for p in parts for n in m.walk(p)
                   if isinstance(n, (m.ExprStmt, m.For, m.While, m.DoWhile, m.Return, m.Break, m.Continue))]
        header = pure(node.cond) and all(pure(d.init) for p in parts for d in m.walk(p)
                                        if isinstance(d, m.VarDecl) and d.init is not None)
        return m.Empty(node.span) if not effects and header else node


def drop_dead_declarations(body):
    """Declarations of locals nothing reads any more (with side-effect-free initialisers), and
    loops left empty."""
    body = _DropEmptyLoops().transform(body)
    while True:
        used = {n.name for n in m.walk(body) if isinstance(n, m.Ref)}
        dead = {n.name for n in m.walk(body) if isinstance(n, m.VarDecl) and n.name not in used
                and n.storage == "local" and (n.init is None or pure(n.init))}
        if not dead:
            return body
        body = DropStmts([], dead).transform(body)


def _assigns_only(e, names: set[str]) -> bool:
    """``e`` (a loop's step) has no effect but assigning the variables ``names``."""
    for n in m.walk(e):
        target = m.store_target(n)
        if target is not None and not (isinstance(target, m.Ref) and target.name in names):
            return False
        if isinstance(n, (m.Call, m.MethodCall)) and not (isinstance(n, m.Call) and n.kind in ("math", "conversion")):
            return False
    return True
