"""The launcher's sizes compiled in (runtime.tilelang_support): which scalars a kernel compiled for
constant sizes takes, on which targets, and the call without them.
"""
from __future__ import annotations

from migrate.runtime.tilelang_support import Signature, static_sizes, without_static


def _sig(**kw):
    params = (("A", "buffer", "float32"), ("M", "scalar", "int32"), ("N", "scalar", "int32"),
              ("alpha", "scalar", "float32"))
    return Signature(name="g", factory=lambda *a, **k: None, params=params, **kw)


def test_static_sizes_pick_the_named_scalars_on_gpus_only():
    import torch

    sig = _sig(specialize=("M", "N"))
    args = [torch.ones(4), 300, torch.tensor(200), 1.5]
    assert static_sizes(sig, args, "cuda") == {"M": 300, "N": 200}
    assert static_sizes(sig, args, "c") == {}  # the CPU target compiles one kernel for all sizes
    assert static_sizes(_sig(), args, "cuda") == {}
    # rows TMA cannot copy: the kernel compiled for run-time sizes runs instead
    picky = _sig(specialize=("M", "N"), specialize_when=lambda s: s["M"] % 8 == 0)
    assert static_sizes(picky, args, "cuda") == {}
    assert static_sizes(picky, [torch.ones(4), 304, 200, 1.5], "cuda") == {"M": 304, "N": 200}
    call = ["A-tensor", 300, 200, 1.5, "symbol"]  # a __constant__ array follows the parameters
    assert without_static(sig, call, {"M": 300, "N": 200}) == ["A-tensor", 1.5, "symbol"]
    assert without_static(sig, call, {}) == call


def test_building_a_kernel_for_the_cpu_leaves_the_shims_default_target_alone(tmp_path):
    """prim_func parses the factory with the shim's forms for its target, then restores the
    module's default: a later hand-written kernel for the GPU gets the GPU forms."""
    from migrate.cli import main
    from migrate.compat import cuda_math
    from migrate.runtime.tilelang_support import prim_func
    import importlib.util
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k(const float* x, float* y, int n) {\n"
                   "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = fmaxf(x[i], 0.0f);\n}\n")
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) == 0
    spec = importlib.util.spec_from_file_location("k_mod", tmp_path / "out" / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    before = cuda_math.get_target()
    prim_func(mod.KERNELS["k"], (4, 1, 1), (256, 1, 1), target="c")
    assert cuda_math.get_target() == before == "cuda"


HALF2_TAIL = """#include <cuda_fp16.h>
__global__ void half2_square_plus(const __half* __restrict__ a, __half* __restrict__ out, int n)
{
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int pairs = n / 2;
    const half2* a2 = reinterpret_cast<const half2*>(a);
    half2* out2 = reinterpret_cast<half2*>(out);
    if (i < pairs) {
        out2[i] = __hfma2(a2[i], a2[i], a2[i]);
    } else if (i == pairs && (n & 1)) {
        out[n - 1] = __hfma(a[n - 1], a[n - 1], a[n - 1]);
    }
}
"""


def test_a_last_tile_guarded_twice_stores_only_what_both_guards_admit(tmp_path):
    """TileLang's DecoupleTypeCast guards its staging copies with the outer `if` of a vectorised
    body only: in a lifted half2 map's last tile (`if gx < extent_x:` around `if i < pairs:`) the
    copy-out wrote past the buffer. The launcher corrects the pass (_patch_nested_guards); run on
    the C target with tiles that leave a last tile."""
    import numpy as np

    from migrate.cli import main
    from migrate.runtime.inputs import Inputs
    from migrate.runtime.spec import load_spec
    from migrate.runtime.tilelang_side import run_migrated

    src = tmp_path / "half2_tail.cu"
    src.write_text(HALF2_TAIL)
    n = 4001
    (tmp_path / "half2_tail.toml").write_text(
        f'[[kernel]]\nname = "half2_square_plus"\ngrid = [8, 1, 1]\nblock = [256, 1, 1]\ntolerance = "fp16"\n'
        f'[[kernel.args]]\nname = "a"\nbuffer = "float16"\nelements = {n}\nrole = "in"\nrange = [-2.0, 2.0]\n'
        f'[[kernel.args]]\nname = "out"\nbuffer = "float16"\nelements = {n}\nrole = "out"\n'
        f'[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = {n}\n')
    assert main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"]) in (0, 1)
    module = tmp_path / "out" / "half2_tail.py"
    assert "T.Parallel(tile_x, 2)" in module.read_text()  # the half2 lanes are folded: the case at hand
    (kernel,) = load_spec(tmp_path / "half2_tail.toml")
    a = np.random.default_rng(5).uniform(-2, 2, n).astype(np.float16)
    wide = a.astype(np.float64)
    expected = (wide * wide + wide).astype(np.float16)  # a fused multiply-add: exact in double, rounded once
    for tile in [(768,), (384,), (100,)]:
        inputs = Inputs(args={"a": a.copy(), "out": np.full(n, np.nan, np.float16), "n": n}, symbols={}, seed=0,
                        kernel=kernel)
        got = run_migrated(module, kernel, inputs, target="c", options={"tile": tile})["out"]  # raises on a red-zone write
        np.testing.assert_array_equal(got, expected, err_msg=f"tile {tile}")
