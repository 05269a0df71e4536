"""Types declared inside kernels and device functions (parse.local_types): a struct, an unnamed
struct, an enum and a union read as if declared at namespace scope, each named for its function
(two functions' ``Acc`` of different fields stay apart). Written as the pool writes them
(aobench's union inside a method for a float's bits, grep's unnamed struct of two ints, geglu's
struct in the kernel). Checked equal on the CPU."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNELS = """
struct Rng {
    unsigned int x;
    __device__ Rng(unsigned int seed) { x = seed; }
    __device__ float operator()(void) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        union { float f; unsigned int i; } u;     // a float made of random bits
        u.i = (x & 0x7fffffu) | 0x3f800000u;
        return u.f - 1.0f;
    }
};

__device__ float blend(float a, float b)
{
    struct Acc { float sum; int count; };       // another Acc than the kernel's
    Acc s;
    s.sum = a + b;
    s.count = 2;
    return s.sum / (float)s.count;
}

__global__ void local_types(const float *in, float *out, int n)
{
    struct Acc { float sum; float weight; };
    enum Mode { PLAIN = 1, DOUBLE = 2 };
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    Acc a;
    a.sum = in[i];
    a.weight = 0.5f;
    Acc parts[3];
    for (int k = 0; k < 3; k++) {
        parts[k].sum = in[(i + k) % n] * (float)DOUBLE;
        parts[k].weight = (float)k;
    }
    for (int k = 0; k < 3; k++) a.sum += parts[k].sum * parts[k].weight;
    struct { int count; float total; } s;
    s.count = i % 4;
    s.total = blend(a.sum, in[(i + 7) % n]);
    Rng rng(1234u + i);
    float r = rng();
    r += rng();
    out[i] = a.sum * a.weight + (float)PLAIN + s.total * (float)s.count + r;
}
"""

SPEC = spec_kernel("local_types", (2, 1, 1), (64, 1, 1), "fp32",
                   spec_buffer("in", "float32", 100, "in", -2.0, 2.0),
                   spec_buffer("out", "float32", 100, "out"),
                   spec_scalar("n", "int32", 100))


def test_local_types_read_as_namespace_types_check_equal(tmp_path):
    out, rows = converted(tmp_path, KERNELS, SPEC, expect_ok=False)
    kernel = {k["kernel"]: k for k in rows}["local_types"]
    assert kernel["form"] not in ("hybrid", "unsupported"), kernel["diagnostics"]
    assert kernel["check"]["status"] == "pass", kernel["check"]
    assert "T.reinterpret(" in (out / "k.py").read_text()  # the union's float read from its int's bits


def test_a_local_struct_of_a_templates_type_and_value_copies_its_elements(tmp_path):
    """geglu's ``struct U { scalar_t data[VEC_ELEMS]; }`` in a kernel template: each instance's
    struct is its elements in order (parse.build lays out a template's implicit instance whose
    value parameter no method names), read and written through the buffers' views. It had been
    refused naming ``packed_Pack``, the type named for its function."""
    src = """
template <typename T, int N>
__global__ void packed(const T *x, T *y)
{
    struct Pack { T data[N]; };
    Pack p = *reinterpret_cast<const Pack *>(&x[threadIdx.x * N]);
    *reinterpret_cast<Pack *>(&y[threadIdx.x * N]) = p;
}
template __global__ void packed<float, 4>(const float *, float *);
"""
    import numpy as np
    import torch

    from tests.analysis.support import module_of
    out, rows = converted(tmp_path, src, expect_ok=False)
    kernel = {k["kernel"]: k for k in rows}["packed"]
    assert kernel["form"] not in ("hybrid", "unsupported"), kernel["diagnostics"]
    x = np.random.default_rng(31).uniform(-3, 3, 4 * 64).astype(np.float32)
    y = torch.full((4 * 64,), float("nan"), dtype=torch.float32)  # poisoned
    module_of(out / "k.py").packed(torch.from_numpy(x), y, grid=1, block=64, target="c")
    assert np.array_equal(y.numpy(), x)
