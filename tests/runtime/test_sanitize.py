"""compute-sanitizer runs of both sides (``migrate check --device cuda --sanitize``, runtime/sanitize.py).

The logs under tests/fixtures/runtime/sanitize/logs were written by compute-sanitizer on an H200
for this folder's own kernels (bench/gpu_sanitize.sh keeps them); the parser is tested on them.
The end-to-end tests need a GPU and compute-sanitizer and are skipped elsewhere.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from migrate.runtime import sanitize
from migrate.runtime.cuda_gpu import gpu_available
from migrate.runtime.kernel_check import KernelCheck
from tests.paths import REPO

FIX = REPO / "tests" / "fixtures" / "runtime" / "sanitize"
LOGS = FIX / "logs"

needs_sanitizer = pytest.mark.skipif(not gpu_available() or sanitize.find_sanitizer() is None,
                                     reason="needs an NVIDIA GPU and compute-sanitizer")


def test_tools_all_and_subsets():
    assert sanitize.parse_tools(None) == sanitize.TOOLS
    assert sanitize.parse_tools("all") == ("memcheck", "racecheck", "synccheck", "initcheck")
    assert sanitize.parse_tools("racecheck, memcheck,racecheck") == ("racecheck", "memcheck")
    with pytest.raises(ValueError, match="racechek"):
        sanitize.parse_tools("memcheck,racechek")


def test_wrapper_runs_one_tool_into_a_log(tmp_path):
    exe = tmp_path / "compute-sanitizer"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    cmd = sanitize.wrapper("racecheck", str(tmp_path / "r.log"), sanitizer=str(exe))
    assert cmd[0] == str(exe)
    assert cmd[cmd.index("--tool") + 1] == "racecheck"
    assert cmd[cmd.index("--log-file") + 1] == str(tmp_path / "r.log")
    assert cmd[cmd.index("--destroy-on-device-error") + 1] == "kernel"  # the next run keeps its context
    with pytest.raises(ValueError):
        sanitize.wrapper("leakcheck", "x.log", sanitizer=str(exe))


def test_no_sanitizer_is_named(monkeypatch, tmp_path):
    for var in ("COMPUTE_SANITIZER", "CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(sanitize.os.path, "isfile", lambda p: False)
    assert sanitize.find_sanitizer() is None
    with pytest.raises(sanitize.SanitizerUnavailable, match="compute-sanitizer not found"):
        sanitize.wrapper("memcheck", "x.log")


def _finding(tool, severity="error", function="k"):
    return sanitize.Finding(tool=tool, severity=severity, text="Race reported between Write access and Read access",
                            function=function, where="k.cu:12")


def _check(status, message="1 output(s) equal within fp32"):
    return KernelCheck("k.cu", "k", "k", "cuda", status, message=message)


def _log(name: str) -> str:
    return (LOGS / f"{name}.log").read_text()


def test_parse_racecheck_of_a_migrated_module():
    """A barrier deleted at the end of block_sum's loop of phases, and racy_neighbour's race kept
    from its original: one record per race, the hazards of its accesses summed, errors (between
    warps) apart from warnings (within a warp)."""
    found = sanitize.parse_log(_log("mutant.racecheck.migrated"), "racecheck")
    assert [(f.severity, f.function, f.count) for f in found] == [
        ("error", "block_sum_kernel", 1536), ("warning", "block_sum_kernel", 768),
        ("warning", "block_sum_kernel", 384), ("warning", "block_sum_kernel", 192),
        ("warning", "block_sum_kernel", 96), ("warning", "block_sum_kernel", 32),
        ("error", "racy_neighbour_kernel", 4000)]
    assert found[0].text == "Race reported between Write access and Read access"
    assert found[0].where == "tvm_kernels.cu:36"  # the CUDA TileLang generated
    by = sanitize.attribute(found, ["block_sum", "racy_neighbour"])
    assert len(by["block_sum"]) == 6 and len(by["racy_neighbour"]) == 1 and by[""] == []


def test_parse_racecheck_of_an_original_and_a_clean_log():
    (race,) = sanitize.parse_log(_log("racy_neighbour.racecheck.original"), "racecheck")
    assert (race.severity, race.function, race.count) == ("error", "racy_neighbour", 4000)
    assert str(race) == ("racecheck: Race reported between Write access and Read access in racy_neighbour "
                         "[4000 hazards]")
    assert sanitize.parse_log(_log("hazards.memcheck.migrated"), "memcheck") == []


def test_parse_memcheck_of_both_sides():
    """A write past the buffer (oob.cu: y[i * stride]): the original built with -lineinfo names its
    line; the migrated kernel names the generated function and line."""
    orig = sanitize.parse_log(_log("oob.memcheck.original"), "memcheck")
    assert len(orig) == 2 and orig[0].text == "Invalid __global__ write of size 4 bytes"
    assert (orig[0].function, orig[0].where, orig[0].thread) == ("strided_copy", "oob.cu:9",
                                                                 "thread (0,0,0) in block (2,0,0)")
    mig = sanitize.parse_log(_log("oob.memcheck.migrated"), "memcheck")
    assert [(f.function, f.where) for f in mig] == [("strided_copy_kernel", "tvm_kernels.cu:22")] * 2
    assert mig[1].thread == "thread (129,0,0) in block (0,0,0)"  # host frames are not findings
    assert sanitize.attribute(mig, ["strided_copy"])["strided_copy"] == mig


def test_judge_a_tool_that_did_not_finish_is_not_clean():
    c = _check("fail", "y: 1023 of 1024 elements differ")
    orig = sanitize.parse_log(_log("oob.memcheck.original"), "memcheck")
    sanitize.judge(c, orig, [], ("memcheck", "racecheck", "initcheck"), {"racecheck", "initcheck"})
    assert c.status == "error" and "M4031: the original has an invalid memory access" in c.message
    assert "oob.cu:9" in c.message
    assert "racecheck, initcheck: a side did not run to its end" in c.message
    assert "clean on both sides" not in c.message


def test_judge_a_finding_of_the_migrated_kernel_alone_fails_the_check():
    c = _check("pass")
    sanitize.judge(c, [], [_finding("racecheck")], ("memcheck", "racecheck"))
    assert c.status == "fail"
    assert c.message.startswith("M4030: the migrated kernel has a shared-memory race")
    assert "memcheck: clean on both sides" in c.message
    assert [s["side"] for s in c.sanitizer] == ["migrated"]


def test_judge_a_finding_of_the_original_is_its_own():
    passed = _check("pass")
    sanitize.judge(passed, [_finding("racecheck")], [_finding("racecheck")], ("racecheck",))
    assert passed.status == "pass"  # the migration kept what the original does
    assert "M4031: the original has a shared-memory race" in passed.message
    assert "shares the original's racecheck findings" in passed.message
    failed = _check("fail", "y: 12 of 1000 elements differ")
    sanitize.judge(failed, [_finding("racecheck")], [], ("racecheck",))
    assert failed.status == "error"  # not a migration failure: the original's outputs are not defined
    assert "cannot judge the migration" in failed.message and "12 of 1000" in failed.message


def test_judge_warnings_do_not_fail_and_clean_runs_say_so():
    c = _check("pass")
    sanitize.judge(c, [], [_finding("racecheck", severity="warning")], ("racecheck", "synccheck"))
    assert c.status == "pass"
    assert "compute-sanitizer synccheck: clean on both sides" in c.message
    c = _check("pass")
    sanitize.judge(c, [], [], sanitize.TOOLS)
    assert c.status == "pass" and "memcheck, racecheck, synccheck, initcheck: clean on both sides" in c.message


def test_attribute_by_the_generated_function():
    a, b = _finding("racecheck", function="block_sum_kernel"), _finding("memcheck", function="other_kernel")
    got = sanitize.attribute([a, b], ["block_sum", "racy"])
    assert got["block_sum"] == [a] and got["racy"] == [] and got[""] == [b]
    assert sanitize.attribute([b], ["racy"])["racy"] == [b]  # a module that ran one kernel


def _cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "migrate", *args], cwd=REPO, capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    out = tmp_path_factory.mktemp("hazards") / "out"
    p = _cli("convert", str(FIX / "hazards.cu"), "-o", str(out), "-q", "--no-lift")
    assert p.returncode in (0, 1), p.stderr
    return out


def test_sanitize_needs_the_gpu_check_and_known_tools(converted, tmp_path):
    p = _cli("check", "--from", str(converted), "--sanitize")
    assert p.returncode == 2 and "give --device cuda" in p.stderr
    p = _cli("check", "--from", str(converted), "--device", "cuda", "--sanitize", "memcheck,leaks")
    assert p.returncode == 2 and "unknown compute-sanitizer tool leaks" in p.stderr
    env = dict(os.environ, PATH=str(tmp_path), COMPUTE_SANITIZER=str(tmp_path / "none"), CUDA_HOME=str(tmp_path))
    env.pop("CUDA_PATH", None)
    p = subprocess.run([sys.executable, "-m", "migrate", "check", "--from", str(converted), "--device", "cuda",
                        "--sanitize"], cwd=REPO, capture_output=True, text=True, env=env, timeout=300)
    if not Path("/usr/local/cuda/bin/compute-sanitizer").exists():  # the one place the search still looks
        assert p.returncode == 2 and "compute-sanitizer not found" in p.stderr
    assert "Traceback" not in p.stderr


def _barrier_mutant(converted: Path, dest: Path) -> Path:
    """The converted folder with the barrier at the end of block_sum's loop of phases deleted."""
    shutil.copytree(converted, dest)
    module = dest / "hazards.py"
    text = module.read_text()
    loop = text.index("while stride > 0:")
    m = re.compile(r"\n\s*T\.sync_threads\(\)[^\n]*").search(text, loop)
    assert m, "block_sum's loop has a barrier"
    module.write_text(text[:m.start()] + text[m.end():])
    return dest


@needs_sanitizer
def test_gpu_racecheck_names_the_originals_race_and_passes_the_clean_kernel(converted, tmp_path):
    res = tmp_path / "check.json"
    p = _cli("check", "--from", str(converted), "--device", "cuda", "--sanitize", "--json", str(res))
    assert "Traceback" not in p.stderr, p.stderr
    rows = {r["kernel"]: r for r in json.loads(res.read_text())}
    clean = rows["block_sum"]
    assert clean["status"] == "pass", clean["message"]
    assert "memcheck, racecheck, synccheck, initcheck: clean on both sides" in clean["message"]
    racy = rows["racy_neighbour"]
    assert any(s["side"] == "original" and s["tool"] == "racecheck" for s in racy["sanitizer"]), racy
    assert "M4031" in racy["message"] and racy["status"] in ("pass", "error")
    assert p.returncode == (1 if racy["status"] == "error" else 0)


@needs_sanitizer
def test_gpu_racecheck_kills_a_deleted_barrier_at_the_end_of_a_loop(converted, tmp_path):
    mutant = _barrier_mutant(converted, tmp_path / "mutant")
    res = tmp_path / "check.json"
    p = _cli("check", "--from", str(mutant), "--device", "cuda", "--kernel", "block_sum", "--sanitize", "racecheck",
             "--json", str(res))
    (row,) = json.loads(res.read_text())
    assert row["status"] == "fail", row["message"]
    assert row["message"].startswith("M4030: the migrated kernel has a shared-memory race")
    assert any(s["side"] == "migrated" and s["function"].startswith("block_sum") for s in row["sanitizer"])
    assert p.returncode == 1
