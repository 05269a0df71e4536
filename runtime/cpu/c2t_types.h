// c2t_types.h - CUDA built-in vector types, dim3, __half and __nv_bfloat16 for the CPU executor.
// Part of cuda_cpu.h; do not include on its own.
#pragma once

// ----------------------------------------------------------------------------- vector types
// Members and sizes follow CUDA's vector_types.h, but alignment is capped at 8 bytes (float4,
// int4, double2... are 16-byte aligned in CUDA). Kernel buffers here are placed so that their
// last byte touches a guard page, so a buffer of 100003 floats starts only 4-byte aligned, and
// `reinterpret_cast<const float4*>(x)[i]` must not compile to aligned SSE loads. The cost: a
// struct with a float4 member after a 4- or 8-byte member is laid out more tightly than on the
// GPU (this matters only if such structs travel in kernel buffers).
#define C2T_VEC1(T, N, A)                                                                   \
    struct __attribute__((aligned(A))) N##1 { T x; };                                       \
    static inline N##1 make_##N##1(T x) { N##1 r; r.x = x; return r; }
#define C2T_VEC2(T, N, A)                                                                   \
    struct __attribute__((aligned(A))) N##2 { T x, y; };                                    \
    static inline N##2 make_##N##2(T x, T y) { N##2 r; r.x = x; r.y = y; return r; }
#define C2T_VEC3(T, N, A)                                                                   \
    struct __attribute__((aligned(A))) N##3 { T x, y, z; };                                 \
    static inline N##3 make_##N##3(T x, T y, T z) { N##3 r; r.x = x; r.y = y; r.z = z; return r; }
#define C2T_VEC4(T, N, A)                                                                   \
    struct __attribute__((aligned(A))) N##4 { T x, y, z, w; };                              \
    static inline N##4 make_##N##4(T x, T y, T z, T w) {                                    \
        N##4 r; r.x = x; r.y = y; r.z = z; r.w = w; return r; }

C2T_VEC1(signed char, char, 1)            C2T_VEC2(signed char, char, 2)
C2T_VEC3(signed char, char, 1)            C2T_VEC4(signed char, char, 4)
C2T_VEC1(unsigned char, uchar, 1)         C2T_VEC2(unsigned char, uchar, 2)
C2T_VEC3(unsigned char, uchar, 1)         C2T_VEC4(unsigned char, uchar, 4)
C2T_VEC1(short, short, 2)                 C2T_VEC2(short, short, 4)
C2T_VEC3(short, short, 2)                 C2T_VEC4(short, short, 8)
C2T_VEC1(unsigned short, ushort, 2)       C2T_VEC2(unsigned short, ushort, 4)
C2T_VEC3(unsigned short, ushort, 2)       C2T_VEC4(unsigned short, ushort, 8)
C2T_VEC1(int, int, 4)                     C2T_VEC2(int, int, 8)
C2T_VEC3(int, int, 4)                     C2T_VEC4(int, int, 8)
C2T_VEC1(unsigned int, uint, 4)           C2T_VEC2(unsigned int, uint, 8)
C2T_VEC3(unsigned int, uint, 4)           C2T_VEC4(unsigned int, uint, 8)
C2T_VEC1(long, long, 8)                   C2T_VEC2(long, long, 8)
C2T_VEC3(long, long, 8)                   C2T_VEC4(long, long, 8)
C2T_VEC1(unsigned long, ulong, 8)         C2T_VEC2(unsigned long, ulong, 8)
C2T_VEC3(unsigned long, ulong, 8)         C2T_VEC4(unsigned long, ulong, 8)
C2T_VEC1(long long, longlong, 8)          C2T_VEC2(long long, longlong, 8)
C2T_VEC3(long long, longlong, 8)          C2T_VEC4(long long, longlong, 8)
C2T_VEC1(unsigned long long, ulonglong, 8) C2T_VEC2(unsigned long long, ulonglong, 8)
C2T_VEC3(unsigned long long, ulonglong, 8) C2T_VEC4(unsigned long long, ulonglong, 8)
C2T_VEC1(float, float, 4)                 C2T_VEC2(float, float, 8)
C2T_VEC3(float, float, 4)                 C2T_VEC4(float, float, 8)
C2T_VEC1(double, double, 8)               C2T_VEC2(double, double, 8)
C2T_VEC3(double, double, 8)               C2T_VEC4(double, double, 8)

#undef C2T_VEC1
#undef C2T_VEC2
#undef C2T_VEC3
#undef C2T_VEC4

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
    constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
    constexpr operator uint3() const { return uint3{x, y, z}; }
};
typedef struct dim3 dim3;

// ----------------------------------------------------------------------------- half / bfloat16
namespace c2t {

static inline unsigned int f2u(float f) { unsigned int u; std::memcpy(&u, &f, 4); return u; }
static inline float u2f(unsigned int u) { float f; std::memcpy(&f, &u, 4); return f; }

// float -> IEEE binary16, round to nearest even, with subnormals, infinities and NaN payloads.
static inline unsigned short float_to_half_bits(float f) {
    unsigned int x = f2u(f);
    unsigned int sign = (x >> 16) & 0x8000u;
    unsigned int ax = x & 0x7FFFFFFFu;
    if (ax >= 0x7F800000u) {                       // inf or NaN
        if (ax > 0x7F800000u) return (unsigned short)(sign | 0x7E00u | ((ax >> 13) & 0x3FFu));
        return (unsigned short)(sign | 0x7C00u);
    }
    if (ax >= 0x477FF000u) return (unsigned short)(sign | 0x7C00u);   // >= 65520 rounds to inf
    if (ax < 0x38800000u) {                        // below 2^-14: subnormal half or zero
        unsigned int e = ax >> 23;
        if (e == 0) return (unsigned short)sign;   // float subnormal: far below half's range
        unsigned int m = (ax & 0x7FFFFFu) | 0x800000u;
        unsigned int shift = 126u - e;             // value / 2^-24 == m >> shift
        if (shift > 24) return (unsigned short)sign;
        unsigned int q = m >> shift;
        unsigned int rem = m & ((1u << shift) - 1u);
        unsigned int halfway = 1u << (shift - 1);
        if (rem > halfway || (rem == halfway && (q & 1u))) q++;
        return (unsigned short)(sign | q);
    }
    unsigned int r = ax - 0x38000000u;             // rebias exponent 127 -> 15
    r += 0xFFFu + ((r >> 13) & 1u);
    return (unsigned short)(sign | (r >> 13));
}

static inline float half_bits_to_float(unsigned short h) {
    unsigned int sign = ((unsigned int)h & 0x8000u) << 16;
    unsigned int e = (h >> 10) & 0x1Fu;
    unsigned int m = h & 0x3FFu;
    unsigned int bits;
    if (e == 0) {
        if (m == 0) return u2f(sign);
        e = 113;
        while (!(m & 0x400u)) { m <<= 1; e--; }
        m &= 0x3FFu;
        bits = sign | (e << 23) | (m << 13);
    } else if (e == 31) {
        bits = sign | 0x7F800000u | (m << 13);
    } else {
        bits = sign | ((e + 112u) << 23) | (m << 13);
    }
    return u2f(bits);
}

// float -> bfloat16, round to nearest even; NaN stays NaN (quieted).
static inline unsigned short float_to_bf16_bits(float f) {
    unsigned int x = f2u(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (unsigned short)((x >> 16) | 0x40u);
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (unsigned short)(x >> 16);
}
static inline float bf16_bits_to_float(unsigned short b) { return u2f((unsigned int)b << 16); }

// Directed roundings of a float to half (rz, rd, ru), done on the bits.
static inline unsigned short float_to_half_bits_dir(float f, int mode /*0 rz, 1 rd, 2 ru*/) {
    unsigned short h = float_to_half_bits(f);
    if (f != f) return h;
    float back = half_bits_to_float(h);
    if (back == f) return h;
    bool away = std::fabs(back) > std::fabs(f);
    bool want_toward_zero = (mode == 0) || (mode == 1 && f > 0) || (mode == 2 && f < 0);
    if (want_toward_zero && away) return (unsigned short)(h - 1);   // magnitude one ulp down
    if (!want_toward_zero && !away) return (unsigned short)(h + 1); // magnitude one ulp up
    return h;
}

}  // namespace c2t

struct __half_raw { unsigned short x; };
struct __nv_bfloat16_raw { unsigned short x; };
struct __nv_bfloat16;

struct __half {
    unsigned short __x;
    __half() = default;
    constexpr __half(const __half_raw& r) : __x(r.x) {}
    __half(float f) : __x(c2t::float_to_half_bits(f)) {}
    __half(double f) : __x(c2t::float_to_half_bits((float)f)) {}
    __half(int v) : __x(c2t::float_to_half_bits((float)v)) {}
    __half(unsigned int v) : __x(c2t::float_to_half_bits((float)v)) {}
    __half(short v) : __x(c2t::float_to_half_bits((float)v)) {}
    __half(unsigned short v) : __x(c2t::float_to_half_bits((float)v)) {}
    __half(long v) : __x(c2t::float_to_half_bits((float)v)) {}
    __half(unsigned long v) : __x(c2t::float_to_half_bits((float)v)) {}
    __half(long long v) : __x(c2t::float_to_half_bits((float)v)) {}
    __half(unsigned long long v) : __x(c2t::float_to_half_bits((float)v)) {}
    // as CUDA's (cuda_bf16.hpp): from bfloat16 only explicitly, through float, to nearest even
    explicit __half(const __nv_bfloat16 f);
    operator float() const { return c2t::half_bits_to_float(__x); }
    operator __half_raw() const { return __half_raw{__x}; }
    __half& operator=(const __half_raw& r) { __x = r.x; return *this; }
    __half& operator=(float f) { __x = c2t::float_to_half_bits(f); return *this; }
    __half& operator=(double f) { __x = c2t::float_to_half_bits((float)f); return *this; }
    // as CUDA's: from each integer type (h = 0 would otherwise be ambiguous)
    template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
    __half& operator=(I v) { return *this = (float)v; }
};

struct __nv_bfloat16 {
    unsigned short __x;
    __nv_bfloat16() = default;
    constexpr __nv_bfloat16(const __nv_bfloat16_raw& r) : __x(r.x) {}
    __nv_bfloat16(float f) : __x(c2t::float_to_bf16_bits(f)) {}
    __nv_bfloat16(double f) : __x(c2t::float_to_bf16_bits((float)f)) {}
    __nv_bfloat16(int v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(unsigned int v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(short v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(unsigned short v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(long v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(unsigned long v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(long long v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    __nv_bfloat16(unsigned long long v) : __x(c2t::float_to_bf16_bits((float)v)) {}
    explicit __nv_bfloat16(const __half f) : __x(c2t::float_to_bf16_bits((float)f)) {}
    operator float() const { return c2t::bf16_bits_to_float(__x); }
    operator __nv_bfloat16_raw() const { return __nv_bfloat16_raw{__x}; }
    __nv_bfloat16& operator=(const __nv_bfloat16_raw& r) { __x = r.x; return *this; }
    __nv_bfloat16& operator=(float f) { __x = c2t::float_to_bf16_bits(f); return *this; }
    __nv_bfloat16& operator=(double f) { __x = c2t::float_to_bf16_bits((float)f); return *this; }
    template <class I, class = typename std::enable_if<std::is_integral<I>::value>::type>
    __nv_bfloat16& operator=(I v) { return *this = (float)v; }
};

inline __half::__half(const __nv_bfloat16 f) : __x(c2t::float_to_half_bits((float)f)) {}

struct __attribute__((aligned(4))) __half2 {
    __half x, y;
    __half2() = default;
    constexpr __half2(const __half& a, const __half& b) : x(a), y(b) {}
};
struct __attribute__((aligned(4))) __nv_bfloat162 {
    __nv_bfloat16 x, y;
    __nv_bfloat162() = default;
    constexpr __nv_bfloat162(const __nv_bfloat16& a, const __nv_bfloat16& b) : x(a), y(b) {}
};
typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;
typedef __half_raw __half2_raw_unused;

// Arithmetic and comparisons of the 16-bit types go through float: one rounding of an exact
// float result to half/bfloat16 is correctly rounded for +, -, *, / (float has >= 2p+2 bits).
#define C2T_H16_OPS(H)                                                                           \
    static inline H operator+(const H& a, const H& b) { return H((float)a + (float)b); }          \
    static inline H operator-(const H& a, const H& b) { return H((float)a - (float)b); }          \
    static inline H operator*(const H& a, const H& b) { return H((float)a * (float)b); }          \
    static inline H operator/(const H& a, const H& b) { return H((float)a / (float)b); }          \
    static inline H operator-(const H& a) { H r = a; r.__x ^= 0x8000u; return r; }                 \
    static inline H operator+(const H& a) { return a; }                                           \
    static inline H& operator+=(H& a, const H& b) { a = a + b; return a; }                        \
    static inline H& operator-=(H& a, const H& b) { a = a - b; return a; }                        \
    static inline H& operator*=(H& a, const H& b) { a = a * b; return a; }                        \
    static inline H& operator/=(H& a, const H& b) { a = a / b; return a; }                        \
    static inline H& operator++(H& a) { a = H((float)a + 1.0f); return a; }                        \
    static inline H& operator--(H& a) { a = H((float)a - 1.0f); return a; }                        \
    static inline H operator++(H& a, int) { H o = a; ++a; return o; }                             \
    static inline H operator--(H& a, int) { H o = a; --a; return o; }                             \
    static inline bool operator==(const H& a, const H& b) { return (float)a == (float)b; }       \
    static inline bool operator!=(const H& a, const H& b) { return (float)a != (float)b; }       \
    static inline bool operator<(const H& a, const H& b) { return (float)a < (float)b; }         \
    static inline bool operator<=(const H& a, const H& b) { return (float)a <= (float)b; }       \
    static inline bool operator>(const H& a, const H& b) { return (float)a > (float)b; }         \
    static inline bool operator>=(const H& a, const H& b) { return (float)a >= (float)b; }

C2T_H16_OPS(__half)
C2T_H16_OPS(__nv_bfloat16)
#undef C2T_H16_OPS

#define C2T_H16x2_OPS(H2)                                                                         \
    static inline H2 operator+(const H2& a, const H2& b) { return H2(a.x + b.x, a.y + b.y); }      \
    static inline H2 operator-(const H2& a, const H2& b) { return H2(a.x - b.x, a.y - b.y); }      \
    static inline H2 operator*(const H2& a, const H2& b) { return H2(a.x * b.x, a.y * b.y); }      \
    static inline H2 operator/(const H2& a, const H2& b) { return H2(a.x / b.x, a.y / b.y); }      \
    static inline H2 operator-(const H2& a) { return H2(-a.x, -a.y); }                            \
    static inline H2& operator+=(H2& a, const H2& b) { a = a + b; return a; }                     \
    static inline H2& operator-=(H2& a, const H2& b) { a = a - b; return a; }                     \
    static inline H2& operator*=(H2& a, const H2& b) { a = a * b; return a; }                     \
    static inline H2& operator/=(H2& a, const H2& b) { a = a / b; return a; }                     \
    static inline bool operator==(const H2& a, const H2& b) { return a.x == b.x && a.y == b.y; }  \
    static inline bool operator!=(const H2& a, const H2& b) { return !(a == b); }

C2T_H16x2_OPS(__half2)
C2T_H16x2_OPS(__nv_bfloat162)
#undef C2T_H16x2_OPS

// --- conversions
static inline float __half2float(__half h) { return (float)h; }
static inline __half __float2half(float f) { return __half(f); }
static inline __half __float2half_rn(float f) { return __half(f); }
static inline __half __float2half_rz(float f) { return __half_raw{c2t::float_to_half_bits_dir(f, 0)}; }
static inline __half __float2half_rd(float f) { return __half_raw{c2t::float_to_half_bits_dir(f, 1)}; }
static inline __half __float2half_ru(float f) { return __half_raw{c2t::float_to_half_bits_dir(f, 2)}; }
static inline __half __double2half(double d) { return __half((float)d); }
static inline __half2 __float2half2_rn(float f) { return __half2(__half(f), __half(f)); }
static inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
static inline __half2 __float22half2_rn(float2 v) { return __half2(__half(v.x), __half(v.y)); }
static inline float2 __half22float2(__half2 h) { return make_float2((float)h.x, (float)h.y); }
static inline float __low2float(__half2 h) { return (float)h.x; }
static inline float __high2float(__half2 h) { return (float)h.y; }
static inline __half __low2half(__half2 h) { return h.x; }
static inline __half __high2half(__half2 h) { return h.y; }
static inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
static inline __half2 __half2half2(__half a) { return __half2(a, a); }
static inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
static inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
static inline __half2 __lowhigh2highlow(__half2 a) { return __half2(a.y, a.x); }
static inline __half2 __low2half2(__half2 a) { return __half2(a.x, a.x); }
static inline __half2 __high2half2(__half2 a) { return __half2(a.y, a.y); }
static inline __half2 make_half2(__half a, __half b) { return __half2(a, b); }
static inline int __half2int_rn(__half h) { return (int)std::nearbyint((float)h); }
static inline int __half2int_rz(__half h) { return (int)(float)h; }
static inline int __half2int_rd(__half h) { return (int)std::floor((float)h); }
static inline int __half2int_ru(__half h) { return (int)std::ceil((float)h); }
static inline __half __int2half_rn(int i) { return __half((float)i); }
static inline __half __uint2half_rn(unsigned i) { return __half((float)i); }
static inline short __half_as_short(__half h) { return (short)h.__x; }
static inline unsigned short __half_as_ushort(__half h) { return h.__x; }
static inline __half __short_as_half(short s) { return __half_raw{(unsigned short)s}; }
static inline __half __ushort_as_half(unsigned short s) { return __half_raw{s}; }

static inline float __bfloat162float(__nv_bfloat16 h) { return (float)h; }
static inline float __nv_bfloat162float(__nv_bfloat16 h) { return (float)h; }
static inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rn(float f) { return __nv_bfloat16(f); }
static inline __nv_bfloat16 __float2bfloat16_rz(float f) {
    unsigned int x = c2t::f2u(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return __nv_bfloat16_raw{(unsigned short)((x >> 16) | 0x40u)};
    return __nv_bfloat16_raw{(unsigned short)(x >> 16)};
}
static inline __nv_bfloat16 __double2bfloat16(double d) { return __nv_bfloat16((float)d); }
static inline __nv_bfloat162 __float2bfloat162_rn(float f) { return __nv_bfloat162(__nv_bfloat16(f), __nv_bfloat16(f)); }
static inline __nv_bfloat162 __floats2bfloat162_rn(float a, float b) { return __nv_bfloat162(__nv_bfloat16(a), __nv_bfloat16(b)); }
static inline __nv_bfloat162 __float22bfloat162_rn(float2 v) { return __nv_bfloat162(__nv_bfloat16(v.x), __nv_bfloat16(v.y)); }
static inline float2 __bfloat1622float2(__nv_bfloat162 h) { return make_float2((float)h.x, (float)h.y); }
static inline float __low2float(__nv_bfloat162 h) { return (float)h.x; }
static inline float __high2float(__nv_bfloat162 h) { return (float)h.y; }
static inline __nv_bfloat16 __low2bfloat16(__nv_bfloat162 h) { return h.x; }
static inline __nv_bfloat16 __high2bfloat16(__nv_bfloat162 h) { return h.y; }
static inline __nv_bfloat162 __halves2bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline __nv_bfloat162 __bfloat162bfloat162(__nv_bfloat16 a) { return __nv_bfloat162(a, a); }
static inline __nv_bfloat162 make_bfloat162(__nv_bfloat16 a, __nv_bfloat16 b) { return __nv_bfloat162(a, b); }
static inline short __bfloat16_as_short(__nv_bfloat16 h) { return (short)h.__x; }
static inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 h) { return h.__x; }
static inline __nv_bfloat16 __short_as_bfloat16(short s) { return __nv_bfloat16_raw{(unsigned short)s}; }
static inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short s) { return __nv_bfloat16_raw{s}; }
static inline int __bfloat162int_rn(__nv_bfloat16 h) { return (int)std::nearbyint((float)h); }
static inline int __bfloat162int_rz(__nv_bfloat16 h) { return (int)(float)h; }
static inline __nv_bfloat16 __int2bfloat16_rn(int i) { return __nv_bfloat16((float)i); }

// --- arithmetic intrinsics, scalar and paired, for both 16-bit types
#define C2T_H16_FUNCS(H, H2, SFX)                                                                 \
    static inline H __hadd(H a, H b) { return a + b; }                                            \
    static inline H __hsub(H a, H b) { return a - b; }                                            \
    static inline H __hmul(H a, H b) { return a * b; }                                            \
    static inline H __hdiv(H a, H b) { return a / b; }                                            \
    static inline H __hadd_rn(H a, H b) { return a + b; }                                         \
    static inline H __hsub_rn(H a, H b) { return a - b; }                                         \
    static inline H __hmul_rn(H a, H b) { return a * b; }                                         \
    static inline H __hneg(H a) { return -a; }                                                    \
    static inline H __habs(H a) { H r = a; r.__x &= 0x7FFFu; return r; }                          \
    static inline H __hfma(H a, H b, H c) { return H((float)((double)(float)a * (double)(float)b + (double)(float)c)); } \
    static inline H c2t_sat_##SFX(float f) { return H(f != f ? 0.0f : (f < 0.0f ? 0.0f : (f > 1.0f ? 1.0f : f))); } \
    static inline H __hadd_sat(H a, H b) { return c2t_sat_##SFX((float)(a + b)); }               \
    static inline H __hsub_sat(H a, H b) { return c2t_sat_##SFX((float)(a - b)); }               \
    static inline H __hmul_sat(H a, H b) { return c2t_sat_##SFX((float)(a * b)); }               \
    static inline H __hfma_sat(H a, H b, H c) { return c2t_sat_##SFX((float)__hfma(a, b, c)); }  \
    static inline H __hmax(H a, H b) { float x = a, y = b; return x != x ? b : (y != y ? a : (x > y ? a : b)); } \
    static inline H __hmin(H a, H b) { float x = a, y = b; return x != x ? b : (y != y ? a : (x < y ? a : b)); } \
    static inline H __hmax_nan(H a, H b) { float x = a, y = b; return x != x ? a : (y != y ? b : (x > y ? a : b)); } \
    static inline H __hmin_nan(H a, H b) { float x = a, y = b; return x != x ? a : (y != y ? b : (x < y ? a : b)); } \
    static inline bool __heq(H a, H b) { return a == b; }                                         \
    static inline bool __hne(H a, H b) { return a != b; }                                         \
    static inline bool __hlt(H a, H b) { return a < b; }                                          \
    static inline bool __hle(H a, H b) { return a <= b; }                                         \
    static inline bool __hgt(H a, H b) { return a > b; }                                          \
    static inline bool __hge(H a, H b) { return a >= b; }                                         \
    static inline bool __hisnan(H a) { float f = a; return f != f; }                              \
    static inline int __hisinf(H a) { float f = a; return std::isinf(f) ? (f < 0 ? -1 : 1) : 0; } \
    static inline H hsqrt(H a) { return H(std::sqrt((float)a)); }                                 \
    static inline H hrsqrt(H a) { return H(1.0f / std::sqrt((float)a)); }                        \
    static inline H hrcp(H a) { return H(1.0f / (float)a); }                                      \
    static inline H hexp(H a) { return H(std::exp((float)a)); }                                   \
    static inline H hexp2(H a) { return H(std::exp2((float)a)); }                                 \
    static inline H hexp10(H a) { return H(std::pow(10.0f, (float)a)); }                          \
    static inline H hlog(H a) { return H(std::log((float)a)); }                                   \
    static inline H hlog2(H a) { return H(std::log2((float)a)); }                                 \
    static inline H hlog10(H a) { return H(std::log10((float)a)); }                               \
    static inline H hsin(H a) { return H(std::sin((float)a)); }                                   \
    static inline H hcos(H a) { return H(std::cos((float)a)); }                                   \
    static inline H htanh(H a) { return H(std::tanh((float)a)); }                                 \
    static inline H hfloor(H a) { return H(std::floor((float)a)); }                               \
    static inline H hceil(H a) { return H(std::ceil((float)a)); }                                 \
    static inline H htrunc(H a) { return H(std::trunc((float)a)); }                               \
    static inline H hrint(H a) { return H(std::nearbyint((float)a)); }                            \
    static inline H2 __hadd2(H2 a, H2 b) { return a + b; }                                        \
    static inline H2 __hsub2(H2 a, H2 b) { return a - b; }                                        \
    static inline H2 __hmul2(H2 a, H2 b) { return a * b; }                                        \
    static inline H2 __h2div(H2 a, H2 b) { return a / b; }                                        \
    static inline H2 __hneg2(H2 a) { return -a; }                                                 \
    static inline H2 __habs2(H2 a) { return H2(__habs(a.x), __habs(a.y)); }                       \
    static inline H2 __hfma2(H2 a, H2 b, H2 c) { return H2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y)); } \
    static inline H2 __hadd2_sat(H2 a, H2 b) { return H2(__hadd_sat(a.x, b.x), __hadd_sat(a.y, b.y)); } \
    static inline H2 __hmul2_sat(H2 a, H2 b) { return H2(__hmul_sat(a.x, b.x), __hmul_sat(a.y, b.y)); } \
    static inline H2 __hmax2(H2 a, H2 b) { return H2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }       \
    static inline H2 __hmin2(H2 a, H2 b) { return H2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }       \
    static inline bool __hbeq2(H2 a, H2 b) { return a.x == b.x && a.y == b.y; }                   \
    static inline H2 h2sqrt(H2 a) { return H2(hsqrt(a.x), hsqrt(a.y)); }                          \
    static inline H2 h2exp(H2 a) { return H2(hexp(a.x), hexp(a.y)); }                             \
    static inline H2 h2log(H2 a) { return H2(hlog(a.x), hlog(a.y)); }                             \
    static inline H2 h2rcp(H2 a) { return H2(hrcp(a.x), hrcp(a.y)); }                             \
    static inline H2 h2rsqrt(H2 a) { return H2(hrsqrt(a.x), hrsqrt(a.y)); }

C2T_H16_FUNCS(__half, __half2, h)
C2T_H16_FUNCS(__nv_bfloat16, __nv_bfloat162, b)
#undef C2T_H16_FUNCS
