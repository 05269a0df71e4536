"""The benchmark sizes in ``bench/specs`` fit the corpus kernels they name, without a GPU.

``migrate bench --specs bench/specs`` takes the sizes of ``corpus/DIR/FILE.cu`` from
``bench/specs/DIR/FILE.toml`` (:func:`migrate.runtime.bench.bench_folder`), where they are far
too large to run on the CPU executor. Three kinds of check:

- **Same kernel.** Each bench kernel is a kernel of the corpus spec beside the source, with the
  same id, name, template, block, tolerance class, arguments (names, order, dtypes, buffer roles)
  and ``__constant__`` symbols; every migrated corpus kernel has a bench size.
- **Within the device.** Buffers fit a 4 GiB budget per kernel and their element counts fit the
  ``int`` indices the kernels compute.
- **Buffers cover the grid's accesses.** Each bench spec is shrunk along its outer dimensions
  (:data:`SHRINK`: rows, batch, signal length; per-row lengths, block shapes and fixed grids are
  kept) and the original CUDA runs on the CPU executor, whose buffers end at a guard page, then is
  compared with the kernel's independent numpy reference (``tests/references``). Shrinking
  divides the named scalar exactly, the grid dimension it drives by ceiling division
  (``ceil(ceil(n / b) / f) == ceil(n / (b f))``, so a launch formula is preserved) and the
  buffers that grow with it by floor division, which keeps any shortfall of the full-size spec
  (``rows * cols - 1`` elements stays one short). An out-of-bounds access, an output element the
  grid does not reach (it keeps its NaN poison) or a result that disagrees with the reference
  fails.
"""
from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from migrate.runtime.build import BuildError, find_cxx
from migrate.runtime.compare import compare_outputs
from migrate.runtime.cuda_cpu import compile_many, run_cpu
from migrate.runtime.inputs import DEFAULT_SEED, make_inputs
from migrate.runtime.spec import FLOAT_DTYPES, KernelSpec, load_spec

from tests.paths import CORPUS, REPO
from tests.references import REFERENCES

BENCH = REPO / "bench" / "specs"

#: corpus kernels that `migrate convert` does not migrate, so `migrate bench` never times them
NOT_MIGRATED = {"reduction/minmax_atomic.cu:reduceMinFloat": "an atomicCAS loop (M3001)"}

MEMORY_BUDGET = 4 * 2**30
INT_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Shrink:
    """Divide scalar ``scalar`` by ``factor`` (None: a dimension no scalar states, such as the
    batch of ``blockIdx.z``), grid dimension ``axis`` by ceiling division (None: the launch keeps
    a fixed grid and strides) and the ``buffers`` that grow with it by floor division."""

    scalar: str | None
    factor: int
    axis: int | None
    buffers: str


_s = Shrink


# 64 M-element maps shrink to 4096 elements, 8192-row matrices to 4 or 8 rows, GEMMs to 16-64
# rows and columns with their full K.
SHRINK: dict[str, tuple[Shrink, ...]] = {
    "attention/attention_row.cu:attention_cross": (_s("Lq", 16384, 0, "Q O"),),
    "conv/conv2d_nchw.cu:conv2d_nchw": (_s("N", 32, 0, "input output"), _s("K", 4, 0, "weight bias output")),
    "conv/depthwise_conv_nhwc.cu:depthwise_conv2d_nhwc_relu6": (_s("N", 64, 0, "in out"),),
    "elementwise/activations.cu:geluForward": (_s("n", 16384, 0, "in out"),),
    "elementwise/activations.cu:siluForward": (_s("n", 16384, 0, "in out"),),
    "elementwise/bit_ops.cu:hashKeys": (_s("n", 16384, 0, "keys hashes"),),
    "elementwise/bit_ops.cu:bitFeatures": (_s("n", 16384, 0, "words popcounts packed"),),
    "elementwise/clamp_where.cu:clampRange": (_s("n", 16384, 0, "in out"),),
    "elementwise/clamp_where.cu:selectWhere": (_s("n", 16384, 0, "mask a b out"),),
    "elementwise/convert.cu:quantizeSymmetric": (_s("n", 16384, 0, "x q"),),
    "elementwise/convert.cu:dequantizeAffine": (_s("n", 16384, 0, "q y"),),
    "elementwise/convert.cu:toFixedPointFloor": (_s("n", 16384, 0, "x fx"),),
    "elementwise/saxpy.cu:saxpy": (_s("n", 16384, None, "x y"),),
    "elementwise/vector_add.cu:vectorAdd": (_s("n", 16384, 0, "a b c"),),
    "elementwise/vector_add_vec4.cu:vectorAdd4": (_s("n", 16384, 0, "a b c"),),
    "features/constant_fir.cu:fir_filter_1d": (_s("n", 16384, 0, "x y"),),
    "features/constant_fir.cu:poly_eval_const": (_s("n", 16384, 0, "x y"),),
    "features/coop_groups_reduce.cu:cg_row_dot": (_s("rows", 2048, 0, "a b out"),),
    "features/coop_groups_reduce.cu:cg_tile_row_norm": (_s("rows", 4096, 0, "x out"),),
    "features/device_functions.cu:poly_soft_clip": (_s("n", 16384, 0, "x y"),),
    "features/device_functions.cu:hypot_newton": (_s("n", 16384, 0, "a b r"),),
    "features/dynamic_smem.cu:moving_average_1d": (_s("n", 16384, 0, "in out"),),
    "features/dynamic_smem.cu:row_scale_max_abs": (_s("rows", 2048, 0, "x y"),),
    "features/ldg_embedding.cu:embedding_gather_ldg": (_s("num_tokens", 2048, 1, "ids out"),
                                                       _s("vocab", 64, None, "table")),
    "features/macros_bias_act.cu:bias_act_2d": (_s("rows", 1024, 1, "in out"),),
    "features/template_row_mean.cu:row_mean_f32_b128": (_s("rows", 4096, 0, "in out"),),
    "features/template_row_mean.cu:row_mean_f64_b256": (_s("rows", 2048, 0, "in out"),),
    "features/vector_types.cu:axpy_float4": (_s("n4", 16384, 0, "x y"),),
    "features/vector_types.cu:complex_mul_float2": (_s("n", 16384, 0, "a b c"),),
    "features/warp_rounds.cu:warp_rounds": (_s("n", 16384, 0, "x y"),),
    "gemv/gemv_thread_row.cu:gemv_row_per_thread": (_s("rows", 4096, 0, "A y"),),
    "gemv/gemv_thread_row.cu:gemv_t_col_per_thread": (_s("rows", 512, None, "A w"),),
    "gemv/gemv_warp_row.cu:gemv_warp_per_row": (_s("rows", 2048, 0, "A bias y"),),
    "histogram/histogram.cu:histogram256Shared": (_s("n", 16384, None, "data"),),
    "histogram/histogram.cu:histogramFloatRange": (_s("n", 16384, None, "x"),),
    "map2d/bias_relu.cu:addBiasRelu": (_s("rows", 1024, 1, "act"),),
    "map2d/matrix_axpby.cu:matrixAxpby": (_s("rows", 1024, 1, "A B C"),),
    "map2d/outer_gather.cu:outerProduct": (_s("m", 1024, 1, "x out"),),
    "map2d/outer_gather.cu:gatherRows": (_s("numIdx", 4096, 1, "rowIdx out"), _s("dim", 32, 0, "table out")),
    "matmul/bmm_nt.cu:bmm_nt": (_s(None, 8, 2, "A B C"), _s("M", 64, 1, "A C"), _s("N", 64, 0, "B C")),
    "matmul/matmul_naive.cu:matmul_naive": (_s("M", 256, 1, "A C"), _s("N", 256, 0, "B C")),
    "matmul/matmul_regblock.cu:matmul_regblock_4x4": (_s("M", 64, 1, "A C"), _s("N", 64, 0, "B C")),
    "matmul/matmul_tiled.cu:matmul_tiled": (_s("M", 256, 1, "A C"), _s("N", 256, 0, "B C")),
    "norm/layernorm.cu:layernorm_forward": (_s("rows", 2048, 0, "x y mean_out rstd_out"),),
    "norm/rmsnorm.cu:rmsnorm_forward": (_s("rows", 2048, 0, "x y"),),
    "norm/rmsnorm.cu:fused_add_rmsnorm": (_s("rows", 2048, 0, "x residual y"),),
    "norm/softmax_rows.cu:softmax_rows": (_s("rows", 2048, 0, "input output"),),
    "norm/softmax_rows.cu:log_softmax_rows": (_s("rows", 2048, 0, "input output"),),
    "norm/softmax_warp.cu:softmax_online_warp": (_s("rows", 2048, 0, "x y"),),
    "precision/bf16_ops.cu:bf16_swiglu": (_s("n", 1024, None, "gate up out"),),
    "precision/bf16_ops.cu:quantize_f32_to_bf16": (_s("n", 16384, 0, "x out"),),
    "precision/half2_vectorized.cu:half2_fma_affine": (_s("n", 16384, 0, "x scale shift y"),),
    "precision/half2_vectorized.cu:half2_dot_partial": (_s("n", 512, None, "a b"),),
    "precision/half_ops.cu:half_axpby": (_s("n", 16384, 0, "x y"),),
    "precision/half_ops.cu:half_add_scale": (_s("n", 16384, 0, "a b out"),),
    "precision/half_ops.cu:half_bias_gelu_rows": (_s("rows", 1024, 1, "x y"),),
    "precision/hgemm_f32acc.cu:hgemm_f32acc": (_s("M", 256, 1, "A C"), _s("N", 256, 0, "B C")),
    "reduction/block_sum.cu:blockReduceSum": (_s("n", 16384, 0, "in partial"),),
    "reduction/dot_product.cu:dotPartial": (_s("n", 16384, None, "x y"),),
    "reduction/dot_product.cu:sumPartials": (_s("count", 256, None, "partial"),),
    "reduction/minmax_atomic.cu:reduceMaxInt": (_s("n", 16384, None, "in"),),
    "reduction/minmax_atomic.cu:argmaxPacked": (_s("n", 4096, None, "in"),),
    "reduction/warp_reduce_sum.cu:reduceSumAtomic": (_s("n", 16384, None, "in"),),
    "scan/block_scan.cu:blockScanInclusiveHS": (_s("n", 16384, 0, "in out blockSums"),),
    "scan/block_scan.cu:blockScanExclusiveBlelloch": (_s("n", 16384, 0, "in out blockSums"),),
    "scan/block_scan.cu:addBlockOffsets": (_s("n", 16384, 0, "data blockOffsets"),),
    "stencil/jacobi2d.cu:jacobiStep": (_s("ny", 1024, 1, "u uNew f"),),
    "stencil/stencil1d.cu:stencil1d5pt": (_s("n", 16384, 0, "in out"),),
    "stencil/stencil3d.cu:heat3dStepZLoop": (_s("nz", 64, None, "in out"),),
    "stencil/stencil3d.cu:stencil7ptGrid3d": (_s("nz", 64, 2, "in out"),),
    "transpose/transpose.cu:transposeNaive": (_s("rows", 1024, 1, "in out"),),
    "transpose/transpose.cu:transposeTiled": (_s("rows", 1024, 1, "in out"),),
}

#: references written for the corpus spec's grid, applied to chunks of that many elements: the
#: blocks of these kernels are independent and the chunk is a whole number of them
REFERENCE_CHUNKS = {"features/warp_rounds.cu:warp_rounds": 4 * 96}  # ref_warp_rounds fixes 4 blocks

#: at most this many scalar elements in the buffers of a shrunk spec (the CPU run stays quick)
SHRUNK_ELEMENTS_LIMIT = 8 * 2**20


def _source(spec_path: Path) -> str:
    return spec_path.relative_to(BENCH).with_suffix(".cu").as_posix()


def _cases() -> list[tuple[Path, KernelSpec]]:
    return [(p, k) for p in sorted(BENCH.rglob("*.toml")) for k in load_spec(p)]


CASES = _cases()
IDS = [f"{_source(p)}:{k.id}" for p, k in CASES]


def _corpus_kernel(spec_path: Path, kernel: KernelSpec) -> KernelSpec:
    corpus = [k for k in load_spec((CORPUS / _source(spec_path)).with_suffix(".toml")) if k.id == kernel.id]
    assert corpus, f"{_source(spec_path)}: no corpus kernel with id {kernel.id!r}"
    return corpus[0]


def shrink(kernel: KernelSpec, steps: tuple[Shrink, ...]) -> KernelSpec:
    """``kernel`` with its outer dimensions divided as ``steps`` say (see :class:`Shrink`)."""
    grid = list(kernel.grid)
    scalars = {a.name: a.value for a in kernel.args if a.is_scalar}
    elements = {a.name: a.elements for a in kernel.args if a.is_buffer}
    for step in steps:
        if step.scalar is not None:
            value = scalars[step.scalar]
            assert value % step.factor == 0, f"{kernel.id}: {step.scalar} = {value} is not a multiple of {step.factor}"
            scalars[step.scalar] = value // step.factor
        if step.axis is not None:
            grid[step.axis] = -(-grid[step.axis] // step.factor)
        for name in step.buffers.split():
            elements[name] //= step.factor
            assert elements[name] > 0, f"{kernel.id}: buffer {name} shrinks to nothing"
    args = tuple(dataclasses.replace(a, elements=elements[a.name]) if a.is_buffer
                 else dataclasses.replace(a, value=scalars[a.name]) for a in kernel.args)
    return dataclasses.replace(kernel, grid=tuple(grid), args=args)


def reference(key: str, args: dict, symbols: dict) -> dict:
    """The expected outputs from ``tests/references`` (chunk by chunk for REFERENCE_CHUNKS)."""
    chunk = REFERENCE_CHUNKS.get(key)
    if chunk is None:
        return REFERENCES[key](args, symbols)
    n, parts = args["n"], {}
    for start in range(0, n, chunk):
        sub = {k: v[start:start + chunk] if isinstance(v, np.ndarray) else v for k, v in args.items()}
        sub["n"] = min(chunk, n - start)
        for name, values in REFERENCES[key](sub, symbols).items():
            parts.setdefault(name, []).append(values)
    return {name: np.concatenate(values) for name, values in parts.items()}


# ------------------------------------------------------------------------ same kernel

@pytest.mark.parametrize("spec_path,kernel", CASES, ids=IDS)
def test_bench_kernel_is_the_corpus_kernel(spec_path, kernel):
    corpus = _corpus_kernel(spec_path, kernel)
    assert (kernel.name, kernel.template) == (corpus.name, corpus.template)
    # every corpus launch uses a constant block shape, so the realistic launch keeps it
    assert kernel.block == corpus.block
    assert kernel.tolerance == corpus.tolerance
    assert [(a.name, a.kind, a.dtype, a.role if a.is_buffer else None) for a in kernel.args] == \
        [(a.name, a.kind, a.dtype, a.role if a.is_buffer else None) for a in corpus.args]
    assert [(s.name, s.dtype, s.elements) for s in kernel.symbols] == \
        [(s.name, s.dtype, s.elements) for s in corpus.symbols]


def test_every_migrated_corpus_kernel_has_bench_sizes():
    benched = {(_source(p), k.name) for p, k in CASES}
    missing = []
    for toml in sorted(CORPUS.rglob("*.toml")):
        source = toml.relative_to(CORPUS).with_suffix(".cu").as_posix()
        for k in load_spec(toml):
            if f"{source}:{k.name}" not in NOT_MIGRATED and (source, k.name) not in benched:
                missing.append(f"{source}:{k.name}")
    assert not missing, f"corpus kernels without bench sizes: {sorted(set(missing))}"
    assert not {f"{s}:{n}" for s, n in benched} & set(NOT_MIGRATED)


def test_the_kernels_left_out_are_not_migrated(tmp_path):
    """NOT_MIGRATED holds exactly what `migrate convert` reports unsupported among their files."""
    sources = sorted({key.split(":")[0] for key in NOT_MIGRATED})
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "migrate", "convert", *(str(CORPUS / s) for s in sources),
                           "-o", str(out), "-q"], cwd=REPO, capture_output=True, text=True, timeout=300)
    report = json.loads((out / "report.json").read_text())
    unsupported = {f"{Path(k['file']).name}:{k['kernel']}" for k in report["kernels"] if k["form"] in ("hybrid", "unsupported")}
    assert unsupported == {f"{Path(key.split(':')[0]).name}:{key.split(':')[1]}" for key in NOT_MIGRATED}, proc.stderr


# ------------------------------------------------------------------------ within the device

@pytest.mark.parametrize("spec_path,kernel", CASES, ids=IDS)
def test_bench_kernel_fits_the_device_and_int_indices(spec_path, kernel):
    assert sum(a.nbytes for a in kernel.buffers) <= MEMORY_BUDGET
    for a in kernel.buffers:
        assert a.elements <= INT_MAX, f"{a.name}: {a.elements} elements overflow an int index"
    for a in kernel.args:
        if a.is_scalar and a.dtype == "int32":
            assert 0 <= a.value <= INT_MAX


# ------------------------------------------------------------------------ buffers cover the grid

def test_shrink_table_names_exactly_the_bench_kernels():
    assert sorted(SHRINK) == sorted(IDS)
    for key, steps in SHRINK.items():
        spec_path, kernel = CASES[IDS.index(key)]
        names = {a.name for a in kernel.args}
        for step in steps:
            assert step.factor > 1
            assert step.scalar is None or step.scalar in names, (key, step.scalar)
            assert set(step.buffers.split()) <= names, (key, step.buffers)


def test_shrinking_keeps_a_shortfall():
    """A full-size spec one element short stays one element short after shrinking."""
    spec_path, kernel = CASES[IDS.index("norm/softmax_rows.cu:softmax_rows")]
    steps = SHRINK["norm/softmax_rows.cu:softmax_rows"]
    short = dataclasses.replace(kernel, args=tuple(
        dataclasses.replace(a, elements=a.elements - 1) if a.name == "input" else a for a in kernel.args))
    full, small = shrink(kernel, steps), shrink(short, steps)
    assert full.arg("rows").value * full.arg("cols").value == full.arg("input").elements
    assert small.arg("input").elements == full.arg("input").elements - 1
    assert small.grid == full.grid == (4, 1, 1)


@pytest.fixture(scope="module")
def libraries():
    if find_cxx() is None:
        pytest.skip("no host C++ compiler (g++ or clang++)")
    sources = sorted({_source(p) for p, _ in CASES})
    # the corpus spec's kernels: the same instances, so the corpus tests' cached builds serve
    jobs = [(CORPUS / s, load_spec((CORPUS / s).with_suffix(".toml"))) for s in sources]
    return dict(zip(sources, compile_many(jobs, max_workers=max(2, os.cpu_count() or 2))))


@pytest.mark.slow
@pytest.mark.parametrize("spec_path,kernel", CASES, ids=IDS)
def test_shrunk_bench_kernel_stays_in_bounds_and_matches_reference(libraries, spec_path, kernel):
    key = f"{_source(spec_path)}:{kernel.id}"
    small = shrink(kernel, SHRINK[key])
    assert sum(a.elements for a in small.buffers) <= SHRUNK_ELEMENTS_LIMIT, "shrink further"
    lib = libraries[_source(spec_path)]
    if isinstance(lib, BuildError):
        pytest.fail(f"{key}: does not compile on the CPU:\n{lib}")
    inp = make_inputs(small, DEFAULT_SEED)
    res = run_cpu(lib, small, inp.args, inp.symbols, seed=7, timeout=120)
    assert res.ok, f"{key} shrunk to grid {small.grid}: {res}\n{res.stderr[-2000:]}"
    assert not [f.message for f in res.findings if f.kind == "spec_mismatch"]
    for a in small.outputs:
        if a.dtype in FLOAT_DTYPES:
            assert np.isfinite(res.outputs[a.name]).all(), f"{key}: {a.name} has non-finite values"
    expected = reference(key, inp.copy().args, {k: v.copy() for k, v in inp.symbols.items()})
    bad = [r.message for r in compare_outputs(small, expected, res.outputs) if not r.passed]
    assert not bad, f"{key} shrunk to grid {small.grid}: " + "; ".join(bad)


# ------------------------------------------------------------------------ picked up by migrate bench

@pytest.mark.slow
def test_migrate_bench_picks_a_bench_size_for_every_migrated_kernel(converted_corpus, monkeypatch):
    """`bench_folder`'s own matching of `--specs bench/specs` to a converted corpus, with the GPU
    timing replaced by a recorder: every migrated kernel is timed, at the bench spec's sizes."""
    torch = pytest.importorskip("torch")
    from migrate.runtime import bench

    out = converted_corpus.out
    report = json.loads((out / "report.json").read_text())
    timed = []

    def record(out_dir, entry, k, form, **kw):
        timed.append((entry["file"], k.id, k.spec_path, k.grid))
        return bench.BenchRow(entry["file"], k.id, form)

    monkeypatch.setattr(torch.cuda, "get_device_name", lambda *a: "recorder")
    monkeypatch.setattr(bench, "bench_kernel", record)
    rows, _ = bench.bench_folder(out, report, specs_dir=BENCH)
    migrated = {(k["file"], k["kernel"]) for k in report["kernels"] if k["form"] not in ("hybrid", "unsupported")}
    assert migrated
    assert migrated <= {(_source(p), k.name) for p, k in CASES}
    assert sorted(f"{f}:{i}" for f, i, _, _ in timed) == sorted(IDS)
    for file, kid, spec_path, grid in timed:
        assert Path(spec_path) == (BENCH / file).with_suffix(".toml")
        assert grid == CASES[IDS.index(f"{file}:{kid}")][1].grid
