"""Public API of the runtime for running ORIGINAL CUDA kernels (CPU or GPU) and checking them.

    from migrate.runtime.api import run_original, check_original
    from migrate.runtime.spec import load_spec

    kernel = load_spec("corpus/elementwise/saxpy.toml")[0]
    res = run_original("corpus/elementwise/saxpy.cu", kernel, seed=1234)     # random inputs
    res.status        # "ok" | "compile_error" | "launch_error" | "oob" | "crash" | "deadlock" | "timeout" | "unavailable"
    res.outputs       # {"y": numpy array}  (every out/inout buffer; bfloat16 held as float32)
    res.findings      # [Finding] about the original code (out-of-bounds access, crash, ...)
    res.message, res.seed, res.stdout

``run_original(cu_path, kernel_spec, args=None, symbols=None, *, device="cpu", schedule="forward",
seed=None, include_dirs=(), defines=(), timeout=120, cache_dir=None) -> RunResult``

* ``kernel_spec``: a :class:`~.spec.KernelSpec` (from :func:`~.spec.load_spec`), or the ``id``/
  ``name`` of a kernel in the ``.toml`` beside ``cu_path``;
* ``args``/``symbols``: arrays and numbers by name as :func:`~.inputs.make_inputs` makes them
  (holder dtypes: bfloat16 as float32). When ``args`` is None, seeded random inputs are made
  (``seed``, default :data:`~.inputs.DEFAULT_SEED`) and reported in ``RunResult.seed``. Output
  buffers are poisoned again before every run, whatever ``args`` holds for them;
* ``device``: ``"cpu"`` (the CPU executor, always available where a C++ compiler is) or
  ``"gpu"`` (nvcc + an NVIDIA GPU; ``status="unavailable"`` otherwise);
* ``schedule`` (CPU only): ``"forward"``, ``"reverse"`` or ``"random"`` (seeded by ``seed``) order
  of the threads of a block between barriers, to expose missing ``__syncthreads``.

``check_original(cu_path, kernel_spec, reference, ...) -> Check`` runs the kernel on random
inputs and compares every output with ``reference(args, symbols) -> {name: expected}`` (the
signature of ``tests.references``) under the kernel's tolerance class (:mod:`.compare`).

Compiled libraries are cached (``$CUDA2TILE_CACHE``, default ``~/.cache/cuda2tile``); every run
happens in a child process with a time limit.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .build import BuildError, Library
from .compare import CompareResult, compare_outputs
from .inputs import DEFAULT_SEED, Inputs, make_inputs, repoison
from .results import Finding, RunResult
from .spec import KernelSpec, SpecError, load_spec

__all__ = ["run_original", "check_original", "prepare_original", "Check", "RunResult", "Finding"]


def _resolve_kernel(cu_path: Path, kernel_spec) -> KernelSpec:
    if isinstance(kernel_spec, KernelSpec):
        return kernel_spec
    spec_path = cu_path.with_suffix(".toml")
    kernels = load_spec(spec_path)
    for k in kernels:
        if k.id == kernel_spec:
            return k
    for k in kernels:
        if k.name == kernel_spec:
            return k
    raise SpecError(spec_path, f"no kernel with id or name {kernel_spec!r}")


def _library_kernels(cu_path: Path, kernel: KernelSpec) -> list[KernelSpec]:
    """All kernels of the spec file beside the source (one library serves them all), else one."""
    if kernel.spec_path and kernel.cu_path and Path(kernel.cu_path).resolve() == cu_path.resolve():
        try:
            ks = load_spec(kernel.spec_path)
            if any(k.instance == kernel.instance for k in ks):
                return ks
        except SpecError:
            pass
    return [kernel]


def prepare_original(cu_path, kernels, *, device: str = "cpu", include_dirs=(), defines=(),
                     cache_dir=None) -> Library:
    """Compile (or fetch from the cache) the library for ``kernels`` of ``cu_path``."""
    if device == "cpu":
        from .cuda_cpu import compile_cpu
        return compile_cpu(cu_path, kernels, include_dirs=include_dirs, defines=defines, cache_dir=cache_dir)
    if device == "gpu":
        from .cuda_gpu import compile_gpu
        return compile_gpu(cu_path, kernels, include_dirs=include_dirs, defines=defines, cache_dir=cache_dir)
    raise ValueError(f"device must be 'cpu' or 'gpu', not {device!r}")


def run_original(cu_path, kernel_spec, args: dict | None = None, symbols: dict | None = None, *,
                 device: str = "cpu", schedule: str = "forward", seed: int | None = None,
                 include_dirs=(), defines=(), timeout: float = 120.0, cache_dir=None,
                 poison_shared: bool = True, wrapper=(), read_symbols=()) -> RunResult:
    """Run one kernel of an original CUDA program; see the module docstring. ``read_symbols``:
    (name, dtype, elements) of symbols read back after the run, as outputs ``symbol:<name>``."""
    cu_path = Path(cu_path)
    kernel = _resolve_kernel(cu_path, kernel_spec)
    seed = DEFAULT_SEED if seed is None else int(seed)
    if args is None:
        inp = make_inputs(kernel, seed)
        args, gen_symbols = inp.args, inp.symbols
        symbols = gen_symbols if symbols is None else symbols
    args = repoison(kernel, args)
    symbols = symbols or {}

    if device == "gpu":
        from .cuda_gpu import gpu_available
        if not gpu_available():
            return RunResult(status="unavailable", device="gpu", schedule=schedule, seed=seed,
                             message="no NVIDIA GPU (or no nvcc) on this machine")
    elif device != "cpu":
        raise ValueError(f"device must be 'cpu' or 'gpu', not {device!r}")

    lib = None
    for ks in (_library_kernels(cu_path, kernel), [kernel]):
        try:
            lib = prepare_original(cu_path, ks, device=device, include_dirs=include_dirs, defines=defines,
                                   cache_dir=cache_dir)
            break
        except BuildError as e:
            err = e
            if len(ks) == 1:
                break
    if lib is None:
        return RunResult(status="compile_error" if "compil" in str(err) or err.log else "unavailable",
                         device=device, schedule=schedule, seed=seed, message=str(err), stderr=err.log)
    if device == "gpu":
        from .cuda_gpu import run_gpu
        res = run_gpu(lib, kernel, args, symbols, seed=seed, timeout=timeout, wrapper=wrapper,
                      read_symbols=read_symbols)
    else:
        from .cuda_cpu import run_cpu
        res = run_cpu(lib, kernel, args, symbols, schedule=schedule, seed=seed, timeout=timeout,
                      poison_shared=poison_shared, read_symbols=read_symbols)
    res.seed = seed
    if lib.excluded:
        left_out = ", ".join(f"{name} (line {line})" for name, line in lib.excluded)
        res.findings.append(Finding(kind="excluded", severity="warning", message=(
            f"M4015: left out of the original's build, as they do not compile: {left_out}")))
    return res


@dataclass
class Check:
    """A run of an original kernel compared with a reference."""

    kernel: KernelSpec
    run: RunResult
    inputs: Inputs
    comparisons: list = field(default_factory=list)    # [CompareResult]

    @property
    def passed(self) -> bool:
        return self.run.ok and bool(self.comparisons) and all(c.passed for c in self.comparisons)

    @property
    def message(self) -> str:
        if not self.run.ok:
            return str(self.run)
        bad = [c.message for c in self.comparisons if not c.passed]
        return "; ".join(bad) if bad else "all outputs match"


def check_original(cu_path, kernel_spec, reference, *, device: str = "cpu", schedule: str = "forward",
                   seed: int | None = None, include_dirs=(), defines=(), timeout: float = 120.0,
                   cache_dir=None, tolerance: str | None = None) -> Check:
    """Run on seeded random inputs and compare with ``reference(args, symbols)``."""
    cu_path = Path(cu_path)
    kernel = _resolve_kernel(cu_path, kernel_spec)
    seed = DEFAULT_SEED if seed is None else int(seed)
    inp = make_inputs(kernel, seed)
    res = run_original(cu_path, kernel, inp.args, inp.symbols, device=device, schedule=schedule, seed=seed,
                       include_dirs=include_dirs, defines=defines, timeout=timeout, cache_dir=cache_dir)
    check = Check(kernel=kernel, run=res, inputs=inp)
    if res.ok:
        expected = reference(inp.copy().args, {k: v.copy() for k, v in inp.symbols.items()})
        check.comparisons = compare_outputs(kernel, expected, res.outputs, tolerance=tolerance)
    return check
