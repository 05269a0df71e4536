"""The pool's drop-in bundle (bench/migrate_build_pool.py, bench/migrate_run_table.py) and what
migrate run needs to run it elsewhere: a build folder whose executables are shell scripts
standing in for a program's original and rebuilt builds (no GPU here) is packed, unpacked in
another folder (its paths made relative), run there with its programs' own arguments and data
files, and the run's table printed."""
from __future__ import annotations

import importlib.util
import json
import stat
import tarfile

from tests.paths import REPO


def _bench(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _exe(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _fake_build(tmp_path):
    """A build folder as migrate build writes it: `reads` runs in its source folder (absolute
    run_cwd) and reads its data file; `plain` takes arguments; `broken` did not build."""
    src = tmp_path / "pool" / "reads"
    src.mkdir(parents=True)
    (src / "main.cu").write_text("int main() { return 0; }\n")
    (src / "Makefile").write_text("run:\n\t./main input.dat\n")
    (src / "input.dat").write_text("3 4\n")
    dest = tmp_path / "build"
    reader = 'read a b < "$1"; echo "sum = $((a + b))"; echo PASS\n'
    _exe(dest / "reads" / "main" / "original", reader)
    _exe(dest / "reads" / "main" / "rebuilt", reader + 'echo "cuda2tile: total 2 launches migrated, 0 original" >&2\n')
    _exe(dest / "plain" / "main" / "original", 'echo "n = $1 $2"\n')
    _exe(dest / "plain" / "main" / "rebuilt", 'echo "n = $1 $2"\n'
         'echo "cuda2tile: k 1 launches migrated, 1 original" >&2\n'
         'echo "cuda2tile: total 1 launches migrated, 1 original" >&2\n')
    for d in ("reads/main", "plain/main"):
        (dest / d / "build.sh").write_text("#!/bin/sh\nnvcc ...\n")
    summary = {"kernels": 1, "migrated": 1, "variants": 1, "launch_sites_rewritten": 1, "launch_sites_left": 0}
    rows = [{"program": "plain/main.cu", "dir": "plain/main", "status": "built", "run_args": "7 'a b'",
             "run_cwd": str(tmp_path / "elsewhere"), "tolerance": "fp32", "summary": summary, "kernels": []},
            {"program": "reads/main.cu", "dir": "reads/main", "status": "built", "run_args": "input.dat",
             "run_cwd": str(src), "tolerance": "fp32", "summary": summary, "kernels": []},
            {"program": "broken/main.cu", "dir": "broken/main", "status": "rebuilt does not build",
             "rebuilt": {"built": False, "error": "x.cu(3): error: identifier \"half\" is undefined\n"},
             "summary": {"kernels": 2}, "kernels": []}]
    (dest / "build.json").write_text(json.dumps({"tool": "cuda2tile", "output": str(tmp_path / "out"), "programs": rows,
                                                 "summary": {"programs": 3, "built": 2, "failed": 1,
                                                             "kernels_migrated": 2, "kernels": 4}}))
    return dest


def test_the_build_table_names_why_a_program_failed(tmp_path):
    pool = _bench("migrate_build_pool")
    dest = _fake_build(tmp_path)
    text = pool.table(json.loads((dest / "build.json").read_text()))
    assert "2 of 3 programs built (1 failed), 2 built with at least one kernel running migrated code" in text
    assert "rebuilt: undeclared identifier" in text
    broken = next(l for l in text.splitlines() if l.startswith("broken/main.cu"))
    assert "rebuilt does not build" in broken and "0/2" in broken


def test_a_packed_build_runs_where_it_is_unpacked(tmp_path):
    from migrate.dropin.run import run_folder

    pool = _bench("migrate_build_pool")
    dest = _fake_build(tmp_path)
    bundle = tmp_path / "bundle.tar.xz"
    sizes = pool.pack(dest, bundle, migrated_only=False)
    assert sizes["programs"] == 2 and sizes["data_programs"] == 1
    with tarfile.open(bundle) as tar:
        names = set(tar.getnames())
        tar.extractall(tmp_path / "there", filter="data")
    assert {"build.json", "reads/main/original", "reads/main/rebuilt", "reads/main/run/input.dat",
            "plain/main/original"} <= names
    assert not any(n.endswith(("main.cu", "Makefile")) for n in names)  # sources stay behind
    there = tmp_path / "there"
    packed = json.loads((there / "build.json").read_text())
    assert [r["run_cwd"] for r in packed["programs"]] == ["", "reads/main/run", ""]
    assert str(tmp_path) not in (there / "build.json").read_text()  # no path of this machine left
    result = run_folder(there, None, jobs=2)
    rows = {r["program"]: r for r in result["programs"]}
    assert [r["program"] for r in result["programs"]] == ["plain/main.cu", "reads/main.cu", "broken/main.cu"]
    assert rows["reads/main.cu"]["status"] == "equal", rows["reads/main.cu"]
    assert "sum = 7" in rows["reads/main.cu"]["rebuilt"]["stdout_tail"]  # its data file read in its run folder
    assert rows["plain/main.cu"]["args"] == ["7", "a b"] and rows["plain/main.cu"]["status"] == "equal"
    assert result["summary"]["equal"] == 2 and result["summary"]["not_built"] == 1
    assert result["summary"]["launches_migrated"] == 3 and result["summary"]["launches_original"] == 1

    table = _bench("migrate_run_table").table(json.loads((there / "run.json").read_text()))
    assert ("2 of 3 programs equal (2 of them with migrated launches, 0 whose original exits non-zero; 0 mismatch, "
            "0 timed out, 1 not built") in table
    assert "launches: 3 migrated, 1 original" in table


def test_the_run_table_shows_a_mismatch_and_its_stderr(tmp_path):
    table = _bench("migrate_run_table").table({
        "programs": [{"program": "a/main.cu", "status": "mismatch", "launches": {"migrated": 4, "original": 0},
                      "comparison": {"mismatches": [{"why": "number 1.0 != 1.5", "line": 3, "expected": "s = 1.0",
                                                     "actual": "s = 1.5"}]},
                      "original": {"stderr": ""},
                      "rebuilt": {"stderr": "boom\ncuda2tile: total 4 launches migrated, 0 original"}},
                     {"program": "b/main.cu", "status": "error", "message": "PermissionError: rebuilt"},
                     {"program": "c/main.cu", "status": "equal", "launches": {"migrated": 1, "original": 0},
                      "comparison": {"mismatches": []}, "original": {"status": 1, "stderr": "cannot open input.txt"},
                      "rebuilt": {"status": 1, "stderr": "cannot open input.txt"}}],
        "summary": {"programs": 3, "equal": 1, "mismatch": 1, "timeout": 0, "not_built": 0, "error": 1,
                    "launches_migrated": 4, "launches_original": 0}})
    assert "number 1.0 != 1.5 (line 3: 's = 1.0' vs 's = 1.5')" in table
    assert "rebuilt stderr: boom" in table
    assert "PermissionError: rebuilt" in table
    assert "both exit 1: the original fails here too" in table and "original stderr: cannot open input.txt" in table
    assert "1 of 3 programs equal (1 of them with migrated launches, 1 whose original exits non-zero" in table
    assert "1 not run or not started" in table


def test_an_arguments_table_names_a_program_by_its_main_or_its_folder():
    from migrate.dropin.build import table_args

    prog = {"main": "heat/main.cu"}
    assert table_args(prog, {"heat": "4096 1000"}) == "4096 1000"
    assert table_args(prog, {"heat/main": "1", "heat": "2"}) == "1"
    assert table_args(prog, {"heat/main.cu": "3", "heat": "2"}) == "3"
    assert table_args(prog, {"other": "1"}) is None and table_args(prog, None) is None


def test_a_relative_run_folder_is_the_unpacked_ones(tmp_path):
    from migrate.dropin.run import run_folder_of

    (tmp_path / "p" / "main" / "run").mkdir(parents=True)
    assert run_folder_of(tmp_path, {"dir": "p/main", "run_cwd": "p/main/run"}) == tmp_path / "p/main/run"
    assert run_folder_of(tmp_path, {"dir": "p/main", "run_cwd": "/nowhere/p"}) == tmp_path / "p/main"
    assert run_folder_of(tmp_path, {"dir": "p/main", "run_cwd": ""}) == tmp_path / "p/main"
    assert run_folder_of(tmp_path, {"dir": "p/main", "run_cwd": str(tmp_path)}) == tmp_path


def test_the_gpu_run_goes_in_chunks_under_a_budget_and_picks_up_where_it_stopped(tmp_path):
    """bench/migrate_run_chunks.py (the GPU script's driver): a budget that ends after the first
    chunk leaves the others listed as "not run"; the next call runs only those and keeps the first
    chunk's rows."""
    from migrate.dropin.run import run_folder

    chunks = _bench("migrate_run_chunks")
    dest = _fake_build(tmp_path)
    seen = []

    def runner(dest_, args, programs, timeout, jobs=1):
        seen.append(sorted(programs))
        return run_folder(dest_, args, programs, timeout, jobs=jobs)

    first = chunks.run_chunks(dest, tmp_path / "res", 30, 2, 1, budget=0, runner=runner)
    assert seen == [["plain/main.cu"]]
    assert [r["status"] for r in first["programs"]] == ["equal", "not run", "not run"]
    assert first["summary"]["equal"] == 1 and first["summary"]["error"] == 2
    second = chunks.run_chunks(dest, tmp_path / "res", 30, 2, 5, budget=100, runner=runner)
    assert seen[1:] == [["broken/main.cu", "reads/main.cu"]]
    assert [r["status"] for r in second["programs"]] == ["equal", "equal", "not built"]
    on_disk = json.loads((tmp_path / "res" / "pool_migrate_run.json").read_text())
    assert on_disk["summary"] == second["summary"] and on_disk["summary"]["equal"] == 2
    assert "2 of 3 programs equal" in _bench("migrate_run_table").table(on_disk)


def test_a_bundle_holds_only_the_programs_running_migrated_kernels(tmp_path):
    pool = _bench("migrate_build_pool")
    dest = _fake_build(tmp_path)
    build = json.loads((dest / "build.json").read_text())
    build["programs"][0]["summary"] = {**build["programs"][0]["summary"], "migrated": 0}  # plain: none migrated
    (dest / "build.json").write_text(json.dumps(build))
    bundle = tmp_path / "bundle.tar.xz"
    assert pool.pack(dest, bundle)["programs"] == 1
    with tarfile.open(bundle) as tar:
        packed = json.loads(tar.extractfile("build.json").read())
        assert not any(n.startswith("plain/") for n in tar.getnames())
    assert [r["program"] for r in packed["programs"]] == ["reads/main.cu"]
    assert packed["summary"]["programs"] == 1 and packed["summary"]["built"] == 1
