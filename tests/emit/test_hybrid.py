"""The hybrid form: a kernel the tool cannot migrate is kept as its original CUDA behind the
factory, Signature, launcher and KERNELS entry of a migrated kernel (migrate.emit.hybrid): the
source file (copied beside the module) compiled by nvcc with the kernel's definition copied as a
device function, called from an ``extern "C"`` entry that ``T.CUDASourceCodeKernel`` launches.
It runs on GPUs only: here it is lowered and built for sm_90a (nvcc, no GPU), and the CPU check
skips it; it never counts as converted."""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

from migrate.cli import main
from migrate.emit.hybrid import NotHybrid, body_copy
from tests.analysis.support import spec_buffer, spec_kernel, spec_scalar

#: Kernels the tool refuses, with what a program around them has: a macro, a struct passed by
#: value, a helper device function, a namespace, launch bounds, a template launched with two
#: instances, dynamic shared memory, and a main() with host code.
REFUSED = r"""// refused.cu: kernels the tool cannot migrate
#include <cstdio>
#include <cuda_runtime.h>

#define SCALE(x) ((x) * 2.0f)

struct Params {
    float bias;
    int stride;
};

typedef float (*unary_fn)(float);

__device__ float twice(float v) { return SCALE(v); }
__device__ float negate(float v) { return -v; }

namespace ops {
// a __global__ in a comment is no definition
__global__ void __launch_bounds__(128) apply(const float* __restrict__ in, float* out, Params p, int n, int which)
{
    unary_fn f = which ? negate : twice;
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = f(in[i * p.stride]) + p.bias;
}
}

template <typename T, int N>
__global__ void __launch_bounds__(N) lanes(T* data, T add, unsigned int count)
{
    unsigned int lane;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    unsigned int i = blockIdx.x * N + threadIdx.x;
    if (i < count) data[i] = data[i] + add + (T)lane;
}

__global__ void staged(const double* in, double* out, int n)
{
    extern __shared__ double tile[];
    unsigned int lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0;
    __syncthreads();
    if (i < n) out[i] = tile[blockDim.x - 1 - threadIdx.x] + lane;
}

int main()
{
    const int n = 256;
    float *in, *out;
    double *din, *dout;
    cudaMalloc(&in, n * sizeof(float));
    cudaMalloc(&out, n * sizeof(float));
    cudaMalloc(&din, n * sizeof(double));
    cudaMalloc(&dout, n * sizeof(double));
    Params p = {1.5f, 1};
    ops::apply<<<n / 128, 128>>>(in, out, p, n, 1);
    lanes<float, 64><<<n / 64, 64>>>(out, 1.0f, n);
    lanes<int, 32><<<n / 32, 32>>>((int*)out, 2, n);
    staged<<<n / 64, 64, 64 * sizeof(double)>>>(din, dout, n);
    cudaDeviceSynchronize();
    printf("done\n");
    return 0;
}
"""

#: A kernel refused (inline PTX) whose wrapper cannot be made: it reads a __constant__ table that
#: the program's host code fills (cudaMemcpyToSymbol), which a launch through the module does not.
STATEFUL = r"""
__constant__ float coef[4];
__global__ void weigh(float* y, int n)
{
    unsigned int lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = coef[lane % 4] * y[i];
}
"""


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """REFUSED converted: (the output folder, report.json, the module imported)."""
    from migrate.runtime.tilelang_side import load_module

    root = tmp_path_factory.mktemp("hybrid")
    (root / "src").mkdir()
    (root / "src" / "refused.cu").write_text(REFUSED)
    out = root / "out"
    assert main(["convert", str(root / "src"), "-o", str(out), "-q"]) == 1  # not every kernel migrated
    return out, json.loads((out / "report.json").read_text()), load_module(out / "refused.py")


def test_kernels_the_tool_refuses_are_kept_as_cuda_behind_a_migrated_launcher(refused):
    out, report, module = refused
    rows = {k["kernel"]: k for k in report["kernels"]}
    assert {name: k["form"] for name, k in rows.items()} == {"apply": "hybrid", "lanes": "hybrid", "staged": "hybrid"}
    # the reason it was not migrated stays, in report.json and in the module
    assert rows["apply"]["reason"] == "M1209: call through a function pointer"
    assert [d["code"] for d in rows["apply"]["diagnostics"]] == ["M1209", "M3008"]
    assert "M1201" in [d["code"] for d in rows["staged"]["diagnostics"]]
    text = (out / "refused.py").read_text()
    assert "# -- apply: hybrid" in text and "# Not migrated: M1209: call through a function pointer" in text
    # never counted as converted
    assert report["summary"]["converted"] == 0 and report["summary"]["forms"]["hybrid"] == 3
    # the same factory, Signature, launcher and KERNELS entry as a migrated kernel
    assert set(module.KERNELS) == {"apply", "lanes", "staged"}
    sig = module.KERNELS["apply"]
    assert sig.form == "hybrid" and sig.factory is module.make_apply and callable(module.apply)
    assert sig.params == (("in", "buffer", "float32"), ("out", "buffer", "float32"), ("p", "value", 8),
                          ("n", "scalar", "int32"), ("which", "scalar", "int32"))
    assert sig.hybrid == (("p", 0, 8), ("n", 8, 4), ("which", 16, 4))
    assert [key for key, _args, _sig in module.LANES.instances] == [("float32", 64), ("int32", 32)]
    # the module's CUDA: the body renamed in its namespace, launch bounds on the entry
    assert "namespace ops {\n__device__ __forceinline__ void cuda2tile_body_apply(" in text
    assert 'extern "C" __global__ void __launch_bounds__(CUDA2TILE_BOUNDS_APPLY) cuda2tile_apply(unsigned char* ' \
           "p00_in, unsigned char* p01_out, unsigned char* p05_scalars, int n00, int n01, int n05)" in text
    assert "typedef decltype(&cuda2tile_body_lanes<int, 32>) F;" in text
    assert "#define CUDA2TILE_BOUNDS_LANES__INT_32 (32)" in text  # a template's bounds, the instance's values
    # no path of this machine: the file includes no header the conversion leaves behind
    assert "hybrid_flags(__file__, (), ())" in text and str(out) not in text


def test_a_hybrid_kernel_has_no_cpu_form_and_the_cpu_check_skips_it(refused, tmp_path):
    from migrate.runtime.kernel_check import form_skip

    _out, _report, module = refused
    with pytest.raises(NotImplementedError, match="runs on GPUs only"):
        module.make_apply((2, 1, 1), (128, 1, 1), 0, target="c")
    assert form_skip("hybrid", "cpu").startswith("hybrid: runs only on a GPU")
    assert form_skip("hybrid", "cuda") is None  # on a GPU it runs through its wrapper
    # end to end: a spec and --check cpu report it skipped, never pass
    (tmp_path / "k.cu").write_text(STATEFUL.replace("__constant__ float coef[4];", "").replace("coef[lane % 4]", "2.0f"))
    (tmp_path / "k.toml").write_text(spec_kernel("weigh", (1, 1, 1), (64, 1, 1), "fp32",
                                                 spec_buffer("y", "float32", 64, "inout", 0.5, 2.0),
                                                 spec_scalar("n", "int32", 64)))
    main(["convert", str(tmp_path / "k.cu"), "-o", str(tmp_path / "out"), "-q", "--check", "cpu"])
    (row,) = json.loads((tmp_path / "out" / "report.json").read_text())["kernels"]
    assert row["form"] == "hybrid"
    assert row["check"]["status"] == "skipped" and row["check"]["message"].startswith("hybrid: runs only on a GPU")


def test_the_launcher_passes_pointers_as_their_bytes_and_scalars_at_their_offsets(refused):
    import torch

    from migrate.runtime.tilelang_support import LaunchError, arguments

    _out, _report, module = refused
    x = torch.arange(6, dtype=torch.float32)
    y = torch.full((6,), float("nan"))
    params = np.array([(1.5, 3)], dtype=[("bias", "<f4"), ("stride", "<i4")])
    call = arguments(module.APPLY, (x, y, params, 6, -2))
    assert [t.dtype for t in call] == [torch.uint8] * 3
    assert call[0].data_ptr() == x.data_ptr() and call[0].numel() == 24  # the caller's memory, not a copy
    blob = call[2].numpy().tobytes()
    assert len(blob) == 20 and blob[:8] == params.tobytes()
    assert np.frombuffer(blob[8:12], "<i4")[0] == 6 and np.frombuffer(blob[16:20], "<i4")[0] == -2
    with pytest.raises(LaunchError, match="must hold float32"):
        arguments(module.APPLY, (x.double(), y, params, 6, 0))
    with pytest.raises(LaunchError, match="has 4 bytes; the kernel takes 8"):
        arguments(module.APPLY, (x, y, b"abcd", 6, 0))
    # a template's launch runs the instance its arguments name
    call = arguments(module.LANES, (torch.zeros(4, dtype=torch.int32), 7, 4), template=("int", "32"))
    assert np.frombuffer(call[1].numpy().tobytes()[:4], "<i4")[0] == 7


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc (the hybrid form is built by it)")
def test_the_wrappers_lower_and_build_for_sm90(refused):
    import tilelang
    import tvm

    from migrate.runtime.hybrid_build import build
    from migrate.runtime.tilelang_support import prim_func

    _out, _report, module = refused
    for sig in (module.APPLY, module.LANES__FLOAT_64, module.LANES__INT_32, module.STAGED):
        assert build(sig) is None, sig.name
    func, configs = prim_func(module.APPLY, (2, 1, 1), (128, 1, 1), 0, None, "cuda")
    kernel = tilelang.compile(func, target={"kind": "cuda", "arch": "sm_90a"}, pass_configs=configs)
    source = kernel.get_kernel_source()
    assert '#include "refused.cu"' in source and "cuda2tile_body_apply" in source
    assert 'extern "C" __global__ void __launch_bounds__(CUDA2TILE_BOUNDS_APPLY) cuda2tile_apply(' in source
    # extern __shared__: launched with the launch's dynamic shared memory
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    for shared, dynamic in ((0, False), (512, True)):
        func, configs = prim_func(module.STAGED, (4, 1, 1), (64, 1, 1), shared, None, "cuda")
        with tvm.transform.PassContext(config=configs), target:
            lowered = tilelang.lower(func, target=target, enable_host_codegen=True)
        assert ("tirx.use_dyn_shared_memory" in lowered.device_mod.script()) == dynamic


def test_a_kernel_reading_state_the_host_fills_stays_unsupported(tmp_path):
    """Read by a device function it calls (which the wrapper does not copy: the wrapper's own copy
    of the table); read by the kernel itself, the launch passes it (test_hybrid_templates)."""
    (tmp_path / "k.cu").write_text(STATEFUL.replace("__global__", "__device__ float coef_of(unsigned k) "
                                                    "{ return coef[k]; }\n__global__")
                                   .replace("coef[lane % 4]", "coef_of(lane % 4)"))
    main(["convert", str(tmp_path / "k.cu"), "-o", str(tmp_path / "out"), "-q"])
    (row,) = json.loads((tmp_path / "out" / "report.json").read_text())["kernels"]
    assert row["form"] == "unsupported"
    (note,) = [d for d in row["diagnostics"] if d["code"] == "M3009"]
    assert "reads constant 'coef', which the program's host code fills or its kernels share" in note["message"]
    assert "KERNELS = {\n}" in (tmp_path / "out" / "k.py").read_text()


def test_a_kernel_in_a_header_is_built_from_its_includer(tmp_path):
    """A header's kernel is compiled in its includer's translation unit (its types and macros
    come from there); a plain header the conversion does not copy is found in the original folder."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "common.h").write_text("#pragma once\n#define WIDTH 4\nstruct Pair { int a; int b; };\n")
    (src / "kernels.h").write_text(
        "__global__ void rotate(int* out, Pair p, int n) {\n"
        "    unsigned lane;\n    asm(\"mov.u32 %0, %%laneid;\" : \"=r\"(lane));\n"
        "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    if (i < n) out[i] = p.a * WIDTH + p.b + (int)lane;\n}\n")
    (src / "main.cu").write_text('#include "common.h"\n#include "kernels.h"\nint main() {\n'
                                 "    int* d; cudaMalloc(&d, 256);\n    Pair p = {1, 2};\n"
                                 "    rotate<<<2, 32>>>(d, p, 64);\n    return 0;\n}\n")
    main(["convert", str(src), "-o", str(tmp_path / "out"), "-q"])
    text = (tmp_path / "out" / "kernels_h.py").read_text()
    assert "source = hybrid_source(__file__, 'main.cu', _ROTATE_CUDA)" in text
    assert f"hybrid_flags(__file__, ({str(src.resolve())!r},), ())" in text
    assert "Pair p" in text and "static_assert(sizeof(cuda2tile_arg<1, F>::type) == 8" in text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_verify_hybrid_keeps_a_kernel_nvcc_cannot_build_unsupported_with_its_error(tmp_path):
    (tmp_path / "bad.cu").write_text(
        "__global__ void broken(int* out) {\n    int v;\n"
        '    asm volatile("no.such.instruction %0;" : "=r"(v));\n    out[threadIdx.x] = v;\n}\n')
    main(["convert", str(tmp_path / "bad.cu"), "-o", str(tmp_path / "out"), "-q", "--verify-hybrid"])
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["build"]["options"]["verify_hybrid"] is True  # OUT says how it was made
    (row,) = report["kernels"]
    assert row["form"] == "unsupported", row
    (note,) = [d for d in row["diagnostics"] if d["code"] == "M3009"]
    assert "its wrapper does not build with nvcc: ptxas: PTX line" in note["message"]
    assert "KERNELS = {\n}" in (tmp_path / "out" / "bad.py").read_text()


def test_the_body_copy_renames_the_definition_and_moves_its_launch_bounds():
    text = ('template <int B>\n__global__ void /* __global__ */ __launch_bounds__(MAX(B, 64), 2)\n'
            'k(float* x) { x[0] = 1; /* k( */ }')
    body, bounds = body_copy(text, "k", "cuda2tile_body_k")
    assert bounds == "__launch_bounds__(MAX(B, 64), 2)"
    assert body == ('template <int B>\n__device__ __forceinline__ void /* __global__ */ \n'
                    'cuda2tile_body_k(float* x) { x[0] = 1; /* k( */ }')
    with pytest.raises(NotHybrid, match="does not spell"):
        body_copy("KERNEL(k)(float* x) {}", "k", "cuda2tile_body_k")
    # __grid_constant__ qualifies a kernel's parameters only: dropped from the device function
    body, _ = body_copy("__global__ void k(const __grid_constant__ P p, float* x) { x[0] = p.v; }", "k", "b")
    assert body == "__device__ __forceinline__ void b(const P p, float* x) { x[0] = p.v; }"


def _corpus_hybrids(converted_corpus):
    from migrate.runtime.tilelang_side import load_module

    report = json.loads((converted_corpus.out / "report.json").read_text())
    rows = [k for k in report["kernels"] if k["form"] == "hybrid"]
    outputs = {f["file"]: f["output"] for f in report["files"]}
    return [(k, load_module(converted_corpus.out / outputs[k["file"]])) for k in rows]


def test_the_corpus_kernel_the_tool_refuses_is_kept_as_cuda(converted_corpus):
    """minmax_atomic's reduceMinFloat (its float atomic-min reads the float's bits through a
    reinterpreted pointer, which no TileLang form takes) is the corpus's one kernel not migrated."""
    ((row, module),) = _corpus_hybrids(converted_corpus)
    assert (row["file"], row["kernel"]) == ("reduction/minmax_atomic.cu", "reduceMinFloat")
    assert [d["code"] for d in row["diagnostics"]] == ["M3001", "M3008"]
    assert module.KERNELS["reduceMinFloat"].form == "hybrid"


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_the_corpus_hybrid_kernels_build_for_sm90(converted_corpus):
    from migrate.runtime.hybrid_build import build

    for row, module in _corpus_hybrids(converted_corpus):
        assert build(module.KERNELS[row["kernel"]]) is None, row["kernel"]


@pytest.mark.gpu
def test_the_corpus_hybrid_kernel_runs_through_its_module_on_a_gpu(converted_corpus):
    """On a GPU, reduceMinFloat launched through its module (the launcher, the wrapper, the
    original CUDA) computes the block minima's atomic minimum, as the original does."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no NVIDIA GPU")
    ((_row, module),) = _corpus_hybrids(converted_corpus)
    rng = np.random.default_rng(7)
    x = rng.uniform(-100.0, 100.0, 100003).astype(np.float32)
    out = torch.tensor([np.finfo(np.float32).max], dtype=torch.float32, device="cuda")
    n = x.size
    module.reduceMinFloat(torch.from_numpy(x).cuda(), out, n, grid=(n + 255) // 256, block=256)
    assert out.item() == x.min()


def test_an_enum_template_argument_is_spelled_as_its_constant(tmp_path):
    """C++ converts no integer to an enum template argument: an instance's entry names the
    constant its value stands for."""
    (tmp_path / "k.cu").write_text(r"""
enum Op { ADD, MUL };
template <typename T, Op OP>
__global__ void combine(T* x, T v, int n)
{
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = OP == ADD ? x[i] + v : x[i] * v;
}
int main() { float* x; cudaMalloc(&x, 256); combine<float, MUL><<<1, 64>>>(x, 2.0f, 64); return 0; }
""")
    main(["convert", str(tmp_path / "k.cu"), "-o", str(tmp_path / "out"), "-q"])
    (row,) = json.loads((tmp_path / "out" / "report.json").read_text())["kernels"]
    assert row["form"] == "hybrid", row
    text = (tmp_path / "out" / "k.py").read_text()
    assert "typedef decltype(&cuda2tile_body_combine<float, Op::MUL>) F;" in text
