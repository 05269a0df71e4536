"""Results of running a kernel: :class:`RunResult` and :class:`Finding`.

``RunResult.status`` is one of

============== =================================================================================
ok             the kernel ran to completion; ``outputs`` holds every out/inout buffer
compile_error  the source (with the generated launcher) did not compile; ``message`` has the log
launch_error   the spec does not fit the kernel (argument count, pointer vs value, a value that
               does not fit), or the launch configuration is invalid
oob            an out-of-bounds access of a kernel buffer (or of dynamic shared memory);
               ``findings`` names the buffer, element, access and thread
crash          the kernel died: a wild pointer, integer division by zero, abort/assert,
               ``__trap()``, a thread stack overflow, or a GPU error
deadlock       every remaining thread of a block waits at a barrier nobody else reaches
timeout        the run did not finish within the time limit (an infinite loop, a spin-wait
               on another block, ...)
unavailable    the executor cannot run here (no compiler, no GPU)
============== =================================================================================

``deadlock`` and ``timeout`` are both hangs (:attr:`RunResult.hung`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["RunResult", "Finding", "STATUSES"]

STATUSES = ("ok", "compile_error", "launch_error", "oob", "crash", "deadlock", "timeout", "unavailable")


@dataclass
class Finding:
    """Something found about the original code while running it.

    ``kind``: ``oob`` | ``stack_overflow`` | ``signal`` | ``deadlock`` | ``timeout`` |
    ``spec_mismatch`` (a warning from the launcher, e.g. element type of a pointer) | ``output`` |
    ``memory`` | ``excluded`` (functions left out of the build because they do not compile).
    """

    kind: str
    message: str
    severity: str = "error"           # "error" | "warning"
    buffer: str | None = None
    index: int | None = None
    access: str | None = None         # "read" | "write"
    thread: tuple | None = None
    block: tuple | None = None
    details: dict = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


@dataclass
class RunResult:
    """What one run of one kernel produced."""

    status: str
    outputs: dict = field(default_factory=dict)
    findings: list = field(default_factory=list)
    message: str = ""
    stdout: str = ""
    stderr: str = ""
    device: str = "cpu"
    schedule: str = "forward"
    seed: int | None = None
    elapsed: float = 0.0              # seconds the kernel ran (inside the worker)
    per_launch: float | None = None   # seconds per launch when run with repeat= (timing)
    library: str | None = None        # the compiled shared library

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def hung(self) -> bool:
        return self.status in ("deadlock", "timeout")

    def __str__(self) -> str:
        s = f"{self.status}"
        if self.message:
            s += f": {self.message}"
        return s
