"""``__device__`` globals the kernels write (a counter bumped with atomics, an array one kernel
fills and the next reads, ``static __device__ int top, seen;``, one with an initialiser), as
assignment solvers and connected-component programs keep their state between launches. Each is a
buffer after the kernel's parameters (a scalar one is ``name[0]``); the module keeps it between
launches as the GPU does (``state=``); the check gives both sides the same values and compares
what they leave, on generated inputs and on the program's own recorded launches."""
from __future__ import annotations

import json

import pytest

from migrate.runtime.build import find_cxx
from migrate.runtime.source import register_constants
from migrate.runtime.traces import read
from tests.analysis.support import checked, program_converted

PROGRAM = """
#include <cstdio>
#include <cuda_runtime.h>
#define N 256
__device__ int hits;
static __device__ int top, seen;
__device__ float partial[N];
__device__ int offset_base = 3;

__global__ void count_positive(const float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    partial[i] = x[i] * 2.0f + offset_base;
    if (x[i] > 0.0f) atomicAdd(&hits, 1);
    atomicMax(&top, (int)(x[i] * 100.0f));
  }
}

__global__ void gather(float* y, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = partial[i] + partial[(i + 1) % n];
  if (i == 0) { out[0] = hits; out[1] = top; seen = seen + 1; out[2] = seen; }
}

int main() {
  float *x, *y; int* out;
  cudaMalloc(&x, N * 4); cudaMalloc(&y, N * 4); cudaMalloc(&out, 3 * 4);
  float h[N];
  for (int i = 0; i < N; i++) h[i] = ((i * 37) % 19 - 9) * 0.1f;
  cudaMemcpy(x, h, N * 4, cudaMemcpyHostToDevice);
  for (int r = 0; r < 2; r++) {
    count_positive<<<N / 64, 64>>>(x, N);
    gather<<<N / 64, 64>>>(y, out, N);
  }
  int o[3];
  cudaMemcpy(o, out, 12, cudaMemcpyDeviceToHost);
  printf("%d %d %d\\n", o[0], o[1], o[2]);
  return 0;
}
"""


def test_globals_are_buffers_after_the_parameters_and_the_module_keeps_them(tmp_path):
    pytest.importorskip("tilelang")
    import importlib.util

    import torch

    out = program_converted(tmp_path, PROGRAM, "globals.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert {k["form"] for k in kernels.values()} <= {"tile", "portable"}, kernels
    text = (out / "globals.py").read_text()
    assert "hits: T.Tensor((1,), T.int32)" in text and "partial: T.Tensor((256,), T.float32)" in text
    assert '("offset_base", (3,))' in text  # its initialiser
    spec = importlib.util.spec_from_file_location("globals_mod", out / "globals.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    x = torch.tensor([((i * 37) % 19 - 9) * 0.1 for i in range(256)], dtype=torch.float32)
    y, res = torch.full((256,), -7.0), torch.full((3,), -7, dtype=torch.int32)
    positive, top = int((x > 0).sum()), int((x * 100.0).to(torch.int32).max())
    for r in range(2):  # as main() runs them: the counters go on across launches and kernels
        mod.count_positive(x, 256, grid=4, block=64, target="c")
        mod.gather(y, res, 256, grid=4, block=64, target="c")
        assert res.tolist() == [positive * (r + 1), top, r + 1]
    partial = x * 2.0 + 3.0
    assert torch.allclose(y, partial + partial.roll(-1))
    # symbols={...} passes a global of the caller's in the module's place
    mine = torch.zeros(1, dtype=torch.int32)
    mod.gather(y, res, 256, grid=4, block=64, target="c", symbols={"seen": mine})
    assert mine.item() == 1 and res[2].item() == 1


def test_generated_inputs_check_what_the_kernels_leave_in_the_globals(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "globals.cu")
    status, checks = checked(out)
    assert status == 0
    assert checks["gather"]["inputs"] == "auto" and checks["gather"]["message"].startswith("6 output(s)")
    module = out / "globals.py"
    module.write_text(module.read_text().replace("seen[0] = seen[0] + 1", "seen[0] = seen[0] + 2"))
    status, checks = checked(out)
    assert status == 1
    assert checks["gather"]["status"] == "fail" and checks["gather"]["message"].startswith("seen:")


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_recorded_launches_hold_the_globals_before_and_after(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "globals.cu")
    status, checks = checked(out, "--run", "")
    assert status == 0
    assert all(c["inputs"] == "trace" and c["status"] == "pass" for c in checks.values()), checks
    module = out / "globals.py"
    module.write_text(module.read_text().replace("seen[0] = seen[0] + 1", "seen[0] = seen[0] + 2"))
    status, checks = checked(out, "--run", "")
    assert status == 1
    assert checks["gather"]["status"] == "fail" and "seen: 1 of 1 elements differ" in checks["gather"]["message"]


def test_writable_globals_register_as_such_also_several_in_one_statement():
    src = ("__device__ int hits;\n"
           "static __device__ int top, seen;\n"
           "__managed__ __device__ float total;\n"
           "__device__ const int table[2] = {1, 2};\n"
           "__device__ int a = 1, b = 2;\n"
           "__device__ float twice(float v) { return 2.0f * v; }\n"
           "inline __device__ void operator^=(uchar4 &a, const uchar4 b) { a.x ^= b.x; }\n"
           "__device__ __forceinline__ int lane() { int id; id = threadIdx.x % 32; return id; }\n")
    out = register_constants(src)
    assert out.count("\n") == src.count("\n")
    for name in ("hits", "top", "seen", "total"):
        assert f'add_symbol("{name}", sizeof({name}), [](void* c2t_d_) {{ ' \
               f'::c2t::trace::read_symbol(c2t_d_, {name}); }}, true);' in out
    assert out.count('add_symbol("total"') == 1  # two keywords, one registration
    assert 'read_symbol(c2t_d_, table); });' in out  # read only: a constant symbol
    assert "c2t_symbol_a" not in out and "c2t_symbol_twice" not in out
    assert out.count("c2t_symbol_") == 5  # hits, top, seen, total, table: no function's text


def test_the_trace_reader_gives_each_globals_bytes(tmp_path):
    data = bytes(range(16))
    (tmp_path / "data.bin").write_bytes(data)
    line = {"seq": 0, "kernel": "k", "number": 0, "grid": [1, 1, 1], "block": [1, 1, 1], "shared_bytes": 0,
            "status": 0, "args": [], "before": [], "after": [], "symbols": [],
            "globals": [{"name": "hits", "size": 4, "before": 0, "after": 0},
                        {"name": "partial", "size": 8, "before": 4, "after": 12 - 4}]}
    line["globals"][1]["after"] = 8  # written: the bytes after it start at 8
    (tmp_path / "manifest.jsonl").write_text(json.dumps(line) + "\n")
    (launch,) = read(tmp_path)
    assert bytes(launch.globals_before["hits"]) == data[0:4] == bytes(launch.globals_after["hits"])
    assert bytes(launch.globals_before["partial"]) == data[4:12]
    assert bytes(launch.globals_after["partial"]) == data[8:16]


#: A block reduction whose shared array is declared at namespace scope (``__shared__ extern int
#: sdata[];``, named directly by the helper), its kernels launched through a macro whose
#: parameter is the kernel (``#define call_kernel(k, b, t, s) k<<<b, t, s>>>()``), the way an
#: assignment solver is written; the reduction reads and writes __device__ globals.
MACRO_LAUNCHED = """
#include <cstdio>
#include <cuda_runtime.h>
#define N 1024
__shared__ extern int sdata[];
__device__ int values[N];
__device__ int block_min[N / 128];

__global__ void fill() {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  values[i] = (i * 7919) % 1000 - 300;
}

__device__ void block_min_of(const int* in, int* out) {
  unsigned tid = threadIdx.x;
  sdata[tid] = in[blockIdx.x * blockDim.x + tid];
  __syncthreads();
  for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
    if (tid < s) sdata[tid] = min(sdata[tid], sdata[tid + s]);
    __syncthreads();
  }
  if (tid == 0) out[blockIdx.x] = sdata[0];
}

__global__ void reduce_min() { block_min_of(values, block_min); }

#define call_kernel(k, blocks, threads, shared) { k<<<blocks, threads, shared>>>(); cudaDeviceSynchronize(); }

int main() {
  call_kernel(fill, N / 128, 128, 0);
  call_kernel(reduce_min, N / 128, 128, 128 * sizeof(int));
  int h[N / 128];
  cudaMemcpyFromSymbol(h, block_min, sizeof(h));
  printf("%d %d\\n", h[0], h[7]);
  return 0;
}
"""


@pytest.mark.skipif(find_cxx() is None, reason="no host C++ compiler (g++ or clang++)")
def test_a_shared_array_at_namespace_scope_and_kernels_launched_through_a_macro(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, MACRO_LAUNCHED, "solver.cu")
    text = (out / "solver.py").read_text()
    assert "T.reduce_min(sdata_lanes, sdata_total, dim=0)" in text  # the kernel's own shared array, lifted
    status, checks = checked(out, "--run", "")
    assert status == 0
    # each launch is recorded under the kernel the macro was given, not under its parameter 'k'
    assert all(c["inputs"] == "trace" and c["status"] == "pass" for c in checks.values()), checks
    assert set(checks) == {"fill", "reduce_min"}


#: an assignment solver's step (hungarian's ``volatile int* v_cover_row = cover_row;``): local
#: pointers that view ``__device__`` arrays, read and written through them
VIEWS = """
#include <cuda_runtime.h>
#define N 128
__device__ int cover_row[N];
__device__ int cover_column[N];

__global__ void mark(const int* __restrict__ zeros, int* __restrict__ found, int n) {
  volatile int* v_cover_row = cover_row;
  volatile int* v_cover_column = cover_column + 0;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    int c = zeros[i];
    if (!v_cover_column[c] && !v_cover_row[i]) {
      v_cover_row[i] = 1;
      found[i] = c + 1;
    } else {
      found[i] = -v_cover_column[c];
    }
  }
}

int main() {
  int *zeros, *found;
  cudaMalloc(&zeros, N * 4); cudaMalloc(&found, N * 4);
  int h[N];
  for (int i = 0; i < N; i++) h[i] = (i * 5) % N;
  cudaMemcpy(zeros, h, N * 4, cudaMemcpyHostToDevice);
  mark<<<N / 64, 64>>>(zeros, found, N);
  cudaDeviceSynchronize();
  return 0;
}
"""


def test_local_pointers_viewing_device_arrays_are_their_elements(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, VIEWS, "views.cu")
    kernels = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert kernels["mark"]["form"] not in ("hybrid", "unsupported"), kernels["mark"]["reason"]
    text = (out / "views.py").read_text()
    assert "cover_row[i] = 1" in text, text
    status, checks = checked(out)
    assert status == 0 and checks["mark"]["status"] == "pass", checks


#: a ray tracer's table lookup (grrt's ``K2_find`` reading ``static __device__ __constant__ double
#: K2_tab[]``): a device function, printed as a macro, reading a global table the kernel takes as
#: a buffer; the macro is given it as an argument (a macro sees no name of its caller's). (The
#: table is a ``__device__`` one here: its initialiser then travels with the module, which the
#: check on generated inputs needs; a ``__constant__`` one gets its values from the program's
#: recorded launches.)
TABLE = """
#include <cuda_runtime.h>
static __device__ double tab[] = {1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0};
__device__ double lookup(double d) {
  int i = (int)floor(d);
  return (1 - (d - i)) * tab[i] + (d - i) * tab[i + 1];
}
__device__ double twice_lookup(double d) { double a = lookup(d); return a + lookup(d * 0.5); }
__global__ void interpolate(const double* __restrict__ x, double* __restrict__ y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = twice_lookup(x[i]);
}
"""


def test_macros_reading_global_tables_take_them_as_arguments(tmp_path):
    from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar
    spec = spec_kernel("interpolate", (2, 1, 1), (64, 1, 1), "fp64",
                       spec_buffer("x", "float64", 128, "in", 0.0, 7.5),
                       spec_buffer("y", "float64", 128, "out"), spec_scalar("n", "int32", 128))
    out, (k,) = converted(tmp_path, TABLE, spec)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "def lookup(d, tab):" in text and "lookup(d, tab=tab)" in text, text
