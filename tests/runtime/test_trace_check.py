"""Checks on a program's own launches (runtime/trace_check.py, ``--run``): a program sized from
argv has no spec and no automatic one; ``migrate convert --check cpu --run ARGS`` records its
launches and replays them into the migrated kernels; ``migrate check --from OUT --run`` does the
same on the folder, and fails on a changed kernel, naming the launch."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from migrate.cli import main
from migrate.runtime.build import find_cxx
from tests.paths import FIXTURES

pytestmark = pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")

PROGRAM = FIXTURES / "runtime" / "record_sizes.cu"


def _checks(out) -> dict:
    return {k["kernel"]: k["check"] for k in json.loads((out / "report.json").read_text())["kernels"]}


@pytest.fixture
def source(tmp_path):
    src = tmp_path / "src" / "record_sizes.cu"
    src.parent.mkdir()
    shutil.copy(PROGRAM, src)
    return src


def test_convert_checks_a_program_without_spec_on_its_own_launches(source, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "-q", "--check", "cpu", "--run", "300"]) == 0
    checks = _checks(out)
    assert {k: (c["status"], c["inputs"]) for k, c in checks.items()} == {"scale": ("pass", "trace"),
                                                                          "shift": ("pass", "trace")}
    assert "2 recorded launches" in checks["scale"]["message"] and checks["scale"]["launch"] == 0
    assert (out / "traces" / "record_sizes" / "manifest.jsonl").is_file()
    assert not (source.parent / "traces").exists()  # nothing written beside the source


def test_without_run_the_kernels_say_what_a_spec_must_state(source, tmp_path):
    out = tmp_path / "out"
    main(["convert", str(source), "-o", str(out), "-q", "--check", "cpu"])
    assert {c["status"] for c in _checks(out).values()} == {"skipped"}
    assert all("no spec" in c["message"] for c in _checks(out).values())


def test_check_from_a_folder_replays_and_a_changed_kernel_fails(source, tmp_path):
    out = tmp_path / "out"
    assert main(["convert", str(source), "-o", str(out), "-q"]) == 0
    assert main(["check", "--from", str(out), "--run", "300", "--record-launches", "1"]) == 0
    changed = tmp_path / "changed"  # a folder of its own: a module is imported once per path
    shutil.copytree(out, changed)
    module = changed / "record_sizes.py"
    text = module.read_text()
    assert "y[i] = a * x[i] + y[i]" in text
    module.write_text(text.replace("y[i] = a * x[i] + y[i]", "y[i] = a * x[i] - y[i]"))
    report = tmp_path / "check.json"
    assert main(["check", "--from", str(changed), "--run", "300", "--json", str(report)]) == 1
    (scale,) = [c for c in json.loads(report.read_text()) if c["kernel"] == "scale"]
    assert scale["status"] == "fail" and scale["inputs"] == "trace" and scale["launch"] == 0
    assert "recorded launch 0" in scale["message"]


def test_a_program_that_launches_nothing_says_so(tmp_path):
    src = tmp_path / "quiet.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n"
                   "int main(int argc, char** argv) { return argc > 5; }\n")
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "a b"])
    (check,) = _checks(out).values()
    assert check["status"] == "skipped" and "without launching it" in check["message"]


def test_the_program_reads_its_input_files_from_a_copy_of_its_folder(tmp_path):
    src = tmp_path / "prog" / "p.cu"
    src.parent.mkdir()
    (src.parent / "sizes.txt").write_text("200\n")
    src.write_text("""#include <cstdio>
#include <cuda_runtime.h>
__global__ void fill(int* v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) v[i] = i; }
int main() {
    FILE* f = fopen("sizes.txt", "r"); int n = 0;
    if (!f || fscanf(f, "%d", &n) != 1) return 2;
    fclose(f);
    f = fopen("sizes.txt", "w"); fprintf(f, "changed\\n"); fclose(f);   // the run writes where it runs
    int* d; cudaMalloc(&d, n * sizeof(int));
    fill<<<(n + 63) / 64, 64>>>(d, n);
    cudaFree(d);
    return 0;
}
""")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", ""]) == 0
    (check,) = _checks(out).values()
    assert check["status"] == "pass" and check["inputs"] == "trace", check
    assert (src.parent / "sizes.txt").read_text() == "200\n"  # the source folder is untouched
    assert (out / "run" / "p" / "sizes.txt").read_text() == "changed\n"


def test_a_program_of_several_units_is_built_whole_and_its_kernels_replayed(multi_unit, tmp_path):
    # kernels.cu holds the kernels and their launches, main.cu the main(), with a C++ and a C helper
    out = tmp_path / "out"
    main(["convert", str(multi_unit), "-o", str(out), "-q", "--check", "cpu", "--run", "3000"])
    checks = _checks(out)
    assert {k: (c["status"], c["inputs"], c["run"]) for k, c in checks.items()} == {
        "blend": ("pass", "trace", "ran to completion"), "count_keys": ("pass", "trace", "ran to completion")}
    (prog,) = json.loads((out / "report.json").read_text())["programs"]
    assert prog["main"] == "main.cu" and prog["files"] == ["kernels.cu", "main.cu"]
    assert (out / "traces" / "main" / "manifest.jsonl").is_file()


def test_a_changed_kernel_of_another_unit_fails_on_the_programs_launches(multi_unit, tmp_path):
    out = tmp_path / "out"
    main(["convert", str(multi_unit), "-o", str(out), "-q"])
    module = out / "kernels.py"
    text = module.read_text()
    assert text.count("w * a[i]") == 2  # the full-tile and the last-tile branch
    module.write_text(text.replace("w * a[i]", "w * b[i]"))
    report = tmp_path / "check.json"
    assert main(["check", "--from", str(out), "--run", "3000", "--json", str(report)]) == 1
    blend = next(c for c in json.loads(report.read_text()) if c["kernel"] == "blend")
    assert blend["status"] == "fail" and blend["inputs"] == "trace"


def test_cuda2tile_toml_gives_a_programs_arguments_and_working_folder(multi_unit, tmp_path):
    (multi_unit / "cuda2tile.toml").write_text('[run]\nargs = "777"\ntimeout = 60\ncwd = "work"\n')
    out = tmp_path / "out"
    main(["convert", str(multi_unit), "-o", str(out), "-q", "--check", "cpu"])  # no --run: the file asks for the run
    checks = _checks(out)
    assert {c["status"] for c in checks.values()} == {"pass"}
    assert "(777, ran to completion)" in checks["count_keys"]["message"]
    assert (out / "run" / "main" / "work").is_dir()


def test_a_bad_cuda2tile_toml_is_a_warning_and_run_arguments_still_apply(multi_unit, tmp_path, capsys):
    (multi_unit / "cuda2tile.toml").write_text("[run]\nargs = 12\n")
    out = tmp_path / "out"
    main(["convert", str(multi_unit), "-o", str(out), "-q", "--check", "cpu", "--run", "500"])
    assert "M9003" in capsys.readouterr().err
    assert {c["status"] for c in _checks(out).values()} == {"pass"}


def test_traces_travel_a_copied_folder_replays_them_without_its_sources(multi_unit, tmp_path):
    out = tmp_path / "out"
    main(["convert", str(multi_unit), "-o", str(out), "-q", "--check", "cpu", "--run", "2000"])
    assert sorted(p.name for p in (out / "traces" / "main").iterdir())[:2] == ["launch-00000.zlib",
                                                                              "launch-00001.zlib"]
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(out, elsewhere)
    shutil.rmtree(multi_unit)  # another machine: the sources are not there, the recording is
    report = tmp_path / "check.json"
    assert main(["check", "--from", str(elsewhere), "--json", str(report)]) == 0
    checks = {c["kernel"]: c for c in json.loads(report.read_text())}
    assert {k: (c["status"], c["inputs"]) for k, c in checks.items()} == {"blend": ("pass", "trace"),
                                                                          "count_keys": ("pass", "trace")}
    assert "(2000, ran to completion)" in checks["blend"]["message"]
    changed = tmp_path / "changed"  # a folder of its own: a module is imported once per path
    shutil.copytree(elsewhere, changed)
    module = changed / "kernels.py"
    text = module.read_text()
    assert text.count("T.truncmod(keys[i], bins)") == 2
    module.write_text(text.replace("T.truncmod(keys[i], bins)", "T.truncmod(keys[i], bins - 1)"))
    assert main(["check", "--from", str(changed), "--json", str(report)]) == 1
    assert {c["kernel"]: c["status"] for c in json.loads(report.read_text())}["count_keys"] == "fail"


TEMPLATES = FIXTURES / "runtime" / "record_templates.cu"


def test_template_instances_are_recorded_named_or_deduced_and_replayed(tmp_path):
    src = tmp_path / "record_templates.cu"
    shutil.copy(TEMPLATES, src)
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "300"])
    checks = _checks(out)
    # scale_t<T, 128> inside a template host function: float and double instances, BLOCK named;
    # add_t<<<...>>>(dy, dx, n): T deduced from the recorded pointer types
    assert {k: (c["status"], c["message"].split(" of ")[0]) for k, c in checks.items()} == {
        "scale_t": ("pass", "2 recorded launches"), "add_t": ("pass", "2 recorded launches")}
    from migrate.runtime.traces import read
    instances = [L.instance for L in read(out / "traces" / "record_templates")]
    assert instances == ["scale_t<float, 128>", "", "scale_t<double, 128>", ""]


def test_a_template_kernel_whose_value_argument_is_not_named_is_skipped_with_the_reason():
    from migrate.runtime.replay import template_arguments
    from migrate.runtime.tilelang_support import Signature
    from migrate.runtime.traces import Arg, Launch

    sig = Signature("k", None, (("x", "buffer", "T"), ("n", "scalar", "int32")), template=(("T", "type"), ("B", "value")))
    pointer = Arg("pointer", alloc=0, elem="f8")
    launch = Launch(0, "k", 0, (1, 1, 1), (32, 1, 1), 0, 0, (pointer, Arg("scalar", "i4", 5)))
    assert template_arguments(sig, launch) == (None, "the value of template parameter B (name it at the launch: "
                                                     "k<..., B>)")
    named = Launch(0, "k<T, 64>", 0, (1, 1, 1), (32, 1, 1), 0, 0, (pointer, Arg("scalar", "i4", 5)),
                   instance="k<double, 64>")
    assert template_arguments(sig, named) == (("double", "64"), "")
    one = Signature("k", None, (("x", "buffer", "T"),), template=(("T", "type"),))
    assert template_arguments(one, Launch(0, "k", 0, (1, 1, 1), (1, 1, 1), 0, 0, (pointer,))) == (("float64",), "")


def test_an_original_that_does_not_repeat_its_launch_is_its_own_finding_not_a_migration_failure(tmp_path):
    src = tmp_path / "record_race.cu"
    shutil.copy(FIXTURES / "runtime" / "record_race.cu", src)
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "256"])
    (check,) = _checks(out).values()
    # the kernel alone on the launch's recorded inputs, forward and reverse: no second run of the program
    assert check["status"] == "error" and "computes its recorded launch 0 differently" in check["message"]
    (finding,) = check["findings"]
    assert finding.startswith("original order-dependent: run alone on recorded launch 0's inputs, rotate_racy "
                              "leaves other results with its threads in reverse order than in forward order (out: ")
    assert not (out / "traces" / "record_race" / "again").exists()


def test_record_on_cuda_builds_the_program_with_nvcc_and_needs_a_gpu(multi_unit, tmp_path):
    from migrate.runtime.gpu_record import build_program, find_nvcc

    if find_nvcc() is None:
        pytest.skip("no nvcc")
    # the build: every unit through nvcc (gcc for the C unit), launches rewritten to record
    exe = build_program(multi_unit / "main.cu",
                        [multi_unit / name for name in ("kernels.cu", "host_util.cpp", "keys.c")])
    assert exe.is_file() and exe.stat().st_mode & 0o111
    import torch
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: bench/gpu_replay.sh covers the run")
    out = tmp_path / "out"
    main(["convert", str(multi_unit), "-o", str(out), "-q", "--check", "cpu", "--run", "300", "--record-on", "cuda"])
    assert {(c["status"], c["message"]) for c in _checks(out).values()} == {
        ("error", "--record-on cuda needs a CUDA GPU on this machine; none was found")}


def test_a_replay_that_wrote_outside_a_buffer_fails_the_check_with_its_message():
    from migrate.runtime.kernel_check import KernelCheck
    from migrate.runtime.replay import Replay
    from migrate.runtime.trace_check import _judge

    outside = Replay("k", 0, "fail", "y: the migrated kernel wrote outside the buffer, element 302 (past its end; "
                                     "1 element of the red zone changed)")  # no comparison was made
    check = KernelCheck("f.cu", "k", "k@trace", "cpu", "skipped", inputs="trace")
    _judge(check, [object()], Path("m.py"), "c", ["300"], "ran to completion", lambda *a: outside)
    assert check.status == "fail" and check.launch == 0 and check.max_abs_err is None
    assert check.message == f"recorded launch 0 of 1: {outside.message}"


def test_template_kernels_launched_with_deduced_or_bool_arguments_build_record_and_replay(tmp_path):
    """``axpy<threads>(2.0f, y, x, n)`` names no whole instance (T is deduced from the pointers): the
    program built (``&axpy<threads>`` named no function), and its launch is recorded as written;
    ``shade<true>``'s bool argument is spelled ``true`` in its instance."""
    src = tmp_path / "src" / "record_deduced.cu"
    src.parent.mkdir()
    shutil.copy(FIXTURES / "runtime" / "record_deduced.cu", src)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "300"]) == 0
    checks = _checks(out)
    assert (checks["shade"]["status"], checks["shade"]["inputs"]) == ("pass", "trace")
    # BLOCK is written as a name of the host code: no value to replay it with, and the reason
    assert checks["axpy"]["status"] == "skipped" and "the value of template parameter BLOCK" in checks["axpy"]["message"]
    launches = [json.loads(line) for line in (out / "traces" / "record_deduced" / "manifest.jsonl").open()]
    assert [(d["kernel"], d.get("instance")) for d in launches] == [("axpy<threads>", None),
                                                                   ("shade<true>", "shade<true>")]


def test_a_written_template_argument_the_recording_cannot_resolve_is_named():
    from migrate.runtime.replay import template_arguments
    from migrate.runtime.tilelang_support import Signature
    from migrate.runtime.traces import Arg, Launch

    sig = Signature("axpy", None, (("a", "scalar", "float32"), ("y", "buffer", "T")),
                    template=(("BLOCK", "value"), ("T", "type")))
    args = (Arg("scalar", "f4", 2.0), Arg("pointer", alloc=0, elem="f4"))
    launch = Launch(0, "axpy<128>", 0, (1, 1, 1), (128, 1, 1), 0, 0, args)
    assert template_arguments(sig, launch) == (("128", "float32"), "")
    named = Launch(0, "axpy<threads>", 0, (1, 1, 1), (128, 1, 1), 0, 0, args)
    assert template_arguments(sig, named) == (None, "the value of template parameter BLOCK "
                                                    "(name it at the launch: k<..., BLOCK>)")


@pytest.mark.parametrize("program", ["record_deduced.cu", "record_constant.cu"])
def test_nvcc_builds_the_recording_program(program):
    """Launches that leave template arguments to deduction; __constant__ symbols registered to be
    read with cudaMemcpyFromSymbol at each recorded launch."""
    from migrate.runtime.gpu_record import build_program, find_nvcc

    if find_nvcc() is None:
        pytest.skip("no nvcc")
    exe = build_program(FIXTURES / "runtime" / program)
    assert exe.is_file() and exe.stat().st_mode & 0o111


def test_arguments_into_one_allocation_replay_as_views_of_one_buffer(tmp_path):
    """In place (twice_plus(d, d, n)) and arrays carved out of one cudaMalloc (add3(d, d + n,
    d + 2n)): each argument a view of one buffer from its own offset, the allocation compared
    once; a changed kernel still fails, naming the aliased buffer."""
    src = tmp_path / "src" / "record_alias.cu"
    src.parent.mkdir()
    shutil.copy(FIXTURES / "runtime" / "record_alias.cu", src)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "300"]) == 0
    checks = _checks(out)
    assert {k: (c["status"], c["inputs"]) for k, c in checks.items()} == {"twice_plus": ("pass", "trace"),
                                                                          "add3": ("pass", "trace")}
    changed = tmp_path / "changed"
    shutil.copytree(out, changed)
    module = changed / "record_alias.py"
    text = module.read_text()
    assert text.count("c[i] = a[i] - 3.0 * b[i]") == 2  # the full tiles and the last tile
    module.write_text(text.replace("c[i] = a[i] - 3.0 * b[i]", "c[i] = a[i] - 3.5 * b[i]"))
    report = tmp_path / "changed.json"
    assert main(["check", "--from", str(changed), "--json", str(report)]) == 1
    failed = {c["kernel"]: c for c in json.loads(report.read_text())}["add3"]
    assert failed["status"] == "fail" and failed["message"].startswith("recorded launch 0 of 1: a = b = c: ")


def test_constant_symbols_are_recorded_and_replayed(tmp_path):
    """__constant__ taps filled by cudaMemcpyToSymbol (and an initialised one): each recorded
    launch holds their bytes, and the migrated kernel replays with them; a kernel that reads
    them wrong fails."""
    src = tmp_path / "src" / "record_constant.cu"
    src.parent.mkdir()
    shutil.copy(FIXTURES / "runtime" / "record_constant.cu", src)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "300"]) == 0
    (check,) = _checks(out).values()
    assert (check["status"], check["inputs"]) == ("pass", "trace"), check["message"]
    from migrate.runtime.traces import read
    (launch,) = read(out / "traces" / "record_constant")
    taps = np.frombuffer(launch.symbols["c_taps"], np.float32)
    np.testing.assert_allclose(taps, 0.1 * np.arange(1, 6) * (300 % 7 + 1), rtol=1e-6)
    assert np.frombuffer(launch.symbols["c_shift"], np.int32).tolist() == [1, -1]
    changed = tmp_path / "changed"
    shutil.copytree(out, changed)
    module = changed / "record_constant.py"
    text = module.read_text()
    assert "c_taps[k]" in text
    module.write_text(text.replace("c_taps[k]", "c_taps[4 - k]"))
    report = tmp_path / "changed.json"
    assert main(["check", "--from", str(changed), "--json", str(report)]) == 1


def test_a_program_that_fails_half_way_is_a_coded_diagnostic_on_each_of_its_kernels(tmp_path):
    """The run exits with status 2 after the first launch (a missing input file): the kernel it
    launched is checked on that launch, the other is skipped, and both carry M4001 saying so."""
    src = tmp_path / "src" / "record_exit.cu"
    src.parent.mkdir()
    shutil.copy(FIXTURES / "runtime" / "record_exit.cu", src)
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "100"])
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["first"]["check"]["status"] == "pass" and kernels["second"]["check"]["status"] == "skipped"
    notes = {name: [(d["code"], d["message"]) for d in k["diagnostics"] if d["code"].startswith("M4")]
             for name, k in kernels.items()}
    assert notes == {
        "first": [("M4001", "the program's run exited with status 2; this kernel's recorded launches were replayed")],
        "second": [("M4001", "the program's run exited with status 2; this kernel was not launched before it")]}
    assert all(d["line"] for k in kernels.values() for d in k["diagnostics"] if d["code"] == "M4001")


def test_a_run_stopped_at_its_time_limit_is_a_note_on_the_kernels_it_did_not_reach(tmp_path, source):
    out = tmp_path / "out"
    main(["convert", str(source), "-o", str(out), "-q", "--check", "cpu", "--run", "50000000",
          "--run-timeout", "1"])
    kernels = json.loads((out / "report.json").read_text())["kernels"]
    codes = {k["kernel"]: [d["code"] for d in k["diagnostics"] if d["code"].startswith("M4")] for k in kernels}
    assert codes == {"scale": ["M4002"], "shift": ["M4002"]}


#: A program that times one kernel over many launches before it gets to the next, as benchmark
#: programs do: on the CPU executor the repeats of `spin` take the whole run's time.
TIMED = """
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
__global__ void spin(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; for (int k = 0; k < 64; ++k) v = v * 0.999f + 0.5f; x[i] = v; }
}
__global__ void halve(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] * 0.5f + 1.0f;
}
int main(int argc, char** argv) {
    int n = atoi(argv[1]), repeat = atoi(argv[2]);
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 97) * 0.25f;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    for (int r = 0; r < repeat; ++r) spin<<<(n + 255) / 256, 256>>>(x, n);
    halve<<<(n + 255) / 256, 256>>>(x, y, n);
    cudaMemcpy(h, y, n * sizeof(float), cudaMemcpyDeviceToHost);
    printf("%f\\n", h[n - 1]);
    return 0;
}
"""


def test_fast_forward_skips_a_kernels_launches_after_its_recorded_ones(tmp_path):
    src = tmp_path / "src" / "timed.cu"
    src.parent.mkdir()
    src.write_text(TIMED)
    run = ["--run", "262144 100000", "--run-timeout", "10"]
    slow, fast = tmp_path / "slow", tmp_path / "fast"
    main(["convert", str(src), "-o", str(slow), "-q", "--check", "cpu", *run])
    checks = _checks(slow)
    assert checks["spin"]["status"] == "pass"  # its first launches are recorded before the time runs out
    assert checks["halve"]["status"] == "skipped" and "timed out without launching it" in checks["halve"]["message"]
    assert main(["convert", str(src), "-o", str(fast), "-q", "--check", "cpu", *run, "--fast-forward"]) == 0
    checks = _checks(fast)
    assert {k: (c["status"], c["inputs"]) for k, c in checks.items()} == {"spin": ("pass", "trace"),
                                                                          "halve": ("pass", "trace")}
    assert checks["halve"]["run"] == "ran to completion"
    assert json.loads((fast / "traces" / "timed" / "run.json").read_text())["fast_forward"] is True
    assert src.read_text() == TIMED


def test_overloads_of_one_name_in_two_files_are_each_replayed_on_their_own_launches(tmp_path):
    """Two kernels named ``gather`` in two headers (keys only: 4 parameters; keys and values: 6):
    each file's kernel is replayed on the launches with its own parameters; a run that launches
    only one overload says so for the other instead of refusing the wrong launch ("the launch
    passes 4 arguments, the kernel takes 6")."""
    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "runtime" / "overloads", src)
    for args, both in (("700", True), ("700 keys", False)):
        out = tmp_path / f"out{both}"
        assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", args]) == 0
        report = json.loads((out / "report.json").read_text())
        checks = {Path(k["file"]).name: k["check"] for k in report["kernels"] if k["kernel"] == "gather"}
        assert (checks["keys.cuh"]["status"], checks["keys.cuh"]["inputs"]) == ("pass", "trace"), checks
        assert "1 recorded launch of" in checks["keys.cuh"]["message"], checks
        pairs = checks["pairs.cuh"]
        if both:
            assert (pairs["status"], pairs["inputs"]) == ("pass", "trace"), pairs
        else:
            assert pairs["status"] == "skipped" and "without launching it (only an overload" in pairs["message"], pairs


def test_a_run_out_of_memory_or_crashed_says_so_not_just_its_exit_status(tmp_path):
    """A cudaMalloc refused under --max-memory leaves a null pointer the kernel writes through: the
    run is reported as out of memory, with the limit (it was "exited with status 86"); a crash in
    host code after the kernel's launch names the signal, and the launch is still replayed."""
    src = tmp_path / "src" / "record_alloc.cu"
    src.parent.mkdir()
    shutil.copy(FIXTURES / "runtime" / "record_alloc.cu", src)
    out = tmp_path / "big"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "400000000", "--max-memory", "1GiB"])
    fill = _checks(out)["fill"]
    assert fill["status"] == "skipped" and fill["run"] == "ran out of memory (limit 1 GiB, --max-memory)", fill
    assert "without launching it" in fill["message"], fill
    out = tmp_path / "crash"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "3000 crash"])
    fill = _checks(out)["fill"]
    assert fill["run"] == "crashed (SIGSEGV, a write at 0x0)", fill
    assert (fill["status"], fill["inputs"]) == ("pass", "trace"), fill


def test_a_launch_past_the_trace_budget_is_still_its_kernels_and_says_so(tmp_path):
    """The launch of an overloaded name past the trace budget has no recorded arguments: it is not
    taken for the other overload's; the check names the budget."""
    from migrate.runtime.checker import kernel_forms
    from migrate.runtime.trace_check import check_traces

    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "runtime" / "overloads", src)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    entry = next(e for e in report["files"] if e["file"].endswith("keys.cuh"))
    forms = kernel_forms(report)[entry["file"]]
    assert forms["gather"][3] == 4
    checks = check_traces(out / entry["output"], src / "main.cu", ["gather"], forms, ["700", "keys"],
                          trace_dir=tmp_path / "t", work_dir=tmp_path / "w", budget=64, source_dir=src)
    assert len(checks) == 1 and checks[0].status == "skipped", checks
    assert "past the trace budget" in checks[0].message, checks[0].message


def test_a_cu_file_included_by_the_main_file_is_parsed_in_its_place(tmp_path):
    """``#include "kernels.cu"`` after ``#include "util.h"`` in main.cu: kernels.cu alone has no
    ``real_2_t`` or ``SCALE`` (its kernels were unsupported, M1101); parsed after main.cu's lines
    above the ``#include`` it converts, and its kernels pass on the program's launches."""
    from migrate.parse.frontend import includers

    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "runtime" / "included_kernels", src)
    found = includers([src / "kernels.cu", src / "main.cu"])
    assert found == {str((src / "kernels.cu").resolve()): (str(src / "main.cu"), 4)}
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "1000"]) == 0
    report = json.loads((out / "report.json").read_text())
    kernels = {k["kernel"]: k for k in report["kernels"]}
    assert set(kernels) == {"twist", "scale"}
    for k in kernels.values():
        assert k["form"] not in ("hybrid", "unsupported") and not [d for d in k["diagnostics"] if d["code"] in ("M1101", "M1001")], k
        assert (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), k["check"]
    assert "c2t-context" not in (out / "report.json").read_text()  # the includer's lines are not reported here


def test_a_header_reached_through_a_chain_of_includers_is_parsed_in_its_place(tmp_path):
    """main.cu (FULLMASK, fp) includes work.cu (SCALE), which includes other.cuh (a kernel named
    like one of kernels.cuh) and kernels.cuh; two headers include each other behind guards. kernels.cuh is read after main.cu's and work.cu's lines above
    their ``#include``s (alone it has no ``fp``: M1101), the include cycle ends, and its kernels
    pass on the program's launches."""
    from migrate.parse.frontend import includers

    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "runtime" / "included_chain", src)
    found = includers(sorted(src.iterdir()))
    assert found[str((src / "kernels.cuh").resolve())] == (str(src / "work.cu"), 3)
    assert found[str((src / "work.cu").resolve())][0] == str(src / "main.cu")
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "1000"]) == 0
    report = json.loads((out / "report.json").read_text())
    # other.cuh's scale(double*), read first, does not hide kernels.cuh's own scale
    assert sorted((k["file"], k["kernel"]) for k in report["kernels"]) == [
        ("kernels.cuh", "scale"), ("kernels.cuh", "warp_sums"), ("other.cuh", "scale")]
    kernels = {k["kernel"]: k for k in report["kernels"] if k["file"] == "kernels.cuh"}
    for k in kernels.values():
        assert k["file"] == "kernels.cuh" and k["form"] not in ("hybrid", "unsupported"), k
        assert (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), k["check"]


def test_a_cu_file_a_host_source_includes_is_parsed_in_its_place(tmp_path):
    """main.cu (myInt, real, BLOCK) includes moves.cpp (FLAG_OFFSET), which includes kernels.cu:
    the chain runs through a host source that is not converted. Alone kernels.cu has none of
    those names (M1101, M1001); read after main.cu's and moves.cpp's lines above their
    ``#include``s its kernels convert, the qualified call ``moves::put(...)`` of a template kernel
    (unresolved until instantiation) reaches its device function, and both pass on the program's
    launches."""
    from migrate.parse.frontend import includers

    src = tmp_path / "src"
    shutil.copytree(FIXTURES / "runtime" / "included_by_host", src)
    found = includers([src / "kernels.cu", src / "main.cu"])
    assert found[str((src / "kernels.cu").resolve())] == (str((src / "moves.cpp").resolve()), 4)
    assert found[str((src / "moves.cpp").resolve())] == (str(src / "main.cu"), 8)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "1000"]) == 0
    report = json.loads((out / "report.json").read_text())
    kernels = {k["kernel"]: k for k in report["kernels"]}
    assert set(kernels) == {"mark", "keep"}
    for k in kernels.values():
        assert k["form"] not in ("hybrid", "unsupported"), k
        assert not [d for d in k["diagnostics"] if d["code"] in ("M1101", "M1001", "M1209")], k
        assert (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), k["check"]


def test_an_original_whose_threads_order_decides_its_result_is_its_own_finding(tmp_path):
    """Written the way hungarian's step_4 is: threads cover rows and uncover columns through
    volatile __device__ flags that other threads read between the same barriers. The replay
    differs from the recording, and the original kernel, run alone on the launch's recorded
    inputs (its __device__ globals, a bool among them), leaves other results in reverse order
    than in forward order: an error naming that, with no second run of the whole program."""
    src = tmp_path / "record_cover_race.cu"
    shutil.copy(FIXTURES / "runtime" / "record_cover_race.cu", src)
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "7"])
    (check,) = _checks(out).values()
    assert check["status"] == "error" and check["launch"] == 0
    assert "computes its recorded launch 0 differently with its threads in another order" in check["message"]
    assert "Replay said: recorded launch 0 of 1: cover_row:" in check["message"]
    (finding,) = check["findings"]
    assert finding.startswith("original order-dependent: run alone on recorded launch 0's inputs, prime_zeros "
                              "leaves other results with its threads in reverse order than in forward order (")
    assert finding.endswith("alone in forward order it left what the recording holds)")
    assert not (out / "traces" / "record_cover_race" / "again").exists()


def _launch(before: dict, after: dict) -> "Launch":
    from migrate.runtime.traces import Launch
    return Launch(0, "k", 0, (1, 1, 1), (32, 1, 1), 0, 0, (), globals_before=before, globals_after=after)


def test_a_whole_program_run_again_compares_the_device_globals_of_the_launch():
    """A kernel that reads and writes only __device__ globals (no arguments): the second run's
    globals are compared, before (inputs that moved: not judged) and after (not repeatable)."""
    from migrate.runtime.kernel_check import KernelCheck
    from migrate.runtime.trace_check import _flag_unrepeatable
    from migrate.runtime.traces import Recording

    def recording(before, after):
        return Recording(0, "", "", (_launch({"g": before}, {"g": after}),))

    def flagged(first, again):
        check = KernelCheck("f.cu", "k", "k@trace", "cpu", "fail", inputs="trace", launch=0, message="m")
        _flag_unrepeatable(check, first, again)
        return check

    moved = flagged(recording(b"\1\0", b"\2\0"), recording(b"\1\0", b"\3\0"))
    assert moved.status == "error" and "does not repeat its own recorded launch 0" in moved.message
    assert moved.findings == ["original not repeatable: launch 0 of k left different bytes in __device__ global "
                              "'g' when its threads ran in reverse order"]
    inputs = flagged(recording(b"\1\0", b"\2\0"), recording(b"\4\0", b"\3\0"))
    assert inputs.status == "fail" and "inputs to this launch differ between two runs" in inputs.findings[0]
    same = flagged(recording(b"\1\0", b"\2\0"), recording(b"\1\0", b"\2\0"))
    assert same.status == "fail" and same.findings == []
