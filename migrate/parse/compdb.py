"""Read a compilation database (``compile_commands.json``) the way clang tools do (``-p DIR``).

Only the flags that change how a file parses are kept: include folders, macros, the language
standard and forced includes. Everything else (optimisation, code generation, output) is dropped.
"""
from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from pathlib import Path

_WITH_VALUE = {"-I": "I", "-isystem": "isystem", "-D": "D", "-U": "U", "-include": "include",
               "-iquote": "iquote", "-idirafter": "idirafter"}


class CompDbError(Exception):
    pass


@dataclass(frozen=True)
class FileFlags:
    include_dirs: tuple[str, ...]
    defines: tuple[str, ...]
    std: str | None
    extra: tuple[str, ...]


def load(directory: str | Path) -> dict[str, FileFlags]:
    """Map each absolute source path in ``DIR/compile_commands.json`` to its parse flags."""
    return {source: parse_flags(args[1:] if args else [], workdir)
            for source, (args, workdir) in commands(directory).items()}


def commands(directory: str | Path) -> dict[str, tuple[list[str], Path]]:
    """Each absolute source path in ``DIR/compile_commands.json`` -> (its compile command's
    arguments, the folder it runs in); :class:`CompDbError` where the file cannot be read as one."""
    path = Path(directory) / "compile_commands.json"
    try:
        entries = json.loads(path.read_text())
    except OSError as exc:
        raise CompDbError(f"cannot read {path}: {exc.strerror or exc}") from None
    except json.JSONDecodeError as exc:
        raise CompDbError(f"{path} is not valid JSON: {exc}") from None
    if not isinstance(entries, list):
        raise CompDbError(f"{path} must hold a JSON list of compile commands")
    table = {}
    for entry in entries:
        if not isinstance(entry, dict) or "file" not in entry:
            raise CompDbError(f"{path}: every entry needs 'file' and 'command' or 'arguments'")
        workdir = Path(entry.get("directory", path.parent))
        args = entry.get("arguments") or shlex.split(entry.get("command", ""))
        source = Path(entry["file"])
        if not source.is_absolute():
            source = workdir / source
        table[str(source.resolve())] = (list(args), workdir)
    return table


def parse_flags(args: list[str], workdir: Path) -> FileFlags:
    includes, defines, extra, std = [], [], [], None
    i = 0
    while i < len(args):
        arg = args[i]
        flag, value = None, None
        for prefix in _WITH_VALUE:
            if arg == prefix and i + 1 < len(args):
                flag, value = prefix, args[i + 1]
                i += 1
                break
            if arg.startswith(prefix) and arg != prefix and prefix in ("-I", "-D", "-U"):
                flag, value = prefix, arg[len(prefix):]
                break
        if flag in ("-I", "-isystem", "-iquote", "-idirafter"):
            folder = Path(value)
            includes.append(str(folder if folder.is_absolute() else (workdir / folder).resolve()))
        elif flag == "-D":
            defines.append(value)
        elif flag == "-U":
            extra.append(f"-U{value}")
        elif flag == "-include":
            header = Path(value)
            extra += ["-include", str(header if header.is_absolute() else workdir / header)]
        elif arg.startswith("-std="):
            std = arg.split("=", 1)[1]
        i += 1
    return FileFlags(tuple(includes), tuple(defines), std, tuple(extra))
