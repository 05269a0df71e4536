"""Small questions and rewrites on model expressions that every pass asks, in one place.

Each helper here is a pure function of the model (:mod:`.model`): casts stripped, a condition
negated or split into what its truth implies, whether evaluating an expression has an effect,
one node replaced by another. A helper that needs to know more than the expression (bounds,
affine forms, which threads a value differs in) is a fact query in ``analysis/facts/``.
"""
from __future__ import annotations

import dataclasses
import math

from .. import dtypes
from . import model as m

#: threads in a warp (``warpSize``)
WARP_SIZE = 32

#: CUDA's block-wide votes (analysis.prepare.block_votes)
BLOCK_VOTES = ("__syncthreads_count", "__syncthreads_and", "__syncthreads_or")
#: the callee of the block-uniform test that picks the native vote over the counter
#: (analysis.prepare.block_votes; the emitters print it, emit.portable)
NATIVE_VOTES = "__c2t_native_block_votes"


def is_block_vote(e) -> bool:
    """``e`` is a block-wide vote ``__syncthreads_and(p)`` (_or, _count): one value in every thread."""
    return isinstance(e, m.Call) and e.callee in BLOCK_VOTES and len(e.args) == 1


def is_native_votes(e) -> bool:
    """``e`` is the test of a vote's native branch (analysis.prepare.block_votes)."""
    return isinstance(e, m.Call) and e.callee == NATIVE_VOTES


def _is_int(t) -> bool:
    return isinstance(t, m.Scalar) and t.dtype in dtypes.INTEGERS


def negate(cond: m.Expr) -> m.Expr:
    """``!cond``, with a comparison flipped and a double negation dropped."""
    if isinstance(cond, m.Unary) and cond.op == "!":
        return cond.operand
    flips = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}
    if isinstance(cond, m.Binary) and cond.op in flips:
        return dataclasses.replace(cond, op=flips[cond.op])
    return m.Unary("!", cond, False, m.Scalar("bool"), cond.span)


def strip_casts(e):
    """``e`` without the casts around it."""
    while isinstance(e, m.Cast):
        e = e.operand
    return e


def strip_implicit_casts(e):
    """``e`` without the implicit conversions around it (an array's decay to a pointer, an
    argument's widening); a cast the source writes stays."""
    while isinstance(e, m.Cast) and e.style == "implicit":
        e = e.operand
    return e


def strip_int_casts(e):
    """``e`` without the integer-to-integer conversions around it (index arithmetic: the
    integer types an index is spelled in do not change its value far from overflow)."""
    while isinstance(e, m.Cast) and _is_int(e.target) and _is_int(e.operand.type):
        e = e.operand
    return e


def pure(e, math: bool = True) -> bool:
    """Evaluating ``e`` has no effect: no store, no ``++``/``--``, no method call, and no call but
    (with ``math``) the math and conversion functions, which depend on their arguments alone. A
    pure expression may be evaluated again, moved or dropped."""
    for n in m.walk(e):
        if isinstance(n, (m.Assign, m.MethodCall)) or (isinstance(n, m.Unary) and n.op in ("++", "--")):
            return False
        if isinstance(n, m.Call) and not (math and n.kind in ("math", "conversion")):
            return False
    return True


def always_evaluated(e):
    """The nodes of ``e`` that every evaluation of it evaluates (not right of ``&&``/``||``, not
    in a branch of ``?:``)."""
    yield e
    if isinstance(e, m.Binary) and e.op in ("&&", "||"):
        yield from always_evaluated(e.lhs)
        return
    if isinstance(e, m.Ternary):
        yield from always_evaluated(e.cond)
        return
    for c in m.children(e):
        yield from always_evaluated(c)


def reads_no_memory(e) -> bool:
    """``e`` is pure and loads nothing (no index, no dereference, no call at all): a value any
    loop may recompute wherever its operands are in scope."""
    return not any(isinstance(n, (m.Index, m.Call, m.MethodCall, m.Assign)) or
                   isinstance(n, m.Unary) and n.op in ("++", "--", "*") for n in m.walk(e))


def assigned_names(node) -> set[str]:
    """The locals ``node`` assigns or increments."""
    out = set()
    assign, unary, ref = m.Assign, m.Unary, m.Ref
    for n in m.walk(node):  # (m.store_target written out: asked of every node of many bodies)
        if isinstance(n, assign):
            target = n.target
        elif isinstance(n, unary) and n.op in ("++", "--"):
            target = n.operand
        else:
            continue
        if isinstance(target, ref):
            out.add(target.name)
    return out


def reused_names(node) -> set[str]:
    """The names ``node`` reads at least twice, a read inside a loop that does not declare the
    name counting as two (a value computed once and read so is worth keeping in a variable)."""
    counts: dict[str, int] = {}
    stack = [(node, None)]  # (node, the names its innermost enclosing loop declares, or None)
    while stack:
        n, inner = stack.pop()
        if isinstance(n, m.Ref):
            weight = 2 if inner is not None and n.name not in inner else 1
            counts[n.name] = counts.get(n.name, 0) + weight
        if isinstance(n, (m.For, m.While, m.DoWhile)):
            inner = {d.name for d in m.walk(n) if isinstance(d, m.VarDecl)}
        stack.extend((child, inner) for child in m.children(n))
    return {name for name, k in counts.items() if k > 1}


def changed_names(node) -> set[str]:
    """The locals ``node`` declares, assigns, increments or takes the address of."""
    out = assigned_names(node) | {n.name for n in m.walk(node) if isinstance(n, m.VarDecl)}
    return out | {strip_casts(n.operand).name for n in m.walk(node) if isinstance(n, m.Unary) and n.op == "&"
                  and isinstance(strip_casts(n.operand), m.Ref)}


def stored_roots(stmts) -> set[str]:
    """The variables ``stmts`` store into through an index, a member or a pointer (``S[i] = v``,
    ``p->n++``): their roots' names, ``"?"`` for a store whose root is no variable (a plain
    local's assignment is not one of them)."""
    out = set()
    for st in stmts:
        for n in m.walk(st):
            target = m.store_target(n)
            if target is not None and not isinstance(target, m.Ref):
                root = m.access_root(target)
                out.add(root.name if root is not None else "?")
    return out


def read_roots(stmts) -> set[str]:
    """The variables ``stmts`` read through an index, a member or a dereference: their roots' names."""
    return {root.name for st in stmts for n in m.walk(st)
            if isinstance(n, (m.Index, m.Member)) or (isinstance(n, m.Unary) and n.op == "*")
            for root in (m.access_root(n),) if root is not None}


def has_continue(s) -> bool:
    """Whether ``s`` holds a ``continue`` of the loop around it (not of a loop inside it)."""
    if isinstance(s, m.Continue):
        return True
    if isinstance(s, (m.For, m.While, m.DoWhile)):
        return False
    return any(has_continue(c) for c in m.children(s))


def replace_node(e, target, repl):
    """``e`` with the node ``target`` (by identity) replaced by ``repl``."""
    if e is target:
        return repl
    return m.map_children(e, lambda c: replace_node(c, target, repl))


def strip_bool_casts(e):
    """``e`` without the conversions of a bool to bool around it."""
    while isinstance(e, m.Cast) and e.target == m.Scalar("bool") and isinstance(e.operand.type, m.Scalar) \
            and e.operand.type.dtype == "bool":
        e = e.operand
    return e


#: a comparison's negation
NEGATED = {"<": ">=", ">=": "<", ">": "<=", "<=": ">", "==": "!=", "!=": "=="}


def conjuncts(c, strip=strip_casts) -> list:
    """The conditions a condition's truth implies: its ``&&`` terms, and under ``!`` the negated
    terms of an ``||`` (``!(r >= rows || c >= cols)``: ``r < rows``, ``c < cols``). ``strip``
    removes the casts each term may be wrapped in."""
    c = strip(c)
    if isinstance(c, m.Binary) and c.op == "&&":
        return conjuncts(c.lhs, strip) + conjuncts(c.rhs, strip)
    if isinstance(c, m.Unary) and c.op == "!":
        return negations(c.operand, strip) or [c]
    return [c]


def negations(c, strip=strip_casts) -> list:
    """The conditions a condition's falsehood implies: the negated terms of an ``||``, a
    comparison flipped, the terms of ``!(a && b)`` are not known (none)."""
    c = strip(c)
    if isinstance(c, m.Binary) and c.op == "||":
        return negations(c.lhs, strip) + negations(c.rhs, strip)
    if isinstance(c, m.Binary) and c.op in NEGATED:
        return [dataclasses.replace(c, op=NEGATED[c.op])]
    if isinstance(c, m.Unary) and c.op == "!":
        return conjuncts(c.operand, strip)
    return []


def const_value(e, names: dict | None = None, block: int | None = None):
    """The value of a constant expression (``warpSize`` is 32, ``blockDim.x`` is ``block`` when
    given, locals in ``names`` are expanded), or None. Integer arithmetic is C's on exact
    integers: division truncates, and a value of an unsigned type wraps to its width (``~0u >>
    16`` is 0xffff); a conversion to an integer type truncates a float."""
    value = _const(e, names, block)
    if isinstance(value, int) and not isinstance(value, bool):
        t = getattr(e, "type", None)
        if isinstance(t, m.Scalar) and t.dtype in dtypes.UNSIGNED:
            value %= 1 << (8 * dtypes.SIZES[t.dtype])
    return value


def _const(e, names, block):
    if isinstance(e, m.Cast):
        v = const_value(e.operand, names, block)
        if isinstance(v, float) and _is_int(e.target) and math.isfinite(v):
            return int(v)  # C truncates toward zero
        return float(v) if isinstance(v, int) and isinstance(e.target, m.Scalar) and \
            e.target.dtype.startswith(("float", "bfloat")) else v
    if isinstance(e, (m.IntLit, m.FloatLit)):
        return e.value
    if isinstance(e, m.SizeOf) and isinstance(e.value, int):   # sizeof(float): 4, known when parsed
        return e.value
    if isinstance(e, m.Builtin):
        if e.var == "warpSize":
            return WARP_SIZE
        if e.var == "blockDim" and e.dim == "x":
            return block
        return None
    if isinstance(e, m.Ref) and names is not None and e.kind == "local" and e.name in names:
        return const_value(names[e.name], names, block)
    if isinstance(e, m.Call) and e.callee in ("__builtin_inff", "__builtin_huge_valf", "__builtin_inf",
                                              "__builtin_huge_val") and not e.args:
        return math.inf
    if isinstance(e, m.Unary) and e.op in ("-", "+", "~"):
        v = const_value(e.operand, names, block)
        if v is None:
            return None
        return -v if e.op == "-" else (v if e.op == "+" else (~v if isinstance(v, int) else None))
    if isinstance(e, m.Binary):
        a, b = const_value(e.lhs, names, block), const_value(e.rhs, names, block)
        if a is None or b is None:
            return None
        if e.op in ("+", "-", "*"):
            return a + b if e.op == "+" else (a - b if e.op == "-" else a * b)
        if not (isinstance(a, int) and isinstance(b, int)):
            return a / b if e.op == "/" and b else None
        if e.op in ("/", "%") and b:
            q = abs(a) // abs(b) if (a < 0) == (b < 0) else -(abs(a) // abs(b))  # C truncation, exactly
            return q if e.op == "/" else a - b * q
        ops = {">>": lambda: a >> b, "<<": lambda: a << b, "&": lambda: a & b, "|": lambda: a | b,
               "^": lambda: a ^ b}
        return ops[e.op]() if e.op in ops and b >= 0 else None
    return None


def is_ref(e, name: str) -> bool:
    """``e`` is the variable ``name`` (through casts)."""
    e = strip_casts(e)
    return isinstance(e, m.Ref) and e.name == name


def counted_range(loop) -> tuple[str, int, int] | None:
    """``(var, a, b)`` of ``for (int var = a; var < b; var++)`` (or ``var <= b - 1``, ``++var``,
    ``var += 1``) with constant ``a`` and ``b`` and a body that never assigns ``var``; else None."""
    if not (isinstance(loop, m.For) and isinstance(loop.init, m.DeclStmt) and len(loop.init.decls) == 1):
        return None
    d = loop.init.decls[0]
    var = d.name
    start = const_value(d.init) if d.init is not None else None
    cond = strip_casts(loop.cond) if loop.cond is not None else None
    if not (isinstance(start, int) and isinstance(cond, m.Binary) and cond.op in ("<", "<=") and is_ref(cond.lhs, var)):
        return None
    stop = const_value(cond.rhs)
    step = loop.step
    if not isinstance(stop, int) or not (
            isinstance(step, m.Unary) and step.op == "++" and is_ref(step.operand, var)
            or isinstance(step, m.Assign) and step.op == "+=" and is_ref(step.target, var)
            and const_value(step.value) == 1) or var in assigned_names(loop.body):
        return None
    return var, start, stop + 1 if cond.op == "<=" else stop


def factors(e) -> list:
    """The factors of a product chain ``a * b * c`` (through casts)."""
    e = strip_casts(e)
    if isinstance(e, m.Binary) and e.op == "*":
        return factors(e.lhs) + factors(e.rhs)
    return [e]
