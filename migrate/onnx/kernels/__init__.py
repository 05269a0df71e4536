"""Step 3, kernels: one TileLang kernel factory per group, from the table :data:`EMITTERS` (kind ->
emitter). Each emitter writes readable TileLang from the group's op kinds, shapes and
attributes (not from lowered TIR), with a comment naming the ONNX node each statement comes from.

Shapes are static: they are numbers in the kernel text. Every tensor a kernel takes is passed as
a contiguous view whose shape the kernel declares (:class:`Param`; the ``Model`` reshapes, which
costs nothing). Targets: on ``cuda`` reduction buffers are fragments walked by ``T.Parallel``; on
TileLang's ``c`` target (the CPU check) ``T.reduce_*`` and accumulators need ``alloc_local`` and
serial ``T.grid`` loops, so such factories pick ``alloc``/``loop`` by target.

GEMMs: float32 MatMul/Gemm accumulate in a serial loop over K on CUDA cores (exact float32, no
tf32) unless ``allow_tf32``; float16/bfloat16 (and float32 with ``allow_tf32``) use ``T.gemm`` on
shared tiles in a ``T.Pipelined`` loop (tensor cores on the GPU).
"""
from __future__ import annotations

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
}
