"""Device functions a file calls but another unit of its program defines (separate compilation,
``nvcc -dc``: xlqc's kernels call ``cuda_ij2intindex`` of ``cuda_rys_sp.cu``, declared in a header).

A kernel that calls one cannot be migrated without its body. The units beside the file (same
folder, ``.cu``) that define such a function are found by their text, and the file is parsed again
with those units included at its end, after its own last line: the kernels are still the file's
own, the definitions (and what they need from their unit) are visible. Only where a call names a
function no other way resolves (M1207); a unit that does not help is not kept.

Each unit compiles on its own in the build, so its ``static`` functions and variables are its own:
two units may each have a ``static double Asymptotic_Series(double)``. Included into one file they
would collide; a unit's file-scope ``static`` names that another of the texts (the file, the other
units) also spells are renamed inside that unit (``#define NAME c2t_<unit>_NAME`` before its
``#include``, ``#undef`` after), as the linker keeps them apart.
"""
from __future__ import annotations

import re
from pathlib import Path

_MISSING = re.compile(r"call to '([A-Za-z_]\w*)', which is neither a visible __device__ function")
_SUFFIXES = (".cu",)


def missing_functions(diagnostics) -> set[str]:
    """The functions M1207 diagnostics name (calls nothing in the unit defines)."""
    return {m.group(1) for d in diagnostics if d.code == "M1207" for m in [_MISSING.search(d.message)] if m}


def defining_units(path: str, names: set[str]) -> list[str]:
    """The ``.cu`` files beside ``path`` that define a ``__device__`` function of ``names``."""
    from ..runtime.source import mask_source

    here = Path(path).resolve()
    out = []
    try:
        siblings = sorted(p for p in here.parent.iterdir() if p.suffix in _SUFFIXES and p != here and p.is_file())
    except OSError:
        return []
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\s*\([^;{}]*\)\s*(?:const\s*)?\{")
    for sibling in siblings:
        try:
            text = sibling.read_text(errors="replace")
        except OSError:
            continue
        if not any(n in text for n in names):
            continue
        masked = mask_source(text)
        for match in pattern.finditer(masked):
            head = masked[max(0, masked.rfind(";", 0, match.start()), masked.rfind("}", 0, match.start())):match.start()]
            if "__device__" in head:
                out.append(str(sibling))
                break
    return out


_WORD = re.compile(r"[A-Za-z_]\w*")


def static_names(text: str) -> set[str]:
    """The names a unit declares ``static`` at file scope (functions and variables: the last name
    before the declarator's ``(``, ``[``, ``=``, ``;`` or ``,``), comments and strings aside."""
    from ..runtime.source import mask_source

    masked = mask_source(text)
    # preprocessor lines are not declarations (a macro body may say static)
    masked = re.sub(r"(?m)^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", masked)
    names, depth, i = set(), 0, 0
    for match in re.finditer(r"[{}]|\bstatic\b", masked):
        tok = match.group(0)
        if tok == "{":
            depth += 1
        elif tok == "}":
            depth = max(0, depth - 1)
        elif depth == 0 and match.start() >= i:
            end = re.compile(r"[(\[=;,{]").search(masked, match.end())
            if end is None:
                continue
            words = _WORD.findall(masked[match.end():end.start()])
            if words:
                names.add(words[-1])
            i = end.start()
    return names


def _read(path: str) -> str:
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def with_units(text: str, units: list[str]) -> str:
    """``text`` with ``units`` included after its last line, each unit's ``static`` names that
    another text spells renamed inside it (see the module)."""
    texts = {u: _read(u) for u in units}
    words = {u: set(_WORD.findall(t)) for u, t in texts.items()}
    mine = set(_WORD.findall(text))
    out = [text + ("\n" if not text.endswith("\n") else "")]
    for unit in units:
        others = mine.union(*(words[v] for v in units if v != unit))
        clash = sorted(static_names(texts[unit]) & others)
        tag = re.sub(r"\W", "_", Path(unit).stem)
        out += [f"#define {name} c2t_{tag}_{name}\n" for name in clash]
        out.append(f'#include "{unit}"\n')
        out += [f"#undef {name}\n" for name in clash]
    return "".join(out)
