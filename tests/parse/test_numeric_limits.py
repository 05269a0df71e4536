"""``std::numeric_limits<T>::max()`` and its siblings in kernels, the way sorting and
reduction kernels pad with them: on a template's type (clang leaves the call unresolved there)
and on a named type; each becomes a TileLang constant of its dtype."""
from __future__ import annotations

import numpy as np
import pytest

from migrate.compat import cuda_math
from tests.analysis.support import converted

KERNEL = """
#include <limits>
#include <cuda_runtime.h>
// the minimum of each row of 8, the row padded with the type's largest value past n
template <typename K>
__global__ void row_min(const K* key, K* out, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    K best = std::numeric_limits<K>::max();
    K top = std::numeric_limits<K>::lowest();
    for (int c = 0; c < 8; c++) {
        K v = (r * 8 + c < n) ? key[r * 8 + c] : std::numeric_limits<K>::max();
        best = v < best ? v : best;
        top = v > top && v != std::numeric_limits<K>::max() ? v : top;
    }
    out[2 * r] = best;
    out[2 * r + 1] = top;
}
// named types: the smallest normal float, epsilon, infinity, an integer's min
__global__ void clamp_small(const float* x, float* y, int* k, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float v = x[i];
    if (fabsf(v) < 0.25f) v = std::numeric_limits<float>::min();
    if (v > 0.9f) v = std::numeric_limits<float>::infinity();
    y[i] = v * (1.0f + std::numeric_limits<float>::epsilon());
    k[i] = v < 0.0f ? std::numeric_limits<int>::min() : std::numeric_limits<unsigned short>::max();
}

int main()
{
    int *a, *b; float *c, *d; double *e, *f;
    cudaMalloc(&a, 2048); cudaMalloc(&b, 2048); cudaMalloc(&c, 2048); cudaMalloc(&d, 2048);
    cudaMalloc(&e, 4096); cudaMalloc(&f, 4096);
    row_min<int><<<2, 32>>>(a, b, 500);
    row_min<float><<<2, 32>>>(c, d, 500);
    row_min<double><<<2, 32>>>(e, f, 500);
    clamp_small<<<4, 64>>>(c, d, a, 256);
    return 0;
}
"""


def _spec(ctype: str, dtype: str) -> str:
    return f"""
[[kernel]]
id = "row_min_{ctype}"
name = "row_min"
template = ["{ctype}"]
grid = [2, 1, 1]
block = [32, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "key"
buffer = "{dtype}"
elements = 500
role = "in"
range = [-50, 50]
[[kernel.args]]
name = "out"
buffer = "{dtype}"
elements = 128
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 500
"""


SPEC = _spec("int", "int32") + _spec("float", "float32") + _spec("double", "float64") + """
[[kernel]]
name = "clamp_small"
grid = [4, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 256
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "k"
buffer = "int32"
elements = 256
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256
"""


def test_limits_on_template_and_named_types_convert_and_check_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    assert {k["kernel"]: k["form"] for k in kernels} == {"row_min": "tile", "clamp_small": "tile"}
    text = (out / "k.py").read_text()
    assert "T.max_value(K)" in text and "T.min_value(K)" in text
    checks = {k["check"]["id"]: k["check"]["status"] for k in kernels}
    assert set(checks.values()) == {"pass"}, kernels


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int8", "int32", "uint32", "int64"])
def test_each_limit_is_the_value_numpy_gives(dtype):
    info = np.finfo(dtype) if dtype.startswith("float") else np.iinfo(dtype)
    floating = dtype.startswith("float")
    expected = {"max": info.max, "lowest": info.min,
                "min": info.tiny if floating else info.min,
                "epsilon": info.eps if floating else 0,
                "infinity": np.inf if floating else 0}
    for member, want in expected.items():
        got = cuda_math.numeric_limit(member, dtype)
        assert str(got.dtype) == dtype
        value = float(got.value) if hasattr(got, "value") else float("inf")  # T.infinity is a call
        if member == "infinity" and floating:
            assert "infinity" in str(got)
        else:
            assert value == float(want), (member, value, want)
    nan = cuda_math.numeric_limit("quiet_NaN", dtype)
    assert (np.isnan(float(nan.value)) if floating else int(nan.value) == 0)
