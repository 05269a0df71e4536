"""Files that cannot define a kernel: read as host code only, without a parse.

Nearly half of the files a real codebase gives the converter define no kernel (``main.cu`` with
the host code, files that launch a header's kernels, helpers). Parsing them costs a third of a
pool's conversion and gives only a module with no kernel in it and warnings about host code. A
file defines a kernel only with ``__global__`` (or ``__attribute__((global))``) in its own text,
or with a macro that expands to it: one defined in a file it includes, in its includer's lines
(a header parsed in its includer's place) or on the command line. Where none of these says
``__global__``, the file is not parsed; where the files it reaches cannot all be told (the
include scan stopped, or ``__has_include`` answers depend on what is there), it is.
"""
from __future__ import annotations

import re

from ..runtime.source import mask_source

#: what makes a function a kernel, as written or through the prelude's own macro
_GLOBAL = re.compile(r"\b__global__\b|__attribute__\s*\(\(\s*global\b")
#: an ``#include`` of a macro's value (``#include KERNELS_FILE``), which no scan of the text follows
_COMPUTED_INCLUDE = re.compile(r"^[ \t]*#[ \t]*include[ \t]*[^<\"\s]", re.M)


def may_define_kernels(text: str, reached: list[str], flags: tuple[str, ...]) -> bool:
    """Whether a file of ``text`` may define a kernel: it says ``__global__`` outside its
    comments and literals, or one of the files it ``reached`` (its includes, at any depth, and
    its includer's lines) does so inside a preprocessor directive (a macro that expands to it),
    or one of the compiler ``flags`` (``-DKERNEL=__global__``) does, or one of them includes a
    file named by a macro (``#include KERNELS``)."""
    if any(_GLOBAL.search(f) for f in flags) or _GLOBAL.search(mask_source(text)):
        return True
    if any(_COMPUTED_INCLUDE.search(mask_source(t)) for t in [text] + list(reached) if "include" in t):
        return True
    return any(_in_directive(other) for other in reached)


def _in_directive(text: str) -> bool:
    """Whether ``text`` says ``__global__`` in a preprocessor directive (a ``#define`` line or
    its backslash-continued lines)."""
    if not _GLOBAL.search(text):
        return False
    masked = mask_source(text)
    for match in _GLOBAL.finditer(masked):
        start = masked.rfind("\n", 0, match.start()) + 1
        # back over the lines this one continues (each ends in a backslash)
        while start > 0:
            before = masked.rfind("\n", 0, start - 1) + 1
            if masked[before:start - 1].rstrip("\r").endswith("\\"):
                start = before
            else:
                break
        if masked[start:match.start()].lstrip().startswith("#"):
            return True
    return False
