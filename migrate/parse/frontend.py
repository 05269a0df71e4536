"""Read one CUDA file into the kernel model: :func:`parse_file`.

The frontend never raises on user input: unreadable, binary, empty, huge or broken files come back
as a :class:`ParsedFile` with coded diagnostics, and the kernels it could model.
"""
from __future__ import annotations

import dataclasses
import os
import re
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import clang.cindex as ci

from ..codes import Severity
from ..diagnostics import Diagnostic, DiagnosticBag
from ..ir.span import Span
from . import clang as cl
from . import lambdas
from . import header_search
from . import host_only
from ..runtime.source import split_top_level
from ..ir import model as m
from ..ir.names import fresh
from .build import ModelBuilder, SourceText, cursor_file, explicit_template_args, convert_type, function_model_name, \
    is_constant, is_push_config, qualified_name, span_of, template_args_of
from .default_args import with_default_arguments
from .host_instances import DependentLaunch, HostInstances, host_methods
from .member_types import TemplateNames, member_type_params
from . import var_templates
from .instance_copies import (MAX_INSTANCES, SUFFIX, NamedOtherwise, adopt, instance_names, instance_text,
                              needs_copy, probe_text, probed_values, specialisation_of, specialisation_text,
                              wants_instances, with_copies, arguments as instance_arguments)
from .other_units import defining_units, missing_functions, with_units

K = ci.CursorKind

DEFAULT_MAX_FILE_SIZE = 4 * 1024 * 1024
_MISSING_HEADER = re.compile(r"'([^']+)' file not found")
_FUNCTION_KINDS = (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE)

#: clang error messages inside device code that have a code of their own (first match wins).
CLANG_MESSAGE_CODES = (
    (re.compile(r"unknown type name|no type named|unknown template name"), "M1101"),
    (re.compile(r"reference to __global__ function .* in __(global|device)__ function"), "M1203"),
    (re.compile(r"calling a __global__ function from a __(global|device)__ function"), "M1203"),
)


@dataclass(frozen=True)
class ParseOptions:
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()
    std: str = "c++17"
    arch: str = "sm_90"
    extra_args: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    #: (the file that includes this one, the line of its ``#include``): this ``.cu`` file is a part
    #: of that translation unit (``#include "kernels.cu"``) and is parsed after the includer's
    #: lines above the ``#include``, with the types and macros they give it (:func:`includers`)
    context: tuple[str, int] | None = None
    #: the includer's own contexts, outermost first, where it is itself included (main.cu includes
    #: work.cu, which includes kernel.cu): their lines above each ``#include`` come first
    outer_contexts: tuple[tuple[str, int], ...] = ()
    #: the folder being converted that holds the file: a header its includes miss is looked for
    #: in the program's folders inside it (:mod:`.header_search`); None: not looked for
    root: str | None = None

    def clang_args(self) -> list[str]:
        return cl.build_args(self.include_dirs, self.defines, self.std, self.arch, self.extra_args)


@dataclass(frozen=True)
class Specialisation:
    """An explicit specialisation of a kernel template (``template <> __global__ void k<float>``)."""

    written: tuple[str, ...]  # its template arguments as written (``float``)
    values: tuple  # each argument as a factory takes it (a type's dtype, a value's integer), None unknown
    span: Span
    own: bool = True  # defined in the file parsed (a header's includer's is not: its text is not copied)


@dataclass(frozen=True)
class BuildContext:
    """What nvcc needs to compile the file as the program's build does (the hybrid form keeps a
    kernel's CUDA and compiles it): the file that includes it where it is no unit of its own, the
    include folders and the macros."""

    #: the file whose translation unit this one is part of (the outermost of a chain of includers)
    includer: str | None = None
    include_dirs: tuple[str, ...] = ()
    defines: tuple[str, ...] = ()


@dataclass
class ParsedFile:
    path: str
    unit: m.TranslationUnit
    diagnostics: list[Diagnostic]
    #: kernel name -> the diagnostics inside it and inside the device functions it calls.
    by_kernel: dict[str, list[Diagnostic]] = field(default_factory=dict)
    #: folders of the program that held headers no -I folder did (M1008): the original's build
    #: needs them too (:mod:`.header_search`)
    found_include_dirs: tuple[str, ...] = ()
    seconds: float = 0.0
    #: kernel name -> the namespaces it is declared in, outermost first
    kernel_namespaces: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: kernel templates refused for their explicit specialisations: their generic model would run
    #: the template's body for the specialised instances (each instance is then written out: the
    #: specialisation's own text where it has one, :func:`_with_instance_copies`)
    specialised_kernels: frozenset = frozenset()
    #: kernel template name -> its explicit specialisations (:class:`Specialisation`)
    specialisations: dict[str, tuple] = field(default_factory=dict)
    build: BuildContext = field(default_factory=BuildContext)

    def file_diagnostics(self) -> list[Diagnostic]:
        """Diagnostics that belong to no kernel (file-level, host code, unused device code)."""
        owned = {id(d) for ds in self.by_kernel.values() for d in ds}
        return [d for d in self.diagnostics if id(d) not in owned]

    def kernel_errors(self, name: str) -> list[Diagnostic]:
        return [d for d in self.by_kernel.get(name, []) if d.severity is Severity.ERROR]


def _empty_unit(path: str) -> m.TranslationUnit:
    return m.TranslationUnit(path, (), (), (), ())


def _looks_binary(data: bytes) -> bool:
    """Binary, not source: not UTF-8 and more than a tenth of its bytes control characters. Other
    bytes that are not UTF-8 (a Latin-1 name in a comment) are clang's to judge: in a comment they
    are accepted, in code they are a compile error (M1001)."""
    try:
        data.decode("utf-8")
        return False
    except UnicodeDecodeError:
        sample = data[:65536]
        controls = sum(1 for b in sample if b < 32 and b not in b"\t\n\r\f\v" or b == 127)
        return controls * 10 > len(sample)


def parse_file(path: str | Path, options: ParseOptions = ParseOptions()) -> ParsedFile:
    """Parse ``path`` and model its kernels; every problem becomes a diagnostic."""
    start = time.perf_counter()
    path = str(path)
    try:
        result = _parse(path, options)
    finally:
        _SCANS.clear()
    result.seconds = time.perf_counter() - start
    # how nvcc would build the file: a kernel kept as CUDA (the hybrid form) is compiled so
    outermost = (options.outer_contexts or ((options.context,) if options.context else ((None, 0),)))[0]
    result.build = BuildContext(outermost[0],
                                tuple(options.include_dirs) + tuple(d for d in result.found_include_dirs
                                                                    if d not in options.include_dirs),
                                tuple(options.defines))
    return result


def _parse(path: str, options: ParseOptions) -> ParsedFile:
    bag = DiagnosticBag()
    here = Span.point(path)
    try:
        size = Path(path).stat().st_size
        if size > options.max_file_size:
            bag.add("M1004", here, f"file is {size / 2**20:.1f} MiB, over the "
                                   f"{options.max_file_size / 2**20:.1f} MiB limit (--max-file-size)")
            return ParsedFile(path, _empty_unit(path), bag.items)
        data = Path(path).read_bytes()
    except OSError as exc:
        bag.add("M1007", here, f"cannot read file: {exc.strerror or exc}")
        return ParsedFile(path, _empty_unit(path), bag.items)
    if b"\0" in data[:65536]:
        bag.add("M1002", here, "file contains NUL bytes: it is binary, not CUDA source")
        return ParsedFile(path, _empty_unit(path), bag.items)
    if _looks_binary(data):
        bag.add("M1002", here, "file is not text: most of its bytes are control characters")
        return ParsedFile(path, _empty_unit(path), bag.items)
    if not data.strip():
        bag.add("M1003", here, "file is empty")
        return ParsedFile(path, _empty_unit(path), bag.items)

    context = _context_source(path, options.context, options.outer_contexts)
    host = _host_only(path, data, options, context, bag)
    if host is not None:
        return host
    found: list[str] = []
    tu = _parse_with_missing_headers(path, options, bag, context, found)
    if tu is None:
        return ParsedFile(path, _empty_unit(path), bag.items)
    parsed = UnitBuilder(path, tu, bag, context[0] if context else None,
                         context_text=context[1] if context else None).build()
    parsed.found_include_dirs = tuple(found)
    if context is not None:
        # a header's kernel templates are written out per instance after the header's last line,
        # inside its includer's lines as the header itself is
        text = data.decode("utf-8", "replace")
        return _with_var_template_values(path, options, text,
                                         _with_instance_copies(path, options, text, parsed, context), context)
    # device functions of the program's other units (nvcc -dc)
    missing = missing_functions(parsed.diagnostics)
    units: list[str] = []
    best, best_units = parsed, []
    for _round in range(4):  # a unit's functions may call a third unit's
        more = [u for u in defining_units(path, missing) if u not in units] if missing else []
        if not more:
            break
        units += more
        again = _parse_with_units(path, options, data, units)
        if again is None:
            break
        missing = missing_functions(again.diagnostics)
        # the units must not break what the file had (two units' static helpers of one name)
        if _errors(again) <= _errors(parsed) and len(missing) < len(missing_functions(best.diagnostics)):
            best, best_units = again, list(units)
    text = with_units(data.decode("utf-8", "replace"), best_units)
    return _with_var_template_values(path, options, text, _with_instance_copies(path, options, text, best))


def _host_only(path: str, data: bytes, options: ParseOptions, context, bag: DiagnosticBag) -> ParsedFile | None:
    """``path`` as a file of host code only, not parsed, where it cannot define a kernel
    (:mod:`.host_only`), with the program's folders its includes reach found as a parse finds
    them (M1008); None where it may define one."""
    if any(a.startswith(("-include", "-imacros")) for a in options.extra_args):
        return None
    _missing, searched, texts = _scan(path, context, options)
    if texts is None or host_only.may_define_kernels(data.decode("utf-8", "replace"), texts,
                                                     tuple(options.defines) + tuple(options.extra_args)):
        return None
    _note_searched(bag, searched, context)
    bag.add("M1003", Span.point(path), "no __global__ kernels in this file")
    parsed = ParsedFile(path, _empty_unit(path), bag.items)
    parsed.found_include_dirs = tuple(dict.fromkeys(str(f) for f, _file, _line in searched.values()))
    return parsed


def _with_var_template_values(path: str, options: ParseOptions, text: str, parsed: ParsedFile,
                              context: tuple[str, str] | None = None) -> ParsedFile:
    """``parsed`` with the variable templates its function templates read valued for each
    instance its calls write (:mod:`.var_templates`), clang evaluating them in one more parse (a
    header's after its own last line, inside its includer's lines: ``context``)."""
    unit = parsed.unit
    functions = {f.name: f for f in unit.kernels + unit.device_functions}
    found = var_templates.probes(functions) if any(var_templates.var_template_calls(f)
                                                   for f in functions.values()) else []
    if not found:
        return parsed
    own = (text if text.endswith("\n") else text + "\n") + var_templates.probe_text(found)
    tu = _parse_with_missing_headers(path, options, DiagnosticBag(), context, [], own=own)
    if tu is None:
        return parsed
    main = str(Path(path).resolve()) if context else path
    values = var_templates.evaluated(tu, found, main, cl.evaluate, convert_type)
    if not values:
        return parsed
    return dataclasses.replace(parsed, unit=var_templates.with_values(unit, values))


def _with_instance_copies(path: str, options: ParseOptions, text: str, parsed: ParsedFile,
                          context: tuple[str, str] | None = None) -> ParsedFile:
    """``parsed`` with its kernel templates that the generic form may not take written out per
    instance (:mod:`.instance_copies`), where clang reads the copies cleanly: a one-instance
    template is replaced by its instance's copy; a template of several instances keeps its model
    and gains one per instance (``Function.instances``). A header (``context``, its includer's
    virtual file: :func:`_context_source`) gets its copies after its own last line, parsed in
    that context."""
    main = str(Path(path).resolve())
    ours = [k for k in parsed.unit.kernels if str(Path(k.span.file).resolve()) == main
            and k.name not in parsed.specialised_kernels]
    kernels = {k.name: k for k in ours if needs_copy(k, parsed.kernel_errors(k.name))}
    copies = {name + SUFFIX: (name, c) for name, k in kernels.items() for c in [instance_text(text, k)]
              if c is not None}
    groups: dict[str, list] = {}
    device = {f.name: f for f in parsed.unit.device_functions}

    def write_instances(k, specs):
        """Each instance of ``k`` written out (copy name -> (kernel, text)), a specialised one from
        its specialisation's text (one of ``specs``), with the specialisations' lines and values;
        None where one cannot be written."""
        written, lines, wanted = {}, {}, {}
        for inst, name in zip(k.instantiations, instance_names(text, k)):
            args = instance_arguments(text, k, inst)
            spec = specialisation_of(args, specs) if args is not None and specs else None
            if spec is not None:
                copy = specialisation_text(text, k, spec.span, name)
                lines[name], wanted[name] = spec.span.line, spec.values
            else:
                copy = instance_text(text, k, inst, name) if args is not None else None
                wanted[name] = None
            if copy is None:
                return None
            written[name] = (k.name, copy + "\n" + probe_text(name, k, args))
        return written, lines, wanted

    for k in ours:
        if k.name in kernels or not wants_instances(k, parsed.kernel_errors(k.name), device):
            continue
        done = write_instances(k, [])
        if done is not None:
            kernels[k.name] = k
            copies.update(done[0])
            groups[k.name] = [(name, inst) for inst, name in zip(k.instantiations, done[0])]
    # a kernel template with explicit specialisations: each instance written out, a specialised
    # one from its specialisation's own text, the others from the template's
    origins: dict[str, int] = {}  # copy -> the line of the specialisation it copies
    expected: dict[str, dict[str, tuple | None]] = {}  # kernel -> copy -> its specialisation's values
    for k in parsed.unit.kernels:
        specs = parsed.specialisations.get(k.name)
        if k.name not in parsed.specialised_kernels or not specs or k.body is None \
                or not 1 <= len(k.instantiations) <= MAX_INSTANCES \
                or str(Path(k.span.file).resolve()) != main:
            continue
        done = write_instances(k, [s for s in specs if s.own])
        if done is not None:
            written, lines, wanted = done
            kernels[k.name] = k
            copies.update(written)
            origins.update(lines)
            expected[k.name] = wanted
            groups[k.name] = [(name, inst) for inst, name in zip(k.instantiations, written)]
    if not copies:
        return parsed
    own, starts, after = with_copies(text, copies, parsed.kernel_namespaces)
    bag, found = DiagnosticBag(), []
    tu = _parse_with_missing_headers(path, options, bag, context, found, own=own)
    if tu is None:
        return parsed
    probes_in = str(Path(path).resolve()) if context else path
    values = probed_values(tu, probes_in, cl.evaluate, cursor_file) if groups else {}
    for name, wanted in expected.items():
        if not _specialised_as_written(wanted, values, parsed.specialisations[name]):
            del groups[name], kernels[name]
    # the copies alone are modelled (the rest of the file is as its first parse has it); where
    # that names a function other than the first parse did (two methods of one name, met in
    # another order), the whole file is modelled again, in the first parse's order
    for only in (frozenset(starts), None):
        again = UnitBuilder(path, tu, DiagnosticBag(list(bag.items)), context[0] if context else None, own=own,
                            context_text=context[1] if context else None).build(only)
        try:
            adopted, replaced = adopt(parsed, again, starts, kernels, after, groups, values, origins)
        except NamedOtherwise:
            continue
        return adopted if replaced else parsed
    return parsed


def _specialised_as_written(wanted: dict[str, tuple | None], values: dict[str, dict[int, object]],
                            specs: tuple[Specialisation, ...]) -> bool:
    """Whether each instance copy of a specialised kernel template runs the body C++ picks for
    it, as clang's probes of its arguments tell: a specialisation's copy has that
    specialisation's argument values, a copy of the template's text none of the
    specialisations' (an instance naming a specialised type by an alias, ``half`` for
    ``__half``, would otherwise run the template's body)."""
    taken = {tuple(s.values) for s in specs}
    if not specs or any(not s.values or None in s.values for s in specs) or len({len(t) for t in taken}) != 1:
        return False
    count = len(specs[0].values)  # the template's parameters
    for copy, want in wanted.items():
        got = values.get(copy, {})
        if set(got) != set(range(count)):
            return False
        got = tuple(got[j] for j in range(count))
        if (tuple(want) != got) if want is not None else (got in taken):
            return False
    return True


def _errors(parsed: ParsedFile) -> int:
    """The error diagnostics of a parse other than calls to functions it does not define."""
    return sum(1 for d in parsed.diagnostics if d.severity == Severity.ERROR and d.code != "M1207")


def _parse_with_units(path: str, options: ParseOptions, data: bytes, units: list[str]) -> ParsedFile | None:
    """``path`` parsed again with the program's ``units`` included after its last line
    (:mod:`.other_units`); None where that parse fails."""
    bag, found = DiagnosticBag(), []
    own = with_units(data.decode("utf-8", "replace"), units)
    tu = _parse_with_missing_headers(path, options, bag, None, found, own=own)
    if tu is None:
        return None
    parsed = UnitBuilder(path, tu, bag, None).build()
    parsed.found_include_dirs = tuple(found)
    return parsed


def _context_source(path: str, context, outer=()) -> tuple[str, str] | None:
    """(a virtual file beside the includer, its text): the chain of includers that reaches ``path``
    (``outer``, then ``context``) with ``path`` in place of the ``#include`` that names it, each
    includer's lines above the ``#include``, then, where the includer is not itself included, the
    lines below it (the launches that instantiate the file's kernel templates are there); None
    without a context or when an includer cannot be read."""
    if context is None:
        return None
    above = []
    for includer, line in tuple(outer) + (context,):
        try:
            lines = Path(includer).read_text(errors="replace").splitlines()
        except OSError:
            return None
        above.append("\n".join(lines[:max(0, line - 1)]))
    # (an outer includer's rest may #include the inner one again: redefinitions)
    below = "" if outer else "\n".join(lines[line:])
    includer = context[0]
    virtual = str(Path(includer).resolve().with_name(f".{Path(includer).name}.c2t-context.cu"))
    return virtual, "\n".join(above) + f"\n#include \"{Path(path).resolve()}\"\n" + below + "\n"


#: an ``#include`` line: the delimiter (``<`` or ``"``) and the header named
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.M)
#: host sources and headers beside the converted files that may #include one of them
_HOST_SUFFIXES = (".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".hh", ".hxx", ".inl", ".inc", ".ipp")


#: C++ headers that are CUDA files when they define a kernel (``kernel_histogram.h`` included by
#: ``bucketsort.cu``): a conversion takes them as it takes a ``.cuh`` (convert.is_cuda_header)
KERNEL_HEADER_SUFFIXES = (".h", ".hpp", ".hh", ".hxx", ".inl")
#: the files a conversion takes: CUDA sources and headers, and C++ headers that define kernels
_CUDA_SUFFIXES = (".cu", ".cuh") + KERNEL_HEADER_SUFFIXES


def includers(paths) -> dict[str, tuple[str, int]]:
    """For each ``.cu`` or ``.cuh`` file of ``paths`` that another of them ``#include``s (a program
    that keeps its kernels in ``kernels.cu(h)`` and includes it from ``main.cu`` after the macros
    and types they use): (the first includer, the line of its ``#include``), by resolved path. Such
    a file does not compile alone; its includer's lines above the ``#include`` give it its types and
    macros (:attr:`ParseOptions.context`). A file no CUDA file includes may be included by a host
    source or header beside it (``moves.cpp`` includes ``kernels.cu`` and is itself included by
    ``main.cu``): that file is its includer, and the host file's own includer comes first in turn
    (a chain, :attr:`ParseOptions.outer_contexts`)."""
    wanted = {str(Path(p).resolve()) for p in paths if str(p).endswith(_CUDA_SUFFIXES)}
    found: dict[str, tuple[str, int]] = {}
    quoted: dict[str, list] = {}  # file -> (resolved target, header, line) of its quoted #includes

    def includes(p: str) -> list:
        if p not in quoted:
            try:
                text = Path(p).read_text(errors="replace")
            except OSError:
                text = ""
            folder = Path(p).resolve().parent
            quoted[p] = [(str((folder / m.group(2)).resolve()), m.group(2), text.count("\n", 0, m.start()) + 1)
                         for m in _INCLUDE.finditer(text) if m.group(1) == '"']
        return quoted[p]

    def scan(p: str, targets, suffixes=None) -> None:
        """Record ``p`` as the includer of each of ``targets`` it includes with quotes (naming a
        header that ends in one of ``suffixes``, where given)."""
        own = None
        for target, header, line in includes(p):
            if suffixes and not header.endswith(suffixes) or target not in targets:
                continue
            own = own or str(Path(p).resolve())
            if target != own:
                found.setdefault(target, (p, line))

    for p in sorted(map(str, paths)):
        scan(p, wanted, _CUDA_SUFFIXES)
    if not set(wanted) - set(found):
        return found
    folders = {Path(p).resolve().parent for p in wanted}
    hosts = sorted(str(f) for folder in folders for f in folder.iterdir()
                   if f.suffix in _HOST_SUFFIXES and f.is_file())
    # host files that include a converted file no CUDA file includes, then the includers of those
    # host files (CUDA files first), as long as the chain grows
    sources = sorted(map(str, paths)) + hosts
    targets = wanted - set(found)
    while targets:
        for p in sources:
            scan(p, targets)
        includers_now = {str(Path(found[t][0]).resolve()) for t in targets if t in found}
        targets = {h for h in includers_now if h not in found and h.endswith(_HOST_SUFFIXES)}
    return found


_SCAN_LIMIT = 256  # local headers read for their #includes, per file
_STUBS_RESOLVED = cl.STUB_INCLUDE_DIR.resolve()


#: the include scans of the file :func:`parse_file` is parsing (cleared after it): the host-only
#: test and each of its parses (with instance copies, variable-template probes or other units
#: appended: the same includes) ask the same scan
_SCANS: dict = {}


def _scan(path: str, context, options: ParseOptions):
    """:func:`_scan_includes`, made once per (path, context, options) in a parse."""
    key = (path, context, options)
    if key not in _SCANS:
        _SCANS[key] = _scan_includes(path, context, options)
    return _SCANS[key]


def _scan_includes(path: str, context, options: ParseOptions
                   ) -> tuple[dict[str, str], dict[str, tuple], list[str] | None]:
    """Virtual path -> header for each ``#include`` of ``path`` (of its context, and of the local
    headers they reach) that neither the includer's folder, nor a -I folder, nor the stubs, nor the
    program's own folders (:mod:`.header_search`) hold: both the path beside the includer and the
    stub path, as :func:`_parse_with_missing_headers` registers them after clang misses them; and
    header -> (the program's folder that holds it, to be searched as a -I folder, the file that
    includes it, the line of its ``#include``). Empty where the
    search cannot be told for sure (other include flags, ``__has_include``, which an empty
    stand-in would answer wrongly). Third: the texts of the files read (the includer's lines
    too), or None where the scan did not reach every file the unit may include."""
    if any(a.startswith(("-I", "-isystem", "-iquote", "-idirafter", "--include")) for a in options.extra_args):
        return {}, {}, None
    folders = [Path(d) for d in options.include_dirs] + [cl.STUB_INCLUDE_DIR]
    out: dict[str, str] = {}
    searched: dict[str, tuple] = {}
    todo = [(Path(path).resolve(), None)]
    if context:
        todo.append((Path(context[0]), context[1]))
    seen: set[str] = set()
    texts: list[str] | None = []
    while todo and len(seen) < _SCAN_LIMIT:
        file, text = todo.pop()
        if str(file) in seen:
            continue
        seen.add(str(file))
        if text is None:
            try:
                text = file.read_text(errors="replace")
            except OSError:
                texts = None  # (clang may read what this scan cannot)
                continue
        if "__has_include" in text:
            return {}, {}, None
        if texts is not None:
            texts.append(text)
        for match in _INCLUDE.finditer(text):
            header = match.group(2).strip()
            # an <angled> include that lies beside the includer: clang includes it all the same
            # (with an error that asks for quotes), so it is searched there too
            where = [file.parent] + folders
            found = next((d / header for d in where if (d / header).is_file()), None)
            if found is None and Path(header).is_absolute() and Path(header).is_file():
                found = Path(header)
            # a system header (<memory.h>, <getopt.h>, <bitset>) is the system's, which a build
            # finds before any file of that name in the program's tree
            if found is None and options.root is not None and not (match.group(1) == "<"
                                                                   and header_search.is_system_header(header)):
                folder = header_search.find_include_dir(header, file, Path(options.root))
                if folder is not None:
                    line = text.count("\n", 0, match.start()) + 1
                    searched.setdefault(header, (folder, file, line))
                    folders.insert(len(folders) - 1, folder)  # before the stubs, as a -I folder
                    found = folder / header
            if found is not None:
                found = found.resolve()
                if not found.is_relative_to(_STUBS_RESOLVED):
                    todo.append((found, None))
                continue
            if Path(header).is_absolute():
                continue  # left to clang
            for virtual in ((file.parent / header).resolve(), cl.STUB_INCLUDE_DIR / header):
                if not virtual.exists():  # never in place of a file that is there
                    out[str(virtual)] = header
    return out, searched, (texts if not todo else None)


def _report_predicted(tu, predicted: dict[str, str], path: str, context, bag: DiagnosticBag) -> None:
    """M1005 for the predicted missing headers (:func:`_scan_includes`) the unit included, at
    the header's name in the ``#include`` (where clang reports a missing one)."""
    if not predicted:
        return
    lines: dict[str, list[str]] = {}
    reported = set()  # a header is reported where it is first included: later ones find the stub
    for inc in tu.get_includes():
        header = predicted.get(inc.include.name)
        loc = inc.location
        if header is None or loc.file is None or header in reported:
            continue
        reported.add(header)
        if context and loc.file.name == context[0]:
            continue  # the includer's own header: its conversion reports it
        if loc.file.name not in lines:
            try:
                lines[loc.file.name] = Path(loc.file.name).read_text(errors="replace").splitlines()
            except OSError:
                lines[loc.file.name] = []
        text = lines[loc.file.name][loc.line - 1] if 0 < loc.line <= len(lines[loc.file.name]) else ""
        at = max(text.find('"' + header), text.find("<" + header))
        span = Span.point(loc.file.name, loc.line, at + 1 if at >= 0 else loc.column)
        bag.add("M1005", span, f"header '{header}' not found; read as empty (pass its folder with -I)")


def _note_searched(bag: DiagnosticBag, searched: dict[str, tuple], context) -> None:
    """M1008 for each header found in the program's folders (:func:`_scan_includes`), but those
    the includer's own lines include (its conversion reports them)."""
    for header, (folder, file, line) in searched.items():
        if context and str(file) == context[0]:
            continue
        shown = os.path.relpath(folder, file.parent)
        bag.add("M1008", Span.point(str(file), line),
                f"header '{header}' is not beside its includer nor in a -I folder: read from "
                f"'{shown}', the program's folder that holds it (pass -I to choose another)")


def _parse_with_missing_headers(path: str, options: ParseOptions, bag: DiagnosticBag, context=None,
                                found: list[str] | None = None, own: str | None = None):
    """Parse; a missing #include is read as an empty file (M1005) and parsing retried. With a
    ``context`` (:func:`_context_source`), that virtual file is the one parsed; with ``own``, the
    file is parsed with that text instead of its own. The program's folders searched for headers
    (M1008) are added to ``found``."""
    unsaved: dict[str, str] = dict([context]) if context else {}
    if own is not None:
        unsaved[path] = own
    # headers no folder holds, found before parsing (clang stops at the first one it misses, and
    # each would cost a parse more); those clang then includes are reported as it would have
    predicted, searched, _texts = _scan(path, context, options)
    if searched:
        folders = tuple(dict.fromkeys(str(f) for f, _file, _line in searched.values()))
        options = dataclasses.replace(options, include_dirs=options.include_dirs + folders)
        if found is not None:
            found.extend(folders)
        _note_searched(bag, searched, context)
    args = options.clang_args()
    for virtual in predicted:
        unsaved[virtual] = ""
    for _attempt in range(16):
        try:
            tu = cl.parse(context[0] if context else path, args, list(unsaved.items()))
        except ci.TranslationUnitLoadError as exc:
            bag.add("M1001", Span.point(path), f"clang could not parse the file: {exc}")
            return None
        missing = []
        for diag in tu.diagnostics:
            match = _MISSING_HEADER.search(diag.spelling)
            if diag.severity >= ci.Diagnostic.Fatal and match:
                missing.append((diag, match.group(1)))
        if not missing:
            _report_predicted(tu, predicted, path, context, bag)
            return tu
        for diag, header in missing:
            loc = diag.location
            including = Path(loc.file.name).parent if loc.file else Path(path).parent
            # beside the includer (found by `#include "..."`) and in the stub folder, which
            # `#include <...>` searches too (a folder of its own that does not exist is not searched)
            virtual = str((including / header).resolve())
            stub = str(cl.STUB_INCLUDE_DIR / header)
            if virtual in unsaved and stub in unsaved:
                continue
            unsaved[virtual] = unsaved[stub] = ""
            if context and loc.file and loc.file.name == context[0]:
                continue  # the includer's own header: its conversion reports it
            span = Span.point(loc.file.name if loc.file else path, loc.line, loc.column)
            bag.add("M1005", span, f"header '{header}' not found; read as empty "
                                   "(pass its folder with -I)")
    return tu


_NO_KIND = object()


class UnitBuilder:
    """Collects functions, globals and launch sites of one translation unit into the model."""

    def __init__(self, path: str, tu: ci.TranslationUnit, bag: DiagnosticBag, context: str | None = None,
                 own: str | None = None, context_text: str | None = None) -> None:
        self.path = path
        self.main = str(Path(path).resolve())
        self.context = context  # the virtual file of the includer's lines (ParseOptions.context)
        self.tu = tu
        self.bag = bag
        unsaved = {}  # files parsed with a text of their own
        if own is not None:
            unsaved[path] = own
        if context_text is not None:
            unsaved[context] = context_text
        self.text = SourceText(unsaved)
        self.functions: dict[str, ci.Cursor] = {}  # user function definitions by (model) name
        # explicit specialisations of kernel templates (``template <> __global__ void k<float>``):
        # kernel name -> their definitions (not migrated: see build)
        self.kernel_specialisations: dict[str, list[ci.Cursor]] = {}
        self.overloads: dict[str, tuple] = {}  # name -> ((USR, model name, parameter count), ...)
        self.model_names: dict[str, str] = {}  # USR -> model name, of overloaded definitions
        self.defaults: dict[str, tuple] = {}  # model name -> each parameter's default argument or None
        self.globals: list[ci.Cursor] = []
        # model name -> (declaration, C++ text) of the device variable templates' specialisations
        # the functions read (ModelBuilder.device_specialisations), each a global of the unit
        self.device_specialisations: dict[str, tuple] = {}
        self._alloc_cache: dict = {}  # host function -> {variable: bytes cudaMalloc'd}
        self.extents: list[tuple[str, Span]] = []  # (function name, extent) of user functions
        self._decls: list[ci.Cursor] | None = None  # _user_declarations, found once
        self._dependent: list[DependentLaunch] = []  # launches in host templates (host_instances)
        self.host_methods: dict[str, ci.Cursor] = {}  # Class::method -> its definition (host_instances)
        self._kinds: dict[tuple, str | None] = {}  # _cuda_kind's answers, per declaration
        self._main_files: dict[str, bool] = {}  # file name -> whether it is the file parsed (_is_main)

    # -- discovery ----------------------------------------------------------------------------
    def _is_main(self, cursor: ci.Cursor) -> bool:
        f = cursor.location.file
        if f is None:
            return False
        name = f.name
        main = self._main_files.get(name)
        if main is None:  # (resolving a path asks the system for each of its folders: once a file)
            main = self._main_files[name] = str(Path(name).resolve()) == self.main
        return main

    def _collect(self) -> None:
        definitions: dict[str, list[ci.Cursor]] = {}
        for cursor in self._user_declarations():
            if cursor.kind in _FUNCTION_KINDS and cursor.is_definition():
                if cursor.kind == K.FUNCTION_DECL and self._cuda_kind(cursor) == "global" \
                        and cl.specialized_template(cursor) is not None:
                    self.kernel_specialisations.setdefault(cursor.spelling, []).append(cursor)
                    self.extents.append((cursor.spelling, span_of(cursor)))
                    continue
                known = self.functions.setdefault(cursor.spelling, cursor)
                if known is not cursor and self._is_main(cursor) and not self._is_main(known) \
                        and self._cuda_kind(cursor) == "global":
                    # a kernel named like one of a header the includer read first (two kernel
                    # templates initFactor, one per header): this file's own is the one it reports
                    self.functions[cursor.spelling] = cursor
                self.extents.append((cursor.spelling, span_of(cursor)))
                if self._cuda_kind(cursor) != "global":
                    definitions.setdefault(cursor.spelling, []).append(cursor)
            elif cursor.kind == K.VAR_DECL:
                attrs = {c.kind for c in cursor.get_children()}
                if attrs & {K.CUDACONSTANT_ATTR, K.CUDADEVICE_ATTR, K.CUDASHARED_ATTR}:
                    self.globals.append(cursor)
        # overloads (swap(a, b) beside swap(a, b, c)): the first keeps the name, the others are
        # modelled and emitted as name_2, name_3, ... and each call names the one it reaches
        # an operator function (operator*) is modelled under a name Python can print (operator_mul)
        taken = set(self.functions)
        for name, defs in definitions.items():
            base = function_model_name(name)
            if len(defs) < 2:
                if base != name:
                    model = fresh(base, taken)
                    self.functions[model] = defs[0]
                    self.model_names[defs[0].get_usr()] = model
                continue
            entries = []
            for i, cursor in enumerate(defs):
                model = name if i == 0 and base == name else fresh(base, taken)
                self.functions[model] = cursor
                self.model_names[cursor.get_usr()] = model
                params = [c for c in cursor.get_children() if c.kind == K.PARM_DECL]  # templates too
                entries.append((cursor.get_usr(), model, len(params)))
            self.overloads[name] = tuple(entries)

    def _user_declarations(self) -> list[ci.Cursor]:
        """Top-level declarations (through namespaces) of the user's files, not the prelude's;
        found once per unit (the prelude's thousands of declarations are the most of them)."""
        if self._decls is None:
            self._decls = cl.user_declarations(self.tu)
        return self._decls

    def _cuda_kind(self, cursor: ci.Cursor) -> str | None:
        """``global``, ``device``, ``host_device`` or None (a host function), from the cursor's
        attributes; kept per declaration (asked several times of each function, and each time
        a walk of its children): a declaration cursor's kind and first datum name it in its unit,
        an expression's (a lambda) its kind and first two."""
        key = (cursor._kind_id, cursor.data[0], cursor.data[1])
        kind = self._kinds.get(key, _NO_KIND)
        if kind is _NO_KIND:
            kind = self._kinds[key] = self._cuda_kind_of(cursor)
        return kind

    @staticmethod
    def _cuda_kind_of(cursor: ci.Cursor) -> str | None:
        attrs = {c.kind for c in cursor.get_children()}
        if K.CUDAGLOBAL_ATTR in attrs:
            return "global"
        if K.CUDADEVICE_ATTR in attrs:
            return "host_device" if K.CUDAHOST_ATTR in attrs else "device"
        return None

    # -- clang diagnostics ---------------------------------------------------------------------
    def _clang_diagnostics(self) -> None:
        host_errors: dict[str, list] = {}
        for diag in self.tu.diagnostics:
            if diag.severity < ci.Diagnostic.Error or _MISSING_HEADER.search(diag.spelling):
                continue
            loc = diag.location
            file = loc.file.name if loc.file else self.path
            if file == self.context:
                continue  # the includer's lines: its own conversion reports them
            span = Span.point(file, loc.line or 1, loc.column or 1)
            owner = self._owner(file, loc.line, loc.column)
            if owner is None or self._cuda_kind(self.functions[owner]) is None:
                host_errors.setdefault(owner or "", []).append((span, diag.spelling))
            else:
                code = next((c for pattern, c in CLANG_MESSAGE_CODES if pattern.search(diag.spelling)),
                            "M1001")
                self.bag.add(code, span, diag.spelling)
        # Host code only matters for launch sites: one diagnostic per host function, not a flood.
        for owner, errors in host_errors.items():
            span, first = errors[0]
            where = f"in '{owner}'" if owner else "outside any function"
            more = f" (and {len(errors) - 1} more errors there)" if len(errors) > 1 else ""
            self.bag.add("M1006", span, f"host code {where}: {first}{more}")

    def _owner(self, file: str, line: int, col: int) -> str | None:
        for name, extent in self.extents:
            if extent.contains(file, line, col):
                return name
        return None

    # -- model -------------------------------------------------------------------------------
    def build(self, only: frozenset | None = None) -> ParsedFile:
        """The file's model: its kernels and the device functions they call, its globals and
        launch sites. With ``only`` (kernel names), just those kernels and what they call are
        modelled, and no launch site is read (an instance copy's parse: :func:`_with_instance_copies`)."""
        self._collect()
        self._clang_diagnostics()
        launches = self._launch_sites() if only is None else []
        instances = self._instances(launches) if only is None else {}

        kernels, device_fns = [], {}
        pending = [c for c in self.functions.values()
                   if self._cuda_kind(c) == "global" and self._is_main(c)
                   and (only is None or self.model_names.get(_usr(c), c.spelling) in only)]
        pending.sort(key=lambda c: (c.extent.start.line, c.extent.start.column))
        built: dict[str, m.Function] = {}
        queue = list(pending)
        while queue:
            cursor = queue.pop(0)
            if self.model_names.get(_usr(cursor), cursor.spelling) in built:
                continue
            try:
                fn = self._function(cursor, instances)
            except Exception as exc:  # a bug in the model builder: it costs this function only
                fn = self._broken(cursor, exc)
            built[fn.name] = fn
            if fn.is_kernel:
                kernels.append(fn)
            else:
                device_fns[fn.name] = fn
            for callee in fn.calls:
                if callee not in built and callee in self.functions:
                    queue.append(self.functions[callee])

        self._check_recursion(built)
        specialised = self._refuse_specialised_kernels(pending)
        built = with_default_arguments(built, self.defaults)
        kernels = [built[k.name] for k in kernels]
        device_fns = {name: built[name] for name in device_fns}
        unit = m.TranslationUnit(
            self.path, tuple(kernels),
            tuple(sorted(device_fns.values(), key=lambda f: (f.span.file, f.span.line))),
            tuple(self._global(c) for c in self.globals)
            + tuple(self._global(c, name, written) for name, (c, written) in self.device_specialisations.items()),
            tuple(launches))
        if not kernels and only is None:
            self.bag.add("M1003", Span.point(self.path), "no __global__ kernels in this file")
        parsed = ParsedFile(self.path, unit, self.bag.items, specialised_kernels=specialised,
                            specialisations={self.model_names.get(_usr(c), c.spelling): self._specialisations(c)
                                             for c in pending if self.model_names.get(_usr(c), c.spelling)
                                             in specialised})
        parsed.by_kernel = {k.name: self._kernel_diagnostics(k, built) for k in kernels}
        # the namespaces each kernel is declared in, outermost first (``a::b::k``: a, b)
        parsed.kernel_namespaces = {self.model_names.get(c.get_usr(), c.spelling):
                                    tuple(qualified_name(c).split("::")[:-1]) for c in pending}
        return parsed

    def _refuse_specialised_kernels(self, kernels: list[ci.Cursor]) -> frozenset:
        """A kernel template with explicit specialisations (fma's ``implicit_fma_kernel<float>``,
        a float4 body beside the template's scalar one) is refused: the template's model would
        run the template's body for the specialised instances too, whose launches are sized for
        their own bodies (the migrated fma kernel updated an eighth of its output on the GPU).
        Returns their names (no instance copies are written for them: a copy is the template's
        text too)."""
        refused = set()
        for cursor in kernels:
            specs = self.kernel_specialisations.get(cursor.spelling)
            if not specs or cl.specialized_template(cursor) is not None:
                continue
            named = ", ".join(f"{_template_args_text(s)} at line {s.extent.start.line}" for s in specs)
            self.bag.add("M1206", span_of(cursor),
                         f"explicit specialisations of the kernel template '{cursor.spelling}' ({named}) are "
                         f"not migrated: their instances would run the template's body")
            refused.add(self.model_names.get(_usr(cursor), cursor.spelling))
        return frozenset(refused)

    def _specialisations(self, template: ci.Cursor) -> tuple[Specialisation, ...]:
        """The explicit specialisations of the kernel template ``template``, each with its
        arguments as written and their values (:class:`Specialisation`); one this file does not
        define (a header's includer's, above its ``#include``) is not its ``own``: no copy is made
        of it, but no instance of its arguments runs the template's body either."""
        from ..runtime.tilelang_support import template_type_value

        out = []
        for spec in self.kernel_specialisations.get(template.spelling, ()):
            written = _written_template_args(self.text.of(spec), template.spelling)
            values = []
            try:
                for i in range(spec.get_num_template_arguments()):
                    kind = spec.get_template_argument_kind(i)
                    if kind == ci.TemplateArgumentKind.TYPE:
                        values.append(template_type_value(spec.get_template_argument_type(i).get_canonical().spelling))
                    elif kind == ci.TemplateArgumentKind.INTEGRAL:
                        values.append(spec.get_template_argument_value(i))
                    else:
                        values.append(None)
            except Exception:  # noqa: BLE001 - bindings without template arguments
                values = []
            out.append(Specialisation(written or (), tuple(values), span_of(spec), self._is_main(spec)))
        return tuple(out)

    def _kernel_diagnostics(self, kernel: m.Function, built: dict[str, m.Function]) -> list[Diagnostic]:
        names, stack = set(), [kernel.name]
        while stack:
            name = stack.pop()
            if name in names:
                continue
            names.add(name)
            if name in built:
                stack.extend(built[name].calls)
        spans = [f.span for n, f in built.items() if n in names]
        return [d for d in self.bag.items
                if any(s.contains(d.span.file, d.span.line, d.span.col) for s in spans)]

    def _broken(self, cursor: ci.Cursor, exc: Exception) -> m.Function:
        """A function whose model could not be built, as one with no body and an M9001 error in
        its extent (so a kernel, or a kernel calling it, is reported unsupported with it)."""
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        self.bag.add("M9001", span_of(cursor), f"internal error while reading '{cursor.spelling}': {last}")
        return m.Function(self.model_names.get(_usr(cursor), cursor.spelling), self._cuda_kind(cursor) or "host",
                          (), m.Scalar("void"), None, (), (), (), (), span_of(cursor))

    def _function(self, cursor: ci.Cursor, instances: dict[str, list[m.Instantiation]]) -> m.Function:
        template_params = []
        if cursor.kind == K.FUNCTION_TEMPLATE:
            for child in cursor.get_children():
                if child.kind == K.TEMPLATE_TYPE_PARAMETER:
                    template_params.append(m.TemplateParam(child.spelling, "type", None,
                                                           _default_of(child, self.text), span_of(child)))
                elif child.kind == K.TEMPLATE_NON_TYPE_PARAMETER:
                    template_params.append(m.TemplateParam(child.spelling, "value",
                                                           convert_type(child.type), _default_of(child, self.text),
                                                           span_of(child), _enumerators(child.type)))
                elif child.kind == K.TEMPLATE_TEMPLATE_PARAMETER:
                    self.bag.add("M1206", span_of(child), "template template parameters are not modelled")
        names = frozenset(p.name for p in template_params)
        if self._cuda_kind(cursor) == "global" and template_params and not instances.get(cursor.spelling):
            # never instantiated here: typename V::Scalar is a type parameter of its own
            members, replaced = member_type_params(cursor, [(p.name, p.kind) for p in template_params])
            template_params = [q for p in template_params for q in (() if p.name in replaced else (p,)) + tuple(
                m.TemplateParam(name, "type", None, None, p.span) for name, spellings in members
                if f"{p.name}::{name[len(p.name) + 1:]}" in spellings)]
            names = TemplateNames((p.name for p in template_params),
                                  {k: v for _n, spellings in members for k, v in spellings.items()})
        params = []
        this_type = None
        if cursor.kind in (K.CXX_METHOD, K.CONSTRUCTOR, K.CONVERSION_FUNCTION) and not cursor.is_static_method():
            # a device function of the object (this_); a constructor fills it
            this_type = convert_type(cursor.semantic_parent.type, names)
            params.append(m.Param("this_", m.Reference(this_type), cursor.is_const_method(), span_of(cursor)))
        builder = ModelBuilder(self.bag, self.text, self.functions, names, self.overloads, self.model_names,
                               this_type, self.device_specialisations)
        lambda_captures = ()
        if cursor.kind == K.LAMBDA_EXPR:  # a local lambda (parse.lambdas): its captures follow its parameters
            found = lambdas.captures(cursor)
            lambda_captures = tuple(found) if not isinstance(found, str) else ()
            builder.captured = {c.var.get_usr() for c in lambda_captures if not c.copy}
            builder.captured_copies = {c.name for c in lambda_captures if c.copy}
        defaults: list[m.Expr | None] = [None] * len(params)
        body = None
        kernel = self._cuda_kind(cursor) == "global"
        for child in cursor.get_children():
            if child.kind == K.PARM_DECL:
                ptype = convert_type(child.type, names)
                if isinstance(ptype, m.Array) and kernel:
                    # a kernel's array parameter is the pointer it decays to: const unsigned char
                    # salt[16] a pointer to bytes, float input[28][28] one to rows of 28 (float (*)[28])
                    inner = child.type.get_array_element_type()
                    while inner.kind == ci.TypeKind.CONSTANTARRAY:
                        inner = inner.get_array_element_type()
                    ptype = m.Pointer(ptype.element, inner.is_const_qualified())
                if re.search(r"\b(cudaTextureObject_t|cudaSurfaceObject_t)\b", child.type.spelling):
                    self.bag.add("M1202", span_of(child),
                                 f"parameter '{child.spelling}' is a texture/surface object")
                params.append(m.Param(child.spelling, ptype, child.type.is_const_qualified(), span_of(child)))
                defaults.append(self._param_default(child, builder))
            elif child.kind == K.COMPOUND_STMT:
                body = builder.block(child)
        for capture in lambda_captures:
            ctype = convert_type(capture.var.type, names)
            params.append(m.Param(capture.name, ctype if isinstance(ctype, m.Reference) else m.Reference(ctype),
                                  False, span_of(capture.var)))
            defaults.append(None)
        if cursor.kind == K.CONSTRUCTOR and body is not None:
            body = dataclasses.replace(body, stmts=_member_initialisers(cursor, builder) + body.stmts)
        kind = self._cuda_kind(cursor) or "host"
        returns = convert_type(cursor.result_type, names) if cursor.kind != K.LAMBDA_EXPR else None
        if cursor.kind == K.LAMBDA_EXPR:
            kind = "device"
            operator = lambdas.call_operator(cursor)
            returns = convert_type(operator.result_type, names) if operator is not None else m.Scalar("void")
        if kind == "global" and template_params and not instances.get(cursor.spelling):
            self.bag.add("M1208", span_of(cursor),
                         f"templated kernel '{cursor.spelling}' is never launched or instantiated here")
        calls = tuple(dict.fromkeys(builder.called))
        name = self.model_names.get(_usr(cursor), cursor.spelling)
        self.defaults[name] = tuple(defaults)
        return m.Function(name, kind, tuple(params), returns,
                          body, tuple(template_params),
                          tuple(instances.get(cursor.spelling, ())), _launch_bounds(cursor, self.text),
                          calls, span_of(cursor))

    def _param_default(self, cursor: ci.Cursor, builder: ModelBuilder) -> m.Expr | None:
        """The default argument a parameter declares (``unsigned width = warpSize``), or None."""
        if _default_of(cursor, self.text) is None:
            return None
        exprs = [c for c in cursor.get_children() if c.kind.is_expression()]
        return builder.expr(exprs[-1]) if exprs else None

    def _global(self, cursor: ci.Cursor, name: str | None = None, spelling: str = "") -> m.GlobalVar:
        attrs = {c.kind for c in cursor.get_children()}
        storage = "constant" if is_constant(cursor, attrs) else (
            "shared" if K.CUDASHARED_ATTR in attrs else "device")
        if storage == "device" and "__managed__" in self.text.line(cursor.location.file.name,
                                                                   cursor.location.line):
            storage = "managed"
        builder = ModelBuilder(self.bag, self.text, self.functions)
        exprs = [c for c in cursor.get_children() if c.kind.is_expression()]
        # an array's extent is an expression child too (int a[N];): an array's initialiser is a
        # list (or a string), a number's any expression
        array = cursor.type.kind in (ci.TypeKind.CONSTANTARRAY, ci.TypeKind.INCOMPLETEARRAY,
                                     ci.TypeKind.DEPENDENTSIZEDARRAY)
        initialised = exprs and (not array or exprs[-1].kind in (K.INIT_LIST_EXPR, K.STRING_LITERAL))
        init = builder.expr(exprs[-1]) if initialised else None
        return m.GlobalVar(name or cursor.spelling, convert_type(cursor.type), storage, init, span_of(cursor),
                           spelling)

    def _check_recursion(self, built: dict[str, m.Function]) -> None:
        def reaches(start: str, target: str) -> bool:
            seen, stack = set(), list(built[start].calls)
            while stack:
                name = stack.pop()
                if name == target:
                    return True
                if name in seen or name not in built:
                    continue
                seen.add(name)
                stack.extend(built[name].calls)
            return False

        for name, fn in built.items():
            if reaches(name, name) and not _recursion_by_instances(fn, built):
                self.bag.add("M1204", fn.span, f"'{name}' calls itself (directly or through other functions)")

    # -- launch sites -------------------------------------------------------------------------
    def _launch_sites(self) -> list[m.LaunchSite]:
        sites = []
        # a launch is spelled <<<...>>>, in the function or in a macro of the user's: a host
        # function whose text has none, where no macro does, is not walked (main()s are long)
        macros = any(c.kind == K.MACRO_DEFINITION and "<<<" in self.text.of(c) for c in self._user_declarations())
        self.host_methods = host_methods(self._user_declarations(), self._cuda_kind)
        for name, cursor in list(self.functions.items()) + list(self.host_methods.items()):
            if self._cuda_kind(cursor) in ("global", "device"):
                continue  # device-side launches are diagnosed by the model builder (M1203)
            if not macros and "<<<" not in self.text.of(cursor):
                continue
            for node in cl.call_exprs(cursor):
                kids = list(node.get_children())
                if len(kids) < 2 or not is_push_config(kids[1]):
                    continue
                sites.append(self._launch_site(node, kids, name))
        sites.sort(key=lambda s: (s.span.file, s.span.line, s.span.col))
        return sites

    def _host_expr(self, cursor: ci.Cursor) -> m.HostExpr | None:
        if cursor.extent.start.file is None:
            return None  # a defaulted argument
        value = _constant(cursor, numbers=True)
        dims = (value, 1, 1) if isinstance(value, int) else _dim3_value(cursor)
        return m.HostExpr(self.text.of(cursor).strip(), value, span_of(cursor), dims)

    def _launch_site(self, node: ci.Cursor, kids: list[ci.Cursor], caller: str) -> m.LaunchSite:
        config = [c for c in list(kids[1].get_children())[1:]]
        exprs = [self._host_expr(c) for c in config]
        exprs += [None] * (4 - len(exprs))
        callee = kids[0]
        ref = None
        for c in callee.walk_preorder():
            if c.kind in (K.DECL_REF_EXPR, K.OVERLOADED_DECL_REF):
                ref = c.referenced if c.kind == K.DECL_REF_EXPR else None
                kernel_name = c.spelling
                break
        else:
            kernel_name = node.spelling
        template_args = template_args_of(ref) if ref is not None else ()
        if ref is not None:
            kernel_name = ref.spelling
        arg_cursors = [c for c in kids[2:] if c.extent.start.file is not None]
        kernel, host = self.functions.get(kernel_name), self.functions.get(caller) or self.host_methods.get(caller)
        if not template_args and kernel is not None and kernel.kind == K.FUNCTION_TEMPLATE and host is not None \
                and (host.kind == K.FUNCTION_TEMPLATE or host.semantic_parent.kind == K.CLASS_TEMPLATE):
            self._dependent.append(DependentLaunch(kernel_name, caller, explicit_template_args(callee),
                                                   tuple(c.type.spelling for c in arg_cursors), span_of(node)))
        args = tuple(self._host_expr(c) for c in arg_cursors)
        allocs = self._allocations(self.functions.get(caller))
        alloc_bytes = tuple(allocs.get(_referenced_var(c)) for c in arg_cursors)
        return m.LaunchSite(kernel_name, template_args, exprs[0], exprs[1], exprs[2], exprs[3], args,
                            caller, span_of(node), alloc_bytes)

    def _allocations(self, fn_cursor) -> dict:
        """Variables of a host function given device memory of a constant size:
        ``cudaMalloc(&p, bytes)`` / ``cudaMallocManaged`` / ``cudaMallocAsync`` -> {var: bytes}."""
        if fn_cursor is None:
            return {}
        cached = self._alloc_cache.get(fn_cursor.hash)
        if cached is not None:
            return cached
        out = {}
        for node in cl.call_exprs(fn_cursor):
            if node.spelling not in ("cudaMalloc", "cudaMallocManaged", "cudaMallocAsync"):
                continue
            args = [a for a in node.get_arguments()]
            if len(args) < 2:
                continue
            var = _address_of_var(args[0])
            size = _size_value(args[1])
            if var is not None and size is not None:
                out[var] = size
        self._alloc_cache[fn_cursor.hash] = out
        return out

    def _instances(self, launches: list[m.LaunchSite]) -> dict[str, list[m.Instantiation]]:
        found = [(site.kernel, site.template_args, site.span) for site in launches if site.template_args]
        if self._dependent:  # launched in host templates: their instances' arguments
            found += HostInstances(self.functions, self.text.of, self.host_methods).launches(self._dependent)
        # explicit instantiations: ``template __global__ void k<float>(...);``
        found += [(c.spelling, template_args_of(c), span_of(c)) for c in self._user_declarations()
                  if c.kind == K.FUNCTION_DECL and not c.is_definition() and c.get_num_template_arguments() > 0]
        # explicit instantiation definitions (``template __global__ void k<unsigned>(unsigned*);``):
        # libclang gives them no cursor, so they are read from the file's text
        text = self.text.file(self.main)
        for match in _EXPLICIT_INSTANCE.finditer(text) if "template" in text else ():
            cursor = self.functions.get(match.group(1))
            if cursor is not None and cursor.kind == K.FUNCTION_TEMPLATE and self._cuda_kind(cursor) == "global":
                line = text.count("\n", 0, match.start()) + 1
                found.append((match.group(1), tuple(" ".join(a.split()) for a in split_top_level(match.group(2), "<(")),
                              Span(self.path, line, 1, line, 1)))
        instances: dict[str, list[m.Instantiation]] = {}
        for kernel, args, span in found:
            known = instances.setdefault(kernel, [])
            if args and all(i.args != args for i in known):
                known.append(m.Instantiation(args, span))
        return instances


#: ``template __global__ void name<args>(``: an explicit instantiation definition of a kernel
_EXPLICIT_INSTANCE = re.compile(r"^[ \t]*template[ \t]+(?:__global__[ \t]+)?void[ \t]+(\w+)[ \t]*<([^;{()]*)>[ \t]*\(",
                                re.MULTILINE)


def _usr(cursor: ci.Cursor) -> str:
    """The key a function's model name is registered under: its USR, a lambda's place."""
    return lambdas.key(cursor) if cursor.kind == K.LAMBDA_EXPR else cursor.get_usr()


def _dim3_value(cursor: ci.Cursor, depth: int = 0):
    """(x, y, z) of a ``dim3`` built from constants, directly or through the variable it was
    declared as (``dim3 grid((n + 15) / 16, (m + 15) / 16)``); None otherwise."""
    if depth > 4:
        return None
    if cursor.kind == K.DECL_REF_EXPR and cursor.referenced is not None and cursor.referenced.kind == K.VAR_DECL:
        if _reassigned(cursor.referenced):
            return None  # dim3 threads; ... threads = dim3(M1W): the declaration does not say
        inits = [k for k in cursor.referenced.get_children() if k.kind.is_expression()]
        return _dim3_value(inits[-1], depth + 1) if inits else None
    if cursor.kind in (K.CALL_EXPR,) and cursor.spelling == "dim3":
        args = [a for a in cursor.get_arguments()]
        values = [_size_value(a) for a in args]
        if args and all(v is not None for v in values):
            return tuple(values + [1] * (3 - len(values)))[:3]
        if len(args) == 1:  # a copy of another dim3
            return _dim3_value(args[0], depth + 1)
        return None
    # (dim3(8) is a functional cast: the type's name, then the converting constructor's call)
    kids = [k for k in cursor.get_children() if k.extent.start.file is not None and k.kind != K.TYPE_REF]
    if cursor.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR) and len(kids) == 1:
        return _dim3_value(kids[0], depth + 1)
    return None


def _assignments(fn: ci.Cursor) -> dict[str, list[int]]:
    """Where names are assigned in a function's text (``v = ...``, ``v.x = ...``, ``v += ...``,
    ``++v``): name -> the offsets of the assigning tokens. Kept on the function's translation
    unit (a cursor's hash names it only inside its own unit)."""
    kept = fn._tu.__dict__.setdefault("_c2t_assignments", {})
    found = kept.get(fn.hash)
    if found is not None:
        return found
    start, end = fn.extent.start, fn.extent.end
    out: dict[str, list[int]] = {}
    if start.file is None or end.file is None or start.file.name != end.file.name:
        kept[fn.hash] = out
        return out
    # the function's text with comments and literals blanked (latin-1: one character a byte, so
    # offsets are libclang's); reading tokens through libclang cost a second per thousand lines
    masked = fn._tu.__dict__.setdefault("_c2t_masked", {})  # file -> its masked text, read once a unit
    path = start.file.name
    if path not in masked:
        masked[path] = _masked(path)
    text = masked[path][start.offset:end.offset]
    for match in _ASSIGNMENT.finditer(text):
        group = "op" if match.group("name") else "inc" if match.group("before") else "dec"
        name = match.group("name") or match.group("before") or match.group("after")
        if group == "op" and name in ("x", "y", "z") and text[max(0, match.start() - 64):match.start()].rstrip().endswith("."):
            continue  # a[i].x = ...: what is assigned is no name (v.x = ... matched at v)
        out.setdefault(name, []).append(start.offset + match.start(group))
    kept[fn.hash] = out
    return out


_ASSIGNMENT = re.compile(  # v = ..., v.x op= ..., v++, --v: the name, and where its operator is
    r"(?<!\w)(?P<name>[A-Za-z_]\w*)(?:\s*\.\s*[xyz])?\s*(?P<op><<=|>>=|\+=|-=|\*=|/=|%=|&=|\|=|\^=|=(?!=))"
    r"|(?<!\w)(?P<before>[A-Za-z_]\w*)\s*(?P<inc>\+\+|--)"
    r"|(?P<dec>\+\+|--)\s*(?P<after>[A-Za-z_]\w*)")


def _masked(path: str) -> str:
    from ..runtime.source import mask_source
    try:
        data = Path(path).read_bytes().decode("latin-1")
    except OSError:
        return ""
    return mask_source(data)


def _reassigned(var: ci.Cursor) -> bool:
    """Whether a local variable is assigned in its function other than by its declaration
    (``dim3 blocks, threads; threads = dim3(M1W);``): its declaration does not say its value."""
    fn = var.semantic_parent
    if fn is None or fn.kind not in (K.FUNCTION_DECL, K.CXX_METHOD, K.FUNCTION_TEMPLATE):
        return False
    start, end = var.extent.start.offset, var.extent.end.offset
    return any(not start <= at <= end for at in _assignments(fn).get(var.spelling, ()))


def _size_value(cursor: ci.Cursor, depth: int = 0) -> int | None:
    """An allocation size: a constant, or built with + - * / from constants, ``sizeof``, locals
    initialised with one (``size_t bytes = n * sizeof(float)``) and ``v.size()`` of a vector
    constructed with a constant count."""
    if depth > 12:
        return None
    value = _constant(cursor, follow_locals=True)
    if isinstance(value, int):
        return value
    kids = [k for k in cursor.get_children() if k.extent.start.file is not None]
    if cursor.kind in (K.UNEXPOSED_EXPR, K.PAREN_EXPR, K.CSTYLE_CAST_EXPR, K.CXX_STATIC_CAST_EXPR) and kids:
        return _size_value(kids[-1], depth + 1)
    if cursor.kind == K.BINARY_OPERATOR and len(kids) == 2:
        a, b = _size_value(kids[0], depth + 1), _size_value(kids[1], depth + 1)
        op = cl.binary_op(cursor)
        if a is None or b is None:
            return None
        return {"+": a + b, "-": a - b, "*": a * b}.get(op, a // b if op == "/" and b else None)
    if cursor.kind == K.DECL_REF_EXPR and cursor.referenced is not None and cursor.referenced.kind == K.VAR_DECL:
        inits = [k for k in cursor.referenced.get_children() if k.kind.is_expression()]
        return _size_value(inits[-1], depth + 1) if inits else None
    if cursor.kind == K.MEMBER_REF_EXPR and cursor.spelling in ("x", "y", "z"):
        # a field of a dim3 built from constants: `(n + block.x - 1) / block.x`
        for k in cursor.get_children():
            dims = _dim3_value(k)
            if dims is not None:
                return dims["xyz".index(cursor.spelling)]
        return None
    if cursor.kind == K.CALL_EXPR and cursor.spelling == "size":
        for k in cursor.walk_preorder():
            if k.kind == K.DECL_REF_EXPR and k.referenced is not None and k.referenced.kind == K.VAR_DECL:
                ctor = [c for c in k.referenced.walk_preorder() if c.kind == K.CALL_EXPR]
                if ctor:
                    ctor_args = [a for a in ctor[0].get_arguments() if a.extent.start.file is not None]
                    if ctor_args:
                        return _size_value(ctor_args[0], depth + 1)
                return None
    return None


def _referenced_var(cursor: ci.Cursor):
    """The variable an argument names (through implicit conversions), or None."""
    for c in cursor.walk_preorder():
        if c.kind == K.DECL_REF_EXPR and c.referenced is not None and c.referenced.kind in (K.VAR_DECL, K.PARM_DECL):
            return c.referenced.hash
        if c.kind not in (K.UNEXPOSED_EXPR, K.DECL_REF_EXPR, K.PAREN_EXPR):
            return None
    return None


def _address_of_var(cursor: ci.Cursor):
    """The variable of ``&p`` (through casts such as ``(void**)&p``), or None."""
    for c in cursor.walk_preorder():
        if c.kind == K.UNARY_OPERATOR:
            kids = list(c.get_children())
            if len(kids) == 1:
                for k in kids[0].walk_preorder():
                    if k.kind == K.DECL_REF_EXPR and k.referenced is not None:
                        return k.referenced.hash
        if c.kind == K.DECL_REF_EXPR:
            return None
    return None


def _constant(cursor: ci.Cursor, numbers: bool = False, follow_locals: bool = False) -> int | float | None:
    """The integer value of a host expression, looking through ``dim3(...)`` conversions (with
    ``numbers``, a floating-point value too). With ``follow_locals`` a non-const local variable
    stands for its initialiser (allocation sizes: ``size_t bytes = n * sizeof(float);``)."""
    for _ in range(6):
        value = cl.evaluate(cursor)
        if isinstance(value, int) or (numbers and isinstance(value, float)):
            return value
        kids = [k for k in cursor.get_children() if k.extent.start.file is not None]
        if cursor.kind in (K.UNEXPOSED_EXPR, K.CALL_EXPR, K.CXX_FUNCTIONAL_CAST_EXPR, K.PAREN_EXPR) \
                and len(kids) == 1 and (cursor.kind != K.CALL_EXPR or cursor.spelling == "dim3"):
            cursor = kids[0]
            continue
        if cursor.kind == K.DECL_REF_EXPR and cursor.referenced is not None \
                and cursor.referenced.kind == K.VAR_DECL and (
                    cursor.referenced.type.is_const_qualified() or follow_locals):
            inits = [k for k in cursor.referenced.get_children() if k.kind.is_expression()]
            if inits:
                cursor = inits[-1]
                continue
        return None
    return None


def _enumerators(ctype) -> tuple:
    """The constants of an enum type as GCC names them in an instance (``MorphOpType::ERODE``, and
    for an unscoped enum the bare name too), with their values; () for any other type."""
    decl = ctype.get_canonical().get_declaration()
    if decl is None or decl.kind != K.ENUM_DECL:
        return ()
    out = []
    scope = decl.type.get_canonical().spelling
    for c in decl.get_children():
        if c.kind == K.ENUM_CONSTANT_DECL:
            out.append((f"{scope}::{c.spelling}", c.enum_value))
            if not decl.is_scoped_enum():
                out.append((c.spelling, c.enum_value))
    return tuple(out)


def _member_initialisers(cursor: ci.Cursor, builder: ModelBuilder) -> tuple:
    """A constructor's member initialisers (``: x(_x), y(_y)``) as the assignments to its object
    they make, in order (each a field name, then the expression it is given), after the default
    member initialisers of the fields they do not name (``const int fmask = (1 << 23) - 1;``)."""
    given, field = [], None
    for child in cursor.get_children():
        if child.kind == K.MEMBER_REF:
            field = child
        elif field is not None and child.kind.is_expression():
            given.append((field, child))
            field = None
    named = {f.spelling for f, _e in given}
    defaults = []
    record = cursor.semantic_parent
    for member in record.get_children() if record is not None else ():
        if member.kind != K.FIELD_DECL or member.spelling in named or \
                not any(t.spelling in ("=", "{") for t in member.get_tokens()):
            continue
        exprs = [c for c in member.get_children() if c.kind.is_expression()]
        value = exprs[-1] if exprs else None
        if value is not None and value.kind == K.INIT_LIST_EXPR and len(list(value.get_children())) == 1:
            value = next(value.get_children())  # int calls{3};
        if value is not None:
            defaults.append((member, value))
    out = []
    for field, child in defaults + given:
        span = span_of(child)
        ftype = convert_type(field.type)
        target = m.Member(builder._this(span), field.spelling, False, ftype, span)
        out.append(m.ExprStmt(m.Assign("=", target, builder.expr(child), ftype, span), span))
    return tuple(out)


def _default_of(cursor: ci.Cursor, text: SourceText) -> str | None:
    source = text.of(cursor)
    if "=" in source:
        return source.split("=", 1)[1].strip()
    return None


def _recursion_by_instances(fn: m.Function, built: dict[str, m.Function]) -> bool:
    """Whether ``fn`` calls itself only as another instance of its template that its explicit
    specialisations end (``template <int N> f() { ... f<N - 1>(...); }`` beside ``template <> f<0>``:
    wlcpow's TEA rounds): a recursion C++ unrolls while compiling, as the inlining of each call's
    instance does (analysis.prepare.instances). Any other way back to ``fn`` is recursion."""
    values = {t.name for t in fn.template_params if t.kind == "value"}
    if not values or fn.body is None:
        return False
    own = [n for n in m.walk(fn.body) if isinstance(n, m.Call)
           and (n.callee == fn.name or any(model == fn.name for _, model in n.dispatch[1] if n.dispatch))]
    for call in own:
        if not call.dispatch or not any(tuple(k) != m.PRIMARY_TEMPLATE for k, _ in call.dispatch[1]) \
                or not all(re.findall(r"[A-Za-z_]\w*", a) and set(re.findall(r"[A-Za-z_]\w*", a)) <= values
                           for a in call.dispatch[0]):
            return False
    seen, stack = set(), [c for c in fn.calls if c != fn.name]
    while stack:  # no way back through another function
        name = stack.pop()
        if name == fn.name:
            return False
        if name in seen or name not in built:
            continue
        seen.add(name)
        stack.extend(built[name].calls)
    return bool(own)


def _launch_bounds(cursor: ci.Cursor, text: SourceText) -> tuple[int, ...]:
    for child in cursor.get_children():
        if child.kind == K.CUDAGLOBAL_ATTR:
            break
    source = " ".join(t.spelling for t in cursor.get_tokens())
    match = re.search(r"__launch_bounds__\s*\(([^)]*)\)", source)
    if not match:
        return ()
    values = []
    for part in match.group(1).split(","):
        part = part.strip()
        if part.isdigit():
            values.append(int(part))
    return tuple(values)


def _written_template_args(text: str, name: str) -> tuple[str, ...] | None:
    """The template arguments written after ``name`` in a specialisation's text (``float``,
    ``__half`` of ``k<float, __half>(``), split at the top level's commas; None where not found."""
    found = re.search(r"\b" + re.escape(name) + r"\s*<", text)
    if found is None:
        return None
    depth, parts, start = 1, [], found.end()
    for i in range(found.end(), len(text)):
        c = text[i]
        if c in "<([":
            depth += 1
        elif c in ">)]":
            depth -= 1
            if depth == 0:
                parts.append(text[start:i])
                return tuple(" ".join(p.split()) for p in parts)
        elif c == "," and depth == 1:
            parts.append(text[start:i])
            start = i + 1
    return None


def _template_args_text(cursor: ci.Cursor) -> str:
    """``<float>`` of a specialisation ``k<float>(...)``, or ``<...>``."""
    try:
        n = cursor.get_num_template_arguments()
        args = [cursor.get_template_argument_type(i).spelling for i in range(n)] if n > 0 else []
    except Exception:  # noqa: BLE001 - older bindings
        args = []
    return f"<{', '.join(args)}>" if args and all(args) else "<...>"
