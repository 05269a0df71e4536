// c2t_cpu_api.h - the C entry points the Python worker calls on a CPU-built kernel library:
// guarded buffers, fault reports, schedule settings.
// Part of cuda_cpu.h; do not include on its own.
//
// Buffers are placed so that their last byte touches a PROT_NONE page: a read or write past the
// end faults, and the SIGSEGV handler maps the address back to the buffer's name and element.
// The bytes in front of a buffer (up to the previous page boundary) hold a canary that is checked
// after the run, catching writes before the start. Any other fatal signal (a wild pointer,
// integer division by zero, abort/assert, __trap, a fiber stack overflow) is reported with the
// thread and block that were running. Reports are `key=value` lines written to report_fd.
#pragma once

namespace c2t {

struct GuardBuf {
    char name[64];
    char* map; size_t maplen;
    char* start; size_t nbytes; size_t elem;
    char* guard;
};
inline GuardBuf g_bufs[512];
inline int g_nbufs = 0;
inline size_t g_page = 4096;
static const unsigned char FRONT_CANARY = 0xA5;

// --- async-signal-safe formatting
struct SigWriter {
    char buf[2048]; size_t n = 0;
    void s(const char* p) { while (*p && n < sizeof buf - 1) buf[n++] = *p++; }
    void u(unsigned long long v) {
        char t[24]; int k = 0;
        do { t[k++] = (char)('0' + v % 10); v /= 10; } while (v);
        while (k && n < sizeof buf - 1) buf[n++] = t[--k];
    }
    void i(long long v) { if (v < 0) { s("-"); u((unsigned long long)(-(v + 1)) + 1); } else u((unsigned long long)v); }
    void x(unsigned long long v) {
        s("0x"); char t[17]; int k = 0;
        do { t[k++] = "0123456789abcdef"[v & 15]; v >>= 4; } while (v);
        while (k && n < sizeof buf - 1) buf[n++] = t[--k];
    }
    void dim(const char* key, unsigned a, unsigned b, unsigned c) { s(key); s("="); u(a); s(","); u(b); s(","); u(c); s("\n"); }
    void flush(int fd) { size_t off = 0; while (off < n) { ssize_t w = write(fd, buf + off, n - off); if (w <= 0) break; off += (size_t)w; } }
};

static const char* signame(int sig) {
    switch (sig) {
    case SIGSEGV: return "SIGSEGV"; case SIGBUS: return "SIGBUS"; case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL"; case SIGABRT: return "SIGABRT"; case SIGTRAP: return "SIGTRAP";
    default: return "signal";
    }
}

static void on_fatal_signal(int sig, siginfo_t* si, void* ucv) {
    SigWriter w;
    uintptr_t addr = (uintptr_t)si->si_addr;
    int write_access = -1;
#if defined(__x86_64__) && defined(REG_ERR)
    if (ucv && (sig == SIGSEGV || sig == SIGBUS)) {
        ucontext_t* uc = (ucontext_t*)ucv;
        write_access = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
    }
#else
    (void)ucv;
#endif
    bool done = false;
    if (sig == SIGSEGV || sig == SIGBUS) {
        for (int i = 0; i < g_nbufs && !done; ++i) {
            GuardBuf& b = g_bufs[i];
            if (addr >= (uintptr_t)b.guard && addr < (uintptr_t)b.guard + g_page) {
                w.s("kind=oob\n");
                w.s("buffer="); w.s(b.name); w.s("\n");
                w.s("index="); w.u((addr - (uintptr_t)b.start) / (b.elem ? b.elem : 1)); w.s("\n");
                w.s("elements="); w.u(b.nbytes / (b.elem ? b.elem : 1)); w.s("\n");
                w.s("byte_offset="); w.u(addr - (uintptr_t)b.start); w.s("\n");
                done = true;
            }
        }
        if (!done && g_dsm.guard && addr >= (uintptr_t)g_dsm.guard && addr < (uintptr_t)g_dsm.guard + g_page) {
            w.s("kind=oob\nbuffer=<dynamic shared memory>\n");
            w.s("byte_offset="); w.u(addr - (uintptr_t)g_dsm.ptr); w.s("\n");
            w.s("nbytes="); w.u(g_dsm.bytes); w.s("\n");
            done = true;
        }
        // A fault in the guard below a thread stack, or with the stack pointer below the running
        // thread's stack, is a stack overflow.
        uintptr_t sp = 0;
#if defined(__x86_64__) && defined(REG_RSP)
        if (ucv) sp = (uintptr_t)((ucontext_t*)ucv)->uc_mcontext.gregs[REG_RSP];
#endif
        for (int i = 0; i < g_stacks.count && !done; ++i) {
            uintptr_t lo = (uintptr_t)g_stacks.lo[i];
            bool in_guard = addr >= lo - g_stacks.guard && addr < lo;
            bool sp_below = sp && sp < lo + 256 && sp + ((uintptr_t)16 << 20) > lo &&
                            g.in_kernel && i == g.th[g.cur].stack;
            if (in_guard || sp_below) {
                w.s("kind=stack_overflow\nstack_bytes="); w.u(g_stacks.size); w.s("\n");
                done = true;
            }
        }
    }
    if (!done) {
        w.s("kind=signal\n");
        if (sig == SIGSEGV || sig == SIGBUS) {
            w.s("addr="); w.x(addr); w.s("\n");
            if (si->si_code == SI_KERNEL) w.s("general_protection=1\n");
        }
    }
    w.s("signal="); w.s(signame(sig)); w.s("\n");
    if (write_access >= 0) { w.s("access="); w.s(write_access ? "write" : "read"); w.s("\n"); }
    w.s("in_kernel="); w.u((unsigned)g.in_kernel); w.s("\n");
    if (g.in_kernel) {
        w.dim("thread", threadIdx.x, threadIdx.y, threadIdx.z);
        w.dim("block", blockIdx.x, blockIdx.y, blockIdx.z);
    }
    w.s("\n");
    w.flush(g_report_fd);
    _exit(86);
}

static inline void install_handlers() {
    static bool done = false;
    if (done) return;
    done = true;
    size_t alt = 256 * 1024;
    stack_t ss;
    ss.ss_sp = malloc(alt);
    ss.ss_size = alt;
    ss.ss_flags = 0;
    sigaltstack(&ss, nullptr);
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fatal_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
    for (int s : sigs) sigaction(s, &sa, nullptr);
}

}  // namespace c2t

// report_fd: where fault reports go; schedule: 0 forward, 1 reverse, 2 random; seed: of the
// random schedule; poison_shared: fill shared memory with 0xFF bytes before every block.
C2T_EXPORT int c2t_init(int report_fd, int schedule, unsigned long long seed, int poison_shared) {
    c2t::g_report_fd = report_fd >= 0 ? report_fd : 2;
    c2t::g.mode = schedule;
    c2t::g.rng = seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    if (!c2t::g.rng) c2t::g.rng = 1;
    c2t::g.poison_shared = poison_shared;
    long pg = sysconf(_SC_PAGESIZE);
    c2t::g_page = pg > 0 ? (size_t)pg : 4096;
    c2t::install_handlers();
    setvbuf(stdout, nullptr, _IOLBF, 1 << 16);   // kernel printf output survives a crash
    return 0;
}

// A buffer of nbytes whose end touches a guard page; elem is the element size for reports.
C2T_EXPORT void* c2t_alloc_buffer(const char* name, unsigned long long nbytes, unsigned long long elem) {
    using namespace c2t;
    if (g_nbufs >= 512) { set_msg("too many buffers"); return nullptr; }
    size_t page = g_page;
    size_t data_pages = (nbytes + page - 1) / page;
    if (data_pages == 0) data_pages = 1;
    size_t maplen = (data_pages + 1) * page;
    char* map = (char*)mmap(nullptr, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == (char*)MAP_FAILED) { set_msg("cannot map %llu bytes for buffer %s", nbytes, name); return nullptr; }
    char* guard = map + data_pages * page;
    if (mprotect(guard, page, PROT_NONE) != 0) { set_msg("mprotect failed"); return nullptr; }
    GuardBuf& b = g_bufs[g_nbufs++];
    snprintf(b.name, sizeof b.name, "%s", name);
    b.map = map; b.maplen = maplen; b.guard = guard;
    b.start = guard - nbytes; b.nbytes = nbytes; b.elem = elem;
    std::memset(map, FRONT_CANARY, (size_t)(b.start - map));
    return b.start;
}
C2T_EXPORT int c2t_write_buffer(void* dst, const void* src, unsigned long long n) { std::memcpy(dst, src, n); return 0; }
C2T_EXPORT int c2t_read_buffer(void* dst, const void* src, unsigned long long n) { std::memcpy(dst, src, n); return 0; }

// Writes reports of clobbered canaries (writes before the start of a buffer) to out.
C2T_EXPORT int c2t_check_buffers(char* out, int cap) {
    using namespace c2t;
    out[0] = 0;
    int bad = 0;
    for (int i = 0; i < g_nbufs; ++i) {
        GuardBuf& b = g_bufs[i];
        for (char* p = b.start - 1; p >= b.map; --p) {
            if ((unsigned char)*p != FRONT_CANARY) {
                size_t used = strlen(out);
                long long idx = -(long long)((b.start - p + (long long)b.elem - 1) / (long long)(b.elem ? b.elem : 1));
                snprintf(out + used, (size_t)cap - used,
                         "kind=oob\naccess=write\nbuffer=%s\nindex=%lld\nelements=%llu\nbyte_offset=-%lld\nin_kernel=1\n\n",
                         b.name, idx, (unsigned long long)(b.nbytes / (b.elem ? b.elem : 1)), (long long)(b.start - p));
                bad++;
                break;
            }
        }
    }
    return bad;
}
