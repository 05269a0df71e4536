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


#: flags of a program's own compile command (its compile_commands.json entry) that both of its
#: drop-in executables keep: what makes nvcc accept the code (relaxed constexpr, extended lambdas),
#: link it (relocatable device code) or changes its numbers (fast math, flush to zero) and the host
#: code's optimisation; not the target, the output or the warnings
KEPT_FLAGS = frozenset({
    "--expt-relaxed-constexpr", "-expt-relaxed-constexpr", "--extended-lambda", "-extended-lambda",
    "--expt-extended-lambda", "-expt-extended-lambda", "-rdc=true", "--relocatable-device-code=true", "-dc",
    "-use_fast_math", "--use_fast_math", "-ftz=true", "-ftz=false", "--ftz=true", "--ftz=false",
    "-prec-div=false", "-prec-div=true", "-prec-sqrt=false", "-prec-sqrt=true", "-fmad=false", "--fmad=false",
    "-O1", "-O2", "-O3",
})
#: -Xcompiler values kept (the host code's OpenMP, which the link needs too)
KEPT_HOST_FLAGS = frozenset({"-fopenmp"})


def kept_flags(args) -> list[str]:
    """The flags of a compile command's arguments (``nvcc ... -c main.cu -o main.o``, split) that
    :data:`KEPT_FLAGS` and :data:`KEPT_HOST_FLAGS` keep, in order, each once; ``-dc`` kept as
    ``-rdc=true`` (the drop-in command compiles and links at once)."""
    out = []
    args = list(args)
    i = 0
    while i < len(args):
        a = args[i]
        host = None
        if a in ("-Xcompiler", "--compiler-options") and i + 1 < len(args):
            host, i = args[i + 1], i + 1
        elif a.startswith(("-Xcompiler=", "--compiler-options=")):
            host = a.split("=", 1)[1]
        if host is not None:
            for value in host.split(","):
                flag = ["-Xcompiler", value.strip()]
                if value.strip() in KEPT_HOST_FLAGS and value.strip() not in out:
                    out += flag
        elif a in KEPT_FLAGS:
            a = "-rdc=true" if a in ("-dc", "--relocatable-device-code=true") else a
            if a not in out:
                out.append(a)
        i += 1
    return out


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
