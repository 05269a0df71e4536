"""A local array's initialiser list that names fewer elements than the array holds leaves the
rest zero, as C++ value-initialises them (``int pre[NODE_N] = {0};`` in bn's computeKernel is
45 zeros). The migrated kernel wrote only the listed elements: the others kept whatever the
thread's memory held, and on an H100 bn's kernel then read a parent index out of such garbage and
faulted. TileLang allocates a local array once per thread, so an array declared inside a loop
shows it on the CPU too: each round must start from the list again, not from the last round's
counts. Checked: the module's text and its CPU run against a plain Python reference."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

ROUNDS = """
#include <cuda_runtime.h>
__global__ void round_counts(const int* __restrict__ x, int* __restrict__ out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int total = 0;
  for (int r = 0; r < 3; r++) {
    int counts[6] = {1};
    float w[2][3] = {{1.5f}, {2.5f, 1.0f}};
    int big[40] = {};
    for (int k = 0; k < 4; k++) {
      counts[(x[4 * i + k] + r) % 6] += k + 1;
      w[k & 1][(x[4 * i + k] + k) % 3] += 1.0f;
      big[(x[4 * i + k] * 7 + r) % 40] += k;
    }
    total = total * 5 + counts[(x[4 * i] + r + 1) % 6] + (int)(2.0f * w[r & 1][(x[4 * i + 1] + r) % 3])
            + big[(x[4 * i + 2] * 7 + r) % 40] + big[(r * 13) % 40];
  }
  out[i] = total;
}
"""


def reference(x: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n, np.int64)
    for i in range(n):
        total = 0
        for r in range(3):
            counts = [1, 0, 0, 0, 0, 0]
            w = [[1.5, 0.0, 0.0], [2.5, 1.0, 0.0]]
            big = [0] * 40
            for k in range(4):
                v = int(x[4 * i + k])
                counts[(v + r) % 6] += k + 1
                w[k & 1][(v + k) % 3] += 1.0
                big[(v * 7 + r) % 40] += k
            total = (total * 5 + counts[(int(x[4 * i]) + r + 1) % 6]
                     + int(2.0 * w[r & 1][(int(x[4 * i + 1]) + r) % 3])
                     + big[(int(x[4 * i + 2]) * 7 + r) % 40] + big[(r * 13) % 40])
        out[i] = total
    return out


@pytest.fixture(scope="module")
def rounds(tmp_path_factory):
    out, (k,) = converted(tmp_path_factory.mktemp("partial_init"), ROUNDS)
    assert k["form"] in ("tile", "portable", "simt"), k["reason"]
    return out


def test_the_elements_a_list_leaves_out_are_zeroed(rounds):
    text = (rounds / "k.py").read_text()
    assert "counts[0] = 1" in text and all(f"counts[{j}] = 0" in text for j in range(1, 6)), text
    assert "w[0, 0] = T.float32(1.5)" in text and "w[1, 1] = T.float32(1.0)" in text, text
    for idx in ("w[0, 1]", "w[0, 2]", "w[1, 2]"):  # the rows' missing tails
        assert f"{idx} = 0" in text, (idx, text)
    # forty elements: a loop, not forty stores
    assert "for zero_0_ in T.serial(40):" in text and "big[zero_0_] = 0" in text, text


def test_each_round_starts_from_the_list_on_the_cpu(rounds):
    pytest.importorskip("tilelang")
    mod = module_of(rounds / "k.py")
    n = 300
    x = np.random.default_rng(11).integers(0, 1000, 4 * n, dtype=np.int32)
    got = np.full(n, -2**31, np.int32)  # poisoned
    mod.round_counts(x, got, n, grid=(n + 127) // 128, block=128, target="c")
    np.testing.assert_array_equal(got.astype(np.int64), reference(x, n))
