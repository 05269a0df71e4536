"""16-byte packs, the way LLM kernels move half-precision rows (``uint4 p =
reinterpret_cast<const uint4*>(row)[k]``, its eight halves worked on, the pack stored back whole),
stay one access each: the lane copies are one ``T.vectorized`` loop whose buffer index is spelled
as the multiple of 8 it is, so that TileLang makes one 16-byte load and store (``uint4``) as the
CUDA did. Checked: the module's text, its run on the CPU against numpy, and the sm_90a CUDA
TileLang writes for it (no GPU needed)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from tests.analysis.support import module_of, program_converted

PROGRAM = """#include <cuda_runtime.h>
#include <cuda_fp16.h>

__global__ void scale_packs(__half* __restrict__ out, const __half* __restrict__ in, float s, int rows, int cols) {
  const unsigned pack = 16 / sizeof(__half);
  unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
  unsigned per_row = cols / pack;
  if (g >= rows * per_row) return;
  unsigned r = g / per_row, k = g % per_row;
  const __half* row = in + r * cols;
  __half* orow = out + r * cols;
  uint4 p = reinterpret_cast<const uint4*>(row)[k];
  uint4 o;
  #pragma unroll
  for (unsigned j = 0; j < pack; ++j) {
    float v = __half2float(reinterpret_cast<const __half*>(&p)[j]);
    reinterpret_cast<__half*>(&o)[j] = __float2half(v * s + 1.0f);
  }
  reinterpret_cast<uint4*>(orow)[k] = o;
}

__global__ void copy_pairs(float2* __restrict__ dst, const float* __restrict__ src, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = reinterpret_cast<const float2*>(src)[i];
}

int main() {
  const int rows = 64, cols = 136;
  __half *a, *b;
  cudaMalloc(&a, rows * cols * sizeof(__half));
  cudaMalloc(&b, rows * cols * sizeof(__half));
  scale_packs<<<(rows * cols / 8 + 127) / 128, 128>>>(b, a, 0.5f, rows, cols);
  float2* d; float* s;
  cudaMalloc(&d, 300 * sizeof(float2));
  cudaMalloc(&s, 600 * sizeof(float));
  copy_pairs<<<3, 128>>>(d, s, 300);
  cudaDeviceSynchronize();
  return 0;
}
"""


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    pytest.importorskip("tilelang")
    return program_converted(tmp_path_factory.mktemp("packs"), PROGRAM, "k.cu")


def test_a_pack_is_one_vectorised_loop_on_an_aligned_index(converted):
    text = (converted / "k.py").read_text()
    # the load and the store of the pack: one loop over its eight lanes each, indexed from a multiple of 8
    assert len(re.findall(r"for x_lane in T\.vectorized\(8\):", text)) >= 2
    assert re.search(r"p\[x_lane\] = in_\[.*// 8 \* 8\)? \+ x_lane\]", text)
    assert re.search(r"out\[.*// 8 \* 8\)? \+ x_lane\] = o\[x_lane\]", text)
    assert not re.search(r"p\[[1-7]\] = ", text)  # no lane-by-lane copy left


def test_the_packs_run_on_the_cpu(converted):
    mod = module_of(converted / "k.py")
    rows, cols = 64, 136
    rng = np.random.default_rng(3)
    a = rng.uniform(-3.0, 3.0, rows * cols).astype(np.float16)
    b = np.full(rows * cols, np.nan, np.float16)
    mod.scale_packs(b, a, 0.5, rows, cols, grid=(rows * cols // 8 + 127) // 128, block=128, target="c")
    want = (a.astype(np.float32) * np.float32(0.5) + np.float32(1.0)).astype(np.float16)
    np.testing.assert_array_equal(b, want)
    src = rng.uniform(-1.0, 1.0, 600).astype(np.float32)
    dst = np.full(600, np.nan, np.float32)
    mod.copy_pairs(dst, src, 300, grid=3, block=128, target="c")
    np.testing.assert_array_equal(dst, src)


def test_the_packs_are_16_byte_accesses_on_sm90(converted):
    from tests.lowering import lower_sm90
    mod = module_of(converted / "k.py")
    source = lower_sm90(mod.KERNELS["scale_packs"], (9, 1, 1), (128, 1, 1))
    # one 16-byte load of the row's pack and one store of the result's
    assert len(re.findall(r"\*\(uint4\*\)\((in_|out) \+", source)) >= 2, source


#: packs staged into shared memory by a loop whose start is the thread's row (the way a matcher
#: stages its points): a loop around a lane loop that TileLang cannot bind per thread
STAGED = """#include <cuda_runtime.h>

__global__ void rotate_rows(float4* __restrict__ out, const float4* __restrict__ in) {
  __shared__ float4 buf[16 * 9];
  int ty = threadIdx.y, tx = threadIdx.x;
  for (int j = ty; j < 16; j += 16)
    buf[j * 9 + tx] = in[(blockIdx.x * 16 + j) * 8 + tx];
  __syncthreads();
  out[(blockIdx.x * 16 + ty) * 8 + tx] = buf[((ty + 1) % 16) * 9 + tx];
}

int main() {
  float4 *a, *b;
  cudaMalloc(&a, 4 * 16 * 8 * sizeof(float4));
  cudaMalloc(&b, 4 * 16 * 8 * sizeof(float4));
  rotate_rows<<<4, dim3(8, 16)>>>(b, a);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_a_lane_loop_inside_a_loop_started_per_thread_lowers_and_runs(tmp_path):
    pytest.importorskip("tilelang")
    from tests.lowering import lower_sm90
    out = program_converted(tmp_path, STAGED, "k.cu")
    text = (out / "k.py").read_text()
    assert "while j < 16:" in text and text.count("for x_lane in T.vectorized(4):") >= 2
    mod = module_of(out / "k.py")
    source = lower_sm90(mod.KERNELS["rotate_rows"], (4, 1, 1), (8, 16, 1))  # failed to lower as a T.serial loop
    assert re.search(r"\*\(float4\*\)\(", source) or re.search(r"\*\(uint4\*\)\(", source), source
    a = np.random.default_rng(9).uniform(-5.0, 5.0, (4, 16, 8, 4)).astype(np.float32)
    b = np.full_like(a, np.nan)
    mod.rotate_rows(b.reshape(-1), a.reshape(-1), grid=4, block=(8, 16), target="c")
    np.testing.assert_array_equal(b, np.roll(a, -1, axis=1))


#: a vector built of scalars (make_float4 of four loads from an odd start) and stored whole: only
#: the store is a vector access (its values packed first), so the loads stay lane by lane
#: (spelling their index as a multiple of 4 would read the wrong elements)
BUILT = """#include <cuda_runtime.h>

__global__ void gather_shifted(float4* __restrict__ out, const float* __restrict__ a, int n) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) {
    int i = 4 * k + 1;
    out[k] = make_float4(a[i], a[i + 1], a[i + 2], a[i + 3]);
  }
}

int main() {
  float4* o; float* a;
  cudaMalloc(&o, 200 * sizeof(float4));
  cudaMalloc(&a, 804 * sizeof(float));
  gather_shifted<<<2, 128>>>(o, a, 200);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_a_vector_built_of_scalars_is_stored_whole_and_loaded_lane_by_lane(tmp_path):
    pytest.importorskip("tilelang")
    from tests.lowering import lower_sm90
    out = program_converted(tmp_path, BUILT, "k.cu")
    text = (out / "k.py").read_text()
    assert re.search(r"x_pack\[1\] = a\[i \+ 1\]", text), text       # the loads as they are
    assert re.search(r"out\[.*// 4 \* 4 \+ x_lane\] = x_pack\[x_lane\]", text), text   # one store
    mod = module_of(out / "k.py")
    source = lower_sm90(mod.KERNELS["gather_shifted"], (2, 1, 1), (128, 1, 1))
    assert re.search(r"\*\(float4\*\)\(out \+", source), source
    a = np.random.default_rng(4).uniform(-1.0, 1.0, 804).astype(np.float32)
    o = np.full(800, np.nan, np.float32)
    mod.gather_shifted(o, a, 200, grid=2, block=128, target="c")
    np.testing.assert_array_equal(o, a[1:801])


def _marked_pack(count: int):
    """Lane copies ``p[j] = row[8 * k + j]`` of eight halves marked as one whole vector, the first
    ``count`` of them (a pass may leave fewer than it marked)."""
    from migrate.ir import model as m
    from migrate.ir.span import Span
    span = Span.point("k.cu", 3)
    half, i32 = m.Scalar("float16"), m.Scalar("int32")
    p = m.Ref("p", "local", m.Array(half, 8), span)
    row = m.Ref("row", "param", m.Pointer(half, True), span)
    k = m.Ref("k", "param", i32, span)

    def lit(v):
        return m.IntLit(v, str(v), i32, span)
    return [m.ExprStmt(m.Assign("=", m.Index(p, lit(j), half, span),
                                m.Index(row, m.Binary("+", m.Binary("*", k, lit(8), i32, span), lit(j), i32, span),
                                        half, span), half, span), span, lanes=8) for j in range(count)]


def test_the_printer_prints_a_whole_marked_run_as_one_loop_and_a_cut_one_lane_by_lane():
    from migrate.emit.printer import Scope, StmtPrinter
    printer = StmtPrinter(Scope(simt=True, buffers={"row"}))
    printer.block(_marked_pack(8))
    text = "\n".join(ln.text for ln in printer.lines)
    # the first lane's index as the multiple of 8 it is (a signed index divides as C does: truncdiv)
    assert "for x_lane in T.vectorized(8):" in text and "T.truncdiv(k * 8 + 0, 8) * 8 + x_lane]" in text, text
    printer = StmtPrinter(Scope(simt=True, buffers={"row"}))
    printer.block(_marked_pack(4))   # 4 halves are 8 bytes, yet the vector marked was 16
    text = "\n".join(ln.text for ln in printer.lines)
    assert "x_lane" not in text and text.count("p[") == 4, text


#: a particle read whole into a local and written back whole, built of its new fields (the way
#: rodrigues rotates its float4 points): one 16-byte load and one 16-byte store, as in the CUDA
ROTATE = """#include <cuda_runtime.h>

__global__ void spin(int n, float c, float s, float4* d) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float4 p = d[i];
  d[i] = {c * p.x - s * p.y, s * p.x + c * p.y, p.z, p.w + 1.0f};
}

int main() {
  float4* d;
  cudaMalloc(&d, 1000 * sizeof(float4));
  spin<<<4, 256>>>(1000, 0.6f, 0.8f, d);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_a_vector_local_is_loaded_and_stored_whole(tmp_path):
    pytest.importorskip("tilelang")
    from tests.lowering import lower_sm90
    out = program_converted(tmp_path, ROTATE, "k.cu")
    text = (out / "k.py").read_text()
    assert re.search(r"x_pack\[x_lane\] = d\[.*// 4 \* 4 \+ x_lane\]", text), text
    assert re.search(r"p_y = x_pack\[1\]", text), text
    mod = module_of(out / "k.py")
    source = lower_sm90(mod.KERNELS["spin"], (4, 1, 1), (256, 1, 1))
    assert re.search(r"= \*\(float4\*\)\(d \+", source) and re.search(r"\*\(float4\*\)\(d \+[^;]*\) = ", source), source
    d = np.random.default_rng(15).uniform(-2.0, 2.0, (1000, 4)).astype(np.float32)
    want = d.astype(np.float64).copy()
    x, y = want[:, 0].copy(), want[:, 1].copy()
    c, s = np.float32(0.6), np.float32(0.8)
    want[:, 0] = c * x - s * y
    want[:, 1] = s * x + c * y
    want[:, 3] += 1.0
    mod.spin(1000, 0.6, 0.8, d.reshape(-1), grid=4, block=256, target="c")
    np.testing.assert_allclose(d, want, rtol=1e-6, atol=1e-6)   # float32 products, a rounding each
