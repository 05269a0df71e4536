"""Shared memory read as another element type (analysis.prepare.pointer_views.TypedViews), the
way block-matching, histogram and filter kernels carve it: ``int* indices = (int*)&scores[W]``
on a ``__shared__ float`` array, ``((unsigned*)s_hist)[t]`` on a byte array, ``extern
__shared__ char smem[]`` split into a float and an int array. Each is a ``T.view`` of the
array's memory (the same bytes, as in the CUDA); checked equal on the CPU."""
from __future__ import annotations

from migrate.analysis.prepare.pointer_views import pointer_aliases
from migrate.ir import model as m
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar

BEST = """
#include <cuda_runtime.h>
#define W 64
__global__ void best_of_block(const float* score, float* best, int* where, int n) {
  __shared__ float buffer[2 * W];
  float* scores = (float*)buffer;
  int* indices = (int*)&scores[W];
  int t = threadIdx.x;
  int i = blockIdx.x * W + t;
  scores[t] = i < n ? score[i] : -1e30f;
  indices[t] = i;
  __syncthreads();
  for (int s = W / 2; s > 0; s >>= 1) {
    if (t < s && scores[t + s] > scores[t]) {
      scores[t] = scores[t + s];
      indices[t] = indices[t + s];
    }
    __syncthreads();
  }
  if (t == 0) {
    best[blockIdx.x] = scores[0];
    where[blockIdx.x] = indices[0];
  }
}
"""

BEST_SPEC = spec_kernel("best_of_block", (4, 1, 1), (64, 1, 1), "fp32",
                        spec_buffer("score", "float32", 250, "in", -10.0, 10.0),
                        spec_buffer("best", "float32", 4, "out"),
                        spec_buffer("where", "int32", 4, "out"),
                        spec_scalar("n", "int32", 250))


def test_a_float_array_holds_an_int_array_after_it(tmp_path):
    out, (k,) = converted(tmp_path, BEST, BEST_SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "buffer_int32 = T.view(buffer, (128,), T.int32)" in text
    assert "buffer_int32[64 + " in text  # indices[t]: W ints on, in the view's elements
    assert any("also read as int32" in d["message"] for d in k["diagnostics"])  # kept out of the lifts


HIST = """
#include <cuda_runtime.h>
__global__ void byte_hist(const unsigned char* in, unsigned* out, int n) {
  __shared__ unsigned char s_hist[256];
  int t = threadIdx.x;
  if (t < 64) ((unsigned int*)s_hist)[t] = 0x01010101u * (t & 3);
  __syncthreads();
  int i = blockIdx.x * blockDim.x + t;
  if (t == 0) s_hist[in[blockIdx.x] & 255] = 7;
  __syncthreads();
  if (t < 64) out[blockIdx.x * 64 + t] = ((unsigned int*)s_hist)[t];
  if (i < n) out[4 * 64 + i] = *((unsigned short*)&s_hist[2 * (t & 127)]);
}
"""

HIST_SPEC = spec_kernel("byte_hist", (4, 1, 1), (128, 1, 1), "exact",
                        spec_buffer("in", "uint8", 512, "in", 0, 255),
                        spec_buffer("out", "uint32", 4 * 64 + 512, "out"),
                        spec_scalar("n", "int32", 500))


def test_a_byte_array_cleared_and_read_as_words(tmp_path):
    out, (k,) = converted(tmp_path, HIST, HIST_SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "T.view(s_hist, (64,), T.uint32)" in text and "T.view(s_hist, (128,), T.uint16)" in text


CARVE = """
#include <cuda_runtime.h>
__global__ void carve(const float* x, const int* k, float* y, int n) {
  extern __shared__ char smem[];
  float* xs = reinterpret_cast<float*>(smem);
  int* ks = reinterpret_cast<int*>(&xs[blockDim.x]);
  int t = threadIdx.x;
  int i = blockIdx.x * blockDim.x + t;
  xs[t] = i < n ? x[i] : 0.0f;
  ks[t] = i < n ? k[i] : 0;
  __syncthreads();
  int o = (t + 1) % blockDim.x;
  if (i < n) y[i] = xs[o] * ks[o] + xs[t];
}
"""

CARVE_SPEC = spec_kernel("carve", (3, 1, 1), (64, 1, 1), "fp32",
                         spec_buffer("x", "float32", 190, "in", -1.0, 1.0),
                         spec_buffer("k", "int32", 190, "in", -5, 5),
                         spec_buffer("y", "float32", 190, "out"),
                         spec_scalar("n", "int32", 190)).replace("block = [64, 1, 1]\n",
                                                                 "block = [64, 1, 1]\nshared_bytes = 512\n")


def test_dynamic_shared_bytes_carved_into_typed_arrays(tmp_path):
    out, (k,) = converted(tmp_path, CARVE, CARVE_SPEC)
    assert k["form"] == "portable" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    text = (out / "k.py").read_text()
    assert "smem_float32 = T.view(smem, (shared_bytes // 1 * 1 // 4,), T.float32)" in text


def _kernel(body: str, shared: m.VarDecl) -> m.Function:
    span = shared.span
    return m.Function("k", "global", (), m.Scalar("void"), m.Block((m.DeclStmt((shared,), span),) + body, span),
                      (), (), (), (), span)


def test_a_view_whose_size_does_not_divide_the_array_is_not_made():
    span = m.Span("k.cu", 3, 1, 3, 9)
    shared = m.VarDecl("s", m.Array(m.Scalar("uint8"), 6), "shared", False, None, span)
    ref = m.Ref("s", "shared", shared.type, span)
    address = m.Unary("&", m.Index(ref, m.IntLit(2, "2", m.Scalar("int32"), span), m.Scalar("uint8"), span),
                      False, m.Pointer(m.Scalar("uint8")), span)
    cast = m.Cast(m.Pointer(m.Scalar("int32")), address, "c", m.Pointer(m.Scalar("int32")), span)
    p = m.VarDecl("p", m.Pointer(m.Scalar("int32")), "local", False, cast, span)
    _fn, aliases, unresolved = pointer_aliases(_kernel((m.DeclStmt((p,), span),), shared))
    assert [d.name for d in unresolved] == ["p"] and not aliases  # 6 bytes are no whole number of ints


#: a filter template carving its dynamic shared bytes into arrays of its own element type, one
#: after another (the way second-order-section filters lay out outputs, states and coefficients)
SECTIONS = """
#include <cuda_runtime.h>
template <typename T>
__global__ void sections(const T* __restrict__ coef, const T* __restrict__ x, T* __restrict__ y, int n_sec)
{
    extern __shared__ char smem[];
    T* s_out = reinterpret_cast<T*>(smem);
    T* s_coef = reinterpret_cast<T*>(&s_out[n_sec]);
    int t = threadIdx.x;
    int i = blockIdx.x * blockDim.x + t;
    s_out[t] = x[i];
    s_coef[t] = coef[t % n_sec];
    __syncthreads();
    int o = (t + 1) % blockDim.x;
    y[i] = s_out[o] * s_coef[t] + s_coef[o];
}

int main() {
    float *cf, *xf, *yf;
    double *cd, *xd, *yd;
    sections<float><<<2, 32, 32 * 2 * sizeof(float)>>>(cf, xf, yf, 32);
    sections<double><<<2, 32, 32 * 2 * sizeof(double)>>>(cd, xd, yd, 32);
}
"""


def _sections_spec(ctype: str, dtype: str, tolerance: str) -> str:
    return spec_kernel("sections", (2, 1, 1), (32, 1, 1), tolerance,
                       spec_buffer("coef", dtype, 32, "in", -2.0, 2.0),
                       spec_buffer("x", dtype, 64, "in", -1.0, 1.0),
                       spec_buffer("y", dtype, 64, "out"),
                       spec_scalar("n_sec", "int32", 32), template=ctype).replace(
        "block = [32, 1, 1]\n", f"block = [32, 1, 1]\nshared_bytes = {64 * (4 if ctype == 'float' else 8)}\n"
    ).replace('name = "sections"\n', f'name = "sections"\nid = "sections_{ctype}"\n')


SECTIONS_SPEC = _sections_spec("float", "float32", "fp32") + _sections_spec("double", "float64", "fp64")


def test_a_template_carves_dynamic_shared_bytes_into_its_element_type(tmp_path):
    out, kernels = converted(tmp_path, SECTIONS, SECTIONS_SPEC)
    assert {k["form"] for k in kernels} == {"portable"}
    assert all(k["check"]["status"] == "pass" for k in kernels), [k["check"]["message"] for k in kernels]
    text = (out / "k.py").read_text()
    # the view's length counts the instance's element size when the factory runs
    assert "smem_T = T.view(smem, (shared_bytes // 1 * 1 // (T.dtype(T_).bits // 8),), T_)" in text
    assert "smem_T[n_sec + " in text  # s_coef: n_sec elements of T on
