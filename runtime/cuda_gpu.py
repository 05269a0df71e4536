"""The GPU executor: runs an original CUDA program's kernel on an NVIDIA GPU.

The same source and the same generated launcher as the CPU executor (:mod:`.build`), compiled
by ``nvcc -shared -Xcompiler -fPIC -DC2T_GPU_BUILD -Dmain=cuda2tile_host_main`` (the source is not
rewritten: nvcc understands ``<<<>>>``). The launcher (``runtime/cpu/c2t_launcher.h``) converts
the packed arguments to the kernel's parameter types and calls ``cudaLaunchKernel``; symbols
are filled with ``cudaMemcpyToSymbol``; buffers are ``cudaMalloc``'d by the library itself
(``c2t_alloc_buffer``), each between 256-byte red zones, before and after, checked after the run
for writes outside the buffer (reported as the element, before its start or past its end). Runs happen in a child process with a time limit (:mod:`.executor`), so an
illegal address or a hung kernel cannot take the caller down.

    >>> from migrate.runtime.cuda_gpu import compile_gpu, run_gpu, gpu_available
    >>> if gpu_available():
    ...     lib = compile_gpu("corpus/elementwise/saxpy.cu", [kernel])
    ...     res = run_gpu(lib, kernel, inputs.args, inputs.symbols)

The target architecture is ``$CUDA2TILE_GPU_ARCH`` if set, else the compute capability that
``nvidia-smi`` reports (``sm_90a`` for 9.0, which the corpus is written for), else ``sm_90a``.
Building needs no GPU (``nvcc -shared`` compiles anywhere); running does.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .build import BuildError, HEADER_DIR, Library, build_library
from .executor import run_library
from .results import RunResult
from .spec import KernelSpec

__all__ = ["find_nvcc", "gpu_visible", "gpu_available", "gpu_arch", "gpu_flags", "compile_gpu", "run_gpu"]

_memo: dict = {}


def find_nvcc() -> tuple[str, str] | None:
    """(path, version line) of nvcc: $NVCC, nvcc on PATH, $CUDA_HOME/bin or /usr/local/cuda/bin."""
    if "nvcc" in _memo:
        return _memo["nvcc"]
    cands = [os.environ.get("NVCC"), shutil.which("nvcc")]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            cands.append(os.path.join(home, "bin", "nvcc"))
    found = None
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            try:
                p = subprocess.run([c, "--version"], capture_output=True, text=True, timeout=60)
            except (OSError, subprocess.SubprocessError):
                continue
            if p.returncode == 0:
                lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
                found = (c, lines[-1] if lines else "nvcc")
                break
    _memo["nvcc"] = found
    return found


def _smi_compute_caps() -> list[str]:
    if "caps" in _memo:
        return _memo["caps"]
    caps = []
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            p = subprocess.run([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], capture_output=True,
                               text=True, timeout=30)
            if p.returncode == 0:
                caps = [ln.strip() for ln in p.stdout.splitlines() if ln.strip()]
        except (OSError, subprocess.SubprocessError):
            pass
    _memo["caps"] = caps
    return caps


def gpu_visible() -> bool:
    """True when nvidia-smi lists an NVIDIA GPU (nvcc not asked for: running built programs)."""
    return bool(_smi_compute_caps())


def gpu_available() -> bool:
    """True when an NVIDIA GPU is visible (nvidia-smi lists one) and nvcc exists."""
    return bool(_smi_compute_caps()) and find_nvcc() is not None


def gpu_arch() -> str:
    env = os.environ.get("CUDA2TILE_GPU_ARCH")
    if env:
        return env
    caps = _smi_compute_caps()
    if caps:
        try:
            major, minor = caps[0].split(".")
            arch = f"sm_{int(major)}{int(minor)}"
            # the arch-specific features (wgmma, setmaxnreg) need the `a` targets
            return arch + "a" if int(major) >= 9 else arch
        except ValueError:
            pass
    return "sm_90a"


def gpu_flags(arch: str | None = None, extra=()) -> list[str]:
    # -lineinfo: compute-sanitizer's findings (--sanitize) name the original's source lines
    return ["-shared", "-Xcompiler", "-fPIC", "-O2", "-lineinfo", "-std=c++17", f"-arch={arch or gpu_arch()}",
            "-DC2T_GPU_BUILD=1", "-Dmain=cuda2tile_host_main", "-I", str(HEADER_DIR), "-w", *extra]


def compile_gpu(cu_path, kernels, include_dirs=(), defines=(), cache_dir=None, arch: str | None = None,
                timeout: float = 600.0, extra_flags=()) -> Library:
    """Build (or fetch from the cache) the GPU library of ``cu_path`` with launchers for
    ``kernels``. Raises :class:`BuildError` (also when nvcc is missing)."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise BuildError("nvcc not found (set NVCC or CUDA_HOME, or put nvcc on PATH)")
    inst, syms = [], []
    for k in kernels:
        name = k.instance if isinstance(k, KernelSpec) else str(k)
        if name not in inst:
            inst.append(name)
        if isinstance(k, KernelSpec):
            for s in k.symbols:
                if s.name not in syms:
                    syms.append(s.name)
    return build_library(device="gpu", cu_path=cu_path, kernels=inst, symbols=syms, include_dirs=include_dirs,
                         defines=defines, compiler=[nvcc[0]], compiler_id=nvcc[1],
                         flags=gpu_flags(arch, ("--pre-include", "c2t_launcher.h", *extra_flags)),
                         cache_dir=cache_dir, timeout=timeout, rewrite=False, suffix=".cu", stub_headers=False)


def run_gpu(lib: Library, kernel: KernelSpec, args: dict, symbols: dict | None = None, *,
            seed: int = 0, timeout: float = 120.0, read_symbols=(), repeat: int = 0, wrapper=()) -> RunResult:
    """Run ``kernel`` from a GPU library in a child process. There is no schedule on the GPU.
    ``repeat`` > 0 launches it that many more times and reports ``per_launch`` seconds; ``wrapper``
    runs the worker under a command (compute-sanitizer)."""
    if lib.device != "gpu":
        raise ValueError("run_gpu needs a library built by compile_gpu")
    return run_library(lib, kernel, args, symbols, schedule="forward", seed=seed, timeout=timeout,
                       read_symbols=read_symbols, repeat=repeat, wrapper=wrapper)
