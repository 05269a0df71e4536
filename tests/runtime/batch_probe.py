"""A worker for tests/runtime/test_limits.py: each run's "do" says what it does (see there)."""
import os
import signal
import sys
import time

from migrate.runtime.batch import serve


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
    return {"status": "ok", "value": run["key"] * 2}


if __name__ == "__main__":
    sys.exit(serve(sys.argv[1:], run_one))
