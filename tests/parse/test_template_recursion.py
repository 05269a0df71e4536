"""A device function template that calls itself as another instance, ended by an explicit
specialisation (wlcpow's TEA rounds: ``template <int N> void tea_core(uint &v0, uint &v1, uint
sum = 0) { ...; tea_core<N - 1>(v0, v1, sum); }`` beside ``template <> void tea_core<0>(...) {}``):
a recursion C++ unrolls while compiling, so each call's instance is inlined down to the
specialisation, the primary's default argument given to the first call. Checked equal on the CPU
against the g++-built original. Recursion at run time stays refused (M1204)."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
typedef unsigned int uint;
#define TEA_DT 0x9E3779B9

template <int N> __inline__ __device__
void tea_core(uint &v0, uint &v1, uint sum = 0)
{
    sum += TEA_DT;
    v0 += ((v1 << 4) + 0xA341316C) ^ (v1 + sum) ^ ((v1 >> 5) + 0xC8013EA4);
    v1 += ((v0 << 4) + 0xAD90777D) ^ (v0 + sum) ^ ((v0 >> 5) + 0x7E95761E);
    tea_core<N - 1>(v0, v1, sum);
}

template <> __inline__ __device__
void tea_core<0>(uint &v0, uint &v1, uint sum) {}

template <int N> __inline__ __device__
float gaussian_tea(bool pred, int u, int v)
{
    uint v0 = pred ? u : v;
    uint v1 = !pred ? u : v;
    tea_core<N>(v0, v1);
    return (float)(v0 >> 8) * (1.0f / 16777216.0f) - (float)(v1 & 0xffu) * 0.001f;
}

template <int N> __device__ int depth_sum(int x) { return x + depth_sum<N - 2>(x * 3); }
template <> __device__ int depth_sum<0>(int x) { return x; }
template <> __device__ int depth_sum<1>(int x) { return -x; }

__global__ void tea(const int *a, const int *b, float *out, int *sums, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = gaussian_tea<4>(a[i] > b[i], a[i] + i, b[i]) + gaussian_tea<2>(a[i] <= b[i], b[i], i);
        sums[i] = depth_sum<5>(a[i] % 100) + depth_sum<4>(b[i] % 100);
    }
}
"""

SPEC = spec_kernel("tea", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("a", "int32", 100, "in", -1000000, 1000000),
                   spec_buffer("b", "int32", 100, "in", -1000000, 1000000),
                   spec_buffer("out", "float32", 100, "out"),
                   spec_buffer("sums", "int32", 100, "out"),
                   spec_scalar("n", "int32", 100))


def test_template_recursion_ended_by_a_specialisation_checks_equal(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    (row,) = rows
    assert row["form"] not in ("hybrid", "unsupported"), row["diagnostics"]
    assert row["check"]["status"] == "pass", row["check"]
    text = (out / "k.py").read_text()
    assert "tea_core" in text and "depth_sum" in text


RUNTIME = """
__device__ int fact(int k) { return k <= 1 ? 1 : k * fact(k - 1); }
__global__ void recursive(int *out, int n)
{
    int i = threadIdx.x;
    if (i < n) out[i] = fact(i % 6);
}
"""


def test_recursion_at_run_time_stays_refused(tmp_path):
    _out, rows = converted(tmp_path, RUNTIME, expect_ok=False)
    (row,) = rows
    assert row["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M1204" and "'fact' calls itself" in d["message"] for d in row["diagnostics"]), row
