"""The outcome of one kernel's equivalence check (:class:`KernelCheck`), and why a kernel is not
checked on a device at all (:func:`form_skip`), shared by the checks on spec inputs
(:mod:`.checker`) and on a program's recorded launches (:mod:`.trace_check`)."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

#: check device -> (the device the original runs on, the TileLang target of the migrated kernel)
DEVICES = {"cpu": ("cpu", "c"), "cuda": ("gpu", "cuda")}

#: the status of a run that did not end -> its diagnostic code (migrate/codes.py)
RUN_CODES = {"timeout": "M4010", "crash": "M4011", "memory": "M4012"}


@dataclass
class KernelCheck:
    file: str
    kernel: str
    id: str
    device: str
    status: str  # pass, fail, skipped, error
    max_abs_err: float | None = None
    max_rel_err: float | None = None
    first_mismatch: dict | None = None
    seed: int | None = None
    tolerance: str = ""
    message: str = ""
    findings: list = field(default_factory=list)
    seconds: float = 0.0
    inputs: str = "spec"  # what the kernel ran on: "spec" (a spec file), "trace" (the program's own launches)
    launch: int | None = None  # with "trace": the recorded launch the message speaks of
    run: str = ""  # with "trace": how the program's recording run ended ("ran to completion", "timed out", ...)
    code: str = ""  # the diagnostic code of an error that is the input's fault (M41xx: a bad spec)
    at: str = ""  # with code: FILE:LINE of the spec the error is about
    coverage: list = field(default_factory=list)  # branches of the migrated kernel and whether a run took them
    sanitizer: list = field(default_factory=list)  # with --sanitize: compute-sanitizer findings of both sides (sanitize.py)

    def to_json(self) -> dict:
        return asdict(self)


def form_skip(form: str | None, device: str, reason: str = "", lockstep: bool = False) -> str | None:
    if form is None:
        return "the migrated module has no kernel of this name"
    if form == "unsupported":
        return f"not migrated: {reason}" if reason else "not migrated"
    if form == "hybrid" and device == "cpu":
        why = f", not migrated: {reason}" if reason else ""
        return (f"hybrid: runs only on a GPU (the kernel is kept as its CUDA behind the migrated launcher{why}; "
                "it has no CPU form); check it with --device cuda")
    if form == "simt" and device == "cpu":
        return ("not checkable on CPU: thread-level (simt) TileLang runs on GPUs only "
                "(TileLang's c target has no SIMT threads); check it with --device cuda")
    if lockstep and device == "cpu":
        return ("not checkable on CPU: the original is warp-synchronous (M3007), and the CPU executor "
                "runs a warp's threads one after another, not in lockstep; check it with --device cuda")
    return None


def spec_error_check(display: str, kernel: str, device: str, err, shown_path: str | None = None) -> KernelCheck:
    """The check of a kernel whose spec is bad (a :class:`~.spec.SpecError`): error, with its code
    and the spec's FILE:LINE (``shown_path``: the spec as the user knows it, not its copy in OUT).
    A spec the tool derived (``NAME.auto.toml``, sizes of the program's own launch sites) is no
    input error: its kernel is skipped, with the same code and message."""
    path = shown_path or err.path
    at = f"{path}:{err.line}" if err.line else path
    what = f"{err.where}: {err.message}" if err.where else err.message
    derived = str(path).endswith(".auto.toml")
    return KernelCheck(display, kernel, kernel, device, "skipped" if derived else "error", code=err.code, at=at,
                       message=f"{err.code} bad spec {at}: {what}"
                               + ("; sizes derived from the launch sites: state smaller ones in a spec file" if derived else ""))
