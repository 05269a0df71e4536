"""docs/compat.md is generated from the compat table and must be up to date."""
from __future__ import annotations

import difflib
from pathlib import Path

from migrate.compat import doc
from migrate.compat.table import ROWS
from tests.paths import REPO

DOC = REPO / "docs" / "compat.md"


def test_compat_doc_is_current():
    want = doc.render_markdown()
    have = DOC.read_text() if DOC.exists() else ""
    if have != want:
        diff = "".join(list(difflib.unified_diff(have.splitlines(True), want.splitlines(True),
                                                 "docs/compat.md", "generated", n=1))[:60])
        raise AssertionError("docs/compat.md is stale; regenerate with "
                             "`python -m migrate.compat.doc > docs/compat.md`\n" + diff)


def test_compat_doc_lists_every_row():
    text = doc.render_markdown()
    for row in ROWS:
        assert f"`{row.cuda}`" in text
