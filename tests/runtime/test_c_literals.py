"""Float constants on TileLang's C target: TVM prints them with 7 significant digits, so a
migrated fp64 kernel checked on the CPU ran with other constants than its CUDA (runtime/c_literals.py).
Seen on a real program: a Gabor filter's ``cos(2 * pi * f * u)`` differed in the 7th digit."""
from __future__ import annotations

import math

import numpy as np
import pytest

from runtime.c_literals import bits, exact_float_literals, prints_exactly
from tests.analysis.lift.support import convert

WAVES = """
    __global__ void waves(const double* __restrict__ u, double* __restrict__ out, float* __restrict__ g,
                          double f, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            out[i] = cos(2.0 * 3.141592653589793 * f * u[i]) * 0.7071067811865476;
            g[i] = (float)u[i] * 3.14159265f;
        }
    }
"""


def test_a_kernel_with_full_precision_constants_passes_its_cpu_check(tmp_path):
    kernels, text = convert(tmp_path, WAVES, "--check", "cpu", spec="""
        [[kernel]]
        name = "waves"
        grid = [2, 1, 1]
        block = [64, 1, 1]
        tolerance = "fp64"
        [[kernel.args]]
        name = "u"
        buffer = "float64"
        elements = 100
        role = "in"
        range = [1000.0, 5000.0]
        [[kernel.args]]
        name = "out"
        buffer = "float64"
        elements = 100
        role = "out"
        [[kernel.args]]
        name = "g"
        buffer = "float32"
        elements = 100
        role = "out"
        [[kernel.args]]
        name = "f"
        scalar = "float64"
        value = 123.456
        [[kernel.args]]
        name = "n"
        scalar = "int32"
        value = 100
    """)
    # the emitted module keeps the constants readable; only the C target's compile rewrites them
    assert "3.141592653589793" in text
    assert kernels["waves"]["check"]["status"] == "pass", kernels["waves"]["check"]


def test_only_constants_that_would_print_inexactly_are_rewritten():
    assert prints_exactly(0.5, "float64") and prints_exactly(0.1, "float64")
    assert prints_exactly(float(np.float32(0.2)), "float32")
    assert not prints_exactly(math.pi, "float64")
    assert not prints_exactly(float(np.float32(3.14159265)), "float32")
    assert prints_exactly(math.inf, "float64")
    assert np.frombuffer(np.uint64(bits(math.pi, "float64")).tobytes(), np.float64)[0] == math.pi


def test_the_rewritten_kernel_computes_with_every_digit():
    tilelang = pytest.importorskip("tilelang")
    import tilelang.language as T
    import torch

    @T.prim_func
    def k(a: T.Tensor((4,), T.float64), b: T.Tensor((4,), T.float32), x: T.float64):
        with T.Kernel(1, threads=4) as bx:
            for i in T.Parallel(4):
                a[i] = T.cos(T.float64(2.0) * T.float64(3.141592653589793) * x) + T.float64(0.1)
                b[i] = T.float32(3.14159265)

    fixed = exact_float_literals(k)
    assert "c2t_bits_float64" in fixed.script() and "c2t_bits_float32" in fixed.script()
    a, b = torch.full((4,), -1.0, dtype=torch.float64), torch.full((4,), -1.0)
    tilelang.compile(fixed, target="c", pass_configs={"tirx.disable_vectorize": True})(a, b, 1234.5678)
    assert a[0].item() == math.cos(2.0 * math.pi * 1234.5678) + 0.1
    assert b[0].item() == float(np.float32(3.14159265))


FOLDED = """
    __global__ void rates(const double* __restrict__ t, double* __restrict__ out, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        double Y, y;
        Y = 0.24;                 // declared first, given its value later: a constant TileLang binds once
        y = Y / (4 - 4 * Y);      // which TVM's simplifier folds while lowering, into a new constant
        if (i < n) out[i] = t[i] * y + 1.0 / 3.0;
    }
"""


def test_constants_the_lowering_folds_keep_every_digit(tmp_path):
    """y = 0.24 / 3.04, folded by TVM after the module was written, printed 7.894737e-02 on the
    C target: the CPU check of a real cooling kernel failed at fp64 (relative error 4e-9)."""
    from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

    spec = spec_kernel("rates", (2, 1, 1), (64, 1, 1), "fp64",
                       spec_buffer("t", "float64", 100, "in", 10.0, 5000.0),
                       spec_buffer("out", "float64", 100, "out"), spec_scalar("n", "int32", 100))
    _out, (k,) = converted(tmp_path, FOLDED, spec)
    assert k["check"]["status"] == "pass", k["check"]
