"""The tile form's factory (emit.tile): tile sizes and the full-tile branch of maps, and sizes compiled
in as constants where a map divides by them (convolutions), so the index math stays int32.
"""
from __future__ import annotations

import re

from tests.analysis.lift.support import convert, factory
from tests.lowering import lower_sm90


# -- maps: tiles and the full-tile branch ---------------------------------------------------------

def test_map_with_a_loop_per_element_runs_one_element_per_thread(tmp_path):
    # a dot product per element: four elements per thread would run four loops one after another
    kernels, text = convert(tmp_path, """
        __global__ void rowdot(const float* __restrict__ A, const float* __restrict__ x, float* __restrict__ y,
                               int rows, int cols) {
            int r = blockIdx.x * blockDim.x + threadIdx.x;
            if (r < rows) {
                float s = 0.0f;
                for (int c = 0; c < cols; ++c) s += A[r * cols + c] * x[c];
                y[r] = s;
            }
        }
    """)
    assert kernels["rowdot"]["form"] == "tile"
    assert 'tile=(256,), threads=256' in factory(text, "rowdot")


def test_map_calling_a_gpu_helper_has_no_full_tile_branch(tmp_path):
    # __popc's GPU form is a helper function: TileLang leaves the loop scalar, and the branch it
    # would vectorise gives each thread four neighbouring elements (uncoalesced when scalar)
    kernels, text = convert(tmp_path, """
        __global__ void bits(const unsigned* __restrict__ w, unsigned* __restrict__ c, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) c[i] = __popc(w[i]);
        }
        __global__ void plain(const unsigned* __restrict__ w, unsigned* __restrict__ c, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) c[i] = w[i] ^ 7u;
        }
    """)
    assert "no full-tile branch" in factory(text, "bits") and "# a full tile" not in factory(text, "bits")
    assert "# a full tile: TileLang drops the guards below and vectorises" in factory(text, "plain")


# -- convolutions: sizes compiled as constants keep the index math int32 --------------------------

CONV = """
    __global__ void conv(const float* __restrict__ in, const float* __restrict__ wt, float* __restrict__ out,
                         int N, int C, int H, int W, int K, int R, int S) {
        const int idx = blockIdx.x * blockDim.x + threadIdx.x;
        const int P = H - R + 1, Q = W - S + 1;
        if (idx >= N * K * P * Q) return;
        const int q = idx % Q;
        const int p = (idx / Q) % P;
        const int k = (idx / (P * Q)) % K;
        const int n = idx / (K * P * Q);
        float acc = 0.0f;
        for (int c = 0; c < C; ++c)
            for (int r = 0; r < R; ++r)
                for (int s = 0; s < S; ++s)
                    acc += in[((n * C + c) * H + p + r) * W + q + s] * wt[((k * C + c) * R + r) * S + s];
        out[idx] = acc;
    }
    int main() { conv<<<8, 128>>>(nullptr, nullptr, nullptr, 2, 3, 10, 10, 4, 3, 3); }
"""

CONV_SPEC = """
    [[kernel]]
    name = "conv"
    grid = [6, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 600
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "wt"
    buffer = "float32"
    elements = 108
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 512
    role = "out"
    [[kernel.args]]
    name = "N"
    scalar = "int32"
    value = 2
    [[kernel.args]]
    name = "C"
    scalar = "int32"
    value = 3
    [[kernel.args]]
    name = "H"
    scalar = "int32"
    value = 10
    [[kernel.args]]
    name = "W"
    scalar = "int32"
    value = 10
    [[kernel.args]]
    name = "K"
    scalar = "int32"
    value = 4
    [[kernel.args]]
    name = "R"
    scalar = "int32"
    value = 3
    [[kernel.args]]
    name = "S"
    scalar = "int32"
    value = 3
"""


def _cuda_source(module_path, kernel: str, grid, block, sizes: dict | None) -> str:
    """The CUDA TileLang generates for sm_90a (no GPU needed), at run-time or constant sizes."""
    from migrate.runtime.tilelang_side import load_module
    return lower_sm90(load_module(module_path).KERNELS[kernel], grid, block, sizes)


def test_convolution_sizes_are_compiled_as_constants_and_its_index_math_stays_int32(tmp_path):
    kernels, text = convert(tmp_path, CONV, "--check", "cpu", spec=CONV_SPEC)
    k = kernels["conv"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "conv")
    assert "static_sizes=None" in body and 'static = static_sizes is not None and target == "cuda"' in body
    # the coordinates: values at constant sizes, cells (divisions computed once) at run-time sizes
    assert re.search(r"if static:.*\n\s+q = T.truncmod\(idx, Q\)", body)
    assert re.search(r"else:.*\n\s+q = T.alloc_var\(T.int32\)", body)
    assert "specialize=('N', 'C', 'H', 'W', 'K', 'R', 'S')," in text
    assert "static_pass_configs=(('tl.disable_safe_memory_legalize', True), ('tl.if_stmt_binding_inline_replayable_binds', False))," in text
    module = tmp_path / "out" / "k.py"
    sizes = {"N": 2, "C": 3, "H": 10, "W": 10, "K": 4, "R": 3, "S": 3}
    dynamic = _cuda_source(module, "conv", (6, 1, 1), (128, 1, 1), None)
    static = _cuda_source(module, "conv", (6, 1, 1), (128, 1, 1), sizes)
    assert "int64_t" in dynamic  # TileLang cannot bound products of run-time sizes
    assert "int64_t" not in static and "int C" not in static


def test_divisions_by_constants_do_not_specialise(tmp_path):
    kernels, text = convert(tmp_path, """
        __global__ void fir(const float* __restrict__ x, float* __restrict__ y, int n) {
            const int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i >= n) return;
            float acc = 0.0f;
            for (int t = 0; t < 9; ++t) {
                const int j = i + t - 9 / 2;
                if (j >= 0 && j < n) acc += x[j];
            }
            y[i] = acc;
        }
        int main() { fir<<<4, 256>>>(nullptr, nullptr, 1000); }
    """)
    assert kernels["fir"]["form"] == "tile"
    assert "static_sizes" not in factory(text, "fir") and "specialize=" not in text


def test_a_grid_stride_map_bounded_by_a_size_t_parameter_casts_it_before_the_kernel(tmp_path):
    """``idx < n / 4`` with a ``size_t n`` (carried as int64, cast back to uint64): the grid's
    extent reads n outside ``T.Kernel``, so the cast must come first there (it came only inside,
    and the module raised UnboundLocalError on a real program)."""
    kernels, text = convert(tmp_path, """
        __global__ void quarter(const float* __restrict__ A, unsigned char* out, const size_t n) {
            for (size_t idx = (size_t)blockIdx.x * blockDim.x + threadIdx.x; idx < n / 4;
                 idx += gridDim.x * blockDim.x)
                out[idx] = (unsigned char)(int)(A[4 * idx] + A[4 * idx + 3]);
        }
    """, "--check", "cpu", spec="""
        [[kernel]]
        name = "quarter"
        grid = [3, 1, 1]
        block = [64, 1, 1]
        tolerance = "exact"
        [[kernel.args]]
        name = "A"
        buffer = "float32"
        elements = 4004
        role = "in"
        range = [0.0, 60.0]
        [[kernel.args]]
        name = "out"
        buffer = "uint8"
        elements = 1001
        role = "out"
        [[kernel.args]]
        name = "n"
        scalar = "uint64"
        value = 4004
    """)
    k = kernels["quarter"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "quarter")
    assert body.index("n = T.Cast(T.uint64, n_arg)") < body.index("with T.Kernel(")
    cuda = _cuda_source(tmp_path / "out" / "k.py", "quarter", (3, 1, 1), (64, 1, 1), None)
    assert "quarter_kernel" in cuda
