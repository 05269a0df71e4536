"""The host side of a drop-in build: per migrated kernel, a launch shim with the original
kernel's parameter list that runs the TileLang variant built for the run-time geometry, or the
original kernel (kept in the unit under its name) where none was built, counting both; and the
support unit the shims share (the count printed to stderr at exit, buffer extents read off the
allocation holding a device pointer)."""
from __future__ import annotations

#: Declarations every shim includes (DIR/<program>/gen/c2t_dropin.h)
SUPPORT_HEADER = """\
// cuda2tile drop-in build: what the launch shims share (written by migrate build)
#pragma once
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>
extern "C" void c2t_dropin_count(const char* kernel, int migrated);
extern "C" void c2t_dropin_failed(const char* kernel, const char* why);
extern "C" long long c2t_dropin_extent(const void* p, size_t elem_bytes, long long divisor);
"""

#: The unit defining them (DIR/<program>/gen/c2t_dropin.cu)
SUPPORT_UNIT = """\
// cuda2tile drop-in build: launch counts and buffer extents (written by migrate build)
#include <cuda.h>
#include <limits.h>
#include <mutex>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "c2t_dropin.h"

namespace {
struct Row { const char* name; unsigned long long migrated, original; };
Row rows[4096];
int n_rows = 0;
std::mutex lock;

void report() {
  unsigned long long migrated = 0, original = 0;
  for (int i = 0; i < n_rows; ++i) {
    fprintf(stderr, "cuda2tile: %s %llu launches migrated, %llu original\\n", rows[i].name,
            rows[i].migrated, rows[i].original);
    migrated += rows[i].migrated;
    original += rows[i].original;
  }
  fprintf(stderr, "cuda2tile: total %llu launches migrated, %llu original\\n", migrated, original);
}
}  // namespace

extern "C" void c2t_dropin_count(const char* kernel, int migrated) {
  std::lock_guard<std::mutex> guard(lock);
  static bool registered = false;
  if (!registered) {
    registered = true;
    atexit(report);
  }
  int i = 0;
  while (i < n_rows && strcmp(rows[i].name, kernel) != 0) ++i;
  if (i == n_rows) {
    if (n_rows == (int)(sizeof(rows) / sizeof(rows[0]))) return;
    rows[n_rows++] = Row{kernel, 0, 0};
  }
  if (migrated) ++rows[i].migrated; else ++rows[i].original;
}

extern "C" void c2t_dropin_failed(const char* kernel, const char* why) {
  fprintf(stderr, "cuda2tile: %s: the migrated variant did not launch (%s); the original runs\\n", kernel,
          why ? why : "");
}

// elements of elem_bytes from p to the end of the allocation holding it, divided by divisor (the
// other extents of a row-major buffer); INT_MAX where the driver knows no such allocation
extern "C" long long c2t_dropin_extent(const void* p, size_t elem_bytes, long long divisor) {
  if (p == NULL || elem_bytes == 0 || divisor <= 0) return 0;
  typedef CUresult (*Range)(CUdeviceptr*, size_t*, CUdeviceptr);
  static Range range = NULL;
  static bool looked = false;
  if (!looked) {  // the driver's entry point, found through the runtime: nothing to link
    std::lock_guard<std::mutex> guard(lock);
    void* fn = NULL;
    cudaDriverEntryPointQueryResult found;
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &found) == cudaSuccess
        && found == cudaDriverEntryPointSuccess)
      range = (Range)fn;
    looked = true;
  }
  CUdeviceptr base = 0;
  size_t size = 0;
  if (range == NULL || range(&base, &size, (CUdeviceptr)p) != CUDA_SUCCESS) return INT_MAX;
  long long n = (long long)((base + size - (CUdeviceptr)p) / elem_bytes) / divisor;
  return n > INT_MAX ? INT_MAX : n;
}
"""


def launch_name(kernel: str) -> str:
    return f"c2t_launch_{kernel}"


def _condition(v) -> str:
    g, b = v.grid, v.block
    parts = [f"c2t_grid.{a} == {g[i]}u" for i, a in enumerate("xyz")]
    parts += [f"c2t_block.{a} == {b[i]}u" for i, a in enumerate("xyz")]
    parts.append(f"c2t_shared == {v.shared_bytes}u")
    return " && ".join(parts)


def _argument(p, symbols: dict) -> str:
    if p.kind == "buffer":
        return f"(void*)({p.source})"
    if p.kind == "symbol":
        return symbols[p.source]
    if p.kind == "scalar":
        return f"({p.c_type})({p.source})"
    # an extent: elements of its buffer, over the other extents
    divisor = " * ".join(f"(long long){d}" for d in p.divisors) or "1"
    pointer = symbols.get(p.source, f"(const void*)({p.source})")
    return f"({p.c_type})c2t_dropin_extent({pointer}, {p.elem_bytes}, {divisor})"


def shim_text(kernel: str, params_text: str, param_names: list[str], variants: list) -> str:
    """The shim of ``kernel`` (to stand right after its definition): ``c2t_launch_<kernel>(grid,
    block, shared bytes, stream, <the kernel's parameters>)``."""
    lines = [f"\n\n// ---- cuda2tile: launch shim of {kernel} (written by migrate build) ----",
             '#include "c2t_dropin.h"']
    for v in variants:
        types = ", ".join([p.c_type for p in v.params] + ["cudaStream_t"])
        lines += [f'extern "C" int {v.prefix}_init(void);',
                  f'extern "C" int {v.prefix}_call({types});',
                  f'extern "C" const char* {v.prefix}_get_last_error(void);']
    launched = kernel
    if kernel in param_names:  # a parameter named as its kernel hides it in the shim: launched by a pointer
        launched = f"c2t_kernel_{kernel}"
        lines.append(f"static const auto {launched} = &{kernel};")
    params = params_text.strip()
    last = params.rsplit("\n", 1)[-1]
    if "//" in last or last.lstrip().startswith("#"):  # a comment or an #endif last: the ')' on a line of its own
        params += "\n"
    lines.append(f"static void {launch_name(kernel)}(dim3 c2t_grid, dim3 c2t_block, size_t c2t_shared, "
                 f"cudaStream_t c2t_stream{', ' if params else ''}{params}) {{")
    for v in variants:
        lines.append(f"  if ({_condition(v)}) {{")
        lines.append(f"    static int c2t_ready = {v.prefix}_init();")
        lines.append("    if (c2t_ready == 0) {")
        symbols = {}
        for p in v.params:
            if p.kind == "symbol" and p.source not in symbols:
                var = f"c2t_symbol_{len(symbols)}"
                symbols[p.source] = var
                lines.append(f"      void* {var} = 0;")
                lines.append(f"      cudaGetSymbolAddress(&{var}, {p.source});")
        call = ", ".join([_argument(p, symbols) for p in v.params] + ["c2t_stream"])
        lines.append(f"      if ({v.prefix}_call({call}) == 0) {{")
        lines.append(f'        c2t_dropin_count("{kernel}", 1);')
        lines.append("        return;")
        lines.append("      }")
        lines.append("    }")
        lines.append(f'    c2t_dropin_failed("{kernel}", {v.prefix}_get_last_error());')
        lines.append("  }")
    lines.append(f'  c2t_dropin_count("{kernel}", 0);')
    lines.append(f"  {launched}<<<c2t_grid, c2t_block, c2t_shared, c2t_stream>>>({', '.join(param_names)});")
    lines.append("}")
    lines.append(f"// ---- end of the shim of {kernel} ----\n")
    return "\n".join(lines)


def launch_call(kernel: str, launch) -> str:
    """The shim's call replacing ``kernel<<<config>>>(args)`` (a :class:`.sites.LaunchText`)."""
    cfg = list(launch.config) + ["0"] * (4 - len(launch.config))
    grid, block, shared, stream = cfg[:4]
    args = launch.args.strip()
    return (f"{launch_name(kernel)}(dim3({grid}), dim3({block}), (size_t)({shared}), (cudaStream_t)({stream})"
            f"{', ' + args if args else ''})")
