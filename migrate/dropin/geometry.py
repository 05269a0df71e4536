"""The launch geometries a drop-in build lowers each migrated kernel for: the launcher's defaults
(the launch sites' constants, which the emitted module carries) and the launches of a recorded
run of the program (``OUT/traces/<program>``, a ``--traces`` folder, or a CPU recording made by
``migrate build --record cpu``). A launch at any other geometry runs the original kernel."""
from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

from ..runtime.tilelang_support import LaunchError, dims


def launcher_default(module, kernel: str):
    """(grid, block, shared bytes) of the launcher ``kernel`` in ``module`` where it has
    defaults for the grid and block, else None."""
    fn = getattr(module, kernel, None)
    if not callable(fn) or isinstance(fn, type):
        return None
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None
    grid, block = params.get("grid"), params.get("block")
    shared = params.get("shared_bytes")
    if grid is None or block is None or grid.default in (None, inspect.Parameter.empty) \
            or block.default in (None, inspect.Parameter.empty):
        return None
    shared_value = shared.default if shared is not None and isinstance(shared.default, int) else 0
    try:
        return dims(grid.default), dims(block.default), int(shared_value)
    except (TypeError, ValueError, LaunchError):
        return None


def recorded(trace_dir: Path) -> dict[str, list[tuple]]:
    """kernel name -> the (grid, block, shared bytes) of its recorded launches in ``trace_dir``
    (its ``manifest.jsonl``), in order, each once; a template launch is listed under its name as
    written (``k<float>``)."""
    manifest = Path(trace_dir) / "manifest.jsonl"
    out: dict[str, list[tuple]] = {}
    if not manifest.is_file():
        return out
    for line in manifest.read_text().splitlines():
        try:
            d = json.loads(line)
        except json.JSONDecodeError:
            break
        if "grid" not in d or "block" not in d:
            continue
        geometry = (dims(d["grid"]), dims(d["block"]), int(d.get("shared_bytes") or 0))
        name = re.sub(r"\s+", "", str(d.get("kernel", "")))
        rows = out.setdefault(name, [])
        if geometry not in rows:
            rows.append(geometry)
    return out


def default_trusted(default, launches: list[dict]) -> bool:
    """Whether a launcher's default geometry (:func:`launcher_default`) can stand for a kernel's
    launches (report.json's ``launches``): not where its shared bytes are 0 and a launch passes
    shared bytes that are not a constant (the 0 is the launcher's fallback, not what the program
    launches with: a recorded run says)."""
    if default is None:
        return False
    if default[2]:
        return True
    for launch in launches:
        shared = launch.get("shared_bytes")
        if shared is not None and not re.fullmatch(r"\s*\(?\s*\d+[uUlL]*\s*\)?\s*", str(shared)):
            return False
    return True


def geometries(module, kernel: str, traces: dict | None, launches: list[dict] | None = None) -> list[tuple]:
    """The geometries to build ``kernel`` for: its recorded launches', then its launcher's default
    (where :func:`default_trusted` for its ``launches``)."""
    out = list((traces or {}).get(kernel, ()))
    default = launcher_default(module, kernel)
    if not default_trusted(default, launches or []):
        default = None
    if default is not None and default not in out:
        out.append(default)
    return out
