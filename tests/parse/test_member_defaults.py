"""A constructor assigns the default member initialisers of the fields its initialiser list does
not name (aobench's ``class RNG { unsigned x; const int fmask = (1 << 23) - 1; RNG(seed) { x =
seed; } ... }``: without them ``fmask`` was never set). Checked equal on the CPU."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
class RNG {
  public:
    unsigned int x;
    const int fmask = (1 << 23) - 1;
    int calls{3};
    int given = 5;
    __device__ RNG(const unsigned int seed) : given(7) { x = seed; }
    __device__ int next() {
        x ^= x >> 6; x ^= x << 17; x ^= x >> 9;
        calls += given;
        return int(x);
    }
    __device__ float operator()(void) {
        union { float f; int i; } u;
        u.i = (next() & fmask) | 0x3f800000;
        return u.f - 1.f;
    }
};

__global__ void rng_kernel(const unsigned *seeds, float *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    RNG rng(seeds[i]);
    float a = rng();
    float b = rng();
    out[i] = a + 10.0f * b + (float)rng.calls;
}
"""

SPEC = spec_kernel("rng_kernel", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("seeds", "uint32", 100, "in", 1, 4000000000),
                   spec_buffer("out", "float32", 100, "out"),
                   spec_scalar("n", "int32", 100))


def test_a_constructor_applies_default_member_initialisers(tmp_path):
    _out, rows = converted(tmp_path, KERNEL, SPEC, expect_ok=False)
    kernel = {k["kernel"]: k for k in rows}["rng_kernel"]
    assert kernel["form"] not in ("hybrid", "unsupported"), kernel["diagnostics"]
    assert kernel["check"]["status"] == "pass", kernel["check"]
