"""Build the hybrid kernels of converted modules with nvcc, no GPU needed: each kernel kept as its
CUDA (form ``hybrid``, ``migrate.emit.hybrid``) is lowered by TileLang and compiled for a GPU
architecture, which proves that its wrapper (the source file, the copied body, the entry) builds.

``python -m migrate.runtime.hybrid_build [--arch sm_90a] MODULE.py...`` prints, as its last line
(TileLang logs to standard output before it), one JSON object: module -> {kernel: null (built) or
the first error nvcc gave, ``file:line: message``}. Used by
``migrate convert --verify-hybrid`` and ``bench/hybrid_build.py``. Imports no libclang.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

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


def build(sig, arch: str = "sm_90a") -> str | None:
    """Compile the hybrid kernel ``sig`` for ``arch``: None when it builds, else nvcc's first error."""
    import tilelang

    from .tilelang_support import prim_func

    try:
        func, configs = prim_func(sig, (1, 1, 1), (1, 1, 1), 0, None, "cuda")
        tilelang.compile(func, target={"kind": "cuda", "arch": arch}, pass_configs=configs or None)
    except Exception as exc:  # nvcc's output is in the message
        return first_error(str(exc))
    return None


def build_module(path: str | Path, arch: str = "sm_90a") -> dict:
    """{kernel: None or its first error} for the hybrid kernels of the module at ``path``."""
    from .tilelang_side import load_module

    try:
        module = load_module(path)
    except Exception as exc:
        return {"(module)": f"the module does not import: {type(exc).__name__}: {exc}"[:300]}
    return {sig.name: build(sig, arch) for sig in hybrid_signatures(module)}


def main(argv: list[str]) -> int:
    arch = "sm_90a"
    if argv[:1] == ["--arch"]:
        arch, argv = argv[1], argv[2:]
    results = {path: build_module(path, arch) for path in argv}
    print("\n" + json.dumps(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
