"""A tree reduction whose steps are guarded by the block (``if (tid < s && tid + s < blockDim.x)``)
from a constant width, the way Monte Carlo codes sum per-block statistics and then launch the same
kernel once more over the block sums with a block of ``NBLOCK`` threads (224, not a power of two):
it folds every lane of any block of at most that width into lane 0. The lifted factory asserts
``block_x <= 256`` and no power-of-two block: the lifted sum equals the CUDA's at 224 and 96
threads. TileLang's reduction on GPUs is a butterfly over a power-of-two count of threads (224 did
not build on the H100), so on another block one thread adds the lanes in order through shared
cells (``serial_total``), on every target: the CPU check runs the code the GPU runs."""
from __future__ import annotations

from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar

SOURCE = """
#include <cuda_runtime.h>
__global__ void block_sums(const int n, const float *data, float *sums)
{
  int nthread = blockDim.x * gridDim.x;
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  __shared__ float sdata[512];
  float st = 0.0f;
  while (i < n) {
    st += data[i];
    i += nthread;
  }
  sdata[threadIdx.x] = st;
  __syncthreads();
  int tid = threadIdx.x;
  for (unsigned int s = 128; s > 0; s >>= 1) {
    if (tid < s && (tid + s) < blockDim.x) {
      sdata[tid] += sdata[tid + s];
    }
    __syncthreads();
  }
  if (tid == 0) sums[blockIdx.x] = sdata[0];
}
int main()
{
  float *d, *b, *t;
  cudaMalloc(&d, 4 * 20000); cudaMalloc(&b, 4 * 224); cudaMalloc(&t, 4);
  block_sums<<<224, 256>>>(20000, d, b);
  block_sums<<<1, 224>>>(224, b, t);
}
"""

SPEC = spec_kernel("block_sums", (3, 1, 1), (224, 1, 1), "fp32_accum",
                   spec_scalar("n", "int32", 5000),
                   spec_buffer("data", "float32", 5000, "in", -1, 1),
                   spec_buffer("sums", "float32", 3, "out"))


def _reference(data, blocks, threads):
    import numpy as np
    lanes = np.zeros(blocks * threads)
    for i, v in enumerate(data.astype(np.float64)):
        lanes[i % (blocks * threads)] += v
    return lanes.reshape(blocks, threads).sum(axis=1)


def test_guarded_tree_lifts_for_blocks_that_are_no_power_of_two(tmp_path):
    import numpy as np
    import torch

    out, kernels = converted(tmp_path, SOURCE, SPEC)
    assert [(k["kernel"], k["form"], k["check"]["status"]) for k in kernels] == [("block_sums", "tile", "pass")]
    text = (out / "k.py").read_text()
    assert "assert block_x <= 256" in text
    mod = module_of(out / "k.py")
    rng = np.random.default_rng(5)
    data = rng.uniform(-1, 1, 3000).astype(np.float32)
    for blocks, threads in ((2, 96), (1, 224), (4, 256)):
        sums = torch.full((blocks,), float("nan"), dtype=torch.float32)
        mod.block_sums(3000, torch.from_numpy(data), sums, grid=blocks, block=threads, target="c")
        assert np.allclose(sums.numpy(), _reference(data, blocks, threads), rtol=1e-4, atol=1e-4)


def test_guarded_tree_refuses_a_block_wider_than_its_width(tmp_path):
    import pytest

    out, _ = converted(tmp_path, SOURCE)
    sig = module_of(out / "k.py").KERNELS["block_sums"]
    with pytest.raises(AssertionError, match="at most 256"):
        sig.factory((1, 1, 1), (512, 1, 1), 0, target="c")
    # 224 threads on GPUs: the lanes go through shared cells and one thread adds them in order
    from tests.lowering import lower_sm90
    source = lower_sm90(sig, (1, 1, 1), (224, 1, 1))
    assert "__shared__" in source and "for (int x_cell = 1; x_cell < 224; ++x_cell)" in source, source
    source = lower_sm90(sig, (4, 1, 1), (128, 1, 1))   # a power of two: TileLang's reduction
    assert "x_cell" not in source and ("AllReduce" in source or "__shfl_xor_sync" in source), source
