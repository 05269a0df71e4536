"""Pointer parameters to arrays (analysis.prepare.array_params), the way stencil codes pass their
grids (``double phi[][NY][NZ]``, ``double (*out)[NY][NZ]``): flat buffers of the element type,
``phi[x][y][z]`` read as ``phi[(x * NY + y) * NZ + z]``."""
from __future__ import annotations

from migrate.analysis.prepare.array_params import flatten_array_params
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, unit

KERNEL = """
#include <cuda_runtime.h>
#define NY 8
#define NZ 16
__global__ void lap(double phi[][NY][NZ], double (*out)[NY][NZ], int nx)
{
    unsigned iz = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned iy = blockIdx.y * blockDim.y + threadIdx.y;
    unsigned ix = blockIdx.z * blockDim.z + threadIdx.z;
    if (ix > 0 && ix < nx - 1 && iy > 0 && iy < NY - 1 && iz > 0 && iz < NZ - 1)
        out[ix][iy][iz] = phi[ix + 1][iy][iz] + phi[ix - 1][iy][iz] + phi[ix][iy + 1][iz]
                        + phi[ix][iy - 1][iz] + phi[ix][iy][iz + 1] + phi[ix][iy][iz - 1] - 6.0 * phi[ix][iy][iz];
    else if (ix < nx && iy < NY && iz < NZ)
        out[ix][iy][iz] = phi[ix][iy][iz];
}
"""

SPEC = """
[[kernel]]
name = "lap"
grid = [1, 1, 6]
block = [16, 8, 1]
tolerance = "fp64"
[[kernel.args]]
name = "phi"
buffer = "float64"
elements = 768
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "out"
buffer = "float64"
elements = 768
role = "out"
[[kernel.args]]
name = "nx"
scalar = "int32"
value = 6
"""


def test_array_parameters_become_flat_buffers_indexed_once(tmp_path):
    fn = flatten_array_params(unit(tmp_path, KERNEL).kernel("lap"))
    assert [(p.name, str(p.type)) for p in fn.params[:2]] == [("phi", "float64*"), ("out", "float64*")]
    assert not [i for i in nodes(fn, m.Index) if isinstance(i.base, m.Index)]  # no index of an index left


def test_a_stencil_on_array_parameters_converts_and_checks_equal(tmp_path):
    out, kernels = converted(tmp_path, KERNEL, SPEC)
    (k,) = kernels
    assert k["form"] == "tile", k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
