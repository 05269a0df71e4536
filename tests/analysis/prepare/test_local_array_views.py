"""Pointers into a thread's own arrays (analysis.prepare.pointer_views.view_buffers "local"), as
Monte Carlo path kernels and integrators write them: ``float* L_b = L;`` over ``float L[N]``, a
view at an offset, both passed to a device function that reads one and writes the other (the
same array, aliased as in the CUDA). Folded into the array's index; checked equal on the CPU."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cuda_runtime.h>
#define NN 8
__device__ float blend(const float* a, float* b, int n) {
  float s = 0.0f;
  for (int i = 1; i < n; i++) {
    b[i] = 0.5f * (a[i] + a[i - 1]);
    s += b[i];
  }
  return s;
}

__global__ void paths(const float* __restrict__ z, float* __restrict__ v, float* __restrict__ last, int npath) {
  int tid = blockDim.x * blockIdx.x + threadIdx.x;
  int threads = blockDim.x * gridDim.x;
  float L[NN], T2[2 * NN];
  float* L_b = L;
  float* upper = T2 + NN;
  for (int path = tid; path < npath; path += threads) {
    for (int i = 0; i < NN; i++) {
      L[i] = z[path * NN + i];
      upper[i] = -L[i];
    }
    v[path] = blend(L, L_b, NN) + blend(upper, T2, NN);
    last[path] = L_b[NN - 1] + T2[NN - 1];
  }
}
"""

SPEC = spec_kernel("paths", (2, 1, 1), (32, 1, 1), "fp32",
                   spec_buffer("z", "float32", 100 * 8, "in", -1.0, 1.0),
                   spec_buffer("v", "float32", 100, "out"),
                   spec_buffer("last", "float32", 100, "out"),
                   spec_scalar("npath", "int32", 100))


def test_views_of_a_threads_own_arrays_fold_into_them(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "L_b" not in text and "upper" not in text


#: A thread's own arrays passed whole to device functions that take them as arrays (``float
#: x[]``, as fitness functions and root finders declare them) or pointers, written and read there.
ARRAY_PARAMS = """
#include <cuda_runtime.h>
__device__ void roots2(double* roots, double w[2], double x) {
  roots[0] = x; roots[1] = 2.0 * x - 1.0;
  w[0] = x * x; w[1] = 1.0 - x;
}
__device__ float fitness(float x[]) { return x[0] * x[1] - x[2]; }
__global__ void quad(const double* __restrict__ in, double* __restrict__ out, float* __restrict__ f, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  double r[2], w[2];
  roots2(r, w, in[i]);
  float p[3] = {1.5f, (float)in[i], 0.25f};
  out[i] = r[0] * w[0] + r[1] * w[1];
  f[i] = fitness(p);
}
"""

ARRAY_PARAMS_SPEC = spec_kernel("quad", (2, 1, 1), (64, 1, 1), "fp32",
                                spec_buffer("in", "float64", 128, "in", -1.0, 1.0),
                                spec_buffer("out", "float64", 128, "out"),
                                spec_buffer("f", "float32", 128, "out"),
                                spec_scalar("n", "int32", 128))


def test_a_threads_arrays_passed_to_array_parameters(tmp_path):
    out, (k,) = converted(tmp_path, ARRAY_PARAMS, ARRAY_PARAMS_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "def fitness(x):" in (out / "k.py").read_text()


#: Array parameters the way hydrodynamics codes write their element routines: a thread's 2-D
#: array passed to ``b[][4]`` and filled there, its rows passed on (``b[0]``), and views into
#: output buffers (``&fx[k * 4]``) passed to ``fx[]``: each call is inlined, the parameter the
#: argument itself (an inlined array parameter was once a local array of no size).
ELEMENT_ROUTINES = """
#include <cuda_runtime.h>
__device__ void shape(const double x[], double b[][4], double* const volume) {
  for (int i = 0; i < 4; i++) { b[0][i] = x[i] - x[(i + 1) % 4]; b[1][i] = x[i] * x[3 - i]; }
  *volume = b[0][0] * b[1][1] - b[0][1] * b[1][0];
}
__device__ void normals(double p[4], const double q[4]) {
  for (int i = 0; i < 4; i++) p[i] = p[i] + 0.5 * q[i];
}
__device__ void scatter(const double b[][4], double s, double fx[], double fy[]) {
  for (int i = 0; i < 4; i++) { fx[i] = -s * b[0][i]; fy[i] = -s * b[1][i]; }
}
__global__ void stress(const double* __restrict__ x, const double* __restrict__ sig, double* __restrict__ fx,
                       double* __restrict__ fy, double* __restrict__ det, int n) {
  int k = blockDim.x * blockIdx.x + threadIdx.x;
  if (k >= n) return;
  double xl[4], b[2][4];
  for (int i = 0; i < 4; i++) xl[i] = x[k * 4 + i];
  shape(xl, b, &det[k]);
  normals(b[0], b[1]);
  scatter(b, sig[k], &fx[k * 4], &fy[k * 4]);
}
"""

ELEMENT_ROUTINES_SPEC = spec_kernel("stress", (2, 1, 1), (32, 1, 1), "fp64",
                                    spec_buffer("x", "float64", 64 * 4, "in", -1.0, 1.0),
                                    spec_buffer("sig", "float64", 64, "in", -1.0, 1.0),
                                    spec_buffer("fx", "float64", 64 * 4, "out"),
                                    spec_buffer("fy", "float64", 64 * 4, "out"),
                                    spec_buffer("det", "float64", 64, "out"),
                                    spec_scalar("n", "int32", 64))


def test_array_parameters_take_arrays_rows_and_views(tmp_path):
    out, (k,) = converted(tmp_path, ELEMENT_ROUTINES, ELEMENT_ROUTINES_SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
