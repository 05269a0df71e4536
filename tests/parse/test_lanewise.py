"""Overloaded operators on CUDA vector types (parse/lanewise.py): modelled as plain syntax only
where the project's own definition acts lane by lane, the way helper_math-style headers write
them; any other definition (a complex product on float2) is a call of the user's device function
(``operator_mul``), which inlining gives its meaning, never taken lane by lane."""
from __future__ import annotations

from migrate.ir import model as m
from migrate.parse.frontend import parse_file
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

OPERATORS = """
#include <cuda_runtime.h>
inline __host__ __device__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
inline __host__ __device__ float2 operator*(float s, float2 a) { return make_float2(s * a.x, s * a.y); }
inline __host__ __device__ float2 operator-(float2 a) { return make_float2(-a.x, -a.y); }
inline __host__ __device__ void operator*=(float2 &a, float s) { a.x *= s; a.y *= s; }
inline __host__ __device__ void operator+=(float4 &a, float4 b) { a.x = a.x + b.x; a.y = a.y + b.y; a.z = a.z + b.z; a.w = a.w + b.w; }
inline __host__ __device__ float4 operator-(float4 a, float4 b) { float4 r; r.x = a.x - b.x; r.y = a.y - b.y; r.z = a.z - b.z; r.w = a.w - b.w; return r; }
"""


def _kernel(tmp_path, text, name):
    src = tmp_path / "k.cu"
    src.write_text(text)
    parsed = parse_file(src)
    return parsed.unit.kernel(name), parsed


def test_lane_by_lane_operators_are_plain_syntax(tmp_path):
    k, _ = _kernel(tmp_path, OPERATORS + """
    __global__ void k(const float2* a, const float2* b, float2* c, float4* d, const float4* e, float s) {
        int i = threadIdx.x;
        c[i] = s * a[i] + -b[i];
        c[i] *= 0.5f;
        d[i] += e[i] - e[i + 1];
    }
    """, "k")
    ops = [(type(n).__name__, n.op) for n in m.walk(k.body) if isinstance(n, (m.Binary, m.Unary, m.Assign))
           and isinstance(n.type, m.Vector) or (isinstance(n, m.Assign) and n.op != "=")]
    assert ("Binary", "+") in ops and ("Binary", "*") in ops and ("Unary", "-") in ops and ("Binary", "-") in ops
    assert {op for kind, op in ops if kind == "Assign"} >= {"*=", "+="}
    assert not [n for n in m.walk(k.body) if isinstance(n, m.UnsupportedExpr)]


def test_an_operator_with_another_meaning_is_a_call_of_its_device_function(tmp_path):
    k, parsed = _kernel(tmp_path, """
    #include <cuda_runtime.h>
    // float2 as a complex number: the product is not lane by lane
    inline __device__ float2 operator*(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
    inline __device__ float2 operator-(float2 a, float2 b) { return make_float2(b.x - a.x, b.y - a.y); }
    inline __device__ void operator*=(float2 &a, float2 b) { a = a * b; }
    __global__ void k(const float2* a, float2* c) {
        int i = threadIdx.x; c[i] = a[i] * a[i + 1]; c[i + 2] = a[i] - a[i]; c[i + 3] *= a[i];
    }
    """, "k")
    called = [(n.callee, n.kind) for n in m.walk(k.body) if isinstance(n, m.Call)]
    assert called == [("operator_mul", "device"), ("operator_sub", "device")]
    assert {f.name for f in parsed.unit.device_functions} >= {"operator_mul", "operator_sub"}
    # a compound assignment is no value to inline: refused with its definition
    (bad,) = [n for n in m.walk(k.body) if isinstance(n, m.UnsupportedExpr)]
    assert "operator*= on 'float2' is not modelled: its definition (k.cu:6) is not lane by lane" in bad.what


COMPLEX = """
#include <cuda_runtime.h>
__device__ __forceinline__ float2 operator*(float2 a, float2 b) {
  return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ float2 operator*(float2 a, float s) { return make_float2(a.x * s, a.y * s); }
__device__ __forceinline__ float2 operator+(float2 a, float2 b) { return make_float2(a.x + b.x, a.y + b.y); }
__device__ float2 operator/(float2 a, float2 b) {
  float d = b.x * b.x + b.y * b.y;
  return make_float2((a.x * b.x + a.y * b.y) / d, (a.y * b.x - a.x * b.y) / d);
}
__global__ void cmul(const float2* a, const float2* b, float2* c, float s, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = (a[i] * b[i]) * s + a[i] / b[i];
}
"""


COMPLEX_SPEC = spec_kernel("cmul", (4, 1, 1), (64, 1, 1), "fp32",
                           spec_buffer("a", "float32", 512, "in", -2.0, 2.0),
                           spec_buffer("b", "float32", 512, "in", 0.5, 2.0),
                           spec_buffer("c", "float32", 512, "out"),
                           spec_scalar("s", "float32", 0.75), spec_scalar("n", "int32", 256))


def test_complex_operators_are_inlined_and_check_equal(tmp_path):
    """Complex arithmetic on float2 through the user's operator functions (overloaded: complex by
    complex and complex by scalar): inlined, checked on the CPU against the original."""
    _out, (k,) = converted(tmp_path, COMPLEX, COMPLEX_SPEC)
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]["message"]
