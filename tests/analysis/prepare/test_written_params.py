"""Scalar parameters the body assigns (analysis.prepare.written_params), the way real kernels
count with them (``index = index + 1;`` in a loop, ``n >>= 1``, ``m++`` in a branch): TileLang
binds a parameter once, so an assignment inside a loop or a branch did not build ("Immutable
variable ... used outside its defining region"). They are read and written through locals."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.written_params import written_parameters
from migrate.ir import model as m
from tests.analysis.support import converted, nodes, spec_buffer, spec_kernel, spec_scalar, unit

KERNEL = """
__global__ void counts(const int* __restrict__ bm, float* __restrict__ y, float g, int index, int m, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    for (int j = 0; j < 3; j++) {
        g = g * 2.0f;
        index = index + bm[j];
    }
    if (i % 2) m++;
    n >>= 1;
    if (i < n) y[i] = g + (float)(index + m);
}
"""

SPEC = spec_kernel("counts", (1, 1, 1), (128, 1, 1), "fp32",
                   spec_buffer("bm", "int32", 8, "in", -3, 3),
                   spec_buffer("y", "float32", 128, "inout", -1.0, 1.0),
                   spec_scalar("g", "float32", 1.5), spec_scalar("index", "int32", 4),
                   spec_scalar("m", "int32", 7), spec_scalar("n", "int32", 200))


def test_each_assigned_parameter_is_a_local_copy(tmp_path):
    fn = written_parameters(unit(tmp_path, KERNEL).kernel("counts"))
    copies = [d for d in nodes(fn, m.VarDecl) if isinstance(d.init, m.Ref) and d.init.kind == "param"]
    assert [(d.name, d.init.name) for d in copies] == [("g_v", "g"), ("index_v", "index"), ("m_v", "m"),
                                                       ("n_v", "n")]
    params_read = {r.name for r in nodes(fn, m.Ref) if r.kind == "param"}
    assert params_read == {"bm", "y", "g", "index", "m", "n"}  # each read once, by its copy (and the buffers)
    assert sum(1 for r in nodes(fn, m.Ref) if r.kind == "param" and r.name == "index") == 1


def test_the_kernel_builds_and_checks_equal(tmp_path):
    pytest.importorskip("tilelang")
    _out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", k["check"]


#: the pool's sampling: ``int rand_idx = (int)(LCG_random_double(&seed) * ncols);`` on the kernel's
#: own parameter ``uint64_t seed``, which the device function advances through its pointer
ADDRESSED = """
__device__ double lcg_double(unsigned long long * seed) {
  const unsigned long long m = 9223372036854775808ULL;
  const unsigned long long a = 2806196910506780709ULL;
  *seed = (a * (*seed) + 1ULL) % m;
  return (double) (*seed) / (double) m;
}
__global__ void sample(int* __restrict__ out, int ncols, unsigned long long seed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  seed += i;
  int r = (int)(lcg_double(&seed) * ncols);
  r += 1000 * (int)(lcg_double(&seed) * ncols);
  out[i] = r;
}
"""

ADDRESSED_SPEC = spec_kernel("sample", (2, 1, 1), (64, 1, 1), "exact",
                             spec_buffer("out", "int32", 128, "out"),
                             spec_scalar("ncols", "int32", 997), spec_scalar("seed", "uint64", 12345))


def test_a_parameter_whose_address_a_device_function_writes_through(tmp_path):
    _, (k,) = converted(tmp_path, ADDRESSED, ADDRESSED_SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
