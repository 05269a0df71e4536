// c2t_sched.h - the CUDA execution model on the CPU: blocks of cooperative fibers.
// Part of cuda_cpu.h; do not include on its own.
//
// Blocks of a grid run one after another on the calling OS thread. The threads of a block
// are fibers: each starts lazily (only when the scheduler gets to it) on a pooled stack and
// runs straight through until it finishes or reaches a barrier (__syncthreads, a warp
// operation, cooperative-groups sync), where it switches back to the scheduler. A barrier
// releases when every live (not yet exited) thread it waits for has arrived; exited threads
// count as arrived, as on the GPU. When no thread can run but some still wait, the block is
// deadlocked and the launch fails with a message saying who waits where.
//
// The order in which the scheduler starts and resumes threads (and runs blocks) is the
// schedule: forward (ascending thread index), reverse, or random (seeded). Running a kernel
// under reverse and random schedules exposes missing barriers.
//
// Context switches use a small x86-64 assembly routine (callee-saved registers + stack
// pointer); elsewhere, or with -DC2T_USE_UCONTEXT, <ucontext.h>.
#pragma once

extern "C" {
void c2t_ctx_switch(void** save_sp, void* new_sp) __attribute__((visibility("hidden")));
void c2t_ctx_entry(void) __attribute__((visibility("hidden")));
}

#if defined(__x86_64__) && !defined(C2T_USE_UCONTEXT)
#define C2T_ASM_FIBERS 1
// c2t_ctx_switch(save_sp, new_sp): push callee-saved registers, store rsp in *save_sp, switch
// to new_sp, pop its registers and return into it. A fresh fiber's frame "returns" into
// c2t_ctx_entry, which calls r12(r13).
__asm__(
    ".text\n"
    ".p2align 4\n"
    ".weak c2t_ctx_switch\n"
    ".hidden c2t_ctx_switch\n"
    ".type c2t_ctx_switch,@function\n"
    "c2t_ctx_switch:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size c2t_ctx_switch, .-c2t_ctx_switch\n"
    ".p2align 4\n"
    ".weak c2t_ctx_entry\n"
    ".hidden c2t_ctx_entry\n"
    ".type c2t_ctx_entry,@function\n"
    "c2t_ctx_entry:\n"
    "    movq %r13, %rdi\n"
    "    callq *%r12\n"
    "    ud2\n"
    ".size c2t_ctx_entry, .-c2t_ctx_entry\n");
#else
#include <ucontext.h>
#endif

// The CUDA built-in index variables. The scheduler sets threadIdx before resuming a thread.
inline uint3 threadIdx = {0, 0, 0};
inline uint3 blockIdx = {0, 0, 0};
inline dim3 blockDim = dim3(1, 1, 1);
inline dim3 gridDim = dim3(1, 1, 1);
static constexpr int warpSize = 32;
// Base of the dynamic (extern __shared__) shared memory of the running block; the source
// rewriter turns `extern __shared__ T s[];` into `T *&s = (T *&)c2t_dyn_smem;`
inline void* c2t_dyn_smem = nullptr;

// Static __shared__ variables live in the section c2t_shared, poisoned before every block.
extern "C" char __start_c2t_shared[] __attribute__((weak, visibility("hidden")));
extern "C" char __stop_c2t_shared[] __attribute__((weak, visibility("hidden")));

namespace c2t {

enum Schedule { SCHED_FORWARD = 0, SCHED_REVERSE = 1, SCHED_RANDOM = 2 };
enum ThreadState { TS_UNSTARTED = 0, TS_READY, TS_RUNNING, TS_WAIT_BAR, TS_WAIT_WARP, TS_DONE };
enum WarpOp {
    WOP_SYNC = 0, WOP_SHFL, WOP_BALLOT, WOP_ANY, WOP_ALL, WOP_MATCH_ANY, WOP_MATCH_ALL,
    WOP_RED_ADD, WOP_RED_MIN, WOP_RED_MAX, WOP_RED_UMIN, WOP_RED_UMAX, WOP_RED_AND, WOP_RED_OR,
    WOP_RED_XOR
};
enum LaunchStatus { LAUNCH_OK = 0, LAUNCH_BAD_ARGS = 1, LAUNCH_DEADLOCK = 2, LAUNCH_BAD_CONFIG = 3,
                    LAUNCH_DEVICE_ERROR = 4, LAUNCH_UNSUPPORTED = 5 };

struct Ctx {
#ifdef C2T_ASM_FIBERS
    void* sp;
#else
    ucontext_t uc;
#endif
};

struct Thr { Ctx ctx; int stack; int state; };
struct WarpSlot {
    alignas(16) unsigned char val[32];
    alignas(16) unsigned char res[32];
    unsigned mask; int op; int src; int pred; int size;
};
struct WarpState { unsigned arrived, need, exists, exited; };

struct Sched {
    int n = 0, cap = 0, nwarps = 0;
    Thr* th = nullptr;
    WarpSlot* slots = nullptr;
    WarpState* warps = nullptr;
    uint3* tidx = nullptr;
    int* order = nullptr;
    int* ready = nullptr;
    int rhead = 0, rcount = 0;
    int next_start = 0, live = 0, cur = 0;
    int bar_arrived = 0, bar_count = 0, bar_result = 0, bar_total = 0;
    int mode = SCHED_FORWARD;
    unsigned long long rng = 0x9E3779B97F4A7C15ull;
    int poison_shared = 1;
    int in_kernel = 0;
    Ctx sched_ctx;
    void (*invoke)(void*) = nullptr;
    void* invoke_ctx = nullptr;
    char msg[2048];
};
inline Sched g;
inline int g_report_fd = 2;   // where fault reports go (c2t_cpu_api.h)

// ----------------------------------------------------------------------------- messages
static inline void set_msg(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void set_msg(const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(g.msg, sizeof g.msg, fmt, ap);
    va_end(ap);
}

// ----------------------------------------------------------------------------- random numbers
static inline unsigned long long rnd() {   // xorshift64*
    unsigned long long x = g.rng;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    g.rng = x;
    return x * 0x2545F4914F6CDD1Dull;
}
static inline void shuffle(int* a, int n) {
    for (int i = n - 1; i > 0; --i) {
        int j = (int)(rnd() % (unsigned long long)(i + 1));
        int t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

// ----------------------------------------------------------------------------- stacks
struct StackPool {
    size_t size = 0;          // usable bytes per stack
    size_t page = 4096;
    size_t guard = 65536;     // PROT_NONE bytes below each stack
    char** lo = nullptr;      // lowest usable address of each stack (a guard page lies below)
    int count = 0, cap = 0;
    int* free_list = nullptr;
    int nfree = 0;
};
inline StackPool g_stacks;

static inline int stack_acquire() {
    StackPool& P = g_stacks;
    if (P.nfree) return P.free_list[--P.nfree];
    if (P.size == 0) {
        long pg = sysconf(_SC_PAGESIZE);
        P.page = pg > 0 ? (size_t)pg : 4096;
        size_t kb = 256;
        if (const char* e = getenv("C2T_STACK_KB")) { long v = atol(e); if (v >= 16) kb = (size_t)v; }
        P.size = (kb * 1024 + P.page - 1) / P.page * P.page;
        P.guard = (65536 + P.page - 1) / P.page * P.page;
    }
    if (P.count == P.cap) {
        int nc = P.cap ? P.cap * 2 : 64;
        P.lo = (char**)realloc(P.lo, sizeof(char*) * nc);
        P.free_list = (int*)realloc(P.free_list, sizeof(int) * nc);
        P.cap = nc;
    }
    char* base = (char*)mmap(nullptr, P.size + P.guard, PROT_READ | PROT_WRITE,
                             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == (char*)MAP_FAILED) {
        fprintf(stderr, "cuda2tile CPU executor: cannot map a %zu-byte thread stack\n", P.size);
        abort();
    }
    mprotect(base, P.guard, PROT_NONE);
    P.lo[P.count] = base + P.guard;
    return P.count++;
}
static inline void stack_release(int s) { g_stacks.free_list[g_stacks.nfree++] = s; }

// ----------------------------------------------------------------------------- context switch
static void fiber_main(void*);

#ifdef C2T_ASM_FIBERS
static inline void ctx_make(Ctx* c, int stack) {
    uintptr_t top = ((uintptr_t)(g_stacks.lo[stack] + g_stacks.size)) & ~(uintptr_t)15;
    void** sp = (void**)(top - 72);                  // sp % 16 == 8: aligned call in c2t_ctx_entry
    sp[0] = nullptr;                                 // r15
    sp[1] = nullptr;                                 // r14
    sp[2] = nullptr;                                 // r13: argument
    sp[3] = (void*)&fiber_main;                      // r12: function
    sp[4] = nullptr;                                 // rbx
    sp[5] = nullptr;                                 // rbp
    sp[6] = (void*)&c2t_ctx_entry;                   // return address
    c->sp = (void*)sp;
}
static inline void ctx_switch(Ctx* from, Ctx* to) { c2t_ctx_switch(&from->sp, to->sp); }
#else
static void fiber_trampoline() { fiber_main(nullptr); }
static inline void ctx_make(Ctx* c, int stack) {
    getcontext(&c->uc);
    c->uc.uc_stack.ss_sp = g_stacks.lo[stack];
    c->uc.uc_stack.ss_size = g_stacks.size;
    c->uc.uc_link = nullptr;
    makecontext(&c->uc, (void (*)())fiber_trampoline, 0);
}
static inline void ctx_switch(Ctx* from, Ctx* to) { swapcontext(&from->uc, &to->uc); }
#endif

// ----------------------------------------------------------------------------- ready queue
static inline void push_ready(int t) {
    Sched& S = g;
    int pos = S.rhead + S.rcount;
    if (pos >= S.n) pos -= S.n;
    S.ready[pos] = t;
    S.rcount++;
    S.th[t].state = TS_READY;
}

// Give the CPU back to the scheduler; returns when the scheduler resumes this thread.
static inline void suspend() {
    Sched& S = g;
    __asm__ __volatile__("" ::: "memory");
    ctx_switch(&S.th[S.cur].ctx, &S.sched_ctx);
    __asm__ __volatile__("" ::: "memory");
}

// ----------------------------------------------------------------------------- block barrier
static inline void release_bar() {
    Sched& S = g;
    S.bar_result = S.bar_count;
    S.bar_total = S.bar_arrived;
    S.bar_count = 0;
    S.bar_arrived = 0;
    if (S.mode == SCHED_RANDOM) shuffle(S.order, S.n);
    for (int i = 0; i < S.n; ++i) {
        int t = S.order[i];
        if (S.th[t].state == TS_WAIT_BAR) push_ready(t);
    }
}

static __attribute__((noinline)) int block_barrier(int pred) {
    Sched& S = g;
    S.bar_count += pred != 0;
    S.bar_arrived++;
    S.th[S.cur].state = TS_WAIT_BAR;
    if (S.bar_arrived == S.live) release_bar();
    suspend();
    return S.bar_result;
}

// ----------------------------------------------------------------------------- warp operations
static inline bool warp_complete(const WarpState& W) {
    return ((W.need & W.exists & ~W.exited) & ~W.arrived) == 0;
}

static inline void release_warp(int w) {
    Sched& S = g;
    WarpState& W = S.warps[w];
    unsigned lanes = W.arrived;
    WarpSlot* sl = S.slots + w * 32;
    for (unsigned m = lanes; m; m &= m - 1) {
        int L = __builtin_ctz(m);
        WarpSlot& s = sl[L];
        unsigned part = lanes & s.mask;
        switch (s.op) {
        case WOP_SYNC: break;
        case WOP_SHFL: {
            int src = s.src;
            const WarpSlot& from = (src >= 0 && src < 32 && ((lanes >> src) & 1u)) ? sl[src] : s;
            std::memcpy(s.res, from.val, (size_t)s.size);
            break;
        }
        case WOP_BALLOT: case WOP_ANY: case WOP_ALL: {
            unsigned b = 0;
            for (unsigned q = part; q; q &= q - 1) {
                int j = __builtin_ctz(q);
                if (sl[j].pred) b |= 1u << j;
            }
            unsigned r = s.op == WOP_BALLOT ? b : (s.op == WOP_ANY ? (b != 0) : (b == part));
            std::memcpy(s.res, &r, 4);
            break;
        }
        case WOP_MATCH_ANY: case WOP_MATCH_ALL: {
            unsigned b = 0;
            for (unsigned q = part; q; q &= q - 1) {
                int j = __builtin_ctz(q);
                if (sl[j].size == s.size && std::memcmp(sl[j].val, s.val, (size_t)s.size) == 0) b |= 1u << j;
            }
            unsigned r[2] = {b, 1u};
            if (s.op == WOP_MATCH_ALL) { bool all = b == part; r[0] = all ? part : 0u; r[1] = all; }
            std::memcpy(s.res, r, 8);
            break;
        }
        default: {   // integer reductions over the participating lanes
            long long acc = 0; unsigned long long uacc = 0; bool first = true;
            for (unsigned q = part; q; q &= q - 1) {
                int j = __builtin_ctz(q);
                unsigned u; std::memcpy(&u, sl[j].val, 4);
                int v = (int)u;
                switch (s.op) {
                case WOP_RED_ADD: uacc += u; break;
                case WOP_RED_MIN: acc = first ? v : (v < acc ? v : acc); break;
                case WOP_RED_MAX: acc = first ? v : (v > acc ? v : acc); break;
                case WOP_RED_UMIN: uacc = first ? u : (u < uacc ? u : uacc); break;
                case WOP_RED_UMAX: uacc = first ? u : (u > uacc ? u : uacc); break;
                case WOP_RED_AND: uacc = first ? u : (uacc & u); break;
                case WOP_RED_OR: uacc |= u; break;
                case WOP_RED_XOR: uacc ^= u; break;
                }
                first = false;
            }
            unsigned r = (s.op == WOP_RED_MIN || s.op == WOP_RED_MAX) ? (unsigned)(int)acc : (unsigned)uacc;
            std::memcpy(s.res, &r, 4);
            break;
        }
        }
    }
    W.arrived = 0;
    W.need = 0;
    int base = w * 32;
    if (S.mode == SCHED_FORWARD) {
        for (unsigned m = lanes; m; m &= m - 1) push_ready(base + __builtin_ctz(m));
    } else if (S.mode == SCHED_REVERSE) {
        for (unsigned m = lanes; m; m &= ~(1u << (31 - __builtin_clz(m)))) push_ready(base + 31 - __builtin_clz(m));
    } else {
        int ids[32], k = 0;
        for (unsigned m = lanes; m; m &= m - 1) ids[k++] = base + __builtin_ctz(m);
        shuffle(ids, k);
        for (int i = 0; i < k; ++i) push_ready(ids[i]);
    }
}

// Arrive at a warp operation with `in` (in_size bytes), wait for the lanes of `mask`, and
// receive out_size bytes of result.
static __attribute__((noinline)) void warp_op(int op, unsigned mask, const void* in, int in_size,
                                               int src, int pred, void* out, int out_size) {
    Sched& S = g;
    int t = S.cur;
    int w = t >> 5;
    unsigned bit = 1u << (t & 31);
    WarpSlot& s = S.slots[t];
    s.op = op; s.mask = mask | bit; s.src = src; s.pred = pred; s.size = in_size;
    if (in_size) std::memcpy(s.val, in, (size_t)in_size);
    WarpState& W = S.warps[w];
    W.arrived |= bit;
    W.need |= mask | bit;
    S.th[t].state = TS_WAIT_WARP;
    if (warp_complete(W)) release_warp(w);
    suspend();
    if (out_size) std::memcpy(out, s.res, (size_t)out_size);
}

static inline int lane_id() { return g.cur & 31; }

// ----------------------------------------------------------------------------- thread exit
static __attribute__((noinline, noreturn)) void thread_exit() {
    Sched& S = g;
    int t = S.cur;
    S.th[t].state = TS_DONE;
    S.live--;
    stack_release(S.th[t].stack);
    WarpState& W = S.warps[t >> 5];
    W.exited |= 1u << (t & 31);
    if (W.arrived && warp_complete(W)) release_warp(t >> 5);
    if (S.bar_arrived && S.bar_arrived == S.live) release_bar();
    Ctx dead;
    ctx_switch(&dead, &S.sched_ctx);
    __builtin_trap();
}

static void fiber_main(void*) {
    g.invoke(g.invoke_ctx);
    thread_exit();
}

// ----------------------------------------------------------------------------- blocks and grids
static void describe_deadlock() {
    Sched& S = g;
    int nbar = 0, nwarp = 0, first_bar = -1, first_warp = -1;
    for (int t = 0; t < S.n; ++t) {
        if (S.th[t].state == TS_WAIT_BAR) { if (first_bar < 0) first_bar = t; nbar++; }
        if (S.th[t].state == TS_WAIT_WARP) { if (first_warp < 0) first_warp = t; nwarp++; }
    }
    int exited = S.n - S.live;
    char ex[256] = "";
    if (first_bar >= 0) {
        uint3 i = S.tidx[first_bar];
        snprintf(ex, sizeof ex, "; e.g. thread (%u,%u,%u) waits at __syncthreads()", i.x, i.y, i.z);
    }
    char ex2[256] = "";
    if (first_warp >= 0) {
        uint3 i = S.tidx[first_warp];
        snprintf(ex2, sizeof ex2, "; e.g. thread (%u,%u,%u) waits at a warp operation with mask 0x%08x",
                 i.x, i.y, i.z, S.slots[first_warp].mask);
    }
    set_msg("deadlock in block (%u,%u,%u): %d thread(s) wait at __syncthreads(), %d at a "
            "warp-synchronous operation (__shfl*/__syncwarp/vote/tile sync), %d exited%s%s; no "
            "thread can proceed (a barrier or warp operation under a divergent branch?)",
            blockIdx.x, blockIdx.y, blockIdx.z, nbar, nwarp, exited, ex, ex2);
}

static int run_block() {
    Sched& S = g;
    for (;;) {
        int t;
        if (S.rcount) {
            t = S.ready[S.rhead];
            if (++S.rhead == S.n) S.rhead = 0;
            S.rcount--;
        } else if (S.next_start < S.n) {
            t = S.order[S.next_start++];
            Thr& th = S.th[t];
            th.stack = stack_acquire();
            ctx_make(&th.ctx, th.stack);
        } else {
            break;
        }
        S.cur = t;
        threadIdx = S.tidx[t];
        S.th[t].state = TS_RUNNING;
        ctx_switch(&S.sched_ctx, &S.th[t].ctx);
    }
    if (S.live) {
        describe_deadlock();
        return LAUNCH_DEADLOCK;
    }
    return LAUNCH_OK;
}

static inline void ensure_capacity(int n) {
    Sched& S = g;
    if (n <= S.cap) return;
    int nw = (n + 31) / 32;
    S.th = (Thr*)realloc(S.th, sizeof(Thr) * n);
    S.slots = (WarpSlot*)aligned_alloc(16, sizeof(WarpSlot) * nw * 32);
    S.warps = (WarpState*)realloc(S.warps, sizeof(WarpState) * nw);
    S.tidx = (uint3*)realloc(S.tidx, sizeof(uint3) * n);
    S.order = (int*)realloc(S.order, sizeof(int) * n);
    S.ready = (int*)realloc(S.ready, sizeof(int) * n);
    S.cap = n;
}

// Guarded region for dynamic shared memory: its end touches a PROT_NONE page.
struct DynSmem { char* map = nullptr; size_t maplen = 0; char* ptr = nullptr; size_t bytes = 0; char* guard = nullptr; };
inline DynSmem g_dsm;

static inline void dyn_smem_prepare(size_t bytes) {
    DynSmem& D = g_dsm;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t placed = (bytes + 15) / 16 * 16;
    if (D.map && D.bytes == bytes) return;
    if (D.map) munmap(D.map, D.maplen);
    size_t data_pages = (placed + page - 1) / page;
    D.maplen = (data_pages + 1) * page;
    D.map = (char*)mmap(nullptr, D.maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (D.map == (char*)MAP_FAILED) { fprintf(stderr, "cuda2tile: cannot map shared memory\n"); abort(); }
    D.guard = D.map + data_pages * page;
    mprotect(D.guard, page, PROT_NONE);
    D.ptr = D.guard - placed;
    D.bytes = bytes;
}

static int run_grid(dim3 grid, dim3 block, size_t shmem, void (*invoke)(void*), void* ctx) {
    Sched& S = g;
    unsigned long long nt = (unsigned long long)block.x * block.y * block.z;
    if (nt == 0 || nt > 1024 || block.x > 1024 || block.y > 1024 || block.z > 64) {
        set_msg("invalid block dimensions (%u,%u,%u): CUDA allows 1 to 1024 threads, z at most 64",
                block.x, block.y, block.z);
        return LAUNCH_BAD_CONFIG;
    }
    if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 || grid.z > 65535) {
        set_msg("invalid grid dimensions (%u,%u,%u)", grid.x, grid.y, grid.z);
        return LAUNCH_BAD_CONFIG;
    }
    if (shmem > (size_t)64 << 20) {
        set_msg("dynamic shared memory of %zu bytes is more than any GPU has", shmem);
        return LAUNCH_BAD_CONFIG;
    }
    int n = (int)nt;
    ensure_capacity(n);
    S.n = n;
    S.nwarps = (n + 31) / 32;
    for (int t = 0; t < n; ++t) {
        unsigned x = (unsigned)t % block.x, yz = (unsigned)t / block.x;
        S.tidx[t] = uint3{x, yz % block.y, yz / block.y};
    }
    for (int w = 0; w < S.nwarps; ++w) {
        int lanes = n - w * 32 < 32 ? n - w * 32 : 32;
        S.warps[w].exists = lanes == 32 ? 0xFFFFFFFFu : ((1u << lanes) - 1u);
    }
    dyn_smem_prepare(shmem);
    c2t_dyn_smem = g_dsm.ptr;
    blockDim = block;
    gridDim = grid;
    S.invoke = invoke;
    S.invoke_ctx = ctx;

    unsigned long long G = (unsigned long long)grid.x * grid.y * grid.z;
    unsigned* border = nullptr;
    int mode = S.mode;
    if (mode == SCHED_RANDOM && G > 1 && G <= (1ull << 24)) {
        border = (unsigned*)malloc(sizeof(unsigned) * G);
        for (unsigned long long i = 0; i < G; ++i) border[i] = (unsigned)i;
        for (unsigned long long i = G - 1; i > 0; --i) {
            unsigned long long j = rnd() % (i + 1);
            unsigned tmp = border[i]; border[i] = border[j]; border[j] = tmp;
        }
    }
    char* sh_lo = __start_c2t_shared;
    size_t sh_len = (sh_lo && __stop_c2t_shared > sh_lo) ? (size_t)(__stop_c2t_shared - sh_lo) : 0;
    for (int t = 0; t < n; ++t) S.order[t] = mode == SCHED_REVERSE ? n - 1 - t : t;

    int rc = LAUNCH_OK;
    S.in_kernel = 1;
    for (unsigned long long i = 0; i < G; ++i) {
        // random order for grids of up to 2^24 blocks, descending order for larger random grids
        unsigned long long b = border ? border[i] : (mode == SCHED_FORWARD ? i : G - 1 - i);
        blockIdx.x = (unsigned)(b % grid.x);
        blockIdx.y = (unsigned)((b / grid.x) % grid.y);
        blockIdx.z = (unsigned)(b / ((unsigned long long)grid.x * grid.y));
        if (S.poison_shared) {
            // the static section holds the __shared__ variables of every kernel of the program:
            // when it is large, poison it before the first block only
            if (sh_len && (i == 0 || sh_len <= 65536)) std::memset(sh_lo, 0xFF, sh_len);
            if (shmem) std::memset(g_dsm.ptr, 0xFF, shmem);
        }
        for (int t = 0; t < n; ++t) S.th[t].state = TS_UNSTARTED;
        for (int w = 0; w < S.nwarps; ++w) { S.warps[w].arrived = 0; S.warps[w].need = 0; S.warps[w].exited = 0; }
        if (mode == SCHED_RANDOM) shuffle(S.order, n);
        S.rhead = 0; S.rcount = 0; S.next_start = 0; S.live = n;
        S.bar_arrived = 0; S.bar_count = 0; S.bar_result = 0; S.bar_total = 0;
        rc = run_block();
        if (rc != LAUNCH_OK) break;
    }
    S.in_kernel = 0;
    free(border);
    return rc;
}

}  // namespace c2t

// ----------------------------------------------------------------------------- barriers
static inline void __syncthreads() { c2t::block_barrier(0); }
static inline int __syncthreads_count(int p) { return c2t::block_barrier(p); }
static inline int __syncthreads_and(int p) { c2t::block_barrier(p); return c2t::g.bar_result == c2t::g.bar_total; }
static inline int __syncthreads_or(int p) { return c2t::block_barrier(p) != 0; }
static inline void __syncwarp(unsigned mask = 0xFFFFFFFFu) {
    c2t::warp_op(c2t::WOP_SYNC, mask, nullptr, 0, 0, 0, nullptr, 0);
}
// Memory fences and __nanosleep are scheduling points: the thread lets the other threads of its
// block run first, so spin-wait loops on another thread of the block make progress.
namespace c2t {
static inline void yield_thread() {
    if (!g.in_kernel) { __asm__ __volatile__("" ::: "memory"); return; }
    push_ready(g.cur);
    suspend();
}
}  // namespace c2t
static inline void __threadfence() { c2t::yield_thread(); }
static inline void __threadfence_block() { c2t::yield_thread(); }
static inline void __threadfence_system() { c2t::yield_thread(); }
static inline void __nanosleep(unsigned) { c2t::yield_thread(); }

// ----------------------------------------------------------------------------- warp shuffles
namespace c2t {
template <class T>
static inline T warp_shfl(unsigned mask, const T& v, int src) {
    static_assert(sizeof(T) <= 32, "warp shuffles of types larger than 32 bytes are not supported");
    T r;
    warp_op(WOP_SHFL, mask, &v, (int)sizeof(T), src, 0, &r, (int)sizeof(T));
    return r;
}
}  // namespace c2t

template <class T>
static inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = 32) {
    int lane = c2t::lane_id();
    int base = lane & ~(width - 1);
    return c2t::warp_shfl(mask, var, base + (srcLane & (width - 1)));
}
template <class T>
static inline T __shfl_up_sync(unsigned mask, T var, unsigned int delta, int width = 32) {
    int lane = c2t::lane_id();
    int rel = lane & (width - 1);
    return c2t::warp_shfl(mask, var, rel >= (int)delta ? lane - (int)delta : lane);
}
template <class T>
static inline T __shfl_down_sync(unsigned mask, T var, unsigned int delta, int width = 32) {
    int lane = c2t::lane_id();
    int rel = lane & (width - 1);
    return c2t::warp_shfl(mask, var, rel + (int)delta < width ? lane + (int)delta : lane);
}
template <class T>
static inline T __shfl_xor_sync(unsigned mask, T var, int laneMask, int width = 32) {
    int lane = c2t::lane_id();
    int base = lane & ~(width - 1);
    int src = lane ^ laneMask;
    if (src >= base + width || src > 31 || src < 0) src = lane;
    return c2t::warp_shfl(mask, var, src);
}
// Pre-CUDA-9 forms: the whole warp.
template <class T> static inline T __shfl(T var, int srcLane, int width = 32) { return __shfl_sync(0xFFFFFFFFu, var, srcLane, width); }
template <class T> static inline T __shfl_up(T var, unsigned d, int width = 32) { return __shfl_up_sync(0xFFFFFFFFu, var, d, width); }
template <class T> static inline T __shfl_down(T var, unsigned d, int width = 32) { return __shfl_down_sync(0xFFFFFFFFu, var, d, width); }
template <class T> static inline T __shfl_xor(T var, int m, int width = 32) { return __shfl_xor_sync(0xFFFFFFFFu, var, m, width); }

// ----------------------------------------------------------------------------- votes and reductions
static inline unsigned __ballot_sync(unsigned mask, int pred) {
    unsigned r; c2t::warp_op(c2t::WOP_BALLOT, mask, nullptr, 0, 0, pred != 0, &r, 4); return r;
}
static inline int __any_sync(unsigned mask, int pred) {
    unsigned r; c2t::warp_op(c2t::WOP_ANY, mask, nullptr, 0, 0, pred != 0, &r, 4); return (int)r;
}
static inline int __all_sync(unsigned mask, int pred) {
    unsigned r; c2t::warp_op(c2t::WOP_ALL, mask, nullptr, 0, 0, pred != 0, &r, 4); return (int)r;
}
static inline int __uni_sync(unsigned mask, int pred) {
    unsigned b = __ballot_sync(mask, pred);
    return b == 0 || b == (mask & (c2t::g.warps[c2t::g.cur >> 5].exists & ~c2t::g.warps[c2t::g.cur >> 5].exited));
}
static inline unsigned __ballot(int pred) { return __ballot_sync(0xFFFFFFFFu, pred); }
static inline int __any(int pred) { return __any_sync(0xFFFFFFFFu, pred); }
static inline int __all(int pred) { return __all_sync(0xFFFFFFFFu, pred); }
// Without convergence tracking, the active mask is every lane of the warp that has not exited.
static inline unsigned __activemask() {
    const c2t::WarpState& W = c2t::g.warps[c2t::g.cur >> 5];
    return W.exists & ~W.exited;
}
static inline unsigned __lanemask_eq() { return 1u << c2t::lane_id(); }
static inline unsigned __lanemask_lt() { return (1u << c2t::lane_id()) - 1u; }
static inline unsigned __lanemask_le() { return (2u << c2t::lane_id()) - 1u; }
static inline unsigned __lanemask_gt() { return ~__lanemask_le(); }
static inline unsigned __lanemask_ge() { return ~__lanemask_lt(); }
template <class T>
static inline unsigned __match_any_sync(unsigned mask, T value) {
    unsigned r[2]; c2t::warp_op(c2t::WOP_MATCH_ANY, mask, &value, (int)sizeof(T), 0, 0, r, 8); return r[0];
}
template <class T>
static inline unsigned __match_all_sync(unsigned mask, T value, int* pred) {
    unsigned r[2]; c2t::warp_op(c2t::WOP_MATCH_ALL, mask, &value, (int)sizeof(T), 0, 0, r, 8);
    if (pred) *pred = (int)r[1];
    return r[0];
}
#define C2T_WRED(NAME, OP, T)                                                                      \
    static inline T NAME(unsigned mask, T v) {                                                     \
        T r; c2t::warp_op(OP, mask, &v, 4, 0, 0, &r, 4); return r; }
C2T_WRED(__reduce_add_sync, c2t::WOP_RED_ADD, unsigned)
C2T_WRED(__reduce_add_sync, c2t::WOP_RED_ADD, int)
C2T_WRED(__reduce_min_sync, c2t::WOP_RED_UMIN, unsigned)
C2T_WRED(__reduce_min_sync, c2t::WOP_RED_MIN, int)
C2T_WRED(__reduce_max_sync, c2t::WOP_RED_UMAX, unsigned)
C2T_WRED(__reduce_max_sync, c2t::WOP_RED_MAX, int)
C2T_WRED(__reduce_and_sync, c2t::WOP_RED_AND, unsigned)
C2T_WRED(__reduce_or_sync, c2t::WOP_RED_OR, unsigned)
C2T_WRED(__reduce_xor_sync, c2t::WOP_RED_XOR, unsigned)
#undef C2T_WRED
