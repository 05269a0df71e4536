"""Methods of the project's structs called in device code (parse.build._method_call): a class with
private fields, getters, a setter, a friend operator beside them, called on an array-of-structs
buffer element, through a pointer and from another method (``this->``, implicit ``this``). Each
method is modelled as a device function whose first parameter is the object (``this_``, a
reference), so the inliner reads and writes the element the call is made on. Checked equal on the
CPU against the original."""
from __future__ import annotations

from migrate.ir import model as m
from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar, unit

CLASSES = """
#include <cuda_runtime.h>
#include <math.h>

class Shot {
 private:
  float angle_;
  float speed_;
  float range_;
  float height_;

 public:
  Shot() { angle_ = 0; speed_ = 0; range_ = 0; height_ = 0; }
  __host__ __device__ float angle() const { return angle_; }
  __host__ __device__ float speed() const { return this->speed_; }
  __host__ __device__ float energy() const { return 0.5f * speed() * speed(); }
  __host__ __device__ void set(float range, float height) {
    range_ = range;
    this->height_ = height;
  }
  __host__ __device__ void scale(float f) { set(range_ * f, height_ * f); }
  friend bool operator!=(const Shot& a, const Shot& b) { return fabsf(a.range_ - b.range_) > 1.f; }
};

struct Acc {
  int count;
  int total;
  __device__ static int twice(int v) { return 2 * v; }
  __device__ void add(int v) { count += 1; total += twice(v) / 2; }
  __device__ int mean() const { return count ? total / count : 0; }
};

__global__ void fly(const Shot* in, Shot* out, float* e, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = in[i].angle();
  float v = in[i].speed();
  out[i].set(v * sinf(a), v * v * 0.01f);
  out[i].scale(2.0f);
  e[i] = in[i].energy();
}

__global__ void tally(const int* x, Acc* acc, int* means, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Acc* mine = acc + i;
  mine->add(x[i]);
  mine->add(Acc::twice(x[i]) + x[i]);
  means[i] = acc[i].mean();
}
"""

SPEC = (spec_kernel("fly", (2, 1, 1), (64, 1, 1), "fp32",
                    spec_buffer("in", "float32", 4 * 128, "in", -2.0, 2.0),
                    spec_buffer("out", "float32", 4 * 128, "inout", -1.0, 1.0),  # fields set() leaves
                    spec_buffer("e", "float32", 128, "out"),
                    spec_scalar("n", "int32", 128))
        + spec_kernel("tally", (2, 1, 1), (64, 1, 1), "exact",
                      spec_buffer("x", "int32", 128, "in", -50, 50),
                      spec_buffer("acc", "int32", 2 * 128, "inout", 0, 9),
                      spec_buffer("means", "int32", 128, "out"),
                      spec_scalar("n", "int32", 100)))


def test_methods_are_device_functions_of_their_object(tmp_path):
    u = unit(tmp_path, CLASSES)
    fly = u.kernel("fly")
    callees = [n for n in m.walk(fly.body) if isinstance(n, m.Call) and n.kind == "device"]
    assert [c.callee for c in callees] == ["Shot_angle", "Shot_speed", "Shot_set", "Shot_scale", "Shot_energy"]
    assert all(isinstance(c.args[0], m.Index) for c in callees)  # the element the call is made on
    by_name = {f.name: f for f in u.device_functions}
    this = by_name["Shot_set"].params[0]
    assert this.name == "this_" and isinstance(this.type, m.Reference) and not this.const
    assert by_name["Shot_angle"].params[0].const  # a const method
    fields = {n.field for n in m.walk(by_name["Shot_set"].body) if isinstance(n, m.Member)}
    assert fields == {"range_", "height_"}  # implicit this and this->
    assert by_name["Shot_energy"].calls == ("Shot_speed",)  # a method calling another
    # a static method, called as Acc::twice(...) and from another method, takes no object
    assert [c.callee for c in m.walk(u.kernel("tally").body) if isinstance(c, m.Call) and c.kind == "device"] \
        == ["Acc_add", "Acc_add", "Acc_twice", "Acc_mean"]
    assert [p.name for p in by_name["Acc_twice"].params] == ["v"] and by_name["Acc_add"].calls == ("Acc_twice",)


def test_methods_run_equal_to_cuda_on_the_cpu(tmp_path):
    out, kernels = converted(tmp_path, CLASSES, SPEC)
    forms = {k["kernel"]: k["form"] for k in kernels}
    assert forms["fly"] == "tile" and forms["tally"] in ("tile", "portable")
    assert all(k["check"]["status"] == "pass" for k in kernels), [k["check"]["message"] for k in kernels]


def test_a_method_of_a_struct_without_a_lane_form_is_still_refused(tmp_path):
    # a struct holding a pointer has no dtype: its method call names the construct, no traceback
    source = """
        struct Box { float* data; __device__ float first() const { return data[0]; } };
        __global__ void k(Box b, float* y) { y[threadIdx.x] = b.first(); }
    """
    out, kernels = converted(tmp_path, "#include <cuda_runtime.h>\n" + source, expect_ok=False)
    (k,) = kernels
    assert k["form"] in ("hybrid", "unsupported") and k["diagnostics"]
