"""Launches recorded from a program's own run, for checks that need no spec.

The CPU executor records the first launches of each kernel while the program's ``main()`` runs
(``runtime/cpu/c2t_trace.h``, enabled by ``C2T_TRACE_DIR``): the launch configuration, every
argument, and the bytes of each allocation the arguments reach, before the launch and after it.
:func:`record` runs a program that way; :func:`read` loads what it wrote. Nothing here imports
libclang.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Arg", "Launch", "Recording", "RUN_FILE", "TIMINGS_FILE", "load", "pack", "read", "read_timings",
           "record"]


@dataclass(frozen=True)
class Arg:
    """One argument of a recorded launch: a scalar (``type`` a numpy code such as ``"i4"``,
    ``value`` its value; ``type`` empty for a struct passed by value, ``raw`` its bytes) or a
    pointer (``alloc`` the recorded allocation it points into and ``offset`` in bytes; ``alloc``
    None for a null pointer or host memory the runtime did not allocate). A struct's ``pointers``
    are the words in it that point into recorded allocations: ((byte in the struct, allocation,
    offset in it), ...)."""

    kind: str
    type: str = ""
    value: object = None
    raw: bytes = b""
    alloc: int | None = None
    offset: int = 0
    null: bool = False
    elem: str = ""  # a pointer's element type as a numpy code ("f4"), "" when it is no scalar type
    pointers: tuple = ()


@dataclass(frozen=True)
class Launch:
    seq: int  # order among the recorded launches of the run
    kernel: str  # the kernel as written at the launch (``k<T, 4>``)
    number: int  # how many launches of this kernel came before it
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    status: int  # the executor's launch status (0: ran)
    args: tuple[Arg, ...]
    before: dict = field(default_factory=dict)  # allocation id -> its bytes before the launch
    after: dict = field(default_factory=dict)  # allocation id -> its bytes after it
    skipped: str = ""  # why the launch was not recorded ("budget": its bytes, past the trace budget)
    instance: str = ""  # the template instance the launch named, as the compiler spells it (``k<float, 64>``)
    symbols: dict = field(default_factory=dict)  # __constant__ symbol -> its bytes when the launch started
    # __device__/__managed__ global -> its bytes before and after the launch
    globals_before: dict = field(default_factory=dict)
    globals_after: dict = field(default_factory=dict)
    #: pointers inside a struct an argument points to (a struct of buffers): (allocation, byte
    #: offset) -> (the allocation it points into, offset there)
    links: dict = field(default_factory=dict)

    def __getstate__(self) -> dict:
        """For pickling (a launch sent to another process): the bytes of memoryviews, which
        cannot be pickled, as bytes."""
        state = dict(self.__dict__)
        for key in ("before", "after", "symbols", "globals_before", "globals_after"):
            state[key] = {k: bytes(v) for k, v in state[key].items()}
        return state

    @property
    def template_args(self) -> tuple[str, ...] | None:
        """The template arguments of :attr:`instance` (``("float", "64")``), or None without one."""
        return _template_args(self.instance)

    @property
    def written_args(self) -> tuple[str, ...] | None:
        """The template arguments the launch wrote (``k<128>``: ``("128",)``; the rest, if any,
        were deduced from its arguments), or None where it wrote none."""
        return _template_args(self.kernel)

    @property
    def name(self) -> str:
        """The kernel's name without template arguments or namespace."""
        return self.kernel.split("<", 1)[0].strip().rsplit("::", 1)[-1]


@dataclass(frozen=True)
class Recording:
    status: int  # the program's exit status (negative: killed by a signal; None: timed out)
    stdout: str
    stderr: str
    launches: tuple[Launch, ...]


def _template_args(text: str) -> tuple[str, ...] | None:
    """The arguments of a template-id ``k<float, (k<2>)>``: ``("float", "(k<2>)")``; None for a
    plain name."""
    if "<" not in text or not text.endswith(">"):
        return None
    inner, parts, depth, cur = text[text.index("<") + 1:-1], [], 0, ""
    for ch in inner:
        depth += ch in "<([" and 1 or 0
        depth -= ch in ">)]" and 1 or 0
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return tuple(parts + [cur.strip()]) if inner.strip() else ()


def _arg(d: dict) -> Arg:
    if d["kind"] == "pointer":
        return Arg("pointer", alloc=d.get("alloc"), offset=int(d.get("offset", 0)), null=bool(d.get("null")),
                   elem=d.get("elem", ""))
    raw = bytes.fromhex(d["hex"])
    code = d.get("type", "")
    value = np.frombuffer(raw, dtype=np.dtype(code).newbyteorder("<")).item() if code else None
    pointers = tuple((int(p["at"]), int(p["alloc"]), int(p["offset"])) for p in d.get("pointers", ()))
    return Arg("scalar", code, value, raw, pointers=pointers)


def _launch_file(seq: int) -> str:
    return f"launch-{seq:05d}.zlib"


def pack(trace_dir: str | os.PathLike, level: int = 1) -> int:
    """Split a run's ``data.bin`` into one zlib-compressed file per launch (``launch-NNNNN.zlib``,
    its before and after bytes and its writable globals', an allocation the launch left
    unchanged once), so that traces
    travel and a launch's bytes can be read or removed alone; the manifest's offsets become
    offsets in the launch's own file. Returns the bytes written."""
    import zlib

    trace_dir = Path(trace_dir)
    manifest, data_path = trace_dir / "manifest.jsonl", trace_dir / "data.bin"
    if not manifest.is_file() or not data_path.is_file():
        return 0
    lines, written = [], 0
    with open(data_path, "rb") as data:
        for line in manifest.read_text().splitlines():
            try:
                d = json.loads(line)
            except json.JSONDecodeError:  # a run killed while writing its last line
                break
            if not d.get("skipped"):
                comp, placed, pos = zlib.compressobj(level), {}, 0
                blob = []
                for which in ("before", "after"):
                    for a in d[which] + d.get("globals", []):  # the allocations, the writable globals
                        if a[which] not in placed:
                            data.seek(a[which])
                            chunk = data.read(a["size"])
                            if len(chunk) != a["size"]:
                                break
                            blob.append(comp.compress(chunk))
                            placed[a[which]] = pos
                            pos += a["size"]
                        a[which] = placed[a[which]]
                blob.append(comp.flush())
                size = sum(map(len, blob))
                (trace_dir / _launch_file(d["seq"])).write_bytes(b"".join(blob))
                d["file"], written = _launch_file(d["seq"]), written + size
            lines.append(json.dumps(d))
    tmp = manifest.with_suffix(".tmp")
    tmp.write_text("".join(x + "\n" for x in lines))
    tmp.replace(manifest)
    data_path.unlink()
    return written


def _mapped(path: Path):
    """The bytes of ``path`` as a read-only memoryview over a memory map (b"" when empty): a
    recording of gigabytes is read where it lies, not copied."""
    import mmap

    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return memoryview(b"")
        return memoryview(mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ))


def read(trace_dir: str | os.PathLike) -> list[Launch]:
    """The launches recorded in ``trace_dir`` (a run's ``manifest.jsonl`` with ``data.bin``, or
    with one compressed file per launch after :func:`pack`), in order; an empty list when
    nothing was recorded. A launch's bytes are read-only memoryviews (of ``data.bin`` mapped
    into memory, or of its decompressed file). A launch whose bytes are gone is listed as
    skipped."""
    import zlib

    trace_dir = Path(trace_dir)
    manifest = trace_dir / "manifest.jsonl"
    if not manifest.is_file():
        return []
    data = _mapped(trace_dir / "data.bin") if (trace_dir / "data.bin").is_file() else memoryview(b"")
    out = []
    for line in manifest.read_text().splitlines():
        try:
            d = json.loads(line)
        except json.JSONDecodeError:  # a run killed while writing its last line
            break
        if d.get("skipped") == "fast-forward":  # a geometry line (c2t_trace.h): no launch that ran
            continue
        if d.get("file"):
            path = trace_dir / d["file"]
            if not path.is_file():
                out.append(Launch(d["seq"], d["kernel"], d["number"], tuple(d["grid"]), tuple(d["block"]),
                                  d["shared_bytes"], d["status"], tuple(_arg(a) for a in d["args"]),
                                  skipped=f"its bytes ({d['file']}) are not in {trace_dir}",
                                  instance=d.get("instance", "")))
                continue
            data = memoryview(zlib.decompress(path.read_bytes()))
        if d.get("skipped"):
            out.append(Launch(d["seq"], d["kernel"], d["number"], (0, 0, 0), (0, 0, 0), 0, -1, (),
                              skipped=f"{d['skipped']}: {d.get('bytes', 0)} bytes", instance=d.get("instance", "")))
            continue
        blobs = {}
        for which in ("before", "after"):
            blobs[which] = {a["id"]: data[a[which]:a[which] + a["size"]] for a in d[which]}
            blobs["globals_" + which] = {g["name"]: data[g[which]:g[which] + g["size"]] for g in d.get("globals", ())}
        if any(e[which] + e["size"] > len(data) for which in ("before", "after")
               for e in d[which] + d.get("globals", [])):
            break  # the data of a launch the run did not finish writing
        out.append(Launch(d["seq"], d["kernel"], d["number"], tuple(d["grid"]), tuple(d["block"]),
                          d["shared_bytes"], d["status"], tuple(_arg(a) for a in d["args"]),
                          blobs["before"], blobs["after"], instance=d.get("instance", ""),
                          symbols={x["name"]: bytes.fromhex(x["hex"]) for x in d.get("symbols", ())},
                          globals_before=blobs["globals_before"], globals_after=blobs["globals_after"],
                          links={(a, at): (b, bt) for a, at, b, bt in d.get("links", ())}))
    return out


#: the most bytes a recording writes (before and after bytes of every recorded launch)
BUDGET = 512 << 20


def record(lib, argv=(), trace_dir: str | os.PathLike = "traces", limit: int = 2, timeout: float = 120.0,
           cwd: str | os.PathLike | None = None, budget: int = BUDGET, schedule: str = "forward",
           packed: bool = True, fast_forward: bool = False) -> Recording:
    """Run the program's own ``main`` from ``lib`` (a CPU executor build; or a command, the
    executable of a program built to record on the GPU, :mod:`.gpu_record`) with ``argv`` in
    ``cwd``, recording the first ``limit`` launches of each kernel into ``trace_dir``, at most
    ``budget`` bytes of them (a launch past it is listed as skipped, not recorded). A run that
    exceeds ``timeout`` is stopped; the launches recorded by then are kept. ``packed``: the
    bytes are split into one compressed file per launch (:func:`pack`, to travel); else they
    stay in ``data.bin``, read in place (a recording replayed where it was made).
    ``fast_forward`` (CPU executor builds): a kernel instance's launches after its ``limit``
    recorded ones do not run, so that a program repeating one kernel for timing reaches its
    other kernels in time; the launches recorded after that start from the state the skipped ones
    leave, not the real program's (each is still a real run of the original, replayed exactly)."""
    from .cuda_cpu import run_program

    run = _run_command if isinstance(lib, (list, tuple)) else run_program

    trace_dir = Path(trace_dir)
    trace_dir.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "C2T_TRACE_DIR": str(trace_dir.resolve()), "C2T_TRACE_LIMIT": str(int(limit)),
           "C2T_TRACE_BUDGET": str(int(budget)), "C2T_TRACE_SKIP": "1" if fast_forward else "0"}
    for old in [*trace_dir.glob("launch-*.zlib"), trace_dir / "data.bin", trace_dir / TIMINGS_FILE]:  # an earlier recording's
        old.unlink(missing_ok=True)
    try:
        status, out, err = run(lib, argv, timeout=timeout, env=env, cwd=cwd, schedule=schedule)
    except TimeoutError as exc:
        status, out, err = None, "", str(exc)
    if packed:
        pack(trace_dir)
    (trace_dir / RUN_FILE).write_text(json.dumps({"args": list(argv), "status": status, "fast_forward": fast_forward,
                                                  "stdout": out[-4000:], "stderr": err[-4000:]}, indent=1) + "\n")
    return Recording(status, out, err, tuple(read(trace_dir)))


def _run_command(cmd, argv=(), timeout: float = 120.0, env=None, cwd=None, schedule: str = "forward"):
    """(exit status, stdout, stderr) of an executable run with ``argv``; TimeoutError past ``timeout``."""
    from . import limits

    status, out, err = limits.capture([*cmd, *argv], timeout=timeout, env=env, cwd=cwd)
    if status is None:
        raise TimeoutError(f"the program ran longer than {timeout:g} s")
    return status, out, err


#: how the recording run ended, beside its manifest
RUN_FILE = "run.json"
#: the original's timings of the recorded launches (a GPU recording with C2T_TIME_ROUNDS set,
#: ``cpu/c2t_gpu_trace.h``), beside its manifest: one JSON line per launch, by ``seq``
TIMINGS_FILE = "timings.jsonl"


def read_timings(trace_dir: str | os.PathLike) -> dict:
    """seq -> the original's timing of that recorded launch (``ms``: the timed rounds in
    milliseconds; ``skipped``: why it was not timed), from ``timings.jsonl``; {} without one."""
    path = Path(trace_dir) / TIMINGS_FILE
    out = {}
    if not path.is_file():
        return out
    for line in path.read_text().splitlines():
        try:
            d = json.loads(line)
        except json.JSONDecodeError:  # a run killed while writing its last line
            break
        out[int(d["seq"])] = d
    return out


def load(trace_dir: str | os.PathLike) -> tuple[list[str], Recording] | None:
    """A recording made earlier (``record`` wrote it into ``trace_dir``), with the arguments it
    ran with, or None when ``trace_dir`` holds none: for checks that replay without a rerun."""
    trace_dir = Path(trace_dir)
    try:
        run = json.loads((trace_dir / RUN_FILE).read_text())
    except (OSError, json.JSONDecodeError):
        return None
    if not (trace_dir / "manifest.jsonl").is_file():
        return None
    return list(run.get("args", [])), Recording(run.get("status"), run.get("stdout", ""), run.get("stderr", ""),
                                                tuple(read(trace_dir)))
