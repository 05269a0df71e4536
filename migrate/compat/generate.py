"""Regenerate every committed file derived from the compat rows: ``python -m migrate.compat.generate``.

==============================  ==================================================================
``docs/compat.md``              the coverage document (:func:`migrate.compat.doc.render_markdown`)
``runtime/cpu/c2t_compat_math.h``  the CPU executor's definitions from the rows' C bodies
                                (:func:`migrate.compat.cpu_header.render_header`)
==============================  ==================================================================

``--check`` writes nothing and exits with status 1 naming the stale files;
``tests/compat/test_generated.py`` makes the same comparison. The catalog sections
(:mod:`migrate.compat.catalog`) are derived at import time and need no file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Callable

from migrate.compat import cpu_header, doc

#: repository-relative path -> function returning the file's text
ARTEFACTS: dict[str, Callable[[], str]] = {
    "docs/compat.md": doc.render_markdown,
    cpu_header.HEADER_PATH.as_posix(): cpu_header.render_header,
}


def repo_root() -> Path:
    """The checkout this package sits in (``migrate/compat/`` -> the repository root)."""
    return Path(__file__).resolve().parents[2]


def stale(root: Path | None = None) -> list[str]:
    """The artefacts whose committed text differs from what the rows generate."""
    root = root or repo_root()
    out = []
    for rel, render in ARTEFACTS.items():
        path = root / rel
        have = path.read_text() if path.exists() else None
        if have != render():
            out.append(rel)
    return out


def write(root: Path | None = None) -> list[str]:
    """Rewrite the stale artefacts; returns the ones written."""
    root = root or repo_root()
    written = stale(root)
    for rel in written:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(ARTEFACTS[rel]())
    return written


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m migrate.compat.generate",
                                 description="Regenerate the files derived from the compat rows.")
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if any is stale")
    args = ap.parse_args(argv)
    if args.check:
        bad = stale()
        for rel in bad:
            print(f"stale: {rel}", file=sys.stderr)
        if bad:
            print("regenerate with: python -m migrate.compat.generate", file=sys.stderr)
        return 1 if bad else 0
    for rel in write():
        print(f"wrote {rel}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
