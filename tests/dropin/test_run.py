"""migrate run (migrate/dropin/run.py) on a build folder whose executables are shell scripts
standing in for a program's original and rebuilt builds (no GPU here): the comparison, the launch
counts the rebuilt program prints, and run.json."""
from __future__ import annotations

import json
import stat


def _exe(path, text):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def _program(dest, name, original, rebuilt, **row):
    folder = dest / name
    folder.mkdir(parents=True)
    _exe(folder / "original", original)
    _exe(folder / "rebuilt", rebuilt)
    return {"program": f"{name}.cu", "dir": name, "status": "built", "tolerance": "fp32", "run_cwd": "",
            "run_args": None, **row}


def test_run_compares_each_program_and_counts_its_launches(tmp_path):
    from migrate.dropin.run import run_folder

    dest = tmp_path / "build"
    same = _program(dest, "same", 'echo "n = $1"; echo "sum = 1.0000001"; echo "time 3 ms"; echo PASS\n',
                    'echo "n = $1"; echo "sum = 1.0000002"; echo "time 1 ms"; echo PASS\n'
                    'echo "cuda2tile: k 2 launches migrated, 0 original" >&2\n'
                    'echo "cuda2tile: total 2 launches migrated, 0 original" >&2\n')
    differ = _program(dest, "differ", 'echo "sum = 1.0"; echo PASS\n',
                      'echo "sum = 1.5"; echo FAIL\n'
                      'echo "cuda2tile: total 1 launches migrated, 1 original" >&2; exit 1\n')
    broken = {"program": "broken.cu", "dir": "broken", "status": "rebuilt does not build"}
    (dest / "build.json").write_text(json.dumps({"programs": [same, differ, broken]}))
    result = run_folder(dest, ["7"])
    rows = {r["program"]: r for r in result["programs"]}
    assert rows["same.cu"]["status"] == "equal", rows["same.cu"]
    assert rows["same.cu"]["args"] == ["7"]
    assert rows["same.cu"]["launches"] == {"migrated": 2, "original": 0, "by_kernel": {"k": (2, 0)}}
    d = rows["differ.cu"]
    assert d["status"] == "mismatch"
    whys = [m["why"] for m in d["comparison"]["mismatches"]]
    assert "exit status" in whys and "verdict" in whys and any(w.startswith("number 1.0 != 1.5") for w in whys)
    assert d["launches"]["original"] == 1
    assert rows["broken.cu"]["status"] == "not built"
    assert result["summary"] == {"programs": 3, "equal": 1, "mismatch": 1, "timeout": 0, "not_built": 1, "error": 0,
                                 "varying": 0, "launches_migrated": 3, "launches_original": 1}
    assert json.loads((dest / "run.json").read_text())["summary"] == result["summary"]


def test_a_program_past_its_time_is_reported(tmp_path):
    from migrate.dropin.run import run_folder

    dest = tmp_path / "build"
    slow = _program(dest, "slow", "echo ok\n", "sleep 5; echo ok\n")
    (dest / "build.json").write_text(json.dumps({"programs": [slow]}))
    result = run_folder(dest, None, timeout=1)
    assert result["programs"][0]["status"] == "timeout"


def test_a_relative_build_folder_runs_its_executables_from_the_programs_run_folder(tmp_path, monkeypatch):
    """DIR given relative to the working folder (as bench/gpu_migrate_run.sh passes it) while each
    program runs in its own run folder: the executables are still found (H200 run of 2026-12-06:
    every corpus program failed with FileNotFoundError)."""
    from migrate.dropin.run import run_folder

    dest = tmp_path / "build"
    data = tmp_path / "data"
    data.mkdir()
    (data / "input.txt").write_text("42\n")
    row = _program(dest, "reads", 'cat input.txt\n', 'cat input.txt\n', run_cwd=str(data))
    (dest / "build.json").write_text(json.dumps({"programs": [row]}))
    monkeypatch.chdir(tmp_path)
    result = run_folder(type(dest)("build"), None)
    assert result["programs"][0]["status"] == "equal", result["programs"][0]
    assert result["programs"][0]["original"]["stdout_tail"] == "42\n"


def test_a_control_run_tells_lines_that_vary_in_the_original_itself(tmp_path):
    """``--control``: the original runs again after the rebuilt program; a line its two runs print
    differently (here a count that grows each run, as boxes appended by atomics or a race's
    outcome would differ) is not held against the rebuilt program but listed; a line that does
    not vary is still compared, and without the control the same outputs are a mismatch."""
    from migrate.dropin.run import run_folder

    dest = tmp_path / "build"
    count = tmp_path / "count"
    original = (f'n=$(cat {count} 2>/dev/null || echo 0); n=$((n + 3)); echo $n > {count}\n'
                'echo "boxes = $n"; echo "sum = 2.5"; echo PASS\n')
    varies = _program(dest, "varies", original, 'echo "boxes = 5"; echo "sum = 2.5"; echo PASS\n')
    wrong = _program(dest, "wrong", original.replace(str(count), str(count) + "2"),
                     'echo "boxes = 5"; echo "sum = 2.75"; echo PASS\n')
    far = _program(dest, "far", original.replace(str(count), str(count) + "3"),
                   'echo "boxes = 11"; echo "sum = 2.5"; echo PASS\n')
    (dest / "build.json").write_text(json.dumps({"programs": [varies, wrong, far]}))
    result = run_folder(dest, None, control=True)
    rows = {r["program"]: r for r in result["programs"]}
    v = rows["varies.cu"]
    assert v["status"] == "equal", v
    assert v["comparison"]["lines_varying"] == 1 and v["comparison"]["lines_compared"] == 2
    assert v["comparison"]["varying"] == [{"line": 1, "expected": "boxes = 3", "control": "boxes = 6",
                                           "actual": "boxes = 5"}]
    assert v["control"]["status"] == 0 and v["control"]["lines_varying"] == 1
    w = rows["wrong.cu"]
    assert w["status"] == "mismatch" and [m["line"] for m in w["comparison"]["mismatches"]] == [2]
    assert result["summary"]["varying"] == 2 and result["summary"]["equal"] == 1
    # 11 lies past what the original itself varies by (3 and 6, widened by 3 each side)
    f = rows["far.cu"]
    assert f["status"] == "mismatch" and "outside the original's own range" in f["comparison"]["mismatches"][0]["why"]
    again = run_folder(dest, None)  # no control: the varying line is a mismatch
    assert {r["program"]: r["status"] for r in again["programs"]} == \
        {"varies.cu": "mismatch", "wrong.cu": "mismatch", "far.cu": "mismatch"}
    assert "control" not in again["programs"][0]
