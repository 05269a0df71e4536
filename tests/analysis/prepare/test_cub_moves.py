"""CUB loads, stores and exchanges (analysis.prepare.cub_moves): ``cub::BlockLoad`` /
``BlockStore`` of each algorithm (with and without a count of valid items, a default for the
others), ``BlockExchange`` and ``WarpExchange`` as the pool's programs use them (typedefs in a
kernel template of the block size, a grid-stride loop over segments, an array of warp storages)
become loops over a thread's items; each migrated kernel runs on the CPU (TileLang's C target)
and is compared with numpy's arrangement of the same items. What is not modelled is named."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """
#include <cub/cub.cuh>

// a thread's items as loaded, each tagged with its index k: the arrangement shows in the output
template <int BLOCK, int IPT>
__global__ void direct_direct(const float* __restrict__ x, float* __restrict__ y, int n) {
    typedef cub::BlockLoad<float, BLOCK, IPT, cub::BLOCK_LOAD_DIRECT> LoadT;
    typedef cub::BlockStore<float, BLOCK, IPT, cub::BLOCK_STORE_DIRECT> StoreT;
    __shared__ typename LoadT::TempStorage load_storage;
    __shared__ typename StoreT::TempStorage store_storage;
    float items[IPT];
    for (int i = blockIdx.x * BLOCK * IPT; i < n; i += gridDim.x * BLOCK * IPT) {
        int valid = n - i < BLOCK * IPT ? n - i : BLOCK * IPT;
        LoadT(load_storage).Load(&(x[i]), items, valid, -7.0f);
        for (int k = 0; k < IPT; k++) items[k] = 2.0f * items[k] + 100.0f * k;
        StoreT(store_storage).Store(&(y[i]), items, valid);
        __syncthreads();
    }
}

template <int BLOCK, int IPT>
__global__ void striped_direct(const float* __restrict__ x, float* __restrict__ y, int n) {
    using LoadT = cub::BlockLoad<float, BLOCK, IPT, cub::BLOCK_LOAD_STRIPED>;
    typedef cub::BlockStore<float, BLOCK, IPT, cub::BLOCK_STORE_DIRECT> StoreT;
    __shared__ typename LoadT::TempStorage load_storage;
    __shared__ typename StoreT::TempStorage store_storage;
    float items[IPT];
    for (int i = blockIdx.x * BLOCK * IPT; i < n; i += gridDim.x * BLOCK * IPT) {
        int valid = n - i < BLOCK * IPT ? n - i : BLOCK * IPT;
        LoadT(load_storage).Load(&(x[i]), items, valid, -7.0f);
        for (int k = 0; k < IPT; k++) items[k] = 2.0f * items[k] + 100.0f * k;
        StoreT(store_storage).Store(&(y[i]), items, valid);
        __syncthreads();
    }
}

template <int BLOCK, int IPT>
__global__ void vectorize_striped(const float* __restrict__ x, float* __restrict__ y, int n) {
    using LoadT = cub::BlockLoad<float, BLOCK, IPT, cub::BLOCK_LOAD_VECTORIZE>;
    typedef cub::BlockStore<float, BLOCK, IPT, cub::BLOCK_STORE_STRIPED> StoreT;
    __shared__ typename LoadT::TempStorage load_storage;
    __shared__ typename StoreT::TempStorage store_storage;
    float items[IPT];
    for (int i = blockIdx.x * BLOCK * IPT; i < n; i += gridDim.x * BLOCK * IPT) {
        int valid = n - i < BLOCK * IPT ? n - i : BLOCK * IPT;
        LoadT(load_storage).Load(&(x[i]), items, valid, -7.0f);
        for (int k = 0; k < IPT; k++) items[k] = 2.0f * items[k] + 100.0f * k;
        StoreT(store_storage).Store(&(y[i]), items, valid);
        __syncthreads();
    }
}

template <int BLOCK, int IPT>
__global__ void transpose_warp_transpose(const float* __restrict__ x, float* __restrict__ y, int n) {
    using LoadT = cub::BlockLoad<float, BLOCK, IPT, cub::BLOCK_LOAD_TRANSPOSE>;
    typedef cub::BlockStore<float, BLOCK, IPT, cub::BLOCK_STORE_WARP_TRANSPOSE> StoreT;
    __shared__ typename LoadT::TempStorage load_storage;
    __shared__ typename StoreT::TempStorage store_storage;
    float items[IPT];
    for (int i = blockIdx.x * BLOCK * IPT; i < n; i += gridDim.x * BLOCK * IPT) {
        int valid = n - i < BLOCK * IPT ? n - i : BLOCK * IPT;
        LoadT(load_storage).Load(&(x[i]), items, valid, -7.0f);
        for (int k = 0; k < IPT; k++) items[k] = 2.0f * items[k] + 100.0f * k;
        StoreT(store_storage).Store(&(y[i]), items, valid);
        __syncthreads();
    }
}

template <int BLOCK, int IPT>
__global__ void warp_transpose_transpose(const float* __restrict__ x, float* __restrict__ y, int n) {
    using LoadT = cub::BlockLoad<float, BLOCK, IPT, cub::BLOCK_LOAD_WARP_TRANSPOSE>;
    typedef cub::BlockStore<float, BLOCK, IPT, cub::BLOCK_STORE_TRANSPOSE> StoreT;
    __shared__ typename LoadT::TempStorage load_storage;
    __shared__ typename StoreT::TempStorage store_storage;
    float items[IPT];
    for (int i = blockIdx.x * BLOCK * IPT; i < n; i += gridDim.x * BLOCK * IPT) {
        int valid = n - i < BLOCK * IPT ? n - i : BLOCK * IPT;
        LoadT(load_storage).Load(&(x[i]), items, valid, -7.0f);
        for (int k = 0; k < IPT; k++) items[k] = 2.0f * items[k] + 100.0f * k;
        StoreT(store_storage).Store(&(y[i]), items, valid);
        __syncthreads();
    }
}

#define THREADS 64
__global__ void exchange(const int* __restrict__ x, int* __restrict__ y) {
    typedef cub::BlockExchange<int, THREADS, 4> Exchange;
    __shared__ typename Exchange::TempStorage temp_storage;
    int items[4];
    cub::BlockLoad<int, THREADS, 4>().Load(x + blockIdx.x * THREADS * 4, items);
    Exchange(temp_storage).BlockedToStriped(items, items);
    cub::BlockStore<int, THREADS, 4>().Store(y + blockIdx.x * THREADS * 4, items);
}

__global__ void reverse(const int* __restrict__ x, int* __restrict__ y) {
    typedef cub::BlockExchange<int, THREADS, 3> Exchange;
    __shared__ typename Exchange::TempStorage temp_storage;
    int items[3], ranks[3], out[3];
    for (int k = 0; k < 3; k++) {
        items[k] = x[blockIdx.x * THREADS * 3 + threadIdx.x * 3 + k];
        ranks[k] = THREADS * 3 - 1 - (threadIdx.x * 3 + k);
    }
    Exchange(temp_storage).ScatterToStriped(items, out, ranks);
    for (int k = 0; k < 3; k++) y[blockIdx.x * THREADS * 3 + k * THREADS + threadIdx.x] = out[k];
}

constexpr int ipt = 4;
template <int BLOCK_SIZE>
__global__ void warp_exchange(const int* __restrict__ x, int* __restrict__ y, int n) {
    constexpr int warps = BLOCK_SIZE / 16;
    typedef cub::WarpExchange<int, ipt, 16> WarpExchangeT;
    typedef cub::BlockLoad<int, BLOCK_SIZE, ipt> Load;
    typedef cub::BlockStore<int, BLOCK_SIZE, ipt> Store;
    __shared__ typename WarpExchangeT::TempStorage temp_storage[warps];
    __shared__ typename Load::TempStorage load_storage;
    __shared__ typename Store::TempStorage store_storage;
    int items[ipt];
    int i = blockIdx.x * BLOCK_SIZE * ipt;
    Load(load_storage).Load(&(x[i]), items, n - i);
    WarpExchangeT(temp_storage[threadIdx.x / 16]).BlockedToStriped(items, items);
    Store(store_storage).Store(&(y[i]), items, n - i);
}

__global__ void no_storage(const int* __restrict__ x, int* __restrict__ y) {
    int items[4];
    cub::BlockLoad<int, THREADS, 4>().Load(x, items);
    cub::BlockExchange<int, THREADS, 4>().StripedToBlocked(items, items);
    cub::BlockStore<int, THREADS, 4>().Store(y, items);
}

int main() {
    float *x, *y; int *a, *b;
    direct_direct<32, 4><<<2, 32>>>(x, y, 379);
    striped_direct<32, 4><<<2, 32>>>(x, y, 379);
    vectorize_striped<64, 3><<<2, 64>>>(x, y, 571);
    transpose_warp_transpose<32, 4><<<2, 32>>>(x, y, 379);
    warp_transpose_transpose<64, 2><<<2, 64>>>(x, y, 379);
    exchange<<<2, THREADS>>>(a, b);
    reverse<<<2, THREADS>>>(a, b);
    warp_exchange<64><<<3, 64>>>(a, b, 704);
    no_storage<<<1, THREADS>>>(a, b);
    return 0;
}
"""

#: (kernel, its template arguments, the arrangement its load reads, the one its store writes)
ALGORITHMS = [
    ("direct_direct", ("32", "4"), "blocked", "blocked"),
    ("striped_direct", ("32", "4"), "striped", "blocked"),
    ("vectorize_striped", ("64", "3"), "blocked", "striped"),
    ("transpose_warp_transpose", ("32", "4"), "blocked", "blocked"),
    ("warp_transpose_transpose", ("64", "2"), "blocked", "blocked"),
]


def _positions(arrangement: str, threads: int, ipt: int) -> np.ndarray:
    """[rank, k] -> the position in a segment of item k of thread rank."""
    rank, k = np.meshgrid(np.arange(threads), np.arange(ipt), indexing="ij")
    return rank * ipt + k if arrangement == "blocked" else k * threads + rank


def _tagged_copy(x, n, threads, ipt, load, store, y0):
    """numpy: each segment's items gathered by ``load``'s arrangement (``-7`` past ``n``),
    tagged ``2 v + 100 k`` and scattered by ``store``'s (positions past ``n`` untouched)."""
    y = y0.copy()
    seg = threads * ipt
    for start in range(0, n, seg):
        src, dst = start + _positions(load, threads, ipt), start + _positions(store, threads, ipt)
        items = np.where(src < n, x[np.minimum(src, len(x) - 1)], -7.0)
        value = 2 * items + 100 * np.arange(ipt)[None, :]
        keep = dst < n
        y[dst[keep]] = value[keep]
    return y


@pytest.fixture(scope="module")
def migrated(tmp_path_factory):
    pytest.importorskip("tilelang")
    tmp = tmp_path_factory.mktemp("cub_moves")
    out = program_converted(tmp, PROGRAM, "moves.cu", status=1)  # no_storage is refused
    import json
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    return module_of(out / "moves.py"), rows


@pytest.mark.parametrize("kernel, template, load, store", ALGORITHMS, ids=[a[0] for a in ALGORITHMS])
def test_each_algorithm_keeps_its_arrangement(migrated, kernel, template, load, store):
    mod, rows = migrated
    assert rows[kernel]["form"] not in ("hybrid", "unsupported"), rows[kernel]["diagnostics"]
    threads, ipt = int(template[0]), int(template[1])
    n = 3 * threads * ipt - 5  # a partial last segment: the valid count and the default matter
    rng = np.random.default_rng(threads + ipt)
    x = rng.uniform(-4, 4, n).astype(np.float32)
    y = np.full(n, 12345.0, np.float32)
    want = _tagged_copy(x, n, threads, ipt, load, store, y)
    getattr(mod, kernel)(x, y, n, grid=2, block=threads, template=template, target="c")  # a grid-stride loop
    np.testing.assert_array_equal(y, want)


def test_block_exchange_blocked_to_striped(migrated):
    mod, rows = migrated
    assert rows["exchange"]["form"] not in ("hybrid", "unsupported"), rows["exchange"]["diagnostics"]
    x = np.random.default_rng(1).integers(-1000, 1000, 2 * 256).astype(np.int32)
    y = np.zeros_like(x)
    mod.exchange(x, y, grid=2, block=64, target="c")
    want = np.empty_like(x)
    for b in range(2):
        seg = x[b * 256:(b + 1) * 256]
        # thread r's items k are the segment's striped ones, stored back blocked
        want[b * 256:(b + 1) * 256] = seg[_positions("striped", 64, 4)].reshape(-1)
    np.testing.assert_array_equal(y, want)


def test_block_exchange_scatter_to_striped(migrated):
    mod, rows = migrated
    assert rows["reverse"]["form"] not in ("hybrid", "unsupported"), rows["reverse"]["diagnostics"]
    x = np.random.default_rng(2).integers(-1000, 1000, 2 * 192).astype(np.int32)
    y = np.zeros_like(x)
    mod.reverse(x, y, grid=2, block=64, target="c")
    want = np.concatenate([x[:192][::-1], x[192:][::-1]])  # each segment reversed
    np.testing.assert_array_equal(y, want)


def test_warp_exchange_per_warp_storage(migrated):
    mod, rows = migrated
    assert rows["warp_exchange"]["form"] not in ("hybrid", "unsupported"), rows["warp_exchange"]["diagnostics"]
    n = 704  # the last block's last warp has no valid items: the others are whole
    x = np.random.default_rng(3).integers(-1000, 1000, n).astype(np.int32)
    y = np.full(n, -1, np.int32)
    mod.warp_exchange(x, y, n, grid=3, block=64, template=("64",), target="c")
    want = np.empty_like(y)
    for start in range(0, n, 64):  # 16-thread logical warps of 4 items: 64 elements each
        # lane l gets the warp's striped items and stores them where its blocked ones were
        want[start:start + 64] = x[start:start + 64][_positions("striped", 16, 4)].reshape(-1)
    np.testing.assert_array_equal(y, want)


def test_an_exchange_without_storage_is_named(migrated):
    _mod, rows = migrated
    row = rows["no_storage"]
    assert row["form"] in ("hybrid", "unsupported")
    assert any(d["code"] == "M3001" and "cub::BlockExchange::StripedToBlocked made other than on a __shared__ "
               "TempStorage" in d["message"] for d in row["diagnostics"]), row["diagnostics"]
