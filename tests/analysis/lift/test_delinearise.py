"""Delinearised buffer parameters: ``A[row * K + k]`` of a tile-form kernel becomes ``A[row, k]``
of a ``(M, K)`` tensor where the guards prove it, and stays flat where they do not; the launcher
views the caller's flat tensors in those shapes."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import numpy as np
import pytest

from migrate.analysis.lift.delinearise import delinearise, kernel_inputs, sites_in_regions
from migrate.analysis.lift.base import NotLiftable
from migrate.analysis.lift.map import plan_map
from migrate.cli import main
from migrate.analysis.facts.calls import callees_of
from migrate.pipeline import plan_threads, prepare
from migrate.parse.frontend import parse_file
from migrate.runtime.tilelang_support import LaunchError, Signature, arguments


def convert(tmp_path: Path, source: str, *flags, spec: str | None = None) -> tuple[dict, str, Path]:
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    if spec is not None:
        (tmp_path / "k.toml").write_text(textwrap.dedent(spec))
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", *flags])
    report = json.loads((out / "report.json").read_text())
    return {k["kernel"]: k for k in report["kernels"]}, (out / "k.py").read_text(), out / "k.py"


def shapes_of(tmp_path: Path, source: str, refusal: bool = False):
    """The analysis on the tile-form map of the file's one kernel: (shapes, refusals); with
    ``refusal``, a map the lift refuses gives (None, its reason)."""
    src = tmp_path / "a.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    unit = parse_file(src).unit
    (fn,) = unit.kernels
    device = {f.name: f for f in unit.device_functions}
    prepared, _aliases = prepare(fn, device)
    callees = callees_of(prepared, device)
    kplan, _why = plan_threads(prepared, callees)
    try:
        tplan = plan_map(prepared, kplan, callees)
    except NotLiftable as exc:
        if not refusal:
            raise
        return None, str(exc)
    buffers, extents, table, stable = kernel_inputs(tplan.fn)
    found = delinearise(sites_in_regions(tplan.regions, set(buffers)), buffers, extents, table, stable)
    return found.shapes, found.refused


ADD_ROWS = """
    __global__ void addRows(const float* __restrict__ A, const float* __restrict__ bias,
                            float* __restrict__ out, int M, int K) {
        int k = blockIdx.x * blockDim.x + threadIdx.x;
        int row = blockIdx.y * blockDim.y + threadIdx.y;
        if (row < M && k < K) {
            int idx = row * K + k;
            out[idx] = A[idx] + bias[k];
        }
    }
"""

ADD_ROWS_SPEC = """
    [[kernel]]
    name = "addRows"
    grid = [3, 4, 1]
    block = [16, 8, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "A"
    buffer = "float32"
    elements = 1023
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "bias"
    buffer = "float32"
    elements = 33
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 1023
    role = "out"
    [[kernel.args]]
    name = "M"
    scalar = "int32"
    value = 31
    [[kernel.args]]
    name = "K"
    scalar = "int32"
    value = 33
"""


def test_guarded_row_major_access_becomes_a_shaped_parameter_and_agrees_on_cpu(tmp_path):
    kernels, text, _ = convert(tmp_path, ADD_ROWS, "--check", "cpu", spec=ADD_ROWS_SPEC)
    k = kernels["addRows"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    assert "A: T.Tensor((M, K), T.float32)" in text and "out: T.Tensor((M, K), T.float32)" in text
    assert "bias: T.Tensor((bias_len,), T.float32)" in text  # read along one index only: stays flat
    assert 'M, K = T.dynamic("M, K")' in text and "M: M, K: K)" in text
    assert "out[row, k] = A[row, k] + bias[k]" in text
    assert "idx =" not in text  # the flat offset is gone with its only use
    assert 'shapes=(("A", ("M", "K")), ("out", ("M", "K"))),' in text


def test_batched_access_becomes_three_dimensional(tmp_path):
    shapes, refused = shapes_of(tmp_path, """
        __global__ void scale3(const float* __restrict__ A, float* __restrict__ out, int nb, int M, int K) {
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int i = blockIdx.y * blockDim.y + threadIdx.y;
            int b = blockIdx.z * blockDim.z + threadIdx.z;
            if (b < nb && i < M && k < K) out[b * M * K + i * K + k] = 2.0f * A[(b * M + i) * K + k];
        }
    """)
    assert shapes == {"A": ("nb", "M", "K"), "out": ("nb", "M", "K")}, refused


def test_a_folded_pointer_view_is_an_access_like_any_other(tmp_path):
    shapes, refused = shapes_of(tmp_path, """
        __global__ void rowCopy(const float* __restrict__ A, float* __restrict__ out, int M, int K) {
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y;
            const float* a_row = A + row * K;
            if (row < M && k < K) out[row * K + k] = a_row[k];
        }
    """)
    assert shapes == {"A": ("M", "K"), "out": ("M", "K")}, refused


def test_early_returns_and_continues_are_guards_too(tmp_path):
    shapes, refused = shapes_of(tmp_path, """
        __global__ void window(const float* __restrict__ A, float* __restrict__ out, int M, int K) {
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y * blockDim.y + threadIdx.y;
            if (row >= M || k >= K) return;
            float acc = 0.0f;
            for (int d = -2; d <= 2; ++d) {
                int kk = k + d;
                if (kk < 0 || kk >= K) continue;
                acc += A[row * K + kk];
            }
            out[row * K + k] = acc;
        }
    """)
    assert shapes == {"A": ("M", "K"), "out": ("M", "K")}, refused


def test_the_first_extent_is_what_the_buffer_holds_when_no_guard_bounds_it(tmp_path):
    import torch
    from migrate.runtime.tilelang_side import load_module
    _kernels, text, path = convert(tmp_path, """
        __global__ void rowShift(const float* __restrict__ A, float* __restrict__ out, int K) {
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y;
            if (k + 1 < K) out[row * K + k] = A[row * K + k + 1];
        }
    """)
    assert 'K = T.dynamic("K")' in text and 'A_rows = T.dynamic("A_rows")' in text
    assert "A: T.Tensor((A_rows, K), T.float32)" in text and "out[gy, k] = A[gy, k + 1]" in text
    assert 'shapes=(("A", (None, "K")), ("out", (None, "K"))),' in text
    a = np.random.default_rng(3).standard_normal(6 * 10).astype(np.float32)
    out = torch.zeros(6 * 10)
    load_module(path).rowShift(torch.from_numpy(a), out, 10, grid=(1, 6, 1), block=(16, 1, 1), target="c")
    want = np.zeros((6, 10), np.float32)
    want[:, :9] = a.reshape(6, 10)[:, 1:]
    np.testing.assert_array_equal(out.numpy().reshape(6, 10), want)


@pytest.mark.parametrize("body, reason", [
    # no k < K: row * K + k may run into the next row
    ("if (row < M) out[row * K + k] = A[row * K + k];", "not proven below 'K'"),
    # a stride that is not a product of parameters
    ("if (row < M && k < K) out[row * K + k] = A[row * (K + 1) + k];", "not proven below 'K'"),
    # the same buffer read row-major and column-major
    ("if (row < M && k < K) out[row * K + k] = A[row * K + k] + A[k * M + row];", "not proven"),
    # pointer arithmetic through bytes: a view of A, `A[4 * (row * K + k) / 4]` (pointer_views), whose
    # index is not seen as row * K + k (`*(A + off)` is `A[off]`, delinearised below)
    ("if (row < M && k < K) out[row * K + k] = *(const float*)((const char*)A + 4 * (row * K + k));",
     "no access of 'A' is scaled by a scalar parameter"),
    # an index below zero
    ("if (row < M && k < K) out[row * K + k] = A[row * K + k - 1];", "not proven >= 0"),
    # a guard on a local that changes before the access proves nothing there
    ("int c = k; if (row < M && c < K) { c = c + 1; out[row * K + k] = A[row * K + c]; }", "not proven"),
])
def test_accesses_it_must_keep_flat(tmp_path, body, reason):
    shapes, refused = shapes_of(tmp_path, f"""
        __global__ void k2(const float* __restrict__ A, float* __restrict__ out, int M, int K) {{
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y * blockDim.y + threadIdx.y;
            {body}
        }}
    """)
    assert "A" not in shapes and reason in refused["A"], refused


def test_a_dereference_of_the_parameter_plus_a_row_offset_is_delinearised_like_an_index(tmp_path):
    """``*(A + row * K + k)`` is ``A[row * K + k]`` (the pointer-views preparation): the same rows."""
    shapes, refused = shapes_of(tmp_path, """
        __global__ void k2(const float* __restrict__ A, float* __restrict__ out, int M, int K) {
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y * blockDim.y + threadIdx.y;
            if (row < M && k < K) out[row * K + k] = *(A + row * K + k);
        }
    """)
    assert shapes.get("A") == shapes.get("out") == ("M", "K") and "A" not in refused, (shapes, refused)


def test_a_row_index_without_its_bound_gets_a_note_naming_the_access(tmp_path):
    """M3005: the user learns which access keeps a buffer flat and which bound is missing; a
    buffer indexed without any row stride (bias[k]) is flat without a note."""
    kernels, text, _ = convert(tmp_path, """
        __global__ void shift(const float* __restrict__ A, const float* __restrict__ bias,
                              float* __restrict__ out, int M, int K) {
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y * blockDim.y + threadIdx.y;
            if (row < M && k < K) {
                out[row * K + k] = A[row * K + k + 1] + bias[k];
            }
        }
    """)
    k = kernels["shift"]
    assert k["form"] == "tile"
    notes = [d for d in k["diagnostics"] if d["code"] == "M3005"]
    assert [(d["line"], d["severity"]) for d in notes] == [(8, "note")], notes
    assert notes[0]["message"] == ("buffer 'A' kept flat: index 1 is not proven below 'K' "
                                   "(it could run into the next row)")
    assert "out: T.Tensor((M, K)" in text and "A: T.Tensor((A_len,)" in text


def test_a_buffer_flat_by_nature_gets_no_note(tmp_path):
    """``x[n - 1]`` scales nothing that varies by a parameter: flat without a note (M3005 is for
    row-indexed buffers whose proof is missing)."""
    kernels, _text, _ = convert(tmp_path, """
        __global__ void last(const float* __restrict__ x, float* __restrict__ y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = x[i] - x[n - 1];
        }
    """)
    assert kernels["last"]["form"] == "tile"
    assert [d for d in kernels["last"]["diagnostics"] if d["code"] == "M3005"] == []


def test_a_parameter_the_kernel_assigns_is_no_extent(tmp_path):
    shapes, refused = shapes_of(tmp_path, """
        __global__ void clampK(const float* __restrict__ A, float* __restrict__ out, int M, int K) {
            if (K > 64) K = 64;
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y * blockDim.y + threadIdx.y;
            if (row < M && k < K) out[row * K + k] = A[row * K + k];
        }
    """, refusal=True)
    # K is read through a local copy (prepare.written_params): row * K_v + k is no row index, so no
    # buffer gets K as an extent (the map lifts on the CUDA's race rule, note M3006, its stores
    # not proven apart along y) and both buffers stay flat
    assert shapes == {}, shapes


def test_buffers_that_alias_are_views_of_one_tensor(tmp_path):
    """In-place use of two parameters that may alias (neither __restrict__): the launcher views
    the one tensor twice, and the kernel computes what the CUDA does in place."""
    import torch
    from migrate.runtime.tilelang_side import load_module
    _kernels, text, path = convert(tmp_path, """
        __global__ void scaleRows(const float* x, float* y, const float* s, int M, int K) {
            int k = blockIdx.x * blockDim.x + threadIdx.x;
            int row = blockIdx.y * blockDim.y + threadIdx.y;
            if (row < M && k < K) y[row * K + k] = x[row * K + k] * s[row];
        }
    """)
    assert "x: T.Tensor((M, K), T.float32)" in text and "T.annotate_restrict_buffers(x, y, s)" in text
    module = load_module(path)
    rng = np.random.default_rng(7)
    data = rng.standard_normal(5 * 19 + 3).astype(np.float32)  # 3 elements past the array
    scale = rng.standard_normal(5).astype(np.float32)
    want = data.copy()
    want[:95] = (data[:95].reshape(5, 19) * scale[:, None]).reshape(-1)
    buf = torch.from_numpy(data.copy())
    module.scaleRows(buf, buf, torch.from_numpy(scale), 5, 19, grid=(1, 1, 1), block=(32, 8, 1), target="c")
    np.testing.assert_array_equal(buf.numpy(), want)


# -- the launcher ------------------------------------------------------------------------------

SIG = Signature(name="k", factory=None, params=(("A", "buffer", "float32"), ("B", "buffer", "float32"),
                                                ("M", "scalar", "int32"), ("K", "scalar", "int32")),
                form="tile", shapes=(("A", ("M", "K")), ("B", (None, "K"))))


def test_launcher_views_flat_tensors_in_the_kernel_shapes():
    import torch
    a, b = torch.arange(40, dtype=torch.float32), torch.zeros(24)
    va, vb, m, k = arguments(SIG, (a, b, 3, 8))
    assert tuple(va.shape) == (3, 8) and tuple(vb.shape) == (3, 8) and (m, k) == (3, 8)
    assert va.data_ptr() == a.data_ptr() and float(va[2, 7]) == 23.0  # row-major, the first 24 elements
    vb[1, 2] = 5.0
    assert float(b[10]) == 5.0  # writes reach the caller's tensor


@pytest.mark.parametrize("args, message", [
    ((20, 24, 3, 8), "'A' holds 20 elements; the kernel reads it as a (M=3 x K=8) array of 24"),
    ((24, 20, 3, 8), "'B' holds 20 elements, not whole rows of 8 (K)"),
    ((24, 24, -1, 8), "'M' = -1 is an extent of buffer 'A'"),
])
def test_launcher_refuses_buffers_that_do_not_hold_the_shape(args, message):
    import torch
    na, nb, m, k = args
    with pytest.raises(LaunchError, match=message.replace("(", r"\(").replace(")", r"\)")):
        arguments(SIG, (torch.zeros(na), torch.zeros(nb), m, k))
