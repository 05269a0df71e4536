"""Replays recorded launches into migrated kernels in a child process (``--run`` checks).

    python -m migrate.runtime.replay_worker JOB RESULT

Started by :func:`.batch.run_batch`: each run is ``{"key", "module", "launch", "target"}``, its
entry ``{"status": "ok", "replay": Replay}`` or ``{"status": "error", "message": ...}``. A launch
whose migrated kernel crashes or hangs costs only itself: the parent starts another worker for
the launches left.
"""
from __future__ import annotations

import sys
import traceback

from . import tilelang_side
from .batch import serve


def run_one(common, run: dict) -> dict:
    from .replay import replay

    try:
        return {"status": "ok", "replay": replay(run["module"], run["launch"], run["target"])}
    except MemoryError:
        raise
    except Exception as exc:  # the migrated kernel did not run: reported for this launch
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return {"status": "error", "message": last[-2000:]}


def preload() -> None:
    """The replay and what running a migrated kernel needs (:func:`.tilelang_side.preload`),
    imported before the first run, and once for all in a fork server (:mod:`.forkserver`)."""
    from . import replay  # noqa: F401
    tilelang_side.preload()


def main(argv: list[str]) -> int:
    preload()
    return serve(argv, run_one)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
