"""Defects the CPU replay of a real bit-packing program found in a module that built on no
target: a template device function called with a literal (``roundUpDiv(num, 256)``), whose macro
read the argument's dtype off a Python number (TileLang binds a literal argument as one), and
``int idx = threadIdx.x - (BLOCK / 2)``, an unsigned subtraction of a constant expression that
TVM refused to fold at thread 0 (only a literal was printed as the signed ``tx - 128``). Once it
built, the branches' stores were wrong: TileLang's DecoupleTypeCast staged a vectorised ``if
.. else`` body that casts and copied both branches' buffers out at every element
(runtime.tilelang_support._patch_nested_guards leaves such a body alone)."""
from __future__ import annotations

import pytest

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#define BLOCK 128
template <typename U, typename T>
__host__ __device__ U round_up_div(U const num, T const chunk) { return (num / chunk) + (num % chunk > 0); }

__global__ void split_halves(const int* __restrict__ x, int* __restrict__ lo, int* __restrict__ hi,
                             unsigned int n) {
    __shared__ int buf[BLOCK];
    buf[threadIdx.x] = x[blockIdx.x * BLOCK + threadIdx.x];
    __syncthreads();
    if (threadIdx.x < BLOCK / 2) {
        int const idx = threadIdx.x;
        lo[blockIdx.x * BLOCK + threadIdx.x] = buf[idx] + (int)round_up_div(n, 32);
    } else {
        int const idx = threadIdx.x - (BLOCK / 2);
        hi[blockIdx.x * BLOCK + threadIdx.x] = buf[idx] * 2;
    }
}
"""

SPEC = spec_kernel("split_halves", (4, 1, 1), (128, 1, 1), "exact",
                   spec_buffer("x", "int32", 512, "in", -1000, 1000),
                   spec_buffer("lo", "int32", 512, "inout", -5, 5), spec_buffer("hi", "int32", 512, "inout", -5, 5),
                   spec_scalar("n", "uint32", 1000))


def test_literal_template_arguments_and_constant_offsets_build_and_check_equal(tmp_path):
    pytest.importorskip("tilelang")
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k["check"]
    assert "cuda_math.dtype_of(chunk)" in (out / "k.py").read_text()
    # the shared array forwarded, the thread index read as the element's lane: a map; kept at
    # thread structure (--no-lift), the constant offset is the signed tx - 64
    import json

    from migrate.cli import main
    portable = tmp_path / "portable"
    assert main(["convert", str(tmp_path / "k.cu"), "-o", str(portable), "-q", "--check", "cpu", "--no-lift"]) == 0
    (kp,) = json.loads((portable / "report.json").read_text())["kernels"]
    assert kp["form"] == "portable" and kp["check"]["status"] == "pass", kp["check"]
    assert "tx - 64" in (portable / "k.py").read_text()
