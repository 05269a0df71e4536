"""Local pointers the pool writes that are views only once their types or shapes are known: a
kernel template casting its ``T*`` to ``float*`` (converted per instance, where the cast is the
identity), a ``__constant__`` table viewed from an offset, a pointer into a row of a 2-D
``__shared__`` array (a flat ``T.view`` of it: a row pointer may index into the next row, as C
allows), and a template viewing part of a shared ``int`` array as its own type (a Welford
reduction's carving). A row pointer read only at constants inside its row stays a row of its array
(``B[1][2]``), of a device function's ``b[][8]`` parameter too (flat there: ``b[1 * 8 + 2]``). The
programs' own launches are recorded and replayed on the CPU."""
from __future__ import annotations

import json

import pytest

from migrate.cli import main
from migrate.ir import model as m
from migrate.parse.frontend import parse_file
from migrate.runtime.build import find_cxx

PROGRAM = r"""#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define W 32
#define P 7

__constant__ float c_weights[64];

// two halves joined along the middle dimension: the output viewed as float, the source chosen per element
template <typename T>
__global__ void join(const T* __restrict__ a, const T* __restrict__ b, T* out, int rows, int na, int nb) {
  int idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= rows * (na + nb)) return;
  float* dst = (float*)out + idx;
  int col = idx % (na + nb);
  int row = idx / (na + nb);
  float* src;
  int width;
  if (col < na) {
    width = na;
    src = (float*)a;
  } else {
    col -= na;
    width = nb;
    src = (float*)b;
  }
  src += row * width + col;
  *dst = *src;
}

// a window of a __constant__ table read through a local pointer
__global__ void weigh(const float* x, float* y, int n, int start) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  const float* w = c_weights + start;
  if (i < n) y[i] = x[i] * w[i % 16] + w[(i + 5) % 16];
}

// each warp-sized group works in its own row of a 2-D shared array through a row pointer into its
// second half; the recurrence reads back into the row's first half (negative indices)
__global__ void recur(const unsigned* x, unsigned* y) {
  __shared__ unsigned cx[4][2 * W];
  int r = threadIdx.x / W, t = threadIdx.x % W;
  const unsigned* in = x + blockIdx.x * 4 * 2 * W;
  cx[r][t] = in[r * 2 * W + t];
  cx[r][W + t] = 0;
  __syncthreads();
  unsigned* row = &cx[r][W];
  for (int k = 0; k < 3; k++) {
    if (t >= P) row[t] = row[t] * 3u + row[t % P - W] + k;
    __syncthreads();
  }
  // a pointer to a whole row reads past its end into the next one (C's rows are contiguous)
  unsigned* whole = cx[r / 2];
  y[blockIdx.x * blockDim.x + threadIdx.x] = row[t] + whole[t + 2 * W];
}

// a shared int array partly read as the template's type, the way Welford reductions carve theirs
template <typename T>
__global__ void carve(const T* x, T* y, int* counts) {
  __shared__ int s_mem[96];
  T* s_acc = (T*)&s_mem[32];
  int t = threadIdx.x;
  s_mem[t] = t + 1;
  s_acc[t] = x[blockIdx.x * 32 + t] * (T)2;
  __syncthreads();
  y[blockIdx.x * 32 + t] = s_acc[31 - t] + (T)s_mem[(t + 3) % 32];
  counts[blockIdx.x * 32 + t] = s_mem[t];
}

int main(int argc, char** argv) {
  int rows = argc > 1 ? atoi(argv[1]) : 5;
  const int na = 6, nb = 9, n = rows * (na + nb);
  float *ha = (float*)malloc(rows * nb * sizeof(float)), *a, *b, *out;
  for (int i = 0; i < rows * nb; i++) ha[i] = (i % 11) * 0.5f - 2.0f + i;
  cudaMalloc(&a, rows * na * sizeof(float));
  cudaMalloc(&b, rows * nb * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemcpy(a, ha, rows * na * sizeof(float), cudaMemcpyHostToDevice);
  for (int i = 0; i < rows * nb; i++) ha[i] = -ha[i] * 0.25f;
  cudaMemcpy(b, ha, rows * nb * sizeof(float), cudaMemcpyHostToDevice);
  join<<<(n + 31) / 32, 32>>>(a, b, out, rows, na, nb);

  float hw[64];
  for (int i = 0; i < 64; i++) hw[i] = 0.125f * i - 3.0f;
  cudaMemcpyToSymbol(c_weights, hw, sizeof(hw));
  float *y;
  cudaMalloc(&y, n * sizeof(float));
  weigh<<<(n + 31) / 32, 32>>>(out, y, n, 20);

  unsigned *hx = (unsigned*)malloc(2 * 4 * 2 * W * sizeof(unsigned)), *ux, *uy;
  for (int i = 0; i < 2 * 4 * 2 * W; i++) hx[i] = 2654435761u * (i + 1);
  cudaMalloc(&ux, 2 * 4 * 2 * W * sizeof(unsigned));
  cudaMalloc(&uy, 2 * 4 * W * sizeof(unsigned));
  cudaMemcpy(ux, hx, 2 * 4 * 2 * W * sizeof(unsigned), cudaMemcpyHostToDevice);
  recur<<<2, 4 * W>>>(ux, uy);

  float *fx, *fy;
  int *ix, *iy, *counts;
  cudaMalloc(&fx, 64 * sizeof(float));
  cudaMalloc(&fy, 64 * sizeof(float));
  cudaMalloc(&ix, 64 * sizeof(int));
  cudaMalloc(&iy, 64 * sizeof(int));
  cudaMalloc(&counts, 64 * sizeof(int));
  cudaMemcpy(fx, ha, 64 * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(ix, hx, 64 * sizeof(int), cudaMemcpyHostToDevice);
  carve<float><<<2, 32>>>(fx, fy, counts);
  carve<int><<<2, 32>>>(ix, iy, counts);

  float hy[64];
  cudaMemcpy(hy, y, sizeof(float) * (n < 64 ? n : 64), cudaMemcpyDeviceToHost);
  printf("%f\n", hy[0]);
  return 0;
}
"""


def test_template_pointer_casts_are_modelled_per_instance(tmp_path):
    (tmp_path / "views.cu").write_text(PROGRAM)
    kernels = {k.name: k for k in parse_file(tmp_path / "views.cu").unit.kernels}
    # one instance: the copy written for float stands for the template, its cast a float* to float*
    join = kernels["join"]
    assert join.template_params == () and [i.args for i in join.instantiations] == [("float",)]
    casts = [n for n in m.walk(join.body) if isinstance(n, m.Cast) and isinstance(n.type, m.Pointer)]
    assert casts and all(not isinstance(c.type.pointee, m.TemplateType) for c in casts)
    # two instances: the template keeps its model and gains one per instance
    assert [i.name for i in kernels["carve"].instances] == ["carve__float", "carve__int"]


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_views_known_per_instance_or_per_shape_convert_and_replay_equal(tmp_path):
    pytest.importorskip("tilelang")
    src = tmp_path / "src" / "views.cu"
    src.parent.mkdir()
    src.write_text(PROGRAM)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "5"]) == 0
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert {name: k["form"] for name, k in rows.items()} == \
        {"join": "tile", "weigh": "tile", "recur": "portable", "carve": "portable"}
    for name, k in rows.items():
        assert (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), (name, k["check"])
    assert "2 recorded launches" in rows["carve"]["check"]["message"]  # both instances replayed
    text = (out / "views.py").read_text()
    assert "T.if_then_else(src_buf == 0, a[src_off], b[src_off])" in text  # the source chosen per element
    assert "c_weights[start + i % 16]" in text  # the table's window: its offset
    assert "cx_flat = T.view(cx, (256,), T.uint32)" in text  # the row pointer's flat view
    assert "cx_flat[r // 2 * 64 + (t + 2 * 32)]" in text  # past the row's end: the next row
    assert "s_mem_float32 = T.view(s_mem, (96,), T.float32)" in text  # carve<float>; carve<int> reads s_mem


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_a_wrong_row_in_the_flat_view_fails_the_replay(tmp_path):
    """The replay tells the row the pointer starts at: the same module reading the row after fails."""
    pytest.importorskip("tilelang")
    src = tmp_path / "src" / "views.cu"
    src.parent.mkdir()
    src.write_text(PROGRAM)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    module = out / "views.py"
    text = module.read_text()
    wrong = text.replace("y[bx * block_x + tx] = cx_flat[r * 64 + 32 + t]",
                         "y[bx * block_x + tx] = cx_flat[(r + 1) % 4 * 64 + 32 + t]")
    assert wrong != text
    module.write_text(wrong)
    assert main(["check", "--from", str(out), "--run", "5"]) == 1


ROWS = r"""#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// a device function reading the rows of its b[][8] through pointers, the way finite-element codes
// take a shape function's derivatives apart
__device__ void gradient(const float* const xv, const float b[][8], float* const d) {
  const float* const px = b[0];
  const float* const py = b[1];
  d[0] = px[0] * xv[0] + px[3] * xv[3] + px[7] * (xv[7] - xv[1]);
  d[1] = py[1] * xv[1] + py[6] * xv[6] - *py;
}

__global__ void kinematics(const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float B[2][8], xv[8], D[2];
  for (int j = 0; j < 8; j++) {
    xv[j] = x[i * 8 + j];
    B[0][j] = x[i * 8 + j] * 0.5f + j;
    B[1][j] = x[((i + 1) % n) * 8 + j] - j;
  }
  gradient(xv, B, D);
  const float* second = B[1];  // a row of a thread's own array, read at constants
  y[i * 3] = D[0];
  y[i * 3 + 1] = D[1];
  y[i * 3 + 2] = second[2] * *second + second[7];
}

// each warp's row of a shared tile, read at its ends through a row pointer
__global__ void ends(const float* x, float* y) {
  __shared__ float tile[4][32];
  int w = threadIdx.x / 32, t = threadIdx.x % 32;
  tile[w][t] = x[blockIdx.x * 128 + threadIdx.x];
  __syncthreads();
  const float* mine = tile[w];
  y[blockIdx.x * 128 + threadIdx.x] = mine[0] * t + mine[31] - tile[(w + 1) % 4][t];
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 40;
  float *h = (float*)malloc(n * 8 * sizeof(float)), *x, *y, *tx, *ty;
  for (int i = 0; i < n * 8; i++) h[i] = (i % 17) * 0.37f - 2.5f;
  cudaMalloc(&x, n * 8 * sizeof(float));
  cudaMalloc(&y, n * 3 * sizeof(float));
  cudaMemcpy(x, h, n * 8 * sizeof(float), cudaMemcpyHostToDevice);
  kinematics<<<(n + 31) / 32, 32>>>(x, y, n);
  cudaMalloc(&tx, 256 * sizeof(float));
  cudaMalloc(&ty, 256 * sizeof(float));
  cudaMemcpy(tx, h, 256 * sizeof(float), cudaMemcpyHostToDevice);
  ends<<<2, 128>>>(tx, ty);
  cudaMemcpy(h, y, n * 3 * sizeof(float), cudaMemcpyDeviceToHost);
  printf("%f\n", h[0]);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_row_pointers_read_at_constants_index_their_rows_and_replay_equal(tmp_path):
    pytest.importorskip("tilelang")
    src = tmp_path / "src" / "rows.cu"
    src.parent.mkdir()
    src.write_text(ROWS)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "40"]) == 0
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert {name: k["form"] for name, k in rows.items()} == {"kinematics": "tile", "ends": "portable"}
    for name, k in rows.items():
        assert (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), (name, k["check"])
    text = (out / "rows.py").read_text()
    # the macro takes b flat (its caller passes T.reshape(B, (2 * 8,))): a row is 8 elements on
    assert "d[1] = b[1 * 8 + 1] * xv[1] + b[1 * 8 + 6] * xv[6] - b[1 * 8]" in text
    assert "T.reshape(B, (2 * 8,))" in text
    assert "y[i * 3 + 2] = B[1, 2] * B[1, 0] + B[1, 7]" in text  # a thread's own array: its row
    assert "tile_[w, 0] * T.Cast(T.float32, t) + tile_[w, 31]" in text  # no flat view needed
    assert "T.view" not in text


@pytest.mark.parametrize("use, folded", [
    ("y[i] = p[7] + *p;", True),     # inside the row: B[1][7], B[1][0]
    ("y[i] = p[8];", False),         # past the row's end: the next row's first element in C
    ("y[i] = p[i % 8];", False),     # an index no constant bounds
])
def test_a_row_of_a_threads_array_is_indexed_as_its_row_only_inside_it(tmp_path, use, folded):
    from migrate.analysis.prepare.pointer_views import pointer_aliases
    from tests.analysis.support import unit

    fn = unit(tmp_path, """
    __global__ void k(const float* x, float* y) {
        int i = threadIdx.x;
        float B[2][8];
        for (int j = 0; j < 8; j++) { B[0][j] = x[j]; B[1][j] = x[8 + j]; }
        const float* p = B[1];
        """ + use + """
    }
    """).kernel("k")
    _fn, _aliases, unresolved = pointer_aliases(fn)
    assert ([d.name for d in unresolved] == []) == folded, [d.name for d in unresolved]


CLAIMS = r"""#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// each block claims room in its parent's counters: the pointers are taken by one thread after a
// barrier and used for atomics and reads, the way a GPU quicksort's blocks share a parent record
__global__ void claim(const int* parent_of, unsigned* counters, unsigned* out, int nblocks) {
  __shared__ unsigned got, total;
  unsigned* pstart;
  unsigned* pcount;
  int t = threadIdx.x;
  if (t == 0) total = 0;
  __syncthreads();
  atomicAdd(&total, (unsigned)(t % 3));
  __syncthreads();
  if (t == 0) {
    int p = parent_of[blockIdx.x];
    pstart = &counters[2 * p];
    pcount = &counters[2 * p + 1];
    got = atomicAdd(pstart, total);
    atomicSub(pcount, 1u);
  }
  __syncthreads();
  out[blockIdx.x * blockDim.x + t] = total * 1000u + (unsigned)t;
}

// a block's shared words sent out byte by byte, through a byte pointer into them (per instance)
template <typename T>
__global__ void bytes_out(const T* in, unsigned char* out) {
  __shared__ T words[64];
  int t = threadIdx.x;
  words[t] = in[blockIdx.x * 64 + t] * (T)3 + (T)t;
  __syncthreads();
  int w = 63 - t;
  unsigned char* b = (unsigned char*)&words[w];
  for (int k = 0; k < (int)sizeof(T); k++)
    out[(blockIdx.x * 64 + t) * sizeof(T) + k] = *(b + k);
}

int main(int argc, char** argv) {
  int nblocks = argc > 1 ? atoi(argv[1]) : 6;
  int h_parent[64];
  for (int i = 0; i < nblocks; i++) h_parent[i] = (i * 5) % 3;
  unsigned h_counters[6] = {10, 100, 20, 200, 30, 300};
  int* parent_of;
  unsigned *counters, *out;
  cudaMalloc(&parent_of, nblocks * sizeof(int));
  cudaMalloc(&counters, sizeof(h_counters));
  cudaMalloc(&out, nblocks * 64 * sizeof(unsigned));
  cudaMemcpy(parent_of, h_parent, nblocks * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(counters, h_counters, sizeof(h_counters), cudaMemcpyHostToDevice);
  claim<<<nblocks, 64>>>(parent_of, counters, out, nblocks);

  unsigned h_in[128];
  for (int i = 0; i < 128; i++) h_in[i] = 2654435761u * (i + 7);
  unsigned* in;
  unsigned char* bytes;
  cudaMalloc(&in, sizeof(h_in));
  cudaMalloc(&bytes, 128 * sizeof(unsigned));
  cudaMemcpy(in, h_in, sizeof(h_in), cudaMemcpyHostToDevice);
  bytes_out<<<2, 64>>>(in, bytes);
  cudaMemcpy(h_counters, counters, sizeof(h_counters), cudaMemcpyDeviceToHost);
  printf("%u\n", h_counters[0]);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_an_atomic_through_an_assigned_pointer_and_a_byte_view_per_instance_replay_equal(tmp_path):
    """``pstart = &counters[2 * p]; atomicAdd(pstart, total)``: a pointer assigned after its
    declaration is an offset, the atomic's address its element; ``(unsigned char*)&words[w]`` on
    a template's ``T words[64]`` is a byte view of the shared array in the instance."""
    pytest.importorskip("tilelang")
    src = tmp_path / "src" / "claims.cu"
    src.parent.mkdir()
    src.write_text(CLAIMS)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "6"]) == 0
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert {name: k["form"] for name, k in rows.items()} == {"claim": "portable", "bytes_out": "portable"}
    for name, k in rows.items():
        assert (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), (name, k["check"])
    text = (out / "claims.py").read_text()
    assert "T.atomic_add(counters[pstart_off[tx]], total[0], return_prev=True)" in text
    assert "words_uint8 = T.view(words, (256,), T.uint8)" in text and "words_uint8[w * 4 + k]" in text


@pytest.mark.parametrize("body, reason", [
    ("struct Node { Node* next; float v; };\n"
     "__global__ void k(Node* nodes, float* y) {\n"
     "  Node* p = nodes + threadIdx.x;\n  for (int s = 0; s < 4; s++) p = p->next;\n  y[threadIdx.x] = p->v;\n}",
     "pointer chasing"),
    ("__global__ void k(const float* x, int* y) {\n"
     "  const float* p = x + threadIdx.x;\n  y[threadIdx.x] = ((unsigned long long)p & 15) == 0;\n}",
     "its address is used as an integer"),
    ("__global__ void k(float* x, float** slots) {\n"
     "  float* p = x + 4 * threadIdx.x;\n  slots[threadIdx.x] = p;\n}",
     "its value is stored to memory"),
    ("__global__ void k(const char* x, float* y) {\n"
     "  const int* b = (const int*)&x[2 * threadIdx.x + 1];\n  y[threadIdx.x] = b[0];\n}",
     "it reads a buffer of int8 as int32 from an offset that is not a whole number of int32 elements"),
    ("__global__ void k(float* x, int v) {\n"
     "  int* bits = (int*)&x[threadIdx.x];\n  atomicCAS(bits, v, v + 1);\n}",
     "it reads a buffer of float32 as int32 and is used other than by reading or storing"),
])
def test_a_pointer_that_stays_no_view_is_refused_with_its_reason(tmp_path, body, reason):
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + body + "\n")
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] in ("hybrid", "unsupported") and "is not a fixed view of a buffer parameter: " in k["reason"], k["reason"]
    assert reason in k["reason"], k["reason"]


SCRATCH = r"""#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

// each block keeps its points in its slice of an int scratch buffer, read and written as floats
// (the way a 2-opt TSP kernel keeps its cities' coordinates in the tour's global buffer)
__global__ void smooth(const float* xs, const float* ys, int* glob, float* out, int n) {
  int* buf = &glob[blockIdx.x * (3 * n + 2)];
  float* px = (float*)(&buf[n]);
  float* py = &px[n + 1];
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    px[i] = xs[blockIdx.x * n + i];
    py[i] = ys[blockIdx.x * n + i] * 0.5f;
    buf[i] = i * 7;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    px[n] = px[0];
    *py += 1.25f;
  }
  __syncthreads();
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    out[blockIdx.x * n + i] = (px[i + 1] - px[i]) * py[i] + buf[i];
}

int main(int argc, char** argv) {
  int n = argc > 1 ? atoi(argv[1]) : 50;
  const int blocks = 3;
  float* h = (float*)malloc(blocks * n * sizeof(float));
  for (int i = 0; i < blocks * n; i++) h[i] = (i % 23) * 0.75f - 6.0f;
  float *xs, *ys, *out;
  int* glob;
  cudaMalloc(&xs, blocks * n * sizeof(float));
  cudaMalloc(&ys, blocks * n * sizeof(float));
  cudaMalloc(&out, blocks * n * sizeof(float));
  cudaMalloc(&glob, blocks * (3 * n + 2) * sizeof(int));
  cudaMemset(glob, 0, blocks * (3 * n + 2) * sizeof(int));
  cudaMemcpy(xs, h, blocks * n * sizeof(float), cudaMemcpyHostToDevice);
  for (int i = 0; i < blocks * n; i++) h[i] = h[i] * -1.5f + 2.0f;
  cudaMemcpy(ys, h, blocks * n * sizeof(float), cudaMemcpyHostToDevice);
  smooth<<<blocks, 32>>>(xs, ys, glob, out, n);
  cudaMemcpy(h, out, blocks * n * sizeof(float), cudaMemcpyDeviceToHost);
  printf("%f\n", h[1]);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_floats_kept_in_an_int_buffer_are_bit_copies_and_replay_equal(tmp_path):
    """``float* px = (float*)&buf[n]`` on an ``int*`` parameter: each access copies the element's
    bits (T.reinterpret), a store ``__float_as_int`` of its value, ``*py += v`` both; the int
    view ``buf`` beside it reads the same buffer as ints."""
    pytest.importorskip("tilelang")
    src = tmp_path / "src" / "scratch.cu"
    src.parent.mkdir()
    src.write_text(SCRATCH)
    out = tmp_path / "out"
    assert main(["convert", str(src), "-o", str(out), "-q", "--check", "cpu", "--run", "50"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] == "portable" and (k["check"]["status"], k["check"]["inputs"]) == ("pass", "trace"), k["check"]
    text = (out / "scratch.py").read_text()
    assert "T.reinterpret(xs[" in text and "'int32')" in text  # px[i] = xs[...]: the float's bits stored
    assert "T.view" not in text
    # read as ints instead of their bits, the floats differ: the replay fails
    module = out / "scratch.py"
    module.write_text(text.replace("'float32')", "'int32')"))
    assert main(["check", "--from", str(out), "--run", "50"]) == 1


@pytest.mark.parametrize("use", ["px[threadIdx.x]++;", "atomicAdd(px + threadIdx.x, 1.0f);"])
def test_a_bit_copied_element_stepped_or_addressed_is_refused(tmp_path, use):
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k(int* buf) {\n"
                   f"  float* px = (float*)&buf[4];\n  {use}\n}}\n")
    out = tmp_path / "out"
    main(["convert", str(src), "-o", str(out), "-q"])
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] in ("hybrid", "unsupported") and "is not a fixed view" in k["reason"], k["reason"]
