// std::hash for the built-in types (cuda2tile parse stub; shared by <functional>, <string>,
// <unordered_map>, <unordered_set>).
#ifndef __CUDA2TILE_HASH_H
#define __CUDA2TILE_HASH_H
#pragma clang system_header
#include <cstddef>
#include <type_traits>
namespace std {
template <class T, class = void> struct __c2t_hash_base {
  __c2t_hash_base() = delete;  // disabled, as for a type without a hash specialisation
};
template <class T> struct __c2t_hash_base<T, enable_if_t<is_arithmetic_v<T> || is_enum_v<T> || is_pointer_v<T>>> {
  typedef T argument_type;
  typedef size_t result_type;
  size_t operator()(T v) const noexcept __C2T_BODY
};
template <class T> struct hash : __c2t_hash_base<T> {};
template <> struct hash<decltype(nullptr)> {
  size_t operator()(decltype(nullptr)) const noexcept __C2T_BODY
};
}
#endif
