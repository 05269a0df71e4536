"""Print a ``__device__`` function as a ``@T.macro`` that TileLang inlines at each call; the
builtins it reads (``threadIdx.x`` -> ``tx``, ...) become extra parameters its callers pass.

A function that only computes one expression of its arguments (:func:`expression_functions`) also
gets a plain Python function, which its callers use where C may not evaluate the call (right of
``&&``/``||``, a branch of ``?:``) and where C evaluates it at every test (a loop condition):
TileLang refuses a macro inside ``and``/``or``, and runs its statements (and binds its arguments)
where the statement holding the call stands, whatever the condition and once before a ``while``,
while the plain function's expression stands where the call stands. Elsewhere the macro is
called, which evaluates each argument once.
"""
from __future__ import annotations

import re

from ..analysis.facts.bounds import nonneg_locals
from ..analysis.facts.calls import one_expression_functions
from ..compat.catalog import CACHED_LOADS
from ..ir import model as m
from ..ir.exprs import reused_names
from ..ir.loops import DIMS, KernelPlan
from ..ir.names import template_param_name
from .printer import EmitError, Line, Scope, StmtPrinter, dtype_of


def emit_device_function(fn: m.Function, kplan: KernelPlan, result: m.Ref | None, tag_of, extras=None,
                         calls: Scope | None = None, plain: bool = False) -> list[Line]:
    """The macro of a prepared device function (``kplan``: its simt plan; ``result``: the local
    that holds its value when it returns from several places), or with ``plain`` its plain
    function (one of ``calls.expression_fns``, :func:`expression_functions`); ``calls``: how the
    unit calls its device functions (a kernel's scope)."""
    scope = Scope(simt=True, params_vary=True, plain_function=plain, threads=True)
    if calls is not None:
        scope.expression_fns, scope.expressions_used, scope.effects, scope.loads = \
            calls.expression_fns, calls.expressions_used, calls.effects, calls.loads
        scope.pointer_params = calls.pointer_params
    scope.thread_vars = {d: f"t{d}" for d in DIMS}
    scope.block_vars = {d: f"b{d}" for d in DIMS}
    scope.placements = {n: "phase" for n in kplan.vars}
    scope.single = {n for n, vp in kplan.vars.items() if vp.single_assignment}
    scope.reused = reused_names(fn.body) if fn.body else set()
    if plain:  # values its straight-line reassignments declared (pipeline: analysis.prepare.renaming)
        for d in (n for n in m.walk(fn.body) if isinstance(n, m.VarDecl) and n.name not in kplan.vars):
            scope.placements[d.name] = "phase"
            scope.single.add(d.name)
    scope.type_params = {t.name: template_param_name(t.name) for t in fn.template_params if t.kind == "type"}
    # pointer parameters, and array ones (``float x[]``, ``double r[3]``: C passes a pointer)
    scope.buffers = {p.name for p in fn.params if isinstance(p.type, (m.Pointer, m.Array))}
    scope.nonneg = nonneg_locals(fn)
    scope.file_tags = tag_of
    scope.device_extra = extras or {}
    assigned = {n.target.name for n in m.walk(fn.body) if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)} \
        | {n.operand.name for n in m.walk(fn.body) if isinstance(n, m.Unary) and n.op in ("++", "--")
           and isinstance(n.operand, m.Ref)}
    params, copies = [], []
    for p in fn.params:
        if isinstance(p.type, m.Reference):
            raise EmitError(f"reference parameter '{p.name}' of device function '{fn.name}'", p.span)
        if p.name in assigned and not isinstance(p.type, (m.Pointer, m.Array)):
            params.append(f"{p.name}_in")
            copies.append((p.name, dtype_of(p.type, scope), f"{p.name}_in", p.span))
        else:
            params.append(p.name)
    extra = (extras or {}).get(fn.name, device_builtin_params(fn))
    if plain and (copies or result is not None):
        raise EmitError(f"device function '{fn.name}' printed as an expression assigns a variable", fn.span)
    if plain:
        lines = [Line(0, f"# {fn.name} where C may not evaluate the call (right of and/or, a branch of ?:) "
                         "or evaluates it at every test (a loop condition)", ""),
                 Line(0, f"def {scope.expression_fns[fn.name]}({', '.join(params + extra)}):", scope.tag(fn.span))]
    else:
        lines = [Line(0, "@T.macro", ""), Line(0, f"def {fn.name}({', '.join(params + extra)}):", scope.tag(fn.span))]
    printer = StmtPrinter(scope, indent=1)
    learnt = _type_params_from_arguments(fn, params, scope.type_params)
    for name, bound in learnt.items():
        printer.emit(f"{name} = {bound}", fn.span)
    for name, dtype, source, span in copies:
        printer.emit(f"{name} = T.alloc_var({dtype})", span)
        printer.emit(f"{name} = {source}", span)
    if result is not None:
        printer.emit(f"result_ = T.alloc_var({dtype_of(fn.returns, scope)})", fn.span)
    printer.block(fn.body.stmts if fn.body else ())
    if result is not None:
        printer.emit("return result_", fn.span)
    for t, name in scope.type_params.items():  # (template <class vec_t> vec_t getPositiveInfinity())
        if name not in learnt and any(re.search(rf"\b{re.escape(name)}\b", ln.text) for ln in printer.lines):
            raise EmitError(f"templated device function '{fn.name}' reads its type parameter '{t}', which none "
                            "of its arguments has: its macro, outside the kernel's factory, cannot learn it", fn.span)
    if plain and any("T.alloc" in ln.text for ln in printer.lines):
        raise EmitError(f"device function '{fn.name}' printed as an expression keeps a variable", fn.span)
    return lines + printer.lines


def pointer_params(fn: m.Function) -> frozenset[int]:
    """The positions of ``fn``'s pointer parameters (``float G[][7]`` is one: C adjusts it)."""
    return frozenset(i for i, p in enumerate(fn.params) if isinstance(p.type, m.Pointer)
                     or isinstance(p.type, m.Array) and p.type.extent is None)


def _type_params_from_arguments(fn: m.Function, printed: list[str], names: dict[str, str]) -> dict[str, str]:
    """A template device function's type parameters, each read off an argument of that type (its
    printed name -> ``buf.dtype``): the macro is called with the kernel's buffers and values, whose
    dtypes TileLang knows (``template <class T> f(const T* in, ...)``: ``T_ = in_.dtype``; a
    value's through :func:`migrate.compat.cuda_math.dtype_of`, as the call may pass a literal)."""
    bound = {}
    for kind in (m.Pointer, m.TemplateType):  # a buffer's dtype before a scalar's
        for p, name in zip(fn.params, printed):  # ``printed``: the macro's names for them
            t = p.type.pointee if kind is m.Pointer and isinstance(p.type, m.Pointer) else p.type
            if isinstance(p.type, kind) and isinstance(t, m.TemplateType) and t.name in names:
                bound.setdefault(names[t.name], f"{name}.dtype" if kind is m.Pointer else f"cuda_math.dtype_of({name})")
    return bound


def expression_functions(device: dict[str, m.Function], taken) -> dict[str, str]:
    """The device functions that compute one expression of their arguments
    (:func:`~migrate.analysis.facts.calls.one_expression_functions`), each with the name of its
    plain function, ``f_expr`` (a function whose ``f_expr`` is in ``taken``, the names the unit
    uses, has none)."""
    taken = set(taken) | set(device)
    return {name: f"{name}_expr" for name in sorted(one_expression_functions(device, CACHED_LOADS))
            if f"{name}_expr" not in taken}


def device_builtin_params(fn: m.Function) -> list[str]:
    """Builtins a device function reads, passed in by its callers (a macro sees no caller names)."""
    names = []
    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.Builtin) and node.dim:
            name = {"threadIdx": f"t{node.dim}", "blockIdx": f"b{node.dim}",
                    "blockDim": f"block_{node.dim}", "gridDim": f"grid_{node.dim}"}[node.var]
            if name not in names:
                names.append(name)
    return sorted(names)


def extra_params(name: str, device: dict[str, m.Function], seen=(), buffers: frozenset = frozenset()) -> list[str]:
    """The builtins device function ``name`` and the device functions it calls read, and the
    globals of ``buffers`` they name (``__constant__`` and ``__device__`` arrays, which the kernel
    takes as buffers after its parameters): the extra parameters of its macro."""
    fn = device[name]
    extra = set(device_builtin_params(fn))
    extra |= {n.name for n in m.walk(fn.body) if isinstance(n, m.Ref) and n.name in buffers
              and n.kind not in ("local", "param")} if fn.body else set()
    for callee in fn.calls:
        if callee in device and callee not in seen:
            extra |= set(extra_params(callee, device, seen + (name,), buffers))
    return sorted(extra)
