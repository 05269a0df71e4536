"""Headers a program keeps in its own folders, found without -I (parse.header_search): a sibling
include/ folder under a CMake or Make top, a library shipped in the program's tree included with
<...>; never a copy from another program of the folder being converted, never one of two equally
near copies."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from migrate.parse.frontend import ParseOptions, parse_file
from migrate.parse.header_search import find_include_dir, program_top
from tests.paths import REPO

KERNEL = textwrap.dedent("""\
    #include "defs.h"
    __global__ void scale(REAL *x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] = x[i] * SCALE;
    }
""")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def sibling_include_program(root: Path, name: str = "prog", real: str = "double") -> Path:
    """prog/CMakeLists.txt, prog/src/Makefile, prog/src/k.cu including "defs.h" of prog/include,
    which includes "real.h" beside it (as a program builds with -I../include)."""
    write(root / name / "CMakeLists.txt", "project(p)\n")
    write(root / name / "src" / "Makefile", "all:\n")
    write(root / name / "include" / "defs.h", '#pragma once\n#include "real.h"\n#define SCALE 3\n')
    write(root / name / "include" / "real.h", f"typedef {real} REAL;\n")
    return write(root / name / "src" / "k.cu", KERNEL)


def params(parsed) -> list[tuple[str, str]]:
    return [(p.name, str(p.type)) for k in parsed.unit.kernels for p in k.params]


def test_a_sibling_include_folder_under_the_programs_top_is_searched(tmp_path):
    k = sibling_include_program(tmp_path)
    parsed = parse_file(str(k), ParseOptions(root=str(tmp_path)))
    assert [d.code for d in parsed.diagnostics] == ["M1008"]
    note = parsed.diagnostics[0]
    assert note.span.line == 1 and "'defs.h'" in note.message and "'../include'" in note.message
    assert params(parsed) == [("x", "float64*"), ("n", "int32")]  # real.h, included by defs.h, read too


def test_without_a_root_nothing_is_searched(tmp_path):
    k = sibling_include_program(tmp_path)
    parsed = parse_file(str(k), ParseOptions())
    assert "M1005" in [d.code for d in parsed.diagnostics]
    assert not parsed.unit.kernels or "M1008" not in [d.code for d in parsed.diagnostics]


def test_another_programs_copy_is_never_taken(tmp_path):
    # two programs side by side in the folder being converted (as the real-code pool is): the
    # program without the header does not read the other's
    sibling_include_program(tmp_path, "other")
    write(tmp_path / "alone" / "Makefile", "all:\n")
    k = write(tmp_path / "alone" / "main.cu", KERNEL)
    assert find_include_dir("defs.h", k, tmp_path) is None
    parsed = parse_file(str(k), ParseOptions(root=str(tmp_path)))
    assert "M1005" in [d.code for d in parsed.diagnostics]
    assert "M1008" not in [d.code for d in parsed.diagnostics]


def test_two_equally_near_copies_leave_the_header_missing(tmp_path):
    k = sibling_include_program(tmp_path / "a")
    write(tmp_path / "a" / "prog" / "inc2" / "defs.h", "#define SCALE 4\n")
    assert find_include_dir("defs.h", k, tmp_path / "a") is None
    # a copy nearer the includer wins over the one further away
    k = sibling_include_program(tmp_path / "b")
    write(tmp_path / "b" / "prog" / "inc2" / "defs.h", "#define SCALE 4\n")
    write(tmp_path / "b" / "prog" / "src" / "detail" / "defs.h", "#define SCALE 5\ntypedef int REAL;\n")
    assert find_include_dir("defs.h", k, tmp_path / "b") == (tmp_path / "b" / "prog" / "src" / "detail").resolve()


def test_an_angled_library_path_in_the_programs_tree(tmp_path):
    write(tmp_path / "p" / "Makefile", "all:\n")
    write(tmp_path / "p" / "lib" / "boost" / "numeric" / "limits.hpp", "#define LIMIT 7\n")
    k = write(tmp_path / "p" / "main.cu", textwrap.dedent("""\
        #include <boost/numeric/limits.hpp>
        __global__ void fill(int *x) { x[threadIdx.x] = LIMIT; }
    """))
    assert find_include_dir("boost/numeric/limits.hpp", k, tmp_path) == (tmp_path / "p" / "lib").resolve()
    assert find_include_dir("numeric/other.hpp", k, tmp_path) is None
    assert find_include_dir("../p/main.cu", k, tmp_path) is None
    parsed = parse_file(str(k), ParseOptions(root=str(tmp_path)))
    assert [d.code for d in parsed.diagnostics] == ["M1008"]
    assert [k.name for k in parsed.unit.kernels] == ["fill"]


def test_the_programs_top_is_the_highest_build_folder_below_the_root(tmp_path):
    k = sibling_include_program(tmp_path)
    assert program_top(k.parent, tmp_path) == (tmp_path / "prog").resolve()
    assert program_top(k.parent, k.parent) == k.parent.resolve()  # never above the root
    write(tmp_path / "Makefile", "all:\n")  # the root's own build file: the root is the top
    assert program_top(k.parent, tmp_path) == tmp_path.resolve()


MAIN = textwrap.dedent("""\
    #include <cstdio>
    int main() {
      const int n = 1000;
      REAL h[n];
      for (int i = 0; i < n; i++) h[i] = 0.5f * i - 7;
      REAL *d;
      cudaMalloc((void**)&d, n * sizeof(REAL));
      cudaMemcpy(d, h, n * sizeof(REAL), cudaMemcpyHostToDevice);
      scale<<<(n + 255) / 256, 256>>>(d, n);
      cudaMemcpy(h, d, n * sizeof(REAL), cudaMemcpyDeviceToHost);
      printf("%f\\n", h[n - 1]);
      cudaFree(d);
      return 0;
    }
""")


def test_convert_finds_the_header_and_the_check_builds_the_original_with_it(tmp_path):
    k = sibling_include_program(tmp_path / "src", real="float")
    k.write_text(KERNEL + MAIN)
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-m", "migrate", "convert", str(tmp_path / "src"), "-o", str(out),
                           "-q", "--check", "cpu"], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads((out / "report.json").read_text())
    (kernel,) = report["kernels"]
    assert kernel["form"] == "tile" and kernel["check"]["status"] == "pass"
    (f,) = report["files"]
    assert [d["code"] for d in f["diagnostics"]] == ["M1008"]
    include = str((tmp_path / "src" / "prog" / "include").resolve())
    entry = report["build"]["files"]["prog/src/k.cu"]
    assert entry["compile_commands"] is False and entry["include_dirs"] == [include]
    (program,) = report["programs"]
    assert program["build"]["include_dirs"] == [include]  # the record/replay check's build


def test_an_angled_header_of_one_name_is_the_systems_never_the_programs(tmp_path):
    # <memory.h> is the C library's: a file of that name in the program's tree is not it
    write(tmp_path / "p" / "Makefile", "all:\n")
    write(tmp_path / "p" / "util" / "memory.h", "#error not the system's memory.h\n")
    write(tmp_path / "p" / "util" / "bitset", "#error not the standard library's bitset\n")
    write(tmp_path / "p" / "include" / "helpers.cuh", "#define ZERO 0\n")  # the program's own, included <so>
    k = write(tmp_path / "p" / "main.cu", "#include <memory.h>\n#include <bitset>\n#include <helpers.cuh>\n"
                                          "__global__ void z(int *x) { x[threadIdx.x] = ZERO; }\n")
    parsed = parse_file(str(k), ParseOptions(root=str(tmp_path)))
    notes = [d for d in parsed.diagnostics if d.code == "M1008"]
    assert [n.span.line for n in notes] == [3] and "'helpers.cuh'" in notes[0].message
    assert [k.name for k in parsed.unit.kernels] == ["z"]
