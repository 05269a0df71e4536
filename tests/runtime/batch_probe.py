"""A worker for tests/runtime/test_limits.py: each run's "do" says what it does (see there)."""
import os
import signal
import sys
import time

from migrate.runtime.batch import serve

PRELOADED_BY = None  # the process that ran preload() (a fork server, or this worker)


def preload():
    global PRELOADED_BY
    PRELOADED_BY = os.getpid()


def run_one(common, run):
    what = run["do"]
    if what == "hang":
        while True:
            time.sleep(0.01)
    if what == "slow":
        time.sleep(3.0)
    if what == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    if what == "memory":
        return {"status": "ok", "data": bytearray(1 << 30)}
    if what == "child":  # a grandchild in the worker's group, then a hang
        import subprocess
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
        while True:
            time.sleep(0.01)
    if what == "where":  # how this worker was started and what it sees
        import tempfile
        return {"status": "ok", "pid": os.getpid(), "preloaded_by": PRELOADED_BY, "cwd": os.getcwd(),
                "tmp": tempfile.gettempdir(), "mark": os.environ.get("TILELANG_CACHE_DIR"), "argv0": sys.argv[0]}
    return {"status": "ok", "value": run["key"] * 2}


def main(argv):
    if PRELOADED_BY is None:
        preload()
    return serve(argv, run_one)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
