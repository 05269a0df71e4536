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
// With C2T_TIME_ROUNDS=N as well (migrate bench --traces), each recorded launch is then timed:
// see c2t::timing below; one JSON line per launch in C2T_TRACE_DIR/timings.jsonl.
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

// the runtime's own allocator, past the --wrap that tracks the program's allocations: the timing's
// copies are no allocations of the program
extern "C" cudaError_t __real_cudaMalloc(void** p, size_t n);
extern "C" cudaError_t __real_cudaFree(void* p);

namespace c2t {
namespace timing {

// Timing the original's recorded launches, at the program's own sizes and on its own data
// (migrate bench --traces times the migrated kernel the same way, runtime/bench_traces.py). For
// each launch the recorder wrote: copies of the allocations it reaches are taken before it and
// after it; then C2T_TIME_WARMUP (2) + C2T_TIME_ROUNDS launches, each one on the allocations put
// back as they were before the launch, after a write of twice the L2 cache (the launch reads
// cold memory, and the GPU is busy while the launch is queued), timed alone with CUDA events;
// rounds stop past C2T_TIME_BUDGET_MS (2000) ms of launches once 3 are timed (one warm-up only
// where the first launch takes more than a quarter of that). The allocations
// are then put back as the recorded launch left them, so the program goes on as it would have.
// A launch that changed a __device__ global is not timed (the global cannot be put back).
struct Settings {
    int rounds = 0;  // 0: no timing
    int warmup = 2;
    double budget_ms = 2000;
    FILE* out = nullptr;
    void* flush = nullptr;
    size_t flush_bytes = 0;
};

inline Settings& settings() {
    static Settings s;
    static bool ready = false;
    if (!ready) {
        ready = true;
        const char* dir = getenv("C2T_TRACE_DIR");
        const char* r = getenv("C2T_TIME_ROUNDS");
        if (dir && *dir && r && atoi(r) > 0) {
            s.rounds = atoi(r);
            if (const char* w = getenv("C2T_TIME_WARMUP")) s.warmup = atoi(w);
            if (const char* b = getenv("C2T_TIME_BUDGET_MS")) s.budget_ms = atof(b);
            s.out = fopen((std::string(dir) + "/timings.jsonl").c_str(), "w");
            if (!s.out) s.rounds = 0;
        }
    }
    return s;
}

// The bytes written before each timed launch: twice the L2 cache, at least 32 MiB (as
// runtime/bench_traces.py flush_bytes).
inline size_t flush_bytes() {
    int device = 0, l2 = 0;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
    size_t n = 2 * (size_t)(l2 > 0 ? l2 : 0);
    return n < (32u << 20) ? (32u << 20) : n;
}

typedef std::vector<const std::pair<const uintptr_t, trace::Alloc>*> Reached;

// Device copies of the allocations a launch reaches.
struct Snapshot {
    std::vector<std::pair<void*, size_t>> where;
    std::vector<void*> copy;
    bool take(const Reached& reached, cudaStream_t st) {
        for (auto* a : reached) {
            if (!a->second.size) continue;
            void* p = nullptr;
            if (__real_cudaMalloc(&p, a->second.size) != cudaSuccess) {
                cudaGetLastError();
                return false;
            }
            copy.push_back(p);
            where.push_back({(void*)a->first, a->second.size});
            if (cudaMemcpyAsync(p, (const void*)a->first, a->second.size, cudaMemcpyDefault, st) != cudaSuccess)
                return false;
        }
        return cudaStreamSynchronize(st) == cudaSuccess;
    }
    void put(cudaStream_t st) const {
        for (size_t i = 0; i < copy.size(); ++i)
            cudaMemcpyAsync(where[i].first, copy[i], where[i].second, cudaMemcpyDefault, st);
    }
    ~Snapshot() {
        for (void* p : copy) __real_cudaFree(p);
    }
};

// Times the launch ``again`` (the recorded one, run once more) and writes its line.
template <class L>
inline void run(const trace::Recorder& rec, const Snapshot& before, std::string why, int rc, cudaStream_t st,
                L&& again) {
    Settings& s = settings();
    if (rec.written < 0) return;  // not recorded after all (past the budget): nothing replays it
    if (why.empty() && rc != 0) why = "the recorded launch failed";
    if (why.empty() && rec.L.globals_changed)
        why = "the launch changes __device__ globals, which the timing could not put back";
    std::vector<float> ms;
    int warm = s.warmup;
    if (why.empty()) {
        Snapshot after;
        if (!after.take(rec.L.reached, st)) {
            why = "no device memory for copies of the launch's allocations";
        } else {
            if (!s.flush) {
                s.flush_bytes = flush_bytes();
                if (__real_cudaMalloc(&s.flush, s.flush_bytes) != cudaSuccess) {
                    cudaGetLastError();
                    s.flush = nullptr;
                    s.flush_bytes = 0;
                }
            }
            cudaEvent_t e0, e1;
            cudaEventCreate(&e0);
            cudaEventCreate(&e1);
            double spent = 0;
            for (int r = 0; r < warm + s.rounds; ++r) {
                before.put(st);
                if (s.flush) cudaMemsetAsync(s.flush, r & 0xff, s.flush_bytes, st);
                cudaEventRecord(e0, st);
                again();
                cudaEventRecord(e1, st);
                cudaError_t e = cudaGetLastError();
                if (e == cudaSuccess) e = cudaEventSynchronize(e1);
                if (e != cudaSuccess) {
                    why = std::string("a timed launch failed: ") + cudaGetErrorString(e);
                    break;
                }
                float t = 0;
                cudaEventElapsedTime(&t, e0, e1);
                spent += t;
                if (r == 0 && warm > 1 && t > s.budget_ms / 4) warm = 1;  // a long launch: warmed by one
                if (r >= warm) ms.push_back(t);
                if (ms.size() >= 3 && spent > s.budget_ms) break;
            }
            cudaEventDestroy(e0);
            cudaEventDestroy(e1);
            after.put(st);
            cudaStreamSynchronize(st);
        }
    }
    std::string list;
    char buf[64];
    for (float t : ms) {
        snprintf(buf, sizeof buf, "%s%.6g", list.empty() ? "" : ",", t);
        list += buf;
    }
    fprintf(s.out, "{\"seq\":%ld,\"kernel\":%s%s,\"number\":%d,\"warmup\":%d,\"flush_bytes\":%zu,\"ms\":[%s]%s}\n",
            rec.written, trace::json_string(rec.kernel).c_str(), trace::instance_field(rec.instance).c_str(),
            rec.number, warm, s.flush_bytes, list.c_str(),
            why.empty() ? "" : (",\"skipped\":" + trace::json_string(why.c_str())).c_str());
    fflush(s.out);
}

}  // namespace timing

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
        bool timed = rec.on && timing::settings().rounds > 0;
        timing::Snapshot before;  // the allocations as the launch finds them, to time it again on
        std::string why;
        if (timed && !before.take(rec.L.reached, stream))
            why = "no device memory for copies of the launch's allocations";
        std::apply([&](auto&... x) { f(*this, x...); }, args);
        if (rec.on) {
            cudaError_t e = cudaGetLastError();
            if (e == cudaSuccess) e = cudaDeviceSynchronize();
            rec.finish(grid, block, shmem, e == cudaSuccess ? 0 : 1);
            if (timed)
                timing::run(rec, before, why, e == cudaSuccess ? 0 : 1, stream,
                            [&] { std::apply([&](auto&... x) { f(*this, x...); }, args); });
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
