// c2t_host.h - the CUDA runtime host API as simple CPU implementations, and `<<<>>>` launches.
// Part of cuda_cpu.h; do not include on its own.
//
// "Device" memory is host memory, copies are memcpy, streams and events are placeholders
// (events read a monotonic clock), and a launch runs the whole grid before returning. This is
// enough for a corpus program's main() to run to completion on the CPU.
#pragma once

enum cudaError {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorInitializationError = 3,
    cudaErrorLaunchFailure = 4,
    cudaErrorLaunchTimeout = 6,
    cudaErrorLaunchOutOfResources = 7,
    cudaErrorInvalidConfiguration = 9,
    cudaErrorInvalidDevice = 10,
    cudaErrorInvalidSymbol = 13,
    cudaErrorInvalidDevicePointer = 17,
    cudaErrorInvalidMemcpyDirection = 21,
    cudaErrorNotSupported = 801,
    cudaErrorIllegalAddress = 700,
    cudaErrorAssert = 710,
    cudaErrorUnknown = 999,
};
typedef enum cudaError cudaError_t;
typedef int CUresult;

#include "c2t_trace.h"
#define CUDA_SUCCESS 0

enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0, cudaMemcpyHostToDevice = 1, cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3, cudaMemcpyDefault = 4
};
enum cudaFuncCache { cudaFuncCachePreferNone = 0, cudaFuncCachePreferShared = 1, cudaFuncCachePreferL1 = 2, cudaFuncCachePreferEqual = 3 };
enum cudaSharedMemConfig { cudaSharedMemBankSizeDefault = 0, cudaSharedMemBankSizeFourByte = 1, cudaSharedMemBankSizeEightByte = 2 };
enum cudaFuncAttribute {
    cudaFuncAttributeMaxDynamicSharedMemorySize = 8, cudaFuncAttributePreferredSharedMemoryCarveout = 9,
    cudaFuncAttributeRequiredClusterWidth = 10, cudaFuncAttributeNonPortableClusterSizeAllowed = 16,
};
enum cudaDeviceAttr {
    cudaDevAttrMaxThreadsPerBlock = 1, cudaDevAttrMaxBlockDimX = 2, cudaDevAttrMaxBlockDimY = 3,
    cudaDevAttrMaxBlockDimZ = 4, cudaDevAttrMaxGridDimX = 5, cudaDevAttrMaxGridDimY = 6,
    cudaDevAttrMaxGridDimZ = 7, cudaDevAttrMaxSharedMemoryPerBlock = 8, cudaDevAttrWarpSize = 10,
    cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75,
    cudaDevAttrComputeCapabilityMinor = 76, cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
    cudaDevAttrMaxThreadsPerMultiProcessor = 39, cudaDevAttrL2CacheSize = 38,
};
#define cudaHostAllocDefault 0
#define cudaHostAllocPortable 1
#define cudaHostAllocMapped 2
#define cudaStreamDefault 0
#define cudaStreamNonBlocking 1
#define cudaEventDefault 0
#define cudaEventBlockingSync 1
#define cudaEventDisableTiming 2
#define cudaMemAttachGlobal 1
#define cudaDeviceScheduleAuto 0
#define cudaDeviceMapHost 8

struct CUstream_st { int unused; };
struct CUevent_st { double t; };
typedef CUstream_st* cudaStream_t;
typedef CUevent_st* cudaEvent_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

struct cudaDeviceProp {
    char name[256];
    size_t totalGlobalMem;
    size_t sharedMemPerBlock;
    int regsPerBlock;
    int warpSize;
    size_t memPitch;
    int maxThreadsPerBlock;
    int maxThreadsDim[3];
    int maxGridSize[3];
    int clockRate;
    size_t totalConstMem;
    int major;
    int minor;
    size_t textureAlignment;
    int deviceOverlap;
    int multiProcessorCount;
    int kernelExecTimeoutEnabled;
    int integrated;
    int canMapHostMemory;
    int computeMode;
    int concurrentKernels;
    int ECCEnabled;
    int pciBusID;
    int pciDeviceID;
    int asyncEngineCount;
    int unifiedAddressing;
    int memoryClockRate;
    int memoryBusWidth;
    int l2CacheSize;
    int maxThreadsPerMultiProcessor;
    size_t sharedMemPerMultiprocessor;
    int regsPerMultiprocessor;
    int managedMemory;
    int cooperativeLaunch;
    size_t sharedMemPerBlockOptin;
    int maxBlocksPerMultiProcessor;
};
struct cudaFuncAttributes {
    size_t sharedSizeBytes, constSizeBytes, localSizeBytes;
    int maxThreadsPerBlock, numRegs, ptxVersion, binaryVersion, cacheModeCA, maxDynamicSharedSizeBytes;
};

namespace c2t {
inline cudaError_t g_last_error = cudaSuccess;
static inline cudaError_t set_error(cudaError_t e) { if (e != cudaSuccess) g_last_error = e; return e; }
static inline double now_ms() {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}
}  // namespace c2t
static inline const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidSymbol: return "invalid device symbol";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    case cudaErrorNotSupported: return "operation not supported";
    default: return "unknown error";
    }
}
static inline const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorLaunchFailure: return "cudaErrorLaunchFailure";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    default: return "cudaErrorUnknown";
    }
}
static inline cudaError_t cudaGetLastError() { cudaError_t e = c2t::g_last_error; c2t::g_last_error = cudaSuccess; return e; }
static inline cudaError_t cudaPeekAtLastError() { return c2t::g_last_error; }

static inline cudaError_t cudaMalloc(void** p, size_t n) {
    if (!p) return c2t::set_error(cudaErrorInvalidValue);
    *p = aligned_alloc(256, (n + 255) / 256 * 256 + 256);
    c2t::trace::on_alloc(*p, n);
    if (!*p) {  // named on stderr: a run that crashes on the null pointer later says why
        fprintf(stderr, "c2t: cudaMalloc of %zu bytes: out of memory\n", n);
        return c2t::set_error(cudaErrorMemoryAllocation);
    }
    return cudaSuccess;
}
template <class T> static inline cudaError_t cudaMalloc(T** p, size_t n) { return cudaMalloc((void**)p, n); }
static inline cudaError_t cudaMallocManaged(void** p, size_t n, unsigned = 1) { return cudaMalloc(p, n); }
template <class T> static inline cudaError_t cudaMallocManaged(T** p, size_t n, unsigned f = 1) { return cudaMalloc((void**)p, n); }
static inline cudaError_t cudaMallocHost(void** p, size_t n) { return cudaMalloc(p, n); }
template <class T> static inline cudaError_t cudaMallocHost(T** p, size_t n) { return cudaMalloc((void**)p, n); }
static inline cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) { return cudaMalloc(p, n); }
template <class T> static inline cudaError_t cudaHostAlloc(T** p, size_t n, unsigned f) { return cudaMalloc((void**)p, n); }
static inline cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t w, size_t h) {
    *pitch = (w + 255) / 256 * 256; return cudaMalloc(p, *pitch * h);
}
template <class T> static inline cudaError_t cudaMallocPitch(T** p, size_t* pitch, size_t w, size_t h) { return cudaMallocPitch((void**)p, pitch, w, h); }
static inline cudaError_t cudaFree(void* p) { c2t::trace::on_free(p); free(p); return cudaSuccess; }
static inline cudaError_t cudaFreeHost(void* p) { c2t::trace::on_free(p); free(p); return cudaSuccess; }
static inline cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t) { return cudaMalloc(p, n); }
template <class T> static inline cudaError_t cudaMallocAsync(T** p, size_t n, cudaStream_t s) { return cudaMalloc((void**)p, n); }
static inline cudaError_t cudaFreeAsync(void* p, cudaStream_t) { c2t::trace::on_free(p); free(p); return cudaSuccess; }
static inline cudaError_t cudaHostRegister(void*, size_t, unsigned) { return cudaSuccess; }
static inline cudaError_t cudaHostUnregister(void*) { return cudaSuccess; }
static inline cudaError_t cudaHostGetDevicePointer(void** d, void* h, unsigned) { *d = h; return cudaSuccess; }

static inline cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind) {
    if (n && (!dst || !src)) return c2t::set_error(cudaErrorInvalidValue);
    std::memmove(dst, src, n); return cudaSuccess;
}
static inline cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind k, cudaStream_t = 0) {
    return cudaMemcpy(dst, src, n, k);
}
static inline cudaError_t cudaMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch, size_t w, size_t h, cudaMemcpyKind) {
    for (size_t r = 0; r < h; ++r) std::memmove((char*)dst + r * dpitch, (const char*)src + r * spitch, w);
    return cudaSuccess;
}
static inline cudaError_t cudaMemcpy2DAsync(void* dst, size_t dp, const void* src, size_t sp, size_t w, size_t h, cudaMemcpyKind k, cudaStream_t = 0) {
    return cudaMemcpy2D(dst, dp, src, sp, w, h, k);
}
static inline cudaError_t cudaMemset(void* p, int v, size_t n) { std::memset(p, v, n); return cudaSuccess; }
static inline cudaError_t cudaMemsetAsync(void* p, int v, size_t n, cudaStream_t = 0) { std::memset(p, v, n); return cudaSuccess; }
static inline cudaError_t cudaMemset2D(void* p, size_t pitch, int v, size_t w, size_t h) {
    for (size_t r = 0; r < h; ++r) std::memset((char*)p + r * pitch, v, w);
    return cudaSuccess;
}
template <class T>
static inline cudaError_t cudaMemcpyToSymbol(T& symbol, const void* src, size_t n, size_t offset = 0,
                                             cudaMemcpyKind = cudaMemcpyHostToDevice) {
    if (offset + n > sizeof(T)) return c2t::set_error(cudaErrorInvalidValue);
    std::memcpy((char*)&symbol + offset, src, n); return cudaSuccess;
}
template <class T>
static inline cudaError_t cudaMemcpyToSymbolAsync(T& symbol, const void* src, size_t n, size_t offset = 0,
                                                  cudaMemcpyKind k = cudaMemcpyHostToDevice, cudaStream_t = 0) {
    return cudaMemcpyToSymbol(symbol, src, n, offset, k);
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbol(void* dst, const T& symbol, size_t n, size_t offset = 0,
                                               cudaMemcpyKind = cudaMemcpyDeviceToHost) {
    if (offset + n > sizeof(T)) return c2t::set_error(cudaErrorInvalidValue);
    std::memcpy(dst, (const char*)&symbol + offset, n); return cudaSuccess;
}
template <class T>
static inline cudaError_t cudaMemcpyFromSymbolAsync(void* dst, const T& symbol, size_t n, size_t offset = 0,
                                                    cudaMemcpyKind k = cudaMemcpyDeviceToHost, cudaStream_t = 0) {
    return cudaMemcpyFromSymbol(dst, symbol, n, offset, k);
}
template <class T> static inline cudaError_t cudaGetSymbolAddress(void** p, const T& symbol) { *p = (void*)&symbol; return cudaSuccess; }
template <class T> static inline cudaError_t cudaGetSymbolSize(size_t* n, const T&) { *n = sizeof(T); return cudaSuccess; }
static inline cudaError_t cudaMemGetInfo(size_t* free_b, size_t* total) {
    if (free_b) *free_b = (size_t)8 << 30; if (total) *total = (size_t)16 << 30; return cudaSuccess;
}
static inline cudaError_t cudaMemPrefetchAsync(const void*, size_t, int, cudaStream_t = 0) { return cudaSuccess; }

static inline cudaError_t cudaDeviceSynchronize() { return c2t::g_last_error; }
static inline cudaError_t cudaThreadSynchronize() { return cudaSuccess; }
static inline cudaError_t cudaDeviceReset() { return cudaSuccess; }
static inline cudaError_t cudaSetDevice(int) { return cudaSuccess; }
static inline cudaError_t cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
static inline cudaError_t cudaGetDeviceCount(int* n) { *n = 1; return cudaSuccess; }
static inline cudaError_t cudaSetDeviceFlags(unsigned) { return cudaSuccess; }
static inline cudaError_t cudaFree0() { return cudaSuccess; }
static inline cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache) { return cudaSuccess; }
static inline cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig) { return cudaSuccess; }
static inline cudaError_t cudaDeviceSetLimit(int, size_t) { return cudaSuccess; }
static inline cudaError_t cudaDriverGetVersion(int* v) { *v = 12080; return cudaSuccess; }
static inline cudaError_t cudaRuntimeGetVersion(int* v) { *v = 12080; return cudaSuccess; }
static inline cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int) {
    std::memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "cuda2tile CPU executor");
    p->totalGlobalMem = (size_t)16 << 30;
    p->sharedMemPerBlock = 48 * 1024;
    p->sharedMemPerBlockOptin = 227 * 1024;
    p->sharedMemPerMultiprocessor = 228 * 1024;
    p->regsPerBlock = 65536; p->regsPerMultiprocessor = 65536;
    p->warpSize = 32;
    p->maxThreadsPerBlock = 1024;
    p->maxThreadsDim[0] = 1024; p->maxThreadsDim[1] = 1024; p->maxThreadsDim[2] = 64;
    p->maxGridSize[0] = 2147483647; p->maxGridSize[1] = 65535; p->maxGridSize[2] = 65535;
    p->clockRate = 1980000; p->memoryClockRate = 2619000; p->memoryBusWidth = 5120;
    p->totalConstMem = 65536;
    p->major = 9; p->minor = 0;
    p->multiProcessorCount = 132;
    p->maxThreadsPerMultiProcessor = 2048;
    p->maxBlocksPerMultiProcessor = 32;
    p->l2CacheSize = 50 * 1024 * 1024;
    p->concurrentKernels = 1; p->unifiedAddressing = 1; p->managedMemory = 1; p->cooperativeLaunch = 1;
    p->canMapHostMemory = 1; p->asyncEngineCount = 2;
    return cudaSuccess;
}
static inline cudaError_t cudaDeviceGetAttribute(int* v, cudaDeviceAttr a, int) {
    cudaDeviceProp p; cudaGetDeviceProperties(&p, 0);
    switch (a) {
    case cudaDevAttrMaxThreadsPerBlock: *v = p.maxThreadsPerBlock; break;
    case cudaDevAttrMaxBlockDimX: *v = 1024; break;
    case cudaDevAttrMaxBlockDimY: *v = 1024; break;
    case cudaDevAttrMaxBlockDimZ: *v = 64; break;
    case cudaDevAttrMaxGridDimX: *v = 2147483647; break;
    case cudaDevAttrMaxGridDimY: case cudaDevAttrMaxGridDimZ: *v = 65535; break;
    case cudaDevAttrMaxSharedMemoryPerBlock: *v = 48 * 1024; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *v = 227 * 1024; break;
    case cudaDevAttrWarpSize: *v = 32; break;
    case cudaDevAttrMultiProcessorCount: *v = p.multiProcessorCount; break;
    case cudaDevAttrComputeCapabilityMajor: *v = 9; break;
    case cudaDevAttrComputeCapabilityMinor: *v = 0; break;
    case cudaDevAttrMaxThreadsPerMultiProcessor: *v = 2048; break;
    case cudaDevAttrL2CacheSize: *v = p.l2CacheSize; break;
    default: *v = 0; break;
    }
    return cudaSuccess;
}
template <class F> static inline cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int) { return cudaSuccess; }
template <class F> static inline cudaError_t cudaFuncSetCacheConfig(F, cudaFuncCache) { return cudaSuccess; }
template <class F> static inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* a, F) {
    std::memset(a, 0, sizeof *a); a->maxThreadsPerBlock = 1024; a->maxDynamicSharedSizeBytes = 48 * 1024; return cudaSuccess;
}
template <class F>
static inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* n, F, int block, size_t) {
    *n = block > 0 ? 2048 / block : 1; if (*n > 32) *n = 32; if (*n < 1) *n = 1; return cudaSuccess;
}
template <class F>
static inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* grid, int* block, F, size_t = 0, int = 0) {
    *grid = 132 * 2; *block = 1024; return cudaSuccess;
}

static inline cudaError_t cudaStreamCreate(cudaStream_t* s) { *s = new CUstream_st(); return cudaSuccess; }
static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned) { return cudaStreamCreate(s); }
static inline cudaError_t cudaStreamCreateWithPriority(cudaStream_t* s, unsigned, int) { return cudaStreamCreate(s); }
static inline cudaError_t cudaStreamDestroy(cudaStream_t s) {
    if (s != cudaStreamLegacy && s != cudaStreamPerThread) delete s; return cudaSuccess;
}
static inline cudaError_t cudaStreamSynchronize(cudaStream_t) { return c2t::g_last_error; }
static inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned = 0) { return cudaSuccess; }
static inline cudaError_t cudaStreamQuery(cudaStream_t) { return cudaSuccess; }
static inline cudaError_t cudaEventCreate(cudaEvent_t* e) { *e = new CUevent_st(); (*e)->t = 0; return cudaSuccess; }
static inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned) { return cudaEventCreate(e); }
static inline cudaError_t cudaEventDestroy(cudaEvent_t e) { delete e; return cudaSuccess; }
static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t = 0) { e->t = c2t::now_ms(); return cudaSuccess; }
static inline cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
static inline cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t a, cudaEvent_t b) { *ms = (float)(b->t - a->t); return cudaSuccess; }

// ----------------------------------------------------------------------------- <<<>>> launches
// The source rewriter turns   k<<<grid, block, shmem, stream>>>(a, b)
// into   ::c2t::launch_cfg(grid, block, shmem, stream).go([&](auto&... c2t_a_) { k(c2t_a_...); }, a, b)
// The arguments are evaluated once; every thread then calls the kernel with its own copies,
// so template arguments are deduced exactly as nvcc deduces them from the launch.
namespace c2t {
struct LaunchCfg {
    dim3 grid, block;
    size_t shmem;
    const char* kernel = nullptr;  // the kernel as written at the launch (recorded launches)
    const char* instance = nullptr;  // its template instance, where the launch names one (k<float, 64>)
    LaunchCfg named(const char* k, const char* inst = nullptr) const {
        LaunchCfg c = *this;
        c.kernel = k;
        c.instance = inst;
        return c;
    }
    template <class F, class Tup>
    struct Call { F* f; Tup* args; };
    template <class F, class... A>
    void go(F&& f, A&&... a) const {
        typedef typename std::decay<F>::type FD;
        typedef std::tuple<typename std::decay<A>::type...> Tup;
        Tup args(std::forward<A>(a)...);
        FD fn(f);
        Call<FD, Tup> call{&fn, &args};
        trace::Recorder rec(kernel, instance, args, grid, block, shmem);
        if (rec.skip) return;  // fast-forward: the kernel's recorded launches are behind it
        int rc = run_grid(grid, block, shmem,
                          [](void* p) {
                              Call<FD, Tup>* c = (Call<FD, Tup>*)p;
                              std::apply(*c->f, *c->args);
                          },
                          &call);
        rec.finish(grid, block, shmem, rc);
        if (rc != LAUNCH_OK) {
            fprintf(stderr, "cuda2tile CPU executor: kernel launch failed: %s\n", g.msg);
            set_error(rc == LAUNCH_BAD_CONFIG ? cudaErrorInvalidConfiguration : cudaErrorLaunchFailure);
            if (rc == LAUNCH_DEADLOCK) { fflush(stdout); _exit(3); }
        }
    }
};
// cudaLaunchKernel(fn, grid, block, args, shmem, stream) from host code: args[i] points to the
// value of parameter i, as for the CUDA runtime.
template <class... P, size_t... I>
static inline cudaError_t launch_from_pointers(void (*fn)(P...), dim3 g, dim3 b, void** args, size_t sh,
                                               std::index_sequence<I...>) {
    std::tuple<typename std::decay<P>::type...> vals{*(typename std::decay<P>::type*)args[I]...};
    LaunchCfg{g, b, sh}.go([&](auto&... a) { fn(a...); }, std::get<I>(vals)...);
    return g_last_error;
}
static inline dim3 to_dim3(dim3 d) { return d; }
static inline dim3 to_dim3(uint3 d) { return dim3(d); }
template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
static inline dim3 to_dim3(I v) { return dim3((unsigned)v); }
template <class G, class B>
static inline LaunchCfg launch_cfg(const G& g, const B& b) { return LaunchCfg{to_dim3(g), to_dim3(b), 0, nullptr}; }
template <class G, class B>
static inline LaunchCfg launch_cfg(const G& g, const B& b, size_t sh) { return LaunchCfg{to_dim3(g), to_dim3(b), sh, nullptr}; }
template <class G, class B, class S>
static inline LaunchCfg launch_cfg(const G& g, const B& b, size_t sh, S) { return LaunchCfg{to_dim3(g), to_dim3(b), sh, nullptr}; }
}  // namespace c2t
template <class... P>
static inline cudaError_t cudaLaunchKernel(void (*fn)(P...), dim3 grid, dim3 block, void** args,
                                           size_t shmem = 0, cudaStream_t = 0) {
    return c2t::launch_from_pointers(fn, grid, block, args, shmem, std::index_sequence_for<P...>{});
}
static inline cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t = 0, cudaStream_t = 0) {
    fprintf(stderr, "cuda2tile CPU executor: cudaLaunchKernel needs the kernel itself, not a void*\n");
    return c2t::set_error(cudaErrorNotSupported);
}
template <class... P>
static inline cudaError_t cudaLaunchCooperativeKernel(void (*fn)(P...), dim3 grid, dim3 block, void** args,
                                                      size_t shmem = 0, cudaStream_t = 0) {
    return c2t::launch_from_pointers(fn, grid, block, args, shmem, std::index_sequence_for<P...>{});
}
