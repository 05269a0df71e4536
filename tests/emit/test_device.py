"""Device functions (emit.device): macros, and the plain functions of those that compute one
expression of their arguments, which callers use where C may not evaluate the call."""
from __future__ import annotations

import textwrap

import pytest

from tests.analysis.lift.support import convert, load
from migrate.parse.frontend import parse_file
from tests.lowering import lower_sm90

#: Helpers called right of && and ||, in a branch of ?: and in conditions of an else-if chain: a
#: magnitude, a range test written with && and !, a load that only an index below m may make.
CLASSIFY = """
    __device__ int gap(int a, int b) { const int d = a - b; return d < 0 ? -d : d; }
    __device__ bool inside(int v, int lo, int hi) { return v >= lo && v <= hi && !(v == 13); }
    __device__ float at(const float* p, int i) { return p[i]; }
    __global__ void classify(const int* __restrict__ a, const int* __restrict__ b, const float* __restrict__ w,
                             int* __restrict__ cls, float* __restrict__ out, int n, int m) {
        const int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i >= n) return;
        int c;
        if (a[i] == 0) c = 0;
        else if (gap(a[i], b[i]) <= 3 && inside(gap(b[i], 0), 1, 50)) c = 1;
        else if (a[i] > 90 || gap(a[i], 7) > 80) c = 2;
        else c = 3;
        cls[i] = c;
        out[i] = (i < m && at(w, i) > 0.0f) ? at(w, i) : -1.0f;
    }
"""

#: 200 elements; w holds only 150 (at(w, i) for i >= 150 would read past it).
CLASSIFY_SPEC = """
    [[kernel]]
    name = "classify"
    grid = [2, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "a"
    buffer = "int32"
    elements = 200
    role = "in"
    range = [-100, 100]
    [[kernel.args]]
    name = "b"
    buffer = "int32"
    elements = 200
    role = "in"
    range = [-100, 100]
    [[kernel.args]]
    name = "w"
    buffer = "float32"
    elements = 150
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "cls"
    buffer = "int32"
    elements = 200
    role = "out"
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 200
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 200
    [[kernel.args]]
    name = "m"
    scalar = "int32"
    value = 150
"""


@pytest.mark.parametrize("flags", [(), ("--no-lift",)], ids=["tile", "portable"])
def test_helpers_where_c_may_not_call_them_run_as_in_c(tmp_path, flags):
    # TileLang refused the macros inside and/or ("Macro `gap` is used inside boolean expressions")
    kernels, text = convert(tmp_path, CLASSIFY, "--check", "cpu", *flags, spec=CLASSIFY_SPEC)
    k = kernels["classify"]
    assert k["form"] == ("portable" if flags else "tile") and k["check"]["status"] == "pass", k["check"]
    # the macro where C always calls it (each argument evaluated once), the plain function elsewhere
    assert "elif gap(a[i], b[i]) <= 3 and inside_expr(gap_expr(b[i], 0), 1, 50):" in text
    assert "T.if_then_else(i < m and at_expr(w, i) > 0.0, at_expr(w, i), " in text
    assert "return T.And(T.And(v >= lo, v <= hi), T.Not(v == 13))" in text
    assert "__global__" in lower_sm90(load(tmp_path / "out" / "k.py").CLASSIFY, (2, 1, 1), (128, 1, 1))


def test_a_macro_where_c_may_not_call_it_is_refused(tmp_path):
    kernels, _ = convert(tmp_path, """
        __device__ int ones(unsigned v) { int c = 0; while (v) { c += v & 1u; v >>= 1; } return c; }
        __device__ float bump(float* p, int i) { p[i] += 1.0f; return p[i]; }
        __global__ void sparse_bits(const unsigned* __restrict__ v, int* __restrict__ flag, int n) {
            const int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n && ones(v[i]) < 4) flag[i] = 1;
        }
        __global__ void bump_some(float* __restrict__ x, float* __restrict__ y, int n) {
            const int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = i % 2 ? bump(x, i) : 0.0f;
        }
    """)
    ones, bump = kernels["sparse_bits"], kernels["bump_some"]
    assert ones["form"] == "unsupported" and "device function 'ones' called right of '&&'" in ones["reason"]
    assert bump["form"] == "unsupported" and "'bump' called in a branch of '?:'" in bump["reason"]
    assert [d["code"] for d in ones["diagnostics"]] == ["M3001"]


def test_expression_functions_and_effects(tmp_path):
    from migrate.analysis.facts.calls import with_effects
    from migrate.emit.device import expression_functions
    from migrate.ir.names import unit_names

    path = tmp_path / "k.cu"
    path.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent("""
        __device__ int pong(int n);
        __device__ int ping(int n) { return n > 0 ? pong(n - 1) : 0; }
        __device__ int pong(int n) { return n > 0 ? ping(n - 1) + 1 : 1; }
        __device__ float sq(float v) { const float w = v; return w * w; }
        __device__ float norm2(float a, float b) { return sqrtf(sq(a) + sq(b)); }
        __device__ float clamp_up(float v) { if (v < 0.0f) v = 0.0f; return v; }
        __device__ void put(float* p, float v) { p[0] = v; }
        __device__ float put_and_read(float* p) { put(p, 1.0f); return p[0]; }
        __device__ int count(int* c) { return atomicAdd(c, 1); }
        __device__ float sq_expr(float v) { return v; }
        __global__ void k(float* x, int* c) { x[0] = ping(3) + norm2(x[1], x[2]) + clamp_up(x[3]) + put_and_read(x)
                                                     + count(c) + sq_expr(x[4]); }
    """))
    u = parse_file(path).unit  # (the recursion is an error of the frontend, M1204, not of these queries)
    device = {f.name: f for f in u.device_functions}
    # recursion, assignments, stores and atomics are no expression; sq's plain name is taken
    assert expression_functions(device, unit_names(u)) == {"norm2": "norm2_expr", "sq_expr": "sq_expr_expr"}
    assert with_effects(device) == {"put", "put_and_read", "count"}
