"""Print a ``__device__`` function as a ``@T.macro`` that TileLang inlines at each call; the
builtins it reads (``threadIdx.x`` -> ``tx``, ...) become extra parameters its callers pass."""
from __future__ import annotations

from ..analysis.facts.bounds import nonneg_locals
from ..ir import model as m
from ..ir.loops import DIMS, KernelPlan
from ..ir.names import template_param_name
from .printer import EmitError, Line, Scope, StmtPrinter, dtype_of


def emit_device_function(fn: m.Function, kplan: KernelPlan, result: m.Ref | None, tag_of, extras=None) -> list[Line]:
    """The macro of a prepared device function (``kplan``: its simt plan; ``result``: the local
    that holds its value when it returns from several places)."""
    scope = Scope(simt=True, params_vary=True)
    scope.thread_vars = {d: f"t{d}" for d in DIMS}
    scope.block_vars = {d: f"b{d}" for d in DIMS}
    scope.placements = {n: "phase" for n in kplan.vars}
    scope.single = {n for n, vp in kplan.vars.items() if vp.single_assignment}
    scope.type_params = {t.name: template_param_name(t.name) for t in fn.template_params if t.kind == "type"}
    scope.buffers = {p.name for p in fn.params if isinstance(p.type, m.Pointer)}
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
        if p.name in assigned and not isinstance(p.type, m.Pointer):
            params.append(f"{p.name}_in")
            copies.append((p.name, dtype_of(p.type, scope), f"{p.name}_in", p.span))
        else:
            params.append(p.name)
    extra = (extras or {}).get(fn.name, device_builtin_params(fn))
    lines = [Line(0, "@T.macro", ""),
             Line(0, f"def {fn.name}({', '.join(params + extra)}):", scope.tag(fn.span))]
    printer = StmtPrinter(scope, indent=1)
    for name, dtype, source, span in copies:
        printer.emit(f"{name} = T.alloc_var({dtype})", span)
        printer.emit(f"{name} = {source}", span)
    if result is not None:
        printer.emit(f"result_ = T.alloc_var({dtype_of(fn.returns, scope)})", fn.span)
    printer.block(fn.body.stmts if fn.body else ())
    if result is not None:
        printer.emit("return result_", fn.span)
    return lines + printer.lines


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


def extra_params(name: str, device: dict[str, m.Function], seen=()) -> list[str]:
    """The builtins device function ``name`` and the device functions it calls read: the extra
    parameters of its macro."""
    fn = device[name]
    extra = set(device_builtin_params(fn))
    for callee in fn.calls:
        if callee in device and callee not in seen:
            extra |= set(extra_params(callee, device, seen + (name,)))
    return sorted(extra)
