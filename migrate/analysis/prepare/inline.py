"""Inline device functions into a kernel where the phase split must see inside them.

A ``__device__`` function that contains a barrier or a warp operation (directly or through its
callees) cannot stay a ``T.macro`` in the portable form: the barrier decides where a phase ends.
:func:`inline_calls` replaces each call to such a function by its body:

- scalar parameters become locals initialised with the argument;
- pointer parameters are replaced by the argument (a buffer, a shared array, ``buf + off``; the
  address of a scalar local, ``&seed``, makes ``*p`` and ``p[0]`` the local itself);
- ``return e`` becomes an assignment to a result local (guards keep later statements from
  running, as :func:`~.returns_to_guards` does);
- the callee's locals are prefixed with its name, so no name clashes.

Calls are first hoisted to statement level (``x = a + f(y)`` → ``t = f(y); x = a + t``); a call
whose hoisting would change evaluation (inside ``?:``, ``&&``, ``||`` or a loop condition)
raises :class:`InlineError`.

:func:`inline_view_calls` inlines the device functions a function calls with a view into a
buffer (a local pointer ``row = x + r*n``, ``x + off``, ``&x[i]``) instead of a whole buffer: a
macro's pointer parameter is a whole TileLang buffer, so the view becomes the parameter's
substitute and the pointer folding (prepare.pointer_views) indexes the buffer itself.
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import assigned_names, has_continue, strip_implicit_casts
from ...ir.visit import Transformer
from .effect_conditions import tested_loop
from .instances import bindings, instantiate
from .returns import remaining_returns, returns_to_guards
from .vectors import uses_vectors


class InlineError(Exception):
    pass


def needs_inlining(device: dict[str, m.Function], portable: bool = True) -> set[str]:
    """Device functions that cannot stay ``T.macro`` helpers: those with reference parameters
    (a macro cannot assign to its caller's variable), template value parameters or work on
    structs (a struct of pointers among them: analysis.prepare.struct_params) and vectors (any use
    of one: dxtc2's ``result[bid].x`` on a ``uint2* result``), and, for the portable form, those
    that contain (transitively) a barrier or a warp-level operation."""
    # and templates with value parameters (template <int N>): each instance has a body of its own,
    # which a macro cannot tell apart; inlined, each call gets its instance (.instances)
    direct = {name for name, fn in device.items()
              if any(isinstance(p.type, (m.Reference, m.Vector)) or isinstance(p.type, m.Record) and p.type.members
                     for p in fn.params)
              or isinstance(fn.returns, m.Vector) or any(t.kind == "value" for t in fn.template_params)
              or _works_on_vectors(fn) or uses_vectors(fn) or _reads_var_templates(fn)
              or _reaches_primary_template(fn)}
    for name, fn in device.items() if portable else ():
        for node in m.walk(fn.body) if fn.body else ():
            if isinstance(node, m.Call) and (node.kind in ("warp", "cg") or node.callee in (
                    "__syncthreads", "__syncwarp", "__syncthreads_count", "__syncthreads_and",
                    "__syncthreads_or")):
                direct.add(name)
            if isinstance(node, m.MethodCall) and node.method == "sync":
                direct.add(name)
    changed = True
    while changed:
        changed = False
        for name, fn in device.items():
            if name not in direct and any(c in direct for c in fn.calls):
                direct.add(name)
                changed = True
    return direct


def vector_calls(fn: m.Function, device: dict[str, m.Function]) -> set[str]:
    """The device functions ``fn`` calls with a vector or struct argument, or for one as its value,
    where the callee declares none (a template's instance: ``add(a, b, c)`` of ``template <typename
    T> T add(T, T, T)`` on ``half2`` values): a macro works on scalars only, while inlined the
    kernel's vectors pass takes the values apart."""
    def vec(t) -> bool:
        if isinstance(t, m.Reference):
            t = t.target
        return isinstance(t, m.Vector)

    return {n.callee for n in (m.walk(fn.body) if fn.body else ())
            if isinstance(n, m.Call) and n.kind == "device" and n.callee in device
            and (vec(n.type) or any(vec(getattr(a, "type", None)) for a in n.args))}


def _reads_var_templates(fn: m.Function) -> bool:
    """Whether a function template reads a variable template on its types: each instance has a
    value of its own, which the call's instance picks once inlined (parse.var_templates)."""
    return bool(fn.template_params) and fn.body is not None and any(
        isinstance(n, m.Call) and n.kind == "var_template" for n in m.walk(fn.body))


def _reaches_primary_template(fn: m.Function) -> bool:
    """Whether a function template calls an overloaded function that its instances resolve to an
    overload or to its primary template, beside overloads on structs (a dispatch with the key
    ``PRIMARY_FOR_NUMBERS``): a traced dtype does not tell those apart, the call's instance does
    once inlined (.instances)."""
    return bool(fn.template_params) and fn.body is not None and any(
        isinstance(n, m.Call) and n.dispatch and any(tuple(k) == m.PRIMARY_FOR_NUMBERS for k, _ in n.dispatch[1])
        for n in m.walk(fn.body))


def _works_on_vectors(fn: m.Function) -> bool:
    """Whether ``fn`` reads one of the project's structs through a pointer (sph's
    ``computePressure(double d, const param *params)`` reading ``params->rest_density``) or holds
    one in a local: a macro works on scalars only, while inlined the kernel's vectors pass takes
    them apart."""
    def struct(t) -> bool:  # the project's structs (CUDA's own vectors through pointers stay as they were)
        return isinstance(t, m.Vector) and t.name not in m.VECTOR_TYPES

    return any(isinstance(p.type, m.Pointer) and struct(p.type.pointee) for p in fn.params) or \
        any(struct(getattr(n, "type", None)) for n in m.walk(fn.body)) if fn.body else False


class Inliner:
    #: what the targets are, for messages
    what = "call to a device function with barriers"

    def __init__(self, device: dict[str, m.Function], targets: set[str], whats: dict[str, str] | None = None) -> None:
        self.device = device
        self.targets = targets
        self.whats = whats or {}  # target -> what a call to it is, for messages (default: what)
        self.counter = 0

    def describe(self, node) -> str:
        """What the first target call in ``node`` is, for a message."""
        for n in m.walk(node):
            if self.is_target(n):
                return self.whats.get(n.callee, self.what)
        return self.what

    def result_base(self, call) -> str:
        """The name the result of ``call`` (a target) is held in, before its number."""
        return f"{call.callee}_ret"

    def _tested_loop(self, s) -> m.While:
        """``s`` (a while or do/while loop) with its condition computed into a local by a
        statement, where a call in it can be inlined (:func:`.effect_conditions.tested_loop`)."""
        bool_ = m.Scalar("bool")
        name = self.fresh("test")
        value = s.cond if s.cond.type == bool_ else m.Cast(bool_, s.cond, "implicit", bool_, s.span)
        decl = m.DeclStmt((m.VarDecl(name, bool_, "local", False, value, s.span),), s.span)
        return tested_loop(s, [decl], m.Ref(name, "local", bool_, s.span))

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"{base}_{self.counter}"

    # -- statements -----------------------------------------------------------------------------
    def stmts(self, stmts, depth=0) -> tuple:
        out = []
        for s in stmts:
            out.extend(self.stmt(s, depth))
        return tuple(out)

    def block(self, s, depth):
        if s is None:
            return None
        if isinstance(s, m.Block):
            return dataclasses.replace(s, stmts=self.stmts(s.stmts, depth))
        inner = self.stmt(s, depth)
        return inner[0] if len(inner) == 1 else m.Block(tuple(inner), s.span)

    def stmt(self, s, depth) -> list:
        if depth > 16:
            raise InlineError("device functions nested too deeply")
        if isinstance(s, m.Block):
            return [self.block(s, depth)]
        if isinstance(s, m.If):
            # the condition is read once, before either branch: its calls can run first (an else-if's
            # own condition is in the else branch, so its calls run only where C reaches them)
            pre, cond = self.hoist(s.cond, depth) if self.calls_in(s.cond) else ([], s.cond)
            return pre + [dataclasses.replace(s, cond=cond, then=self.block(s.then, depth),
                                              other=self.block(s.other, depth))]
        if isinstance(s, m.For):
            try:
                step = self.in_place(s.step, "in a loop header")
            except InlineError:
                if s.cond is None or has_continue(s.body):
                    raise
                # for (init; cond; p = next(&it)) body  ->  init; while (cond) { body; p = next(&it); }
                # (C runs the step after the body; no continue skips to it): the step a statement
                loop = m.While(s.cond, m.Block((s.body, m.ExprStmt(s.step, s.step.span)), s.span), s.span)
                return self.stmt(m.Block(((s.init,) if s.init is not None else ()) + (loop,), s.span), depth)
            try:
                cond = self.in_place(s.cond, "in a loop header")
            except InlineError:
                if has_continue(s.body) or not any(isinstance(n, m.Call) and n.kind == "device"
                                                   for n in m.walk(s.cond)):
                    raise  # (a warp vote in a loop header stays refused by name: the simt form takes it)
                # for (init; j < 1 + rand(&state) * k; j++) body  ->  init; while (cond) { body; j++; }
                # (C tests before each iteration and steps after the body; no continue skips the
                # step): the while's condition is then computed by a statement (_tested_loop)
                tail = (m.ExprStmt(s.step, s.step.span),) if s.step is not None else ()
                loop = m.While(s.cond, m.Block((s.body,) + tail, s.span), s.span)
                return self.stmt(m.Block(((s.init,) if s.init is not None else ()) + (loop,), s.span), depth)
            init = s.init
            if init is not None and self.calls_in(init):
                raise InlineError(f"{self.describe(init)} in a loop initialiser")
            return [dataclasses.replace(s, cond=cond, step=step, body=self.block(s.body, depth))]
        if isinstance(s, (m.While, m.DoWhile)):
            try:
                cond = self.in_place(s.cond, "in a loop condition")
            except InlineError:
                if isinstance(s, m.DoWhile) and has_continue(s.body) or \
                        not any(isinstance(n, m.Call) and n.kind == "device" for n in m.walk(s.cond)):
                    raise  # (a warp vote in a condition stays refused by name: the simt form takes it)
                # while (f(x)) body  ->  while (true) { bool test = f(x); if (!test) break; body }
                # (a do/while tests after its body, which then has no continue to skip the test)
                return self.stmt(self._tested_loop(s), depth)
            return [dataclasses.replace(s, cond=cond, body=self.block(s.body, depth))]
        if isinstance(s, m.Switch):
            pre, cond = self.hoist(s.cond, depth) if self.calls_in(s.cond) else ([], s.cond)
            return pre + [dataclasses.replace(s, cond=cond, body=self.block(s.body, depth))]
        if isinstance(s, m.Case):
            return [dataclasses.replace(s, body=self.block(s.body, depth))]
        if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and isinstance(s.decls[0].init, m.Ternary) \
                and self.calls_in(s.decls[0].init):
            # T v = c ? f(x) : y;  ->  T v; if (c) v = f(x); else v = y;
            d = s.decls[0]
            target = m.Ref(d.name, "local", d.type, d.span)
            return [m.DeclStmt((dataclasses.replace(d, init=None),), s.span)] + \
                self.stmt(_ternary_to_if(target, d.init, s.span), depth)
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
                and isinstance(s.expr.value, m.Ternary) and self.calls_in(s.expr.value):
            return self.stmt(_ternary_to_if(s.expr.target, s.expr.value, s.span), depth)
        if isinstance(s, m.DeclStmt):
            out = []
            for d in s.decls:
                if d.init is not None and self.calls_in(d.init):
                    pre, init = self.hoist(d.init, depth)
                    out.extend(pre)
                    d = dataclasses.replace(d, init=init)
                out.append(m.DeclStmt((d,), d.span))
            return out
        if isinstance(s, m.ExprStmt):
            e = s.expr
            if self.is_target(e):
                # store(w, i, divide(a, b));  the calls in the arguments computed first, as C does
                pre, args = [], []
                for a in e.args:
                    hoisted, a = self.hoist(a, depth) if self.calls_in(a) else ([], a)
                    pre += hoisted
                    args.append(a)
                return pre + self.expand(dataclasses.replace(e, args=tuple(args)), None, depth)
            if self.calls_in(e):
                pre, new = self.hoist(e, depth)
                return pre + [m.ExprStmt(new, s.span)]
            return [s]
        if isinstance(s, m.Return) and s.value is not None and self.calls_in(s.value):
            pre, new = self.hoist(s.value, depth)
            return pre + [dataclasses.replace(s, value=new)]
        return [s]

    def calls_in(self, node) -> bool:
        return any(self.is_target(n) for n in m.walk(node))

    def is_target(self, node) -> bool:
        """A call to a function to inline or lower (not CUDA's own function named like a device
        function: a project's ``sqrtf(float4)`` calls CUDA's ``sqrtf`` on each lane)."""
        if isinstance(node, m.Call) and _dispatches_to(node, self.targets):
            raise InlineError(f"overloaded device function '{node.callee}', chosen by each instance of the "
                              "template, would be inlined")
        return isinstance(node, m.Call) and node.callee in self.targets and (
            node.kind == "device" or node.callee not in self.device)

    def in_place(self, e, where: str):
        """``e`` with each target call in it replaced by the value its callee returns, where C
        evaluates the call each time (a loop's condition and step, right of ``&&``, a branch of
        ``?:``) and so no statement before can compute it: a callee whose body is one ``return``
        of an expression without effects, called with arguments without effects (``gpu_more(&p)``,
        ``p->current < p->n_tasks``). Any other target call there is refused."""
        if e is None or not self.calls_in(e):
            return e

        def visit(node):
            node = m.map_children(node, visit)
            if not self.is_target(node):
                return node
            value = _returned_expression(self.device.get(node.callee), node)
            if value is None:
                raise InlineError(f"{self.describe(node)} {where}")
            return value

        return visit(e)

    # -- expressions ------------------------------------------------------------------------------
    def hoist(self, e: m.Expr, depth) -> tuple[list, m.Expr]:
        """Statements computing the target calls in ``e``, and ``e`` reading their results."""
        pre: list = []

        def visit(node):
            if self.is_target(node):
                args = tuple(visit(a) for a in node.args)
                call = dataclasses.replace(node, args=args)
                name = self.fresh(self.result_base(node))
                rtype = self.result_type(call)
                if isinstance(rtype, m.Vector) and rtype.initialised:  # the return gives it its value
                    rtype = dataclasses.replace(rtype, initialised=False)
                result = m.Ref(name, "local", rtype, node.span)
                pre.append(m.DeclStmt((m.VarDecl(name, rtype, "local", False, None, node.span),), node.span))
                pre.extend(self.expand(call, result, depth))
                return result
            if isinstance(node, m.Ternary) and self.calls_in(node):
                return dataclasses.replace(node, cond=visit(node.cond), then=self.in_place(node.then, "inside '?:'"),
                                           other=self.in_place(node.other, "inside '?:'"))
            if isinstance(node, m.Binary) and node.op in ("&&", "||") and self.calls_in(node.rhs):
                return dataclasses.replace(node, lhs=visit(node.lhs), rhs=self.in_place(node.rhs, f"after '{node.op}'"))
            return m.map_children(node, visit)

        return pre, visit(e)

    def result_type(self, call: m.Call) -> m.CType:
        """The type of ``call``'s value: a templated callee's instance return type where clang left
        the call's type dependent."""
        callee = self.device.get(call.callee)
        if isinstance(call.type, m.Opaque) and callee is not None and callee.template_params:
            binding = bindings(callee, call)
            if binding is not None:
                return instantiate(callee, binding).returns
        return call.type

    def expand(self, call: m.Call, result: m.Ref | None, depth) -> list:
        callee = self.device[call.callee]
        if callee.template_params:
            binding = bindings(callee, call)
            if binding is None:
                raise InlineError(
                    f"templated device function '{callee.name}' with barriers: its template arguments are not "
                    "written at the call nor deducible from its arguments" if callee.name not in self.whats
                    else f"templated device function '{callee.name}' inlined ({self.whats[callee.name]}): its "
                         "template arguments are not written at the call nor deducible from its arguments")
            callee = instantiate(callee, binding)
        if callee.body is None:
            raise InlineError(f"device function '{callee.name}' has no body")
        prefix = self.fresh(callee.name)
        renamed = _rename_locals(callee, prefix)
        stmts: list = []
        substitutions: dict[str, m.Expr] = {}
        stepped = assigned_names(renamed.body)
        for param, arg in zip(renamed.params, call.args):
            if isinstance(param.type, (m.Pointer, m.Array)) and param.name in stepped:
                # the callee steps its own copy of the pointer (c = (float*)((char*)c + step)):
                # a local pointer of its own, which the caller's pointer does not follow
                local = f"{prefix}_{param.name}"
                ptype = param.type if isinstance(param.type, m.Pointer) else m.Pointer(m.element_type(param.type))
                stmts.append(m.DeclStmt((m.VarDecl(local, ptype, "local", False, strip_implicit_casts(arg),
                                                   call.span),), call.span))
                substitutions[param.name] = m.Ref(local, "local", ptype, param.span)
            elif isinstance(param.type, (m.Pointer, m.Reference, m.Array)):  # C passes an array as its address
                substitutions[param.name] = strip_implicit_casts(arg)
            else:
                local = f"{prefix}_{param.name}"
                stmts.append(m.DeclStmt((m.VarDecl(local, param.type, "local", False, arg, call.span),), call.span))
                substitutions[param.name] = m.Ref(local, "local", param.type, param.span)
        body = _substitute(renamed.body, substitutions)
        fn = dataclasses.replace(renamed, body=body)
        fn = returns_to_guards(fn, result)
        if remaining_returns(fn):
            raise InlineError(f"'return' inside a loop of device function '{callee.name}'")
        inner = self.stmts(fn.body.stmts, depth + 1)
        return stmts + [m.Block(tuple(inner), call.span)]


def _effects(e) -> bool:
    """Whether evaluating ``e`` may change something: an assignment, ``++``/``--``, a call of a
    device function or of anything but a math function."""
    return any(isinstance(n, (m.Assign, m.MethodCall)) or isinstance(n, m.Unary) and n.op in ("++", "--")
               or isinstance(n, m.Call) and n.kind != "math" for n in m.walk(e))


def _returned_expression(callee: m.Function | None, call: m.Call, calls: bool = False) -> m.Expr | None:
    """The value ``call`` returns, written in the caller's terms, where the callee's body is one
    ``return`` of an expression without effects and the arguments have none either (each may then
    be read any number of times): the parameters bound as inlining binds them; None otherwise.
    With ``calls``, the returned expression may call functions (where the caller evaluates it
    exactly where and as often as C calls the callee); it still assigns and steps nothing."""
    if callee is None or callee.body is None or callee.template_params or len(callee.body.stmts) != 1 \
            or not isinstance(callee.body.stmts[0], m.Return) or callee.body.stmts[0].value is None:
        return None
    value = callee.body.stmts[0].value
    steps = any(isinstance(n, (m.Assign, m.MethodCall)) or isinstance(n, m.Unary) and n.op in ("++", "--")
                for n in m.walk(value))
    if (steps if calls else _effects(value)) or any(_effects(a) for a in call.args) \
            or len(call.args) != len(callee.params):
        return None
    subs = {}
    for param, arg in zip(callee.params, call.args):
        if isinstance(param.type, (m.Pointer, m.Reference, m.Array)):
            subs[param.name] = strip_implicit_casts(arg)
        else:
            subs[param.name] = arg if getattr(arg, "type", None) == param.type else \
                m.Cast(param.type, arg, "implicit", param.type, arg.span)
    out = _substitute(value, subs)
    return out if getattr(out, "type", None) == callee.returns else \
        m.Cast(callee.returns, out, "implicit", callee.returns, call.span)


def _ternary_to_if(target: m.Expr, t: m.Ternary, span) -> m.If:
    def assign(value):
        return m.Block((m.ExprStmt(m.Assign("=", target, value, target.type, span), span),), span)
    return m.If(t.cond, assign(t.then), assign(t.other), span)


def _rename_locals(fn: m.Function, prefix: str) -> m.Function:
    names = {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl)}
    if not names:  # no local: nothing to rename (the body as it is, in a copy of the function as before)
        return dataclasses.replace(fn, body=fn.body)

    class Rename(Transformer):
        def leave_VarDecl(self, node):
            return dataclasses.replace(node, name=f"{prefix}_{node.name}")

        def leave_Ref(self, node):
            if node.kind in ("local", "shared") and node.name in names:
                return dataclasses.replace(node, name=f"{prefix}_{node.name}")
            return node

    return dataclasses.replace(fn, body=Rename().transform(fn.body))


def _substitute(body, subs: dict[str, m.Expr]):
    # a caller's array of rows (double b[2][4]) given to a parameter the callee indexes flat (its
    # double b[][4] was made a flat pointer, analysis.prepare.array_params): b[i * 4 + j] is b[i][j]
    rows = {id(a) for a in subs.values() if isinstance(a, m.Ref) and isinstance(a.type, m.Array)
            and isinstance(a.type.element, m.Array)}

    class Sub(Transformer):
        def leave_Ref(self, node):
            if node.kind == "param" and node.name in subs:
                return subs[node.name]
            return node

        def leave_Index(self, node):
            if id(node.base) in rows:
                return _unflattened(node)
            # (&x)[0]  ->  x: a local passed by address (an out-parameter)
            local = _address_of_local(node.base)
            if local is not None and isinstance(node.index, m.IntLit) and node.index.value == 0:
                return local
            # (buf + off)[i]  ->  buf[off + i], (&buf[j])[i]  ->  buf[j + i]
            base, off = _split_view(node.base)
            if off is not None:
                index = off if isinstance(node.index, m.IntLit) and node.index.value == 0 else \
                    m.Binary("+", off, node.index, node.index.type, node.span)
                return dataclasses.replace(node, base=base, index=index)
            return node

        def leave_Unary(self, node):  # *p on a substituted pointer
            if node.op != "*":
                return node
            local = _address_of_local(node.operand)
            if local is not None:  # *(&x)  ->  x
                return local
            zero = m.IntLit(0, "0", m.Scalar("int32"), node.span)
            if _split_view(node.operand)[1] is not None:
                return self.leave_Index(m.Index(node.operand, zero, node.type, node.span))
            if isinstance(node.operand, m.Ref) and node.operand.kind != "param":
                if isinstance(node.operand.type, (m.Pointer, m.Array)):
                    return m.Index(node.operand, zero, node.type, node.span)
            return node

    return Sub().transform(body)


def _unflattened(node: m.Index) -> m.Expr:
    """``b[flat]`` on an array of rows ``b[R][C]...`` as ``b[flat / C][flat % C]...`` (C's layout:
    rows one after the other); the index is not negative, so C's division is the floor's."""
    extents, t = [], node.base.type.element
    while isinstance(t, m.Array):
        if t.extent is None:
            raise InlineError(f"array of rows '{node.base.name}' whose row size is not a constant")
        extents.append(t.extent)
        t = t.element
    flat, itype, out = node.index, node.index.type, []
    peeled = []  # the indices array_params wrote, read back: (i * C + j) is [i][j]
    for extent in reversed(extents):
        if isinstance(flat, m.Binary) and flat.op == "+" and isinstance(flat.lhs, m.Binary) and flat.lhs.op == "*" \
                and isinstance(flat.lhs.rhs, m.IntLit) and flat.lhs.rhs.value == extent:
            peeled.insert(0, flat.rhs)
            flat = flat.lhs.lhs
        else:
            break
    if len(peeled) == len(extents):
        out = [flat] + peeled
        flat = None
    for k in range(len(extents) if flat is not None else 0):
        size = 1
        for e in extents[k:]:
            size *= e
        lit = m.IntLit(size, str(size), itype, node.span)
        out.append(m.Binary("/", flat, lit, itype, node.span))
        flat = m.Binary("%", flat, lit, itype, node.span)
    if flat is not None:
        out.append(flat)
    expr = node.base
    rest = node.base.type
    for index in out:
        rest = rest.element
        expr = m.Index(expr, index, rest, node.span)
    return dataclasses.replace(expr, type=node.type)


def _address_of_local(e: m.Expr) -> m.Ref | None:
    """``x`` where ``e`` is ``&x`` for a scalar local ``x`` (``lcg(&seed)``, ``stats(v, &mx)``) or
    a ``__shared__`` scalar (gmm's ``invert(matrix, n, &determinant_arg)``: the block's one value,
    which the callee writes through the pointer)."""
    inner = strip_implicit_casts(e)
    if isinstance(inner, m.Unary) and inner.op == "&" and isinstance(inner.operand, m.Ref) \
            and inner.operand.kind in ("local", "shared") and isinstance(inner.operand.type, (m.Scalar, m.TemplateType)):
        return inner.operand
    return None


def _split_view(e: m.Expr) -> tuple[m.Expr, m.Expr | None]:
    """A pointer into a buffer as (the buffer, or the row of an array, and the element offset):
    ``buf + a + b``, ``&buf[i] + a``, ``&m[r][c]``; (``e``, None) when ``e`` is no such view."""
    inner = strip_implicit_casts(e)
    if isinstance(inner, m.Binary) and inner.op in ("+", "-") and isinstance(inner.lhs.type, (m.Pointer, m.Array)):
        base, off = _split_view(inner.lhs)
        step = inner.rhs if inner.op == "+" else m.Unary("-", inner.rhs, False, inner.rhs.type, inner.rhs.span)
        if isinstance(base, (m.Ref, m.Index)):
            return base, step if off is None else m.Binary("+", off, step, step.type, inner.span)
    if isinstance(inner, m.Unary) and inner.op == "&" and isinstance(inner.operand, m.Index):
        return inner.operand.base, inner.operand.index
    if isinstance(inner, (m.Ref, m.Index)):
        return inner, None
    return e, None


def inline_calls(fn: m.Function, device: dict[str, m.Function], targets: set[str],
                 whats: dict[str, str] | None = None) -> m.Function:
    """``fn`` with every call to a function in ``targets`` replaced by its body (``whats``: what
    a call to a target is, for messages)."""
    if fn.body is None or not targets or not any(
            isinstance(n, m.Call) and (n.callee in targets or _dispatches_to(n, targets)) for n in m.walk(fn.body)):
        return fn
    inliner = Inliner(device, targets, whats)
    body = dataclasses.replace(fn.body, stmts=inliner.stmts(fn.body.stmts))
    calls = tuple(c for c in fn.calls if c not in targets)
    # the inlined bodies may call further (non-inlined) device functions
    for node in m.walk(body):
        if isinstance(node, m.Call) and node.kind == "device" and node.callee not in calls:
            calls += (node.callee,)
    return dataclasses.replace(fn, body=body, calls=calls)


def _dispatches_to(call: m.Call, targets) -> bool:
    """Whether an overloaded call an instance resolves (``call.dispatch``) may reach a target."""
    return bool(call.dispatch) and any(model in targets for _, model in call.dispatch[1])


def view_callees(fn: m.Function, device: dict[str, m.Function]) -> set[str]:
    """The device functions ``fn`` calls with a pointer argument that is not a whole buffer (a
    pointer parameter, a shared, global, constant or local array) but a view into one: a local
    pointer, ``x + off``, ``&x[i]``, or a pointer parameter the body steps (``block_offset +=
    row * n;``: analysis.prepare.moving_pointers makes it an offset, which a macro is not given)."""
    out = set()
    stepped = _stepped_params(fn)
    for n in m.walk(fn.body) if fn.body else ():
        if isinstance(n, m.Call) and n.kind == "device" and n.callee in device:
            for param, arg in zip(device[n.callee].params, n.args):
                arg = strip_implicit_casts(arg)
                if isinstance(param.type, (m.Pointer, m.Array)) and (
                        not _whole_buffer(arg) or isinstance(arg, m.Ref) and arg.name in stepped):
                    out.add(n.callee)
    return out


def _stepped_params(fn: m.Function) -> set[str]:
    """The pointer parameters ``fn``'s body assigns or steps."""
    params = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
    out = set()
    for n in m.walk(fn.body) if fn.body else ():
        if isinstance(n, m.Assign) and isinstance(n.target, m.Ref) and n.target.name in params:
            out.add(n.target.name)
        elif isinstance(n, m.Unary) and n.op in ("++", "--") and isinstance(n.operand, m.Ref) \
                and n.operand.name in params:
            out.add(n.operand.name)
    return out


def _whole_buffer(arg: m.Expr) -> bool:
    return isinstance(arg, m.Ref) and (arg.kind in ("param", "shared", "global", "constant")
                                       or isinstance(arg.type, m.Array))


def inline_view_calls(fn: m.Function, device: dict[str, m.Function], also: set[str] = frozenset()) -> m.Function:
    """``fn`` with the device functions it calls with a view into a buffer (:func:`view_callees`)
    inlined, and those their bodies then call with one, and with them the functions of ``also``
    (those inlined anyway) that the inlined bodies call."""
    for _ in range(16):
        views = view_callees(fn, device)
        if not views:
            return fn
        whats = {name: f"call to device function '{name}' with a view into a buffer (a macro takes whole "
                       "buffers, so it is inlined)" for name in views}
        fn = inline_calls(fn, device, views | set(also), whats)
    raise InlineError("device functions passing views into buffers nested too deeply")


#: Warp operations the portable form expresses as exchanges through shared memory.
EXCHANGES = {"__shfl_sync": "shfl", "__shfl_up_sync": "shfl_up", "__shfl_down_sync": "shfl_down",
             "__shfl_xor_sync": "shfl_xor", "__ballot_sync": "ballot", "__any_sync": "any",
             "__all_sync": "all"}


def is_barrier_call(node) -> bool:
    if isinstance(node, m.Call) and node.callee in ("__syncthreads", "__syncwarp"):
        return True
    if isinstance(node, m.MethodCall) and node.method == "sync" and not node.args:
        return True
    return False


def is_exchange_call(node) -> bool:
    return isinstance(node, m.Call) and node.callee in EXCHANGES


def contains_barrier(stmt) -> bool:
    """A barrier, or a warp exchange (which the portable form turns into barriers): where
    analysis.phases splits a kernel."""
    return any(is_barrier_call(n) or is_exchange_call(n) for n in m.walk(stmt))


class _WarpHoister(Inliner):
    """Moves every exchangeable warp call into a statement of its own: ``T t = __shfl...(...)``."""

    what = "warp shuffle or vote"

    def stmt(self, s, depth) -> list:
        if isinstance(s, m.DeclStmt) and len(s.decls) == 1 and isinstance(s.decls[0].init, m.Call) \
                and s.decls[0].init.callee in self.targets \
                and not any(self.calls_in(a) for a in s.decls[0].init.args):
            return [s]
        if isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "=" \
                and isinstance(s.expr.target, m.Ref) and isinstance(s.expr.value, m.Call) \
                and s.expr.value.callee in self.targets \
                and not any(self.calls_in(a) for a in s.expr.value.args):
            return [s]
        return super().stmt(s, depth)

    def result_base(self, call) -> str:
        return EXCHANGES[call.callee]

    def expand(self, call: m.Call, result: m.Ref | None, depth) -> list:
        if result is None:
            return []  # a warp call whose value is unused has no effect
        return [m.ExprStmt(m.Assign("=", result, call, result.type, call.span), call.span)]


def hoist_warp_calls(fn: m.Function) -> m.Function:
    """Each warp shuffle or vote in a statement of its own, so the phase split can cut there."""
    targets = set(EXCHANGES)
    if fn.body is None or not any(isinstance(n, m.Call) and n.callee in targets for n in m.walk(fn.body)):
        return fn
    hoister = _WarpHoister({}, targets)
    return dataclasses.replace(fn, body=dataclasses.replace(fn.body, stmts=hoister.stmts(fn.body.stmts)))
