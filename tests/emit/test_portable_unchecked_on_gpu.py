"""Portable and simt kernels on GPUs read and write their buffers unchecked, as the CUDA does:
TileLang's safe-memory guards (on by default) compared every data-dependent index with its
buffer's length and loaded the index again for each comparison; a sparse-row sweep written like
amgmk's relax ran 1.16x its original on the H200 with them. The C target keeps the guards (the
CPU check's buffers are exactly the sizes the spec or the recording states). Their CUDA declares
``__launch_bounds__(threads)`` alone, as nvcc compiles a kernel that declares none: with
TileLang's ``(threads, 1)`` ptxas gave relax 80 registers against its original's 32."""
from __future__ import annotations

import importlib.util
import re

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar
from tests.lowering import lower_sm90

# a sweep over CSR rows whose results another thread reads after a barrier (a portable kernel):
# the loads are indexed through other loads
KERNEL = """
__global__ void sweep(const double *vals, const int *rows, const int *cols,
                      const double *u, double *out, const double *f, const int n) {
  __shared__ double part[64];
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  double res = f[i];
  for (int jj = rows[i]; jj < rows[i + 1]; jj++)
    res -= vals[jj] * u[cols[jj]];
  part[threadIdx.x] = res;
  __syncthreads();
  out[i] = part[threadIdx.x] - 0.5 * part[cols[rows[i]]];
}
"""

# row starts drawn at random (a row whose next start is not past it has no entries), columns
# within the vector: every index stays inside its buffer
SPEC = spec_kernel("sweep", (1, 1, 1), (64, 1, 1), "fp64",
                   spec_buffer("vals", "float64", 192, "in", 1, 2),
                   spec_buffer("rows", "int32", 65, "in", 0, 189),
                   spec_buffer("cols", "int32", 192, "in", 0, 63),
                   spec_buffer("u", "float64", 64, "in", -1, 1),
                   spec_buffer("out", "float64", 64, "out"),
                   spec_buffer("f", "float64", 64, "in", -1, 1),
                   spec_scalar("n", "int32", 64))


def test_portable_kernels_compile_unchecked_for_gpus_only(tmp_path):
    from migrate.runtime import tilelang_support as ts

    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    assert k["form"] in ("portable", "simt"), k["form"]
    spec = importlib.util.spec_from_file_location("k_sweep", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = mod.KERNELS["sweep"]
    assert ("tl.disable_safe_memory_legalize", True) in sig.gpu_pass_configs
    _, cpu = ts.prim_func(sig, (1, 1, 1), (64, 1, 1), 0, None, "c")
    _, gpu = ts.prim_func(sig, (1, 1, 1), (64, 1, 1), 0, None, "cuda")
    assert "tl.disable_safe_memory_legalize" not in cpu and gpu["tl.disable_safe_memory_legalize"] is True
    assert gpu["tl.disable_thread_storage_sync"] is True     # the barriers stay the CUDA's own
    source = lower_sm90(sig, (1, 1, 1), (64, 1, 1))
    assert "__global__" in source and "_len)" not in source  # no index compared with a buffer length
    assert "__launch_bounds__(64) sweep_kernel(" in source, source[source.index("__global__"):][:300]


# the same loads in a map with no barrier: lifted to the tile form, which keeps TileLang's bounds
MAP = """
__global__ void sweep_map(const double *vals, const int *rows, const int *cols,
                          const double *u, double *out, const double *f, const int n) {
  int i = blockDim.x * blockIdx.x + threadIdx.x;
  if (i < n) {
    double res = f[i];
    for (int jj = rows[i]; jj < rows[i + 1]; jj++)
      res -= vals[jj] * u[cols[jj]];
    out[i] = res;
  }
}
"""


def test_only_kernels_that_mirror_their_cuda_drop_the_minimum_of_blocks(tmp_path):
    out, (k,) = converted(tmp_path, MAP, SPEC.replace('name = "sweep"', 'name = "sweep_map"'))
    assert k["check"]["status"] == "pass" and k["form"] == "tile", k
    spec = importlib.util.spec_from_file_location("k_sweep_map", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["sweep_map"], (1, 1, 1), (64, 1, 1))
    assert "__launch_bounds__(64, 1) sweep_map_kernel(" in source, source[source.index("__global__"):][:300]


def test_the_launch_bounds_switch(tmp_path, monkeypatch):
    """C2T_LAUNCH_BOUNDS=plain gives every kernel ``__launch_bounds__(threads)``, =tilelang none
    (a timing comparison's two sides)."""
    out, (k,) = converted(tmp_path, MAP, SPEC.replace('name = "sweep"', 'name = "sweep_map"'))
    spec = importlib.util.spec_from_file_location("k_sweep_map2", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("C2T_LAUNCH_BOUNDS", "plain")
    source = lower_sm90(mod.KERNELS["sweep_map"], (1, 1, 1), (64, 1, 1))
    assert re.search(r"__launch_bounds__\(\d+\) sweep_map_kernel\(", source), source[source.index("__global__"):][:300]
    (tmp_path / "p").mkdir()
    out2, _ = converted(tmp_path / "p", KERNEL, SPEC)
    spec = importlib.util.spec_from_file_location("k_sweep2", out2 / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    monkeypatch.setenv("C2T_LAUNCH_BOUNDS", "tilelang")
    source = lower_sm90(mod.KERNELS["sweep"], (1, 1, 1), (128, 1, 1))
    assert "__launch_bounds__(128, 1) sweep_kernel(" in source, source[source.index("__global__"):][:300]
