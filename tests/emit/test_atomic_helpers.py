"""The atomics TileLang has no operator for (``atomicCAS``, ``atomicExch``, ``atomicOr``,
``atomicAnd``, ``atomicXor``, ``atomicInc``) as the compat table's helpers on the element
(``cuda_math.atomicCAS(x[i], ...)``: the CUDA atomic on the GPU, a read-modify-write on the CPU),
the way union-find and assignment programs claim, swap and flag elements. Checked equal on the
CPU, on results that do not depend on the order the threads run in."""
from __future__ import annotations

from tests.analysis.support import converted, module_of, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
#include <cuda_runtime.h>
__global__ void claim(int* label, int* swap, int* old, unsigned* flags, unsigned* counter, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  int seen = atomicCAS(&label[i], label[i] > 0 ? label[i] : -1, i * 3);  // claim one's own element
  old[i] = atomicExch(&swap[(i + 7) % n], seen) + seen;  // each element swapped by one thread
  atomicOr(&flags[i / 32], 1u << (i % 32));
  atomicAnd(&flags[4 + i % 4], ~(1u << (i % 8)));
  atomicXor(&flags[8], (unsigned)i);
  if ((i & 3) == 0) atomicInc(&counter[0], 1000000u);
}
"""

SPEC = spec_kernel("claim", (2, 1, 1), (64, 1, 1), "exact",
                   spec_buffer("label", "int32", 128, "inout", -5, 5),
                   spec_buffer("swap", "int32", 128, "inout", -100, 100),
                   spec_buffer("old", "int32", 128, "out"),
                   spec_buffer("flags", "uint32", 9, "inout", 0, 1000000),
                   spec_buffer("counter", "uint32", 1, "inout", 0, 1000),
                   spec_scalar("n", "int32", 120))


def test_atomics_without_a_tilelang_operator_run_through_the_helpers(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["form"] not in ("hybrid", "unsupported") and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    for op in ("atomicCAS", "atomicExch", "atomicOr", "atomicAnd", "atomicXor", "atomicInc"):
        assert f"cuda_math.{op}(" in text, op


#: In a kernel with barriers (the portable form), inside a loop, at an index read from memory:
#: a zero-finding step of an assignment solver, covering each row and column once.
COVER = """
#include <cuda_runtime.h>
__global__ void cover(const int* zeros, int nz, int* cover_row, int* cover_col, int* star) {
  __shared__ int done;
  int i = threadIdx.x;
  if (i == 0) done = 0;
  __syncthreads();
  for (int j = i; j < nz; j += blockDim.x) {
    int z = zeros[j];
    int l = z & 63, c = z >> 6;
    star[j] = c;
    if (atomicExch(&cover_row[l], 1) == 0) atomicAdd(&done, 1);  // rows newly covered: any order
  }
  __syncthreads();
  star[nz + i] = done;  // every thread reads the count: no block sum to lift
}
"""

COVER_SPEC = spec_kernel("cover", (1, 1, 1), (64, 1, 1), "exact",
                         spec_buffer("zeros", "int32", 200, "in", 0, 4095),
                         spec_scalar("nz", "int32", 200),
                         spec_buffer("cover_row", "int32", 64, "inout", 0, 1),
                         spec_buffer("cover_col", "int32", 64, "inout", 0, 1),
                         spec_buffer("star", "int32", 264, "out"))


def test_an_atomic_helper_in_a_kernel_with_barriers_compiles_without_bounds_guards(tmp_path):
    out, (k,) = converted(tmp_path, COVER, COVER_SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert '("tl.disable_safe_memory_legalize", True)' in text and "cuda_math.atomicExch(" in text


#: Counters of an int buffer updated through addresses cast to unsigned, the way a program
#: testing the atomic intrinsics writes them; an ordering or a wider type through a cast is refused.
RECAST = """
#include <cuda_runtime.h>
__global__ void tally(int* g, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    atomicInc((unsigned int*)&g[0], 17);
    atomicDec((unsigned int*)&g[1], 137);
    atomicAdd((unsigned int*)&g[2], 3u);
    atomicSub((unsigned int*)&g[3], 5u);
    atomicOr((unsigned int*)&g[4], 1u << (i % 31));
  }
}
__global__ void ordered(int* g) { atomicMax((unsigned int*)&g[0], threadIdx.x); }
__global__ void wider(int* g) { atomicOr((unsigned long long*)&g[0], 1ull); }
"""

RECAST_SPEC = spec_kernel("tally", (2, 1, 1), (64, 1, 1), "exact",
                          spec_buffer("g", "int32", 5, "inout", -50, 50),
                          spec_scalar("n", "int32", 100))


def test_an_atomic_through_an_address_cast_to_unsigned_passes_the_element(tmp_path):
    """The helpers take the element's address as given (an ``int`` element here); nvcc refused
    the migrated kernel while the helper's parameter was ``unsigned int*`` (atomicIntrinsics)."""
    out, kernels = converted(tmp_path, RECAST, RECAST_SPEC, expect_ok=False)
    k = {k["kernel"]: k for k in kernels}
    assert k["tally"]["check"]["status"] == "pass", (k["tally"]["reason"], k["tally"]["check"])
    assert "reads an element of type int32 as uint32" in k["ordered"]["reason"]
    assert "reads an element of type int32 as uint64" in k["wider"]["reason"]
    import shutil
    if shutil.which("nvcc") is None:
        return
    import tilelang
    mod = module_of(out / "k.py")
    sig = mod.KERNELS["tally"]
    func = sig.factory((2, 1, 1), (64, 1, 1), 0, target="cuda")
    kernel = tilelang.compile(func, target={"kind": "cuda", "arch": "sm_90a"},
                              pass_configs=dict(sig.pass_configs))
    assert "c2t_atomicInc_u32(" in kernel.get_kernel_source()


#: The last block sums the blocks' partial sums: each block's thread 0 stores its partial sum,
#: fences, then takes a ticket; the block that takes the last reads every partial sum.
FENCED = """
#include <cuda_runtime.h>
__global__ void fenced_sum(const float* in, float* partial, float* total, unsigned* count, int n) {
  __shared__ float s[128];
  __shared__ bool last;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s[0];
    __threadfence();
    unsigned v = atomicAdd(&count[0], 1u);  // tickets from a multiple of the grid
    last = ((v + 1) % gridDim.x == 0);
  }
  __syncthreads();
  if (last && threadIdx.x == 0) {
    float t = 0.f;
    for (int b = 0; b < gridDim.x; b++) t += partial[b];
    total[0] = t;
    __threadfence_block();
  }
}
"""

FENCED_SPEC = spec_kernel("fenced_sum", (4, 1, 1), (128, 1, 1), "fp32",
                          spec_buffer("in", "float32", 500, "in", -2, 2),
                          spec_buffer("partial", "float32", 4, "out"),
                          spec_buffer("total", "float32", 1, "out"),
                          spec_buffer("count", "uint32", 1, "inout", 8, 8),
                          spec_scalar("n", "int32", 500))


def test_fences_in_a_phase_are_the_cuda_fence_on_the_gpu_and_nothing_on_the_cpu(tmp_path):
    """threadfence's last-block sum: the fence stands where the CUDA has it (a phase of the
    portable form), calls __threadfence in the CUDA TileLang generates, and costs nothing on c."""
    out, (k,) = converted(tmp_path, FENCED, FENCED_SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", (k["reason"], k["check"])
    import shutil
    if shutil.which("nvcc") is None:
        return
    import tilelang
    sig = module_of(out / "k.py").KERNELS["fenced_sum"]
    func = sig.factory((4, 1, 1), (128, 1, 1), 0, target="cuda")
    source = tilelang.compile(func, target={"kind": "cuda", "arch": "sm_90a"},
                              pass_configs=dict(sig.pass_configs)).get_kernel_source()
    assert "__threadfence(); return 0;" in source and "c2t___threadfence()" in source
    assert "__threadfence_block(); return 0;" in source
