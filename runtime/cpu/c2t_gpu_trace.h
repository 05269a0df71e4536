// c2t_gpu_trace.h - recording a program's kernel launches on a GPU (``--record-on cuda``).
//
// Forced in (nvcc -include c2t_gpu_trace.h) in front of an original CUDA program whose `<<<>>>`
// launches the runtime has rewritten (runtime/source.py, rewrite_launches(device="gpu")) into
//   ::c2t::launch_cfg(grid, block, shmem, stream).named("k", inst).go(
//       [&](const ::c2t::LaunchCfg& c2t_c_, auto&... c2t_a_) { k<<<c2t_c_.grid, ...>>>(c2t_a_...); }, a, b)
// The program runs as built by nvcc; with C2T_TRACE_DIR set, the first C2T_TRACE_LIMIT launches of
// each kernel instance are recorded exactly as the CPU executor records them (c2t_trace.h): the
// allocations of cudaMalloc and its relatives (tracked by the macros below) that the arguments
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

// The text of a kernel template's instance, ``k<float, 64>``, from the host compiler's spelling
// of ``F`` (GCC: "... [with auto F = k<float, 64>]"; Clang: "... [F = &k<float, 64>]").
template <auto F>
inline const char* instance_name() {
    static char buf[512];
    if (buf[0]) return buf;
    const char* p = __PRETTY_FUNCTION__;
    const char* s = strstr(p, "F = ");
    if (!s) return nullptr;
    s += 4;
    if (*s == '&') s++;
    size_t n = strlen(s);
    if (n && s[n - 1] == ']') n--;
    if (n >= sizeof buf) return nullptr;
    memcpy(buf, s, n);
    buf[n] = 0;
    return buf;
}

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
        const char* key = instance ? instance : kernel;
        const int number = key ? trace::state().seen[key] : 0;
        bool record = trace::wanted(key);
        trace::Launch L;
        std::string before;
        if (record) {
            cudaDeviceSynchronize();  // the bytes the launch starts from
            std::apply([&](const auto&... x) { (L.arg(x), ...); }, args);
            if (trace::state().offset + L.bytes() > trace::state().budget) {
                trace::write_skipped(kernel, instance, number, L.bytes());
                record = false;
            } else {
                before = L.dump(trace::state(), "before");
            }
        }
        std::apply([&](auto&... x) { f(*this, x...); }, args);
        if (record) {
            cudaError_t e = cudaGetLastError();
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            trace::write(kernel, instance, number, grid, block, shmem, L, before, L.dump(trace::state(), "after"),
                         e == cudaSuccess ? 0 : 1);
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

// ---- the allocations a launch can reach (global functions: `::cudaMalloc(...)` still works)
template <class T>
inline cudaError_t c2t_gpu_cudaMalloc(T** p, size_t n) {
    cudaError_t e = cudaMalloc((void**)p, n);
    if (e == cudaSuccess) c2t::trace::on_alloc((void*)*p, n);
    return e;
}
template <class T>
inline cudaError_t c2t_gpu_cudaMallocAsync(T** p, size_t n, cudaStream_t s) {
    cudaError_t e = cudaMallocAsync((void**)p, n, s);
    if (e == cudaSuccess) c2t::trace::on_alloc((void*)*p, n);
    return e;
}
template <class T>
inline cudaError_t c2t_gpu_cudaMallocManaged(T** p, size_t n, unsigned flags = cudaMemAttachGlobal) {
    cudaError_t e = cudaMallocManaged((void**)p, n, flags);
    if (e == cudaSuccess) c2t::trace::on_alloc((void*)*p, n);
    return e;
}
template <class T>
inline cudaError_t c2t_gpu_cudaMallocHost(T** p, size_t n) {
    cudaError_t e = cudaMallocHost((void**)p, n);
    if (e == cudaSuccess) c2t::trace::on_alloc((void*)*p, n);
    return e;
}
template <class T>
inline cudaError_t c2t_gpu_cudaHostAlloc(T** p, size_t n, unsigned flags) {
    cudaError_t e = cudaHostAlloc((void**)p, n, flags);
    if (e == cudaSuccess) c2t::trace::on_alloc((void*)*p, n);
    return e;
}
template <class T>
inline cudaError_t c2t_gpu_cudaMallocPitch(T** p, size_t* pitch, size_t w, size_t h) {
    cudaError_t e = cudaMallocPitch((void**)p, pitch, w, h);
    if (e == cudaSuccess) c2t::trace::on_alloc((void*)*p, *pitch * h);
    return e;
}
inline cudaError_t c2t_gpu_cudaFree(void* p) { c2t::trace::on_free(p); return cudaFree(p); }
inline cudaError_t c2t_gpu_cudaFreeHost(void* p) { c2t::trace::on_free(p); return cudaFreeHost(p); }
inline cudaError_t c2t_gpu_cudaFreeAsync(void* p, cudaStream_t s) { c2t::trace::on_free(p); return cudaFreeAsync(p, s); }

#define cudaMalloc(...) c2t_gpu_cudaMalloc(__VA_ARGS__)
#define cudaMallocAsync(...) c2t_gpu_cudaMallocAsync(__VA_ARGS__)
#define cudaMallocManaged(...) c2t_gpu_cudaMallocManaged(__VA_ARGS__)
#define cudaMallocHost(...) c2t_gpu_cudaMallocHost(__VA_ARGS__)
#define cudaHostAlloc(...) c2t_gpu_cudaHostAlloc(__VA_ARGS__)
#define cudaMallocPitch(...) c2t_gpu_cudaMallocPitch(__VA_ARGS__)
#define cudaFree(...) c2t_gpu_cudaFree(__VA_ARGS__)
#define cudaFreeHost(...) c2t_gpu_cudaFreeHost(__VA_ARGS__)
#define cudaFreeAsync(...) c2t_gpu_cudaFreeAsync(__VA_ARGS__)
