"""A templated kernel written out for its one instance, where the template as written cannot be
migrated.

Some kernel templates mean something only per instance: ``mask<T>[j]`` reads the instance's
``__constant__`` array of a variable template, ``op(a, b)`` calls the functor type the instance
passes, ``p.compute(...)`` a method of the instance's class, ``half_max(a, b)`` the overload the
instance's types choose. The template's model keeps these dependent (M1206, M1209, or a method
of a template-typed object that the printer refuses), and one generic factory cannot tell the
instances apart. Where the program uses the kernel with one instance only, the file is parsed
again with a copy of the kernel's text after its last line: the template header blanked, the
template parameters replaced by the instance's arguments, the kernel renamed. Clang then
resolves what the instance reaches, as nvcc does, and the copy's model stands for the kernel:
its name, its lines mapped back to the template's, the template's instance still listed. A copy
that clang reports errors in is not used, nor is one of a kernel whose template works as it is.
"""
from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

from ..ir import model as m
from ..ir.span import Span

#: the name a copy gets: ``<kernel>__c2t_instance``
SUFFIX = "__c2t_instance"


def needs_copy(kernel: m.Function, errors: list) -> bool:
    """Whether ``kernel`` is a template with one known instance whose model the generic form
    cannot take: a frontend error in it, or a method called on (a field read of) an object of a
    template type (``px.x`` of a ``T px`` that the instance makes a ``float3``)."""
    if not kernel.template_params or len(kernel.instantiations) != 1 or kernel.body is None:
        return False
    if errors:
        return True
    for n in m.walk(kernel.body):
        if isinstance(n, (m.MethodCall, m.Member)):  # p.compute(...), px.x on a T px: the instance's type's
            t = getattr(n.obj if isinstance(n, m.MethodCall) else n.base, "type", None)
            if isinstance(t, m.Reference):
                t = t.target
            if isinstance(t, m.TemplateType):
                return True
    return False


def instance_text(text: str, kernel: m.Function) -> str | None:
    """The kernel's text for its instance, as many lines as the template's: the header blanked,
    each template parameter replaced by its argument, the name ``<kernel>__c2t_instance``; None
    where that cannot be written (a parameter with no argument, a qualified definition)."""
    args = list(kernel.instantiations[0].args)
    params = kernel.template_params
    for p in params[len(args):]:
        if p.default is None:
            return None
        args.append(p.default)
    if len(args) != len(params):
        return None
    lines = text.split("\n")
    s = kernel.span
    if s.end_line > len(lines):
        return None
    chunk = "\n".join(lines[s.line - 1:s.end_line])
    start = s.col - 1
    end = len(chunk) - (len(lines[s.end_line - 1]) - (s.end_col - 1))
    chunk = " " * start + chunk[start:end]
    header = re.match(r"\s*template\s*<", chunk)
    if header is None:
        return None
    close = _closing(chunk, header.end())
    if close is None:
        return None
    chunk = re.sub(r"[^\n]", " ", chunk[:close + 1]) + chunk[close + 1:]
    name = re.compile(r"(::\s*)?\b" + re.escape(kernel.name) + r"\s*\(")
    first = name.search(chunk, close + 1)
    if first is None or first.group(1):
        return None  # ns::kernel(...) defined out of its namespace: the copy would not be one
    at = first.start() + len(first.group(0)) - len(first.group(0).lstrip())
    chunk = chunk[:at] + kernel.name + SUFFIX + chunk[at + len(kernel.name):]
    values = {p.name: (f"({a})" if p.kind == "value" else a) for p, a in zip(params, args)}
    masked = _masked(chunk)
    out, last = [], 0
    for match in re.finditer(r"\b[A-Za-z_]\w*\b", masked):
        word = match.group(0)
        if word not in values or re.search(r"(\.|->|::)\s*$", masked[:match.start()]):
            continue
        out.append(chunk[last:match.start()] + values[word])
        last = match.end()
    return "".join(out) + chunk[last:]


def _closing(text: str, at: int) -> int | None:
    """The index of the ``>`` closing the template parameter list opened before ``at``."""
    depth = 1
    for i in range(at, len(text)):
        c = text[i]
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
            if depth == 0:
                return i if c == ">" else None
    return None


def _masked(text: str) -> str:
    from ..runtime.source import mask_source
    return mask_source(text)


def with_copies(text: str, copies: dict[str, str], namespaces: dict[str, tuple[str, ...]]
                ) -> tuple[str, dict, int]:
    """``text`` with the copies after its last line (each in the namespaces its kernel is
    declared in); per kernel, the line its copy starts on; and the first line after ``text``."""
    out = text if text.endswith("\n") else text + "\n"
    after = out.count("\n") + 1
    starts = {}
    for name, copy in copies.items():
        opened = "".join(f"namespace {ns} {{ " for ns in namespaces.get(name, ()))
        out += opened + "\n"
        starts[name] = out.count("\n") + 1
        out += copy + "\n" + "}" * len(namespaces.get(name, ())) + "\n"
    return out, starts, after


def adopt(original, again, starts: dict[str, int], kernels: dict[str, m.Function], appended_from: int):
    """``again`` (the file parsed with the copies) with each copy that parsed cleanly standing
    for its kernel, lines mapped back; copies with errors are dropped, and so are the
    diagnostics in the appended text. Returns the ParsedFile and the kernels replaced."""
    path = _resolved(original.path)
    replaced = {}
    by_name = {k.name: k for k in again.unit.kernels}
    for name, first in starts.items():
        copy = by_name.get(name + SUFFIX)
        if copy is None or again.kernel_errors(name + SUFFIX) or name not in by_name:
            continue
        template = kernels[name]
        delta = first - template.span.line
        moved = _shifted(copy, path, appended_from, delta)
        replaced[name] = dataclasses.replace(moved, name=name, instantiations=template.instantiations,
                                             span=template.span)
    kept = []
    for k in again.unit.kernels:
        if k.name.endswith(SUFFIX):
            continue
        kept.append(replaced.get(k.name, k))
    unit = dataclasses.replace(again.unit, kernels=tuple(kept))

    def ours(d):  # not in the appended copies
        return not (d.span.file and _resolved(d.span.file) == path and d.span.line >= appended_from)

    diagnostics = [d for d in again.diagnostics if ours(d)]
    by_kernel = {name: [d for d in ds if ours(d)] for name, ds in again.by_kernel.items()
                 if not name.endswith(SUFFIX)}
    for name in replaced:  # a copy's own diagnostics (its warnings), at the template's lines
        by_kernel[name] = [_shifted(d, path, appended_from, starts[name] - kernels[name].span.line)
                           for d in again.by_kernel[name + SUFFIX]]
        diagnostics += by_kernel[name]
    parsed = dataclasses.replace(again, unit=unit, diagnostics=diagnostics, by_kernel=by_kernel)
    return parsed, replaced


def _shifted(obj, path: str, first: int, delta: int):
    """``obj`` (a model node, type, diagnostic, tuple) with every span in ``path`` at or after
    line ``first`` moved ``delta`` lines up."""
    if isinstance(obj, Span):
        if obj.line >= first and obj.file and _resolved(obj.file) == path:
            return dataclasses.replace(obj, line=obj.line - delta, end_line=obj.end_line - delta)
        return obj
    if isinstance(obj, tuple):
        return tuple(_shifted(x, path, first, delta) for x in obj)
    if isinstance(obj, list):
        return [_shifted(x, path, first, delta) for x in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        changes = {}
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            new = _shifted(value, path, first, delta)
            if new is not value:
                changes[f.name] = new
        return dataclasses.replace(obj, **changes) if changes else obj
    return obj


@functools.lru_cache(maxsize=64)
def _resolved(file: str) -> str:
    """``file``'s absolute path (asked for every span of a copy: once per file name)."""
    return str(Path(file).resolve())
