"""Warp votes kept at thread level (simt form): CUDA's ``__ballot_sync``/``__any_sync``/
``__all_sync`` take (mask, predicate) and TileLang's ``T.ballot_sync``/``T.any_sync``/``T.all_sync``
take (predicate, mask). They were printed in CUDA's order, so the predicate became the mask: bh's
``__all_sync(0xffffffff, tmp >= dq[depth])`` ran as ``__all_sync(pred, 0xffffffff)``, an illegal
instruction on the H200 (a lane outside its own mask). The vote lowered for sm_90a passes the
CUDA's mask first, the predicate second; CUDA's 32-bit ballot is read as 32 bits."""
from __future__ import annotations

import importlib.util
import re

from tests.analysis.support import converted, spec_buffer, spec_kernel
from tests.lowering import lower_sm90

#: A vote in a loop condition keeps the kernel at thread level (the pool's bh votes in a branch
#: of a tree walk); the other two votes, one with a half-warp mask, stand beside it.
VOTES = """
__global__ void votes(const float* __restrict__ x, unsigned* __restrict__ y) {
  int t = threadIdx.x + blockIdx.x * blockDim.x;
  int k = 0;
  while (__any_sync(0xffffffff, x[t] > 0.25f * k)) k++;
  unsigned b = __ballot_sync(0xffffffff, x[t] > 0.0f);
  int all = 0;
  if (threadIdx.x % 32 < 16) all = __all_sync(0x0000ffffu, x[t] > -0.5f);
  y[t] = b + k * 3u + all * 5u;
}
"""

VOTES_SPEC = spec_kernel("votes", (2, 1, 1), (64, 1, 1), "exact",
                         spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                         spec_buffer("y", "uint32", 128, "out"))


def test_votes_pass_the_cuda_mask_first_when_lowered_for_cuda(tmp_path):
    out, (k,) = converted(tmp_path, VOTES, VOTES_SPEC)
    assert k["form"] == "simt", k  # checked on GPUs only (bench/test_kernels.py)
    spec = importlib.util.spec_from_file_location("k_votes", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["votes"], (2, 1, 1), (64, 1, 1))
    calls = dict(re.findall(r"__(any|all|ballot)_sync\(\(uint\)(\d+), \(\(int\)", source))
    assert calls == {"any": "4294967295", "ballot": "4294967295", "all": "65535"}, source
    assert re.search(r"\(uint\)\(\(unsigned long long\)__ballot_sync", source), source


#: vote's kernels: `__any_sync(MASK, input[tx])` / `__all_sync` on unsigned words, in a loop
#: (portable form: votes through shared memory). The predicate, converted to int, was tested
#: `(int)u != 0`, which TVM took for `0 < (int)u`: words of 2**31 and above voted false on the
#: H100 (the last warp's 32 results). The test is on the word itself now.
UNSIGNED_VOTES = """
__global__ void any_all(const unsigned int* input, unsigned int* result, int repeat) {
  int tx = threadIdx.x;
  for (int i = 0; i < repeat; i++) {
    result[tx] = __any_sync(0xffffffff, input[tx]);
    result[blockDim.x + tx] = __all_sync(0xffffffff, input[tx]);
  }
}
"""

UNSIGNED_VOTES_SPEC = spec_kernel("any_all", (1, 1, 1), (128, 1, 1), "exact",
                                  spec_buffer("input", "uint32", 128, "in", 2147483648, 4294967295),
                                  spec_buffer("result", "uint32", 256, "out"),
                                  '[[kernel.args]]\nname = "repeat"\nscalar = "int32"\nvalue = 2\n')


def test_an_unsigned_vote_predicate_is_tested_as_the_word(tmp_path):
    out, (k,) = converted(tmp_path, UNSIGNED_VOTES, UNSIGNED_VOTES_SPEC)
    assert k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    spec = importlib.util.spec_from_file_location("k_any_all", out / "k.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    source = lower_sm90(mod.KERNELS["any_all"], (1, 1, 1), (128, 1, 1))
    assert not re.search(r"0 < \(\(int\)", source), source
