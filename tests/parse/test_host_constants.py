"""Host constants read by device code (`const int ThreadsPerBlock = 256;`, `constexpr float PI`,
`static const double dx = 1.0 / 64;`) are their values; a host variable that is not constant
stays a reference to host memory, which is refused."""
from __future__ import annotations

import json

from migrate.cli import main
from migrate.ir import model as m
from migrate.parse.frontend import parse_file

SOURCE = """
#include <cuda_runtime.h>
const int ThreadsPerBlock = 128;
static const double dx = 1.0 / 64;
constexpr float PI = 3.14159265f;
#define WS 32
const int WSC = WS * 2;
const bool SCALE = true;
__global__ void constants(const float* x, float* y, int n) {
    int i = threadIdx.x + blockIdx.x * ThreadsPerBlock;
    if (i < n) y[i] = SCALE ? PI * dx * (i % WSC) + x[i] : x[i];
}
"""


def test_host_constants_are_their_values(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(SOURCE + "int counter = 5;\n__global__ void reads_host(int* y) { y[0] = counter; }\n")
    unit = parse_file(src).unit
    lits = [n for n in m.walk(unit.kernel("constants").body) if isinstance(n, (m.IntLit, m.FloatLit, m.BoolLit))]
    values = [(type(n).__name__, n.value, n.type.dtype) for n in lits]
    assert ("IntLit", 128, "int32") in values and ("IntLit", 64, "int32") in values
    assert ("FloatLit", float.fromhex("0x1.921fb6p+1"), "float32") in values  # PI as the float it is
    assert ("FloatLit", 0.015625, "float64") in values and ("BoolLit", True, "bool") in values
    refs = [n for n in m.walk(unit.kernel("reads_host").body) if isinstance(n, m.Ref) and n.name == "counter"]
    assert refs and refs[0].kind == "host"


def test_a_kernel_using_host_constants_converts_and_checks_equal(tmp_path):
    (tmp_path / "k.cu").write_text(SOURCE)
    spec = ('[[kernel]]\nname = "constants"\ngrid = [4, 1, 1]\nblock = [128, 1, 1]\ntolerance = "fp32"\n'
            '[[kernel.args]]\nname = "x"\nbuffer = "float32"\nelements = 500\nrole = "in"\nrange = [-1.0, 1.0]\n'
            '[[kernel.args]]\nname = "y"\nbuffer = "float32"\nelements = 500\nrole = "out"\n'
            '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 500\n')
    (tmp_path / "k.toml").write_text(spec)
    assert main(["convert", str(tmp_path / "k.cu"), "-o", str(tmp_path / "out"), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((tmp_path / "out" / "report.json").read_text())["kernels"]
    assert k["check"]["status"] == "pass", (k.get("reason"), k["check"]["message"])


# constexpr variable templates, as a real logic-rewriting program spells its hash table's empty
# marker per key and value type (libclang shows the reference as an unexposed declaration)
TEMPLATES = """
#include <cstdint>
template <typename K, typename V> constexpr V EMPTY_VALUE = (V)(-1);
template <typename T> constexpr float SCALE = 0.5f;
__global__ void mark(const unsigned int* __restrict__ vals, unsigned int* __restrict__ out,
                     float* __restrict__ f, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = vals[i] == EMPTY_VALUE<uint64_t, uint32_t> ? 0u : vals[i] + 1u;
        f[i] = SCALE<int> * (float)i;
    }
}
"""


def test_constexpr_variable_templates_are_their_values(tmp_path):
    src = tmp_path / "k.cu"
    src.write_text(TEMPLATES)
    unit = parse_file(src).unit
    lits = [(type(n).__name__, n.value, n.type.dtype) for n in m.walk(unit.kernel("mark").body)
            if isinstance(n, (m.IntLit, m.FloatLit))]
    assert ("IntLit", 0xFFFFFFFF, "uint32") in lits and ("FloatLit", 0.5, "float32") in lits, lits
