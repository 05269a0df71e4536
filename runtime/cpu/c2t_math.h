// c2t_math.h - the CUDA math API and integer/float intrinsics for the CPU executor.
// Part of cuda_cpu.h; do not include on its own.
//
// One C body per function. The CUDA functions that a compat row (migrate/compat/) implements
// with an extern helper -- erfcinvf, rhypot, sinpif, normcdf, __popc, __fadd_rz, __saturatef...
// -- are defined in c2t_compat_math.h, GENERATED from that helper's C body, the same text
// TileLang's c target runs for the migrated kernel. Edit the body in migrate/compat/externs.py
// and run `python -m migrate.compat.generate`; never define those names here
// (tests/compat/test_cpu_executor.py fails when a name has a second definition). This file holds
// the rest: overload sets and templates (min/max, __dp4a, the memory hints, the conversion
// families), functions the compat table writes as TileLang operators instead of a C body
// (__fadd_rn, __float2int_rn, __mulhi...), and names without a compat row. Two groups of
// helpers keep a hand-written executor definition, each with its reason in the helper's
// executor_note: the half ones (__float2half_rz, hrcp: c2t_types.h defines them once for
// __half and __nv_bfloat16, TileLang's c body is written for its own half type) and the atomics
// (c2t_device.h: overloads on every pointer type; the same read-modify-write).
//
// Precision table. CUDA's fast intrinsics trade accuracy for speed on the GPU; here every
// entry below computes at FULL precision (the correctly rounded or libm result), so a kernel
// run on the CPU is at least as accurate as on the GPU:
//
//   intrinsic                     | computed here as                      | on the GPU
//   ------------------------------+---------------------------------------+------------------------
//   __expf, __exp10f              | expf, exp10f (libm, full precision)   | ex2.approx based, 2+ ulp
//   __logf, __log2f, __log10f     | logf, log2f, log10f                   | lg2.approx based
//   __sinf, __cosf, __tanf,       | sinf, cosf, tanf, sincosf             | sin/cos.approx
//   __sincosf                     |                                       |
//   __powf                        | powf                                  | ex2/lg2.approx
//   __fdividef(a, b)              | a / b (IEEE division)                 | approx, 2 ulp
//   __frcp_rn, __fsqrt_rn,        | 1/x, sqrtf: correctly rounded (same)  | correctly rounded
//   __fdiv_rn, __fadd_rn, ...     |                                       |
//   __frsqrt_rn                   | 1/sqrt in double, rounded once        | correctly rounded
//   rsqrtf                        | 1.0f / sqrtf(x) (two roundings)       | rsqrt.approx
//   __fadd/__fsub/__fmul/__fdiv,  | the float operation under fesetround  | exact directed rounding
//   __fmaf _rz/_ru/_rd, __frcp_rz,| (the other directed forms: through    |
//   __fsqrt_rz, __int2float_rz    | double, then rounded in the mode)     |
//   __saturatef                   | clamp to [0, 1], NaN -> 0 (exact)     | same
//   erfinvf, erfcinvf,            | double precision (inverses: Newton    | 2-5 ulp
//   normcdfinvf, normcdff,        | steps to convergence; sinpi/cospi:    |
//   rcbrtf, rhypotf, sinpif, ...  | exact reduction), rounded to float    |
//   __float2half / bf16           | round to nearest even (exact)         | same
//
// The double versions (exp, log, ...) come from libm. Integer intrinsics are exact.
#pragma once

using std::isnan;
using std::isinf;
using std::isfinite;
using std::signbit;
using std::abs;

// ----------------------------------------------------------------------------- min / max
static inline int min(int a, int b) { return a < b ? a : b; }
static inline int max(int a, int b) { return a > b ? a : b; }
static inline unsigned int min(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int max(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long min(long a, long b) { return a < b ? a : b; }
static inline long max(long a, long b) { return a > b ? a : b; }
static inline unsigned long min(unsigned long a, unsigned long b) { return a < b ? a : b; }
static inline unsigned long max(unsigned long a, unsigned long b) { return a > b ? a : b; }
static inline long long min(long long a, long long b) { return a < b ? a : b; }
static inline long long max(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long min(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long max(unsigned long long a, unsigned long long b) { return a > b ? a : b; }
static inline float min(float a, float b) { return std::fmin(a, b); }
static inline float max(float a, float b) { return std::fmax(a, b); }
static inline double min(double a, double b) { return std::fmin(a, b); }
static inline double max(double a, double b) { return std::fmax(a, b); }
// Mixed argument types follow CUDA: signed/unsigned mixes are unsigned, any float makes it float.
template <class A, class B,
          class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value &&
                                          !std::is_same<A, B>::value>::type>
static inline typename std::common_type<A, B>::type min(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return ::min((C)a, (C)b);
}
template <class A, class B,
          class = typename std::enable_if<std::is_arithmetic<A>::value && std::is_arithmetic<B>::value &&
                                          !std::is_same<A, B>::value>::type>
static inline typename std::common_type<A, B>::type max(A a, B b) {
    typedef typename std::common_type<A, B>::type C;
    return ::max((C)a, (C)b);
}
static inline unsigned int umin(unsigned int a, unsigned int b) { return a < b ? a : b; }
static inline unsigned int umax(unsigned int a, unsigned int b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) { return a < b ? a : b; }
static inline long long llmax(long long a, long long b) { return a > b ? a : b; }
static inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return a < b ? a : b; }
static inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return a > b ? a : b; }

// ----------------------------------------------------------------------------- float math
#include "c2t_compat_math.h"   // generated: the compat rows' C bodies (see the top of this file)

static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float fdividef(float a, float b) { return __fdividef(a, b); }
// the out-parameter forms (their compat rows are UNSUPPORTED) over the generated sinpi/cospi
static inline void sincospif(float x, float* s, float* c) { *s = sinpif(x); *c = cospif(x); }
static inline void sincospi(double x, double* s, double* c) { *s = sinpi(x); *c = cospi(x); }
static inline float saturate(float x) { return __saturatef(x); }

// Fast intrinsics (full precision here, see the table above). Those whose names glibc may
// declare as aliases in <math.h> are macros naming our own functions (__exp10f and __powf are
// bound the same way in the generated header).
static inline float c2t_expf(float x) { return expf(x); }
static inline float c2t_logf(float x) { return logf(x); }
static inline float c2t_log2f(float x) { return log2f(x); }
static inline float c2t_log10f(float x) { return log10f(x); }
static inline float c2t_sinf(float x) { return sinf(x); }
static inline float c2t_cosf(float x) { return cosf(x); }
static inline float c2t_tanf(float x) { return tanf(x); }
static inline void c2t_sincosf(float x, float* s, float* c) { *s = sinf(x); *c = cosf(x); }
#define __expf c2t_expf
#define __logf c2t_logf
#define __log2f c2t_log2f
#define __log10f c2t_log10f
#define __sinf c2t_sinf
#define __cosf c2t_cosf
#define __tanf c2t_tanf
#define __sincosf c2t_sincosf
static inline double __fdivide(double a, double b) { return a / b; }

static inline float __fadd_rn(float a, float b) { volatile float r = a + b; return r; }
static inline float __fsub_rn(float a, float b) { volatile float r = a - b; return r; }
static inline float __fmul_rn(float a, float b) { volatile float r = a * b; return r; }
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __frcp_rn(float a) { return 1.0f / a; }
static inline float __fsqrt_rn(float a) { return sqrtf(a); }
static inline double __dadd_rn(double a, double b) { volatile double r = a + b; return r; }
static inline double __dsub_rn(double a, double b) { volatile double r = a - b; return r; }
static inline double __dmul_rn(double a, double b) { volatile double r = a * b; return r; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __drcp_rn(double a) { return 1.0 / a; }
static inline double __dsqrt_rn(double a) { return sqrt(a); }

namespace c2t {
// Round a double to float in a directed mode (0 toward zero, 1 down, 2 up).
static inline float round_dir(double d, int mode) {
    float f = (float)d;
    if (d != d || (double)f == d || std::isinf(f)) return f;
    if (mode == 0) { if (std::fabs((double)f) > std::fabs(d)) f = nextafterf(f, 0.0f); }
    else if (mode == 1) { if ((double)f > d) f = nextafterf(f, -INFINITY); }
    else { if ((double)f < d) f = nextafterf(f, INFINITY); }
    return f;
}
}  // namespace c2t
// The directed forms with a compat row (__fadd/__fsub/__fmul/__fdiv/__fmaf _rz/_ru/_rd,
// __frcp_rz, __fsqrt_rz) are in the generated header; these have none.
#define C2T_DIR_OPS(SFX, MODE)                                                                   \
    static inline float __double2float_##SFX(double d) { return c2t::round_dir(d, MODE); }
C2T_DIR_OPS(rz, 0)
C2T_DIR_OPS(rd, 1)
C2T_DIR_OPS(ru, 2)
#undef C2T_DIR_OPS
#define C2T_DIR_OPS(SFX, MODE)                                                                   \
    static inline float __frcp_##SFX(float a) { return c2t::round_dir(1.0 / (double)a, MODE); }  \
    static inline float __fsqrt_##SFX(float a) { return c2t::round_dir(sqrt((double)a), MODE); }
C2T_DIR_OPS(rd, 1)
C2T_DIR_OPS(ru, 2)
#undef C2T_DIR_OPS
static inline float __double2float_rn(double d) { return (float)d; }

// ----------------------------------------------------------------------------- conversions
namespace c2t {
template <class I, class F>
static inline I sat_cvt(F v) {   // CUDA float->int conversions saturate and map NaN to 0
    if (v != v) return 0;
    if (v <= (F)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
    if (v >= (F)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
    return (I)v;
}
}  // namespace c2t
#define C2T_F2I(NAME, I, F)                                                                       \
    static inline I NAME##_rn(F v) { return c2t::sat_cvt<I, F>(std::nearbyint(v)); }              \
    static inline I NAME##_rz(F v) { return c2t::sat_cvt<I, F>(std::trunc(v)); }                  \
    static inline I NAME##_rd(F v) { return c2t::sat_cvt<I, F>(std::floor(v)); }                  \
    static inline I NAME##_ru(F v) { return c2t::sat_cvt<I, F>(std::ceil(v)); }
C2T_F2I(__float2int, int, float)
C2T_F2I(__float2uint, unsigned int, float)
C2T_F2I(__float2ll, long long, float)
C2T_F2I(__float2ull, unsigned long long, float)
C2T_F2I(__double2int, int, double)
C2T_F2I(__double2uint, unsigned int, double)
C2T_F2I(__double2ll, long long, double)
C2T_F2I(__double2ull, unsigned long long, double)
#undef C2T_F2I
#define C2T_I2F(NAME, I, F)                                                                       \
    static inline F NAME##_rn(I v) { return (F)v; }                                               \
    static inline F NAME##_rd(I v) { return c2t::round_dir((double)v, 1); }                       \
    static inline F NAME##_ru(I v) { return c2t::round_dir((double)v, 2); }
C2T_I2F(__int2float, int, float)   // __int2float_rz: generated header
C2T_I2F(__uint2float, unsigned int, float)
#undef C2T_I2F
static inline float __uint2float_rz(unsigned int v) { return c2t::round_dir((double)v, 0); }
static inline float __ll2float_rn(long long v) { return (float)v; }
static inline float __ull2float_rn(unsigned long long v) { return (float)v; }
static inline double __int2double_rn(int v) { return (double)v; }
static inline double __uint2double_rn(unsigned int v) { return (double)v; }
static inline double __ll2double_rn(long long v) { return (double)v; }
static inline double __ull2double_rn(unsigned long long v) { return (double)v; }

static inline int __float_as_int(float f) { int i; std::memcpy(&i, &f, 4); return i; }
static inline unsigned int __float_as_uint(float f) { unsigned int i; std::memcpy(&i, &f, 4); return i; }
static inline float __int_as_float(int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline float __uint_as_float(unsigned int i) { float f; std::memcpy(&f, &i, 4); return f; }
static inline long long __double_as_longlong(double d) { long long i; std::memcpy(&i, &d, 8); return i; }
static inline double __longlong_as_double(long long i) { double d; std::memcpy(&d, &i, 8); return d; }
static inline int __double2hiint(double d) { return (int)(__double_as_longlong(d) >> 32); }
static inline int __double2loint(double d) { return (int)(unsigned int)__double_as_longlong(d); }
static inline double __hiloint2double(int hi, int lo) {
    return __longlong_as_double((long long)(((unsigned long long)(unsigned int)hi << 32) | (unsigned int)lo));
}

// ----------------------------------------------------------------------------- integer intrinsics
// __popc, __clz, __ffs, __brev, __byte_perm, __funnelshift_l/r, __mul24, __umul24, __mul64hi,
// __sad and their 64-bit / unsigned forms are in the generated header.
static inline int __mulhi(int a, int b) { return (int)(((long long)a * (long long)b) >> 32); }
static inline unsigned int __umulhi(unsigned int a, unsigned int b) {
    return (unsigned int)(((unsigned long long)a * (unsigned long long)b) >> 32);
}
static inline int __hadd(int a, int b) { return (int)(((long long)a + b) >> 1); }
static inline int __rhadd(int a, int b) { return (int)(((long long)a + b + 1) >> 1); }
static inline unsigned int __uhadd(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a + b) >> 1); }
static inline unsigned int __urhadd(unsigned int a, unsigned int b) { return (unsigned int)(((unsigned long long)a + b + 1) >> 1); }
static inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)((v << (s > 32 ? 32 : s)) >> 32);
}
static inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int s) {
    unsigned long long v = ((unsigned long long)hi << 32) | lo; return (unsigned int)(v >> (s > 32 ? 32 : s));
}
static inline int __dp4a(int a, int b, int c) {
    int r = c;
    for (int i = 0; i < 4; ++i) r += (int)(signed char)(a >> (8 * i)) * (int)(signed char)(b >> (8 * i));
    return r;
}
static inline unsigned int __dp4a(unsigned int a, unsigned int b, unsigned int c) {
    unsigned int r = c;
    for (int i = 0; i < 4; ++i) r += ((a >> (8 * i)) & 0xFFu) * ((b >> (8 * i)) & 0xFFu);
    return r;
}
static inline int __dp4a(char4 a, char4 b, int c) {
    return c + a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w;
}

// ----------------------------------------------------------------------------- memory access hints
template <class T> static inline T __ldg(const T* p) { return *p; }
template <class T> static inline T __ldcg(const T* p) { return *p; }
template <class T> static inline T __ldca(const T* p) { return *p; }
template <class T> static inline T __ldcs(const T* p) { return *p; }
template <class T> static inline T __ldlu(const T* p) { return *p; }
template <class T> static inline T __ldcv(const T* p) { return *p; }
template <class T> static inline void __stcs(T* p, T v) { *p = v; }
template <class T> static inline void __stcg(T* p, T v) { *p = v; }
template <class T> static inline void __stwb(T* p, T v) { *p = v; }
template <class T> static inline void __stwt(T* p, T v) { *p = v; }

// ----------------------------------------------------------------------------- math_constants.h
#define CUDART_INF_F      __int_as_float(0x7f800000)
#define CUDART_NAN_F      __int_as_float(0x7fffffff)
#define CUDART_MIN_DENORM_F __int_as_float(0x00000001)
#define CUDART_MAX_NORMAL_F __int_as_float(0x7f7fffff)
#define CUDART_NEG_ZERO_F __int_as_float(0x80000000)
#define CUDART_ZERO_F     0.0f
#define CUDART_ONE_F      1.0f
#define CUDART_SQRT_HALF_F 0.707106781f
#define CUDART_SQRT_TWO_F 1.414213562f
#define CUDART_THIRD_F    0.333333333f
#define CUDART_PIO4_F     0.785398163f
#define CUDART_PIO2_F     1.570796327f
#define CUDART_3PIO4_F    2.356194490f
#define CUDART_2_OVER_PI_F 0.636619772f
#define CUDART_PI_F       3.141592654f
#define CUDART_L2E_F      1.442695041f
#define CUDART_L2T_F      3.321928094f
#define CUDART_LG2_F      0.301029996f
#define CUDART_LGE_F      0.434294482f
#define CUDART_LN2_F      0.693147181f
#define CUDART_LNT_F      2.302585093f
#define CUDART_LNPI_F     1.144729886f
#define CUDART_TWO_TO_M126_F 1.175494351e-38f
#define CUDART_INF        __longlong_as_double(0x7ff0000000000000ULL)
#define CUDART_NAN        __longlong_as_double(0xfff8000000000000ULL)
#define CUDART_NEG_ZERO   __longlong_as_double(0x8000000000000000ULL)
#define CUDART_ZERO       0.0
#define CUDART_ONE        1.0
#define CUDART_SQRT_TWO   1.4142135623730951e+0
#define CUDART_SQRT_HALF  7.0710678118654757e-1
#define CUDART_PI         3.1415926535897931e+0
#define CUDART_PIO2       1.5707963267948966e+0
#define CUDART_PIO4       7.8539816339744828e-1
#define CUDART_2_OVER_PI  6.3661977236758138e-1
#define CUDART_L2E        1.4426950408889634e+0
#define CUDART_LN2        6.9314718055994529e-1
#define CUDART_LNT        2.3025850929940459e+0
