"""Print a lifted GEMM (tile form; the analysis is :mod:`migrate.analysis.lift_gemm`).

The factory takes the tile sizes, pipeline depth and thread count as parameters (with an
autotuning space in the signature) and ``tensor_cores``: ``False`` keeps the CUDA loop's
multiply-adds in ascending k (exact fp32); ``True`` uses ``T.gemm`` (tf32 for fp32 inputs).
"""
from __future__ import annotations

from ..analysis.lift_gemm import GemmPlan
from ..analysis.rewrite import Transformer
from ..parse import model as m
from .printer import Line, StmtPrinter, dtype_of, scalar_name

#: The autotuning search space of a lifted GEMM.
GEMM_TUNE = {"block_M": [64, 128], "block_N": [64, 128], "block_K": [16, 32], "num_stages": [2, 3],
             "threads": [128, 256]}
_HALVES = ("float16", "bfloat16")


class _SwapLoad(Transformer):
    def __init__(self, load, text: str) -> None:
        self.load, self.text = load, text

    def leave_Index(self, node):
        if node == self.load:
            return m.Ref(self.text, "param", node.type, node.span)
        return node


def gemm_factory(emitter, kplan, gplan: GemmPlan, callees, tdims, bdims, allow_tf32: bool = False) -> list[Line]:
    fn = kplan.fn
    scope = emitter.scope_for(fn, kplan, tdims, bdims)
    scope.global_vars = {"x": "gx", "y": "gy"}
    lines: list[Line] = []

    def add(indent, text, origin=""):
        lines.append(Line(indent, text, origin))

    a_dtype, b_dtype = scalar_name(gplan.a.dtype), scalar_name(gplan.b.dtype)
    halves = a_dtype in _HALVES and b_dtype in _HALVES
    tensor_default = halves or allow_tf32
    tune = (", block_M=128, block_N=128, block_K=16, num_stages=2, threads=256, "
            f"tensor_cores={tensor_default}")
    emitter.header(fn, "tile", tdims, bdims, scope, add, tune=tune, summary=(
        f"\n\n    C = A·B in block_M × block_N tiles, K in steps of block_K through shared memory."
        f"\n    tensor_cores=False keeps the CUDA multiply-adds in k order (exact {scalar_name(gplan.acc_type)});"
        f"\n    True uses T.gemm ({'tf32 for float32 inputs' if not halves else 'fp32 accumulation'})."))
    add(1, "extent_x = grid_x * block_x  # one element of C per CUDA thread", scope.tag(fn.span))
    add(1, "extent_y = grid_y * block_y", scope.tag(fn.span))
    add(1, 'tensor_cores = tensor_cores and target == "cuda"  # the CPU target has no T.gemm on fragments')
    params, rebinds = emitter.parameters(fn, scope, callees)
    add(1, "")
    add(1, "@T.prim_func")
    add(1, f"def {fn.name}({', '.join(params)}):")
    add(2, "with T.Kernel(T.ceildiv(extent_x, block_N), T.ceildiv(extent_y, block_M), threads=threads) "
           "as (bx, by):", scope.tag(fn.span))
    may_alias = emitter.aliasing_buffers(fn)
    if may_alias:
        add(3, "# these pointers are not __restrict__ in CUDA and may alias: keep TileLang from assuming not")
        add(3, f"T.annotate_restrict_buffers({', '.join(may_alias)})", scope.tag(fn.span))
    for text in rebinds:
        add(3, text, scope.tag(fn.span))
    a_shape = "(block_K, block_M)" if gplan.a.transposed else "(block_M, block_K)"
    b_shape = "(block_N, block_K)" if gplan.b.transposed else "(block_K, block_N)"
    acc_dtype = dtype_of(gplan.acc_type, scope)
    add(3, f'{gplan.a.buffer}_s = T.alloc_shared({a_shape}, {dtype_of(gplan.a.dtype, scope)}, scope="shared")',
        scope.tag(gplan.a.load.span))
    add(3, f'{gplan.b.buffer}_s = T.alloc_shared({b_shape}, {dtype_of(gplan.b.dtype, scope)}, scope="shared")',
        scope.tag(gplan.b.load.span))
    add(3, f"{gplan.acc}_f = T.alloc_fragment((block_M, block_N), {acc_dtype})", scope.tag(gplan.span))
    add(3, "for i, j in T.Parallel(block_M, block_N):", scope.tag(gplan.span))
    add(4, f"{gplan.acc}_f[i, j] = 0", scope.tag(gplan.span))
    pr = StmtPrinter(scope, indent=0)
    e = pr.expr
    kbound = e.coerce(gplan.k_bound, "int32")
    add(3, f"for ko in T.Pipelined(T.ceildiv({kbound}, block_K), num_stages=num_stages):", scope.tag(gplan.span))

    bounds = gplan.tile.bounds
    y_ok = " and ".join(["gy < extent_y"] + [f"gy < {e.coerce(b, 'int32')}" for b in bounds.get("y", ())])
    x_ok = " and ".join(["gx < extent_x"] + [f"gx < {e.coerce(b, 'int32')}" for b in bounds.get("x", ())])
    k = gplan.k_var

    def stage(op, dim_loop, names, index_var, ok, shared_index):
        add(4, dim_loop, scope.tag(op.load.span))
        add(5, index_var, scope.tag(op.load.span))
        for name in names:
            add(5, f"{name} = {index_var.split(' = ')[0]}", scope.tag(op.load.span))
        add(5, f"{k} = ko * block_K + kk", scope.tag(op.load.span))
        zero = f"T.{scalar_name(op.dtype)}(0)" if scalar_name(op.dtype) else "0"
        add(5, f"{op.buffer}_s[{shared_index}] = T.if_then_else({ok} and {k} < {kbound}, "
               f"{e(op.load)}, {zero})", scope.tag(op.load.span))

    a_loop = "for kk, i in T.Parallel(block_K, block_M):" if gplan.a.transposed else \
        "for i, kk in T.Parallel(block_M, block_K):"
    stage(gplan.a, a_loop, gplan.row_names, "gy = by * block_M + i", y_ok,
          "kk, i" if gplan.a.transposed else "i, kk")
    b_loop = "for j, kk in T.Parallel(block_N, block_K):" if gplan.b.transposed else \
        "for kk, j in T.Parallel(block_K, block_N):"
    stage(gplan.b, b_loop, gplan.col_names, "gx = bx * block_N + j", x_ok,
          "j, kk" if gplan.b.transposed else "kk, j")
    add(4, "if tensor_cores:", scope.tag(gplan.span))
    add(5, f"T.gemm({gplan.a.buffer}_s, {gplan.b.buffer}_s, {gplan.acc}_f"
           f"{', transpose_A=True' if gplan.a.transposed else ''}"
           f"{', transpose_B=True' if gplan.b.transposed else ''})", scope.tag(gplan.span))
    add(4, "else:  # the CUDA loop's multiply-adds, in ascending k", scope.tag(gplan.span))
    add(5, "for kk in T.serial(block_K):", scope.tag(gplan.span))
    add(6, "for i, j in T.Parallel(block_M, block_N):", scope.tag(gplan.span))
    a_ref = f"{gplan.a.buffer}_s[{'kk, i' if gplan.a.transposed else 'i, kk'}]"
    b_ref = f"{gplan.b.buffer}_s[{'j, kk' if gplan.b.transposed else 'kk, j'}]"
    xa = _SwapLoad(gplan.a.load, a_ref).transform(gplan.a.factor)
    xb = _SwapLoad(gplan.b.load, b_ref).transform(gplan.b.factor)
    prod = m.Binary("*", xa, xb, gplan.acc_type, gplan.span)
    add(7, f"{gplan.acc}_f[i, j] = {gplan.acc}_f[i, j] + {e.coerce(prod, scalar_name(gplan.acc_type))}",
        scope.tag(gplan.span))

    # the statements after the CUDA loop, once per element of C
    add(3, "for i, j in T.Parallel(block_M, block_N):", scope.tag(gplan.span))
    add(4, "gy = by * block_M + i", scope.tag(gplan.span))
    add(4, "gx = bx * block_N + j", scope.tag(gplan.span))
    add(4, "if gy < extent_y and gx < extent_x:", scope.tag(gplan.span))
    acc_decl = m.DeclStmt((m.VarDecl(gplan.acc, gplan.acc_type, "local", False,
                                     m.Ref(f"{gplan.acc}_f[i, j]", "param", gplan.acc_type, gplan.span),
                                     gplan.span),), gplan.span)
    inner = (acc_decl,) + gplan.epilogue
    body = tuple(gplan.prologue) + ((m.If(gplan.guard, m.Block(inner, gplan.span), None, gplan.guard_span),)
                                    if gplan.guard is not None else inner)
    assigned = {n.target.name for st in gplan.epilogue for n in m.walk(st)
                if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)}
    if gplan.acc not in assigned:
        scope.single.add(gplan.acc)
    printer = StmtPrinter(scope, indent=5)
    printer.block(body)
    lines.extend(printer.lines)
    add(1, f"return {fn.name}")
    emitter.uses_shim = bool(scope.shim_calls)
    return lines
