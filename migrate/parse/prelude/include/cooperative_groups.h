/* cooperative_groups.h -- CUDA cooperative groups (cuda2tile parse stub).  Users write
 * `namespace cg = cooperative_groups;` themselves.  Collectives (reduce, scan, memcpy_async) are
 * in cooperative_groups/{reduce,scan,memcpy_async}.h, as in CUDA. */
#ifndef __CUDA2TILE_COOPERATIVE_GROUPS_H
#define __CUDA2TILE_COOPERATIVE_GROUPS_H
/* the include-guard name code tests to see whether this header was included */
#define _COOPERATIVE_GROUPS_H_
#pragma clang system_header
#include <vector_types.h>

namespace cooperative_groups {
/* ---- Generic group handle ------------------------------------------------------------------ */
class thread_group {
 public:
  __device__ void sync() const;
  __device__ unsigned long long size() const;
  __device__ unsigned long long num_threads() const;
  __device__ unsigned long long thread_rank() const;
  __device__ unsigned int get_type() const;
};

/* ---- The thread block ---------------------------------------------------------------------- */
class thread_block : public thread_group {
 public:
  __device__ static void sync();
  __device__ static unsigned int thread_rank();
  __device__ static unsigned int size();
  __device__ static unsigned int num_threads();
  __device__ static dim3 group_index();
  __device__ static dim3 thread_index();
  __device__ static dim3 group_dim();
  __device__ static dim3 dim_threads();
  __device__ static void barrier_wait();
};
__device__ thread_block this_thread_block();
/* Scratch for tiles wider than a warp: `__shared__ cg::block_tile_memory<1024> scratch;` */
template <unsigned int MaxBlockSize = 1024> struct block_tile_memory {
  alignas(16) unsigned char __scratch[MaxBlockSize / 32 * 8 + 64];
};
template <unsigned int MaxBlockSize> __device__ thread_block this_thread_block(block_tile_memory<MaxBlockSize> &scratch) __C2T_BODY

/* ---- The grid (cooperative launch) --------------------------------------------------------- */
class grid_group : public thread_group {
 public:
  __device__ bool is_valid() const;
  __device__ void sync() const;
  __device__ unsigned long long size() const;
  __device__ unsigned long long num_threads() const;
  __device__ unsigned long long thread_rank() const;
  __device__ unsigned long long block_rank() const;
  __device__ unsigned long long num_blocks() const;
  __device__ dim3 group_dim() const;
  __device__ dim3 dim_blocks() const;
  __device__ dim3 block_index() const;
};
__device__ grid_group this_grid();

/* ---- sm_90 thread-block clusters ----------------------------------------------------------- */
class cluster_group : public thread_group {
 public:
  __device__ static bool is_valid();
  __device__ static void sync();
  __device__ static void barrier_arrive();
  __device__ static void barrier_wait();
  __device__ static unsigned int thread_rank();
  __device__ static unsigned int block_rank();
  __device__ static unsigned int num_threads();
  __device__ static unsigned int num_blocks();
  __device__ static unsigned int size();
  __device__ static dim3 block_index();
  __device__ static dim3 dim_threads();
  __device__ static dim3 dim_blocks();
  template <class T> __device__ static T *map_shared_rank(T *addr, int rank);
  template <class T> __device__ static unsigned int query_shared_rank(T *addr);
};
__device__ cluster_group this_cluster();

/* ---- Warp-level groups --------------------------------------------------------------------- */
#define __C2T_CG_WARP_MEMBERS                                                                  \
  __device__ unsigned int meta_group_rank() const;                                             \
  __device__ unsigned int meta_group_size() const;                                             \
  template <class T> __device__ T shfl(T var, int srcRank) const;                              \
  template <class T> __device__ T shfl_down(T var, unsigned int delta) const;                  \
  template <class T> __device__ T shfl_up(T var, unsigned int delta) const;                    \
  template <class T> __device__ T shfl_xor(T var, unsigned int laneMask) const;                \
  __device__ int any(int predicate) const;                                                     \
  __device__ int all(int predicate) const;                                                     \
  __device__ unsigned int ballot(int predicate) const;                                         \
  template <class T> __device__ unsigned int match_any(T val) const;                           \
  template <class T> __device__ unsigned int match_all(T val, int &pred) const;
class coalesced_group : public thread_group {
 public:
  __device__ void sync() const;
  __device__ unsigned long long size() const;
  __device__ unsigned long long num_threads() const;
  __device__ unsigned long long thread_rank() const;
  __C2T_CG_WARP_MEMBERS
};
__device__ coalesced_group coalesced_threads();

template <unsigned int Size, class ParentT = void> class thread_block_tile;
template <unsigned int Size> class thread_block_tile<Size, void> : public thread_group {
 public:
  static constexpr unsigned int numThreads = Size;
  __device__ void sync() const;
  __device__ unsigned int thread_rank() const;
  static constexpr unsigned long long size() { return Size; }
  static constexpr unsigned long long num_threads() { return Size; }
  static constexpr dim3 dim_threads() { return dim3(Size, 1, 1); }
  __C2T_CG_WARP_MEMBERS
};
/* A tile that remembers its parent type converts to the parent-less tile (its base). */
template <unsigned int Size, class ParentT> class thread_block_tile : public thread_block_tile<Size, void> {};
#undef __C2T_CG_WARP_MEMBERS

/* ---- Partitioning -------------------------------------------------------------------------- */
template <unsigned int Size, class ParentT> __device__ thread_block_tile<Size, ParentT> tiled_partition(const ParentT &parent);
__device__ thread_group tiled_partition(const thread_group &parent, unsigned int tilesz);
__device__ thread_group tiled_partition(const thread_block &parent, unsigned int tilesz);
__device__ coalesced_group tiled_partition(const coalesced_group &parent, unsigned int tilesz);
__device__ coalesced_group binary_partition(const coalesced_group &parent, bool pred);
template <unsigned int Size, class ParentT>
__device__ coalesced_group binary_partition(const thread_block_tile<Size, ParentT> &parent, bool pred);
template <class Label> __device__ coalesced_group labeled_partition(const coalesced_group &parent, Label label) __C2T_BODY
template <unsigned int Size, class ParentT, class Label>
__device__ coalesced_group labeled_partition(const thread_block_tile<Size, ParentT> &parent, Label label) __C2T_BODY

/* ---- Free functions on any group ----------------------------------------------------------- */
template <class Group> __device__ void sync(const Group &g) __C2T_BODY
template <class Group> __device__ unsigned long long thread_rank(const Group &g) __C2T_BODY
template <class Group> __device__ unsigned long long num_threads(const Group &g) __C2T_BODY
template <class Group> __device__ unsigned long long group_size(const Group &g) __C2T_BODY
template <class Group, class Fn, class... Args> __device__ void invoke_one(const Group &g, Fn &&fn, Args &&...args) __C2T_BODY
template <class Group, class Fn, class... Args>
__device__ auto invoke_one_broadcast(const Group &g, Fn &&fn, Args &&...args) -> decltype(fn(args...)) __C2T_BODY
}  // namespace cooperative_groups
#endif
