"""Autotuning (runtime.tuning) without a GPU: the program TileLang's autotuner searches, every
configuration of a search space computing what the CUDA did, and the launcher taking the tuned
configuration."""
from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest

from migrate.cli import main
from migrate.runtime import tilelang_support as ts
from migrate.runtime.tilelang_side import load_module
from migrate.runtime.tuning import TuneError, _Launch, autotune, tune_configs, tunable_program
from tests.paths import REPO

pytest.importorskip("tilelang")


@pytest.fixture(scope="module")
def saxpy_module(tmp_path_factory):
    out = tmp_path_factory.mktemp("tune") / "out"
    assert main(["convert", str(REPO / "corpus" / "elementwise" / "saxpy.cu"), "-o", str(out), "-q"]) == 0
    return load_module(out / "saxpy.py")


def _launch(sig, n):
    return _Launch(sig, ts.dims((n + 255) // 256), ts.dims(256), 0, None, {})


def test_the_searched_program_takes_exactly_the_tuned_keywords_and_closes_over_nothing(saxpy_module):
    sig = saxpy_module.KERNELS["saxpy"]
    configs = tune_configs(sig.tune)
    program = tunable_program(_launch(sig, 5000), set().union(*configs))
    # TileLang's autotuner binds each config key to a parameter of this name and refuses closures
    # over anything but plain values
    params = inspect.signature(program).parameters
    assert set(params) - {"_launch"} == set(sig.tune)
    assert program.__closure__ is None
    func = program(**configs[0])
    assert func.attrs["global_symbol"] == "saxpy"


def test_every_configuration_of_a_tune_space_computes_what_the_cuda_did(saxpy_module):
    """The search space is only worth searching if each of its points is correct: run a spread of
    them on the CPU target against numpy, outputs poisoned before each run."""
    sig = saxpy_module.KERNELS["saxpy"]
    n, a = 5000, 1.75
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y0 = rng.uniform(-2, 2, n).astype(np.float32)
    want = (np.float32(a) * x + y0).astype(np.float32)
    configs = tune_configs(sig.tune, limit=4)
    assert len(configs) == 4 and len({str(c) for c in configs}) == 4
    for config in configs:
        y = y0.copy()
        kernel = ts.compile_kernel(sig, (n + 255) // 256, 256, 0, None, "c", config)
        kernel(*ts.arguments(sig, [n, a, x, y]))  # saxpy(int n, float a, const float* x, float* y)
        np.testing.assert_allclose(y, want, rtol=1e-6, err_msg=str(config))


def test_the_launcher_runs_the_tuned_configuration(saxpy_module):
    sig = saxpy_module.KERNELS["saxpy"]
    config = tune_configs(sig.tune, limit=4)[-1]
    key = ts.tuned_key(sig, 20, 256)
    try:
        ts.TUNED[key] = config
        tuned = ts.compile_kernel(sig, 20, 256, 0, None, "c")
        assert tuned is ts.compile_kernel(sig, 20, 256, 0, None, "c", config)
        assert tuned is not ts.compile_kernel(sig, 20, 256, 0, None, "c", {})
    finally:
        ts.TUNED.pop(key, None)


def test_autotune_says_what_it_needs(saxpy_module):
    torch = pytest.importorskip("torch")
    sig = saxpy_module.KERNELS["saxpy"]
    x = np.ones(64, np.float32)
    if not torch.cuda.is_available():
        with pytest.raises(TuneError, match="CUDA GPU"):
            autotune(sig, [64, 1.0, x, x.copy()], grid=1, block=64)
    untunable = ts.Signature(name="k", factory=sig.factory, params=sig.params)
    with pytest.raises(TuneError, match="no tune space"):
        autotune(untunable, [], grid=1, block=64)
