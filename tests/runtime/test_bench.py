"""`migrate bench` without a GPU, and the pieces it is made of that need none."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from migrate.cli import main
from migrate.runtime.bench import geomean, traffic_bytes
from migrate.runtime.tuning import tune_configs
from migrate.runtime.spec import load_spec
from tests.paths import REPO



def test_bench_needs_a_gpu_and_says_so(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    out = tmp_path / "out"
    main(["convert", str(REPO / "corpus" / "elementwise" / "vector_add.cu"), "-o", str(out), "-q"])
    assert main(["bench", "--from", str(out)]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_bench_rejects_a_folder_that_is_not_an_output(tmp_path, capsys):
    assert main(["bench", "--from", str(tmp_path)]) == 2
    assert "no report.json" in capsys.readouterr().err
    (tmp_path / "report.json").write_text(json.dumps({"files": [], "kernels": []}))
    assert main(["bench", "--from", str(tmp_path), "--specs", str(tmp_path / "missing")]) == 2


def test_traffic_counts_inputs_once_outputs_once_and_inout_twice():
    (saxpy,) = load_spec(REPO / "bench" / "specs" / "elementwise" / "saxpy.toml")
    n = 1 << 26
    assert traffic_bytes(saxpy) == 4 * n + 2 * 4 * n  # x read; y read and written
    (mm,) = load_spec(REPO / "bench" / "specs" / "matmul" / "matmul_naive.toml")
    assert mm.flops == 2 * 4096 ** 3


def test_tune_configs_cover_the_space_evenly_within_the_limit():
    space = {"tile": [(512,), (1024,), (2048,)], "threads": [128, 256]}
    every = tune_configs(space, limit=100)
    assert len(every) == 6 and {"tile": (1024,), "threads": 256} in every
    few = tune_configs({"a": list(range(10)), "b": list(range(10))}, limit=12)
    assert len(few) == 12 and len({c["a"] for c in few}) > 5  # spread, not the first row only


def test_geomean_of_ratios():
    assert geomean([0.5, 2.0]) == pytest.approx(1.0)
    assert geomean([]) is None


def test_every_bench_spec_names_a_corpus_kernel():
    for spec_path in sorted((REPO / "bench" / "specs").rglob("*.toml")):
        source = (REPO / "corpus" / spec_path.relative_to(REPO / "bench" / "specs")).with_suffix(".cu")
        assert source.exists(), spec_path
        text = source.read_text()
        for k in load_spec(spec_path):
            assert f"void {k.name}(" in text, (spec_path, k.name)


def test_bench_work_takes_bench_sizes_over_corpus_sizes_and_skips_unmigrated(tmp_path):
    """What a bench run times (and builds first with --jobs): every migrated kernel with a spec,
    from the bench folder's spec where there is one."""
    from migrate.runtime.bench import _bench_work

    out = tmp_path / "out"
    main(["convert", str(REPO / "corpus" / "reduction"), "-o", str(out), "-q"])
    report = json.loads((out / "report.json").read_text())
    specs = REPO / "bench" / "specs" / "reduction"  # report paths are relative to the converted folder
    work = _bench_work(out, report, None, specs)
    names = {k.name for _, k, _ in work}
    assert "blockReduceSum" in names
    assert "reduceMinFloat" not in names  # not migrated: nothing to time
    by_name = {k.name: k for _, k, _ in work}
    bench_spec = {k.name: k for k in load_spec(specs / "block_sum.toml")}
    assert by_name["blockReduceSum"].grid == bench_spec["blockReduceSum"].grid
    only = _bench_work(out, report, {"blockReduceSum"}, specs)
    assert [k.name for _, k, _ in only] == ["blockReduceSum"]


def test_kernels_without_a_spec_are_benched_at_their_recorded_launch(tmp_path):
    """A folder converted with --run holds its program's launches: the bench takes the first
    recorded launch of each kernel as its sizes and inputs (the allocation from the pointer's
    offset, the recorded scalars and launch shape; buffers the launch changed count as in-out)."""
    import numpy as np

    from migrate.runtime.bench import trace_work, traffic_bytes

    src = tmp_path / "src" / "record_sizes.cu"
    src.parent.mkdir()
    src.write_text((REPO / "tests" / "fixtures" / "runtime" / "record_sizes.cu").read_text())
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "301"]) == 0
    report = json.loads((out / "report.json").read_text())
    work = {k.name: (k, form, inputs) for _, k, form, inputs in trace_work(out, report)}
    scale, _, inp = work["scale"]
    assert (scale.grid, scale.block, scale.id) == ((3, 1, 1), (128, 1, 1), "scale@launch0")
    assert [(a.name, a.kind, a.dtype, a.elements, a.role, a.value) for a in scale.args] == [
        ("y", "buffer", "float32", 301, "inout", None), ("x", "buffer", "float32", 301, "in", None),
        ("a", "scalar", "float32", 0, "in", 2.0), ("n", "scalar", "int32", 0, "in", 301)]
    np.testing.assert_array_equal(inp.args["x"], 0.5 * np.arange(301, dtype=np.float32))
    assert traffic_bytes(scale) == 3 * 301 * 4
    shift, _, inp = work["shift"]  # launched on d + 150: the buffer runs from there to the end
    assert [(a.name, a.elements, a.value) for a in shift.args] == [("v", 151, None), ("by_", 0, 7), ("count", 0, 151)]
    assert trace_work(out, report, done={("record_sizes.cu", "scale")})[0][1].name == "shift"
