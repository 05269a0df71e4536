"""Parses files in a child process for ``migrate convert`` (see :mod:`migrate.runtime.batch`).

    python -m migrate.parse_worker JOB RESULT

Each run is ``{"key": path, "options": ParseOptions}`` (with ``"convert"``, ``convert_file``'s
keyword arguments, and ``"display"``: the file is analysed and emitted here too); its entry
``{"status": "ok", "parsed": ParsedFile}`` (and ``"converted"``: ``convert_file``'s result and the
file's derived spec tables, ``convert.spec_tables``, or None where a spec file is beside it;
with ``"lean"``, the ParsedFile comes back without its functions' bodies).
The parent kills this process past ``--timeout`` and limits its memory to ``--max-memory``; libclang refused memory under that limit fails to parse, which is reported as
running out of memory (M4014) rather than as a compile error.
"""
from __future__ import annotations

import gc
import sys

from .convert import preload  # libclang and the analysis; also what a fork server calls
from .ir.model import forget_walks


def _near_memory_limit() -> bool:
    """Did this process come within 10 % of its address-space limit?"""
    import resource
    soft, _hard = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return False
    try:
        with open("/proc/self/status") as f:
            peak = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmPeak:"))
    except (OSError, StopIteration, ValueError):
        return False
    return peak >= 0.9 * soft


def parse_one(common, run: dict) -> dict:
    try:
        return _profiled(common, run)
    finally:
        forget_walks()  # the next file's trees are its own: this one's need no walks kept


def _profiled(common, run: dict) -> dict:
    import os
    folder = os.environ.get("C2T_PROFILE")
    if not folder:
        return _parse_one(common, run)
    import cProfile
    import uuid
    prof = cProfile.Profile()
    try:
        return prof.runcall(_parse_one, common, run)
    finally:
        prof.dump_stats(os.path.join(folder, f"{uuid.uuid4().hex}.prof"))


def _parse_one(common, run: dict) -> dict:
    from .convert import _parse_job

    parsed = _parse_job(run["key"], run["options"])
    if any(d.code == "M1001" and "could not parse the file" in d.message for d in parsed.diagnostics) \
            and _near_memory_limit():
        return {"status": "memory", "message": "libclang ran out of memory"}
    entry = {"status": "ok", "parsed": parsed}
    if run.get("convert") is not None:  # analysis and emission too, in this worker (convert_file)
        from pathlib import Path

        from .convert import convert_file, has_spec, spec_tables
        kernels, diags, text = convert_file(parsed, run["display"], **run["convert"])
        tables = None if has_spec(Path(run["key"])) else spec_tables(parsed, kernels)
        entry["converted"] = (kernels, diags, text, tables)
        if run.get("lean"):
            entry["parsed"] = _without_bodies(parsed)
    return entry


def _without_bodies(parsed):
    """``parsed`` with its kernels' bodies (their instances' too) and its device functions left
    out (``lean`` runs)."""
    import dataclasses
    unit = parsed.unit
    lean = dataclasses.replace(unit, kernels=tuple(dataclasses.replace(
        k, body=None, instances=tuple(dataclasses.replace(i, body=None) for i in k.instances))
        for k in unit.kernels), device_functions=())
    return dataclasses.replace(parsed, unit=lean)


def main(argv: list[str]) -> int:
    from migrate.runtime.batch import serve

    preload()
    # what the imports made lives as long as the worker: kept out of its garbage collections
    # (every full one would traverse it again)
    gc.freeze()
    # a file's model and analysis allocate millions of objects that their counts free, few in
    # cycles: a young collection every 5000 allocations instead of 700 (memory barely moves)
    gc.set_threshold(5000, 10, 10)
    return serve(argv, parse_one)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
