"""analysis.facts.reread_branches: a branch in a loop that stores to an array its own condition
reads (a running best per thread kept in small arrays, as match's Match10 keeps it) makes the
kernel compile unvectorised, since TileLang's vectorisation splits such a branch per store and
tests the condition again after the first store; the same kernel is checked equal on the CPU and
its CUDA lowering keeps the branch whole."""
from __future__ import annotations

import importlib.util

import pytest

from migrate.analysis.facts.reread_branches import reread_branch
from tests.analysis.support import converted, spec_buffer, spec_kernel, unit

#: Each thread of a 2-D block keeps the best score of two candidate rows and where it was found,
#: in arrays indexed by the row, updated in one branch; the scores come through a shared tile
#: into a per-thread array, so the arrays live across barriers (the way match's Match10 keeps its best matches).
BEST_OF_TWO = """
#include <cuda_runtime.h>
#define NR 2
#define TILE 8
__global__ void best_of_two(const float* __restrict__ score, float* __restrict__ best_out,
                            int* __restrict__ where_out, int m) {
  __shared__ float tile[64 * NR * TILE];
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  int g = blockIdx.x * blockDim.x * blockDim.y + t;
  float best[NR];
  int where[NR];
  for (int r = 0; r < NR; r++) {
    best[r] = 0.0f;
    where[r] = -1;
  }
  float sc[TILE][NR];
  for (int j0 = 0; j0 < m; j0 += TILE) {
    for (int k = 0; k < NR * TILE; k++)
      tile[k * 64 + t] = score[(g * NR + k / TILE) * m + j0 + k % TILE];
    __syncthreads();
    for (int j = 0; j < TILE; j++)
      for (int r = 0; r < NR; r++)
        sc[j][r] = tile[(r * TILE + j) * 64 + t];
    __syncthreads();
    for (int j = 0; j < TILE; j++) {
      for (int r = 0; r < NR; r++) {
        if (sc[j][r] > best[r]) {
          best[r] = sc[j][r];
          where[r] = j0 + j;
        }
      }
    }
    __syncthreads();
  }
  for (int r = 0; r < NR; r++) {
    best_out[g * NR + r] = best[r];
    where_out[g * NR + r] = where[r];
  }
}
"""

SPEC = spec_kernel("best_of_two", (2, 1, 1), (16, 4, 1), "exact",
                   spec_buffer("score", "float32", 128 * 2 * 24, "in", -1.0, 1.0),
                   spec_buffer("best_out", "float32", 128 * 2, "out"),
                   spec_buffer("where_out", "int32", 128 * 2, "out"),
                   '[[kernel.args]]\nname = "m"\nscalar = "int32"\nvalue = 24\n')


def _kernel(tmp_path, source):
    return unit(tmp_path, source).kernels[0]


def test_a_branch_storing_what_its_condition_reads_is_found(tmp_path):
    k = _kernel(tmp_path, BEST_OF_TWO.replace("#include <cuda_runtime.h>\n", ""))
    span = reread_branch(k.body)
    assert span is not None and span.line == BEST_OF_TWO.splitlines().index("        if (sc[j][r] > best[r]) {") + 3


@pytest.mark.parametrize("body", [
    # scalars: nothing to vectorise along an array
    "float b = 0.0f; int w = -1; for (int j = 0; j < m; j++) { if (x[j] > b) { b = x[j]; w = j; } } y[0] = w;",
    # one store: the branch cannot be split
    "float b[2] = {0.0f, 0.0f}; for (int j = 0; j < m; j++) { if (x[j] > b[j & 1]) b[j & 1] = x[j]; } y[0] = b[0];",
    # the condition reads another array than the branch stores to
    "int c[2] = {0, 0}; for (int j = 0; j < m; j++) { if (x[j] > 0.5f) { c[j & 1] = j; y[j] = 1; } } y[0] = c[0];",
])
def test_other_branches_are_not(tmp_path, body):
    k = _kernel(tmp_path, f"__global__ void k(const float* x, int* y, int m) {{ {body} }}")
    assert reread_branch(k.body) is None


def test_the_kernel_compiles_unvectorised_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, BEST_OF_TWO, SPEC)
    assert k["check"]["status"] == "pass", k["check"]
    spec = importlib.util.spec_from_file_location("k_mod", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = mod.KERNELS["best_of_two"]
    assert ("tirx.disable_vectorize", True) in sig.pass_configs
    # lowered for CUDA (no GPU needed): the store of `where` follows the store of `best` in the
    # one branch, not in a second loop that tests the condition again
    import tilelang
    import tvm
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with tvm.transform.PassContext(config=dict(sig.pass_configs)), target:
        source = tilelang.lower(sig.factory((2, 1, 1), (16, 4, 1)), target=target).kernel_source
    lines = [ln.strip() for ln in source.splitlines()]
    stores = [i for i, ln in enumerate(lines) if ln.startswith("where[")]
    assert stores and all(lines[i - 1].startswith("best[") for i in stores), source
