// c2t_device.h - atomics, cooperative groups and other device functions for the CPU executor.
// Part of cuda_cpu.h; do not include on its own.
//
// Atomics are plain read-modify-write: the threads of a block are cooperative fibers on one
// OS thread and blocks run one after another, so nothing can interleave inside an atomic.
#pragma once

// ----------------------------------------------------------------------------- atomics
#define C2T_ATOMIC_RMW(NAME, T, EXPR)                                                              \
    static inline T NAME(T* p, T v) { T old = *p; *p = (T)(EXPR); return old; }                    \
    static inline T NAME##_block(T* p, T v) { return NAME(p, v); }                                  \
    static inline T NAME##_system(T* p, T v) { return NAME(p, v); }

C2T_ATOMIC_RMW(atomicAdd, int, old + v)
C2T_ATOMIC_RMW(atomicAdd, unsigned int, old + v)
C2T_ATOMIC_RMW(atomicAdd, unsigned long long, old + v)
C2T_ATOMIC_RMW(atomicAdd, long long, (long long)((unsigned long long)old + (unsigned long long)v))
C2T_ATOMIC_RMW(atomicAdd, float, old + v)
C2T_ATOMIC_RMW(atomicAdd, double, old + v)
C2T_ATOMIC_RMW(atomicAdd, __half, old + v)
C2T_ATOMIC_RMW(atomicAdd, __nv_bfloat16, old + v)
C2T_ATOMIC_RMW(atomicAdd, __half2, old + v)
C2T_ATOMIC_RMW(atomicAdd, __nv_bfloat162, old + v)
C2T_ATOMIC_RMW(atomicSub, int, old - v)
C2T_ATOMIC_RMW(atomicSub, unsigned int, old - v)
C2T_ATOMIC_RMW(atomicSub, unsigned long long, old - v)
C2T_ATOMIC_RMW(atomicExch, int, v)
C2T_ATOMIC_RMW(atomicExch, unsigned int, v)
C2T_ATOMIC_RMW(atomicExch, unsigned long long, v)
C2T_ATOMIC_RMW(atomicExch, long long, v)
C2T_ATOMIC_RMW(atomicExch, float, v)
C2T_ATOMIC_RMW(atomicExch, double, v)
C2T_ATOMIC_RMW(atomicMin, int, v < old ? v : old)
C2T_ATOMIC_RMW(atomicMin, unsigned int, v < old ? v : old)
C2T_ATOMIC_RMW(atomicMin, long long, v < old ? v : old)
C2T_ATOMIC_RMW(atomicMin, unsigned long long, v < old ? v : old)
C2T_ATOMIC_RMW(atomicMax, int, v > old ? v : old)
C2T_ATOMIC_RMW(atomicMax, unsigned int, v > old ? v : old)
C2T_ATOMIC_RMW(atomicMax, long long, v > old ? v : old)
C2T_ATOMIC_RMW(atomicMax, unsigned long long, v > old ? v : old)
C2T_ATOMIC_RMW(atomicAnd, int, old & v)
C2T_ATOMIC_RMW(atomicAnd, unsigned int, old & v)
C2T_ATOMIC_RMW(atomicAnd, unsigned long long, old & v)
C2T_ATOMIC_RMW(atomicOr, int, old | v)
C2T_ATOMIC_RMW(atomicOr, unsigned int, old | v)
C2T_ATOMIC_RMW(atomicOr, unsigned long long, old | v)
C2T_ATOMIC_RMW(atomicXor, int, old ^ v)
C2T_ATOMIC_RMW(atomicXor, unsigned int, old ^ v)
C2T_ATOMIC_RMW(atomicXor, unsigned long long, old ^ v)
C2T_ATOMIC_RMW(atomicInc, unsigned int, old >= v ? 0u : old + 1u)
C2T_ATOMIC_RMW(atomicDec, unsigned int, (old == 0u || old > v) ? v : old - 1u)
#undef C2T_ATOMIC_RMW

#define C2T_ATOMIC_CAS(T)                                                                          \
    static inline T atomicCAS(T* p, T compare, T val) { T old = *p; if (old == compare) *p = val; return old; } \
    static inline T atomicCAS_block(T* p, T c, T v) { return atomicCAS(p, c, v); }                  \
    static inline T atomicCAS_system(T* p, T c, T v) { return atomicCAS(p, c, v); }
C2T_ATOMIC_CAS(int)
C2T_ATOMIC_CAS(unsigned int)
C2T_ATOMIC_CAS(unsigned long long)
C2T_ATOMIC_CAS(unsigned short)
#undef C2T_ATOMIC_CAS
// CUDA 12.8's scoped atomics (cuda_cpu.h says CUDA_VERSION 12080): a relaxed load reads the element
#define __NV_ATOMIC_RELAXED 0
#define __NV_ATOMIC_CONSUME 1
#define __NV_ATOMIC_ACQUIRE 2
#define __NV_ATOMIC_RELEASE 3
#define __NV_ATOMIC_ACQ_REL 4
#define __NV_ATOMIC_SEQ_CST 5
template <typename T> static inline T __nv_atomic_load_n(const T* p, int, int = 0) { return *p; }
static inline float2 atomicAdd(float2* p, float2 v) { float2 o = *p; p->x += v.x; p->y += v.y; return o; }
static inline float4 atomicAdd(float4* p, float4 v) { float4 o = *p; p->x += v.x; p->y += v.y; p->z += v.z; p->w += v.w; return o; }

// ----------------------------------------------------------------------------- misc device functions
static inline long long clock64() {
#if defined(__x86_64__)
    unsigned lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return (long long)(((unsigned long long)hi << 32) | lo);
#else
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
#endif
}
static inline unsigned long long __globaltimer() {
    struct timespec ts; clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}
static inline void __trap() { __builtin_trap(); }
static inline void __brkpt() { __builtin_trap(); }
static inline void __prof_trigger(int) {}
static inline unsigned int __isGlobal(const void*) { return 1; }
static inline unsigned int __isShared(const void* p) {
    const char* c = (const char*)p;
    return (c >= __start_c2t_shared && c < __stop_c2t_shared) ||
           (c2t::g_dsm.ptr && c >= c2t::g_dsm.ptr && c < c2t::g_dsm.guard);
}
static inline unsigned int __isConstant(const void*) { return 0; }
static inline unsigned int __isLocal(const void*) { return 0; }
static inline size_t __cvta_generic_to_shared(const void* p) { return (size_t)p; }
static inline size_t __cvta_generic_to_global(const void* p) { return (size_t)p; }
static inline void* __cvta_shared_to_generic(size_t a) { return (void*)a; }
static inline void* __cvta_global_to_generic(size_t a) { return (void*)a; }
#if !defined(__clang__)
#define __builtin_assume(x) ((void)0)
#endif
static inline unsigned int __smid() { return 0; }
static inline unsigned int __nsmid() { return 1; }

// ----------------------------------------------------------------------------- cooperative groups
namespace cooperative_groups {

class thread_group {
public:
    unsigned mask_;     // lanes of the warp (tiles); 0 for a whole block
    unsigned size_;
    unsigned rank_stride_;
    thread_group(unsigned mask, unsigned size) : mask_(mask), size_(size), rank_stride_(size) {}
    void sync() const {
        if (mask_) __syncwarp(mask_);
        else __syncthreads();
    }
    unsigned long long size() const { return size_; }
    unsigned long long num_threads() const { return size_; }
    unsigned long long thread_rank() const {
        unsigned t = (unsigned)c2t::g.cur;
        return mask_ ? (t % size_) : t;
    }
};

class thread_block : public thread_group {
public:
    thread_block() : thread_group(0u, blockDim.x * blockDim.y * blockDim.z) {}
    void sync() const { __syncthreads(); }
    unsigned long long thread_rank() const { return (unsigned)c2t::g.cur; }
    dim3 group_index() const { return dim3(blockIdx); }
    dim3 thread_index() const { return dim3(threadIdx); }
    dim3 group_dim() const { return blockDim; }
    dim3 dim_threads() const { return blockDim; }
};
static inline thread_block this_thread_block() { return thread_block(); }

class grid_group {
public:
    void sync() const {
        fprintf(stderr, "cuda2tile CPU executor: grid.sync() is not supported (blocks run one at a time)\n");
        abort();
    }
    unsigned long long size() const {
        return (unsigned long long)gridDim.x * gridDim.y * gridDim.z * blockDim.x * blockDim.y * blockDim.z;
    }
    unsigned long long num_threads() const { return size(); }
    unsigned long long thread_rank() const {
        unsigned long long b = blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
        return b * blockDim.x * blockDim.y * blockDim.z + (unsigned)c2t::g.cur;
    }
    bool is_valid() const { return true; }
    dim3 group_dim() const { return gridDim; }
    unsigned long long num_blocks() const { return (unsigned long long)gridDim.x * gridDim.y * gridDim.z; }
    unsigned long long block_rank() const { return blockIdx.x + (unsigned long long)gridDim.x * (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z); }
};
static inline grid_group this_grid() { return grid_group(); }

// A tile of N consecutive threads (N a power of two, at most 32) of the block.
template <unsigned N, class Parent = void>
class thread_block_tile;

template <unsigned N>
class thread_block_tile<N, void> {
    static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "tiles of 1, 2, 4, 8, 16 or 32 threads are supported");
public:
    static constexpr unsigned num_threads_ = N;
    unsigned mask() const {
        unsigned lane = (unsigned)c2t::lane_id();
        unsigned base = lane & ~(N - 1);
        return (N == 32 ? 0xFFFFFFFFu : ((1u << N) - 1u)) << base;
    }
    void sync() const { __syncwarp(mask()); }
    static constexpr unsigned long long size() { return N; }
    static constexpr unsigned long long num_threads() { return N; }
    unsigned long long thread_rank() const { return (unsigned)c2t::g.cur & (N - 1); }
    unsigned long long meta_group_rank() const { return (unsigned)c2t::g.cur / N; }
    unsigned long long meta_group_size() const {
        unsigned n = blockDim.x * blockDim.y * blockDim.z;
        return (n + N - 1) / N;
    }
    template <class T> T shfl(T v, int src) const { return __shfl_sync(mask(), v, src, (int)N); }
    template <class T> T shfl_down(T v, unsigned d) const { return __shfl_down_sync(mask(), v, d, (int)N); }
    template <class T> T shfl_up(T v, unsigned d) const { return __shfl_up_sync(mask(), v, d, (int)N); }
    template <class T> T shfl_xor(T v, int m) const { return __shfl_xor_sync(mask(), v, m, (int)N); }
    int any(int p) const { return __any_sync(mask(), p); }
    int all(int p) const { return __all_sync(mask(), p); }
    unsigned ballot(int p) const {
        unsigned b = __ballot_sync(mask(), p);
        return b >> ((unsigned)c2t::lane_id() & ~(N - 1));
    }
    template <class T> unsigned match_any(T v) const {
        return __match_any_sync(mask(), v) >> ((unsigned)c2t::lane_id() & ~(N - 1));
    }
    operator thread_group() const { return thread_group(mask(), N); }
};

template <unsigned N, class Parent>
class thread_block_tile : public thread_block_tile<N, void> {};

template <unsigned N, class Parent>
static inline thread_block_tile<N, Parent> tiled_partition(const Parent&) { return thread_block_tile<N, Parent>(); }

static inline thread_group tiled_partition(const thread_block&, unsigned n) {
    unsigned lane = (unsigned)c2t::lane_id();
    if (n >= 32) return thread_group(0xFFFFFFFFu, n > 32 ? 32 : n);
    unsigned base = lane & ~(n - 1);
    return thread_group(((1u << n) - 1u) << base, n);
}

class coalesced_group : public thread_group {
public:
    coalesced_group() : thread_group(__activemask(), (unsigned)__popc(__activemask())) {}
    unsigned long long thread_rank() const { return (unsigned)__popc(mask_ & __lanemask_lt()); }
    template <class T> T shfl(T v, int src) const {
        unsigned m = mask_;
        for (int i = 0; i < src; ++i) m &= m - 1;
        return __shfl_sync(mask_, v, m ? __builtin_ctz(m) : 0);
    }
    unsigned ballot(int p) const { return __ballot_sync(mask_, p); }
    int any(int p) const { return __any_sync(mask_, p); }
    int all(int p) const { return __all_sync(mask_, p); }
};
static inline coalesced_group coalesced_threads() { return coalesced_group(); }

template <class G> static inline void sync(const G& g) { g.sync(); }

template <class T> struct plus { T operator()(const T& a, const T& b) const { return a + b; } };
template <class T> struct less { T operator()(const T& a, const T& b) const { return a < b ? a : b; } };
template <class T> struct greater { T operator()(const T& a, const T& b) const { return a < b ? b : a; } };
template <class T> struct bit_and { T operator()(const T& a, const T& b) const { return a & b; } };
template <class T> struct bit_or { T operator()(const T& a, const T& b) const { return a | b; } };
template <class T> struct bit_xor { T operator()(const T& a, const T& b) const { return a ^ b; } };

// Butterfly reduction: every thread of the tile gets the result.
template <unsigned N, class P, class T, class Op>
static inline T reduce(const thread_block_tile<N, P>& tile, T v, Op op) {
    for (unsigned off = N / 2; off > 0; off /= 2) v = op(v, tile.shfl_xor(v, (int)off));
    return v;
}
template <unsigned N, class P, class T, class Op>
static inline T inclusive_scan(const thread_block_tile<N, P>& tile, T v, Op op) {
    unsigned r = (unsigned)tile.thread_rank();
    for (unsigned off = 1; off < N; off *= 2) {
        T o = tile.shfl_up(v, off);
        if (r >= off) v = op(o, v);
    }
    return v;
}
template <unsigned N, class P, class T>
static inline T inclusive_scan(const thread_block_tile<N, P>& tile, T v) { return inclusive_scan(tile, v, plus<T>()); }
template <unsigned N, class P, class T, class Op>
static inline T exclusive_scan(const thread_block_tile<N, P>& tile, T v, Op op) {
    T inc = inclusive_scan(tile, v, op);
    T prev = tile.shfl_up(inc, 1);
    return tile.thread_rank() == 0 ? T() : prev;
}
template <unsigned N, class P, class T>
static inline T exclusive_scan(const thread_block_tile<N, P>& tile, T v) { return exclusive_scan(tile, v, plus<T>()); }

// memcpy_async as a synchronous copy by the group's first thread; wait() is the group barrier.
template <class G>
static inline void memcpy_async(const G& group, void* dst, const void* src, size_t bytes) {
    if (group.thread_rank() == 0) std::memcpy(dst, src, bytes);
}
template <class G> static inline void wait(const G& group) { group.sync(); }
template <class G> static inline void wait_prior(const G& group) { group.sync(); }

namespace details {}
}  // namespace cooperative_groups
