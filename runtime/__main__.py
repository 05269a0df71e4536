"""Command line of the runtime: run an original CUDA kernel from its spec and show what happened.

    python -m migrate.runtime run corpus/norm/softmax_warp.cu [--kernel ID] [--schedule random]
                                  [--device cpu|gpu] [--seed N] [--timeout S] [--show N]
                                  [--references FILE.py]
    python -m migrate.runtime run-main corpus/elementwise/saxpy.cu     # the program's own main()

``run`` runs every kernel of the ``.toml`` beside the source (or the one named by ``--kernel``) on
seeded random inputs and prints the status, the findings and a few output values. With
``--references FILE.py`` it also compares the outputs with the references that file defines: a
Python file (or a package's ``__init__.py``) with a module-level ``REFERENCES`` dict from
``"<path of the .cu under corpus/>:<id>"`` to ``ref(args, symbols) -> {output name: array}``;
the repository's are ``--references tests/references/__init__.py``. The file is loaded from its
path (it need not be importable); without the option nothing is compared and nothing outside the
runtime is imported. The exit status is 0 when every run is ``ok`` (and every comparison passes),
else 1; 2 for a bad spec, kernel name or references file.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from .api import run_original
from .compare import compare_outputs
from .executor import SCHEDULES
from .inputs import DEFAULT_SEED, make_inputs
from .spec import SpecError, load_spec


class ReferencesError(Exception):
    """A ``--references`` file that cannot be loaded or defines no ``REFERENCES`` dict."""


def load_references(path: str | Path) -> dict:
    """The ``REFERENCES`` dict of the Python file at ``path``, loaded from the path with importlib
    (a package's ``__init__.py`` is loaded as that package, so it may import its own modules)."""
    import importlib.util

    path = Path(path)
    if not path.is_file():
        raise ReferencesError(f"references file {path}: no such file")
    name = "_c2t_references_" + "".join(c if c.isalnum() else "_" for c in str(path.resolve()))
    package = path.name == "__init__.py"
    spec = importlib.util.spec_from_file_location(
        name, path, submodule_search_locations=[str(path.parent)] if package else None)
    if spec is None or spec.loader is None:
        raise ReferencesError(f"references file {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: a package imports its modules by this name
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ReferencesError(f"references file {path}: {type(exc).__name__}: {exc}") from exc
    refs = getattr(module, "REFERENCES", None)
    if not isinstance(refs, dict):
        raise ReferencesError(f"references file {path} defines no REFERENCES dict")
    return refs


def cmd_run(opts) -> int:
    cu = Path(opts.source)
    try:
        kernels = load_spec(Path(opts.spec) if opts.spec else cu.with_suffix(".toml"))
    except SpecError as e:
        print(e, file=sys.stderr)
        return 2
    if opts.kernel:
        kernels = [k for k in kernels if opts.kernel in (k.id, k.name)]
        if not kernels:
            print(f"no kernel {opts.kernel!r} in the spec", file=sys.stderr)
            return 2
    try:
        refs = load_references(opts.references) if opts.references else {}
    except ReferencesError as e:
        print(e, file=sys.stderr)
        return 2
    ok = True
    for k in kernels:
        inp = make_inputs(k, opts.seed)
        res = run_original(cu, k, inp.args, inp.symbols, device=opts.device, schedule=opts.schedule,
                           seed=opts.seed, timeout=opts.timeout)
        print(f"{k.id} [{opts.device}, {opts.schedule}, seed {opts.seed}]: {res.status}"
              + (f" in {res.elapsed * 1e3:.1f} ms" if res.ok else ""))
        if res.message:
            print("  " + res.message.replace("\n", "\n  "))
        for f in res.findings:
            if f.message != res.message:
                print(f"  {f.severity}: {f.message}")
        if res.stdout.strip() and opts.show:
            print("  stdout: " + "\n  ".join(res.stdout.strip().splitlines()[:opts.show]))
        ok &= res.ok
        if not res.ok:
            continue
        for name, arr in res.outputs.items():
            head = np.array2string(np.asarray(arr)[:opts.show], threshold=opts.show, precision=6)
            print(f"  {name}[:{opts.show}] = {head}")
        key = k.reference_key() if k.cu_path else None
        if key in refs:
            exp = refs[key](inp.copy().args, {n: v.copy() for n, v in inp.symbols.items()})
            for r in compare_outputs(k, exp, res.outputs):
                print(f"  {'PASS' if r.passed else 'FAIL'} {r.message}")
                ok &= r.passed
    return 0 if ok else 1


def cmd_run_main(opts) -> int:
    from .cuda_cpu import compile_cpu, run_program
    cu = Path(opts.source)
    lib = compile_cpu(cu, [])
    try:
        rc, out, err = run_program(lib, opts.args, timeout=opts.timeout)
    except TimeoutError as exc:
        print(f"{cu}: {exc}", file=sys.stderr)
        return 124
    sys.stdout.write(out)
    sys.stderr.write(err)
    return rc if rc >= 0 else 128 - rc


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m migrate.runtime", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run kernels of a corpus program from its spec")
    r.add_argument("source")
    r.add_argument("--spec", help="the spec (default: the .toml beside the source)")
    r.add_argument("--kernel", help="id or name of one kernel")
    r.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    r.add_argument("--schedule", choices=tuple(SCHEDULES), default="forward")
    r.add_argument("--seed", type=int, default=DEFAULT_SEED)
    r.add_argument("--timeout", type=float, default=120.0)
    r.add_argument("--show", type=int, default=6, help="how many output values to print")
    r.add_argument("--references", metavar="FILE.py",
                   help="compare with the REFERENCES of this Python file "
                        "(the repository's: tests/references/__init__.py)")
    r.set_defaults(fn=cmd_run)
    m = sub.add_parser("run-main", help="run the program's own main() on the CPU executor")
    m.add_argument("source")
    m.add_argument("args", nargs="*")
    m.add_argument("--timeout", type=float, default=120.0)
    m.set_defaults(fn=cmd_run_main)
    opts = ap.parse_args(argv)
    return opts.fn(opts)


if __name__ == "__main__":
    sys.exit(main())
