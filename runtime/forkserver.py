"""Workers forked from a process that has already imported what they need.

A TileLang worker (:mod:`.tilelang_worker`, :mod:`.replay_worker`) spends 2 to 5 seconds importing
TileLang, TVM and torch before its first kernel, a parse worker (``migrate.parse_worker``) half a
second loading libclang and the analysis, and :func:`.batch.run_batch` starts one for every batch
of runs: a command that checks or converts many small modules pays that again and again. A fork server pays it once: it
is started (``python -m migrate.runtime.forkserver MODULE``) with the worker's environment,
imports ``MODULE`` and calls its ``preload()``, and then forks a worker for every request, which
runs ``MODULE.main(argv)`` as a freshly started one would (same environment, working folder,
standard streams, memory limit and session of its own), so :mod:`.batch` handles its crashes, hangs
and memory exactly as before.

The server never runs anything but imports before it forks (a fork of a process that has run
TVM or torch work could inherit their locks and thread pools in a bad state), is single-threaded
(the death signal its workers ask for follows its one thread), and ends when its client closes
the pipe: it kills its workers' groups first. Its protocol is one JSON object per line: requests
``{"argv", "env", "cwd", "stderr", "max_memory"}`` are answered ``{"pid": N}``, and every worker
that ends is announced ``{"exit": N, "rc": code}`` (negative: the signal that killed it).

Only CPU work uses it (``run_batch(..., fork=True)``: parses, and checks and replays on the C
target): a GPU worker starts fresh, so that no CUDA state can cross a fork. ``CUDA2TILE_FORK_SERVER=0`` turns it off.
"""
from __future__ import annotations

import atexit
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time

#: Variables that differ between calls of one command (a test's name, a command's scratch
#: folders) and that the worker reads only after it starts: a fork server serves every value.
PER_CALL = ("PYTEST_CURRENT_TEST", "TMPDIR", "TEMP", "TMP", "TILELANG_CACHE_DIR", "CUDA2TILE_PCH_DIR")

#: Servers of one worker module kept per process (one holds about 330 MB with TileLang and torch);
#: the one used least recently goes when another is needed and it has no worker running.
KEEP = 2


def enabled() -> bool:
    return os.environ.get("CUDA2TILE_FORK_SERVER", "1") not in ("0", "", "off", "no")


# -- the server's side ---------------------------------------------------------------------------

def _send(message: dict) -> None:
    data = (json.dumps(message) + "\n").encode()
    while data:
        data = data[os.write(1, data):]


def _child(module, request: dict) -> None:
    """The forked worker: become what a fresh ``python -m MODULE ARGV`` would be, and run it."""
    rc = 1
    try:
        os.setsid()
        null = os.open(os.devnull, os.O_RDWR)
        err = os.open(request["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(null, 0)
        os.dup2(null, 1)
        os.dup2(err, 2)
        os.close(null)
        os.close(err)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if request.get("max_memory"):
            import resource
            resource.setrlimit(resource.RLIMIT_AS, (request["max_memory"], request["max_memory"]))
        os.environ.clear()
        os.environ.update(request["env"])
        import tempfile
        tempfile.tempdir = None  # read $TMPDIR again
        os.chdir(request["cwd"])
        sys.argv = [module.__name__, *request["argv"]]
        rc = module.main(list(request["argv"])) or 0
    except SystemExit as exc:
        rc = exc.code if isinstance(exc.code, int) else 1
    except BaseException:  # noqa: BLE001 - reported on the worker's stderr, as a fresh one would
        import traceback
        traceback.print_exc()
        rc = 1
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            os._exit(rc)


def _reap(workers: set) -> None:
    while workers:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            workers.clear()
            return
        if pid == 0:
            return
        workers.discard(pid)
        _send({"exit": pid, "rc": os.waitstatus_to_exitcode(status)})


def serve(module_name: str) -> int:
    import importlib
    module = importlib.import_module(module_name)
    preload = getattr(module, "preload", None)
    if preload is not None:
        preload()
    _send({"ready": os.getpid()})
    workers: set = set()
    pending = b""
    while True:
        readable, _, _ = select.select([0], [], [], 0.05)
        _reap(workers)
        if not readable:
            continue
        data = os.read(0, 1 << 16)
        if not data:  # the client is gone: so are its workers
            for pid in workers:
                try:
                    os.killpg(pid, signal.SIGKILL)
                except OSError:
                    pass
            return 0
        pending += data
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            request = json.loads(line)
            pid = os.fork()
            if pid == 0:
                _child(module, request)
            workers.add(pid)
            _send({"pid": pid})


# -- the client's side ---------------------------------------------------------------------------

class ForkedWorker:
    """A worker the server forked: the parts of :class:`subprocess.Popen` that :mod:`.batch` and
    :mod:`.limits` use (``pid``, ``returncode``, ``poll``, ``wait``, ``kill``)."""

    def __init__(self, server: "_Server", pid: int):
        self._server, self.pid, self.returncode = server, pid, None

    def poll(self):
        if self.returncode is None:
            self.returncode = self._server.exit_code(self.pid, 0)
        return self.returncode

    def wait(self, timeout: float | None = None):
        if self.returncode is None:
            self.returncode = self._server.exit_code(self.pid, timeout)
            if self.returncode is None:
                raise subprocess.TimeoutExpired(f"worker {self.pid}", timeout)
        return self.returncode

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass


class _Server:
    def __init__(self, module: str, env: dict, startup: float):
        from . import limits
        self.proc = limits.spawn([sys.executable, "-m", "migrate.runtime.forkserver", module], env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.lock = threading.Lock()
        self.changed = threading.Condition()
        self.exits: dict[int, int] = {}
        self.running: set[int] = set()
        self.replies: list[dict] = []
        self.dead = False
        threading.Thread(target=self._read, daemon=True).start()
        if self._reply(startup) is None:
            self.close()
            raise OSError(f"the fork server of {module} did not start")

    def _read(self) -> None:
        for line in self.proc.stdout:
            message = json.loads(line)
            with self.changed:
                if "exit" in message:
                    self.exits[message["exit"]] = message["rc"]
                else:
                    self.replies.append(message)
                self.changed.notify_all()
        with self.changed:
            self.dead = True
            self.changed.notify_all()

    def _reply(self, timeout: float) -> dict | None:
        end = time.monotonic() + timeout
        with self.changed:
            while not self.replies and not self.dead and time.monotonic() < end:
                self.changed.wait(end - time.monotonic())
            return self.replies.pop(0) if self.replies else None

    def fork(self, request: dict) -> ForkedWorker:
        with self.lock:
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
            except (OSError, ValueError):
                self.dead = True
            reply = None if self.dead else self._reply(60.0)
        if reply is None or "pid" not in reply:
            raise OSError("the fork server stopped")
        with self.changed:
            self.running.add(reply["pid"])
        return ForkedWorker(self, reply["pid"])

    def exit_code(self, pid: int, timeout: float | None):
        end = None if timeout is None else time.monotonic() + timeout
        with self.changed:
            while pid not in self.exits:
                if self.dead:  # its workers died with it (their death signal)
                    self.exits[pid] = -signal.SIGKILL
                    break
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    return None
                self.changed.wait(left)
            self.running.discard(pid)
            return self.exits.pop(pid)

    def close(self) -> None:
        from . import limits
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        limits.stop(self.proc)


_servers: dict[tuple, _Server] = {}
_servers_lock = threading.Lock()


def start(module: str, env: dict, startup: float) -> None:
    """Start ``module``'s server for ``env`` now (the caller's own time, a thread of its own), so
    that a later fork finds it running: :func:`batch.start_server`."""
    _server(module, env, startup)


def _server(module: str, env: dict, startup: float) -> _Server:
    key = (module, sys.executable, tuple(sorted((k, v) for k, v in env.items() if k not in PER_CALL)))
    with _servers_lock:
        server = _servers.pop(key, None)
        if server is None or server.dead:
            same = [k for k in _servers if k[0] == module]
            for old_key in [k for k in same if not _servers[k].running][:max(0, len(same) + 1 - KEEP)]:
                _servers.pop(old_key).close()
            server = _Server(module, env, startup)
        _servers[key] = server  # the most recently used last
        return server


def fork_worker(module: str, argv: list[str], *, env: dict, stderr: str, max_memory: int | None,
                startup: float) -> ForkedWorker:
    """A worker ``python -m module *argv`` forked from ``module``'s fork server (started on first
    use with ``env``); raises OSError when no server can fork it (start a plain process then)."""
    from . import limits
    worker = _server(module, env, startup).fork({"argv": argv, "env": env, "cwd": os.getcwd(), "stderr": stderr,
                                                  "max_memory": max_memory})
    limits.track(worker)
    if limits.closing():  # a signal came while it started
        limits.stop(worker)
        raise KeyboardInterrupt("migrate is stopping")
    return worker


def close_all() -> None:
    """Stop every fork server of this process (and the workers they forked)."""
    with _servers_lock:
        servers = list(_servers.values())
        _servers.clear()
    for server in servers:
        server.close()


atexit.register(close_all)

if __name__ == "__main__":
    sys.exit(serve(sys.argv[1]))
