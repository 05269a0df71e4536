"""Running one launch of a built library in a child process with a time limit.

Shared by the CPU and GPU executors. :func:`run_library` packs the arguments (buffers as kernel
bytes, scalars as 8-byte slots), starts ``_worker.py`` with a fresh interpreter, waits at most
``timeout`` seconds, and turns what came back (a result file, a fault report, an exit status)
into a :class:`RunResult`. A crashing or hanging kernel can only end the child.
"""
from __future__ import annotations

import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from . import limits
from .build import Library
from .inputs import (DTYPE_CODES, from_kernel_bytes, poison_array, scalar_slot, to_kernel_bytes)
from .results import Finding, RunResult
from .spec import DTYPES, KernelSpec

__all__ = ["run_library", "SCHEDULES", "parse_reports"]

SCHEDULES = {"forward": 0, "reverse": 1, "random": 2}
WORKER = Path(__file__).resolve().parent / "_worker.py"
_KEEP = 64 * 1024


class _Drain(threading.Thread):
    """Reads a pipe to its end, keeping the first and last 64 KiB."""

    def __init__(self, stream):
        super().__init__(daemon=True)
        self.stream = stream
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def run(self):
        while True:
            chunk = self.stream.read(65536)
            if not chunk:
                break
            if len(self.head) < _KEEP:
                take = _KEEP - len(self.head)
                self.head += chunk[:take]
                chunk = chunk[take:]
            if chunk:
                self.tail += chunk
                if len(self.tail) > _KEEP:
                    self.dropped += len(self.tail) - _KEEP
                    del self.tail[:len(self.tail) - _KEEP]

    def text(self) -> str:
        mid = f"\n... [{self.dropped} bytes left out] ...\n".encode() if self.dropped else b""
        return (bytes(self.head) + mid + bytes(self.tail)).decode(errors="replace")


def parse_reports(text: str) -> list[dict]:
    """Blocks of ``key=value`` lines separated by blank lines."""
    out, cur = [], {}
    for line in text.splitlines():
        line = line.strip()
        if not line:
            if cur:
                out.append(cur)
                cur = {}
            continue
        k, _, v = line.partition("=")
        cur[k] = v
    if cur:
        out.append(cur)
    return out


def _dim(v: str | None):
    if not v:
        return None
    try:
        return tuple(int(x) for x in v.split(","))
    except ValueError:
        return None


_SIGNAL_HINTS = {
    "SIGFPE": "arithmetic trap (integer division by zero?)",
    "SIGABRT": "abort (a failed assert?)",
    "SIGTRAP": "__trap() or a trap instruction",
    "SIGILL": "illegal instruction (__trap()?)",
    "SIGSEGV": "invalid memory access",
    "SIGBUS": "bus error (misaligned or invalid access)",
}


def finding_from_report(r: dict, kernel_name: str = "kernel") -> Finding:
    kind = r.get("kind", "signal")
    thread, block = _dim(r.get("thread")), _dim(r.get("block"))
    who = ""
    if thread and block:
        who = f" by thread ({','.join(map(str, thread))}) of block ({','.join(map(str, block))})"
    elif r.get("in_kernel") == "0":
        who = " in host code (outside the kernel)"
    access = r.get("access")
    if kind == "oob":
        buf = r.get("buffer", "?")
        if buf == "<dynamic shared memory>":
            msg = (f"out-of-bounds {access or 'access'} of dynamic shared memory at byte offset "
                   f"{r.get('byte_offset')} ({r.get('nbytes')} bytes were launched with){who}")
            return Finding(kind="oob", message=f"{kernel_name}: {msg}", buffer=buf, access=access,
                           thread=thread, block=block, details=r)
        idx = int(r["index"]) if r.get("index", "").lstrip("-").isdigit() else None
        n = int(r["elements"]) if r.get("elements", "").isdigit() else None
        where = ""
        if idx is not None and n is not None:
            if idx >= n:
                where = f" element {idx} (the buffer has {n}; {idx - n + 1} past the end)"
            elif idx < 0:
                where = f" element {idx} (before the start; the buffer has {n})"
            else:
                where = f" element {idx} of {n}"
        elif r.get("byte_offset"):
            side = "before its start" if r["byte_offset"].startswith("-") else "past its end"
            where = f" byte offset {r['byte_offset']} ({side}; the buffer has {r.get('nbytes')} bytes)"
        msg = f"out-of-bounds {access or 'access'} of buffer '{buf}' at{where}{who}"
        return Finding(kind="oob", message=f"{kernel_name}: {msg}", buffer=buf, index=idx, access=access,
                       thread=thread, block=block, details=r)
    if kind == "stack_overflow":
        kib = int(r.get("stack_bytes", "0")) // 1024
        msg = (f"thread stack overflow ({kib} KiB per thread; deep recursion or huge local arrays?){who}; "
               f"set C2T_STACK_KB to allow more")
        return Finding(kind="stack_overflow", message=f"{kernel_name}: {msg}", thread=thread, block=block, details=r)
    sig = r.get("signal", "signal")
    hint = _SIGNAL_HINTS.get(sig, "")
    addr = f" at address {r['addr']}" if r.get("addr") else ""
    if sig == "SIGSEGV" and r.get("general_protection") == "1":
        hint = "general protection fault: a misaligned vector access or a wild pointer"
        addr = ""
    elif sig == "SIGSEGV" and r.get("addr", "").startswith("0x") and int(r["addr"], 16) < 65536:
        hint = "null pointer dereference"
    msg = f"{sig}{addr}{' (' + hint + ')' if hint else ''}{who}"
    return Finding(kind="signal", message=f"{kernel_name}: {msg}", access=access, thread=thread, block=block,
                   details=r)


def run_library(lib: Library, kernel: KernelSpec, args: dict, symbols: dict | None = None, *,
                schedule: str = "forward", seed: int = 0, timeout: float = 120.0,
                poison_shared: bool = True, read_symbols=(), env: dict | None = None,
                repeat: int = 0, wrapper=()) -> RunResult:
    """Launch ``kernel`` from ``lib`` on ``args`` (holder arrays / numbers by name). ``wrapper``:
    a command the worker runs under (compute-sanitizer, :mod:`.sanitize`)."""
    if schedule not in SCHEDULES:
        raise ValueError(f"schedule must be one of {', '.join(SCHEDULES)}, not {schedule!r}")
    symbols = symbols or {}
    base = RunResult(status="ok", device=lib.device, schedule=schedule, seed=seed, library=lib.path)
    try:
        entry = lib.launch_entry(kernel.instance)
    except KeyError as e:
        base.status, base.message = "launch_error", str(e)
        return base

    job_args = []
    for a in kernel.args:
        if a.name not in args:
            base.status, base.message = "launch_error", f"no value for argument '{a.name}'"
            return base
        v = args[a.name]
        if a.is_buffer:
            if a.role == "out" and v is None:
                v = poison_array(a.dtype, a.elements)
            arr = np.asarray(v).reshape(-1)
            if arr.size != a.elements:
                base.status = "launch_error"
                base.message = f"buffer '{a.name}' has {arr.size} elements, the spec says {a.elements}"
                return base
            job_args.append({"kind": "buffer", "name": a.name, "nbytes": a.nbytes, "elem": DTYPES[a.dtype],
                             "dtype_code": DTYPE_CODES[a.dtype], "data": to_kernel_bytes(arr, a.dtype),
                             "read": True})
        else:
            kind, raw = scalar_slot(v, a.dtype)
            job_args.append({"kind": "scalar", "argkind": kind, "raw": raw, "dtype_code": DTYPE_CODES[a.dtype]})
    job_syms = []
    for s in kernel.symbols:
        if s.name not in symbols:
            base.status, base.message = "launch_error", f"no value for symbol '{s.name}'"
            return base
        if s.name not in lib.symbols:
            base.status, base.message = "launch_error", f"symbol '{s.name}' is not in the library"
            return base
        arr = np.asarray(symbols[s.name]).reshape(-1)
        job_syms.append({"entry": lib.symbols[s.name][0], "data": to_kernel_bytes(arr, s.dtype),
                         "dtype_code": DTYPE_CODES[s.dtype]})
    job_read = []
    for name, dtype, count in read_symbols:
        job_read.append({"entry": lib.symbols[name][1], "name": name, "nbytes": DTYPES[dtype] * count})

    with tempfile.TemporaryDirectory(prefix="c2t-run-") as tmp:
        report = os.path.join(tmp, "report.txt")
        result_path = os.path.join(tmp, "result.pkl")
        job = {"lib": lib.path, "entry": entry, "grid": list(kernel.grid), "block": list(kernel.block),
               "shmem": kernel.shared_bytes, "schedule": SCHEDULES[schedule], "seed": seed,
               "poison_shared": int(poison_shared), "report": report, "result": result_path,
               "args": job_args, "symbols": job_syms, "read_symbols": job_read, "repeat": int(repeat)}
        payload = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        penv = dict(os.environ)
        penv.pop("PYTHONPATH", None)
        if env:
            penv.update(env)
        t0 = time.perf_counter()
        # the memory limit on the CPU only: a CUDA context reserves far more address space than it uses
        proc = limits.spawn([*wrapper, sys.executable, "-I", str(WORKER)], max_memory=limits.max_memory() if lib.device == "cpu"
                            else None, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=penv)
        out_d, err_d = _Drain(proc.stdout), _Drain(proc.stderr)
        out_d.start()
        err_d.start()
        try:
            try:
                proc.stdin.write(payload)
                proc.stdin.close()
            except BrokenPipeError:
                pass
        except BaseException:        # KeyboardInterrupt and friends: never leave the child running
            limits.stop(proc)
            raise
        timed_out = limits.wait(proc, timeout)  # kills the child's whole group past the limit
        out_d.join(5)
        err_d.join(5)
        wall = time.perf_counter() - t0
        base.stdout, base.stderr = out_d.text(), err_d.text()
        reports = []
        if os.path.exists(report):
            with open(report, "r", errors="replace") as f:
                reports = parse_reports(f.read())
        res = None
        if os.path.exists(result_path):
            with open(result_path, "rb") as f:
                try:
                    res = pickle.load(f)
                except Exception:          # a half-written file from a killed worker
                    res = None

    kname = kernel.instance
    if timed_out:
        base.status = "timeout"
        base.message = (f"{kname} did not finish within {timeout:g} s (an infinite loop, or a thread "
                        f"spinning on a value no running thread will write?)")
        base.findings.append(Finding(kind="timeout", message=base.message))
        return base
    if res is None and limits.out_of_memory(proc.returncode, base.stderr):
        base.status = "memory"
        base.message = (f"{kname} ran out of memory (limit {limits.show_memory(limits.max_memory())}, "
                        f"--max-memory); the worker {limits.exit_reason(proc.returncode)}")
        base.findings.append(Finding(kind="memory", message=base.message))
        return base
    warnings = []
    for r in reports:
        if r.get("kind") == "warning" and r.get("message") and r["message"] not in warnings:
            warnings.append(r["message"])
    if res is not None:
        for w in (res.get("warnings") or "").splitlines():
            if w.strip() and w.strip() not in warnings:
                warnings.append(w.strip())
    for w in warnings:
        base.findings.append(Finding(kind="spec_mismatch", message=w, severity="warning"))
    faults = [r for r in reports if r.get("kind") != "warning"]
    if faults:
        findings = [finding_from_report(r, kname) for r in faults]
        base.findings.extend(findings)
        base.status = "oob" if findings[0].kind == "oob" else "crash"
        base.message = findings[0].message
        if base.status == "crash" and base.stderr.strip():
            base.message += "\n" + _tail(base.stderr)
        return base
    if res is None:
        rc = proc.returncode
        base.status = "crash"
        if rc is not None and rc < 0:
            try:
                sname = signal.Signals(-rc).name
            except ValueError:
                sname = f"signal {-rc}"
            base.message = f"{kname}: the worker died of {sname}"
        else:
            base.message = f"{kname}: the worker exited with status {rc}"
        if base.stderr.strip():
            base.message += "\n" + _tail(base.stderr)
        base.findings.append(Finding(kind="signal", message=base.message))
        return base

    base.elapsed = res.get("elapsed", 0.0)
    base.per_launch = res.get("per_launch")
    if res["status"] != "ok":
        base.status = res["status"]
        base.message = res["message"]
        if base.status == "deadlock":
            base.findings.append(Finding(kind="deadlock", message=f"{kname}: {res['message']}"))
        return base
    if res.get("checks"):
        findings = [finding_from_report(r, kname) for r in parse_reports(res["checks"])]
        base.findings.extend(findings)
        base.status = "oob"
        base.message = findings[0].message
    for a in kernel.args:
        if a.is_buffer and a.name in res["outputs"]:
            arr = from_kernel_bytes(res["outputs"][a.name], a.dtype, a.elements)
            if a.is_output:
                base.outputs[a.name] = arr
            else:
                original = np.asarray(args[a.name]).reshape(-1)
                if to_kernel_bytes(original, a.dtype) != res["outputs"][a.name]:
                    base.findings.append(Finding(
                        kind="output", severity="warning", buffer=a.name,
                        message=f"{kname} wrote to '{a.name}', which the spec lists as an input (role 'in')"))
    for name, data in res.get("symbols", {}).items():
        dtype = next(d for n, d, _ in read_symbols if n == name)
        base.outputs["symbol:" + name] = from_kernel_bytes(data, dtype)
    return base


def _tail(text: str, lines: int = 20) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
