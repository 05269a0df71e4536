"""MatMul / Gemm: a GEMM tile over shared A and B tiles (exact float32 multiply-adds by default,
T.gemm for half types or --allow-tf32) with the group's elementwise epilogue."""
from __future__ import annotations

from ..dims import many
from ..graph import Graph
from ..group import Group
from ..indexing import broadcast_index, broadcast_shapes, prod, unravel
from ..ops import literal
from .base import (TILED_PRELUDE, Body, Kernel, Options, accum_dtype, cast_to, compute_dtype, factory, ordered,
                   tolerance_class)


# -- GEMM: MatMul / Gemm tile with the epilogue ------------------------------------------------------

def emit_matmul(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    head = group.nodes[0]
    a, bt = graph.info(head.inputs[0]), graph.info(head.inputs[1])
    out = graph.info(head.outputs[0])
    ta = head.op_type == "Gemm" and head.attrs.get("transA", 0)
    tb = head.op_type == "Gemm" and head.attrs.get("transB", 0)
    # a 1-D operand is a row (A) or a column (B) whose dimension the output drops (numpy matmul)
    a_mat = a.shape if len(a.shape) >= 2 else (1,) + a.shape
    b_mat = bt.shape if len(bt.shape) >= 2 else bt.shape + (1,)
    M, N = (a_mat[-1] if ta else a_mat[-2]), (b_mat[-2] if tb else b_mat[-1])
    K = a_mat[-2] if ta else a_mat[-1]
    batch = broadcast_shapes(a_mat[:-2], b_mat[:-2])
    Bt = prod(batch)
    # activations (..., M, K) times one weight matrix: the batch folds into the rows, one GEMM
    folded = many(Bt) and not ta and prod(b_mat[:-2]) == 1 and a_mat[:-2] == batch
    if folded:
        a_mat, b_mat = (Bt * M, K), b_mat[-2:]
        rows_of = batch + (M,)
        M, batch, Bt = Bt * M, (), 1
    dtype, acc_t = a.dtype, accum_dtype(a.dtype)
    tensor_cores = dtype in ("float16", "bfloat16") or (dtype == "float32" and opts.allow_tf32)
    b = Body(graph, names)
    bz_index = unravel("bz", batch)

    def operand(info, mat):
        own = mat[:-2]
        if many(Bt) and prod(own) not in (1, Bt):   # a batch broadcast over some dimensions only
            return b.param(info.name, own + mat[-2:]), broadcast_index(own, batch, bz_index)
        if many(Bt):
            view = (prod(own),) + mat[-2:]
            return b.param(info.name, view), ["bz" if many(view[0]) else "0"]
        return b.param(info.name, mat[-2:]), []

    A, za = operand(a, a_mat)
    B, zb = operand(bt, b_mat)
    lead = lambda z: "".join(f"{e}, " for e in z)  # noqa: E731
    out_view = ((Bt, M, N) if many(Bt) else (M, N))
    out_index = bz_index + (["row"] if len(a.shape) >= 2 else []) + (["col"] if len(bt.shape) >= 2 else [])
    if folded:
        out_index = unravel("row", rows_of) + (["col"] if len(bt.shape) >= 2 else [])
    canonical = (out_view, (["bz"] if many(Bt) else []) + ["row", "col"])
    ind = " " * 20
    epi = []
    cd = compute_dtype(out.dtype)
    acc_expr = "acc[i, j]" if acc_t == cd else f"T.Cast(T.{cd}, acc[i, j])"
    if head.op_type == "Gemm":
        alpha, beta = float(head.attrs.get("alpha", 1.0)), float(head.attrs.get("beta", 1.0))
        e = acc_expr if alpha == 1.0 else f"{literal(alpha, cd)} * {acc_expr}"
        if len(head.inputs) > 2 and head.inputs[2] and beta != 0.0:
            c = b.read(head.inputs[2], out.shape, out_index, canonical)
            e += f" + {c}" if beta == 1.0 else f" + {literal(beta, cd)} * {c}"
        acc_expr = e
    var = "v_" + names[head.outputs[0]]
    epi.append(f"{ind}{var} = {acc_expr}  # {head.op_type} '{head.name}'")
    b.env[head.outputs[0]] = var
    epi += b.chain(group.nodes[1:], out.shape, out_index, canonical, ind)
    epi += b.stores(group, canonical, ind, None)
    grid = f"T.ceildiv({N}, block_n), T.ceildiv({M}, block_m)" + (f", {Bt}" if many(Bt) else "")
    ids = "(bx, by, bz)" if many(Bt) else "(bx, by)"
    body = [f"        with T.Kernel({grid}, threads=threads) as {ids}:",
            f"            acc = alloc((block_m, block_n), T.{acc_t})"]
    # shared tiles of A and B, one k-slice of block_k at a time (T.copy pads the ragged edges with zeros)
    a_tile = "(block_k, block_m)" if ta else "(block_m, block_k)"
    b_tile = "(block_n, block_k)" if tb else "(block_k, block_n)"
    a_src = (f"{A}[{lead(za)}ko * block_k:(ko + 1) * block_k, by * block_m:(by + 1) * block_m]" if ta else
             f"{A}[{lead(za)}by * block_m:(by + 1) * block_m, ko * block_k:(ko + 1) * block_k]")
    b_src = (f"{B}[{lead(zb)}bx * block_n:(bx + 1) * block_n, ko * block_k:(ko + 1) * block_k]" if tb else
             f"{B}[{lead(zb)}ko * block_k:(ko + 1) * block_k, bx * block_n:(bx + 1) * block_n]")
    body += [f"            a_s = T.alloc_shared({a_tile}, T.{dtype}, scope=shared_scope)",
             f"            b_s = T.alloc_shared({b_tile}, T.{dtype}, scope=shared_scope)",
             "            T.clear(acc)",
             f"            for ko in T.Pipelined(T.ceildiv({K}, block_k), num_stages=stages):  "
             f"# {head.op_type} '{head.name}': K in slices of block_k",
             f"                T.copy({a_src}, a_s)",
             f"                T.copy({b_src}, b_s)"]
    if tensor_cores:
        body += [f"                T.gemm(a_s, b_s, acc, transpose_A={bool(ta)}, transpose_B={bool(tb)})"
                 + ("  # tf32 tensor cores (--allow-tf32)" if dtype == "float32" else "")]
    else:
        a_k = "a_s[k, i]" if ta else "a_s[i, k]"
        b_k = "b_s[j, k]" if tb else "b_s[k, j]"
        body += [f"                for k in T.serial(block_k):  # exact {dtype} multiply-adds, no tensor cores",
                 "                    for i, j in loop(block_m, block_n):",
                 f"                        acc[i, j] += {cast_to(a_k, dtype, acc_t)} * {cast_to(b_k, dtype, acc_t)}"]
    body += ["            for i, j in loop(block_m, block_n):",
             "                row = by * block_m + i",
             "                col = bx * block_n + j",
             f"                if row < {M} and col < {N}:"] + epi
    prelude = TILED_PRELUDE
    # half types: 128x128 tiles (32 KiB of static shared memory at 2 stages); tf32 keeps 64x64 (float
    # tiles twice the bytes), exact fp32 128x128 over a block_k of 16
    if tensor_cores and dtype != "float32":
        defaults = ", block_m=128, block_n=128, block_k=32, stages=2, threads=128"
    elif tensor_cores:
        defaults = ", block_m=64, block_n=64, block_k=32, stages=2, threads=128"
    else:
        defaults = ", block_m=128, block_n=128, block_k=16, stages=2, threads=256"
    what = " → ".join(f"{n.op_type} '{n.name}'" for n in group.nodes)
    doc = (f"GEMM tile of {what}: ({'batch ' + str(Bt) + ' × ' if many(Bt) else ''}{M}×{K}) · ({K}×{N}), "
           f"accumulated in {acc_t}, epilogue applied to the accumulator tile.")
    params = ordered(b.params, group)
    src = factory(group.name, doc, params, body, defaults, prelude)
    tol = "tf32" if dtype == "float32" and tensor_cores else tolerance_class(out.dtype, True)
    notes = ["tf32"] if tol == "tf32" else []
    return Kernel(group, group.name, src, params, tol, f"gemm {M}×{N}×{K}" + (f" ×{Bt}" if many(Bt) else ""), notes)
