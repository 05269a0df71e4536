"""Steps used as values in a statement as statements of their own: ``pre[j++] = i;`` becomes
``pre[j] = i; j += 1;``, ``result[++e] = h;`` becomes ``e += 1; result[e] = h;`` (the way real
kernels append to a per-thread list), ``uint pos = stack[--top];`` becomes ``top -= 1; uint pos =
stack[top];``, ``return --refs[i];`` becomes ``refs[i] -= 1; return refs[i];`` (reference
counts) and ``visited[(*size)++] = v;`` becomes ``visited[*size] = v; *size += 1;`` (a device
function appending to its caller's list). The stepped thing is a local number, or an element of a buffer or array at an index
without effects. Only where it is the same program: what is stepped is named nowhere else in the
statement (a buffer: not at all), and the step is always evaluated (not right of ``&&``/``||``
nor in a branch of ``?:``); a ``return`` takes prefix steps only (a postfix one's step would come
after it). A loop's step is split the same way into a comma sequence (pnpoly's edge loop ``for
(j = 0; j < V; k = j++)``: ``k = j, j += 1``). A local declared or assigned the value of a
``?:`` whose branches step (particlefilter's ``int r = (x - ix) < .5f ? ix : ix++;``) is assigned
in an ``if`` on the condition instead, each branch then split as a statement is. Other steps
used as values are left for the emitter to refuse."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import always_evaluated, pure
from ...ir.visit import Transformer, expand_statements


def split_value_steps(fn: m.Function) -> m.Function:
    if fn.body is None:
        return fn
    return dataclasses.replace(fn, body=expand_statements(fn.body, _statement, every=True))


def _statement(s) -> list[m.Stmt] | None:
    branched = _branched(s)
    if branched is not None:
        return branched
    if isinstance(s, m.ExprStmt):
        if isinstance(s.expr, m.Unary) and s.expr.op in ("++", "--"):
            return None  # a step that is the statement: nothing to split
        return _split(s, s.expr, lambda e: dataclasses.replace(s, expr=e), after_ok=True)
    if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and s.decls[0].init is not None:
        d = s.decls[0]
        return _split(s, d.init, lambda e: dataclasses.replace(s, decls=(dataclasses.replace(d, init=e),)),
                      after_ok=True, declared=d.name)
    if isinstance(s, m.Return) and s.value is not None:
        return _split(s, s.value, lambda e: dataclasses.replace(s, value=e), after_ok=False)
    if isinstance(s, m.For) and s.step is not None:
        # each part of a comma step (n >>= 1, ++l) as a statement of its own: a step that is the
        # part stays; one used as a value (k = j++) is split
        parts, changed = [], False
        for part in _comma_parts(s.step):
            split = None if isinstance(part, m.Unary) and part.op in ("++", "--") else \
                _split(m.ExprStmt(part, part.span), part, lambda e: m.ExprStmt(e, part.span), after_ok=True)
            changed |= split is not None
            parts.extend(x.expr for x in split) if split is not None else parts.append(part)
        if not changed:
            return None
        step = parts[0]
        for part in parts[1:]:  # run in order, as the printer runs a comma step's parts
            step = m.Binary(",", step, part, part.type, s.step.span)
        return [dataclasses.replace(s, step=step)]
    return None


def _comma_parts(e: m.Expr) -> list[m.Expr]:
    if isinstance(e, m.Binary) and e.op == ",":
        return _comma_parts(e.lhs) + _comma_parts(e.rhs)
    return [e]


def _branched(s) -> list[m.Stmt] | None:
    """``T v = c ? a : b++;`` (``v = c ? a : b++;`` on a local ``v``) as ``T v; if (c) v = a; else
    v = b++;`` with each assignment split (:func:`_split`), where a branch steps something the
    split moves and the condition steps nothing; None otherwise."""
    if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and s.decls[0].init is not None \
            and s.decls[0].storage == "local" and isinstance(s.decls[0].type, m.Scalar):
        d = s.decls[0]
        target, value = m.Ref(d.name, "local", d.type, d.span), d.init
        head = [m.DeclStmt((dataclasses.replace(d, init=None, const=False),), s.span)]
    elif isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
            and isinstance(s.expr.target, m.Ref) and s.expr.target.kind == "local":
        target, value, head = s.expr.target, s.expr.value, []
    else:
        return None
    ternary = value
    while isinstance(ternary, m.Cast) and ternary.style == "implicit":
        ternary = ternary.operand
    if not isinstance(ternary, m.Ternary) or any(isinstance(n, (m.Unary, m.Assign)) and (
            not isinstance(n, m.Unary) or n.op in ("++", "--")) for n in m.walk(ternary.cond)):
        return None
    if not any(isinstance(n, m.Unary) and n.op in ("++", "--") and _stepped(n) is not None
               for b in (ternary.then, ternary.other) for n in m.walk(b)):
        return None
    if any(isinstance(n, m.Ref) and n.name == target.name for n in m.walk(ternary)):
        return None

    def assigned(branch: m.Expr) -> m.Stmt | None:
        if branch.type != ternary.type:  # the branch's value as the ?: gives it (int to float, ...)
            branch = m.Cast(ternary.type, branch, "implicit", ternary.type, branch.span)
        one = m.ExprStmt(m.Assign("=", target, branch, target.type, branch.span), s.span)
        parts = _split(one, one.expr, lambda e: dataclasses.replace(one, expr=e), after_ok=True) \
            if any(isinstance(n, m.Unary) and n.op in ("++", "--") for n in m.walk(branch)) else [one]
        if parts is None:
            return None
        return parts[0] if len(parts) == 1 else m.Block(tuple(parts), s.span)

    then, other = assigned(ternary.then), assigned(ternary.other)
    if then is None or other is None:
        return None
    return head + [m.If(ternary.cond, then, other, s.span)]


def _stepped(u: m.Unary) -> str | None:
    """The name a step's operand is known by in the statement: a local number's, or the buffer
    (or array) an element of it belongs to; None for what this pass does not move."""
    x = u.operand
    if isinstance(x, m.Ref) and x.kind == "local" and isinstance(x.type, (m.Scalar, m.Pointer)):
        return x.name  # (a local pointer too: v = *k++ reads *k, then steps k)
    if isinstance(x, m.Index) and isinstance(x.base, m.Ref) and pure(x.index) and isinstance(x.type, m.Scalar) \
            and (x.base.kind in ("param", "shared", "global") or isinstance(x.base.type, m.Array)):
        return x.base.name
    if isinstance(x, m.Unary) and x.op == "*" and isinstance(x.operand, m.Ref) and isinstance(x.type, m.Scalar) \
            and isinstance(x.operand.type, m.Pointer):
        return x.operand.name  # (*size)++ through a device function's pointer to its caller's count
    return None


def _split(s, e, rebuild, after_ok: bool, declared: str | None = None) -> list[m.Stmt] | None:
    steps = [n for n in always_evaluated(e) if isinstance(n, m.Unary) and n.op in ("++", "--")
             and _stepped(n) is not None]
    if not steps or (not after_ok and any(u.postfix for u in steps)):
        return None
    names = [n.name for n in m.walk(e) if isinstance(n, m.Ref)]
    if any(names.count(_stepped(u)) != 1 or _stepped(u) == declared for u in steps):
        return None
    moved = {id(u) for u in steps}
    if any(isinstance(n, m.Unary) and n.op in ("++", "--") and id(n) not in moved for n in m.walk(e)):
        return None  # a step this pass cannot move (under a condition): the emitter refuses it

    def step(u: m.Unary) -> m.ExprStmt:
        one = m.IntLit(1, "1", u.operand.type, u.span)
        return m.ExprStmt(m.Assign(u.op[0] + "=", u.operand, one, u.operand.type, u.span), s.span)

    class Read(Transformer):
        def leave_Unary(self, node):
            if node.op in ("++", "--") and _stepped(node) is not None \
                    and any(_stepped(node) == _stepped(u) for u in steps):
                return node.operand
            return node

    before = [step(u) for u in steps if not u.postfix]
    after = [step(u) for u in steps if u.postfix]
    return before + [rebuild(Read().transform(e))] + after
