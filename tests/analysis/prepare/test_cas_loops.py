"""analysis.prepare.cas_loops: device functions that are atomicCAS loops (the float atomicMax
CUDA lacks, in the two shapes real code writes it) become the atomic they compute, so the kernels
calling them convert (they were refused: the loop views the float buffer as integers); checked
equal on the CPU against the original's loops. Functions that only look alike keep their body."""
from __future__ import annotations

import pytest

from migrate.analysis.prepare.cas_loops import cas_loop_op
from migrate.pipeline import one_statement_each
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar, unit

#: the while/break shape with CUDA 12.8's relaxed load (the pool's hausdorff, michalewicz), and
#: the programming guide's do/while shape (a maximum, a minimum and a double sum).
LOOPS = """
#include <cuda_runtime.h>

__device__ __forceinline__ void atomic_max(float* address, float val) {
  unsigned int* ptr = (unsigned int*)address;
#if CUDA_VERSION >= 12080
  unsigned int ret = __nv_atomic_load_n(ptr, __NV_ATOMIC_RELAXED);
#else
  unsigned int ret = *ptr;
#endif
  while (val > __uint_as_float(ret)) {
    unsigned int old = ret;
    if ((ret = atomicCAS(ptr, old, __float_as_uint(val))) == old)
      break;
  }
}

__device__ float atomicMinFloat(float* address, float val) {
  int* address_as_i = (int*)address;
  int old = *address_as_i, assumed;
  do {
    assumed = old;
    old = atomicCAS(address_as_i, assumed, __float_as_int(fminf(val, __int_as_float(assumed))));
  } while (assumed != old);
  return __int_as_float(old);
}

__device__ double atomicAddDouble(double* address, double val) {
  unsigned long long int* address_as_ull = (unsigned long long int*)address;
  unsigned long long int old = *address_as_ull, assumed;
  do {
    assumed = old;
    old = atomicCAS(address_as_ull, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
  } while (assumed != old);
  return __longlong_as_double(old);
}

__global__ void extremes(const float* __restrict__ x, float* __restrict__ hi, float* __restrict__ lo,
                         double* __restrict__ total, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = x[i] * 2.0f - 1.0f;
  atomic_max(&hi[i % 4], v);
  atomicMinFloat(&lo[i % 4], v);
  atomicAddDouble(total, (double)(int)(x[i] * 64.0f));
  atomic_max(&hi[(i + 1) % 4], x[i] - 0.25f);
}
"""

SPEC = spec_kernel("extremes", (4, 1, 1), (128, 1, 1), "exact",
                   spec_buffer("x", "float32", 512, "in", 0.0, 1.0),
                   spec_buffer("hi", "float32", 4, "inout", -0.5, 0.5),
                   spec_buffer("lo", "float32", 4, "inout", -0.5, 0.5),
                   spec_buffer("total", "float64", 1, "inout", 0.0, 8.0),
                   spec_scalar("n", "int32", 500))


def _device(tmp_path, source):
    return {f.name: one_statement_each(f) for f in unit(tmp_path, source).device_functions}


def test_the_three_loops_are_the_atomics_they_compute(tmp_path):
    device = _device(tmp_path, LOOPS.replace("#include <cuda_runtime.h>\n", ""))
    assert {name: cas_loop_op(f) for name, f in device.items()} == {
        "atomic_max": "atomicMax", "atomicMinFloat": "atomicMin", "atomicAddDouble": "atomicAdd"}


@pytest.mark.parametrize("change", [
    # stores the value whatever it compares: no maximum
    ("if ((ret = atomicCAS(ptr, old, __float_as_uint(val))) == old)",
     "if ((ret = atomicCAS(ptr, old, __float_as_uint(val) + 1u)) == old)"),
    # another store beside the loop
    ("  while (val > __uint_as_float(ret)) {", "  ptr[1] = 0u;\n  while (val > __uint_as_float(ret)) {"),
    # the loop retries on another variable than the one it compared
    ("  } while (assumed != old);\n  return __int_as_float(old);", "  } while (assumed != 0);\n  return __int_as_float(old);"),
])
def test_loops_that_only_look_alike_are_left(tmp_path, change):
    source = LOOPS.replace("#include <cuda_runtime.h>\n", "").replace(*change)
    ops = {name: cas_loop_op(f) for name, f in _device(tmp_path, source).items()}
    assert None in ops.values(), ops


def test_a_kernel_calling_them_converts_and_checks_equal(tmp_path):
    out, (k,) = converted(tmp_path, LOOPS, SPEC)
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]
    text = (out / "k.py").read_text()
    assert "T.atomic_max(" in text and "T.atomic_min(" in text and "T.atomic_add(" in text


def test_the_read_first_loop_keeps_its_read(tmp_path):
    """The while shape makes no atomic for a value that does not improve on the one held (what
    keeps michalewicz's minimum over millions of points fast): its calls stay behind that read, a
    value that is an expression computed once; the do-while shape always swaps, so its calls do not."""
    out, (k,) = converted(tmp_path, LOOPS, SPEC)
    text = (out / "k.py").read_text()
    lines = [line.split("#")[0].strip() for line in text.splitlines()]
    at = lines.index("T.atomic_max(hi[i % 4], v)")
    assert lines[at - 1] == "if v > hi[i % 4]:", lines[at - 3:at + 1]
    at = lines.index("T.atomic_max(hi[(i + 1) % 4], improving)")
    assert lines[at - 2:at] == ["improving = x[i] - 0.25", "if improving > hi[(i + 1) % 4]:"]
    at = lines.index("T.atomic_min(lo[i % 4], v)")
    assert not lines[at - 1].startswith("if ")
    assert k["check"]["status"] == "pass", k["check"]


def test_a_used_result_is_the_plain_atomic(tmp_path):
    """``old = atomic_max(...)`` needs the value held before whatever it compares: no guard."""
    source = LOOPS.replace("__device__ __forceinline__ void atomic_max", "__device__ __forceinline__ float atomic_max") \
        .replace("      break;\n  }\n}", "      break;\n  }\n  return __uint_as_float(ret);\n}") \
        .replace("  atomic_max(&hi[i % 4], v);", "  float was = atomic_max(&hi[i % 4], v);\n  lo[(i + 2) % 4] = was > 9.0f ? 0.0f : lo[(i + 2) % 4];")
    assert "float was" in source and "return __uint_as_float(ret);" in source
    device = _device(tmp_path, source.replace("#include <cuda_runtime.h>\n", ""))
    assert cas_loop_op(device["atomic_max"]) == "atomicMax"
    out, (k,) = converted(tmp_path, source, SPEC)
    text = (out / "k.py").read_text()
    assert "T.atomic_max(hi[i % 4], v" in text and "if v > hi[i % 4]" not in text
