"""compute-sanitizer runs of both sides of a GPU check (``migrate check --device cuda --sanitize``).

Each tool runs the kernel again, in a process of its own started under ``compute-sanitizer
--tool TOOL``: the original through the GPU executor's worker (one process per kernel), the
migrated kernels of one module through a TileLang worker (one process per module and tool). The
tools and what they find:

- ``memcheck``: out-of-bounds and misaligned accesses to global, local and shared memory;
- ``racecheck``: shared-memory hazards between threads (a missing or misplaced barrier);
- ``synccheck``: barriers not reached by every thread that must reach them;
- ``initcheck``: reads of global memory nothing wrote.

:func:`parse_log` turns the tool's log into :class:`Finding` records; a finding of the migrated
kernel names its kernel by the function TileLang generates for it (``<kernel>_kernel``).
:func:`judge` folds both sides' findings into a check: a finding of the original is the
original's (M4031: its outputs are not defined, so a failing comparison is an ``error``, not a
migration failure); a finding of the migrated kernel that the original does not share fails the
check (M4030). Imports only the standard library.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import asdict, dataclass

TOOLS = ("memcheck", "racecheck", "synccheck", "initcheck")

#: what each tool's finding means, for messages
WHAT = {"memcheck": "an invalid memory access", "racecheck": "a shared-memory race",
        "synccheck": "an invalid barrier", "initcheck": "a read of uninitialised global memory"}

#: runs under a sanitizer are slower than plain runs (racecheck most): their time limit is this
#: many times the check's, and at least ``MIN_TIMEOUT`` seconds
SLOWDOWN, MIN_TIMEOUT = 10.0, 300.0


class SanitizerUnavailable(RuntimeError):
    pass


def parse_tools(text: str | None) -> tuple[str, ...]:
    """``all`` (or None) -> every tool; else a comma-separated subset. ValueError names an unknown one."""
    if text is None or text.strip() in ("", "all"):
        return TOOLS
    tools = tuple(dict.fromkeys(t.strip() for t in text.split(",") if t.strip()))
    unknown = [t for t in tools if t not in TOOLS]
    if unknown or not tools:
        raise ValueError(f"unknown compute-sanitizer tool {', '.join(unknown) or repr(text)} "
                         f"(choose from {', '.join(TOOLS)}, or all)")
    return tools


def find_sanitizer() -> str | None:
    """compute-sanitizer: $COMPUTE_SANITIZER, on PATH, or beside nvcc ($CUDA_HOME/bin, /usr/local/cuda/bin)."""
    cands = [os.environ.get("COMPUTE_SANITIZER"), shutil.which("compute-sanitizer")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        cands.append(os.path.join(os.path.dirname(os.path.realpath(nvcc)), "compute-sanitizer"))
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if home:
            cands.append(os.path.join(home, "bin", "compute-sanitizer"))
    return next((c for c in cands if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


def wrapper(tool: str, log: str, sanitizer: str | None = None) -> list[str]:
    """The command prefix that runs a process under ``tool``, its report in the file ``log``.
    A kernel that faults is ended alone (the context lives on for the next run), API errors are
    not reported (the runs report their own), and the program's exit status is its own."""
    if tool not in TOOLS:
        raise ValueError(f"unknown compute-sanitizer tool {tool!r}")
    exe = sanitizer or find_sanitizer()
    if exe is None:
        raise SanitizerUnavailable("compute-sanitizer not found (put it on PATH, or set COMPUTE_SANITIZER "
                                   "or CUDA_HOME)")
    cmd = [exe, "--tool", tool, "--log-file", log, "--print-limit", "50", "--report-api-errors", "no",
           "--destroy-on-device-error", "kernel", "--show-backtrace", "no"]
    if tool == "racecheck":
        cmd += ["--racecheck-report", "analysis"]
    return cmd


def timeout_for(timeout: float) -> float:
    return max(MIN_TIMEOUT, timeout * SLOWDOWN)


@dataclass
class Finding:
    tool: str
    severity: str  # error or warning (racecheck's intra-warp hazards are warnings)
    text: str  # the record's first line, e.g. "Invalid __global__ write of size 4 bytes"
    where: str = ""  # FILE:LINE of the access, where the tool gives one
    function: str = ""  # the device function the access is in
    thread: str = ""  # "thread (255,0,0) in block (3,0,0)", where given
    count: int = 1  # hazards the record stands for (racecheck)

    def to_json(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        s = f"{self.tool}: {self.text}"
        if self.function:
            s += f" in {self.function}"
        if self.where:
            s += f" at {self.where}"
        if self.thread:
            s += f" by {self.thread}"
        if self.count > 1:
            s += f" [{self.count} hazards]"
        return s


_PREFIX = "========="
_NOISE = re.compile(r"^(COMPUTE-SANITIZER|ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY|Target application returned|"
                    r"This can occur|Note:|Saved host backtrace|Host Frame|Device Frame|Cuda API error detected)", re.I)
_FUNC_AT = re.compile(r"\bat\s+(?:0x[0-9a-f]+\s+in\s+)?(?:(?P<file>[^\s:]+):(?P<line>\d+):)?(?P<func>[A-Za-z_~][\w:<>~, *&\[\]]*?)"
                      r"(?:\((?P<args>[^()]*)\))?(?:\+0x[0-9a-f]+)?(?:\s+in\s+(?P<file2>[^\s:]+):(?P<line2>\d+))?\s*$")
_THREAD = re.compile(r"by thread \(([\d, ]+)\) in block \(([\d, ]+)\)")
_HAZARDS = re.compile(r"\[(\d+) hazards?\]")
_LOCATION = re.compile(r"\s+at\s+(?:0x[0-9a-f]+\s+in\s+\S+|.*?\+0x[0-9a-f]+(?:\s+in\s+[^\s:]+:\d+)?)")


def parse_log(text: str, tool: str) -> list[Finding]:
    """The findings of a compute-sanitizer log: a record is a line after the ``=========`` prefix
    that is not indented, with the indented lines after it (locations, threads, addresses).
    Headers, summaries and host backtraces are skipped."""
    records: list[list[str]] = []
    for raw in text.splitlines():
        if not raw.startswith(_PREFIX):
            continue
        body = raw[len(_PREFIX):]
        if not body.strip():
            continue
        if body.startswith(" ") and not body.startswith("  ") and not body[1:2].isspace():
            line = body.strip()
            if _NOISE.match(line):
                records.append([])  # a host backtrace etc.: its indented lines are not a finding's
                continue
            records.append([line])
        elif records and records[-1]:
            records[-1].append(body.strip())
    return [_finding(r, tool) for r in records if r]


def _finding(lines: list[str], tool: str) -> Finding:
    head = lines[0]
    severity = "warning" if head.lower().startswith("warning") else "error"
    text = re.sub(r"^(error|warning):\s*", "", head, flags=re.I)
    text = _LOCATION.sub("", text).strip()  # "Race reported between Write access at k+0x210 in f.cu:36"
    if len(lines) > 1 and lines[1].startswith("and "):  # racecheck: "and Read access at ..." on the next line
        text += " and " + _LOCATION.sub("", re.sub(r"\s*\[\d+ hazards?\]", "", lines[1][4:])).strip()
    f = Finding(tool=tool, severity=severity, text=text, count=0)
    for line in lines:
        for piece in re.split(r"\s+and\s+(?=\w+ access)|(?<=access) (?=at )", line):
            m = _FUNC_AT.search(piece) if " at " in f" {piece}" else None
            if m and not f.function and not m.group("func").startswith("0x"):
                f.function = m.group("func").strip()
                if m.group("file") or m.group("file2"):
                    f.where = f"{m.group('file') or m.group('file2')}:{m.group('line') or m.group('line2')}"
        t = _THREAD.search(line)
        if t and not f.thread:
            f.thread = f"thread ({t.group(1)}) in block ({t.group(2)})"
        h = _HAZARDS.search(line)
        if h:
            f.count += int(h.group(1))
    f.count = f.count or 1
    if not f.function:  # "Race reported between Write access at kernel(...)+0x.. in f.cu:3" and friends
        m = re.search(r"\bat\s+([A-Za-z_]\w*)\s*[(+]", " ".join(lines))
        if m:
            f.function = m.group(1)
    return f


def migrated_function(kernel: str) -> str:
    """The name of the CUDA function TileLang generates for a migrated kernel's ``T.prim_func``
    (the emitted prim_func carries the CUDA kernel's name)."""
    return f"{kernel}_kernel"


def attribute(findings: list[Finding], kernels: list[str]) -> dict[str, list[Finding]]:
    """The migrated side's findings of one module by kernel: by the generated function's name;
    one the log does not name is every kernel's when the module ran only one, else nobody's
    (returned under the key ``""``)."""
    out: dict[str, list[Finding]] = {k: [] for k in kernels}
    out[""] = []
    for f in findings:
        names = [k for k in kernels if migrated_function(k) in (f.function + " " + f.text)
                 or f.function.split("(")[0].split("::")[-1] == migrated_function(k)]
        if not names and len(kernels) == 1:
            names = kernels
        for k in names or [""]:
            out[k].append(f)
    return out


#: findings kept per side and tool in ``check.sanitizer`` (the tool prints up to 50 a run)
KEEP = 10


def judge(check, original: list[Finding], migrated: list[Finding], tools: tuple[str, ...],
          unfinished: set | frozenset = frozenset()) -> None:
    """Fold the sanitizer findings of one kernel into its check (``check.sanitizer``,
    ``check.status``, ``check.message``). ``unfinished``: the tools under which a side did not
    run to its end (a fault that ends the process: only memcheck stops the access itself), which
    are therefore not called clean."""
    check.sanitizer = []
    for side, found in (("original", original), ("migrated", migrated)):
        for tool in tools:
            check.sanitizer += [dict(f.to_json(), side=side) for f in found if f.tool == tool][:KEEP]
    errors_o = [f for f in original if f.severity == "error"]
    tools_o = {f.tool for f in original}
    own = [f for f in migrated if f.severity == "error" and f.tool not in tools_o]
    shared = [f for f in migrated if f.tool in tools_o]
    notes = []
    if original:
        first = errors_o[0] if errors_o else original[0]
        what = WHAT.get(first.tool, first.tool)
        finding = f"M4031: the original has {what} (compute-sanitizer {first})"
        check.findings.append(finding)
        if check.status == "fail":
            check.status = "error"
            check.message = (f"{finding}: its outputs are not defined, so the check cannot judge the migration. "
                             f"Compared with the migrated kernel: {check.message}")
        else:
            notes.append(finding)
    if shared:
        notes.append(f"the migrated kernel shares the original's {', '.join(sorted({f.tool for f in shared}))} findings")
    if own:
        first = own[0]
        msg = (f"M4030: the migrated kernel has {WHAT.get(first.tool, first.tool)} that the original does not "
               f"(compute-sanitizer {first})")
        check.findings.append(msg)
        if check.status == "pass":
            check.status = "fail"
            check.message = msg + (f"; the outputs matched ({check.message})" if check.message else "")
        else:
            notes.append(msg)
    clean = [t for t in tools if t not in tools_o and t not in {f.tool for f in migrated} and t not in unfinished]
    if unfinished:
        notes.append(f"compute-sanitizer {', '.join(t for t in tools if t in unfinished)}: a side did not run to its "
                     "end under it (its findings say why)")
    if clean:
        notes.append(f"compute-sanitizer {', '.join(clean)}: clean on both sides")
    if notes:
        check.message = "; ".join([check.message] + notes) if check.message else "; ".join(notes)
