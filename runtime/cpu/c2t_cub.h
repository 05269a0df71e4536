// c2t_cub.h - CUB's block-wide reductions for cuda2tile's CPU executor: what a program that
// includes <cub/cub.cuh> (or <cub/block/block_reduce.cuh>) needs to run its kernels on the CPU,
// and libcu++'s cuda::maximum / cuda::minimum (<cuda/functional>), CCCL 3's reduction operators.
//
// BlockReduce<T, X, algorithm, Y, Z>(temp_storage).Sum/Reduce: each thread stores its input at
// its row-major rank in the X*Y*Z storage, the block meets at a barrier, every thread folds the
// inputs (the first `num_valid` of them) in rank order, and the block meets again so that the
// storage can be used again. (CUB defines the result in thread 0 only; every thread gets it.)
// The fold order is not CUB's tree: a float sum differs by rounding, which the checks' fp32_accum
// tolerance covers. KeyValuePair with ArgMax / ArgMin (the block-wide arg max of a top-k
// selection) folds as CUB's operators do: the larger (smaller) value, the lower key on a tie.
// BlockScan<T, X, algorithm, Y, Z>(temp_storage).ExclusiveSum/InclusiveSum/ExclusiveScan/
// InclusiveScan (with or without the block aggregate) the same way: inputs stored by rank, a
// barrier, each thread folds the inputs of the ranks before it (and its own, inclusive) in rank
// order, a barrier. ExclusiveScan takes its initial value (without one, CUB leaves thread 0's
// output undefined; that form is not provided). Other CUB collectives are not provided.
#ifndef CUDA2TILE_C2T_CUB_H
#define CUDA2TILE_C2T_CUB_H

namespace cuda {
template <class T = void> struct maximum {
    T operator()(const T& a, const T& b) const { return a < b ? b : a; }
};
template <> struct maximum<void> {
    template <class T, class U> auto operator()(const T& a, const U& b) const -> decltype(a + b) { return a < b ? b : a; }
};
template <class T = void> struct minimum {
    T operator()(const T& a, const T& b) const { return b < a ? b : a; }
};
template <> struct minimum<void> {
    template <class T, class U> auto operator()(const T& a, const U& b) const -> decltype(a + b) { return b < a ? b : a; }
};
}  // namespace cuda

namespace cub {

enum BlockReduceAlgorithm {
    BLOCK_REDUCE_RAKING_COMMUTATIVE_ONLY,
    BLOCK_REDUCE_RAKING,
    BLOCK_REDUCE_WARP_REDUCTIONS,
    BLOCK_REDUCE_WARP_REDUCTIONS_NONDETERMINISTIC
};

struct Sum {
    template <typename T, typename U> auto operator()(const T& a, const U& b) const -> decltype(a + b) { return a + b; }
};
struct Max {
    template <typename T, typename U> auto operator()(const T& a, const U& b) const -> decltype(a + b) { return a < b ? b : a; }
};
struct Min {
    template <typename T, typename U> auto operator()(const T& a, const U& b) const -> decltype(a + b) { return b < a ? b : a; }
};

template <typename K, typename V>
struct KeyValuePair {
    typedef K Key;
    typedef V Value;
    K key;
    V value;
    KeyValuePair() = default;  // trivial, as __shared__ storage of them needs (a static on the CPU)
    KeyValuePair(const K& k, const V& v) : key(k), value(v) {}
    bool operator!=(const KeyValuePair& b) const { return value != b.value || key != b.key; }
};

struct ArgMax {
    template <typename K, typename V>
    KeyValuePair<K, V> operator()(const KeyValuePair<K, V>& a, const KeyValuePair<K, V>& b) const {
        return (b.value > a.value || (a.value == b.value && b.key < a.key)) ? b : a;
    }
};
struct ArgMin {
    template <typename K, typename V>
    KeyValuePair<K, V> operator()(const KeyValuePair<K, V>& a, const KeyValuePair<K, V>& b) const {
        return (b.value < a.value || (a.value == b.value && b.key < a.key)) ? b : a;
    }
};

template <typename T, int BLOCK_DIM_X, BlockReduceAlgorithm ALGORITHM = BLOCK_REDUCE_WARP_REDUCTIONS,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockReduce {
public:
    enum { THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    struct TempStorage { T items[THREADS]; };

    explicit BlockReduce(TempStorage& storage) : s_(storage) {}
    BlockReduce() : s_(own()) {}

    T Sum(T input) { return Reduce(input, cub::Sum(), THREADS); }
    T Sum(T input, int num_valid) { return Reduce(input, cub::Sum(), num_valid); }
    template <int ITEMS> T Sum(T (&inputs)[ITEMS]) { return Reduce(inputs, cub::Sum()); }

    template <typename Op> T Reduce(T input, Op op) { return Reduce(input, op, THREADS); }
    template <int ITEMS, typename Op> T Reduce(T (&inputs)[ITEMS], Op op) {
        T own_total = inputs[0];
        for (int k = 1; k < ITEMS; k++) own_total = op(own_total, inputs[k]);
        return Reduce(own_total, op, THREADS);
    }
    template <typename Op> T Reduce(T input, Op op, int num_valid) {
        int rank = (int)threadIdx.x + (BLOCK_DIM_Y > 1 ? (int)threadIdx.y * BLOCK_DIM_X : 0)
                   + (BLOCK_DIM_Z > 1 ? (int)threadIdx.z * BLOCK_DIM_X * BLOCK_DIM_Y : 0);
        if (rank < THREADS) s_.items[rank] = input;
        __syncthreads();
        int n = num_valid < THREADS ? num_valid : THREADS;
        T total = s_.items[0];
        for (int k = 1; k < n; k++) total = op(total, s_.items[k]);
        __syncthreads();
        return total;
    }

private:
    TempStorage& s_;
    static TempStorage& own() {
        __shared__ TempStorage storage;
        return storage;
    }
};

enum BlockScanAlgorithm { BLOCK_SCAN_RAKING, BLOCK_SCAN_RAKING_MEMOIZE, BLOCK_SCAN_WARP_SCANS };

template <typename T, int BLOCK_DIM_X, BlockScanAlgorithm ALGORITHM = BLOCK_SCAN_RAKING,
          int BLOCK_DIM_Y = 1, int BLOCK_DIM_Z = 1, int LEGACY_PTX_ARCH = 0>
class BlockScan {
public:
    enum { THREADS = BLOCK_DIM_X * BLOCK_DIM_Y * BLOCK_DIM_Z };
    struct TempStorage { T items[THREADS]; };

    explicit BlockScan(TempStorage& storage) : s_(storage) {}
    BlockScan() : s_(own()) {}

    void ExclusiveSum(T input, T& output) { T total; Scan(input, output, total, cub::Sum(), false, T()); }
    void ExclusiveSum(T input, T& output, T& block_aggregate) {
        Scan(input, output, block_aggregate, cub::Sum(), false, T());
    }
    void InclusiveSum(T input, T& output) { T total; Scan(input, output, total, cub::Sum(), true, T()); }
    void InclusiveSum(T input, T& output, T& block_aggregate) {
        Scan(input, output, block_aggregate, cub::Sum(), true, T());
    }
    template <typename Op> void ExclusiveScan(T input, T& output, T initial_value, Op op) {
        T total;
        Scan(input, output, total, op, false, initial_value);
    }
    template <typename Op> void ExclusiveScan(T input, T& output, T initial_value, Op op, T& block_aggregate) {
        Scan(input, output, block_aggregate, op, false, initial_value);
    }
    template <typename Op> void InclusiveScan(T input, T& output, Op op) {
        T total;
        Scan(input, output, total, op, true, T());
    }
    template <typename Op> void InclusiveScan(T input, T& output, Op op, T& block_aggregate) {
        Scan(input, output, block_aggregate, op, true, T());
    }

private:
    // exclusive: initial folded with the inputs of the ranks before this one (initial alone at
    // rank 0); inclusive: the inputs up to and with this rank. The aggregate: all the inputs.
    template <typename Op> void Scan(T input, T& output, T& aggregate, Op op, bool inclusive, T initial) {
        int rank = (int)threadIdx.x + (BLOCK_DIM_Y > 1 ? (int)threadIdx.y * BLOCK_DIM_X : 0)
                   + (BLOCK_DIM_Z > 1 ? (int)threadIdx.z * BLOCK_DIM_X * BLOCK_DIM_Y : 0);
        if (rank < THREADS) s_.items[rank] = input;
        __syncthreads();
        T running = inclusive ? s_.items[0] : initial;
        for (int k = inclusive ? 1 : 0; k < (inclusive ? rank + 1 : rank); k++) running = op(running, s_.items[k]);
        T total = s_.items[0];
        for (int k = 1; k < THREADS; k++) total = op(total, s_.items[k]);
        output = running;
        aggregate = total;
        __syncthreads();
    }

    TempStorage& s_;
    static TempStorage& own() {
        __shared__ TempStorage storage;
        return storage;
    }
};

}  // namespace cub

#endif
