"""Pointers to plain-data structs too large (or too nested) for lanes (parse.record_layouts,
analysis.prepare.record_buffers): an RNA folding code's parameter table (``typedef struct
params {int use_x; int stack[4][4][4][4]; ...; struct loop_t {int seq[3]; int val;} loops[6];
float scale; ...} *params_t``) read through device functions, and a structure of arrays
(``struct {unsigned s0[N]; ... }``) updated field by field. Each is a buffer of its words, a field
the word at its offset. Checked on the CPU against the original (spec) and against numpy with a
table built field by field."""
from __future__ import annotations

import struct

import numpy as np

from migrate.analysis.prepare.record_buffers import record_buffers
from migrate.ir import model as m
from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar, unit

TABLE = """
#include <cuda_runtime.h>
#define NB 4
#define NL 6
typedef int tab4_t[NB][NB][NB][NB];
typedef struct params {
  int use_x;
  tab4_t stack;
  int init[NL + 1];
  float scale;
  int penalty;
  struct loop_t { int seq[3]; int val; } loops[NL];
  int nloops;
} *params_t;

__device__ static int stack_energy(const int *s, int i, int j, params_t p) {
  return p->stack[s[i]][s[j]][s[i + 1]][s[j - 1]] + (s[i] == 3 ? p->penalty : 0);
}

__device__ static int loop_bonus(const int *s, int i, params_t p) {
  for (int k = 0; k < p->nloops; k++)
    if (p->loops[k].seq[0] == s[i] && p->loops[k].seq[1] == s[i + 1] && p->loops[k].seq[2] == s[i + 2])
      return p->loops[k].val;
  return 0;
}

__global__ void energies(int n, const int *__restrict__ s, float *__restrict__ e, const params_t __restrict__ p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float r = -1.0f;
    if (i + 3 < n && i > 0) {
      int v = stack_energy(s, i, i + 3, p) + loop_bonus(s, i, p) + p->init[i % (NL + 1)];
      r = p->use_x ? v * p->scale : (float)v;
    }
    e[i] = r;
  }
}
"""

SETTER = TABLE + """
__global__ void set_scale(params_t p, float scale, int bonus) {
  if (threadIdx.x == 0) {
    p->scale = scale;
    p->loops[blockIdx.x].val += bonus;
  }
}
"""

WORDS = 291  # 1164 bytes: use_x, stack (256), init (7), scale, penalty, loops (6 x 4), nloops


def test_a_parameter_table_is_a_buffer_of_its_words(tmp_path):
    fn = record_buffers(unit(tmp_path, TABLE).kernel("energies"))
    assert [(p.name, str(p.type)) for p in fn.params][3] == ("p", "int32* __restrict__")  # (const params_t: the pointer is const)
    reads = [n for n in m.walk(fn.body) if isinstance(n, m.Member)]
    assert not reads  # every field is a word of the buffer


def test_a_parameter_table_read_through_device_functions_equals_the_original(tmp_path):
    spec = spec_kernel("energies", [2, 1, 1], [32, 1, 1], "fp32",
                       spec_scalar("n", "int32", 64), spec_buffer("s", "int32", 64, "in", 0, 3),
                       spec_buffer("e", "float32", 64, "out"), spec_buffer("p", "int32", WORDS, "in", 0, 3))
    out, kernels = converted(tmp_path, TABLE, spec)
    row = {k["kernel"]: k for k in kernels}["energies"]
    assert row["form"] == "tile", row["reason"]
    assert row["check"]["status"] == "pass", row["check"]["message"]


def _table(rng):
    """The table's bytes built field by field (its C layout), and the fields as numpy arrays."""
    f = {"use_x": 1, "stack": rng.integers(-50, 50, (4, 4, 4, 4)), "init": rng.integers(-9, 9, 7),
         "scale": 0.37, "penalty": 5, "seq": rng.integers(0, 4, (6, 3)), "val": rng.integers(-30, 30, 6),
         "nloops": 5}
    raw = struct.pack("<i", f["use_x"]) + f["stack"].astype("<i4").tobytes() + f["init"].astype("<i4").tobytes()
    raw += struct.pack("<fi", f["scale"], f["penalty"])
    for k in range(6):
        raw += f["seq"][k].astype("<i4").tobytes() + struct.pack("<i", int(f["val"][k]))
    raw += struct.pack("<i", f["nloops"])
    assert len(raw) == 4 * WORDS
    return raw, f


def test_a_parameter_table_built_field_by_field_equals_numpy(tmp_path):
    import torch

    out, kernels = converted(tmp_path, TABLE)
    module = module_of(out / "k.py")
    rng = np.random.default_rng(7)
    raw, f = _table(rng)
    n = 96
    s = rng.integers(0, 4, n).astype(np.int32)
    s[10:13] = f["seq"][2]  # a loop the table lists
    s[40:43] = f["seq"][5]  # one past nloops: no bonus
    e = torch.full((n,), float("nan"), dtype=torch.float32)  # poisoned
    p = torch.frombuffer(bytearray(raw), dtype=torch.int32)
    module.energies(n, torch.from_numpy(s), e, p, grid=3, block=32, target="c")
    want = np.full(n, -1.0, np.float32)
    for i in range(1, n - 3):
        j = i + 3
        v = f["stack"][s[i], s[j], s[i + 1], s[j - 1]] + (f["penalty"] if s[i] == 3 else 0)
        v += next((f["val"][k] for k in range(f["nloops"]) if (f["seq"][k] == s[i:i + 3]).all()), 0)
        v += f["init"][i % 7]
        want[i] = np.float32(v) * np.float32(f["scale"])
    np.testing.assert_array_equal(e.numpy(), want)


def test_a_float_field_stored_through_its_bits_and_a_field_updated_in_place(tmp_path):
    import torch

    out, kernels = converted(tmp_path, SETTER)
    module = module_of(out / "k.py")
    raw, f = _table(np.random.default_rng(3))
    p = torch.frombuffer(bytearray(raw), dtype=torch.int32)
    module.set_scale(p, 2.5, 7, grid=6, block=32, target="c")
    got = p.numpy().tobytes()
    assert struct.unpack_from("<f", got, 4 * 264)[0] == 2.5
    vals = [struct.unpack_from("<i", got, 4 * (266 + 4 * k + 3))[0] for k in range(6)]
    assert vals == [int(v) + 7 for v in f["val"]]
    assert got[:4 * 264] == raw[:4 * 264]  # nothing else written


SOA = """
#include <cuda_runtime.h>
#define N 512
typedef unsigned int member_t[N];
typedef struct { member_t a; member_t b; member_t c; member_t d; member_t e; member_t f; member_t g; member_t h;
                 member_t a2; member_t b2; member_t c2; member_t d2; } soa_t;

__global__ void add_soa(soa_t *const dst, const soa_t *const src, const unsigned int n)
{
  const unsigned int tid = blockIdx.x * blockDim.x + threadIdx.x;
  if (tid < n) {
    dst->a[tid] += src->a[tid];
    dst->d[tid] += src->h[tid] * 3u;
    dst->d2[tid] = src->c2[tid] ^ dst->b[tid];
  }
}
"""


def test_a_structure_of_arrays_updated_field_by_field_equals_the_original(tmp_path):
    words = 12 * 512
    spec = spec_kernel("add_soa", [4, 1, 1], [128, 1, 1], "exact",
                       spec_buffer("dst", "uint32", words, "inout", 0, 1000),
                       spec_buffer("src", "uint32", words, "in", 0, 1000), spec_scalar("n", "uint32", 500))
    out, kernels = converted(tmp_path, SOA, spec)
    (row,) = kernels
    assert row["form"] == "tile", row["reason"]
    assert row["check"]["status"] == "pass", row["check"]["message"]


MIXED = """
#include <cuda_runtime.h>
typedef struct { double w[300]; int count; struct { int a; int b; } pairs[300]; } mixed_t;
__global__ void weigh(const mixed_t *m, double *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = m->w[i] * m->pairs[i].a;
}
"""


def test_a_struct_of_fields_of_several_sizes_reads_its_fields_from_its_words(tmp_path):
    """Once refused ("fields are of 4, 8 bytes"); a pointer to such a struct is now a buffer of its
    widest field's words, an ``int`` field read out of its word by its byte offset: equal to the
    CUDA on the CPU (the words' bytes are the same on both sides)."""
    spec = spec_kernel("weigh", [2, 1, 1], [256, 1, 1], "exact",
                       spec_buffer("m", "float64", 601, "in", -2, 2), spec_buffer("out", "float64", 300, "out"),
                       spec_scalar("n", "int32", 300))
    out, kernels = converted(tmp_path, MIXED, spec)
    (row,) = kernels
    assert row["form"] == "tile" and row["check"]["status"] == "pass", row["check"]
    assert "T.reinterpret(" in (out / "k.py").read_text()