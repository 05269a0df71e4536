"""Inline PTX read as the expression it computes: ``lop3.b32``'s three-input logic, as SHA-256
and bit-sliced codes write it in ``__forceinline__`` helpers (``asm("lop3.b32 %0, %1, %2, %3,
0x96;" : "=r"(d) : "r"(a), "r"(b), "r"(c))``). Each short form of the table is checked against
the truth table's minterms; a kernel using the helpers runs on the CPU target against numpy; an
``asm`` of another instruction stays refused (M1201)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.parse import inline_ptx
from migrate.parse.frontend import parse_file
from tests.analysis.support import module_of, program_converted

PROGRAM = r"""#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

static __device__ __forceinline__ uint32_t XOR3(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

static __device__ __forceinline__ uint32_t CHOOSE(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xb8;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

static __device__ __forceinline__ uint32_t MAJ(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0xe8;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

// a table with no short form: the OR of its minterms
static __device__ __forceinline__ uint32_t ODD(uint32_t a, uint32_t b, uint32_t c) {
  uint32_t d;
  asm("lop3.b32 %0, %1, %2, %3, 0x5b;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
  return d;
}

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

__global__ void mix(const uint32_t* __restrict__ w, uint32_t* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  uint32_t a = w[i], b = w[(i + 1) % n], c = w[(i + 7) % n];
  uint32_t s = XOR3(ROR(a, 2), ROR(a, 13), ROR(a, 22)) + MAJ(a, b, c);
  out[4 * i] = s;
  out[4 * i + 1] = CHOOSE(a, b, c);
  out[4 * i + 2] = ODD(a, b, c);
  out[4 * i + 3] = MAJ(s, b ^ c, a);
}

int main() {
  const int n = 256;
  uint32_t h[n];
  for (int i = 0; i < n; i++) h[i] = 2654435761u * (i + 1) ^ (i << 17);
  uint32_t *w, *out;
  cudaMalloc(&w, n * 4);
  cudaMalloc(&out, 4 * n * 4);
  cudaMemcpy(w, h, n * 4, cudaMemcpyHostToDevice);
  mix<<<n / 64, 64>>>(w, out, n);
  cudaMemcpy(h, out, n * 4, cudaMemcpyDeviceToHost);
  printf("%u\n", h[0]);
  return 0;
}
"""

OTHER = r"""#include <cuda_runtime.h>
__global__ void k(const float* x, float* y) {
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x[threadIdx.x]));
  y[threadIdx.x] = r;
}
"""


def test_each_short_form_is_its_table():
    words = [0, 0xFFFFFFFF, 0x0F0F0F0F, 0x33333333, 0x55555555, 0x12345678, 0x9ABCDEF0, 0xDEADBEEF]

    def run(text, a, b, c):
        return eval(text, {}, {"a": a, "b": b, "c": c}) & 0xFFFFFFFF

    for table, text in inline_ptx.LOP3_FORMS.items():
        for a in words:
            for b in words[::-1]:
                for c in words[1::2]:
                    assert run(text, a, b, c) == inline_ptx.lop3_value(table, a, b, c), (hex(table), text)
    # the truth table's own inputs: a = 0xF0, b = 0xCC, c = 0xAA give the table back
    for table in (0x96, 0xE8, 0xB8, 0x5B, 0x01):
        assert inline_ptx.lop3_value(table, 0xF0, 0xCC, 0xAA, bits=8) == table


def test_asm_text_reads_the_parts():
    tokens = ['asm', '(', '"lop3.b32 %0, %1, %2, %3, 0x96;"', ':', '"=r"', '(', 'd', ')', ':', '"r"', '(', 'a',
              ')', ',', '"r"', '(', 'b', ')', ',', '"r"', '(', 'c', ')', ')']
    asm = inline_ptx.asm_text(tokens)
    assert asm.template == "lop3.b32 %0, %1, %2, %3, 0x96;"
    assert asm.outputs == ("=r",) and asm.inputs == ("r", "r", "r") and not asm.clobbers and not asm.volatile


def test_lop3_is_read_and_other_ptx_stays_refused(tmp_path):
    (tmp_path / "mix.cu").write_text(PROGRAM)
    parsed = parse_file(tmp_path / "mix.cu")
    assert not [d for d in parsed.diagnostics if d.code == "M1201"]
    (tmp_path / "other.cu").write_text(OTHER)
    parsed = parse_file(tmp_path / "other.cu")
    assert [d.code for d in parsed.diagnostics if d.severity.value == "error"] == ["M1201"]


def test_the_kernel_converts_and_computes_the_logic(tmp_path):
    pytest.importorskip("tilelang")
    import torch

    out = program_converted(tmp_path, PROGRAM, "mix.cu")
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert rows["mix"]["form"] == "tile"
    mod = module_of(out / "mix.py")
    n = 256
    w = np.array([(2654435761 * (i + 1) ^ (i << 17)) & 0xFFFFFFFF for i in range(n)], dtype=np.uint64)
    a, b, c = w, np.roll(w, -1), np.roll(w, -7)
    m32 = np.uint64(0xFFFFFFFF)

    def ror(x, k):
        return ((x >> np.uint64(k)) | (x << np.uint64(32 - k))) & m32

    def table(t, a, b, c):
        return np.array([inline_ptx.lop3_value(t, int(x), int(y), int(z)) for x, y, z in zip(a, b, c)],
                        dtype=np.uint64)

    s = (table(0x96, ror(a, 2), ror(a, 13), ror(a, 22)) + table(0xE8, a, b, c)) & m32
    expected = np.stack([s, table(0xB8, a, b, c), table(0x5B, a, b, c), table(0xE8, s, b ^ c, a)], axis=1).reshape(-1)
    x = torch.from_numpy(w.astype(np.uint32).view(np.int32).copy()).view(torch.uint32)
    y = torch.full((4 * n,), 0x7F7F7F7F, dtype=torch.int32).view(torch.uint32)
    mod.mix(x, y, n, grid=n // 64, block=64, target="c")
    got = y.view(torch.int32).numpy().view(np.uint32).astype(np.uint64)
    np.testing.assert_array_equal(got, expected)
