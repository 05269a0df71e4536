"""``migrate bench``: time original and migrated kernels on one GPU, in one process.

For each kernel of a converted folder with a spec, on the same seeded inputs:

- the original is built from its source by the GPU executor (nvcc, :mod:`.cuda_gpu`) and its
  launcher is loaded into this process with launches made asynchronous (``c2t_set_async``);
- the migrated kernel is compiled by TileLang for ``cuda``;
- each is warmed up, then timed with CUDA events over ``reps`` back-to-back launches, ``rounds``
  times; the median of the per-launch times is reported. With ``tune``, TileLang's autotuner
  searches a tile-form kernel's space (``Signature.tune``: tile sizes, threads, pipeline depth;
  :mod:`.tuning`), the fastest configuration is checked against the original and timed the same
  way, and reported with its configuration when it beats the default. Inputs rotate among enough copies that
  the rotation exceeds the L2 cache (so neither side reads a warm cache the other did not);
- achieved bandwidth is the bytes the spec's buffers must move (inputs read once, outputs written
  once, in-out both) over the time, as a share of the device's peak; with ``flops`` in the spec,
  TFLOP/s and the share of the matrix ceiling.

Sizes come from the folder's specs, or from ``--specs DIR`` (the same tree of TOML files with
realistic sizes, ``bench/specs`` for the corpus); a kernel without a spec whose program's run
was recorded into the folder (``--run``) is timed at that run's sizes, on its data
(:func:`trace_work`). Imports neither libclang nor the frontend.
"""
from __future__ import annotations

import ctypes
import math
import os
import statistics
import time
import traceback
from dataclasses import asdict, dataclass, field
from pathlib import Path

#: Peak figures of devices we report shares for (bytes/s, fp32 and tf32/fp16 dense FLOP/s).
DEVICE_PEAKS = {
    "H200": {"bandwidth": 4.8e12, "fp32": 67e12, "tf32": 494e12, "fp16": 989e12, "l2": 50 * 2**20},
    "H100": {"bandwidth": 3.35e12, "fp32": 67e12, "tf32": 494e12, "fp16": 989e12, "l2": 50 * 2**20},
}


@dataclass
class BenchRow:
    file: str
    kernel: str
    form: str
    status: str = "ok"  # ok, error, skipped
    message: str = ""
    original_ms: float | None = None
    migrated_ms: float | None = None
    ratio: float | None = None  # migrated / original
    bytes: int = 0
    flops: int = 0
    original_gbs: float | None = None
    migrated_gbs: float | None = None
    migrated_bw_share: float | None = None
    migrated_tflops: float | None = None
    original_tflops: float | None = None
    samples: dict = field(default_factory=dict)
    config: dict = field(default_factory=dict)  # the tuned factory options (migrate bench --tune)

    def to_json(self) -> dict:
        return asdict(self)


def device_peaks(name: str) -> dict:
    for key, peaks in DEVICE_PEAKS.items():
        if key in name:
            return peaks
    return {}


def traffic_bytes(k) -> int:
    """Bytes a kernel must move at least: each input buffer read once, each output written once."""
    total = 0
    for a in k.args:
        if a.is_buffer:
            total += a.nbytes * (2 if a.role == "inout" else 1)
    return total


def time_events(launch, reps: int, rounds: int) -> list[float]:
    """Per-launch milliseconds of ``rounds`` rounds of ``reps`` back-to-back launches;
    ``launch(i)`` runs launch number ``i`` (on input copy ``i`` modulo the copies)."""
    import torch
    for i in range(3):
        launch(i)
    torch.cuda.synchronize()
    out = []
    for r in range(rounds):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for i in range(reps):
            launch(r * reps + i)
        end.record()
        end.synchronize()
        out.append(start.elapsed_time(end) / reps)
    return out


class OriginalLauncher:
    """The original kernel's launcher, loaded into this process (launches do not synchronise)."""

    def __init__(self, cu_path: Path, k, include_dirs=(), defines=()) -> None:
        from .cuda_gpu import compile_gpu
        self.lib = compile_gpu(cu_path, [k], include_dirs=include_dirs, defines=defines)
        self.dll = ctypes.CDLL(str(self.lib.path), mode=getattr(os, "RTLD_NOW", 2) | getattr(os, "RTLD_LOCAL", 0))
        self.dll.c2t_last_message.restype = ctypes.c_char_p
        self.dll.c2t_init.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_int]
        self._null = os.open(os.devnull, os.O_WRONLY)
        self.dll.c2t_init(self._null, 0, 0, 0)
        self.dll.c2t_set_async(1)
        self.entry = getattr(self.dll, self.lib.launch_entry(k.instance))
        self.entry.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_void_p,
                               ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
        self.k = k

    def set_symbols(self, symbols: dict) -> None:
        from .inputs import DTYPE_CODES, to_kernel_bytes
        import numpy as np
        for s in self.k.symbols:
            fn = getattr(self.dll, self.lib.symbols[s.name][0])
            fn.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_int]
            data = to_kernel_bytes(np.asarray(symbols[s.name]).reshape(-1), s.dtype)
            if fn(data, len(data), DTYPE_CODES[s.dtype]) != 0:
                raise RuntimeError(self.dll.c2t_last_message().decode(errors="replace"))

    def packer(self, tensors_by_copy: list[dict], scalars: dict):
        """A function copy index -> launch() over that copy of the buffers."""
        from .inputs import DTYPE_CODES, scalar_slot
        k = self.k
        n = len(k.args)
        packed = []
        for tensors in tensors_by_copy:
            slots = (ctypes.c_uint64 * max(n, 1))()
            kinds = (ctypes.c_int * max(n, 1))()
            dtypes = (ctypes.c_int * max(n, 1))()
            ptrs = (ctypes.c_void_p * max(n, 1))()
            for i, a in enumerate(k.args):
                dtypes[i] = DTYPE_CODES[a.dtype]
                if a.is_buffer:
                    slots[i] = tensors[a.name].data_ptr()
                    kinds[i] = 0
                else:
                    kind, raw = scalar_slot(scalars[a.name], a.dtype)
                    slots[i] = int.from_bytes(raw, "little")
                    kinds[i] = kind
                ptrs[i] = ctypes.addressof(slots) + 8 * i
            packed.append((slots, kinds, dtypes, ptrs))
        grid = (ctypes.c_uint * 3)(*k.grid)
        block = (ctypes.c_uint * 3)(*k.block)

        def launch(copy: int):
            slots, kinds, dtypes, ptrs = packed[copy % len(packed)]
            rc = self.entry(grid, block, k.shared_bytes, ptrs, kinds, dtypes, n)
            if rc != 0:
                raise RuntimeError(self.dll.c2t_last_message().decode(errors="replace"))
        return launch


def bench_kernel(out_dir: Path, entry: dict, k, form: str, *, reps: int, rounds: int, peaks: dict,
                 seed: int = 7, include_dirs=(), defines=(), tune: bool = False, inputs=None) -> BenchRow:
    import torch

    from .inputs import make_inputs
    from .tilelang_side import load_module, to_tensor
    from .tilelang_support import arguments, compile_kernel, static_sizes, without_static

    row = BenchRow(entry["file"], k.id, form, bytes=traffic_bytes(k), flops=k.flops)
    inputs = make_inputs(k, seed) if inputs is None else inputs  # a recorded launch's bytes
    copies = 1
    if peaks.get("l2") and row.bytes:
        copies = max(1, min(8, math.ceil(2 * peaks["l2"] / row.bytes)))

    def tensors():
        return {a.name: to_tensor(inputs.args[a.name], a.dtype, "cuda") for a in k.args if a.is_buffer}

    sets = [tensors() for _ in range(copies)]
    scalars = {a.name: inputs.args[a.name] for a in k.args if not a.is_buffer}
    original = OriginalLauncher(out_dir / entry["original"], k, include_dirs, defines)
    original.set_symbols(dict(inputs.symbols))
    launch_original = original.packer(sets, scalars)

    mod = load_module(out_dir / entry["output"])
    sig = mod.KERNELS[k.name]
    symbols = {s.name: to_tensor(inputs.symbols[s.name], s.dtype, "cuda") for s in k.symbols}
    calls = []
    sizes = {}
    for t in sets:
        ordered = [t[a.name] if a.is_buffer else scalars[a.name] for a in k.args]
        sizes = static_sizes(sig, ordered, "cuda")
        calls.append(without_static(sig, arguments(sig, ordered, symbols, k.template or None, "cuda"), sizes))

    def timed(options):
        kernel = compile_kernel(sig, k.grid, k.block, k.shared_bytes, k.template or None, "cuda", options,
                                sizes=sizes)
        return time_events(lambda copy: kernel(*calls[copy % len(calls)]), reps, rounds)

    orig = time_events(launch_original, reps, rounds)
    migr = timed({})
    tried = {}
    if tune and sig.tune:
        tried = tune_kernel(sig, k, inputs, original, sets[0], sizes)
        if tried.get("config"):
            samples = timed(tried["config"])
            tried["ms"] = statistics.median(samples)
            if tried["ms"] < statistics.median(migr):
                migr, row.config = samples, tried["config"]
    torch.cuda.synchronize()
    row.samples = {"original_ms": orig, "migrated_ms": migr, "copies": copies, "reps": reps, "tuned": tried}
    row.original_ms, row.migrated_ms = statistics.median(orig), statistics.median(migr)
    row.ratio = row.migrated_ms / row.original_ms
    if row.bytes:
        row.original_gbs = row.bytes / (row.original_ms * 1e-3) / 1e9
        row.migrated_gbs = row.bytes / (row.migrated_ms * 1e-3) / 1e9
        if peaks.get("bandwidth"):
            row.migrated_bw_share = row.migrated_gbs * 1e9 / peaks["bandwidth"]
    if row.flops:
        row.original_tflops = row.flops / (row.original_ms * 1e-3) / 1e12
        row.migrated_tflops = row.flops / (row.migrated_ms * 1e-3) / 1e12
    return row


def tune_kernel(sig, k, inputs, original: OriginalLauncher, tensors: dict, sizes: dict) -> dict:
    """Search ``sig``'s tune space with TileLang's autotuner (:func:`.tuning.autotune`) on one
    copy of the bench inputs, then check the fastest configuration against the original CUDA on
    fresh inputs (outputs poisoned) before it may be reported. Returns what happened: the
    ``config`` (absent when the search failed or the check did not pass), ``tuner_ms``,
    ``tried`` and a ``message``."""
    import torch

    from .compare import all_passed, compare_outputs
    from .inputs import repoison
    from .tilelang_side import to_numpy, to_tensor
    from .tilelang_support import arguments, compile_kernel, without_static
    from .tuning import TuneError, autotune

    try:
        found = autotune(sig, [tensors[a.name] if a.is_buffer else inputs.args[a.name] for a in k.args],
                         grid=k.grid, block=k.block, shared_bytes=k.shared_bytes, template=k.template or None,
                         symbols=inputs.symbols)
    except TuneError as exc:
        return {"message": str(exc)}
    fresh = repoison(k, inputs.args)
    theirs = {a.name: to_tensor(fresh[a.name], a.dtype, "cuda") for a in k.args if a.is_buffer}
    ours = {a.name: to_tensor(fresh[a.name], a.dtype, "cuda") for a in k.args if a.is_buffer}
    scalars = {a.name: fresh[a.name] for a in k.args if not a.is_buffer}
    original.packer([theirs], scalars)(0)
    ordered = [ours[a.name] if a.is_buffer else scalars[a.name] for a in k.args]
    symbols = {s.name: to_tensor(inputs.symbols[s.name], s.dtype, "cuda") for s in k.symbols}
    kernel = compile_kernel(sig, k.grid, k.block, k.shared_bytes, k.template or None, "cuda", found.config,
                            sizes=sizes)
    kernel(*without_static(sig, arguments(sig, ordered, symbols, k.template or None, "cuda"), sizes))
    torch.cuda.synchronize()
    results = compare_outputs(k, {a.name: to_numpy(theirs[a.name], a.dtype) for a in k.outputs},
                              {a.name: to_numpy(ours[a.name], a.dtype) for a in k.outputs})
    out = {"tuner_ms": found.latency_ms, "tried": found.tried}
    if all_passed(results):
        out["config"] = found.config
    else:
        out["message"] = f"tuned configuration {found.config} fails the check: " + \
            "; ".join(r.message for r in results if not r.passed)
    return out


def trace_work(out_dir: Path, report: dict, kernels=None, done=()) -> list:
    """(entry, kernel spec, form, inputs) of every migrated kernel of ``out_dir`` that has no spec
    (not in ``done``, (file, kernel) pairs) but a recorded launch in ``OUT/traces/`` (``migrate
    convert/check --run``): timed at the sizes and on the data of its program's own run, its
    first recorded launch (:func:`.replay.as_spec`). A kernel whose launch cannot be described is
    listed with the reason in place of the spec."""
    from .checker import trace_stem
    from .replay import as_spec
    from .tilelang_side import load_module
    from .traces import load

    forms = {(k["file"], k["kernel"]): k["form"] for k in report.get("kernels", [])}
    entries = {e["file"]: e for e in report.get("files", []) if e.get("output") and e.get("original")}
    work = []
    for prog in report.get("programs", []):
        loaded = load(out_dir / "traces" / trace_stem(prog))
        if loaded is None:
            continue
        launches = [L for L in loaded[1].launches if not L.skipped]
        for file in prog.get("files", []):
            if file not in entries:
                continue
            sigs = getattr(load_module(out_dir / entries[file]["output"]), "KERNELS", {})
            for name, sig in sigs.items():
                form = forms.get((file, name))
                if form in (None, "unsupported") or (file, name) in done or (kernels and name not in kernels):
                    continue
                first = next((L for L in launches if L.name == name), None)
                if first is None:
                    continue
                spec, inputs = as_spec(sig, first, file)
                work.append((entries[file], spec if spec is not None else f"{name}: {inputs}", form, inputs))
    return work


def _bench_work(out_dir: Path, report: dict, kernels, specs_dir: Path | None) -> list:
    """(entry, kernel spec, form) of every spec'd, migrated kernel of ``out_dir``, in report order."""
    from .spec import load_spec

    forms = {(k["file"], k["kernel"]): k["form"] for k in report.get("kernels", [])}
    work = []
    for entry in report.get("files", []):
        spec_path = None
        if specs_dir is not None and (specs_dir / entry["file"]).with_suffix(".toml").is_file():
            spec_path = (specs_dir / entry["file"]).with_suffix(".toml")
        elif specs_dir is None and entry.get("spec"):
            spec_path = out_dir / entry["spec"]
        if spec_path is None or not entry.get("original") or not entry.get("output"):
            continue
        for k in load_spec(spec_path):
            form = forms.get((entry["file"], k.name))
            if kernels and k.name not in kernels and k.id not in kernels:
                continue
            if form in (None, "unsupported"):
                continue
            work.append((entry, k, form))
    return work


def prepare_kernel(out_dir: Path, entry: dict, k, include_dirs=(), defines=()) -> str:
    """Build what timing ``k`` needs, into the caches: the original's GPU library (nvcc) and the
    migrated kernel (TileLang, cached on disk), at the spec's launch and static sizes. Returns
    "" or the error; run in worker processes by :func:`bench_folder` (``jobs``)."""
    try:
        from .cuda_gpu import compile_gpu
        from .inputs import make_inputs
        from .tilelang_side import load_module
        from .tilelang_support import compile_kernel, static_sizes

        compile_gpu(out_dir / entry["original"], [k], include_dirs=include_dirs, defines=defines)
        sig = load_module(out_dir / entry["output"]).KERNELS[k.name]
        inputs = make_inputs(k, 7) if sig.specialize else None
        ordered = [None if a.is_buffer else inputs.args[a.name] for a in k.args] if inputs else []
        compile_kernel(sig, k.grid, k.block, k.shared_bytes, k.template or None, "cuda",
                       sizes=static_sizes(sig, ordered, "cuda") if inputs else None)
        return ""
    except Exception as exc:  # the timing run reports it again, with the kernel
        return traceback.format_exception_only(type(exc), exc)[-1].strip()


def _prepare_all(out_dir: Path, work: list, jobs: int, flags_of) -> None:
    from concurrent.futures import ProcessPoolExecutor
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")  # CUDA does not survive fork
    flags = [flags_of(e) for e, _, _ in work]
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        list(pool.map(prepare_kernel, [out_dir] * len(work), [e for e, _, _ in work], [k for _, k, _ in work],
                      [f[0] for f in flags], [f[1] for f in flags]))


def bench_folder(out_dir: Path, report: dict, *, kernels=None, specs_dir: Path | None = None,
                 reps: int = 20, rounds: int = 7, include_dirs=(), defines=(), on_row=None,
                 budget: float = 1e9, tune: bool = False, jobs: int = 1) -> tuple[list[BenchRow], str]:
    """Bench every spec'd, migrated kernel of ``out_dir``; returns the rows and the device name.
    ``jobs`` > 1 first builds every kernel in that many processes (compilation is most of the
    time of a corpus-wide run); the timing itself is one kernel at a time."""
    import torch

    name = torch.cuda.get_device_name(0)
    peaks = device_peaks(name)
    rows: list[BenchRow] = []
    started = time.time()
    work = [(*w, None) for w in _bench_work(out_dir, report, kernels, specs_dir)]
    if specs_dir is None:  # kernels with no spec: the sizes of their program's recorded run
        work += trace_work(out_dir, report, kernels, {(e["file"], k.name) for e, k, _, _ in work})
    from .flags import file_flags

    def flags_of(entry):  # the flags the file was converted with, and those given
        return file_flags(report, entry["file"], include_dirs, defines)

    if jobs > 1 and len(work) > 1:
        _prepare_all(out_dir, [w[:3] for w in work if not isinstance(w[1], str)], jobs, flags_of)
    for entry, k, form, inputs in work:
        if isinstance(k, str):  # a recorded launch the bench cannot describe: its reason
            row = BenchRow(entry["file"], k.split(":", 1)[0], form, status="skipped", message=k)
        elif time.time() - started > budget:
            row = BenchRow(entry["file"], k.id, form, status="skipped", message="time budget spent")
        else:
            try:
                file_dirs, file_defines = flags_of(entry)
                row = bench_kernel(out_dir, entry, k, form, reps=reps, rounds=rounds, peaks=peaks,
                                   include_dirs=file_dirs, defines=file_defines, tune=tune, inputs=inputs)
            except Exception as exc:  # one kernel's failure is reported, the rest go on
                last = traceback.format_exception_only(type(exc), exc)[-1].strip()
                row = BenchRow(entry["file"], k.id, form, status="error", message=last[:400])
        rows.append(row)
        if on_row is not None:
            on_row(row)
    return rows, name


def geomean(values) -> float | None:
    values = [v for v in values if v]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))
