"""Where the tool's temporary files go: a folder it owns and removes, never the system's.

TileLang and TVM compile every kernel through temporary ``.cpp``/``.so`` files that they leave in
the system's temporary folder, and g++ and the runtime's workers write theirs there too.
:func:`owned_tempdir` points ``TMPDIR`` (inherited by every worker process) and Python's
``tempfile`` at a fresh folder under the cache (``$CUDA2TILE_CACHE/tmp/<pid>-...``, default
``~/.cache/cuda2tile/tmp``) for one command, and removes it afterwards; folders left by a command
that was killed are removed by the next one once their process is gone. TileLang's kernel cache
goes under the tool's cache too (``TILELANG_CACHE_DIR``, unless it is set).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from pathlib import Path


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def _sweep(root: Path) -> None:
    """Remove the folders of commands whose process is gone."""
    for folder in root.iterdir():
        pid = folder.name.split("-", 1)[0]
        if folder.is_dir() and pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


@contextlib.contextmanager
def owned_tempdir(cache: Path | None = None):
    """For the duration of the block, temporary files of this process and of the processes it
    starts go into a folder of the tool's cache, removed at the end. Yields that folder (None
    when the cache cannot be written: then nothing changes)."""
    from .runtime.build import cache_root

    root = (cache or cache_root()) / "tmp"
    try:
        root.mkdir(parents=True, exist_ok=True)
        _sweep(root)
        folder = tempfile.mkdtemp(prefix=f"{os.getpid()}-", dir=root)
    except OSError:
        yield None
        return
    saved_env = {k: os.environ.get(k) for k in ("TMPDIR", "TILELANG_CACHE_DIR")}
    saved_tempdir = tempfile.tempdir
    os.environ["TMPDIR"] = folder
    os.environ.setdefault("TILELANG_CACHE_DIR", str(root.parent / "tilelang"))
    tempfile.tempdir = folder
    try:
        yield Path(folder)
    finally:
        tempfile.tempdir = saved_tempdir
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(folder, ignore_errors=True)
