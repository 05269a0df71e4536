"""GEMMs (analysis.lift.gemm): a shared-tiled GEMM lifted to a pipelined TileLang GEMM, and GEMMs
compiled for constant sizes on GPUs.

The lift: ``T.Pipelined`` and ``T.gemm`` (exact fp32, or tensor cores with ``--allow-tf32``), and a
data-dependent factor that is no GEMM.

Constant sizes (``Signature.specialize``): a lifted GEMM names the scalars that size it; on GPUs
the launcher compiles one kernel per set of their values, so TileLang may copy tiles by TMA and
multiply on warpgroup MMA. There is no GPU here: these tests check the analysis that frees the k
tile and the CUDA that TileLang lowers (for sm_90a, no device needed) -- the H200 runs are in
BENCHMARKS.md; the launcher's bookkeeping is tested in tests/runtime/test_tilelang_support.py.
"""
from __future__ import annotations

from tests.lowering import lower_sm90
from tests.analysis.lift.support import convert, factory, module_from_text


# -- the lift -------------------------------------------------------------------------------------

TILED_GEMM = """
    #define TILE 16
    __global__ void mm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int M, int N, int K) {
        __shared__ float As[TILE][TILE];
        __shared__ float Bs[TILE][TILE];
        int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
        float acc = 0.0f;
        for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
            As[threadIdx.y][threadIdx.x] = (row < M && t * TILE + threadIdx.x < K) ? A[row * K + t * TILE + threadIdx.x] : 0.0f;
            Bs[threadIdx.y][threadIdx.x] = (t * TILE + threadIdx.y < K && col < N) ? B[(t * TILE + threadIdx.y) * N + col] : 0.0f;
            __syncthreads();
            for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
            __syncthreads();
        }
        if (row < M && col < N) C[row * N + col] = 2.0f * acc;
    }
"""

GEMM_SPEC = """
    [[kernel]]
    name = "mm"
    grid = [5, 4, 1]
    block = [16, 16, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "A"
    buffer = "float32"
    elements = 3100
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "B"
    buffer = "float32"
    elements = 4650
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "C"
    buffer = "float32"
    elements = 3750
    role = "out"
    [[kernel.args]]
    name = "M"
    scalar = "int32"
    value = 50
    [[kernel.args]]
    name = "N"
    scalar = "int32"
    value = 75
    [[kernel.args]]
    name = "K"
    scalar = "int32"
    value = 62
"""


def test_tiled_gemm_becomes_a_pipelined_gemm_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, TILED_GEMM, "--check", "cpu", spec=GEMM_SPEC)
    k = kernels["mm"]
    assert k["form"] == "tile" and "GEMM" in k["reason"] and k["check"]["status"] == "pass", k["check"]
    body = factory(text, "mm")
    assert "T.Pipelined(" in body and "T.gemm(A_tile, B_tile, acc_f)" in body
    assert "tensor_cores=False" in body  # exact fp32 by default
    # on GPUs whole tiles take any k tile (the CUDA loop covers ceil(K / 16) tiles); element
    # staging (the CPU target) keeps the CUDA tile
    assert "block_K = block_K or 16 if whole_tiles else 16  # else the CUDA code's tile over k" in body


def test_allow_tf32_uses_tensor_cores_and_its_own_tolerance(tmp_path):
    kernels, text = convert(tmp_path, TILED_GEMM, "--allow-tf32")
    assert kernels["mm"]["tolerance"] == "tf32"
    assert "tensor_cores=True" in factory(text, "mm")


def test_gemm_with_a_data_dependent_factor_is_not_a_gemm(tmp_path):
    kernels, _ = convert(tmp_path, """
        __global__ void gathered(const float* __restrict__ A, const float* __restrict__ B, const int* __restrict__ p,
                                 float* __restrict__ C, int M, int N, int K) {
            int r = blockIdx.y * blockDim.y + threadIdx.y, c = blockIdx.x * blockDim.x + threadIdx.x;
            if (r < M && c < N) {
                float acc = 0.0f;
                for (int k = 0; k < K; ++k) acc += A[r * K + k] * B[k * N + c] * A[p[c] * K + k];
                C[r * N + c] = acc;
            }
        }
    """)
    assert kernels["gathered"]["form"] == "tile" and "GEMM" not in kernels["gathered"]["reason"]


# -- constant sizes on GPUs -----------------------------------------------------------------------

NT_BATCHED = """
    #define TILE 16
    __global__ void bmm(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                        int M, int N, int K) {
        __shared__ float As[TILE][TILE + 1];
        __shared__ float Bs[TILE][TILE + 1];
        const float* Ab = A + (size_t)blockIdx.z * M * K;
        const float* Bb = B + (size_t)blockIdx.z * N * K;
        int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
        int b_row = blockIdx.x * TILE + threadIdx.y;
        float acc = 0.0f;
        for (int k0 = 0; k0 < K; k0 += TILE) {
            As[threadIdx.y][threadIdx.x] = (row < M && k0 + threadIdx.x < K) ? Ab[(size_t)row * K + k0 + threadIdx.x] : 0.0f;
            Bs[threadIdx.y][threadIdx.x] = (b_row < N && k0 + threadIdx.x < K) ? Bb[(size_t)b_row * K + k0 + threadIdx.x] : 0.0f;
            __syncthreads();
            for (int kk = 0; kk < TILE; ++kk) acc += As[threadIdx.y][kk] * Bs[threadIdx.x][kk];
            __syncthreads();
        }
        if (row < M && col < N) C[(size_t)blockIdx.z * M * N + (size_t)row * N + col] = acc;
    }
"""


def test_tiled_gemm_names_its_sizes_and_frees_the_k_tile(tmp_path):
    kernels, text = convert(tmp_path, TILED_GEMM, "--allow-tf32")
    body = factory(text, "mm")
    assert "specialize=('M', 'N', 'K')," in text
    assert 'specialize_when=lambda s: s["K"] % 4 == 0 and s["N"] % 4 == 0,' in text
    # the CUDA loop runs ceil(K / 16) tiles: a k tile of any size covers the same k, zeros past K
    assert "block_K = block_K or 16 if whole_tiles else 16" in body
    assert "T.Pipelined(T.ceildiv(K, block_K)" in body
    assert "T.decl_buffer((M, K), tile_dtype, data=A.data)" in body


def test_k_tile_stays_the_cuda_tile_when_the_loop_stops_short_of_k(tmp_path):
    # t < K / TILE drops the last partial tile: a larger k tile would add products the CUDA skips
    floor = TILED_GEMM.replace("t < (K + TILE - 1) / TILE", "t < K / TILE")
    kernels, text = convert(tmp_path, floor, "--allow-tf32")
    assert kernels["mm"]["form"] == "tile"
    body = factory(text, "mm")
    assert "block_K = 16  # the CUDA code's tile over k" in body
    assert "block_K=None" not in body


def test_static_gemm_lowers_to_tma_copies_and_warpgroup_mma(tmp_path):
    """fp32 inputs with --allow-tf32 and a k-major (transposed) B: tf32 warpgroup MMA on TMA
    copies once the sizes are constants; at run-time sizes, cp.async copies and mma.sync."""
    kernels, text = convert(tmp_path, NT_BATCHED, "--allow-tf32")
    assert kernels["bmm"]["form"] == "tile"
    body = factory(text, "bmm")
    assert "A_view = T.decl_buffer((extent_z, M, K), tile_dtype, data=A.data)" in body
    sig = module_from_text(tmp_path, text).KERNELS["bmm"]
    assert sig.specialize == ("M", "N", "K")
    static = lower_sm90(sig, (8, 8, 4), (16, 16, 1), {"M": 1024, "N": 1024, "K": 1024})
    assert "tma_load" in static and "wgmma" in static
    dynamic = lower_sm90(sig, (8, 8, 4), (16, 16, 1))
    assert "tma_load" not in dynamic and "wgmma" not in dynamic and "mma_sync" in dynamic
    # rows that do not start on 16-byte boundaries (K = 450 floats) cannot be TMA copies: the
    # factory stages the tiles element by element and multiplies them on mma.sync
    odd = lower_sm90(sig, (8, 8, 4), (16, 16, 1), {"M": 300, "N": 200, "K": 450})
    assert "tma_load" not in odd and "wgmma" not in odd and "mma_sync" in odd
    assert 'aligned = static and static_sizes["K"] % 4 == 0' in body


def test_float32_gemm_with_n_major_b_transposes_b_for_warpgroup_mma(tmp_path):
    """B stored (K, N): tf32 warpgroup MMA takes k-major tiles only, so at static, aligned sizes
    a first kernel writes B transposed to a workspace and the GEMM copies k-major tiles of it."""
    _, text = convert(tmp_path, TILED_GEMM, "--allow-tf32")
    body = factory(text, "mm")
    assert "B_t = T.alloc_global((N, K), T.float32)" in body
    assert "T.gemm(A_tile, B_tile, acc_f, transpose_B=transpose_b)" in body
    sig = module_from_text(tmp_path, text).KERNELS["mm"]
    static = lower_sm90(sig, (32, 32, 1), (16, 16, 1), {"M": 512, "N": 512, "K": 512})
    assert static.count("__global__") == 4  # two kernels, each declared and defined
    assert "tma_load" in static and "wgmma" in static
    dynamic = lower_sm90(sig, (32, 32, 1), (16, 16, 1))
    assert dynamic.count("__global__") == 2 and "wgmma" not in dynamic


def test_exact_float32_gemm_is_not_specialised(tmp_path):
    # without tensor cores the constant sizes bought nothing on the H200 (and cost a compilation
    # per size): the exact GEMM keeps one kernel for all sizes
    _, text = convert(tmp_path, TILED_GEMM)
    assert "specialize=" not in text
