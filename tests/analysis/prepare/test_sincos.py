"""sincos-like calls (analysis.prepare.sincos): ``sincosf(a, &s, &c);`` returns both results
through pointers, which TileLang has no form for; as a statement of its own it is the two
assignments ``s = sinf(a); c = cosf(a);``, in kernels (a rotation matrix from an angle) and in
device functions that pass their own result pointers on (a complex exponential)."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.sincos import split_sincos
from migrate.ir import model as m
from tests.analysis.support import calls, converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

KERNEL = """
#include <cuda_runtime.h>
__device__ void cexpf2(float a, float* re, float* im) { __sincosf(a, im, re); }
__global__ void rotate(const int n, const float angle, const float* x, float* y, double* z)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float s, c;
    sincosf(angle * (float)(i % 7), &s, &c);
    float re, im;
    cexpf2(x[2 * i], &re, &im);
    double ds[1], dc;
    sincos((double)x[2 * i + 1], &ds[0], &dc);
    y[2 * i] = c * x[2 * i] - s * x[2 * i + 1] + re;
    y[2 * i + 1] = s * x[2 * i] + c * x[2 * i + 1] + im;
    z[i] = ds[0] * dc;
}
"""

SPEC = spec_kernel("rotate", (4, 1, 1), (64, 1, 1), "fp32",
                   spec_scalar("n", "int32", 256), spec_scalar("angle", "float32", 0.37),
                   spec_buffer("x", "float32", 512, "in", -3.0, 3.0),
                   spec_buffer("y", "float32", 512, "out"), spec_buffer("z", "float64", 256, "out"))


def _place(e) -> str:
    if isinstance(e, m.Ref):
        return e.name
    if isinstance(e, m.Unary) and e.op == "*":
        return "*" + _place(e.operand)
    if isinstance(e, m.Index) and isinstance(e.index, m.IntLit):
        return f"{_place(e.base)}[{e.index.value}]"
    raise AssertionError(e)


def test_each_call_statement_is_two_assignments(tmp_path):
    u = unit(tmp_path, KERNEL)
    fn = split_sincos(u.kernel("rotate"))
    assert not {"sincosf", "sincos"} & set(calls(fn))
    stores = [(_place(a.target), a.value.callee) for a in nodes(fn, m.Assign) if isinstance(a.value, m.Call)]
    assert ("s", "sinf") in stores and ("c", "cosf") in stores
    assert ("ds[0]", "sin") in stores and ("dc", "cos") in stores
    # in the device function the results go through its own pointers, in the order of the call
    dev = split_sincos(next(f for f in u.device_functions if f.name == "cexpf2"))
    assert [(_place(a.target), a.value.callee) for a in nodes(dev, m.Assign)] == [("*im", "__sinf"), ("*re", "__cosf")]


def test_a_call_used_as_a_value_or_with_a_stepping_angle_is_left(tmp_path):
    u = unit(tmp_path, """
        __global__ void k(float* y, int n) {
            int i = threadIdx.x; float s, c;
            sincosf((float)(i++), &s, &c);
            y[i] = s + c;
        }
    """)
    fn = split_sincos(u.kernel("k"))
    assert "sincosf" in calls(fn)


def test_the_kernel_converts_and_matches_the_cuda_on_the_cpu(tmp_path):
    pytest.importorskip("tilelang")
    _out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k


#: frexp and modf return their second result through a pointer; real code takes a power of two
#: from frexpf's exponent (the way rounding-factor kernels do) and splits values with modf
SPLITS = """
#include <cuda_runtime.h>
__device__ float round_factor(float delta) {
    int e;
    frexpf(delta, &e);
    return ldexpf(1.f, e);
}
__global__ void splits(const int n, const float* x, const double* d, float* mant, int* ex, float* f,
                       float* whole, double* df, double* dw, float* p2)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int e;
    mant[i] = 0.0f;
    float m = frexpf(x[i], &e);
    mant[i] = m;
    ex[i] = e;
    float w;
    f[i] = modff(x[i], &w);
    whole[i] = w;
    double dwi;
    df[i] = modf(d[i], &dwi);
    dw[i] = dwi;
    p2[i] = round_factor(x[i]);
}
"""


def test_frexp_and_modf_split_into_their_results_and_match_numpy(tmp_path):
    import numpy as np
    pytest.importorskip("tilelang")
    from tests.analysis.support import module_of, program_converted
    out = program_converted(tmp_path, SPLITS, "k.cu")
    (row,) = __import__("json").loads((out / "report.json").read_text())["kernels"]
    assert row["form"] not in ("hybrid", "unsupported"), row["reason"]
    mod = module_of(out / "k.py")
    x = np.array([0.0, -0.0, 1.0, -2.5, 3.75, 1e-40, -7e-39, 6e37, np.inf, -np.inf, 0.3, -1e5, 8.0, 0.5,
                  123.456, -0.999], np.float32)
    d = x.astype(np.float64) * 1.5
    n = x.size
    outs = {name: np.full(n, np.nan, t) for name, t in (("mant", np.float32), ("f", np.float32),
            ("whole", np.float32), ("df", np.float64), ("dw", np.float64), ("p2", np.float32))}
    ex = np.full(n, -77, np.int32)
    mod.splits(n, x, d, outs["mant"], ex, outs["f"], outs["whole"], outs["df"], outs["dw"], outs["p2"],
               grid=1, block=32, target="c")
    m_ref, e_ref = np.frexp(x)
    finite = np.isfinite(x)
    np.testing.assert_array_equal(ex[finite], e_ref[finite])
    np.testing.assert_array_equal(outs["mant"], m_ref)
    f_ref, w_ref = np.modf(x)
    np.testing.assert_array_equal(outs["f"], f_ref)
    np.testing.assert_array_equal(outs["whole"], w_ref)
    np.testing.assert_array_equal(np.signbit(outs["f"]), np.signbit(f_ref))
    df_ref, dw_ref = np.modf(d)
    np.testing.assert_array_equal(outs["df"], df_ref)
    np.testing.assert_array_equal(outs["dw"], dw_ref)
    p2_ref = np.ldexp(np.float32(1.0), e_ref).astype(np.float32)
    np.testing.assert_array_equal(outs["p2"][finite], p2_ref[finite])
