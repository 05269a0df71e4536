"""The GPU executor (runtime/cuda_gpu.py).

Building needs only nvcc (``nvcc -shared`` works without a GPU): the generated launcher and the
original source must compile. Running needs an NVIDIA GPU; those tests are marked ``gpu`` and
skipped elsewhere.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from migrate.runtime.api import check_original, run_original
from migrate.runtime.build import BuildError
from migrate.runtime.compare import compare_outputs
from migrate.runtime.cuda_gpu import compile_gpu, find_nvcc, gpu_available, gpu_flags, run_gpu
from migrate.runtime.inputs import make_inputs
from migrate.runtime.spec import load_spec
from tests.paths import REPO

ROOT = REPO
FIX = ROOT / "tests" / "fixtures" / "runtime"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

needs_nvcc = pytest.mark.skipif(find_nvcc() is None, reason="nvcc not installed")
needs_gpu = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU")

# A few corpus programs covering templates, __constant__ symbols, half and cooperative groups
CORPUS_SAMPLES = ["features/constant_fir", "features/template_row_mean", "precision/half_ops",
                  "features/coop_groups_reduce"]


def test_flags():
    f = gpu_flags("sm_90a")
    assert "-shared" in f and "-arch=sm_90a" in f and "-DC2T_GPU_BUILD=1" in f
    assert f[f.index("-Xcompiler") + 1] == "-fPIC" and "-Dmain=cuda2tile_host_main" in f
    assert "-lineinfo" in f  # compute-sanitizer names the original's lines


@needs_nvcc
@pytest.mark.parametrize("name", ["features", "bugs", "wmma"])
def test_fixture_builds_with_nvcc(name):
    kernels = load_spec(FIX / f"{name}.toml")
    lib = compile_gpu(FIX / f"{name}.cu", kernels, arch="sm_90a")
    assert Path(lib.path).is_file()
    assert set(lib.kernels.values()) == {f"c2t_launch_{i}" for i in range(len(lib.kernels))}
    if name == "features":
        assert set(lib.symbols) == {"c_coef", "d_offset"}
        assert "fill_iota<int>" in lib.kernels and lib.main_entry == "c2t_run_main"


@needs_nvcc
@pytest.mark.parametrize("name", CORPUS_SAMPLES)
def test_corpus_sample_builds_with_nvcc(name):
    toml = ROOT / "corpus" / f"{name}.toml"
    if not toml.is_file():
        pytest.skip(f"{name} is not in the corpus")
    kernels = load_spec(toml)
    lib = compile_gpu(toml.with_suffix(".cu"), kernels, arch="sm_90a")
    assert Path(lib.path).is_file()


@needs_nvcc
def test_a_source_macro_does_not_reach_the_launcher_header(tmp_path):
    """fft writes ``#define T float``; the launcher header, once included after the source, read
    ``template <class T>`` as ``template <class float>`` and the original did not build on the
    GPU (a compound-literal test's check errored on the H100). It is included before it now."""
    cu = tmp_path / "k.cu"
    cu.write_text("#define T float\n#define T2 float2\n"
                  "__global__ void scale(T2* y, T s, int n) {\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  if (i < n) { y[i].x *= s; y[i].y *= s; }\n}\n")
    lib = compile_gpu(cu, ["scale"], arch="sm_90a", cache_dir=tmp_path / "cache")
    assert Path(lib.path).is_file() and "scale" in lib.kernels


@needs_nvcc
def test_nvcc_build_error_is_reported(tmp_path):
    cu = tmp_path / "broken.cu"
    cu.write_text("__global__ void k(float* y) { y[0] = undefined_thing; }\n")
    with pytest.raises(BuildError, match="undefined_thing"):
        compile_gpu(cu, ["k"], arch="sm_90a")


def test_gpu_unavailable_is_a_status():
    if gpu_available():
        pytest.skip("a GPU is present")
    k = load_spec(FIX / "bugs.toml")[0]
    r = run_original(FIX / "bugs.cu", k, device="gpu")
    assert r.status == "unavailable"


# --------------------------------------------------------------------------- on a GPU

@pytest.mark.gpu
@needs_gpu
def test_gpu_runs_fixture_kernels():
    from tests.runtime.support import ref_warp_ops
    kernels = {k.id: k for k in load_spec(FIX / "features.toml")}
    lib = compile_gpu(FIX / "features.cu", list(kernels.values()))
    k = kernels["warp_ops"]
    inp = make_inputs(k, 1)
    res = run_gpu(lib, k, inp.args, inp.symbols)
    assert res.ok, str(res)
    assert np.array_equal(res.outputs["r"], ref_warp_ops().astype(np.int32))
    k = kernels["with_symbols"]
    inp = make_inputs(k, 1)
    res = run_gpu(lib, k, inp.args, inp.symbols)
    c = inp.symbols["c_coef"].astype(np.float64)
    x = inp.args["x"].astype(np.float64)
    y = c[0] + x * (c[1] + x * (c[2] + x * c[3])) + 5
    assert all(r.passed for r in compare_outputs(k, {"y": y}, res.outputs))


@pytest.mark.gpu
@needs_gpu
def test_gpu_wmma_matches_reference():
    from tests.runtime.support import WMMA, ref_wmma_half, ref_wmma_tf32
    for kid, ref in (("wmma_gemm_half", ref_wmma_half), ("wmma_gemm_tf32", ref_wmma_tf32)):
        c = check_original(FIX / "wmma.cu", WMMA[kid], ref, device="gpu", seed=4)
        assert c.passed, c.message


@pytest.mark.gpu
@needs_gpu
def test_gpu_reports_failures():
    kernels = {k.id: k for k in load_spec(FIX / "bugs.toml")}
    r = run_original(FIX / "bugs.cu", kernels["oob_write"], device="gpu", seed=1)
    assert r.status == "oob" and r.findings[0].buffer == "y"
    assert "past the end" in r.findings[0].message, r.findings[0].message
    # the red zone before each buffer: y[-1] is a write before its start, named as such
    r = run_original(FIX / "bugs.cu", kernels["oob_write_before"], device="gpu", seed=1)
    assert r.status == "oob" and r.findings[0].buffer == "y", r.message
    assert r.findings[0].index == -1 and "element -1 (before the start" in r.findings[0].message, r.findings[0].message
    r = run_original(FIX / "bugs.cu", kernels["infinite_loop"], device="gpu", seed=1, timeout=5)
    assert r.status == "timeout"
    r = run_original(FIX / "bugs.cu", kernels["too_many_args"], device="gpu", seed=1)
    assert r.status == "launch_error"


@pytest.mark.gpu
@needs_gpu
def test_gpu_corpus_matches_references():
    from concurrent.futures import ThreadPoolExecutor
    from tests.references import REFERENCES
    tomls = sorted((ROOT / "corpus").glob("**/*.toml"))
    with ThreadPoolExecutor(8) as ex:      # build every program first, in parallel
        list(ex.map(lambda t: compile_gpu(t.with_suffix(".cu"), load_spec(t)), tomls))
    failures = []
    for toml in tomls:
        for k in load_spec(toml):
            key = k.reference_key(ROOT / "corpus")
            if key not in REFERENCES:
                continue
            c = check_original(toml.with_suffix(".cu"), k, REFERENCES[key], device="gpu")
            if not c.passed:
                failures.append(f"{key}: {c.message}")
    assert not failures, "\n".join(failures)
