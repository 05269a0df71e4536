"""The prelude comes precompiled (parse.clang.with_precompiled_prelude): the same model as with the
prelude as text, and the text where a -I folder could change what the prelude includes."""
from __future__ import annotations

import textwrap

from migrate.ir import model as m
from migrate.parse import clang as cl
from migrate.parse.frontend import ParseOptions, parse_file

SOURCE = """
#include <cstdio>
#include "missing_helpers.h"
#define CLAMP(x, lo, hi) ((x) < (lo) ? (lo) : ((x) > (hi) ? (hi) : (x)))
struct Pair { float a; int b; };
template <typename T, int N>
__device__ T scaled(T v) { return v * (T)N; }
__constant__ float table[4] = {1.f, 2.f, 3.f, 4.f};
__global__ void k(const float4* __restrict__ in, float* out, Pair p, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float4 v = in[i];
        out[i] = CLAMP(scaled<float, 3>(v.x + v.w) + sqrtf(fabsf(v.y)) + table[i & 3] + p.a * p.b,
                       -1e30f, FLT_MAX);
    }
}
void host(float* d, int n) { k<<<(n + 255) / 256, 256>>>((const float4*)d, d, Pair{1.f, 2}, n); }
"""


def _model(path, options):
    parsed = parse_file(str(path), options)
    return m.dump(parsed.unit, spans=True), sorted((d.code, d.span.line, d.message) for d in parsed.diagnostics)


def test_the_precompiled_prelude_gives_the_same_model(tmp_path, monkeypatch):
    src = tmp_path / "k.cu"
    src.write_text(textwrap.dedent(SOURCE))
    options = ParseOptions(include_dirs=(str(tmp_path),))
    assert cl.with_precompiled_prelude(options.clang_args()) is not None
    fast = _model(src, options)
    monkeypatch.setenv("CUDA2TILE_NO_PCH", "1")
    assert cl.with_precompiled_prelude(options.clang_args()) is None
    slow = _model(src, options)
    assert "FunctionDecl" in fast[0] or "Function" in fast[0]
    assert any(code == "M1005" for code, _line, _msg in fast[1])  # the missing header, reported once
    assert fast == slow


def test_a_folder_holding_a_header_the_prelude_includes_gets_the_text(tmp_path):
    """The prelude's <vector_types.h> searches the -I folders first: a program's own file of that
    name is what the prelude reads, so the precompiled one (from the stubs) is not used."""
    own = tmp_path / "own"
    own.mkdir()
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "helpers.h").write_text("#define TWICE(x) (2 * (x))\n")
    assert cl.with_precompiled_prelude(ParseOptions(include_dirs=(str(plain),)).clang_args()) is not None
    (own / "vector_types.h").write_text("#pragma once\nstruct float4 { float x, y, z, w; };\n")
    args = ParseOptions(include_dirs=(str(plain), str(own))).clang_args()
    assert cl.with_precompiled_prelude(args) is None


def test_flags_other_than_folders_get_a_prelude_of_their_own(tmp_path):
    """-D flags reach the prelude's #if tests: each set of them has its own precompiled prelude."""
    one = cl.with_precompiled_prelude(ParseOptions().clang_args())
    other = cl.with_precompiled_prelude(ParseOptions(defines=("USE_DOUBLE=1",)).clang_args())
    assert one is not None and other is not None
    assert one[one.index("-include-pch") + 1] != other[other.index("-include-pch") + 1]
    assert "-DUSE_DOUBLE=1" in other
