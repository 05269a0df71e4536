"""The nvcc command lines of a drop-in build (flags as data)."""
from __future__ import annotations

import shutil

#: what TileLang's own build of a CUDA kernel passes (tilelang/jit/adapter/libgen.py), less --shared
TILELANG_FLAGS = ("-std=c++20", "-w", "-Xcudafe", "--diag_suppress=177", "-lineinfo")
#: added when the kernel's pass options enable fast math (TileLang's TL_ENABLE_FAST_MATH)
FAST_MATH_FLAG = "--use_fast_math"
#: linked into the rebuilt program (the driver's cuMemGetAddressRange is found at run time through
#: cudaGetDriverEntryPointByVersion: a machine with no GPU driver has no libcuda to link)
REBUILT_LIBS = ()


def nvcc() -> str | None:
    """The nvcc the runtime's GPU builds use ($NVCC, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin)."""
    from ..runtime.cuda_gpu import find_nvcc

    found = find_nvcc()
    return found[0] if found else None


def arch_flags(arch: str) -> list[str]:
    """``sm_90a`` -> ``-gencode arch=compute_90a,code=sm_90a`` (as TileLang builds it)."""
    number = arch.removeprefix("sm_")
    return ["-gencode", f"arch=compute_{number},code=sm_{number}"]


def strong_symbols_command(obj) -> list[str]:
    """nm listing the global symbols ``obj`` defines (weak ones, C++ inline and template code in
    COMDAT groups, are listed as W/V and left alone)."""
    return [shutil.which("nm") or "nm", "--defined-only", "-g", str(obj)]


def localize_command(obj, symbols_file) -> list[str]:
    """objcopy making the symbols listed in ``symbols_file`` local to ``obj``: TileLang's headers
    define functions (``debug_print_msg``) that each variant's object holds once more."""
    return [shutil.which("objcopy") or "objcopy", f"--localize-symbols={symbols_file}", str(obj)]


def tilelang_includes() -> list[str]:
    from tilelang.env import CUTLASS_INCLUDE_DIR, TILELANG_TEMPLATE_PATH
    return [f"-I{CUTLASS_INCLUDE_DIR}", f"-I{TILELANG_TEMPLATE_PATH}"]


def variant_command(source, obj, arch: str, fast_math: bool = False) -> list[str]:
    return [nvcc() or "nvcc", *TILELANG_FLAGS, *arch_flags(arch), *tilelang_includes(),
            *([FAST_MATH_FLAG] if fast_math else []), "-c", str(source), "-o", str(obj)]


def program_flags(std: str | None, include_dirs, defines, extra_args=()) -> list[str]:
    """The flags the program's own units build with (from report.json's build flags)."""
    flags = [f"-std={std}"] if std else []
    flags += [f"-I{d}" for d in include_dirs]
    flags += [f"-D{d}" for d in defines]
    flags += [a for a in extra_args if a.startswith(("-D", "-I", "-U", "-include"))]
    return flags


def program_command(sources, out, arch: str, flags, objects=(), libs=()) -> list[str]:
    return [nvcc() or "nvcc", *arch_flags(arch), *flags, *map(str, sources), *map(str, objects), *libs,
            "-o", str(out)]
