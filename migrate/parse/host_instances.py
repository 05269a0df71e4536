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

import itertools
import re
from dataclasses import dataclass

import clang.cindex as ci

from ..ir.span import Span
from .build import _bare, explicit_template_args, template_args_of
from .clang import specialized_template as cl_specialized_template

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


def host_methods(declarations, cuda_kind) -> dict[str, ci.Cursor]:
    """``Class::method`` -> its definition, for each host method of a class (or class template)
    of the unit's own ``declarations``: defined in its class, or out of it
    (``template <class K, class V> void Table<K, V>::fill() {...}``)."""
    out: dict[str, ci.Cursor] = {}

    def take(cursor: ci.Cursor) -> None:
        if cursor.kind == K.CXX_METHOD and cursor.is_definition() and cuda_kind(cursor) is None:
            owner = cursor.semantic_parent
            if owner is not None and owner.kind in _CLASSES:
                out.setdefault(f"{owner.spelling}::{cursor.spelling}", cursor)

    for decl in declarations:
        if decl.kind in _CLASSES:
            for child in decl.get_children():
                take(child)
        else:
            take(decl)
    return out


_CLASSES = (K.CLASS_TEMPLATE, K.CLASS_DECL, K.STRUCT_DECL)


def _specialises(record: ci.Cursor | None, template: ci.Cursor) -> bool:
    """Whether ``record`` (a class) is a specialisation of the class template ``template``."""
    if record is None or record.kind not in (K.CLASS_DECL, K.STRUCT_DECL):
        return False
    origin = cl_specialized_template(record)
    return origin is not None and origin.get_usr() == template.get_usr()


class HostInstances:
    """The instances of the host function templates of one unit, found on demand."""

    def __init__(self, functions: dict[str, ci.Cursor], text_of,
                 methods: dict[str, ci.Cursor] | None = None) -> None:
        self.functions = functions
        self.text_of = text_of
        self.methods = methods or {}
        self.memo: dict[str, list[tuple[str, ...]]] = {}

    def of_method(self, key: str) -> list[tuple[str, ...]]:
        """The template arguments of the class template whose method ``key`` (``Class::method``)
        is called: a call on an instance (``Table<uint64, uint32> t; t.fill()``) in a host
        function or a method of another class gives its class's arguments; a call in another
        method of the same class template (``this->fill()``), that method's."""
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = []  # (methods that call each other)
        method = self.methods[key]
        template = method.semantic_parent
        name = method.spelling
        found: list[tuple[str, ...]] = []
        callers = [(n, c) for n, c in self.functions.items() if c.kind == K.FUNCTION_DECL]
        callers += [(n, c) for n, c in self.methods.items() if n != key]
        for caller_key, cursor in callers:
            if name not in self.text_of(cursor):
                continue
            same = caller_key in self.methods and self.methods[caller_key].semantic_parent.get_usr() == template.get_usr()
            for node in cursor.walk_preorder():
                if node.kind != K.CALL_EXPR or node.spelling not in (name, ""):
                    continue
                ref = node.referenced
                if ref is None and same and node.spelling == "" \
                        and [t.spelling for t in itertools.islice(node.get_tokens(), 4)] == ["this", "->", name, "("]:
                    found += self.of_method(caller_key)  # this->fill(): clang leaves it dependent
                    continue
                if ref is None or ref.kind != K.CXX_METHOD or ref.spelling != name:
                    continue
                owner = ref.semantic_parent
                if _specialises(owner, template):
                    args = template_args_of(owner)
                    if args and "?" not in args:
                        found.append(args)
                elif same and owner is not None and owner.get_usr() == template.get_usr():
                    found += self.of_method(caller_key)  # fill() in another method of the class
        self.memo[key] = list(dict.fromkeys(found))
        return self.memo[key]

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
            method = self.methods.get(launch.caller) if host is None else None
            if kernel is None or not (host is not None and host.kind == K.FUNCTION_TEMPLATE
                                      or method is not None and method.semantic_parent.kind == K.CLASS_TEMPLATE):
                continue
            written = launch.written
            if len(written) < len(template_params(kernel)):  # the rest deduced, as C++ does
                written = _deduced(kernel, launch.arg_types, written) or written
            if not written:
                continue
            if method is not None:  # a method of a class template: the class's parameters
                # (an out-of-line definition names them in its own template header)
                names = [n for n, _k in template_params(method) or template_params(method.semantic_parent)]
                instances = self.of_method(launch.caller)
            else:
                names = [n for n, _k in template_params(host)]
                instances = self.of(launch.caller)
            for values in instances:
                args = tuple(_substituted(a, dict(zip(names, values))) for a in written)
                if None not in args and not any(n in re.findall(r"\w+", a) for a in args for n in names):
                    out.append((launch.kernel, args, launch.span))
        return out
