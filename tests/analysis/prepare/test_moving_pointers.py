"""Pointers that move (analysis.prepare.moving_pointers), written the way real programs write
them: a pitched image's row and column folded into its pointer parameters before a shared tile
and a barrier, a local pointer walking a row with ``p++``, a view re-pointed at another row."""
from __future__ import annotations

import json

import pytest

from migrate.analysis.prepare.moving_pointers import moving_pointers
from migrate.cli import main
from migrate.ir import model as m
from tests.analysis.support import nodes, unit

TRANSPOSE = """
#include <cuda_runtime.h>
#define TILE 16
// each block transposes a 16x16 tile of a pitched image
__global__ void tile_transpose(const float* src, float* dst, int pitch_in, int pitch_out)
{
    __shared__ float tile[TILE][TILE + 1];
    src += (blockIdx.y * TILE + threadIdx.y) * pitch_in + blockIdx.x * TILE + threadIdx.x;
    tile[threadIdx.y][threadIdx.x] = src[0];
    __syncthreads();
    dst += (blockIdx.x * TILE + threadIdx.y) * pitch_out + blockIdx.y * TILE + threadIdx.x;
    dst[0] = tile[threadIdx.x][threadIdx.y];
}

// one thread per row: a local pointer walks it, another is re-pointed at the next row
__global__ void row_stats(const float* x, float* sums, float* firsts, int rows, int cols)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const float* p = x + r * cols;
    float acc = 0.0f;
    for (int j = 0; j < cols; ++j) {
        acc += *p;
        p++;
    }
    sums[r] = acc;
    const float* q = x;
    q = q + r * cols;
    firsts[r] = *(q + 1) - q[0];
}
"""

SPEC = """
[[kernel]]
name = "tile_transpose"
grid = [3, 2, 1]
block = [16, 16, 1]
tolerance = "exact"
[[kernel.args]]
name = "src"
buffer = "float32"
elements = 1536
role = "in"
range = [-4.0, 4.0]
[[kernel.args]]
name = "dst"
buffer = "float32"
elements = 1536
role = "out"
[[kernel.args]]
name = "pitch_in"
scalar = "int32"
value = 48
[[kernel.args]]
name = "pitch_out"
scalar = "int32"
value = 32

[[kernel]]
name = "row_stats"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1300
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "sums"
buffer = "float32"
elements = 100
role = "out"
[[kernel.args]]
name = "firsts"
buffer = "float32"
elements = 100
role = "out"
[[kernel.args]]
name = "rows"
scalar = "int32"
value = 100
[[kernel.args]]
name = "cols"
scalar = "int32"
value = 13
"""


def test_a_stepped_pointer_becomes_an_offset_and_every_access_an_index(tmp_path):
    fn = moving_pointers(unit(tmp_path, TRANSPOSE).kernel("tile_transpose"))
    assert not [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Ref) and n.target.name in ("src", "dst")]
    decls = {d.name: d for d in nodes(fn, m.VarDecl)}
    assert {"src_off", "dst_off"} <= set(decls) and decls["src_off"].init.value == 0
    stores = [n for n in nodes(fn, m.Assign) if isinstance(n.target, m.Index)
              and isinstance(n.target.base, m.Ref) and n.target.base.name == "dst"]
    assert [s.target.index.lhs.name for s in stores] == ["dst_off"]


def test_moving_pointers_convert_and_check_equal_across_a_barrier(tmp_path):
    (tmp_path / "moving.cu").write_text(TRANSPOSE)
    (tmp_path / "moving.toml").write_text(SPEC)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "moving.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    for name in ("tile_transpose", "row_stats"):
        k = kernels[name]
        assert k["form"] != "unsupported", (name, k["reason"])
        assert k["check"]["status"] == "pass", (name, k["check"]["message"])
    text = (out / "moving.py").read_text()
    assert "src_off" in text and "p_off" in text and "q_off" in text


@pytest.mark.parametrize("body, name", [
    ("float* p = y + r; *p++ = x[r];", "p"),                  # stepped inside a value
    ("const float* p = x + r; if (p < x + n) y[r] = *p;", "p"),  # compared
    ("const float* p = x; p = y; y[r] = p[r];", "p"),          # re-pointed at another buffer
])
def test_a_pointer_it_cannot_follow_keeps_its_diagnostic(tmp_path, body, name):
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k(const float* x, float* y, int n) {\n"
                   f"    int r = blockIdx.x * blockDim.x + threadIdx.x;\n    {body}\n}}\n")
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] == "unsupported" and ("'p'" in k["reason"] or "'*'" in k["reason"]), k["reason"]


def test_an_atomic_through_a_view_updates_the_viewed_element(tmp_path):
    """``int* bin = hist + key; atomicAdd(bin, 1);``: the view's element is the atomic's target
    (its module used to name the dropped view and not build)."""
    (tmp_path / "hist.cu").write_text("""
#include <cuda_runtime.h>
__global__ void bins(const int* keys, int* hist, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int* bin = hist + (keys[i] & 15);
        atomicAdd(bin, 1);
    }
}
""")
    (tmp_path / "hist.toml").write_text("""
[[kernel]]
name = "bins"
grid = [4, 1, 1]
block = [128, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "keys"
buffer = "int32"
elements = 500
role = "in"
range = [0, 1000]
[[kernel.args]]
name = "hist"
buffer = "int32"
elements = 16
role = "inout"
range = [0, 3]
[[kernel.args]]
name = "n"
scalar = "int32"
value = 500
""")
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "hist.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] != "unsupported" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "T.atomic_add(hist[(keys[i] & 15) + 0], 1)" in (out / "hist.py").read_text()
