"""The programs of a codebase: which translation units link into one executable with a ``main()``.

A replayed check (``--run``) runs a program's own ``main()``, so it needs the program, not one
file: real codebases keep their kernels in ``kernels.cu`` and ``main()`` in ``main.cu``, with host
helpers in ``.cpp`` and ``.c`` files. With a compilation database (``-p DIR``) a program is the
units one build directory compiles (one Makefile); without one, the source files of the folder
of a file that defines ``main()`` that no other file there includes. Each converted file belongs
to the program whose units include it (itself or through quoted ``#include``\\ s).

``cuda2tile.toml`` beside a program's main file gives its run settings::

    [run]
    args = "-n 4096 data/input.txt"   # the arguments of its main()
    timeout = 60                       # seconds the recording run may take
    cwd = "."                          # its working folder, relative to the main file's folder

The list goes to ``report.json`` as ``programs`` (see :func:`to_json`) for the checker.
"""
from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from .runtime.source import find_main, find_quoted_includes

__all__ = ["Program", "SETTINGS_FILE", "UNIT_SUFFIXES", "find_programs", "read_settings"]

#: the file of a program's run settings, beside its main file
SETTINGS_FILE = "cuda2tile.toml"
#: sources a build compiles as translation units
UNIT_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
_RUN_KEYS = {"args": str, "timeout": (int, float), "cwd": str}


@dataclass
class Program:
    main: Path                                   # the unit that defines main()
    units: list[Path] = field(default_factory=list)   # its other translation units
    files: list[str] = field(default_factory=list)    # the converted files (report "file") it holds
    run: dict = field(default_factory=dict)      # [run] of cuda2tile.toml: args, timeout, cwd
    problem: str = ""                            # why the settings could not be read

    def to_json(self, base: Path) -> dict:
        def shown(p: Path) -> str:
            try:
                return p.relative_to(base).as_posix()
            except ValueError:
                return str(p)
        return {"main": shown(self.main), "sources": [str(self.main), *map(str, self.units)],
                "units": [shown(u) for u in self.units], "files": sorted(self.files), "run": self.run,
                **({"problem": self.problem} if self.problem else {})}


def read_settings(folder: Path) -> tuple[dict, str]:
    """The ``[run]`` table of ``folder/cuda2tile.toml`` (empty when there is none) and the problem
    with it, if any: a malformed file or a wrong key is reported, never raised."""
    import tomllib

    path = folder / SETTINGS_FILE
    if not path.is_file():
        return {}, ""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8", errors="replace"))
    except (tomllib.TOMLDecodeError, OSError) as exc:
        return {}, f"{path}: not valid TOML: {exc}"
    run = data.get("run", {})
    if not isinstance(run, dict):
        return {}, f"{path}: [run] must be a table"
    for key, value in run.items():
        want = _RUN_KEYS.get(key)
        if want is None:
            return {}, f"{path}: unknown key run.{key} (known: {', '.join(_RUN_KEYS)})"
        if not isinstance(value, want) or isinstance(value, bool):
            return {}, f"{path}: run.{key} has the wrong type ({type(value).__name__})"
    if "timeout" in run and not 0 < run["timeout"] <= 86400:
        return {}, f"{path}: run.timeout must be between 0 and 86400 seconds"
    if "args" in run:
        try:
            shlex.split(run["args"])
        except ValueError as exc:
            return {}, f"{path}: run.args cannot be split into arguments: {exc}"
    if "cwd" in run and (Path(run["cwd"]).is_absolute() or ".." in Path(run["cwd"]).parts):
        return {}, f"{path}: run.cwd must be a folder inside the program's folder"
    return dict(run), ""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _included(unit: Path, include_dirs=(), known: dict | None = None) -> set[Path]:
    """``unit`` and the local files it includes, recursively (quoted includes); ``known`` keeps
    each file's own includes between calls (a pool's programs share their helper headers)."""
    known = {} if known is None else known
    seen: set[Path] = set()
    todo = [unit.resolve()]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        direct = known.get(p)
        if direct is None:
            direct = known[p] = _direct_includes(p, include_dirs)
        todo.extend(direct)
    return seen


def _direct_includes(p: Path, include_dirs) -> list[Path]:
    out = []
    for inc in find_quoted_includes(_read(p)):
        for base in (p.parent, *map(Path, include_dirs)):
            q = (base / inc).resolve()
            if q.is_file():
                out.append(q)
                break
    return out


def _groups_from_compdb(directory: Path) -> list[list[Path]]:
    """The translation units of ``DIR/compile_commands.json``, one list per build directory."""
    try:
        entries = json.loads((directory / "compile_commands.json").read_text())
    except (OSError, json.JSONDecodeError):
        return []
    groups: dict[str, list[Path]] = {}
    for e in entries if isinstance(entries, list) else []:
        if not isinstance(e, dict) or "file" not in e:
            continue
        workdir = Path(e.get("directory", directory))
        src = Path(e["file"])
        src = (src if src.is_absolute() else workdir / src).resolve()
        if src.suffix in UNIT_SUFFIXES and src.is_file():
            groups.setdefault(str(workdir), [])
            if src not in groups[str(workdir)]:
                groups[str(workdir)].append(src)
    return list(groups.values())


def _groups_from_folders(sources: list[Path]) -> list[list[Path]]:
    """Without a build's list: the sources of each folder holding a main(), less those another
    source of the folder includes (a ``kernels.cu`` that ``main.cu`` includes is no unit)."""
    groups = []
    for folder in sorted({p.parent for p in sources}):
        if not any(find_main(_read(p)) is not None for p in sources if p.parent == folder):
            continue
        cands = sorted(p.resolve() for p in folder.iterdir() if p.suffix in UNIT_SUFFIXES and p.is_file())
        included, known = set(), {}
        for c in cands:
            included |= _included(c, known=known) - {c}
        groups.append([c for c in cands if c not in included])
    return groups


def find_programs(sources: list[tuple[Path, str]], compdb_dir: str | os.PathLike | None = None,
                  include_dirs=()) -> list[Program]:
    """The programs with a ``main()`` that hold the converted ``sources`` ((path, report file)
    pairs). A build directory with several mains makes one program per main, each with the
    directory's other units."""
    groups = _groups_from_compdb(Path(compdb_dir)) if compdb_dir else []
    if not groups:
        groups = _groups_from_folders([p for p, _ in sources])
    by_path = {p.resolve(): rel for p, rel in sources}
    programs = []
    known: dict[Path, list[Path]] = {}
    for units in groups:
        mains = [u for u in units if find_main(_read(u)) is not None]
        others = [u for u in units if u not in mains]
        reached = {u: _included(u, include_dirs, known) for u in units}  # (a unit is in each main's program)
        for m in mains:
            prog = Program(main=m, units=list(others))
            reach = set()
            for u in [m, *others]:
                reach |= reached[u]
            prog.files = sorted(by_path[p] for p in reach if p in by_path)
            if not prog.files:
                continue
            prog.run, prog.problem = read_settings(m.parent)
            programs.append(prog)
    return programs
