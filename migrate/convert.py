"""``migrate convert``: walk a codebase, model every kernel, write the mirrored output tree.

The driver owns files and folders; the frontend owns parsing; the pipeline
(:mod:`migrate.pipeline`) owns the passes and the choice of form; the emitter owns the text. One bad file never stops the others: each is parsed in
a worker process under a time and memory limit, and a file that hangs, runs out of memory or kills
its worker is reported for that file (M4013, M4014, M9030).
"""
from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .codes import Severity
from .diagnostics import Diagnostic, make
from .ir import model as m
from .parse.frontend import KERNEL_HEADER_SUFFIXES, ParsedFile, ParseOptions, parse_file
from .ir.span import Span

SOURCE_SUFFIXES = (".cu", ".cuh")
_GLOBAL = re.compile(r"\b__global__\b")


_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.M)


def uncopied_headers(path: Path) -> bool:
    """Whether ``path`` includes with quotes, at any depth, a file beside an includer that a
    conversion does not copy into OUT (a plain header: only CUDA files are copied): a kernel of
    it kept as CUDA (the hybrid form) is then built with its original folder searched too."""
    return bool(uncopied_header_folders(path))


def uncopied_header_folders(path: Path) -> list[str]:
    """The folders of the includers (``path`` and the files it includes with quotes, at any depth)
    that include such a file beside them, ``path``'s first."""
    seen, stack, folders = set(), [Path(path).resolve()], []
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            text = p.read_text(errors="replace")
        except OSError:
            continue
        for name in _QUOTED_INCLUDE.findall(text):
            found = p.parent / name
            if not found.is_file():
                continue  # found through an include folder, which the build lists anyway
            if found.suffix not in SOURCE_SUFFIXES and not is_cuda_header(found):
                if str(p.parent) not in folders:
                    folders.append(str(p.parent))
                continue
            stack.append(found.resolve())
    return folders


def is_cuda_header(path: Path) -> bool:
    """A C++ header that defines or declares a ``__global__`` function outside its comments."""
    if path.suffix not in KERNEL_HEADER_SUFFIXES:
        return False
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if "__global__" not in text:
        return False
    from .runtime.source import mask_source
    return _GLOBAL.search(mask_source(text)) is not None


class UsageError(Exception):
    """A problem with the command line or the paths given: exit status 2."""


@dataclass(frozen=True)
class SourceFile:
    path: Path  # absolute
    rel: Path  # relative to the conversion root, mirrored under OUT


@dataclass
class KernelResult:
    file: str
    kernel: str
    line: int
    form: str
    reason: str
    diagnostics: list[Diagnostic]
    template_instances: list[list[str]]
    params: list[dict]
    launches: list[dict]
    tolerance: str | None = None  # the lift's own tolerance class (tf32), when looser than the spec's
    spec_missing: list = field(default_factory=list)  # what a spec must state (no spec, none derivable)
    check: dict = field(default_factory=lambda: {"device": None, "status": "skipped",
                                                 "max_abs_err": None, "max_rel_err": None,
                                                 "message": "not requested (use --check cpu|cuda)"})


@dataclass
class FileResult:
    source: SourceFile
    output: str | None
    kernels: list[KernelResult]
    diagnostics: list[Diagnostic]  # file-level (not inside a kernel)
    seconds: float
    lines_in: int = 0
    lines_out: int = 0
    original: str | None = None  # the copy of the source inside OUT
    spec: str | None = None  # the copy of its spec (NAME.toml) inside OUT


def copy_original(out_dir: Path, src: SourceFile) -> tuple[str, str | None]:
    """Copy the source (and its spec beside it) into OUT, so OUT can be checked elsewhere."""
    import shutil

    target = safe_output(out_dir, src.rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.resolve() != src.path.resolve():
        shutil.copyfile(src.path, target)
    spec = src.path.with_suffix(".toml")
    spec_rel = None
    if has_spec(src.path):
        spec_rel = src.rel.with_suffix(".toml")
        spec_target = safe_output(out_dir, spec_rel)
        if spec_target.resolve() != spec.resolve():
            shutil.copyfile(spec, spec_target)
    return str(src.rel), (str(spec_rel) if spec_rel else None)


def derive_specs(out_dir: Path, src: SourceFile, parsed: ParsedFile, kernels: list[KernelResult],
                 tables: list[dict] | None = None) -> str | None:
    """Without a spec beside the source: write ``OUT/<name>.auto.toml`` from the launch sites
    (see :mod:`.autospec`; ``tables`` where :func:`spec_tables` has found them already, in a
    worker) and return its path inside OUT."""
    from .autospec import to_toml
    if tables is None:
        tables = spec_tables(parsed, kernels)
    if not tables:
        return None
    rel = src.rel.with_suffix(".auto.toml")
    target = safe_output(out_dir, rel)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(to_toml(tables, src.rel.name))
    return str(rel)


def has_spec(path: Path) -> bool:
    """A spec file (``NAME.toml``) beside the source: the check reads it, none is derived."""
    return path.with_suffix(".toml").is_file()


def spec_tables(parsed: ParsedFile, kernels: list[KernelResult]) -> list[dict]:
    """The ``[[kernel]]`` tables the file's launch sites give (:mod:`.autospec`); kernels they
    cannot cover get ``spec_missing``."""
    from .autospec import derive
    tables = []
    by_name = {k.kernel: k for k in kernels}
    for fn in parsed.unit.kernels:
        try:
            table, missing = derive(fn, parsed.unit)
        except Exception as exc:  # a bug here must not stop the conversion
            table, missing = None, [f"the launch configuration (cuda2tile could not read it: {exc})"]
        if table is not None:
            tables.append(table)
        elif fn.name in by_name:
            by_name[fn.name].spec_missing = missing
    return tables


def discover(paths: list[str], out_dir: Path, excludes: list[str]) -> list[SourceFile]:
    """The .cu/.cuh files under ``paths`` (and the C++ headers that define kernels,
    :func:`is_cuda_header`), relative to their common root, minus OUT and excludes."""
    roots = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise UsageError(f"{p}: no such file or directory")
        roots.append(path.resolve())
    if len(roots) == 1:
        base = roots[0] if roots[0].is_dir() else roots[0].parent
    else:
        base = Path(os.path.commonpath([r if r.is_dir() else r.parent for r in roots]))
    out_resolved = out_dir.resolve()
    found: dict[Path, SourceFile] = {}
    for root in roots:
        candidates = [root] if root.is_file() else sorted(
            p for p in root.rglob("*") if (p.suffix in SOURCE_SUFFIXES or is_cuda_header(p)) and p.is_file())
        for path in candidates:
            if path.is_relative_to(out_resolved):
                continue
            rel = path.relative_to(base)
            if any(fnmatch.fnmatch(str(rel), g) or fnmatch.fnmatch(path.name, g) for g in excludes):
                continue
            found.setdefault(path, SourceFile(path, rel))
    return sorted(found.values(), key=lambda s: str(s.rel))


def split_unnamable(files: list[SourceFile]) -> tuple[list[SourceFile], list[SourceFile]]:
    """(the files the reports can name, those whose path is not UTF-8: M9008)."""
    good, bad = [], []
    for src in files:
        try:
            str(src.path).encode("utf-8")
            good.append(src)
        except UnicodeEncodeError:
            bad.append(src)
    return good, bad


def module_path(rel: Path) -> Path:
    """``dir/my-kernels.cu`` -> ``dir/my_kernels.py``; headers get their suffix's name
    (``_cuh``, ``_h``, ``_hpp``...)."""
    stem = re.sub(r"\W", "_", rel.stem)
    if stem[:1].isdigit():
        stem = "_" + stem
    if rel.suffix in (".cuh",) + KERNEL_HEADER_SUFFIXES:
        stem += "_" + rel.suffix[1:]
    return rel.with_name(stem + ".py")


class ModuleNames:
    """Module names handed out in one conversion: a second source whose name maps to a module
    already taken (``a-b.cu`` after ``a_b.cu``) gets ``a_b_2.py`` and warning M9007."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def claim(self, src: SourceFile) -> tuple[Path, Diagnostic | None]:
        rel = module_path(src.rel)
        first, n = rel, 1
        while rel.as_posix().casefold() in self.taken:
            n += 1
            rel = first.with_name(f"{first.stem}_{n}{first.suffix}")
        self.taken.add(rel.as_posix().casefold())
        if rel == first:
            return rel, None
        return rel, make("M9007", Span.point(str(src.path)),
                         f"its module name {first.as_posix()} is another source's; written as {rel.as_posix()}")


def build_record(files: list[SourceFile], options_for, base: ParseOptions, args, found_dirs=None) -> dict:
    """How OUT was made (report.json ``build``): the tool's version, the sources, the options, the
    command line's flags and each file's own (with its compile_commands.json entry's, and the
    program's folders its headers were found in, ``found_dirs``: report file -> folders), include
    folders made absolute. ``migrate check/bench --from OUT`` compiles the originals with them
    (:mod:`migrate.runtime.flags`)."""
    from . import __version__

    def flags(o: ParseOptions) -> dict:
        return {"include_dirs": [os.path.abspath(d) for d in o.include_dirs], "defines": list(o.defines),
                "std": o.std, "extra_args": list(o.extra_args)}

    per_file = {}
    for src in files:
        options = options_for(src.path)
        # the conversion root each file is given (header search) is not a flag of the build
        entry = dict(flags(options), compile_commands=dataclasses.replace(options, root=None)
                     != dataclasses.replace(base, root=None))
        for folder in (found_dirs or {}).get(str(src.rel), ()):
            if folder not in entry["include_dirs"]:
                entry["include_dirs"].append(folder)
        per_file[str(src.rel)] = entry
    return {"tool": "cuda2tile", "version": __version__,
            "paths": [os.path.abspath(p) for p in args.paths], **flags(base),
            "compile_commands": os.path.abspath(args.compdb) if args.compdb else None,
            "options": {"exclude": list(args.exclude), "no_lift": bool(args.no_lift),
                        "allow_tf32": bool(args.allow_tf32), "keep_original_code": bool(args.keep_original_code),
                        "max_file_size": args.max_file_size,
                        # hybrid kernels built with nvcc, those that did not build demoted (cli._verify_hybrid)
                        "verify_hybrid": bool(getattr(args, "verify_hybrid", False))},
            "files": per_file}


def safe_output(out_dir: Path, rel: Path) -> Path:
    """The output path for ``rel``; refuses anything that would land outside ``out_dir``."""
    target = (out_dir / rel).resolve()
    if not target.is_relative_to(out_dir.resolve()):
        raise UsageError(f"refusing to write outside the output folder: {target}")
    return target


def analyse(parsed: ParsedFile, display: str) -> tuple[list[KernelResult], list[Diagnostic]]:
    """Per-kernel results (form, diagnostics, instances) of one parsed file."""
    unit = parsed.unit
    kernels = []
    for k in unit.kernels:
        diags = parsed.by_kernel.get(k.name, [])
        # the pipeline decides the form (convert_file); until then a kernel is not migrated
        kernels.append(KernelResult(
            file=display, kernel=k.name, line=k.span.line, form="unsupported", reason="not emitted",
            diagnostics=diags,
            template_instances=[list(i.args) for i in k.instantiations],
            params=[{"name": p.name, "type": str(p.type), "const": p.const, "restrict": p.restrict}
                    for p in k.params],
            launches=[_launch_json(s) for s in unit.launches if s.kernel == k.name]))
    return kernels, parsed.file_diagnostics()


#: the module the parse workers run
PARSE_WORKER = "migrate.parse_worker"


def start_workers() -> None:
    """Start the parse workers' fork server in the background: its imports (half a second of a
    core) overlap what the caller does before :func:`parse_all` (finding the files, their
    includers) instead of delaying the first file."""
    from .runtime.batch import start_server
    start_server(PARSE_WORKER)


def preload() -> None:
    """Import what parsing and converting a file use (libclang, the analysis, the emitter): a
    parse worker does it before its first file's time starts (``migrate.parse_worker``)."""
    from . import pipeline  # noqa: F401
    from .parse import frontend  # noqa: F401


def convert_file(parsed: ParsedFile, display: str, keep_original: bool = False,
                 no_lift: frozenset = frozenset(), lift: bool = True, allow_tf32: bool = False,
                 no_hybrid: dict | None = None) -> tuple[list[KernelResult], list[Diagnostic], str]:
    """Analyse and emit one parsed file: per-kernel results, file diagnostics, module text.
    Kernels named in ``no_lift`` (every kernel, without ``lift``) keep the portable form even
    where a lift applies; kernels in ``no_hybrid`` (name -> why: nvcc did not build the wrapper)
    stay unsupported where they would be kept as CUDA."""
    from .emit.hybrid import HybridContext
    from .pipeline import Options, migrate_unit

    kernels, file_diags = analyse(parsed, display)
    build = parsed.build

    def own_folder() -> tuple[str, ...]:  # asked only where a kernel is kept as CUDA
        found = uncopied_header_folders(Path(build.includer or parsed.path))  # (its includer's folders too)
        return tuple(dict.fromkeys([str(Path(parsed.path).resolve().parent), *found])) if found else ()
    hybrid = HybridContext(
        display, parsed.path, build.includer, tuple(build.include_dirs), build.defines,
        dict(parsed.kernel_namespaces), frozenset(parsed.specialised_kernels), dict(no_hybrid or {}), own_folder)
    try:
        options = Options(lift=lift, no_lift=frozenset(no_lift), allow_tf32=allow_tf32, keep_original=keep_original)
        module = migrate_unit(parsed.unit, display, parsed.by_kernel, options, hybrid)
    except Exception:  # a bug in the emitter: the file's kernels are reported, never a crash
        message = "internal error while emitting: " + traceback.format_exc(limit=3).strip().splitlines()[-1]
        diag = make("M9001", Span.point(parsed.path), message)
        for k in kernels:
            k.form, k.reason = "unsupported", message
            k.diagnostics.append(diag)
        return kernels, file_diags, f'"""cuda2tile could not emit {display}: {message}"""\n'
    by_name = {out.name: out for out in module.kernels}
    for k in kernels:
        out = by_name.get(k.kernel)
        if out is None:
            continue
        k.form, k.reason = str(out.form), out.reason
        k.tolerance = out.signature.tolerance if out.signature is not None else None
        # a template converted per instance: its instances' diagnostics stand for the generic model's
        k.diagnostics = list(out.diagnostics) if out.instances is not None else k.diagnostics + out.diagnostics
    return kernels, file_diags, module.text


def _launch_json(site: m.LaunchSite) -> dict:
    def text(e):
        return e.text if e is not None else None
    return {"line": site.span.line, "caller": site.caller, "template_args": list(site.template_args),
            "grid": text(site.grid), "block": text(site.block), "shared_bytes": text(site.shared_bytes),
            "stream": text(site.stream), "args": [a.text for a in site.args]}


def _parse_job(path: str, options: ParseOptions) -> ParsedFile:
    try:
        return parse_file(path, options)
    except Exception:  # a bug in the tool: report it for this file, never crash the run
        diag = make("M9001", Span.point(path), "internal error while parsing: "
                    + traceback.format_exc(limit=3).strip().splitlines()[-1])
        return ParsedFile(path, m.TranslationUnit(path, (), (), (), ()), [diag])


def parse_all(files: list[SourceFile], options_for, jobs: int, on_done=None, *, timeout: float | None = None,
              max_memory: int | None = -1, convert: dict | None = None,
              converted: dict | None = None, lean: bool = False) -> dict[Path, ParsedFile]:
    """Parse every file in ``jobs`` worker processes (:mod:`.parse_worker`), each file within
    ``timeout`` s and ``max_memory`` bytes (defaults: :mod:`.runtime.limits`); a file that hangs,
    runs out of memory or crashes its worker costs only itself (M4013, M4014, M9030).
    With ``convert`` (:func:`convert_file`'s keyword arguments) the workers also analyse and emit
    each parsed file, in parallel, and ``converted`` receives ``path -> convert_file(...)``; with
    ``lean`` too, the parsed files come back without the bodies of their functions (a caller that
    checks nothing needs only the signatures and launch sites; the bodies cost a fifth of a pool's
    conversion time to send between the processes)."""
    import tempfile
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from .runtime import limits
    from .runtime.batch import run_batch

    timeout = limits.DEFAULT_TIMEOUT if timeout is None else timeout
    max_memory = limits.max_memory() if max_memory == -1 else max_memory
    by_key = {str(src.path): src for src in files}
    results: dict[Path, ParsedFile] = {}
    lock = threading.Lock()

    def done(key, entry):
        src = by_key[key]
        with lock:
            results[src.path] = _parsed_or_diagnostic(key, entry, timeout, max_memory)
            if converted is not None and entry.get("converted") is not None:
                converted[src.path] = entry["converted"]
        if on_done:
            on_done(src)

    def batch(runs: list[dict], claims: str | None = None):
        run_batch(PARSE_WORKER, None, runs, timeout=timeout, max_memory=max_memory,
                  startup=max(timeout, 120.0), on_result=done, claims=claims, fork=True, env=env)

    from .parse.clang import SHARED_PCH_ENV
    jobs = max(1, min(jobs, len(files)))
    # every worker goes down one list, largest files first, each taking the next file no other
    # has taken: they finish together, whichever files turn out slow
    ordered = files if jobs == 1 else sorted(files, key=_size, reverse=True)
    runs = [{"key": str(src.path), "options": options_for(src.path),
             **({"convert": convert, "display": str(src.rel), "lean": lean} if convert is not None else {})}
            for src in ordered]
    # the workers share the preludes they precompile (one per set of flags: parse.clang)
    with tempfile.TemporaryDirectory(prefix="c2t-pch-") as pch:
        env = {**os.environ, SHARED_PCH_ENV: pch}
        if jobs == 1:
            batch(runs)
            return results
        with tempfile.TemporaryDirectory(prefix="c2t-claims-") as claims, \
                ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(lambda _: batch(runs, claims), range(jobs)))
    return results


def _size(src: SourceFile) -> int:
    try:
        return os.path.getsize(src.path)
    except OSError:
        return 0


def _parsed_or_diagnostic(path: str, entry: dict, timeout: float, max_memory: int | None) -> ParsedFile:
    from .runtime.limits import show_memory

    if entry.get("status") == "ok":
        return entry["parsed"]
    status = entry.get("status")
    if status == "timeout":
        diag = make("M4013", Span.point(path), f"parsing and converting took longer than {timeout:g} s "
                                              "(--timeout); an exponentially expanding macro or a huge include?")
    elif status == "memory":
        diag = make("M4014", Span.point(path), "parsing and converting ran out of memory (limit "
                                              f"{show_memory(max_memory)}, --max-memory); an exponentially "
                                              "expanding macro?")
    else:
        diag = make("M9030", Span.point(path), f"the parser process died on this file: {entry.get('message', '')}")
    return ParsedFile(path, m.TranslationUnit(path, (), (), (), ()), [diag])


def count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def error_count(results: list[FileResult]) -> int:
    return sum(1 for r in results for d in r.diagnostics if d.severity is Severity.ERROR)
