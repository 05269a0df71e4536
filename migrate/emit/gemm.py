"""Print a lifted GEMM (tile form; the analysis is :mod:`migrate.analysis.lift_gemm`).

Each TileLang block computes a ``block_M × block_N`` tile of C: a ``T.Pipelined`` loop over K
stages ``block_K``-wide tiles of the two factors in shared memory (each element evaluated as the
CUDA code evaluates it, zero where the block runs past what the CUDA code reads) and accumulates
in a register fragment; then the CUDA statements after the k loop run once per element.

``tensor_cores=False`` accumulates with the CUDA loop's multiply-adds in ascending k (exact
fp32); ``True`` uses ``T.gemm`` (tf32 numerics for fp32 inputs). Tile sizes, pipeline depth and
threads are parameters, with an autotuning space in the signature.
"""
from __future__ import annotations

from ..analysis.delinearise import sites_in_gemm
from ..analysis.lift_gemm import GemmPlan, tile_view
from ..parse import model as m
from .printer import Line, StmtPrinter, dtype_of, scalar_name

#: The autotuning search space of a lifted GEMM (block_K only where the CUDA code does not fix it).
GEMM_TUNE = {"block_M": [64, 128], "block_N": [64, 128], "num_stages": [2, 3], "threads": [128, 256]}
_HALVES = ("float16", "bfloat16")


def replace_node(e, target, repl):
    if e is target:
        return repl
    return m.map_children(e, lambda c: replace_node(c, target, repl))


def gemm_tune(g: GemmPlan) -> dict:
    return GEMM_TUNE if g.k.inner else {**GEMM_TUNE, "block_K": [16, 32]}


def gemm_factory(emitter, kplan, g: GemmPlan, callees, tdims, bdims, allow_tf32: bool = False) -> list[Line]:
    fn = kplan.fn
    scope = emitter.scope_for(fn, kplan, tdims, bdims)
    scope.global_vars = {"x": "gx", "y": "gy", "z": "gz"}
    lines: list[Line] = []

    def add(indent, text, origin=""):
        lines.append(Line(indent, text, origin))

    a_dtype, b_dtype = scalar_name(g.a.dtype), scalar_name(g.b.dtype)
    halves = a_dtype in _HALVES and b_dtype in _HALVES
    gemm_ok = g.a.plain and g.b.plain and a_dtype == b_dtype and a_dtype in ("float32",) + _HALVES
    nested = g.k.inner is not None
    # whole-tile copies (cp.async) for float32 operands; half-precision tiles are staged element
    # by element, which measured faster on the H200 (129 vs 73 TFLOP/s at 4096^3, 2026-11-29)
    va = tile_view(g, g.a, "a") if a_dtype == "float32" else None
    va = va if va is not None and not va.k_first else None
    vb = tile_view(g, g.b, "b") if b_dtype == "float32" else None
    b_nt = vb is not None and not vb.k_first  # B stored n-major: B[col * ldb + k]
    g = emitter.shape_buffers(fn, g, sites_in_gemm)  # A[row * K + k] -> A[row, k] where proven
    tune = ", block_M=128, block_N=128" + ("" if nested else ", block_K=16") + ", num_stages=2, threads=256"
    if gemm_ok:
        tune += f", tensor_cores={halves or allow_tf32}"
    summary = ("\n\n    C = A·B in block_M × block_N tiles; A and B staged through shared memory, "
               + (f"{g.k.size} k at a time (the CUDA tile)" if nested else "block_K k at a time") + ".")
    if gemm_ok:
        summary += (f"\n    tensor_cores=False keeps the CUDA multiply-adds in k order (exact "
                    f"{scalar_name(g.acc_type)});\n    True uses T.gemm "
                    f"({'fp32 accumulation of exact products' if halves else 'tf32 for float32 inputs'}).")
    emitter.header(fn, "tile", tdims, bdims, scope, add, tune=tune, summary=summary)
    for d, size in sorted(g.tile.block_sizes.items()):
        add(1, f'assert block_{d} == {size}, "{fn.name} spells blockDim.{d} as {size}: launch it with '
               f'that block size"', scope.tag(fn.span))
    add(1, "extent_x = grid_x * block_x  # one element of C per CUDA thread", scope.tag(fn.span))
    add(1, "extent_y = grid_y * block_y", scope.tag(fn.span))
    if g.batched:
        add(1, "extent_z = grid_z * block_z  # the batch", scope.tag(fn.span))
    if nested:
        add(1, f"block_K = {g.k.size}  # the CUDA code's tile over k", scope.tag(g.span))
    if gemm_ok:
        add(1, 'tensor_cores = tensor_cores and target == "cuda"  # the CPU target has no T.gemm on fragments')
    if va is not None or vb is not None:
        add(1, 'whole_tiles = target == "cuda"  # T.copy of 2-D views (the CPU target stages element-wise)')
    add(1, '# GPUs: dynamic shared memory (aligned for asynchronous copies); the CPU target allows one')
    add(1, '# dynamic buffer only')
    add(1, 'shared_scope = "shared.dyn" if target == "cuda" else "shared"')
    params, rebinds = emitter.parameters(fn, scope, callees)
    add(1, "")
    add(1, "@T.prim_func")
    add(1, f"def {fn.name}({', '.join(params)}):")
    grid = "T.ceildiv(extent_x, block_N), T.ceildiv(extent_y, block_M)" + (", extent_z" if g.batched else "")
    kernel_at = len(lines)
    kernel_line = f"with T.Kernel({grid}, threads=threads{{prelude}}) as (bx, by{', bz' if g.batched else ''}):"
    add(2, kernel_line.format(prelude=""), scope.tag(fn.span))
    emitter.kernel_preamble(fn, scope, rebinds, add)
    acc_dtype = dtype_of(g.acc_type, scope)
    a_name, b_name = "A_tile", "B_tile"
    e0 = StmtPrinter(scope, indent=0).expr
    add(3, f'{a_name} = T.alloc_shared((block_M, block_K), {dtype_of(g.a.dtype, scope)}, scope=shared_scope)',
        scope.tag(g.span))
    add(3, f'{b_name} = T.alloc_shared({"(block_N, block_K)" if b_nt else "(block_K, block_N)"}, '
           f'{dtype_of(g.b.dtype, scope)}, scope=shared_scope)', scope.tag(g.span))
    add(3, f"{g.acc}_f = T.alloc_fragment((block_M, block_N), {acc_dtype})", scope.tag(g.span))
    add(3, "for i, j in T.Parallel(block_M, block_N):", scope.tag(g.span))
    add(4, f"{g.acc}_f[i, j] = 0", scope.tag(g.span))
    if g.setup:
        setup = StmtPrinter(scope, indent=3)
        setup.block(g.setup)
        lines.extend(setup.lines)
    e = StmtPrinter(scope, indent=0).expr
    bound = e.coerce(g.k.bound, "int32")
    if nested:
        trips = bound if g.k.step == 1 else f"T.ceildiv({bound}, {g.k.step})"
    else:
        trips = f"T.ceildiv({bound}, block_K)"
    add(3, f"for ko in T.Pipelined({trips}, num_stages=num_stages):", scope.tag(g.span))

    bounds = g.tile.bounds if g.loop_guarded else {}
    row_ok = ["gy < extent_y"] + [f"gy < {e.coerce(b, 'int32')}" for b in bounds.get("y", ())]
    col_ok = ["gx < extent_x"] + [f"gx < {e.coerce(b, 'int32')}" for b in bounds.get("x", ())]
    if nested:
        k_bind = [f"{g.k.var} = ko" + (f" * {g.k.step}" if g.k.step != 1 else ""), f"{g.k.inner} = kk"]
        k_ok = []
    else:
        k_bind = [f"{g.k.var} = ko * block_K + kk"]
        k_ok = [f"{g.k.var} < {bound}"]
    batch = ["gz = bz"] if g.batched else []

    e0 = StmtPrinter(scope, indent=0).expr

    def stage(op, name, view, copy_start, loop, index_line, names, ok, where):
        """Fill one shared tile: on GPUs with ``T.copy`` from a 2-D view when the operand is one
        (cp.async, zero past the view), else (and on the CPU target, whose host code cannot
        pass a viewed buffer) element by element as the CUDA code computes it."""
        tag = scope.tag(op.factor.span)
        indent = 4
        if view is not None:
            rows, cols = e0.coerce(view.rows, "int32"), e0.coerce(view.cols, "int32")
            add(4, "if whole_tiles:", scope.tag(g.span))
            add(5, f"# {view.buffer} read in whole tiles: a ({rows}, {cols}) array, zeros past its bounds "
                   "as in the CUDA code", tag)
            if tuple(emitter.shapes.get(view.buffer, ())) == (rows, cols):  # the parameter's own shape
                add(5, f"T.copy({view.buffer}[{copy_start}], {name})", tag)
            else:
                add(5, f"{name[0]}_view = T.Tensor(({rows}, {cols}), {dtype_of(op.dtype, scope)}, "
                       f"{view.buffer}.data)", tag)
                add(5, f"T.copy({name[0]}_view[{copy_start}], {name})", tag)
            add(4, "else:", scope.tag(g.span))
            indent = 5
        add(indent, loop, tag)
        for text in [index_line] + [f"{n} = {index_line.split(' = ')[0]}" for n in names] + batch + k_bind:
            add(indent + 1, text, tag)
        zero = f"T.{scalar_name(op.dtype)}(0)" if scalar_name(op.dtype) else "0"
        add(indent + 1, f"{name}[{where}] = T.if_then_else({' and '.join(ok + k_ok)}, "
                        f"{e.coerce(op.staged, scalar_name(op.dtype))}, {zero})", tag)

    stage(g.a, a_name, va, "by * block_M, ko * block_K",
          "for i, kk in T.Parallel(block_M, block_K):" if g.a.k_contiguous
          else "for kk, i in T.Parallel(block_K, block_M):", "gy = by * block_M + i", g.row_names, row_ok, "i, kk")
    stage(g.b, b_name, vb, "bx * block_N, ko * block_K" if b_nt else "ko * block_K, bx * block_N",
          "for j, kk in T.Parallel(block_N, block_K):" if (g.b.k_contiguous or b_nt)
          else "for kk, j in T.Parallel(block_K, block_N):", "gx = bx * block_N + j", g.col_names, col_ok,
          "j, kk" if b_nt else "kk, j")
    exact_indent = 4
    if gemm_ok:
        add(4, "if tensor_cores:", scope.tag(g.span))
        add(5, f"T.gemm({a_name}, {b_name}, {g.acc}_f{', transpose_B=True' if b_nt else ''})", scope.tag(g.span))
        add(4, "else:  # the CUDA loop's multiply-adds, in ascending k", scope.tag(g.span))
        exact_indent = 5
    add(exact_indent, "for kk in T.serial(block_K):", scope.tag(g.span))
    add(exact_indent + 1, "for i, j in T.Parallel(block_M, block_N):", scope.tag(g.span))
    xa = replace_node(g.a.factor, g.a.staged, m.Ref(f"{a_name}[i, kk]", "param", g.a.dtype, g.span))
    xb = replace_node(g.b.factor, g.b.staged, m.Ref(f"{b_name}[{'j, kk' if b_nt else 'kk, j'}]", "param",
                                                    g.b.dtype, g.span))
    prod = m.Binary("*", xa, xb, g.acc_type, g.span)
    add(exact_indent + 2, f"{g.acc}_f[i, j] = {g.acc}_f[i, j] + {e.coerce(prod, scalar_name(g.acc_type))}",
        scope.tag(g.span))

    # the statements after the CUDA loop, once per element of C
    add(3, "for i, j in T.Parallel(block_M, block_N):", scope.tag(g.span))
    add(4, "gy = by * block_M + i", scope.tag(g.span))
    add(4, "gx = bx * block_N + j", scope.tag(g.span))
    for text in batch:
        add(4, text, scope.tag(g.span))
    add(4, "if gy < extent_y and gx < extent_x:", scope.tag(g.span))
    acc_decl = m.DeclStmt((m.VarDecl(g.acc, g.acc_type, "local", False,
                                     m.Ref(f"{g.acc}_f[i, j]", "param", g.acc_type, g.span), g.span),), g.span)
    if g.loop_guarded:
        inner = (acc_decl,) + g.epilogue
        body = tuple(g.prologue) + (m.If(g.guard, m.Block(inner, g.span), None, g.guard_span),)
    else:
        body = tuple(g.prologue) + (acc_decl,) + g.epilogue
    assigned = {n.target.name for st in g.epilogue for n in m.walk(st)
                if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)}
    if g.acc not in assigned:
        scope.single.add(g.acc)
    printer = StmtPrinter(scope, indent=5)
    printer.block(body)
    lines.extend(printer.lines)
    add(1, f"return {fn.name}")
    shim = sorted(scope.shim_calls | emitter.macro_shim_calls(callees))
    emitter.uses_shim = bool(shim)
    from .kernel import _needs_prelude
    if shim and _needs_prelude(shim):
        names = ", ".join(repr(n) for n in shim)
        lines[kernel_at] = Line(2, kernel_line.format(prelude=f", prelude=cuda_math.externs_for([{names}], target)"),
                                scope.tag(fn.span))
    return lines
