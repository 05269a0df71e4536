"""Rows in registers (analysis.row_registers): the lanes' strided loops of a lifted block
reduction unroll when the row length is compiled in, and a row element that several phases read
is loaded once into per-lane registers.

Kernels written for the purpose: what the pass does (and that the static kernel computes the
same rows as the CUDA, on the CPU target), and what it must refuse: a write to the buffer, loops
over different ranges or strides, a read that is not the lane's own element, a buffer that may
alias one the kernel writes, a first read under a branch.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from migrate.cli import main
from tests.analysis.lift.support import load, note

SCALE = """
    #define THREADS 128
    __global__ void scale_rows(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
        __shared__ float s[THREADS];
        const int row = blockIdx.x;
        if (row >= rows) return;
        const float* xr = x + (size_t)row * cols;
        float* yr = y + (size_t)row * cols;
        float acc = 0.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) acc += xr[c] * xr[c];
        s[threadIdx.x] = acc;
        __syncthreads();
        for (int w = blockDim.x / 2; w > 0; w >>= 1) {
            if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
            __syncthreads();
        }
        const float total = s[0] + 1.0f;
        for (int c = threadIdx.x; c < cols; c += blockDim.x) yr[c] = xr[c] / total;
    }
    int main() { scale_rows<<<7, THREADS>>>(nullptr, nullptr, 7, 300); }
"""


SPEC = """
    [[kernel]]
    name = "scale_rows"
    grid = [7, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 2100
    role = "{x_role}"
    range = [-2.0, 2.0]
    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 2100
    role = "out"
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 7
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 300
"""


def convert(tmp_path: Path, source: str, *flags) -> tuple[dict, str, Path]:
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    spec = SPEC.format(x_role="inout" if "float* __restrict__ x" in source and "const float* __restrict__ x" not in source
                       else "in")
    if "int half" in source:
        spec += '    [[kernel.args]]\n    name = "half"\n    scalar = "int32"\n    value = 150\n'
    (tmp_path / "k.toml").write_text(textwrap.dedent(spec))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", *flags])
    report = json.loads((out / "report.json").read_text())
    return {k["kernel"]: k for k in report["kernels"]}, (out / "k.py").read_text(), out / "k.py"


def run_cpu(sig, x: np.ndarray, rows: int, cols: int, sizes: dict) -> np.ndarray:
    """``scale_rows`` on the CPU target, compiled at run-time sizes or for ``sizes``."""
    import torch

    from migrate.runtime.tilelang_support import arguments, compile_kernel, without_static
    y = torch.zeros(rows * cols, dtype=torch.float32)
    args = [torch.from_numpy(x.reshape(-1).copy()), y, rows, cols]
    kernel = compile_kernel(sig, rows, 128, 0, None, "c", sizes=sizes)
    kernel(*without_static(sig, arguments(sig, args, None, None, None), sizes))
    return y.numpy().reshape(rows, cols)


def test_rows_unroll_and_stay_in_registers_and_agree_on_cpu(tmp_path):
    kernels, text, path = convert(tmp_path, SCALE, "--check", "cpu")
    k = kernels["scale_rows"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    assert "row_steps = (static_sizes[\"cols\"] + block_x - 1) // block_x if static_sizes else 0" in text
    assert "x_regs = alloc_lanes((block_x, max(row_steps, 1)), T.float32)" in text
    assert "row_steps = row_steps if row_steps <= 128 else 0" in text  # beyond, the CUDA loops
    # the first phase loads the lane's elements once, the second reads them from registers
    assert "x_regs[lane, c_step] = x[bx, c]" in text
    assert "acc = acc + x_regs[lane, c_step] * x_regs[lane, c_step]" in text
    assert "y[bx, c_2] = x_regs[lane, c_2_step] / total" in text
    # unrolled with registers, or at run-time sizes
    assert text.count("if row_steps:") == 2 and text.count("while c") == 2
    sig = load(path).SCALE_ROWS
    assert sig.specialize == ("cols",) and sig.specialize_when({"cols": 8192}) and not sig.specialize_when({"cols": 8193})


@pytest.mark.parametrize("cols", [256, 300])
def test_static_rows_compute_the_rows_on_cpu(tmp_path, cols):
    _, _, path = convert(tmp_path, SCALE)
    sig = load(path).SCALE_ROWS
    rng = np.random.default_rng(cols)
    x = rng.uniform(-2, 2, size=(5, cols)).astype(np.float32)
    want = x / ((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True) + 1.0)
    static = run_cpu(sig, x, 5, cols, {"cols": cols})
    dynamic = run_cpu(sig, x, 5, cols, {})
    np.testing.assert_allclose(static, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(dynamic, want, rtol=1e-5, atol=1e-7)


def test_static_rows_lower_to_unrolled_loads_read_once_for_sm90(tmp_path):
    from tests.lowering import lower_sm90
    _, _, path = convert(tmp_path, SCALE)
    src = lower_sm90(load(path).SCALE_ROWS, (8192, 1, 1), (128, 1, 1), {"cols": 4096})
    assert "float x_regs[32];" in src
    assert src.count("x[") == 1  # the row is read from memory once, by the first phase
    assert src.count("#pragma unroll") >= 2 and "while" not in src


# -- refusals --------------------------------------------------------------------------------------

@pytest.mark.parametrize("old, new", [
    # the kernel writes the buffer (between the phases) by a compound store
    ("const float* __restrict__ x", "float* __restrict__ x"),
    # the second phase reads another lane's element
    ("yr[c] = xr[c] / total", "yr[c] = xr[cols - 1 - c] / total"),
    # x may alias y, which the kernel writes
    ("const float* __restrict__ x, float* __restrict__ y", "const float* x, float* y"),
    # the first phase reads the element only on some iterations
    ("acc += xr[c] * xr[c];", "if (c % 3 != 1) acc += xr[c] * xr[c];"),
])
def test_reads_it_must_not_keep_in_registers(tmp_path, old, new):
    source = SCALE.replace(old, new)
    if new.startswith("float* __restrict__ x"):  # the last phase writes x before it reads it
        source = source.replace("const float* xr", "float* xr").replace(
            "yr[c] = xr[c] / total;", "{ xr[c] += 1.0f; yr[c] = xr[c] / total; }")
    assert source != SCALE
    kernels, text, _ = convert(tmp_path, source, "--check", "cpu")
    k = kernels["scale_rows"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    assert "_regs" not in text  # no register rows, so no row length compiled in (unrolling alone
    assert "T.unroll(row_steps)" not in text and "specialize=" not in text  # gained nothing)


def test_a_lanes_own_store_follows_into_its_registers(tmp_path):
    """The last phase writes the lane's element before reading it back: a plain store updates
    the register, then memory from it."""
    source = SCALE.replace("const float* __restrict__ x", "float* __restrict__ x").replace(
        "const float* xr", "float* xr").replace("yr[c] = xr[c] / total;", "{ xr[c] = xr[c] + 1.0f; yr[c] = xr[c] / total; }")
    kernels, text, path = convert(tmp_path, source, "--check", "cpu")
    k = kernels["scale_rows"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    assert "x_regs[lane, c_2_step] = x_regs[lane, c_2_step] + 1.0" in text
    assert "x[bx, c_2] = x_regs[lane, c_2_step]" in text and "y[bx, c_2] = x_regs[lane, c_2_step] / total" in text
    sig = load(path).SCALE_ROWS
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, size=(5, 300)).astype(np.float32)
    want = (x + 1.0) / ((x.astype(np.float64) ** 2).sum(axis=1, keepdims=True) + 1.0)
    np.testing.assert_allclose(run_cpu(sig, x, 5, 300, {"cols": 300}), want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("old, new, reason", [
    ("c < cols; c += blockDim.x) acc", "c < half; c += blockDim.x) acc",
     "the lanes' strided loops run over different ranges ('half', 'cols')"),
    ("c < cols; c += blockDim.x) yr[c]", "c < cols; c += 64) yr[c]",
     "the lanes' strided loops step by different amounts"),
])
def test_loops_it_must_not_unroll(tmp_path, old, new, reason):
    source = SCALE.replace(old, new).replace("int rows, int cols)", "int rows, int cols, int half)").replace(
        "nullptr, 7, 300)", "nullptr, 7, 300, 150)")
    kernels, text, _ = convert(tmp_path, source, "--check", "cpu")
    k = kernels["scale_rows"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    assert f"row loops not unrolled: {reason}" in note(k)
    assert "row_steps" not in text and "specialize" not in text
