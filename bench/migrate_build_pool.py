"""Drop-in builds of real-code pool programs (issue 16): convert a fixed list of pool programs,
`migrate build` them (geometries from the launch sites' constants and from each program's run on
the CPU executor with its Makefile arguments), print a table (built or failed and why, kernels
running migrated code per program) and pack what `migrate run` needs on the GPU machine into one
tarball: build.json (its paths made relative to the unpacked folder) and per program the
original and rebuilt executables and the data files of the program's folder. No GPU is needed;
nvcc must be on PATH.

    python bench/migrate_build_pool.py [--pool build/realworld] [--work /tmp/c2t_build_pool]
        [--list bench/pool_dropin_programs.txt] [--jobs 2] [--shards 2] [--record-timeout 40]
        [--pack build/dropin_gpu/pool_dropin.tar.xz] [--retry] [--write-list FILE] [--pack-all] [--table-only]

WORK/out is the conversion, WORK/build the build (kept: a second run builds only what is
missing from WORK/build/build.json). On the GPU machine: bash bench/gpu_migrate_run_pool.sh.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: files of a program's folder that are its sources or its build, not data it reads at run time
SOURCE_SUFFIXES = {".cu", ".cuh", ".h", ".hpp", ".hh", ".cpp", ".cc", ".c", ".cxx", ".inc", ".py", ".sh", ".md",
                   ".txt.in", ".cmake", ".o", ".a", ".so"}
SOURCE_NAMES = {"Makefile", "makefile", "CMakeLists.txt", "LICENSE", "README", "README.md", "readme.md"}
#: the bytes of data files one program may carry (more: its data stays behind and it runs without)
DATA_BUDGET = 1 << 20


LIST_HEADER = """\
# Real-code pool programs whose drop-in build (bench/migrate_build_pool.py) built here with at
# least one kernel running migrated code: all their kernels migrated (tile/portable/simt, no
# template), run arguments from the Makefile naming no file. One pool folder a line.
"""


def read_list(path: Path) -> list[str]:
    """The program names of a list file (one a line; '#' starts a comment)."""
    names = []
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            names.append(line)
    return names


def args_table(pool: Path, names: list[str]) -> dict:
    """name -> the Makefile's run arguments (pool.json's), for the listed programs that have them."""
    cases = {c["name"]: c for c in json.loads((pool / "pool.json").read_text())["cases"]}
    return {n: cases[n]["run_args"] for n in names if n in cases and cases[n].get("run_args") is not None}


def first_error(log: str) -> str:
    """The first line of an nvcc log that says what failed."""
    lines = [l.strip() for l in (log or "").splitlines() if l.strip()]
    for l in lines:
        if re.search(r"\berror\b|undefined reference|cannot find", l):
            return l
    return lines[0] if lines else ""


def failure_reason(row: dict) -> str:
    """A short class of why a program did not build, for the table's totals."""
    if row.get("status") == "built":
        return ""
    side = "original" if row.get("status") == "original does not build" else "rebuilt"
    err = first_error((row.get(side) or {}).get("error", "") or row.get("error", ""))
    for key, label in (("undefined reference", "link: undefined reference"), ("cannot find -l", "link: library"),
                       ("No such file", "missing include"), ("internal error", "internal error"),
                       ("identifier", "undeclared identifier"), ("no instance of", "no matching overload"),
                       ("took longer", "nvcc time-out")):
        if key in err:
            return f"{side}: {label}"
    return f"{side}: {err[:80]}"


def table(build: dict) -> str:
    """The build table: per program its status, kernels migrated, variants, launch sites
    rewritten, and why a program failed; the totals last."""
    out = [f"{'program':40s} {'status':24s} {'migrated':>9s} {'variants':>8s} {'sites':>7s}  why"]
    reasons: dict = {}
    with_migrated = 0
    for p in build["programs"]:
        s = p.get("summary", {})
        why = failure_reason(p)
        if why:
            reasons[why] = reasons.get(why, 0) + 1
        elif s.get("migrated", 0):
            with_migrated += 1
        sites = s.get("launch_sites_rewritten", 0)
        out.append(f"{p['program']:40s} {p.get('status', '?'):24s} {s.get('migrated', 0):>4d}/{s.get('kernels', 0):<4d} "
                   f"{s.get('variants', 0):>8d} {sites:>3d}/{sites + s.get('launch_sites_left', 0):<3d}  {why}")
    s = build["summary"]
    out.append(f"\n{s['built']} of {s['programs']} programs built ({s['failed']} failed), {with_migrated} built with "
               f"at least one kernel running migrated code; {s['kernels_migrated']} of {s['kernels']} kernels "
               "run migrated code")
    for why, n in sorted(reasons.items(), key=lambda x: -x[1]):
        out.append(f"  {n:3d}  {why}")
    return "\n".join(out)


def data_files(folder: Path) -> list[Path]:
    """The files of a program's folder that are not its sources: what it may read at run time
    (none where they pass :data:`DATA_BUDGET`)."""
    if not folder.is_dir():
        return []
    found, total = [], 0
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.is_symlink() or path.name in SOURCE_NAMES or path.suffix in SOURCE_SUFFIXES:
            continue
        total += path.stat().st_size
        found.append(path)
    return found if total <= DATA_BUDGET else []


def _add_bytes(tar: tarfile.TarFile, name: str, data: bytes, mode: int = 0o644) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode = len(data), mode
    tar.addfile(info, io.BytesIO(data))


def _stripped(path: Path, scratch: Path) -> Path:
    """A copy of an executable without its symbols (the GPU code is in loaded sections that
    strip keeps); the executable itself where strip is missing or fails."""
    strip = shutil.which("strip")
    if strip is None:
        return path
    copy = scratch / path.name
    shutil.copy2(path, copy)
    return copy if subprocess.run([strip, "-s", str(copy)], capture_output=True).returncode == 0 else path


def pack(build_dir: Path, dest: Path, migrated_only: bool = True) -> dict:
    """Write ``dest`` (tar.xz): build.json with relative paths and per built program its
    executables, build.sh and data files (``<dir>/run/``, its run folder there); with
    ``migrated_only``, only the programs built with a kernel running migrated code (the others'
    run would compare the original with itself). Returns what it holds."""
    import tempfile

    build = json.loads((build_dir / "build.json").read_text())
    rows, sizes = [], {"programs": 0, "data_programs": 0}
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, tarfile.open(dest, "w:xz", preset=9) as tar:
        for row in build["programs"]:
            if migrated_only and not (row.get("status") == "built" and row.get("summary", {}).get("migrated")):
                continue
            row = dict(row)
            folder = build_dir / row["dir"]
            cwd = Path(row["run_cwd"]) if row.get("run_cwd") else None
            row["run_cwd"] = ""
            if row.get("status") == "built":
                sizes["programs"] += 1
                for exe in ("original", "rebuilt"):
                    path = _stripped(folder / exe, Path(scratch))
                    tar.add(path, f"{row['dir']}/{exe}")
                    (Path(scratch) / exe).unlink(missing_ok=True)
                tar.add(folder / "build.sh", f"{row['dir']}/build.sh")
                files = data_files(cwd) if cwd is not None and cwd.is_absolute() else []
                if files:
                    sizes["data_programs"] += 1
                    row["run_cwd"] = f"{row['dir']}/run"
                    for f in files:
                        tar.add(f, f"{row['dir']}/run/{f.relative_to(cwd)}")
            rows.append(row)
        packed = {**build, "output": "", "programs": rows,
                  "summary": {**build.get("summary", {}), "programs": len(rows),
                              "built": sum(r.get("status") == "built" for r in rows),
                              "failed": sum(r.get("status") != "built" for r in rows)}}
        _add_bytes(tar, "build.json", (json.dumps(packed, indent=1) + "\n").encode())
    sizes["bytes"] = dest.stat().st_size
    return sizes


def _build_shard(py: str, out: Path, dest: Path, table_file: Path, args, todo: list[str]) -> None:
    """``migrate build`` of ``todo`` into ``dest``, ``args.batch`` programs a command (build.json
    keeps the rows of the commands before: a build stopped loses its command's programs only)."""
    for i in range(0, len(todo), args.batch):
        print(f"building {', '.join(todo[i:i + args.batch])}", flush=True)
        subprocess.run([py, "-m", "migrate", "build", str(out), "-o", str(dest), "--record", "cpu",
                        "--record-timeout", str(args.record_timeout), "--args-table", str(table_file),
                        "--jobs", str(max(1, args.jobs // args.shards)),
                        *(x for m in todo[i:i + args.batch] for x in ("--program", m))], cwd=REPO)


def merge(dirs: list[Path]) -> None:
    """The shards' programs moved into the first folder and their rows into its build.json."""
    first = dirs[0]
    rows = {}
    for d in dirs:
        if not (d / "build.json").is_file():
            continue
        for row in json.loads((d / "build.json").read_text())["programs"]:
            if d != first and (d / row["dir"]).is_dir():
                shutil.rmtree(first / row["dir"], ignore_errors=True)
                (first / row["dir"]).parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(d / row["dir"]), str(first / row["dir"]))
            rows[row["program"]] = row
    if not rows:
        return
    ordered = [rows[k] for k in sorted(rows)]
    bases = [d / "build.json" for d in dirs if (d / "build.json").is_file()]
    base = json.loads(bases[0].read_text()) if bases else {"tool": "cuda2tile"}
    base.update(programs=ordered, summary={
        "programs": len(ordered), "built": sum(r.get("status") == "built" for r in ordered),
        "failed": sum(r.get("status") != "built" for r in ordered),
        "kernels_migrated": sum(r.get("summary", {}).get("migrated", 0) for r in ordered),
        "kernels": sum(r.get("summary", {}).get("kernels", 0) for r in ordered)})
    first.mkdir(parents=True, exist_ok=True)
    (first / "build.json").write_text(json.dumps(base, indent=1) + "\n")
    for d in dirs[1:]:
        (d / "build.json").unlink(missing_ok=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pool", type=Path, default=REPO / "build" / "realworld")
    ap.add_argument("--work", type=Path, default=Path("/tmp/c2t_build_pool"))
    ap.add_argument("--list", type=Path, default=REPO / "bench" / "pool_dropin_programs.txt")
    ap.add_argument("--jobs", type=int, default=2, help="nvcc commands at once, over all shards")
    ap.add_argument("--shards", type=int, default=2,
                    help="migrate build commands at once, on disjoint programs (a program's TileLang lowering "
                         "runs on one core)")
    ap.add_argument("--record-timeout", type=float, default=40.0)
    ap.add_argument("--pack", type=Path, default=REPO / "build" / "dropin_gpu" / "pool_dropin.tar.xz")
    ap.add_argument("--batch", type=int, default=4, help="programs per migrate build command")
    ap.add_argument("--retry", action="store_true",
                    help="build again the programs that failed or run no migrated kernel (the others are kept)")
    ap.add_argument("--write-list", type=Path, default=None,
                    help="write the programs built with a kernel running migrated code to this list file")
    ap.add_argument("--pack-all", action="store_true",
                    help="pack every program built, not only those with a kernel running migrated code")
    ap.add_argument("--table-only", action="store_true", help="print the table of WORK/build/build.json and pack it")
    args = ap.parse_args(argv)
    py = sys.executable
    names = read_list(args.list)
    out, build_dir = args.work / "out", args.work / "build"
    args.work.mkdir(parents=True, exist_ok=True)
    table_file = args.work / "args.json"
    table_file.write_text(json.dumps(args_table(args.pool, names), indent=1) + "\n")
    dirs = [build_dir] + [args.work / f"build.{i}" for i in range(1, args.shards)]
    if not args.table_only:
        if not (out / "report.json").is_file():
            subprocess.run([py, "-m", "migrate", "convert", *(str(args.pool / n) for n in names), "-p", str(args.pool),
                            "-o", str(out), "-q", "--jobs", str(args.jobs)], cwd=REPO)
        report = json.loads((out / "report.json").read_text())
        done = {p["program"] for d in dirs if (d / "build.json").is_file()
                for p in json.loads((d / "build.json").read_text())["programs"]
                if not (args.retry and (p.get("status") != "built" or not p.get("summary", {}).get("migrated")))}
        listed = set(names)
        todo = [p["main"] for p in report["programs"]
                if p.get("main") and p["main"] not in done and Path(p["main"]).parts[0] in listed]
        # the programs with the fewest kernels first: each kernel's TileLang lowering is the build's longest step
        kernels = {}
        for k in report.get("kernels", []):
            kernels[Path(k["file"]).parts[0]] = kernels.get(Path(k["file"]).parts[0], 0) + 1
        todo.sort(key=lambda m: (kernels.get(Path(m).parts[0], 0), m))
        with ThreadPoolExecutor(args.shards) as shards:  # each shard its own build folder, merged below
            list(shards.map(lambda i: _build_shard(py, out, dirs[i], table_file, args, todo[i::args.shards]),
                            range(args.shards)))
    merge(dirs)
    build = json.loads((build_dir / "build.json").read_text())
    text = table(build)
    (args.work / "build_table.txt").write_text(text + "\n")
    print(text)
    if args.write_list:
        good = sorted({Path(p["program"]).parts[0] for p in build["programs"]
                       if p.get("status") == "built" and p.get("summary", {}).get("migrated")})
        args.write_list.write_text(LIST_HEADER + "\n".join(good) + "\n")
        print(f"\n{len(good)} programs written to {args.write_list}")
    if args.pack:
        sizes = pack(build_dir, args.pack, migrated_only=not args.pack_all)
        print(f"\npacked {sizes['programs']} built programs ({sizes['data_programs']} with data files) into "
              f"{args.pack}: {sizes['bytes'] / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
