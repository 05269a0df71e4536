"""The frontend's fast libclang traversals give what cindex's own do: ``call_exprs`` the calls
``walk_preorder`` reaches (the same cursors, parent declaration included), ``user_declarations``
in a unit read with the precompiled prelude the same declarations as the full file lookup, and
the patched ``Cursor.get_children`` the same children as libclang's visitor."""
from __future__ import annotations

import ctypes
import textwrap

import clang.cindex as ci

from migrate.parse import clang as cl
from migrate.parse.frontend import ParseOptions

SOURCE = """
#include <cstdio>
#include <cuda_runtime.h>
#define LAUNCH(k, n, ...) k<<<((n) + 127) / 128, 128>>>(__VA_ARGS__)
namespace util { __device__ float twice(float v) { return 2.f * v; } }
extern "C" { __device__ int clampi(int v, int hi) { return v < hi ? v : hi; } }
__global__ void scale(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = util::twice(in[clampi(i, n - 1)]) + sqrtf(fabsf(in[i]));
}
template <typename T> __global__ void fill(T* out, T v, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = v;
}
int main() {
    float *a, *b; int n = 1000;
    cudaMalloc(&a, n * sizeof(float)); cudaMalloc((void**)&b, 4000);
    for (int r = 0; r < 3; r++) {
        if (r & 1) { scale<<<(n + 255) / 256, 256>>>(a, b, n); }
        else LAUNCH(fill<float>, n, a, 1.5f, n);
    }
    cudaDeviceSynchronize(); printf("%d\\n", (int)sizeof(float));
    cudaFree(a); cudaFree(b);
    return 0;
}
"""


def _unit(tmp_path):
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(SOURCE))
    args = ParseOptions().clang_args()
    assert cl.with_precompiled_prelude(args) is not None  # the fast path is the one tested
    return cl.parse(str(path), args)


def _same(a: ci.Cursor, b: ci.Cursor) -> bool:
    return a == b and a._kind_id == b._kind_id and a.xdata == b.xdata and list(a.data) == list(b.data)


def _reference_children(cursor):
    """cindex's own get_children, as it is without the patch."""
    out = []

    def visitor(child, _parent, _data):
        assert child != ci.conf.lib.clang_getNullCursor()
        child._tu = cursor._tu
        out.append(child)
        return 1

    ci.conf.lib.clang_visitChildren(cursor, ci.callbacks["cursor_visit"](visitor), None)
    return out


def _reference_preorder(cursor):
    yield cursor
    for child in _reference_children(cursor):
        yield from _reference_preorder(child)


def test_call_exprs_are_walk_preorders_calls(tmp_path):
    tu = _unit(tmp_path)
    functions = [c for c in cl.user_declarations(tu) if c.kind in (ci.CursorKind.FUNCTION_DECL,
                                                                     ci.CursorKind.FUNCTION_TEMPLATE)]
    main = next(c for c in functions if c.spelling == "main")
    total = 0
    for fn in functions:
        want = [c for c in _reference_preorder(fn) if c.kind == ci.CursorKind.CALL_EXPR]
        got = cl.call_exprs(fn)
        assert len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want)), fn.spelling
        total += len(got)
    spelled = [c.spelling for c in cl.call_exprs(main)]
    assert spelled.count("cudaMalloc") == 2 and "scale" in spelled and "printf" in spelled
    assert total > 10
    # a call expression given itself is its own first call
    first = cl.call_exprs(main)[0]
    assert _same(cl.call_exprs(first)[0], first)


def test_patched_get_children_gives_libclangs_children(tmp_path):
    tu = _unit(tmp_path)
    seen = 0
    for top in cl.user_declarations(tu):
        for c in _reference_preorder(top):
            got, want = list(c.get_children()), _reference_children(c)
            assert len(got) == len(want) and all(_same(a, b) for a, b in zip(got, want))
            assert all(g._tu is c._tu for g in got)
            seen += 1
    assert seen > 100


def test_user_declarations_skip_the_precompiled_prelude_by_place(tmp_path):
    tu = _unit(tmp_path)
    assert tu._c2t_prelude_pch  # the prelude's PCH holds prelude files only
    fast = cl.user_declarations(tu)
    tu._c2t_prelude_pch = False  # every declaration asked for its file
    slow = cl.user_declarations(tu)
    assert [(c.kind, c.spelling, c.extent.start.offset) for c in fast] == \
           [(c.kind, c.spelling, c.extent.start.offset) for c in slow]
    names = {c.spelling for c in fast}
    assert {"scale", "fill", "main", "twice", "clampi", "LAUNCH"} <= names
    assert "printf" not in names and "cudaMalloc" not in names  # the prelude's
    # what the skip rests on: the prelude's places lie above the unit's own
    location = ci.conf.lib.clang_getCursorLocation
    own = [location(c).int_data & cl._OFFSET_BITS for c in fast]
    assert own and max(own) < cl._LOADED_FROM


def test_a_unit_parsed_with_the_prelude_as_text_is_asked_file_by_file(tmp_path, monkeypatch):
    monkeypatch.setenv("CUDA2TILE_NO_PCH", "1")
    path = tmp_path / "k.cu"
    path.write_text(textwrap.dedent(SOURCE))
    tu = cl.parse(str(path), ParseOptions().clang_args())
    assert not getattr(tu, "_c2t_prelude_pch", False)
    names = {c.spelling for c in cl.user_declarations(tu)}
    assert {"scale", "fill", "main"} <= names and "printf" not in names
    assert ctypes.sizeof(ci.c_object_p) == ctypes.sizeof(ctypes.c_void_p)  # the handle read as a number


#: template arguments written at calls: a macro's value, a host constant's, a template's own
#: parameter and a nested template's, each of which libclang places (token_cursors)
WRITTEN = """
#include <cuda_runtime.h>
#define BS (8 * 4)
const int DEPTH = 3;
template <int N, int M> __device__ int sum2(const int* v) { return v[N] + v[M]; }
template <typename T, int N> struct Box { T v[N]; };
template <int K> __device__ int pick(const int* v) { return v[K]; }
template <int K> __global__ void take(const int* in, int* out) {
    out[threadIdx.x] = sum2<BS, DEPTH>(in) + pick<K>(in) + sum2<K, (DEPTH > 1 ? 2 : 1)>(in)
        + pick<sizeof(Box<float, DEPTH>)>(in);
}
void run(const int* in, int* out) { take<5><<<1, 32>>>(in, out); }
"""


def test_token_cursors_are_each_tokens_own_cursor(tmp_path):
    from migrate.parse.build import _constant_token, explicit_template_args

    path = tmp_path / "w.cu"
    path.write_text(textwrap.dedent(WRITTEN))
    tu = cl.parse(str(path), ParseOptions().clang_args())
    kernel = next(c for c in cl.user_declarations(tu) if c.spelling == "take")
    tokens = list(kernel.get_tokens())
    assert len(tokens) > 50
    one_call = cl.token_cursors(tokens)
    assert len(one_call) == len(tokens)
    checked = 0
    for token, cursor in zip(tokens, one_call):
        assert cursor._tu is tu
        if token.kind == ci.TokenKind.IDENTIFIER:
            # libclang may place a token of a template's body in the template or in an instance
            # (a parameter's name, a value parameter's literal), asked alone or in a run; what a
            # written argument reads of it, the macro's text or the host constant's value, is one
            assert _constant_token(token, cursor) == _constant_token(token), token.spelling
            checked += 1
    assert checked > 20
    calls = [c for c in cl.call_exprs(kernel) if c.spelling in ("sum2", "pick")]
    written = [explicit_template_args(next(c.get_children())) for c in calls]
    assert ("(( 8 * 4 ))", "3") in written and ("sizeof ( Box < float , 3 > )",) in written, written

    def unplaced(_tokens):
        raise ValueError("asked token by token")

    cl_token_cursors, cl.token_cursors = cl.token_cursors, unplaced
    try:  # each token's cursor asked on its own, as before token_cursors
        alone = [explicit_template_args(next(c.get_children())) for c in calls]
    finally:
        cl.token_cursors = cl_token_cursors
    assert alone == written
    assert cl.token_cursors([]) == []
