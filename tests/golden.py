"""Golden files: text a test produces, compared with the file that holds what it should be.

A test calls :func:`check_golden` with the golden's path, the text it produced and the
``update_golden`` fixture (``tests/conftest.py``), true under ``pytest --update-golden``:

- without the option, a missing golden fails (saying how to create it) and a golden that
  differs fails with a unified diff, golden first;
- with it, the golden is written (created, or rewritten where it differs) and the test passes.

Nothing else writes goldens: a test never creates the file it is checked against by itself.
The text is compared exactly (line ends and the last newline included), whatever it is: emitted
modules (``tests/golden/*.py``), printed plans (``.plan``), reports.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path

import pytest

from tests.paths import REPO

OPTION = "--update-golden"


def update_command(test_file: str | os.PathLike | None = None) -> str:
    """The command that rewrites the goldens of ``test_file`` (by default the running test's file)."""
    if test_file is None:
        current = os.environ.get("PYTEST_CURRENT_TEST", "")
        test_file = current.split("::", 1)[0] or None
    if test_file is None:
        return f"python -m pytest {OPTION}"
    path = Path(test_file)
    if path.is_absolute():
        try:
            path = path.relative_to(REPO)
        except ValueError:
            pass
    return f"python -m pytest {path.as_posix()} {OPTION}"


def _shown(path: Path) -> str:
    """The path as the messages name it: relative to the repository when inside it."""
    try:
        return path.resolve().relative_to(REPO).as_posix()
    except ValueError:
        return str(path)


def golden_diff(expected: str, actual: str, path: Path) -> str:
    """A unified diff from the golden to the text a test produced, at most 200 lines."""
    lines = list(difflib.unified_diff(expected.splitlines(keepends=True), actual.splitlines(keepends=True),
                                      fromfile=f"{_shown(path)} (golden)", tofile=f"{_shown(path)} (produced)"))
    shown = [ln if ln.endswith("\n") else ln + "\n\\ No newline at end of file\n" for ln in lines[:200]]
    if len(lines) > 200:
        shown.append(f"... {len(lines) - 200} more lines of diff\n")
    return "".join(shown)


def check_golden(path: str | os.PathLike, text: str, update: bool, command: str | None = None) -> None:
    """Check ``text`` against the golden file at ``path``; with ``update``, write it there instead.

    ``command`` is the command line the failure messages give for rewriting the golden
    (default: pytest on the running test's file with ``--update-golden``)."""
    path = Path(path)
    if update:
        if not path.exists() or path.read_text() != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return
    command = command or update_command()
    if not path.exists():
        pytest.fail(f"golden file {_shown(path)} does not exist: create it with `{command}` "
                    "(and review and commit it)", pytrace=False)
    expected = path.read_text()
    if text != expected:
        pytest.fail(f"the text differs from the golden file {_shown(path)}; if the change is intended, "
                    f"rewrite the golden with `{command}`\n{golden_diff(expected, text, path)}", pytrace=False)
