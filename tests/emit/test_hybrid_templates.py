"""The hybrid form of kernel templates no launch site names an instance of (launched through a
pointer to an instance of a host template's traits type, or never launched: library code), and of
structs passed by value that hold pointers (migrate.emit.hybrid): the template is kept whole, its
factory takes the template arguments (C++ text or a dtype, a number), its entry calls the instance
they name; a struct is passed as its bytes, clang's size asserted by nvcc."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from migrate.cli import main

#: A program in the way the pool writes them: a kernel template instantiated with a traits type
#: inside a host template and launched through a pointer to it (no launch site the converter
#: resolves), a library kernel template with defaults the program never launches, a struct of
#: device pointers passed by value; each kernel reads its lane with inline PTX (not migrated).
PROGRAM = r"""#include <cstdio>
#include <cuda_runtime.h>

template <int kNThreads_, typename input_t_>
struct KernelTraits {
    static constexpr int kNThreads = kNThreads_;
    using input_t = input_t_;
};

struct ScaleParams {
    int n;
    float scale;
    void* __restrict__ x_ptr;
    void* __restrict__ out_ptr;
};

template <typename Ktraits>
__global__ void __launch_bounds__(Ktraits::kNThreads) scale_kernel(ScaleParams params)
{
    using input_t = typename Ktraits::input_t;
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * Ktraits::kNThreads + threadIdx.x;
    const input_t* x = reinterpret_cast<const input_t*>(params.x_ptr);
    input_t* out = reinterpret_cast<input_t*>(params.out_ptr);
    if (i < params.n) out[i] = x[i] * (input_t)params.scale + (input_t)(lane & 1);
}

template <typename T, int BLOCK = 64, bool ACCUMULATE = true>
__global__ void __launch_bounds__(BLOCK) axpy_lanes(T* y, const T* x, T alpha, int n)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) y[i] = ACCUMULATE ? y[i] + alpha * x[i] : alpha * x[i] + (T)lane;
}

template <int kNThreads, typename input_t>
void scale_launch(ScaleParams& params, cudaStream_t stream)
{
    using Ktraits = KernelTraits<kNThreads, input_t>;
    auto kernel = &scale_kernel<Ktraits>;
    kernel<<<(params.n + kNThreads - 1) / kNThreads, kNThreads, 0, stream>>>(params);
}

int main()
{
    const int n = 256;
    float *x, *out;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    ScaleParams params = {n, 2.0f, x, out};
    scale_launch<128, float>(params, 0);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """PROGRAM converted: (the output folder, its report's rows by kernel, the module imported)."""
    from migrate.runtime.tilelang_side import load_module

    root = tmp_path_factory.mktemp("hybrid_templates")
    (root / "src").mkdir()
    (root / "src" / "traits.cu").write_text(PROGRAM)
    out = root / "out"
    main(["convert", str(root / "src"), "-o", str(out), "-q"])
    report = json.loads((out / "report.json").read_text())
    return out, {k["kernel"]: k for k in report["kernels"]}, load_module(out / "traits.py")


def test_a_template_no_launch_site_instantiates_is_kept_whole_behind_a_factory_of_its_arguments(converted):
    out, rows, module = converted
    assert {name: row["form"] for name, row in rows.items()} == {"scale_kernel": "hybrid", "axpy_lanes": "hybrid"}
    assert [d["code"] for d in rows["axpy_lanes"]["diagnostics"]][-1] == "M3008"
    text = (out / "traits.py").read_text()
    # the factory takes the template's arguments, None for the template's defaults
    assert 'def make_axpy_lanes(grid, block, shared_bytes=0, T_=None, BLOCK=None, ACCUMULATE=None, target="cuda"):' \
        in text
    assert "No launch site names its instance: the template arguments name it (T_, BLOCK, ACCUMULATE)." in text
    assert ("source = hybrid_source(__file__, 'traits.cu', _AXPY_LANES_CUDA, template=(('T_', 'T', T_, None, False), "
            "('BLOCK', 'BLOCK', BLOCK, '64', False), ('ACCUMULATE', 'ACCUMULATE', ACCUMULATE, 'true', False),))") in text
    # the entry calls the instance the factory writes in; the launch bounds read its arguments
    assert "typedef decltype(&cuda2tile_body_axpy_lanes<CUDA2TILE_TARGS>) F;" in text
    assert "#define CUDA2TILE_BOUNDS_AXPY_LANES (CUDA2TILE_TARG_1)" in text
    assert "#define CUDA2TILE_BOUNDS_SCALE_KERNEL CUDA2TILE_TARG_0::kNThreads" in text
    # a scalar of the template's type: a slot of 16 bytes, the instance's type at most that
    assert 'static_assert(sizeof(cuda2tile_arg<2, F>::type) <= 16, "alpha: its slot holds 16 bytes");' in text
    sig = module.KERNELS["axpy_lanes"]
    assert sig.template == (("T_", "type"), ("BLOCK", "value"), ("ACCUMULATE", "value"))
    assert sig.params == (("y", "bytes", "uint8"), ("x", "bytes", "uint8"), ("alpha", "scalar", "T_"),
                          ("n", "scalar", "int32"))
    assert sig.hybrid == (("alpha", 0, 16), ("n", 16, 4))
    assert module.KERNELS["scale_kernel"].template == (("Ktraits", "type"),)


def test_a_struct_holding_pointers_is_passed_as_its_bytes_at_clangs_size(converted):
    _out, rows, module = converted
    sig = module.KERNELS["scale_kernel"]
    assert sig.params == (("params", "value", 24),)  # int, float, two pointers
    assert sig.hybrid == (("params", 0, 24),)
    assert 'static_assert(sizeof(cuda2tile_arg<0, F>::type) == 24, "params: the tool took it for 24 bytes");' \
        in (_out / "traits.py").read_text()


def test_the_instance_text_and_the_launch_arguments_follow_the_template_arguments():
    from migrate.runtime.tilelang_support import LaunchError, hybrid_instance, template_text

    cuda = ("#define B (CUDA2TILE_TARG_1)\nF<CUDA2TILE_TARGS>;")
    spec = (("T_", "T", None, None, False), ("BLOCK", "BLOCK", None, "64", False),
            ("ACCUMULATE", "ACCUMULATE", None, "true", False))

    def given(*values):
        return tuple((f, c, v, d, p) for (f, c, _v, d, p), v in zip(spec, values))

    # dtypes as C++ types, the defaults left to C++ where no later argument is given
    assert hybrid_instance(cuda, given("float32", None, None)) == "#define B (64)\nF<float>;"
    assert hybrid_instance(cuda, given("__half", 128, None)) == "#define B (128)\nF<__half, 128>;"
    # a default before a given argument is written out
    assert hybrid_instance(cuda, given("double", None, False)) == "#define B (64)\nF<double, 64, false>;"
    assert [template_text(v) for v in ("int8", "uint32", "bfloat16", True, 3, "Traits<128, float>")] == \
        ["signed char", "unsigned int", "__nv_bfloat16", "true", "3", "Traits<128, float>"]
    with pytest.raises(LaunchError, match="template argument T_ is not given and has no default"):
        hybrid_instance(cuda, given(None, None, None))


def test_the_launcher_writes_a_template_typed_scalar_at_the_dtype_the_launch_names(converted):
    import torch

    from migrate.runtime.tilelang_support import LaunchError, arguments

    _out, _rows, module = converted
    y, x = torch.ones(8, dtype=torch.float64), torch.arange(8, dtype=torch.float64)
    call = arguments(module.AXPY_LANES, (y, x, 2.5, 8), template=("double", 64, True))
    blob = call[2].numpy().tobytes()
    assert len(blob) == 20 and np.frombuffer(blob[:8], "<f8")[0] == 2.5 and blob[8:16] == bytes(8)
    assert np.frombuffer(blob[16:20], "<i4")[0] == 8
    call = arguments(module.AXPY_LANES, (y, x, -1.5, 8), template=("float32", None, None))
    assert np.frombuffer(call[2].numpy().tobytes()[:4], "<f4")[0] == -1.5
    with pytest.raises(LaunchError, match="takes 3 template arguments"):
        arguments(module.AXPY_LANES, (y, x, 2.5, 8))
    # a struct by value: its bytes, pointers included
    raw = np.array([(8, 2.0, 0x1000, 0x2000)],
                   dtype=[("n", "<i4"), ("scale", "<f4"), ("x", "<u8"), ("out", "<u8")]).tobytes()
    (blob,) = arguments(module.SCALE_KERNEL, (raw,), template=("KernelTraits<128, float>",))
    assert blob.numpy().tobytes() == raw


@pytest.mark.skipif(shutil.which("nvcc") is None or shutil.which("c++filt") is None, reason="needs nvcc and c++filt")
def test_the_program_instances_build_and_a_library_template_compiles_uninstantiated(converted):
    from migrate.runtime.hybrid_build import UNINSTANTIATED, build, build_module, program_instances

    out, _rows, module = converted
    # the instance the program compiles, as nvcc names it
    assert program_instances(module.SCALE_KERNEL, str(out / "traits.py")) == [("KernelTraits<128, float>",)]
    assert build(module.AXPY_LANES, template=("float", 256, False)) is None
    results = build_module(out / "traits.py")
    assert results["scale_kernel"] is None
    assert results["axpy_lanes"].startswith(UNINSTANTIATED)
