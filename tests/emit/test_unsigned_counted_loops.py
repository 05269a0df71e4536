"""A loop counting an unsigned variable up to a constant (``for (unsigned i = 0; i < pack_size;
++i)`` with ``const unsigned pack_size = 16 / sizeof(T)``, the uint4 packs of
attentionMergeState's kernel) is a counted TileLang loop (``T.unroll`` for ``#pragma unroll``)
over its int32 count, the C variable bound as the count's uint32 value: the while form it had
indexed the per-thread arrays with a value TileLang cannot resolve, which keeps them in local
memory (the half instance ran 1.65x its original on the H100)."""
from __future__ import annotations

from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar
from tests.lowering import lower_sm90

KERNEL = """
template <typename scalar_t>
__global__ void scale_packs(scalar_t* __restrict__ out, const scalar_t* __restrict__ in, float s, unsigned n) {
  const unsigned pack_size = 16 / sizeof(scalar_t);
  unsigned idx = blockIdx.x * blockDim.x + threadIdx.x;
  if (idx * pack_size >= n) return;
  uint4 p = reinterpret_cast<const uint4*>(in)[idx];
  uint4 o;
  #pragma unroll
  for (unsigned i = 0; i < pack_size; ++i) {
    reinterpret_cast<scalar_t*>(&o)[i] = reinterpret_cast<const scalar_t*>(&p)[i] * s - (float)(i - 1u);
  }
  reinterpret_cast<uint4*>(out)[idx] = o;
}
void run(float* o, const float* i, unsigned n) { scale_packs<float><<<(n / 4 + 127) / 128, 128>>>(o, i, 2.0f, n); }
"""

# 3 blocks of 128 packs: the domain's last tile is partial, and the packs past n return early
SPEC = spec_kernel("scale_packs", (3, 1, 1), (128, 1, 1), "fp32",
                   spec_buffer("out", "float32", 1536, "inout", -1, 1),   # packs past n keep theirs
                   spec_buffer("in", "float32", 1536, "in", -1, 1),
                   spec_scalar("s", "float32", 1.5),
                   spec_scalar("n", "uint32", 1000), template="float")


def test_unsigned_counted_loop_over_a_constant_pack(tmp_path):
    out, (k,) = converted(tmp_path, KERNEL, SPEC)
    assert k["check"]["status"] == "pass", k
    text = (out / "k.py").read_text()
    assert "for i_n in T.unroll(4):" in text and "i = T.Cast(T.uint32, i_n)" in text, text
    assert "while" not in text
    # (i - 1u) wraps at i = 0 as C's unsigned arithmetic does: the check above compares it

    import importlib.util

    spec = importlib.util.spec_from_file_location("k_packs", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    sig = mod.KERNELS["scale_packs"]
    source = lower_sm90(sig.instances[0][2] if sig.instances else sig, (3, 1, 1), (128, 1, 1))
    assert "__global__" in source and "while" not in source


def test_the_constant_bound_converts_as_c_does(tmp_path):
    """A bound written through a narrowing cast counts what C counts: ``(unsigned char)260`` is 4."""
    source = KERNEL.replace("i < pack_size", "i < (unsigned char)(256 + pack_size)")
    out, _ = converted(tmp_path, source, SPEC)
    assert "for i_n in T.unroll(4):" in (out / "k.py").read_text()
