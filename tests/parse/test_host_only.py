"""Files that cannot define a kernel are read as host code without a parse (parse.host_only): a
``main.cu`` that only launches a header's kernels, a helper file. A kernel written through a macro
(in an included header, in the includer's lines, on the command line) still makes its file
parsed, as does an include the text scan cannot follow."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.parse import clang as cl
from migrate.parse import host_only
from migrate.parse.frontend import ParseOptions, parse_file

# host code that clang reports errors in when it is parsed (an undeclared name in main)
HOST = textwrap.dedent("""\
    #include <cstdio>
    #include "kernels.cuh"
    int main() {
      float *x = nullptr;
      scale<<<4, 64>>>(x, 256);
      printf("%d\\n", undeclared_in_host);
      return 0;
    }
""")
KERNELS = textwrap.dedent("""\
    #pragma once
    __global__ void scale(float *x, int n) {
      int i = blockIdx.x * blockDim.x + threadIdx.x;
      if (i < n) x[i] = 2.0f * x[i];
    }
""")


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def parses(monkeypatch):
    """The paths libclang is asked to parse, in order."""
    seen = []
    real = cl.parse

    def counting(path, args, unsaved=()):
        seen.append(Path(path).name)
        return real(path, args, unsaved)

    monkeypatch.setattr(cl, "parse", counting)
    return seen


def test_a_host_file_is_not_parsed_and_has_no_kernels(tmp_path, parses):
    write(tmp_path / "kernels.cuh", KERNELS)
    main = write(tmp_path / "main.cu", HOST)
    parsed = parse_file(str(main), ParseOptions())
    assert parses == []
    assert parsed.unit.kernels == () and parsed.unit.launches == ()
    # no host-code error (M1001/M1006) about the undeclared name: nothing was parsed
    assert [d.code for d in parsed.diagnostics] == ["M1003"]


def test_the_same_file_with_a_kernel_of_its_own_is_parsed(tmp_path, parses):
    write(tmp_path / "kernels.cuh", KERNELS)
    main = write(tmp_path / "main.cu", HOST.replace("int main()", textwrap.dedent("""\
        __global__ void fill(float *x) { x[threadIdx.x] = 1.0f; }
        int main()""")))
    parsed = parse_file(str(main), ParseOptions())
    assert parses == ["main.cu"]
    assert [k.name for k in parsed.unit.kernels] == ["fill"]
    assert "M1006" in [d.code for d in parsed.diagnostics]  # the host error, reported as before


@pytest.mark.parametrize("where", ["header", "continued", "flag"])
def test_a_kernel_written_through_a_macro_keeps_its_file_parsed(tmp_path, parses, where):
    """``KERNEL void k(...)`` with ``KERNEL`` defined in an included header (on one line or on a
    backslash-continued one) or on the command line: the file says no ``__global__`` itself."""
    defines = ()
    if where == "header":
        write(tmp_path / "defs.h", "#pragma once\n#define KERNEL __global__\n")
    elif where == "continued":
        write(tmp_path / "defs.h", "#pragma once\n#define KERNEL(name) \\\n  __global__ void name\n")
    else:
        write(tmp_path / "defs.h", "#pragma once\n")
        defines = ("KERNEL=__global__",)
    head = "KERNEL(scale)" if where == "continued" else "KERNEL void scale"
    src = write(tmp_path / "k.cu", f'#include "defs.h"\n{head}(float *x, int n) {{\n'
                                   "  int i = threadIdx.x;\n  if (i < n) x[i] = 2.0f * x[i];\n}\n")
    parsed = parse_file(str(src), ParseOptions(defines=defines))
    assert parses == ["k.cu"]
    assert [k.name for k in parsed.unit.kernels] == ["scale"]


def test_a_header_in_its_includers_place_with_the_includers_kernel_macro(tmp_path, parses):
    """kernels.cuh has no ``__global__``: its kernel is ``KERNEL void``, with the macro defined in
    main.cu above the ``#include`` (the header is read in its includer's lines)."""
    header = write(tmp_path / "kernels.cuh", "KERNEL void scale(float *x) { x[threadIdx.x] *= 2.0f; }\n")
    main = write(tmp_path / "main.cu", '#define KERNEL __global__\n#include "kernels.cuh"\n'
                                       "int main() { scale<<<1, 32>>>(nullptr); }\n")
    parsed = parse_file(str(header), ParseOptions(context=(str(main), 2)))
    assert [k.name for k in parsed.unit.kernels] == ["scale"]
    assert parses  # parsed in main.cu's place


def test_an_include_named_by_a_macro_keeps_the_file_parsed(tmp_path, parses):
    write(tmp_path / "kernels.cuh", KERNELS)
    main = write(tmp_path / "main.cu", '#define KERNELS "kernels.cuh"\n#include KERNELS\nint main() { return 0; }\n')
    parse_file(str(main), ParseOptions())
    assert parses == ["main.cu"]


def test_a_host_file_keeps_the_program_folders_its_includes_reach(tmp_path, parses):
    """prog/src/main.cu includes "defs.h" of prog/include (found without -I, M1008): the original
    program's build needs that folder whether the file is parsed or not."""
    write(tmp_path / "prog" / "CMakeLists.txt", "project(p)\n")
    write(tmp_path / "prog" / "include" / "defs.h", "#define N 4\n")
    main = write(tmp_path / "prog" / "src" / "main.cu", '#include "defs.h"\nint main() { return N; }\n')
    parsed = parse_file(str(main), ParseOptions(root=str(tmp_path)))
    assert parses == []
    assert [d.code for d in parsed.diagnostics] == ["M1008", "M1003"]
    assert parsed.found_include_dirs == (str((tmp_path / "prog" / "include").resolve()),)
    assert parsed.build.include_dirs == parsed.found_include_dirs


def test_global_in_comments_strings_or_code_of_included_files():
    """What the text check reads: the file's own code (not its comments or strings); included
    files' preprocessor directives only (a kernel defined in a header is that header's)."""
    assert not host_only.may_define_kernels('// __global__ void k()\nconst char *s = "__global__";\n', [], ())
    assert host_only.may_define_kernels("__attribute__((global)) void k() {}\n", [], ())
    assert not host_only.may_define_kernels("int main();\n", ["__global__ void k() {}\n"], ())
    assert host_only.may_define_kernels("int main();\n", ["#  define K \\\n  static \\\n  __global__\n"], ())
    assert not host_only.may_define_kernels("int main();\n", ["/* #define K __global__ */\n"], ())
    assert host_only.may_define_kernels("int main();\n", [], ("-DK=__global__",))
