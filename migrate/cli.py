"""The ``migrate`` command line: ``convert`` and ``explain``.

Exit status: 0 when everything converted, 1 when some kernels did not, 2 on usage errors.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from . import __version__

EXIT_OK, EXIT_INCOMPLETE, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # usage errors exit 2 with one clear line (argparse's own convention)
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def _suppress_type(spec: str) -> str:
    from .reports.suppress import argparse_type
    return argparse_type(spec)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="migrate", description="Migrate CUDA C++ kernels to TileLang.")
    parser.add_argument("--version", action="version", version=f"cuda2tile {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    conv = sub.add_parser("convert", help="convert .cu/.cuh files or folders into OUT")
    conv.add_argument("paths", nargs="+", metavar="PATH", help="files or folders to convert")
    conv.add_argument("-o", "--out", required=True, metavar="OUT", help="output folder")
    conv.add_argument("--json", metavar="FILE", help="also write the report to FILE")
    conv.add_argument("--jobs", "-j", type=int, default=0, metavar="N",
                      help="parallel parser processes (default: number of CPUs)")
    conv.add_argument("--exclude", action="append", default=[], metavar="GLOB",
                      help="skip files whose relative path or name matches GLOB (repeatable)")
    conv.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR",
                      help="add an include folder")
    conv.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=V]",
                      help="define a macro")
    conv.add_argument("-std", "--std", dest="std", default=None, metavar="STD",
                      help="C++ standard (default c++17)")
    conv.add_argument("-p", dest="compdb", metavar="DIR",
                      help="folder holding compile_commands.json (flags per file)")
    conv.add_argument("--max-file-size", type=int, default=4 * 1024 * 1024, metavar="BYTES",
                      help="skip larger files with M1004 (default 4 MiB)")
    conv.add_argument("-q", "--quiet", action="store_true", help="print no diagnostics, only the summary")
    conv.add_argument("--force", action="store_true",
                      help="convert into an OUT that holds files cuda2tile did not write (they are kept, "
                           "except those whose names the conversion writes)")
    conv.add_argument("--keep-original-code", action="store_true",
                      help="quote the CUDA source line of each statement in a comment above its TileLang")
    conv.add_argument("--examine", action="store_true",
                      help="analysis only: write no TileLang; report per file which kernels would convert "
                           "in which form and what blocks the rest (OUT/examine.json)")
    conv.add_argument("--suppress", action="append", default=[], metavar="CODES", type=_suppress_type,
                      help="hide these diagnostics, e.g. M1003,M1005-M1006 (repeatable; forms and the "
                           "exit status do not change)")

    conv.add_argument("--verify-hybrid", dest="verify_hybrid", action="store_true",
                      help="build every kernel kept as CUDA (form hybrid) with nvcc, where nvcc is on PATH; "
                           "those that do not build stay unsupported (M3009 gives nvcc's first error)")
    conv.add_argument("--no-lift", dest="no_lift", action="store_true",
                      help="keep every kernel's CUDA thread structure (portable/simt forms): no tile form")
    conv.add_argument("--allow-tf32", dest="allow_tf32", action="store_true",
                      help="lifted float32 GEMMs use tensor cores (T.gemm, tf32 numerics, checked in the "
                           "tf32 tolerance class) instead of exact fp32 multiply-adds")
    conv.add_argument("--check", choices=("cpu", "cuda"), default=None,
                      help="after converting, check each spec'd kernel against the original on this device")
    _run_options(conv)

    check = sub.add_parser("check", help="run original and migrated kernels on the same inputs and compare")
    check.add_argument("paths", nargs="*", metavar="FILE.cu", help="CUDA files to convert and check")
    check.add_argument("--from", dest="from_dir", metavar="OUT",
                       help="check an output folder of `migrate convert` (needs no frontend)")
    check.add_argument("--kernel", action="append", default=None, metavar="NAME",
                       help="check only this kernel (name or spec id; repeatable)")
    check.add_argument("--spec", metavar="FILE", help="spec TOML to use instead of NAME.toml beside the source")
    check.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    check.add_argument("--sanitize", nargs="?", const="all", default=None, metavar="TOOLS",
                       help="with --device cuda: run both sides again under compute-sanitizer (memcheck, "
                            "racecheck, synccheck, initcheck; or a comma-separated subset); a finding of the "
                            "migrated kernel fails its check (M4030), one of the original is its own (M4031)")
    check.add_argument("--json", metavar="FILE", help="write the results as JSON")
    check.add_argument("--seed", type=int, default=None, help="seed of the random inputs (reported)")
    check.add_argument("--schedule", choices=("forward", "reverse", "random"), default="forward",
                       help="order of the threads of a block in the CPU executor")
    check.add_argument("--jobs", "-j", type=int, default=0, metavar="N", help="files checked in parallel")
    check.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    check.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=V]")
    _run_options(check)
    check.add_argument("--max-check-bytes", dest="max_check_bytes", type=_byte_size, default=None, metavar="SIZE",
                       help="refuse a spec whose buffers hold more than SIZE bytes (suffixes K, M, G; "
                            "default 4G): M4104")

    bench = sub.add_parser("bench", help="time original and migrated kernels on a GPU (needs a CUDA GPU)")
    bench.add_argument("--from", dest="from_dir", metavar="OUT",
                       help="an output folder of `migrate convert` (needs no frontend)")
    bench.add_argument("--onnx", dest="onnx_dir", metavar="OUT",
                       help="an output folder of `migrate onnx`: time its Model against PyTorch eager running "
                            "the same graph, end to end and per fused group")
    bench.add_argument("--dim", dest="dims", action="append", default=[], metavar="NAME=N",
                       help="with --onnx: the value of a dimension the model declares by name (repeatable)")
    bench.add_argument("--seed", type=int, default=0, help="with --onnx: the inputs' random seed")
    bench.add_argument("--kernel", action="append", default=None, metavar="NAME",
                       help="bench only this kernel (name or spec id; repeatable)")
    bench.add_argument("--specs", metavar="DIR",
                       help="a tree of spec TOML files mirroring the sources, with the sizes to time "
                            "(bench/specs for the corpus); default: the specs in OUT")
    bench.add_argument("--reps", type=int, default=20, help="launches per timed round")
    bench.add_argument("--rounds", type=int, default=None,
                       help="timed rounds (the median is reported; default 7, with --traces as many as the "
                            "original's)")
    bench.add_argument("--json", metavar="FILE", help="write every row, with all samples, as JSON")
    bench.add_argument("--tune", action="store_true",
                       help="also search each tile-form kernel's tile sizes, threads and pipeline depths "
                            "(its search space) with TileLang's autotuner, check the fastest against "
                            "the original and report it; with --onnx: a few tile sizes per GEMM, convolution "
                            "and attention kernel on the model's own inputs, the fastest whose outputs equal the "
                            "default's kept in OUT/<model>.tiles.json, which the Model then uses")
    bench.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                       help="build the kernels in N processes before timing them one at a time")
    bench.add_argument("--budget", type=float, default=1e9, metavar="SECONDS",
                       help="start no kernel after this many seconds")
    bench.add_argument("-I", dest="include_dirs", action="append", default=[], metavar="DIR")
    bench.add_argument("-D", dest="defines", action="append", default=[], metavar="NAME[=V]")
    bench.add_argument("--traces", metavar="DIR",
                       help="time at the programs' own sizes: the launches recorded on the GPU with the "
                            "original's times (C2T_TIME_ROUNDS set; a folder per program, as OUT/traces), "
                            "each replayed into its migrated kernel and, where it passes, timed the same "
                            "way; prints fast_0/fast_1/fast_2 (--rounds: default as many as the original's)")
    bench.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                       help="with --traces: cpu runs the same loop on TileLang's C target, timed by the "
                            "clock (a dry run, for tests)")

    onnx = sub.add_parser("onnx", help="convert an ONNX model into TileLang kernels and a Model class")
    onnx.add_argument("model", metavar="MODEL.onnx", help="the ONNX model (dimensions declared by name stay symbolic)")
    onnx.add_argument("-o", "--out", required=True, metavar="OUT", help="output folder")
    onnx.add_argument("--check", choices=("cpu", "cuda"), default=None,
                      help="run the converted model on TileLang's CPU target (cpu) or on the GPU (cuda) "
                           "and compare it with onnxruntime on the CPU, per output and per fused group")
    onnx.add_argument("--inputs", metavar="FILE.npz",
                      help="the check's inputs (one array per graph input, by name); default: seeded random")
    onnx.add_argument("--allow-tf32", action="store_true",
                      help="float32 MatMul/Gemm on tf32 tensor cores (T.gemm); default: exact float32")
    onnx.add_argument("--json", metavar="FILE", help="also write the report to FILE")
    onnx.add_argument("-q", "--quiet", action="store_true", help="print no diagnostics, only the summary")
    onnx.add_argument("--force", action="store_true",
                      help="write into an OUT that holds files cuda2tile did not write (they are kept, "
                           "except those whose names the conversion writes)")

    build = sub.add_parser("build", help="rebuild each converted program with nvcc, its migrated kernels lowered by "
                                         "TileLang in place of their CUDA (no GPU needed)")
    build.add_argument("out", metavar="OUT", help="an output folder of `migrate convert`")
    build.add_argument("-o", "--dest", metavar="DIR", default=None,
                       help="where the programs are written (default: OUT's sibling OUT-build)")
    build.add_argument("--arch", default="sm_90a", help="the GPU architecture to build for (default sm_90a)")
    build.add_argument("--jobs", "-j", type=int, default=2, metavar="N", help="nvcc commands run at once (default 2)")
    build.add_argument("--program", action="append", default=None, metavar="MAIN",
                       help="build only this program (its main's path in report.json, with or without the suffix; "
                            "repeatable)")
    build.add_argument("--traces", metavar="DIR", default=None,
                       help="recorded launches (DIR/<program>/manifest.jsonl, as `migrate convert --run` writes "
                            "OUT/traces): each kernel is also built for their geometries (default OUT/traces)")
    build.add_argument("--record", choices=("cpu",), default=None,
                       help="run each program on the CPU executor first and build each kernel for the geometries "
                            "its launches use")
    build.add_argument("--run", dest="run", default=None, metavar="ARGS",
                       help="the arguments of the recording run (default: the program's own from report.json)")
    build.add_argument("--record-timeout", type=float, default=300.0, metavar="S",
                       help="stop a recording run after S seconds (its launches recorded by then count)")
    build.add_argument("--args-table", metavar="FILE", default=None,
                       help="a JSON object of each program's run arguments (keys: a main's path, with or without "
                            "its suffix, or its first folder): the recording run and `migrate run` use them")

    run = sub.add_parser("run", help="on a GPU: run each rebuilt program and its original with the same arguments "
                                     "and compare exit status, output and verdicts (`migrate run DIR -- ARGS`)")
    run.add_argument("dest", metavar="DIR", help="the folder `migrate build` wrote (or OUT, when DIR is OUT-build)")
    run.add_argument("--program", action="append", default=None, metavar="MAIN", help="run only this program")
    run.add_argument("--timeout", type=float, default=300.0, metavar="S", help="seconds each executable may run")
    run.add_argument("--jobs", "-j", type=int, default=1, metavar="N",
                     help="programs run at once (default 1; each runs its original, then its rebuilt executable)")
    run.add_argument("--control", action="store_true",
                     help="run each original a second time: lines its two runs print differently vary run to run "
                          "(atomics' order, races, clocks) and are not held against the rebuilt program (counted "
                          "as varying)")
    run.add_argument("--json", metavar="FILE", help="also write the results to FILE (DIR/run.json is always written)")

    explain = sub.add_parser("explain", help="explain a diagnostic code")
    explain.add_argument("code", metavar="CODE")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    program_args = None
    if argv[:1] == ["run"] and "--" in argv:  # migrate run DIR -- ARGS: ARGS go to the programs
        cut = argv.index("--")
        argv, program_args = argv[:cut], argv[cut + 1:]
    args = build_parser().parse_args(argv)
    args.program_args = program_args
    if hasattr(args, "max_memory"):
        from .runtime import limits
        before = limits.max_memory()
        limits.set_max_memory(args.max_memory)
        try:
            with limits.killing_children_on_signals():  # SIGINT/SIGTERM of migrate kill every child's group first
                return _dispatch(args)
        finally:
            limits.set_max_memory(before)
    return _dispatch(args)


#: the converter's dependencies (pyproject), by the module each installs, and the commands that need
#: them; a runtime-only installation (``pip install --no-deps``, README "Hybrid projects") has none
CONVERTER_PACKAGES = {"clang": "libclang", "jinja2": "jinja2", "rich": "rich", "onnx": "onnx"}
COMMAND_NEEDS = {"convert": ("clang", "jinja2", "rich"), "check": ("clang", "jinja2", "rich"), "bench": ("rich",),
                 "onnx": ("onnx",)}
#: ``check --from OUT`` runs a converted folder: the terminal tables only
CHECK_FROM_NEEDS = ("rich",)


def missing_packages(command: str, from_dir=None) -> list[str]:
    """The converter dependencies ``command`` needs that this Python cannot import (pip's names)."""
    import importlib.util

    needs = CHECK_FROM_NEEDS if command == "check" and from_dir else COMMAND_NEEDS.get(command, ())
    missing = []
    for module in needs:
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(CONVERTER_PACKAGES[module])
    return missing


def _dispatch(args) -> int:
    if args.command == "explain":
        return cmd_explain(args)
    missing = missing_packages(args.command, getattr(args, "from_dir", None))
    if missing:  # a runtime-only installation: say so, not an ImportError's traceback
        print(f"migrate {args.command}: {', '.join(missing)} not installed: this installation runs migrated "
              "modules only (cuda2tile installed with pip's --no-deps); the converter needs them: "
              f"pip install {' '.join(missing)}, or install cuda2tile with its dependencies", file=sys.stderr)
        return EXIT_USAGE
    if args.command == "run":
        return cmd_run(args)
    from .scratch import owned_tempdir
    with owned_tempdir():  # TileLang's, g++'s and the workers' temporary files: removed at the end
        if args.command == "check":
            return cmd_check(args)
        if args.command == "bench":
            return cmd_bench(args)
        if args.command == "onnx":
            return cmd_onnx(args)
        if args.command == "build":
            return cmd_build(args)
        return cmd_convert(args)


def _build_dir(out: Path, dest: str | None) -> Path:
    return Path(dest) if dest else out.parent / f"{out.name}-build"


def cmd_build(args) -> int:
    """``migrate build OUT [-o DIR]``: exit 0 when every program built both ways, 1 when some did
    not, 2 on usage or setup errors (not an output folder, no nvcc, DIR inside OUT)."""
    from .dropin import nvcc
    from .dropin.build import build_folder

    out = Path(args.out)
    if not (out / "report.json").is_file():
        print(f"migrate build: {out} has no report.json (is it an output folder of migrate convert?)", file=sys.stderr)
        return EXIT_USAGE
    dest = _build_dir(out, args.dest)
    if dest.resolve() == out.resolve() or out.resolve() in dest.resolve().parents:
        print(f"migrate build: {dest} is inside {out}: write the build elsewhere (-o DIR)", file=sys.stderr)
        return EXIT_USAGE
    if nvcc.nvcc() is None:
        print("migrate build: nvcc is not on PATH", file=sys.stderr)
        return EXIT_USAGE
    only = None
    if args.program:
        only = set(args.program) | {str(Path(p).with_suffix("")) for p in args.program}
    run_args = None
    if args.run is not None:
        import shlex
        run_args = shlex.split(args.run)

    table = None
    if args.args_table:
        import json
        try:
            table = json.loads(Path(args.args_table).read_text())
        except (OSError, ValueError) as exc:
            print(f"migrate build: cannot read {args.args_table}: {exc}", file=sys.stderr)
            return EXIT_USAGE
        if not isinstance(table, dict):
            print(f"migrate build: {args.args_table} is not a JSON object of program -> arguments", file=sys.stderr)
            return EXIT_USAGE

    def show(row):
        s = row.get("summary", {})
        print(f"{row['program']:48s} {row.get('status', '?'):24s} kernels {s.get('migrated', 0)}/{s.get('kernels', 0)} "
              f"migrated, {s.get('variants', 0)} variants, launch sites {s.get('launch_sites_rewritten', 0)} rewritten "
              f"{s.get('launch_sites_left', 0)} left", flush=True)

    result = build_folder(out, dest, arch=args.arch, jobs=args.jobs,
                          traces_dir=Path(args.traces) if args.traces else None, only=only, progress=show,
                          record_on=args.record, run_args=run_args, record_timeout=args.record_timeout,
                          args_table=table)
    s = result["summary"]
    print(f"{s['built']} of {s['programs']} programs built; {s['kernels_migrated']} of {s['kernels']} kernels run "
          f"migrated code ({dest / 'build.json'})")
    return EXIT_OK if s["failed"] == 0 and s["programs"] else EXIT_INCOMPLETE


def cmd_run(args) -> int:
    """``migrate run DIR [-- ARGS]``: exit 0 when every program's rebuilt run matches its
    original's, 1 on a mismatch (or a program not built or timed out), 2 on usage or setup errors
    (no build.json, no GPU)."""
    import json

    from .dropin.run import run_folder
    from .runtime.cuda_gpu import gpu_visible

    dest = Path(args.dest)
    if not (dest / "build.json").is_file() and (dest / "report.json").is_file():
        dest = _build_dir(dest, None)
    if not (dest / "build.json").is_file():
        print(f"migrate run: {args.dest} has no build.json (run migrate build first)", file=sys.stderr)
        return EXIT_USAGE
    if not gpu_visible():
        print("migrate run: needs a CUDA GPU (nvidia-smi lists none)", file=sys.stderr)
        return EXIT_USAGE

    def show(row):
        launches = row.get("launches", {})
        why = "" if row["status"] == "equal" else "; ".join(
            str(m.get("why")) for m in row.get("comparison", {}).get("mismatches", [])[:2])
        print(f"{row['program']:48s} {row['status']:10s} launches {launches.get('migrated', 0)} migrated "
              f"{launches.get('original', 0)} original {why}", flush=True)

    result = run_folder(dest, args.program_args, set(args.program or ()) or None, args.timeout, progress=show,
                        jobs=args.jobs, control=args.control)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    s = result["summary"]
    print(f"{s['equal']} of {s['programs']} programs equal ({s['mismatch']} mismatch, {s['timeout']} timed out, "
          f"{s['not_built']} not built); {s['launches_migrated']} launches migrated, {s['launches_original']} original"
          + (f"; {s['varying']} with lines that vary run to run in the original" if args.control else ""))
    return EXIT_OK if s["equal"] == s["programs"] and s["programs"] else EXIT_INCOMPLETE


def _torch_sees_gpu(err, instead: str, command: str = "migrate bench") -> bool:
    """Whether torch sees a CUDA GPU (the timing runs through it); else says so on ``err`` with
    what to run ``instead``."""
    try:
        import torch
        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if not has_gpu:
        err.print(f"{command}: needs a CUDA GPU (torch sees none); {instead}")
    return has_gpu


def cmd_bench(args) -> int:
    """``migrate bench --from OUT``: exit 0 when every kernel was timed, 1 when some could not
    be, 2 on usage or setup errors (no GPU, not an output folder)."""
    import json

    from rich.console import Console
    from rich.table import Table

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False)
    if bool(args.from_dir) == bool(args.onnx_dir):
        err.print("migrate bench: give one of --from OUT (migrate convert) and --onnx OUT (migrate onnx)")
        return EXIT_USAGE
    if args.onnx_dir:
        return cmd_bench_onnx(args, out, err)
    out_dir = Path(args.from_dir)
    if not (out_dir / "report.json").is_file():
        err.print(f"migrate bench: {out_dir} has no report.json (is it an output folder of migrate convert?)")
        return EXIT_USAGE
    specs = Path(args.specs) if args.specs else None
    if specs is not None and not specs.is_dir():
        err.print(f"migrate bench: {specs}: no such folder")
        return EXIT_USAGE
    if args.traces and not Path(args.traces).is_dir():
        err.print(f"migrate bench: {args.traces}: no such folder")
        return EXIT_USAGE
    if args.traces and args.device == "cpu":
        return _bench_traces(args, out_dir, out, err)
    if not _torch_sees_gpu(err, "`migrate check --device cpu` checks equality without one"):
        return EXIT_USAGE
    if args.traces:
        return _bench_traces(args, out_dir, out, err)
    from .runtime.bench import bench_folder, geomean

    report_data = json.loads((out_dir / "report.json").read_text())
    _warn_flags("migrate bench", report_data, args, err)

    def show(row):
        if row.status == "ok":
            bw = f"{row.migrated_gbs:8.1f} GB/s" if row.migrated_gbs else ""
            share = f" ({100 * row.migrated_bw_share:4.1f}% of peak)" if row.migrated_bw_share else ""
            tf = f" {row.migrated_tflops:6.2f} TFLOP/s" if row.migrated_tflops else ""
            note = row.samples.get("tuned", {}).get("message", "")
            tuned = f"  tuned {row.config}" if row.config else f"  not tuned: {note[:100]}" if note else ""
            out.print(f"{row.kernel:32s} {row.form:9s} {row.original_ms:9.4f} ms {row.migrated_ms:9.4f} ms "
                      f"x{row.ratio:5.2f} {bw}{share}{tf}{tuned}")
        else:
            out.print(f"{row.kernel:32s} {row.form:9s} {row.status}: {row.message[:120]}")

    from .runtime.spec import SpecError

    try:
        rows, device = bench_folder(out_dir, report_data, kernels=set(args.kernel or ()) or None,
                                    specs_dir=specs, reps=args.reps, rounds=args.rounds or 7,
                                    include_dirs=tuple(args.include_dirs), defines=tuple(args.defines),
                                    on_row=show, budget=args.budget, tune=args.tune, jobs=args.jobs)
    except SpecError as exc:  # a bad spec: its code and FILE:LINE, no traceback
        err.print(f"{exc} [{exc.code}]", markup=False)
        return EXIT_USAGE
    if args.kernel and not rows:
        err.print(f"migrate bench: no kernel named {', '.join(args.kernel)}")
        return EXIT_USAGE
    ok = [r for r in rows if r.status == "ok"]
    table = Table(title=f"migrate bench ({device})", header_style="bold")
    for col in ("kernel", "form", "original ms", "migrated ms", "migrated/original", "GB/s", "% of peak BW",
                "TFLOP/s"):
        table.add_column(col)
    for r in ok:
        table.add_row(r.kernel, r.form, f"{r.original_ms:.4f}", f"{r.migrated_ms:.4f}", f"{r.ratio:.2f}",
                      f"{r.migrated_gbs:.0f}" if r.migrated_gbs else "",
                      f"{100 * r.migrated_bw_share:.1f}" if r.migrated_bw_share else "",
                      f"{r.migrated_tflops:.2f}" if r.migrated_tflops else "")
    out.print(table)
    geo = geomean(r.ratio for r in ok)
    if geo is not None:
        out.print(f"{len(ok)} kernels timed on {device}; geometric mean migrated/original = {geo:.3f}; "
                  f"slowest ratio {max(r.ratio for r in ok):.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device, "geomean": geo,
                                               "rows": [r.to_json() for r in rows]}, indent=2) + "\n")
    return EXIT_OK if len(ok) == len(rows) else EXIT_INCOMPLETE


def _bench_traces(args, out_dir: Path, out, err) -> int:
    """``migrate bench --from OUT --traces DIR`` (runtime/bench_traces.py): exit 0 when every
    recorded launch was judged and timed, 1 when some were not, 2 when nothing was recorded."""
    import json

    from .runtime.bench_traces import bench_traces, format_row, format_summary, summary

    report_data = json.loads((out_dir / "report.json").read_text())
    rows, device = bench_traces(out_dir, report_data, Path(args.traces), device=args.device,
                                rounds=args.rounds,
                                budget=args.budget, kernels=set(args.kernel or ()) or None, jobs=args.jobs,
                                on_row=lambda r: out.print(format_row(r), markup=False, soft_wrap=True))
    if not rows:
        err.print(f"migrate bench: no recorded launch of a migrated kernel in {args.traces} (record the "
                  "programs on the GPU with C2T_TIME_ROUNDS set: bench/gpu_realworld.sh STEPS=\"record time\")")
        return EXIT_USAGE
    figures = summary(rows)
    for line in format_summary(figures, device):
        out.print(line, markup=False, soft_wrap=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"device": device, "summary": figures,
                                               "rows": [r.to_json() for r in rows]}, indent=1) + "\n")
    return EXIT_OK if all(r.status == "pass" for r in rows) else EXIT_INCOMPLETE


def _warn_flags(command: str, report: dict, args, err) -> None:
    """M9006 when -I/-D given to check/bench --from OUT change what OUT was converted with."""
    from .runtime.flags import differences

    changed = differences(report, args.include_dirs, args.defines)
    if changed:
        err.print(f"{command}: warning: M9006: flags differ from those {args.from_dir} was converted with: "
                  f"{'; '.join(changed)}; the originals are compiled with them added to the recorded "
                  "flags, so they may differ from the programs that were migrated", markup=False)


def _sanitize_tools(args, err) -> tuple[str, ...] | None:
    """The compute-sanitizer tools of ``--sanitize`` (``()`` without it), or None after printing
    why they cannot run."""
    if args.sanitize is None:
        return ()
    from .runtime import sanitize
    try:
        tools = sanitize.parse_tools(args.sanitize)
    except ValueError as exc:
        err.print(f"migrate check: --sanitize: {exc}", markup=False)
        return None
    if args.device != "cuda":
        err.print("migrate check: --sanitize runs compute-sanitizer on the GPU: give --device cuda", markup=False)
        return None
    if sanitize.find_sanitizer() is None:
        err.print("migrate check: --sanitize: compute-sanitizer not found (put it on PATH, or set "
                  "COMPUTE_SANITIZER or CUDA_HOME)", markup=False)
        return None
    return tools


def cmd_check(args) -> int:
    """``migrate check``: exit 0 when every checked kernel agrees, 1 when any does not, 2 on
    usage or setup errors. ``--from OUT`` imports neither libclang nor the frontend."""
    import json
    import tempfile

    from rich.console import Console
    from rich.table import Table

    from .runtime.checker import CheckSetupError, check_output_folder

    out = Console(highlight=False)
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    if bool(args.paths) == bool(args.from_dir):
        err.print("migrate check: give either FILE.cu ... or --from OUT")
        return EXIT_USAGE
    tmp = None
    if args.from_dir:
        out_dir = Path(args.from_dir)
        if not (out_dir / "report.json").is_file():
            err.print(f"migrate check: {out_dir} has no report.json (is it an output folder of migrate convert?)")
            return EXIT_USAGE
    else:
        for p in args.paths:
            if not Path(p).is_file():
                err.print(f"migrate check: {p}: no such file")
                return EXIT_USAGE
        tmp = tempfile.TemporaryDirectory(prefix="c2t-check-")
        out_dir = Path(tmp.name)
        convert_args = ["convert", *args.paths, "-o", str(out_dir), "-q", "--timeout", str(args.timeout),
                        "--max-memory", str(args.max_memory or 0)]
        for d in args.include_dirs:
            convert_args += ["-I", d]
        for d in args.defines:
            convert_args += ["-D", d]
        import contextlib
        import io
        with contextlib.redirect_stdout(io.StringIO()):
            status = main(convert_args)
        if status == EXIT_USAGE:
            return EXIT_USAGE
    manifest = None
    try:
        data = json.loads((out_dir / "report.json").read_text())
        if args.from_dir:
            _warn_flags("migrate check", data, args, err)
            from .outdir import Manifest
            manifest = Manifest.open(out_dir)  # what the check writes into OUT (--run: run/, traces/)
        spec = Path(args.spec) if args.spec else None
        if spec is not None and not spec.is_file():
            err.print(f"migrate check: {spec}: no such spec file")
            return EXIT_USAGE
        jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
        tools = _sanitize_tools(args, err)
        if tools is None:
            return EXIT_USAGE
        checks = check_output_folder(out_dir, data, device=args.device, sanitize=tools,
                                     kernels=set(args.kernel) if args.kernel else None, spec=spec,
                                     seed=args.seed, schedule=args.schedule,
                                     include_dirs=tuple(args.include_dirs), defines=tuple(args.defines),
                                     jobs=jobs, max_check_bytes=args.max_check_bytes, **_run_kwargs(args))
    except CheckSetupError as exc:
        err.print(f"migrate check: {exc}")
        return EXIT_USAGE
    finally:
        if manifest is not None:
            manifest.close()
        if tmp is not None:
            tmp.cleanup()
    if args.kernel and not checks:
        err.print(f"migrate check: no kernel named {', '.join(args.kernel)}")
        return EXIT_USAGE

    table = Table(title=f"migrate check ({args.device})", header_style="bold")
    for col in ("file", "kernel", "status", "max abs err", "max rel err", "message"):
        table.add_column(col)
    for c in checks:
        fmt = (lambda v: "" if v is None else f"{v:.3g}")
        table.add_row(c.file, c.id, c.status, fmt(c.max_abs_err), fmt(c.max_rel_err), c.message[:100])
    out.print(table)
    counts = {s: sum(c.status == s for c in checks) for s in ("pass", "fail", "error", "skipped")}
    out.print(", ".join(f"{n} {s}" for s, n in counts.items()), markup=False)
    if args.json:
        Path(args.json).write_text(json.dumps([c.to_json() for c in checks], indent=2) + "\n")
    from .runtime.coverage import unreached

    for c in checks:
        for branch in unreached(c.coverage):
            err.print(f"{c.file}: note: {c.id}: the {branch['branch']} branch (line {branch['line']} of the migrated "
                      f"module) ran in none of the check's runs: {branch.get('why', '')} [M4003]", markup=False)
    bad_specs = [c for c in checks if c.code.startswith("M41") and c.status == "error"]
    for c in bad_specs:  # the input's fault: a usage/setup error, after every other kernel was checked
        err.print(f"{c.at}: error: {c.message.removeprefix(f'{c.code} bad spec {c.at}: ')} [{c.code}]", markup=False)
    if bad_specs:
        return EXIT_USAGE
    return EXIT_INCOMPLETE if counts["fail"] or counts["error"] else EXIT_OK


def _byte_size(text: str) -> int:
    """``4G``, ``512M``, ``1000`` as a count of bytes (argparse type)."""
    units = {"K": 1024, "M": 1024 ** 2, "G": 1024 ** 3, "T": 1024 ** 4}
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = units.get(t[-1:], 1)
    try:
        value = int(float(t[:-1] if t[-1:] in units else t) * scale)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size in bytes: {text!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"the size must be positive: {text!r}")
    return value


def cmd_bench_onnx(args, out, err) -> int:
    """``migrate bench --onnx OUT``: exit 0 when the model was timed and its outputs agree with
    PyTorch eager (and onnxruntime where present), 1 when they differ, 2 on usage or setup errors
    (no GPU, not an output folder of migrate onnx, a declared dimension without --dim)."""
    from .onnx.bench import BenchError, bench_onnx, dim_values, load_report

    dims = {}
    for d in args.dims:
        name, sep, value = d.partition("=")
        if not sep or not value.strip().isdigit() or int(value) < 1:
            err.print(f"migrate bench: --dim {d}: write NAME=N with N a positive integer")
            return EXIT_USAGE
        dims[name.strip()] = int(value)
    try:
        report = load_report(Path(args.onnx_dir))
        dim_values(report, dims)
    except BenchError as exc:
        err.print(f"migrate bench: {exc}", markup=False)
        return EXIT_USAGE
    if not _torch_sees_gpu(err, "`migrate onnx --check cpu` checks the model without one"):
        return EXIT_USAGE

    def show(r):
        def ms(v):
            return f"{v:9.4f}" if v is not None else "        -"
        bw = f" {r.gbs:8.1f} GB/s" + (f" ({100 * r.bw_share:4.1f}%)" if r.bw_share else "") if r.gbs else ""
        tf = f" {r.tflops:7.2f} TFLOP/s" if r.tflops else ""
        sp = f" x{r.speedup:5.2f}" if r.speedup else ""
        out.print(f"{r.kernel:34s} {r.kind:10s} {ms(r.tilelang_ms)} ms {ms(r.eager_ms)} ms{sp}{bw}{tf}", markup=False)

    def tuned(kernel, rec):
        cfg = ", ".join(f"{k}={v}" for k, v in rec["config"].items())
        failed = sum(1 for r in rec["tried"] if "error" in r or r.get("equal") is False)
        before = f"{rec['default_ms']:.4f}" if rec["default_ms"] is not None else "-"
        out.print(f"tuned {kernel}: {cfg} ({before} -> {rec['best_ms']:.4f} ms; {len(rec['tried'])} tried"
                  + (f", {failed} refused or unequal" if failed else "") + ")", markup=False)

    try:
        res = bench_onnx(args.onnx_dir, dims, reps=args.reps, rounds=args.rounds, seed=args.seed, on_row=show,
                         tune=args.tune, on_tuned=tuned)
    except BenchError as exc:
        err.print(f"migrate bench: {exc}", markup=False)
        return EXIT_USAGE
    e2e = res["end_to_end"]
    out.print(f"end to end ({res['device']}; {', '.join(f'{k}={v}' for k, v in res['dims'].items()) or 'static shapes'}): "
              f"TileLang {e2e['tilelang_ms']:.4f} ms, PyTorch eager {e2e['eager_ms']:.4f} ms, "
              f"x{e2e['speedup']:.2f}; fp32 GEMMs: {res['fp32_gemms']}", markup=False)
    for side, rec in res["agreement"].items():
        if rec["passed"] is None:
            out.print(f"outputs against {side}: not compared ({rec['skipped']})", markup=False)
            continue
        out.print(f"outputs against {side}: {'agree' if rec['passed'] else 'DIFFER'} "
                  + "; ".join(r["message"] for r in rec["outputs"]), markup=False)
    if args.json:
        import json
        Path(args.json).write_text(json.dumps(res, indent=1))
    return EXIT_OK if all(rec["passed"] is not False for rec in res["agreement"].values()) else EXIT_INCOMPLETE


def cmd_onnx(args) -> int:
    """``migrate onnx MODEL -o OUT``: exit 0 when every node has a TileLang form (or is a view) and
    the check, if asked, passes; 1 when some node falls back to torch, the check fails or the model
    cannot be converted; 2 on usage errors."""
    import importlib.util

    import numpy as np

    from .onnx.convert import convert
    from .reports.core import write_json

    model = Path(args.model)
    if not model.is_file():
        print(f"migrate onnx: no such file: {model}", file=sys.stderr)
        return EXIT_USAGE
    given = None
    if args.inputs:
        try:
            with np.load(args.inputs) as data:
                given = {k: data[k] for k in data.files}
        except (OSError, ValueError) as exc:
            print(f"migrate onnx: --inputs {args.inputs}: {exc}", file=sys.stderr)
            return EXIT_USAGE
    if args.check and importlib.util.find_spec("onnxruntime") is None:
        print("migrate onnx: --check needs onnxruntime: pip install onnxruntime (or 'cuda2tile[onnx]')",
              file=sys.stderr)
        return EXIT_USAGE
    from rich.console import Console

    if args.check == "cuda" and not _torch_sees_gpu(Console(stderr=True, highlight=False, soft_wrap=True),
                                                    "--check cpu checks the model on TileLang's C target",
                                                    "migrate onnx --check cuda"):
        return EXIT_USAGE
    from .outdir import Manifest, OutputError, overlap

    out = Path(args.out)
    try:
        overlap(out, [args.model])
        manifest = Manifest.open(out, refuse_foreign=True, force=args.force, create=True)
    except OutputError as exc:
        print(f"migrate: error: {exc.code}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    res = convert(model, out, allow_tf32=args.allow_tf32, check=args.check, inputs=given)
    write_json(res.report, out / "report.json")
    from .onnx.convert import module_stem
    from .onnx.page import write_page

    write_page(res.report, out, module_stem(model))   # report.html, drawn by convert's page
    manifest.close(remove_stale=True)   # OUT's manifest lists what this conversion wrote
    if args.json:
        write_json(res.report, Path(args.json))
    if not args.quiet:
        for d in res.diagnostics:
            print(d, file=sys.stderr)
    s = res.report["summary"]
    line = (f"{model.name}: {s['nodes']} nodes, {s['nodes_in_tilelang']} in {s['kernels']} TileLang kernels, "
            f"{s['views']} views, {s['fallback']} in torch")
    if res.report.get("dims"):
        line += f"; symbolic {', '.join(res.report['dims'])}"
        if s.get("specialised"):
            line += f" ({s['specialised']} of the kernels specialised per value)"
    if res.check is not None:
        where = "CPU" if res.check.get("target") == "c" else "GPU"
        line += f"; check on the {where} against onnxruntime: {'pass' if res.check['passed'] else 'FAIL'}"
    print(line + (f" -> {res.module}" if res.module else ""))
    clean = res.ok and not s["fallback"] and (res.check is None or res.check["passed"]) and res.module
    return EXIT_OK if clean else EXIT_INCOMPLETE


def cmd_explain(args) -> int:
    from .codes import CODES

    code = args.code.upper()
    if code not in CODES:
        print(f"migrate: unknown diagnostic code {args.code!r}", file=sys.stderr)
        return EXIT_USAGE
    entry = CODES[code]
    print(f"{entry.code} ({entry.severity.value}): {entry.title}\n\n{entry.explanation}\n\nFix: {entry.fix}")
    return EXIT_OK


def cmd_convert(args) -> int:
    from rich.console import Console

    import dataclasses

    from . import convert as cv
    from .parse.frontend import ParseOptions, includers
    from .reports.core import NOT_MIGRATED, report_dict, write_json
    from .reports.terminal import print_summary

    err = Console(stderr=True, highlight=False, soft_wrap=True)
    out = Console(highlight=False)
    out_dir = Path(args.out)
    if out_dir.exists() and not out_dir.is_dir():
        err.print(f"migrate: error: output {args.out} exists and is not a folder")
        return EXIT_USAGE
    cv.start_workers()  # while the files are found and read for their includers
    try:
        files = cv.discover(args.paths, out_dir, args.exclude)
    except cv.UsageError as exc:
        err.print(f"migrate: error: {exc}")
        return EXIT_USAGE
    try:
        str(out_dir.resolve()).encode("utf-8")
    except UnicodeEncodeError:
        err.print(f"migrate: error: M9008: the output folder's name {ascii(str(out_dir))} is not UTF-8", markup=False)
        return EXIT_USAGE
    files, unnamable = cv.split_unnamable(files)
    for src in unnamable:
        shown = ascii(str(src.path))[1:-1]
        err.print(f"{shown}: error: M9008: the file name is not UTF-8; not converted (rename it)", markup=False)
    from .outdir import Manifest, OutputError, overlap
    try:
        overlap(out_dir, args.paths)
    except OutputError as exc:
        err.print(f"migrate: error: {exc.code}: {exc}", markup=False)
        return EXIT_USAGE

    compdb = {}
    if args.compdb:
        from .parse import compdb as cdb
        try:
            compdb = cdb.load(args.compdb)
        except cdb.CompDbError as exc:
            err.print(f"migrate: error: M9002: {exc}")
            return EXIT_USAGE
    try:
        manifest = Manifest.open(out_dir, refuse_foreign=True, force=args.force, create=True)
    except OutputError as exc:
        err.print(f"migrate: error: {exc.code}: {exc}", markup=False)
        return EXIT_USAGE

    base = ParseOptions(include_dirs=tuple(args.include_dirs), defines=tuple(args.defines),
                        std=args.std or "c++17", max_file_size=args.max_file_size)

    parts = includers([src.path for src in files])  # kernels.cu #included by main.cu: parsed in its place
    resolved: dict[str, str] = {}  # a path as given -> resolved (a file's is asked several times)

    def real(path) -> str:
        name = os.fspath(path)
        hit = resolved.get(name)
        if hit is None:
            hit = resolved[name] = str(Path(path).resolve())
        return hit

    # the folder given on the command line that holds each file: a header a file's includes miss
    # is looked for in the program's folders inside it, never above (parse.header_search)
    roots = {real(src.path): str(Path(real(src.path)).parents[len(src.rel.parts) - 1]) for src in files}
    known: dict[tuple, ParseOptions] = {}  # (path, seen) -> options_for's answer (frozen: shared)

    def options_for(path: Path, seen: frozenset = frozenset()) -> ParseOptions:
        memo = (os.fspath(path), seen)
        hit = known.get(memo)
        if hit is None:
            hit = known[memo] = _options_for(path, seen)
        return hit

    def _options_for(path: Path, seen: frozenset) -> ParseOptions:
        key = real(path)
        context = parts.get(key) if key not in seen else None  # headers that include each other: stop
        if context is not None:
            outer = options_for(Path(context[0]), seen | {key})
            # main.cu includes work.cu, which includes kernel.cu: kernel.cu is read after main.cu's
            # lines above work.cu and work.cu's lines above kernel.cu
            chain = outer.outer_contexts + ((outer.context,) if outer.context else ())
            return dataclasses.replace(outer, context=context, outer_contexts=chain)
        flags = compdb.get(key)
        if flags is None:
            return dataclasses.replace(base, root=roots.get(key))
        return ParseOptions(include_dirs=base.include_dirs + flags.include_dirs,
                            defines=flags.defines + base.defines,
                            std=args.std or flags.std or "c++17", extra_args=flags.extra,
                            max_file_size=base.max_file_size, root=roots.get(key))

    jobs = args.jobs if args.jobs > 0 else (os.cpu_count() or 1)
    jobs = min(jobs, max(1, len(files)))
    start = time.perf_counter()
    converted: dict = {}  # a conversion's analysis and emission run in the parse workers too
    settings = None if args.examine else {"keep_original": args.keep_original_code, "lift": not args.no_lift,
                                          "allow_tf32": args.allow_tf32}
    programs_found = None
    if not args.examine:  # the programs depend on the files alone: found while the workers parse
        from concurrent.futures import ThreadPoolExecutor

        from .programs import find_programs
        side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="programs")
        programs_found = side.submit(find_programs, [(src.path, str(src.rel)) for src in files], args.compdb,
                                     include_dirs=args.include_dirs)
        side.shutdown(wait=False)  # its one task runs on; an interrupted parse does not wait for it
    parsed = _parse_with_progress(cv, files, options_for, jobs, out, args.timeout, settings, converted,
                                  lean=not args.check and not args.verify_hybrid)
    suppress = _suppressor(args)
    if args.examine:
        from .reports.examine import run_examine
        status = run_examine(cv, files, parsed, out_dir, args, out, err, start, suppress)
        manifest.close()  # an examination adds examine.json; the modules of a conversion stay
        return max(status, EXIT_INCOMPLETE if unnamable else EXIT_OK)

    results = []
    out_dir.mkdir(parents=True, exist_ok=True)
    modules = cv.ModuleNames()
    for src in files:
        pf = parsed[src.path]
        rel_out, clash = modules.claim(src)
        done = converted.get(src.path)
        if done is not None:
            kernels, file_diags, text, tables = done
        else:
            (kernels, file_diags, text), tables = cv.convert_file(pf, str(src.rel), **settings), None
        if clash is not None:
            file_diags = file_diags + [clash]
        target = cv.safe_output(out_dir, rel_out)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        original, spec = cv.copy_original(out_dir, src)
        if spec is None and pf.unit is not None:
            spec = cv.derive_specs(out_dir, src, pf, kernels, tables)
        results.append(cv.FileResult(src, str(rel_out), kernels, file_diags, pf.seconds,
                                     cv.count_lines(src.path), text.count("\n"), original, spec))

    base_dir = files[0].path.parents[len(files[0].rel.parts) - 1] if files else Path.cwd()
    # the program's folders that held headers no -I folder did (M1008), per converted file
    found_dirs = {str(src.rel): parsed[src.path].found_include_dirs for src in files}

    def built_with(path: Path, rels) -> ParseOptions:
        """``path``'s options with the folders the conversion of the files ``rels`` found headers
        in, so that a check builds the original as it was read."""
        options = options_for(path)
        extra = tuple(d for rel in rels for d in found_dirs.get(rel, ()) if d not in options.include_dirs)
        return dataclasses.replace(options, include_dirs=options.include_dirs + tuple(dict.fromkeys(extra)))

    programs = []
    for prog in programs_found.result():
        item = prog.to_json(base_dir)
        # the build's flags of its main unit, so a later check builds the same program
        flags = built_with(prog.main, prog.files)
        item["build"] = {"include_dirs": list(flags.include_dirs), "defines": list(flags.defines)}
        programs.append(item)
        if prog.problem:
            err.print(f"migrate: warning: M9003: {prog.problem}", markup=False)
    build = cv.build_record(files, options_for, base, args, found_dirs)  # OUT remembers how it was made
    if args.verify_hybrid:
        _verify_hybrid(args, out_dir, results, parsed, jobs, err)
    if args.check:
        failed = _check_converted(args, out_dir, results, jobs, out, parsed, programs, build)
    else:
        failed = False

    from .reports import write_reports

    data = report_dict(results, out_dir, suppress=suppress)
    data["programs"] = programs
    data["build"] = build
    data["summary"]["seconds"] = round(time.perf_counter() - start, 3)
    written = write_reports(data, out_dir)  # report.json, report.html, stats.csv, report.sarif
    if args.json:
        write_json(data, Path(args.json))

    if not args.quiet:
        from .reports.terminal import print_diagnostics
        print_diagnostics(err, results, suppress)
    print_summary(out, data, written)

    _close_manifest(manifest, err)
    incomplete = any(k.form in NOT_MIGRATED for r in results for k in r.kernels) or \
        cv.error_count(results) > 0 or failed or bool(unnamable)
    return EXIT_INCOMPLETE if incomplete else EXIT_OK


def _close_manifest(manifest, err) -> None:
    """A conversion's end: OUT's manifest lists what it wrote; files of the previous conversion
    into OUT that this one did not write again are removed (and said)."""
    removed, kept = manifest.close(remove_stale=True)

    def shown(names):
        return ", ".join(map(repr, names[:5])) + (f" and {len(names) - 5} more" if len(names) > 5 else "")

    if removed:
        err.print(f"migrate: removed {len(removed)} file(s) of the previous conversion into "
                  f"{manifest.out_dir} that this one does not produce: {shown(removed)}", markup=False)
    if kept:
        err.print(f"migrate: kept {len(kept)} file(s) of the previous conversion that were changed since it "
                  f"wrote them (they are yours now): {shown(kept)}", markup=False)


def _verify_hybrid(args, out_dir: Path, results, parsed, jobs: int, err) -> None:
    """``--verify-hybrid``: build every hybrid kernel with nvcc (:mod:`migrate.runtime.hybrid_build`,
    a child process per module, ``jobs`` at once, each within ``--timeout`` per kernel); a module
    whose kernels do not all build is written again with those unsupported (M3009 gives nvcc's
    first error)."""
    import json
    import subprocess
    from concurrent.futures import ThreadPoolExecutor

    from . import convert as cv
    from .runtime.cuda_gpu import find_nvcc
    from .runtime.hybrid_build import UNINSTANTIATED

    todo = [r for r in results if r.output and any(k.form == "hybrid" for k in r.kernels)]
    if not todo:
        return
    if find_nvcc() is None:
        err.print("migrate: warning: --verify-hybrid: nvcc is not on PATH; the hybrid kernels were not built",
                  markup=False)
        return
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parent.parent)]
                                        + [p for p in [env.get("PYTHONPATH")] if p])

    def build(r) -> dict:
        module = str(cv.safe_output(out_dir, Path(r.output)))
        kernels = sum(1 for k in r.kernels if k.form == "hybrid") * 4  # a template's instances: a few each
        try:
            done = subprocess.run([sys.executable, "-m", "migrate.runtime.hybrid_build", module], env=env,
                                  capture_output=True, text=True, timeout=(args.timeout or 120) * kernels)
            last = [line for line in done.stdout.splitlines() if line.startswith("{")]
            return json.loads(last[-1]).get(module, {}) if last else \
                {k.kernel: "the build did not finish: " + (done.stderr.strip().splitlines() or ["no output"])[-1]
                 for k in r.kernels if k.form == "hybrid"}
        except subprocess.TimeoutExpired:
            return {k.kernel: "the build reached its time limit" for k in r.kernels if k.form == "hybrid"}

    with ThreadPoolExecutor(max(1, jobs)) as pool:
        outcomes = list(pool.map(build, todo))
    for r, outcome in zip(todo, outcomes):
        failed = {name: why for name, why in outcome.items() if why and not why.startswith(UNINSTANTIATED)}
        if not failed:
            continue
        fresh, _diags, text = cv.convert_file(parsed[r.source.path], str(r.source.rel), args.keep_original_code,
                                              lift=not args.no_lift, allow_tf32=args.allow_tf32, no_hybrid=failed)
        cv.safe_output(out_dir, Path(r.output)).write_text(text)
        r.lines_out = text.count("\n")
        by_name = {k.kernel: k for k in fresh}
        for k in r.kernels:
            if k.kernel in by_name:
                k.form, k.reason, k.diagnostics = by_name[k.kernel].form, by_name[k.kernel].reason, \
                    by_name[k.kernel].diagnostics


def _check_converted(args, out_dir: Path, results, jobs: int, console, parsed, programs=(), build=None) -> bool:
    """``convert --check``: run the equivalence check on what was just written; True if any
    checked kernel failed or could not run. A lifted (tile) kernel that fails its check is
    emitted again in the portable form and checked again (M3004 says so)."""
    from . import convert as cv
    from .diagnostics import make
    from .runtime.checker import check_output_folder
    from .ir.span import Span
    from .reports.core import report_dict

    def run(kernels=None):
        data = report_dict(results, out_dir)
        data["programs"] = list(programs)
        if build is not None:
            data["build"] = build
        checks = check_output_folder(out_dir, data, device=args.check, kernels=kernels,
                                     include_dirs=tuple(args.include_dirs), defines=tuple(args.defines),
                                     jobs=jobs, **_run_kwargs(args))
        by_key: dict = {}
        for c in checks:
            by_key.setdefault((c.file, c.kernel), []).append(c)
        return by_key

    by_key = run()
    for r in results:
        for k in r.kernels:
            if (k.file, k.kernel) in by_key:
                k.check = _merge_checks(by_key[(k.file, k.kernel)])
                run_note = _run_diagnostic(k.check, Span.point(str(r.source.path), k.line))
                if run_note is not None:
                    k.diagnostics = k.diagnostics + [run_note]
                k.diagnostics = k.diagnostics + _check_diagnostics(k.check, Span.point(str(r.source.path), k.line))
                k.diagnostics = k.diagnostics + _limit_diagnostics(k.check, Span.point(str(r.source.path), k.line))
    def reemit(r, no_lift: frozenset) -> dict:
        """Write ``r``'s module again with ``no_lift`` kept portable; its kernels' new results."""
        kernels, _diags, text = cv.convert_file(parsed[r.source.path], str(r.source.rel),
                                                args.keep_original_code, no_lift=no_lift,
                                                allow_tf32=args.allow_tf32)
        cv.safe_output(out_dir, Path(r.output)).write_text(text)
        return {k.kernel: k for k in kernels}

    # fall back from failing lifts
    retry: dict = {}
    lifted_checks: dict = {}
    for r in results:
        for k in r.kernels:
            if k.form == "tile" and _migration_failed(k.check):
                retry.setdefault(id(r), (r, []))[1].append(k)
    for r, failed_kernels in retry.values():
        fresh = reemit(r, frozenset(k.kernel for k in failed_kernels))
        for k in failed_kernels:
            lifted = k.check
            lifted_checks[(k.file, k.kernel)] = lifted
            k.form, k.reason = fresh[k.kernel].form, fresh[k.kernel].reason
            k.diagnostics = [d for d in fresh[k.kernel].diagnostics if d.code != "M3003"] + [make(
                "M3004", Span.point(str(r.source.path), k.line),
                f"the tile form {lifted.get('status')}ed its check ({lifted.get('message', '')}); "
                f"kept the {k.form} form")]
    if retry:
        names = {k.kernel for _r, ks in retry.values() for k in ks}
        again = run(names)
        for r, failed_kernels in retry.values():
            keep_tile = []
            for k in failed_kernels:
                if (k.file, k.kernel) in again:
                    k.check = _merge_checks(again[(k.file, k.kernel)])
                    k.diagnostics = k.diagnostics + _limit_diagnostics(k.check, Span.point(str(r.source.path), k.line))
                if k.check.get("status") in ("fail", "error"):
                    keep_tile.append(k)  # the portable form disagrees too: not the lift's doing
            if keep_tile:
                fresh = reemit(r, frozenset(k.kernel for k in failed_kernels) - {k.kernel for k in keep_tile})
                for k in keep_tile:
                    k.form, k.reason = fresh[k.kernel].form, fresh[k.kernel].reason
                    k.diagnostics = [d for d in k.diagnostics if d.code != "M3004"]
                    lifted = lifted_checks[(k.file, k.kernel)]
                    k.check = dict(lifted, message=lifted.get("message", "") +
                                   " (the portable form disagrees too, so the lift is kept)")
    return any(k.check.get("status") in ("fail", "error") for r in results for k in r.kernels)


def _check_diagnostics(check: dict, at) -> list:
    """A bad spec's error (M41xx, at the spec's line) and the coverage notes (M4003: a branch of
    the migrated kernel no run of the check took, at the kernel) of one kernel's check."""
    from .diagnostics import make
    from .ir.span import Span
    from .runtime.coverage import unreached

    out = []
    code = check.get("code", "")
    if code.startswith("M41"):
        path, _, line = check.get("at", "").rpartition(":")
        spot = Span.point(path, int(line)) if line.isdigit() and path else at
        out.append(make(code, spot, check.get("message", "").removeprefix(f"{code} bad spec {check.get('at', '')}: ")))
    for branch in unreached(check.get("coverage") or []):
        out.append(make("M4003", at, f"the {branch['branch']} branch (line {branch['line']} of the migrated "
                                     f"module) ran in none of the check's runs: {branch.get('why', '')}"))
    return out


def _run_diagnostic(check: dict, at):
    """M4001/M4002 for a kernel checked on its program's recorded run when that run did not end
    well: the run's outcome and whether this kernel was launched before it; None otherwise."""
    from .diagnostics import make

    ran = check.get("run", "")
    if check.get("inputs") != "trace" or not ran or ran == "ran to completion":
        return None
    message = check.get("message", "")
    if ran == "does not build":
        return make("M4001", at, message.split(":", 1)[0] + ": its kernels have no recorded launch")
    launched = "without launching it" not in message
    what = ("this kernel's recorded launches were replayed" if launched
            else "this kernel was not launched before it")
    if ran == "timed out":
        return make("M4002", at, f"the program's run reached its time limit; {what}")
    return make("M4001", at, f"the program's run {ran}; {what}")


def _limit_diagnostics(check: dict, at) -> list:
    """The codes of limits and isolation (M4010-M4015) a check's message carries, as diagnostics."""
    import re

    from .diagnostics import make

    out, seen = [], set()
    for match in re.finditer(r"\b(M401[0-5]): ([^;()]*(?:\([^()]*\)[^;()]*)*)", check.get("message", "")):
        if match.group(1) not in seen:
            seen.add(match.group(1))
            out.append(make(match.group(1), at, match.group(2).strip()))
    return out


def _migration_failed(check: dict) -> bool:
    """A check that judged the migrated kernel wrong, or that the migrated kernel could not run
    (not one whose original did not build or run, which no other form changes)."""
    return check.get("status") == "fail" or (
        check.get("status") == "error" and "the migrated kernel did not run" in check.get("message", ""))


def _memory_type(text: str):
    from .runtime.limits import parse_memory
    try:
        return parse_memory(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"the time limit must be above 0 s, not {text}")
    return value


def _limit_options(parser) -> None:
    from .runtime.limits import DEFAULT_MAX_MEMORY, DEFAULT_TIMEOUT
    parser.add_argument("--timeout", type=_positive_seconds, default=DEFAULT_TIMEOUT, metavar="SECONDS",
                        help=f"time limit of each file's parse and of each kernel's run, each side "
                             f"(default {DEFAULT_TIMEOUT:g}); past it the process is killed with its group "
                             f"(M4013, M4010)")
    parser.add_argument("--max-memory", dest="max_memory", type=_memory_type, default=DEFAULT_MAX_MEMORY,
                        metavar="BYTES", help=f"address-space limit of each parse and each CPU run, e.g. 4GiB, "
                                              f"0 for none (default {DEFAULT_MAX_MEMORY >> 30}GiB; M4014, M4012)")


def _run_options(parser) -> None:
    _limit_options(parser)
    parser.add_argument("--run", dest="run", default=None, metavar="ARGS",
                        help="check kernels without a spec on the launches of the program's own main() run with "
                             "these arguments (recorded on the CPU executor, replayed into the migrated kernels)")
    parser.add_argument("--record-launches", dest="record_launches", type=int, default=2, metavar="K",
                        help="launches recorded per kernel with --run (default 2)")
    parser.add_argument("--run-timeout", dest="run_timeout", type=float, default=120.0, metavar="S",
                        help="stop the program's run after S seconds and use the launches recorded by then")
    parser.add_argument("--record-on", dest="record_on", choices=("cpu", "cuda"), default="cpu",
                        help="record the program's launches on the CPU executor (default) or on the GPU, "
                             "from the program built by nvcc (for sizes the CPU cannot run in time)")
    parser.add_argument("--fast-forward", dest="fast_forward", action="store_true",
                        help="on the CPU executor, skip a kernel's launches after its recorded ones, so that a "
                             "program repeating one kernel for timing reaches its other kernels in time")


def _run_kwargs(args) -> dict:
    import shlex
    if getattr(args, "run", None) is None:
        return {"record_on": getattr(args, "record_on", "cpu"), "timeout": args.timeout}
    return {"run_args": shlex.split(args.run), "record_limit": args.record_launches, "run_timeout": args.run_timeout,
            "record_on": args.record_on, "fast_forward": args.fast_forward, "timeout": args.timeout}


def _merge_checks(checks) -> dict:
    """One kernel's check in report.json: its only spec, or the worst of its specs (template
    instances), with each instance under ``instances``."""
    if len(checks) == 1:
        return checks[0].to_json()
    order = ("error", "fail", "pass", "skipped")
    worst = min(checks, key=lambda c: order.index(c.status))
    merged = worst.to_json()
    for field in ("max_abs_err", "max_rel_err"):
        values = [getattr(c, field) for c in checks if getattr(c, field) is not None]
        merged[field] = max(values) if values else None
    merged["instances"] = [c.to_json() for c in checks]
    merged["message"] = "; ".join(f"{c.id}: {c.status}" for c in checks) + f" — {worst.message}"
    return merged


def _suppressor(args):
    """The ``--suppress`` predicate (code -> hidden?), or None when nothing is suppressed."""
    if not getattr(args, "suppress", None):
        return None
    from .reports.suppress import matcher
    return matcher(args.suppress)


def _parse_with_progress(cv, files, options_for, jobs, console, timeout=None, convert=None, converted=None,
                         lean=False):
    if not console.is_terminal or not files:
        return cv.parse_all(files, options_for, jobs, timeout=timeout, convert=convert, converted=converted,
                            lean=lean)
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    label = "[bold]parsing" if convert is None else "[bold]converting"
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
               TextColumn("{task.description}"))
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("", total=len(files))

        def done(src):
            progress.update(task, advance=1, description=str(src.rel))

        return cv.parse_all(files, options_for, jobs, on_done=done, timeout=timeout, convert=convert,
                            converted=converted, lean=lean)


if __name__ == "__main__":
    sys.exit(main())
