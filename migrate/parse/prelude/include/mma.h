/* mma.h -- warp matrix multiply-accumulate, nvcuda::wmma (cuda2tile parse stub).  Fragments
 * expose num_elements and x[]; pointer/value parameters take the fragment's storage type
 * (float for precision::tf32), as in CUDA. */
#ifndef __CUDA2TILE_MMA_H
#define __CUDA2TILE_MMA_H
#pragma clang system_header
#include <cuda_fp16.h>
#include <cuda_bf16.h>
namespace nvcuda {
namespace wmma {
struct row_major;
struct col_major;
struct matrix_a;
struct matrix_b;
struct accumulator;
enum layout_t { mem_row_major, mem_col_major };
namespace precision {
struct tf32;
struct b1;
struct u4;
struct s4;
}
namespace experimental {
namespace precision {
struct b1;
struct u4;
struct s4;
}
enum bmmaBitOp { bmmaBitOpXOR = 1, bmmaBitOpAND = 2 };
enum bmmaAccumulateOp { bmmaAccumulateOpPOPC = 1 };
}
template <class T> struct __c2t_storage { typedef T type; };
template <> struct __c2t_storage<precision::tf32> { typedef float type; };
template <> struct __c2t_storage<precision::b1> { typedef unsigned int type; };
template <> struct __c2t_storage<precision::u4> { typedef unsigned int type; };
template <> struct __c2t_storage<precision::s4> { typedef int type; };
template <> struct __c2t_storage<experimental::precision::b1> { typedef unsigned int type; };
template <> struct __c2t_storage<experimental::precision::u4> { typedef unsigned int type; };
template <> struct __c2t_storage<experimental::precision::s4> { typedef int type; };

template <class Use, int m, int n, int k, class T, class Layout = void> class fragment {
 public:
  typedef typename __c2t_storage<T>::type element_type;
  typedef typename __c2t_storage<T>::type storage_element_type;
  enum { num_elements = 8 };
  storage_element_type x[num_elements];
};
#define __C2T_FRAG(Use, T, L) fragment<Use, m, n, k, T, L>
template <class Use, int m, int n, int k, class T, class L>
__device__ void fill_fragment(__C2T_FRAG(Use, T, L) &a, const typename __C2T_FRAG(Use, T, L)::element_type &v);
template <class Use, int m, int n, int k, class T, class L>
__device__ void load_matrix_sync(__C2T_FRAG(Use, T, L) &a, const typename __C2T_FRAG(Use, T, L)::element_type *p, unsigned ldm);
template <int m, int n, int k, class T>
__device__ void load_matrix_sync(__C2T_FRAG(accumulator, T, void) &a, const typename __C2T_FRAG(accumulator, T, void)::element_type *p,
                                 unsigned ldm, layout_t layout);
template <int m, int n, int k, class T>
__device__ void store_matrix_sync(typename __C2T_FRAG(accumulator, T, void)::element_type *p, const __C2T_FRAG(accumulator, T, void) &a,
                                  unsigned ldm, layout_t layout);
template <int m, int n, int k, class Ta, class La, class Tb, class Lb, class Tc, class Td>
__device__ void mma_sync(__C2T_FRAG(accumulator, Td, void) &d, const __C2T_FRAG(matrix_a, Ta, La) &a,
                         const __C2T_FRAG(matrix_b, Tb, Lb) &b, const __C2T_FRAG(accumulator, Tc, void) &c, bool satf = false);
template <int m, int n, int k, class Ta, class La, class Tb, class Lb, class Tc>
__device__ void bmma_sync(__C2T_FRAG(accumulator, Tc, void) &d, const __C2T_FRAG(matrix_a, Ta, La) &a,
                          const __C2T_FRAG(matrix_b, Tb, Lb) &b, const __C2T_FRAG(accumulator, Tc, void) &c,
                          experimental::bmmaBitOp op = experimental::bmmaBitOpXOR,
                          experimental::bmmaAccumulateOp acc = experimental::bmmaAccumulateOpPOPC);
#undef __C2T_FRAG
__device__ float __float_to_tf32(float in);
}  // namespace wmma
}  // namespace nvcuda
#endif
