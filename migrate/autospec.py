"""Specs without a spec file: the launch configuration and sizes a CUDA file states itself.

``migrate check`` needs, per kernel, the launch shape, a value for each scalar and the element
count of each buffer. A spec file (``NAME.toml``) states them; without one they are taken from
the file's launch site when it gives them as compile-time constants: ``grid``/``block`` (also
``dim3`` variables built from constants), scalar arguments, and buffer sizes from constant-size
``cudaMalloc`` calls of the pointers passed. Which buffers a kernel reads and writes (and so
their roles) comes from the kernel's body. When something cannot be found, :func:`derive` says
exactly what to state in the spec file instead.
"""
from __future__ import annotations

import functools

from .analysis.prepare.vectors import scalar_constants
from .dtypes import SPEC_SIZES as DTYPES
from .ir import model as m

#: Input ranges of generated specs: values any kernel can take (indices stay small).
_RANGES = {"float": [-1.0, 1.0], "int": [0, 3]}
_TOLERANCE = {"float32": "fp32_accum", "float64": "fp64", "float16": "fp16", "bfloat16": "bf16"}


def _written_and_read(fn: m.Function) -> tuple[set[str], set[str]]:
    """Buffer parameters the kernel stores to, and those it loads from (a compound assignment or
    an atomic does both)."""
    views = m.param_views(fn.body)  # stores through a view of a parameter store to it

    def name(e):
        root = m.access_root(e)
        return views.get(root.name, root.name) if root is not None else None

    body = fn.body if fn.body else m.Block((), fn.span)
    targets = list(m.store_targets(body))
    plain = {id(n.target) for n in m.walk(body) if isinstance(n, m.Assign) and n.op == "="}
    written = {name(t) for t in targets}
    read = {name(t) for t in targets if id(t) not in plain}
    read |= {name(n) for n in m.walk(body) if isinstance(n, m.Index) and id(n) not in plain}
    return written - {None}, read - {None}


def _dtype(t: m.CType) -> str | None:
    return t.dtype if isinstance(t, m.Scalar) and t.dtype in DTYPES else None


def derive(fn: m.Function, unit: m.TranslationUnit) -> tuple[dict | None, list[str]]:
    """A ``[[kernel]]`` table for ``fn`` from its first launch site, or None and what is missing."""
    sites = [s for s in unit.launches if s.kernel == fn.name]
    if not sites:
        return None, [f"the launch of {fn.name} (this file never launches it)"]
    best_missing = None

    @functools.cache  # (written, read) of the kernel, found once, for the first site that needs them
    def written_and_read():
        from .analysis.prepare.pointer_views import pointer_aliases
        return _written_and_read(pointer_aliases(fn)[0])

    for site in sites:
        table, missing = _from_site(fn, site, unit, written_and_read)
        if table is not None:
            return table, []
        if best_missing is None or len(missing) < len(best_missing):
            best_missing = missing
    return None, best_missing


def _from_site(fn: m.Function, site: m.LaunchSite, unit: m.TranslationUnit,
               written_and_read) -> tuple[dict | None, list[str]]:
    missing = []
    line = site.span.line
    grid = site.grid.dims if site.grid is not None else None
    block = site.block.dims if site.block is not None else None
    if grid is None:
        missing.append(f"grid (the launch at line {line} gives `{site.grid.text}`, not a constant)")
    if block is None:
        missing.append(f"block (the launch at line {line} gives `{site.block.text}`, not a constant)")
    shared = 0
    if site.shared_bytes is not None:
        if isinstance(site.shared_bytes.value, int):
            shared = site.shared_bytes.value
        else:
            missing.append(f"shared_bytes (`{site.shared_bytes.text}` at line {line})")
    if len(site.args) != len(fn.params):
        return None, missing + [f"the arguments of the launch at line {line}"]
    written, read = written_and_read()
    args = []
    for i, (p, a) in enumerate(zip(fn.params, site.args)):
        if isinstance(p.type, m.Pointer):
            dtype = _dtype(p.type.pointee)
            nbytes = site.alloc_bytes[i] if i < len(site.alloc_bytes) else None
            if dtype is None:
                missing.append(f"buffer '{p.name}' (element type {p.type.pointee} has no spec dtype)")
                continue
            if nbytes is None:
                missing.append(f"buffer '{p.name}' elements (`{a.text}` has no cudaMalloc of a constant size "
                               f"in {site.caller})")
                continue
            # a written buffer is in-out: the kernel may leave part of the allocation unwritten
            # (a tail guard, a halo), and those elements must keep their values on both sides
            role = "inout" if p.name in written else "in"
            entry = {"name": p.name, "buffer": dtype, "elements": nbytes // DTYPES[dtype], "role": role}
            if role != "out":
                entry["range"] = _RANGES["float" if dtype.startswith(("float", "bfloat")) else "int"]
            args.append(entry)
        else:
            dtype = _dtype(p.type)
            if dtype is None or a.value is None or isinstance(a.value, bool):
                missing.append(f"scalar '{p.name}' (`{a.text}` at line {line} is not a constant)")
                continue
            value = float(a.value) if dtype.startswith(("float", "bfloat")) else int(a.value)
            args.append({"name": p.name, "scalar": dtype, "value": value})
    if missing:
        return None, missing
    dtypes = {a.get("buffer") for a in args if "buffer" in a}
    tolerance = "exact"
    for d in ("float64", "float32", "float16", "bfloat16"):
        if d in dtypes:
            tolerance = _TOLERANCE[d]
    symbols = []
    used = {n.name for n in m.walk(fn.body) if isinstance(n, m.Ref) and n.kind in ("constant", "global")} \
        if fn.body else set()
    for g in scalar_constants(unit).globals:  # arrays of vectors as their scalars, as the kernels read them
        if g.storage not in ("constant", "device", "managed") or g.name not in used:
            continue
        # a __device__ global starts from random values on both sides, and is compared after
        scalar = g.storage != "constant" and isinstance(g.type, m.Scalar)
        dtype = _dtype(g.type) if scalar else _dtype(g.type.element) if isinstance(g.type, m.Array) else None
        extent = m.elements(g.type) if scalar or isinstance(g.type, m.Array) else None
        if dtype is None or extent is None:
            what = "__constant__" if g.storage == "constant" else f"__{g.storage}__ global"
            return None, [f"{what} '{g.name}' (its values: a [[kernel.symbols]] entry)"]
        symbols.append({"name": g.name, "dtype": dtype, "elements": extent,
                        "range": _RANGES["float" if dtype.startswith(("float", "bfloat")) else "int"]})
    table = {"name": fn.name, "grid": list(grid), "block": list(block), "shared_bytes": shared,
             "tolerance": tolerance, "args": args, "symbols": symbols,
             "description": f"derived by cuda2tile from the launch at line {line}"}
    if site.template_args:
        table["template"] = list(site.template_args)
    return table, []


def to_toml(tables: list[dict], source: str) -> str:
    lines = [f"# Derived by cuda2tile from the launch sites of {source} (no {source.rsplit('.', 1)[0]}.toml",
             "# beside it). Copy it there and edit it to check other sizes.", ""]
    for t in tables:
        lines.append("[[kernel]]")
        for key in ("name", "template", "grid", "block", "shared_bytes", "tolerance", "description"):
            if key in t:
                lines.append(f"{key} = {_toml(t[key])}")
        for a in t["args"]:
            lines.append("")
            lines.append("[[kernel.args]]")
            for key, value in a.items():
                lines.append(f"{key} = {_toml(value)}")
        for sym in t.get("symbols", ()):
            lines.append("")
            lines.append("[[kernel.symbols]]")
            for key, value in sym.items():
                lines.append(f"{key} = {_toml(value)}")
        lines.append("")
    return "\n".join(lines)


def _toml(v) -> str:
    import json
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    return json.dumps(v)
