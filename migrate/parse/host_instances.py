"""Template arguments of kernels launched inside host function templates.

    template <class T> void init_arrays(T* a, T v) { init_kernel<<<g, b>>>(a, v); }
    template <bool W, typename T> void run(...) { fill<W, T><<<g, b>>>(...); }
    int main() { init_arrays<float>(a, 1.0f); run<true, double>(...); }

clang leaves such a launch's template arguments dependent (the host template is never
instantiated in libclang's cursors), so the kernel looked never launched (M1208). Here each such
launch's arguments are written in terms of the host template's parameters — the ones written at
the launch (``fill<W, T>``), the ones not written deduced the way C++ deduces them from a kernel
parameter spelled ``T*``, ``const T*`` or ``T`` (``k<NUM_THREADS><<<g, b>>>(payoff)`` of a
``template <int N, typename Payoff>`` kernel in a ``do_run<Payoff>``) — and the host template's own instances (its calls elsewhere with
arguments clang resolved, or written in terms of another host template's parameters, two levels
at most) give them values.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import clang.cindex as ci

from ..ir.span import Span
from .build import _bare, explicit_template_args, template_args_of

K = ci.CursorKind
_DEPTH = 3  # host templates calling host templates: this many levels


@dataclass(frozen=True)
class DependentLaunch:
    """A launch in a host function template whose template arguments clang left dependent."""

    kernel: str
    caller: str  # the host template's name
    written: tuple[str, ...]  # the arguments written at the launch (``fill<W, T>``), or ()
    arg_types: tuple[str, ...]  # the launch arguments' type spellings (for deduction)
    span: Span


def template_params(cursor: ci.Cursor) -> list[tuple[str, str]]:
    """(name, "type" or "value") of a function template's parameters, in order."""
    out = []
    for child in cursor.get_children():
        if child.kind == K.TEMPLATE_TYPE_PARAMETER:
            out.append((child.spelling, "type"))
        elif child.kind == K.TEMPLATE_NON_TYPE_PARAMETER:
            out.append((child.spelling, "value"))
    return out


def _unqualified(spelling: str) -> str:
    """A type spelling without its qualifiers, the pointer's own too (``const T *const`` and
    ``T *__restrict__`` are ``T *`` to deduction, as C++ drops a parameter's top-level const)."""
    return " ".join(re.sub(r"\b(?:const|volatile|__restrict__|__restrict|restrict)\b", " ", spelling).split())


def _deduced(kernel: ci.Cursor, arg_types: tuple[str, ...], written: tuple[str, ...] = ()
             ) -> tuple[str, ...] | None:
    """The kernel's template arguments: those ``written`` at the launch first
    (``k<NUM_THREADS><<<...>>>(payoff)``), the rest deduced from its launch's argument types, as
    C++ deduces a parameter spelled ``T*``, ``const T*`` or ``T``; None where one is not deduced."""
    params = template_params(kernel)
    if not params or len(written) > len(params) or any(kind != "type" for _n, kind in params[len(written):]):
        return None
    found: dict[str, str] = {name: a for (name, _kind), a in zip(params, written)}
    parm_types = [c.type.spelling for c in kernel.get_children() if c.kind == K.PARM_DECL]
    for spelled, arg in zip(parm_types, arg_types):
        bare = _unqualified(_bare(spelled)).replace(" ", "")
        for name, _kind in params:
            if bare in (name, f"{name}*") and name not in found:
                value = _unqualified(_bare(arg))
                if bare.endswith("*"):
                    if not value.endswith("*"):
                        break
                    value = value[:-1].strip()
                found[name] = value
    if len(found) != len(params):
        return None
    return tuple(found[name] for name, _kind in params)


def _called(call: ci.Cursor) -> str:
    """The name a call names: clang's spelling, or in a template (where clang leaves it empty)
    its first token."""
    if call.spelling:
        return call.spelling
    tokens = call.get_tokens()
    first = next(tokens, None)
    return first.spelling if first is not None else ""


def _substituted(text: str, values: dict[str, str]) -> str | None:
    """``text`` with each host template parameter replaced by its value; an integer expression is
    computed; None where a value is missing."""
    out = re.sub(r"\b[A-Za-z_]\w*\b", lambda m: values.get(m.group(0), m.group(0)), text)
    if re.fullmatch(r"[\d\s()+\-*/%<>&|^]+", out) and re.search(r"\d", out):
        try:
            return str(int(eval(out.replace("/", "//"), {"__builtins__": {}})))  # digits and operators only
        except Exception:
            return None
    if out in ("true", "false"):
        return "1" if out == "true" else "0"
    return _bare(out)


class HostInstances:
    """The instances of the host function templates of one unit, found on demand."""

    def __init__(self, functions: dict[str, ci.Cursor], text_of) -> None:
        self.functions = functions
        self.text_of = text_of
        self.memo: dict[str, list[tuple[str, ...]]] = {}

    def of(self, host: str, depth: int = 0) -> list[tuple[str, ...]]:
        """The template arguments ``host`` (a host function template) is called with."""
        if host in self.memo:
            return self.memo[host]
        self.memo[host] = []  # (a host template that reaches itself)
        found: list[tuple[str, ...]] = []
        for name, cursor in self.functions.items():
            if name == host or host not in self.text_of(cursor):
                continue
            own = template_params(cursor) if cursor.kind == K.FUNCTION_TEMPLATE else []
            outer = self.of(name, depth + 1) if own and depth < _DEPTH else []
            for node in cursor.walk_preorder():
                if node.kind != K.CALL_EXPR or _called(node) != host:
                    continue
                ref = node.referenced
                args = template_args_of(ref) if ref is not None else ()
                if args and "?" not in args and not own:
                    found.append(args)
                    continue
                kids = list(node.get_children())
                written = (explicit_template_args(kids[0]) if kids else ()) or \
                    _deduced(self.functions[host], tuple(k.type.spelling for k in kids[1:])) or ()
                for values in outer:  # a call in another host template: its arguments in its terms
                    names = dict(zip((n for n, _k in own), values))
                    done = tuple(_substituted(a, names) for a in written)
                    if done and None not in done:
                        found.append(done)
        self.memo[host] = list(dict.fromkeys(found))
        return self.memo[host]

    def launches(self, pending: list[DependentLaunch]) -> list[tuple[str, tuple[str, ...], Span]]:
        """(kernel, its template arguments, the launch's span) for each instance of each pending
        launch's host template."""
        out = []
        for launch in pending:
            host = self.functions.get(launch.caller)
            kernel = self.functions.get(launch.kernel)
            if host is None or kernel is None or host.kind != K.FUNCTION_TEMPLATE:
                continue
            written = launch.written
            if len(written) < len(template_params(kernel)):  # the rest deduced, as C++ does
                written = _deduced(kernel, launch.arg_types, written) or written
            if not written:
                continue
            names = [n for n, _k in template_params(host)]
            for values in self.of(launch.caller):
                args = tuple(_substituted(a, dict(zip(names, values))) for a in written)
                if None not in args and not any(n in re.findall(r"\w+", a) for a in args for n in names):
                    out.append((launch.kernel, args, launch.span))
        return out
