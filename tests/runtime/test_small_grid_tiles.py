"""A tile-form map too small to fill the GPU even at one element a thread (rate tables written
the way s3d writes its reaction rates: a row of the output per rate, ``RF[(q - 1) * N + i]``,
13 824 grid points in blocks of 128 threads): the factory's default tile is halved until its
blocks, doubled, would no longer find an SM each, down to four warps: 108 blocks of 128 threads
as the CUDA launched it, not 54 of 256 (78 of an H100's 132 SMs idle; s3d's ratt_kernel ran 1.14x
the CUDA's time). Larger domains keep their tiles. Checked: fit_tile, the factory's tile and
threads, and a CPU run against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from migrate.runtime.tilelang_support import fit_tile
from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>

#define POINTS (blockDim.x * gridDim.x)
#define RATE(q) rates[((q) - 1) * POINTS + point]

__global__ void rate_table(const float* __restrict__ temperature, float* __restrict__ rates, float scale)
{
  const int point = blockIdx.x * blockDim.x + threadIdx.x;
  const float t = temperature[point] * scale;
  const float inv = 1.0f / t;
  const float logt = logf(t);
  RATE(1) = expf(3.2f - 72.5f * inv);
  RATE(2) = expf(1.08f + 2.67f * logt - 31.6f * inv);
  RATE(3) = 1.0e3f * inv * inv;
  RATE(4) = expf(0.4f - 0.6f * logt);
}

int main() {
  const int n = 24 * 24 * 24;
  float *t, *rates;
  cudaMalloc(&t, n * sizeof(float));
  cudaMalloc(&rates, 4 * n * sizeof(float));
  rate_table<<<n / 128, 128>>>(t, rates, 1.5f);
  cudaDeviceSynchronize();
  return 0;
}
"""

POINTS = 24 * 24 * 24
GRID, BLOCK = (POINTS // 128, 1, 1), (128, 1, 1)


def test_fit_tile_spreads_a_small_grid_over_the_sms():
    assert fit_tile((1024,), (13824,), 256) == (128,)  # 108 blocks, not 54 of 256
    assert fit_tile((2, 128), (24, 576), 256) == (1, 128)  # slowest dimension first
    assert fit_tile((1024,), (900,), 256) == (128,)  # four warps at least (8 blocks, not 32 of 32)
    assert fit_tile((256,), (96,), 256) == (96,)  # one block: still cut to the extent in warps
    # a grid whose doubled blocks would share SMs keeps its tile
    assert fit_tile((1024,), (1 << 15,), 256) == (256,)  # 128 blocks of 256
    assert fit_tile((1024,), (100352,), 256) == (256,)
    assert fit_tile((1024,), (13824,)) == (1024,)  # a tile asked for is only fitted


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    pytest.importorskip("tilelang")
    return module_of(program_converted(tmp_path_factory.mktemp("small_grid"), PROGRAM, "rates.cu") / "rates.py")


def test_the_factory_launches_blocks_for_most_sms(mod):
    assert mod.KERNELS["rate_table"].form == "tile"
    script = mod.make_rate_table(GRID, BLOCK).script()
    assert 'T.thread_binding(108, thread="blockIdx.x")' in script, script[:3000]
    assert '"tl.launch_threads": [128, 1, 1]' in script, script[:3000]


def test_the_cpu_run_matches_numpy(mod):
    rng = np.random.default_rng(3)
    temperature = rng.uniform(300.0, 2500.0, POINTS).astype(np.float32)
    rates = np.zeros(4 * POINTS, dtype=np.float32)
    mod.rate_table(temperature, rates, 1.5, grid=GRID, block=BLOCK, target="c")
    t = temperature.astype(np.float64) * np.float64(np.float32(1.5))
    inv, logt = 1.0 / t, np.log(t)
    want = np.concatenate([np.exp(3.2 - 72.5 * inv), np.exp(1.08 + 2.67 * logt - 31.6 * inv),
                           1.0e3 * inv * inv, np.exp(0.4 - 0.6 * logt)])
    np.testing.assert_allclose(rates, want, rtol=1e-5)  # float32 exp/log against float64
