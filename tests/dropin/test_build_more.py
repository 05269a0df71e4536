"""migrate build on the tests' own programs written the way the real-code pool's are where the
pool's first builds failed: a kernel with a parameter of its own name (its shim launches the
original through a pointer) and dynamic shared memory sized at run time under a constant grid and
block (the launcher's default of 0 shared bytes is not trusted: the geometry is recorded), and a
kernel that nvcc accepts only with the program's own --expt-relaxed-constexpr (its
compile_commands.json entry's flags that change what nvcc builds are kept), and a parameter list
ending in a comment."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.paths import FIXTURES

pytestmark = [pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc"),
              pytest.mark.slow]  # nvcc builds 2 objects and 4 executables (1-4 minutes on 2 cores)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from migrate.cli import main
    from migrate.dropin.build import build_folder

    root = tmp_path_factory.mktemp("dropin_more")
    out, dest, src = root / "out", root / "build", root / "src"
    shutil.copytree(FIXTURES / "dropin_more", src)
    flags = {"relaxed/clamp.cu": "-Xcompiler -Wall -arch=sm_60 --expt-relaxed-constexpr -O3",
             "clash/offset.cu": "", "dynshared/partial.cu": "", "comments/axpy.cu": ""}
    (src / "compile_commands.json").write_text(json.dumps([
        {"directory": str(src / Path(f).parent), "file": Path(f).name,
         "command": f"nvcc -std=c++17 {extra} -c {Path(f).name} -o {Path(f).stem}.o"} for f, extra in flags.items()]))
    assert main(["convert", str(src), "-p", str(src), "-o", str(out), "-q", "--jobs", "1"]) == 0
    result = build_folder(out, dest, jobs=2, record_on="cpu", args_table={"dynshared": "128"})
    return dest, {p["program"]: p for p in result["programs"]}


def _kernel(prog, name):
    return next(k for k in prog["kernels"] if k["kernel"] == name)


def _rebuilt_source(built, program: str, kernel: str, source: str) -> str:
    """The rebuilt copy of ``source`` of ``program``, which built with ``kernel`` running migrated."""
    dest, progs = built
    prog = progs[program]
    assert prog["status"] == "built", prog.get("rebuilt")
    assert _kernel(prog, kernel)["runs"] == "migrated"
    return (dest / prog["dir"] / "src" / source).read_text()


def test_a_parameter_named_as_its_kernel(built):
    rebuilt = _rebuilt_source(built, "clash/offset.cu", "offset", "offset.cu")
    assert "static const auto c2t_kernel_offset = &offset;" in rebuilt
    assert "  c2t_kernel_offset<<<c2t_grid, c2t_block, c2t_shared, c2t_stream>>>(y, x, offset, n);" in rebuilt


def test_dynamic_shared_bytes_sized_at_run_time_are_recorded(built):
    _dest, progs = built
    prog = progs["dynshared/partial.cu"]
    assert prog["status"] == "built", prog.get("rebuilt")
    assert "kernels skipped" in prog["recorded"] and prog["run_args"] == "128"
    k = _kernel(prog, "blockSums")
    assert k["runs"] == "migrated"
    assert [(v["grid"], v["block"], v["shared_bytes"], v["status"]) for v in k["variants"]] == \
        [([64, 1, 1], [128, 1, 1], 512, "built")]


def test_a_launchers_default_of_no_shared_bytes_is_trusted_only_for_constant_launches():
    from migrate.dropin.geometry import default_trusted

    default = ((64, 1, 1), (128, 1, 1), 0)
    assert default_trusted(default, [{"shared_bytes": None}, {"shared_bytes": "0"}, {"shared_bytes": "(256)"}])
    assert not default_trusted(default, [{"shared_bytes": "bytes"}])
    assert default_trusted(((64, 1, 1), (128, 1, 1), 512), [{"shared_bytes": "128 * sizeof(float)"}])
    assert not default_trusted(None, [])


def test_the_programs_own_compile_flags_that_nvcc_needs(built):
    dest, progs = built
    prog = progs["relaxed/clamp.cu"]
    assert prog["status"] == "built", prog.get("original")
    assert _kernel(prog, "clampValues")["runs"] == "migrated"
    commands = (dest / prog["dir"] / "build.sh").read_text().splitlines()[-2:]
    for line in commands:  # the original and the rebuilt executable
        assert " --expt-relaxed-constexpr -O3 " in line and "-Wall" not in line and "sm_60" not in line


def test_kept_flags():
    from migrate.dropin.nvcc import kept_flags

    args = ("nvcc -std=c++17 -Xcompiler -Wall,-fopenmp -arch=sm_60 --expt-relaxed-constexpr -O3 -dc main.cu "
            "-o main.o -Xcompiler=-fopenmp --use_fast_math -lineinfo").split()
    assert kept_flags(args) == ["-Xcompiler", "-fopenmp", "--expt-relaxed-constexpr", "-O3", "-rdc=true",
                                "--use_fast_math"]
    assert kept_flags([]) == []


def test_a_parameter_list_ending_in_a_comment(built):
    rebuilt = _rebuilt_source(built, "comments/axpy.cu", "axpy", "axpy.cu")
    assert "                     int n  // elements\n) {\n  if (c2t_grid.x == 16u" in rebuilt


def test_a_parameter_list_ending_in_a_directive_closes_on_its_own_line():
    """pad's and sc's kernels end their parameter list with an ``#endif``."""
    from migrate.dropin.shim import shim_text

    params = "int n, float* y\n#ifdef EXTRA\n    , int* more\n#endif"
    text = shim_text("k", params, ["n", "y"], [])
    assert "#ifdef EXTRA\n    , int* more\n#endif\n) {\n" in text
    assert "cudaStream_t c2t_stream, int n, float* y) {" in shim_text("k", "int n, float* y", ["n", "y"], [])


def test_a_launch_with_a_directive_inside_is_left_to_the_original():
    """pad's launch wraps its shared bytes and an argument in #ifdef: its text cannot move into
    a shim's call (migrate build leaves that launch as it is, with the reason)."""
    from migrate.dropin import sites
    from migrate.dropin.build import _has_directive

    text = ("void run(float* y, int n, int* w) {\n"
            "    pad<<<8, 256\n#ifdef DYN\n        , 64\n#endif\n        >>>(y, n\n#ifdef DYN\n        , w\n#endif\n"
            "        );\n"
            "    pad<<<8, 256>>>(y, n);\n}\n")
    first, second = sites.launch_at(text, "pad", 2), sites.launch_at(text, "pad", 11)
    assert first is not None and _has_directive(first)
    assert second is not None and not _has_directive(second)
