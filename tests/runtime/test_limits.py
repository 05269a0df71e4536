"""Limits and isolation: a parse or a kernel run that hangs, crashes or eats memory costs only its
file or its kernel, with a coded diagnostic naming it; killing ``migrate`` leaves no process behind;
host code that does not compile does not stop the kernels whose own code does from being checked.
(runtime/limits.py, runtime/batch.py, runtime/exclude.py, migrate/parse_worker.py)"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from migrate.cli import main
from migrate.runtime import exclude, limits
from tests.paths import REPO

ADD = """
__global__ void {name}(int n, const float* x, float* y)
{{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + {value}.0f;
}}
"""


def spec(*names: str, extra: dict | None = None) -> str:
    """A spec of 1-D kernels (n, x, y) over 64 floats; ``extra`` names kernels (n, y) only."""
    out = []
    for name in names:
        out.append(f"""
[[kernel]]
name = "{name}"
grid = [2, 1, 1]
block = [32, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 64
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 64
role = "in"
range = [0.0, 1.0]
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 64
role = "out"
""")
    for name in extra or ():
        out.append(f"""
[[kernel]]
name = "{name}"
grid = [1, 1, 1]
block = [32, 1, 1]
tolerance = "fp32"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 32
[[kernel.args]]
name = "y"
buffer = "float32"
elements = 32
role = "inout"
range = [0.0, 1.0]
""")
    return "".join(out)


SPIN = """
__global__ void spin(int n, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    while (y[0] >= 0.0f) {
        if (i < n) y[i] = y[i] + 1.0f;
    }
}
"""

DIVIDE_BY_ZERO = """
__global__ void divide(int n, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = (float)(i / (n - 32));
}
"""


def write(folder: Path, name: str, code: str, toml: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(code))
    if toml is not None:
        path.with_suffix(".toml").write_text(toml)
    return path


def check_json(tmp_path: Path, *argv: str) -> tuple[int, dict, float]:
    out = tmp_path / "checks.json"
    start = time.monotonic()
    status = main(["check", *argv, "--json", str(out)])
    return status, {c["kernel"]: c for c in json.loads(out.read_text())}, time.monotonic() - start


def bomb(depth: int = 40) -> str:
    lines = ["#define E0 1"] + [f"#define E{i} (E{i - 1} + E{i - 1})" for i in range(1, depth)]
    return "\n".join(lines) + f"\n__global__ void boom(int* out) {{ out[0] = E{depth - 1}; }}\n"


def report(out: Path) -> dict:
    data = json.loads((out / "report.json").read_text())
    return {Path(f["file"]).name: f for f in data["files"]}, {k["kernel"]: k for k in data["kernels"]}


# -- parsing --------------------------------------------------------------------------------------

@pytest.mark.parametrize("options, code", [(["--max-memory", "1GiB", "--timeout", "60"], "M4014"),
                                           (["--max-memory", "0", "--timeout", "3"], "M4013")])
def test_an_exponential_macro_costs_only_its_file(tmp_path, options, code):
    src = tmp_path / "src"
    write(src, "bomb.cu", bomb())
    write(src, "ok.cu", ADD.format(name="add_one", value=1))
    start = time.monotonic()
    status = main(["convert", str(src), "-o", str(tmp_path / "out"), "-q", "-j", "2", *options])
    elapsed = time.monotonic() - start
    assert status == 1
    assert elapsed < float(options[-1]) + 20
    files, kernels = report(tmp_path / "out")
    assert [d["code"] for d in files["bomb.cu"]["diagnostics"]] == [code]
    assert files["bomb.cu"]["diagnostics"][0]["file"].endswith("bomb.cu")
    assert kernels["add_one"]["form"] == "tile"


# -- hangs and crashes on the check's two sides ----------------------------------------------------

def test_a_hanging_original_costs_only_its_kernel(tmp_path):
    cu = write(tmp_path, "two.cu", SPIN + ADD.format(name="add_one", value=1),
               spec("add_one", extra={"spin": 1}))
    status, checks, elapsed = check_json(tmp_path, str(cu), "--timeout", "5")
    assert status == 1
    assert checks["spin"]["status"] == "error"
    assert checks["spin"]["message"].startswith("M4010: the original CUDA kernel")
    assert "spin did not finish within 5 s" in checks["spin"]["message"]
    assert checks["add_one"]["status"] == "pass", checks["add_one"]["message"]
    assert elapsed < 5 + 60


def test_a_crashing_original_costs_only_its_kernel(tmp_path):
    cu = write(tmp_path, "two.cu", DIVIDE_BY_ZERO + ADD.format(name="add_one", value=1),
               spec("add_one", extra={"divide": 1}))
    status, checks, _ = check_json(tmp_path, str(cu), "--timeout", "10")
    assert status == 1
    assert checks["divide"]["status"] == "error"
    assert checks["divide"]["message"].startswith("M4011: the original CUDA kernel did not run (crash): ")
    assert "divide: SIGFPE" in checks["divide"]["message"]
    assert checks["add_one"]["status"] == "pass", checks["add_one"]["message"]


def test_convert_check_reports_the_crash_as_a_diagnostic(tmp_path):
    cu = write(tmp_path / "src", "two.cu", DIVIDE_BY_ZERO + ADD.format(name="add_one", value=1),
               spec("add_one", extra={"divide": 1}))
    assert main(["convert", str(cu), "-o", str(tmp_path / "out"), "-q", "--check", "cpu", "--timeout", "20"]) == 1
    _files, kernels = report(tmp_path / "out")
    crash = [d for d in kernels["divide"]["diagnostics"] if d["code"] == "M4011"]
    assert len(crash) == 1 and crash[0]["line"] == 2 and "SIGFPE" in crash[0]["message"]
    assert kernels["add_one"]["check"]["status"] == "pass"
    assert not [d for d in kernels["add_one"]["diagnostics"] if d["code"].startswith("M401")]


@pytest.fixture(scope="module")
def three_kernels(tmp_path_factory):
    """add_one, add_two, add_three converted (all tile form), each test breaks a copy's module."""
    tmp = tmp_path_factory.mktemp("three")
    cu = write(tmp / "src", "three.cu", "".join(ADD.format(name=n, value=v) for n, v in
                                              (("add_one", 1), ("add_two", 2), ("add_three", 3))),
               spec("add_one", "add_two", "add_three"))
    assert main(["convert", str(cu), "-o", str(tmp / "out"), "-q"]) == 0
    return tmp / "out"


def broken_copy(out: Path, tmp_path: Path, kernel: str, statement: str) -> Path:
    """A copy of ``out`` whose migrated ``kernel`` runs ``statement`` when its TileLang is built."""
    import shutil
    copy = tmp_path / "out"
    shutil.copytree(out, copy)
    module = copy / "three.py"
    head = f"def make_{kernel}("
    text = module.read_text()
    at = text.index(head)
    end = text.index("\n", at) + 1
    module.write_text(text[:end] + f"    {statement}\n" + text[end:])
    return copy


def test_a_hanging_migrated_kernel_costs_only_itself(three_kernels, tmp_path):
    out = broken_copy(three_kernels, tmp_path, "add_two", "while True: pass")
    status, checks, elapsed = check_json(tmp_path, "--from", str(out), "--timeout", "8", "-j", "1")
    assert status == 1
    assert checks["add_two"]["status"] == "error"
    assert checks["add_two"]["message"].startswith("M4010: the migrated kernel did not run (timeout): add_two: ")
    assert "8 s time limit" in checks["add_two"]["message"]
    for name in ("add_one", "add_three"):  # before and after the hang, in the same worker and the next
        assert checks[name]["status"] == "pass", checks[name]["message"]
    assert elapsed < 8 + 90


def test_a_crashing_migrated_kernel_costs_only_itself(three_kernels, tmp_path):
    out = broken_copy(three_kernels, tmp_path, "add_two", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    status, checks, _ = check_json(tmp_path, "--from", str(out), "--timeout", "30", "-j", "1")
    assert status == 1
    message = checks["add_two"]["message"]
    assert message.startswith("M4011: the migrated kernel did not run (crash): add_two: "), message
    assert "killed by SIGSEGV" in message
    assert "not reached" not in checks["add_three"]["message"]
    for name in ("add_one", "add_three"):
        assert checks[name]["status"] == "pass", checks[name]["message"]


PROGRAM = """
int main()
{
    const int n = 64;
    float h[n];
    for (int i = 0; i < n; ++i) h[i] = 0.5f * i;
    float *x, *y;
    cudaMalloc(&x, n * sizeof(float));
    cudaMalloc(&y, n * sizeof(float));
    cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice);
    add_one<<<2, 32>>>(n, x, y);
    add_two<<<2, 32>>>(n, x, y);
    add_three<<<2, 32>>>(n, x, y);
    cudaDeviceSynchronize();
    return 0;
}
"""


def test_a_hanging_replay_costs_only_its_kernel(tmp_path):
    """--run: the recorded launches are replayed in workers under the same time limit."""
    kernels = "".join(ADD.format(name=n, value=v) for n, v in (("add_one", 1), ("add_two", 2), ("add_three", 3)))
    cu = write(tmp_path / "src", "three.cu", kernels + PROGRAM)
    assert main(["convert", str(cu), "-o", str(tmp_path / "built"), "-q"]) == 0
    (tmp_path / "b").mkdir()
    out = broken_copy(tmp_path / "built", tmp_path / "b", "add_two", "while True: pass")
    status, checks, elapsed = check_json(tmp_path, "--from", str(out), "--run", "", "--timeout", "8", "-j", "1")
    assert status == 1
    message = checks["add_two"]["message"]
    assert checks["add_two"]["status"] == "error"
    assert message.startswith("M4010: launch 0: the migrated kernel did not run (timeout): add_two: "), message
    for name in ("add_one", "add_three"):
        assert checks[name]["status"] == "pass", checks[name]["message"]
        assert checks[name]["inputs"] == "trace"
    assert elapsed < 8 + 90


def test_a_migrated_kernel_out_of_memory_is_reported(three_kernels, tmp_path):
    """300 MiB of address space is too little for TileLang and torch to load (a fresh worker) or for
    the kernel to run (a worker forked from a server that has loaded them): M4012, not a traceback."""
    status, checks, _ = check_json(tmp_path, "--from", str(three_kernels), "--kernel", "add_one",
                                   "--max-memory", "300MiB", "--timeout", "30")
    assert status == 1
    message = checks["add_one"]["message"]
    assert message.startswith("M4012: the migrated kernel did not run (memory): add_one: "), message
    assert "ran out of memory" in message or "an allocation was refused" in message, message


# -- the restartable worker (runtime/batch.py) ---------------------------------------------------

def test_a_worker_restarts_after_each_crash_hang_or_refused_allocation(tmp_path):
    from migrate.runtime.batch import run_batch
    marker = uuid.uuid4().hex
    env = dict(os.environ, PYTHONPATH=str(REPO), C2T_TEST_MARK=marker)
    todo = ["ok", "hang", "ok", "segfault", "memory", "child", "ok"]
    seen = []
    start = time.monotonic()
    results = run_batch("tests.runtime.batch_probe", None, [{"key": i, "do": d} for i, d in enumerate(todo)],
                        timeout=2, max_memory=512 << 20, env=env, startup=60,
                        on_result=lambda k, e: seen.append(k))
    assert time.monotonic() - start < 2 * 2 + 30
    assert {k: e["status"] for k, e in results.items()} == {
        0: "ok", 1: "timeout", 2: "ok", 3: "crash", 4: "memory", 5: "timeout", 6: "ok"}
    assert results[0]["value"] == 0 and results[6]["value"] == 12
    assert "killed by SIGSEGV" in results[3]["message"]
    assert "2 s time limit" in results[1]["message"]
    assert sorted(seen) == list(range(7))
    time.sleep(0.3)
    assert _marked(marker) == []  # the grandchild went with its group


def test_batches_sharing_claims_take_each_run_once_and_finish_together(tmp_path):
    """Two workers down one list (``claims``): each run is done by exactly one of them, a crash
    costs only its run, and the one slow run does not leave the other worker idle."""
    from concurrent.futures import ThreadPoolExecutor

    from migrate.runtime.batch import run_batch
    env = dict(os.environ, PYTHONPATH=str(REPO))
    todo = ["slow", "ok", "ok", "segfault", "ok", "ok", "ok", "ok"]
    runs = [{"key": i, "do": d} for i, d in enumerate(todo)]
    claims = tmp_path / "claims"
    claims.mkdir()
    seen = []

    def batch(_):
        return run_batch("tests.runtime.batch_probe", None, runs, timeout=20, env=env, startup=60,
                         on_result=lambda k, e: seen.append(k), claims=str(claims))

    with ThreadPoolExecutor(max_workers=2) as pool:
        a, b = pool.map(batch, range(2))
    assert not set(a) & set(b) and set(a) | set(b) == set(range(len(todo)))
    assert sorted(seen) == list(range(len(todo)))
    statuses = {**a, **b}
    assert statuses[3]["status"] == "crash" and statuses[6]["value"] == 12
    slow = a if 0 in a else b
    assert len(slow) < len(todo) - 2  # the other worker took the rest while run 0 slept


# -- no orphan ----------------------------------------------------------------------------------

def _marked(marker: str) -> list[int]:
    """The processes whose environment holds ``marker`` (read from /proc, no psutil)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as f:
                env = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in env and state != b"Z":
            found.append(int(entry))
    return found


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_killing_migrate_leaves_no_process(tmp_path, sig):
    cu = write(tmp_path, "spin.cu", SPIN, spec(extra={"spin": 1}))
    marker = f"C2T_TEST_MARK={uuid.uuid4().hex}"
    env = dict(os.environ, C2T_TEST_MARK=marker.split("=", 1)[1])
    proc = subprocess.Popen([sys.executable, "-m", "migrate", "check", str(cu), "--timeout", "300"],
                            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the kernel's worker runs (a child of the child)
            if len([p for p in _marked(marker) if p != proc.pid]) >= 1 and _worker_running(marker):
                break
            time.sleep(0.2)
        else:
            pytest.fail("the kernel's worker never started")
        time.sleep(0.5)
        proc.send_signal(sig)
        proc.wait(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    time.sleep(0.5)
    assert _marked(marker) == []
    assert proc.returncode != 0


def _worker_running(marker: str) -> bool:
    for pid in _marked(marker):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"_worker.py" in f.read():
                    return True
        except OSError:
            pass
    return False


# -- host code that does not compile --------------------------------------------------------------

BROKEN_HOST = """
__global__ void add_one(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1.0f;
}

int host_helper(int a)
{
    return a + not_declared_anywhere(a);
}
"""


def test_a_kernel_is_checked_when_host_code_does_not_compile(tmp_path):
    cu = write(tmp_path, "host.cu", BROKEN_HOST, spec("add_one"))
    status, checks, _ = check_json(tmp_path, str(cu), "--timeout", "30")
    assert status == 0
    assert checks["add_one"]["status"] == "pass", checks["add_one"]["message"]
    assert "M4015" in checks["add_one"]["message"] and "host_helper (line 8)" in checks["add_one"]["message"]


BROKEN_KERNEL = """
__global__ void broken(int n, const float* x, float* y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + ;
}
""" + ADD.format(name="add_one", value=1)


def test_a_kernel_is_checked_when_another_kernel_does_not_compile(tmp_path):
    cu = write(tmp_path, "two.cu", BROKEN_KERNEL, spec("broken", "add_one"))
    status, checks, _ = check_json(tmp_path, str(cu), "--timeout", "30")
    assert checks["broken"]["status"] == "skipped" and "M1001" in checks["broken"]["message"]
    assert checks["add_one"]["status"] == "pass", checks["add_one"]["message"]
    assert "M4015" in checks["add_one"]["message"] and "broken (line 2)" in checks["add_one"]["message"]


def test_a_kernel_that_does_not_compile_is_not_left_out():
    text = BROKEN_HOST.replace("x[i] + 1.0f", "x[i] + undeclared")
    assert exclude.stub_failing(text, [5], {"add_one"}) is None
    assert exclude.stub_failing(text, [5], set()) is not None  # another kernel's check may leave it out


def test_left_out_bodies_keep_every_line():
    text = textwrap.dedent("""
        namespace ns { struct S { int f(int a) { return a + 1; } }; }
        extern "C" { int g(int x) { char c = '{'; return x; /* } */ } }
        int host(int a) {
            return a +;
        }
        int arr[] = {1, 2};
        """)
    new, left_out = exclude.stub_failing(text, [5], set())
    assert left_out == [("host", 4)]
    assert new.count("\n") == text.count("\n")
    assert "return a +;" not in new and "__builtin_trap();" in new and "int arr[] = {1, 2};" in new
    assert [b.name for b in exclude.function_bodies(text)] == ["f", "g", "host"]
    assert exclude.stub_failing(text, [7], set()) is None  # not inside a function body
    assert exclude.function_bodies("int f() { {") is None


def test_error_lines_of_both_compilers():
    log = ("/a/k.cu:12:5: error: 'x' was not declared\n/a/other.h:3:1: error: no\n"
           "/a/k.cu(40): error: identifier \"y\" is undefined\n/a/k.cu:13:1: warning: unused\n")
    assert exclude.error_lines(log, "/a/k.cu") == [12, 40]


def test_memory_sizes():
    assert limits.parse_memory("8GiB") == 8 << 30
    assert limits.parse_memory("512MiB") == 512 << 20
    assert limits.parse_memory("2g") == 2 << 30
    assert limits.parse_memory("0") is None
    for bad in ("lots", "1MiB", "-3G"):
        with pytest.raises(ValueError):
            limits.parse_memory(bad)
