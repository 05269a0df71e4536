"""A tile-form map whose contiguous dimension is shorter than its default tile (clenergy's
``cenergy``: blocks of 8 x 8 threads, each thread UNROLLX columns 8 apart, 12 blocks across, so
the map's x extent is 96): the factory's tile is cut to the extent in whole warps (2 x 96, 192
threads), not left at the power of two that covers it (2 x 128, 256 threads, where no tile is ever
full and the columns past 96 are warps 3 and 7 of every block, idle, both on SM sub-partition 3:
cenergy ran 1.19x slower than the CUDA on an H100). Checked: fit_tile, the factory's tile and
threads, a CPU run against numpy, and the sm_90a CUDA TileLang writes (no GPU here)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from migrate.runtime.tilelang_support import fit_tile
from tests.analysis.support import module_of, program_converted
from tests.lowering import lower_sm90

PROGRAM = """#include <cuda_runtime.h>

#define UNROLLX 4
#define BLOCKSIZEX 8
#define BLOCKSIZEY 8

// each thread sums UNROLLX points BLOCKSIZEX apart of one row over all the atoms
__global__ void potential(const int numatoms, const float spacing, float *grid, const float4 *atoms)
{
  unsigned int xindex  = blockIdx.x * blockDim.x * UNROLLX + threadIdx.x;
  unsigned int yindex  = blockIdx.y * blockDim.y + threadIdx.y;
  unsigned int outaddr = gridDim.x * blockDim.x * UNROLLX * yindex + xindex;
  float coory = spacing * yindex;
  float coorx = spacing * xindex;
  float e1 = 0.0f, e2 = 0.0f, e3 = 0.0f, e4 = 0.0f;
  float step = spacing * BLOCKSIZEX;
  for (int a = 0; a < numatoms; a++) {
    float dy = coory - atoms[a].y;
    float dyz2 = (dy * dy) + atoms[a].z;
    float dx1 = coorx - atoms[a].x;
    float dx2 = dx1 + step;
    float dx3 = dx2 + step;
    float dx4 = dx3 + step;
    e1 += atoms[a].w * rsqrtf(dx1 * dx1 + dyz2);
    e2 += atoms[a].w * rsqrtf(dx2 * dx2 + dyz2);
    e3 += atoms[a].w * rsqrtf(dx3 * dx3 + dyz2);
    e4 += atoms[a].w * rsqrtf(dx4 * dx4 + dyz2);
  }
  grid[outaddr                ] += e1;
  grid[outaddr + 1 * BLOCKSIZEX] += e2;
  grid[outaddr + 2 * BLOCKSIZEX] += e3;
  grid[outaddr + 3 * BLOCKSIZEX] += e4;
}

int main() {
  float *grid; float4 *atoms;
  cudaMalloc(&grid, 384 * 128 * sizeof(float));
  cudaMalloc(&atoms, 16 * sizeof(float4));
  dim3 block(BLOCKSIZEX, BLOCKSIZEY);
  dim3 blocks(384 / (BLOCKSIZEX * UNROLLX), 128 / BLOCKSIZEY);
  potential<<<blocks, block>>>(16, 0.1f, grid, atoms);
  cudaDeviceSynchronize();
  return 0;
}
"""

GRID, BLOCK = (12, 16, 1), (8, 8, 1)  # the map: 128 rows of 96 threads
WIDTH, ROWS, ATOMS, SPACING = 384, 128, 16, 0.1


def test_fit_tile_cuts_the_fast_dimension_to_its_extent_in_whole_warps():
    assert fit_tile((2, 128), (768, 96), 256) == (2, 96)  # clenergy's own size
    assert fit_tile((8, 128), (768, 96), 256) == (2, 96)  # halved first, then cut
    # several elements a thread: cut where they still split evenly over the threads
    assert fit_tile((8, 128), (1 << 20, 96), 256) == (8, 96)
    assert fit_tile((4, 128), (1 << 20, 96), 256) == (4, 128)  # 384 elements over 256 threads
    assert fit_tile((256,), (96,), 256) == (96,)
    assert fit_tile((256,), (100,), 256) == (128,)  # not shorter in whole warps
    assert fit_tile((128, 8), (96, 1000), 128, fast=0) == (96, 1)  # y-fastest: its first dimension
    # a tile asked for (fill=False) is only fitted
    assert fit_tile((2, 128), (768, 96)) == (2, 128)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("fast_extent"), PROGRAM, "pot.cu")


@pytest.fixture(scope="module")
def mod(converted):
    return module_of(converted / "pot.py")


def test_the_factory_builds_full_tiles_of_whole_warps(mod):
    assert mod.KERNELS["potential"].form == "tile"
    script = mod.make_potential(GRID, BLOCK).script()
    # 64 tiles of 2 rows by 96 columns, 192 threads each: all of them full
    assert 'T.thread_binding(1, thread="blockIdx.x")' in script and 'T.thread_binding(64, thread="blockIdx.y")' in script
    assert '"tl.launch_threads": [192, 1, 1]' in script, script[:3000]
    assert "if by * 2 + 2 <= 128 and bx * 96 + 96 <= 96:" in script, script[:3000]
    # asked for, the tile is only fitted (coverage runs): 2 x 128, its last-tile branch reachable
    asked = mod.make_potential(GRID, BLOCK, tile=(2, 128), fill=False).script()
    assert '"tl.launch_threads": [256, 1, 1]' in asked and "bx * 128 + 128 <= 96" in asked, asked[:3000]


def test_the_cpu_run_matches_numpy(mod):
    rng = np.random.default_rng(5)
    atoms = np.stack([rng.uniform(0, WIDTH * SPACING, ATOMS), rng.uniform(0, ROWS * SPACING, ATOMS),
                      rng.uniform(0.5, 2.0, ATOMS), rng.uniform(-1, 1, ATOMS)], 1).astype(np.float32)
    grid = rng.uniform(-1, 1, WIDTH * ROWS).astype(np.float32)
    want = grid.astype(np.float64).reshape(ROWS, WIDTH).copy()
    ys = np.arange(ROWS, dtype=np.float32)[:, None] * np.float32(SPACING)
    xs = np.arange(WIDTH, dtype=np.float32)[None, :] * np.float32(SPACING)
    for x, y, z, w in atoms.astype(np.float64):
        want += w / np.sqrt((xs - x) ** 2 + ((ys - y) ** 2 + z))
    mod.potential(ATOMS, SPACING, grid, atoms.reshape(-1).copy(), grid=GRID, block=BLOCK, target="c")
    np.testing.assert_allclose(grid.reshape(ROWS, WIDTH), want, rtol=2e-4, atol=2e-4)


def test_the_cuda_has_no_idle_warps_and_no_column_guard(mod):
    source = lower_sm90(mod.KERNELS["potential"], GRID, BLOCK)
    assert "__launch_bounds__(192, 1)" in source, source[:3000]
    # before: `if ((((int)threadIdx.x) & 127) < 96)` around each thread's work, in 256-thread blocks
    assert not re.search(r"\) < 96\)", source), source[:3000]
