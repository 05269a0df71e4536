// c2t_gpu_trace.h - recording a program's kernel launches on a GPU (``--record-on cuda``).
//
// Forced in (nvcc -include c2t_gpu_trace.h) in front of an original CUDA program whose `<<<>>>`
// launches the runtime has rewritten (runtime/source.py, rewrite_launches(device="gpu")) into
//   ::c2t::launch_cfg(grid, block, shmem, stream).named("k", inst).go(
//       [&](const ::c2t::LaunchCfg& c2t_c_, auto&... c2t_a_) { k<<<c2t_c_.grid, ...>>>(c2t_a_...); }, a, b)
// The program runs as built by nvcc; with C2T_TRACE_DIR set, the first C2T_TRACE_LIMIT launches of
// each kernel instance are recorded exactly as the CPU executor records them (c2t_trace.h): the
// allocations of cudaMalloc and its relatives (wrapped at link time, below) that the arguments
// reach are read back before the launch and after it (the device synchronised around it). Later
// launches run asynchronously, as the program wrote them.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#define C2T_TRACE_GPU 1
#include "c2t_trace.h"

namespace c2t {

struct LaunchCfg {
    dim3 grid, block;
    size_t shmem;
    cudaStream_t stream;
    const char* kernel = nullptr;
    const char* instance = nullptr;
    LaunchCfg named(const char* k, const char* inst = nullptr) const {
        LaunchCfg c = *this;
        c.kernel = k;
        c.instance = inst;
        return c;
    }
    template <class F, class... A>
    void go(F&& f, A&&... a) const {
        typedef std::tuple<typename std::decay<A>::type...> Tup;
        Tup args(std::forward<A>(a)...);
        trace::Recorder rec(kernel, instance, args, grid, block, shmem);  // synchronises first when it records
        std::apply([&](auto&... x) { f(*this, x...); }, args);
        if (rec.on) {
            cudaError_t e = cudaGetLastError();
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            rec.finish(grid, block, shmem, e == cudaSuccess ? 0 : 1);
        }
    }
};

template <class G, class B>
inline LaunchCfg launch_cfg(const G& g, const B& b) { return LaunchCfg{dim3(g), dim3(b), 0, 0}; }
template <class G, class B>
inline LaunchCfg launch_cfg(const G& g, const B& b, size_t sh) { return LaunchCfg{dim3(g), dim3(b), sh, 0}; }
template <class G, class B, class S>
inline LaunchCfg launch_cfg(const G& g, const B& b, size_t sh, S st) {
    return LaunchCfg{dim3(g), dim3(b), sh, (cudaStream_t)st};
}

}  // namespace c2t

// ---- the allocations a launch can reach: the program is linked with --wrap=cudaMalloc and its
// relatives (runtime/gpu_record.py, WRAPPED), so every call of them, the CUDA headers' own
// templates and libraries such as thrust included, comes here first.
#define C2T_WRAP(ret, name, params, args, ptr, bytes)                                       \
    extern "C" ret __real_##name params;                                                   \
    extern "C" __attribute__((weak)) ret __wrap_##name params {                            \
        ret e = __real_##name args;                                                        \
        if (e == cudaSuccess) c2t::trace::on_alloc((void*)(ptr), (bytes));                 \
        return e;                                                                          \
    }
C2T_WRAP(cudaError_t, cudaMalloc, (void** p, size_t n), (p, n), *p, n)
C2T_WRAP(cudaError_t, cudaMallocManaged, (void** p, size_t n, unsigned f), (p, n, f), *p, n)
C2T_WRAP(cudaError_t, cudaMallocHost, (void** p, size_t n), (p, n), *p, n)
C2T_WRAP(cudaError_t, cudaHostAlloc, (void** p, size_t n, unsigned f), (p, n, f), *p, n)
C2T_WRAP(cudaError_t, cudaMallocPitch, (void** p, size_t* pitch, size_t w, size_t h), (p, pitch, w, h), *p,
         *pitch * h)
C2T_WRAP(cudaError_t, cudaMallocAsync, (void** p, size_t n, cudaStream_t s), (p, n, s), *p, n)
#undef C2T_WRAP
#define C2T_WRAP_FREE(name, params, args, ptr)                                              \
    extern "C" cudaError_t __real_##name params;                                           \
    extern "C" __attribute__((weak)) cudaError_t __wrap_##name params {                    \
        c2t::trace::on_free((void*)(ptr));                                                 \
        return __real_##name args;                                                         \
    }
C2T_WRAP_FREE(cudaFree, (void* p), (p), p)
C2T_WRAP_FREE(cudaFreeHost, (void* p), (p), p)
C2T_WRAP_FREE(cudaFreeAsync, (void* p, cudaStream_t s), (p, s), p)
#undef C2T_WRAP_FREE
