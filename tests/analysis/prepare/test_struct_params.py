"""Structs holding pointers passed to a kernel by value (analysis.prepare.struct_params), the way
the pool's tpacf passes ``struct cartesian {double *x, *y, *z; int *jk;}`` and d3q19-bgk its
``lbm_vars`` (structs of pointers inside a struct, handed on to a device function by value): each
field is a parameter of its own (a pointer a buffer, a number a scalar), the launcher takes the
struct as its fields, and the program's own run, recorded on the CPU, replays equal (the
recorder finds the pointers inside the struct's bytes)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.ir import model as m
from migrate.runtime.build import find_cxx
from tests.analysis.support import checked, module_of, program_converted, unit

PROGRAM = """#include <cuda_runtime.h>
#include <cstdio>

struct cart { double *x; double *y; int n; int *jk; };
struct vel { float *u0; float *u1; };
typedef struct { vel u; double *f0; char *flag; int count; } vars;

__device__ double pair(cart c, int i, int j) { return c.x[i] * c.x[j] - c.y[i] * c.y[j]; }

__global__ void acf(cart g1, cart g2, double *out)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= g1.n) return;
  double s = 0;
  for (int j = 0; j < g2.n; j++) s += g1.x[i] * g2.x[j] + g1.y[i] * g2.y[j] + pair(g1, i, j % g1.n);
  out[i] = s;
  g1.jk[i] = (int)(s * 4.0);
}

__device__ void relax(vars v, int i) {
  if (v.flag[i]) v.u.u0[i] = (float)(v.f0[i] * 2.0) + v.count;
  else v.u.u1[i] = (float)v.f0[i] - v.count;
}

__global__ void lb(vars v, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) relax(v, i);
}

int main() {
  const int n = 200, m = 37;
  cart a, b;
  double *out;
  cudaMallocManaged(&a.x, n * 8); cudaMallocManaged(&a.y, n * 8); cudaMallocManaged(&a.jk, n * 4);
  cudaMallocManaged(&b.x, m * 8); cudaMallocManaged(&b.y, m * 8); b.jk = 0;
  cudaMallocManaged(&out, n * 8);
  a.n = n; b.n = m;
  for (int i = 0; i < n; i++) { a.x[i] = (i % 13) * 0.25 - 1.5; a.y[i] = (i % 7) * 0.5 - 1.0; a.jk[i] = -7; out[i] = 3; }
  for (int j = 0; j < m; j++) { b.x[j] = (j % 5) * 0.75 - 1.0; b.y[j] = (j % 3) * 1.25 - 0.5; }
  acf<<<(n + 63) / 64, 64>>>(a, b, out);
  vars v;
  cudaMallocManaged(&v.u.u0, n * 4); cudaMallocManaged(&v.u.u1, n * 4);
  cudaMallocManaged(&v.f0, n * 8); cudaMallocManaged(&v.flag, n);
  v.count = 3;
  for (int i = 0; i < n; i++) { v.f0[i] = i * 0.5 - 20.0; v.flag[i] = (i % 3) == 0; v.u.u0[i] = -1; v.u.u1[i] = -2; }
  lb<<<(n + 127) / 128, 128>>>(v, n);
  cudaDeviceSynchronize();
  printf("%f %d %f %f\\n", out[5], a.jk[5], v.u.u0[3], v.u.u1[4]);
  return 0;
}
"""


def test_a_struct_of_pointers_is_a_record_with_its_fields(tmp_path):
    u = unit(tmp_path, PROGRAM)
    k = {f.name: f for f in u.kernels}
    g1 = k["acf"].params[0].type
    assert isinstance(g1, m.Record) and [(f, str(t), o) for f, t, o in g1.members] == [
        ("x", "float64*", 0), ("y", "float64*", 8), ("n", "int32", 16), ("jk", "int32*", 24)]
    v = k["lb"].params[0].type
    assert [f for f, _t, _o in v.members] == ["u.u0", "u.u1", "f0", "flag", "count"]


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_struct_fields_are_parameters_and_the_run_replays_equal(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "cart.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["acf"]["form"] == "tile" and kernels["lb"]["form"] == "tile", kernels
    text = (out / "cart.py").read_text()
    assert '("g1", "members", (' in text and '("v_u_u0", "buffer", "float32", 0),' in text
    status, checks = checked(out, "--run", "")
    assert status == 0, checks
    for name in ("acf", "lb"):
        assert checks[name]["status"] == "pass" and checks[name]["inputs"] == "trace", checks[name]


def test_the_launcher_takes_the_struct_as_its_fields(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "cart.cu")
    mod = module_of(out / "cart.py")
    rng = np.random.default_rng(5)
    n = 90
    f0 = rng.uniform(-30, 30, n)
    flag = (rng.uniform(0, 1, n) < 0.4).astype(np.int8)
    u0, u1 = np.full(n, np.nan, np.float32), np.full(n, np.nan, np.float32)  # poisoned
    mod.lb({"u.u0": u0, "u.u1": u1, "f0": f0, "flag": flag, "count": 5}, n, grid=(2, 1, 1), block=(64, 1, 1),
           target="c")
    want0 = np.where(flag != 0, (f0 * 2.0).astype(np.float32) + 5, np.nan).astype(np.float32)
    want1 = np.where(flag == 0, f0.astype(np.float32) - 5, np.nan).astype(np.float32)
    np.testing.assert_array_equal(u0, want0)
    np.testing.assert_array_equal(u1, want1)


def test_a_field_assigned_is_refused_with_its_reason(tmp_path):
    source = PROGRAM.replace("if (i >= g1.n) return;", "if (i >= g1.n) return;\n  g1.x = g1.y;")
    out = program_converted(tmp_path, source, "cart.cu", status=1)  # acf stays unsupported
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["acf"]["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M3001" and "'g1' of 'cart' (a struct holding pointers, passed by value) has a field "
               "or itself assigned" in d["message"] for d in kernels["acf"]["diagnostics"]), kernels["acf"]


#: A struct of numbers too large for a parameter per field (flame's ConstMemParams: 482 floats and
#: ints, arrays of them indexed at run time), read in the kernel and in device functions that take
#: it by const reference and by value.
LARGE = """#include <cuda_runtime.h>
#include <cstdio>
#define NF 12

struct VP { float factor; float p[3]; };
struct Params {
  VP var[NF][2];
  float colors[NF];
  float pre[NF][6];
  int frame;
  int enable;
  int mapping[NF];
};

__device__ int pick(int idx, const Params &params) { return params.mapping[idx % NF]; }
__device__ float shade(Params params, int f) { return params.colors[f] * params.var[f][1].p[2]; }

__global__ void step(float2 *pts, float *out, const Params params, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int f = pick(i, params);
  float2 pt = pts[i];
  float x = params.pre[f][0] * pt.x + params.pre[f][1] * pt.y + params.pre[f][2];
  float y = params.pre[f][3] * pt.x + params.pre[f][4] * pt.y + params.pre[f][5];
  if (params.enable) x += params.var[f][1].factor * params.var[f][0].p[2];
  const float *post = &params.pre[(f + 1) % NF][0];  // (a const struct's address may be taken)
  y += post[1] * 0.5f - post[4];
  pts[i] = make_float2(x, y);
  out[i] = shade(params, f) + params.frame;
}

int main() {
  const int n = 300;
  Params p;
  for (int f = 0; f < NF; f++) {
    for (int k = 0; k < 6; k++) p.pre[f][k] = (f * 7 + k * 3) % 11 * 0.25f - 1.0f;
    for (int j = 0; j < 2; j++) {
      p.var[f][j].factor = 0.5f + f * 0.125f + j;
      for (int k = 0; k < 3; k++) p.var[f][j].p[k] = (f + j * 5 + k) % 7 * 0.5f - 1.5f;
    }
    p.colors[f] = f * 0.25f - 1.0f;
    p.mapping[f] = (f * 5 + 3) % NF;
  }
  p.frame = 4; p.enable = 1;
  float2 *pts; float *out;
  cudaMallocManaged(&pts, n * sizeof(float2)); cudaMallocManaged(&out, n * 4);
  for (int i = 0; i < n; i++) { pts[i] = make_float2((i % 17) * 0.125f - 1.0f, (i % 9) * 0.25f - 1.0f); out[i] = -3; }
  step<<<(n + 127) / 128, 128>>>(pts, out, p, n);
  cudaDeviceSynchronize();
  printf("%f %f %f\\n", pts[7].x, pts[7].y, out[7]);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_a_large_struct_is_a_buffer_of_its_bytes_and_the_run_replays_equal(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, LARGE, "flame.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["step"]["form"] == "tile", kernels
    text = (out / "flame.py").read_text()
    assert '("params", "struct", "float32"),' in text
    assert "T.if_then_else" not in text  # the arrays are indexed in the buffer, not picked lane by lane
    status, checks = checked(out, "--run", "")
    assert status == 0, checks
    assert checks["step"]["status"] == "pass" and checks["step"]["inputs"] == "trace", checks["step"]


def test_a_large_struct_written_is_refused(tmp_path):
    source = LARGE.replace("if (i >= n) return;\n  int f", "if (i >= n) return;\n  params.pre[0][1] = 2;\n  int f") \
        .replace("const Params params", "Params params")
    assert source.count("params.pre[0][1] = 2;") == 1
    out = program_converted(tmp_path, source, "flame.cu", status=1)
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["step"]["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M3001" and "'params' of 'Params' (a struct read through a buffer holding it, passed by "
               "value) has a field or itself assigned" in d["message"] for d in kernels["step"]["diagnostics"])
