"""Lower every converted kernel of a ``migrate convert`` output to CUDA (sm_90a), with no GPU:
the build errors the H200 would find (TVM or TileLang refusing the migrated kernel), found here.

    python bench/lower_pool.py --out OUT [--only a,b] [--jobs 2] [--nvcc | --ptxas] [--json F]

Each kernel is lowered as ``runtime.tilelang_support.compile_kernel`` would build it for the GPU
(the factory at a launch configuration, the signature's pass options, the runtime's pass fixes),
through ``tilelang.lower`` for ``cuda -arch=sm_90a``; ``--nvcc`` also compiles the CUDA source
(slower). Launch sizes: the launcher's defaults (the launch sites' constants); where it has none,
the first of a few common block shapes the factory accepts, and a grid of 4 in each used
dimension. Template parameters: the kernel's instances and launches in report.json, else an
enum's first constant, ``int`` for a type named like an index and ``float`` for another type,
128 for a value (1 for a bool). One subprocess per program (a hang costs only that program).

Prints kernels by outcome and the failures grouped by their last message line; ``--json`` keeps
one row per kernel. With ``LOWER_SOURCES=DIR`` in the environment, each lowered kernel's CUDA is
kept as ``DIR/<program>__<kernel>.cu``.

``--ptxas`` (issue 17: occupancy without a GPU): each lowered kernel's CUDA is compiled to PTX and
assembled by ptxas for sm_90a as written (TileLang's ``__launch_bounds__(threads, 1)``; portable and
simt kernels already without the minimum) and without the minimum of blocks per SM, and each
program's own CUDA files with their build flags (arch sm_90a): per kernel the registers and spill
bytes of the three, and a table of the kernels that take more registers than their original.
"""
from __future__ import annotations

import argparse
import collections
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BLOCKS = ((256, 1, 1), (16, 16, 1), (128, 1, 1), (32, 1, 1), (32, 8, 1), (8, 8, 4), (1024, 1, 1), (64, 1, 1), (1, 1, 1))


def _dims(value):
    if isinstance(value, int):
        return (value, 1, 1)
    value = tuple(value)
    return value + (1,) * (3 - len(value))


def _template(sig, kernel_row):
    """The template arguments of one instance of ``sig``, in order (the report's instances and
    launches first)."""
    rows = kernel_row or {}
    candidates = [inst if isinstance(inst, list) else inst.get("args", [])
                  for inst in rows.get("template_instances") or []]
    candidates += [launch.get("template_args") or [] for launch in rows.get("launches") or []]
    for args in candidates:
        if len(args) == len(sig.template):
            return list(args)
    enums = dict(getattr(sig, "enums", ()) or ())
    return [enums[name][0][0] if name in enums else _type_guess(name) if kind == "type" else "128"
            for name, kind in sig.template]


def _type_guess(name: str) -> str:
    """A type for a template type parameter no launch names: ``int`` where its name says it
    indexes or counts (``IdxT``, ``index_t``, ``StrideType``), else ``float``."""
    lowered = name.lower()
    if "bit" in lowered:  # bit vectors and masks
        return "unsigned int"
    return "int" if any(w in lowered for w in ("idx", "index", "stride", "int", "size", "offset", "count")) \
        else "float"


def _grid_for(block) -> tuple:
    """A grid of 4 blocks along each dimension the block uses (and x)."""
    return tuple(4 if b > 1 or i == 0 else 1 for i, b in enumerate(block))


def _asked_for(refusal: str, attempt, grid) -> list:
    """The launch configurations a factory's refusal asks for: the block size it spells as a
    constant ("spells blockDim.y as 4"), a 1-D grid where it indexes blocks in x only."""
    g, block, tmpl = attempt
    asked = []
    spelled = re.search(r"spells blockDim\.([xyz]) as (\d+)", refusal)
    if spelled:
        fixed = list(block)
        fixed["xyz".index(spelled.group(1))] = int(spelled.group(2))
        asked.append((grid or _grid_for(tuple(fixed)), tuple(fixed), tmpl))
    if "indexes blocks in x only" in refusal and grid is None:
        asked.append(((4, 1, 1), block, tmpl))
    return asked


def _small_values(sig, template):
    """``template`` with its value arguments 1 (a bool parameter refuses 128)."""
    return [value if kind == "type" else "1" for (_, kind), value in zip(sig.template, template)]


TL_ROOT = None


def _ptxas(ptx: str) -> dict:
    """(registers, spill store bytes) ptxas reports for a PTX text's kernels (the most of them)."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.ptx"
        path.write_text(ptx)
        proc = subprocess.run(["ptxas", "-arch=sm_90a", "-v", str(path), "-o", str(Path(tmp) / "k.cubin")],
                              capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    regs = [int(x) for x in re.findall(r"Used (\d+) registers", text)]
    spills = [int(x) for x in re.findall(r"(\d+) bytes spill stores", text)]
    return {"regs": max(regs) if regs else None, "spill": max(spills) if spills else 0}


def registers(source: str) -> dict:
    """The registers and spills of a lowered kernel's CUDA: as written, and with no minimum of
    blocks per SM (``.minnctapersm`` dropped from the PTX)."""
    import tempfile

    import tilelang

    root = Path(tilelang.__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        cu, ptx = Path(tmp) / "k.cu", Path(tmp) / "k.ptx"
        cu.write_text(source)
        proc = subprocess.run(["nvcc", "-arch=sm_90a", "-ptx", "-O3", "-std=c++17", f"-I{root / 'src'}",
                               f"-I{root / '3rdparty' / 'cutlass' / 'include'}", str(cu), "-o", str(ptx)],
                              capture_output=True, text=True)
        if proc.returncode:
            return {"ptxas": "nvcc: " + (proc.stderr.strip().splitlines() or ["?"])[-1][:200]}
        text = ptx.read_text()
    written = _ptxas(text)
    plain = _ptxas("\n".join(ln for ln in text.splitlines() if ".minnctapersm" not in ln))
    return {"regs": written["regs"], "spill": written["spill"], "regs_plain": plain["regs"],
            "spill_plain": plain["spill"], "min_blocks": ".minnctapersm" in text}


def original_registers(pool: Path, programs: set[str]) -> dict:
    """{(program, kernel name): (most registers over its instances, most spill bytes)} of the
    programs' own CUDA files, compiled as their build commands say but for sm_90a."""
    commands = json.loads((pool / "compile_commands.json").read_text())
    out: dict = {}
    for c in commands:
        prog = Path(c["file"]).relative_to(pool).parts[0]
        if prog not in programs or not c["file"].endswith(".cu"):
            continue
        words = c["command"].split()   # the compiler, then only the flags that shape the code
        cmd = [words[0], "-arch=sm_90a", "-cubin", "-Xptxas", "-v", "-o", "/dev/null", c["file"]] + \
            [w for w in words[1:] if w.startswith(("-I", "-D", "-std", "--std", "-O", "-Xcompiler", "-f"))]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=c["directory"])
        entry = None
        for line in (proc.stdout + proc.stderr).splitlines():
            m = re.search(r"Compiling entry function '([^']+)'", line)
            if m:
                mangled = m.group(1)
                z = re.match(r"_Z(\d+)", mangled)
                entry = mangled[len(z.group(0)):len(z.group(0)) + int(z.group(1))] if z else mangled
                continue
            regs = re.search(r"Used (\d+) registers", line)
            spill = re.search(r"(\d+) bytes spill stores", line)
            if entry and (regs or spill):   # the most over the kernel's instances
                most = out.get((prog, entry), (0, 0))
                out[(prog, entry)] = (max(most[0], int(regs.group(1)) if regs else 0),
                                      max(most[1], int(spill.group(1)) if spill else 0))
    return out


def lower_module(module_path: str, rows_json: str, nvcc: bool, ptxas: bool = False) -> list[dict]:
    """Worker: lower each kernel of one module (runs in a subprocess)."""
    import importlib.util
    import inspect
    import traceback

    import tilelang
    import tvm

    sys.path.insert(0, str(REPO))
    from migrate.runtime import tilelang_support as ts

    rows = json.loads(rows_json)
    spec = importlib.util.spec_from_file_location(Path(module_path).stem + "_lowered", module_path)
    mod = importlib.util.module_from_spec(spec)
    out = []
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:  # noqa: BLE001 - the module itself does not import
        return [{"kernel": "*", "status": "import", "message": f"{type(exc).__name__}: {exc}"[:400]}]
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    ts.patch_passes()
    for name, sig in getattr(mod, "KERNELS", {}).items():
        row = {"kernel": name, "form": sig.form}
        launcher = getattr(mod, name, None)
        defaults = {}
        if launcher is not None:
            for p in inspect.signature(launcher).parameters.values():
                if p.default is not inspect.Parameter.empty:
                    defaults[p.name] = p.default
        template = _template(sig, rows.get(name))
        grid = _dims(defaults["grid"]) if defaults.get("grid") else None
        blocks = [_dims(defaults["block"])] if defaults.get("block") else list(BLOCKS)
        shared = defaults.get("shared_bytes") or 0
        attempts = [(grid or _grid_for(block), block, template) for block in blocks]
        tried, func = set(), None
        while attempts:  # launch configurations, and what the factory's refusals ask for next
            g, block, tmpl = attempt = attempts.pop(0)
            if (g, block, tuple(tmpl)) in tried:
                continue
            tried.add((g, block, tuple(tmpl)))
            try:
                func, configs = ts.prim_func(sig, g, block, shared or 4096, tmpl, "cuda")
                row.update(grid=g, block=block)
                break
            except AssertionError as exc:
                row["message"] = f"factory refused every block tried: {exc}"[:300]
                attempts[:0] = _asked_for(str(exc), attempt, grid)
            except Exception as exc:  # noqa: BLE001
                if "exceeds range of bool" in str(exc):  # a bool value parameter
                    attempts.insert(0, (g, block, _small_values(sig, tmpl)))
                text = str(exc).strip()
                if "Failed to compile source" in text:  # TileLang's parse: the error, not the source
                    text = text.splitlines()[0]
                row["message"] = f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"[:400]
                if not attempts or attempts[0][2] == tmpl:
                    break
        if func is None:
            row["status"] = "no-sizes" if row.get("message", "").startswith("factory refused") else "factory"
            out.append(row)
            continue
        start = time.time()
        try:
            func = func.with_attr("cuda2tile_pass_fixes", ts.PASS_FIXES)
            with tvm.transform.PassContext(config=configs), target:
                art = tilelang.lower(func, target=target, enable_device_compile=nvcc)
            row["status"] = "ok"
            if os.environ.get("LOWER_SOURCES"):  # keep the CUDA for reading (module doc)
                keep = Path(os.environ["LOWER_SOURCES"]) / f"{Path(module_path).parent.name}__{row['kernel']}.cu"
                keep.parent.mkdir(parents=True, exist_ok=True)
                keep.write_text(art.kernel_source)
            if ptxas:
                row.update(registers(art.kernel_source))
        except Exception as exc:  # noqa: BLE001
            last = [line for line in str(exc).strip().splitlines() if line.strip()]
            row["status"] = "build"
            row["message"] = (last[-1] if last else traceback.format_exc().strip().splitlines()[-1])[:400]
        row["seconds"] = round(time.time() - start, 2)
        out.append(row)
    return out


def _run_one(module: Path, rows: dict, nvcc: bool, timeout: float, ptxas: bool = False) -> list[dict]:
    # the rows go through stdin: a module of many kernels' launches passes the limit of one argument
    cmd = [sys.executable, __file__, "--worker", str(module), "--rows", "-"] + (["--nvcc"] if nvcc else []) + \
        (["--ptxas"] if ptxas else [])
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO, input=json.dumps(rows))
    except subprocess.TimeoutExpired:
        return [{"kernel": "*", "status": "timeout", "message": f"lowering took over {timeout:.0f} s"}]
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith("[") or line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                break
    tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return [{"kernel": "*", "status": "crash", "message": tail[:400]}]


def _group(message: str) -> str:
    """A message without its numbers and names in quotes: failures of one cause group together."""
    message = re.sub(r"\d+", "N", message)
    return re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", message)[:160]


def _register_table(results: list[dict], originals: dict) -> None:
    """Per kernel with an original: registers as lowered, without the minimum of blocks, and the
    original's; then counts by form."""
    print(f"{'kernel':52s} {'form':9s} {'regs':>5s} {'plain':>6s} {'orig':>5s}  spills (lowered/plain/orig)")
    by_form = collections.defaultdict(collections.Counter)
    for r in sorted(results, key=lambda r: (r["file"], r["kernel"])):
        if r.get("regs") is None:
            continue
        orig = originals.get((r["file"].split("/")[0], r["kernel"]))
        r["orig_regs"], r["orig_spill"] = orig if orig else (None, None)
        if orig is None:
            continue
        c = by_form[r["form"]]
        c["kernels"] += 1
        c["more than the original"] += r["regs"] > orig[0]
        c["more, none without the minimum"] += r["regs"] > orig[0] and r["regs_plain"] <= orig[0]
        c["spills without the minimum (not as lowered)"] += r["spill_plain"] > 0 and r["spill"] == 0
        print(f"{r['file'].split('/')[0] + ':' + r['kernel']:52.52s} {r['form']:9s} {r['regs']:5d} {r['regs_plain']:6d} "
              f"{orig[0]:5d}  {r['spill']}/{r['spill_plain']}/{orig[1]}")
    for form, c in sorted(by_form.items()):
        print(f"{form}: " + ", ".join(f"{k} {v}" for k, v in c.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--only", default="", help="comma-separated top-level folders of OUT")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--nvcc", action="store_true", help="also compile the generated CUDA with nvcc")
    ap.add_argument("--ptxas", action="store_true", help="registers and spills against the originals' (module doc)")
    ap.add_argument("--pool", type=Path, default=REPO / "build" / "realworld", help="the originals (--ptxas)")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--rows", default="{}", help=argparse.SUPPRESS)  # "-": read from stdin
    args = ap.parse_args(argv)
    if args.worker:
        rows = sys.stdin.read() if args.rows == "-" else args.rows
        print(json.dumps(lower_module(args.worker, rows, args.nvcc, args.ptxas)))
        return 0
    if args.out is None:
        ap.error("--out is required")
    report = json.loads((args.out / "report.json").read_text())
    only = {x for x in args.only.split(",") if x}
    by_module: dict[Path, dict] = collections.defaultdict(dict)
    origin: dict[Path, str] = {}
    outputs = {f["file"]: f.get("output") for f in report.get("files", [])}
    for k in report["kernels"]:
        if k["form"] == "unsupported" or (only and k["file"].split("/")[0] not in only):
            continue
        module = args.out / (outputs.get(k["file"]) or (k["file"].rsplit(".", 1)[0] + ".py"))
        if module.exists():
            by_module[module][k["kernel"]] = k
            origin[module] = k["file"]
    results = []
    start = time.time()
    with cf.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        futures = {pool.submit(_run_one, m, rows, args.nvcc, args.timeout, args.ptxas): m
                   for m, rows in by_module.items()}
        for fut in cf.as_completed(futures):
            m = futures[fut]
            for row in fut.result():
                row["file"] = origin[m]
                results.append(row)
    counts = collections.Counter(r["status"] for r in results)
    print(f"lowered {len(results)} kernels of {len(by_module)} modules in {time.time() - start:.0f} s "
          f"(sm_90a{', nvcc' if args.nvcc else ''}): " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
    groups = collections.defaultdict(list)
    for r in results:
        if r["status"] != "ok":
            groups[(r["status"], _group(r.get("message", "")))].append(f"{r['file'].split('/')[0]}:{r['kernel']}")
    for (status, message), names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(names):4d}  {status:8s} {message}")
        print(f"      {', '.join(sorted(names)[:8])}{' ...' if len(names) > 8 else ''}")
    if args.ptxas:
        _register_table(results, original_registers(args.pool, {r["file"].split("/")[0] for r in results}))
    if args.json:
        args.json.write_text(json.dumps({"rows": sorted(results, key=lambda r: (r["file"], r["kernel"]))}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
