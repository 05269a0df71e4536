// The part of <algorithm> that nvcc makes visible without any #include (libstdc++'s algobase,
// reached through the CUDA headers): min/max/clamp, copy/fill/move ranges, lower/upper_bound,
// equal, mismatch, lexicographical_compare.  min/max/clamp/minmax are constexpr with bodies
// (clang treats constexpr functions as __host__ __device__, so kernels may call them).
#ifndef __CUDA2TILE_ALGOBASE_H
#define __CUDA2TILE_ALGOBASE_H
#pragma clang system_header
#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <utility>
namespace std {
// ---- min / max / clamp -------------------------------------------------------------------------
template <class T> constexpr const T &min(const T &a, const T &b) { return b < a ? b : a; }
template <class T, class C> constexpr const T &min(const T &a, const T &b, C comp) { return comp(b, a) ? b : a; }
template <class T> constexpr T min(initializer_list<T> il) {
  const T *r = il.begin();
  for (const T *p = il.begin(); p != il.end(); ++p) if (*p < *r) r = p;
  return *r;
}
template <class T, class C> constexpr T min(initializer_list<T> il, C comp) {
  const T *r = il.begin();
  for (const T *p = il.begin(); p != il.end(); ++p) if (comp(*p, *r)) r = p;
  return *r;
}
template <class T> constexpr const T &max(const T &a, const T &b) { return a < b ? b : a; }
template <class T, class C> constexpr const T &max(const T &a, const T &b, C comp) { return comp(a, b) ? b : a; }
template <class T> constexpr T max(initializer_list<T> il) {
  const T *r = il.begin();
  for (const T *p = il.begin(); p != il.end(); ++p) if (*r < *p) r = p;
  return *r;
}
template <class T, class C> constexpr T max(initializer_list<T> il, C comp) {
  const T *r = il.begin();
  for (const T *p = il.begin(); p != il.end(); ++p) if (comp(*r, *p)) r = p;
  return *r;
}
template <class T> constexpr pair<const T &, const T &> minmax(const T &a, const T &b) {
  return b < a ? pair<const T &, const T &>(b, a) : pair<const T &, const T &>(a, b);
}
template <class T> constexpr pair<T, T> minmax(initializer_list<T> il) { return pair<T, T>(std::min(il), std::max(il)); }
template <class T> constexpr const T &clamp(const T &v, const T &lo, const T &hi) { return v < lo ? lo : (hi < v ? hi : v); }
template <class T, class C> constexpr const T &clamp(const T &v, const T &lo, const T &hi, C comp) {
  return comp(v, lo) ? lo : (comp(hi, v) ? hi : v);
}

// ---- ranges ----------------------------------------------------------------------------------
template <class It1, class It2> pair<It1, It2> mismatch(It1 first1, It1 last1, It2 first2) __C2T_BODY
template <class It1, class It2, class P> pair<It1, It2> mismatch(It1 first1, It1 last1, It2 first2, P pred) __C2T_BODY
template <class It1, class It2> bool equal(It1 first1, It1 last1, It2 first2) __C2T_BODY
template <class It1, class It2, class P, class = enable_if_t<!is_same_v<It2, P>>> bool equal(It1 first1, It1 last1, It2 first2, P pred) __C2T_BODY
template <class It1, class It2> bool equal(It1 first1, It1 last1, It2 first2, It2 last2) __C2T_BODY
template <class It1, class It2, class P> bool equal(It1 first1, It1 last1, It2 first2, It2 last2, P pred) __C2T_BODY
template <class It1, class It2> bool lexicographical_compare(It1 first1, It1 last1, It2 first2, It2 last2) __C2T_BODY
template <class It1, class It2, class C> bool lexicographical_compare(It1 first1, It1 last1, It2 first2, It2 last2, C comp) __C2T_BODY
template <class In, class Out> Out copy(In first, In last, Out result) __C2T_BODY
template <class In, class Size, class Out> Out copy_n(In first, Size n, Out result) __C2T_BODY
template <class In, class Out> Out copy_backward(In first, In last, Out result) __C2T_BODY
template <class In, class Out> Out move(In first, In last, Out result) __C2T_BODY
template <class In, class Out> Out move_backward(In first, In last, Out result) __C2T_BODY
template <class It, class T> void fill(It first, It last, const T &value) __C2T_BODY
template <class Out, class Size, class T> Out fill_n(Out first, Size n, const T &value) __C2T_BODY
template <class It1, class It2> It2 swap_ranges(It1 first1, It1 last1, It2 first2) __C2T_BODY
template <class It1, class It2> void iter_swap(It1 a, It2 b) __C2T_BODY
template <class It, class T> It lower_bound(It first, It last, const T &value) __C2T_BODY
template <class It, class T, class C> It lower_bound(It first, It last, const T &value, C comp) __C2T_BODY
template <class It, class T> It upper_bound(It first, It last, const T &value) __C2T_BODY
template <class It, class T, class C> It upper_bound(It first, It last, const T &value, C comp) __C2T_BODY
}
#endif
