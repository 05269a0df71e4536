"""A 64-bit atomic min/max of an ``int`` index, the way atomics benchmarks write it
(``atomicMin(res, (long long)i)`` over a whole grid): lifted to a map, ``T.atomic_min`` becomes
``res[0] = min(res[0], (int64)v)`` on the C target inside a vectorised loop, which TileLang's
DecoupleTypeCast staged without reading ``res[0]`` first (garbage; the pass fix in
runtime.tilelang_support leaves such a loop alone). On the GPU, TileLang 0.1.15's ``T.atomic_min``
on ``int64`` does not compile with nvcc (and would compare as unsigned): a signed 64-bit min or max
goes through the compat table's helper, which nvcc builds."""
from __future__ import annotations

from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel

SOURCE = """
#include <cuda_runtime.h>
__global__ void lowest(long long *lo)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x + 1;
    atomicMin(lo, (long long)i);
}
__global__ void highest(unsigned long long *hi)
{
    int i = threadIdx.x + blockIdx.x * blockDim.x + 1;
    atomicMax(hi, (unsigned long long)i);
}
int main()
{
    long long *lo; unsigned long long *hi;
    cudaMalloc(&lo, 8); cudaMalloc(&hi, 8);
    lowest<<<64, 256>>>(lo);
    highest<<<64, 256>>>(hi);
}
"""

SPEC = (spec_kernel("lowest", (64, 1, 1), (256, 1, 1), "exact", spec_buffer("lo", "int64", 1, "inout", 20000, 30000))
        + spec_kernel("highest", (64, 1, 1), (256, 1, 1), "exact", spec_buffer("hi", "uint64", 1, "inout", 5, 9)))


def test_grid_wide_64_bit_min_and_max_on_the_cpu(tmp_path):
    out, kernels = converted(tmp_path, SOURCE, SPEC)
    assert sorted((k["kernel"], k["form"], k["check"]["status"]) for k in kernels) == [
        ("highest", "tile", "pass"), ("lowest", "tile", "pass")]


def test_64_bit_min_and_max_compile_with_nvcc(tmp_path):
    import shutil

    import pytest
    if shutil.which("nvcc") is None:
        pytest.skip("no nvcc")
    import tilelang
    out, _kernels = converted(tmp_path, SOURCE)
    text = (out / "k.py").read_text()
    assert "cuda_math.atomicMin(" in text and "T.atomic_max(" in text  # (uint64: TileLang's own)
    mod = module_of(out / "k.py")
    for name in ("lowest", "highest"):
        sig = mod.KERNELS[name]
        func = sig.factory((64, 1, 1), (256, 1, 1), 0, target="cuda")
        kernel = tilelang.compile(func, target={"kind": "cuda", "arch": "sm_90a"},
                                  pass_configs=dict(sig.pass_configs))
        assert ("c2t_atomicMin_i64" if name == "lowest" else "AtomicMax") in kernel.get_kernel_source()
