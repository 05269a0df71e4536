"""The parse prelude declares every compat row, so calls type-check in the frontend.

The frontend parses CUDA against the stub headers in ``migrate/parse/prelude/include`` (no CUDA
toolkit). They are hand-written because they carry CUDA's full C++ overload sets (float /
double / long double / integral templates, ``__half`` operators), which a row's single
signature does not describe; this test checks them against the rows instead: a call of every
supported row with arguments of the row's dtypes must type-check, and the unsupported-section
names must be declared (the frontend reports them as M1202/M1210 only when the call resolves).
A failure names the rows and the clang error; declare the function where CUDA declares it
(``include/math_functions.h``, ``device_functions.h``, ``__cuda2tile/half_like.inc``...).
"""
from __future__ import annotations

import pytest

pytest.importorskip("clang.cindex")

from migrate.compat.table import ROWS  # noqa: E402
from migrate.parse import clang as cl  # noqa: E402
from tests.compat.support import call_probes  # noqa: E402


def test_every_row_type_checks_against_the_prelude():
    src, where = call_probes(
        ROWS, head=["#include <cuda_fp16.h>", "#include <cuda_bf16.h>", "#include <cmath>"],
        unsupported=lambda r: f"using ::{r.cuda};" if r.section == "unsupported" else None)
    tu = cl.index().parse("rows.cu", args=cl.build_args(), unsaved_files=[("rows.cu", src)])
    bad: dict[str, str] = {}
    for d in tu.diagnostics:
        if d.severity >= 3:
            f = d.location.file.name if d.location.file else None
            label = where.get(d.location.line, "?") if f == "rows.cu" else f"(in {f})"
            bad.setdefault(label, d.spelling)
    assert not bad, "rows the parse prelude does not declare (or not for the row's types):\n  " + \
        "\n  ".join(f"{k}: {v}" for k, v in bad.items())
    assert len(where) > 380
