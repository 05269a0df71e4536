"""Diagnostics (migrate/diagnostics.py): the one-line form, and the caret snippet the terminal shows
under it (source line, ``^`` under the column, ``~`` under the rest of a one-line span)."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from migrate.diagnostics import Sources, make, render, snippet
from migrate.ir.span import Span

KERNEL = """\
#include <cuda_runtime.h>
__global__ void scale(float* y, const float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = helper(x[i]);
}
"""
#    line 4:  "    if (i < n) y[i] = helper(x[i]);"  'helper' starts at column 23


@pytest.fixture
def cu(tmp_path):
    path = tmp_path / "scale.cu"
    path.write_text(KERNEL)
    return str(path)


def diag(file, line, col, end_line=None, end_col=None, code="M1207"):
    end_line = line if end_line is None else end_line
    end_col = col if end_col is None else end_col
    return make(code, Span(file, line, col, end_line, end_col), "call to 'helper'")


def caret_col(lines):
    """The 0-based column, in the shown source line, that the caret points at."""
    source, carets = lines
    assert source[5:8] == carets[:8][5:] == " | " and carets[:5] == " " * 5  # the gutter lines up
    return carets.index("^") - 8


def test_first_line_is_unchanged(cu):
    d = diag(cu, 4, 23, 4, 34)
    text = render(d)
    assert text.splitlines()[0] == str(d) == f"{cu}:4:23: error: M1207: call to 'helper'"
    assert len(text.splitlines()) == 3


def test_caret_under_the_column(cu):
    lines = snippet(diag(cu, 4, 23))
    assert lines == ["    4 |     if (i < n) y[i] = helper(x[i]);",
                     "      |                       ^"]
    assert lines[0][8 + caret_col(lines):].startswith("helper")


def test_tildes_under_a_one_line_span(cu):
    # helper(x[i]) is columns 23..34, the end column one past it (clang's extents are half-open)
    lines = snippet(diag(cu, 4, 23, 4, 35))
    assert lines[1] == "      | " + " " * 22 + "^" + "~" * 11
    start = 8 + caret_col(lines)
    assert lines[0][start:len(lines[1])] == "helper(x[i])"


def test_a_span_over_several_lines_gets_only_the_caret(cu):
    lines = snippet(diag(cu, 2, 1, 5, 2, code="M1208"))
    assert lines == ["    2 | __global__ void scale(float* y, const float* x, int n) {",
                     "      | ^"]


def test_a_span_ending_past_the_line_stops_at_its_end(cu):
    lines = snippet(diag(cu, 5, 1, 5, 40))
    assert lines == ["    5 | }", "      | ^"]
    lines = snippet(diag(cu, 4, 34, 4, 60))  # ');' then past the end of the line
    assert caret_col(lines) == 33 and lines[1].endswith("^~")
    lines = snippet(diag(cu, 4, 50))  # a column past the end: the caret just after the line
    assert caret_col(lines) == len("    if (i < n) y[i] = helper(x[i]);") and lines[1].endswith(" ^")


def test_tabs_are_expanded_so_the_caret_lines_up(tmp_path):
    path = tmp_path / "tabs.cu"
    path.write_bytes(b"__global__ void k(float* y) {\n\tx =\tf(\t1);\n}\n")
    # line 2, byte columns: \t1 x2 ' '3 =4 \t5 f6 (7 \t8 '1'9 )10 ;11; the span f(\t1) is 6..10
    lines = snippet(diag(str(path), 2, 6, 2, 11))
    assert "\t" not in "".join(lines)
    assert lines[0] == "    2 |         x =     f(      1);"  # tab stops every 8 columns
    assert caret_col(lines) == 16 and lines[0][8 + 16:].startswith("f(")
    assert lines[1][8:] == " " * 16 + "^" + "~" * 9  # to the ')' after the second tab
    assert lines[0][8 + 16 + 9] == ")"
    narrow = snippet(diag(str(path), 2, 6, 2, 11), tab_width=4)
    assert narrow == ["    2 |     x = f(  1);", "      |         ^~~~~~"]
    point = snippet(diag(str(path), 2, 1))  # at the tab itself: its first column
    assert point[1] == "      | ^"


def test_columns_are_bytes_not_characters(tmp_path):
    path = tmp_path / "utf8.cu"
    path.write_text("/* é */ int x = helper();\r\n", encoding="utf-8")
    # 'é' is two bytes: 'helper' starts at byte column 18, character 17
    lines = snippet(diag(str(path), 1, 18, 1, 24))
    assert lines[0] == "    1 | /* é */ int x = helper();"  # the CR is not shown
    assert lines[1][8:] == " " * 16 + "^~~~~~"


def test_no_snippet_for_a_missing_file(tmp_path):
    d = diag(str(tmp_path / "gone.cu"), 4, 23, 4, 35)
    assert snippet(d) == []
    assert render(d) == str(d)


def test_no_snippet_for_line_zero_or_a_line_past_the_end(cu):
    assert snippet(diag(cu, 0, 0)) == []
    assert render(diag(cu, 0, 0)) == str(diag(cu, 0, 0))
    assert snippet(diag(cu, 6, 1)) == []  # the file has 5 lines (and a final newline)
    assert snippet(diag(cu, 99, 1)) == []


def test_no_snippet_for_a_diagnostic_about_the_whole_file(cu):
    whole = make("M1002", Span.point(cu), "file contains NUL bytes: it is binary, not CUDA source")
    assert snippet(whole) == [] and render(whole) == str(whole)


def test_sources_reads_each_file_once(cu, tmp_path):
    sources = Sources()
    first = snippet(diag(cu, 4, 23), sources)
    Path(cu).unlink()  # read once: later diagnostics of the file still get their snippet
    assert snippet(diag(cu, 4, 23), sources) == first and snippet(diag(cu, 3, 5), sources)
    assert snippet(diag(cu, 4, 23)) == []  # a fresh reader finds no file
    assert sources(str(tmp_path / "gone.cu")) is None
    # a reader is any callable from a file name to its bytes; here an in-memory one
    fake = {"mem.cu": b"int a;\nint b = bad;\n"}.get
    assert snippet(diag("mem.cu", 2, 9, 2, 12), fake) == ["    2 | int b = bad;", "      |         ^~~"]


def test_convert_prints_the_snippet_and_reports_stay_plain(tmp_path, capsys):
    from migrate.cli import main

    src = tmp_path / "ptx.cu"
    src.write_text(textwrap.dedent("""\
        #include <cuda_runtime.h>
        __global__ void uses_ptx(int* y) {
            int v;
            asm("mov.u32 %0, 7;" : "=r"(v));
            y[threadIdx.x] = v;
        }
        """))
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out)]) == 1
    err = capsys.readouterr().err.splitlines()
    first = next(i for i, line in enumerate(err) if ": error: M1201: " in line)
    assert err[first].startswith(f"{src}:4:5: error: M1201: ")
    assert err[first + 1] == '    4 |     asm("mov.u32 %0, 7;" : "=r"(v));'
    assert err[first + 2].startswith("      |     ^~~")
    for name in ("report.json", "report.html", "report.sarif"):
        assert "    4 |" not in (out / name).read_text(), name
    diags = [d for k in json.loads((out / "report.json").read_text())["kernels"] for d in k["diagnostics"]]
    assert [d["code"] for d in diags] == ["M1201", "M3008"]  # refused, kept as CUDA (hybrid)
    assert all(set(d) == {"code", "severity", "file", "line", "col", "message"} for d in diags)
