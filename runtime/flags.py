"""The flags an original is compiled with when a converted folder is checked or timed.

``migrate convert`` records in report.json, under ``build``, the include folders and macros each
file was converted with (``build.files[FILE]``: its ``-I``/``-D``, its compile_commands.json
entry's, absolute folders). A check or bench of that folder compiles each original with them, so
it compares the program that was migrated; flags given at check time are added (a given ``-D``
replaces the recorded value of the same macro; a given ``-I`` is searched first).
:func:`differences` says which given flags change what was recorded.
"""
from __future__ import annotations

import os


def _name_value(define: str) -> tuple[str, str]:
    name, _, value = define.partition("=")
    return name.strip(), (value if "=" in define else "1")


def _absolute(folder: str) -> str:
    return os.path.abspath(os.path.expanduser(folder))


def recorded(report: dict, file: str | None = None) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The (include folders, macros) ``file`` was converted with (the command line's when the
    file has no entry); empty for a folder converted before flags were recorded."""
    build = report.get("build") or {}
    entry = (build.get("files") or {}).get(file) if file is not None else None
    source = entry if isinstance(entry, dict) else build
    return tuple(source.get("include_dirs") or ()), tuple(source.get("defines") or ())


def merged(recorded_dirs, recorded_defines, given_dirs=(), given_defines=()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The recorded flags with the given ones added: given folders first, a given macro replacing
    the recorded one of its name."""
    dirs = [_absolute(d) for d in given_dirs]
    dirs += [d for d in recorded_dirs if d not in dirs]
    given = {_name_value(d)[0]: d for d in given_defines}
    defines = [given.pop(_name_value(d)[0], d) for d in recorded_defines]
    return tuple(dirs), tuple(defines) + tuple(given.values())


def file_flags(report: dict, file: str | None, given_dirs=(), given_defines=()) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The flags to compile ``file``'s original with in a check or bench of the folder."""
    return merged(*recorded(report, file), given_dirs, given_defines)


def differences(report: dict, given_dirs=(), given_defines=()) -> list[str]:
    """The given flags that change what the folder was converted with, one phrase each (empty when
    none does, or when the folder recorded no flags)."""
    build = report.get("build")
    if not isinstance(build, dict):
        return []
    records = [recorded(report, None)] + [recorded(report, f) for f in (build.get("files") or {})]
    out: list[str] = []
    for d in given_defines:
        name, value = _name_value(d)
        values = {_name_value(r)[1] for _dirs, defines in records for r in defines if _name_value(r)[0] == name}
        if not values:
            phrase = f"-D {d} (not a macro of the conversion)"
        elif values != {value}:
            phrase = f"-D {d} (converted with {name}={' or '.join(sorted(values))})"
        else:
            continue
        if phrase not in out:
            out.append(phrase)
    known = {x for dirs, _defines in records for x in dirs}
    for d in given_dirs:
        if _absolute(d) not in known and f"-I {d} (not a folder of the conversion)" not in out:
            out.append(f"-I {d} (not a folder of the conversion)")
    return out
