"""``NULL`` in kernels, the way real code checks optional buffers (``bias != NULL ? bias[c] : 0``)
and asserts (``assert(p != NULL)``): NULL is read (it was "expression kind 'gnu null expr' is not
modelled"); an assert is dropped like any expression without effect; a buffer compared with NULL
holds (every buffer the launcher takes is one); two pointers compared are refused by name."""
from __future__ import annotations

import json

from migrate.cli import main

KERNEL = """
#include <cuda_runtime.h>
#include <cstddef>
#include <cassert>
__global__ void checked(const float* x, float* y, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    assert(y != NULL);
    if (i < n) y[i] = 2.0f * x[i];
}
__global__ void optional_bias(const float* x, const float* bias, float* y, int n, int c)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float val = (bias != NULL) ? bias[i % c] : 0.0f;
    y[i] = x[i] + val;
}
"""


SPEC = """
[[kernel]]
name = "optional_bias"
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
name = "bias"
buffer = "float32"
elements = 8
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 256
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 256
[[kernel.args]]
name = "c"
scalar = "int32"
value = 8
"""


def test_null_checks_convert_and_check_equal_and_two_pointers_compared_are_refused(tmp_path):
    (tmp_path / "k.cu").write_text(KERNEL + """
__global__ void walk(const float* x, float* y, int n)
{
    if (x != y) y[threadIdx.x] = x[threadIdx.x];
}
""")
    (tmp_path / "k.toml").write_text(SPEC)
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q", "--check", "cpu"])
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["checked"]["form"] == "tile", kernels["checked"]["reason"]
    bias = kernels["optional_bias"]
    assert bias["form"] == "tile" and bias["check"]["status"] == "pass", (bias["reason"], bias["check"])
    walk = kernels["walk"]
    assert walk["form"] in ("hybrid", "unsupported") and "two pointers compared" in walk["reason"]


def test_an_atomic_add_on_unsigned_64_bit_values_goes_through_the_helper(tmp_path):
    """TileLang 0.1.15's AtomicAdd hands a ``uint64_t*`` to CUDA's atomicAdd, which takes
    ``unsigned long long*``: nvcc found no overload (marchingCubes' triangle counter). atomicAdd
    on a uint64 element is the compat table's helper, which casts the pointer (a plain
    read-modify-write on the CPU), in its statement and value forms."""
    import numpy as np
    import torch
    (tmp_path / "k.cu").write_text("""
        #include <cuda_runtime.h>
        __global__ void count(const int* x, unsigned long long* total, unsigned long long* old) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            atomicAdd(total, (unsigned long long)x[i]);
            old[i] = atomicAdd(&total[1 + i % 3], 1ull) / 1000000007ull;
        }
        __global__ void count32(const int* x, unsigned int* total) {
            atomicAdd(total, (unsigned int)x[threadIdx.x]);
        }""")
    out = tmp_path / "out"
    main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q"])
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["count"]["form"] not in ("hybrid", "unsupported"), kernels["count"]["reason"]
    assert kernels["count32"]["form"] not in ("hybrid", "unsupported"), kernels["count32"]["reason"]
    assert "cuda_math.atomicAdd(total[0]" in (out / "k.py").read_text()
    from tests.analysis.support import module_of
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(21)
    x = rng.integers(0, 1 << 30, 256).astype(np.int32)
    start = np.array([5, (1 << 40) + 3, 7 << 33, 11], np.uint64)
    total = torch.from_numpy(start.copy())
    old = torch.full((256,), 1 << 62, dtype=torch.uint64)  # poisoned: no old value's quotient
    mod.count(torch.from_numpy(x), total, old, grid=(2, 1, 1), block=(128, 1, 1), target="c")
    got = total.numpy()
    assert got[0] == start[0] + x.astype(np.uint64).sum()
    assert list(got[1:]) == [start[1 + k] + len(range(k, 256, 3)) for k in range(3)]
    # each old value is its counter's start plus the adds before it: the quotient is the start's
    assert all(old.numpy()[i] == start[1 + i % 3] // 1000000007 for i in range(256))
    import shutil
    if shutil.which("nvcc") is None:
        return
    import tilelang
    sig = mod.KERNELS["count"]
    func = sig.factory((2, 1, 1), (128, 1, 1), 0, target="cuda")
    source = tilelang.compile(func, target={"kind": "cuda", "arch": "sm_90a"},
                              pass_configs=dict(sig.pass_configs)).get_kernel_source()
    assert "c2t_atomicAdd_u64(" in source
