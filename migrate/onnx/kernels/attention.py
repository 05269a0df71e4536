"""Attention (:mod:`..attention`): scores, scale, Softmax and context in one kernel that never
writes the (Sq × Sk) score matrix. A block takes ``block_m`` query rows of one batch entry and
walks the keys ``block_n`` at a time: the scores tile, the running row maximum and sum (online
softmax, in base 2 with the scale folded in), the context accumulator rescaled as the maximum
grows, divided by the sum at the end (flash attention). Half types multiply on tensor cores
(``T.gemm``, float32 accumulators); float32 and float64 with exact multiply-adds unless
``allow_tf32``."""
from __future__ import annotations

import math

import numpy as np

from ..dims import many
from ..graph import Graph
from ..group import Group
from ..indexing import broadcast_index, prod, subscript, unravel
from ..ops import literal
from .base import TILED_PRELUDE, Body, Kernel, Options, accum_dtype, cast_to, factory, tolerance_class


def _finite(value: float, dtype: str) -> float:
    """``value`` held in ``dtype``: a constant beyond its range (a -3.4e38 fill times log2(e))
    is its largest finite value of that sign, so that a row masked whole still divides evenly
    (the softmax of equal scores), as it does in the graph."""
    big = float(np.finfo(dtype).max)
    return value if math.isinf(value) or abs(value) <= big else math.copysign(big, value)


def tile(rows_first: bool, rows, cols) -> str:
    """A shared tile's shape in the order its tensor holds the two axes."""
    return f"({rows}, {cols})" if rows_first else f"({cols}, {rows})"


def emit_attention(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    pat = group.pattern
    q, k, v = (graph.info(t) for t in (pat.scores.inputs[0], pat.scores.inputs[1], pat.context.inputs[1]))
    batch, Sq, D = q.shape[:-2], q.shape[-2], q.shape[-1]
    Sk, Dv = k.shape[-1], v.shape[-1]
    dtype, acc_t = q.dtype, accum_dtype(q.dtype)
    tensor_cores = dtype in ("float16", "bfloat16") or (dtype == "float32" and opts.allow_tf32)
    b = Body(graph, names)
    bz = unravel("bz", batch) if many(prod(batch)) else ["0"] * len(batch)

    def at(op, rows: str, cols: str) -> tuple[str, bool]:
        """``op``'s element (or region) at logical (batch, rows, cols), and whether its rows axis
        comes before its columns axis in the tensor (the tile's orientation)."""
        idx = [""] * len(op.axes)
        extents = graph.info(op.tensor).shape
        for i, ax in enumerate(op.axes[:-2]):
            rep = op.repeat[i] if op.repeat else 1   # a K/V head serving rep query heads (grouped-query)
            idx[ax] = "0" if extents[ax] == 1 else bz[i] if rep == 1 else f"({bz[i]}) // {rep}"
        idx[op.axes[-2]], idx[op.axes[-1]] = rows, cols
        name = b.param(op.tensor, extents)
        return f"{name}[{', '.join(idx)}]", op.axes[-2] < op.axes[-1]

    q_src, q_rows = at(pat.q, "bx * block_m:(bx + 1) * block_m", f"0:{D}")
    k_src, k_rows = at(pat.k, f"0:{D}", "ko * block_n:(ko + 1) * block_n")
    v_src, v_rows = at(pat.v, "ko * block_n:(ko + 1) * block_n", f"0:{Dv}")
    # CUDA cores read the K tile along its keys and the V tile along Dv (threads side by side in
    # shared memory): without tensor cores a tile held the other way is transposed as it is loaded
    k_load = v_load = None
    if not tensor_cores and not k_rows:
        k_el, _ = at(pat.k, "d", "ko * block_n + j")
        k_load = [f"                for j, d in loop(block_n, {D}):  # the keys' rows, read along d",
                  f"                    k_s[d, j] = T.if_then_else(ko * block_n + j < {Sk}, {k_el}, {literal(0, dtype)})"]
        k_rows = True
    if not tensor_cores and not v_rows:
        v_el, _ = at(pat.v, "ko * block_n + n", "j")
        v_load = [f"                for j, n in loop({Dv}, block_n):",
                  f"                    v_s[n, j] = T.if_then_else(ko * block_n + n < {Sk}, {v_el}, {literal(0, dtype)})"]
        v_rows = True
    # without tensor cores each thread walks one row of Q and of the probabilities in shared
    # memory: a row-major tile of D (or block_n) columns puts every thread of a warp on one bank,
    # so those tiles get one column of padding and are filled element by element
    q_load = None
    q_cols = D if tensor_cores or not q_rows else f"{D} + 1"
    if not tensor_cores and q_rows:
        q_el, _ = at(pat.q, "bx * block_m + i", "d")
        q_load = [f"            for i, d in loop(block_m, {D}):  # Q's rows, one column of padding",
                  f"                q_s[i, d] = T.if_then_else(bx * block_m + i < {Sq}, {q_el}, {literal(0, dtype)})"]
    # log2(e) folded into the scale: exp(c * s - m) = exp2(c log2(e) * s - m')
    c2 = literal(pat.scale * math.log2(math.e), acc_t)
    ninf = literal(float("-inf"), acc_t)
    where = " → ".join(f"{n.op_type} '{n.name}'" for n in pat.nodes)
    s, sm, ctx = (f"{n.op_type} '{n.name}'" for n in (pat.scores, pat.softmax, pat.context))
    body = [f"        with T.Kernel(T.ceildiv({Sq}, block_m), {prod(batch)}, threads=threads) as (bx, bz):",
            f"            q_s = T.alloc_shared({tile(q_rows, 'block_m', q_cols)}, T.{dtype}, scope=shared_scope)",
            f"            k_s = T.alloc_shared({tile(k_rows, D, 'block_n')}, T.{dtype}, scope=shared_scope)",
            f"            v_s = T.alloc_shared({tile(v_rows, 'block_n', Dv)}, T.{dtype}, scope=shared_scope)",
            f"            s = alloc((block_m, block_n), T.{acc_t})",
            f"            o = alloc((block_m, {Dv}), T.{acc_t})",
            f"            row_max = alloc((block_m,), T.{acc_t})",
            f"            block_max = alloc((block_m,), T.{acc_t})",
            f"            rescale = alloc((block_m,), T.{acc_t})",
            f"            row_sum = alloc((block_m,), T.{acc_t})",
            f"            block_sum = alloc((block_m,), T.{acc_t})"]
    body += ([f"            p = alloc((block_m, block_n), T.{dtype})"] if tensor_cores else
             [f"            p = T.alloc_shared((block_m, block_n + 1), T.{acc_t}, scope=shared_scope)"])
    body += [*(q_load or [f"            T.copy({q_src}, q_s)"]),
             "            T.fill(o, 0)",
             "            T.fill(row_sum, 0)",
             f"            T.fill(row_max, {ninf})",
             f"            for ko in T.Pipelined(T.ceildiv({Sk}, block_n), num_stages=stages):  # {where}: keys in blocks of block_n",
             *(k_load or [f"                T.copy({k_src}, k_s)"])]
    if tensor_cores:
        body += ["                T.clear(s)",
                 f"                T.gemm(q_s, k_s, s, transpose_A={not q_rows}, transpose_B={not k_rows}, policy=policy)  # {s}"]
    else:
        qe = "q_s[i, d]" if q_rows else "q_s[d, i]"
        ke = "k_s[d, j]" if k_rows else "k_s[j, d]"
        body += ["                T.clear(s)",
                 f"                for d in T.serial({D}):  # {s}: exact {dtype} multiply-adds",
                 "                    for i, j in loop(block_m, block_n):",
                 f"                        s[i, j] += {cast_to(qe, dtype, acc_t)} * {cast_to(ke, dtype, acc_t)}"]
    # the scale (times log2(e)), then the Where's constant where its condition says, then the
    # mask (times log2(e)), each read where the element exists; keys past the end weigh nothing
    scores_shape = graph.info(pat.scores.outputs[0]).shape
    at_score = bz + ["bx * block_m + i", "ko * block_n + j"]
    value, steps = f"s[i, j] * {c2}", []
    if pat.where is not None:
        w = pat.where
        c = graph.info(w.cond)
        cond = subscript(b.param(w.cond, c.shape), broadcast_index(c.shape, scores_shape, at_score))
        fill = literal(_finite(w.fill * math.log2(math.e), acc_t), acc_t)
        value = f"T.if_then_else({cond}, {value}, {fill})" if w.keep else f"T.if_then_else({cond}, {fill}, {value})"
        steps.append(w.node)
    if pat.mask is not None:
        m = graph.info(pat.mask)
        m_el = subscript(b.param(pat.mask, m.shape), broadcast_index(m.shape, scores_shape, at_score))
        value = f"{value} + {cast_to(m_el, m.dtype, acc_t)} * {literal(math.log2(math.e), acc_t)}"
        steps.append(next(n for n in pat.nodes if n.op_type == "Add"))
    guard = f"ko * block_n + j < {Sk}" + (f" and bx * block_m + i < {Sq}" if steps else "")
    what = ("the scale, then " + ", then ".join(f"{n.op_type} '{n.name}'" for n in steps)) if steps else "the scale"
    body += [f"                for i, j in loop(block_m, block_n):  # {what} (times log2(e)); keys past the end weigh nothing",
             f"                    s[i, j] = T.if_then_else({guard}, {value}, {ninf})"]
    body += [f"                T.reduce_max(s, block_max, dim=1, clear=True)  # {sm}: online, the maximum so far",
             "                for i in loop(block_m):",
             "                    block_max[i] = T.max(block_max[i], row_max[i])",
             "                    rescale[i] = T.exp2(row_max[i] - block_max[i])",
             "                    row_max[i] = block_max[i]",
             "                for i, j in loop(block_m, block_n):",
             "                    s[i, j] = T.exp2(s[i, j] - row_max[i])",
             "                T.reduce_sum(s, block_sum, dim=1, clear=True)",
             "                for i in loop(block_m):",
             "                    row_sum[i] = row_sum[i] * rescale[i] + block_sum[i]",
             f"                for i, j in loop(block_m, {Dv}):",
             "                    o[i, j] *= rescale[i]",
             *(["                T.copy(s, p)"] if tensor_cores else
               ["                for i, j in loop(block_m, block_n):  # the probabilities, one column of padding",
                "                    p[i, j] = s[i, j]"]),
             *(v_load or [f"                T.copy({v_src}, v_s)"])]
    if tensor_cores:
        body += [f"                T.gemm(p, v_s, o, transpose_B={not v_rows}, policy=policy)  # {ctx}"]
    else:
        ve = "v_s[n, j]" if v_rows else "v_s[j, n]"
        body += [f"                for n in T.serial(block_n):  # {ctx}: exact {dtype} multiply-adds",
                 f"                    for i, j in loop(block_m, {Dv}):",
                 f"                        o[i, j] += p[i, n] * {cast_to(ve, dtype, acc_t)}"]
    out, _ = at(pat.out, "row", "j")
    body += [f"            for i, j in loop(block_m, {Dv}):  # {sm}: divided by the row's sum",
             "                row = bx * block_m + i",
             f"                if row < {Sq}:",
             f"                    {out} = {cast_to('o[i, j] / row_sum[i]', acc_t, dtype)}"]
    prelude = TILED_PRELUDE + ("policy = T.GemmWarpPolicy.FullRow  # each warp holds whole rows of the scores",)
    if tensor_cores:
        defaults = ", block_m=128, block_n=128, stages=1, threads=128"
    else:
        # exact multiply-adds: TileLang gives each thread one whole row of the scores (the row
        # reductions stay in the thread), so threads beyond block_m would only repeat rows
        # (seen in the lowered CUDA: 64 rows on 256 threads computed each row four times)
        defaults = ", block_m=128, block_n=32, stages=1, threads=128"
    doc = (f"Attention of {where}: ({'batch ' + str(prod(batch)) + ' × ' if many(prod(batch)) else ''}{Sq}×{D}) "
           f"queries against {Sk} keys, softmax scale {pat.scale:.6g}, in blocks of block_n keys; "
           f"the scores stay in registers, accumulated in {acc_t}.")
    params = [p for p in b.params if p.tensor != pat.out.tensor] + [p for p in b.params if p.tensor == pat.out.tensor]
    src = factory(group.name, doc, params, body, defaults, prelude)
    tol = "tf32" if dtype == "float32" and tensor_cores else tolerance_class(dtype, True)
    return Kernel(group, group.name, src, params, tol, f"attention {Sq}×{Sk}×{D}" + (f" ×{prod(batch)}" if many(prod(batch)) else ""),
                  ["tf32"] if tol == "tf32" else [])
