"""Pointers that move as integer offsets: a pointer parameter or local view into a buffer that the
body steps (``src += blockIdx.y * pitch + threadIdx.x;``, ``++p``, ``q = q + stride``, ``q =
x + base``) becomes an integer local holding its offset into that buffer (``src_off``), and every
access through it an index of the buffer (``src[i]`` → ``src[src_off + i]``, ``*q`` →
``x[q_off]``). The offset is a per-thread local like any other, so it survives the barriers the
portable form splits phases at.

Only pointers whose every use can be rewritten are: accessed by index or dereference (``p[i]``,
``*p``, ``*(p + k)``), an atomic's address or a local view's start (``atomicAdd(p + c, v)``,
``const float* row = p + k``), stepped by statements of their own (not ``*p++ = v``), every
assignment a view of the same buffer. Any other use (a comparison, a call argument, a view taken from it)
leaves the function as it was, and the diagnostics that name the pointer stay.

A pointer assigned the null pointer, or a view that may be null (``v1 = can_pair(k, j) ? &v[ind(k,
j)] : 0;``, a device function's return inlined by analysis.prepare.pointer_returns), also keeps
whether it is set (``v1_set``, a bool): its tests (``if (v1)``, ``v1 ? *v1 : INF``, ``!v1``, ``v1 !=
0``) read the flag, the assignment sets both under the view's condition, evaluated once (``if (c) {
v1_set = true; v1_off = ind(k, j); } else v1_set = false;``). Its accesses read the offset as any
moving pointer's: the program reads through it only where it is set (CUDA leaves reading through a
null pointer undefined). Such a pointer copied to another pointer or into several buffers is not
followed."""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import strip_implicit_casts
from ...ir.names import fresh
from ...ir.visit import Transformer, expand_statements
from .pointer_views import Alias, _as_alias, _null, _unless_null, view_buffers

_WIDE = ("int64", "uint64")
_BOOL = m.Scalar("bool")


def _viewed(value):
    """The view an assigned value takes a pointer to, a value that may be null read as its view
    (``c ? x + k : 0`` is ``x + k``); None for the null pointer itself."""
    return None if _null(value) else _unless_null(value)[0]


def _choice(value) -> m.Ternary | None:
    """``c ? x + i : y + j``: a pointer that is one of two views (neither null) chosen by a
    condition without effects (read once for the buffer, once for the offset); else None."""
    e = strip_implicit_casts(value) if value is not None else None
    if not (isinstance(e, m.Ternary) and isinstance(getattr(e.then, "type", None), m.Pointer)
            and isinstance(getattr(e.other, "type", None), m.Pointer)) or _null(e.then) or _null(e.other):
        return None
    pure = not any(isinstance(n, (m.Assign, m.MethodCall)) or isinstance(n, m.Unary) and n.op in ("++", "--")
                   or isinstance(n, m.Call) and n.kind != "math" for n in m.walk(e.cond))
    return e if pure else None


def _assigned(steps, name) -> list:
    """The values the statements of ``steps`` assign pointer ``name`` (``p = v``)."""
    return [s.value for s in steps.get(name, ()) if isinstance(s, m.Assign) and s.op == "="]


def moving_pointers(fn: m.Function) -> m.Function:
    if fn.body is None:
        return fn
    buffers = view_buffers(fn)
    decls = {n.name: n for n in m.walk(fn.body)
             if isinstance(n, m.VarDecl) and isinstance(n.type, m.Pointer)
             and (n.storage == "local" or n.storage == "shared" and n.init is None)}
    # __shared__ int* row; set by one thread, read by all: its offset is the block's (__shared__ too)
    shared = {name for name, d in decls.items() if d.storage == "shared"}
    steps = _steps(fn.body, set(buffers) | set(decls))
    # const auto cache = copy_k ? k_cache : v_cache;  a choice between views of buffers
    choices = {name for name, d in decls.items() if _choice(d.init) is not None
               and all(_as_alias(b, buffers, {}) is not None for b in (_choice(d.init).then, _choice(d.init).other))}
    if not steps and not choices:
        return fn
    taken = _names(fn)
    moving: dict[str, tuple[str, m.Expr | None, str]] = {}  # name -> (buffer, start offset, offset name)
    # the local views the steps assign from or subtract (end = start + n; end - start) move with them
    views = {name: _as_alias(d.init, buffers, {}) for name, d in decls.items() if d.init is not None}
    views = {name: a for name, a in views.items() if a is not None}
    named = {r.name for stmts in steps.values() for s in stmts for r in m.walk(s) if isinstance(r, m.Ref)}
    named |= {r.name for b in m.walk(fn.body) if isinstance(b, m.Binary) and b.op == "-"
              and isinstance(b.lhs, m.Ref) and b.lhs.name in steps and isinstance(b.rhs, m.Ref)
              for r in (b.rhs,)}
    later = []  # float* p; ... p = x + off; (or p = q, another moving pointer): resolved below
    for name in list(steps) + sorted((named & set(views)) - set(steps)):
        if name in buffers and buffers[name] == "param":
            moving[name] = (name, None, fresh(f"{name}_off", taken))
        elif name in views:
            moving[name] = (views[name].buffer, views[name].offset, fresh(f"{name}_off", taken))
        elif name in decls and decls[name].init is None:
            later.append(name)
    # float* t = src; of a moving src (a ping-pong swap's temporary) moves with it
    later += [name for name, d in decls.items() if d.init is not None and name not in views and name not in moving]
    derived: dict[str, m.Expr] = {}
    while later:
        tokens = {**views, **{n: Alias(b, None) for n, (b, _s, _o) in moving.items()}}
        resolved = {}
        for name in later:
            init = decls[name].init
            values = [_choice(init).then] if name in choices else [init] if init is not None and not _null(init) else \
                [v for v in map(_viewed, _assigned(steps, name)) if v is not None]
            first = next((a for a in (_as_alias(v, buffers, tokens) for v in values) if a is not None), None)
            if first is not None:
                resolved[name] = (first.buffer, None, fresh(f"{name}_off", taken))
                if init is not None and not _null(init):
                    derived[name] = init
        if not resolved:
            break
        moving.update(resolved)
        later = [name for name in later if name not in resolved]
    if not moving:
        return fn
    # (a pointer made from another and a 64-bit offset, cache + offset * stride, holds a 64-bit one)
    offsets = {name: m.Ref(off, "shared" if name in shared else "local",
                           _offset_type(steps.get(name, []), start if start is not None else derived.get(name)),
                           fn.span)
               for name, (_b, start, off) in moving.items()}
    sources = _sources(moving, steps, buffers, views, derived)
    if any(name in shared and name in derived for name in moving):
        return fn  # a shared pointer copied from another: not followed
    elements = _elements(fn)
    if any(len({elements.get(b) for b in sources[name]}) > 1 for name in moving):
        return fn  # views of buffers of different element types: no one index reads them alike
    selectors = {name: m.Ref(fresh(f"{name}_buf", taken), "shared" if name in shared else "local",
                             m.Scalar("int32"), fn.span)
                 for name in moving if len(sources[name]) > 1}
    # pointers that may be null: assigned the null pointer or a view under a condition
    nullable = {name for name in moving if any(_null(v) or _unless_null(v)[1] is not None
                                               for v in _assigned(steps, name))
                or name in decls and decls[name].init is not None and _null(decls[name].init)}
    if any(name in buffers or name in selectors or name in shared for name in nullable):
        return fn  # a parameter set to null, a pointer into several buffers or none: not followed
    flags = {name: m.Ref(fresh(f"{name}_set", taken), "local", _BOOL, fn.span) for name in sorted(nullable)}
    # set where declared: T* p = x; T* q = x + k; (unset: T* p; T* p = 0;)
    set_at_start = {name for name in nullable if decls[name].init is not None and not _null(decls[name].init)}
    rewrite = _Rewrite(moving, offsets, buffers, sources, selectors, derived,
                       {name: a for name, a in views.items() if name not in moving},
                       {name: moving[name][0] for name in moving if name in buffers or name in views}, flags,
                       set_at_start)
    rewritten = rewrite.transform(fn.body)
    rewritten = expand_statements(rewritten, rewrite.split)
    if any(isinstance(n, m.Ref) and n.name in moving and id(n) not in rewrite.made for n in m.walk(rewritten)) \
            or any(id(n) in rewrite.pairs for n in m.walk(rewritten)) \
            or any(id(n) in rewrite.selections for n in _lvalues(rewritten)):
        return fn  # a use it cannot rewrite: the pointer keeps its diagnostic
    starts = []
    for name in moving:
        if name in buffers:
            starts.append(m.VarDecl(offsets[name].name, offsets[name].type, "local", False,
                                    _int(0, offsets[name].type, fn.span), fn.span))
            if name in selectors:
                starts.append(rewrite.selector_decl(name, name))
    if starts:
        rewritten = dataclasses.replace(rewritten, stmts=tuple(m.DeclStmt((d,), fn.span) for d in starts)
                                        + rewritten.stmts)
    return dataclasses.replace(fn, body=rewritten)


def _sources(moving, steps, buffers, views, derived) -> dict[str, frozenset]:
    """Moving pointer -> the buffers it may point into: the one it starts in and those its
    assignments take it to, through other moving pointers too (``t = in; in = out; out = t;``)."""
    others = {k: v for k, v in buffers.items() if k not in moving}
    tokens = {name: Alias("@" + name, None) for name in moving}
    tokens.update({name: a for name, a in views.items() if name not in moving})
    own = {name: {base} for name, (base, _s, _o) in moving.items()}
    deps: dict[str, set[str]] = {name: set() for name in moving}
    for name in moving:
        values = [v for v in map(_viewed, _assigned(steps, name)) if v is not None]
        values += [derived[name]] if name in derived else []
        values = [b for v in values for b in ((_choice(v).then, _choice(v).other) if _choice(v) is not None else (v,))]
        for value in values:
            alias = _as_alias(value, others, tokens)
            if alias is None:
                continue  # left as it is: the rewrite refuses the function
            if alias.buffer.startswith("@"):
                deps[name].add(alias.buffer[1:])
            else:
                own[name].add(alias.buffer)
    changed = True
    while changed:
        changed = False
        for name, ds in deps.items():
            for d in ds:
                if not own[d] <= own[name]:
                    own[name] |= own[d]
                    changed = True
    return {name: frozenset(b) for name, b in own.items()}


def _elements(fn: m.Function) -> dict[str, str]:
    """Buffer -> its element type, qualifiers aside."""
    out = {p.name: str(p.type.pointee).replace("const ", "").replace("volatile ", "")
           for p in fn.params if isinstance(p.type, m.Pointer)}
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl) and isinstance(node.type, m.Array):
            out[node.name] = str(node.type.element).replace("const ", "").replace("volatile ", "")
    return out


def _lvalues(body):
    """The expressions stored to: assignment targets, operands of ``&``, ``++`` and ``--``."""
    for n in m.walk(body):
        if isinstance(n, m.Assign):
            yield n.target
        elif isinstance(n, m.Unary) and n.op in ("&", "++", "--"):
            yield n.operand


def _steps(body, pointers: set[str]) -> dict[str, list]:
    """Pointer name -> the statements that step or assign it; a pointer stepped inside an
    expression whose value is used (``*p++ = v``) is left out."""
    out: dict[str, list] = {}
    bad: set[str] = set()
    as_statement = set()
    for node in m.walk(body):
        if isinstance(node, m.ExprStmt):
            as_statement.add(id(node.expr))
        elif isinstance(node, m.For) and node.step is not None:
            for part in _comma_parts(node.step):
                as_statement.add(id(part))
    for node in m.walk(body):
        name = None
        if isinstance(node, m.Assign) and isinstance(node.target, m.Ref) and node.target.name in pointers:
            name = node.target.name
        elif isinstance(node, m.Unary) and node.op in ("++", "--") and isinstance(node.operand, m.Ref) \
                and node.operand.name in pointers:
            name = node.operand.name
        if name is None:
            continue
        if id(node) in as_statement and not (isinstance(node, m.Assign) and node.op not in ("=", "+=", "-=")):
            out.setdefault(name, []).append(node)
        else:
            bad.add(name)
    return {k: v for k, v in out.items() if k not in bad}


def _comma_parts(e):
    if isinstance(e, m.Binary) and e.op == ",":
        yield from _comma_parts(e.lhs)
        yield from _comma_parts(e.rhs)
    else:
        yield e


def _offset_type(steps, start) -> m.Scalar:
    exprs = [s.value for s in steps if isinstance(s, m.Assign)] + ([start] if start is not None else [])
    wide = any(getattr(getattr(n, "type", None), "dtype", None) in _WIDE for e in exprs for n in m.walk(e))
    return m.Scalar("int64" if wide else "int32")


def _int(value: int, t, span) -> m.IntLit:
    return m.IntLit(value, str(value), t, span)


def _names(fn: m.Function) -> set[str]:
    names = {p.name for p in fn.params}
    for node in m.walk(fn.body):
        if isinstance(node, m.VarDecl):
            names.add(node.name)
        elif isinstance(node, m.Ref):
            names.add(node.name)
    return names


class _Rewrite(Transformer):
    """Each access through a moving pointer an index of its buffer at its offset; a pointer that
    may point into several buffers also keeps which one (``p_buf``, the buffer's place in their
    sorted names): a read picks among them (``p_buf == 0 ? a[p_off + i] : b[p_off + i]``) and a
    statement that stores through it becomes one branch per buffer (:meth:`split`)."""

    def __init__(self, moving, offsets, buffers, sources, selectors, derived, views, initial, flags=None,
                 set_at_start=frozenset()):
        self.moving, self.offsets, self.buffers, self.initial = moving, offsets, buffers, initial
        self.flags = flags or {}  # a pointer that may be null -> whether it is set (a bool local)
        self.set_at_start = set_at_start  # those of them declared at a view
        self.guarded: set[int] = set()  # p = c ? x + k : 0 as c ? (p_set = true, p_off = k) : p_set = false
        self.sources, self.selectors, self.derived = sources, selectors, derived
        self.starts: dict[str, m.Expr] = {}  # float* t = src; -> t_buf's start, src_buf
        self.numbers = {b: k for k, b in enumerate(sorted(buffers))}
        self.others = {k: v for k, v in buffers.items() if k not in moving}  # p = p + k: p's own offset
        self.views = views  # local views that do not move: q = row + 1 starts q where row is
        self.made: set[int] = set()  # the buffer references it wrote (a parameter's is its own name)
        self.selections: set[int] = set()  # the reads that pick among a pointer's buffers
        self.pairs: set[int] = set()  # p = x + k on a pointer into several buffers: p_buf = 0, p_off = k
        self.kept: list = []  # the nodes those ids name, alive while they are compared

    def _ref(self, base, t, span) -> m.Ref:
        ref = m.Ref(base, self.buffers[base], t, span)
        self.made.add(id(ref))
        self.kept.append(ref)
        return ref

    def _at(self, name, index, t, span):
        off = dataclasses.replace(self.offsets[name], span=span)
        wide = off.type if index is None or getattr(index.type, "dtype", None) not in _WIDE else index.type
        at = off if index is None else m.Binary("+", off, index, wide, span)
        if name not in self.selectors:
            return m.Index(self._ref(self.moving[name][0], m.Pointer(t), span), at, t, span)
        *firsts, last = sorted(self.sources[name], key=self.numbers.get)
        picked = m.Index(self._ref(last, m.Pointer(t), span), at, t, span)
        for base in reversed(firsts):
            picked = m.Ternary(self._is(name, base, span), m.Index(self._ref(base, m.Pointer(t), span), at, t, span),
                               picked, t, span)
            self.selections.add(id(picked))
            self.kept.append(picked)
        return picked

    def _is(self, name, base, span) -> m.Binary:
        sel = dataclasses.replace(self.selectors[name], span=span)
        return m.Binary("==", sel, _int(self.numbers[base], sel.type, span), m.Scalar("bool"), span)

    def selector_decl(self, name, base, which=None, span=None) -> m.VarDecl:
        sel = self.selectors[name]
        span = span or sel.span
        if sel.kind == "shared":  # the block's, set where the pointer is (a __shared__ variable has no value)
            return m.VarDecl(sel.name, sel.type, "shared", False, None, span)
        return m.VarDecl(sel.name, sel.type, "local", False,
                         which if which is not None else _int(self.numbers.get(base, 0), sel.type, span), span)

    def split(self, stmt):
        """The statements an expression statement becomes: ``p_buf = 1; p_off = k;`` for a pointer
        assigned; one branch per buffer where it stores through a pointer into several; None to
        keep it."""
        e = stmt.expr
        if id(e) in self.pairs:
            return [m.ExprStmt(e.lhs, e.span), m.ExprStmt(e.rhs, e.span)]
        if id(e) in self.guarded:  # the view's condition evaluated once: if (c) {set; off} else unset
            then = m.Block((m.ExprStmt(e.then.lhs, e.span), m.ExprStmt(e.then.rhs, e.span)), e.span)
            return [m.If(e.cond, then, m.Block((m.ExprStmt(e.other, e.span),), e.span), e.span)]
        picked = next((n for n in _lvalues(e) if id(n) in self.selections), None)
        if picked is None:
            return None

        class Pick(Transformer):
            def __init__(self, choice):
                self.choice = choice

            def leave_Ternary(self, node):
                return self.choice if node is picked else node

        def branch(choice):
            chosen = m.ExprStmt(Pick(choice).transform(e), stmt.span)
            parts = self.split(chosen)
            return chosen if parts is None else parts[0] if len(parts) == 1 else m.Block(tuple(parts), stmt.span)

        return [m.If(picked.cond, branch(picked.then), branch(picked.other), e.span)]

    def leave_Index(self, node):
        if isinstance(node.base, m.Ref) and node.base.name in self.moving:
            return self._at(node.base.name, node.index, node.type, node.span)
        return node

    def _stepped(self, node):
        """``p + k`` (``p - k``) of a moving pointer into one buffer: that buffer plus ``p_off +
        k``, for the places a pointer is used as one (an atomic's address, a view's start); else
        None."""
        node = strip_implicit_casts(node)
        if not (isinstance(node, m.Binary) and node.op in ("+", "-") and isinstance(node.lhs, m.Ref)
                and node.lhs.name in self.moving and node.lhs.name not in self.selectors
                and node.lhs.name not in self.flags
                and not isinstance(node.rhs.type, m.Pointer)
                # (a template's A + x_block_top types as dependent: the pointer's own type then)
                and (isinstance(node.type, m.Pointer) or isinstance(node.lhs.type, m.Pointer)
                     and isinstance(node.type, m.Opaque) and isinstance(node.rhs.type, m.Scalar))):
            return None
        name, span = node.lhs.name, node.span
        ptype = node.type if isinstance(node.type, m.Pointer) else node.lhs.type
        k = node.rhs if node.op == "+" else m.Unary("-", node.rhs, False, node.rhs.type, node.rhs.span)
        off = dataclasses.replace(self.offsets[name], span=span)
        wide = off.type if getattr(k.type, "dtype", None) not in _WIDE else k.type
        return m.Binary("+", self._ref(self.moving[name][0], ptype, span), m.Binary("+", off, k, wide, span),
                        ptype, span)

    def leave_Call(self, node):  # atomicAdd(p + c, v): the element p_off + c of p's buffer
        if node.kind != "atomic" or not node.args:
            return node
        p = strip_implicit_casts(node.args[0])
        if isinstance(p, m.Ref) and p.name in self.moving and p.name not in self.selectors \
                and isinstance(p.type, m.Pointer):  # atomicAdd(p, v): the element p_off
            at = self._at(p.name, None, p.type.pointee, p.span)
            return dataclasses.replace(node, args=(m.Unary("&", at, False, p.type, p.span),) + node.args[1:])
        address = self._stepped(node.args[0])
        if address is None:
            return node
        at = self._at(strip_implicit_casts(node.args[0]).lhs.name, address.rhs.rhs, address.type.pointee, address.span)
        return dataclasses.replace(node, args=(m.Unary("&", at, False, address.type, address.span),) + node.args[1:])

    def leave_Unary(self, node):
        e = node.operand
        if node.op == "!" and self._truth(e) is not None:
            return dataclasses.replace(node, operand=self._truth(e))
        if node.op == "*" and isinstance(e, m.Ref) and e.name in self.moving:
            return self._at(e.name, None, node.type, node.span)
        if node.op == "*" and isinstance(e, m.Binary) and e.op in ("+", "-") and isinstance(e.lhs, m.Ref) \
                and e.lhs.name in self.moving and not isinstance(e.rhs.type, m.Pointer):
            k = e.rhs if e.op == "+" else m.Unary("-", e.rhs, False, e.rhs.type, e.rhs.span)
            return self._at(e.lhs.name, k, node.type, node.span)
        if node.op in ("++", "--") and isinstance(e, m.Ref) and e.name in self.moving:
            off = dataclasses.replace(self.offsets[e.name], span=e.span)
            return m.Assign(node.op[0] + "=", off, _int(1, off.type, node.span), off.type, node.span)
        return node

    def _alias(self, e, span) -> Alias | None:
        """Where a pointer expression points: (a buffer or ``@p`` for a moving pointer ``p`` into
        several, the offset)."""
        moved = {name: Alias(b if name not in self.selectors else "@" + name,
                             dataclasses.replace(self.offsets[name], span=span))
                 for name, (b, _s, _o) in self.moving.items()}
        return _as_alias(e, self.others, {**self.views, **moved})

    def _start(self, name, value, span):
        """(its offset, its buffer's number or None for a pointer into one) for ``name = value``;
        None where ``value`` is no view this pass follows. A choice between two views (``c ? x :
        y``) starts at the one its condition picks."""
        choice = _choice(value)
        if choice is not None:
            a, b = self._start(name, choice.then, span), self._start(name, choice.other, span)
            if a is None or b is None:
                return None
            off = m.Ternary(choice.cond, a[0], b[0], a[0].type, span)
            return off, None if a[1] is None else m.Ternary(choice.cond, a[1], b[1], a[1].type, span)
        alias = self._alias(value, span)
        if alias is None or (name not in self.selectors and alias.buffer != self.moving[name][0]):
            return None
        off = alias.offset if alias.offset is not None else _int(0, self.offsets[name].type, span)
        if name not in self.selectors:
            return off, None
        sel = self.selectors[name]
        which = dataclasses.replace(self.selectors[alias.buffer[1:]], span=span) \
            if alias.buffer.startswith("@") else _int(self.numbers[alias.buffer], sel.type, span)
        return off, which

    def leave_Assign(self, node):
        t = node.target
        if not (isinstance(t, m.Ref) and t.name in self.moving):
            return node
        off = dataclasses.replace(self.offsets[t.name], span=t.span)
        if node.op in ("+=", "-="):
            return m.Assign(node.op, off, node.value, off.type, node.span)
        if any(isinstance(r, m.Ref) and r.name in self.flags for r in m.walk(node.value)):
            return node  # a pointer that may be null copied: its flag would not follow
        if t.name in self.flags:
            return self._set(t, node)
        start = self._start(t.name, node.value, t.span)
        if start is None:
            return node  # stays a reference to the pointer: the function is left as it was
        value, which = start
        moved = m.Assign("=", off, value, off.type, node.span)
        if which is None:
            return moved
        sel = dataclasses.replace(self.selectors[t.name], span=t.span)
        pair = m.Binary(",", m.Assign("=", sel, which, sel.type, node.span), moved, off.type, node.span)
        self.pairs.add(id(pair))
        self.kept.append(pair)
        return pair

    def _set(self, t, node):
        """``p = v`` on a pointer that may be null: its flag and offset (a pair of assignments, or
        a guarded pair under the view's condition); the node itself where ``v`` is no view."""
        flag, span = dataclasses.replace(self.flags[t.name], span=t.span), node.span

        def setting(value):
            return m.Assign("=", flag, m.BoolLit(value, _BOOL, span), _BOOL, span)
        if _null(node.value):
            return setting(False)
        view, when = _unless_null(node.value)
        start = self._start(t.name, view, t.span)
        if start is None:
            return node
        off = dataclasses.replace(self.offsets[t.name], span=t.span)
        pair = m.Binary(",", setting(True), m.Assign("=", off, start[0], off.type, span), off.type, span)
        self.kept.append(pair)
        if when is None:
            self.pairs.add(id(pair))
            return pair
        guarded = m.Ternary(when, pair, setting(False), _BOOL, span)
        self.guarded.add(id(guarded))
        self.kept.append(guarded)
        return guarded

    def _truth(self, e):
        """``p`` (through implicit casts) of a pointer that may be null, as a test: its flag;
        None for anything else."""
        e = strip_implicit_casts(e)
        if isinstance(e, m.Ref) and e.name in self.flags:
            return dataclasses.replace(self.flags[e.name], span=e.span)
        return None

    def _tested(self, e):
        return self._truth(e) or e

    def leave_Cast(self, node):  # (bool)p
        if isinstance(node.type, m.Scalar) and node.type.dtype == "bool" and self._truth(node.operand) is not None:
            return self._truth(node.operand)
        return node

    def leave_If(self, node):
        return dataclasses.replace(node, cond=self._tested(node.cond)) if self._truth(node.cond) else node

    def leave_While(self, node):
        return dataclasses.replace(node, cond=self._tested(node.cond)) if self._truth(node.cond) else node

    def leave_Ternary(self, node):
        return dataclasses.replace(node, cond=self._tested(node.cond)) if self._truth(node.cond) else node

    def leave_Binary(self, node):
        """``end - start`` on two pointers into one buffer: their offsets' difference; ``p < end``
        (any comparison) on two such pointers: their offsets compared; ``p != 0`` (``p && c``) of a
        pointer that may be null: its flag."""
        if node.op in ("==", "!=") and self._truth(node.lhs) is not None and _null(node.rhs) \
                or node.op in ("==", "!=") and self._truth(node.rhs) is not None and _null(node.lhs):
            flag = self._truth(node.lhs) or self._truth(node.rhs)
            return flag if node.op == "!=" else m.Unary("!", flag, False, _BOOL, node.span)
        if node.op in ("&&", "||") and (self._truth(node.lhs) is not None or self._truth(node.rhs) is not None):
            return dataclasses.replace(node, lhs=self._tested(node.lhs), rhs=self._tested(node.rhs))
        if node.op not in ("-", "<", "<=", ">", ">=", "==", "!="):
            return node
        if not any(isinstance(n, m.Ref) and n.name in self.moving for n in (node.lhs, node.rhs)):
            return node
        if not all(isinstance(getattr(n, "type", None), m.Pointer) for n in (node.lhs, node.rhs)):
            return node
        a, b = self._alias(node.lhs, node.span), self._alias(node.rhs, node.span)
        if a is None or b is None or a.buffer != b.buffer or a.buffer.startswith("@"):
            return node
        zero = _int(0, m.Scalar("int32"), node.span)
        lhs, rhs = a.offset if a.offset is not None else zero, b.offset if b.offset is not None else zero
        return m.Binary(node.op, lhs, rhs, lhs.type if node.op == "-" else node.type, node.span)

    def leave_VarDecl(self, node):
        if node.name not in self.moving and node.storage == "local" and node.init is not None:
            view = self._stepped(node.init)  # const float* row = p + k: a view of p's buffer where p is
            return node if view is None else dataclasses.replace(node, init=view)
        if node.name in self.moving and node.storage == "shared" and node.init is None:  # its block's offset
            off = self.offsets[node.name]
            return dataclasses.replace(node, name=off.name, type=off.type, const=False)
        if node.name not in self.moving or node.storage != "local":
            return node
        off = self.offsets[node.name]
        start = self.moving[node.name][1]
        if node.name in self.flags and node.init is not None and not _null(node.init) \
                and _unless_null(node.init)[1] is not None:
            return node  # T* p = c ? x : 0; then moved: left as it is (refused)
        if node.name in self.derived:
            begun = self._start(node.name, node.init, node.span)
            if begun is None:
                return node  # stays a reference to the pointer it was made from: refused
            start, which = begun
            if which is not None:
                self.starts[node.name] = which
        return dataclasses.replace(node, name=off.name, type=off.type, const=False,
                                   init=start if start is not None else _int(0, off.type, node.span))

    def leave_DeclStmt(self, node):
        named = {self.offsets[name].name: name for name in self.selectors}
        flagged = {self.offsets[name].name: name for name in self.flags}
        if not any(d.name in named or d.name in flagged for d in node.decls):
            return node
        decls = []
        for d in node.decls:
            decls.append(d)
            if d.name in named:
                name = named[d.name]
                decls.append(self.selector_decl(name, self.initial.get(name), self.starts.get(name), d.span))
            if d.name in flagged:  # T* p; (or = 0) unset, T* p = x + k; set
                name = flagged[d.name]
                flag = self.flags[name]
                set_ = name in self.set_at_start
                decls.append(m.VarDecl(flag.name, _BOOL, "local", False, m.BoolLit(set_, _BOOL, d.span), d.span))
        return dataclasses.replace(node, decls=tuple(decls))
