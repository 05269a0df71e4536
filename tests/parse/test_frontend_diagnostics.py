"""Unsupported and malformed input: a coded diagnostic at the right place, never an exception."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from migrate.codes import CODES, Severity
from migrate.parse.frontend import ParseOptions, parse_file
from tests.paths import REPO

HEADER = "#include <cuda_runtime.h>"


def parse(tmp_path, source, name="bad.cu", **options):
    path = tmp_path / name
    if isinstance(source, bytes):
        path.write_bytes(source)
    else:
        path.write_text(textwrap.dedent(source))
    return parse_file(path, ParseOptions(**options))


def codes(parsed):
    return {d.code for d in parsed.diagnostics}


def only(parsed, code):
    found = [d for d in parsed.diagnostics if d.code == code]
    assert found, f"no {code} in {[str(d) for d in parsed.diagnostics]}"
    return found[0]


def test_truncated_file_blocks_only_the_broken_kernel(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void good(float* y) { y[threadIdx.x] = 1.0f; }
        __global__ void broken(float* y, int n) {
            for (int i = 0; i < n; ++i) {
                y[i] = 2.0f;
    """)
    d = only(p, "M1001")
    assert d.severity is Severity.ERROR
    assert p.kernel_errors("broken")
    assert not p.kernel_errors("good")
    assert d.span.file.endswith("bad.cu")


def test_unknown_type(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void k(Matrix* m, float* y) { y[0] = 1.0f; }
    """)
    d = only(p, "M1101")
    assert d.span.line == 2 and "Matrix" in d.message
    assert p.kernel_errors("k")


def test_inline_ptx(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void lane(int* out) {
            unsigned id;
            asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
            out[threadIdx.x] = id;
        }
    """)
    d = only(p, "M1201")
    assert (d.span.line, d.severity) == (4, Severity.ERROR)
    assert p.kernel_errors("lane")


def test_texture_objects(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void sample(cudaTextureObject_t tex, float* out, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) out[i] = tex1Dfetch<float>(tex, i);
        }
    """)
    found = [d for d in p.diagnostics if d.code == "M1202"]
    assert {d.span.line for d in found} >= {2, 4}
    assert p.kernel_errors("sample")


def test_dynamic_parallelism(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void child(float* y) { y[threadIdx.x] = 0.0f; }
        __global__ void parent(float* y) {
            if (threadIdx.x == 0) child<<<1, 32>>>(y);
        }
    """)
    d = only(p, "M1203")
    assert d.span.line == 4
    assert p.kernel_errors("parent") and not p.kernel_errors("child")
    assert not p.unit.launches  # a device-side launch is not a host launch site


def test_recursion(tmp_path):
    p = parse(tmp_path, HEADER + """
        __device__ int fact(int n) { return n <= 1 ? 1 : n * fact(n - 1); }
        __global__ void k(int* y) { y[threadIdx.x] = fact(threadIdx.x); }
    """)
    d = only(p, "M1204")
    assert d.span.line == 2 and "fact" in d.message
    assert p.kernel_errors("k")


def test_goto(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void k(int* y, int n) {
            int i = 0;
        again:
            y[i] = i;
            if (++i < n) goto again;
        }
    """)
    found = [d for d in p.diagnostics if d.code == "M1205"]
    assert {d.span.line for d in found} >= {4, 6}
    assert p.kernel_errors("k")


def test_binary_file(tmp_path):
    p = parse(tmp_path, bytes(range(256)) * 8, name="blob.cu")
    d = only(p, "M1002")
    assert d.severity is Severity.ERROR and d.span.line == 1
    assert p.unit.kernels == ()


def test_not_utf8_in_a_comment_is_accepted(tmp_path):
    p = parse(tmp_path, b"// caf\xe9 \xff\xfe\n__global__ void k(int *x) { /* na\xefve */ x[0] = 1; }\n",
              name="latin.cu")
    assert "M1002" not in codes(p) and not p.kernel_errors("k")
    assert [k.name for k in p.unit.kernels] == ["k"]


def test_not_utf8_in_code_is_a_compile_error_not_binary(tmp_path):
    p = parse(tmp_path, b"__global__ void k(int *x) { int caf\xe9 = 1; x[0] = caf\xe9; }\n", name="latin.cu")
    assert "M1002" not in codes(p) and p.kernel_errors("k")


def test_empty_file(tmp_path):
    p = parse(tmp_path, "\n   \n", name="empty.cu")
    d = only(p, "M1003")
    assert d.severity is Severity.NOTE
    assert p.unit.kernels == ()


def test_five_megabyte_file(tmp_path):
    body = "// " + "x" * 1000 + "\n"
    p = parse(tmp_path, HEADER + body * 5200, name="huge.cu")
    d = only(p, "M1004")
    assert "MiB" in d.message and d.severity is Severity.ERROR


def test_size_limit_can_be_raised(tmp_path):
    body = "// " + "x" * 1000 + "\n"
    p = parse(tmp_path, HEADER + body * 5200 + "__global__ void k(float* y) { y[0] = 1; }\n",
              name="huge.cu", max_file_size=8 * 2**20)
    assert "M1004" not in codes(p)
    assert [k.name for k in p.unit.kernels] == ["k"]


def test_missing_header_is_read_as_empty(tmp_path):
    p = parse(tmp_path, HEADER + """
        #include "project/config.h"
        __global__ void k(float* y) { y[threadIdx.x] = 1.0f; }
    """)
    d = only(p, "M1005")
    assert "project/config.h" in d.message and d.severity is Severity.WARNING
    assert not p.kernel_errors("k")


def test_missing_angle_header_is_read_as_empty_and_parsed_past(tmp_path, monkeypatch):
    """`#include <lib/x.cuh>` of a library that is not there (cub, thrust in the pool), with the
    folder given as a relative -I as users type it: read as empty like a quoted one, so the
    kernels after it are parsed, and the file is parsed once: the missing headers are found before
    parsing (parse.frontend._scan_includes), not by parsing again per missing header."""
    from migrate.parse import clang as cl
    calls = []
    real = cl.parse
    monkeypatch.setattr(cl, "parse", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    (tmp_path / "src").mkdir()
    monkeypatch.chdir(tmp_path)
    p = parse(Path("src"), HEADER + """
        #include <nosuchlib/block/reduce.cuh>
        #include <nosuchlib/util.cuh>
        __global__ void k(float* y) { y[threadIdx.x] = 2.0f; }
    """, include_dirs=("src",))
    ds = [d for d in p.diagnostics if d.code == "M1005"]
    assert sorted(d.message.split("'")[1] for d in ds) == ["nosuchlib/block/reduce.cuh", "nosuchlib/util.cuh"]
    assert [k.name for k in p.unit.kernels] == ["k"] and not p.kernel_errors("k")
    assert len(calls) == 1


def test_host_errors_do_not_block_kernels(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void k(float* y) { y[threadIdx.x] = 1.0f; }
        int main() { undeclared_helper(); another_one(); k<<<1, 32>>>(nullptr); }
    """)
    host = [d for d in p.diagnostics if d.code == "M1006"]
    assert len(host) == 1 and "1 more" in host[0].message
    assert not p.kernel_errors("k")
    assert p.unit.launches and p.unit.launches[0].kernel == "k"


def test_unknown_function(tmp_path):
    p = parse(tmp_path, HEADER + """
        __device__ float helper(float);
        __global__ void k(float* y) { y[0] = helper(y[1]); }
    """)
    d = only(p, "M1207")
    assert "helper" in d.message and p.kernel_errors("k")


def test_uninstantiated_template(tmp_path):
    p = parse(tmp_path, HEADER + """
        template <typename T> __global__ void k(T* y) { y[0] = T(1); }
    """)
    d = only(p, "M1208")
    assert d.severity is Severity.WARNING and not p.kernel_errors("k")


def test_lambda_and_device_malloc(tmp_path):
    p = parse(tmp_path, HEADER + """
        __global__ void k(float* y) {
            auto twice = [](float v) { return 2 * v; };   // a local variable's lambda: modelled (parse.lambdas)
            float* tmp = (float*)malloc(16);
            y[0] = twice(y[1]) + [](float v) { return v; }(y[2]);   // called where written: refused
        }
    """)
    assert {"M1206", "M1210"} <= codes(p)
    assert [d for d in p.diagnostics if d.code == "M1206"][0].message.startswith("a lambda that is not a local")
    assert p.kernel_errors("k")


def test_unreadable_path(tmp_path):
    p = parse_file(tmp_path / "missing.cu")
    assert "M1007" in codes(p)


def test_every_code_has_explanation_and_fix():
    for code in CODES.values():
        assert code.code.startswith("M") and len(code.code) == 5
        assert code.title and code.explanation and code.fix


def test_diagnostics_doc_is_current():
    from migrate.codes import markdown

    doc = (REPO / "docs" / "diagnostics.md").read_text()
    assert doc == markdown(), "docs/diagnostics.md is stale: run python -m migrate.codes > docs/diagnostics.md"


def test_a_function_the_model_builder_fails_on_costs_only_itself(tmp_path, monkeypatch):
    """A bug met while reading one function (here: every ``for`` loop) is an M9001 error in that
    function's extent: the kernel with the loop is reported with it, the other keeps its model."""
    from migrate.parse import build
    from migrate.parse.frontend import parse_file

    def broken(self, cursor):
        raise RuntimeError("for loops are broken today")

    monkeypatch.setattr(build.ModelBuilder, "visit_FOR_STMT", broken)
    path = tmp_path / "two.cu"
    path.write_text("__global__ void looped(float* y) { for (int i = 0; i < 4; i++) y[i] = 0; }\n"
                    "__global__ void plain(float* y) { y[threadIdx.x] = 1.0f; }\n")
    parsed = parse_file(path)
    assert [k.name for k in parsed.unit.kernels] == ["looped", "plain"]
    (err,) = parsed.by_kernel["looped"]
    assert err.code == "M9001" and err.span.line == 1 and "for loops are broken today" in err.message
    assert parsed.by_kernel["plain"] == [] and parsed.unit.kernel("plain").body is not None


def test_more_missing_headers_than_retries_are_all_reported_and_hide_no_error(tmp_path):
    """A file that includes twenty headers of a library that is not there (thrust in the pool's
    tsne): each is reported once, where it is first included, and a kernel that uses the
    library's types gets clang's errors. (Found by parsing again per missing header, the
    sixteenth retry gave up with clang stopped at the next one and its later errors silenced:
    such a kernel was converted with an int32 buffer for its thrust::complex<float> one.)"""
    includes = "".join(f"#include <nolib/part{i}.h>\n" for i in range(20))
    (tmp_path / "util.h").write_text(includes)
    p = parse(tmp_path, HEADER + "\n" + includes + """
        #include "util.h"
        __global__ void k(float* x, nolib::complex<float>* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = x[i];
        }
        __global__ void plain(float* x, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) x[i] = 2.0f * x[i];
        }
    """)
    ds = [d for d in p.diagnostics if d.code == "M1005"]
    assert sorted(d.message.split("'")[1] for d in ds) == sorted(f"nolib/part{i}.h" for i in range(20))
    assert all(d.span.file.endswith("bad.cu") for d in ds)  # util.h's includes find the stand-ins
    assert "nolib" in " ".join(d.message for d in p.kernel_errors("k"))
    assert not p.kernel_errors("plain")


def test_an_angled_include_beside_its_includer_is_read_not_replaced(tmp_path):
    """``#include <lib/numeric.hpp>`` of a copy of a library kept beside the includer: clang
    includes it (asking for quotes), so it is no missing header, and the missing header it
    includes in turn is reported where it is included."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "numeric.hpp").write_text("#include <lib/detail/missing.hpp>\n#define LIB_SCALE 3\n")
    (tmp_path / "host.h").write_text("#include <lib/numeric.hpp>\n")
    p = parse(tmp_path, HEADER + """
        #include "host.h"
        __global__ void k(float* y) { y[threadIdx.x] = LIB_SCALE; }
    """)
    ds = [d for d in p.diagnostics if d.code == "M1005"]
    assert [(Path(d.span.file).name, d.span.line, d.message.split("'")[1]) for d in ds] == \
        [("numeric.hpp", 1, "lib/detail/missing.hpp")]
    assert not p.kernel_errors("k")
