"""Conv as an implicit GEMM (output pixels × output channels) with the group's epilogue."""
from __future__ import annotations

import re

from ..graph import Graph, Node
from ..group import Group
from ..indexing import prod, subscript
from ..ops import literal
from .base import (ACCUMULATOR_PRELUDE, TILED_PRELUDE, Body, Kernel, Options, accum_dtype, cast_to,
                   compute_dtype, factory, ordered,
                   tolerance_class)


# -- Conv: an implicit GEMM, output pixels × output channels, exact serial reduction ----------------

def window_pads(node: Node, x_shape, kernel, y_shape) -> tuple[list, list]:
    """The padding before and after each spatial axis of a Conv or pool with windows of
    ``kernel`` places per axis, auto_pad resolved."""
    rank = len(kernel)
    auto = node.attrs.get("auto_pad", "NOTSET")
    if auto == "VALID":
        return [0] * rank, [0] * rank
    if auto in ("SAME_UPPER", "SAME_LOWER"):
        strides = node.attrs.get("strides", [1] * rank)
        dil = node.attrs.get("dilations", [1] * rank)
        begin, end = [], []
        for d in range(rank):
            k = (kernel[d] - 1) * dil[d] + 1
            total = max((y_shape[2 + d] - 1) * strides[d] + k - x_shape[2 + d], 0)
            begin.append(total // 2 if auto == "SAME_UPPER" else total - total // 2)
            end.append(total - begin[-1])
        return begin, end
    pads = node.attrs.get("pads", [0] * (2 * rank))
    return list(pads[:rank]), list(pads[rank:])


def emit_conv(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    head = group.nodes[0]
    x, wt, y = graph.info(head.inputs[0]), graph.info(head.inputs[1]), graph.info(head.outputs[0])
    N, C, H, W = x.shape
    Co, Cg, KH, KW = wt.shape
    _, _, Ho, Wo = y.shape
    groups = head.attrs.get("group", 1)
    sh, sw = head.attrs.get("strides", [1, 1])
    dh, dw = head.attrs.get("dilations", [1, 1])
    (ph, pw), _ = window_pads(head, x.shape, wt.shape[2:], y.shape)
    P = N * Ho * Wo
    acc_t, cd = accum_dtype(x.dtype), compute_dtype(y.dtype)
    b = Body(graph, names)
    X = b.param(x.name, x.shape)
    # the weights: (out channels, taps) for the tiled GEMM of an ungrouped convolution, else as they are
    Wp = b.param(wt.name, (Co, Cg * KH * KW) if groups == 1 else wt.shape)
    out_index = ["img", "oc", "oh", "ow"]
    canonical = (y.shape, out_index)
    ind = " " * 20
    acc_expr = "acc[i, j]" if acc_t == cd else f"T.Cast(T.{cd}, acc[i, j])"
    if len(head.inputs) > 2 and head.inputs[2]:
        bias = graph.info(head.inputs[2])
        acc_expr += " + " + cast_to(subscript(b.param(bias.name, bias.shape), ["oc"]), bias.dtype, cd)
    var = "v_" + names[head.outputs[0]]
    epi = [f"{ind}{var} = {acc_expr}  # Conv '{head.name}'"]
    b.env[head.outputs[0]] = var
    epi += b.chain(group.nodes[1:], y.shape, out_index, canonical, ind)
    epi += b.stores(group, canonical, ind, None)
    chan = "ic" if groups == 1 else f"oc // {Co // groups} * {Cg} + ic"
    ih = re.sub(r" \* 1(?!\d)| - 0(?!\d)", "", f"oh * {sh} - {ph} + kh * {dh}")
    iw = re.sub(r" \* 1(?!\d)| - 0(?!\d)", "", f"ow * {sw} - {pw} + kw * {dw}")
    pixel = ["                    img = p // " + str(Ho * Wo), f"                    oh = p // {Wo} % {Ho}",
             f"                    ow = p % {Wo}"]
    taps = Cg * KH * KW
    if groups == 1:
        body = _tiled(X, Wp, x, wt, acc_t, head.name, P, Co, taps, (H, W, Ho, Wo, KH, KW),
                      ih, iw, pixel) + [ln[4:] for ln in pixel] + [f"                if p < {P} and oc < {Co}:"] + epi
        defaults = ", block_m=128, block_n=64, block_k=16, stages=2, threads=256"
    else:
        body = [
            f"        with T.Kernel(T.ceildiv({Co}, block_n), T.ceildiv({P}, block_m), threads=threads) as (bx, by):",
            f"            acc = alloc((block_m, block_n), T.{acc_t})",
            "            T.clear(acc)",
            f"            for ic, kh, kw in T.grid({Cg}, {KH}, {KW}):  # Conv '{head.name}': exact {x.dtype} multiply-adds, "
            "no tensor cores",
            "                for i, j in loop(block_m, block_n):",
            "                    p = by * block_m + i",
            "                    oc = bx * block_n + j",
        ] + pixel + [
            f"                    ih = {ih}",
            f"                    iw = {iw}",
            f"                    if p < {P} and oc < {Co} and 0 <= ih and ih < {H} and 0 <= iw and iw < {W}:",
            f"                        acc[i, j] += {cast_to(f'{X}[img, {chan}, ih, iw]', x.dtype, acc_t)} * "
            f"{cast_to(f'{Wp}[oc, ic, kh, kw]', wt.dtype, acc_t)}",
            "            for i, j in loop(block_m, block_n):",
            "                p = by * block_m + i",
            "                oc = bx * block_n + j",
        ] + [ln[4:] for ln in pixel] + [f"                if p < {P} and oc < {Co}:"] + epi
        defaults = ", block_m=32, block_n=32, threads=128"
    prelude = TILED_PRELUDE
    what = " → ".join(f"{n.op_type} '{n.name}'" for n in group.nodes)
    doc = (f"Convolution {what} as an implicit GEMM: {P} output pixels × {Co} channels, each a sum over "
           f"{Cg}×{KH}×{KW} taps (stride {sh}×{sw}, padding {ph}×{pw}, dilation {dh}×{dw}, {groups} group(s)).")
    params = ordered(b.params, group)
    src = factory(group.name, doc, params, body, defaults, prelude)
    return Kernel(group, group.name, src, params, tolerance_class(y.dtype, True), f"conv {P}×{Co}×{Cg * KH * KW}")


def _tiled(X, Wk, x, wt, acc_t, name, P, Co, taps, dims, ih, iw, pixel) -> list[str]:
    """An ungrouped convolution as a GEMM over shared tiles: the input patches of block_m output pixels
    (im2col rows, zero outside the image) and the weights viewed as (out channels, taps), one slice of
    block_k taps at a time, multiply-added on CUDA cores (exact)."""
    H, W, Ho, Wo, KH, KW = dims
    zero_x, zero_w = literal(0, x.dtype), literal(0, wt.dtype)
    at = [ln[4:] for ln in pixel]
    return [
        f"        with T.Kernel(T.ceildiv({Co}, block_n), T.ceildiv({P}, block_m), threads=threads) as (bx, by):",
        f"            acc = alloc((block_m, block_n), T.{acc_t})",
        f"            a_s = T.alloc_shared((block_m, block_k), T.{x.dtype}, scope=shared_scope)",
        f"            b_s = T.alloc_shared((block_k, block_n), T.{wt.dtype}, scope=shared_scope)",
        "            T.clear(acc)",
        f"            for ko in T.Pipelined(T.ceildiv({taps}, block_k), num_stages=stages):  "
        f"# Conv '{name}': the {taps} taps in slices of block_k",
        "                for i, kk in T.Parallel(block_m, block_k):  # input patches of block_m pixels",
        "                    p = by * block_m + i",
        "                    r = ko * block_k + kk",
    ] + ["    " + ln for ln in at] + [
        f"                    ic = r // {KH * KW}",
        f"                    kh = r // {KW} % {KH}",
        f"                    kw = r % {KW}",
        f"                    ih = {ih}",
        f"                    iw = {iw}",
        f"                    a_s[i, kk] = T.if_then_else(p < {P} and r < {taps} and 0 <= ih and ih < {H} and 0 <= iw "
        f"and iw < {W}, {X}[img, ic, ih, iw], {zero_x})",
        "                for kk, j in T.Parallel(block_k, block_n):  # their weights",
        "                    r = ko * block_k + kk",
        "                    oc = bx * block_n + j",
        f"                    b_s[kk, j] = T.if_then_else(r < {taps} and oc < {Co}, {Wk}[oc, r], {zero_w})",
        f"                for k in T.serial(block_k):  # exact {x.dtype} multiply-adds, no tensor cores",
        "                    for i, j in loop(block_m, block_n):",
        f"                        acc[i, j] += {cast_to('a_s[i, k]', x.dtype, acc_t)} * {cast_to('b_s[k, j]', wt.dtype, acc_t)}",
        "            for i, j in loop(block_m, block_n):",
        "                p = by * block_m + i",
        "                oc = bx * block_n + j",
    ]


def emit_pool(group: Group, graph: Graph, names, opts: Options) -> Kernel:
    """MaxPool / AveragePool over 1, 2 or 3 spatial axes: the window of each output pixel and
    channel combined in a tile accumulator, as a convolution's taps are (no weights)."""
    head = group.nodes[0]
    x, y = graph.info(head.inputs[0]), graph.info(head.outputs[0])
    N, C, *S = x.shape
    So = y.shape[2:]
    K = list(head.attrs["kernel_shape"])
    rank = len(K)
    strides = head.attrs.get("strides", [1] * rank)
    dil = head.attrs.get("dilations", [1] * rank)
    begin, end = window_pads(head, x.shape, K, y.shape)
    axes = "dhw"[-rank:]   # loop names per spatial axis: o<a> output, k<a> tap, i<a> input
    P = prod([N, *So])
    acc_t = accum_dtype(x.dtype)
    is_max = head.op_type == "MaxPool"
    b = Body(graph, names)
    X = b.param(x.name, x.shape)
    Y = b.param(y.name, y.shape)
    inputs = [(f"i{a}", re.sub(r" \* 1(?!\d)| - 0(?!\d)", "", f"o{a} * {strides[d]} - {begin[d]} + k{a} * {dil[d]}"))
              for d, a in enumerate(axes)]
    pixel = [f"                img = p // {prod(So)}"]
    for d, a in enumerate(axes):
        inner = prod(So[d + 1:])
        pixel.append(f"                o{a} = p // {inner} % {So[d]}" if d < rank - 1 else f"                o{a} = p % {So[d]}")
    spatial_in = ", ".join(f"i{a}" for a in axes)
    spatial_out = ", ".join(f"o{a}" for a in axes)
    load = cast_to(f"{X}[img, oc, {spatial_in}]", x.dtype, acc_t)
    inside = " and ".join(f"0 <= i{a} and i{a} < {S[d]}" for d, a in enumerate(axes))
    # an average divides by its taps inside the image (count_include_pad=0), by the window's size,
    # or, with ceil_mode and count_include_pad, by its taps inside the padded image (a last window
    # may reach past the end padding)
    count_pad = bool(head.attrs.get("count_include_pad", 0))
    image_taps = not is_max and not count_pad
    padded = None
    if not is_max and count_pad and head.attrs.get("ceil_mode", 0):
        padded = " and ".join(f"-{begin[d]} <= i{a} and i{a} < {S[d]} + {end[d]}" for d, a in enumerate(axes))
    taps = image_taps or padded is not None
    if is_max:
        update = [f"                        acc[i, j] = T.max(acc[i, j], {load})"]
        start = f"            T.fill(acc, {literal(float('-inf'), acc_t)})"
        value = "acc[i, j]"
    else:
        update = [f"                        acc[i, j] += {load}"] + (["                        taps[i, j] += 1"]
                                                                   if image_taps else [])
        start = "            T.clear(acc)" + ("\n            T.clear(taps)" if taps else "")
        value = "acc[i, j] / taps[i, j]" if taps else f"acc[i, j] / {literal(prod(K), acc_t)}"
    body = [
        f"        with T.Kernel(T.ceildiv({C}, block_n), T.ceildiv({P}, block_m), threads=threads) as (bx, by):",
        f"            acc = alloc((block_m, block_n), T.{acc_t})",
    ] + ([f"            taps = alloc((block_m, block_n), T.{acc_t})"] if taps else []) + [
        start,
        f"            for {', '.join(f'k{a}' for a in axes)} in T.grid({', '.join(map(str, K))}):  # {head.op_type} '{head.name}': the window's taps",
        "                for i, j in loop(block_m, block_n):",
        "                    p = by * block_m + i",
        "                    oc = bx * block_n + j",
    ] + ["    " + ln for ln in pixel] + [f"                    {name} = {expr}" for name, expr in inputs] + [
        f"                    if p < {P} and oc < {C} and {inside}:",
    ] + update + ([f"                    if p < {P} and oc < {C} and {padded}:  # a tap of the padded image",
                   "                        taps[i, j] += 1"] if padded else []) + [
        "            for i, j in loop(block_m, block_n):",
        "                p = by * block_m + i",
        "                oc = bx * block_n + j",
    ] + pixel + [
        f"                if p < {P} and oc < {C}:",
        f"                    {Y}[img, oc, {spatial_out}] = {cast_to(value, acc_t, y.dtype)}",
    ]
    prelude = ACCUMULATOR_PRELUDE
    doc = (f"{head.op_type} '{head.name}': {P} output pixels × {C} channels, windows {'×'.join(map(str, K))} "
           f"(stride {'×'.join(map(str, strides))}, padding {'×'.join(map(str, begin))}, dilation {'×'.join(map(str, dil))}).")
    src = factory(group.name, doc, b.params, body, ", block_m=32, block_n=32, threads=128", prelude)
    return Kernel(group, group.name, src, b.params, tolerance_class(y.dtype, not is_max), f"pool {P}×{C}")
