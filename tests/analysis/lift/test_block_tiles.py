"""Block tiles (analysis.lift.block_tiles): tiled transposes with reassigned indices and strip loops,
and the strips of a 2-D block, as maps over elements; the transposes it must refuse.
"""
from __future__ import annotations

import re

import pytest

from tests.analysis.lift.support import convert, factory, note


TILED_TRANSPOSE = """
    #define TILE 16
    #define ROWS 4
    __global__ void tt(const float* __restrict__ in, float* __restrict__ out, const int* perm,
                       int rows, int cols) {
        __shared__ float tile[TILE][TILE + 1];
        int x = blockIdx.x * TILE + threadIdx.x;
        int y = blockIdx.y * TILE + threadIdx.y;
        for (int j = 0; j < TILE; j += ROWS)
            if (x < cols && (y + j) < rows) tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        __syncthreads();
        x = blockIdx.y * TILE + threadIdx.x;
        y = blockIdx.x * TILE + threadIdx.y;
        for (int j = 0; j < TILE; j += ROWS)
            if (x < rows && (y + j) < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
    }
"""

TILED_TRANSPOSE_SPEC = """
    [[kernel]]
    name = "tt"
    grid = [3, 5, 1]
    block = [16, 4, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 2850
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 2850
    role = "out"
    [[kernel.args]]
    name = "perm"
    buffer = "int32"
    elements = 8
    role = "in"
    range = [0, 2]
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 75
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 38
"""


def test_tiled_transpose_with_reassigned_indices_becomes_a_staged_map_and_agrees_on_cpu(tmp_path):
    # a 16x4 block sweeps a 16x16 tile in 4 strips; after the barrier x and y are reassigned
    # (block y paired with thread x); 75x38 leaves partial tiles on both sides
    kernels, text = convert(tmp_path, TILED_TRANSPOSE, "--check", "cpu", spec=TILED_TRANSPOSE_SPEC)
    k = kernels["tt"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "tt")
    assert "assert block_x == 16" in body and "assert block_y == 4" in body
    assert body.count("alloc_shared") == 1 and "sync_threads" not in body and "T.serial" not in body
    assert body.count("T.Parallel") == 2 and not re.search(r"\b(tx|ty|threadIdx)\b", body), body
    assert "out[gx, gy] = vals[iy, ix]" in body  # out shaped (cols, rows)


@pytest.mark.parametrize("old, new, reason", [
    # every strip writes the same tile row: which input row it holds is not decided by the index
    ("tile[threadIdx.y + j][threadIdx.x] = in", "tile[threadIdx.y][threadIdx.x] = in",
     "which its index does not determine"),
    # the element at row threadIdx.y + j stores the input row of threadIdx.y alone
    ("= in[(size_t)(y + j) * cols + x]", "= in[(size_t)y * cols + x]", "which its index does not determine"),
    # the reassigned output column depends on loaded data
    ("x = blockIdx.y * TILE + threadIdx.x;", "x = perm[blockIdx.y] * TILE + threadIdx.x;", "threadIdx.x"),
    # reassigned in a branch: which value reaches the store is not decided by the text
    ("x = blockIdx.y * TILE + threadIdx.x;", "if (rows > 0) x = blockIdx.y * TILE + threadIdx.x;", "'x'"),
    # tile[tx][ty + j + 2] runs past the row of 17 for the last strip: element [tx + 1][0], written
    # by another block row, which the forwarded value (input row tx, column ty + j + 2) is not
    ("= tile[threadIdx.x][threadIdx.y + j];", "= tile[threadIdx.x][threadIdx.y + j + 2];",
     "is not proven to stay inside its rows of 17"),
    # the store strips cover half of the tile: the elements are not one per thread and strip
    ("for (int j = 0; j < TILE; j += ROWS)\n            if (x < rows", "for (int j = 0; j < ROWS * 2; j += ROWS)\n"
     "            if (x < rows", "not the tile of 16"),
])
def test_tiled_transposes_it_must_refuse(tmp_path, old, new, reason):
    assert old in TILED_TRANSPOSE
    kernels, _ = convert(tmp_path, TILED_TRANSPOSE.replace(old, new, 1 if old.startswith("for") else -1))
    k = kernels["tt"]
    assert k["form"] == "portable", k["form"]
    assert reason in note(k) and "block reduction" not in note(k), note(k)


STRIPS_SPEC = """
    [[kernel]]
    name = "strips"
    grid = [2, 3, 1]
    block = [32, 8, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "in"
    buffer = "float32"
    elements = 2850
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 2850
    role = "out"
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 75
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 38
"""


def test_strips_of_a_2d_block_become_a_map_and_agree_on_cpu(tmp_path):
    # no shared memory: a 32x8 block scales a 32x32 tile in 4 row strips
    kernels, text = convert(tmp_path, """
        __global__ void strips(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
            int x = blockIdx.x * 32 + threadIdx.x;
            int y = blockIdx.y * 32 + threadIdx.y;
            for (int j = 0; j < 32; j += 8)
                if (x < cols && y + j < rows) out[(y + j) * cols + x] = 2.0f * in[(y + j) * cols + x];
        }
    """, "--check", "cpu", spec=STRIPS_SPEC, name="strips")
    k = kernels["strips"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "strips")
    assert "assert block_x == 32" in body and "assert block_y == 8" in body and "T.serial" not in body
