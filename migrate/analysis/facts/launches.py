"""What the launch sites of a file say of a kernel: the grid, block and dynamic shared memory
that every launch gives as the same constant."""
from __future__ import annotations

from ...ir import model as m


def launch_defaults(unit: m.TranslationUnit, kernel: str) -> dict[str, str]:
    """Launcher defaults from the CUDA launch sites: ``grid``/``block``/``shared_bytes`` where
    every launch of the kernel in this file gives the same compile-time constant."""
    sites = [s for s in unit.launches if s.kernel == kernel]
    out = {}
    for field in ("grid", "block", "shared_bytes"):
        values = {_launch_value(getattr(s, field), field) for s in sites}
        if sites and len(values) == 1 and None not in values:
            out[field] = str(values.pop())
    return out


def _launch_value(expr, field: str):
    if expr is None:
        return 0 if field == "shared_bytes" else None
    if field != "shared_bytes" and expr.dims is not None:
        return expr.dims[0] if expr.dims[1:] == (1, 1) else expr.dims
    return expr.value if isinstance(expr.value, int) else None
