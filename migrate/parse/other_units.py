"""Device functions a file calls but another unit of its program defines (separate compilation,
``nvcc -dc``: xlqc's kernels call ``cuda_ij2intindex`` of ``cuda_rys_sp.cu``, declared in a header).

A kernel that calls one cannot be migrated without its body. The units beside the file (same
folder, ``.cu``) that define such a function are found by their text, and the file is parsed again
with those units included at its end, after its own last line: the kernels are still the file's
own, the definitions (and what they need from their unit) are visible. Only where a call names a
function no other way resolves (M1207); a unit that does not help is not kept.
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


def with_units(text: str, units: list[str]) -> str:
    """``text`` with ``units`` included after its last line."""
    return text + ("\n" if not text.endswith("\n") else "") + "".join(f'#include "{u}"\n' for u in units)
