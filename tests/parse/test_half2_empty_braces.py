"""``h2 = {};`` on a ``half2`` (quant3MatMul's ``res2 = {};``): nvcc takes the value-initialised
``__half2`` (zeros); the prelude's ``operator=`` from ``__half2_raw`` is a template that ``{}``
deduces nothing for, so clang no longer calls the assignment ambiguous (M1001). Assigning a
``__half2_raw`` (or a ``__nv_bfloat162_raw`` to its type) still resolves to it, and assigning
another type is still an error."""
from __future__ import annotations

from migrate.parse.frontend import parse_file

SOURCE = """
#include <cuda_fp16.h>
#include <cuda_bf16.h>
__global__ void k(half2* o, __nv_bfloat162* p, __half2_raw r, __nv_bfloat162_raw s) {
  half2 a; a = {};
  half2 b; b = r;
  __nv_bfloat162 c; c = {};
  __nv_bfloat162 d; d = s;
  o[threadIdx.x] = a; o[threadIdx.x + 1] = b; p[threadIdx.x] = c; p[threadIdx.x + 1] = d;
}
"""


def test_empty_braces_and_raw_values_assign_to_half2_without_errors(tmp_path):
    (tmp_path / "k.cu").write_text(SOURCE)
    parsed = parse_file(tmp_path / "k.cu")
    errors = [d for d in parsed.diagnostics if d.severity.value == "error"]
    assert not errors, [str(d) for d in errors]


def test_assigning_another_type_to_half2_is_still_an_error(tmp_path):
    (tmp_path / "k.cu").write_text(SOURCE.replace("b = r;", "b = s;"))
    parsed = parse_file(tmp_path / "k.cu")
    assert any(d.code == "M1001" for d in parsed.diagnostics), [str(d) for d in parsed.diagnostics]
