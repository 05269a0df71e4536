"""Chained assignments (analysis.prepare.chained_assign) and `*x` of a buffer (pointer_views): the
ways real kernels write `a[i] = b[i] = v;`, `dx = dy = dz = -r;` and `*flag = 1;`."""
from __future__ import annotations

import json

from migrate.analysis.prepare.chained_assign import split_chained_assignments
from migrate.cli import main
from migrate.ir import model as m
from tests.analysis.support import nodes, unit

KERNEL = """
#include <cuda_runtime.h>
__global__ void chains(const float* x, float* a, float* b, int* flag, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float t, u, w;
    if (i < n) {
        a[i] = b[i] = x[i] * 2.0f;
        t = u = w = x[i] + 1.0f;
        a[i] += t * u - w;
        if (i == 0) *flag = 1;
    }
}
"""


def test_a_chain_is_one_store_a_statement_innermost_first(tmp_path):
    fn = split_chained_assignments(unit(tmp_path, KERNEL).kernel("chains"))
    stores = [(n.target, n.value) for n in nodes(fn, m.Assign)]
    assert not [v for _t, v in stores if isinstance(v, m.Assign)]  # no assignment is a value any more
    names = [t.name if isinstance(t, m.Ref) else t.base.name for t, _v in stores[:5]]
    assert names[:5] == ["b", "a", "w", "u", "t"]
    assert isinstance(stores[1][1], m.Index) and stores[1][1].base.name == "b"  # a[i] = b[i]
    assert stores[3][1].name == "w" and stores[4][1].name == "u"


def test_chains_and_a_store_through_the_buffer_pointer_check_equal(tmp_path):
    (tmp_path / "chains.cu").write_text(KERNEL)
    spec = '[[kernel]]\nname = "chains"\ngrid = [4, 1, 1]\nblock = [128, 1, 1]\ntolerance = "fp32"\n'
    for name, dtype, n, role in [("x", "float32", 500, "in"), ("a", "float32", 500, "out"),
                                 ("b", "float32", 500, "out"), ("flag", "int32", 1, "out")]:
        spec += f'[[kernel.args]]\nname = "{name}"\nbuffer = "{dtype}"\nelements = {n}\nrole = "{role}"\n'
        spec += 'range = [-1.0, 1.0]\n' if role == "in" else ""
    spec += '[[kernel.args]]\nname = "n"\nscalar = "int32"\nvalue = 500\n'
    (tmp_path / "chains.toml").write_text(spec)
    assert main(["convert", str(tmp_path / "chains.cu"), "-o", str(tmp_path / "out"), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((tmp_path / "out" / "report.json").read_text())["kernels"]
    assert k["form"] not in ("hybrid", "unsupported"), k.get("reason")
    assert k["check"]["status"] == "pass", k["check"]["message"]
    assert "flag[0] = 1" in (tmp_path / "out" / "chains.py").read_text()
