"""Conditionals nested in conditions (nested MAX/MIN macros) stored in locals first
(analysis.prepare.conditional_temps): TileLang's layout inference is exponential in them."""
from __future__ import annotations

import json

from migrate.analysis.prepare.conditional_temps import conditional_temps
from migrate.cli import main
from migrate.ir import model as m
from tests.analysis.support import nodes, unit

MACROS = """
#include <cuda_runtime.h>
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
"""

NESTED = MACROS + """
__global__ void clampmax(const int* x, int* y, int a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = MAX(MIN(MIN(x[i], -5), a * y[i]), MAX(MAX(MAX(x[i], y[i]), y[i]), x[i] - 3));
    }
}
"""


def test_a_conditional_in_a_condition_is_computed_once(tmp_path):
    fn = conditional_temps(unit(tmp_path, NESTED).kernel("clampmax"))
    temps = [d.name for d in nodes(fn, m.VarDecl) if d.name.startswith("cond_")]
    assert len(temps) >= 3
    (store,) = [a for a in nodes(fn, m.Assign) if isinstance(a.target, m.Index)]
    # no conditional is left in a condition of the statement, and the copies read the locals
    assert not any(isinstance(c, m.Ternary) for t in m.walk(store.value) if isinstance(t, m.Ternary)
                   for c in m.walk(t.cond))
    assert {r.name for r in m.walk(store.value) if isinstance(r, m.Ref)} & set(temps)


def test_a_conditional_that_may_not_run_stays_where_it_is(tmp_path):
    """`i < n ? x[i] : 0` inside a branch guards its load: computing it first would read past x."""
    fn = unit(tmp_path, MACROS + """
        __global__ void k(const int* x, int* y, int n) {
            int i = threadIdx.x;
            y[i] = i > 3 ? MAX(i < n ? x[i] : 0, 1) : 0;
            y[i + 1] = (i < n && (x[i] > 0 ? x[i] : -x[i]) > 2) ? 1 : 0;
        }
    """).kernel("k")
    assert conditional_temps(fn) == fn


def test_nested_macros_convert_and_check_equal_in_reasonable_time(tmp_path):
    (tmp_path / "clamp.cu").write_text(NESTED)
    spec = ('[[kernel]]\nname = "clampmax"\ngrid = [4, 1, 1]\nblock = [128, 1, 1]\ntolerance = "exact"\n'
            '[[kernel.args]]\nname = "x"\nbuffer = "int32"\nelements = 500\nrole = "in"\nrange = [-64, 64]\n'
            '[[kernel.args]]\nname = "y"\nbuffer = "int32"\nelements = 500\nrole = "inout"\nrange = [-64, 64]\n'
            '[[kernel.args]]\nname = "a"\nscalar = "int32"\nvalue = 5\n'
            '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 500\n')
    (tmp_path / "clamp.toml").write_text(spec)
    status = main(["convert", str(tmp_path / "clamp.cu"), "-o", str(tmp_path / "out"), "-q", "--check", "cpu",
                   "--timeout", "60"])
    (k,) = json.loads((tmp_path / "out" / "report.json").read_text())["kernels"]
    assert status == 0 and k["check"]["status"] == "pass", k["check"]["message"]
