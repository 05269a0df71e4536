"""The frontend's cheap reads of source places give what cindex's own do: ``SourceText.of`` the
text between a cursor's extent offsets (or its tokens where the extent spans files), and
``cursor_file`` the name of a cursor's location's file; and a call spelled inside a macro has no
template arguments (libclang tokenises such a callee from the macro's definition to its use)."""
from __future__ import annotations

import textwrap

import clang.cindex as ci

from migrate.ir import model as m
from migrate.parse import clang as cl
from migrate.parse.build import SourceText, cursor_file
from migrate.parse.frontend import ParseOptions, parse_file

HEADER = """
#define SCALE(x) ((x) * 2.0f)
"""

SOURCE = """
#include "k.h"
#define ONE_OVER (1.0 / (2.0 * pow(3.0, 4.0)))
template <int N> __device__ float shifted(float v) { return v + N; }
__device__ double alpha(int l) { if (l < 0) return 0.0; return l < 4 ? 1.0 : 2.0; }
__global__ void k(float* out, const double* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = SCALE(shifted<3>(out[i])) + (float)(ONE_OVER * c[i] * alpha(i));
}
"""


def _write(tmp_path):
    (tmp_path / "k.h").write_text(textwrap.dedent(HEADER))
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(SOURCE))
    return path


def _cindex_text(text: SourceText, cursor: ci.Cursor) -> str:
    """What ``SourceText.of`` read through cindex's properties before."""
    start, end = cursor.extent.start, cursor.extent.end
    if not start.file or not end.file or start.file.name != end.file.name:
        return " ".join(t.spelling for t in cursor.get_tokens())
    return text.file(start.file.name).encode("utf-8")[start.offset:end.offset].decode("utf-8", "replace")


def test_source_text_and_cursor_file_read_what_cindex_reads(tmp_path):
    path = _write(tmp_path)
    tu = cl.parse(str(path), ParseOptions().clang_args())
    text = SourceText()
    cursors = [c for c in tu.cursor.walk_preorder() if c.location.file is not None
               and c.location.file.name.startswith(str(tmp_path))]
    assert len(cursors) > 50
    for c in cursors:
        assert text.of(c) == _cindex_text(text, c)
        assert cursor_file(c) == c.location.file.name
    assert any(c.kind == ci.CursorKind.CALL_EXPR and c.spelling == "pow" for c in cursors)


def test_a_call_spelled_in_a_macro_has_no_template_arguments(tmp_path):
    parsed = parse_file(str(_write(tmp_path)), ParseOptions())
    kernel = next(k for k in parsed.unit.kernels if k.name == "k")
    calls = {n.callee: n.template_args for n in m.walk(kernel.body) if isinstance(n, m.Call)}
    assert calls["pow"] == ()  # (not the tokens from the macro's definition on, which hold '<')
    assert calls["alpha"] == ()
    assert calls["shifted"] == ("3",)
