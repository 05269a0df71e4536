"""How deep a printed kernel nests the blocks of Python that TileLang makes of it. TileLang parses
a ``@T.prim_func`` by rewriting its body into a function Python then compiles: each ``if`` (and
its ``else``, ``elif``) becomes a loop in a loop, two blocks; each ``while`` and ``for`` one,
and one that ``break``s or ``continue``s also a ``try`` (a ``for`` also a ``with``); each ``with``
one (measured on TileLang 0.1.15). Python compiles at most 20 nested blocks in a function ("too many
statically nested blocks"): a kernel nested deeper converts but never builds (the pool's
deredundancy, multimaterial and stsg), so it is refused with the depth instead."""
from __future__ import annotations

import ast

#: Python's limit on the statically nested blocks of one function (CPython's CO_MAXBLOCKS)
PYTHON_BLOCKS = 20


#: what each block a line opens costs at most (a loop costs 3 only where it jumps)
_OPENER_COST = (("if ", 2), ("for ", 3), ("while ", 3), ("with ", 1), ("try:", 1), ("except", 1),
                ("finally:", 1))


_OPENERS = tuple(word for word, _cost in _OPENER_COST) + ("elif ", "else:")


def depth_bound(lines) -> int:
    """An upper bound of :func:`block_depth` read off the lines' indentation and first words alone,
    without parsing (parsing every printed kernel cost a tenth of a pool's conversion). An ``elif``
    is an ``if`` inside the previous one's ``else`` (2 more), an ``else`` costs what the block it
    follows cost."""
    open_blocks: list[tuple[int, int]] = []  # (indent, cost from the function's top) of each block
    deepest = 0
    for ln in lines:
        before = None  # the block at this line's indent that it ends
        while open_blocks and open_blocks[-1][0] >= ln.indent:
            before = open_blocks.pop()
        outer = open_blocks[-1][1] if open_blocks else 0
        deepest = max(deepest, outer)
        text = ln.text  # (a block's line may end in a comment: its first word tells)
        if not text.startswith(_OPENERS):
            continue
        follows = before[1] if before is not None and before[0] == ln.indent else outer
        if text.startswith("elif "):
            cost = follows + 2
        elif text.startswith("else:"):
            cost = follows
        else:
            cost = outer + next((c for word, c in _OPENER_COST if text.startswith(word)), 0)
        open_blocks.append((ln.indent, cost))
        deepest = max(deepest, cost)
    return deepest


def block_depth(lines) -> int:
    """The deepest block nesting TileLang's rewrite gives the ``@T.prim_func`` bodies among the
    printed ``lines`` (:class:`~.printer.Line`); 0 where they do not parse on their own."""
    try:
        tree = ast.parse("\n".join("    " * ln.indent + ln.text for ln in lines))
    except SyntaxError:
        return 0
    deepest = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_is_prim_func(d) for d in node.decorator_list):
            deepest = max(deepest, _depth(node.body))
    return deepest


def _is_prim_func(decorator: ast.expr) -> bool:
    return isinstance(decorator, ast.Attribute) and decorator.attr == "prim_func"


def _depth(stmts) -> int:
    deepest = 0
    for s in stmts:
        if isinstance(s, ast.If):
            deepest = max(deepest, 2 + max(_depth(s.body), _depth(s.orelse)))
        elif isinstance(s, (ast.For, ast.While)):
            cost = 1 if not _jumps(s.body) else 3 if isinstance(s, ast.For) else 2
            deepest = max(deepest, cost + max(_depth(s.body), _depth(s.orelse)))
        elif isinstance(s, ast.With):
            deepest = max(deepest, 1 + _depth(s.body))
        elif isinstance(s, ast.Try):
            deepest = max(deepest, 1 + max(_depth(s.body), _depth(s.orelse), _depth(s.finalbody),
                                           *(_depth(h.body) for h in s.handlers)))
    return deepest


def _jumps(stmts) -> bool:
    """Whether a loop's body ``break``s or ``continue``s it (not an inner loop's)."""
    for s in stmts:
        if isinstance(s, (ast.Break, ast.Continue)):
            return True
        if isinstance(s, ast.If) and (_jumps(s.body) or _jumps(s.orelse)):
            return True
        if isinstance(s, (ast.With, ast.Try)) and _jumps(s.body):
            return True
    return False
