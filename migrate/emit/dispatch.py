"""A kernel template converted per instance, as one entry of the module.

Where a template's body means something only per instance (an overload each instance's types
choose, a functor type argument, ``mask<T>[j]``), the frontend models each instance as its own
kernel (``Function.instances``, :mod:`migrate.parse.instance_copies`) and the pipeline converts
each. This module makes the template's one entry of them:

- its form: the lowest of its instances' (tile > portable > simt); an instance that is not
  converted makes the template ``unsupported``, its reason naming that instance (the module then
  holds none of them: a launch of the template keeps running as CUDA);
- its factory ``make_<kernel>(grid, block, shared_bytes=0, <template params>=None, target="cuda",
  **options)``, which calls the factory of the instance its template values name;
- its :class:`~.signature.Signature`, whose ``instances`` lists each instance's factory values,
  its arguments as the program writes them and its own signature
  (:func:`migrate.runtime.tilelang_support.instance_signature` picks one per launch).

The instances' factories and signatures are printed as any kernel's, without launchers; the
module's ``KERNELS`` table names the template only.
"""
from __future__ import annotations

import dataclasses

from ..diagnostics import make
from ..ir import model as m
from ..ir.loops import Form
from ..ir.names import template_param_name
from . import signature_name
from .kernel import KernelOutput
from .printer import Line

#: forms from the most lifted to the least: a template takes its least lifted instance's
_ORDER = (Form.TILE, Form.PORTABLE, Form.SIMT, Form.HYBRID)


@dataclasses.dataclass
class Instances:
    """What the module prints of a template converted per instance."""

    outputs: list[KernelOutput]  # each instance's, in the order of the template's instances
    keys: list[tuple]  # each instance's factory values
    args: list[tuple]  # each instance's template arguments as the program writes them


def instance_label(fn: m.Function, inst: m.Function) -> str:
    """``hmax<__half2>``: an instance as its template arguments name it."""
    return f"{fn.name}<{', '.join(inst.instantiations[0].args)}>"


def template_output(fn: m.Function, outputs: list[KernelOutput]) -> KernelOutput:
    """The template ``fn``'s one output from its instances' (``outputs``, in the order of
    ``fn.instances``): the lowest form and the instances' diagnostics (each once, in place of the
    generic model's: ``instances`` set), or ``unsupported`` naming the first instance that is not
    converted."""
    diagnostics, seen = [], set()
    for out in outputs:
        for d in out.diagnostics:
            key = (d.code, d.span.line, d.span.col, d.message)
            if key not in seen:
                seen.add(key)
                diagnostics.append(d)
    instances = Instances(list(outputs), [tuple(i.instantiations[0].values) for i in fn.instances],
                          [tuple(i.instantiations[0].args) for i in fn.instances])
    failed = [(inst, out) for inst, out in zip(fn.instances, outputs) if out.form == Form.UNSUPPORTED]
    if failed:
        inst, out = failed[0]
        reason = f"instance {instance_label(fn, inst)}: {out.reason}"
        if not any(d.severity.value == "error" for d in out.diagnostics):
            diagnostics.append(make("M3001", fn.span, reason))
        out = KernelOutput(fn.name, Form.UNSUPPORTED, reason, diagnostics=diagnostics)
        out.instances = instances
        return out
    form = max((out.form for out in outputs), key=_ORDER.index)
    reasons = list(dict.fromkeys(out.reason for out in outputs))
    reason = reasons[0] if len(reasons) == 1 else "; ".join(
        f"{instance_label(fn, inst)}: {out.reason}" for inst, out in zip(fn.instances, outputs))
    reason = f"converted per instance ({len(outputs)}): {reason}"
    out = KernelOutput(fn.name, form, reason, diagnostics=diagnostics)
    out.instances = instances
    out.macros = list(dict.fromkeys(name for o in outputs for name in o.macros))
    out.lines = dispatch_factory(fn, outputs)
    out.signature = dispatch_signature(fn, out)
    return out


def dispatch_factory(fn: m.Function, outputs: list[KernelOutput]) -> list[Line]:
    """``make_<kernel>``: the factory of the instance its template values name."""
    tag = f"L{fn.span.line}"
    names = [template_param_name(t.name) for t in fn.template_params]
    params = "".join(f", {n}=None" for n in names)
    table = f"_{fn.name.upper()}_INSTANCES"
    lines = [Line(0, f"{table} = {{", "")]
    for inst, out in zip(fn.instances, outputs):
        lines.append(Line(1, f"{tuple(inst.instantiations[0].values)!r}: make_{out.name},", ""))
    lines.append(Line(0, "}", ""))
    lines += [Line(0, "", ""), Line(0, "", ""),
              Line(0, f"def make_{fn.name}(grid, block, shared_bytes=0{params}, target=\"cuda\", **options):", tag),
              Line(1, f'"""TileLang for CUDA kernel template `{fn.name}`, converted per instance: the factory '
                      f'of the instance its template arguments name."""', ""),
              Line(1, f"factory = instance_factory({fn.name!r}, {table}, ({', '.join(names)},))", ""),
              Line(1, "return factory(grid, block, shared_bytes, target=target, **options)", "")]
    return lines


def dispatch_signature(fn: m.Function, out: KernelOutput):
    """The template's Signature: its parameters where the instances agree (a dtype that is a
    type parameter's in each instance is named by that parameter), its template parameters."""
    sigs = [o.signature for o in out.instances.outputs]
    keys = out.instances.keys
    types = [(j, template_param_name(t.name)) for j, t in enumerate(fn.template_params) if t.kind == "type"]
    params = []
    for i, first in enumerate(sigs[0].params):
        dtypes = [s.params[i][2] if i < len(s.params) else None for s in sigs]
        if first[1] in ("buffer", "scalar") and len(set(dtypes)) > 1:
            named = [name for j, name in types if all(d == k[j] for d, k in zip(dtypes, keys))]
            if named:
                first = (first[0], first[1], named[0])
        params.append(first)
    return dataclasses.replace(sigs[0], name=fn.name, params=tuple(params),
                               template=tuple((template_param_name(t.name), t.kind) for t in fn.template_params),
                               symbols=(), form=str(out.form), shapes=(), tune=None, specialize=(),
                               specialize_when="", specialize_note="", specialize_why="", static_pass_configs=(),
                               whole_tiles=False, state=(), unchecked=False, unvectorized=False, hybrid=(),
                               hybrid_include="", hybrid_folders=(), hybrid_defines=(),
                               tolerance=next((s.tolerance for s in sigs if s.tolerance), None),
                               enums=tuple((template_param_name(t.name), t.enumerators) for t in fn.template_params
                                           if t.enumerators))


def instance_entries(out: KernelOutput) -> list[tuple]:
    """(factory values, arguments as written, the instance's Signature constant) per instance,
    as the template's Signature lists them."""
    return [(key, args, signature_name(o.name))
            for key, args, o in zip(out.instances.keys, out.instances.args, out.instances.outputs)]
