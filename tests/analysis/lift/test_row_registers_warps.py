"""Rows in registers for reductions per warp (analysis.row_registers on the lane loops of
analysis.lift_warp_rows, one warp per row): the lanes' strided loops ``for (c = lane; c < cols;
c += 32)`` unroll when the row length is compiled in; an element several phases read stays in a
register array per (warp, lane) pair if a lane holds at most 128 of them (beyond, the CUDA loops
run); a lane's own store of the element follows into its register.

The corpus kernels (fused_add_rmsnorm, softmax_online_warp) compiled for a row length agree with
the run-time-size kernels and with NumPy on the CPU target, in both regimes; a kernel written for
the purpose shows what the pass must refuse.
"""
from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import numpy as np
import pytest

from migrate.cli import main
from tests.analysis.lift.support import load
from tests.lowering import lower_sm90
from tests.paths import REPO

ROOT = REPO


@pytest.fixture(scope="module")
def norm(tmp_path_factory):
    """The corpus's one-warp-per-row kernels, converted."""
    src, out = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("norm") / "out"
    for name in ("rmsnorm", "softmax_warp"):
        shutil.copy(ROOT / "corpus/norm" / f"{name}.cu", src)
    main(["convert", str(src), "-o", str(out), "-q"])
    return {name: load(out / f"{name}.py") for name in ("rmsnorm", "softmax_warp")}


def run_cpu(sig, args, rows: int, sizes: dict):
    """``sig`` on the CPU target with one warp per row, 4 warps a block, compiled at run-time
    sizes or for ``sizes``."""
    from migrate.runtime.tilelang_support import arguments, compile_kernel, without_static
    kernel = compile_kernel(sig, (rows + 3) // 4, 128, 0, None, "c", sizes=sizes)
    kernel(*without_static(sig, arguments(sig, args, None, None, None), sizes))


# 40 columns: 2 elements a lane; 2100: 66 a lane (all in registers); 4500: 141 a lane, beyond the
# cap: the CUDA loops, even with the size compiled in
@pytest.mark.parametrize("cols", [40, 2100, 4500])
def test_fused_add_rmsnorm_static_rows_agree_on_cpu(norm, cols):
    import torch
    sig = norm["rmsnorm"].FUSED_ADD_RMSNORM
    assert sig.specialize == ("hidden",)
    rows, eps = 6, 1e-6
    rng = np.random.default_rng(cols)
    x = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    res = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
    w = rng.uniform(0.8, 1.2, cols).astype(np.float32)
    h = x.astype(np.float64) + res
    want_y = h / np.sqrt((h ** 2).mean(axis=1, keepdims=True) + eps) * w
    got = {}
    for label, sizes in (("static", {"hidden": cols}), ("dynamic", {})):
        r, y = torch.from_numpy(res.reshape(-1).copy()), torch.zeros(rows * cols)
        run_cpu(sig, [torch.from_numpy(x.reshape(-1).copy()), r, torch.from_numpy(w), y, rows, cols, eps], rows, sizes)
        got[label] = (r.numpy().reshape(rows, cols), y.numpy().reshape(rows, cols))
        np.testing.assert_allclose(got[label][0], h, rtol=1e-6, atol=1e-6)  # the residual stored
        np.testing.assert_allclose(got[label][1], want_y, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["static"][1], got["dynamic"][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cols", [40, 2100, 4500])
def test_softmax_online_warp_static_rows_agree_on_cpu(norm, cols):
    import torch
    sig = norm["softmax_warp"].SOFTMAX_ONLINE_WARP
    assert sig.specialize == ("cols",) and sig.specialize_when({"cols": 4096})
    rows = 5
    x = np.random.default_rng(cols).uniform(-5, 5, (rows, cols)).astype(np.float32)
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    got = {}
    for label, sizes in (("static", {"cols": cols}), ("dynamic", {})):
        y = torch.zeros(rows * cols)
        run_cpu(sig, [torch.from_numpy(x.reshape(-1).copy()), y, rows, cols], rows, sizes)
        got[label] = y.numpy().reshape(rows, cols)
        np.testing.assert_allclose(got[label], want, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(got["static"], got["dynamic"], rtol=1e-5, atol=1e-8)


def lower_rows(sig, cols: int) -> str:
    """``sig`` lowered for sm_90a with its row length compiled in as ``cols``."""
    return lower_sm90(sig, (2048, 1, 1), (128, 1, 1), {sig.specialize[0]: cols})


def test_fused_add_rmsnorm_lowers_with_the_residual_in_registers_for_sm90(norm):
    sig = norm["rmsnorm"].FUSED_ADD_RMSNORM
    src = lower_rows(sig, 2048)  # 64 elements a lane: the residual the lane stored stays in registers
    assert "float residual_regs[64];" in src
    assert src.count("residual[") == 2  # loaded and stored once; the second phase reads the registers
    assert src.count("#pragma unroll") >= 2 and "while" not in src
    src = lower_rows(sig, 4096)  # 128 a lane, the cap: still in registers
    assert "float residual_regs[128];" in src and src.count("residual[") == 2
    src = lower_rows(sig, 8192)  # 256 a lane: beyond the cap, the CUDA loops
    assert "residual_regs" not in src and src.count("residual[") == 3  # read, stored, read again


def test_softmax_online_warp_lowers_unrolled_for_sm90(norm):
    sig = norm["softmax_warp"].SOFTMAX_ONLINE_WARP
    src = lower_rows(sig, 2048)
    assert "float x_regs[64];" in src and src.count("x[") == 1  # the row read once
    src = lower_rows(sig, 4096)
    assert "float x_regs[128];" in src and src.count("x[") == 1 and "while" not in src


# -- a kernel written for the purpose: what the pass keeps, and what it must refuse -----------------

ADD_NORM = """
    #define WARPS 4
    __global__ void add_norm(const float* __restrict__ x, float* __restrict__ res, float* __restrict__ y,
                             int rows, int cols) {
        const int lane = threadIdx.x & 31;
        const int row = blockIdx.x * WARPS + (threadIdx.x >> 5);
        if (row >= rows) return;
        const size_t base = (size_t)row * cols;
        float acc = 0.0f;
        for (int c = lane; c < cols; c += 32) {
            const float h = x[base + c] + res[base + c];
            res[base + c] = h;
            acc += h * h;
        }
        for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
        const float s = 1.0f / (acc + 1.0f);
        for (int c = lane; c < cols; c += 32) y[base + c] = res[base + c] * s + x[base + c];
    }
    int main() { add_norm<<<2, 128>>>(nullptr, nullptr, nullptr, 7, 300); }
"""

SPEC = """
    [[kernel]]
    name = "add_norm"
    grid = [2, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 2100
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "res"
    buffer = "float32"
    elements = 2100
    role = "inout"
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


def convert(tmp_path: Path, source: str) -> tuple[dict, str, Path]:
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    (tmp_path / "k.toml").write_text(textwrap.dedent(SPEC))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu"])
    kernel = json.loads((out / "report.json").read_text())["kernels"][0]
    assert kernel["form"] == "tile" and kernel["check"]["status"] == "pass", kernel["check"]
    return kernel, (out / "k.py").read_text(), out / "k.py"


def test_a_lanes_own_store_follows_into_its_registers(tmp_path):
    _, text, path = convert(tmp_path, ADD_NORM)
    assert "res_regs = alloc_lanes((block_x // 32, 32, max(row_steps, 1)), T.float32)" in text
    assert "row_steps = row_steps if row_steps <= 128 else 0" in text
    # the first phase loads the element, stores the sum to the register and from it to memory
    assert "res_regs[lane_w, lane_l, c_step] = res[" in text
    assert "res_regs[lane_w, lane_l, c_step] = h" in text
    assert "= res_regs[lane_w, lane_l, c_step]  # L" in text
    # the second phase reads both rows from registers: x (read-only) and res (the lane's own store)
    assert "res_regs[lane_w, lane_l, c_2_step] * s + x_regs[lane_w, lane_l, c_2_step]" in text
    assert text.count("T.unroll(row_steps)") == 2 and text.count("if row_steps:") == 2


@pytest.mark.parametrize("cols", [300, 2100])
def test_the_kernel_for_the_purpose_agrees_static_and_dynamic_on_cpu(tmp_path, cols):
    import torch
    _, _, path = convert(tmp_path, ADD_NORM)
    sig = load(path).ADD_NORM
    rows = 7
    rng = np.random.default_rng(cols)
    x = rng.uniform(-1, 1, (rows, cols)).astype(np.float32)
    res = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
    h = x.astype(np.float64) + res
    want = h / ((h ** 2).sum(axis=1, keepdims=True) + 1.0) + x
    for sizes in ({"cols": cols}, {}):
        r, y = torch.from_numpy(res.reshape(-1).copy()), torch.zeros(rows * cols)
        run_cpu(sig, [torch.from_numpy(x.reshape(-1).copy()), r, y, rows, cols], rows, sizes)
        np.testing.assert_allclose(r.numpy().reshape(rows, cols), h, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(y.numpy().reshape(rows, cols), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("old, new, kept", [
    # the first phase stores res before any read of it: the store starts the register, no load
    ("const float h = x[base + c] + res[base + c];", "const float h = x[base + c];", {"x_regs", "res_regs"}),
    # a read on some iterations before the store: the store may not start the register
    ("const float h = x[base + c] + res[base + c];",
     "const float h = x[base + c] + (c % 3 == 1 ? res[base + c] : 0.0f);", {"x_regs"}),
    # a compound store (the register would not follow it as a statement of its own)
    ("res[base + c] = h;", "res[base + c] += x[base + c];", {"x_regs"}),
    # the second phase reads another lane's element of x
    ("* s + x[base + c]", "* s + x[base + cols - 1 - c]", {"res_regs"}),
    # the buffers may alias one another: nothing kept
    ("__restrict__", "", set()),
])
def test_elements_it_keeps_or_must_not_keep_in_registers(tmp_path, old, new, kept):
    source = ADD_NORM.replace(old, new)
    assert source != ADD_NORM
    _, text, _ = convert(tmp_path, source)
    assert {name for name in ("x_regs", "res_regs") if name in text} == kept
    # with something kept, the loops unroll at compiled-in sizes; with nothing, no size is compiled in
    assert (text.count("T.unroll(row_steps)") >= 2) == bool(kept)
    assert ("specialize=('cols',)" in text) == bool(kept)


def test_loops_stepping_differently_are_not_unrolled(tmp_path):
    source = ADD_NORM.replace("for (int c = lane; c < cols; c += 32) {", "for (int c = lane; c < cols; c += 64) {") \
        .replace("res[base + c] = h;", "")
    assert source != ADD_NORM
    kernel, text, _ = convert(tmp_path, source)
    notes = " ".join(d["message"] for d in kernel["diagnostics"] if d["code"] == "M3003")
    assert "row loops not unrolled: the lanes' strided loops step by different amounts" in notes
    assert "row_steps" not in text and "specialize" not in text
