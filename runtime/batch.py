"""Jobs run one after another in a worker process that is started again after a crash or a hang.

The worker (``python -m MODULE JOB RESULT``, its ``main`` calling :func:`serve`) reads the pickle
``{"common": ..., "runs": [{"key": ..., ...}, ...]}`` from JOB and appends to RESULT a marker
``(key, marker)`` around every run: ``{"status": "started"}`` before it, ``{"status": "done",
"file": F}`` after, the run's entry pickled in F (so the parent reads each entry once).
:func:`run_batch` polls RESULT, reading only the markers added since its last look (a batch of a
thousand runs would otherwise cost the parent a second of CPU per minute re-reading the
markers of the runs done): a run still started after ``timeout`` seconds is killed with the
worker's whole process group (status ``timeout``); a worker that dies costs only the run it was
on (status ``crash`` with the signal, or ``memory`` when an allocation was refused under
``max_memory``); a new worker then takes the runs left. Imports only the standard library and
:mod:`.limits`.

Several batches can share one list of runs (``claims``, a folder): each worker takes the next run
no other has taken (a file created in that folder, which only one process can create) and marks
the others ``taken``, so the workers finish together whichever runs are slow.
"""
from __future__ import annotations

import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import limits

STARTED, DONE, TAKEN = "started", "done", "taken"


def _save(path: str, results: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(results, f)
    os.replace(tmp, path)


def _append(log, key, marker: dict) -> None:
    """One marker at the end of RESULT (``log``, unbuffered): the length of its pickle, then the
    pickle, so that a reader can tell a marker still being written (or cut short by a crash)."""
    data = pickle.dumps((key, marker))
    data = len(data).to_bytes(4, "little") + data
    while data:
        data = data[log.write(data):]


class _Markers:
    """RESULT read as the worker appends to it: :meth:`new` gives the markers added since the
    previous call, leaving a marker not yet written whole for the next."""

    def __init__(self, path: Path):
        self.path, self.offset = path, 0

    def new(self) -> list[tuple]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return []
        found, at = [], 0
        while at + 4 <= len(data):
            end = at + 4 + int.from_bytes(data[at:at + 4], "little")
            if end > len(data):
                break
            try:
                found.append(pickle.loads(data[at + 4:end]))
            except (EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError):
                pass
            at = end
        self.offset += at
        return found


def _load(path: Path) -> dict:
    try:
        with open(path, "rb") as f:
            return pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError):
        return {}


def die_with_parent() -> None:
    """Ask Linux to kill this worker when the process that started it dies, even by SIGKILL
    (which leaves it no chance to kill its children)."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        return
    if os.getppid() == 1:  # the parent died before the request
        os._exit(1)


def serve(argv: list[str], handle) -> int:
    """The worker's side: ``handle(common, run) -> entry`` for every run of the JOB file."""
    die_with_parent()
    job_path, result_path = argv
    with open(job_path, "rb") as f:
        job = pickle.load(f)
    claims = job.get("claims")
    with open(result_path, "ab", buffering=0) as log:
        for i, run in enumerate(job["runs"]):
            if claims is not None and not _claim(claims, run["key"]):
                _append(log, run["key"], {"status": TAKEN})
                continue
            _append(log, run["key"], {"status": STARTED})
            try:
                entry = handle(job.get("common"), run)
            except MemoryError:
                entry = {"status": "memory", "message": "an allocation was refused (MemoryError)"}
            if entry.get("status") == "error" and limits.out_of_memory(1, entry.get("message", "")):
                entry = {"status": "memory", "message": f"ran out of memory ({entry['message'][-300:]})"}
            _save(f"{result_path}.{i}", entry)
            _append(log, run["key"], {"status": DONE, "file": f"{result_path}.{i}"})
    return 0


def _claim(folder: str, key: str) -> bool:
    """Take the run ``key`` for this worker; False when another worker has it."""
    import hashlib
    name = os.path.join(folder, hashlib.sha1(str(key).encode()).hexdigest())
    try:
        os.close(os.open(name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def _tail(path: Path, chars: int = 1500) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-chars:].decode(errors="replace").strip()


def worker_env(env: dict | None = None) -> dict:
    """``env`` (default: this process's) with the package's root first on PYTHONPATH, so that
    ``python -m migrate...`` finds the same code from a checkout that is not installed."""
    env = dict(os.environ if env is None else env)
    root = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    return env


def start_server(module: str, env: dict | None = None, startup: float = 300.0) -> None:
    """Start ``module``'s fork server (:mod:`.forkserver`) now, in a thread, for a later
    ``run_batch(module, ..., fork=True)`` with the same environment (its variables of
    ``forkserver.PER_CALL`` aside): the server's imports then take the caller's time in between
    instead of delaying the first run. That batch waits for a server still starting, and starts
    one itself where this one did not start."""
    import threading

    from . import forkserver
    if not forkserver.enabled():
        return

    def start() -> None:
        try:
            forkserver.start(module, worker_env(env), startup)
        except (OSError, KeyboardInterrupt):  # no server, or migrate is stopping: the batch decides
            pass
    threading.Thread(target=start, name=f"fork server of {module}", daemon=True).start()


def run_batch(module: str, common, runs: list[dict], *, timeout: float, max_memory: int | None = None,
              env: dict | None = None, startup: float = 300.0, on_result=None, poll: float = 0.05,
              wrapper=(), claims: str | None = None, fork: bool = False) -> dict:
    """Run ``runs`` in workers ``python -m module`` (environment: :func:`worker_env` of ``env``);
    returns ``{key: entry}`` for every run (with ``claims``, every run this batch's workers took:
    the others went to the batches sharing the folder).
    ``startup`` bounds the time before the first run starts (imports); ``on_result(key, entry)``
    is called as entries arrive; ``wrapper`` is a command the workers run under (compute-sanitizer).
    ``fork``: fork the workers from the module's fork server (:mod:`.forkserver`: its imports are
    paid once per process), for CPU work only; a plain process when there is none."""
    results: dict = {}

    def put(key, entry):
        results[key] = entry
        if on_result is not None:
            on_result(key, entry)

    env = worker_env(env)
    remaining = list(runs)
    taken: set = set()  # runs another batch's worker took (claims)
    while remaining:
        with tempfile.TemporaryDirectory(prefix="c2t-batch-") as tmp:
            job, result, log = Path(tmp) / "job.pkl", Path(tmp) / "result.pkl", Path(tmp) / "stderr.txt"
            job.write_bytes(pickle.dumps({"common": common, "runs": remaining, "claims": claims}))
            proc = _start(module, [str(job), str(result)], log, env=env, max_memory=max_memory, wrapper=wrapper,
                          fork=fork, startup=startup)
            markers = _Markers(result)
            started = None  # the run the worker is on: started, not done

            def read() -> None:
                nonlocal started
                for key, marker in markers.new():
                    status = marker.get("status")
                    if status == DONE and key not in results:
                        put(key, _entry(marker))
                    elif status == TAKEN:
                        taken.add(key)
                    if status == STARTED:
                        started = key
                    elif key == started:
                        started = None

            current, since, timed_out = None, time.monotonic(), False
            try:
                while True:
                    rc = proc.poll()
                    read()
                    if started != current:
                        current, since = started, time.monotonic()
                    if rc is not None:
                        break
                    if time.monotonic() - since > (timeout if current is not None else startup):
                        limits.stop(proc)
                        timed_out = True
                        break
                    time.sleep(poll)
            except BaseException:
                limits.stop(proc)
                raise
            limits.done(proc)
            read()  # the last markers written before it ended
            if current is not None and current in results:
                current = None
            stderr = _tail(log)
        before = len(remaining)
        remaining = [r for r in remaining if r["key"] not in results and r["key"] not in taken]
        if timed_out:
            if current is None:
                for r in remaining:
                    put(r["key"], {"status": "timeout", "message": f"the worker did not start within {startup:g} s"})
                break
            put(current, {"status": "timeout", "message": f"ran past the {timeout:g} s time limit (--timeout)"})
        elif current is not None:  # the worker died in this run
            put(current, _death(proc.returncode, stderr, max_memory))
        elif remaining:  # it died before starting a run, or ended without doing them all
            for r in remaining:
                entry = _death(proc.returncode, stderr, max_memory)
                entry["message"] = "the worker ended before this run: " + entry["message"]
                put(r["key"], entry)
            break
        remaining = [r for r in remaining if r["key"] not in results and r["key"] not in taken]
        assert len(remaining) < before
    return results


def _start(module: str, argv: list[str], log: Path, *, env: dict, max_memory, wrapper, fork: bool, startup: float):
    if fork and not wrapper:
        from . import forkserver
        if forkserver.enabled():
            try:
                return forkserver.fork_worker(module, argv, env=env, stderr=str(log), max_memory=max_memory,
                                              startup=startup)
            except OSError:
                pass  # no server: a plain process
    with open(log, "wb") as err:
        return limits.spawn([*wrapper, sys.executable, "-m", module, *argv], max_memory=max_memory, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)


def _entry(marker: dict) -> dict:
    entry = _load(Path(marker["file"]))
    return entry or {"status": "crash", "message": "the worker's result could not be read"}


def _death(returncode: int | None, stderr: str, max_memory: int | None) -> dict:
    if limits.out_of_memory(returncode, stderr):
        return {"status": "memory", "message": f"ran out of memory (limit {limits.show_memory(max_memory)}, "
                                               f"--max-memory); the worker {limits.exit_reason(returncode)}"}
    message = f"the worker {limits.exit_reason(returncode)}"
    last = stderr.strip().splitlines()[-3:]
    if last:
        message += ": " + " | ".join(line.strip() for line in last)[-600:]
    return {"status": "crash", "message": message}
