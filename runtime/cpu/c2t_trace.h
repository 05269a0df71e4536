// c2t_trace.h - recording the kernel launches of a program's own run, for the replayed check.
// Part of cuda_cpu.h; do not include on its own.
//
// With C2T_TRACE_DIR set, the first C2T_TRACE_LIMIT (default 2) launches of each kernel are
// recorded: one JSON line each in C2T_TRACE_DIR/manifest.jsonl (the kernel as written at the
// launch, grid, block, dynamic shared bytes, every argument: a scalar's type and bytes, a pointer
// as the allocation it points into and the offset), and in C2T_TRACE_DIR/data.bin the bytes of
// each allocation the arguments reach, before the launch and after it. Allocations are those of
// cudaMalloc and its relatives (c2t_host.h tells this file of each). An allocation the launch
// leaves unchanged is written once: its "after" points at its before bytes ("same": true). Later
// launches run as usual. C2T_TRACE_BUDGET (bytes, default 512 MiB) bounds data.bin: a launch whose
// bytes would take it past the budget is not recorded, and its manifest line says so ("skipped":
// "budget"); a kernel's second and later launches share half of the budget.
// Python reads the recording with migrate.runtime.traces. The same file records on a GPU, in a
// program built by nvcc with c2t_gpu_trace.h (C2T_TRACE_GPU: allocations are read back with
// cudaMemcpy). Each recorded launch also holds the bytes of the program's __constant__ symbols
// ("symbols"), registered after their definitions by runtime/source.py's register_constants.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <unistd.h>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

namespace c2t {
namespace trace {

struct Alloc {
    size_t size;
    long id;
};

inline std::map<uintptr_t, Alloc>& allocs() {
    static std::map<uintptr_t, Alloc> a;
    return a;
}

inline void on_alloc(void* p, size_t n) {
    static long next = 0;
    if (p) allocs()[(uintptr_t)p] = Alloc{n, next++};
}

inline void on_free(void* p) { allocs().erase((uintptr_t)p); }

// The allocation that holds address p (its base and record), or null.
inline const std::pair<const uintptr_t, Alloc>* find(const void* p) {
    auto& a = allocs();
    uintptr_t q = (uintptr_t)p;
    auto it = a.upper_bound(q);
    if (it == a.begin()) return nullptr;
    --it;
    return q < it->first + it->second.size || (q == it->first) ? &*it : nullptr;
}

// The __constant__ symbols of the program (runtime/source.py register_constants puts a
// registration after each definition): a recorded launch holds the bytes of each.
struct Symbol {
    const char* name;
    size_t size;
    void (*read)(void*);
    bool writable;  // a __device__ or __managed__ global: its bytes go to data.bin before and after
};

inline std::vector<Symbol>& symbols() {
    static std::vector<Symbol> s;
    return s;
}

inline int add_symbol(const char* name, size_t size, void (*read)(void*), bool writable = false) {
    for (const Symbol& s : symbols())
        if (!strcmp(s.name, name)) return 0;  // a header's symbol, registered by each unit
    symbols().push_back(Symbol{name, size, read, writable});
    return 0;
}

// Whether a launch records the symbol's bytes in data.bin: a writable global of at most 16 MiB
// (a larger one would crowd the launches' own bytes out of the budget; its kernels' replays say
// that the recording does not hold it).
inline bool dumped(const Symbol& s) { return s.writable && s.size <= (16u << 20); }

// The bytes the writable globals take, dumped before a launch and again after it.
inline long global_bytes() {
    long n = 0;
    for (const Symbol& s : symbols())
        if (dumped(s)) n += (long)s.size;
    return n;
}

template <class T>
inline void read_symbol(void* into, const T& sym) {
#if defined(C2T_TRACE_GPU)
    cudaMemcpyFromSymbol(into, sym, sizeof(T), 0, cudaMemcpyDeviceToHost);
#else
    memcpy(into, (const void*)&sym, sizeof(T));
#endif
}

struct State {
    bool on = false;
    int limit = 2;
    bool skip = false;  // C2T_TRACE_SKIP: a kernel's launches after its recorded ones do not run
    FILE* manifest = nullptr;
    FILE* data = nullptr;
    long offset = 0;  // bytes written to data.bin
    long budget = 512L << 20;  // the most bytes data.bin may hold
    long seq = 0;     // launches recorded
    long later = 0;   // bytes of launches after a kernel's first
    std::map<std::string, int> seen;  // kernel -> launches seen
    std::set<std::string> shapes;     // kernel and geometry of the launches fast-forwarded past
};

inline State& state() {
    static State s;
    static bool ready = false;
    if (!ready) {
        ready = true;
        const char* dir = getenv("C2T_TRACE_DIR");
        if (dir && *dir) {
            std::string d(dir);
            s.manifest = fopen((d + "/manifest.jsonl").c_str(), "w");
            s.data = fopen((d + "/data.bin").c_str(), "wb");
            s.on = s.manifest && s.data;
            if (const char* l = getenv("C2T_TRACE_LIMIT")) s.limit = atoi(l);
            if (const char* b = getenv("C2T_TRACE_BUDGET")) s.budget = atol(b);
            if (const char* k = getenv("C2T_TRACE_SKIP")) s.skip = *k == '1';
        }
    }
    return s;
}

inline std::string json_string(const char* t) {
    std::string out = "\"";
    for (const char* c = t; *c; ++c) {
        if (*c == '"' || *c == '\\') out += '\\';
        if ((unsigned char)*c < 0x20) { out += ' '; continue; }
        out += *c;
    }
    return out + "\"";
}

inline std::string hex(const void* p, size_t n) {
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < n; ++i) {
        unsigned char b = ((const unsigned char*)p)[i];
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

// The JSON of every registered symbol's bytes now (those of at most 64 KiB: __constant__ memory).
inline std::string symbols_json() {
    std::string out;
    for (const Symbol& s : symbols()) {
        if (s.writable || s.size > (64u << 10)) continue;
        std::vector<char> bytes(s.size);
        s.read(bytes.data());
        out += std::string(out.empty() ? "" : ",") + "{\"name\":" + "\"" + s.name + "\",\"hex\":\"" +
               hex(bytes.data(), bytes.size()) + "\"}";
    }
    return out;
}

// The numpy-style code of an argument's type: "i4", "u8", "f4", "b1"; "" for other types.
template <class T>
inline std::string type_code() {
    if (std::is_same<T, bool>::value) return "b1";
    if (std::is_floating_point<T>::value) return "f" + std::to_string(sizeof(T));
    if (std::is_enum<T>::value) return "i" + std::to_string(sizeof(T));
    if (std::is_integral<T>::value) return (std::is_signed<T>::value ? "i" : "u") + std::to_string(sizeof(T));
    return "";
}

// The size of a struct, 0 where it is incomplete (a handle's pointer): nothing to follow.
template <class E, class = void>
struct complete_size { static constexpr size_t value = 0; };
template <class E>
struct complete_size<E, std::void_t<decltype(sizeof(E))>> { static constexpr size_t value = sizeof(E); };

// One launch being recorded: its arguments as JSON, the allocations they reach.
struct Launch {
    std::string args;
    std::vector<const std::pair<const uintptr_t, Alloc>*> reached;
    bool globals_changed = false;  // the launch left a writable global other than it found it

    template <class T>
    void arg(const T& v) {
        if (!args.empty()) args += ",";
        if constexpr (std::is_null_pointer<T>::value) {  // k<<<g, b>>>(x, nullptr): an optional buffer left out
            args += "{\"kind\":\"pointer\",\"null\":true}";
        } else if constexpr (std::is_pointer<T>::value) {
            const auto* a = find((const void*)(uintptr_t)v);  // function and volatile pointers too
            if (!v) {
                args += "{\"kind\":\"pointer\",\"null\":true}";
            } else if (!a) {
                args += "{\"kind\":\"pointer\",\"alloc\":null}";  // host memory the runtime did not allocate
            } else {
                typedef typename std::remove_cv<typename std::remove_pointer<T>::type>::type E;
                args += "{\"kind\":\"pointer\",\"alloc\":" + std::to_string(a->second.id) + ",\"offset\":" +
                        std::to_string((uintptr_t)v - a->first) + ",\"elem\":\"" + type_code<E>() + "\"}";
                bool known = false;
                for (auto* r : reached) known |= r == a;
                if (!known) reached.push_back(a);
                if constexpr (std::is_class<E>::value)
                    follow(a, (uintptr_t)v - a->first, complete_size<E>::value);
            }
        } else {
            args += "{\"kind\":\"scalar\",\"type\":\"" + type_code<T>() + "\",\"size\":" + std::to_string(sizeof(T)) +
                    ",\"hex\":\"" + hex((const void*)&v, sizeof(T)) + "\"";
            if constexpr (std::is_class<T>::value) args += struct_pointers((const char*)&v, sizeof(T));
            args += "}";
        }
    }

    // A struct of buffers in device memory (clusters_t* with float* fields): the allocations its
    // pointer fields point into are reached too, each pointer a link "[struct's allocation, byte
    // offset of the field, allocation it points into, offset there]" (the replay passes a field's
    // buffer from it). Only structs of a few KiB are read for pointers.
    std::string links;

    void follow(const std::pair<const uintptr_t, Alloc>* a, size_t offset, size_t size) {
        if (size > 4096 || offset + size > a->second.size) return;
        std::vector<char> bytes(size);
#if defined(C2T_TRACE_GPU)
        cudaMemcpy(bytes.data(), (const void*)(a->first + offset), size, cudaMemcpyDefault);
#else
        memcpy(bytes.data(), (const void*)(a->first + offset), size);
#endif
        for (size_t k = 0; k + sizeof(uintptr_t) <= size; k += sizeof(uintptr_t)) {
            uintptr_t q;
            memcpy(&q, bytes.data() + k, sizeof q);
            const auto* b = q ? find((const void*)q) : nullptr;
            if (!b || b == a) continue;
            links += std::string(links.empty() ? "" : ",") + "[" + std::to_string(a->second.id) + "," +
                     std::to_string(offset + k) + "," + std::to_string(b->second.id) + "," +
                     std::to_string(q - b->first) + "]";
            bool known = false;
            for (auto* r : reached) known |= r == b;
            if (!known) reached.push_back(b);
        }
    }

    // A struct passed by value that holds pointers (struct {double *x, *y; int n;}): each aligned
    // word of it that points into a recorded allocation, as where it is in the struct, the
    // allocation and the offset in it; those allocations are reached too.
    std::string struct_pointers(const char* bytes, size_t size) {
        std::string out;
        for (size_t at = 0; at + sizeof(void*) <= size; at += alignof(void*)) {
            uintptr_t word;
            memcpy(&word, bytes + at, sizeof word);
            const auto* a = word ? find((const void*)word) : nullptr;
            if (!a) continue;
            out += std::string(out.empty() ? "" : ",") + "{\"at\":" + std::to_string(at) + ",\"alloc\":" +
                   std::to_string(a->second.id) + ",\"offset\":" + std::to_string(word - a->first) + "}";
            bool known = false;
            for (auto* r : reached) known |= r == a;
            if (!known) reached.push_back(a);
        }
        return out.empty() ? out : ",\"pointers\":[" + out + "]";
    }

    // The bytes of the reached allocations before the launch, kept to compare with after it.
    std::vector<std::vector<char>> saved;
    std::vector<long> at;  // where each one's before bytes start in data.bin

    long before_bytes() const {
        long n = 0;
        for (auto* a : reached) n += (long)a->second.size;
        return n;
    }

    // The allocation's bytes now (read back from the GPU when recording there).
    static void fetch(const std::pair<const uintptr_t, Alloc>* a, std::vector<char>& into) {
        into.resize(a->second.size);
#if defined(C2T_TRACE_GPU)
        cudaMemcpy(into.data(), (const void*)a->first, a->second.size, cudaMemcpyDefault);
#else
        memcpy(into.data(), (const void*)a->first, a->second.size);
#endif
    }

    // Append ``bytes`` to data.bin; where they start there.
    static long append(State& s, const std::vector<char>& bytes) {
        fwrite(bytes.data(), 1, bytes.size(), s.data);
        long where = s.offset;
        s.offset += (long)bytes.size();
        return where;
    }

    // Append the reached allocations' bytes before the launch to data.bin; their JSON.
    std::string dump_before(State& s) {
        std::string out;
        saved.resize(reached.size());
        for (size_t i = 0; i < reached.size(); ++i) {
            auto* a = reached[i];
            fetch(a, saved[i]);
            at.push_back(append(s, saved[i]));
            out += std::string(out.empty() ? "" : ",") + "{\"id\":" + std::to_string(a->second.id) + ",\"size\":" +
                   std::to_string(a->second.size) + ",\"before\":" + std::to_string(at.back()) + "}";
        }
        return out;
    }

    // The writable globals' bytes before the launch, appended to data.bin; kept, with where they
    // start, to compare with after the launch.
    std::vector<std::vector<char>> gsaved;
    std::vector<long> gat;

    void dump_globals_before(State& s) {
        for (const Symbol& g : symbols()) {
            if (!dumped(g)) continue;
            gsaved.emplace_back(g.size);
            g.read(gsaved.back().data());
            gat.push_back(append(s, gsaved.back()));
        }
    }

    // The writable globals' JSON (name, size, where their bytes before and after the launch
    // start; the after bytes are the before bytes where the launch left one as it was).
    std::string dump_globals_after(State& s) {
        std::string out;
        std::vector<char> now;
        size_t i = 0;
        for (const Symbol& g : symbols()) {
            if (!dumped(g) || i >= gat.size()) continue;
            now.resize(g.size);
            g.read(now.data());
            globals_changed |= now != gsaved[i];
            long where = now == gsaved[i] ? gat[i] : append(s, now);
            std::vector<char>().swap(gsaved[i]);
            out += std::string(out.empty() ? "" : ",") + "{\"name\":\"" + g.name + "\",\"size\":" +
                   std::to_string(g.size) + ",\"before\":" + std::to_string(gat[i]) + ",\"after\":" +
                   std::to_string(where) + "}";
            ++i;
        }
        return out;
    }

    // The bytes after the launch into ``out``: an allocation the launch left as it was points at
    // its before bytes ("same"), the others are appended (one allocation held at a time). False
    // when they took data.bin past the budget: the caller cuts them off again.
    bool dump_after(State& s, std::string& out) {
        std::vector<char> now;
        for (size_t i = 0; i < reached.size(); ++i) {
            auto* a = reached[i];
            fetch(a, now);
            bool same = now == saved[i];
            std::vector<char>().swap(saved[i]);
            long where = same ? at[i] : append(s, now);
            out += std::string(out.empty() ? "" : ",") + "{\"id\":" + std::to_string(a->second.id) + ",\"size\":" +
                   std::to_string(a->second.size) + ",\"after\":" + std::to_string(where) +
                   (same ? ",\"same\":true}" : "}");
        }
        return s.offset <= s.budget;
    }
};

// Whether this launch of ``kernel`` is recorded (counts it either way).
inline bool wanted(const char* kernel) {
    State& s = state();
    if (!s.on || !kernel) return false;
    return s.seen[kernel]++ < s.limit;
}

// A launch not recorded because its allocations would take data.bin past the budget.
inline std::string instance_field(const char* instance) {
    return instance ? ",\"instance\":" + json_string(instance) : std::string();
}

// A launch fast-forwarded past (not run, not recorded) at a geometry its kernel was not recorded
// or fast-forwarded at before: one line with that geometry (``"skipped":"fast-forward"``; no
// ``seq``, no bytes; traces.read leaves it out), for the drop-in build, which builds a kernel for
// every geometry its program launches it at.
inline void write_fast_forwarded(const char* kernel, const char* instance, int number, dim3 g, dim3 b,
                                 size_t shmem) {
    State& s = state();
    char shape[160];
    snprintf(shape, sizeof shape, "|%u,%u,%u|%u,%u,%u|%zu", g.x, g.y, g.z, b.x, b.y, b.z, shmem);
    if (!s.shapes.insert(std::string(instance ? instance : kernel ? kernel : "") + shape).second) return;
    fprintf(s.manifest, "{\"kernel\":%s%s,\"number\":%d,\"skipped\":\"fast-forward\","
            "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared_bytes\":%zu}\n",
            json_string(kernel).c_str(), instance_field(instance).c_str(), number, g.x, g.y, g.z,
            b.x, b.y, b.z, shmem);
    fflush(s.manifest);
}

// Its geometry is written too (``grid``, ``block``, ``shared_bytes``): what a drop-in build needs
// of a launch whose bytes were too many to record.
inline void write_skipped(const char* kernel, const char* instance, int number, long bytes, dim3 g, dim3 b,
                          size_t shmem) {
    State& s = state();
    fprintf(s.manifest, "{\"seq\":%ld,\"kernel\":%s%s,\"number\":%d,\"skipped\":\"budget\",\"bytes\":%ld,"
            "\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared_bytes\":%zu}\n",
            s.seq++, json_string(kernel).c_str(), instance_field(instance).c_str(), number, bytes, g.x, g.y, g.z,
            b.x, b.y, b.z, shmem);
    fflush(s.manifest);
}

inline void write(const char* kernel, const char* instance, int number, dim3 g, dim3 b, size_t shmem,
                  const Launch& L, const std::string& before, const std::string& after, int rc,
                  const std::string& symbols, const std::string& globals) {
    State& s = state();
    fprintf(s.manifest,
            "{\"seq\":%ld,\"kernel\":%s%s,\"number\":%d,\"grid\":[%u,%u,%u],\"block\":[%u,%u,%u],\"shared_bytes\":%zu,"
            "\"status\":%d,\"args\":[%s],\"before\":[%s],\"after\":[%s],\"symbols\":[%s],\"globals\":[%s],"
            "\"links\":[%s]}\n",
            s.seq++, json_string(kernel).c_str(), instance_field(instance).c_str(), number, g.x, g.y, g.z, b.x, b.y, b.z,
            shmem, rc,
            L.args.c_str(), before.c_str(), after.c_str(), symbols.c_str(), globals.c_str(), L.links.c_str());
    fflush(s.manifest);
    fflush(s.data);
}

// One launch as both executors record it: whether it is recorded (the first C2T_TRACE_LIMIT of
// its kernel instance, within the budget), its arguments and the bytes they reach before it;
// finish() writes it with the bytes after it. Launches are counted per instance where the launch
// names one, else per kernel as written.
struct Recorder {
    const char* kernel;
    const char* instance;
    int number = 0;
    bool on = false;
    bool skip = false;  // a launch after the kernel's recorded ones, with C2T_TRACE_SKIP: not run
    long start = 0;  // data.bin's size before this launch
    long written = -1;  // the launch's seq in the manifest once finish() wrote it
    Launch L;
    std::string before;
    std::string symbols;  // the __constant__ symbols' bytes the launch starts from

    template <class Tup>
    Recorder(const char* k, const char* inst, const Tup& args, dim3 g, dim3 b, size_t shmem)
        : kernel(k), instance(inst) {
        const char* key = instance ? instance : kernel;
        number = key ? state().seen[key] : 0;
        on = wanted(key);
        skip = state().on && state().skip && number >= state().limit;
        if (skip) write_fast_forwarded(kernel, instance, number, g, b, shmem);
        if (!on) return;
#if defined(C2T_TRACE_GPU)
        cudaDeviceSynchronize();  // the bytes the launch starts from
#endif
        std::apply([&](const auto&... x) { (L.arg(x), ...); }, args);
        State& s = state();
        long need = L.before_bytes() + global_bytes();
        // a kernel's later launches share half of the budget, so that they never crowd out the
        // first launch of a kernel that comes after them
        if (s.offset + need > s.budget || (number > 0 && s.later + need > s.budget / 2)) {
            write_skipped(kernel, instance, number, need, g, b, shmem);
            on = false;
        } else {
            start = s.offset;
            before = L.dump_before(s);
            symbols = symbols_json();
            L.dump_globals_before(s);
        }
    }

    void finish(dim3 g, dim3 b, size_t shmem, int rc) {
        if (!on) return;
        State& s = state();
        std::string after;
        bool fits = L.dump_after(s, after);
        std::string globals = L.dump_globals_after(s);
        fits = fits && s.offset <= s.budget;
        long total = s.offset - start;
        if (!fits || (number > 0 && s.later + total > s.budget / 2)) {
            fflush(s.data);  // past the budget after all: the launch's bytes go, it is listed as skipped
            if (ftruncate(fileno(s.data), start) == 0) fseek(s.data, start, SEEK_SET);
            s.offset = start;
            write_skipped(kernel, instance, number, total, g, b, shmem);
            return;
        }
        if (number > 0) s.later += total;
        written = s.seq;
        write(kernel, instance, number, g, b, shmem, L, before, after, rc, symbols, globals);
    }
};

}  // namespace trace

// The text of a kernel template's instance, ``k<float, 64>``, from the compiler's spelling of
// ``F`` (GCC: "... [with auto F = k<float, 64>]"; Clang: "... [F = &k<float, 64>]").
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

}  // namespace c2t
