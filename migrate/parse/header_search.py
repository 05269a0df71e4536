"""Where a program keeps a header that its includer's ``#include`` does not reach.

Real programs include their own headers from a sibling folder (``src/numeric.cu`` includes
``"symbolic.h"`` of ``../include``, which the build passes with ``-I``) or a library shipped in the
program's tree (``<boost/...>`` beside ``main.cu``). Where the build flags are not given, such a
header is looked for in the program's own folders: the tree of the highest folder above the
includer (three levels at most, never above the folder being converted) that holds a build file
(Makefile, CMakeLists.txt, ...), or the includer's own folder where none does. The header is taken
from the place nearest the includer, and only where that place is the one nearest: two copies
equally near leave it missing (M1005), as a build would have to choose. A system header
(``<memory.h>``, ``<bitset>``) is never taken from the program's tree.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

#: files that mark the top of a program's build
BUILD_FILES = ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt", "meson.build")
#: folders above the includer's that may be the program's top
_LEVELS = 3
#: files listed per program tree, at most (a tree larger than that is not searched further)
_MAX_FILES = 20000


#: the C library's and POSIX's headers, which an ``#include <...>`` finds in the system: never a
#: file of the program's that happens to share the name
SYSTEM_HEADERS = frozenset(
    "assert.h complex.h ctype.h errno.h fenv.h float.h inttypes.h iso646.h limits.h locale.h math.h "
    "setjmp.h signal.h stdalign.h stdarg.h stdatomic.h stdbool.h stddef.h stdint.h stdio.h stdlib.h "
    "stdnoreturn.h string.h tgmath.h threads.h time.h uchar.h wchar.h wctype.h memory.h strings.h "
    "unistd.h getopt.h fcntl.h pthread.h dirent.h dlfcn.h malloc.h alloca.h err.h libgen.h poll.h "
    "sched.h semaphore.h syslog.h termios.h omp.h mpi.h".split())


def is_system_header(header: str) -> bool:
    """Whether ``#include <header>`` names a system header: a C library or POSIX one, one under
    ``sys/``, or a C++ standard one (a name without an extension, ``<bitset>``)."""
    return header in SYSTEM_HEADERS or header.startswith(("sys/", "arpa/", "netinet/")) or "." not in Path(header).name


def program_top(folder: Path, root: Path | None) -> Path:
    """The folder whose tree holds the program of a file in ``folder`` (see the module)."""
    folder = folder.resolve()
    root = root.resolve() if root is not None else None
    top = folder
    here = folder
    for _ in range(_LEVELS + 1):
        if root is not None and not here.is_relative_to(root):
            break
        if any((here / b).is_file() for b in BUILD_FILES):
            top = here
        if here == root or here.parent == here:
            break
        here = here.parent
    return top


@functools.lru_cache(maxsize=64)
def _tree(top: Path) -> dict[str, tuple[Path, ...]]:
    """File name -> the files of that name under ``top`` (hidden folders skipped)."""
    out: dict[str, list[Path]] = {}
    count = 0
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in filenames:
            out.setdefault(name, []).append(Path(dirpath) / name)
            count += 1
        if count > _MAX_FILES:
            break
    return {k: tuple(v) for k, v in out.items()}


def find_include_dir(header: str, includer: Path, root: Path | None) -> Path | None:
    """The folder to search (``-I``) for ``header`` as ``#include``\\ d by the file ``includer``:
    the one of the program's copies nearest the includer (fewest folders between them), or None
    where there is no copy or two are equally near."""
    parts = Path(header).parts
    if not parts or Path(header).is_absolute() or ".." in parts:
        return None
    folder = includer.resolve().parent
    best: list[tuple[int, Path]] = []
    for path in _tree(program_top(folder, root)).get(parts[-1], ()):
        if path.parts[len(path.parts) - len(parts):] != parts:
            continue
        base = Path(*path.parts[:len(path.parts) - len(parts)])
        best.append((_distance(folder, base), base))
    if not best:
        return None
    best.sort(key=lambda x: x[0])
    if len(best) > 1 and best[1][0] == best[0][0]:
        return None
    return best[0][1]


def _distance(a: Path, b: Path) -> int:
    """Folders walked from ``a`` to ``b`` (up to their common folder, then down)."""
    common = len(os.path.commonpath([a, b]).split(os.sep)) if a.anchor == b.anchor else 0
    return (len(a.parts) - common) + (len(b.parts) - common)
