"""The registry of diagnostic codes: each code once, with its severity, meaning and fix.

Codes are stable: tests, reports and users' ``--suppress`` lists refer to them. Ranges:
M1xxx frontend (reading and modelling CUDA), M2xxx analysis, M3xxx emission, M4xxx runtime checks,
M5xxx ONNX model conversion (``migrate onnx``), M9xxx the tool itself (files, options).
"""
from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    NOTE = "note"
    WARNING = "warning"
    ERROR = "error"


@dataclass(frozen=True, slots=True)
class Code:
    code: str
    severity: Severity
    title: str
    explanation: str
    fix: str


_CODES = [
    # -- reading files ---------------------------------------------------------------------------
    Code("M1001", Severity.ERROR, "CUDA source does not compile",
         "clang reported an error inside a kernel or a device function it calls; the kernel cannot be "
         "modelled until the code is valid CUDA.",
         "Fix the error in the source, or pass the -I/-D flags (or -p with compile_commands.json) the "
         "project builds with."),
    Code("M1002", Severity.ERROR, "not a text file",
         "The file has NUL bytes or is not valid UTF-8/Latin-1 text; it is not CUDA source.",
         "Exclude it with --exclude, or rename it if it is not meant to be a .cu/.cuh file."),
    Code("M1003", Severity.NOTE, "no kernels in file",
         "The file holds no __global__ function; nothing is migrated from it (its device functions "
         "are modelled when a kernel elsewhere calls them).",
         "Nothing to do."),
    Code("M1004", Severity.ERROR, "file too large",
         "The file is larger than the size limit; such files are usually generated or not source.",
         "Raise the limit with --max-file-size, or exclude the file."),
    Code("M1005", Severity.WARNING, "header not found",
         "An #include could not be resolved; it was read as an empty file so that the rest of the "
         "file could be parsed. Declarations it should provide are missing.",
         "Pass the include folder with -I, or a compile_commands.json with -p."),
    Code("M1006", Severity.WARNING, "host code does not compile",
         "clang reported an error in host code (outside every kernel); kernels are still modelled, "
         "but launch sites in that code may be missing.",
         "Pass the -I/-D flags the project builds with, or fix the host code."),
    Code("M1007", Severity.ERROR, "file cannot be read",
         "The file could not be opened or decoded.",
         "Check the path and its permissions."),
    Code("M1008", Severity.NOTE, "header found in the program's folders",
         "An #include reached neither a file beside its includer nor one in a -I folder, and the "
         "program's own tree holds exactly one nearest copy (a sibling include/ folder, a library "
         "shipped with the program): that copy was read, its folder searched as a -I folder.",
         "Nothing to do when that is the header the build uses; else pass the right folder with -I "
         "(or -p with compile_commands.json)."),
    # -- constructs the model does not represent -------------------------------------------------
    Code("M1101", Severity.ERROR, "unknown type",
         "A type used by the kernel is neither a CUDA/C++ builtin nor declared in the code the "
         "frontend can see.",
         "Declare the type, or pass the include folder (-I) of the header that does."),
    Code("M1201", Severity.ERROR, "inline PTX assembly",
         "asm() statements have no TileLang equivalent; the kernel keeps running as CUDA.",
         "Replace the assembly with the CUDA intrinsic it implements, or keep the kernel in CUDA "
         "(hybrid project)."),
    Code("M1202", Severity.ERROR, "texture or surface object",
         "Texture and surface fetches (tex1Dfetch, tex2D, surf2Dread, ...) are not modelled.",
         "Read the data through a plain pointer (const __restrict__ / __ldg) instead."),
    Code("M1203", Severity.ERROR, "dynamic parallelism",
         "A kernel launches another kernel from device code; TileLang kernels cannot launch kernels.",
         "Move the launch to the host."),
    Code("M1204", Severity.ERROR, "recursion",
         "A device function calls itself, directly or through others; TileLang inlines device code "
         "and cannot express recursion.",
         "Rewrite the recursion as a loop with an explicit stack."),
    Code("M1205", Severity.ERROR, "goto",
         "goto and labels have no structured equivalent in TileLang.",
         "Rewrite the jump as a loop with break/continue or a flag."),
    Code("M1206", Severity.ERROR, "unsupported construct",
         "The kernel uses a C++ construct the kernel model does not represent (named in the message).",
         "Rewrite the construct in plain C-style CUDA, or keep the kernel in CUDA (hybrid project)."),
    Code("M1207", Severity.ERROR, "call to unknown function",
         "A kernel calls a function whose body the frontend cannot see and that is not part of the "
         "CUDA API it knows.",
         "Make the __device__ function's definition visible (include its header), or check the name."),
    Code("M1208", Severity.WARNING, "template never instantiated",
         "A templated kernel has no launch site or explicit instantiation in the code, so its "
         "template arguments are unknown.",
         "Launch it from host code in the same file, or give the instance in the kernel's spec."),
    Code("M1209", Severity.ERROR, "function pointer or virtual call",
         "Calls through function pointers or virtual functions are not modelled.",
         "Call the device function directly, or dispatch with a switch."),
    Code("M1210", Severity.ERROR, "device-side memory allocation",
         "malloc/free/new/delete in device code cannot be migrated.",
         "Allocate on the host and pass the buffer to the kernel."),
    # -- emission ---------------------------------------------------------------------------------
    Code("M3001", Severity.ERROR, "no TileLang form",
         "The kernel (or a device function it calls) uses a construct that neither the portable nor "
         "the thread-level (simt) TileLang form can express yet; the message names it. The kernel "
         "keeps running as CUDA.",
         "Rewrite the construct (the message says which), or keep the kernel in CUDA (hybrid project)."),
    Code("M3002", Severity.NOTE, "kept at thread level (simt)",
         "The kernel is emitted as thread-level TileLang (T.get_thread_bindings, T.sync_threads, "
         "warp shuffles) because the portable form, one T.Parallel phase per barrier interval, "
         "cannot express it. Thread-level TileLang runs on GPUs only, so its equivalence is checked "
         "on a GPU.",
         "Nothing is required. To make the kernel portable, keep barriers out of thread-dependent "
         "branches and replace warp intrinsics with shared-memory exchanges."),
    # -- the tool ---------------------------------------------------------------------------------
    Code("M3003", Severity.NOTE, "not lifted to tile form",
         "The kernel is emitted in the portable form (its CUDA thread structure kept as T.Parallel "
         "phases) because the lifting passes cannot prove a tile form equal to it; the message says "
         "which condition failed (threads that are not independent, a store that could race, an "
         "index that depends on loaded data, buffers that may alias, a warp-shuffle tree it cannot "
         "prove a reduction: a partial mask, offsets that do not halve from warpSize / 2, a combine "
         "that is not a sum, max or min, an atomic that every lane runs; a pattern not recognised).",
         "Nothing is required; the portable form is checked like any other. Marking pointers "
         "__restrict__ and indexing elements through blockIdx * blockDim + threadIdx helps."),
    Code("M3004", Severity.WARNING, "lifted form failed its check; portable form kept",
         "The tile form of the kernel did not agree with the original CUDA on the equivalence check "
         "(`convert --check`), so the portable form was emitted instead and checked in its place. "
         "The message gives the tile form's result.",
         "Nothing is required; please report the kernel, since a lift that the analysis accepted "
         "should agree."),
    Code("M3005", Severity.NOTE, "buffer kept flat",
         "A lifted kernel indexes this buffer as rows (an index scaled by a scalar parameter, "
         "`A[row * K + k]`), but the guards and loop bounds around one access do not prove the "
         "index inside its row (`0 <= k < K`), so the buffer stays a flat 1-D tensor instead of a "
         "shaped `T.Tensor((M, K))`. The kernel is exactly as correct; the message names the access "
         "and the bound that is missing.",
         "Nothing is required. To get a shaped tensor, guard the access with the bound the message "
         "names (e.g. `if (k < K)`), or loop only up to it."),
    Code("M3006", Severity.NOTE, "lifted on the CUDA's race rule",
         "The kernel is lifted to tile form although the analysis could not prove that its "
         "elements store to different places (an index it cannot follow, a scatter through loaded "
         "data, two stores that may meet). Each element is one CUDA thread and there is no "
         "barrier, so two elements storing to one place are two CUDA threads racing, whose outcome "
         "CUDA leaves open too; each element keeps its own accesses in program order. For every run "
         "of the CUDA without a data race the two forms agree; the message names the store. Kernels "
         "whose loops run several elements in one thread (grid-stride loops, register micro-tiles), "
         "that read where another element may store, or that store to places an atomic hands out "
         "are lifted only with the proof.",
         "Nothing is required when the CUDA is race-free. If its threads do store to one place on "
         "purpose (a flag every thread sets to the same value is fine; different values are not), "
         "use an atomic."),
    Code("M3008", Severity.NOTE, "kept as CUDA (hybrid form)",
         "The kernel has no TileLang form (the reason is in its other diagnostics), so its module "
         "keeps it as its original CUDA: the source file (copied beside the module) is compiled by "
         "TileLang's nvcc with the kernel's definition copied as a device function and called from an "
         "entry that T.CUDASourceCodeKernel launches. The factory, Signature, launcher and KERNELS "
         "entry are those of a migrated kernel, so calling code cannot tell the difference; the "
         "kernel runs on GPUs only and never counts as converted. The message names the include "
         "folders and macros the build needs.",
         "Nothing is required. `migrate convert --verify-hybrid` builds every hybrid kernel with nvcc "
         "and keeps those that do not build unsupported (M3009)."),
    Code("M3009", Severity.ERROR, "no hybrid form",
         "The kernel has no TileLang form and cannot be kept as CUDA behind a migrated launcher "
         "either: a parameter no tensor or scalar can carry (a reference, a function pointer, a type "
         "of unknown size), a global the program's host code fills (`__constant__` without an "
         "initialiser, `__device__` state), a definition whose text the tool cannot find, or, with "
         "`--verify-hybrid`, a wrapper nvcc does not build (the message gives nvcc's first error, "
         "file:line).",
         "Keep the kernel in the CUDA program, or give nvcc what it needs (-I, -D, -p); a parameter "
         "passed by reference can be passed by value or pointer."),
    # -- runtime checks ------------------------------------------------------------------------
    Code("M3007", Severity.NOTE, "warp-synchronous code run as lockstep steps",
         "The kernel (or a device function it calls) exchanges values between the threads of a warp "
         "through volatile shared memory with no barrier between, relying on the warp running each "
         "statement in lockstep (the last warp of a tree reduction, a warp scan). Each such store "
         "runs as that step: the threads' reads into a local, a barrier, their writes, a barrier "
         "(a branch only some threads take is taken apart around them). The CPU executor runs a "
         "warp's threads one after another, not in lockstep, so the CPU check cannot judge the "
         "original and skips the kernel; the GPU check compares it.",
         "Nothing is required; check the kernel with --device cuda. Writing __syncwarp() between "
         "the steps in the CUDA makes it correct on every GPU and checkable on the CPU."),
    Code("M4001", Severity.WARNING, "the program's recording run failed",
         "With --run (or a cuda2tile.toml [run]) the program that holds this kernel is built and its "
         "main() runs to record its launches. It did not build, crashed, or exited with a non-zero "
         "status; the message gives the reason and whether this kernel was launched, and so checked "
         "on a recorded launch, before that. A kernel it did not launch has no replayed check.",
         "Give the program what its run needs: the arguments (--run or cuda2tile.toml [run] args), "
         "its input files in its folder or its working folder ([run] cwd), the include folders and "
         "macros of its build (-I, -D, -p); a program sized for a GPU may need --record-on cuda."),
    Code("M4002", Severity.NOTE, "the program's recording run reached its time limit",
         "The program's recording run was stopped at --run-timeout (or [run] timeout); the launches "
         "recorded by then were replayed. The message says whether this kernel was launched before "
         "the limit.",
         "Nothing is required. For a kernel that was not reached, give the run a longer time, smaller "
         "arguments, or --record-on cuda."),
    # -- checked coverage (M4003-M4009) ------------------------------------------------------------
    Code("M4003", Severity.NOTE, "a branch of the migrated kernel was not run by its check",
         "A tile-form kernel has a full-tile branch (what GPUs run at real sizes) and a last-tile "
         "branch. The check runs the kernel at the spec's sizes with its own tile and again with a "
         "smaller tile chosen so that full tiles, a partial last tile, and rows and columns partial "
         "alone occur (report.json check.coverage). This branch ran in none of those runs, so the "
         "check says nothing about it.",
         "Give the spec larger sizes (several tiles along each dimension, not a multiple of the "
         "tile), or check the kernel on its program's own launches (--run)."),
    # -- limits and isolation of parses and runs (M4010-M4029) ---------------------------------
    Code("M4010", Severity.ERROR, "a kernel run reached its time limit",
         "The original or the migrated kernel (the message says which) ran longer than --timeout "
         "seconds on the check's inputs; it was killed with its whole process group and the other "
         "kernels were checked normally. An infinite loop, or a thread waiting for a value no thread "
         "writes, looks like this.",
         "Fix the loop or the spec's sizes; give a slow kernel more time with --timeout SECONDS."),
    Code("M4011", Severity.ERROR, "a kernel run crashed",
         "The original or the migrated kernel (the message says which) killed its process (the signal "
         "is named: SIGSEGV, SIGABRT, ...). Only this kernel's check is lost: the worker is started "
         "again for the kernels after it.",
         "Look for an out-of-bounds or null access in the kernel named, or a spec whose sizes do not "
         "match what the kernel indexes."),
    Code("M4012", Severity.ERROR, "a kernel run ran out of memory",
         "A run of the original or the migrated kernel on the CPU needed more than --max-memory bytes of "
         "address space; it was stopped and the other kernels were checked normally.",
         "Give the spec smaller sizes, or raise the limit with --max-memory (e.g. 16GiB; 0 for none)."),
    Code("M4013", Severity.ERROR, "parsing the file reached its time limit",
         "libclang did not finish reading the file within --timeout seconds (an exponentially "
         "expanding macro, a huge generated include); the parser was killed and the other files "
         "were converted.",
         "Fix the macro, exclude the file (--exclude), or raise --timeout."),
    Code("M4014", Severity.ERROR, "parsing the file ran out of memory",
         "libclang needed more than --max-memory bytes to read the file (typically a macro whose "
         "expansion doubles at each level); the parser was stopped and the other files were converted.",
         "Fix the macro, exclude the file (--exclude), or raise --max-memory."),
    Code("M4015", Severity.WARNING, "code left out of the original's build",
         "Function bodies of the original file do not compile for the CPU executor (host code, or a "
         "kernel other than the one checked); they were replaced by a trap so that the kernels whose "
         "own code compiles are still checked. The message names the functions and their lines. A "
         "checked kernel that calls one of them fails with a trap.",
         "Fix the code named, or pass the -I/-D flags the project builds with."),
    # -- compute-sanitizer findings (M4030-M4039) ---------------------------------------------------
    Code("M4030", Severity.ERROR, "the migrated kernel fails a compute-sanitizer check",
         "With `migrate check --device cuda --sanitize`, both sides of each checked kernel run again "
         "under compute-sanitizer's memcheck (invalid accesses), racecheck (shared-memory races), "
         "synccheck (invalid barriers) and initcheck (reads of unwritten global memory). The migrated "
         "kernel has a finding of a tool that finds nothing in the original: a defect of the migration "
         "even where the outputs matched (a missing barrier races only on some runs). The check fails; "
         "report.json check.sanitizer lists both sides' findings with function, line, thread and block.",
         "Look at the statement the finding names in the migrated module (its `# L<n>` gives the CUDA "
         "line); a race usually means a barrier (`T.sync_threads()`) is missing between two phases."),
    Code("M4031", Severity.WARNING, "the original kernel fails a compute-sanitizer check",
         "The original CUDA kernel itself has a compute-sanitizer finding (a race, an invalid access, a "
         "read of uninitialised memory): what it computes is not defined, so a comparison that differs "
         "is reported as an error naming the finding, not as a failure of the migration; findings the "
         "migrated kernel shares with the original are the original's.",
         "Fix the original (the finding names its line), or give the spec sizes that stay in bounds."),
    # -- kernel specs (M4100-M4149) -----------------------------------------------------------------
    Code("M4100", Severity.ERROR, "the spec file cannot be read",
         "The spec (NAME.toml beside the source, or --spec FILE) is not valid TOML, cannot be read, "
         "or holds no [[kernel]] table. Every kernel of the file it is for is marked error; other "
         "files are still checked, and migrate check exits 2.",
         "Fix the TOML at the line given (format in corpus/README.md)."),
    Code("M4101", Severity.ERROR, "unknown key in a spec",
         "A [[kernel]], [[kernel.args]] or [[kernel.symbols]] table has a key the format does not "
         "know (a typo is not ignored: it would silently check other sizes than meant). The message "
         "names the nearest valid key. Only the kernel of that table is marked error.",
         "Rename the key to the one suggested, or remove it."),
    Code("M4102", Severity.ERROR, "a spec value is missing or has the wrong type",
         "A required key is absent, or a value is not of its type (a float such as 1e12 for "
         "'elements', a string for an integer 'value', an unknown dtype or tolerance class). Only the "
         "kernel of that table is marked error.",
         "Give the value the type corpus/README.md states (integers without a decimal point)."),
    Code("M4103", Severity.ERROR, "a spec value is out of its range",
         "A size is zero or negative, a grid or block exceeds CUDA's limits, a scalar does not fit "
         "its dtype, a range is empty or all zero, or two tables share an id. Only the kernel of "
         "that table is marked error.",
         "Give a value inside the range the message states."),
    Code("M4104", Severity.ERROR, "a spec's buffers exceed the check's memory limit",
         "The buffers and symbols of one kernel spec add up to more bytes than --max-check-bytes "
         "(default 4 GiB); the check would allocate them several times over (inputs, both sides' "
         "outputs), so it refuses instead of exhausting the machine's memory.",
         "Give smaller sizes (the check needs only a few tiles per dimension), or raise "
         "--max-check-bytes on a machine with the memory."),
    Code("M4105", Severity.ERROR, "the spec names a kernel the source does not have",
         "A [[kernel]] table's name is no __global__ function of the file the spec is for (a typo, "
         "or a kernel renamed since the spec was written). The message names the nearest kernel.",
         "Correct 'name' to a kernel of the file."),
    # -- ONNX models (migrate onnx, migrate/onnx/) --------------------------------------------------
    Code("M5001", Severity.ERROR, "the ONNX model cannot be read",
         "onnx.load, onnx.checker or onnx.shape_inference (strict mode) rejected the file: it is no "
         "ONNX model, it is invalid, or an operator's inputs have inconsistent types or shapes. "
         "Nothing was converted.",
         "Check the model with `python -c \"import onnx; onnx.checker.check_model('MODEL.onnx', full_check=True)\"`."),
    Code("M5002", Severity.ERROR, "a tensor of the ONNX model has no known shape",
         "Shape inference left a tensor's shape or element type unknown, or a tensor is a sequence or "
         "optional value, or one of its dimensions is neither a number nor made from the dimensions the "
         "model declares by name on its inputs (dim_param: batch, seq) by a view, an elementwise op, "
         "MatMul, Transpose or Slice. Declared dimensions themselves stay symbolic; nothing was converted.",
         "Declare the dynamic dimensions on the graph inputs (export with dynamic_axes), or fix them "
         "(onnx.tools.update_model_dims, or export with fixed input shapes)."),
    Code("M5003", Severity.WARNING, "an ONNX node runs in torch (no TileLang form yet)",
         "The node's operator, or its attributes or element types, has no TileLang form in this "
         "slice; the emitted Model runs it with torch so the model still runs. The message gives the "
         "reason; report.json `nodes` marks it `fallback`.",
         "Nothing to do to run the model; the kernel is missing from the TileLang side."),
    Code("M5004", Severity.ERROR, "an ONNX node has neither a TileLang form nor a torch fallback",
         "The operator (or this use of its attributes) is in neither the TileLang operator table nor "
         "the torch fallback table (migrate/onnx/fallback.py); the model cannot run. No module was "
         "written (report.json lists the nodes and says which).",
         "Rewrite the node with supported operators, or add a row to the fallback table."),
    Code("M5005", Severity.NOTE, "a float32 GEMM runs on tf32 tensor cores",
         "--allow-tf32 was given: float32 MatMul/Gemm groups use T.gemm, which rounds operands to "
         "tf32 (10-bit mantissas) on NVIDIA tensor cores; the check compares them in the tf32 "
         "tolerance class.",
         "Leave out --allow-tf32 for exact float32 GEMMs (a non-tensor-core reduction)."),
    Code("M5006", Severity.ERROR, "the converted model differs from onnxruntime",
         "On the same inputs the converted model's output (or a group's intermediate) differs from "
         "onnxruntime's beyond the dtype's tolerance; the message names the first group that differs "
         "and the first differing element.",
         "Report it with the model; the group's kernel is in OUT/<model>.py."),
    Code("M5007", Severity.ERROR, "the --inputs file does not fit the model",
         "The .npz given with --inputs lacks one of the graph's inputs, or holds one of another shape "
         "or element type.",
         "Save one array per graph input, named as the input, with its shape and dtype."),
    Code("M5008", Severity.ERROR, "the ONNX check could not run",
         "onnxruntime is not installed, or it, TileLang or the converted model failed while running "
         "the check; the message gives the error.",
         "Install onnxruntime (pip install 'cuda2tile[onnx]'); else report the error with the model."),
    Code("M5009", Severity.NOTE, "a fused group is specialised per value of a declared dimension",
         "The group's kernel needs the value of a dimension the model declares by name (a Slice "
         "clamped to a dynamic sequence length, say), so it cannot take it as a T.dynamic extent: the "
         "Model emits its TileLang on the first call with each value (from OUT/<model>.groups.pkl, "
         "with migrate.onnx.specialise) and compiles it then; every other group serves all values "
         "with one kernel. report.json's group lists the dimensions under `specialised`.",
         "Nothing to do; a model called with few distinct sizes compiles few kernels."),
    Code("M9001", Severity.ERROR, "internal error",
         "The tool failed on this input; this is a bug in cuda2tile, not in your code.",
         "Report it with the file that triggered it."),
    Code("M9002", Severity.ERROR, "bad compile_commands.json",
         "The compilation database given with -p could not be read.",
         "Check that -p names the folder that holds compile_commands.json and that it is valid JSON."),
    Code("M9003", Severity.WARNING, "bad cuda2tile.toml",
         "A program's run settings (cuda2tile.toml beside its main file: [run] args, timeout, cwd) could "
         "not be read; the program is run as if the file were not there (with --run's arguments, if given).",
         "Fix the file: valid TOML, only the keys args (a string), timeout (seconds) and cwd (a folder "
         "inside the program's folder) under [run]."),
    # -- the output folder (migrate/outdir.py) -------------------------------------------------
    Code("M9004", Severity.ERROR, "output folder overlaps the sources",
         "OUT is one of the source folders or files given to migrate convert, or contains one of them: "
         "the mirrored modules, the copies of the sources and the reports would land among the sources. "
         "Nothing was written. An OUT inside a source folder is fine (it is skipped when scanning).",
         "Choose an output folder that is not a source folder and holds no source, e.g. "
         "`migrate convert src -o src/out` or `-o out`."),
    Code("M9005", Severity.ERROR, "output folder holds files cuda2tile did not write",
         "OUT exists and holds files that are not in its manifest (OUT/.cuda2tile-manifest.json, the "
         "list of what cuda2tile wrote there), so converting into it could overwrite or mix with "
         "your files. Nothing was written. A re-run into the folder of an earlier conversion needs no "
         "option; files of the earlier run that this run does not produce are removed (files cuda2tile "
         "did not write never are).",
         "Choose another output folder, remove those files, or pass --force to convert anyway (your "
         "files are kept, except those whose names the conversion writes)."),
    Code("M9006", Severity.WARNING, "flags differ from the conversion's",
         "migrate check/bench --from OUT was given -I/-D flags that differ from those OUT was converted "
         "with (report.json `build`). The migrated modules were made with the recorded macros and "
         "include folders, so the original is now compiled as a different program from the one that "
         "was migrated. Without -I/-D the recorded flags are used; given ones are added to them (a "
         "given -D replaces the recorded value of the same macro).",
         "Give no -I/-D (the recorded flags are used), or convert again with the flags you mean."),
    Code("M9007", Severity.WARNING, "two sources map to one module name",
         "Module names replace every character that cannot be in a Python name by `_` (`a-b.cu` and "
         "`a_b.cu` both become `a_b.py`). The later file, in path order, is written as `a_b_2.py` "
         "(report.json files[].output names it), so neither overwrites the other.",
         "Nothing is required; rename one of the files for a module name of its own."),
    Code("M9008", Severity.ERROR, "file name is not UTF-8",
         "The name of the file (or of a folder above it) holds bytes that are not UTF-8 (a Latin-1 name "
         "on Linux); the reports, which are UTF-8, cannot name it, so the file is not converted. The "
         "message shows the name with those bytes escaped.",
         "Rename the file or folder to UTF-8 (e.g. `convmv -f latin1 -t utf8`), or exclude it."),
    # -- limits and isolation: the parser's process (M9030-M9039) ----------------------------
    Code("M9030", Severity.ERROR, "the parser process died",
         "The process parsing this file was killed by a signal or exited without a result (a crash "
         "of libclang); the other files were converted. This is a bug in cuda2tile or libclang.",
         "Report it with the file; exclude the file (--exclude) meanwhile."),
]

CODES: dict[str, Code] = {c.code: c for c in _CODES}
assert len(CODES) == len(_CODES), "duplicate diagnostic code"


def lookup(code: str) -> Code:
    return CODES[code]


def markdown() -> str:
    """The diagnostics reference page (docs/diagnostics.md), generated from this registry."""
    lines = ["# Diagnostic codes", "",
             "Generated from `migrate/codes.py` by `python -m migrate.codes`; do not edit by hand.",
             "`migrate explain CODE` prints the same text.", ""]
    for c in _CODES:
        lines += [f"## {c.code}: {c.title} ({c.severity.value})", "", c.explanation, "",
                  f"**Fix:** {c.fix}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
