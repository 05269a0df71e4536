"""Runs the migrated kernels of one TileLang module in a child process.

    python -m migrate.runtime.tilelang_worker JOB RESULT

Started by :func:`.batch.run_batch` (see there for the files): the JOB's common part is
``{"module": path, "target": "c" | "cuda", "schedule": "forward" | "reverse" | "random" (the
thread order of portable kernels on the C target)}``, each run ``{"key", "spec_path", "index",
"args", "symbols"}`` (and ``"kernel"``, a KernelSpec, ``"options"``, factory keywords such as a
coverage run's tile); ``"oob"`` with ``buffer``, ``side``, ``element`` is a write into a red zone; a run's entry is ``{"status": "ok", "outputs": {...}}`` or ``{"status":
"error", "message": ...}``. A crash or a hang of TileLang or of a migrated kernel costs only its
kernel: the parent kills this process and starts another for the kernels left.
"""
from __future__ import annotations

import sys
import traceback

from .batch import serve
from .tilelang_side import preload  # also what a fork server (.forkserver) calls


def run_one(common: dict, run: dict) -> dict:
    from .inputs import Inputs
    from .spec import load_spec
    from .tilelang_side import RedZoneWrite, run_migrated
    from .tilelang_support import set_cpu_schedule

    set_cpu_schedule(common.get("schedule", "forward"))
    try:
        kernel = run["kernel"] if run.get("kernel") is not None else load_spec(run["spec_path"])[run["index"]]
        inputs = Inputs(args=run["args"], symbols=run["symbols"], seed=0, kernel=kernel)
        outputs = run_migrated(common["module"], kernel, inputs, target=common["target"], options=run.get("options"))
        return {"status": "ok", "outputs": outputs}
    except RedZoneWrite as exc:  # a failure of the kernel, not of the run
        return {"status": "oob", "message": str(exc), "buffer": exc.buffer, "side": exc.side, "element": exc.element}
    except MemoryError:
        raise
    except Exception as exc:  # reported per kernel; the next kernel still runs
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return {"status": "error", "message": last[-2000:]}


def main(argv: list[str]) -> int:
    preload()
    return serve(argv, run_one)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
