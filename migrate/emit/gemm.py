"""Print a lifted GEMM (tile form; the analysis is :mod:`migrate.analysis.lift.gemm`).

Each TileLang block computes a ``block_M × block_N`` tile of C: a ``T.Pipelined`` loop over K
stages ``block_K``-wide tiles of the two factors in shared memory (each element evaluated as the
CUDA code evaluates it, zero where the block runs past what the CUDA code reads) and accumulates
in a register fragment; then the CUDA statements after the k loop run once per element.

``tensor_cores=False`` accumulates with the CUDA loop's multiply-adds in ascending k (exact
fp32); ``True`` uses ``T.gemm`` (tf32 numerics for fp32 inputs). Tile sizes, pipeline depth and
threads are parameters, with an autotuning space in the signature.
"""
from __future__ import annotations

from ..dtypes import SIZES
from ..ir import model as m
from ..ir.exprs import replace_node
from ..ir.loops import GemmPlan, KernelPlan
from .printer import Line, StmtPrinter, dtype_of, needs_prelude, scalar_name

#: The autotuning search space of a lifted GEMM (block_K only where the CUDA code does not fix it).
GEMM_TUNE = {"block_M": [64, 128], "block_N": [64, 128], "num_stages": [2, 3], "threads": [128, 256]}
_TF32 = ("tf32", "tf32_wgmma")  # float32 GEMMs whose tiles are typed tf32 at static sizes


def gemm_tune(g: GemmPlan) -> dict:
    return {**GEMM_TUNE, "block_K": [16, 32, 64]}


def row_alignment(views, sizes, dtype: str, var: str) -> str:
    """Python text, over the dict ``var`` of static sizes, that is true when every view's rows
    start on 16-byte boundaries (TMA's rule; TileLang's fallback copies misread half-precision
    rows that do not), or "False" when a row length is not one of the sizes."""
    per_row = 16 // SIZES[dtype]
    tests = []
    for v in views:
        cols = v.cols
        while isinstance(cols, m.Cast):
            cols = cols.operand
        if not (isinstance(cols, m.Ref) and cols.name in sizes):
            return "False"
        test = f'{var}["{cols.name}"] % {per_row} == 0'
        if test not in tests:
            tests.append(test)
    return " and ".join(tests)


def specialize_when(g: GemmPlan) -> str:
    """The launcher's test (a lambda's text) for compiling at static sizes: the rows aligned."""
    lay = g.layout
    return f"lambda s: {row_alignment((lay.a_view, lay.b_view), lay.static, scalar_name(g.a.dtype), 's')}" \
        if lay.static else ""


def gemm_factory(printer, kplan: KernelPlan, callees, tdims, bdims) -> list[Line]:
    """The factory of a lifted GEMM: ``kplan``'s one region is its :class:`GemmPlan`, laid out."""
    fn = kplan.fn
    (g,) = kplan.regions
    lay = g.layout
    scope = printer.scope_for(fn, kplan, tdims, bdims)
    scope.global_vars = {"x": "gx", "y": "gy", "z": "gz"}
    lines: list[Line] = []

    def add(indent, text, origin=""):
        lines.append(Line(indent, text, origin))

    a_dtype = scalar_name(g.a.dtype)
    halves, gemm_ok, nested = lay.halves, lay.gemm_ok, g.k.inner is not None
    va, vb = lay.a_view, lay.b_view
    b_nt = vb is not None and not vb.k_first  # B stored n-major: B[col * ldb + k]
    free_k, sizes, fast_kind = lay.free_k, lay.static, lay.fast_kind
    tune = ", block_M=128, block_N=None" + (", block_K=None" if free_k else "") + ", num_stages=None, threads=256"
    if gemm_ok:
        tune += f", tensor_cores={lay.tensor_cores}"
    if sizes:
        tune += ", static_sizes=None"
    summary = ("\n\n    C = A·B in block_M × block_N tiles; A and B staged through shared memory, "
               + ("block_K k at a time" if free_k else f"{g.k.size} k at a time (the CUDA tile)") + ".")
    if gemm_ok:
        summary += (f"\n    tensor_cores=False keeps the CUDA multiply-adds in k order (exact "
                    f"{scalar_name(g.acc_type)});\n    True uses T.gemm "
                    f"({'fp32 accumulation of exact products' if halves else 'tf32 for float32 inputs'}).")
    if sizes:
        how = {"half": "by warpgroup MMA", "tf32_wgmma": "by tf32 warpgroup MMA",
               "tf32": "by mma.sync (tf32 warpgroup MMA needs a k-major B)"}.get(fast_kind, "")
        summary += (f"\n    static_sizes: the values of {', '.join(sizes)} when the launcher compiles them as "
                    "constants\n    (GPUs): then tiles are copied by TMA where the row strides allow"
                    + (f", and on tensor cores multiplied\n    {how}." if how else "."))
    printer.header(fn, "tile", tdims, bdims, scope, add, tune=tune, summary=summary)
    per = g.tile.per_thread
    for d, size in sorted(g.tile.block_sizes.items()):
        if d in per:
            add(1, f'assert block_{d} == {size // per[d]}, "{fn.name} covers {size} elements along {d} with '
                   f'micro-tiles of {per[d]}: launch it with {size // per[d]} threads"', scope.tag(fn.span))
        else:
            add(1, f'assert block_{d} == {size}, "{fn.name} spells blockDim.{d} as {size}: launch it with '
                   f'that block size"', scope.tag(fn.span))
    if per:
        times = {d: f" * {per[d]}" if d in per else "" for d in ("x", "y")}
        tile = " × ".join(str(per.get(d, 1)) for d in ("y", "x"))
        add(1, f"extent_x = grid_x * block_x{times['x']}  # a {tile} micro-tile of C per CUDA thread",
            scope.tag(fn.span))
        add(1, f"extent_y = grid_y * block_y{times['y']}", scope.tag(fn.span))
    else:
        add(1, "extent_x = grid_x * block_x  # one element of C per CUDA thread", scope.tag(fn.span))
        add(1, "extent_y = grid_y * block_y", scope.tag(fn.span))
    if g.batched:
        add(1, "extent_z = grid_z * block_z  # the batch", scope.tag(fn.span))
    if gemm_ok:
        add(1, 'tensor_cores = tensor_cores and target == "cuda"  # the CPU target has no T.gemm on fragments')
    if sizes:
        add(1, "static = static_sizes is not None and target == \"cuda\"  # constant sizes: TMA copies")
        add(1, "# TMA copies rows that start on 16-byte boundaries")
        add(1, f"aligned = static and {row_alignment((va, vb), sizes, a_dtype, 'static_sizes')}")
    if va is not None or vb is not None:
        # half-precision tiles and batched (3-D) views only by TMA: their cp.async copies measured
        # slower than element staging on the H200 (2026-11-29)
        slow_async = halves or any(v is not None and v.batched for v in (va, vb))
        if not sizes:
            whole = "False" if slow_async else 'target == "cuda"'
        else:
            whole = 'target == "cuda" and aligned' if slow_async else 'target == "cuda" and (aligned or not static)'
        add(1, f"whole_tiles = {whole}  # T.copy of 2-D views (the CPU target stages element-wise)")
    if fast_kind:
        n_, k_, stages_ = lay.fast_tiles
        add(1, "if aligned and tensor_cores:  # tiles measured fastest on an H200 (bench/gemm_probe.py)")
        if free_k:
            add(2, f"block_N, block_K, num_stages = block_N or {n_}, block_K or {k_}, num_stages or {stages_}")
        else:
            add(2, f"block_N, num_stages = block_N or {n_}, num_stages or {stages_}")
    add(1, "block_N, num_stages = block_N or 128, num_stages or 2")
    if nested and free_k:
        add(1, f"block_K = block_K or {g.k.size} if whole_tiles else {g.k.size}  # else the CUDA code's tile over k",
            scope.tag(g.span))
    elif nested:
        add(1, f"block_K = {g.k.size}  # the CUDA code's tile over k", scope.tag(g.span))
    else:
        add(1, "block_K = block_K or 16", scope.tag(g.span))
    if fast_kind == "tf32_wgmma":
        add(1, "# float32 on Hopper's warpgroup MMA: its tiles are typed tf32 (B is k-major, as it needs)")
        add(1, 'tile_dtype = "custom[tfloat32]" if aligned and tensor_cores else T.float32')
    elif fast_kind == "tf32":
        add(1, "# float32 on Hopper's warpgroup MMA: its tiles are typed tf32 and must be k-major, which")
        add(1, "# B's (K, N) rows are not: a first kernel writes B transposed to a workspace")
        add(1, "transpose_b = aligned and tensor_cores")
        add(1, 'tile_dtype = "custom[tfloat32]" if transpose_b else T.float32')
        add(1, "b_tile_shape = (block_N, block_K) if transpose_b else (block_K, block_N)")
    add(1, '# GPUs: dynamic shared memory (aligned for asynchronous copies); the CPU target allows one')
    add(1, '# dynamic buffer only')
    add(1, 'shared_scope = "shared.dyn" if target == "cuda" else "shared"')
    params, rebinds = printer.parameters(fn, scope, callees)
    e0 = StmtPrinter(scope, indent=0).expr
    add(1, "")
    add(1, "@T.prim_func")
    add(1, f"def {fn.name}({', '.join(params)}):")
    grid = "T.ceildiv(extent_x, block_N), T.ceildiv(extent_y, block_M)" + (", extent_z" if g.batched else "")
    if fast_kind == "tf32":
        rows, cols = e0.coerce(vb.rows, "int32"), e0.coerce(vb.cols, "int32")
        tag = scope.tag(g.b.factor.span)
        add(2, "if transpose_b:", tag)
        add(3, f"B_t = T.alloc_global(({cols}, {rows}), T.float32)  # B transposed: k-major rows", tag)
        add(3, f"with T.Kernel(T.ceildiv({cols}, 32), T.ceildiv({rows}, 32), threads=256) as (bx, by):", tag)
        add(4, f"B_rows = T.decl_buffer(({rows}, {cols}), T.float32, data={vb.buffer}.data)", tag)
        add(4, "B_s = T.alloc_shared((32, 33), T.float32)  # padded: the column reads miss bank conflicts", tag)
        add(4, "for i, j in T.Parallel(32, 32):", tag)
        add(5, f"if by * 32 + i < {rows} and bx * 32 + j < {cols}:", tag)
        add(6, "B_s[i, j] = B_rows[by * 32 + i, bx * 32 + j]", tag)
        add(4, "for i, j in T.Parallel(32, 32):", tag)
        add(5, f"if bx * 32 + i < {cols} and by * 32 + j < {rows}:", tag)
        add(6, "B_t[bx * 32 + i, by * 32 + j] = B_s[j, i]", tag)
    kernel_at = len(lines)
    kernel_line = f"with T.Kernel({grid}, threads=threads{{prelude}}) as (bx, by{', bz' if g.batched else ''}):"
    add(2, kernel_line.format(prelude=""), scope.tag(fn.span))
    printer.kernel_preamble(fn, scope, rebinds, add)
    acc_dtype = dtype_of(g.acc_type, scope)
    a_name, b_name = "A_tile", "B_tile"
    a_tile_dtype = "tile_dtype" if fast_kind in _TF32 else dtype_of(g.a.dtype, scope)
    b_tile_dtype = "tile_dtype" if fast_kind in _TF32 else dtype_of(g.b.dtype, scope)
    add(3, f'{a_name} = T.alloc_shared((block_M, block_K), {a_tile_dtype}, scope=shared_scope)',
        scope.tag(g.span))
    b_shape = "(block_N, block_K)" if b_nt else ("b_tile_shape" if fast_kind == "tf32" else "(block_K, block_N)")
    add(3, f'{b_name} = T.alloc_shared({b_shape}, {b_tile_dtype}, scope=shared_scope)', scope.tag(g.span))
    add(3, f"{g.acc}_f = T.alloc_fragment((block_M, block_N), {acc_dtype})", scope.tag(g.span))
    add(3, "for i, j in T.Parallel(block_M, block_N):", scope.tag(g.span))
    add(4, f"{g.acc}_f[i, j] = 0", scope.tag(g.span))
    if lay.setup:
        setup = StmtPrinter(scope, indent=3)
        setup.block(lay.setup)
        lines.extend(setup.lines)
    e = e0
    bound = e.coerce(g.k.bound, "int32")
    if nested and free_k:  # as many k tiles as cover the CUDA tiles (block_K is theirs off whole tiles)
        trips = f"T.ceildiv({e.coerce(va.cols, 'int32')}, block_K)"
    elif nested:
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

    def stage(op, name, view, copy_start, loop, index_line, names, ok, where, base=4):
        """Fill one shared tile: on GPUs with ``T.copy`` from a 2-D view when the operand is one
        (cp.async, or TMA at static sizes; zero past the view), else (and on the CPU target,
        whose host code cannot pass a viewed buffer) element by element as the CUDA code
        computes it."""
        tag = scope.tag(op.factor.span)
        indent = base
        if view is not None:
            rows, cols = e0.coerce(view.rows, "int32"), e0.coerce(view.cols, "int32")
            shape, start = f"{rows}, {cols}", copy_start
            if view.batched:  # one matrix per batch, one after another
                shape, start = f"extent_z, {shape}", f"bz, {copy_start}"
            add(base, "if whole_tiles:", scope.tag(g.span))
            add(base + 1, f"# {view.buffer} read in whole tiles: a ({shape}) array, zeros past its bounds "
                          "as in the CUDA code", tag)
            own = tuple(kplan.shapes.get(view.buffer, ())) == (rows, cols) and not view.batched
            if own and fast_kind not in _TF32:  # the parameter's own shape
                add(base + 1, f"T.copy({view.buffer}[{copy_start}], {name})", tag)
            else:  # a view: of one matrix per batch, or typed tf32 for warpgroup MMA
                vdtype = "tile_dtype" if fast_kind in _TF32 else dtype_of(op.dtype, scope)
                add(base + 1, f"{name[0]}_view = T.decl_buffer(({shape}), {vdtype}, data={view.buffer}.data)", tag)
                add(base + 1, f"T.copy({name[0]}_view[{start}], {name})", tag)
            add(base, "else:", scope.tag(g.span))
            indent = base + 1
        add(indent, loop, tag)
        binds = [f"{n} = {index_line.split(' = ')[0]}" for n in names] + batch + k_bind
        for text in [index_line] + [b for b in binds if b.split(" = ")[0] != b.split(" = ")[1]]:  # not kk = kk
            add(indent + 1, text, tag)
        zero = f"T.{scalar_name(op.dtype)}(0)" if scalar_name(op.dtype) else "0"
        add(indent + 1, f"{name}[{where}] = T.if_then_else({' and '.join(ok + k_ok)}, "
                        f"{e.coerce(op.staged, scalar_name(op.dtype))}, {zero})", tag)

    stage(g.a, a_name, va, "by * block_M, ko * block_K",
          "for i, kk in T.Parallel(block_M, block_K):" if g.a.k_contiguous
          else "for kk, i in T.Parallel(block_K, block_M):", "gy = by * block_M + i", g.row_names, row_ok, "i, kk")
    b_base = 4
    if fast_kind == "tf32":
        add(4, "if transpose_b:  # tiles of the k-major copy", scope.tag(g.span))
        add(5, f"Bt_view = T.decl_buffer(({e0.coerce(vb.cols, 'int32')}, {e0.coerce(vb.rows, 'int32')}), "
               "tile_dtype, data=B_t.data)", scope.tag(g.b.factor.span))
        add(5, f"T.copy(Bt_view[bx * block_N, ko * block_K], {b_name})", scope.tag(g.b.factor.span))
        add(4, "else:", scope.tag(g.span))
        b_base = 5
    stage(g.b, b_name, vb, "bx * block_N, ko * block_K" if b_nt else "ko * block_K, bx * block_N",
          "for j, kk in T.Parallel(block_N, block_K):" if (g.b.k_contiguous or b_nt)
          else "for kk, j in T.Parallel(block_K, block_N):", "gx = bx * block_N + j", g.col_names, col_ok,
          "j, kk" if b_nt else "kk, j", base=b_base)
    exact_indent = 4
    if gemm_ok:
        add(4, "if tensor_cores:", scope.tag(g.span))
        transpose = ", transpose_B=True" if b_nt else (", transpose_B=transpose_b" if fast_kind == "tf32" else "")
        add(5, f"T.gemm({a_name}, {b_name}, {g.acc}_f{transpose})", scope.tag(g.span))
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
    after = StmtPrinter(scope, indent=5)
    after.block(body)
    lines.extend(after.lines)
    add(1, f"return {fn.name}")
    shim = sorted(scope.shim_calls | printer.macro_shim_calls(callees))
    if shim and needs_prelude(shim):
        names = ", ".join(repr(n) for n in shim)
        lines[kernel_at] = Line(2, kernel_line.format(prelude=f", prelude=cuda_math.externs_for([{names}], target)"),
                                scope.tag(fn.span))
    return lines
