"""Records whose fields are arrays of structs (parse.build._record_lanes, analysis.prepare.vectors
path_lane): a lattice code's ``struct {fcomplex e[3][3];}`` matrices multiplied through pointers
in loops over i and j, a sweep's ``struct {StepInfo stepinfo[8];}`` passed by value and indexed by
the thread's octant, a search's ``struct {unsigned control; int8_t board[12];}`` whose bytes are
read by a loop counter. Each element's fields are lanes (``e[1][2].imag``); a path indexed by a
variable reads, in memory, the word its indices reach, and of a local (or by-value) record, the
lane they pick. Checked equal on the CPU: against the original (spec) or a numpy reference."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar

LATTICE = """
typedef struct { float real; float imag; } fcomplex;
typedef struct { fcomplex e[3][3]; } matrix;
typedef struct { fcomplex c[3]; } vector3;
typedef struct { float2 uv[3]; int id; } patch;

__device__ void adjoint(const matrix* a, matrix* b) {
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      b->e[i][j].real = a->e[j][i].real;
      b->e[i][j].imag = -a->e[j][i].imag;
    }
}

__device__ void mat_vec(const matrix* a, const vector3* b, vector3* c) {
  for (int i = 0; i < 3; i++) {
    fcomplex x = {0.0f, 0.0f};
    for (int j = 0; j < 3; j++) {
      x.real += a->e[i][j].real * b->c[j].real - a->e[i][j].imag * b->c[j].imag;
      x.imag += a->e[i][j].real * b->c[j].imag + a->e[i][j].imag * b->c[j].real;
    }
    c->c[i] = x;                      // a struct stored in an element picked by a variable
  }
}

__device__ void mat_vec_sum(const matrix* a, const vector3* b, vector3* c) {
  for (int i = 0; i < 3; i++) {
    fcomplex x = {0.0f, 0.0f};
    for (int j = 0; j < 3; j++) {
      x.real += a->e[i][j].real * b->c[j].real - a->e[i][j].imag * b->c[j].imag;
      x.imag += a->e[i][j].real * b->c[j].imag + a->e[i][j].imag * b->c[j].real;
    }
    c->c[i].real += x.real;           // a field of such an element updated
    c->c[i].imag += x.imag;
  }
}

__global__ void make_back(const matrix* __restrict__ fat, matrix* __restrict__ back, int n) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < n)
    for (int dir = 0; dir < 2; dir++) adjoint(fat + 2 * s + dir, back + 2 * s + dir);
}

__global__ void apply(const matrix* __restrict__ m, const vector3* __restrict__ src,
                      vector3* __restrict__ dst, int n) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s < n) {
    vector3 v;                        // a local record: its lanes are locals
    mat_vec(m + 2 * s, src + s, &v);
    mat_vec_sum(m + 2 * s + 1, src + (s + 1) % n, &v);
    mat_vec(m + 2 * s + 1, src + s, &dst[s]);
    for (int i = 0; i < 3; i++) {
      dst[s].c[i].real -= v.c[i].real;
      dst[s].c[i].imag -= v.c[i].imag;
    }
  }
}

__global__ void patches(const patch* __restrict__ p, float* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float s = (float)(p[i].id & 15);
    for (int k = 0; k < 3; k++) s += p[i].uv[k].x * (float)(k + 1) - p[i].uv[k].y;
    out[i] = s;
  }
}
"""

LATTICE_SPEC = (
    spec_kernel("make_back", (1, 1, 1), (64, 1, 1), "exact",
                spec_buffer("fat", "float32", 2 * 18 * 50, "in", -2.0, 2.0),
                spec_buffer("back", "float32", 2 * 18 * 50, "out"),
                spec_scalar("n", "int32", 50))
    + spec_kernel("apply", (2, 1, 1), (32, 1, 1), "fp32",
                  spec_buffer("m", "float32", 2 * 18 * 40, "in", -2.0, 2.0),
                  spec_buffer("src", "float32", 6 * 40, "in", -2.0, 2.0),
                  spec_buffer("dst", "float32", 6 * 40, "out"),
                  spec_scalar("n", "int32", 40))
    + spec_kernel("patches", (1, 1, 1), (64, 1, 1), "fp32",
                  spec_buffer("p", "float32", 8 * 60, "in", -3.0, 3.0),
                  spec_buffer("out", "float32", 60, "out"),
                  spec_scalar("n", "int32", 60))
)


def test_matrices_of_complex_structs_multiply_through_pointers_equal_to_the_original(tmp_path):
    out, rows = converted(tmp_path, LATTICE, LATTICE_SPEC)
    kernels = {k["kernel"]: k for k in rows}
    for name in ("make_back", "apply", "patches"):
        assert kernels[name]["form"] not in ("hybrid", "unsupported"), kernels[name]["diagnostics"]
        assert kernels[name]["check"]["status"] == "pass", kernels[name]["check"]


ROOTS = """
typedef struct queen_root { unsigned int control; signed char board[12]; } QueenRoot;

__global__ void roots(const QueenRoot* __restrict__ r, int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int s = (int)(r[i].control & 7u);
    for (int k = 0; k < 12; k++) s += (int)r[i].board[k] * (k + 1);   // a byte of a word, picked by k
    out[i] = s;
  }
}

__global__ void write_board(QueenRoot* r, int k) {
  r[threadIdx.x].board[k] = 1;   // a byte of a word written at a variable place: named, not guessed
}
"""


def test_bytes_of_a_record_read_by_a_loop_counter_equal_to_the_original(tmp_path):
    spec = spec_kernel("roots", (1, 1, 1), (64, 1, 1), "exact",
                       spec_buffer("r", "uint32", 4 * 50, "in", 0, 4000000000),
                       spec_buffer("out", "int32", 50, "out"),
                       spec_scalar("n", "int32", 50))
    _out, rows = converted(tmp_path, ROOTS, spec, expect_ok=False)
    kernels = {k["kernel"]: k for k in rows}
    assert kernels["roots"]["form"] not in ("hybrid", "unsupported"), kernels["roots"]["diagnostics"]
    assert kernels["roots"]["check"]["status"] == "pass", kernels["roots"]["check"]
    bad = kernels["write_board"]
    assert bad["form"] in ("hybrid", "unsupported") and any(
        "held with others in one word, indexed by a variable and written" in d["message"]
        for d in bad["diagnostics"]), bad


STEPS = """
typedef struct { int block_z; int octant; int is_active; } StepInfo;
typedef struct { StepInfo stepinfo[4]; } StepInfoAll;

__global__ void sweep(StepInfoAll all, const float* __restrict__ x, float* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int octant = i % 4;
  if (i >= n) return;
  if (all.stepinfo[octant].is_active)
    y[i] = x[i] * (float)all.stepinfo[octant].block_z + (float)all.stepinfo[3 - octant].octant;
  else
    y[i] = -x[i];
}
"""


def test_a_struct_of_structs_passed_by_value_is_indexed_by_the_thread(tmp_path):
    out, rows = converted(tmp_path, STEPS)
    (k,) = rows
    assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
    text = (out / "k.py").read_text()
    assert "all_stepinfo_3_is_active: T.int32" in text  # one parameter per lane of each element
    pytest.importorskip("tilelang")
    import torch
    module = module_of(out / "k.py")
    steps = [(5, 1, 1), (-2, 7, 0), (3, -4, 1), (9, 11, 1)]
    raw = b"".join(struct.pack("<iii", *s) for s in steps)
    n = 200
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, n).astype(np.float32)
    y = torch.full((n,), float("nan"), dtype=torch.float32)  # poisoned
    module.sweep(raw, torch.from_numpy(x), y, n, grid=(n + 63) // 64, block=64, target="c")
    want = np.empty(n, np.float32)
    for i in range(n):
        o = i % 4
        want[i] = x[i] * np.float32(steps[o][0]) + np.float32(steps[3 - o][1]) if steps[o][2] else -x[i]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6)
