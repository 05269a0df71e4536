"""A kernel's buffer parameter read as another element type (analysis.prepare.pointer_views.
TypedViews.of_param), the way memory testers and byte-buffer kernels carve their argument:
``unsigned long* buf = (unsigned long*)ptr;`` on a ``char* ptr``, ``(unsigned int*)(ptr + i *
BLOCK)`` from an offset that is a whole number of words. Each is a ``T.decl_buffer`` over the
parameter's memory with the other dtype and the extent in whole elements; checked equal to the
CUDA (compiled with g++) on the CPU. An offset that is no whole number of the view's elements is
refused with a diagnostic."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

WORDS = """
#include <cuda_runtime.h>
#define WORD unsigned long
__global__ void fill_words(char* ptr, unsigned long size, WORD p1)
{
  WORD* buf = (WORD*)ptr;
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long n = size / sizeof(WORD);
  int total = gridDim.x * blockDim.x;
  for (int i = idx; i < n; i += total)
    buf[i] = p1 ^ ((WORD)i << 33) ^ buf[i];
}
"""

WORDS_SPEC = spec_kernel("fill_words", (3, 1, 1), (32, 1, 1), "exact",
                         spec_buffer("ptr", "int8", 1003, "inout", -128, 127),
                         spec_scalar("size", "uint64", 1000),
                         spec_scalar("p1", "uint64", 123456789012345))


def test_a_byte_buffer_written_as_64_bit_words(tmp_path):
    out, (k,) = converted(tmp_path, WORDS, WORDS_SPEC)
    # a map over the words, the view declared in tile form as in portable (analysis.lift.typed_views)
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "ptr_uint64 = T.decl_buffer((ptr.shape[0] // 8,), T.uint64, data=ptr.data)" in text
    assert "ptr_uint64[i]" in text


BLOCKS = """
#include <cuda_runtime.h>
#define BLOCK (64*4)
__global__ void rotate_blocks(char* ptr, unsigned long size)
{
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned long n = size / BLOCK;
  unsigned int half = BLOCK / sizeof(unsigned int) / 2;
  for (int i = idx; i < n; i += gridDim.x * blockDim.x) {
    unsigned int* lo = (unsigned int*)(ptr + i * BLOCK);
    unsigned int* hi = (unsigned int*)(ptr + i * BLOCK + BLOCK / 2);
    for (int j = 0; j < half; j++)
      hi[j] = lo[j] + 3u * j;
    for (int j = 0; j < half - 2; j++)
      lo[j + 2] = hi[j];
    for (int j = 0; j < 2; j++)
      lo[j] = hi[half - 2 + j];
  }
}
"""

BLOCKS_SPEC = spec_kernel("rotate_blocks", (2, 1, 1), (4, 1, 1), "exact",
                          spec_buffer("ptr", "int8", 256 * 10 + 7, "inout", -128, 127),
                          spec_scalar("size", "uint64", 256 * 10))


def test_word_views_from_whole_word_offsets_of_a_byte_buffer(tmp_path):
    out, (k,) = converted(tmp_path, BLOCKS, BLOCKS_SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert text.count("T.decl_buffer(") == 1  # lo and hi: one view, two offsets in its words
    assert "ptr_uint32 = T.decl_buffer((ptr.shape[0] // 4,), T.uint32, data=ptr.data)" in text


MISALIGNED = """
#include <cuda_runtime.h>
__global__ void odd_words(char* ptr, int n, int k)
{
  unsigned int* buf = (unsigned int*)(ptr + 2 * k + 1);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = i;
}
"""


def test_a_view_from_an_offset_that_is_no_whole_number_of_words_is_refused(tmp_path):
    _out, (k,) = converted(tmp_path, MISALIGNED, expect_ok=False)
    assert k["form"] in ("hybrid", "unsupported")
    assert "not a whole number of uint32 elements" in k["reason"], k["reason"]


#: a template kernel carving its dynamic shared ints into an int array and, after blockDim.y rows
#: of 32 ints, an array of its element type (the way CSR SpMM kernels stage columns and values)
STAGED = """
#include <cuda_runtime.h>
template <typename T>
__global__ void staged(const int* __restrict__ cols, const T* __restrict__ vals, T* __restrict__ out, int n)
{
  extern __shared__ int sh[];
  int* col_sh = sh;
  T* val_sh = (T*)&sh[(blockDim.y << 5)];
  int t = (threadIdx.y << 5) + threadIdx.x;
  int i = blockIdx.x * blockDim.x * blockDim.y + t;
  col_sh[t] = i < n ? cols[i] : 0;
  val_sh[t] = i < n ? vals[i] : (T)0;
  __syncthreads();
  int o = (t + 5) % (blockDim.x * blockDim.y);
  if (i < n) out[i] = val_sh[o] * (T)col_sh[t] + val_sh[t];
}

int main() {
  int* c; float* vf; float* of; double* vd; double* od;
  staged<float><<<3, dim3(32, 2), 2 * 32 * 4 + 2 * 32 * sizeof(float)>>>(c, vf, of, 150);
  staged<double><<<3, dim3(32, 2), 2 * 32 * 4 + 2 * 32 * sizeof(double)>>>(c, vd, od, 150);
}
"""


def _staged_spec(ctype: str, dtype: str, size: int, tolerance: str) -> str:
    return spec_kernel("staged", (3, 1, 1), (32, 2, 1), tolerance,
                       spec_buffer("cols", "int32", 192, "in", -50, 50),
                       spec_buffer("vals", dtype, 192, "in", -2.0, 2.0),
                       spec_buffer("out", dtype, 192, "inout", -9.0, 9.0),
                       spec_scalar("n", "int32", 150), template=ctype).replace(
        "block = [32, 2, 1]\n", f"block = [32, 2, 1]\nshared_bytes = {2 * 32 * 4 + 2 * 32 * size}\n"
    ).replace('name = "staged"\n', f'name = "staged"\nid = "staged_{ctype}"\n')


def test_a_template_array_after_blockdim_rows_of_a_dynamic_int_array(tmp_path):
    """``(T*)&sh[blockDim.y << 5]``: ``blockDim.y * 128`` bytes on, a whole number of 16 bytes,
    so of any element size: the view's index counts ``T``'s from there."""
    out, kernels = converted(tmp_path, STAGED, _staged_spec("float", "float32", 4, "fp32")
                             + _staged_spec("double", "float64", 8, "fp64"))
    assert {k["form"] for k in kernels} == {"portable"}, [k["reason"] for k in kernels]
    assert all(k["check"]["status"] == "pass" for k in kernels), [k["check"]["message"] for k in kernels]
    text = (out / "k.py").read_text()
    assert "// cuda_math.size_of(T_)" in text



#: codes packed in int4 words read as 16-bit halves of them (the way quantized mat-vec kernels
#: decode their codebook indices): ``reinterpret_cast<const uint16_t*>(&A[i])`` of an ``int4*``
CODES = """
#include <cuda_runtime.h>
#include <stdint.h>
__global__ void codes(const int4* __restrict__ A, unsigned* out, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    const uint16_t* enc = reinterpret_cast<const uint16_t*>(&A[i]);
    unsigned s = 0;
    for (int j = 0; j < 8; j++) s += enc[j] * (j + 1);
    out[i] = s ^ (unsigned)A[i].w;
  }
}
"""

CODES_SPEC = spec_kernel("codes", (2, 1, 1), (32, 1, 1), "exact",
                         spec_buffer("A", "int32", 4 * 64, "in", -40000, 40000),
                         spec_buffer("out", "uint32", 64, "out"),
                         spec_scalar("n", "int32", 60))


def test_the_halves_of_a_vector_buffers_words(tmp_path):
    """The vectors pass leaves ``(const uint16_t*)(A + i * 4)`` over the int4 buffer's words;
    the pointer views read it as a view of ``A`` in uint16 (two per word, so ``i * 4 * 2``)."""
    out, (k,) = converted(tmp_path, CODES, CODES_SPEC)
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "A_uint16 = T.decl_buffer((A.shape[0] * 4 // 2,), T.uint16, data=A.data)" in text


ADDRESSES = """
#include <cuda_runtime.h>
__global__ void own_addresses(char* ptr, unsigned long size)
{
  unsigned long* buf = (unsigned long*)ptr;
  unsigned long n = size / sizeof(unsigned long);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    buf[i] = (unsigned long)(buf + i);
}

__global__ void check_words(const char* ptr, unsigned long size, unsigned long p1, unsigned long* where)
{
  unsigned long* buf = (unsigned long*)ptr;
  unsigned long n = size / sizeof(unsigned long);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    if (buf[i] != p1) where[0] = (unsigned long)&buf[i];
}
"""


def test_a_view_whose_addresses_are_data_is_refused_as_such(tmp_path):
    """A word's own address stored as data (a memory tester's pattern) has no TileLang form: the
    reason names the address, not the reinterpretation (which has a view now)."""
    _out, kernels = converted(tmp_path, ADDRESSES, expect_ok=False)
    reasons = {k["kernel"]: (k["form"], k["reason"]) for k in kernels}
    assert reasons["own_addresses"] == ("hybrid", "local pointer 'buf' is not a fixed view of a buffer "
                                                       "parameter: its address is used as an integer")
    form, reason = reasons["check_words"]
    assert form == "hybrid" and "(an address used as an integer)" in reason, reason
