"""Register micro-tiles as elements (analysis.lift.micro_tiles); the cooperative fills of the same
kernels are tested in tests/analysis/lift/test_coop_fills.py.

A register-blocked GEMM (each thread a TM x TN tile of C in registers, strided by the block)
is lifted to the GEMM tile form once its micro-tiles are expanded into elements and its
cooperative slab loads rewritten as fills; kernels whose micro-tiles overlap, have no constant
size or carry values between elements keep their portable form with the reason.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from migrate.cli import main
from tests.lowering import lower_sm90
from tests.analysis.lift.support import convert, factory, module_from_text, note, refused
from tests.paths import CORPUS as ALL_CORPUS

CORPUS = ALL_CORPUS / "matmul"

#: A register-blocked GEMM without shared memory: 2 x 2 strided micro-tiles of C per thread.
REG2 = """
    __global__ void rb(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                       int M, int N, int K) {
        float acc[2][2];
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) acc[i][j] = 0.0f;
        for (int k = 0; k < K; ++k)
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 2; ++j)
                    acc[i][j] += (blockIdx.y * 32 + threadIdx.y + 16 * i < M
                                  ? A[(blockIdx.y * 32 + threadIdx.y + 16 * i) * K + k] : 0.0f)
                               * (blockIdx.x * 32 + threadIdx.x + 16 * j < N
                                  ? B[k * N + blockIdx.x * 32 + threadIdx.x + 16 * j] : 0.0f);
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) {
                int r = blockIdx.y * 32 + threadIdx.y + 16 * i, c = blockIdx.x * 32 + threadIdx.x + 16 * j;
                if (r < M && c < N) C[r * N + c] = EPILOGUE;
            }
    }
    int main() { rb<<<dim3(3, 2), dim3(16, 16)>>>(nullptr, nullptr, nullptr, 50, 70, 33); }
"""

REG2_SPEC = """
    [[kernel]]
    name = "rb"
    grid = [3, 2, 1]
    block = [16, 16, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "A"
    buffer = "float32"
    elements = 1650
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "B"
    buffer = "float32"
    elements = 2310
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "C"
    buffer = "float32"
    elements = 3500
    role = "out"
    [[kernel.args]]
    name = "M"
    scalar = "int32"
    value = 50
    [[kernel.args]]
    name = "N"
    scalar = "int32"
    value = 70
    [[kernel.args]]
    name = "K"
    scalar = "int32"
    value = 33
"""


def _regblock(tmp_path: Path, *flags) -> tuple[dict, str]:
    src = tmp_path / "src"
    src.mkdir()
    for f in ("matmul_regblock.cu", "matmul_regblock.toml"):
        shutil.copy(CORPUS / f, src / f)
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", *flags])
    report = json.loads((out / "report.json").read_text())
    return {k["kernel"]: k for k in report["kernels"]}, (out / "matmul_regblock.py").read_text()


def test_register_blocked_sgemm_is_lifted_to_the_gemm_form_and_agrees_on_cpu(tmp_path):
    kernels, text = _regblock(tmp_path, "--check", "cpu")
    k = kernels["matmul_regblock_4x4"]
    assert k["form"] == "tile" and "a GEMM" in k["reason"], k
    assert k["check"]["status"] == "pass", k["check"]
    body = factory(text, "matmul_regblock_4x4")
    # the CUDA block of 16 x 16 threads covers 64 x 64 elements of C: 4 x 4 per thread
    assert "assert block_x == 16" in body and "assert block_y == 16" in body
    assert "extent_x = grid_x * block_x * 4  # a 4 × 4 micro-tile of C per CUDA thread" in body
    assert "extent_y = grid_y * block_y * 4" in body
    # the cooperative slab loads are staged tiles (zero past the bounds), not thread loops
    assert "T.copy(A[by * block_M, ko * block_K], A_tile)" in body
    assert "A_tile[i, kk] = T.if_then_else(gy < extent_y, T.if_then_else(gy < M and k0 + kk < K" in body
    assert "kk = kk" not in body
    assert not any(w in body for w in ("acc[", "a_frag", "b_frag", "tid", "nthreads", "threadIdx"))
    assert "C[r_3, c_3] = acc" in body


def test_register_blocked_sgemm_uses_tensor_cores_with_tf32_and_lowers_for_sm90(tmp_path):
    kernels, text = _regblock(tmp_path, "--allow-tf32", "--check", "cpu")
    k = kernels["matmul_regblock_4x4"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k
    assert k["tolerance"] == "tf32" and k["check"]["tolerance"] == "tf32"
    assert "T.gemm(A_tile, B_tile, acc_f, transpose_B=transpose_b)" in factory(text, "matmul_regblock_4x4")
    sig = module_from_text(tmp_path, text).KERNELS["matmul_regblock_4x4"]
    assert sig.specialize == ("M", "N", "K")
    static = lower_sm90(sig, (16, 16, 1), (16, 16, 1), {"M": 1024, "N": 1024, "K": 1024})
    assert "tma_load" in static and "wgmma" in static
    exact = lower_sm90(sig, (16, 16, 1), (16, 16, 1), tensor_cores=False)
    assert "wgmma" not in exact and "mma" not in exact.replace("gemm", "")


def test_micro_tiles_without_shared_memory_are_expanded_and_agree_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, REG2.replace("EPILOGUE", "2.0f * acc[i][j]"), "--check", "cpu",
                            spec=REG2_SPEC)
    assert kernels["rb"]["form"] == "tile", note(kernels["rb"])
    assert kernels["rb"]["check"]["status"] == "pass", kernels["rb"]["check"]
    body = factory(text, "rb")
    assert "extent_x = grid_x * block_x * 2  # a 2 × 2 micro-tile of C per CUDA thread" in body
    assert "C[r, c] = 2.0 * acc" in body and "acc[" not in body and "threadIdx" not in body


def test_overlapping_micro_tiles_are_refused(tmp_path):
    # rows ty + 8 * i of a 16-row block: threads 0 and 8 share rows, and rows 24..31 are missed
    why = refused(tmp_path, REG2.replace("threadIdx.y + 16 * i", "threadIdx.y + 8 * i")
                  .replace("EPILOGUE", "acc[i][j]"))
    assert "the block's tile along y is 32, not the 8 × 2 elements its threads' micro-tiles cover" in why


def test_contiguous_micro_tile_rows_are_refused_with_the_reason(tmp_path):
    why = refused(tmp_path, REG2.replace("threadIdx.y + 16 * i", "threadIdx.y * 2 + i")
                  .replace("EPILOGUE", "acc[i][j]"))
    assert "micro-tile rows 2 * threadIdx.y + 1 * i" in why and "not strided by the block" in why


def test_micro_tiles_of_no_constant_size_are_refused(tmp_path):
    source = REG2.replace("int M, int N, int K)", "int M, int N, int K, int tn)") \
        .replace("for (int j = 0; j < 2; ++j)\n                    acc", "for (int j = 0; j < tn; ++j)\n                    acc") \
        .replace("EPILOGUE", "acc[i][j]").replace("50, 70, 33)", "50, 70, 33, 2)")
    assert "j < tn" in source
    why = refused(tmp_path, source)
    assert "the micro-tile along x has no constant size: the loop over 'j" in why
    assert "(line 10) does not run a constant count" in why


def test_accumulators_read_across_elements_are_refused(tmp_path):
    why = refused(tmp_path, REG2.replace("EPILOGUE", "acc[i][j] + acc[0][j]"))
    assert "'acc' is accessed at line" in why and "cross micro-tile elements" in why


def test_a_sum_over_the_micro_tile_is_refused(tmp_path):
    source = REG2.replace("""        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) {
                int r""", """        float s = 0.0f;
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j) {
                s += acc[i][j];
                int r""").replace("EPILOGUE", "s")
    assert "s += acc[i][j]" in source
    why = refused(tmp_path, source)
    assert "'s' is assigned in the micro loop over 'i" in why and "(line 18)" in why and "carries a value across" in why
