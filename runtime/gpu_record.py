"""Recording a program's launches on the GPU (``--record-on cuda``): the original program built
by nvcc, run with its own arguments, its first launches of each kernel instance recorded.

Programs sized for a GPU run for minutes on the CPU executor before their first launch ends; on
the GPU they take seconds. :func:`build_program` builds the program's translation units with
nvcc as an ordinary executable: the sources (and the local headers they include) are mirrored
into a build folder with their ``<<<>>>`` launches rewritten into the recording launcher of
``cpu/c2t_gpu_trace.h`` (forced in), and the executable is linked with ``--wrap`` for
``cudaMalloc`` and its relatives, which the header tracks; nothing else of the program changes. :func:`record_on_gpu` runs it (``traces.record`` does the
rest): the recording has the CPU executor's format, so the same replay judges it. Executables are
cached by content hash like the executor's libraries.
"""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path

from .build import HEADER_DIR, BuildError, _compile, _writable, cache_root, collect_sources, key_lock, publish
from .source import register_constants, rewrite_launches

__all__ = ["GPU_TRACE_HEADER", "build_program", "find_nvcc", "record_on_gpu"]

GPU_TRACE_HEADER = HEADER_DIR / "c2t_gpu_trace.h"


#: the CUDA toolkit libraries a program links with when it includes their headers
CUDA_LIBRARIES = (("cublas_v2.h", "-lcublas"), ("cublas.h", "-lcublas"), ("cublasLt.h", "-lcublasLt"),
                  ("cusparse.h", "-lcusparse"), ("curand.h", "-lcurand"), ("cufft.h", "-lcufft"),
                  ("cusolverDn.h", "-lcusolver"), ("nvrtc.h", "-lnvrtc"), ("cuda.h", "-lcuda"))


#: the CUDA runtime's allocation functions the executable is linked to pass through the recorder
WRAPPED = ("cudaMalloc", "cudaMallocManaged", "cudaMallocHost", "cudaHostAlloc", "cudaMallocPitch", "cudaMallocAsync",
           "cudaFree", "cudaFreeHost", "cudaFreeAsync")


def find_nvcc() -> str | None:
    """nvcc from $NVCC, the PATH, or /usr/local/cuda/bin."""
    for c in (os.environ.get("NVCC"), shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"):
        if c and Path(c).is_file():
            return c
    return None


def _libcuda_dir(nvcc: str) -> str | None:
    """A folder holding libcuda.so to link with (the driver's, or the toolkit's stub), or None:
    a program that only includes cuda.h for its types links without it."""
    import ctypes.util

    top = Path(nvcc).resolve().parent.parent
    for d in (top / "lib64" / "stubs", top / "targets" / "x86_64-linux" / "lib" / "stubs",
              Path("/usr/lib/x86_64-linux-gnu"), Path("/usr/local/nvidia/lib64"), Path("/usr/lib64")):
        if (d / "libcuda.so").exists():
            return str(d)
    name = ctypes.util.find_library("cuda")
    if name:
        for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/local/nvidia/lib64"):
            if (Path(d) / name).exists():
                return d
    return None


def build_program(main: Path, units=(), include_dirs=(), defines=(), arch: str = "sm_90",
                  cache_dir=None, timeout: float = 600.0) -> Path:
    """The executable of the program whose ``main()`` is in ``main`` and whose other translation
    units are ``units``, built by nvcc with its launches recording. Raises :class:`BuildError`."""
    nvcc = find_nvcc()
    if nvcc is None:
        raise BuildError("nvcc not found (set NVCC or put the CUDA toolkit's bin folder on PATH)")
    main = Path(main).resolve()
    all_units = [main, *[u for u in dict.fromkeys(Path(x).resolve() for x in units) if u != main]]
    for u in all_units:
        if not u.is_file():
            raise BuildError(f"no such source file: {u}")
    root = Path(os.path.commonpath([u.parent for u in all_units]))
    include_dirs = [str(Path(d).resolve()) for d in include_dirs]
    sources: dict[str, str] = {}
    for u in all_units:
        for rel, text in collect_sources(u, include_dirs, root=root).items():
            sources.setdefault(rel, text)
    prepared = {rel: register_constants(rewrite_launches(text, device="gpu") if "<<<" in text else text)
                for rel, text in sources.items()}
    h = hashlib.sha256()
    for part in (nvcc, arch, " ".join(include_dirs), " ".join(defines), GPU_TRACE_HEADER.read_text(),
                 (HEADER_DIR / "c2t_trace.h").read_text(), *map(str, all_units)):
        h.update(part.encode() + b"\0")
    for rel in sorted(prepared):
        h.update(rel.encode() + b"\0" + prepared[rel].encode() + b"\0")
    key = h.hexdigest()[:32]
    final = _writable(cache_root(cache_dir)) / "gpu-prog" / key[:2] / key
    exe = final / "prog"
    if exe.is_file():
        return exe
    with key_lock(final):  # another build of the same program: wait for it, take its result
        if exe.is_file():
            return exe
        return _build_program(final, exe, prepared, sources, root, all_units, include_dirs, defines, nvcc, arch,
                              main, timeout)


def _build_program(final: Path, exe: Path, prepared: dict, sources: dict, root: Path, all_units, include_dirs,
                   defines, nvcc: str, arch: str, main: Path, timeout: float) -> Path:
    """The build of :func:`build_program` proper, in a temporary folder published as ``final``."""
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=final.parent))
    try:
        src_dir = tmp / "src"
        for rel, body in prepared.items():
            if rel.startswith("/"):
                continue  # outside the source tree: found through -iquote / -I
            dst = src_dir / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.write_text(f"#line 1 \"{(root / rel).resolve()}\"\n{body}")
        quoted = list(dict.fromkeys(str(u.parent) for u in all_units))  # the originals' folders
        common = []
        for d in include_dirs:
            common += ["-I", d]
        common += [f"-D{d}" for d in defines]
        objects = []
        for i, u in enumerate(all_units):
            rel = u.relative_to(root).as_posix()
            obj = str(tmp / f"unit{i}.o")
            if u.suffix == ".c":
                cmd = ["gcc", "-O2", "-w", "-c", str(src_dir / rel), "-o", obj, *(f"-iquote{d}" for d in quoted)]
            else:
                cmd = [nvcc, "-std=c++17", "-O2", "-w", f"-arch={arch}", "--expt-relaxed-constexpr", "--extended-lambda",
                       "-include", str(GPU_TRACE_HEADER),
                       *(["-x", "cu"] if u.suffix == ".cu" else []), "-c", str(src_dir / rel), "-o", obj,
                       *(x for d in quoted for x in ("-Xcompiler", f"-iquote{d}"))]
            cmd += common
            _compile(cmd, rel, tmp, timeout)
            objects.append(obj)
        libs = [flag for header, flag in CUDA_LIBRARIES if any(f"<{header}>" in t or f'"{header}"' in t
                                                             for t in sources.values())]
        if "-lcuda" in libs:  # the driver API: the driver's library, or the toolkit's stub of it
            found = _libcuda_dir(nvcc)
            libs = [x for x in libs if x != "-lcuda"] + ([f"-L{found}", "-lcuda"] if found else [])
        wrap = ["-Xlinker", "--wrap=" + ",--wrap=".join(WRAPPED)]
        _compile([nvcc, f"-arch={arch}", *objects, "-o", str(tmp / "prog"), *wrap, *libs], f"{main.name} (linking)",
                 tmp, timeout)
        publish(tmp, final, exe)
        return exe
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def record_on_gpu(exe: Path, argv, trace_dir: Path, *, limit: int = 2, timeout: float = 120.0, cwd=None,
                  budget: int | None = None):
    """Run the executable of :func:`build_program` with ``argv`` in ``cwd``, recording into
    ``trace_dir``; a :class:`.traces.Recording`."""
    from .traces import BUDGET, record

    return record([str(exe)], argv, trace_dir, limit=limit, timeout=timeout, cwd=cwd,
                  budget=BUDGET if budget is None else budget)
