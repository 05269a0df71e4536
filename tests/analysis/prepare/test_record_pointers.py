"""A kernel's pointer to a struct of device buffers (analysis.prepare.record_pointers), the way a
clustering code keeps its model: ``typedef struct {float* N; float* pi; float* means; ...}
clusters_t``, its buffers allocated one by one, the struct copied to the device and its pointer
passed to every kernel (``clusters->means[c * D + d]``). Each pointer field the kernel reads is a
buffer parameter of its own; the launcher takes the struct's buffers by field, and a recorded
launch (the program's own run) passes the buffers the struct's pointers reach."""
from __future__ import annotations

import json

import numpy as np
import pytest

from migrate.analysis.prepare.record_pointers import record_pointers
from migrate.ir import model as m
from migrate.ir.loops import NoTileLangForm
from tests.analysis.support import checked, module_of, program_converted, unit

KERNELS = """
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct {
  float* N;        // [M]
  float* pi;       // [M]
  float* means;    // [M*D]
  const int* ids;  // [M]
  float* scratch;  // never read by the kernels
} clusters_t;

__global__ void normalise(clusters_t* clusters, int num_clusters, int num_dimensions) {
  int c = blockIdx.x;
  int d = threadIdx.x;
  if (c < num_clusters && d < num_dimensions) {
    float n = clusters->N[c];
    clusters->means[c * num_dimensions + d] = clusters->means[c * num_dimensions + d] / (n > 0.5f ? n : 1.0f);
    if (d == 0) clusters->pi[c] = n * (float)clusters->ids[c];
  }
}

__global__ void weigh(const float* data, clusters_t* clusters, float* out, int num_clusters, int num_dimensions) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < num_clusters) {
    float s = 0.0f;
    for (int d = 0; d < num_dimensions; d++) s += data[d] * (*clusters).means[c * num_dimensions + d];
    out[c] = s * clusters[0].pi[c];
  }
}
"""

PROGRAM = KERNELS + """
int main() {
  const int M = 7, D = 20;
  clusters_t h, *d_clusters;
  float hN[M], hmeans[M * D], hdata[D], hout[M];
  int hids[M];
  for (int c = 0; c < M; c++) { hN[c] = 0.25f + 0.5f * c; hids[c] = 1 + (c * 5) % 4; }
  for (int i = 0; i < M * D; i++) hmeans[i] = (float)((i * 37) % 23) - 11.0f;
  for (int d = 0; d < D; d++) hdata[d] = 0.1f * (d % 7) - 0.3f;
  cudaMalloc((void**)&h.N, sizeof(float) * M);
  cudaMalloc((void**)&h.pi, sizeof(float) * M);
  cudaMalloc((void**)&h.means, sizeof(float) * M * D);
  cudaMalloc((void**)&h.ids, sizeof(int) * M);
  h.scratch = NULL;
  float* d_data; float* d_out;
  cudaMalloc((void**)&d_data, sizeof(float) * D);
  cudaMalloc((void**)&d_out, sizeof(float) * M);
  cudaMemcpy(h.N, hN, sizeof(float) * M, cudaMemcpyHostToDevice);
  cudaMemcpy(h.means, hmeans, sizeof(float) * M * D, cudaMemcpyHostToDevice);
  cudaMemcpy((void*)h.ids, hids, sizeof(int) * M, cudaMemcpyHostToDevice);
  cudaMemcpy(d_data, hdata, sizeof(float) * D, cudaMemcpyHostToDevice);
  cudaMalloc((void**)&d_clusters, sizeof(clusters_t));
  cudaMemcpy(d_clusters, &h, sizeof(clusters_t), cudaMemcpyHostToDevice);
  normalise<<<M, 32>>>(d_clusters, M, D);
  weigh<<<1, 32>>>(d_data, d_clusters, d_out, M, D);
  cudaMemcpy(hout, d_out, sizeof(float) * M, cudaMemcpyDeviceToHost);
  for (int c = 0; c < M; c++) printf("%f\\n", hout[c]);
  return 0;
}
"""


def test_a_struct_of_buffers_is_one_buffer_parameter_per_field_read(tmp_path):
    fn = record_pointers(unit(tmp_path, KERNELS).kernel("normalise"))
    assert [(p.name, str(p.type), p.field_of) for p in fn.params[:4]] == [
        ("clusters_N", "float32*", ("clusters", "N", 0)), ("clusters_pi", "float32*", ("clusters", "pi", 8)),
        ("clusters_means", "float32*", ("clusters", "means", 16)), ("clusters_ids", "const int32*", ("clusters", "ids", 24))]
    assert not [n for n in m.walk(fn.body) if isinstance(n, m.Member)]


def test_the_launcher_takes_the_buffers_by_field_and_equals_numpy(tmp_path):
    import torch

    out = program_converted(tmp_path, PROGRAM, "gmm.cu")
    rows = {k["kernel"]: k for k in json.loads((out / "report.json").read_text())["kernels"]}
    assert rows["normalise"]["form"] == "tile" and rows["weigh"]["form"] not in ("hybrid", "unsupported"), rows
    mod = module_of(out / "gmm.py")
    M, D = 5, 24
    rng = np.random.default_rng(1)
    N = rng.uniform(0.0, 3.0, M).astype(np.float32)
    means = rng.uniform(-1.0, 1.0, M * D).astype(np.float32)
    ids = rng.integers(1, 9, M).astype(np.int32)
    t = {"N": torch.from_numpy(N.copy()), "pi": torch.full((M,), float("nan")),  # poisoned
         "means": torch.from_numpy(means.copy()), "ids": torch.from_numpy(ids)}
    mod.normalise(t, M, D, grid=M, block=32, target="c")
    want = means.reshape(M, D) / np.where(N > 0.5, N, np.float32(1.0))[:, None]
    np.testing.assert_allclose(t["means"].numpy().reshape(M, D), want, rtol=1e-6)
    np.testing.assert_allclose(t["pi"].numpy(), N * ids, rtol=1e-6)
    with pytest.raises(Exception, match="gives no buffer for its field 'ids'"):
        mod.normalise({"N": t["N"], "pi": t["pi"], "means": t["means"]}, M, D, grid=M, block=32, target="c")


def test_the_program_s_own_launches_replay_through_the_struct_s_pointers(tmp_path):
    pytest.importorskip("tilelang")
    out = program_converted(tmp_path, PROGRAM, "gmm.cu")
    status, checks = checked(out, "--run", "")
    assert status == 0, checks
    for name in ("normalise", "weigh"):
        assert checks[name]["inputs"] == "trace" and checks[name]["status"] == "pass", checks[name]
    module = out / "gmm.py"  # a field read from another field's buffer: the replay tells
    text = module.read_text()
    assert "clusters_pi[gx // block_x] = n *" in text
    module.write_text(text.replace("clusters_pi[gx // block_x] = n *", "clusters_pi[gx // block_x] = 2.0 * n *"))
    status, checks = checked(out, "--run", "")
    assert status == 1 and checks["normalise"]["status"] == "fail", checks["normalise"]


PASSED_ON = """
typedef struct { float* a; float* b; } pair_t;
__device__ float first(pair_t* p, int i) { return p->a[i]; }
__global__ void k(pair_t* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p->b[i] = first(p, i);
}
__global__ void moved(pair_t* p, float* other) { p->a = other; p->a[threadIdx.x] = 1.0f; }
"""


def test_a_struct_of_buffers_passed_on_or_repointed_is_refused_with_its_reason(tmp_path):
    u = unit(tmp_path, PASSED_ON)
    with pytest.raises(NoTileLangForm, match="used other than to read its pointer fields"):
        record_pointers(u.kernel("k"))
    with pytest.raises(NoTileLangForm, match="is assigned a pointer"):
        record_pointers(u.kernel("moved"))


LIST = """
struct node { node* next; int val; };
__global__ void chase(node* head, int* out, int steps) {
  node* p = head + threadIdx.x;
  for (int k = 0; k < steps; k++) p = p->next;
  out[threadIdx.x] = p->val;
}
"""


def test_a_struct_pointing_to_its_own_type_is_refused_with_a_diagnostic_not_an_error(tmp_path):
    from tests.analysis.support import converted

    out, kernels = converted(tmp_path, LIST, expect_ok=False)
    (row,) = kernels
    assert row["form"] in ("hybrid", "unsupported")
    assert row["diagnostics"] and not any(d["code"] == "M9001" for d in row["diagnostics"]), row["diagnostics"]
