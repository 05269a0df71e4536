"""Building an original CUDA program into a shared library with a generated launcher.

Both executors build the same thing: the original source (for the CPU rewritten by
:mod:`.source`), ``main`` renamed to ``cuda2tile_host_main``, and appended to it a launcher with
``extern "C"`` entry points (:func:`launcher_text`):

``c2t_launch_<i>``      launch kernel instance i (``name<template args>``) on packed arguments
``c2t_set_symbol_<j>``  fill ``__constant__``/``__device__`` symbol j from bytes
``c2t_get_symbol_<j>``  read it back
``c2t_run_main``        run the program's own main (when it has one)

Libraries are cached by content hash (the source and every local header it includes, the
runtime headers, the launcher, compiler identity and flags) under ``$CUDA2TILE_CACHE``
(default ``~/.cache/cuda2tile``); a build happens in a temporary folder renamed into place, so
concurrent builds of the same key are safe, and under a lock on the key (:func:`key_lock`), so that
a key wanted by several threads or processes at once (``migrate check --jobs N``, or two commands
sharing the cache) is built once: the others wait and take it from the cache.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path

from .source import find_main, find_quoted_includes, rewrite_for_cpu, RewriteError

__all__ = ["Library", "BuildError", "cache_root", "launcher_text", "find_cxx", "HEADER_DIR", "publish",
           "STUB_HEADERS", "collect_sources", "build_library", "key_lock"]

HEADER_DIR = Path(__file__).resolve().parent / "cpu"

#: CUDA headers a program may include; for the CPU build each becomes a stub that includes
#: cuda_cpu.h (already forced in with -include).
STUB_HEADERS = (
    "cuda_runtime.h", "cuda_runtime_api.h", "cuda.h", "cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h",
    "cuda_bf16.hpp", "device_launch_parameters.h", "device_functions.h", "device_atomic_functions.h",
    "sm_20_atomic_functions.h", "sm_30_intrinsics.h", "sm_32_intrinsics.h", "sm_60_atomic_functions.h",
    "math_constants.h", "math_functions.h", "vector_types.h", "vector_functions.h", "driver_types.h",
    "cooperative_groups.h", "cooperative_groups/reduce.h", "cooperative_groups/scan.h",
    "cooperative_groups/memcpy_async.h", "cuda_device_runtime_api.h", "host_defines.h",
    "crt/host_defines.h", "builtin_types.h", "channel_descriptor.h", "texture_types.h",
    "surface_types.h", "cuda_profiler_api.h", "nvtx3/nvToolsExt.h", "nvToolsExt.h", "cuda/std/cstdint", "mma.h",
)

#: Library headers whose CPU stub brings an implementation of its own beside cuda_cpu.h.
LIBRARY_STUBS = {
    "cub/cub.cuh": "c2t_cub.h", "cub/block/block_reduce.cuh": "c2t_cub.h", "cub/util_type.cuh": "c2t_cub.h",
    "cuda/functional": "c2t_cub.h", "cuComplex.h": "c2t_complex.h",
}

_lock = threading.Lock()


class BuildError(RuntimeError):
    """A build failed; ``log`` holds the compiler's output, ``command`` the command line."""

    def __init__(self, message: str, log: str = "", command: list | None = None):
        super().__init__(message)
        self.log = log
        self.command = command or []


@dataclass
class Library:
    """A built library and the names of its entry points."""

    path: str
    device: str                                   # "cpu" | "gpu"
    kernels: dict = field(default_factory=dict)   # instance text -> launch entry name
    symbols: dict = field(default_factory=dict)   # symbol name -> (set entry, get entry)
    main_entry: str | None = None
    cached: bool = False                          # True when it came from the cache
    key: str = ""
    excluded: tuple = ()  # (function, line) of the main file left out because they do not compile

    def launch_entry(self, instance: str) -> str:
        try:
            return self.kernels[_norm(instance)]
        except KeyError:
            raise KeyError(f"kernel instance {instance!r} is not in this library "
                           f"(has {', '.join(self.kernels) or 'none'})") from None


def _norm(instance: str) -> str:
    return re.sub(r"\s+", "", instance)


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("CUDA2TILE_CACHE")
    if env:
        return Path(env)
    return Path(os.path.expanduser("~")) / ".cache" / "cuda2tile"


_cxx_cache: dict = {}


def find_cxx() -> tuple[str, str] | None:
    """(path, version line) of the host C++ compiler: $CXX, g++, clang++ or c++."""
    with _lock:
        if "cxx" in _cxx_cache:
            return _cxx_cache["cxx"]
        found = None
        candidates = [os.environ.get("CXX")] if os.environ.get("CXX") else []
        candidates += ["g++", "clang++", "c++"]
        for c in candidates:
            path = shutil.which(c) if c else None
            if not path:
                continue
            try:
                v = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.SubprocessError):
                continue
            if v.returncode == 0:
                found = (path, v.stdout.splitlines()[0] if v.stdout else c)
                break
        _cxx_cache["cxx"] = found
        return found


def collect_sources(cu_path: Path, include_dirs=(), root: Path | None = None) -> dict[str, str]:
    """The source and the local headers it includes with ``#include "..."`` (recursively), as
    {path relative to ``root`` (default: the source's folder): text}; headers outside that folder
    are not mirrored but their text still enters the cache key under their absolute path."""
    root = (Path(root) if root is not None else cu_path.parent).resolve()
    out: dict[str, str] = {}
    todo = [cu_path.resolve()]
    seen = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        try:
            rel = p.relative_to(root).as_posix()
        except ValueError:
            rel = str(p)
        out[rel] = text
        for inc in find_quoted_includes(text):
            for base in [p.parent, *[Path(d) for d in include_dirs]]:
                q = (base / inc).resolve()
                if q.is_file():
                    todo.append(q)
                    break
    return out


def launcher_text(kernels, symbols, main_params: int | None, spellings=None) -> tuple[str, dict, dict, str | None]:
    """C++ text of the launcher for kernel instances and symbol names. ``spellings``: symbol ->
    the C++ that names it, for symbols whose names are not C++ (a variable template's
    specialisation ``mask<double>``, the migrated kernels' ``mask_double``); each is also
    registered with the launch recorder under its name (c2t_trace.h), which reads its bytes at
    every recorded launch as it reads the ``__constant__`` symbols of the source.

    Returns (text, {instance: entry}, {symbol: (set entry, get entry)}, main entry or None).
    """
    spellings = dict(spellings or {})
    lines = ["", "// ---- cuda2tile generated launcher", "#line 1 \"cuda2tile-launcher\""]
    kmap, smap = {}, {}
    for i, inst in enumerate(kernels):
        entry = f"c2t_launch_{i}"
        kmap[_norm(inst)] = entry
        lit = inst.replace("\\", "\\\\").replace('"', '\\"')
        lines.append(
            f"C2T_EXPORT int {entry}(const unsigned* grid, const unsigned* block, unsigned long long shmem, "
            f"void** slots, const int* kinds, const int* dtypes, int nargs) {{\n"
            f"    return ::c2t::launch_entry(&{inst}, \"{lit}\", grid, block, shmem, slots, kinds, dtypes, nargs);\n"
            f"}}")
    for j, sym in enumerate(symbols):
        se, ge = f"c2t_set_symbol_{j}", f"c2t_get_symbol_{j}"
        smap[sym] = (se, ge)
        expr = spellings.get(sym, sym)
        lines.append(
            f"C2T_EXPORT int {se}(const void* data, unsigned long long bytes, int dtype) {{\n"
            f"    return ::c2t::set_symbol({expr}, \"{sym}\", data, bytes, dtype);\n}}\n"
            f"C2T_EXPORT int {ge}(void* data, unsigned long long bytes) {{\n"
            f"    return ::c2t::get_symbol({expr}, \"{sym}\", data, bytes);\n}}")
    for j, (sym, expr) in enumerate(sorted(spellings.items())):
        lines.append(f"static const int c2t_spelled_symbol_{j} = ::c2t::trace::add_symbol(\"{sym}\", sizeof({expr}), "
                     f"[](void* c2t_d_) {{ ::c2t::trace::read_symbol(c2t_d_, {expr}); }});")
    main_entry = None
    if main_params is not None:
        main_entry = "c2t_run_main"
        lines.append("C2T_EXPORT int c2t_run_main(int argc, char** argv) {\n"
                     "    return ::c2t::call_main(&cuda2tile_host_main, argc, argv);\n}")
    return "\n".join(lines) + "\n", kmap, smap, main_entry


def _writable(root: Path) -> Path:
    """``root`` if it can be created and written, else a per-user folder under the temp dir."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        # one probe per thread: threads of one process building at once (the CPU executor's
        # concurrent builds) each removed the other's probe and fell back to the temp folder
        probe = root / f".probe-{os.getpid()}-{threading.get_ident()}"
        probe.write_text("")
        probe.unlink(missing_ok=True)
        return root
    except OSError:
        alt = Path(tempfile.gettempdir()) / f"cuda2tile-cache-{os.getuid() if hasattr(os, 'getuid') else 'user'}"
        alt.mkdir(parents=True, exist_ok=True)
        return alt


def _c_string(path: str) -> str:
    """``path`` inside a C string literal (``#line``, ``#include``): quotes and backslashes escaped,
    control characters (a newline in a file name) as octal escapes."""
    path = path.replace("\\", "\\\\").replace('"', '\\"')
    return "".join(f"\\{ord(c):03o}" if ord(c) < 32 or ord(c) == 127 else c for c in path)


def build_library(*, device: str, cu_path, kernels, symbols, include_dirs=(), defines=(),
                  compiler: list[str], compiler_id: str, flags: list[str], cache_dir=None,
                  timeout: float = 300.0, rewrite: bool = True, suffix: str = ".cpp",
                  extra_key: str = "", stub_headers: bool = True,
                  units=(), spellings=None) -> Library:
    """Build (or fetch from the cache) the library for ``cu_path`` with launchers for
    ``kernels`` (instance texts) and ``symbols`` (names). ``compiler`` is the command prefix,
    ``flags`` come after it; the wrapper source and ``-o`` are added here. ``units`` are the
    program's other translation units (a program of several files, as its build compiles them):
    each is compiled on its own and linked into the library; the launcher joins ``cu_path``."""
    cu_path = Path(cu_path).resolve()
    if not cu_path.is_file():
        raise BuildError(f"no such source file: {cu_path}")
    units = [u for u in dict.fromkeys(Path(x).resolve() for x in units) if u != cu_path]
    for u in units:
        if not u.is_file():
            raise BuildError(f"no such source file: {u}")
    if units and device != "cpu":
        raise BuildError("a program of several translation units is built for the CPU executor only")
    root = Path(os.path.commonpath([cu_path.parent, *(u.parent for u in units)])) if units else cu_path.parent
    include_dirs = [str(Path(d).resolve()) for d in include_dirs]
    sources = collect_sources(cu_path, include_dirs, root=root)
    for u in units:
        for rel, text in collect_sources(u, include_dirs, root=root).items():
            sources.setdefault(rel, text)
    main_rel = cu_path.relative_to(root).as_posix()
    unit_rels = [u.relative_to(root).as_posix() for u in units]
    main_params = find_main(sources[main_rel])
    ltext, kmap, smap, main_entry = launcher_text(list(kernels), list(symbols), main_params, spellings)

    prepared: dict[str, str] = {}
    for rel, text in sources.items():
        if rewrite:
            try:
                body = rewrite_for_cpu(text)
            except RewriteError as e:
                raise BuildError(f"{rel}: {e}") from None
        else:
            body = text
        prepared[rel] = body
    headers = {}
    if device == "cpu" or stub_headers:
        for h in sorted(HEADER_DIR.glob("*.h")):
            headers[h.name] = h.read_text()

    h = hashlib.sha256()
    for part in (device, compiler_id, " ".join(compiler), " ".join(flags), " ".join(include_dirs),
                 " ".join(defines), extra_key, ltext, str(cu_path), *map(str, units)):
        h.update(part.encode())
        h.update(b"\0")
    for name in sorted(prepared):
        h.update(name.encode() + b"\0" + prepared[name].encode() + b"\0")
    for name in sorted(headers):
        h.update(name.encode() + b"\0" + headers[name].encode() + b"\0")
    key = h.hexdigest()[:32]

    root = _writable(cache_root(cache_dir)) / device
    final = root / key[:2] / key
    lib_path = final / "lib.so"
    lib = Library(path=str(lib_path), device=device, kernels=kmap, symbols=smap, main_entry=main_entry, key=key)
    if lib_path.is_file():
        lib.cached = True
        lib.excluded = _read_excluded(final / EXCLUDED_FILE)
        return lib
    with key_lock(final):
        if lib_path.is_file():  # built by another thread or process while this one waited
            lib.cached = True
            lib.excluded = _read_excluded(final / EXCLUDED_FILE)
            return lib
        return _build(lib, root, final, lib_path, cu_path, units, unit_rels, main_rel, prepared, ltext, kernels,
                      compiler, flags, include_dirs, defines, device, suffix, timeout)


def _build(lib: Library, root: Path, final: Path, lib_path: Path, cu_path: Path, units, unit_rels, main_rel: str,
           prepared: dict, ltext: str, kernels, compiler, flags, include_dirs, defines, device: str, suffix: str,
           timeout: float) -> Library:
    """The build of :func:`build_library` proper, in a temporary folder published as ``final``."""
    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="build-", dir=root))
    try:
        src_dir = tmp / "src"
        wrapper = src_dir / Path(main_rel).with_suffix(suffix)
        if wrapper.name == cu_path.name:
            wrapper = wrapper.with_suffix(".c2t" + suffix)
        for rel, body in prepared.items():
            if rel.startswith("/"):
                continue          # outside the source tree: found through -iquote / -I
            dst = wrapper if rel == main_rel else src_dir / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            abs_orig = (root / rel).resolve()
            text = f"#line 1 \"{_c_string(str(abs_orig))}\"\n{body}"
            if rel == main_rel:
                text += ltext
            dst.write_text(text)
        stub_dir = tmp / "include"
        if device == "cpu":
            for name in STUB_HEADERS + tuple(LIBRARY_STUBS):
                p = stub_dir / name
                p.parent.mkdir(parents=True, exist_ok=True)
                own = f"#include \"{_c_string(str(HEADER_DIR / LIBRARY_STUBS[name]))}\"\n" if name in LIBRARY_STUBS else ""
                p.write_text(f"// cuda2tile CPU executor stub for <{name}>\n#pragma once\n"
                             f"#include \"{_c_string(str(HEADER_DIR / 'cuda_cpu.h'))}\"\n" + own)
        out = tmp / "lib.so"
        cmd = list(compiler) + list(flags)
        if device == "cpu":
            cmd += ["-I", str(stub_dir)]
        cmd += ["-iquote", str(cu_path.parent)] if device == "cpu" else ["-I", str(cu_path.parent)]
        for d in dict.fromkeys(str(u.parent) for u in units if u.parent != cu_path.parent):
            cmd += ["-iquote", d]
        for d in include_dirs:
            cmd += ["-I", d]
        for d in defines:
            cmd.append(f"-D{d}")
        if not units:
            lib.excluded = _compile_leaving_out(cmd, wrapper, out, cu_path, tmp, timeout, prepared, main_rel,
                                                (root / main_rel).resolve(), ltext, kernels)
            if lib.excluded:
                (tmp / EXCLUDED_FILE).write_text("".join(f"{n}\t{ln}\n" for n, ln in lib.excluded))
        else:
            objects = []
            for i, rel in enumerate([main_rel, *unit_rels]):
                src = wrapper if rel == main_rel else src_dir / rel
                unit_cmd = [c for c in cmd if c != "-shared"]
                if Path(rel).suffix == ".c":  # a C unit: compiled as C, without the CUDA header
                    unit_cmd = _c_flags(unit_cmd)
                elif src.suffix not in (".cpp", ".cc", ".cxx", ".C"):
                    unit_cmd += ["-x", "c++"]
                objects.append(str(tmp / f"unit{i}.o"))
                _compile(unit_cmd + ["-c", str(src), "-o", objects[-1]], rel, tmp, timeout)
            _compile(list(compiler) + ["-shared", "-Wl,-z,defs", *objects, "-o", str(out)],
                     f"{cu_path.name} (linking {len(objects)} units)", tmp, timeout)
        if not out.is_file():
            raise BuildError(f"compiling {cu_path.name} made no library", command=cmd)
        final.parent.mkdir(parents=True, exist_ok=True)
        publish(tmp, final, lib_path)
        return lib
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


EXCLUDED_FILE = "excluded.txt"


def _read_excluded(path: Path) -> tuple:
    try:
        rows = [line.split("\t") for line in path.read_text().splitlines() if "\t" in line]
    except OSError:
        return ()
    return tuple((name, int(line)) for name, line in rows if line.isdigit())


def _compile_leaving_out(cmd, wrapper: Path, out: Path, cu_path: Path, tmp: Path, timeout: float, prepared: dict,
                         main_rel: str, abs_main: Path, ltext: str, kernels) -> tuple:
    """Compile the one-file library; when function bodies of the main file do not compile
    (host code, a kernel not launched here), build again with them left out (:mod:`.exclude`).
    Returns the functions left out; raises the first :class:`BuildError` when that does not help."""
    from .exclude import error_lines, stub_failing

    launched = {re.split(r"[<(]", str(k), 1)[0].split("::")[-1].strip() for k in kernels}
    body, excluded, first = prepared[main_rel], [], None
    for _attempt in range(4):
        try:
            _compile(cmd + [str(wrapper), "-o", str(out)], cu_path.name, tmp, timeout)
            return tuple(excluded)
        except BuildError as e:
            first = first or e
            stubbed = stub_failing(body, error_lines(e.log, str(abs_main)), launched) if e.log else None
            if stubbed is None:
                raise first from None
            body, more = stubbed
            excluded += more
            wrapper.write_text(f"#line 1 \"{_c_string(str(abs_main))}\"\n{body}" + ltext)
    raise first


@contextlib.contextmanager
def key_lock(final: Path):
    """Hold the lock of the cache entry ``final`` (an exclusive ``flock`` on ``final``'s name with
    ``.lock`` added, beside it) for the block: a build of the same entry by another thread or
    process waits until this one is published (or has failed), then finds it in the cache. Where
    the lock cannot be taken (no ``fcntl``, a file system without locks) the block runs unlocked:
    concurrent builds stay safe (:func:`publish`), only duplicated."""
    try:
        import fcntl
        final.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(final.parent / (final.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o644)
    except (ImportError, OSError):
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def publish(tmp: Path, final: Path, product: Path) -> None:
    """Move a finished build folder into its cache place ``final``; when another build got there
    first (``product`` is there) its result stays, and a stale folder is replaced."""
    try:
        os.rename(tmp, final)
    except OSError:
        if not product.is_file():
            shutil.rmtree(final, ignore_errors=True)
            os.rename(tmp, final)


def _compile(cmd: list[str], what: str, tmp: Path, timeout: float) -> None:
    """Run one compiler command in ``tmp`` (in a process group of its own, under this run's
    memory limit); its output is kept in ``tmp/build.log``."""
    from . import limits
    try:
        rc, log, timed_out = limits.run(cmd, timeout=timeout, max_memory=limits.max_memory(), cwd=str(tmp))
    except OSError as e:
        raise BuildError(f"cannot run the compiler: {e}", command=cmd) from None
    if timed_out:
        raise BuildError(f"compiling {what} took more than {timeout:.0f}s", command=cmd)
    with open(tmp / "build.log", "a") as f:
        f.write(" ".join(cmd) + "\n\n" + log + "\n")
    if rc != 0:
        if limits.out_of_memory(rc, log):
            raise BuildError(f"compiling {what} ran out of memory (limit "
                             f"{limits.show_memory(limits.max_memory())}, --max-memory)", log=log, command=cmd)
        raise BuildError(f"compiling {what} failed:\n{_trim_log(log)}", log=log, command=cmd)


def _c_flags(cmd: list[str]) -> list[str]:
    """A C++ unit's command made fit for a C unit: ``-x c``, no C++ standard, no forced CUDA header."""
    out, skip = [], False
    for c in cmd:
        if skip:
            skip = False
            continue
        if c == "-include":
            skip = True
            continue
        if not c.startswith("-std=c++"):
            out.append(c)
    return out[:1] + ["-x", "c"] + out[1:]


def _trim_log(log: str, limit: int = 6000) -> str:
    if len(log) <= limit:
        return log
    return log[:limit // 2] + "\n...\n" + log[-limit // 2:]
