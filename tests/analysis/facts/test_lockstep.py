"""analysis.facts.lockstep: threads exchanging values through volatile memory with no barrier
between (warp-synchronous code) are found; volatile memory each thread keeps to itself, or that
barriers separate, is not."""
from __future__ import annotations

from migrate.analysis.facts.lockstep import lockstep_exchange
from tests.analysis.support import unit

#: A warp's inclusive scan the way old CUDA code writes it: each lane adds its neighbours through
#: a volatile pointer, trusting the warp to run in lockstep.
WARP_SCAN = """
    __device__ unsigned lane_scan(unsigned v, volatile unsigned* buf) {
        int lane = threadIdx.x & 31;
        int at = 2 * threadIdx.x - lane + 32;
        buf[at - 32] = 0;
        buf[at] = v;
        buf[at] += buf[at - 1];
        buf[at] += buf[at - 2];
        buf[at] += buf[at - 4];
        return buf[at];
    }
    __global__ void scan(const unsigned* x, unsigned* y) {
        __shared__ unsigned s[512];
        y[threadIdx.x] = lane_scan(x[threadIdx.x], s);
    }
"""

#: The last warp of a tree reduction, unrolled on a volatile view of the shared array.
LAST_WARP = """
    __global__ void total(const float* x, float* y) {
        __shared__ float s[64];
        int t = threadIdx.x;
        s[t] = x[t];
        __syncthreads();
        if (t < 32) {
            volatile float* vs = s;
            vs[t] += vs[t + 32];
            vs[t] += vs[t + 16];
        }
        if (t == 0) y[0] = s[0];
    }
"""

#: A volatile shared array a loop combines without a barrier.
LOOP = """
    __global__ void groups(const float* x, float* y, int width) {
        __shared__ volatile float r[128];
        int lane = threadIdx.x % width;
        r[threadIdx.x] = x[threadIdx.x];
        for (int half = width / 2; half > 0; half /= 2)
            if (lane < half) r[threadIdx.x] += r[threadIdx.x + half];
        if (lane == 0) y[threadIdx.x / width] = r[threadIdx.x];
    }
"""

#: The same exchanges with a barrier between every write and the reads of other elements;
#: volatile shared memory each thread reads and writes at its own element only; and volatile
#: global memory, which each thread of an element-wise kernel reads and writes at elements of its
#: own (the flags and counters other blocks write are not warp-synchronous code).
SEPARATED = """
    __device__ void fold(volatile float* s, int t) {
        float v = s[t];
        v += s[t + 16];  __syncwarp();
        s[t] = v;        __syncwarp();
        v += s[t + 8];   __syncwarp();
        s[t] = v;
    }
    __global__ void folded(float* y) {
        __shared__ float s[64];
        s[threadIdx.x] = y[threadIdx.x];
        __syncthreads();
        if (threadIdx.x < 32) fold(s, threadIdx.x);
        __syncthreads();
        y[threadIdx.x] = s[threadIdx.x];
    }
    __global__ void own(float* y) {
        __shared__ volatile float s[64];
        s[threadIdx.x] = y[threadIdx.x];
        s[threadIdx.x] += 1.0f;
        y[threadIdx.x] = s[threadIdx.x];
    }
    __global__ void step(volatile float* __restrict__ p, volatile float* __restrict__ v, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) { p[i] += v[i]; p[i + n] += v[i + n]; v[i] = 0.0f; }
    }
"""


def _table(u):
    return {f.name: f for f in u.device_functions}


def test_a_warp_scan_through_a_volatile_pointer_is_found_in_the_device_function(tmp_path):
    u = unit(tmp_path, WARP_SCAN)
    found = lockstep_exchange(u.kernel("scan"), _table(u))
    assert found is not None and (found.function, found.buffer) == ("lane_scan", "buf")
    # line 10, buf[at] += buf[at - 1]: the first read in the interval where the lanes stored to
    # other elements (buf[at - 32], line 8)
    assert (found.write.line, found.read.line) == (8, 10)
    # called with global memory, the same device function is no warp-synchronous exchange
    u = unit(tmp_path, WARP_SCAN.replace("__shared__ unsigned s[512];", "unsigned* s = y + 1024;"))
    assert lockstep_exchange(u.kernel("scan"), _table(u)) is None


#: hungarian's reduction: a namespace-scope __shared__ array that a device function template
#: fills, then hands to the last warp's volatile unrolled tree.
NAMESPACE_SHARED = """
    __shared__ int sdata[256];
    template <unsigned int bs>
    __device__ void warp_min(volatile int* s, int tid) {
      if (bs >= 64) s[tid] = min(s[tid], s[tid + 32]);
      if (bs >= 32) s[tid] = min(s[tid], s[tid + 16]);
    }
    template <unsigned int bs>
    __device__ void block_min(const int* x, int* y) {
      unsigned tid = threadIdx.x;
      sdata[tid] = x[blockIdx.x * bs + tid];
      __syncthreads();
      if (tid < 32) warp_min<bs>(sdata, tid);
      if (tid == 0) y[blockIdx.x] = sdata[0];
    }
    __global__ void kmin(const int* x, int* y) { block_min<256>(x, y); }
"""


def test_a_namespace_scope_shared_array_passed_to_a_volatile_parameter_is_found(tmp_path):
    u = unit(tmp_path, NAMESPACE_SHARED)
    found = lockstep_exchange(u.kernel("kmin"), _table(u))
    assert found is not None and (found.function, found.buffer) == ("warp_min", "s")


def test_a_volatile_view_and_a_volatile_shared_array_are_found(tmp_path):
    found = lockstep_exchange(unit(tmp_path, LAST_WARP).kernel("total"), {})
    assert found is not None and (found.function, found.buffer) == ("total", "vs")
    found = lockstep_exchange(unit(tmp_path, LOOP).kernel("groups"), {})
    assert found is not None and found.buffer == "r"


def test_barriers_between_own_elements_and_global_memory_are_not_exchanges(tmp_path):
    u = unit(tmp_path, SEPARATED)
    for kernel in ("folded", "own", "step"):
        assert lockstep_exchange(u.kernel(kernel), _table(u)) is None, kernel


#: A transpose through shared memory the way 8x8 DCT kernels write it: each thread stores a column
#: through one view and loads a row through another, trusting its warp to run in lockstep.
TWO_VIEWS = """
    __global__ void transpose8(const float* src, float* dst, int stride) {
        __shared__ float tile[4 * 33];
        int x = threadIdx.x, m = x & 7;
        float* col = &tile[x];
        float* row = &tile[m * 33 + x - m];
        for (int i = 0; i < 8; i++) col[i * 33] = src[i * stride + x];
        %s
        float d[8];
        for (int i = 0; i < 8; i++) d[i] = row[i];
        for (int i = 0; i < 8; i++) dst[i * stride + x] = d[i] * 2.0f;
    }
"""

#: One view of a shared array, reduced as a tree: its own elements, no exchange between views.
ONE_VIEW_TREE = """
    __global__ void amax(const float* x, float* y, int cols) {
        extern __shared__ float smem[];
        float* s_red = smem + cols;
        s_red[threadIdx.x] = x[threadIdx.x];
        __syncthreads();
        for (int h = blockDim.x / 2; h > 0; h >>= 1) {
            if (threadIdx.x < h) s_red[threadIdx.x] = fmaxf(s_red[threadIdx.x], s_red[threadIdx.x + h]);
            __syncthreads();
        }
        y[blockIdx.x] = s_red[0];
    }
"""


def test_two_views_of_one_shared_array_exchanging_without_a_barrier_are_found(tmp_path):
    found = lockstep_exchange(unit(tmp_path, TWO_VIEWS % "").kernel("transpose8"), {})
    assert found is not None and found.views and found.buffer == "tile"
    assert (found.write.line, found.read.line) == (10, 13)  # after the three include lines


def test_views_separated_by_a_barrier_or_a_single_view_tree_are_not(tmp_path):
    assert lockstep_exchange(unit(tmp_path, TWO_VIEWS % "__syncthreads();").kernel("transpose8"), {}) is None
    assert lockstep_exchange(unit(tmp_path, ONE_VIEW_TREE).kernel("amax"), {}) is None
