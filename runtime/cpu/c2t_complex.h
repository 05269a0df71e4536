// c2t_complex.h - cuComplex.h for cuda2tile's CPU executor: single and double complex numbers on
// float2 / double2, computed as CUDA's header documents them: cuCmul as (ac - bd, ad + bc); cuCdiv
// scaled by s = |c| + |d| before the product with the conjugate over |y|^2 (no overflow for large
// operands); cuCabs as v * sqrt(1 + (w/v)^2) of the larger (v) and smaller (w) magnitude of the two
// parts, v + w where v is 0 or either part is past the largest finite value.
#ifndef CUDA2TILE_C2T_COMPLEX_H
#define CUDA2TILE_C2T_COMPLEX_H

typedef float2 cuFloatComplex;
typedef double2 cuDoubleComplex;
typedef cuFloatComplex cuComplex;

static inline float cuCrealf(cuFloatComplex x) { return x.x; }
static inline float cuCimagf(cuFloatComplex x) { return x.y; }
static inline cuFloatComplex make_cuFloatComplex(float r, float i) { cuFloatComplex z; z.x = r; z.y = i; return z; }
static inline cuComplex make_cuComplex(float r, float i) { return make_cuFloatComplex(r, i); }
static inline cuFloatComplex cuConjf(cuFloatComplex x) { return make_cuFloatComplex(x.x, -x.y); }
static inline cuFloatComplex cuCaddf(cuFloatComplex x, cuFloatComplex y) { return make_cuFloatComplex(x.x + y.x, x.y + y.y); }
static inline cuFloatComplex cuCsubf(cuFloatComplex x, cuFloatComplex y) { return make_cuFloatComplex(x.x - y.x, x.y - y.y); }
static inline cuFloatComplex cuCmulf(cuFloatComplex x, cuFloatComplex y) {
    return make_cuFloatComplex(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}
static inline cuFloatComplex cuCdivf(cuFloatComplex x, cuFloatComplex y) {
    float s = fabsf(y.x) + fabsf(y.y);
    float oos = 1.0f / s;
    float ars = x.x * oos, ais = x.y * oos, brs = y.x * oos, bis = y.y * oos;
    float q = 1.0f / (brs * brs + bis * bis);
    return make_cuFloatComplex((ars * brs + ais * bis) * q, (ais * brs - ars * bis) * q);
}
static inline float cuCabsf(cuFloatComplex x) {
    float a = fabsf(x.x), b = fabsf(x.y);
    float v = a > b ? a : b, w = a > b ? b : a;
    float t = w / v;
    t = v * sqrtf(1.0f + t * t);
    if (v == 0.0f || v > 3.402823466e38f || w > 3.402823466e38f) t = v + w;
    return t;
}

static inline double cuCreal(cuDoubleComplex x) { return x.x; }
static inline double cuCimag(cuDoubleComplex x) { return x.y; }
static inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { cuDoubleComplex z; z.x = r; z.y = i; return z; }
static inline cuDoubleComplex cuConj(cuDoubleComplex x) { return make_cuDoubleComplex(x.x, -x.y); }
static inline cuDoubleComplex cuCadd(cuDoubleComplex x, cuDoubleComplex y) { return make_cuDoubleComplex(x.x + y.x, x.y + y.y); }
static inline cuDoubleComplex cuCsub(cuDoubleComplex x, cuDoubleComplex y) { return make_cuDoubleComplex(x.x - y.x, x.y - y.y); }
static inline cuDoubleComplex cuCmul(cuDoubleComplex x, cuDoubleComplex y) {
    return make_cuDoubleComplex(x.x * y.x - x.y * y.y, x.x * y.y + x.y * y.x);
}
static inline cuDoubleComplex cuCdiv(cuDoubleComplex x, cuDoubleComplex y) {
    double s = fabs(y.x) + fabs(y.y);
    double oos = 1.0 / s;
    double ars = x.x * oos, ais = x.y * oos, brs = y.x * oos, bis = y.y * oos;
    double q = 1.0 / (brs * brs + bis * bis);
    return make_cuDoubleComplex((ars * brs + ais * bis) * q, (ais * brs - ars * bis) * q);
}
static inline double cuCabs(cuDoubleComplex x) {
    double a = fabs(x.x), b = fabs(x.y);
    double v = a > b ? a : b, w = a > b ? b : a;
    double t = w / v;
    t = v * sqrt(1.0 + t * t);
    if (v == 0.0 || v > 1.79769313486231570e+308 || w > 1.79769313486231570e+308) t = v + w;
    return t;
}
static inline cuDoubleComplex cuComplexFloatToDouble(cuFloatComplex c) { return make_cuDoubleComplex(c.x, c.y); }
static inline cuFloatComplex cuComplexDoubleToFloat(cuDoubleComplex c) { return make_cuFloatComplex((float)c.x, (float)c.y); }

#endif
