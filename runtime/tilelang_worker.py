"""Runs the migrated kernels of one TileLang module in a child process.

    python -m migrate.runtime.tilelang_worker JOB RESULT

JOB is a pickle: ``{"module": path, "target": "c" | "cuda", "schedule": "forward" | "reverse" |
"random" (the thread order of portable kernels on the C target), "runs": [{"key", "kernel" (a
KernelSpec), "spec_path",
"index", "args", "symbols"}]}``; RESULT receives ``{key: {"status": "ok", "outputs": {...}}`` or
``{"status": "error", "message": ...}}`` (``"oob"`` with ``buffer``, ``side``, ``element``: a
write into a red zone), rewritten after every kernel so that a crash loses
only the kernel it happened in. A crash or a hang of TileLang or of a migrated kernel therefore
never takes the checking process down with it.
"""
from __future__ import annotations

import os
import pickle
import sys
import traceback


def _save(path: str, results: dict) -> None:
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        pickle.dump(results, f)
    os.replace(tmp, path)


def main(argv: list[str]) -> int:
    job_path, result_path = argv
    with open(job_path, "rb") as f:
        job = pickle.load(f)
    from .inputs import Inputs
    from .spec import load_spec
    from .tilelang_side import RedZoneWrite, run_migrated
    from .tilelang_support import set_cpu_schedule

    set_cpu_schedule(job.get("schedule", "forward"))

    results: dict = {}
    for run in job["runs"]:
        results[run["key"]] = {"status": "crash", "message": "the process died while running this kernel"}
        _save(result_path, results)
        try:
            kernel = run["kernel"] if run.get("kernel") is not None else load_spec(run["spec_path"])[run["index"]]
            inputs = Inputs(args=run["args"], symbols=run["symbols"], seed=0, kernel=kernel)
            outputs = run_migrated(job["module"], kernel, inputs, target=job["target"], options=run.get("options"))
            results[run["key"]] = {"status": "ok", "outputs": outputs}
        except RedZoneWrite as exc:  # a failure of the kernel, not of the run
            results[run["key"]] = {"status": "oob", "message": str(exc), "buffer": exc.buffer, "side": exc.side,
                                   "element": exc.element}
        except Exception as exc:  # reported per kernel; the next kernel still runs
            last = traceback.format_exception_only(type(exc), exc)[-1].strip()
            results[run["key"]] = {"status": "error", "message": last[-2000:]}
        _save(result_path, results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
