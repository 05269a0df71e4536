"""The tables ``parse.build`` keeps per unit (file names, the places of raw source locations, the
kinds of variables) answer for the unit asked about, never for one read before it: two units of
one flag set give the same raw locations to the same offsets of their files."""
from __future__ import annotations

import clang.cindex as ci

from migrate.parse import build
from migrate.parse import clang as cl
from migrate.parse.frontend import ParseOptions

K = ci.CursorKind


def _unit(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return cl.parse(str(path), ParseOptions().clang_args())


def _var(tu, name: str) -> ci.Cursor:
    return next(c for c in cl.user_declarations(tu) if c.kind == K.VAR_DECL and c.spelling == name)


def test_spans_and_variable_kinds_are_the_units_own(tmp_path):
    first = _unit(tmp_path, "a.cu", "int a;\nint __device__ b;\n")
    second = _unit(tmp_path, "b.cu", "int a; int b;\n")
    a1, b1, a2, b2 = _var(first, "a"), _var(first, "b"), _var(second, "a"), _var(second, "b")
    start = ci.conf.lib.clang_getCursorExtent
    # what the test rests on: the second unit's b begins at the raw location of the first's
    assert start(b1).begin_int_data == start(b2).begin_int_data
    assert build.span_of(b1) == build.Span(str(tmp_path / "a.cu"), 2, 1, 2, 17)
    assert build._var_kind(b1) == "global" and build._var_kind(a1) == "host"
    assert build.span_of(b2) == build.Span(str(tmp_path / "b.cu"), 1, 8, 1, 13)
    assert build._var_kind(b2) == "host" and build._var_kind(a2) == "host"
    # the first unit asked again: its own answers, its tables made anew
    assert build.span_of(b1).line == 2 and build._var_kind(b1) == "global"
    assert build._UNIT_TABLES[0] is first
    # each answer is the one libclang gives
    for var in (a1, b1):
        extent = var.extent
        assert build.span_of(var) == build.Span(extent.start.file.name, extent.start.line, extent.start.column,
                                                extent.end.line, extent.end.column)
