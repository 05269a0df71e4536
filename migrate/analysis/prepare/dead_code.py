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
    """Loops left with nothing to do (their stores forwarded away) and pure headers."""

    def leave_For(self, node):
        inner = [n for n in m.walk(node.body) if not isinstance(n, (m.Block, m.Empty, m.DeclStmt, m.VarDecl))
                 and isinstance(n, (m.ExprStmt, m.If, m.For, m.While, m.DoWhile, m.Return, m.Break, m.Continue))]
        decls_pure = all(pure(d.init) for d in m.walk(node.body) if isinstance(d, m.VarDecl) and d.init is not None)
        header_pure = all(x is None or pure(x) for x in (node.cond,)) and (
            node.init is None or all(pure(d.init) for d in m.walk(node.init) if isinstance(d, m.VarDecl)
                                     and d.init is not None))
        return m.Empty(node.span) if not inner and decls_pure and header_pure else node

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
