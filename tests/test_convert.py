"""``migrate convert`` end to end: the output tree, report.json, exit codes and file safety."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from migrate.cli import main
from tests.paths import REPO

CORPUS = REPO / "corpus"

GOOD = """\
#include <cuda_runtime.h>
__global__ void scale(float* y, const float* x, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}
int main() { scale<<<4, 256>>>(nullptr, nullptr, 2.0f, 1000); return 0; }
"""

BROKEN = """\
#include <cuda_runtime.h>
__global__ void fine(int* y) { y[threadIdx.x] = 1; }
__global__ void uses_ptx(int* y) {
    int v;
    asm("mov.u32 %0, 7;" : "=r"(v));
    y[threadIdx.x] = v;
}
"""


def make_tree(root: Path) -> Path:
    src = root / "src"
    (src / "ops").mkdir(parents=True)
    (src / "ops" / "scale.cu").write_text(GOOD)
    (src / "ops" / "ptx.cu").write_text(BROKEN)
    (src / "data.cu").write_bytes(b"\x00\x01\x02binary\x00" * 100)
    (src / "notes.txt").write_text("not CUDA")
    (src / "helpers.cuh").write_text("#pragma once\n__device__ inline float sq(float v) { return v * v; }\n")
    return src


def snapshot(root: Path, skip: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and not p.is_relative_to(skip):
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def load_report(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def test_convert_tree_mirrors_and_reports_every_kernel(tmp_path, capsys):
    src = make_tree(tmp_path)
    out = tmp_path / "out"
    before = snapshot(tmp_path, out)
    status = main(["convert", str(src), "-o", str(out), "--jobs", "2"])
    assert status == 1  # one kernel cannot be converted, one file is binary
    assert snapshot(tmp_path, out) == before  # sources untouched, nothing written beside them

    report = load_report(out)
    kernels = {(k["file"], k["kernel"]): k for k in report["kernels"]}
    assert set(kernels) == {("ops/scale.cu", "scale"), ("ops/ptx.cu", "fine"), ("ops/ptx.cu", "uses_ptx")}
    for k in report["kernels"]:
        assert set(k) >= {"file", "kernel", "line", "form", "diagnostics", "check"}
        assert k["form"] in ("tile", "portable", "simt", "hybrid", "unsupported")
        for d in k["diagnostics"]:
            assert set(d) >= {"code", "severity", "line", "col", "message"}
    assert kernels[("ops/scale.cu", "scale")]["line"] == 2
    assert kernels[("ops/scale.cu", "scale")]["form"] == "tile"  # its threads are independent
    assert kernels[("ops/ptx.cu", "fine")]["form"] == "tile"  # lifted: its threads are independent
    bad = kernels[("ops/ptx.cu", "uses_ptx")]
    assert bad["form"] == "hybrid"  # kept as its CUDA behind the migrated launcher
    assert [(d["code"], d["line"]) for d in bad["diagnostics"]] == [("M1201", 5), ("M3008", 3)]
    scale_launch = kernels[("ops/scale.cu", "scale")]["launches"][0]
    assert scale_launch["grid"] == "4" and scale_launch["block"] == "256"

    files = {f["file"]: f for f in report["files"]}
    assert set(files) == {"ops/scale.cu", "ops/ptx.cu", "data.cu", "helpers.cuh"}
    assert [d["code"] for d in files["data.cu"]["diagnostics"]] == ["M1002"]
    assert files["helpers.cuh"]["output"] == "helpers_cuh.py"
    for f in files.values():
        assert (out / f["output"]).is_file()
    module = (out / "ops" / "scale.py").read_text()
    assert module.startswith('"""TileLang migration of ops/scale.cu') and "def make_scale(" in module
    assert (out / "ops" / "scale.cu").read_text() == GOOD  # OUT carries the original for `check --from`
    assert files["ops/scale.cu"]["original"] == "ops/scale.cu"
    assert report["summary"]["kernels"] == 3 and report["summary"]["forms"]["hybrid"] == 1
    assert report["summary"]["converted"] == 2  # a hybrid kernel is not migrated

    err = capsys.readouterr().err
    assert "ptx.cu:5:5: error: M1201" in err


def test_all_good_exits_zero_and_json_copy(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "scale.cu").write_text(GOOD)
    out = tmp_path / "out"
    status = main(["convert", str(src / "scale.cu"), "-o", str(out), "--json", str(tmp_path / "r.json"), "-q"])
    assert status == 0
    assert json.loads((tmp_path / "r.json").read_text())["kernels"] == load_report(out)["kernels"]
    assert (out / "scale.py").exists()


def test_exclude_and_jobs_give_same_report(tmp_path):
    src = make_tree(tmp_path)
    main(["convert", str(src), "-o", str(tmp_path / "a"), "--jobs", "1", "--exclude", "data.cu", "-q"])
    main(["convert", str(src), "-o", str(tmp_path / "b"), "--jobs", "2", "--exclude", "data.cu", "-q"])
    a, b = load_report(tmp_path / "a"), load_report(tmp_path / "b")
    assert "data.cu" not in {f["file"] for f in a["files"]}
    assert a["kernels"] == b["kernels"]
    assert [(f["file"], f["diagnostics"]) for f in a["files"]] == \
        [(f["file"], f["diagnostics"]) for f in b["files"]]


def test_output_inside_source_tree_is_not_reconverted(tmp_path):
    src = make_tree(tmp_path)
    out = src / "converted"
    main(["convert", str(src), "-o", str(out), "-q"])
    (out / "stale.cu").write_text(GOOD)  # something a user left in the output folder
    main(["convert", str(src), "-o", str(out), "-q"])
    assert "converted/stale.cu" not in {f["file"] for f in load_report(out)["files"]}


def test_usage_errors_exit_two(tmp_path, capsys):
    assert main(["convert", str(tmp_path / "nope"), "-o", str(tmp_path / "o")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(tmp_path)])  # -o missing
    assert exc.value.code == 2
    (tmp_path / "a.cu").write_text(GOOD)
    (tmp_path / "db").mkdir()
    (tmp_path / "db" / "compile_commands.json").write_text("{not json")
    assert main(["convert", str(tmp_path / "a.cu"), "-o", str(tmp_path / "o"), "-p", str(tmp_path / "db")]) == 2
    assert "M9002" in capsys.readouterr().err


def test_compile_commands_supply_flags(tmp_path):
    src = tmp_path / "proj"
    (src / "include").mkdir(parents=True)
    (src / "include" / "cfg.h").write_text("#define WIDTH 64\n")
    (src / "k.cu").write_text(textwrap.dedent("""\
        #include "cfg.h"
        #ifndef REAL
        #error REAL must be defined
        #endif
        __global__ void k(REAL* y) { y[threadIdx.x] = WIDTH; }
    """))
    db = [{"directory": str(src), "file": "k.cu",
           "command": "nvcc -Iinclude -DREAL=double -std=c++17 -O3 -c k.cu -o k.o"}]
    (src / "compile_commands.json").write_text(json.dumps(db))
    out = tmp_path / "out"
    assert main(["convert", str(src / "k.cu"), "-o", str(out), "-p", str(src), "-q"]) == 0
    (kernel,) = load_report(out)["kernels"]
    assert kernel["diagnostics"] == []
    assert kernel["params"][0]["type"] == "float64*"


def test_explain(capsys):
    assert main(["explain", "M1201"]) == 0
    text = capsys.readouterr().out
    assert "inline PTX" in text and "Fix:" in text
    assert main(["explain", "M0000"]) == 2


def test_console_script_runs(tmp_path):
    (tmp_path / "a.cu").write_text(GOOD)
    proc = subprocess.run([sys.executable, "-m", "migrate", "convert", str(tmp_path / "a.cu"),
                           "-o", str(tmp_path / "out")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "kernels" in proc.stdout and "Traceback" not in proc.stderr


def corpus_spec_kernels() -> set[tuple[str, str]]:
    names = set()
    for spec in CORPUS.rglob("*.toml"):
        data = tomllib.loads(spec.read_text())
        for k in data.get("kernel", []):
            names.add((str(spec.relative_to(CORPUS).with_suffix(".cu")), k["name"]))
    return names


def test_whole_corpus_converts_without_frontend_errors(converted_corpus):
    out, status = converted_corpus
    report = load_report(out)
    listed = {(k["file"], k["kernel"]) for k in report["kernels"]}
    expected = corpus_spec_kernels()
    assert len(expected) >= 40
    assert expected <= listed
    frontend = [(k["file"], k["kernel"], d["code"], d["line"], d["message"])
                for k in report["kernels"] for d in k["diagnostics"]
                if d["severity"] == "error" and d["code"].startswith("M1")]
    frontend += [(f["file"], "", d["code"], d["line"], d["message"])
                 for f in report["files"] for d in f["diagnostics"] if d["severity"] != "note"]
    assert frontend == []
    assert not [d for k in report["kernels"] for d in k["diagnostics"] if d["code"] == "M9001"]
    unsupported = [k for k in report["kernels"] if k["form"] in ("hybrid", "unsupported")]
    assert all(k["reason"] and any(d["code"].startswith("M3") for d in k["diagnostics"]) for k in unsupported)
    assert status == (1 if unsupported else 0)


def test_parse_workers_also_convert_and_give_what_the_parent_would():
    """`migrate convert` analyses and emits in its parse workers (in parallel): each file's
    results are those of convert_file in this process, kernels, diagnostics and module text."""
    from migrate import convert as cv
    from migrate.parse.frontend import ParseOptions, parse_file

    files = cv.discover([str(CORPUS / "elementwise"), str(CORPUS / "reduction")], Path("/nonexistent-out"), [])
    assert len(files) >= 4
    converted: dict = {}
    settings = {"keep_original": False, "lift": True, "allow_tf32": False}
    parsed = cv.parse_all(files, lambda p: ParseOptions(), 2, convert=settings, converted=converted)
    assert set(converted) == set(parsed) == {f.path for f in files}
    for src in files:
        here = cv.convert_file(parse_file(src.path, ParseOptions()), str(src.rel), **settings)
        kernels, diags, text, tables = converted[src.path]
        assert text == here[2] and "T.prim_func" in text
        assert cv.has_spec(src.path) and tables is None  # the corpus states its specs: none derived
        assert [(k.kernel, k.form, [d.code for d in k.diagnostics]) for k in kernels] == \
               [(k.kernel, k.form, [d.code for d in k.diagnostics]) for k in here[0]]
        assert [d.code for d in diags] == [d.code for d in here[1]]


def test_the_parse_workers_fork_server_started_early_is_the_one_parse_all_forks_from(monkeypatch):
    """``start_workers`` starts the parse workers' fork server in the background (``migrate
    convert`` calls it before finding the files); ``parse_all`` then forks its workers from that
    server rather than starting another (same module, same environment)."""
    import time

    from migrate import convert as cv
    from migrate.parse.frontend import ParseOptions
    from migrate.runtime import forkserver

    monkeypatch.setenv("CUDA2TILE_FORK_SERVER", "1")
    forkserver.close_all()
    started = []

    class Counted(forkserver._Server):
        def __init__(self, module, env, startup):
            started.append(module)
            super().__init__(module, env, startup)

    monkeypatch.setattr(forkserver, "_Server", Counted)
    try:
        cv.start_workers()
        deadline = time.monotonic() + 60
        while not any(key[0] == cv.PARSE_WORKER for key in forkserver._servers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started == [cv.PARSE_WORKER]
        files = cv.discover([str(CORPUS / "elementwise")], Path("/nonexistent-out"), [])
        parsed = cv.parse_all(files, lambda p: ParseOptions(), 2)
        assert set(parsed) == {f.path for f in files}
        assert started == [cv.PARSE_WORKER]
    finally:
        forkserver.close_all()


def test_parse_workers_derive_the_spec_tables_of_a_file_without_a_spec(tmp_path):
    """Without a spec beside the source, the workers also derive its spec tables from the launch
    sites (the same tables as in this process), and a kernel they cannot cover gets
    spec_missing."""
    from migrate import convert as cv
    from migrate.parse.frontend import ParseOptions, parse_file

    (tmp_path / "scale.cu").write_text(textwrap.dedent("""
        #include <cuda_runtime.h>
        __global__ void scale(float* x, float a, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] *= a;
        }
        __global__ void unused(float* y) { y[threadIdx.x] = 1.0f; }
        int main() {
            float* x; cudaMalloc(&x, 1000 * sizeof(float));
            scale<<<4, 256>>>(x, 2.0f, 1000);
            return 0;
        }
    """))
    files = cv.discover([str(tmp_path)], Path("/nonexistent-out"), [])
    settings = {"keep_original": False, "lift": True, "allow_tf32": False}
    converted: dict = {}
    cv.parse_all(files, lambda p: ParseOptions(), 1, convert=settings, converted=converted)
    kernels, _diags, _text, tables = converted[files[0].path]
    here = cv.convert_file(parse_file(files[0].path, ParseOptions()), "scale.cu", **settings)
    assert tables == cv.spec_tables(parse_file(files[0].path, ParseOptions()), here[0])
    assert [t["name"] for t in tables] == ["scale"] and tables[0]["grid"] == [4, 1, 1]
    assert {k.kernel: bool(k.spec_missing) for k in kernels} == {"scale": False, "unused": True}


def test_parse_workers_write_a_profile_per_file_when_asked(tmp_path, monkeypatch):
    """C2T_PROFILE=DIR: each worker run (parse, analysis, emission of one file) leaves a cProfile
    dump in DIR, which pstats reads and merges (how BENCHMARKS.md's conversion profiles are made)."""
    import pstats

    from migrate import convert as cv
    from migrate.parse.frontend import ParseOptions

    prof = tmp_path / "prof"
    prof.mkdir()
    monkeypatch.setenv("C2T_PROFILE", str(prof))
    files = cv.discover([str(CORPUS / "elementwise")], Path("/nonexistent-out"), [])
    converted: dict = {}
    cv.parse_all(files, lambda p: ParseOptions(), 1, convert={"keep_original": False, "lift": True,
                                                               "allow_tf32": False}, converted=converted)
    dumps = sorted(prof.glob("*.prof"))
    assert len(dumps) == len(files) == len(converted)
    stats = pstats.Stats(*map(str, dumps))
    assert any(fn[2] == "convert_file" for fn in stats.stats)
