"""A program's ``main`` run on the CPU executor dies with the process that started it: a replay
harness that is itself killed (its jobs in sessions of their own) must not leave the program
running (one such orphan held a core for half an hour)."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

SOURCE = r"""
#include <cstdio>
#include <unistd.h>
__global__ void nothing(int *x) { x[threadIdx.x] = 1; }
int main()
{
    printf("started %d\n", (int)getpid());
    fflush(stdout);
    for (int i = 0; i < 600; i++) usleep(100000);
    return 0;
}
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_program_dies_with_the_job_that_ran_it(tmp_path):
    from migrate.runtime.build import BuildError
    from migrate.runtime.cuda_cpu import compile_cpu

    cu = tmp_path / "sleeper.cu"
    cu.write_text(SOURCE)
    try:
        lib = compile_cpu(cu, [], cache_dir=tmp_path / "cache")
    except BuildError as exc:
        pytest.skip(f"no host compiler: {exc}")
    marker = tmp_path / "pid.txt"
    job = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {os.getcwd()!r})
        from migrate.runtime.build import Library
        from migrate.runtime.cuda_cpu import run_program
        import pickle
        lib = pickle.loads({__import__('pickle').dumps(lib)!r})
        run_program(lib, timeout=120)
    """)
    job_proc = subprocess.Popen([sys.executable, "-c", job], start_new_session=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the program's pid: the one child of the job's child that runs c2t_run_main
    deadline, program = time.time() + 60, None
    while time.time() < deadline and program is None:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmd = open(f"/proc/{entry}/cmdline", "rb").read()
                except OSError:
                    continue
                if b"c2t_run_main" in cmd and str(lib.path).encode() in cmd and int(entry) != job_proc.pid:
                    program = int(entry)
        time.sleep(0.2)
    assert program is not None, job_proc.communicate(timeout=5)
    assert os.getpgid(program) != os.getpgid(job_proc.pid)  # a session of its own, as run
    os.kill(job_proc.pid, signal.SIGKILL)  # the process that ran it dies, its group not signalled
    job_proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and _alive(program):
        time.sleep(0.1)
    alive = _alive(program)
    if alive:
        os.kill(program, signal.SIGKILL)
    assert not alive
