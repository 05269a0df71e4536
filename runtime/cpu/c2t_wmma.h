// c2t_wmma.h - nvcuda::wmma (warp matrix multiply-accumulate) for the CPU executor.
// Part of cuda_cpu.h; do not include on its own.
//
// CUDA leaves the mapping of fragment elements to lanes unspecified, so a correct kernel can
// only treat x[0..num_elements) uniformly. Here every thread of the warp holds the whole tile
// (num_elements = rows * cols, row-major), load/store/mma compute the whole tile in every lane,
// and each of them first waits for the lanes of the warp, as the _sync functions do on the GPU.
// mma_sync accumulates in float (int for 8-bit integer inputs) in k order; tf32 inputs are
// truncated to a 10-bit mantissa as the tensor cores do when they were not converted with
// __float_to_tf32 (round to nearest, ties away).
#pragma once

namespace nvcuda {
namespace wmma {

static inline float __float_to_tf32(float f) {
    unsigned u = c2t::f2u(f);
    if ((u & 0x7F800000u) == 0x7F800000u) return f;    // inf / NaN unchanged
    u += 0x1000u;                                       // round half away from zero on the magnitude
    u &= 0xFFFFE000u;
    return c2t::u2f(u);
}

struct row_major {};
struct col_major {};
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32 {};
}
namespace experimental {
namespace precision {
struct u4 {};
struct s4 {};
struct b1 {};
}  // namespace precision
}  // namespace experimental

namespace detail {
template <class Use, int M, int N, int K> struct dims;
template <int M, int N, int K> struct dims<matrix_a, M, N, K> { static constexpr int rows = M, cols = K; };
template <int M, int N, int K> struct dims<matrix_b, M, N, K> { static constexpr int rows = K, cols = N; };
template <int M, int N, int K> struct dims<accumulator, M, N, K> { static constexpr int rows = M, cols = N; };
template <class T> struct storage { typedef T type; };
template <> struct storage<precision::tf32> { typedef float type; };
template <class T> struct acc_of { typedef float type; };
template <> struct acc_of<signed char> { typedef int type; };
template <> struct acc_of<unsigned char> { typedef int type; };
template <class T> static inline float input_value(const T& v) { return (float)v; }
static inline float tf32_trunc(float f) { return c2t::u2f(c2t::f2u(f) & 0xFFFFE000u); }
}  // namespace detail

template <class Use, int M, int N, int K, class T, class Layout = void>
class fragment {
public:
    typedef typename detail::storage<T>::type storage_element_type;
    typedef storage_element_type element_type;
    static constexpr int rows = detail::dims<Use, M, N, K>::rows;
    static constexpr int cols = detail::dims<Use, M, N, K>::cols;
    enum { num_elements = rows * cols };
    storage_element_type x[rows * cols];
    storage_element_type& operator[](int i) { return x[i]; }
    const storage_element_type& operator[](int i) const { return x[i]; }
};

template <class Use, int M, int N, int K, class T, class L, class V>
static inline void fill_fragment(fragment<Use, M, N, K, T, L>& f, const V& v) {
    typedef typename fragment<Use, M, N, K, T, L>::storage_element_type S;
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = (S)v;
}

// matrix_a / matrix_b: the layout is part of the fragment's type
template <class Use, int M, int N, int K, class T, class L, class P>
static inline void load_matrix_sync(fragment<Use, M, N, K, T, L>& f, const P* p, unsigned ldm) {
    static_assert(!std::is_same<L, void>::value, "an accumulator load needs a layout_t argument");
    __syncwarp();
    typedef fragment<Use, M, N, K, T, L> F;
    typedef typename F::storage_element_type S;
    const bool row = std::is_same<L, row_major>::value;
    for (int r = 0; r < F::rows; ++r)
        for (int c = 0; c < F::cols; ++c)
            f.x[r * F::cols + c] = (S)(row ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r]);
}

template <int M, int N, int K, class T, class P>
static inline void load_matrix_sync(fragment<accumulator, M, N, K, T>& f, const P* p, unsigned ldm, layout_t layout) {
    __syncwarp();
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c)
            f.x[r * N + c] = (T)(layout == mem_row_major ? p[(size_t)r * ldm + c] : p[(size_t)c * ldm + r]);
}

template <int M, int N, int K, class T, class P>
static inline void store_matrix_sync(P* p, const fragment<accumulator, M, N, K, T>& f, unsigned ldm, layout_t layout) {
    __syncwarp();
    for (int r = 0; r < M; ++r)
        for (int c = 0; c < N; ++c) {
            P v = (P)f.x[r * N + c];
            if (layout == mem_row_major) p[(size_t)r * ldm + c] = v;
            else p[(size_t)c * ldm + r] = v;
        }
}

template <int M, int N, int K, class TA, class LA, class TB, class LB, class TC, class TD>
static inline void mma_sync(fragment<accumulator, M, N, K, TD>& d, const fragment<matrix_a, M, N, K, TA, LA>& a,
                            const fragment<matrix_b, M, N, K, TB, LB>& b, const fragment<accumulator, M, N, K, TC>& c,
                            bool = false) {
    __syncwarp();
    typedef typename detail::acc_of<typename fragment<matrix_a, M, N, K, TA, LA>::storage_element_type>::type Acc;
    const bool tf32 = std::is_same<TA, precision::tf32>::value;
    TD out[M * N];
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            Acc s = (Acc)c.x[i * N + j];
            for (int k = 0; k < K; ++k) {
                if (tf32) {
                    s += (Acc)(detail::tf32_trunc((float)a.x[i * K + k]) * detail::tf32_trunc((float)b.x[k * N + j]));
                } else if (std::is_same<Acc, int>::value) {
                    s += (Acc)((int)a.x[i * K + k] * (int)b.x[k * N + j]);
                } else {
                    s += (Acc)(detail::input_value(a.x[i * K + k]) * detail::input_value(b.x[k * N + j]));
                }
            }
            out[i * N + j] = (TD)s;
        }
    for (int i = 0; i < M * N; ++i) d.x[i] = out[i];
}

}  // namespace wmma
}  // namespace nvcuda
