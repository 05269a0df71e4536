"""What comparing two runs' standard output ignores and reads as a verdict (tables as data)."""
from __future__ import annotations

#: a line matching one of these (case-insensitive regular expressions) reports time or speed and
#: is not compared
TIME_LIKE = (
    r"\btimes?\b", r"\btimings?\b", r"\belapsed\b", r"\bms\b", r"\bmsecs?\b", r"\bmillisec", r"\bus\b",
    r"\busecs?\b", r"\bmicrosec", r"\bns\b", r"\bsecs?\b", r"\bseconds?\b", r"[GMT]B/s", r"\bGiB/s",
    r"[GMT]FLOP", r"\bflops\b", r"\bbandwidth\b", r"\bthroughput\b", r"\bspeed-?up\b", r"\bperf(ormance)?\b",
    r"\bduration\b", r"\bruntime\b", r"\brate\b", r"\bcycles\b", r"\bclocks?\b", r"\bMlups\b", r"\bGUPS\b",
    r"\bfps\b", r"\bits/s\b", r"\bops/s\b", r"\bkernel exec", r"\bdevice\s*:", r"\bgpu\s*:", r"\bdevice name\b",
    # (seen on pool programs, 2026-12-07: rsbench "Lookups/s", keccaktreehash "CPU speed : .. kB/s",
    # su3 "GByte/s" and "Approximate memory usage = .. MiB" (the process's, larger once TileLang is
    # linked in), lavaMD "0.35 s" alone on its line)
    r"\b\w*(bytes?|B|ups|ops|items|elements|keys|rays|samples)/s\b", r"\bspeed\b", r"\bmemory usage\b",
    r"\d\s?s\s*$",
    # rtm8's elapsed wall time "dt = 0.646979" (its own t1 - t0)
    r"^\s*dt\s*=",
    # a clock time of day (lebesgue prints the date and time it starts and ends)
    r"\b\d{1,2}:\d{2}:\d{2}\b",
    # how much of its streams' copies and kernels overlapped, a share of its timings (base64e,
    # 2026-12-07: "Avg Overlap = 27.1 %" then 33.6 %, the program passing both times)
    r"\boverlap\b.*%",
)

#: a line matching one of these (case-insensitive) prints a distance between two results (the
#: program's largest difference from its own reference): its floats are in the units of the data,
#: not of themselves, and compare within the class's rtol as an absolute bound (data of order one)
#: instead of relative to the printed error, which a rounding near zero cannot meet (stencil1d,
#: 2026-12-07: "max abs error 3.57628e-07" rebuilt against 2.38419e-07, one float32 ulp at 2)
ERROR_LIKE = (
    r"\berr(or)?s?\b", r"\bdiff(erence)?s?\b", r"\bresiduals?\b", r"\bdeviations?\b", r"\bdiscrepanc(y|ies)\b",
)

#: words that state the program's own verdict (matched as whole words); the first on a line decides
VERDICT_WORDS = {
    "PASS": "pass", "PASSED": "pass", "Pass": "pass", "Passed": "pass", "passed": "pass", "pass": "pass",
    "SUCCESS": "pass", "Success": "pass", "success": "pass", "SUCCESSFUL": "pass", "successful": "pass",
    "CORRECT": "pass", "Correct": "pass", "correct": "pass",
    "FAIL": "fail", "FAILED": "fail", "Fail": "fail", "Failed": "fail", "failed": "fail", "fail": "fail",
    "FAILURE": "fail", "failure": "fail",
    "INCORRECT": "fail", "Incorrect": "fail", "incorrect": "fail", "MISMATCH": "fail", "Mismatch": "fail",
    "WRONG": "fail", "wrong": "fail",
}

#: the tolerance class of a kernel by the element types of its buffers, loosest first: the loosest
#: class among a program's migrated kernels judges its printed floats
CLASS_BY_DTYPE = (("bfloat16", "bf16"), ("float16", "fp16"), ("float32", "fp32_accum"), ("float64", "fp64"))

#: classes from the tightest to the loosest
CLASS_ORDER = ("exact", "fp64", "fp32", "fp32_accum", "tf32", "fp16", "bf16")
