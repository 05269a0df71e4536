"""A conditional on an unsigned value inside a lifted map, the way random-number generators seed
their state (``state = !seed ? 0xffffffffu : seed;`` on ``uint64``/``uint32``, then a
grid-stride loop): TVM's read/write-region detector solves the ``if_then_else``'s condition and
stops the build with "cannot make uint from negative value -1" (on the GPU and the C target). The
pass fix in runtime.tilelang_support makes such an ``if_then_else`` with arms that load nothing a
``Select``; one whose arm loads keeps its ``if_then_else``."""
from __future__ import annotations

from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel

SOURCE = """
#include <cuda_runtime.h>
#include <cstdint>
__device__ uint32_t mix(uint32_t x)
{
    x ^= x >> 16; x *= 0x85ebca6bu; x ^= x >> 13; x *= 0xc2b2ae35u; x ^= x >> 16;
    return x;
}
__global__ void seeded(uint64_t *out, const uint64_t n, const uint32_t seed)
{
    const uint32_t tid = blockDim.x * blockIdx.x + threadIdx.x;
    uint64_t s = mix(seed + tid) & 7u;
    uint64_t w = !s ? 0xffffffffull : s;
    uint32_t c = (uint32_t)s < 3u ? 3u * (uint32_t)s : (uint32_t)s + 1u;
    for (uint64_t i = tid; i < n; i += blockDim.x * gridDim.x) {
        w = w * 6906969069ull + 1234567ull;
        out[i] = w ^ c;
    }
}
int main()
{
    uint64_t *o;
    cudaMalloc(&o, 8 * 4096);
    seeded<<<8, 128>>>(o, 4096, 42u);
}
"""

SPEC = spec_kernel("seeded", (8, 1, 1), (128, 1, 1), "exact",
                   spec_buffer("out", "uint64", 4096, "out"),
                   '[[kernel.args]]\nname = "n"\nscalar = "uint64"\nvalue = 4096\n'
                   '[[kernel.args]]\nname = "seed"\nscalar = "uint32"\nvalue = 42\n')


def _reference() -> "list[int]":
    mask = (1 << 64) - 1
    out = [0] * 4096
    for tid in range(8 * 128):
        x = (42 + tid) & 0xffffffff
        x ^= x >> 16; x = (x * 0x85ebca6b) & 0xffffffff; x ^= x >> 13
        x = (x * 0xc2b2ae35) & 0xffffffff; x ^= x >> 16
        s = x & 7
        w = 0xffffffff if s == 0 else s
        c = 3 * s if s < 3 else s + 1
        for i in range(tid, 4096, 8 * 128):
            w = (w * 6906969069 + 1234567) & mask
            out[i] = w ^ c
    return out


def test_unsigned_conditionals_in_a_lifted_map_build_and_run_on_the_cpu(tmp_path):
    import numpy as np
    import torch

    out, kernels = converted(tmp_path, SOURCE, SPEC)
    assert [(k["kernel"], k["form"], k["check"]["status"]) for k in kernels] == [("seeded", "tile", "pass")]
    mod = module_of(out / "k.py")
    buf = torch.full((4096,), 0x5A5A5A5A, dtype=torch.uint64)  # poisoned
    mod.seeded(buf, 4096, 42, target="c")
    assert np.array_equal(buf.numpy(), np.array(_reference(), dtype=np.uint64))


def test_unsigned_conditionals_lower_for_sm90(tmp_path):
    from tests.lowering import lower_sm90

    out, _ = converted(tmp_path, SOURCE)
    source = lower_sm90(module_of(out / "k.py").KERNELS["seeded"], (8, 1, 1), (128, 1, 1))
    assert "4294967295" in source  # the seed's fallback survives as a select
