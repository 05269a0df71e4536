"""Step 3, kernels: one TileLang kernel factory per group, from the table :data:`EMITTERS` (kind ->
emitter). Each emitter writes readable TileLang from the group's op kinds, shapes and
attributes (not from lowered TIR), with a comment naming the ONNX node each statement comes from.

Extents are numbers in the kernel text, or expressions of the dimensions the model declares by
name (``batch * 512``): each name is a ``T.dynamic`` extent of the factory (one compiled kernel for
every value; given as an int, the kernel is specialised). Every tensor a kernel takes is passed as
a contiguous view whose shape the kernel declares (:class:`Param`; the ``Model`` reshapes, which
costs nothing); a name folded into every view's products is bound through one parameter declared
with the factors and reshaped (:func:`~.base.declared_views`). Targets: on ``cuda`` reduction buffers are fragments walked by ``T.Parallel``; on
TileLang's ``c`` target (the CPU check) ``T.reduce_*`` and accumulators need ``alloc_local`` and
serial ``T.grid`` loops, so such factories pick ``alloc``/``loop`` by target.

GEMMs: A and B tiles are copied to shared memory in a ``T.Pipelined`` loop over K; float32 (and
integer, float64) MatMul/Gemm accumulate them with multiply-adds on CUDA cores (exact float32, no
tf32) unless ``allow_tf32``; float16/bfloat16 (and float32 with ``allow_tf32``) use ``T.gemm``
(tensor cores on the GPU).
"""
from __future__ import annotations

from .attention import emit_attention
from .base import RESERVED, Kernel, Options, Param, compute_dtype, py_name, py_names
from .conv import emit_conv, emit_pool
from .gemm import emit_matmul
from .maps import emit_map
from .rows import emit_layernorm, emit_reduce, emit_softmax

__all__ = ["EMITTERS", "RESERVED", "Kernel", "Options", "Param", "compute_dtype", "py_name", "py_names"]

EMITTERS = {
    "map": emit_map,
    "transpose": emit_map,
    "concat": emit_map,
    "slice": emit_map,
    "gather": emit_map,
    "matmul": emit_matmul,
    "conv": emit_conv,
    "pool": emit_pool,
    "reduce": emit_reduce,
    "softmax": emit_softmax,
    "layernorm": emit_layernorm,
    "attention": emit_attention,
}
