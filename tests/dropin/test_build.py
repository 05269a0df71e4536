"""migrate build (migrate/dropin/build.py) on three small programs of the tests' own: a map whose
grid is computed (its launch site's constant), a kernel launched at two geometries (recorded on
the CPU executor), and a program whose refused kernel, and a kernel launched only through a
macro, keep their CUDA. nvcc builds both executables here (no GPU is needed to build); running
them is migrate run's, on a GPU."""
from __future__ import annotations

import difflib
import json
import os
import shutil

import pytest

from tests.paths import FIXTURES

pytestmark = [pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc"),
              pytest.mark.slow]  # nvcc builds 8 objects and 6 executables (2-6 minutes on 2 cores)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from migrate.cli import main
    from migrate.dropin.build import build_folder

    root = tmp_path_factory.mktemp("dropin")
    out, dest = root / "out", root / "build"
    assert main(["convert", str(FIXTURES / "dropin"), "-o", str(out), "-q", "--jobs", "1"]) == 1  # one refused
    result = build_folder(out, dest, jobs=2, record_on="cpu")
    return out, dest, result


def _program(result, main):
    return next(p for p in result["programs"] if p["program"] == main)


def _kernel(prog, name):
    return next(k for k in prog["kernels"] if k["kernel"] == name)


def _changed_lines(original: str, rebuilt: str) -> set:
    """The original's line numbers that the rebuilt text replaced (insertions not counted)."""
    out = set()
    matcher = difflib.SequenceMatcher(None, original.splitlines(), rebuilt.splitlines(), autojunk=False)
    for tag, i1, i2, _j1, _j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            out |= set(range(i1 + 1, i2 + 1))
    return out


def test_every_program_builds_both_ways(built):
    _out, dest, result = built
    assert result["summary"]["programs"] == 3 and result["summary"]["built"] == 3, json.dumps(result, indent=1)[:3000]
    on_disk = json.loads((dest / "build.json").read_text())
    assert on_disk["summary"] == result["summary"]
    for prog in result["programs"]:
        folder = dest / prog["dir"]
        for exe in ("original", "rebuilt"):
            assert (folder / exe).is_file() and os.access(folder / exe, os.X_OK)
        assert "nvcc" in (folder / "build.sh").read_text()


def test_a_map_with_a_computed_grid_runs_its_lowered_variant(built):
    _out, dest, result = built
    prog = _program(result, "map_grid/scale.cu")
    k = _kernel(prog, "scaleShift")
    assert k["runs"] == "migrated" and k["form"] == "tile"
    assert [(v["grid"], v["block"], v["shared_bytes"], v["status"]) for v in k["variants"]] == \
        [([79, 1, 1], [128, 1, 1], 0, "built")]
    assert k["launches"] == [{"line": 34, "caller": "main", "rewritten": True, "file": "map_grid/scale.cu"}]
    original = (FIXTURES / "dropin" / "map_grid" / "scale.cu").read_text()
    rebuilt = (dest / prog["dir"] / "src" / "scale.cu").read_text()
    assert _changed_lines(original, rebuilt) == {34}  # only the launch; the shim is inserted
    assert ("c2t_launch_scaleShift(dim3((n + threads - 1) / threads), dim3(threads), (size_t)(0), "
            "(cudaStream_t)(0), dx, dy, 1.5f, -0.5f, n);") in rebuilt
    shim = rebuilt[rebuilt.index("// ---- cuda2tile: launch shim of scaleShift"):]
    assert "c2t_grid.x == 79u" in shim and "c2t_block.x == 128u" in shim
    assert "scaleShift<<<c2t_grid, c2t_block, c2t_shared, c2t_stream>>>(x, y, a, b, n);" in shim  # the fallback
    variant = (dest / prog["dir"] / "gen" / "c2t_scaleShift_v0.cu").read_text()
    assert 'extern "C" TL_EXPORT int c2t_scaleShift_v0_call(' in variant
    assert "__global__" in variant and "c2t_scaleShift_v0_scaleShift_kernel" in variant
    assert "config.numAttrs = 0;" in variant  # launched after its predecessor, as <<<...>>> launches it


def test_a_kernel_launched_at_two_geometries_gets_a_variant_for_each(built):
    _out, dest, result = built
    prog = _program(result, "two_geometries/add_one.cu")
    assert "ran on the CPU executor" in prog["recorded"]
    k = _kernel(prog, "addOne")
    assert k["runs"] == "migrated"
    shapes = sorted((tuple(v["grid"]), tuple(v["block"])) for v in k["variants"] if v["status"] == "built")
    assert shapes == [((11, 1, 1), (64, 1, 1)), ((20, 1, 1), (256, 1, 1))]
    assert [e["rewritten"] for e in k["launches"]] == [True, True]
    rebuilt = (dest / prog["dir"] / "src" / "add_one.cu").read_text()
    assert rebuilt.count("c2t_launch_addOne(dim3(") == 2
    assert "c2t_grid.x == 20u" in rebuilt and "c2t_grid.x == 11u" in rebuilt


def test_a_refused_kernel_and_a_macro_launch_keep_their_cuda(built):
    _out, dest, result = built
    prog = _program(result, "kept_cuda/lanes.cu")
    lanes, square, negate = (_kernel(prog, n) for n in ("laneIds", "square", "negate"))
    assert lanes["runs"] == "original" and "not migrated (form hybrid)" in lanes["why_original"]  # kept as its CUDA
    assert square["runs"] == "migrated"
    assert negate["runs"] == "original" and negate["why_original"] == "none of its launches could be rewritten"
    assert negate["launches"][0]["rewritten"] is False and "macro" in negate["launches"][0]["why"]
    rebuilt = (dest / prog["dir"] / "src" / "lanes.cu").read_text()
    assert "    laneIds<<<(n + 127) / 128, 128>>>(lanes, n);\n" in rebuilt
    assert "    LAUNCH(negate, (n + 127) / 128, 128, y, n);\n" in rebuilt
    assert "c2t_launch_laneIds" not in rebuilt and "c2t_launch_negate" not in rebuilt
    assert lanes["launches"] == [{"line": 49, "caller": "main", "rewritten": False,
                                  "why": "its kernel runs the original"}]
    assert prog["summary"] == {"kernels": 4, "migrated": 2, "variants": 2, "launch_sites_rewritten": 2,
                               "launch_sites_left": 2}


def test_a_struct_passed_by_value_is_passed_as_its_fields(built):
    _out, dest, result = built
    prog = _program(result, "kept_cuda/lanes.cu")
    assert _kernel(prog, "affine")["runs"] == "migrated"
    rebuilt = (dest / prog["dir"] / "src" / "lanes.cu").read_text()
    assert ("c2t_affine_v0_call((void*)(y), (float)((*(const float*)((const char*)&(t) + 0))), "
            "(float)((*(const float*)((const char*)&(t) + 4))), (int)(n), ") in rebuilt


def test_usage_errors(tmp_path, built, capsys):
    from migrate.cli import main

    assert main(["build", str(tmp_path)]) == 2
    out, dest, _result = built
    assert main(["build", str(out), "-o", str(out / "inside")]) == 2
    if shutil.which("nvidia-smi") is None:
        assert main(["run", str(dest), "--", "-n", "4"]) == 2
        assert "needs a CUDA GPU" in capsys.readouterr().err


def test_geometries_come_from_the_host_code_alone(tmp_path):
    """--record cpu runs the program's host code on the CPU executor and lists each launch's
    geometry without running the kernel (a fast-forward past every launch): six launches of a
    kernel that would take minutes on the CPU name their geometries in seconds, the first four
    distinct ones kept (RECORD_GEOMETRIES); no launch's bytes are recorded."""
    import json as _json
    import time

    from migrate.cli import main
    from migrate.dropin import build
    from migrate.runtime.traces import read

    out = tmp_path / "out"
    assert main(["convert", str(FIXTURES / "dropin_record" / "sizes"), "-o", str(out), "-q", "--jobs", "1"]) == 0
    report = _json.loads((out / "report.json").read_text())
    (prog,) = report["programs"]
    start = time.monotonic()
    shapes, how = build.record_geometries(out, report, prog, tmp_path / "build", ["2000000000"], 600)
    assert "kernels skipped (ended, status 0)" in how and "4 geometries of 1 kernels" in how, how
    assert shapes == {"spin": [((n, 1, 1), (b, 1, 1), 0) for n, b in ((2048, 32), (1024, 64), (512, 128),
                                                                        (256, 256))]}
    traces = tmp_path / "build" / build.program_dir(prog) / "traces"
    lines = [_json.loads(line) for line in (traces / "manifest.jsonl").read_text().splitlines()]
    assert [d.get("skipped") for d in lines] == ["fast-forward"] * 6
    assert read(traces) == []
    assert time.monotonic() - start < 300  # the build of the CPU executor's program, not 6 * 2e9 rounds
