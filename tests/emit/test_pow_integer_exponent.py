"""``pow(x, 2)`` with an int exponent (C++'s ``pow(double, int)``, as a real myocyte model writes
it): TileLang turns an integer exponent into ``tl.pow_of_int``, which its C target cannot
compile ("Unresolved call tl.pow_of_int"), so the CPU check could not run the migrated kernel. The
exponent is printed in the base's float type, as C++ converts it."""
from __future__ import annotations

import pytest

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cmath>
__global__ void powk(const double* x, const float* f, double* y, float* g, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = pow(x[i], 2) + pow(x[i], i % 4);
        g[i] = powf(f[i], 3);
    }
}
"""

SPEC = spec_kernel("powk", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("x", "float64", 128, "in", 0.5, 3.0),
                   spec_buffer("f", "float32", 128, "in", 0.5, 3.0),
                   spec_buffer("y", "float64", 128, "out"), spec_buffer("g", "float32", 128, "out"),
                   spec_scalar("n", "int32", 128))


def test_an_integer_exponent_is_printed_as_the_bases_float_type(tmp_path):
    pytest.importorskip("tilelang")
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "T.pow(x[i], T.float64(2.0))" in text and "T.pow(x[i], T.Cast(T.float64, i % 4))" in text
