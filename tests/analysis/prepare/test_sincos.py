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
