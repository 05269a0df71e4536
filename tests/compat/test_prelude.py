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

from migrate.compat.table import ROWS, UNSUPPORTED  # noqa: E402
from migrate.parse import clang as cl  # noqa: E402

#: row dtype -> the CUDA C++ type of an argument of that dtype
C_TYPES = {
    "float32": "float", "float64": "double", "float16": "__half", "bfloat16": "__nv_bfloat16",
    "int32": "int", "uint32": "unsigned int", "int64": "long long", "uint64": "unsigned long long",
    "int16": "short", "uint16": "unsigned short", "bool": "bool", "str": "const char*",
    "float16x2": "__half2", "bfloat16x2": "__nv_bfloat162",
}


def _probe_source() -> tuple[str, dict[int, str]]:
    lines = ["#include <cuda_fp16.h>", "#include <cuda_bf16.h>", "#include <cmath>"]
    where: dict[int, str] = {}
    for j, r in enumerate(ROWS):
        if r.status is UNSUPPORTED:
            if r.section != "unsupported":
                continue
            stmt = f"using ::{r.cuda};"
        else:
            params = [f"{C_TYPES[dt]}{'*' if r.kind == 'atomic' and i == 0 else ''} a{i}"
                      for i, dt in enumerate(r.args)]
            call = f"{r.cuda}({', '.join(f'a{i}' for i in range(len(r.args)))})"
            stmt = f"__device__ void probe{j}({', '.join(params)}) {{ (void){call}; }}"
        where[len(lines) + 1] = r.label
        lines.append(stmt)
    return "\n".join(lines) + "\n", where


def test_every_row_type_checks_against_the_prelude():
    src, where = _probe_source()
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
