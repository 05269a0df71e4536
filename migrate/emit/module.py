"""The TileLang Python module of one CUDA file (text), from its printed kernels and macros.

The module holds a ``@T.macro`` per device function used, and per kernel a factory
(``make_<kernel>(grid, block, shared_bytes, **template)``) returning its ``T.prim_func``, a
:class:`~migrate.runtime.tilelang_support.Signature` and a launcher with the CUDA argument order.
Every printed statement ends with a provenance comment (``# L12``: line 12 of the CUDA file).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..ir import model as m
from . import render
from .dispatch import instance_entries
from .kernel import KernelOutput
from .printer import Line


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


def render_module(unit: m.TranslationUnit, rel_source: str, outputs: list[KernelOutput], macros: list[list[Line]],
                  keep_original: bool = False) -> ModuleOutput:
    """The module of ``unit``: the device functions' macros (callees first), then per kernel its
    factory, signature and launcher (a kernel that is not migrated says why); with
    ``keep_original``, the CUDA source line of each statement quoted above its TileLang."""
    original = None
    if keep_original:
        try:
            original = Path(unit.file).read_text(errors="replace").splitlines()
        except OSError:
            original = None
    macro_blocks = [_render_lines(lines, original) for lines in macros]
    kernels = []
    for out in outputs:
        if out.form == "unsupported":
            kernels.append({"name": out.name, "form": out.form, "reason": out.reason, "factory": "",
                            "signature": None})
            continue
        if out.instances is not None:  # a template converted per instance (.dispatch): each, then the template
            for inst in out.instances.outputs:
                kernels.append({"name": inst.name, "form": inst.form, "reason": inst.reason,
                                "factory": _render_lines(inst.lines, original), "signature": inst.signature,
                                "defaults": {}, "instance_of": out.name})
        text = _render_lines(out.lines, original)
        kernels.append({"name": out.name, "form": out.form, "reason": out.reason, "factory": text,
                        "signature": out.signature, "defaults": out.defaults,
                        "instances": instance_entries(out) if out.instances is not None else None})
    hybrid = any(k["form"] == "hybrid" and not k.get("instances") for k in kernels)
    fill = any("fill_blocks(" in k["factory"] for k in kernels)  # grids that fill the GPU (analysis.lift.free_grid)
    text = render("module.py.j2", version=__version__, source=rel_source, source_doc=_docstring_safe(rel_source),
                  kernels=kernels,
                  macros=macro_blocks, fill_blocks=fill, dispatch=any(k.get("instances") for k in kernels),
                  hybrid=hybrid)
    return ModuleOutput(text, outputs)


def _docstring_safe(text: str) -> str:
    """``text`` (a file name: it may hold quotes, backslashes, newlines) as it can stand inside the
    module's docstring."""
    return "".join(c if c.isprintable() and c not in '\\"' else ascii(c)[1:-1] if c != '"' else '\\"'
                   for c in text)
