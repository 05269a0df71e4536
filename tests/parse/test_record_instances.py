"""A struct template's instances as records (parse.build._plain_fields, parse.instance_copies):
``template <class T> struct block_record {unsigned start, end; T pivot; unsigned parent;}`` read
by a kernel template launched for two element types. Clang leaves the template's
``block_record<T>`` dependent, so the kernel is converted per instance; each instance's struct is
an implicit instantiation, whose fields libclang gives by its type, not as children of its
declaration. The program's own launches replay into each instance."""
from __future__ import annotations

import json

import pytest

from tests.analysis.support import checked, program_converted

PROGRAM = """
#include <cuda_runtime.h>
#include <stdio.h>
template <class T> struct block_record { unsigned start; unsigned end; T pivot; unsigned parent; };

template <class T>
__global__ void spans(const block_record<T>* blocks, T* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    block_record<T> b = blocks[i];
    out[i] = b.pivot * (T)(b.end - b.start) + (T)b.parent;
  }
}

int main() {
  const int n = 40;
  block_record<float> hf[n]; block_record<unsigned> hu[n];
  for (int i = 0; i < n; i++) {
    hf[i].start = i; hf[i].end = i + 1 + i % 5; hf[i].pivot = 0.5f * i - 3.0f; hf[i].parent = i % 3;
    hu[i].start = 2 * i; hu[i].end = 2 * i + 3; hu[i].pivot = 7 * i; hu[i].parent = i % 4;
  }
  block_record<float>* df; block_record<unsigned>* du; float* of; unsigned* ou;
  cudaMalloc((void**)&df, sizeof(hf)); cudaMalloc((void**)&du, sizeof(hu));
  cudaMalloc((void**)&of, n * sizeof(float)); cudaMalloc((void**)&ou, n * sizeof(unsigned));
  cudaMemcpy(df, hf, sizeof(hf), cudaMemcpyHostToDevice);
  cudaMemcpy(du, hu, sizeof(hu), cudaMemcpyHostToDevice);
  spans<float><<<2, 32>>>(df, of, n);
  spans<unsigned><<<2, 32>>>(du, ou, n);
  float rf[n]; unsigned ru[n];
  cudaMemcpy(rf, of, sizeof(rf), cudaMemcpyDeviceToHost);
  cudaMemcpy(ru, ou, sizeof(ru), cudaMemcpyDeviceToHost);
  printf("%f %u\\n", rf[7], ru[7]);
  return 0;
}
"""


def test_a_struct_template_s_instances_are_records_and_replay(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "qs.cu")
    (row,) = json.loads((out / "report.json").read_text())["kernels"]
    assert row["form"] == "tile" and row["reason"].startswith("converted per instance (2)"), row
    status, checks = checked(out, "--run", "")
    assert status == 0, checks
    assert checks["spans"]["inputs"] == "trace" and checks["spans"]["status"] == "pass", checks["spans"]
    assert checks["spans"]["message"].startswith("2 recorded launches"), checks["spans"]
    module = out / "qs.py"  # the pivot read from another field: the replay tells
    text = module.read_text()
    assert "b_pivot = T.reinterpret(T.Cast(T.int32, blocks[i * 4 + 2]), 'float32')" in text  # float: its bits
    module.write_text(text.replace("b_pivot = T.reinterpret(T.Cast(T.int32, blocks[i * 4 + 2])",
                                   "b_pivot = T.reinterpret(T.Cast(T.int32, blocks[i * 4 + 3])"))
    status, checks = checked(out, "--run", "")
    assert status == 1 and checks["spans"]["status"] == "fail", checks["spans"]
