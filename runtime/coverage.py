"""Checked coverage of tile-form kernels: which emitted branches a check's runs take, and the
extra tile sizes that make every branch run.

A lifted map (``migrate/emit/tile.py``) prints two branches per block: the *full tile*
(``if b_x * tile_x + tile_x <= extent_x and ... <= n:``, what GPUs run at real sizes, guards
dropped) and the *last tile* (``else:``, every guard kept). A spec smaller than one tile (n = 240,
tile 1024) runs only the last tile. :func:`plan` reads the branches from the emitted module's
text and, from the spec's grid, block and scalars, works out which cases each tile size gives:
``full tile``, ``last tile``, ``no full tile`` (a run with no full tile at all), and in 2-D and
3-D ``last tile, partial along y only`` / ``... x only`` (rows and columns partial alone). It
picks at most :data:`MAX_EXTRA_RUNS` other tiles (powers of two, no more elements than the
module's own tile, as large as possible, with its elements per thread) so that every case occurs. An extra run is the same launch on the
same inputs with another ``tile=``: the original runs once, the migrated kernel once per tile.
"""
from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

from .tilelang_support import fit_tile

__all__ = ["Plan", "plan", "unreached", "BRANCHES", "MAX_EXTRA_RUNS"]

#: extra runs of the migrated kernel per spec (each is one compile of the C target)
MAX_EXTRA_RUNS = 2
#: blocks one extra run may launch (the C target runs them one after another)
MAX_BLOCKS = 1 << 16

#: the emitted branches (the other cases are kinds of blocks the last-tile branch takes)
BRANCHES = ("full tile", "last tile")


def unreached(entries: list[dict]) -> list[dict]:
    """The branches of a ``check.coverage`` list that no run took (each is note M4003)."""
    return [e for e in entries if e["branch"] in BRANCHES and not e["ran"]]


@dataclass
class Plan:
    """The branches of one kernel and the runs that take them."""

    branches: dict = field(default_factory=dict)  # "full tile"/"last tile" -> module line
    cases: list = field(default_factory=list)      # every case that should occur
    runs: list = field(default_factory=list)       # [(options or None, tile, cases it gives)]
    why: str = ""                                   # why coverage cannot be worked out ("" when it can)

    def extra(self) -> list[dict]:
        """Factory options of the runs beyond the spec's own."""
        return [opts for opts, _tile, _cases in self.runs if opts is not None]

    def report(self, ran: list[bool]) -> list[dict]:
        """report.json ``check.coverage``: each branch and case, its module line, whether a run
        that completed (``ran[i]`` for ``runs[i]``) took it, with which tile, and why not."""
        taken: dict = {}
        for (opts, tile, cases), ok in zip(self.runs, ran):
            for c in cases:
                if ok:
                    taken.setdefault(c, list(tile))
        out = []
        for case in self.cases:
            branch = "full tile" if case == "full tile" else "last tile"
            entry = {"branch": case, "line": self.branches.get(branch), "ran": case in taken,
                     "tile": taken.get(case)}
            if case not in taken:
                entry["why"] = self.why or ("no tile size up to the module's own gives this case at the spec's sizes"
                                            if ran and all(ran) else "a run that would take it did not complete")
            out.append(entry)
        return out


class _T:
    """The few ``T.`` forms a full-tile bound may use (``T.Cast(T.int32, n)``), as plain ints."""

    int32 = int64 = uint32 = uint64 = "int"

    @staticmethod
    def Cast(_dtype, value):
        return int(value)


def _factory(text: str, name: str) -> tuple[str, int] | None:
    start = text.find(f"\ndef make_{name}(")
    if start < 0:
        return None
    end = text.find("\n    return ", start)
    return text[start + 1:end if end > 0 else len(text)], text[:start + 1].count("\n") + 1


def plan(module: str | Path, kernel) -> Plan | None:
    """The coverage plan of ``kernel`` (a KernelSpec) in the emitted ``module``; None when the
    kernel has no full-tile branch (not a tile-form map)."""
    try:
        text = Path(module).read_text(encoding="utf-8")
    except OSError:
        return None
    found = _factory(text, kernel.name)
    if found is None:
        return None
    body, first_line = found
    lines = body.splitlines()
    full_at = next((i for i, ln in enumerate(lines) if "# a full tile:" in ln), None)
    last_at = next((i for i, ln in enumerate(lines) if "# the last tile:" in ln), None)
    if full_at is None or last_at is None:
        return None
    cond = re.match(r"\s*if (.*):(?:\s+# L\d+)?\s*$", lines[full_at - 1])
    out = Plan(branches={"full tile": first_line + full_at - 1, "last tile": first_line + last_at - 1})
    fit = re.search(r"^\s*((?:tile_[xyz], )+)= fit_tile\(tile, \(([^)]*)\)(, threads if fill else 0)?(?:, fast=(\d+))?\)", body, re.M)
    default = re.search(r"\btile=\(([\d, ]+)\)", lines[0])
    threads = re.search(r"\bthreads=(\d+)", lines[0])
    if cond is None or fit is None or default is None:
        out.why = "the module's tile branches are not in the form the checker reads"
        return out
    dims = [d.strip()[-1] for d in fit.group(1).split(",") if d.strip()]
    default_tile = tuple(int(v) for v in default.group(1).split(",") if v.strip())
    per_thread = max(1, _prod(default_tile) // int(threads.group(1))) if threads else None
    ns = {"T": _T, **{a.name: a.value for a in kernel.args if a.is_scalar}}
    for d, g, b in zip("xyz", kernel.grid, kernel.block):
        ns[f"grid_{d}"], ns[f"block_{d}"] = g, b
    try:
        for m in re.finditer(r"^\s*(extent_[xyz]) = (.+?)(?:\s+#.*)?$", body, re.M):
            ns[m.group(1)] = int(eval(m.group(2), {"__builtins__": {}}, ns))  # noqa: S307 (our own module)
        fit_extents = [ns.get(e.strip()) if e.strip() != "None" else None for e in fit.group(2).split(",") if e.strip()]
        # the blocks along each dimension: T.Kernel(T.ceildiv(EXTENT, tile_d), ...)
        kernel_line = next(ln for ln in lines if "with T.Kernel(" in ln)
        spans = {m.group(2): int(eval(m.group(1), {"__builtins__": {}}, ns))  # noqa: S307
                 for m in re.finditer(r"T\.ceildiv\((.+?), tile_([xyz])\)", kernel_line)}
        extents = [spans[d] for d in dims]
        bounds = {d: [] for d in dims}
        for term in cond.group(1).split(" and "):
            m = re.match(r"\s*b([xyz]) \* tile_\1 \+ tile_\1 <= (.+)$", term)
            if m is None:
                raise ValueError(term)
            bounds[m.group(1)].append(int(eval(m.group(2), {"__builtins__": {}}, ns)))  # noqa: S307
    except Exception as exc:  # a bound the spec does not give (a template value, a name it lacks)
        out.why = f"the full-tile bound is not computable from the spec ({type(exc).__name__}: {exc})"
        return out
    limit = {d: min(bounds[d]) if bounds[d] else extents[i] for i, d in enumerate(dims)}
    out.cases = ["full tile", "last tile", "no full tile"]
    if len(dims) > 1:
        out.cases += [f"last tile, partial along {d} only" for d in dims]

    def cases(tile) -> set:
        per_dim = {}
        for d, t, e in zip(dims, tile, extents):
            blocks = -(-e // t)
            per_dim[d] = ({b * t + t <= limit[d] for b in range(blocks)} if blocks <= MAX_BLOCKS else {True, False})
        got = set()
        if all(True in s for s in per_dim.values()):
            got.add("full tile")
        else:
            got.add("no full tile")
        if any(False in s for s in per_dim.values()):
            got.add("last tile")
        for d in dims if len(dims) > 1 else ():
            if False in per_dim[d] and all(True in per_dim[o] for o in dims if o != d):
                got.add(f"last tile, partial along {d} only")
        return got

    # the default run's tile as the factory fits it (fit_tile, filling the GPU where the module
    # asks); the coverage runs ask for their tiles with fill=False, which are only fitted
    fills = fit.group(3) is not None
    fill_threads = int(threads.group(1)) if fills and threads else 0
    fitted = fit_tile(default_tile, fit_extents, fill_threads, fast=int(fit.group(4) or -1))
    out.runs.append((None, fitted, sorted(cases(fitted))))
    missing = set(out.cases) - set(out.runs[0][2])
    # powers of two from the extent's own (one tile: no full tile where the domain is shorter)
    # down to one element, the largest first, no more elements per tile than the module's own.
    # Only powers of two, the tiles the module and its tune space use (a tile of 768 once made the
    # C target write past a half2 kernel's output: TileLang's DecoupleTypeCast, corrected by
    # tilelang_support._patch_nested_guards); a domain of a power of two gets its last-tile branch
    # from the run with no full tile
    choices = [[p >> k for k in range(0, 24) if p >> k >= 1] for p in fit_tile((1 << 62,) * len(extents), extents)]
    shape = [math.log2(t) for t in fitted]
    candidates = sorted((t for t in itertools.product(*choices) if _prod(t) <= max(_prod(fitted), _prod(default_tile))),
                        key=lambda t: (-_prod(t), sum(abs(math.log2(v) - w) for v, w in zip(t, shape))))
    while missing and len(out.runs) <= MAX_EXTRA_RUNS:
        best, best_gain = None, set()
        for tile in candidates:
            if _prod(-(-e // t) for t, e in zip(tile, extents)) > MAX_BLOCKS:
                continue
            gain = cases(tile) & missing
            if len(gain) > len(best_gain):
                best, best_gain = tile, gain
        if best is None:
            break
        opts = {"tile": best, **({"fill": False} if fills else {})}
        if per_thread:
            opts["threads"] = max(1, min(int(threads.group(1)), _prod(best) // per_thread))
        out.runs.append((opts, best, sorted(cases(best))))
        missing -= best_gain
    return out


def _prod(values) -> int:
    out = 1
    for v in values:
        out *= int(v)
    return out
