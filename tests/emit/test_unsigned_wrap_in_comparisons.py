"""An unsigned ``n - 1`` in a comparison (``i < n - 1`` with ``unsigned n``, as the pool's heat
stencil writes its boundary tests): printed ``n + (2**32 - 1)``, whose widening to int64 TVM moves
inside the sum, where it no longer wraps (every ``i < n - 1`` held, and the H200 read the next
row at each row's last column). The widened value is masked back to 32 bits. And ``u[i - 1 + j * n]`` under
``i > 0``: ``(unsigned)(i - 1)`` is printed ``(unsigned)i + (2**32 - 1)``, which TVM folds at i = 0
without refusing a negative unsigned value (the tile form did not compile)."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

KERNEL = """
__global__ void stencil(const unsigned int n, const double r, const double r2,
                        const double* __restrict__ u, double* __restrict__ u_tmp) {
    int idx = blockDim.x * blockIdx.x + threadIdx.x;
    if (idx < n * n) {
        int i = idx % n;
        int j = idx / n;
        u_tmp[i + j * n] = r2 * u[i + j * n] + r * ((i < n - 1) ? u[i + 1 + j * n] : 0.0)
                         + r * ((i > 0) ? u[i - 1 + j * n] : 0.0)
                         + r * ((j < n - 1) ? u[i + (j + 1) * n] : 0.0)
                         + r * ((j > 0) ? u[i + (j - 1) * n] : 0.0);
    }
}
"""

SPEC = (
    spec_kernel("stencil", (4, 1, 1), (256, 1, 1), "fp64",
                spec_scalar("n", "uint32", 31),
                spec_scalar("r", "float64", 0.25),
                spec_scalar("r2", "float64", 0.5),
                spec_buffer("u", "float64", 961, "in", -1.0, 1.0),
                spec_buffer("u_tmp", "float64", 961, "out"))
)


def test_unsigned_minus_one_in_a_comparison_wraps_and_checks_equal(tmp_path):
    out, rows = converted(tmp_path, KERNEL, SPEC)
    (k,) = rows
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "(T.Cast(T.int64, n + T.uint32(2**32 - 1)) & T.int64(4294967295))" in text
    assert "u[T.Cast(T.uint32, i) + T.uint32(2**32 - 1) + T.Cast(T.uint32, j) * n]" in text


#: The sign test of an unsigned 64-bit value read as signed, as random-access and CRC kernels
#: step a generator (``ran = (ran << 1) ^ ((long long)ran < 0 ? POLY : 0)``): TVM took the cast
#: for a change of value, held an unsigned value non-negative and folded the test to false. Twice
#: in one statement (a generator stepped twice), each test reads the value it is given.
SIGN_TEST = """
typedef unsigned long long u64;
__global__ void xr(u64* t, const u64* v, u64 size) {
  int j = threadIdx.x;
  u64 ran = v[j];
  for (int i = 0; i < 4; i++) {
    ran = (ran << 1) ^ ((long long) ran < 0 ? 7ull : 0ull);
    ran = (ran << 1) ^ ((long long) ran < 0 ? 7ull : 0ull);
    t[(j * 4 + i) & (size - 1)] = ran + ((long long) ran >= 0) + 2 * ((int) (unsigned) ran > 0)
                                  + 4 * ((long long) (ran >> 1) <= 0);
  }
}
"""

SIGN_SPEC = spec_kernel("xr", (1, 1, 1), (64, 1, 1), "exact",
                        spec_buffer("t", "uint64", 256, "out"),
                        spec_buffer("v", "uint64", 64, "in", 0, 18000000000000000000),
                        spec_scalar("size", "uint64", 256))


def test_the_sign_of_an_unsigned_value_read_as_signed_is_its_top_bit(tmp_path):
    out, (k,) = converted(tmp_path, SIGN_TEST, SIGN_SPEC)
    assert k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "ran >> T.uint64(63) != 0" in (out / "k.py").read_text()


#: bh's force kernel: each warp's first thread and a lane's distance from it, ``threadIdx.x -
#: sbase`` taken as an int (an unsigned subtraction in C), in a kernel of warp votes (simt form).
LANE_OFFSET = """
#define WARPSIZE 32
#define DEPTH 8
__global__ void lanes(const float* __restrict__ x, float* __restrict__ y, int n) {
  __shared__ float dq[DEPTH * 8];
  if (threadIdx.x == 0)
    for (int i = 0; i < DEPTH; i++) dq[i] = x[i] * 0.5f;
  __syncthreads();
  int base = threadIdx.x / WARPSIZE;
  int sbase = base * WARPSIZE;
  int j = base * DEPTH;
  int diff = threadIdx.x - sbase;
  if (base > 0 && diff < DEPTH) dq[diff + j] = dq[diff];
  __syncthreads();
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  float v = 0.0f;
  for (int t = k; t < n; t += blockDim.x * gridDim.x) {
    if (__all_sync(0xffffffff, x[t] > 0.0f)) v += dq[j + (t % DEPTH)];
    __syncwarp();
    y[t] = x[t] + v + diff;
  }
}
"""

LANE_OFFSET_SPEC = spec_kernel("lanes", (2, 1, 1), (128, 1, 1), "fp32",
                               spec_buffer("x", "float32", 512, "in", -1.0, 1.0),
                               spec_buffer("y", "float32", 512, "out"),
                               spec_scalar("n", "int32", 512))


def test_an_unsigned_difference_read_as_int_is_the_ints_difference(tmp_path):
    """``(int)((unsigned)a - (unsigned)b)`` is printed ``a - b`` (the same bits): TVM refused the
    unsigned form while lowering for CUDA ("Minuend's value is 0U", where it folded both sides)."""
    out, (k,) = converted(tmp_path, LANE_OFFSET, LANE_OFFSET_SPEC)
    assert k["form"] == "simt"  # checked on GPUs only (bench/test_kernels.py)
    assert "diff = tx - sbase" in (out / "k.py").read_text()
    import importlib.util

    import tilelang
    import tvm
    spec = importlib.util.spec_from_file_location("k_lanes", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = mod.KERNELS["lanes"]
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with tvm.transform.PassContext(config=dict(sig.pass_configs)), target:
        source = tilelang.lower(sig.factory((2, 1, 1), (128, 1, 1)), target=target).kernel_source
    assert "__all_sync" in source or "__all" in source


#: fpc's compressor: an absolute value returned as unsigned by a device function (``(x ^ t) -
#: t``) compared with a small constant in an else-if chain. The widened comparison
#: ``(int64)my_abs(w) <= 255`` was narrowed by TVM's NarrowDataType to ``(int)my_abs(w) <= 255``
#: on the CUDA path only: INT_MIN's absolute value 0x80000000 passed the signed test on the GPU
#: (fpc_kernel's compressed size came out 0.7 % short on an H100) while the CPU target was exact.
HIDDEN_WRAP = """
typedef unsigned long ulong;
__device__ unsigned my_abs(int x) {
  unsigned t = x >> 31;
  return (x ^ t) - t;
}
__global__ void sizes(const ulong* codes, unsigned* total) {
  __shared__ unsigned block_size;
  int lid = threadIdx.x;
  ulong value = codes[blockIdx.x * blockDim.x + lid] << 28;
  unsigned inc;
  if (value == 0) {
    inc = 1;
  } else if (my_abs((int)value) <= 0xFF) {
    inc = 1;
  } else if (my_abs((int)value) <= 0xFFFF) {
    inc = 2;
  } else if ((value & 0xFFFF) == 0) {
    inc = 3;
  } else if (my_abs((int)(value & 0xFFFF)) <= 0xFF && my_abs((int)((value >> 16) & 0xFFFF)) <= 0xFF) {
    inc = 5;
  } else if ((value & 0xFF) == ((value >> 8) & 0xFF)) {
    inc = 6;
  } else {
    inc = 4;
  }
  if (lid == 0) block_size = 0;
  __syncthreads();
  atomicAdd(&block_size, inc);
  __syncthreads();
  if (lid == blockDim.x - 1) atomicAdd(total, block_size);
}
"""

HIDDEN_WRAP_SPEC = spec_kernel("sizes", (2, 1, 1), (128, 1, 1), "exact",
                               spec_buffer("codes", "uint64", 256, "in", 1, 15),
                               spec_buffer("total", "uint32", 1, "inout", 0, 9))


def test_an_unsigned_device_function_result_stays_unsigned_in_the_cuda_comparison(tmp_path):
    out, (k,) = converted(tmp_path, HIDDEN_WRAP, HIDDEN_WRAP_SPEC)
    assert k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    import importlib.util

    import tilelang
    import tvm
    spec = importlib.util.spec_from_file_location("k_sizes", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = mod.KERNELS["sizes"]
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with tvm.transform.PassContext(config=dict(sig.pass_configs)), target:
        source = tilelang.lower(sig.factory((2, 1, 1), (128, 1, 1)), target=target).kernel_source
    assert k["form"] == "tile"
    tests = [line for line in source.splitlines() if "<= " in line and "255" in line]
    assert tests and all("<= (int64_t)255" in line and "<= 255" not in line for line in tests), tests
