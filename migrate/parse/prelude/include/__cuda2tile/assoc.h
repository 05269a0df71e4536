// Associative containers (cuda2tile parse stub): one skeleton, __c2t_assoc, gives map, multimap,
// set, multiset, unordered_map, unordered_set their members; the public templates only add
// their type parameters and constructors.
#ifndef __CUDA2TILE_ASSOC_H
#define __CUDA2TILE_ASSOC_H
#pragma clang system_header
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <utility>
namespace std {
// V: value_type; K: key_type; M: mapped_type (void for sets); Bidi: bidirectional iterators
template <class V, class K, class M, bool Bidi> class __c2t_assoc {
 public:
  typedef K key_type;
  typedef V value_type;
  typedef size_t size_type;
  typedef ptrdiff_t difference_type;
  typedef V &reference;
  typedef const V &const_reference;
  typedef V *pointer;
  typedef const V *const_pointer;
  template <class R> class __iter {
   public:
    typedef conditional_t<Bidi, bidirectional_iterator_tag, forward_iterator_tag> iterator_category;
    typedef V value_type;
    typedef ptrdiff_t difference_type;
    typedef R *pointer;
    typedef R &reference;
    __iter() __C2T_BODY
    template <class R2, class = enable_if_t<is_convertible_v<R2 *, R *>>> __iter(const __iter<R2> &o) __C2T_BODY
    R &operator*() const __C2T_BODY
    R *operator->() const __C2T_BODY
    __iter &operator++() __C2T_BODY
    __iter operator++(int) __C2T_BODY
    __iter &operator--() __C2T_BODY
    __iter operator--(int) __C2T_BODY
    bool operator==(const __iter &o) const __C2T_BODY
    bool operator!=(const __iter &o) const __C2T_BODY
  };
  typedef __iter<V> iterator;
  typedef __iter<const V> const_iterator;
  typedef std::reverse_iterator<iterator> reverse_iterator;
  typedef std::reverse_iterator<const_iterator> const_reverse_iterator;

  iterator begin() noexcept __C2T_BODY
  const_iterator begin() const noexcept __C2T_BODY
  iterator end() noexcept __C2T_BODY
  const_iterator end() const noexcept __C2T_BODY
  const_iterator cbegin() const noexcept __C2T_BODY
  const_iterator cend() const noexcept __C2T_BODY
  reverse_iterator rbegin() noexcept __C2T_BODY
  const_reverse_iterator rbegin() const noexcept __C2T_BODY
  reverse_iterator rend() noexcept __C2T_BODY
  const_reverse_iterator rend() const noexcept __C2T_BODY
  bool empty() const noexcept __C2T_BODY
  size_type size() const noexcept __C2T_BODY
  size_type max_size() const noexcept __C2T_BODY
  void clear() noexcept __C2T_BODY
  pair<iterator, bool> insert(const V &v) __C2T_BODY
  pair<iterator, bool> insert(V &&v) __C2T_BODY
  template <class P, class = enable_if_t<is_constructible_v<V, P &&>>> pair<iterator, bool> insert(P &&v) __C2T_BODY
  iterator insert(const_iterator hint, const V &v) __C2T_BODY
  template <class It> void insert(It first, It last) __C2T_BODY
  void insert(initializer_list<V> il) __C2T_BODY
  template <class... A> pair<iterator, bool> emplace(A &&...args) __C2T_BODY
  template <class... A> iterator emplace_hint(const_iterator hint, A &&...args) __C2T_BODY
  iterator erase(const_iterator pos) __C2T_BODY
  iterator erase(const_iterator first, const_iterator last) __C2T_BODY
  size_type erase(const K &k) __C2T_BODY
  iterator find(const K &k) __C2T_BODY
  const_iterator find(const K &k) const __C2T_BODY
  size_type count(const K &k) const __C2T_BODY
  bool contains(const K &k) const __C2T_BODY
  iterator lower_bound(const K &k) __C2T_BODY
  const_iterator lower_bound(const K &k) const __C2T_BODY
  iterator upper_bound(const K &k) __C2T_BODY
  const_iterator upper_bound(const K &k) const __C2T_BODY
  pair<iterator, iterator> equal_range(const K &k) __C2T_BODY
  pair<const_iterator, const_iterator> equal_range(const K &k) const __C2T_BODY
  void swap(__c2t_assoc &o) noexcept __C2T_BODY
  // maps only (M is not void)
  template <class MM = M> enable_if_t<!is_void_v<MM>, MM &> operator[](const K &k) __C2T_BODY
  template <class MM = M> enable_if_t<!is_void_v<MM>, MM &> operator[](K &&k) __C2T_BODY
  template <class MM = M> enable_if_t<!is_void_v<MM>, MM &> at(const K &k) __C2T_BODY
  template <class MM = M> enable_if_t<!is_void_v<MM>, const MM &> at(const K &k) const __C2T_BODY
  template <class... A> pair<iterator, bool> try_emplace(const K &k, A &&...args) __C2T_BODY
  template <class MM> pair<iterator, bool> insert_or_assign(const K &k, MM &&m) __C2T_BODY
  // unordered containers
  void reserve(size_type n) __C2T_BODY
  void rehash(size_type n) __C2T_BODY
  size_type bucket_count() const noexcept __C2T_BODY
  float load_factor() const noexcept __C2T_BODY
  float max_load_factor() const noexcept __C2T_BODY
  void max_load_factor(float z) __C2T_BODY
};
template <class V, class K, class M, bool B> bool operator==(const __c2t_assoc<V, K, M, B> &a, const __c2t_assoc<V, K, M, B> &b) __C2T_BODY
template <class V, class K, class M, bool B> bool operator!=(const __c2t_assoc<V, K, M, B> &a, const __c2t_assoc<V, K, M, B> &b) __C2T_BODY

#define __C2T_ASSOC_CTORS(name, V, Extra)                                                      \
  name() {}                                                                                    \
  explicit name(Extra) {}                                                                      \
  template <class It> name(It first, It last) {}                                               \
  name(initializer_list<V> il) {}                                                              \
  name(const name &o) {}                                                                       \
  name(name &&o) noexcept {}                                                                   \
  ~name() {}                                                                                   \
  name &operator=(const name &o) __C2T_BODY                                                    \
  name &operator=(name &&o) noexcept __C2T_BODY                                                \
  name &operator=(initializer_list<V> il) __C2T_BODY

template <class K, class T, class C = less<K>, class A = allocator<pair<const K, T>>>
class map : public __c2t_assoc<pair<const K, T>, K, T, true> {
 public:
  typedef pair<const K, T> value_type;
  typedef T mapped_type;
  typedef C key_compare;
  typedef A allocator_type;
  __C2T_ASSOC_CTORS(map, value_type, const C &comp)
};
template <class K, class T, class C = less<K>, class A = allocator<pair<const K, T>>>
class multimap : public __c2t_assoc<pair<const K, T>, K, T, true> {
 public:
  typedef pair<const K, T> value_type;
  typedef T mapped_type;
  typedef C key_compare;
  __C2T_ASSOC_CTORS(multimap, value_type, const C &comp)
};
template <class K, class C = less<K>, class A = allocator<K>> class set : public __c2t_assoc<const K, K, void, true> {
 public:
  typedef K value_type;
  typedef C key_compare;
  __C2T_ASSOC_CTORS(set, value_type, const C &comp)
};
template <class K, class C = less<K>, class A = allocator<K>> class multiset : public __c2t_assoc<const K, K, void, true> {
 public:
  typedef K value_type;
  __C2T_ASSOC_CTORS(multiset, value_type, const C &comp)
};
template <class K, class T, class H = hash<K>, class E = equal_to<K>, class A = allocator<pair<const K, T>>>
class unordered_map : public __c2t_assoc<pair<const K, T>, K, T, false> {
 public:
  typedef pair<const K, T> value_type;
  typedef T mapped_type;
  typedef H hasher;
  typedef E key_equal;
  __C2T_ASSOC_CTORS(unordered_map, value_type, size_t bucket_count)
};
template <class K, class T, class H = hash<K>, class E = equal_to<K>, class A = allocator<pair<const K, T>>>
class unordered_multimap : public __c2t_assoc<pair<const K, T>, K, T, false> {
 public:
  typedef pair<const K, T> value_type;
  typedef T mapped_type;
  __C2T_ASSOC_CTORS(unordered_multimap, value_type, size_t bucket_count)
};
template <class K, class H = hash<K>, class E = equal_to<K>, class A = allocator<K>>
class unordered_set : public __c2t_assoc<const K, K, void, false> {
 public:
  typedef K value_type;
  typedef H hasher;
  __C2T_ASSOC_CTORS(unordered_set, value_type, size_t bucket_count)
};
template <class K, class H = hash<K>, class E = equal_to<K>, class A = allocator<K>>
class unordered_multiset : public __c2t_assoc<const K, K, void, false> {
 public:
  typedef K value_type;
  __C2T_ASSOC_CTORS(unordered_multiset, value_type, size_t bucket_count)
};
#undef __C2T_ASSOC_CTORS
}
#endif
