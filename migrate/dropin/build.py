"""``migrate build OUT -o DIR``: each program of an output folder of ``migrate convert`` rebuilt
with its migrated kernels.

For each program with a ``main()`` (report.json ``programs``), ``DIR/<program>/`` receives:

- ``gen/<kernel>_v<i>.cu`` and ``.o``: each migrated kernel lowered by TileLang for one launch
  geometry (:mod:`.geometry`) with TileLang's host launcher (:mod:`.lower`), built with TileLang's
  nvcc flags; ``gen/c2t_dropin.h``/``.cu``: what the shims share (:mod:`.shim`);
- ``src/``: the program's converted files, each migrated kernel followed by its launch shim and
  each launch of it written ``kernel<<<g, b, s, st>>>(args)`` rewritten into a call of the shim;
  every other byte as in the source. A kernel that is not migrated (``hybrid``, ``unsupported``)
  keeps its CUDA and its launches;
- ``original`` and ``rebuilt``: the two executables, built with nvcc for ``--arch`` with the
  program's recorded flags; ``build.sh``: their command lines.

``DIR/build.json`` says per program whether each built (or nvcc's error) and per kernel which
variants were built and why a kernel or a launch runs the original. Nothing is written outside
DIR; no source is changed.
"""
from __future__ import annotations

import concurrent.futures as cf
import json
import os
import re
import shlex
from pathlib import Path

from . import geometry, nvcc, shim, sites
from .compare_output import tolerance_class
from .lower import VariantError, lower_variant

#: forms whose kernels are migrated (a drop-in build runs their TileLang)
MIGRATED_FORMS = ("tile", "portable", "simt")
#: seconds one nvcc command may take
NVCC_TIMEOUT = 600


def _read(path: Path) -> str:
    return path.read_bytes().decode("utf-8", errors="surrogateescape")


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode("utf-8", errors="surrogateescape"))


def _run(cmd: list[str], cwd: Path | None = None, tail: int = 4000) -> tuple[bool, str]:
    """(whether ``cmd`` succeeded, the tail of its output), started through runtime.limits (its
    own process group, killed past :data:`NVCC_TIMEOUT` or on SIGINT/SIGTERM)."""
    from migrate.runtime import limits

    try:
        status, out, err = limits.capture(cmd, timeout=NVCC_TIMEOUT, cwd=cwd)
    except OSError as exc:
        return False, str(exc)
    if status is None:
        return False, f"{Path(cmd[0]).name} took longer than {NVCC_TIMEOUT} s"
    return status == 0, (out + err)[-tail:]


def _compile_variant(v, obj: Path, arch: str) -> tuple[bool, str]:
    ok, log = _run(nvcc.variant_command(v.source, obj, arch, v.fast_math))
    if not ok:
        return ok, log
    ok, listing = _run(nvcc.strong_symbols_command(obj), tail=1 << 30)
    if not ok:
        return ok, listing
    strong = [parts[2] for parts in (line.split() for line in listing.splitlines())
              if len(parts) == 3 and parts[1] in "TDBRG" and not parts[2].startswith(v.prefix + "_")]
    if not strong:
        return True, ""
    listed = obj.with_suffix(".local")
    listed.write_text("\n".join(strong) + "\n")
    return _run(nvcc.localize_command(obj, listed))


_COMPDB: dict = {}


def _compile_commands(folder: str) -> dict:
    """absolute source path -> its compile command's arguments, of ``folder/compile_commands.json``
    as the conversion read it (``-p``: :func:`migrate.parse.compdb.commands`; read once, {} where
    it cannot be read)."""
    from ..parse.compdb import CompDbError, commands

    if folder not in _COMPDB:
        try:
            _COMPDB[folder] = {source: args for source, (args, _workdir) in commands(folder).items()}
        except (CompDbError, ValueError):
            _COMPDB[folder] = {}
    return _COMPDB[folder]


def _is_template(k: dict) -> bool:
    """Whether a report.json kernel row is a kernel template (instances or template launches)."""
    return bool(k.get("template_instances")) or any(l.get("template_args") for l in k.get("launches", []))


def _split(args: str) -> list[str]:
    """A command line's words (a Makefile's quoting that the shell would reject: its words)."""
    try:
        return shlex.split(args)
    except ValueError:
        return args.split()


def _has_directive(launch) -> bool:
    """Whether a launch's configuration or arguments hold a preprocessor directive line (pad's
    ``#ifdef DYNAMIC_PARTITION`` around an argument): its text cannot be moved into a call."""
    return any(re.search(r"(^|\n)\s*#", text) for text in (*launch.config, launch.args))


def _ident(text: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in text)


def program_dir(prog: dict) -> Path:
    """DIR/<this> for a program: its main's path without the suffix."""
    return Path(prog["main"]).with_suffix("")


class ProgramBuild:
    """One program's drop-in build (see the module doc)."""

    def __init__(self, out_dir: Path, report: dict, prog: dict, dest: Path, arch: str, traces: dict):
        self.out_dir, self.report, self.prog, self.arch, self.traces = out_dir, report, prog, arch, traces
        self.dest = dest / program_dir(prog)
        self.files = {f["file"]: f for f in report.get("files", [])}
        self.row: dict = {"program": prog["main"], "dir": str(program_dir(prog)), "kernels": []}
        self.modules: dict = {}

    # -- where things are -------------------------------------------------------------------
    def _source_text_path(self, file: str) -> Path:
        entry = self.files.get(file, {})
        copy = self.out_dir / entry["original"] if entry.get("original") else None
        if copy is not None and copy.is_file():
            return copy
        return Path(entry.get("source", self.out_dir / file))

    def _original_source(self, file: str) -> Path:
        entry = self.files.get(file, {})
        src = Path(entry.get("source", ""))
        return src if entry.get("source") and src.is_file() else self._source_text_path(file)

    def _root(self) -> Path:
        parents = [Path(f).parent for f in self.prog.get("files", [])] or [Path(self.prog["main"]).parent]
        root = Path(os.path.commonpath([str(p) for p in parents])) if parents else Path(".")
        return root

    def _src_path(self, file: str) -> Path:
        rel = Path(file)
        try:
            rel = rel.relative_to(self._root())
        except ValueError:
            pass
        return self.dest / "src" / rel

    def _units(self) -> list[str]:
        return [self.prog["main"], *self.prog.get("units", [])]

    def _unit_original(self, index: int, unit: str) -> Path:
        """The original of the program's ``index``-th unit (main first): report.json's
        ``sources`` list them in that order; a converted file also has its copy in OUT."""
        sources = self.prog.get("sources", [])
        if index < len(sources) and Path(sources[index]).is_file():
            return Path(sources[index])
        return self._original_source(unit)

    def _flags(self) -> list[str]:
        build = self.report.get("build", {})
        per_file = build.get("files", {}).get(self.prog["main"], {})
        include_dirs = list(per_file.get("include_dirs", [])) + list((self.prog.get("build") or {}).get("include_dirs", []))
        defines = list(per_file.get("defines", [])) + list((self.prog.get("build") or {}).get("defines", []))
        # the folders holding the original sources: their quoted includes that were not converted
        for f in self.prog.get("files", []):
            for folder in (self._original_source(f).parent, self._source_text_path(f).parent):
                if str(folder) not in include_dirs:
                    include_dirs.append(str(folder))
        seen_d, uniq_d = set(), []
        for d in defines:
            if d not in seen_d:
                seen_d.add(d)
                uniq_d.append(d)
        return nvcc.program_flags(per_file.get("std") or build.get("std"), include_dirs, uniq_d,
                                  per_file.get("extra_args", [])) + nvcc.kept_flags(self._compile_args())

    def _compile_args(self) -> list[str]:
        """The arguments of the main unit's own compile command (the compile_commands.json the
        conversion read, ``-p``): [] where there is none."""
        folder = self.report.get("build", {}).get("compile_commands")
        if not folder:
            return []
        entries = _compile_commands(str(folder))
        return entries.get(str(self._original_source(self.prog["main"]).resolve()), [])

    # -- the kernels --------------------------------------------------------------------------
    def _kernel_rows(self) -> list[dict]:
        files = set(self.prog.get("files", []))
        return [k for k in self.report.get("kernels", []) if k.get("file") in files]

    def _module(self, file: str):
        """The emitted module of ``file`` (loaded once)."""
        entry = self.files.get(file, {})
        path = self.out_dir / entry.get("output", "")
        if path not in self.modules:
            from migrate.runtime.tilelang_side import load_module
            self.modules[path] = load_module(path)
        return self.modules[path]

    def needs_recording(self) -> bool:
        """Whether a migrated kernel's launch sites give no constant geometry (its launcher has no
        default): only a recorded run can say what to build it for."""
        for k in self._kernel_rows():
            if k.get("form") not in MIGRATED_FORMS or _is_template(k):
                continue
            try:
                module = self._module(k["file"])
            except Exception:  # noqa: BLE001 - reported when the kernels are lowered
                continue
            if not geometry.default_trusted(geometry.launcher_default(module, k["kernel"]), k.get("launches", [])):
                return True
        return False

    def lower(self) -> list[tuple[dict, list]]:
        """(kernel row, its variants) per migrated kernel; the variants lowered and written."""
        out = []
        gen = self.dest / "gen"
        for k in self._kernel_rows():
            row = {"file": k["file"], "kernel": k["kernel"], "line": k.get("line"), "form": k.get("form"),
                   "variants": [], "launches": [], "runs": "original"}
            self.row["kernels"].append(row)
            if k.get("form") not in MIGRATED_FORMS:
                row["why_original"] = f"not migrated (form {k.get('form')}): its CUDA is kept"
                continue
            if _is_template(k):
                row["why_original"] = "a kernel template: its instances are not built as drop-in variants yet"
                continue
            entry = self.files.get(k["file"], {})
            try:
                module = self._module(k["file"])
                sig = module.KERNELS[k["kernel"]]
            except Exception as exc:  # noqa: BLE001 - a module that does not import: that kernel runs the original
                row["why_original"] = f"its module {entry.get('output')} does not load: {type(exc).__name__}: {exc}"
                continue
            shapes = geometry.geometries(module, k["kernel"], self.traces, k.get("launches", []))
            if not shapes:
                row["why_original"] = ("no launch geometry known at build time (the launch sites give no constant "
                                       "and no recorded run names one): pass --traces or --record cpu")
                continue
            variants = []
            for i, (grid, block, shared) in enumerate(shapes):
                prefix = f"c2t_{_ident(k['kernel'])}_v{i}"
                v_row = {"grid": list(grid), "block": list(block), "shared_bytes": shared}
                row["variants"].append(v_row)
                try:
                    v = lower_variant(sig, k["kernel"], prefix, grid, block, shared, self.arch,
                                      [p.get("name", "") for p in k.get("params", [])])
                except VariantError as exc:
                    v_row.update(status="refused", message=str(exc))
                    continue
                except Exception as exc:  # noqa: BLE001 - TileLang refusing: this geometry runs the original
                    v_row.update(status="lowering failed", message=f"{type(exc).__name__}: {str(exc)[-600:]}")
                    continue
                v.fast_math = any(key.endswith("enable_fast_math") and val for key, val in sig.pass_configs)
                v.source = gen / f"{prefix}.cu"
                _write(v.source, v.code)
                v.row = v_row
                v_row.update(status="lowered", source=str(v.source.relative_to(self.dest)))
                variants.append(v)
            out.append((row, variants))
        return out

    def compile_variants(self, lowered, pool) -> None:
        futures = {}
        for _row, variants in lowered:
            for v in variants:
                obj = v.source.with_suffix(".o")
                futures[pool.submit(_compile_variant, v, obj, self.arch)] = (v, obj)
        for fut, (v, obj) in futures.items():
            ok, log = fut.result()
            v.object = obj if ok else None
            v.row["status"] = "built" if ok else "nvcc failed"
            if not ok:
                v.row["message"] = log

    # -- the sources --------------------------------------------------------------------------
    def rewrite(self, lowered) -> list[str]:
        """Write src/: the program's files with shims and launches rewritten; the units to compile."""
        files = list(self.prog.get("files", []))
        texts = {f: _read(self._source_text_path(f)) for f in files}
        edits: dict[str, list] = {f: [] for f in files}
        taken: dict[str, set] = {f: set() for f in files}
        for row, variants in lowered:
            built = [v for v in variants if getattr(v, "object", None) is not None]
            if not built:
                row.setdefault("why_original", "no variant was built (see variants)")
                continue
            k = next(x for x in self._kernel_rows() if x["file"] == row["file"] and x["kernel"] == row["kernel"])
            text = texts[row["file"]]
            definition = sites.definition(text, k["kernel"], int(k.get("line") or 0))
            names = [p.get("name", "") for p in k.get("params", [])]
            if definition is None:
                row["why_original"] = "its definition was not found in the source's text"
                continue
            if not all(names):
                row["why_original"] = "a parameter without a name"
                continue
            base = Path(row["file"]).name
            for launch in k.get("launches", []):
                line = int(launch.get("line") or 0)
                where = [row["file"]] + [f for f in files if f != row["file"]
                                         and (f'"{base}"' in texts[f] or f'/{base}"' in texts[f])]
                found = None
                for f in where:
                    lt = sites.launch_at(texts[f], k["kernel"], line)
                    if lt is not None and lt.start not in taken[f]:
                        found = (f, lt)
                        break
                entry = {"line": line, "caller": launch.get("caller", "")}
                if found is None:
                    entry["rewritten"] = False
                    entry["why"] = ("not written as kernel<<<...>>>(...) at its line (a macro, or in a unit that "
                                    "does not include the kernel's file): it runs the original, uncounted")
                elif found[1].template:
                    entry["rewritten"] = False
                    entry["why"] = "launched with template arguments"
                elif _has_directive(found[1]):
                    entry["rewritten"] = False
                    entry["why"] = ("a preprocessor directive inside its launch (#ifdef around an argument): "
                                    "it runs the original")
                else:
                    f, lt = found
                    taken[f].add(lt.start)
                    edits[f].append((lt.start, lt.end, shim.launch_call(k["kernel"], lt)))
                    entry["rewritten"] = True
                    entry["file"] = f
                row["launches"].append(entry)
            if not any(e.get("rewritten") for e in row["launches"]):
                row["why_original"] = "none of its launches could be rewritten"
                continue
            edits[row["file"]].append((definition.body_end, definition.body_end,
                                       shim.shim_text(k["kernel"], definition.params, names, built)))
            row["runs"] = "migrated"
            row["variants_built"] = len(built)
        for row in self.row["kernels"]:
            if row["runs"] != "migrated" and not row["launches"]:
                k = next(x for x in self._kernel_rows() if x["file"] == row["file"] and x["kernel"] == row["kernel"])
                row["launches"] = [{"line": int(l.get("line") or 0), "caller": l.get("caller", ""), "rewritten": False,
                                    "why": "its kernel runs the original"} for l in k.get("launches", [])]
        for f in files:
            out_path = self._src_path(f)
            _write(out_path, sites.apply_edits(texts[f], edits[f]))
        gen = self.dest / "gen"
        _write(gen / "c2t_dropin.h", shim.SUPPORT_HEADER)
        _write(gen / "c2t_dropin.cu", shim.SUPPORT_UNIT)
        converted = set(files)
        return [str(self._src_path(u)) if u in converted else str(self._unit_original(i, u))
                for i, u in enumerate(self._units())]

    # -- the executables ----------------------------------------------------------------------
    def commands(self, units: list[str], objects: list[Path]) -> tuple[list[str], list[str]]:
        flags = self._flags()
        originals = [str(self._unit_original(i, u)) for i, u in enumerate(self._units())]
        original = nvcc.program_command(originals, self.dest / "original", self.arch, flags)
        gen = self.dest / "gen"
        rebuilt = nvcc.program_command([*units, gen / "c2t_dropin.cu"], self.dest / "rebuilt", self.arch,
                                       [f"-I{gen}", *flags], objects, nvcc.REBUILT_LIBS)
        return original, rebuilt

    def build(self, pool) -> dict:
        self.dest.mkdir(parents=True, exist_ok=True)
        lowered = self.lower()
        self.compile_variants(lowered, pool)
        units = self.rewrite(lowered)
        objects = [v.object for row, variants in lowered if row.get("runs") == "migrated"
                   for v in variants if getattr(v, "object", None) is not None]
        original, rebuilt = self.commands(units, objects)
        _write(self.dest / "build.sh", "#!/bin/sh\n# written by migrate build\nset -e\n" +
               shlex.join(original) + "\n" + shlex.join(rebuilt) + "\n")
        f_orig, f_new = pool.submit(_run, original), pool.submit(_run, rebuilt)
        (ok_o, log_o), (ok_n, log_n) = f_orig.result(), f_new.result()
        self.row["original"] = {"built": ok_o, **({} if ok_o else {"error": log_o})}
        self.row["rebuilt"] = {"built": ok_n, **({} if ok_n else {"error": log_n})}
        self.row["status"] = "built" if ok_o and ok_n else \
            "original does not build" if not ok_o else "rebuilt does not build"
        migrated = [k for k in self.row["kernels"] if k["runs"] == "migrated"]
        self.row["summary"] = {"kernels": len(self.row["kernels"]), "migrated": len(migrated),
                               "variants": sum(k.get("variants_built", 0) for k in migrated),
                               "launch_sites_rewritten": sum(1 for k in migrated for e in k["launches"]
                                                             if e.get("rewritten")),
                               "launch_sites_left": sum(1 for k in self.row["kernels"] for e in k["launches"]
                                                        if not e.get("rewritten"))}
        self.row["run_args"] = (self.prog.get("run") or {}).get("args")
        # what migrate run needs beside the executables (it may run where OUT is not)
        runs = {(k["file"], k["kernel"]) for k in migrated}
        self.row["tolerance"] = tolerance_class([k for k in self._kernel_rows() if (k["file"], k["kernel"]) in runs])
        main_dir = self._original_source(self.prog["main"]).parent
        self.row["run_cwd"] = str(main_dir / ((self.prog.get("run") or {}).get("cwd", "") or "."))
        return self.row


#: distinct geometries of one kernel that ``--record cpu`` builds variants for (its first ones)
RECORD_GEOMETRIES = 4
#: bytes a geometry recording may write (it writes none: its launches are listed, not recorded)
RECORD_BUDGET = 1 << 20


def record_geometries(out_dir: Path, report: dict, prog: dict, dest: Path, args: list[str], timeout: float) -> tuple:
    """(kernel -> geometries, how the run went): the program's own run on the CPU executor, each
    launch's geometry listed and no kernel run (:mod:`migrate.runtime.traces` with no launch
    recorded and the others fast-forwarded past): only the host code runs, so that a program
    whose kernels take minutes on the CPU still names its geometries in seconds. A host that
    reads what a kernel wrote sees the bytes before it; the geometries it launches from them
    may differ from a real run's (those launches run the original kernel)."""
    from migrate.runtime.build import BuildError
    from migrate.runtime.cuda_cpu import compile_cpu
    from migrate.runtime.traces import record

    pb = ProgramBuild(out_dir, report, prog, dest, "", {})
    sources = [pb._unit_original(i, u) for i, u in enumerate(pb._units())]
    build = prog.get("build") or {}
    per_file = report.get("build", {}).get("files", {}).get(prog["main"], {})
    include_dirs = [*per_file.get("include_dirs", []), *build.get("include_dirs", []), str(sources[0].parent)]
    defines = [*per_file.get("defines", []), *build.get("defines", [])]
    try:
        lib = compile_cpu(sources[0], [], include_dirs=include_dirs, defines=defines, units=sources[1:])
    except BuildError as exc:
        return {}, f"the CPU executor does not build the program: {str(exc)[-300:]}"
    if not getattr(lib, "main_entry", None):
        return {}, "no main() to run"
    trace_dir = pb.dest / "traces"
    cwd = sources[0].parent / ((prog.get("run") or {}).get("cwd", "") or ".")
    rec = record(lib, args, trace_dir, limit=0, timeout=timeout, cwd=cwd, budget=RECORD_BUDGET,
                 packed=False, fast_forward=True)
    (trace_dir / "data.bin").unlink(missing_ok=True)  # the geometries are in the manifest
    shapes = {name: rows[:RECORD_GEOMETRIES] for name, rows in geometry.recorded(trace_dir).items()}
    how = "ended" if rec.status is not None else f"stopped after {timeout:g} s"
    return shapes, (f"its host code ran on the CPU executor, kernels skipped ({how}, status {rec.status}): "
                    f"{sum(map(len, shapes.values()))} geometries of {len(shapes)} kernels")


def table_args(prog: dict, table: dict | None) -> str | None:
    """A program's arguments in an arguments table (``migrate build --args-table``: a JSON object
    whose keys are a main's path, with or without its suffix, or the first folder of that path, as
    a pool of programs names them): None where the table does not name it."""
    if not table:
        return None
    main = str(prog.get("main", ""))
    for key in (main, str(program_dir(prog)), Path(main).parts[0] if Path(main).parts else ""):
        if key and isinstance(table.get(key), str):
            return table[key]
    return None


def main_programs(report: dict) -> list[dict]:
    """The programs with a ``main()`` that have at least one converted file."""
    return [p for p in report.get("programs", []) if p.get("main")]


def build_folder(out_dir: Path, dest: Path, arch: str = "sm_90a", jobs: int = 2, traces_dir: Path | None = None,
                 only: set | None = None, progress=None, record_on: str | None = None, run_args=None,
                 record_timeout: float = 300.0, args_table: dict | None = None) -> dict:
    """Build every program of ``out_dir`` into ``dest`` and write ``dest/build.json``. A program
    that ``args_table`` names (:func:`table_args`) records and runs with those arguments."""
    from migrate.runtime.checker import trace_stem

    report = json.loads((out_dir / "report.json").read_text())
    rows = []
    with cf.ThreadPoolExecutor(max(1, jobs)) as pool:
        for prog in main_programs(report):
            if only and prog["main"] not in only and str(program_dir(prog)) not in only:
                continue
            own_args = table_args(prog, args_table)
            stem = trace_stem(prog)
            tdir = (traces_dir / stem) if traces_dir is not None else (out_dir / "traces" / stem)
            traces = geometry.recorded(tdir)
            recorded_how = None
            pb = ProgramBuild(out_dir, report, prog, dest, arch, traces)
            if record_on == "cpu" and not traces and not pb.needs_recording():
                recorded_how = "not run: every migrated kernel's launch sites give its geometry"
            elif record_on == "cpu":
                args = run_args if run_args is not None else _split(own_args) if own_args is not None else \
                    _split((prog.get("run") or {}).get("args", ""))
                try:
                    more, recorded_how = record_geometries(out_dir, report, prog, dest, list(args), record_timeout)
                except Exception as exc:  # noqa: BLE001 - no recording: the launchers' defaults still build
                    more, recorded_how = {}, f"internal error recording: {type(exc).__name__}: {exc}"
                for name, shapes in more.items():
                    traces.setdefault(name, [])
                    traces[name] += [g for g in shapes if g not in traces[name]]
            try:
                row = pb.build(pool)
            except Exception as exc:  # noqa: BLE001 - one program's defect: reported, the rest go on
                row = pb.row
                row.update(status="error", error=f"internal error: {type(exc).__name__}: {exc}")
            if recorded_how is not None:
                row["recorded"] = recorded_how
            if own_args is not None:
                row["run_args"] = own_args
            rows.append(row)
            if progress is not None:
                progress(row)
    if only and (dest / "build.json").is_file():  # the programs built before keep their rows
        try:
            before = json.loads((dest / "build.json").read_text()).get("programs", [])
        except (OSError, json.JSONDecodeError):
            before = []
        done = {r["program"] for r in rows}
        rows = [r for r in before if r.get("program") not in done] + rows
        rows.sort(key=lambda r: r.get("program", ""))
    result = {"tool": "cuda2tile", "output": str(out_dir), "arch": arch, "programs": rows,
              "summary": {"programs": len(rows), "built": sum(r.get("status") == "built" for r in rows),
                          "failed": sum(r.get("status") != "built" for r in rows),
                          "kernels_migrated": sum(r.get("summary", {}).get("migrated", 0) for r in rows),
                          "kernels": sum(r.get("summary", {}).get("kernels", 0) for r in rows)}}
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "build.json").write_text(json.dumps(result, indent=1) + "\n")
    return result
