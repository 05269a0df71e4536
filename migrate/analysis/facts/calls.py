"""Which device functions a function calls, and in which order their macros must be defined."""
from __future__ import annotations

from ...ir import model as m


def callees_of(fn: m.Function, table: dict[str, m.Function]) -> list[m.Function]:
    """The device functions ``fn`` calls, directly or through others."""
    out, stack = [], list(fn.calls)
    seen = set()
    while stack:
        name = stack.pop()
        if name in seen or name not in table:
            continue
        seen.add(name)
        out.append(table[name])
        stack.extend(table[name].calls)
    return out


def callees_first(names: list[str], device: dict[str, m.Function]) -> list[str]:
    """``names`` and the device functions they call, callees before callers (a macro must exist
    before the macro that calls it is parsed)."""
    order: list[str] = []

    def visit(name, stack=()):
        if name in order or name in stack or name not in device:
            return
        for callee in device[name].calls:
            visit(callee, stack + (name,))
        order.append(name)

    closure = set()
    stack = list(names)
    while stack:
        n = stack.pop()
        if n in closure or n not in device:
            continue
        closure.add(n)
        stack.extend(device[n].calls)
    for name in sorted(closure, key=lambda n: (device[n].span.line, n)):
        visit(name)
    return order


def with_effects(device: dict[str, m.Function]) -> frozenset[str]:
    """The device functions whose call does more than compute a value: a store that leaves the
    function (an element, a dereference, a variable that is not its own local), an atomic, a
    barrier or warp operation, directly or through the device functions they call."""
    def own(fn: m.Function) -> bool:
        for n in m.walk(fn.body) if fn.body else ():
            target = m.store_target(n)
            if target is not None and not (isinstance(target, m.Ref) and target.kind in ("local", "param")):
                return True
            if isinstance(n, m.Call) and n.kind in ("atomic", "sync", "warp", "cg"):
                return True
        return False

    return _through_calls(device, own)


def _through_calls(device: dict[str, m.Function], own) -> frozenset[str]:
    """The device functions for which ``own`` holds, or that call one of them, at any depth."""
    out = {name for name, fn in device.items() if own(fn)}
    changed = True
    while changed:
        changed = False
        for name, fn in device.items():
            if name not in out and any(c in out for c in fn.calls):
                out.add(name)
                changed = True
    return frozenset(out)


def reads_memory(e: m.Expr, own_arrays=frozenset()) -> bool:
    """Whether evaluating ``e`` reads memory: an element (of anything but one of ``own_arrays``,
    the local arrays of the function it is in), a dereference, a load intrinsic."""
    for n in m.walk(e):
        if isinstance(n, m.Index):
            base = n.base
            while isinstance(base, m.Index):
                base = base.base
            if not (isinstance(base, m.Ref) and base.kind == "local" and base.name in own_arrays):
                return True
        if isinstance(n, m.Unary) and n.op == "*" or isinstance(n, m.Call) and n.kind == "memory":
            return True
    return False


def with_loads(device: dict[str, m.Function]) -> frozenset[str]:
    """The device functions whose call reads memory (:func:`reads_memory`; their own local arrays
    aside), directly or through the device functions they call."""
    def own(fn: m.Function) -> bool:
        if fn.body is None:
            return False
        arrays = {n.name for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and isinstance(n.type, m.Array)}
        return reads_memory(fn.body, frozenset(arrays))

    return _through_calls(device, own)


#: Calls that an expression function may make besides other expression functions: values of their
#: arguments alone (math, conversions, scalar constructors) and loads.
_EXPRESSION_CALLS = ("math", "conversion", "constructor")


def one_expression_functions(device: dict[str, m.Function], cached_loads: tuple[str, ...]) -> set[str]:
    """The device functions that compute one expression of their arguments (scalar declarations
    with initialisers, never assigned, then ``return E;``; no stores, atomics, barriers or warp
    operations, no calls but math, conversions, loads (``cached_loads``: the cache-hinted ones,
    compat.catalog.CACHED_LOADS) and other such functions, no recursion): the emitter gives them a
    plain function, callable where C may not evaluate the call."""
    memo: dict[str, bool] = {}

    def check(name: str, stack: tuple[str, ...]) -> bool:
        if name in memo:
            return memo[name]
        fn = device.get(name)
        ok = fn is not None and name not in stack and _expression_body(fn, cached_loads)
        if ok:
            callees = {n.callee for n in m.walk(fn.body) if isinstance(n, m.Call) and n.kind == "device"}
            ok = all(check(c, stack + (name,)) for c in sorted(callees))
        memo[name] = ok
        return ok

    return {name for name in sorted(device) if check(name, ())}


def _expression_body(fn: m.Function, cached_loads: tuple[str, ...]) -> bool:
    if fn.body is None or not isinstance(fn.returns, m.Scalar) or fn.returns.dtype == "void" \
            or any(isinstance(p.type, m.Reference) for p in fn.params):
        return False
    *decls, last = fn.body.stmts or (None,)
    if not isinstance(last, m.Return) or last.value is None:
        return False
    if not all(isinstance(s, m.DeclStmt) and all(isinstance(d.type, m.Scalar) and d.init is not None
                                                  for d in s.decls) for s in decls):
        return False
    for n in m.walk(fn.body):
        if isinstance(n, (m.Assign, m.MethodCall)) or isinstance(n, m.Unary) and n.op in ("++", "--", "&") \
                or isinstance(n, m.Binary) and n.op == ",":
            return False
        if isinstance(n, m.Call) and n.kind != "device" and not (
                n.kind in _EXPRESSION_CALLS and isinstance(n.type, m.Scalar) or n.kind == "memory" and n.callee in cached_loads):
            return False
    return True
