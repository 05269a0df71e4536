"""Runs one kernel launch in a child process (spawned by cuda_cpu.py / cuda_gpu.py).

Started as ``python -I _worker.py``; reads a pickled job from stdin and writes a pickled result
to ``job["result"]``. It imports only the standard library, so it starts fast and works where
only the runtime's files are present. A fault inside the kernel never returns here: the
library's signal handler writes a report to ``job["report"]`` and exits; the parent reads it.

Job: lib, entry, grid, block, shmem, schedule, seed, poison_shared, report, result,
args (list of dicts: kind "buffer" with name, nbytes, elem, dtype_code, data; or kind "scalar"
with argkind, raw (8 bytes), dtype_code), symbols (list of dicts: entry, data, dtype_code),
read_symbols (list of dicts: entry, name, nbytes).
"""
import ctypes
import os
import pickle
import sys
import time


def main():
    try:  # killed with the process that started it, even when that one is killed by SIGKILL
        ctypes.CDLL(None).prctl(1, 9, 0, 0, 0)  # PR_SET_PDEATHSIG, SIGKILL
    except (OSError, AttributeError):
        pass
    job = pickle.loads(sys.stdin.buffer.read())
    result = {"status": "ok", "message": "", "warnings": "", "outputs": {}, "symbols": {}, "checks": "",
              "elapsed": 0.0}
    lib = ctypes.CDLL(job["lib"], mode=getattr(os, "RTLD_NOW", 2) | getattr(os, "RTLD_LOCAL", 0))
    lib.c2t_last_message.restype = ctypes.c_char_p
    lib.c2t_warnings.restype = ctypes.c_char_p
    lib.c2t_alloc_buffer.restype = ctypes.c_void_p
    lib.c2t_alloc_buffer.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_ulonglong]
    lib.c2t_write_buffer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong]
    lib.c2t_read_buffer.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong]
    lib.c2t_check_buffers.argtypes = [ctypes.c_char_p, ctypes.c_int]
    lib.c2t_init.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_ulonglong, ctypes.c_int]

    def fail(status, message):
        result["status"] = status
        result["message"] = message
        with open(job["result"], "wb") as f:
            pickle.dump(result, f)
        sys.exit(0)

    report_fd = os.open(job["report"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    if lib.c2t_init(report_fd, int(job["schedule"]), int(job["seed"]) & 0xFFFFFFFFFFFFFFFF,
                    int(job.get("poison_shared", 1))) != 0:
        fail("crash", lib.c2t_last_message().decode(errors="replace"))

    for s in job.get("symbols", []):
        fn = getattr(lib, s["entry"])
        fn.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_int]
        if fn(s["data"], len(s["data"]), int(s["dtype_code"])) != 0:
            fail("launch_error", lib.c2t_last_message().decode(errors="replace"))

    n = len(job["args"])
    slots = (ctypes.c_uint64 * max(n, 1))()
    kinds = (ctypes.c_int * max(n, 1))()
    dtypes = (ctypes.c_int * max(n, 1))()
    ptrs = (ctypes.c_void_p * max(n, 1))()
    buffers = []
    for i, a in enumerate(job["args"]):
        dtypes[i] = int(a.get("dtype_code", -1))
        if a["kind"] == "buffer":
            p = lib.c2t_alloc_buffer(a["name"].encode(), int(a["nbytes"]), int(a["elem"]))
            if not p:
                fail("crash", lib.c2t_last_message().decode(errors="replace"))
            data = a["data"]
            if data:
                if lib.c2t_write_buffer(p, data, len(data)) != 0:
                    fail("crash", lib.c2t_last_message().decode(errors="replace"))
            slots[i] = p
            kinds[i] = 0
            buffers.append((a["name"], p, int(a["nbytes"]), a.get("read", True)))
        else:
            slots[i] = int.from_bytes(a["raw"], "little")
            kinds[i] = int(a["argkind"])
        ptrs[i] = ctypes.addressof(slots) + 8 * i

    grid = (ctypes.c_uint * 3)(*job["grid"])
    block = (ctypes.c_uint * 3)(*job["block"])
    fn = getattr(lib, job["entry"])
    fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_ulonglong, ctypes.c_void_p, ctypes.c_void_p,
                   ctypes.c_void_p, ctypes.c_int]
    sys.stdout.flush()
    t0 = time.perf_counter()
    rc = fn(grid, block, int(job["shmem"]), ptrs, kinds, dtypes, n)
    result["elapsed"] = time.perf_counter() - t0
    result["warnings"] = (lib.c2t_warnings() or b"").decode(errors="replace")
    # flush the kernel's printf output (C stdio) before Python writes anything
    libc = ctypes.CDLL(None)
    libc.fflush(None)
    if rc != 0:
        status = {1: "launch_error", 2: "deadlock", 3: "launch_error", 4: "crash", 5: "launch_error"}.get(rc, "crash")
        fail(status, lib.c2t_last_message().decode(errors="replace"))
    repeat = int(job.get("repeat", 0))
    if repeat:  # timing: more launches on the same buffers (each launch synchronises)
        t0 = time.perf_counter()
        for _ in range(repeat):
            fn(grid, block, int(job["shmem"]), ptrs, kinds, dtypes, n)
        result["per_launch"] = (time.perf_counter() - t0) / repeat

    for name, p, nbytes, read in buffers:
        if read:
            buf = ctypes.create_string_buffer(nbytes)
            if lib.c2t_read_buffer(buf, p, nbytes) != 0:
                fail("crash", lib.c2t_last_message().decode(errors="replace"))
            result["outputs"][name] = buf.raw
    for s in job.get("read_symbols", []):
        fn = getattr(lib, s["entry"])
        fn.argtypes = [ctypes.c_void_p, ctypes.c_ulonglong]
        buf = ctypes.create_string_buffer(int(s["nbytes"]))
        if fn(buf, int(s["nbytes"])) == 0:
            result["symbols"][s["name"]] = buf.raw
    checks = ctypes.create_string_buffer(8192)
    if lib.c2t_check_buffers(checks, 8192):
        result["checks"] = checks.value.decode(errors="replace")
    with open(job["result"], "wb") as f:
        pickle.dump(result, f)
    sys.stdout.flush()
    libc.fflush(None)


if __name__ == "__main__":
    main()
