"""Every committed file generated from the compat rows is current (stale-copy tests).

``python -m migrate.compat.generate`` rewrites them; ``--check`` names the stale ones.
"""
from __future__ import annotations

import difflib
import subprocess
import sys

import pytest

from migrate.compat import generate
from tests.paths import REPO


def test_generate_knows_the_repository():
    assert generate.repo_root() == REPO
    assert set(generate.ARTEFACTS) == {"docs/compat.md", "runtime/cpu/c2t_compat_math.h"}


@pytest.mark.parametrize("rel", sorted(generate.ARTEFACTS))
def test_artefact_is_current(rel):
    want = generate.ARTEFACTS[rel]()
    path = REPO / rel
    have = path.read_text() if path.exists() else ""
    if have != want:
        diff = "".join(list(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                                 rel, "generated", n=1))[:60])
        raise AssertionError(f"{rel} is stale; regenerate with "
                             f"`python -m migrate.compat.generate`\n{diff}")


@pytest.mark.parametrize("rel", sorted(generate.ARTEFACTS))
def test_artefact_says_it_is_generated(rel):
    head = "\n".join(generate.ARTEFACTS[rel]().splitlines()[:4]).replace("\n// ", " ")
    assert "python -m migrate.compat.generate" in head and "do not" in head and "edit" in head


def test_check_mode_names_stale_files(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "compat.md").write_text("old\n")
    assert generate.stale(tmp_path) == sorted(generate.ARTEFACTS)
    assert sorted(generate.write(tmp_path)) == sorted(generate.ARTEFACTS)
    assert generate.stale(tmp_path) == []
    p = subprocess.run([sys.executable, "-m", "migrate.compat.generate", "--check"], cwd=REPO,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
