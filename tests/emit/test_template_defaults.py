"""Template parameters' defaults as the factory's Python defaults: ``template <bool useHashtable =
false>`` (logic-network rewriting's ``recordMFFC``) printed ``useHashtable=false``, a NameError when
the module was imported, so every kernel of the file failed on the GPU replay. A bool is
``False``/``True``, a number its value (``256u``, ``0x10``), a default spelled with names is
``None`` (the launch gives it)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#define WIDTH 4
template <bool doubled = false, unsigned step = 2u, int span = 0x10, int wide = WIDTH * 2>
__global__ void scale(const int* __restrict__ x, int* __restrict__ y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (doubled ? 2 * x[i] : x[i]) + (int)step + span + wide;
}
int main() {
    int *x, *y;
    cudaMalloc(&x, 256 * 4); cudaMalloc(&y, 256 * 4);
    scale<><<<2, 128>>>(x, y, 256);
    scale<true, 3u, 1, 5><<<2, 128>>>(x, y, 256);
    cudaDeviceSynchronize();
    return 0;
}
"""


def test_defaults_are_python_values_and_the_module_runs(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "t.cu")
    mod = module_of(out / "t.py")  # the defaults are evaluated here
    defaults = {k: v.default for k, v in inspect.signature(mod.make_scale).parameters.items()}
    assert (defaults["doubled"], defaults["step"], defaults["span"], defaults["wide"]) == (False, 2, 16, None)
    x = np.random.default_rng(2).integers(-50, 50, 256).astype(np.int32)
    for template, expected in ((("false", "2u", "16", "8"), x + 2 + 16 + 8), (("true", "3u", "1", "5"), 2 * x + 9)):
        y = np.full(256, -1, np.int32)
        mod.scale(x, y, 256, grid=2, block=128, template=template, target="c")
        np.testing.assert_array_equal(y, expected)
