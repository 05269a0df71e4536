"""A functor object of no data passed by value (a pooling kernel's ``AvgPoolGrad<float>
pool_process``, a class template of methods only): its method call is the device function the
method is modelled as (parse.build), inlined; the body then never names the object, so the
prim_func takes nothing for it and the Signature keeps its place with no lanes (the launcher takes
the argument, whatever it holds, and passes nothing on). The migrated kernel runs on TileLang's C
target against numpy, one instance per functor."""
from __future__ import annotations

import numpy as np
import pytest

from tests.analysis.support import converted, module_of

POOL = """
#define HOSTDEVICE __host__ __device__

template <class T>
class AvgGrad {
  public:
    HOSTDEVICE inline void compute(const T& x, const T& dy, T scale, T* dx) {
      *dx += (scale * dy);
    }
};

template <class T>
class MaxGrad {
  public:
    HOSTDEVICE inline void compute(const T& x, const T& dy, T scale, T* dx) {
      *dx += dy * static_cast<T>(x > scale);
    }
};

template <typename Process, typename T, int ksize>
__global__ void pool_grad(const int n, const T* __restrict__ in, const T* __restrict__ grad,
                          Process process, T* __restrict__ out) {
  for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < n;
       index += blockDim.x * gridDim.x) {
    T gradient = static_cast<T>(0.0);
    T input = in[index];
    for (int k = 0; k < ksize; ++k) {
      int j = min(index + k, n - 1);
      process.compute(input, grad[j], static_cast<T>(1.f / (k + 1)), &gradient);
    }
    out[index] = gradient;
  }
}

int main() {
  float *a, *g, *o;
  pool_grad<AvgGrad<float>, float, 3><<<8, 64>>>(1000, a, g, AvgGrad<float>(), o);
  pool_grad<MaxGrad<float>, float, 3><<<8, 64>>>(1000, a, g, MaxGrad<float>(), o);
}
"""


def test_a_functor_of_no_data_is_inlined_and_takes_no_parameter(tmp_path):
    out, (k,) = converted(tmp_path, POOL)
    assert k["form"] not in ("hybrid", "unsupported"), k["diagnostics"]
    text = (out / "k.py").read_text()
    assert '("process", "lanes", ()),' in text  # its place kept, nothing passed on
    assert "process:" not in text  # no prim_func parameter
    pytest.importorskip("tilelang")
    import torch
    module = module_of(out / "k.py")
    rng = np.random.default_rng(7)
    n = 1000
    x = rng.uniform(-1, 1, n).astype(np.float32)
    dy = rng.uniform(-2, 2, n).astype(np.float32)
    for functor, template in (("AvgGrad", ("AvgGrad<float>", "float32", 3)),
                              ("MaxGrad", ("MaxGrad<float>", "float32", 3))):
        got = torch.full((n,), float("nan"), dtype=torch.float32)  # poisoned
        module.pool_grad(n, torch.from_numpy(x), torch.from_numpy(dy), b"\x00", got, grid=8, block=64,
                         template=template, target="c")
        want = np.zeros(n, np.float32)
        for kk in range(3):
            j = np.minimum(np.arange(n) + kk, n - 1)
            scale = np.float32(1.0) / np.float32(kk + 1)
            if functor == "AvgGrad":
                want += scale * dy[j]
            else:
                want += dy[j] * (x > scale).astype(np.float32)
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-6, atol=1e-6, err_msg=functor)
