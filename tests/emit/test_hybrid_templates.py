"""The hybrid form of kernel templates no launch site names an instance of (launched through a
pointer to an instance of a host template's traits type, or never launched: library code), and of
structs passed by value that hold pointers (migrate.emit.hybrid): the template is kept whole, its
factory takes the template arguments (C++ text or a dtype, a number), its entry calls the instance
they name; a struct is passed as its bytes, clang's size asserted by nvcc."""
from __future__ import annotations

import json
import os
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


#: A kernel file that includes a header of a library the converter does not see (read as empty:
#: its type and its macro unknown to clang, M1101/M1001) but nvcc finds through CUDA2TILE_INCLUDE;
#: a kernel whose definition names __global__ through the program's macro; a kernel template with
#: an explicit specialisation (which the copy of its primary template alone would not run).
VENDOR_HEADER = "#pragma once\ntypedef double real_t;\n#define TILE 128\n"
VENDOR_PROGRAM = r"""#include <cstdio>
#include "vendor_types.h"
#include "macros.h"

__global__ void scale(const real_t* __restrict__ x, real_t* y, const int n)
{
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}

__global__ void shift(real_t* y, real_t by, int n)
{
    int i = blockIdx.x * TILE + threadIdx.x;
    if (i < n) y[i] += by;
}

KERNEL static void lane_ids(int* out, int n)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = lane;
}

template <typename T>
__global__ void add_bias(T* x, T b, int n)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] + b + (T)(lane & 1);
}

template <>
__global__ void add_bias<float>(float* x, float b, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * b;
}

int main()
{
    real_t *x, *y; int* ids; float* f;
    cudaMalloc(&x, 8 * 1024); cudaMalloc(&y, 8 * 1024); cudaMalloc(&ids, 4 * 1024); cudaMalloc(&f, 4 * 1024);
    scale<<<8, TILE>>>(x, y, 1024);
    shift<<<8, TILE>>>(y, 1.5, 1024);
    lane_ids<<<4, 256>>>(ids, 1024);
    add_bias<float><<<4, 256>>>(f, 2.0f, 1024);
    add_bias<int><<<4, 256>>>(ids, 3, 1024);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
"""


@pytest.fixture(scope="module")
def vendor(tmp_path_factory):
    """VENDOR_PROGRAM converted (its vendor header outside the converted folder): (the output
    folder, the vendor folder, report rows by kernel, the module imported)."""
    from migrate.runtime.tilelang_side import load_module

    root = tmp_path_factory.mktemp("hybrid_vendor")
    (root / "src").mkdir()
    (root / "vendor").mkdir()
    (root / "vendor" / "vendor_types.h").write_text(VENDOR_HEADER)
    (root / "src" / "macros.h").write_text("#pragma once\n#define KERNEL __global__\n")
    (root / "src" / "k.cu").write_text(VENDOR_PROGRAM)
    out = root / "out"
    main(["convert", str(root / "src"), "-o", str(out), "-q"])
    report = json.loads((out / "report.json").read_text())
    # nvcc finds the vendor's header through CUDA2TILE_INCLUDE (read when the module is imported)
    before = os.environ.get("CUDA2TILE_INCLUDE")
    os.environ["CUDA2TILE_INCLUDE"] = str(root / "vendor")
    try:
        module = load_module(out / "k.py")
    finally:
        os.environ.pop("CUDA2TILE_INCLUDE") if before is None else os.environ.update(CUDA2TILE_INCLUDE=before)
    return out, root / "vendor", {k["kernel"]: k for k in report["kernels"]}, module


def test_a_kernel_clang_cannot_compile_is_kept_as_cuda_with_its_parameters_as_spelled(vendor):
    _out, _folder, rows, module = vendor
    codes = [d["code"] for d in rows["scale"]["diagnostics"]]
    assert "M1101" in codes and codes[-1] == "M3008" and rows["scale"]["form"] == "hybrid"
    # clang typed real_t as int: its pointers are passed as their memory, the int as an int
    assert module.KERNELS["scale"].params == (("x", "bytes", "uint8"), ("y", "bytes", "uint8"),
                                              ("n", "scalar", "int32"))
    # a scalar of the unknown type has no size the tool knows: not kept
    assert rows["shift"]["form"] == "unsupported"
    (note,) = [d for d in rows["shift"]["diagnostics"] if d["code"] == "M3009"]
    assert "parameter 'by' is of a type they do not give ('real_t')" in note["message"]


def test_a_definition_naming_global_through_a_macro_and_a_specialised_template_are_kept(vendor):
    out, _folder, rows, module = vendor
    assert rows["lane_ids"]["form"] == "hybrid" and rows["add_bias"]["form"] == "hybrid"
    text = (out / "k.py").read_text()
    assert "__device__ __forceinline__ static void cuda2tile_body_lane_ids(int* out, int n)" in text
    # the specialisation copied as one of the body's template, beside the primary template
    assert "// its explicit specialisation (line 34), renamed\ntemplate <>\n" \
           "__device__ __forceinline__ void cuda2tile_body_add_bias<float>(float* x, float b, int n)" in text
    assert set(module.KERNELS) == {"scale", "lane_ids", "add_bias"}


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_kept_kernels_build_with_the_vendor_folder(vendor):
    from migrate.runtime.hybrid_build import build

    _out, _folder, _rows, module = vendor
    for sig in (module.SCALE, module.LANE_IDS, module.ADD_BIAS__FLOAT, module.ADD_BIAS__INT):
        assert build(sig) is None, sig.name


#: A kernel (not migrated: inline PTX) reading a __constant__ table the host fills, a __device__
#: counter with an initialiser and a __device__ array: kept as CUDA, each global passed by the
#: launch as a tensor (the body copy reads it through a pointer), as a migrated kernel takes them.
STATEFUL = r"""#include <cstdio>
#define TABLE 8
__constant__ float weights[TABLE];
static __device__ int counter = 3;
__device__ unsigned int flags[4];

__global__ void weigh(float* y, int n)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = weights[lane % TABLE] * y[i];
    if (i == 0) atomicAdd(&counter, 1);
    if (i < 4) flags[i] |= 1u << (lane & 7);
}

__device__ float weight_of(int k) { return weights[k % TABLE]; }

__global__ void weigh_through(float* y, int n)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = weight_of(lane) * y[i];
}

int main()
{
    float h[TABLE] = {1, 2, 3, 4, 5, 6, 7, 8};
    cudaMemcpyToSymbol(weights, h, sizeof(h));
    float* y; cudaMalloc(&y, 4 * 256);
    weigh<<<1, 256>>>(y, 256);
    weigh_through<<<1, 256>>>(y, 256);
    int c; cudaMemcpyFromSymbol(&c, counter, sizeof(int));
    printf("%d\n", c);
    return 0;
}
"""


def test_the_globals_a_kernel_reads_are_passed_by_the_launch(tmp_path):
    import torch

    from migrate.runtime.tilelang_side import load_module
    from migrate.runtime.tilelang_support import LaunchError, arguments

    (tmp_path / "k.cu").write_text(STATEFUL)
    main(["convert", str(tmp_path / "k.cu"), "-o", str(tmp_path / "out"), "-q"])
    rows = {k["kernel"]: k for k in json.loads((tmp_path / "out" / "report.json").read_text())["kernels"]}
    assert rows["weigh"]["form"] == "hybrid"
    # a device function reading the table would read the wrapper's own copy: not kept
    assert rows["weigh_through"]["form"] == "unsupported"
    (note,) = [d for d in rows["weigh_through"]["diagnostics"] if d["code"] == "M3009"]
    assert "reads constant 'weights'" in note["message"]
    text = (tmp_path / "out" / "k.py").read_text()
    assert "typedef decltype(&weights) cuda2tile_symtype_weights;\n" in text
    assert "#define counter (*cuda2tile_sym_counter)\n" in text and "#undef flags" in text
    assert ("cuda2tile_body_weigh(float* y, int n, cuda2tile_symtype_weights cuda2tile_sym_weights, "
            "cuda2tile_symtype_counter cuda2tile_sym_counter, cuda2tile_symtype_flags cuda2tile_sym_flags)") in text
    assert ("cuda2tile_weigh(unsigned char* p00_y, unsigned char* p02_scalars, unsigned char* q00_weights, "
            "unsigned char* q01_counter, unsigned char* q02_flags, int n00, int n02, int n03, int n04, int n05)") in text
    module = load_module(tmp_path / "out" / "k.py")
    sig = module.WEIGH
    assert sig.symbols == (("weights", "float32", 8), ("counter", "int32", 1), ("flags", "uint32", 4))
    assert sig.state == (("counter", (3,)), ("flags", ()))
    y = torch.ones(8)
    table = torch.arange(1, 9, dtype=torch.float32)
    call = arguments(sig, (y, 8), symbols={"weights": table})
    assert [t.numel() for t in call] == [32, 4, 32, 4, 16]
    assert call[2].data_ptr() == table.data_ptr()  # the caller's memory
    assert np.frombuffer(call[3].numpy().tobytes(), "<i4")[0] == 3  # the module's counter, from its initialiser
    with pytest.raises(LaunchError, match="reads __constant__ 'weights': pass its 8 values"):
        arguments(sig, (y, 8))
    if shutil.which("nvcc"):
        from migrate.runtime.hybrid_build import build

        assert build(sig) is None
