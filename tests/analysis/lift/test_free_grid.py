"""Free grids (analysis.free_grid): a grid-stride reduction whose block totals meet only in an
atomic of the tree's operation launches enough blocks to fill the GPU, whatever grid CUDA used.

Kernels written for the purpose: the lift (a shared-memory sum tree, a warp-shuffle max, a min
spelled as a ternary over values of the element), checked on the CPU against numpy with the
kernel's grid larger than the CUDA launch, and against the CUDA itself (``--check cpu``); and what
it must refuse: a store of the block total, an accumulator that does not start at the identity,
a lane operation other than the tree's, an atomic other than the tree's, ``gridDim.x`` or
``blockIdx.x`` used elsewhere, buffers that may alias.
"""
from __future__ import annotations

import importlib.util
import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest

from migrate.cli import main
from migrate.runtime.tilelang_support import FILL_GPU, fill_blocks

SUM = """
    #define THREADS 128
    __device__ float scaled(float v) { return v * (float)(threadIdx.x % 3); }
    __global__ void gsum(const float* __restrict__ in, float* __restrict__ out, int n) {
        __shared__ float s[THREADS];
        float acc = 0.0f;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            acc += in[i] * 2.0f;
        }
        s[threadIdx.x] = acc;
        __syncthreads();
        for (int w = blockDim.x / 2; w > 0; w >>= 1) {
            if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
            __syncthreads();
        }
        if (threadIdx.x == 0) atomicAdd(out, s[0]);
    }
    int main() { gsum<<<3, THREADS>>>(nullptr, nullptr, 5000); }
"""

MAX = """
    #include <climits>
    __device__ int warpMax(int v) {
        for (int o = warpSize / 2; o > 0; o >>= 1) v = max(v, __shfl_xor_sync(0xffffffffu, v, o));
        return v;
    }
    __global__ void gmax(const int* __restrict__ in, int* __restrict__ out, unsigned long long n) {
        int best = INT_MIN;
        const size_t stride = (size_t)gridDim.x * blockDim.x;
        for (size_t i = threadIdx.x + (size_t)blockIdx.x * blockDim.x; i < n; i += stride) {
            best = max(best, in[i]);
        }
        best = warpMax(best);
        if ((threadIdx.x & 31) == 0) atomicMax(out, best);
    }
    int main() { gmax<<<2, 64>>>(nullptr, nullptr, 5000); }
"""

# (``x ^ 5``, not ``x - 7``: TVM's simplifier turns ``x - 7 < low`` into ``x < low + 7``, which wraps
# at ``low == INT_MAX``, in every form of the kernel; an issue of its own, outside the grid)
MIN = """
    #include <climits>
    __device__ int shifted(int x) { return x ^ 5; }
    __device__ int warpMin(int v) {
        for (int o = 16; o > 0; o >>= 1) { int t = __shfl_down_sync(0xffffffffu, v, o); v = t < v ? t : v; }
        return v;
    }
    __global__ void gmin(const int* __restrict__ in, int* __restrict__ out, int n) {
        __shared__ int w[32];
        int low = INT_MAX;
        const int first = threadIdx.x + blockDim.x * blockIdx.x;
        for (int i = first; i < n; i += blockDim.x * gridDim.x) {
            const int v = shifted(in[i]);
            low = (v < low) ? v : low;
        }
        low = warpMin(low);
        if (threadIdx.x % 32 == 0) w[threadIdx.x / 32] = low;
        __syncthreads();
        if (threadIdx.x < 32) {
            low = threadIdx.x < blockDim.x / 32 ? w[threadIdx.x] : INT_MAX;
            low = warpMin(low);
            if (threadIdx.x == 0) atomicMin(&out[0], low);
        }
    }
    int main() { gmin<<<5, 128>>>(nullptr, nullptr, 5000); }
"""

#: kernel -> (grid, block, input dtype, output dtype, n dtype, output's initial value)
LAUNCH = {"gsum": (3, 128, "float32", "float32", "int32", 0.0),
          "gmax": (2, 64, "int32", "int32", "uint64", -2 ** 31),
          "gmin": (5, 128, "int32", "int32", "int32", 2 ** 31 - 1)}
N = 5000


def spec(name: str) -> str:
    grid, block, dt_in, dt_out, dt_n, _ = LAUNCH[name]
    kind = "fp32_accum" if dt_in == "float32" else "exact"
    return textwrap.dedent(f"""
        [[kernel]]
        name = "{name}"
        grid = [{grid}, 1, 1]
        block = [{block}, 1, 1]
        tolerance = "{kind}"
        [[kernel.args]]
        name = "in"
        buffer = "{dt_in}"
        elements = {N}
        role = "in"
        range = [-1000, 1000]
        [[kernel.args]]
        name = "out"
        buffer = "{dt_out}"
        elements = 1
        role = "inout"
        range = [0, 10]
        [[kernel.args]]
        name = "n"
        scalar = "{dt_n}"
        value = {N}
    """)


def convert(tmp_path: Path, source: str, *flags) -> tuple[dict, str, Path]:
    name = re.search(r"__global__ void (\w+)", source).group(1)
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    (tmp_path / "k.toml").write_text(spec(name))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", *flags])
    report = json.loads((out / "report.json").read_text())
    return report["kernels"][0], (out / "k.py").read_text(), out / "k.py"


def note(kernel: dict) -> str:
    return " ".join(d["message"] for d in kernel["diagnostics"] if d["code"] == "M3003")


def load(path: Path):
    spec_ = importlib.util.spec_from_file_location(f"grid_{path.parent.parent.name}", path)
    mod = importlib.util.module_from_spec(spec_)
    spec_.loader.exec_module(mod)
    return mod


def launched_blocks(sig, grid: int, block: int) -> int:
    """The blocks the kernel's prim_func launches for ``<<<grid, block>>>``."""
    func = sig.factory((grid, 1, 1), (block, 1, 1), 0, target="c")
    extents = re.findall(r'T\.thread_binding\((\d+), thread="blockIdx\.x"\)', func.script())
    assert len(extents) == 1, func.script()
    return int(extents[0])


def test_fill_blocks_is_one_wave_of_resident_blocks():
    assert FILL_GPU["sms"] == 132
    assert fill_blocks(512) == 132 * 4 and fill_blocks(256) == 132 * 8 and fill_blocks(1024) == 132 * 2
    assert fill_blocks(32) == 132 * FILL_GPU["blocks_per_sm"]  # the resident-block limit, not the threads


@pytest.mark.parametrize("source", [SUM, MAX, MIN], ids=["sum_tree", "warp_max", "ternary_min"])
def test_grid_stride_reductions_fill_the_gpu_and_agree(tmp_path, source):
    k, text, path = convert(tmp_path, source, "--check", "cpu")
    name = k["kernel"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    assert "CUDA grid kept" not in note(k)
    assert "grid_x = max(grid_x, fill_blocks(block_x))" in text
    assert "the result does not depend on the grid (analysis.free_grid)" in text
    assert "import Signature, fit_tile, launch, fill_blocks" in text
    grid, block, dt_in, dt_out, _, init = LAUNCH[name]
    sig = getattr(load(path), name.upper())
    assert launched_blocks(sig, grid, block) == fill_blocks(block) > grid
    # on the CPU target, the kernel at the CUDA launch computes numpy's result
    import torch

    from migrate.runtime.tilelang_support import launch
    rng = np.random.default_rng(len(name))
    x = rng.integers(-1000, 1000, size=N).astype(dt_in)
    if dt_in == "float32":
        x = rng.uniform(-1, 1, size=N).astype(np.float32)
    out = torch.tensor([init], dtype=getattr(torch, dt_out))
    launch(sig, [torch.from_numpy(x), out, N], grid=grid, block=block, target="c")
    want = {"gsum": lambda: (x.astype(np.float64) * 2).sum(),
            "gmax": lambda: x.max(), "gmin": lambda: (x ^ 5).min()}[name]()
    if dt_in == "float32":
        assert out.item() == pytest.approx(want, rel=1e-5, abs=1e-4)
    else:
        assert out.item() == want


def test_a_32_bit_index_counts_in_64_bits_at_the_freed_grid(tmp_path):
    """The freed grid's larger stride must not wrap an int index where the CUDA's stride did not
    (n within one stride of 2**31): the loop's index is widened; a 64-bit one stays as it is."""
    _k, text, _ = convert(tmp_path, SUM)
    assert "i = T.alloc_var(T.int64)" in text and "i = T.alloc_var(T.int32)" not in text
    (tmp_path / "max").mkdir()
    _k, text, _ = convert(tmp_path / "max", MAX)
    assert "i = T.alloc_var(T.uint64)" in text


def test_larger_grids_keep_theirs(tmp_path):
    k, text, path = convert(tmp_path, SUM)
    sig = load(path).GSUM
    assert launched_blocks(sig, 5000, 128) == 5000


def test_the_stride_is_the_launched_grid_in_cuda_for_sm90(tmp_path):
    from tests.lowering import lower_sm90
    _, _, path = convert(tmp_path, MAX)
    src = lower_sm90(load(path).GMAX, (2, 1, 1), (64, 1, 1))
    stride = fill_blocks(64) * 64
    # each lane steps by the launched grid's threads (CUDA's was 2 * 64), one atomic per block
    assert re.search(rf"i = \(i \+ (\(uint64_t\))?{stride}\);", src), src
    assert src.count("AtomicMax(") == 1


# -- refusals --------------------------------------------------------------------------------------

@pytest.mark.parametrize("source, old, new, reason", [
    # the block total stored per block: the output depends on the grid (dotPartial)
    (SUM, "if (threadIdx.x == 0) atomicAdd(out, s[0]);", "if (threadIdx.x == 0) out[blockIdx.x] = s[0];",
     "line 17: the block stores its total (an output that depends on the grid), it does not combine it with "
     "atomicAdd"),
    # each lane adds 1 once: more lanes, a larger result
    (SUM, "float acc = 0.0f;", "float acc = 1.0f;", "line 7: 'acc' starts at 1.0, not the identity of the sum"),
    # a max per lane, summed over lanes and blocks
    (SUM, "acc += in[i] * 2.0f;", "acc = fmaxf(acc, in[i]);", "line 9: the lanes combine with max, the tree with sum"),
    # the grid scales the elements
    (SUM, "acc += in[i] * 2.0f;", "acc += in[i] * gridDim.x;",
     "line 9: gridDim.x is used other than as the grid-stride step"),
    (SUM, "acc += in[i] * 2.0f;", "acc += in[i] * blockIdx.x;",
     "line 9: blockIdx.x is used other than in the grid-stride start"),
    # the block's minimum into a maximum: the grid decides which block minima meet
    (MIN, "atomicMin(&out[0], low)", "atomicMax(&out[0], low)", "line 23: atomicMax after a min tree (not atomicMin)"),
    # each warp's maximum added up: a reduction per warp, whose count the grid sets
    (MAX, "atomicMax(out, best)", "atomicAdd(out, best)", "line 9: the reduction is per warp, not over the block"),
    # each block adds into an element of its own
    (SUM, "atomicAdd(out, s[0])", "atomicAdd(&out[blockIdx.x % 2], s[0])",
     "line 17: the address atomicAdd writes is not the same in every block and lane"),
    # an element's value that depends on the thread, inside a device function
    (SUM, "acc += in[i] * 2.0f;", "acc += scaled(in[i]);", "line 9: the element's value calls 'scaled'"),
    # in may be out
    (SUM, "const float* __restrict__ in, float* __restrict__ out", "const float* in, float* out",
     "'in_' may alias 'out', which the atomics write (neither is __restrict__)"),
])
def test_reductions_that_keep_their_grid(tmp_path, source, old, new, reason):
    changed = source.replace(old, new)
    assert changed != source
    k, text, _ = convert(tmp_path, changed)
    assert k["form"] == "tile" and "fill_blocks" not in text
    assert f"CUDA grid kept: {reason}" in note(k)


def test_block_total_stored_per_block_agrees_with_cuda_at_its_grid(tmp_path):
    source = SUM.replace("if (threadIdx.x == 0) atomicAdd(out, s[0]);", "if (threadIdx.x == 0) out[blockIdx.x] = s[0];")
    name = "gsum"
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    (tmp_path / "k.toml").write_text(spec(name).replace("elements = 1\n", "elements = 3\n").replace(
        'role = "inout"\nrange = [0, 10]', 'role = "out"'))
    main(["convert", str(src), "-o", str(tmp_path / "out"), "-q", "--check", "cpu"])
    k = json.loads((tmp_path / "out" / "report.json").read_text())["kernels"][0]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    sig = load(tmp_path / "out" / "k.py").GSUM
    assert launched_blocks(sig, 3, 128) == 3
