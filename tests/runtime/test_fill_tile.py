"""A tile-form map's default tile fills the GPU: where its grid of tiles would run fewer threads than
the GPU holds, the tile shrinks down to one element per thread, as the CUDA launched it; a tile
asked for (coverage runs, ``fill=False``) is only fitted to the domain."""
from __future__ import annotations

import importlib.util
import re
import textwrap

import numpy as np
import pytest

from migrate.cli import main
from migrate.runtime.coverage import plan
from migrate.runtime.spec import load_spec
from migrate.runtime.tilelang_support import FILL_GPU, fit_tile

tilelang = pytest.importorskip("tilelang")

SOURCE = textwrap.dedent("""\
    #include <cuda_runtime.h>
    __global__ void rate(const float* t, const float* eg, float* rb, float k, int stride)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        float temp = t[i] * k;
        rb[i] = eg[i] * eg[stride + i] / temp;
        rb[stride + i] = eg[2 * stride + i] / (eg[i] * temp);
    }
    __global__ void scale(const float* x, float* y, int n)
    {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) y[i] = 3.0f * x[i];
    }
    int main() { return 0; }
    """)

FULL = FILL_GPU["sms"] * FILL_GPU["threads_per_sm"]


def test_fill_shrinks_a_small_domain_to_one_element_per_thread():
    # 131072 elements: 128 tiles of 1024 would run 32768 threads
    assert fit_tile((1024,), (131072,), 256) == (256,)
    # a domain large enough keeps four elements per thread
    assert fit_tile((1024,), (16 * FULL,), 256) == (1024,)
    # in between: halved until the grid fills the GPU
    tile = fit_tile((1024,), (1 << 20,), 256)
    assert tile == (512,) and (1 << 20) // 512 * 256 >= FULL
    # 2-D: the slowest dimension first, never below one element per thread
    assert fit_tile((8, 128), (512, 512), 256) == (2, 128)
    assert fit_tile((8, 128), (4096, 4096), 256) == (8, 128)
    # a map that runs y-fastest names its contiguous dimension (the first): halved last, so a
    # warp's stores stay one run of 128 (nms's 1000 x 1000 bitmap)
    assert fit_tile((128, 8), (1000, 1000), 128, fast=0) == (128, 2)
    assert fit_tile((128, 8), (1000, 1000), 128) == (32, 8)
    # without fill, or with an unknown extent, only fitted
    assert fit_tile((1024,), (131072,)) == (1024,)
    assert fit_tile((1024,), (None,), 256) == (1024,)
    assert fit_tile((1024,), (300,)) == (512,)


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fill")
    (tmp / "rate.cu").write_text(SOURCE)
    out = tmp / "out"
    assert main(["convert", str(tmp / "rate.cu"), "-o", str(out), "-q"]) == 0
    path = out / "rate.py"
    spec = importlib.util.spec_from_file_location("rate_fill", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return path, mod


def _tile(func) -> int:
    """The tile size a factory's kernel was built with (its full-tile test ``bx * TILE + TILE <= N``)."""
    m = re.search(r"bx \* (\d+) \+ \1 <=", func.script())
    assert m, func.script()[:2000]
    return int(m.group(1))


def test_factory_fills_small_grids_and_keeps_asked_tiles(module):
    path, mod = module
    assert mod.KERNELS["rate"].form == "tile" and mod.KERNELS["scale"].form == "tile"
    text = path.read_text()
    assert "fill=True" in text and "fit_tile(tile, (extent_x,), threads if fill else 0)" in text
    # the CUDA's 1024 blocks of 128 threads: 512 tiles of 256 elements, not 128 of 1024
    assert _tile(mod.make_rate((1024, 1, 1), (128, 1, 1))) == 256
    assert _tile(mod.make_rate((1024, 1, 1), (128, 1, 1), fill=False)) == 1024
    assert _tile(mod.make_rate((1024, 1, 1), (128, 1, 1), tile=(512,), fill=False)) == 512
    # a grid that fills the GPU keeps the default tile
    assert _tile(mod.make_rate((32768, 1, 1), (256, 1, 1))) == 1024
    # `if (i < n)`: the domain is the launch's, n one more bound of the full tile
    script = mod.make_scale((512, 1, 1), (128, 1, 1)).script()
    assert re.search(r"bx \* 256 \+ 256 <= 65536", script), script[:1500]


def test_small_domain_runs_on_cpu_against_numpy(module):
    _path, mod = module
    n = 4096
    rng = np.random.default_rng(7)
    t = rng.uniform(0.5, 2.0, n).astype(np.float32)
    eg = rng.uniform(0.5, 2.0, 3 * n).astype(np.float32)
    rb = np.full(2 * n, np.nan, dtype=np.float32)
    # 32 blocks of 128: the default tile of 1024 shrinks to 256 elements (one per thread), 16 tiles,
    # then to the CUDA's 128 (32 tiles, each still an SM of its own: test_small_grid_tiles.py)
    assert _tile(mod.make_rate((n // 128, 1, 1), (128, 1, 1), target="c")) == 128
    mod.rate(t, eg, rb, 1.5, n, grid=n // 128, block=128, target="c")
    temp = t * np.float32(1.5)
    want = np.concatenate([eg[:n] * eg[n:2 * n] / temp, eg[2 * n:] / (eg[:n] * temp)])
    np.testing.assert_allclose(rb, want, rtol=1e-6, atol=0)


def test_coverage_plan_follows_the_filled_default_tile(module, tmp_path):
    path, _mod = module
    spec_text = textwrap.dedent("""\
        [[kernel]]
        name = "rate"
        grid = [96, 1, 1]
        block = [128, 1, 1]
        tolerance = "fp32"
        [[kernel.args]]
        name = "t"
        buffer = "float32"
        elements = 12288
        role = "in"
        range = [0.5, 2.0]
        [[kernel.args]]
        name = "eg"
        buffer = "float32"
        elements = 36864
        role = "in"
        range = [0.5, 2.0]
        [[kernel.args]]
        name = "rb"
        buffer = "float32"
        elements = 24576
        role = "out"
        [[kernel.args]]
        name = "k"
        scalar = "float32"
        value = 1.5
        [[kernel.args]]
        name = "stride"
        scalar = "int32"
        value = 12288
        """)
    (tmp_path / "rate.toml").write_text(spec_text)
    (kernel,) = load_spec(tmp_path / "rate.toml")
    got = plan(path, kernel)
    # 12288 elements: the default run's tile is the filled one (256, then halved to 128 while 96
    # tiles still find an SM each), not 1024
    assert got.runs[0][0] is None and tuple(got.runs[0][1]) == (128,)
    for opts, _tile, _cases in got.runs[1:]:
        assert opts["fill"] is False
