"""One parsed CUDA file → one TileLang Python module (text), plus each kernel's outcome.

The module holds a ``@T.macro`` per device function used, and per kernel a factory
(``make_<kernel>(grid, block, shared_bytes, **template)``) returning its ``T.prim_func``, a
:class:`~migrate.runtime.tilelang_support.Signature` and a launcher with the CUDA argument order.
Every printed statement ends with a provenance comment (``# L12``: line 12 of the CUDA file).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..diagnostics import Diagnostic, make
from ..ir import model as m
from . import render
from .kernel import KernelEmitter, KernelOutput, device_builtin_params, emit_device_function
from .printer import EmitError, Line


@dataclass
class ModuleOutput:
    text: str
    kernels: list[KernelOutput]


def _render_lines(lines: list[Line], original: list[str] | None = None) -> str:
    """Indented lines with their provenance tags; with ``original`` (the CUDA file's lines,
    ``--keep-original-code``), each new CUDA line is also quoted in a comment above its code."""
    out = []
    shown = None
    for line in lines:
        text = "    " * line.indent + line.text if line.text else ""
        if original is not None and line.origin.startswith("L") and line.origin != shown and line.text:
            number = int(line.origin[1:])
            if 0 < number <= len(original) and original[number - 1].strip():
                out.append("    " * line.indent + "# CUDA: " + original[number - 1].strip())
            shown = line.origin
        if line.origin and line.text:
            text += f"  # {line.origin}"
        out.append(text.rstrip())
    return "\n".join(out)


def _tagger(main_file: str) -> dict[str, str]:
    return {main_file: ""}


def emit_module(unit: m.TranslationUnit, rel_source: str, frontend_diags: dict[str, list[Diagnostic]],
                keep_original: bool = False, no_lift: frozenset = frozenset(),
                allow_tf32: bool = False) -> ModuleOutput:
    """Emit every kernel of ``unit`` whose frontend diagnostics have no error; with
    ``keep_original``, quote the CUDA source line of each statement above its TileLang."""
    original = None
    if keep_original:
        try:
            original = Path(unit.file).read_text(errors="replace").splitlines()
        except OSError:
            original = None
    tags = _tagger(unit.file)
    device = {f.name: f for f in unit.device_functions}
    extras = {name: _extra_params(name, device) for name in device}
    outputs: list[KernelOutput] = []
    for fn in unit.kernels:
        errors = [d for d in frontend_diags.get(fn.name, []) if d.severity.value == "error"]
        if errors:
            outputs.append(KernelOutput(fn.name, "unsupported", f"{errors[0].code}: {errors[0].message}"))
            continue
        outputs.append(KernelEmitter(fn, unit, tags, extras, lift=fn.name not in no_lift,
                                     allow_tf32=allow_tf32).emit())

    macros_needed = []
    for out in outputs:
        if out.form != "unsupported":
            for name in out.macros:
                if name not in macros_needed:
                    macros_needed.append(name)
    macro_blocks = []
    failed_macros: dict[str, EmitError] = {}
    for name in _topological(macros_needed, device):
        try:
            macro_blocks.append(_render_lines(emit_device_function(device[name], tags, extras), original))
        except EmitError as exc:
            failed_macros[name] = exc
    if failed_macros:
        for out in outputs:
            bad = [n for n in out.macros if n in failed_macros]
            if bad and out.form != "unsupported":
                exc = failed_macros[bad[0]]
                out.form, out.reason, out.lines = "unsupported", f"device function '{bad[0]}': {exc}", []
                out.diagnostics.append(make("M3001", exc.span or device[bad[0]].span, out.reason))

    kernels = []
    for out in outputs:
        if out.form == "unsupported":
            kernels.append({"name": out.name, "form": out.form, "reason": out.reason, "factory": "",
                            "signature": None})
            continue
        text = _render_lines(out.lines, original)
        kernels.append({"name": out.name, "form": out.form, "reason": out.reason, "factory": text,
                        "signature": out.signature, "defaults": launch_defaults(unit, out.name)})
    fill = any("fill_blocks(" in k["factory"] for k in kernels)  # grids that fill the GPU (analysis.free_grid)
    text = render("module.py.j2", version=__version__, source=rel_source, kernels=kernels,
                  macros=macro_blocks, fill_blocks=fill)
    return ModuleOutput(text, outputs)


def launch_defaults(unit: m.TranslationUnit, kernel: str) -> dict[str, str]:
    """Launcher defaults from the CUDA launch sites: ``grid``/``block``/``shared_bytes`` where
    every launch of the kernel in this file gives the same compile-time constant."""
    sites = [s for s in unit.launches if s.kernel == kernel]
    out = {}
    for field in ("grid", "block", "shared_bytes"):
        values = {_launch_value(getattr(s, field), field) for s in sites}
        if sites and len(values) == 1 and None not in values:
            out[field] = str(values.pop())
    return out


def _launch_value(expr, field: str):
    if expr is None:
        return 0 if field == "shared_bytes" else None
    if field != "shared_bytes" and expr.dims is not None:
        return expr.dims[0] if expr.dims[1:] == (1, 1) else expr.dims
    return expr.value if isinstance(expr.value, int) else None


def _topological(names: list[str], device: dict[str, m.Function]) -> list[str]:
    """Callees before callers (a macro must exist before the macro that calls it is parsed)."""
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


def _extra_params(name: str, device: dict[str, m.Function], seen=()) -> list[str]:
    fn = device[name]
    extra = set(device_builtin_params(fn))
    for callee in fn.calls:
        if callee in device and callee not in seen:
            extra |= set(_extra_params(callee, device, seen + (name,)))
    return sorted(extra)
