"""`migrate bench --traces`: original against migrated at the programs' own sizes (issue 17).

No GPU here: the selection of launches from a traces folder, the byte accounting of recorded
launches, the fast_p maths on hand-made timings, the timing loop and the whole command dry-run on
the CPU (TileLang's C target, the original's times written by hand as the GPU recorder writes
them), exit 2 without a GPU; the GPU recorder's timing code is compiled by nvcc where there is one."""
from __future__ import annotations

import json
import shutil

import pytest

from migrate.cli import main
from migrate.runtime.bench_traces import (TraceRow, fast_p, flush_bytes, gemm_flops, kernel_summary, summary,
                                          time_cold, traffic)
from migrate.runtime.build import find_cxx
from tests.paths import FIXTURES

PROGRAM = FIXTURES / "runtime" / "record_sizes.cu"
needs_cxx = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")


def _row(kernel, status, ratio=None, launch=0, form="tile", program="p"):
    return TraceRow(program, "f.cu", kernel, launch, form, status, ratio=ratio,
                    original_ms=1.0 if ratio else None, migrated_ms=ratio)


def test_fast_p_counts_correct_kernels_at_least_p_times_as_fast():
    rows = [_row("twice", "pass", 0.4), _row("even", "pass", 1.0), _row("slower", "pass", 1.25),
            _row("wrong", "fail"), _row("crashed", "error"),
            _row("half", "pass", 0.5), _row("half", "fail", launch=1),  # one launch fails: not correct
            _row("two", "pass", 0.25), _row("two", "pass", 1.0, launch=1),  # geometric mean 0.5
            _row("unjudged", "skipped"), _row("untimed", "untimed")]
    kernels = {k["kernel"]: k for k in kernel_summary(rows)}
    assert set(kernels) == {"twice", "even", "slower", "wrong", "crashed", "half", "two"}
    assert kernels["two"]["ratio"] == pytest.approx(0.5) and kernels["two"]["speedup"] == pytest.approx(2.0)
    assert not kernels["half"]["correct"] and kernels["half"]["ratio"] is None
    ks = list(kernels.values())
    assert fast_p(ks, 0) == pytest.approx(4 / 7)  # twice, even, slower, two
    assert fast_p(ks, 1) == pytest.approx(3 / 7)  # not slower: twice, even, two
    assert fast_p(ks, 2) == pytest.approx(2 / 7)  # twice (2.5x), two (2.0x)
    assert fast_p([], 1) is None
    s = summary(rows)
    assert (s["judged"], s["correct"], len(s["kernels"])) == (7, 4, 7)
    assert s["geomean"] == pytest.approx((0.4 * 1.0 * 1.25 * 0.5) ** 0.25) and s["slowest"] == 1.25
    assert s["by_form"]["tile"]["fast_2"] == pytest.approx(2 / 7)
    assert s["correct_fast_1"] == pytest.approx(3 / 4) and s["correct_fast_2"] == pytest.approx(2 / 4)
    assert s["over_1_1"] == ["p:slower"]
    assert sum(s["not_judged"].values()) == 2
    rows = [TraceRow("p", "f", "k", i, "tile", "skipped", message=f"launch {i} was not recorded (budget: {i} bytes)")
            for i in range(3)]
    assert summary(rows)["not_judged"] == {"launch N was not recorded (budget": 3}


def test_the_timing_loop_puts_inputs_back_before_each_launch_and_keeps_the_rounds_after_warmup():
    events = []
    samples = time_cold(lambda: events.append("call"), lambda: events.append("restore"), rounds=4, warmup=2,
                        device="cpu")
    assert len(samples) == 4 and all(s >= 0 for s in samples)
    assert events == ["restore", "call"] * 6
    # past the budget, rounds stop once three are timed
    slow = time_cold(lambda: __import__("time").sleep(0.002), lambda: None, rounds=50, warmup=1,
                     budget_ms=1.0, device="cpu")
    assert len(slow) == 3
    assert flush_bytes(50 << 20) == 100 << 20 and flush_bytes(0) == 32 << 20


def test_timings_file_is_read_by_seq_and_a_new_recording_drops_an_old_one(tmp_path):
    from migrate.runtime.traces import TIMINGS_FILE, read_timings

    (tmp_path / TIMINGS_FILE).write_text('{"seq":0,"kernel":"k","number":0,"ms":[1.5,1.25]}\n'
                                         '{"seq":3,"kernel":"k","number":1,"ms":[],"skipped":"why"}\n{"seq":4,')
    got = read_timings(tmp_path)
    assert sorted(got) == [0, 3] and got[0]["ms"] == [1.5, 1.25] and got[3]["skipped"] == "why"
    assert read_timings(tmp_path / "none") == {}


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """The fixture program converted with its run recorded on the CPU executor (n = 301), and the
    original's times written as the GPU recorder writes them: scale's second launch untimed."""
    tmp = tmp_path_factory.mktemp("bench_traces")
    (tmp / "src").mkdir()
    shutil.copy(PROGRAM, tmp / "src" / "record_sizes.cu")
    out = tmp / "out"
    assert main(["convert", str(tmp / "src" / "record_sizes.cu"), "-o", str(out), "-q", "--check", "cpu",
                 "--run", "301"]) == 0
    traces = out / "traces" / "record_sizes"
    assert (traces / "manifest.jsonl").is_file()
    (traces / "timings.jsonl").write_text(
        '{"seq":0,"kernel":"scale","number":0,"warmup":2,"flush_bytes":1,"ms":[4.0,5.0,6.0]}\n'
        '{"seq":1,"kernel":"scale","number":1,"warmup":2,"flush_bytes":1,"ms":[],'
        '"skipped":"the launch changes __device__ globals, which the timing could not put back"}\n'
        '{"seq":2,"kernel":"shift","number":0,"warmup":2,"flush_bytes":1,"ms":[1e-6,1e-6,1e-6]}\n')
    return out


@needs_cxx
def test_recorded_launches_are_selected_by_program_and_counted_in_bytes(converted):
    from migrate.runtime.bench_traces import _work
    from migrate.runtime.replay import prepare

    report = json.loads((converted / "report.json").read_text())
    work = list(_work(converted, report, converted / "traces"))
    assert [(w[0], w[1], w[4].name, w[4].number, w[3]) for w in work] == [
        ("record_sizes", "record_sizes.cu", "scale", 0, "tile"),
        ("record_sizes", "record_sizes.cu", "scale", 1, "tile"),
        ("record_sizes", "record_sizes.cu", "shift", 0, "tile")]
    assert work[0][5]["ms"] == [4.0, 5.0, 6.0] and work[1][5]["skipped"].startswith("the launch changes")
    assert [w[4].name for w in _work(converted, report, converted / "traces", kernels={"shift"})] == ["shift"]
    assert list(_work(converted, report, converted / "missing")) == []
    scale = prepare(work[0][2], work[0][4], "c")
    assert traffic(scale) == 301 * 4 + 2 * 301 * 4  # x read; y read and written (it changed)
    shift = prepare(work[2][2], work[2][4], "c")  # launched on d + 150: from there to the end, changed
    assert traffic(shift) == 2 * 151 * 4


@needs_cxx
def test_bench_traces_dry_run_on_the_cpu(converted, tmp_path, capsys):
    out_json = tmp_path / "bench.json"
    rc = main(["bench", "--from", str(converted), "--traces", str(converted / "traces"), "--device", "cpu",
               "--rounds", "3", "--json", str(out_json)])
    assert rc == 1  # one launch was not timed
    printed = capsys.readouterr().out
    assert "record_sizes:scale@1" in printed and "the original was not timed" in printed
    assert "fast_0 100.0 %" in printed
    data = json.loads(out_json.read_text())
    rows = {(r["kernel"], r["launch"]): r for r in data["rows"]}
    scale = rows[("scale", 0)]
    assert scale["status"] == "pass" and scale["original_ms"] == 5.0 and len(scale["samples"]["migrated_ms"]) == 3
    assert scale["ratio"] == pytest.approx(scale["migrated_ms"] / 5.0) and scale["bytes"] == 3 * 301 * 4
    assert scale["migrated_gbs"] == pytest.approx(scale["bytes"] / (scale["migrated_ms"] * 1e-3) / 1e9)
    assert rows[("scale", 1)]["status"] == "skipped"
    s = data["summary"]
    assert (s["judged"], s["correct"], s["fast_0"]) == (2, 2, 1.0)
    # shift's original "took" 1 ns: the migrated one is slower on any machine; scale's 5 ms: faster
    assert s["fast_1"] == 0.5 and {k["kernel"]: k["speedup"] > 1 for k in s["kernels"]} == {"scale": True,
                                                                                        "shift": False}


@needs_cxx
def test_a_migrated_kernel_that_differs_is_counted_wrong(converted, tmp_path):
    from migrate.runtime.bench_traces import bench_traces

    copy = tmp_path / "out"
    shutil.copytree(converted, copy)
    module = copy / "record_sizes.py"
    text = module.read_text()
    changed = text.replace("v[i] = v[i] + by_", "v[i] = v[i] + by_ + 1")
    assert changed != text
    module.write_text(changed)
    rows, _ = bench_traces(copy, json.loads((copy / "report.json").read_text()), copy / "traces", device="cpu",
                           rounds=1)
    shift = [r for r in rows if r.kernel == "shift"][0]
    assert shift.status == "fail" and shift.migrated_ms is None
    assert summary(rows)["fast_0"] == 0.5


@needs_cxx
def test_after_a_sticky_error_the_later_launches_are_not_charged_to_their_kernels(converted, tmp_path, monkeypatch):
    """On a GPU one kernel's illegal address leaves the context unusable: every later launch of the
    process fails with that error (an H100 run charged 48 kernels with bn's fault). The launches
    after it are skipped, naming the launch that lost the context."""
    from migrate.runtime import bench_traces as bt

    copy = tmp_path / "out"
    shutil.copytree(converted, copy)
    module = copy / "record_sizes.py"
    text = module.read_text()
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("def make_scale("))
    broken = "".join(lines[:at + 1] + ["    raise RuntimeError('illegal address')\n"] + lines[at + 1:])
    assert broken != text
    module.write_text(broken)
    monkeypatch.setattr(bt, "_context_lost", lambda device: True)  # as torch finds it after such a fault
    rows, _ = bt.bench_traces(copy, json.loads((copy / "report.json").read_text()), copy / "traces", device="cpu",
                              rounds=1)
    first, *later = rows
    assert (first.kernel, first.status) == ("scale", "error") and "illegal address" in first.message
    assert later and all(r.status == "skipped" and "lost at record_sizes:scale@0" in r.message for r in later)
    assert summary(rows)["judged"] == 1


def test_bench_traces_needs_a_gpu_and_a_folder(tmp_path, capsys):
    torch = pytest.importorskip("torch")
    (tmp_path / "report.json").write_text(json.dumps({"files": [], "kernels": [], "programs": []}))
    assert main(["bench", "--from", str(tmp_path), "--traces", str(tmp_path / "missing")]) == 2
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "traces").mkdir()
    assert main(["bench", "--from", str(tmp_path), "--traces", str(tmp_path / "traces"), "--device", "cpu"]) == 2
    assert "no recorded launch" in capsys.readouterr().err
    if not torch.cuda.is_available():
        assert main(["bench", "--from", str(tmp_path), "--traces", str(tmp_path / "traces")]) == 2
        assert "needs a CUDA GPU" in capsys.readouterr().err


@needs_cxx
def test_a_recording_only_run_replays_nothing(tmp_path):
    from migrate.runtime.trace_check import TraceTarget, check_program

    shutil.copy(PROGRAM, tmp_path / "record_sizes.cu")
    assert main(["convert", str(tmp_path / "record_sizes.cu"), "-o", str(tmp_path / "out"), "-q"]) == 0
    forms = {"scale": ("tile", "", None, 4, False), "shift": ("tile", "", None, 3, False)}
    target = TraceTarget("record_sizes.cu", tmp_path / "out" / "record_sizes.py", ["scale", "shift"], forms)
    checks = check_program([target], tmp_path / "record_sizes.cu", ["64"], trace_dir=tmp_path / "t",
                           work_dir=tmp_path / "run", record_only=True)
    assert {(c.kernel, c.status) for c in checks} == {("scale", "skipped"), ("shift", "skipped")}
    assert [c.message for c in checks] == ["recorded only: 2 launches", "recorded only: 1 launches"]
    assert (tmp_path / "t" / "manifest.jsonl").is_file()
    checks = check_program([target], tmp_path / "record_sizes.cu", ["64"], trace_dir=tmp_path / "t2",
                           work_dir=tmp_path / "run2", build_only=True)
    assert [c.message for c in checks] == ["built only", "built only"] and not (tmp_path / "t2").exists()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="no nvcc")
def test_the_gpu_recorder_with_its_timing_builds(tmp_path):
    """The timing code of c2t_gpu_trace.h compiles and links (it runs only on a GPU)."""
    from migrate.runtime.gpu_record import build_program

    src = tmp_path / "p.cu"
    src.write_text(PROGRAM.read_text().replace(
        "shift_tail(dv, n, 7);", "cudaStream_t st; cudaStreamCreate(&st);\n"
        "    shift<<<1, 64, 0, st>>>(dv, 0, 1u);\n    shift_tail(dv, n, 7);"))
    exe = build_program(src, cache_dir=tmp_path / "cache")
    assert exe.is_file()


def test_gemm_flops_of_a_lifted_batched_gemm_and_none_for_other_kernels(tmp_path):
    """2 m n k per matrix of C, the batch from C's elements; the ceiling of the inputs' type."""
    torch = pytest.importorskip("torch")
    from migrate.runtime.tilelang_side import load_module
    from tests.paths import REPO

    assert main(["convert", str(REPO / "corpus" / "matmul" / "bmm_nt.cu"), "-o", str(tmp_path / "out"), "-q"]) == 0
    sig = load_module(tmp_path / "out" / "bmm_nt.py").KERNELS["bmm_nt"]
    assert [p[0] for p in sig.params] == ["A", "B", "C", "M", "N", "K", "alpha"]
    batch, m, n, k = 3, 4, 6, 5
    args = [torch.zeros(batch * m * k), torch.zeros(batch * n * k), torch.zeros(batch * m * n), m, n, k, 1.0]
    assert gemm_flops(sig, args) == (2 * batch * m * n * k, "fp32")
    assert main(["convert", str(REPO / "corpus" / "elementwise" / "saxpy.cu"), "-o", str(tmp_path / "o2"), "-q"]) == 0
    (saxpy,) = load_module(tmp_path / "o2" / "saxpy.py").KERNELS.values()
    assert gemm_flops(saxpy, [torch.zeros(8), torch.zeros(8), 2.0, 8]) == (0, "")


@needs_cxx
def test_prebuild_compiles_the_timed_launches_of_one_program(converted):
    from migrate.runtime.bench_traces import _load_report, prebuild

    _load_report(str(converted / "report.json"))
    # scale's first launch and shift's: scale's second was not timed by the original
    assert prebuild(str(converted), str(converted / "traces"), "record_sizes", None, "c") == 2
    assert prebuild(str(converted), str(converted / "traces"), "other", None, "c") == 0


def test_the_programs_to_time_are_those_with_a_passing_kernel_and_a_short_run():
    import importlib.util

    from tests.paths import REPO

    spec = importlib.util.spec_from_file_location("bench_realworld_replay", REPO / "bench" / "realworld_replay.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    rows = [{"program": "b", "status": "pass", "seconds": {"run": 2.0}},
            {"program": "a", "status": "pass", "seconds": {"run": 9.0}},
            {"program": "a", "status": "fail", "seconds": {"run": 9.0}},
            {"program": "c", "status": "fail", "seconds": {"run": 1.0}},
            {"program": "d", "status": "pass", "seconds": {}}]
    assert module.passing_programs(rows) == ["a", "b", "d"]
    assert module.passing_programs(rows, 3.0) == ["b", "d"]
