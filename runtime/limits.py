"""Time and memory limits of the child processes cuda2tile starts, and no orphan after a kill.

Every child (a file's parse, a compiler, a kernel run, the TileLang worker) is started by
:func:`spawn` in a session (process group) of its own, with its address space limited
(``RLIMIT_AS``, set with ``prlimit`` on the child) when ``max_memory`` is given; :func:`stop`
kills the whole group, so a compiler or a thread the child started goes with it. The memory
limit is for CPU work only: a CUDA context reserves far more address space than it uses, so GPU
runs get none. Within :func:`killing_children_on_signals` (the ``migrate`` command line), SIGINT
or SIGTERM of ``migrate`` itself kills every live group first.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading

DEFAULT_TIMEOUT = 120.0  #: seconds: one file's parse, one kernel's run (each side)
DEFAULT_MAX_MEMORY = 8 << 30  #: bytes of address space of one child on the CPU

_max_memory: list = [DEFAULT_MAX_MEMORY]  # this run's --max-memory (set_max_memory)
_live: dict[int, subprocess.Popen] = {}
_lock = threading.Lock()
_closing = False

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20, "mb": 1000 ** 2,
          "mib": 1 << 20, "g": 1 << 30, "gb": 1000 ** 3, "gib": 1 << 30, "t": 1 << 40, "tb": 1000 ** 4,
          "tib": 1 << 40}

_MEMORY_WORDS = ("MemoryError", "bad_alloc", "Cannot allocate memory", "out of memory", "Out of memory",
                 "virtual memory exhausted", "LLVM ERROR: out of memory", "failed to map segment")


def parse_memory(text: str) -> int | None:
    """``"8GiB"``, ``"512M"``, ``"1000000"`` -> bytes; ``"0"`` or ``"none"`` -> None (no limit).
    Raises ValueError on anything else."""
    t = str(text).strip().lower().replace(" ", "")
    if t in ("0", "none", "off", "unlimited"):
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]*)", t)
    if not match or match.group(2) not in _UNITS:
        raise ValueError(f"not a size: {text!r} (write e.g. 8GiB, 512MiB or a number of bytes)")
    value = int(float(match.group(1)) * _UNITS[match.group(2)])
    if value < 64 << 20:
        raise ValueError(f"{text!r} is below the 64 MiB a child process needs to start")
    return value


def set_max_memory(nbytes: int | None) -> None:
    """This run's memory limit of every CPU child (``--max-memory``; None: no limit)."""
    _max_memory[0] = nbytes


def max_memory() -> int | None:
    return _max_memory[0]


def show_memory(nbytes: int | None) -> str:
    if nbytes is None:
        return "no limit"
    return f"{nbytes / (1 << 30):.3g} GiB" if nbytes >= 1 << 30 else f"{nbytes / (1 << 20):.0f} MiB"


def spawn(cmd: list[str], *, max_memory: int | None = None, **popen_kw) -> subprocess.Popen:
    """Start ``cmd`` in a session of its own (its group id is its pid), limited to ``max_memory``
    bytes of address space; it is killed with its group by :func:`stop`, or by SIGINT/SIGTERM of
    this process within :func:`killing_children_on_signals`."""
    if _closing:
        raise KeyboardInterrupt("migrate is stopping")
    proc = subprocess.Popen(cmd, start_new_session=True, **popen_kw)
    track(proc)
    if max_memory:
        try:
            import resource
            resource.prlimit(proc.pid, resource.RLIMIT_AS, (max_memory, max_memory))
        except (OSError, ValueError, AttributeError):  # the child already ended, or no prlimit
            pass
    if _closing:  # a signal came while it started
        stop(proc)
        raise KeyboardInterrupt("migrate is stopping")
    return proc


def track(proc) -> None:
    """Count ``proc`` (a process in a session of its own) among the groups :func:`stop` and a
    signal of ``migrate`` kill."""
    with _lock:
        _live[proc.pid] = proc


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def stop(proc: subprocess.Popen) -> None:
    """Kill ``proc`` and every process of its group, and reap it."""
    _kill_group(proc.pid)
    try:
        proc.kill()
    except OSError:
        pass
    proc.wait()
    done(proc)


def done(proc: subprocess.Popen) -> None:
    """``proc`` ended: kill what it left in its group, and forget it."""
    _kill_group(proc.pid)
    with _lock:
        _live.pop(proc.pid, None)


def wait(proc: subprocess.Popen, timeout: float | None) -> bool:
    """Wait for ``proc``; True when it ran past ``timeout`` s (it and its group are then killed).
    Any exception (KeyboardInterrupt included) kills the group before it propagates."""
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop(proc)
        return True
    except BaseException:
        stop(proc)
        raise
    done(proc)
    return False


def run(cmd: list[str], *, timeout: float | None, max_memory: int | None = None, cwd=None, env=None
        ) -> tuple[int | None, str, bool]:
    """Run ``cmd`` to its end: (exit status, stdout and stderr together, timed out)."""
    import tempfile
    with tempfile.TemporaryFile() as log:
        proc = spawn(cmd, max_memory=max_memory, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                     cwd=cwd, env=env)
        timed_out = wait(proc, timeout)
        log.seek(0)
        text = log.read().decode(errors="replace")
    return (None if timed_out else proc.returncode), text, timed_out


def capture(cmd: list[str], *, timeout: float | None, max_memory: int | None = None, cwd=None, env=None
            ) -> tuple[int | None, str, str]:
    """Run ``cmd`` to its end: (exit status, None past ``timeout``; stdout; stderr)."""
    import tempfile
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = spawn(cmd, max_memory=max_memory, stdin=subprocess.DEVNULL, stdout=out, stderr=err, cwd=cwd, env=env)
        timed_out = wait(proc, timeout)
        out.seek(0)
        err.seek(0)
        return (None if timed_out else proc.returncode), out.read().decode(errors="replace"), \
            err.read().decode(errors="replace")


def out_of_memory(returncode: int | None, output: str) -> bool:
    """Did a child that failed run out of memory (an allocation refused under its limit)?"""
    if returncode == 0:
        return False
    return any(w in output for w in _MEMORY_WORDS)


def exit_reason(returncode: int | None) -> str:
    """``killed by SIGSEGV`` / ``exited with status 3``."""
    if returncode is None:
        return "did not end"
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exited with status {returncode}"


def closing() -> bool:
    """True once :func:`kill_all` ran: no child may start."""
    return _closing


def kill_all() -> None:
    """Kill every live child group (and refuse to start new ones)."""
    global _closing
    _closing = True
    for pid in list(_live):
        _kill_group(pid)


def _on_signal(signum, frame):
    kill_all()
    # clean up (temporary folders) on the way out, but never hang on it
    timer = threading.Timer(10.0, os._exit, (128 + signum,))
    timer.daemon = True
    timer.start()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def killing_children_on_signals():
    """Within: SIGINT, SIGTERM and SIGHUP of this process kill every child group first (then
    KeyboardInterrupt, or SystemExit with 128 + the signal); the previous handlers come back after.
    Does nothing outside the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _on_signal) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
