"""analysis.recomputed_values: a portable kernel's per-thread index, computed before a barrier
from the thread and block indices and read after it, is computed again in each later phase (a
register) instead of living in a shared array indexed by the thread; a value read from memory
keeps its array. Checked equal on the CPU against the original."""
from __future__ import annotations

import json

from migrate.cli import main
from tests.analysis.support import spec_buffer, spec_kernel, spec_scalar

#: a 1-D smoothing stencil with a shared halo, as the pool writes them (convolution1D, boxfilter):
#: the global index and the tile index before the first barrier, read in the rounds and at the end
SMOOTH = """
#define R 2
#define TILE 128

__global__ void smooth(const float* __restrict__ in, float* __restrict__ out, int n, int rounds) {
  __shared__ float tile[TILE + 2 * R];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int lx = threadIdx.x + R;
  float v = i < n ? in[i] : 0.0f;
  tile[lx] = v;
  if (threadIdx.x < R) {
    int left = i - R;
    tile[threadIdx.x] = left >= 0 ? in[left] : 0.0f;
    int right = i + blockDim.x;
    tile[lx + blockDim.x] = right < n ? in[right] : 0.0f;
  }
  __syncthreads();
  for (int r = 0; r < rounds; r++) {
    int lo = lx - R;
    float s = 0.0f;
    for (int k = 0; k <= 2 * R; k++) s += tile[lo + k];
    __syncthreads();
    tile[lx] = s * 0.2f;
    __syncthreads();
  }
  if (i < n) out[i] = tile[lx] - v;
}
"""

SPEC = spec_kernel("smooth", (4, 1, 1), (128, 1, 1), "fp32",
                   spec_buffer("in", "float32", 500, "in", -1.0, 1.0),
                   spec_buffer("out", "float32", 500, "out"),
                   spec_scalar("n", "int32", 500), spec_scalar("rounds", "int32", 3))


def _portable(tmp_path, source, spec):
    (tmp_path / "k.cu").write_text(source)
    (tmp_path / "k.toml").write_text(spec)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "k.cu"), "-o", str(out), "-q", "--no-lift", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] == "portable" and k["check"]["status"] == "pass", k["check"]
    return [line.split("#")[0].strip() for line in (out / "k.py").read_text().splitlines()]


def test_indices_are_recomputed_in_each_phase_that_reads_them(tmp_path):
    lines = _portable(tmp_path, SMOOTH, SPEC)
    # no shared array for the indices; each phase that reads them computes them
    assert not any(line.startswith(("i = T.alloc_shared", "lx = T.alloc_shared", "i = alloc_thread", "lx = alloc_thread"))
                   for line in lines), lines
    assert lines.count("i = bx * block_x + tx") == 2      # the first phase and the last
    assert lines.count("lx = tx + 2") == 4                # the first, the round's two phases, the last
    assert "lo = lx - 2" in lines and "out[i] = tile_[lx] - v[tx]" in lines
    # the value read from memory keeps its per-thread array (registers on GPUs, emit.kernel)
    assert "v = alloc_thread((block_x,), T.float32, scope=thread_scope)" in lines


def test_a_value_assigned_again_keeps_its_array(tmp_path):
    """``i`` stepped after its declaration is no longer one expression of the indices."""
    source = SMOOTH.replace("  float v = i < n ? in[i] : 0.0f;", "  i = i + 0;\n  float v = i < n ? in[i] : 0.0f;")
    lines = _portable(tmp_path, source, SPEC)
    assert "i = alloc_thread((block_x,), T.int32, scope=thread_scope)" in lines
    assert lines.count("lx = tx + 2") == 4
