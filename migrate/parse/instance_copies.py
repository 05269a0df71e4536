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
    template type (``px.x`` of a ``T px`` that the instance makes a ``float3``), a parameter of a
    type only the instance names (``TensorDims<T> dims`` of a struct template: :func:`_dependent`),
    which no generic kernel takes (a local's, as CUB's ``typename BlockLoad<...>::TempStorage``, the
    generic form may model)."""
    if not kernel.template_params or len(kernel.instantiations) != 1 or kernel.body is None:
        return False
    return bool(errors) or _template_typed_members(kernel) or _template_pointer_casts(kernel) \
        or any(_dependent(p.type) for p in kernel.params)


#: the most instances of one template written out (each is parsed and converted)
MAX_INSTANCES = 32
#: the prefix of the declarations that ask clang an instance's template arguments' values
PROBE = "__c2t_instance_arg_"


def wants_instances(kernel: m.Function, errors: list, device: dict[str, m.Function] | None = None) -> bool:
    """Whether ``kernel`` is a template with several known instances (or one, where a type only
    it names may keep the generic form from converting) whose body may mean
    something only per instance: a frontend error in it, a field or method of a template-typed
    object, a call of an overloaded device function that each instance resolves, a variable
    template read (``mask<T>[j]``), a type that only an instance names (a type trait's member,
    ``typename std::make_unsigned<T>::type``: :func:`_dependent_types`), a pointer cast between a
    template type's elements and another type's (:func:`_template_pointer_casts`). Each instance
    is then written out and parsed as its own kernel (:func:`instance_names`); the pipeline takes
    them where the generic form fails. A device function it calls (``device``: by name) whose call
    of an overloaded function falls to its primary template for some types does too
    (:func:`_reaches_primary_template`): the generic form cannot trace that choice."""
    if not kernel.template_params or not 1 <= len(kernel.instantiations) <= MAX_INSTANCES \
            or kernel.body is None:
        return False
    if len(kernel.instantiations) == 1:
        # (one instance: :func:`needs_copy` replaces a kernel the generic form cannot take; a type
        # only the instance names, of a local, the generic form may model: the copy stands by)
        return _dependent_types(kernel) or _reaches_dependent_types(kernel, device or {})
    if errors or _template_typed_members(kernel) or _dependent_types(kernel) or _template_pointer_casts(kernel):
        return True
    if _reaches_dependent_types(kernel, device or {}):
        return True
    if any(isinstance(n, m.Call) and (n.dispatch or n.kind == "var_template") for n in m.walk(kernel.body)):
        return True
    return _reaches_primary_template(kernel, device or {})


def _reaches_primary_template(kernel: m.Function, device: dict[str, m.Function]) -> bool:
    """Whether ``kernel`` calls, directly or through device functions, an overloaded function
    whose dispatch falls to its primary template beside overloads on structs (the key
    ``PRIMARY_FOR_NUMBERS``: a traced dtype does not tell a ``float2`` overload from the template),
    which only an instance's types resolve."""
    seen, stack = set(), [kernel]
    while stack:
        fn = stack.pop()
        if fn.body is not None and any(isinstance(n, m.Call) and n.dispatch and any(tuple(k) == m.PRIMARY_FOR_NUMBERS for k, _ in n.dispatch[1])
                                       for n in m.walk(fn.body)):
            return True
        for name in fn.calls:
            if name not in seen and name in device:
                seen.add(name)
                stack.append(device[name])
    return False


def _reaches_dependent_types(kernel: m.Function, device: dict[str, m.Function]) -> bool:
    """Whether ``kernel`` calls, directly or through device functions, a device function template
    with a type only an instance names (channelSum's ``BlockReduce<T, kBlockDimX, kBlockDimY>``
    helper, whose ``typename cub::BlockReduce<T, kBlockDimX, ...>::TempStorage`` needs the
    kernel's values: the generic kernel passes its own parameters, which no constant block size
    reads)."""
    seen, stack = set(), [kernel]
    while stack:
        fn = stack.pop()
        for name in fn.calls:
            callee = device.get(name)
            if callee is None or name in seen:
                continue
            seen.add(name)
            if callee.template_params and callee.body is not None and _dependent_types(callee):
                return True
            stack.append(callee)
    return False


def _dependent(t) -> bool:
    """A type of the template that is neither a template parameter nor built of one: a member
    type of a template instance, which clang leaves unresolved (``typename make_unsigned<T>::type``
    spelled ``typename make_unsigned<type-parameter-0-0>::type``), or a struct template's instance
    on the template's parameters (``block_record<T>``, whose fields only an instance lays out)."""
    while isinstance(t, (m.Pointer, m.Reference, m.Array)):
        t = t.pointee if isinstance(t, m.Pointer) else t.target if isinstance(t, m.Reference) else t.element
    if isinstance(t, m.Record):  # a struct template on the template's parameters (block_record<T>)
        return "type-parameter-" in t.name
    return isinstance(t, m.Opaque) and ("type-parameter-" in t.spelling or t.spelling.startswith("typename "))


def _dependent_types(kernel: m.Function) -> bool:
    """Whether a local, a parameter or a cast of ``kernel`` has a dependent type (:func:`_dependent`):
    each instance resolves it to a type of its own (a type trait's result), the generic form cannot."""
    return any(_dependent(p.type) for p in kernel.params) or \
        any(_dependent(getattr(n, "type", None)) for n in m.walk(kernel.body))


def _template_typed_members(kernel: m.Function) -> bool:
    for n in m.walk(kernel.body):
        if isinstance(n, (m.MethodCall, m.Member)):  # p.compute(...), px.x on a T px: the instance's type's
            t = getattr(n.obj if isinstance(n, m.MethodCall) else n.base, "type", None)
            if isinstance(t, m.Reference):
                t = t.target
            if isinstance(t, m.TemplateType):
                return True
    return False


def _template_pointer_casts(kernel: m.Function) -> bool:
    """Whether ``kernel`` casts a pointer between a template type's elements and another type's
    (``(float*)out`` of a ``T* out``, ``(T*)&s_mem[32]`` of an ``int`` array): the identity in one
    instance, a view of other elements in another, which only the instance's types tell apart."""
    for n in m.walk(kernel.body):
        if isinstance(n, m.Cast) and isinstance(n.type, m.Pointer):
            held = _pointed(n.operand)
            if held is not None and held != n.type.pointee \
                    and isinstance(held, m.TemplateType) != isinstance(n.type.pointee, m.TemplateType):
                return True
    return False


def _pointed(e) -> m.CType | None:
    """The element type pointer expression ``e`` points to, read through what a template leaves
    dependent (``&buffer[i]`` of a ``T buffer[N]``, ``in + i`` of a ``const T* in``); None when
    unknown."""
    if isinstance(e, m.Unary) and e.op == "&":
        return getattr(e.operand, "type", None)
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        return _pointed(e.lhs) if isinstance(getattr(e.lhs, "type", None), (m.Pointer, m.Array)) else _pointed(e.rhs)
    t = getattr(e, "type", None)
    return t.pointee if isinstance(t, m.Pointer) else t.element if isinstance(t, m.Array) else None


def instance_names(text: str, kernel: m.Function) -> list[str]:
    """The name of each instance's kernel: ``<kernel>__<its arguments>`` (``hmax__half2``, a
    host function's constant by its value: ``k__float_128``), or ``<kernel>__i<n>`` where the
    arguments make a long or repeated name."""
    out = []
    for n, inst in enumerate(kernel.instantiations):
        tail = "_".join(re.sub(r"\W+", "_", a).strip("_") for a in arguments(text, kernel, inst) or inst.args)
        name = f"{kernel.name}__{tail}"
        if not tail or len(tail) > 32 or name in out:
            name = f"{kernel.name}__i{n}"
        out.append(name)
    return out


def probe_text(copy: str, kernel: m.Function, args: tuple[str, ...]) -> str:
    """Declarations after the copy ``copy`` (an instance's kernel name) that clang evaluates to
    the instance's factory values (:func:`probed_values`): a typedef of each type argument, a
    ``long long`` constant of each value argument."""
    out = []
    for j, (p, a) in enumerate(zip(kernel.template_params, args)):
        if p.kind == "type":
            out.append(f"typedef {a} {PROBE}{copy}_{j};")
        else:
            out.append(f"constexpr long long {PROBE}{copy}_{j} = (long long)({a});")
    return " ".join(out)


def probed_values(tu, main: str, evaluate, file_of=None) -> dict[str, dict[int, object]]:
    """copy name -> {parameter index -> its factory value}, from the probes of a parse: a type's
    dtype (its canonical C++ spelling where it has none), a value's integer. ``file_of(cursor)``:
    the name of the file a cursor lies in, or None (default: cindex's ``location.file``)."""
    from ..runtime.tilelang_support import template_type_value

    out: dict[str, dict[int, object]] = {}
    if file_of is None:
        def file_of(c):
            return c.location.file.name if c.location.file is not None else None

    def visit(cursor):
        for c in cursor.get_children():
            if file_of(c) != main:
                continue
            if c.kind.name == "NAMESPACE":
                visit(c)
            elif c.spelling.startswith(PROBE):
                copy, _, j = c.spelling[len(PROBE):].rpartition("_")
                if c.kind.name == "TYPEDEF_DECL":
                    value = template_type_value(c.underlying_typedef_type.get_canonical().spelling)
                else:
                    init = [k for k in c.get_children() if k.kind.is_expression()]
                    value = evaluate(init[-1]) if init else None
                if value is not None:
                    out.setdefault(copy, {})[int(j)] = value
    visit(tu.cursor)
    return out


def instance_text(text: str, kernel: m.Function, instance: m.Instantiation | None = None,
                  name: str | None = None) -> str | None:
    """The kernel's text for its instance (``instance``, else its one), as many lines as the
    template's: the header blanked, each template parameter replaced by its argument (a host
    function's local constant by its value, :func:`local_constant`), the name ``name`` (default
    ``<kernel>__c2t_instance``); None where that cannot be written (a parameter with no argument,
    a qualified definition)."""
    args = list(arguments(text, kernel, instance or kernel.instantiations[0]) or ())
    params = kernel.template_params
    if len(args) != len(params):
        return None
    chunk = _span_text(text, kernel.span)
    header = re.match(r"\s*template\s*<", chunk) if chunk is not None else None
    if header is None:
        return None
    close = _closing(chunk, header.end())
    if close is None:
        return None
    chunk = re.sub(r"[^\n]", " ", chunk[:close + 1]) + chunk[close + 1:]
    called = re.compile(r"(::\s*)?\b" + re.escape(kernel.name) + r"\s*\(")
    first = called.search(chunk, close + 1)
    if first is None or first.group(1):
        return None  # ns::kernel(...) defined out of its namespace: the copy would not be one
    at = first.start() + len(first.group(0)) - len(first.group(0).lstrip())
    chunk = chunk[:at] + (name or kernel.name + SUFFIX) + chunk[at + len(kernel.name):]
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


def _span_text(text: str, span: Span) -> str | None:
    """The text of ``span`` in ``text`` on as many lines as it spans, its first line's columns
    before it blank (so that offsets into it are columns of the file); None past the text."""
    lines = text.split("\n")
    if span.end_line > len(lines) or span.line < 1:
        return None
    chunk = "\n".join(lines[span.line - 1:span.end_line])
    start = span.col - 1
    end = len(chunk) - (len(lines[span.end_line - 1]) - (span.end_col - 1))
    return " " * start + chunk[start:end]


def specialisation_text(text: str, kernel: m.Function, span: Span, name: str) -> str | None:
    """An explicit specialisation's text (``template <> __global__ void k<float>(...) {...}`` at
    ``span``) as a kernel of its own named ``name``, as many lines as the specialisation's: the
    ``template <>`` blanked, ``k<float>`` renamed; None where that cannot be written (a qualified
    definition, no ``template <>`` in front)."""
    chunk = _span_text(text, span)
    header = re.match(r"\s*template\s*<\s*>", chunk) if chunk is not None else None
    if header is None:
        return None
    chunk = re.sub(r"[^\n]", " ", chunk[:header.end()]) + chunk[header.end():]
    masked = _masked(chunk)
    called = re.compile(r"(::\s*)?\b" + re.escape(kernel.name) + r"\s*<")
    first = called.search(masked, header.end())
    if first is None or first.group(1):
        return None  # ns::k<float>(...) defined out of its namespace: the copy would not be one
    close = _closing(masked, first.end())
    if close is None or not re.match(r"\s*\(", masked[close + 1:]):
        return None
    at = first.start()
    kept = "\n" * chunk.count("\n", at, close + 1)  # the lines the name's arguments spanned
    return chunk[:at] + name + kept + chunk[close + 1:]


def specialisation_of(args: tuple[str, ...], specialisations) -> object | None:
    """The explicit specialisation (an entry of ``specialisations``, each with its ``written``
    arguments) whose arguments are ``args`` as written, spaces aside; None where none is."""
    def norm(a: str) -> str:
        return "".join(a.split())
    for spec in specialisations:
        if len(spec.written) == len(args) and all(norm(a) == norm(b) for a, b in zip(args, spec.written)):
            return spec
    return None


def arguments(text: str, kernel: m.Function, instance: m.Instantiation) -> tuple[str, ...] | None:
    """``instance``'s arguments as the copy writes them: a value written as the name of a constant
    that a host function declares (``constexpr uint32_t NUM_THREADS = 128;`` in the launching
    function, which the copy, outside that function, cannot name) is that constant's value; None
    where a parameter without a default has no argument. An enum's value is written as its
    constant (:func:`enumerator`)."""
    out = []
    for i, p in enumerate(kernel.template_params):
        a = instance.args[i] if i < len(instance.args) else p.default
        if a is None:
            return None
        if p.kind == "value" and re.fullmatch(r"[A-Za-z_]\w*", a):
            a = local_constant(text, a) or a
        if p.kind == "value" and p.enumerators:
            a = enumerator(p, a)
        out.append(a)
    return tuple(out)


def enumerator(param: m.TemplateParam, arg: str) -> str:
    """An enum-typed value parameter's argument as the copy writes it: the enum's constant of that
    value (``ReductionType::MUL``) where clang spelled the argument as its integer (``1``), which
    C++ does not convert to the enum; the argument as it is otherwise."""
    digits = re.fullmatch(r"\(?\s*(-?\d+)\s*\)?", arg)
    if digits is None:
        return arg
    named = [n for n, v in param.enumerators if v == int(digits.group(1)) and "::" in n]
    return named[0] if named else arg


def local_constant(text: str, name: str) -> str | None:
    """The value (``(128)``) of the one ``const``/``constexpr`` declaration of ``name`` with an
    initialiser in ``text``; None where there is none or several that differ."""
    masked = _masked(text)
    pattern = re.compile(r"\b(?:constexpr|const)\s+(?:[\w:]+\s+)*?" + re.escape(name)
                         + r"\s*=\s*([^;{}]+);")
    found = {" ".join(text[m_.start(1):m_.end(1)].split()) for m_ in pattern.finditer(masked)}
    return f"({found.pop()})" if len(found) == 1 else None


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


def with_copies(text: str, copies: dict[str, tuple[str, str]], namespaces: dict[str, tuple[str, ...]]
                ) -> tuple[str, dict, int]:
    """``text`` with the copies (copy name -> (its kernel, its text)) after its last line, each in
    the namespaces its kernel is declared in; per copy, the line it starts on; and the first line
    after ``text``."""
    out = text if text.endswith("\n") else text + "\n"
    after = out.count("\n") + 1
    starts = {}
    for name, (kernel, copy) in copies.items():
        spaces = namespaces.get(kernel, ())
        out += "".join(f"namespace {ns} {{ " for ns in spaces) + "\n"
        starts[name] = out.count("\n") + 1
        out += copy + "\n" + "}" * len(spaces) + "\n"
    return out, starts, after


class NamedOtherwise(Exception):
    """The copies' model gives a name the file's first model gave one function to another
    (:func:`adopt`): two methods of one name met in another order."""


def adopt(original, again, starts: dict[str, int], kernels: dict[str, m.Function], appended_from: int,
          groups: dict[str, list[tuple[str, m.Instantiation]]] | None = None,
          values: dict[str, dict[int, object]] | None = None, origins: dict[str, int] | None = None):
    """``original`` (the file's first parse) with each copy of ``again`` (the file parsed with the
    copies, its model holding the copies and what they call, or the whole file) that parsed
    cleanly standing for its kernel, lines mapped back: a one-instance template's copy
    (``<kernel>__c2t_instance``) replaces it; the copies of a template of several instances
    (``groups``: kernel -> (copy name, instance) each) become its
    :attr:`~migrate.ir.model.Function.instances`, with the instance's factory values (``values``,
    :func:`probed_values`), where every one of them compiles (an instance may hold a construct the
    model refuses: it is reported so). The device functions and globals the copies reach are
    added to the original's, and so are the diagnostics of ``again`` outside the appended text
    that the original lacks, while those of a replaced template's own lines are dropped (its
    copy's stand for them); copies with errors are dropped; a copy's own diagnostics are kept
    under its name (a one-instance template's: under the kernel's), at the template's lines (a
    copy of an explicit specialisation's text, ``origins``: copy name -> the line it was copied
    from, at that line). Returns the ParsedFile and the kernels replaced; raises
    :class:`NamedOtherwise` where ``again`` names a function of the original's other than it does."""
    path = _resolved(original.path)
    groups, values, origins = groups or {}, values or {}, origins or {}
    replaced = {}
    by_name = {k.name: k for k in again.unit.kernels}
    copy_of = {}  # copy name -> the kernel name its diagnostics go under

    def moved(copy_name: str, kernel: str):
        origin = origins.get(copy_name, kernels[kernel].span.line)
        return _shifted(by_name[copy_name], path, appended_from, starts[copy_name] - origin)

    for name, template in kernels.items():
        if name in groups:
            copies = groups[name]
            # a copy that does not compile drops the template's; one with a construct the model
            # refuses (asm) stands, its instance reported with that error
            if not all(c in by_name and not any(d.code == "M1001" for d in again.kernel_errors(c))
                       for c, _i in copies):
                continue
            params = template.template_params
            own = []
            for c, inst in copies:
                got = values.get(c, {})
                if len(got) != len(params):
                    break
                own.append(dataclasses.replace(
                    moved(c, name), name=c, span=template.span,
                    instantiations=(dataclasses.replace(inst, values=tuple(got[j] for j in range(len(params)))),)))
                copy_of[c] = c
            else:
                replaced[name] = dataclasses.replace(template, instances=tuple(own))
            continue
        copy = name + SUFFIX
        if copy not in by_name or again.kernel_errors(copy):
            continue
        replaced[name] = dataclasses.replace(moved(copy, name), name=name, instantiations=template.instantiations,
                                             span=template.span)
        copy_of[copy] = name
    unit = original.unit
    held = {f.name: f for f in unit.device_functions}
    for f in again.unit.device_functions:
        if f.name in held and held[f.name].span != f.span:
            raise NamedOtherwise(f.name)
    device = unit.device_functions + tuple(f for f in again.unit.device_functions if f.name not in held)
    known = {g.name for g in unit.globals}
    unit = dataclasses.replace(
        unit, kernels=tuple(replaced.get(k.name, k) for k in unit.kernels),
        device_functions=tuple(sorted(device, key=lambda f: (f.span.file, f.span.line))),
        globals=unit.globals + tuple(g for g in again.unit.globals if g.name not in known))

    def ours(d):  # not in the appended copies
        return not (d.span.file and _resolved(d.span.file) == path and d.span.line >= appended_from)

    had = set(original.diagnostics)
    # a one-instance template's copy stands for it: what the template's own lines gave is gone
    stale = {d for name in replaced if name not in groups for d in original.by_kernel.get(name, ())
             if kernels[name].span.contains(d.span.file, d.span.line, d.span.col)}
    diagnostics = [d for d in original.diagnostics if d not in stale] \
        + [d for d in again.diagnostics if ours(d) and d not in had]
    by_kernel = dict(original.by_kernel)
    kernel_of = {c: k for k, cs in groups.items() for c, _i in cs}
    for copy, name in copy_of.items():  # a copy's own diagnostics (its warnings), at the template's lines
        template = kernels[kernel_of.get(copy, name)]
        by_kernel[name] = [_shifted(d, path, appended_from, starts[copy] - origins.get(copy, template.span.line))
                           for d in again.by_kernel.get(copy, [])]
        if copy not in kernel_of:  # an instance's are reported with its template's (migrate.pipeline)
            diagnostics += by_kernel[name]
    namespaces = {**original.kernel_namespaces,
                  **{c: ns for c, ns in again.kernel_namespaces.items() if c not in original.kernel_namespaces}}
    parsed = dataclasses.replace(original, unit=unit, diagnostics=diagnostics, by_kernel=by_kernel,
                                 kernel_namespaces=namespaces)
    return parsed, replaced


def _shifted(obj, path: str, first: int, delta: int):
    """``obj`` (a model node, type, diagnostic, tuple) with every span in ``path`` at or after
    line ``first`` moved ``delta`` lines up."""
    cls = type(obj)
    if cls in _NO_SPANS:  # (names, numbers, flags: most of what a copy's model holds)
        return obj
    if isinstance(obj, Span):
        if obj.line >= first and obj.file and _resolved(obj.file) == path:
            return dataclasses.replace(obj, line=obj.line - delta, end_line=obj.end_line - delta)
        return obj
    if cls in _TYPES:  # a type holds no span
        return obj
    if isinstance(obj, tuple):
        items = tuple([_shifted(x, path, first, delta) for x in obj])
        return obj if all(a is b for a, b in zip(items, obj)) else items  # (a parent with nothing moved stays)
    if isinstance(obj, list):
        return [_shifted(x, path, first, delta) for x in obj]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        names = _FIELDS.get(cls)
        if names is None:
            names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(obj))
        changes = {}
        for name in names:
            value = getattr(obj, name)
            new = _shifted(value, path, first, delta)
            if new is not value:
                changes[name] = new
        return dataclasses.replace(obj, **changes) if changes else obj
    return obj


_NO_SPANS = frozenset({str, int, float, bool, type(None)})  # values that hold no span (exact types)
_TYPES = frozenset(m._TYPES)  # the model's types (scalars, pointers, records...): none holds a span
_FIELDS: dict[type, tuple[str, ...]] = {}  # dataclass -> its fields' names (dataclasses.fields is slow)


@functools.lru_cache(maxsize=64)
def _resolved(file: str) -> str:
    """``file``'s absolute path (asked for every span of a copy: once per file name)."""
    return str(Path(file).resolve())
