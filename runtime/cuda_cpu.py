"""The CPU executor: runs an original CUDA program's kernel on the CPU.

The ``.cu`` is compiled by the host C++ compiler (``$CXX``, g++ or clang++) with
``-O2 -std=c++17 -include runtime/cpu/cuda_cpu.h -Dmain=cuda2tile_host_main`` into a shared
library (see :mod:`.build` for the launcher and the cache, :mod:`.source` for the rewriting of
``<<<>>>`` and ``extern __shared__``); each run happens in a child process (:mod:`.executor`).

    >>> from migrate.runtime.cuda_cpu import compile_cpu, run_cpu
    >>> lib = compile_cpu("corpus/elementwise/saxpy.cu", [kernel])
    >>> res = run_cpu(lib, kernel, inputs.args, inputs.symbols, schedule="random", seed=1)

Execution model (``cuda_cpu.h``): blocks run one after another; the threads of a block are
cooperative fibers, so ``__syncthreads()`` and warp operations are real barriers; the schedule
(forward, reverse, random) orders threads between barriers. Kernel buffers end at a guard page,
so an out-of-bounds access is reported with the buffer's name; static and dynamic shared memory
is filled with 0xFF bytes before every block, so reading shared memory nobody wrote shows up.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from .build import BuildError, HEADER_DIR, Library, build_library, find_cxx
from .executor import run_library
from .results import RunResult
from .spec import KernelSpec

__all__ = ["compile_cpu", "run_cpu", "cpu_flags", "compile_many", "CPU_HEADER"]

CPU_HEADER = HEADER_DIR / "cuda_cpu.h"


def cpu_flags(extra=()) -> list[str]:
    return ["-std=c++17", "-O2", "-fPIC", "-shared", "-fno-strict-aliasing", "-fwrapv", "-fno-math-errno",
            "-fvisibility=hidden", "-w", "-include", str(CPU_HEADER), "-Dmain=cuda2tile_host_main",
            *extra]


def _instances_and_symbols(kernels) -> tuple[list[str], list[str]]:
    inst, syms = [], []
    for k in kernels:
        if k.instance not in inst:
            inst.append(k.instance)
        for s in k.symbols:
            if s.name not in syms:
                syms.append(s.name)
    return inst, syms


def compile_cpu(cu_path, kernels, include_dirs=(), defines=(), cache_dir=None, timeout: float = 300.0,
                extra_flags=(), units=(), spellings=None) -> Library:
    """Build (or fetch from the cache) the CPU library of ``cu_path`` with launchers for
    ``kernels`` (KernelSpec or instance strings), linked with the program's other translation
    ``units``. Raises :class:`BuildError`."""
    cxx = find_cxx()
    if cxx is None:
        raise BuildError("no host C++ compiler found (set CXX, or install g++ or clang++)")
    ks = [k for k in kernels if isinstance(k, KernelSpec)]
    inst, syms = _instances_and_symbols(ks)
    inst += [k for k in kernels if isinstance(k, str) and k not in inst]
    return build_library(device="cpu", cu_path=cu_path, kernels=inst, symbols=syms, include_dirs=include_dirs,
                         defines=defines, compiler=[cxx[0]], compiler_id=cxx[1], flags=cpu_flags(extra_flags),
                         cache_dir=cache_dir, timeout=timeout, rewrite=True, suffix=".cpp", units=units,
                         spellings=spellings)


def compile_many(jobs, max_workers: int | None = None) -> list:
    """Compile several ``(cu_path, kernels)`` pairs in parallel; returns a Library or the
    BuildError for each, in order."""
    def one(job):
        cu, ks = job[0], job[1]
        kw = job[2] if len(job) > 2 else {}
        try:
            return compile_cpu(cu, ks, **kw)
        except BuildError as e:
            return e
    workers = max_workers or max(1, os.cpu_count() or 1)
    with ThreadPoolExecutor(max_workers=workers) as ex:
        return list(ex.map(one, jobs))


def run_cpu(lib: Library, kernel: KernelSpec, args: dict, symbols: dict | None = None, *,
            schedule: str = "forward", seed: int = 0, timeout: float = 120.0, poison_shared: bool = True,
            read_symbols=()) -> RunResult:
    """Run ``kernel`` from a CPU library in a child process (see :func:`.executor.run_library`)."""
    return run_library(lib, kernel, args, symbols, schedule=schedule, seed=seed, timeout=timeout,
                       poison_shared=poison_shared, read_symbols=read_symbols)


def run_program(lib: Library, argv=(), timeout: float = 120.0, env=None, cwd=None,
                schedule: str = "forward") -> tuple[int, str, str]:
    """Run the program's own ``main`` from the library in a child process (environment ``env``,
    working directory ``cwd``, its kernels' threads and blocks in ``schedule`` order). Returns
    (exit status, stdout, stderr); the status is negative for a signal. Raises TimeoutError when
    it runs longer than ``timeout`` seconds."""
    from .executor import SCHEDULES
    import sys
    if not lib.main_entry:
        raise ValueError("the program has no main()")
    # the program dies with the process that started it (PR_SET_PDEATHSIG, SIGKILL): it runs in
    # a session of its own, which killing a replay job's group does not reach (an orphan held a
    # core for half an hour after its job was stopped)
    code = ("import ctypes,os,sys\n"
            f"ctypes.CDLL(None).prctl(1,9,0,0,0)\n"
            f"os.getppid()=={os.getpid()} or sys.exit(137)\n"
            f"lib=ctypes.CDLL({lib.path!r})\n"
            "args=[b'prog']+[a.encode() for a in sys.argv[1:]]\n"
            "argv=(ctypes.c_char_p*(len(args)+1))(*args,None)\n"
            f"lib.c2t_init(2,{SCHEDULES[schedule]},0,1)\n"
            "rc=lib.c2t_run_main(len(args),argv)\n"
            "ctypes.CDLL(None).fflush(None)\n"
            "sys.exit(rc & 255)\n")
    from . import limits
    status, out, err = limits.capture([sys.executable, "-I", "-c", code, *argv], timeout=timeout, env=env, cwd=cwd,
                                      max_memory=limits.max_memory())
    if status is None:
        raise TimeoutError(f"the program ran longer than {timeout:g} s")
    return status, out, err
