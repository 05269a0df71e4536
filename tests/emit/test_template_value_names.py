"""Template value parameters named like the names TileLang's kernels bind (the pool's
opticalFlow: ``template <int bx, int by> __global__ void JacobiIteration`` with a shared tile of
``(bx + 2) * (by + 2)`` floats): the factory takes them as ``bx_``/``by_``, but the tile's extent
and the body printed ``bx``, TileLang's block index ("variables (by,) are used, but are not passed
in as API arguments"). Both print the factory's names; the kernel checks equal on the CPU and
lowers for sm_90a."""
from __future__ import annotations

import importlib.util

from tests.analysis.support import converted, spec_buffer, spec_kernel

KERNEL = """
template <int bx, int by>
__global__ void halo(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ float s[(bx + 2) * (by + 2)];
  int i = threadIdx.y * bx + threadIdx.x;
  int g = blockIdx.x * bx * by + i;
  s[(threadIdx.y + 1) * (bx + 2) + threadIdx.x + 1] = x[g];
  __syncthreads();
  y[g] = s[(threadIdx.y + 1) * (bx + 2) + threadIdx.x + 1] * (float)(bx - by);
}
template __global__ void halo<16, 8>(const float*, float*);
"""

SPEC = spec_kernel("halo", (2, 1, 1), (16, 8, 1), "fp32",
                   spec_buffer("x", "float32", 256, "in", -1.0, 1.0),
                   spec_buffer("y", "float32", 256, "out")).replace("grid =", 'template = ["16", "8"]\ngrid =', 1)


def test_value_parameters_named_like_block_indices_print_as_the_factorys(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "T.alloc_shared((((bx_ + 2) * (by_ + 2)),)" in text and "T.Cast(T.float32, bx_ - by_)" in text and "bx * bx_ * by_" in text, text
    spec = importlib.util.spec_from_file_location("k_value_names", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    from migrate.runtime.tilelang_support import prim_func
    import tilelang
    import tvm
    func, configs = prim_func(mod.KERNELS["halo"], (2, 1, 1), (16, 8, 1), 0, ("16", "8"), "cuda")
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with tvm.transform.PassContext(config=configs), target:
        assert "__syncthreads()" in tilelang.lower(func, target=target).kernel_source
