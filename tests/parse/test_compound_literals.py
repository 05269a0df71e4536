"""C compound literals of CUDA vector types, the way fft writes its complex arithmetic
(``#define T2 float2``, ``return (T2){ a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x };``, a butterfly
macro, constants ``(T2){ 0, -1 }``): each is the ``make_float2(...)`` it equals. Checked equal on
the CPU against the g++-built original; a struct's compound literal stays refused, named."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
#define T float
#define T2 float2
#define exp_1_4 (T2){ 0, -1 }
__device__ T2 exp_i(T phi) { return (T2){ cosf(phi), sinf(phi) }; }
__device__ T2 cmplx_mul(T2 a, T2 b) { return (T2){ a.x*b.x - a.y*b.y, a.x*b.y + a.y*b.x }; }
__device__ T2 cmplx_add(T2 a, T2 b) { return (T2){ a.x + b.x, a.y + b.y }; }
__device__ T2 cmplx_sub(T2 a, T2 b) { return (T2){ a.x - b.x, a.y - b.y }; }
#define FFT2(a0, a1) { T2 c0 = *a0; *a0 = cmplx_add(c0, *a1); *a1 = cmplx_sub(c0, *a1); }

__global__ void butterfly(T2 *work, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T2 data[4];
    for (int j = 0; j < 4; j++) data[j] = work[(i + j * n) % (4 * n)];
    FFT2(&data[0], &data[2]);
    FFT2(&data[1], &data[3]);
    data[3] = cmplx_mul(data[3], exp_1_4);
    for (int j = 1; j < 4; j++) data[j] = cmplx_mul(data[j], exp_i((T)-0.25f * j * i));
    for (int j = 0; j < 4; j++) work[4 * n + i * 4 + j] = data[j];
}
"""

SPEC = spec_kernel("butterfly", (2, 1, 1), (32, 1, 1), "fp32",
                   spec_buffer("work", "float32", 2 * 8 * 64, "inout", -2.0, 2.0),
                   spec_scalar("n", "int32", 64))


def test_vector_compound_literals_check_equal(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["diagnostics"]
    assert row["check"]["status"] == "pass", row["check"]


REFUSED = """
struct pixel { float r, g; };
__global__ void struct_literal(pixel *out, int n)
{
    int i = threadIdx.x;
    if (i < n) out[i] = (pixel){ 1.0f, (float)i };
}
__global__ void partial_literal(float2 *out, int n)
{
    int i = threadIdx.x;
    if (i < n) out[i] = (float2){ (float)i };
}
"""


def test_other_compound_literals_are_named(tmp_path):
    _out, rows = converted(tmp_path, REFUSED, expect_ok=False)
    for row in rows:
        assert row["form"] in ("hybrid", "unsupported"), row
        assert any("compound literal other than" in d["message"] for d in row["diagnostics"]), row
