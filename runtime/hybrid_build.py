"""Build the hybrid kernels of converted modules with nvcc, no GPU needed: each kernel kept as its
CUDA (form ``hybrid``, ``migrate.emit.hybrid``) is lowered by TileLang and compiled for a GPU
architecture, which proves that its wrapper (the source file, the copied body, the entry) builds.

``python -m migrate.runtime.hybrid_build [--arch sm_90a] [--only K1,K2] MODULE.py...`` prints, as its last line
(TileLang logs to standard output before it), one JSON object: module -> {kernel: null (built) or
the first error nvcc gave, ``file:line: message``}. Used by
``migrate convert --verify-hybrid`` and ``bench/hybrid_build.py``. Imports no libclang.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from .tilelang_support import HYBRID_NVCC_FLAGS

#: an nvcc (EDG front end) error: ``/path/x.cu(47): error: identifier "y" is undefined``
_NVCC_ERROR = re.compile(r"^(?P<file>[^\s(][^(]*)\((?P<line>\d+)\): (?:catastrophic )?error[^:]*: (?P<message>.+)$", re.M)
#: a host compiler or preprocessor error: ``x.cu:12:10: fatal error: y.h: No such file or directory``
_GCC_ERROR = re.compile(r"^(?P<file>[^\s:][^:]*):(?P<line>\d+):(?:\d+:)? (?:fatal )?error: (?P<message>.+)$", re.M)
#: the PTX assembler's giving up: ``ptxas fatal   : Unresolved extern function '_Z3fooi'``
_PTXAS_FATAL = re.compile(r"^ptxas fatal\s*: (?P<message>.+)$", re.M)
#: the PTX assembler's: ``ptxas /tmp/x.ptx, line 28; error   : Unknown modifier '.such'``
_PTXAS_ERROR = re.compile(r"^ptxas (?P<file>\S+), line (?P<line>\d+); error\s*: (?P<message>.+)$", re.M)


def first_error(output: str) -> str:
    """nvcc's first error in ``output`` as ``file:line: message`` (the file by its name where it
    is TileLang's temporary copy; ``ptxas: PTX line N`` for the assembler's), or the first line
    that says error, or the output's last line. TileLang's message quotes the source first: only
    what follows its ``Compilation error:`` is read."""
    output = output.split("Compilation error:", 1)[-1]
    found = [m for m in (_NVCC_ERROR.search(output), _GCC_ERROR.search(output), _PTXAS_ERROR.search(output))
             if m is not None]
    if found:
        m = min(found, key=lambda m: m.start())
        file = m.group("file").strip()
        if m.re is _PTXAS_ERROR:
            return f"ptxas: PTX line {m.group('line')}: {m.group('message').strip()}"
        if Path(file).name == "tvm_kernels.cu":
            file = "(the wrapper)"
        return f"{file}:{m.group('line')}: {m.group('message').strip()}"
    fatal = _PTXAS_FATAL.search(output)
    if fatal:  # the assembler's: a device function of another unit (nvcc -rdc) unresolved
        return f"ptxas: {fatal.group('message').strip()}"
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    said = [line for line in lines if "error" in line.lower() and "warning" not in line.lower()]
    return (said or lines or ["no output"])[0][:300]


def hybrid_signatures(module) -> list:
    """The Signatures of ``module``'s hybrid kernels (a template's instances each)."""
    from .tilelang_support import Signature

    return [v for v in vars(module).values()
            if isinstance(v, Signature) and v.form == "hybrid" and not v.instances]


def build(sig, arch: str = "sm_90a", template=None) -> str | None:
    """Compile the hybrid kernel ``sig`` (a template kept whole: its instance ``template``) for
    ``arch``: None when it builds, else nvcc's first error."""
    import tilelang

    from .tilelang_support import prim_func

    try:
        func, configs = prim_func(sig, (1, 1, 1), (1, 1, 1), 0, template, "cuda")
        tilelang.compile(func, target={"kind": "cuda", "arch": arch}, pass_configs=configs or None)
    except Exception as exc:  # nvcc's output is in the message
        return first_error(str(exc))
    return None


#: the result of a kernel template kept whole whose program names no instance (library code):
#: its text compiled uninstantiated, no wrapper built; not a failure (``--verify-hybrid`` keeps it)
UNINSTANTIATED = "uninstantiated:"
#: what marks the end of a hybrid kernel's body copy in its module's CUDA text (migrate.emit.hybrid)
_ENTRY_COMMENT = "\n// the entry T.CUDASourceCodeKernel launches"
#: nvcc's options besides the module's: TileLang's standard, every hybrid kernel's own options
#: (the constexpr and lambda extensions), no warnings
_NVCC = ("-std=c++20", *HYBRID_NVCC_FLAGS, "-w")


def _include(sig) -> str | None:
    """The file a hybrid kernel's factory includes (relative to its module's folder)."""
    import inspect

    try:
        found = re.search(r"hybrid_source\(__file__, (['\"])(.*?)\1", inspect.getsource(sig.factory))
    except (OSError, TypeError):
        return None
    return found.group(2) if found else None


def _nvcc(args: list, source: str | None = None, timeout: float = 600) -> tuple[int, str]:
    import subprocess

    from .cuda_gpu import find_nvcc

    nvcc = find_nvcc()
    if nvcc is None:
        return 127, "nvcc is not on PATH"
    try:
        done = subprocess.run([nvcc[0], *args], input=source, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, f"nvcc reached its time limit ({timeout:.0f} s)"
    return done.returncode, done.stdout + done.stderr


_INSTANCES: dict = {}


def program_instances(sig, module_file: str, arch: str = "sm_90a") -> list[tuple[str, ...]]:
    """The template arguments (C++ text, as nvcc's demangled names spell them) of each instance of
    the kernel template ``sig`` (kept whole: no launch site the tool read names one) that its own
    program compiles: the file its module includes compiled to PTX by nvcc with the module's
    flags, the kernel's entries' names demangled (c++filt)."""
    import shutil
    import subprocess
    import tempfile

    include = _include(sig)
    if include is None or shutil.which("c++filt") is None:
        return []
    flags = [f for f in dict(sig.pass_configs).get("tl.device_compile_flags", ()) if f not in _NVCC]
    key = (str(Path(module_file).parent / include), tuple(flags), arch)
    if key not in _INSTANCES:
        with tempfile.TemporaryDirectory() as tmp:
            ptx = Path(tmp) / "unit.ptx"
            rc, _out = _nvcc([*_NVCC, f"-arch={arch}", "-ptx", "-x", "cu", key[0], "-o", str(ptx), *flags])
            mangled = re.findall(r"^\s*\.(?:visible\s+|weak\s+)*\.entry\s+(\w+)", ptx.read_text(), re.M) \
                if rc == 0 and ptx.exists() else []
        names = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True, text=True).stdout \
            .splitlines() if mangled else []
        _INSTANCES[key] = names
    out = []
    for name in _INSTANCES[key]:
        head = re.match(rf"^(?:void\s+)?(?:[\w:]+::)?{re.escape(sig.name)}<", name)
        if head is None:
            continue
        depth, args, current = 1, [], ""
        for ch in name[head.end():]:
            depth += {"<": 1, "(": 1, ">": -1, ")": -1}.get(ch, 0)
            if depth == 0:
                break
            if ch == "," and depth == 1:
                args.append(current.strip())
                current = ""
                continue
            current += ch
        args.append(current.strip())
        if tuple(args) not in out:
            out.append(tuple(args))
    return out


def _arguments(sig, args: tuple) -> tuple:
    """A demangled instance's arguments as ``sig``'s launch takes them: a parameter pack (the
    template's last parameter, where the instance has more) as one sequence, one it leaves out None."""
    params = len(sig.template)
    if len(args) > params:
        return (*args[:params - 1], tuple(args[params - 1:]))
    return (*args, *([None] * (params - len(args))))


def uninstantiated(sig, module_file: str, arch: str = "sm_90a") -> str | None:
    """nvcc compiles a kernel template kept whole without an instance: the file its module includes
    and the body copy (the entry left out, it names an instance): None when it compiles, else
    nvcc's first error."""
    import sys

    from .tilelang_support import hybrid_source

    module = sys.modules.get(sig.factory.__module__)
    cuda = getattr(module, f"_{sig.name.upper()}_CUDA", None)
    include = _include(sig)
    if cuda is None or include is None:
        return "its module holds no CUDA text for it"
    source = hybrid_source(module_file, include, cuda.split(_ENTRY_COMMENT)[0])
    flags = [f for f in dict(sig.pass_configs).get("tl.device_compile_flags", ()) if f not in _NVCC]
    rc, out = _nvcc([*_NVCC, f"-arch={arch}", "-c", "-x", "cu", "-", "-o", "/dev/null", *flags], source)
    return None if rc == 0 else first_error(out)


#: the instances of a template kept whole tried to prove its wrapper, until one builds (each takes
#: nvcc a while)
WHOLE_BUILDS = 3


def build_whole(sig, module_file: str, arch: str = "sm_90a") -> str | None:
    """A kernel template kept whole (no launch site the tool read names an instance) built for an
    instance its program compiles (:func:`program_instances`: the first of them that builds, of at
    most :data:`WHOLE_BUILDS`, else the first's error); where it compiles none, its
    text compiled uninstantiated (:data:`UNINSTANTIATED` with what was found)."""
    found = program_instances(sig, module_file, arch)
    first = None
    for args in found[:WHOLE_BUILDS]:
        error = build(sig, arch, _arguments(sig, args))
        if error is None:  # (an instance of another overload of its name may not build: the next one may)
            return None
        first = first or f"instance <{', '.join(args)}>: {error}"
    if found:
        return first
    error = uninstantiated(sig, module_file, arch)
    return error if error is not None else \
        f"{UNINSTANTIATED} its program compiles no instance; the template's text compiles (an instance builds at its launch)"


def build_module(path: str | Path, arch: str = "sm_90a", only=None) -> dict:
    """{kernel: None or its first error} for the hybrid kernels of the module at ``path`` (a
    kernel template kept whole: :func:`build_whole`; ``only``: those kernels, a template's
    instances by the template's name too)."""
    from .tilelang_side import load_module

    try:
        module = load_module(path)
    except Exception as exc:
        return {"(module)": f"the module does not import: {type(exc).__name__}: {exc}"[:300]}
    sigs = [sig for sig in hybrid_signatures(module)
            if only is None or sig.name in only or sig.name.split("__")[0] in only]
    return {sig.name: build_whole(sig, str(path), arch) if sig.template else build(sig, arch) for sig in sigs}


def main(argv: list[str]) -> int:
    arch, only = "sm_90a", None
    while argv[:1] in (["--arch"], ["--only"]):
        if argv[0] == "--arch":
            arch = argv[1]
        else:
            only = set(argv[1].split(","))
        argv = argv[2:]
    results = {path: build_module(path, arch, only) for path in argv}
    print("\n" + json.dumps(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
