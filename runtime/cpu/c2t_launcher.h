// c2t_launcher.h - what the generated launcher of cuda2tile calls, on the CPU and on the GPU.
//
// The runtime appends to the original CUDA source a few `extern "C"` entry points, one per
// kernel instance and one per symbol of the spec:
//
//     C2T_EXPORT int c2t_launch_0(const unsigned* grid, const unsigned* block,
//                                 unsigned long long shmem, void** slots, const int* kinds,
//                                 const int* dtypes, int nargs)
//     { return c2t::launch_entry(&saxpy, "saxpy", grid, block, shmem, slots, kinds, dtypes, nargs); }
//     C2T_EXPORT int c2t_set_symbol_0(const void* data, unsigned long long bytes, int dtype)
//     { return c2t::set_symbol(c_taps, "c_taps", data, bytes, dtype); }
//
// launch_entry deduces the parameter types from the function type, converts each 8-byte slot
// that Python packed (a pointer, an int64/uint64, or a double, see ArgKind) to the parameter's
// type, checks what can be checked (count, pointer vs value, element type of pointers, range of
// integers), and launches: on the CPU through run_grid, on the GPU (C2T_GPU_BUILD, compiled by
// nvcc) through cudaLaunchKernel.
#pragma once
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#if defined(C2T_GPU_BUILD)
#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#endif

// weak: a program of several translation units has the header's entry points in each of them
#define C2T_EXPORT extern "C" __attribute__((visibility("default"), weak))

namespace c2t {
#if defined(C2T_GPU_BUILD)
// Set by c2t_set_async(1) for timing: launches return without synchronising the device.
static int g_async_launches = 0;
#endif

enum ArgKind { ARG_PTR = 0, ARG_INT = 1, ARG_UINT = 2, ARG_FLOAT = 3 };
// dtype codes, in the order of runtime/spec.py's DTYPES
enum DtypeCode { DT_F16 = 0, DT_BF16, DT_F32, DT_F64, DT_I8, DT_U8, DT_I16, DT_U16, DT_I32, DT_U32,
                 DT_I64, DT_U64, DT_UNKNOWN = -1 };
static const char* const dtype_names[] = {"float16", "bfloat16", "float32", "float64", "int8", "uint8",
                                          "int16", "uint16", "int32", "uint32", "int64", "uint64"};

#if defined(C2T_GPU_BUILD)
inline char g_lmsg[2048];
static inline char* launch_msg() { return g_lmsg; }
#else
static inline char* launch_msg() { return g.msg; }
#endif
inline char g_warnings[4096];

static inline void lmsg(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void lmsg(const char* fmt, ...) {
    va_list ap; va_start(ap, fmt); vsnprintf(launch_msg(), 2048, fmt, ap); va_end(ap);
}
static inline void warn(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void warn(const char* fmt, ...) {
    size_t used = strlen(g_warnings);
    if (used + 2 >= sizeof g_warnings) return;
    va_list ap; va_start(ap, fmt);
    vsnprintf(g_warnings + used, sizeof g_warnings - used - 1, fmt, ap);
    va_end(ap);
    used = strlen(g_warnings);
    if (used + 1 < sizeof g_warnings) { g_warnings[used] = '\n'; g_warnings[used + 1] = 0; }
}

// The spelling of a type, from the compiler's pretty function name.
template <class T>
static const char* type_name() {
    static char buf[256];
    if (buf[0]) return buf;
    const char* p = __PRETTY_FUNCTION__;
    const char* s = strstr(p, "T = ");
    if (!s) { snprintf(buf, sizeof buf, "?"); return buf; }
    s += 4;
    size_t n = 0;
    int depth = 0;
    while (s[n] && !(depth == 0 && (s[n] == ']' || s[n] == ';'))) {
        if (s[n] == '<' || s[n] == '(' || s[n] == '[') depth++;
        if (s[n] == '>' || s[n] == ')') depth--;
        n++;
    }
    if (n >= sizeof buf) n = sizeof buf - 1;
    memcpy(buf, s, n);
    buf[n] = 0;
    return buf;
}

// Scalar element type of vector types (float4 -> float), identity otherwise.
template <class T, class = void> struct scalar_of { typedef T type; };
template <class T> struct scalar_of<T, decltype((void)std::declval<T&>().x, (void)0)> {
    typedef typename std::remove_cv<typename std::remove_reference<decltype(std::declval<T&>().x)>::type>::type type;
};

template <class T0>
static constexpr int dtype_code_of() {
    typedef typename std::remove_cv<typename std::remove_all_extents<T0>::type>::type T1;
    typedef typename std::remove_cv<typename scalar_of<T1>::type>::type T;
    if (std::is_same<T, __half>::value) return DT_F16;
    if (std::is_same<T, __nv_bfloat16>::value) return DT_BF16;
    if (std::is_same<T, float>::value) return DT_F32;
    if (std::is_same<T, double>::value) return DT_F64;
    if (std::is_same<T, bool>::value) return DT_UNKNOWN;
    if (std::is_integral<T>::value || std::is_enum<T>::value) {
        bool s = std::is_signed<T>::value;
        switch (sizeof(T)) {
        case 1: return s ? DT_I8 : DT_U8;
        case 2: return s ? DT_I16 : DT_U16;
        case 4: return s ? DT_I32 : DT_U32;
        case 8: return s ? DT_I64 : DT_U64;
        }
    }
    return DT_UNKNOWN;
}

static inline bool same_bits(int a, int b) {   // int32 data through an unsigned* is fine, etc.
    if (a == b) return true;
    static const int size[] = {2, 2, 4, 8, 1, 1, 2, 2, 4, 4, 8, 8};
    bool ai = a >= DT_I8, bi = b >= DT_I8;
    return ai && bi && size[a] == size[b];
}

template <class P>
static bool convert_arg(const char* kname, int i, void* slot, int kind, int dtype, P& out) {
    if constexpr (std::is_pointer<P>::value) {
        if (kind != ARG_PTR) {
            lmsg("%s: parameter %d has pointer type %s, but the spec gives a scalar", kname, i, type_name<P>());
            return false;
        }
        void* p;
        memcpy(&p, slot, sizeof p);
        memcpy((void*)&out, &p, sizeof p);
        typedef typename std::remove_pointer<P>::type E;
        int code = dtype_code_of<E>();
        if (code != DT_UNKNOWN && dtype >= 0 && !same_bits(code, dtype) && !std::is_same<typename std::remove_cv<E>::type, char>::value)
            warn("%s: parameter %d is %s but the spec's buffer holds %s elements", kname, i, type_name<P>(),
                 dtype_names[dtype]);
        return true;
    } else {
        if (kind == ARG_PTR) {
            lmsg("%s: parameter %d has type %s, but the spec gives a buffer (pointer)", kname, i, type_name<P>());
            return false;
        }
        long long iv = 0; unsigned long long uv = 0; double dv = 0;
        memcpy(&iv, slot, 8); memcpy(&uv, slot, 8); memcpy(&dv, slot, 8);
        if constexpr (std::is_same<P, bool>::value) {
            out = kind == ARG_FLOAT ? dv != 0 : uv != 0;
            return true;
        } else if constexpr (std::is_integral<P>::value || std::is_enum<P>::value) {
            if (kind == ARG_FLOAT) {
                lmsg("%s: parameter %d has integer type %s, but the spec gives a floating-point value", kname, i, type_name<P>());
                return false;
            }
            typedef typename std::conditional<std::is_enum<P>::value, long long, P>::type I;
            I v = kind == ARG_INT ? (I)iv : (I)uv;
            bool fits = kind == ARG_INT ? ((long long)v == iv && ((v < 0) == (iv < 0)))
                                        : ((unsigned long long)v == uv && !(v < 0 && uv > 0));
            if (!fits) {
                if (kind == ARG_INT)
                    lmsg("%s: parameter %d (%s) cannot hold the spec's value %lld", kname, i, type_name<P>(), iv);
                else
                    lmsg("%s: parameter %d (%s) cannot hold the spec's value %llu", kname, i, type_name<P>(), uv);
                return false;
            }
            out = (P)v;
            return true;
        } else if constexpr (std::is_floating_point<P>::value) {
            out = kind == ARG_FLOAT ? (P)dv : (kind == ARG_INT ? (P)iv : (P)uv);
            return true;
        } else if constexpr (std::is_same<P, __half>::value) {
            out = __float2half_rn((float)(kind == ARG_FLOAT ? dv : (kind == ARG_INT ? (double)iv : (double)uv)));
            return true;
        } else if constexpr (std::is_same<P, __nv_bfloat16>::value) {
            out = __float2bfloat16_rn((float)(kind == ARG_FLOAT ? dv : (kind == ARG_INT ? (double)iv : (double)uv)));
            return true;
        } else {
            lmsg("%s: parameter %d has type %s, which cannot be filled from a spec scalar", kname, i, type_name<P>());
            return false;
        }
    }
}

#if !defined(C2T_GPU_BUILD)
template <class... P>
struct KernelCall {
    void (*fn)(P...);
    std::tuple<P...>* vals;
};
#endif

template <class... P, size_t... I>
static int launch_impl(void (*fn)(P...), const char* kname, const unsigned* grid, const unsigned* block,
                       unsigned long long shmem, void** slots, const int* kinds, const int* dtypes,
                       std::index_sequence<I...>) {
    std::tuple<typename std::decay<P>::type...> vals{};
    bool ok = true;
    (void)std::initializer_list<int>{
        (ok = ok && convert_arg(kname, (int)I, slots[I], kinds[I], dtypes ? dtypes[I] : -1, std::get<I>(vals)), 0)...};
    if (!ok) return 1;
    dim3 g(grid[0], grid[1], grid[2]), b(block[0], block[1], block[2]);
#if defined(C2T_GPU_BUILD)
    void* kargs[sizeof...(P) + 1] = {(void*)&std::get<I>(vals)..., nullptr};
    cudaError_t e = cudaLaunchKernel((const void*)fn, g, b, kargs, (size_t)shmem, 0);
    if (e != cudaSuccess) {
        lmsg("%s: cudaLaunchKernel failed: %s (%s)", kname, cudaGetErrorString(e), cudaGetErrorName(e));
        return e == cudaErrorInvalidConfiguration ? 3 : 4;
    }
    if (g_async_launches) return 0;  // timing (migrate bench): the caller synchronises
    e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        lmsg("%s: kernel failed: %s (%s)", kname, cudaGetErrorString(e), cudaGetErrorName(e));
        return 4;
    }
    return 0;
#else
    if (g_warnings[0]) {   // reported now: the kernel may never come back
        for (const char* line = g_warnings; *line;) {
            const char* end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            char buf[1200];
            int k = snprintf(buf, sizeof buf, "kind=warning\nmessage=%.*s\n\n", (int)(len > 1000 ? 1000 : len), line);
            if (k > 0 && write(g_report_fd, buf, (size_t)k) < 0) break;
            line = end ? end + 1 : line + len;
        }
    }
    typedef std::tuple<typename std::decay<P>::type...> Tup;
    struct Call { void (*fn)(P...); Tup* vals; } call{fn, &vals};
    g_last_error = cudaSuccess;
    return run_grid(g, b, (size_t)shmem,
                    [](void* p) {
                        Call* c = (Call*)p;
                        std::apply(c->fn, *c->vals);
                    },
                    &call);
#endif
}

template <class... P>
static int launch_entry(void (*fn)(P...), const char* kname, const unsigned* grid, const unsigned* block,
                        unsigned long long shmem, void** slots, const int* kinds, const int* dtypes, int nargs) {
    g_warnings[0] = 0;
    if (nargs != (int)sizeof...(P)) {
        lmsg("%s takes %d parameter(s) but the spec lists %d argument(s)", kname, (int)sizeof...(P), nargs);
        return 1;
    }
    return launch_impl(fn, kname, grid, block, shmem, slots, kinds, dtypes, std::index_sequence_for<P...>{});
}

template <class T>
static int set_symbol(T& sym, const char* name, const void* data, unsigned long long bytes, int dtype) {
    if (bytes > sizeof(T)) {
        lmsg("symbol %s has %zu bytes but the spec fills %llu", name, sizeof(T), bytes);
        return 1;
    }
    int code = dtype_code_of<T>();
    if (code != DT_UNKNOWN && dtype >= 0 && !same_bits(code, dtype))
        warn("symbol %s is %s but the spec gives %s values", name, type_name<T>(), dtype_names[dtype]);
#if defined(C2T_GPU_BUILD)
    cudaError_t e = cudaMemcpyToSymbol(sym, data, (size_t)bytes, 0, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) { lmsg("cudaMemcpyToSymbol(%s): %s", name, cudaGetErrorString(e)); return 4; }
#else
    memcpy((void*)&sym, data, (size_t)bytes);
#endif
    return 0;
}

template <class T>
static int get_symbol(T& sym, const char* name, void* data, unsigned long long bytes) {
    if (bytes > sizeof(T)) { lmsg("symbol %s has only %zu bytes", name, sizeof(T)); return 1; }
#if defined(C2T_GPU_BUILD)
    cudaError_t e = cudaMemcpyFromSymbol(data, sym, (size_t)bytes, 0, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { lmsg("cudaMemcpyFromSymbol(%s): %s", name, cudaGetErrorString(e)); return 4; }
#else
    memcpy(data, (const void*)&sym, (size_t)bytes);
#endif
    return 0;
}

// Calls the renamed main() of the program, whichever of its two forms it has.
static inline int call_main(int (*m)(), int, char**) { return m(); }
static inline int call_main(int (*m)(int, char**), int argc, char** argv) { return m(argc, argv); }
static inline int call_main(int (*m)(int, const char**), int argc, char** argv) { return m(argc, (const char**)argv); }

}  // namespace c2t

C2T_EXPORT const char* c2t_last_message(void) { return c2t::launch_msg(); }
#if defined(C2T_GPU_BUILD)
C2T_EXPORT void c2t_set_async(int on) { c2t::g_async_launches = on; }
#endif
C2T_EXPORT const char* c2t_warnings(void) { return c2t::g_warnings; }

#if defined(C2T_GPU_BUILD)
// ----------------------------------------------------------------------------- GPU buffers
// Each buffer is followed by a 256-byte canary, checked after the run for writes past the end.
namespace c2t {
struct GpuBuf { char name[64]; char* dev; unsigned long long nbytes; unsigned long long elem; };
inline GpuBuf g_gbufs[512];
inline int g_ngbufs = 0;
static const unsigned long long CANARY = 256;
}  // namespace c2t
C2T_EXPORT int c2t_init(int, int, unsigned long long, int) {
    cudaError_t e = cudaFree(0);
    if (e != cudaSuccess) { c2t::lmsg("CUDA initialisation failed: %s", cudaGetErrorString(e)); return 4; }
    return 0;
}
C2T_EXPORT void* c2t_alloc_buffer(const char* name, unsigned long long nbytes, unsigned long long elem) {
    using namespace c2t;
    if (g_ngbufs >= 512) { lmsg("too many buffers"); return nullptr; }
    // red zones of CANARY bytes before and after the buffer (the buffer stays 256-byte aligned)
    char* p = nullptr;
    cudaError_t e = cudaMalloc((void**)&p, nbytes + 2 * CANARY);
    if (e != cudaSuccess) { lmsg("cudaMalloc(%llu): %s", nbytes, cudaGetErrorString(e)); return nullptr; }
    cudaMemset(p, 0xA5, CANARY);
    cudaMemset(p + CANARY + nbytes, 0xA5, CANARY);
    GpuBuf& b = g_gbufs[g_ngbufs++];
    snprintf(b.name, sizeof b.name, "%s", name);
    b.dev = p + CANARY; b.nbytes = nbytes; b.elem = elem ? elem : 1;
    return b.dev;
}
C2T_EXPORT int c2t_write_buffer(void* dev, const void* src, unsigned long long n) {
    cudaError_t e = cudaMemcpy(dev, src, n, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) { c2t::lmsg("cudaMemcpy to device: %s", cudaGetErrorString(e)); return 4; }
    return 0;
}
C2T_EXPORT int c2t_read_buffer(void* dst, const void* dev, unsigned long long n) {
    cudaError_t e = cudaMemcpy(dst, dev, n, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) { c2t::lmsg("cudaMemcpy from device: %s", cudaGetErrorString(e)); return 4; }
    return 0;
}
C2T_EXPORT int c2t_check_buffers(char* out, int cap) {
    using namespace c2t;
    out[0] = 0;
    int bad = 0;
    unsigned char host[256];
    for (int i = 0; i < g_ngbufs; ++i) {
        // the zone before the start (the write nearest the buffer is reported), then past the end
        if (cudaMemcpy(host, g_gbufs[i].dev - CANARY, CANARY, cudaMemcpyDeviceToHost) == cudaSuccess) {
            for (int k = (int)CANARY - 1; k >= 0; --k) {
                if (host[k] != 0xA5) {
                    size_t used = strlen(out);
                    unsigned long long e = g_gbufs[i].elem, back = (CANARY - k + e - 1) / e;  // elements before
                    snprintf(out + used, cap - used,
                             "kind=oob\naccess=write\nbuffer=%s\nindex=-%llu\nelements=%llu\nbyte_offset=-%llu\nnbytes=%llu\n\n",
                             g_gbufs[i].name, back, g_gbufs[i].nbytes / e, back * e, g_gbufs[i].nbytes);
                    bad++;
                    break;
                }
            }
        }
        if (cudaMemcpy(host, g_gbufs[i].dev + g_gbufs[i].nbytes, CANARY, cudaMemcpyDeviceToHost) != cudaSuccess) continue;
        for (unsigned k = 0; k < CANARY; ++k) {
            if (host[k] != 0xA5) {
                size_t used = strlen(out);
                unsigned long long e = g_gbufs[i].elem;
                snprintf(out + used, cap - used,
                         "kind=oob\naccess=write\nbuffer=%s\nindex=%llu\nelements=%llu\nbyte_offset=%llu\nnbytes=%llu\n\n",
                         g_gbufs[i].name, (g_gbufs[i].nbytes + k) / e, g_gbufs[i].nbytes / e, g_gbufs[i].nbytes + k,
                         g_gbufs[i].nbytes);
                bad++;
                break;
            }
        }
    }
    return bad;
}
#endif
