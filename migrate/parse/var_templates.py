"""Variable templates read in function templates, valued per instance by clang.

A hash table's device functions compare with ``HASHTABLE_EMPTY_KEY<KeyT, ValueT>``, a constant
variable template whose value a constexpr function of the types computes (``if constexpr`` on
``std::is_same``, a class template's static method). In the template clang leaves the reference
dependent, so the model holds it as a call of kind ``var_template`` with its written arguments
(``ModelBuilder.expr_DECL_REF_EXPR``). Here the instances of the function templates are found
from the calls that write their arguments (``retrieve_single<uint64, uint32>(...)`` in a kernel,
and through template calls inside templates, three levels down), and the file is parsed again
with one declaration per instance after its last line:

    static const auto __c2t_vt_0 = HASHTABLE_EMPTY_KEY<uint64, uint32>;
    typedef uint64 __c2t_vt_0_a0;  typedef uint32 __c2t_vt_0_a1;

Clang evaluates each value and spells each argument's type; every such call then carries the
table ``((dtypes, literal), ...)`` (its ``dispatch``), which :func:`~migrate.analysis.prepare.
instances.instantiate` reads when an instance binds the arguments. A value clang cannot evaluate
(not a constant, not a number) is not in the table; a call left unresolved is refused by name
when the kernel is printed.
"""
from __future__ import annotations

import dataclasses
import re

import clang.cindex as ci

from ..ir import model as m
from ..ir.span import Span
from ..ir.visit import Transformer

K = ci.CursorKind
#: the names of the probe declarations
PREFIX = "__c2t_vt_"
_NAME = re.compile(r"[A-Za-z_]\w*")


def var_template_calls(fn: m.Function) -> list[m.Call]:
    return [n for n in m.walk(fn.body) if isinstance(n, m.Call) and n.kind == "var_template"] \
        if fn.body is not None else []


def probes(functions: dict[str, m.Function]) -> list[tuple[str, tuple[str, ...]]]:
    """(variable template, argument texts) to evaluate: each variable-template call of a function
    template under each instance its callers write (templates' own arguments substituted)."""
    instances: dict[str, set[tuple[str, ...]]] = {
        f.name: {tuple(i.args) for i in f.instantiations} for f in functions.values() if f.instantiations}
    # each function's calls of function templates that write template arguments
    template_calls = {fn.name: [n for n in m.walk(fn.body) if isinstance(n, m.Call) and n.template_args
                                and functions.get(n.callee) is not None and functions[n.callee].template_params]
                      for fn in functions.values() if fn.body is not None}
    for _round in range(3):
        for fn in functions.values():
            own = {p.name for p in fn.template_params}
            # (a call that writes its arguments in full counts in a template with no known instance)
            mine = instances.get(fn.name, set()) | {()}
            for call in template_calls.get(fn.name, ()):
                callee = functions[call.callee]
                for inst in mine:
                    binding = dict(zip((p.name for p in fn.template_params), inst))
                    args = tuple(_substituted(a, binding) for a in call.template_args)
                    if not any(_mentions(a, own) for a in args):
                        instances.setdefault(callee.name, set()).add(args)
    out: list[tuple[str, tuple[str, ...]]] = []
    for fn in functions.values():
        own = {p.name for p in fn.template_params}
        for call in var_template_calls(fn):
            for inst in sorted(instances.get(fn.name, set())) if own else [()]:
                binding = dict(zip((p.name for p in fn.template_params), inst))
                args = tuple(_substituted(a, binding) for a in call.template_args)
                if not any(_mentions(a, own) for a in args) and (call.callee, args) not in out:
                    out.append((call.callee, args))
    return out


def _substituted(text: str, binding: dict) -> str:
    return _NAME.sub(lambda w: binding.get(w.group(0), w.group(0)), text)


def _mentions(text: str, names: set) -> bool:
    return any(w in names for w in _NAME.findall(text))


def probe_text(found: list[tuple[str, tuple[str, ...]]]) -> str:
    """The declarations that make clang evaluate each probe and spell its argument types."""
    lines = []
    for i, (name, args) in enumerate(found):
        lines.append(f"static const auto {PREFIX}{i} = {name}<{', '.join(args)}>;")
        lines += [f"typedef {a} {PREFIX}{i}_a{j};" for j, a in enumerate(args)]
    return "\n".join(lines) + "\n"


def evaluated(tu: ci.TranslationUnit, found, main: str, evaluate, convert_type) -> dict:
    """(variable template, dtypes) -> literal, from the probes clang parsed without error."""
    bad = {d.location.line for d in tu.diagnostics if d.severity >= ci.Diagnostic.Error
           and d.location.file is not None and d.location.file.name == main}
    values, types = {}, {}
    for c in tu.cursor.get_children():
        if not c.spelling.startswith(PREFIX) or c.location.file is None or c.location.file.name != main \
                or c.location.line in bad:
            continue
        head, _, arg = c.spelling[len(PREFIX):].partition("_a")
        if c.kind == K.TYPEDEF_DECL and arg:
            t = convert_type(c.underlying_typedef_type)
            if isinstance(t, m.Scalar):
                types[(int(head), int(arg))] = t.dtype
        elif c.kind == K.VAR_DECL and not arg:
            init = [k for k in c.get_children() if k.kind.is_expression()]
            t = convert_type(c.type)
            value = evaluate(init[-1]) if init else None
            if isinstance(t, m.Scalar) and value is not None:
                values[int(head)] = _literal(value, t)
    out = {}
    for i, (name, args) in enumerate(found):
        dts = tuple(types.get((i, j)) for j in range(len(args)))
        if i in values and all(dts):
            out[(name, dts)] = values[i]
    return out


def _literal(value, t: m.Scalar) -> m.Expr:
    span = Span.point("")
    if t.dtype == "bool":
        return m.BoolLit(bool(value), t, span)
    if isinstance(value, int) and t.dtype not in ("float16", "bfloat16", "float32", "float64"):
        bits = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
                "uint64": 64}.get(t.dtype)
        if bits and t.dtype.startswith("uint"):
            value &= (1 << bits) - 1
        return m.IntLit(int(value), str(value), t, span)
    return m.FloatLit(float(value), repr(float(value)), t, span)


class _Tables(Transformer):
    """Each variable-template call with the values of its instances."""

    def __init__(self, values: dict) -> None:
        self.values = values

    def leave_Call(self, node: m.Call):
        if node.kind != "var_template":
            return node
        table = tuple((dts, lit) for (name, dts), lit in self.values.items()
                      if name == node.callee and len(dts) == len(node.template_args))
        return dataclasses.replace(node, dispatch=((), table)) if table else node


def with_values(unit: m.TranslationUnit, values: dict) -> m.TranslationUnit:
    t = _Tables(values)

    def fn(f: m.Function) -> m.Function:
        return dataclasses.replace(f, body=t.transform(f.body)) if var_template_calls(f) else f

    return dataclasses.replace(unit, kernels=tuple(fn(k) for k in unit.kernels),
                               device_functions=tuple(fn(d) for d in unit.device_functions))


#: the device-memory attributes of a variable template's specialisation (``template <typename T>
#: __constant__ T mask[10];`` read as ``mask<float>[j]`` in an instance's copy of a kernel)
_DEVICE_ATTRS = (K.CUDACONSTANT_ATTR, K.CUDADEVICE_ATTR)


def device_specialisation(ref: ci.Cursor) -> bool:
    """Whether ``ref`` (a reference's declaration) is a specialisation of a namespace-scope
    variable template in device memory (``__constant__``/``__device__``), whose type clang knows
    (an instance copy's ``mask<double>``: clang exposes it as an unexposed declaration)."""
    if ref.kind != K.UNEXPOSED_DECL or ref.type.kind == ci.TypeKind.INVALID:
        return False
    parent = ref.semantic_parent
    if parent is None or parent.kind not in (K.TRANSLATION_UNIT, K.NAMESPACE):
        return False
    return any(c.kind in _DEVICE_ATTRS for c in ref.get_children())


def specialisation_name(spelling: str, written: str) -> str:
    """The model's name of a device variable template's specialisation, one global per
    instance: its name and its written template arguments (``mask<double>`` → ``mask_double``,
    ``lut<unsigned int, 4>`` → ``lut_unsigned_int_4``); the name alone where none are written."""
    args = written[written.find("<") + 1:written.rfind(">")] if "<" in written and ">" in written else ""
    tail = re.sub(r"\W+", "_", args).strip("_")
    return f"{spelling}_{tail}" if tail else spelling
