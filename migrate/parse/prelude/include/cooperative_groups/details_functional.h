/* Reduction/scan operators of cooperative groups (cuda2tile parse stub; shared by reduce.h and
 * scan.h).  less/greater select the smaller/larger operand, as in CUDA. */
#ifndef __CUDA2TILE_CG_FUNCTIONAL_H
#define __CUDA2TILE_CG_FUNCTIONAL_H
#pragma clang system_header
namespace cooperative_groups {
template <class T> struct plus { __device__ T operator()(T a, T b) const { return a + b; } };
template <class T> struct less { __device__ T operator()(T a, T b) const { return b < a ? b : a; } };
template <class T> struct greater { __device__ T operator()(T a, T b) const { return a < b ? b : a; } };
template <class T> struct bit_and { __device__ T operator()(T a, T b) const { return a & b; } };
template <class T> struct bit_or { __device__ T operator()(T a, T b) const { return a | b; } };
template <class T> struct bit_xor { __device__ T operator()(T a, T b) const { return a ^ b; } };
namespace details {
template <class T> struct remove_qual { typedef T type; };
template <class T> struct remove_qual<T &> { typedef T type; };
template <class T> struct remove_qual<T &&> { typedef T type; };
template <class T> struct remove_qual<const T> { typedef T type; };
template <class T> struct remove_qual<const T &> { typedef T type; };
template <class T> struct remove_qual<volatile T> { typedef T type; };
}
}
#endif
