"""Views of another element type in tile form (analysis.lift.typed_views): a kernel's buffer
parameter read through a view (``unsigned long* buf = (unsigned long*)ptr`` on a ``char* ptr``,
the way memory testers and byte codecs carve their argument) lifts as a map or a block reduction
with the view declared on the parameter's memory (``T.decl_buffer(..., data=ptr.data)``), where
one name reaches each parameter the kernel stores to; a ``__shared__`` array reached through one
view alone (``T* tile = reinterpret_cast<T*>(smem)``) is that view's array. Each lifted kernel is
run on the CPU target and compared with numpy, and lowered for sm_90a; a stored buffer reached by
two names and a shared array read as two types stay portable, saying why."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.lift.support import convert, factory, load, note

#: memtest's kernel_write: a byte buffer written as 64-bit words in a grid-stride loop (here each
#: word also mixes in what it held, so the input matters)
WORDS = """
    __global__ void write_words(char* ptr, unsigned long size, unsigned long p1) {
        unsigned long* buf = (unsigned long*)ptr;
        int idx = blockIdx.x * blockDim.x + threadIdx.x;
        unsigned long n = size / sizeof(unsigned long);
        int total = gridDim.x * blockDim.x;
        for (int i = idx; i < n; i += total)
            buf[i] = p1 ^ ((unsigned long)i << 33) ^ buf[i];
    }
"""

#: memtest's kernel5_move: each thread rotates its own 256-byte block through word views at whole
#: word offsets of the byte buffer (one view, two offsets)
BLOCKS = """
    #define BLOCK 256
    __global__ void rotate_blocks(char* ptr, unsigned long size) {
        int i, j;
        int idx = blockIdx.x * blockDim.x + threadIdx.x;
        unsigned long n = size / BLOCK;
        int total = gridDim.x * blockDim.x;
        unsigned int half = BLOCK / sizeof(unsigned int) / 2;
        for (i = idx; i < n; i += total) {
            unsigned int* lo = (unsigned int*)(ptr + i * BLOCK);
            unsigned int* hi = (unsigned int*)(ptr + i * BLOCK + BLOCK / 2);
            for (j = 0; j < half; j++)
                hi[j] = lo[j] + 3u * j;
            for (j = 0; j < half - 2; j++)
                lo[j + 2] = hi[j];
            for (j = 0; j < 2; j++)
                lo[j] = hi[half - 2 + j];
        }
    }
"""

#: dp4a's dot_product: the bytes of int words read through int8 views, summed by a shared tree
BYTE_DOT = """
    __global__ void byte_dot(const int* __restrict__ a, const int* __restrict__ b, int* __restrict__ d, int n) {
        __shared__ int s[128];
        int sum = 0;
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
            const signed char* a8 = (const signed char*)&a[i];
            const signed char* b8 = (const signed char*)&b[i];
            sum += a8[0] * b8[0] + a8[1] * b8[1] + a8[2] * b8[2] + a8[3] * b8[3];
        }
        s[threadIdx.x] = sum;
        __syncthreads();
        for (int st = blockDim.x / 2; st > 0; st >>= 1) {
            if (threadIdx.x < st) s[threadIdx.x] += s[threadIdx.x + st];
            __syncthreads();
        }
        if (threadIdx.x == 0) d[blockIdx.x] = s[0];
    }
"""

#: convolution1D's conv1d_tiled_caching: dynamic shared bytes read only as the template's type
#: (the cache a map forwards from the input)
CACHED = """
    template <typename T>
    __global__ void cached(const T* __restrict__ in, T* __restrict__ out, int n) {
        extern __shared__ unsigned char smem[];
        T* tile = reinterpret_cast<T*>(smem);
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        tile[threadIdx.x] = i < n ? in[i] : (T)0;
        __syncthreads();
        if (i < n) {
            T s = tile[threadIdx.x] * (T)2;
            if (threadIdx.x + 1 < blockDim.x && i + 1 < n) s += tile[threadIdx.x + 1];
            else if (i + 1 < n) s += in[i + 1];
            out[i] = s;
        }
    }
    void run(const float* x, float* y, int n) { cached<float><<<(n + 63) / 64, 64, 64 * sizeof(float)>>>(x, y, n); }
"""

#: a fixed shared byte array read only as words
STATIC_CACHED = """
    __global__ void words_cached(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, int n) {
        __shared__ unsigned char bytes[64 * 4];
        unsigned int* w = (unsigned int*)bytes;
        int i = blockIdx.x * 64 + threadIdx.x;
        w[threadIdx.x] = i < n ? in[i] : 0u;
        __syncthreads();
        if (i < n) out[i] = w[threadIdx.x] ^ 0x5a5a5a5au;
    }
"""


def _run(tmp_path, kernel: str, *args, grid, block, shared_bytes=0):
    from migrate.runtime.tilelang_side import load_module
    getattr(load_module(tmp_path / "out" / "k.py"), kernel)(*args, grid=grid, block=block,
                                                              shared_bytes=shared_bytes, target="c")


def test_a_byte_buffer_written_as_words_lifts_and_agrees_with_numpy(tmp_path):
    import torch
    kernels, text = convert(tmp_path, WORDS)
    k = kernels["write_words"]
    assert k["form"] == "tile", note(k)
    assert "ptr_uint64 = T.decl_buffer((ptr.shape[0] // 8,), T.uint64, data=ptr.data)" in factory(text, "write_words")
    raw = np.random.default_rng(3).integers(-128, 128, size=8 * 250 + 5, dtype=np.int8)
    ptr = torch.from_numpy(raw.copy())
    p1 = 0x0123456789ABCDEF
    _run(tmp_path, "write_words", ptr, 8 * 250, p1, grid=(3, 1, 1), block=(32, 1, 1))
    words = raw[:8 * 250].view(np.uint64)
    want = words ^ (np.arange(250, dtype=np.uint64) << np.uint64(33)) ^ np.uint64(p1)
    got = ptr.numpy()
    np.testing.assert_array_equal(got[:8 * 250].view(np.uint64), want)
    np.testing.assert_array_equal(got[8 * 250:], raw[8 * 250:])  # the bytes past the words untouched


def test_word_views_at_whole_word_offsets_lift_and_agree_with_numpy(tmp_path):
    import torch
    kernels, text = convert(tmp_path, BLOCKS)
    k = kernels["rotate_blocks"]
    assert k["form"] == "tile", note(k)
    assert factory(text, "rotate_blocks").count("T.decl_buffer(") == 1
    raw = np.random.default_rng(5).integers(-128, 128, size=256 * 10 + 7, dtype=np.int8)
    ptr = torch.from_numpy(raw.copy())
    _run(tmp_path, "rotate_blocks", ptr, 256 * 10, grid=(2, 1, 1), block=(4, 1, 1))
    want = raw.copy()
    for blk in want[:2560].view(np.uint32).reshape(10, 64):  # each block: lo = [0, 32), hi = [32, 64)
        lo, hi = blk[:32], blk[32:]
        hi[:] = lo + np.uint32(3) * np.arange(32, dtype=np.uint32)
        lo[2:] = hi[:30]
        lo[:2] = hi[30:]
    np.testing.assert_array_equal(ptr.numpy(), want)


def test_a_block_reduction_over_byte_views_lifts_and_agrees_with_numpy(tmp_path):
    import torch
    kernels, text = convert(tmp_path, BYTE_DOT)
    k = kernels["byte_dot"]
    assert k["form"] == "tile", note(k)
    body = factory(text, "byte_dot")
    assert "a_int8 = T.decl_buffer((a.shape[0] * 4,), T.int8, data=a.data)" in body and "T.reduce_sum" in body
    rng = np.random.default_rng(7)
    a = rng.integers(-2 ** 31, 2 ** 31, size=1000, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2 ** 31, 2 ** 31, size=1000, dtype=np.int64).astype(np.int32)
    d = torch.full((4,), -777, dtype=torch.int32)  # poisoned
    _run(tmp_path, "byte_dot", torch.from_numpy(a), torch.from_numpy(b), d, 1000, grid=(4, 1, 1), block=(128, 1, 1))
    prods = (a.view(np.int8).astype(np.int64) * b.view(np.int8).astype(np.int64)).reshape(1000, 4).sum(axis=1)
    lanes = np.arange(1000) % 512 // 128  # the block whose thread takes element i
    want = np.array([prods[lanes == blk].sum() for blk in range(4)], dtype=np.int64).astype(np.int32)
    np.testing.assert_array_equal(d.numpy(), want)


def test_dynamic_shared_bytes_read_as_the_template_type_are_forwarded(tmp_path):
    import torch
    kernels, text = convert(tmp_path, CACHED)
    (name,) = kernels
    k = kernels[name]
    assert k["form"] == "tile", note(k)
    body = factory(text, name)
    assert "alloc_shared" not in body and "smem" not in body, body
    x = np.random.default_rng(11).uniform(-1.0, 1.0, size=1000).astype(np.float32)
    y = torch.full((1000,), float("nan"), dtype=torch.float32)  # poisoned
    _run(tmp_path, name, torch.from_numpy(x), y, 1000, grid=(16, 1, 1), block=(64, 1, 1), shared_bytes=256)
    want = 2 * x.astype(np.float64)
    want[:-1] += x[1:]
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-6, atol=1e-6)


def test_a_fixed_shared_byte_array_read_as_words_is_forwarded(tmp_path):
    import torch
    kernels, text = convert(tmp_path, STATIC_CACHED)
    k = kernels["words_cached"]
    assert k["form"] == "tile", note(k)
    x = np.random.default_rng(13).integers(0, 2 ** 32, size=300, dtype=np.uint64).astype(np.uint32)
    ys = torch.full((300,), 0xDEADBEEF, dtype=torch.uint32)  # poisoned
    _run(tmp_path, "words_cached", torch.from_numpy(x), ys, 300, grid=(5, 1, 1), block=(64, 1, 1))
    np.testing.assert_array_equal(ys.numpy(), x ^ np.uint32(0x5A5A5A5A))


@pytest.mark.parametrize("source, kernel, grid, block", [
    (WORDS, "WRITE_WORDS", (3, 1, 1), (32, 1, 1)),
    (BYTE_DOT, "BYTE_DOT", (4, 1, 1), (128, 1, 1)),
])
def test_the_views_lower_for_sm90(tmp_path, source, kernel, grid, block):
    """TileLang's tile passes (layout inference, the lowering of tile ops, vectorisation of the
    full tile) take a buffer declared on a parameter's data with another dtype."""
    from tests.lowering import lower_sm90
    convert(tmp_path, source)
    src = lower_sm90(getattr(load(tmp_path / "out" / "k.py"), kernel), grid, block)
    assert "__global__" in src


# -- refusals --------------------------------------------------------------------------------------

#: lzss's decompressKernel: the output stored both as elements and through a byte view
TWO_NAMES = """
    __global__ void unpack(int* out, const unsigned char* __restrict__ src, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            out[i] = 0;
            unsigned char* b = (unsigned char*)&out[i];
            b[i % 4] = src[i];
        }
    }
"""


def test_a_stored_buffer_reached_by_two_names_stays_portable(tmp_path):
    kernels, _ = convert(tmp_path, TWO_NAMES)
    k = kernels["unpack"]
    assert k["form"] == "portable"
    assert "buffer 'out' is stored to and reached as 'out' and 'out_uint8'" in note(k), note(k)


#: tpacf's histoKernel: shared bytes zeroed as words, counted as bytes
TWO_TYPES = """
    __global__ void counts(const unsigned char* __restrict__ x, unsigned int* __restrict__ out) {
        __shared__ unsigned char h[256];
        ((unsigned int*)h)[threadIdx.x] = 0;
        __syncthreads();
        h[threadIdx.x * 4] = x[blockIdx.x * 64 + threadIdx.x];
        __syncthreads();
        out[blockIdx.x * 64 + threadIdx.x] = ((unsigned int*)h)[threadIdx.x];
    }
"""


def test_a_shared_array_read_as_two_types_stays_portable(tmp_path):
    kernels, _ = convert(tmp_path, TWO_TYPES)
    k = kernels["counts"]
    assert k["form"] == "portable"
    assert "shared array 'h' is also read as uint32" in note(k), note(k)
