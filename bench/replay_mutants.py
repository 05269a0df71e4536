"""Can the replayed check fail? Operators flipped in emitted modules, replayed on the recorded
launches of the program's own run (issue 13's mutation test).

    python bench/replay_mutants.py --out OUT --rows REPLAY.json [--per-kernel 6] [--json FILE]

OUT is a converted folder whose traces were kept (``bench/realworld_replay.py --keep-traces``,
or ``migrate convert ... --check cpu --run ARGS``); REPLAY.json is what realworld_replay.py wrote
(its rows name the kernels whose replay passed). For each such kernel, up to ``--per-kernel``
mutants flip one operator of the kernel's body (``+``/``-``, ``*``/``+``, ``<``/``<=``, ``>``/``>=``,
``==``/``!=``, ``//``/``*``, ``and``/``or``); each mutant is written to a folder of its own under
OUT/mutants and replayed on every recorded launch of the kernel. A mutant *changes the output*
when some buffer it leaves differs, in any bit, from what the unmutated migrated kernel leaves
on the same launch; it is *killed* when the replayed check says fail or error. Prints the kill
rate over output-changing mutants (the issue asks >= 95 %) and lists the survivors.
"""
from __future__ import annotations

import argparse
import ast
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

_FLIPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Add, ast.FloorDiv: ast.Mult, ast.Div: ast.Mult,
          ast.Mod: ast.FloorDiv, ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
          ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.And: ast.Or, ast.Or: ast.And, ast.BitAnd: ast.BitOr,
          ast.BitOr: ast.BitAnd, ast.LShift: ast.RShift, ast.RShift: ast.LShift}


def _sites(tree: ast.Module, kernel: str) -> list[tuple[ast.AST, int]]:
    """(operator node holder, index) of every flippable operator inside ``kernel``'s factory."""
    out = []
    for fn in ast.walk(tree):
        if isinstance(fn, ast.FunctionDef) and fn.name == f"make_{kernel}":  # the factory
            bodies = [f for f in ast.walk(fn) if isinstance(f, ast.FunctionDef) and any(
                ast.unparse(d).endswith("prim_func") for d in f.decorator_list)]
            for node in (n for body in bodies for n in ast.walk(body)):  # the kernel itself
                if isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _FLIPS:
                    out.append((node, 0))
                elif isinstance(node, ast.BoolOp) and type(node.op) in _FLIPS:
                    out.append((node, 0))
                elif isinstance(node, ast.Compare):
                    out += [(node, i) for i, op in enumerate(node.ops) if type(op) in _FLIPS]
            break
    return sorted(out, key=lambda s: (s[0].lineno, s[0].col_offset, s[1]))


def _mutant(source: str, kernel: str, k: int) -> tuple[str, str]:
    """The module with the k-th operator of ``kernel`` flipped, and the line it changed."""
    tree = ast.parse(source)
    node, i = _sites(tree, kernel)[k]
    if isinstance(node, ast.Compare):
        node.ops[i] = _FLIPS[type(node.ops[i])]()
    else:
        node.op = _FLIPS[type(node.op)]()
    lines = source.splitlines()
    changed = ast.unparse(node)
    line = lines[node.lineno - 1]
    if node.lineno == getattr(node, "end_lineno", node.lineno):  # rewrite the one line, keep the rest
        seg = line[node.col_offset:node.end_col_offset]
        lines[node.lineno - 1] = line[:node.col_offset] + changed + line[node.end_col_offset:]
        return "\n".join(lines) + "\n", f"L{node.lineno}: {seg.strip()} -> {changed}"
    return ast.unparse(tree) + "\n", f"L{node.lineno}: -> {changed}"


def _judge(path: str, launches, outputs) -> tuple[str, bool]:
    """(verdict, changed) of a mutant module replayed on ``launches``; ``outputs`` are what the
    unmutated kernel left on each."""
    from migrate.runtime.replay import replay

    changed, verdict = False, "pass"
    for L in launches:
        try:
            r = replay(path, L)
        except Exception as exc:  # the mutant does not build or run: the check cannot pass it
            return f"error ({type(exc).__name__})", True
        if r.status != "pass":
            verdict = r.status
        changed |= any(not np.array_equal(r.outputs[n], outputs[L.seq][n], equal_nan=True) for n in r.outputs)
    return verdict, changed


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--rows", required=True, type=Path)
    ap.add_argument("--per-kernel", type=int, default=6)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a mutant may take (a hang is caught)")
    ap.add_argument("--resume", action="store_true", help="keep the kernels already in --json, mutate the others")
    args = ap.parse_args(argv)

    from migrate.runtime.checker import trace_stem
    from migrate.runtime.replay import replay
    from migrate.runtime.traces import read

    report = json.loads((args.out / "report.json").read_text())
    rows = [r for r in json.loads(args.rows.read_text())["rows"] if r["status"] == "pass"]
    outputs = {e["file"]: e["output"] for e in report["files"]}
    program_of = {f: p for p in report.get("programs", []) for f in p["files"]}
    results = json.loads(args.json.read_text()) if args.resume and args.json and args.json.is_file() else []
    done = {(r["file"], r["kernel"]) for r in results}
    for row in rows:
        if (row["file"], row["kernel"]) in done:
            continue
        prog = program_of.get(row["file"])
        if prog is None:
            continue
        launches = [L for L in read(args.out / "traces" / trace_stem(prog)) if L.name == row["kernel"] and not L.skipped]
        module = args.out / outputs[row["file"]]
        source = module.read_text()
        sites = _sites(ast.parse(source), row["kernel"])
        if not launches or not sites:
            continue
        base = {L.seq: replay(module, L) for L in launches}
        if any(r.status != "pass" for r in base.values()):
            continue  # traces of another run than the one that passed
        picks = sorted({round(j * (len(sites) - 1) / max(1, args.per_kernel - 1)) for j in range(args.per_kernel)})
        for k in picks:
            text, what = _mutant(source, row["kernel"], k)
            folder = args.out / "mutants" / Path(row["file"]).with_suffix("") / row["kernel"] / f"m{k}"
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / module.name
            path.write_text(text)
            start = time.perf_counter()
            left = {L.seq: base[L.seq].outputs for L in launches}
            # each mutant in a process of its own: one that crashes the process is caught, not fatal
            one = ProcessPoolExecutor(max_workers=1, max_tasks_per_child=1)
            try:
                verdict, changed = one.submit(_judge, str(path), launches, left).result(timeout=args.timeout)
            except (BrokenProcessPool, TimeoutError) as exc:  # the process died or hung: the check cannot pass
                verdict, changed = f"error ({type(exc).__name__})", True  # such a mutant (a fault of the harness
                # itself, such as a launch that cannot be sent to the process, is raised, never counted)
                for proc in list(getattr(one, "_processes", {}).values()):
                    proc.kill()
            finally:
                one.shutdown(wait=False, cancel_futures=True)
            killed = verdict != "pass"
            results.append({"file": row["file"], "kernel": row["kernel"], "mutant": what, "changed": changed,
                            "verdict": verdict, "killed": killed, "seconds": round(time.perf_counter() - start, 2)})
            print(f"{row['kernel']:30s} {what[:60]:60s} {'changed' if changed else 'same   '} {verdict}", flush=True)
            if args.json:
                args.json.write_text(json.dumps(results, indent=1))
    changing = [r for r in results if r["changed"]]
    killed = [r for r in changing if r["killed"]]
    print(f"\n{len(results)} mutants of {len({(r['file'], r['kernel']) for r in results})} kernels; "
          f"{len(changing)} change an output on the recorded launches; killed {len(killed)} "
          f"({100 * len(killed) / max(1, len(changing)):.1f} %); equal on every launch: {len(results) - len(changing)}")
    for r in changing:
        if not r["killed"]:
            print(f"  survived: {r['file']} {r['kernel']} {r['mutant']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
