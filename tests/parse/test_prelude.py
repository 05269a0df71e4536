"""The bundled prelude and stub headers (migrate/parse/prelude) against real CUDA programs.

Every fixture under tests/fixtures/prelude/ must parse with the frontend's clang command line and
no error-severity diagnostic, in device-only mode (the mode the frontend uses) and in host-only
mode; every .cu/.cuh under corpus/ likewise in device-only mode.  An API the stubs lack shows up here as "use of
undeclared identifier" (or "no member named ...") on the line that uses it.

All translation units are parsed once, concurrently, by a session fixture; the tests only look
the results up, so the whole file runs in a few seconds.
"""
from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.paths import REPO

ci = pytest.importorskip("clang.cindex")

ROOT = REPO
PRELUDE_DIR = ROOT / "migrate" / "parse" / "prelude"
PRELUDE = PRELUDE_DIR / "cuda2tile_prelude.h"
STUBS = PRELUDE_DIR / "include"
FIXTURES = ROOT / "tests" / "fixtures" / "prelude"
CORPUS = ROOT / "corpus"

DEVICE, HOST = "--cuda-device-only", "--cuda-host-only"
MODES = (DEVICE, HOST)
MODE_ID = {DEVICE: "device", HOST: "host"}


def clang_args(mode: str) -> list[str]:
    """The frontend's command line (see the brief in migrate/parse/clang.py), in either mode."""
    return ["-x", "cuda", mode, "--cuda-gpu-arch=sm_90", "-nocudainc", "-nocudalib", "-nostdinc",
            "-std=c++17", "-Wno-unknown-cuda-version", "-ferror-limit=0",
            "-include", str(PRELUDE), "-isystem", str(STUBS)]


def parse(path: str, mode: str, source: str | None = None):
    unsaved = [(path, source)] if source is not None else None
    return ci.Index.create().parse(path, args=clang_args(mode), unsaved_files=unsaved)


def errors(tu) -> list[str]:
    out = []
    for d in tu.diagnostics:
        if d.severity >= ci.Diagnostic.Error:
            loc = d.location
            where = f"{Path(loc.file.name).name}:{loc.line}" if loc.file else "<command line>"
            out.append(f"{where}: {d.spelling}")
    return out


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.cu"))


def corpus_files() -> list[Path]:
    return sorted(p for p in CORPUS.rglob("*") if p.suffix in (".cu", ".cuh") and p.is_file())


def stub_headers() -> list[str]:
    """Every public stub header, as its #include name (internal __cuda2tile/ helpers excluded)."""
    names = []
    for p in sorted(STUBS.rglob("*")):
        rel = p.relative_to(STUBS).as_posix()
        if p.is_file() and "__cuda2tile" not in rel and not rel.startswith("cuda/__"):
            names.append(rel)
    return names


def _is_forwarder(header: str) -> bool:
    """A stub that only includes others (`sm_61_intrinsics.h`, `iostream`, `cuda/std/limits`)."""
    for line in (STUBS / header).read_text().splitlines():
        line = line.strip()
        if line and not line.startswith(("//", "/*", "*", "#pragma", "#include", "#ifndef __CUDA2TILE",
                                         "#define __CUDA2TILE", "#endif", "namespace cuda { namespace std")):
            return False
    return True


def own_headers() -> list[str]:
    """The stubs with declarations of their own: each must compile alone after the prelude."""
    return [h for h in stub_headers() if not _is_forwarder(h)]


def _rel(p: Path) -> str:
    return p.relative_to(ROOT).as_posix()


def _header_tu_path(header: str) -> str:
    return str(FIXTURES / f"include_{header.replace('/', '_')}.cu")


ALL_HEADERS = "all_stub_headers.cu"


@pytest.fixture(scope="session")
def results() -> dict[tuple[str, str], list[str]]:
    """(file, mode) -> error messages, for the fixtures (both modes), the corpus (device-only, the
    frontend's mode), each stub with declarations of its own, and one unit including every stub."""
    prelude_files = {str(i.include.name) for i in parse(str(FIXTURES / "empty.cu"), DEVICE, "\n").get_includes()}
    jobs: list[tuple[str, str, str | None]] = []
    for path in fixture_files():
        jobs += [(str(path), mode, None) for mode in MODES]
    jobs += [(str(path), DEVICE, None) for path in corpus_files()]
    for header in own_headers():
        if str(STUBS / header) not in prelude_files:  # else the prelude has already included it
            jobs.append((_header_tu_path(header), DEVICE, f"#include <{header}>\nint main() {{ return 0; }}\n"))
    everything = "".join(f"#include <{h}>\n" for h in stub_headers()) + "int main() { return 0; }\n"
    jobs += [(str(FIXTURES / ALL_HEADERS), mode, everything) for mode in MODES]

    def run(job):
        path, mode, src = job
        return (path, mode), errors(parse(path, mode, src))

    with ThreadPoolExecutor(max_workers=max(2, min(8, os.cpu_count() or 2))) as pool:
        return dict(pool.map(run, jobs))


# ---- every fixture and corpus program parses cleanly, in both modes -----------------------------

@pytest.mark.parametrize("mode", MODES, ids=MODE_ID.get)
@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fixture_parses_without_errors(results, path, mode):
    assert results[(str(path), mode)] == []


@pytest.mark.parametrize("path", corpus_files() or [None], ids=lambda p: _rel(p) if p else "none")
def test_corpus_file_parses_without_errors(results, path):
    if path is None:
        pytest.skip("corpus/ holds no .cu/.cuh files yet")
    assert results[(str(path), DEVICE)] == []


@pytest.mark.parametrize("header", own_headers())
def test_stub_header_is_self_contained(results, header):
    """Each stub compiles on its own after the prelude (those the prelude includes are covered)."""
    assert results.get((_header_tu_path(header), DEVICE), []) == []


@pytest.mark.parametrize("mode", MODES, ids=MODE_ID.get)
def test_all_stub_headers_together(results, mode):
    assert results[(str(FIXTURES / ALL_HEADERS), mode)] == []


def test_fixtures_cover_every_api_family():
    present = {p.name for p in fixture_files()}
    assert {"runtime_api.cu", "math_intrinsics.cu", "atomics_warp.cu", "vector_types.cu",
            "half_bf16.cu", "coop_groups.cu", "textures_surfaces.cu", "host_std.cu",
            "templates_features.cu", "extras.cu", "libraries.cu", "posix_host.cu"} <= present


# ---- what the frontend relies on ----------------------------------------------------------------

def _walk(cursor, path):
    if cursor.location.file is None or cursor.location.file.name == path:
        yield cursor
    for child in cursor.get_children():
        yield from _walk(child, path)


SNIPPET = """
__global__ void k(float *p) {
  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
#if __CUDA_ARCH__ >= 800
  p[i] = __expf(p[i]) + warpSize + gridDim.y;
#else
  p[i] = 0.f;
#endif
}
int main() {
  float *d = nullptr;
  cudaStream_t s;
  cudaStreamCreate(&s);
  k<<<dim3(4), dim3(256), 0, s>>>(d);
  k<<<4, 256>>>(d);
  return 0;
}
"""


@pytest.mark.parametrize("mode", MODES, ids=MODE_ID.get)
def test_builtin_variables_are_member_references(mode):
    path = str(FIXTURES / "snippet_builtins.cu")
    tu = parse(path, mode, SNIPPET)
    assert errors(tu) == []
    members = {}
    for c in _walk(tu.cursor, path):
        if c.kind == ci.CursorKind.MEMBER_REF_EXPR:
            base = [k for k in c.get_children() if k.kind == ci.CursorKind.DECL_REF_EXPR]
            if base:
                members.setdefault(base[0].spelling, set()).add(c.spelling)
    assert members["threadIdx"] == {"x"} and members["blockIdx"] == {"x"} and members["blockDim"] == {"x"}
    refs = {c.spelling: c.referenced for c in _walk(tu.cursor, path) if c.kind == ci.CursorKind.DECL_REF_EXPR}
    assert refs["threadIdx"].type.spelling == "const uint3"
    assert refs["blockDim"].type.spelling == "const dim3"


@pytest.mark.parametrize("mode, config_call", [(DEVICE, "cudaConfigureCall"), (HOST, "__cudaPushCallConfiguration")],
                         ids=["device", "host"])
def test_kernel_launches_parse(mode, config_call):
    """clang lowers <<<...>>> to a call of the configuration function, which differs by mode."""
    path = str(FIXTURES / "snippet_launch.cu")
    tu = parse(path, mode, SNIPPET)
    assert errors(tu) == []
    calls = [c for c in _walk(tu.cursor, path) if c.kind == ci.CursorKind.CALL_EXPR and c.spelling == config_call]
    assert len(calls) == 2


def test_device_mode_sees_arch_guarded_code():
    """`#if __CUDA_ARCH__ >= 800` bodies exist only in device-only mode; host-only mode drops them."""
    seen = {}
    for mode in MODES:
        path = str(FIXTURES / f"snippet_arch_{MODE_ID[mode]}.cu")
        tu = parse(path, mode, SNIPPET)
        seen[mode] = any(c.kind == ci.CursorKind.CALL_EXPR and c.spelling == "__expf" for c in _walk(tu.cursor, path))
    assert seen == {DEVICE: True, HOST: False}


@pytest.mark.parametrize("mode", MODES, ids=MODE_ID.get)
def test_version_and_arch_macros(mode):
    src = """
static_assert(CUDART_VERSION >= 12080 && CUDA_VERSION >= 12080, "runtime version");
static_assert(__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 8, "compiler version");
#if !defined(__CUDACC__) || !defined(__NVCC__) || !defined(__CUDA__)
#error "CUDA compilation macros"
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ != 900
#error "sm_90"
#endif
int main() { return 0; }
"""
    assert errors(parse(str(FIXTURES / "snippet_versions.cu"), mode, src)) == []


def test_missing_api_is_reported():
    """The harness notices a declaration the stubs lack."""
    src = "__global__ void k(float *p) { p[0] = __not_a_cuda_intrinsic(p[0]); }\nint main() { return 0; }\n"
    errs = errors(parse(str(FIXTURES / "snippet_missing.cu"), DEVICE, src))
    assert any("use of undeclared identifier '__not_a_cuda_intrinsic'" in e for e in errs)


@pytest.mark.parametrize("mode", MODES, ids=MODE_ID.get)
def test_nvcc_leniencies(mode):
    """Constructs nvcc accepts and plain clang rejects: `__shared__ alignas(N)`, narrowing in
    dim3 braces, `register`, glibc's __intN_t names, templates over lambdas and local types; and
    both spellings of noinline."""
    src = """
#include <vector>
#include <algorithm>
__global__ void k(float *p, int n) {
  __shared__ alignas(16) float tile[64];
  static __shared__ alignas(float4) unsigned char raw[64];
  register int r = threadIdx.x;
  tile[r] = p[r] + raw[r];
  __int8_t small = (__int8_t)n;
  p[0] = tile[0] + small;
}
__device__ __noinline__ float f1(float x) { return x; }
__device__ __attribute__((__noinline__)) float f2(float x) { return x; }
struct alignas(16) Pod { float a; };
static_assert(alignof(Pod) == 16, "alignas still aligns");
int main() {
  int n = 100, m = 7;
  dim3 grid{n / 16, m};
  struct Local { int k; float v; };
  std::vector<Local> v(4);
  v.push_back(Local{1, 2.f});
  std::sort(v.begin(), v.end(), [](const Local &a, const Local &b) { return a.v < b.v; });
  k<<<grid, 64>>>(nullptr, n);
  return 0;
}
"""
    assert errors(parse(str(FIXTURES / "snippet_lenient.cu"), mode, src)) == []
