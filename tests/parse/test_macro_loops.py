"""Loops written by macros, the way Caffe- and PyTorch-derived kernels write their grid-stride
loops (``CUDA_KERNEL_LOOP(i, n) { ... }``): every part of the header starts at the macro's name,
so the parts are told apart by what they are, not where they stand."""
from __future__ import annotations

from migrate.ir import model as m
from tests.analysis.support import converted, nodes, unit

KERNEL = """
#include <cuda_runtime.h>
#define CUDA_KERNEL_LOOP(i, n)                        \\
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; \\
       i < (n);                                       \\
       i += blockDim.x * gridDim.x)
__global__ void im2col_like(const float* x, float* y, const int n, const int w)
{
  CUDA_KERNEL_LOOP(index, n)
  {
    const int c = index % w;
    y[index] = x[index] * (float)(c + 1) - x[(index + 1) % n];
  }
}
"""

SPEC = """
[[kernel]]
name = "im2col_like"
grid = [3, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1000
role = "in"
range = [-2.0, 2.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 1000
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 1000
[[kernel.args]]
name = "w"
scalar = "int32"
value = 7
"""


def _header(fn):
    (loop,) = nodes(fn, m.For)
    return loop.init, loop.cond, loop.step


def test_a_grid_stride_loop_from_a_macro_keeps_its_three_parts(tmp_path):
    init, cond, step = _header(unit(tmp_path, KERNEL).kernel("im2col_like"))
    assert isinstance(init, m.DeclStmt) and init.decls[0].name == "index"
    assert isinstance(cond, m.Binary) and cond.op == "<"
    assert isinstance(step, m.Assign) and step.op == "+="


def test_macro_loops_missing_a_part_put_the_others_in_place(tmp_path):
    u = unit(tmp_path, """
        #define UNTIL(i, n) for (int i = 0; i < (n);)
        #define FROM(i, n) for (; i < (n); i++)
        #define EVERY(i) for (i = 0;; i++)
        __global__ void a(int* y, int n) { UNTIL(i, n) { y[i] = i; i += 2; } }
        __global__ void b(int* y, int n) { int i = threadIdx.x; FROM(i, n) { y[i] = 1; } }
        __global__ void c(int* y, int n) { int i; EVERY(i) { if (i >= n) break; y[i] = 2; } }
    """)
    init, cond, step = _header(u.kernel("a"))
    assert isinstance(init, m.DeclStmt) and isinstance(cond, m.Binary) and step is None
    init, cond, step = _header(u.kernel("b"))
    assert init is None and isinstance(cond, m.Binary) and isinstance(step, m.Unary)
    init, cond, step = _header(u.kernel("c"))
    assert cond is None and isinstance(step, m.Unary)
    assert isinstance(init, m.ExprStmt) and isinstance(init.expr, m.Assign)


def test_a_macro_loop_whose_parts_look_alike_is_refused_with_a_diagnostic(tmp_path):
    _, kernels = converted(tmp_path, """
        #define ONCE(i) for (i = 0;;)
        #define EVER(i) for (;; i++)
        __global__ void a(int* y, int n) { int i; ONCE(i) { if (i >= n) break; y[i] = i; i += 3; } }
        __global__ void b(int* y, int n) { int i = 0; EVER(i) { if (i >= n) break; y[i] = i; } }
    """, expect_ok=False)
    assert [k["form"] for k in kernels] == ["hybrid", "hybrid"]  # kept as CUDA
    for k in kernels:
        (d,) = [d for d in k["diagnostics"] if "cannot be told apart" in d["message"]]
        assert d["code"] == "M1206" and d["line"] in (4, 5)


def test_a_macro_grid_stride_loop_converts_and_checks_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] == "tile", k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
