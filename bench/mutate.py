"""Mutation testing of the equivalence check on emitted modules (issue 14).

    python bench/mutate.py --out OUT [--seed S] [--per-kernel N] [--kernel NAME] [--limit K] [--json FILE]

OUT is a converted folder (``migrate convert SRC -o OUT``, best with ``--check cpu`` so that
report.json says which kernels pass). For every kernel whose check passes, up to
``--per-kernel`` mutants of its ``T.prim_func`` are made, drawn round-robin over five kinds:

- ``operator``: an arithmetic or boolean operator flipped (the table of bench/replay_mutants.py);
- ``index``: a buffer subscript ``b[e]`` made ``b[e + 1]``;
- ``constant``: a number ``c`` made ``c + 1``;
- ``guard``: in an ``if`` test or a ``T.if_then_else`` condition, ``<`` made ``<=`` (``>`` made ``>=``);
- ``barrier``: a ``T.sync_threads()`` / ``T.barrier*()`` statement deleted.

Each mutant is written into a scratch copy of OUT that holds only the kernel's file (its module,
original source, spec and a report.json listing only it) and checked there with
``python -m migrate check --from SCRATCH --kernel NAME``. A mutant is *killed* when any checked
instance fails or errs. A mutant that passes is run again beside the unmutated module on the
check's own inputs: if every output is bit-equal it is ``no-change`` (the check's inputs cannot
tell it apart; reported separately, e.g. a branch the inputs never reach), else ``survived``.
Prints the kill rate over output-changing mutants (killed + survived), per kind, and the survivors.
"""
from __future__ import annotations

import argparse
import ast
import copy
import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from replay_mutants import _FLIPS  # noqa: E402  (the operator table, shared with the replay mutants)

KINDS = ("operator", "index", "constant", "guard", "barrier")
_GUARD = {ast.Lt: ast.LtE, ast.Gt: ast.GtE}
_BARRIERS = ("sync_threads", "barrier", "barrier_arrive", "barrier_wait", "sync_warp")


def _body(tree: ast.Module, kernel: str) -> ast.FunctionDef | None:
    """The ``@T.prim_func`` inside ``make_<kernel>``."""
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name == f"make_{kernel}":
            for f in ast.walk(fn):
                if isinstance(f, ast.FunctionDef) and any(ast.unparse(d).endswith("prim_func") for d in f.decorator_list):
                    return f
    return None


def _is_if_then_else(node) -> bool:
    return isinstance(node, ast.Call) and ast.unparse(node.func).endswith("if_then_else")


def sites(tree: ast.Module, kernel: str) -> list[tuple[str, ast.AST, int]]:
    """(kind, node, operand index) of every mutation site in ``kernel``'s prim_func, in source order."""
    fn = _body(tree, kernel)
    if fn is None:
        return []
    guards = set()
    for node in ast.walk(fn):
        tests = [node.test] if isinstance(node, (ast.If, ast.IfExp, ast.While)) else (
            [node.args[0]] if _is_if_then_else(node) and node.args else [])
        for t in tests:
            guards.update(id(c) for c in ast.walk(t) if isinstance(c, ast.Compare))
    out = []
    for node in (n for stmt in fn.body for n in ast.walk(stmt)):  # the body, not the signature
        if isinstance(node, (ast.BinOp, ast.AugAssign, ast.BoolOp)) and type(node.op) in _FLIPS:
            out.append(("operator", node, 0))
        elif isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if id(node) in guards and type(op) in _GUARD:
                    out.append(("guard", node, i))
                elif type(op) in _FLIPS:
                    out.append(("operator", node, i))
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            out.append(("index", node, 0))
        elif isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value is not True:
            out.append(("constant", node, 0))
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                ast.unparse(node.value.func).split(".")[-1] in _BARRIERS:
            out.append(("barrier", node, 0))
    return sorted(out, key=lambda s: (s[1].lineno, s[1].col_offset, KINDS.index(s[0]), s[2]))


def mutant(source: str, kernel: str, k: int) -> tuple[str, str, str]:
    """(module text, kind, description) with the k-th site of ``kernel`` mutated."""
    tree = ast.parse(source)
    kind, node, i = sites(tree, kernel)[k]
    before = ast.unparse(node)
    if kind == "barrier":
        new: ast.AST = ast.Pass()
    else:
        new = copy.deepcopy(node)
        if kind == "guard":
            new.ops[i] = _GUARD[type(new.ops[i])]()
        elif kind == "operator" and isinstance(new, ast.Compare):
            new.ops[i] = _FLIPS[type(new.ops[i])]()
        elif kind == "operator":
            new.op = _FLIPS[type(new.op)]()
        elif kind == "index":
            sl = new.slice
            if isinstance(sl, ast.Tuple):
                sl.elts[-1] = ast.BinOp(sl.elts[-1], ast.Add(), ast.Constant(1))
            else:
                new.slice = ast.BinOp(sl, ast.Add(), ast.Constant(1))
        elif kind == "constant":
            new.value = node.value + 1
    after = ast.unparse(new)
    lines = source.splitlines()
    if node.lineno != node.end_lineno:
        raise ValueError(f"site spans lines {node.lineno}-{node.end_lineno}")
    line = lines[node.lineno - 1]
    lines[node.lineno - 1] = line[:node.col_offset] + after + line[node.end_col_offset:]
    text = "\n".join(lines) + "\n"
    ast.parse(text)
    return text, kind, f"L{node.lineno}: {before} -> {after}"


def pick(all_sites: list, n: int, rng: random.Random) -> list[int]:
    """Up to ``n`` site indices, round-robin over the kinds (each kind's sites shuffled)."""
    by_kind = {kd: [j for j, s in enumerate(all_sites) if s[0] == kd] for kd in KINDS}
    for v in by_kind.values():
        rng.shuffle(v)
    out = []
    while len(out) < n and any(by_kind.values()):
        for kd in KINDS:
            if by_kind[kd] and len(out) < n:
                out.append(by_kind[kd].pop())
    return sorted(out)


def scratch(out: Path, report: dict, entry: dict, module_text: str, dest: Path) -> Path:
    """A copy of OUT holding only ``entry``'s file, its module replaced by ``module_text``."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for key in ("original", "spec"):
        if entry.get(key):
            (dest / entry[key]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(out / entry[key], dest / entry[key])
    (dest / entry["output"]).parent.mkdir(parents=True, exist_ok=True)
    (dest / entry["output"]).write_text(module_text)
    mine = dict(report, files=[entry], kernels=[k for k in report["kernels"] if k["file"] == entry["file"]],
                programs=[])
    (dest / "report.json").write_text(json.dumps(mine))
    return dest


def check(folder: Path, kernel: str, timeout: float, seed: int | None = None,
          schedule: str = "forward", device: str = "cpu", sanitize: str | None = None) -> tuple[str, str]:
    """(verdict, message) of ``migrate check --from folder --kernel kernel``: pass, fail, error, skipped."""
    res = folder / "check.json"
    cmd = [sys.executable, "-m", "migrate", "check", "--from", str(folder), "--kernel", kernel, "--json", str(res),
           "--device", device]
    if sanitize:
        cmd += ["--sanitize", sanitize]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    if schedule != "forward":
        cmd += ["--schedule", schedule]
    try:
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "error", f"check ran past {timeout:.0f} s"
    if "Traceback (most recent call last)" in p.stderr + p.stdout:
        return "crash", (p.stderr + p.stdout)[-800:]
    if not res.is_file():
        return "error", f"no result (exit {p.returncode}): {(p.stderr + p.stdout)[-400:]}"
    data = json.loads(res.read_text())
    rows = data if isinstance(data, list) else data.get("kernels", data.get("checks", []))
    rows = [r for r in rows if r.get("kernel") == kernel]
    if not rows:
        return "error", f"kernel not in the check's results (exit {p.returncode})"
    statuses = [r["status"] for r in rows]
    for s in ("error", "fail"):
        if s in statuses:
            return s, next(r.get("message", "") for r in rows if r["status"] == s)[:300]
    if all(s == "skipped" for s in statuses):
        return "skipped", rows[0].get("message", "")[:300]
    return "pass", ""


def outputs(folder: Path, entry: dict, kernel: str, seed: int | None, timeout: float,
            schedule: str = "forward", device: str = "cpu") -> dict:
    """The migrated kernel's outputs on each spec'd instance's check inputs: {id: {buffer: array}}."""
    from migrate.runtime.checker import _run_migrated
    from migrate.runtime.inputs import DEFAULT_SEED, make_inputs
    from migrate.runtime.spec import load_spec

    seed = DEFAULT_SEED if seed is None else seed
    specs = [k for k in load_spec(folder / entry["spec"]) if k.name == kernel]
    runs = []
    for k in specs:
        inp = make_inputs(k, seed)
        runs.append({"key": k.id, "spec_path": k.spec_path, "index": k.index, "args": inp.copy().args,
                     "symbols": dict(inp.symbols)})
    got = _run_migrated(folder / entry["output"], "c" if device == "cpu" else "cuda", runs, timeout, schedule)
    return {key: (v.get("outputs") if v.get("status") == "ok" else None) for key, v in got.items()}


def same_outputs(a: dict, b: dict) -> bool:
    for key in a:
        if a[key] is None or b.get(key) is None:
            return False
        for name, arr in a[key].items():
            if not np.array_equal(np.asarray(arr), np.asarray(b[key][name]), equal_nan=True):
                return False
    return True


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path, help="a folder written by migrate convert")
    ap.add_argument("--seed", type=int, default=1, help="picks the mutants (the check's inputs keep their seed)")
    ap.add_argument("--per-kernel", type=int, default=5)
    ap.add_argument("--kernel", action="append", default=None, help="only these kernels (repeatable)")
    ap.add_argument("--limit", type=int, default=None, help="at most this many kernels")
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ",".join(KINDS))
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--schedule", choices=("forward", "reverse", "random"), default="forward",
                    help="the checks' thread order (migrate check --schedule): reverse runs a portable "
                         "kernel's phases last thread first, so that a deleted barrier can show")
    ap.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="the checks' device")
    ap.add_argument("--sanitize", default=None, metavar="TOOLS",
                    help="with --device cuda: the checks also run compute-sanitizer (migrate check --sanitize)")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--work", type=Path, default=None, help="scratch folder (default: a temporary one)")
    args = ap.parse_args(argv)
    kinds = [k for k in args.kinds.split(",") if k]

    report = json.loads((args.out / "report.json").read_text())
    files = {e["file"]: e for e in report["files"] if e.get("output") and e.get("spec") and e.get("original")}
    targets = [k for k in report["kernels"] if k["file"] in files and k["form"] in ("tile", "portable")
               and (args.kernel is None or k["kernel"] in args.kernel)]
    rng = random.Random(args.seed)
    work = args.work or Path(tempfile.mkdtemp(prefix="c2t-mutate-"))
    results, start, done = [], time.time(), 0
    for k in targets:
        if args.limit is not None and done >= args.limit:
            break
        entry, name = files[k["file"]], k["kernel"]
        source = (args.out / entry["output"]).read_text()
        base_dir = scratch(args.out, report, entry, source, work / "base")
        status = (k.get("check") or {}).get("status")
        if status != "pass":  # not checked at convert time (or not passing): check the unmutated module
            status, msg = check(base_dir, name, args.timeout, schedule=args.schedule, device=args.device,
                                sanitize=args.sanitize)
            if status != "pass":
                print(f"{name:28s} skipped: the unmutated kernel's check says {status} {msg[:80]}", flush=True)
                continue
        all_sites = [s for s in sites(ast.parse(source), name) if s[0] in kinds]
        if not all_sites:
            continue
        done += 1
        base_out = None
        for j in pick(all_sites, args.per_kernel, rng):
            t0 = time.perf_counter()
            try:
                text, kind, what = mutant(source, name, [i for i, s in enumerate(sites(ast.parse(source), name))
                                                         if s[0] in kinds][j])
            except (ValueError, SyntaxError) as exc:
                print(f"{name:28s} site {j}: not mutable ({exc})", flush=True)
                continue
            folder = scratch(args.out, report, entry, text, work / "m")
            verdict, msg = check(folder, name, args.timeout, schedule=args.schedule, device=args.device,
                                 sanitize=args.sanitize)
            if verdict in ("fail", "error", "crash"):
                outcome = "killed"
            elif verdict == "skipped":
                outcome = "skipped"
            else:
                if base_out is None:
                    base_out = outputs(base_dir, entry, name, None, args.timeout, args.schedule, args.device)
                outcome = "no-change" if same_outputs(base_out, outputs(folder, entry, name, None, args.timeout, args.schedule, args.device)) else "survived"
            results.append({"file": k["file"], "kernel": name, "form": k["form"], "kind": kind, "mutant": what,
                            "verdict": verdict, "outcome": outcome, "message": msg,
                            "seconds": round(time.perf_counter() - t0, 1)})
            print(f"{name:28s} {kind:8s} {what[:70]:70s} {outcome}", flush=True)
            if args.json:
                args.json.write_text(json.dumps({"seed": args.seed, "per_kernel": args.per_kernel, "results": results}, indent=1))
    print(f"\nseed {args.seed}: {len(results)} mutants of {done} kernels in {time.time() - start:.0f} s")
    print(f"{'kind':10s} {'mutants':>7s} {'killed':>7s} {'survived':>8s} {'no-change':>9s} {'skipped':>7s} {'kill %':>7s}")
    for kd in list(kinds) + ["all"]:
        sel = [r for r in results if kd in ("all", r["kind"])]
        c = Counter(r["outcome"] for r in sel)
        changing = c["killed"] + c["survived"]
        rate = f"{100 * c['killed'] / changing:.1f}" if changing else "-"
        print(f"{kd:10s} {len(sel):7d} {c['killed']:7d} {c['survived']:8d} {c['no-change']:9d} {c['skipped']:7d} {rate:>7s}")
    for r in results:
        if r["outcome"] in ("survived", "no-change"):
            print(f"  {r['outcome']:9s} {r['file']} {r['kernel']} ({r['form']}) {r['kind']}: {r['mutant'][:100]}")
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "per_kernel": args.per_kernel, "results": results}, indent=1))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
