"""Numpy references for the dense corpus kernels: norm/, gemv/, matmul/, conv/, attention/,
precision/ and features/.

Each function computes, from the kernel's intent, the full expected contents of every ``out``
and ``inout`` buffer (flattened).  Float32 kernels are referenced in float64; half and bfloat16
outputs are computed in float and then rounded to nearest even like the kernel's last
conversion.
"""
from __future__ import annotations

import numpy as np
import ml_dtypes

F64 = np.float64


def _f64(a):
    return np.asarray(a, dtype=F64)


def _to_half(a):
    """Round to float16 (nearest even), the way __float2half / half arithmetic stores."""
    return np.asarray(a, dtype=F64).astype(np.float16)


def _to_bf16(a):
    """Round a float32 value to bfloat16 (nearest even); return it as float32, as the
    harness hands bfloat16 buffers around."""
    return np.asarray(a, dtype=np.float32).astype(ml_dtypes.bfloat16).astype(np.float32)


# --------------------------------------------------------------------------------------------
# norm/
# --------------------------------------------------------------------------------------------

def _softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def ref_softmax_rows(args, symbols):
    x = _f64(args["input"]).reshape(args["rows"], args["cols"])
    return {"output": _softmax(x).ravel()}


def ref_log_softmax_rows(args, symbols):
    x = _f64(args["input"]).reshape(args["rows"], args["cols"])
    m = x.max(axis=1, keepdims=True)
    y = x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))
    return {"output": y.ravel()}


def ref_softmax_online_warp(args, symbols):
    x = _f64(args["x"]).reshape(args["rows"], args["cols"])
    return {"y": _softmax(x).ravel()}


def ref_layernorm_forward(args, symbols):
    rows, cols = args["rows"], args["cols"]
    x = _f64(args["x"]).reshape(rows, cols)
    mean = x.mean(axis=1)
    var = ((x - mean[:, None]) ** 2).mean(axis=1)
    rstd = 1.0 / np.sqrt(var + args["eps"])
    y = (x - mean[:, None]) * rstd[:, None] * _f64(args["gamma"]) + _f64(args["beta"])
    return {"y": y.ravel(), "mean_out": mean, "rstd_out": rstd}


def _rmsnorm(h, weight, eps):
    inv_rms = 1.0 / np.sqrt((h * h).mean(axis=1) + eps)
    return h * inv_rms[:, None] * _f64(weight)


def ref_rmsnorm_forward(args, symbols):
    x = _f64(args["x"]).reshape(args["rows"], args["hidden"])
    return {"y": _rmsnorm(x, args["weight"], args["eps"]).ravel()}


def ref_fused_add_rmsnorm(args, symbols):
    shape = (args["rows"], args["hidden"])
    # The new residual is stored as float32 and the norm is taken of the stored value.
    h = (args["x"].astype(np.float32) + args["residual"].astype(np.float32)).reshape(shape)
    y = _rmsnorm(_f64(h), args["weight"], args["eps"])
    return {"residual": h.ravel(), "y": y.ravel()}


# --------------------------------------------------------------------------------------------
# gemv/
# --------------------------------------------------------------------------------------------

def ref_gemv_row_per_thread(args, symbols):
    A = _f64(args["A"]).reshape(args["rows"], args["cols"])
    y = args["alpha"] * (A @ _f64(args["x"])) + args["beta"] * _f64(args["y"])
    return {"y": y}


def ref_gemv_t_col_per_thread(args, symbols):
    A = _f64(args["A"]).reshape(args["rows"], args["cols"])
    return {"z": A.T @ _f64(args["w"])}


def ref_gemv_warp_per_row(args, symbols):
    A = _f64(args["A"]).reshape(args["rows"], args["cols"])
    return {"y": A @ _f64(args["x"]) + _f64(args["bias"])}


# --------------------------------------------------------------------------------------------
# matmul/
# --------------------------------------------------------------------------------------------

def _mm(args, a="A", b="B"):
    M, N, K = args["M"], args["N"], args["K"]
    return _f64(args[a]).reshape(M, K) @ _f64(args[b]).reshape(K, N)


def ref_matmul_naive(args, symbols):
    return {"C": _mm(args).ravel()}


def ref_matmul_tiled(args, symbols):
    C = args["alpha"] * _mm(args).ravel() + args["beta"] * _f64(args["C"])
    return {"C": C}


def ref_matmul_regblock_4x4(args, symbols):
    return {"C": _mm(args).ravel()}


def ref_bmm_nt(args, symbols):
    M, N, K = args["M"], args["N"], args["K"]
    A = _f64(args["A"]).reshape(-1, M, K)
    B = _f64(args["B"]).reshape(-1, N, K)
    C = args["alpha"] * np.einsum("bmk,bnk->bmn", A, B)
    return {"C": C.ravel()}


# --------------------------------------------------------------------------------------------
# conv/
# --------------------------------------------------------------------------------------------

def ref_conv2d_nchw(args, symbols):
    N, C, H, W = args["N"], args["C"], args["H"], args["W"]
    K, R, S = args["K"], args["R"], args["S"]
    stride, pad, P, Q = args["stride"], args["pad"], args["P"], args["Q"]
    x = _f64(args["input"]).reshape(N, C, H, W)
    w = _f64(args["weight"]).reshape(K, C, R, S)
    xp = np.zeros((N, C, H + 2 * pad + stride * P, W + 2 * pad + stride * Q))
    xp[:, :, pad:pad + H, pad:pad + W] = x
    out = np.zeros((N, K, P, Q)) + _f64(args["bias"])[None, :, None, None]
    for r in range(R):
        for s in range(S):
            # window of input pixels seen by filter tap (r, s) for every output pixel
            patch = xp[:, :, r:r + stride * P:stride, s:s + stride * Q:stride]  # N,C,P,Q
            out += np.einsum("ncpq,kc->nkpq", patch, w[:, :, r, s])
    return {"output": out.ravel()}


def ref_depthwise_conv2d_nhwc_relu6(args, symbols):
    N, H, W, C = args["N"], args["H"], args["W"], args["C"]
    R, S, pad = args["R"], args["S"], args["pad"]
    x = _f64(args["in"]).reshape(N, H, W, C)
    f = _f64(args["filt"]).reshape(R, S, C)
    xp = np.zeros((N, H + 2 * pad + R, W + 2 * pad + S, C))
    xp[:, pad:pad + H, pad:pad + W, :] = x
    out = np.zeros((N, H, W, C)) + _f64(args["bias"])
    for r in range(R):
        for s in range(S):
            out += xp[:, r:r + H, s:s + W, :] * f[r, s]
    return {"out": np.clip(out, 0.0, 6.0).ravel()}


# --------------------------------------------------------------------------------------------
# attention/
# --------------------------------------------------------------------------------------------

def ref_attention_row_forward(args, symbols):
    Lq, Lk, D = args["Lq"], args["Lk"], args["D"]
    q = _f64(args["Q"]).reshape(Lq, D)
    k = _f64(args["K"]).reshape(Lk, D)
    v = _f64(args["V"]).reshape(Lk, D)
    scores = (q @ k.T) * float(np.float32(args["scale"]))
    if args["causal"]:
        i = np.arange(Lq)[:, None]
        j = np.arange(Lk)[None, :]
        scores = np.where(j > i, -np.inf, scores)
    return {"O": (_softmax(scores) @ v).ravel()}


# --------------------------------------------------------------------------------------------
# precision/
# --------------------------------------------------------------------------------------------

def ref_half_axpby(args, symbols):
    a = _to_half(np.float32(args["a"]))
    b = _to_half(np.float32(args["b"]))
    x = args["x"].astype(np.float16)
    y = args["y"].astype(np.float16)
    by = _to_half(_f64(b) * _f64(y))              # __hmul: rounded to half
    # __hfma: a*x + by exactly (float64 holds it), rounded to half once
    return {"y": _to_half(_f64(a) * _f64(x) + _f64(by))}


def ref_half_add_scale(args, symbols):
    n = args["n"]
    s = _to_half(np.float32(args["s"]))
    total = _to_half(_f64(args["a"][:n]) + _f64(args["b"][:n]))   # __hadd
    return {"out": _to_half(_f64(total) * _f64(s))}             # __hmul


def _gelu_tanh(v):
    return 0.5 * v * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (v + 0.044715 * v ** 3)))


def ref_half_bias_gelu_rows(args, symbols):
    rows, cols = args["rows"], args["cols"]
    v = _f64(args["x"]).reshape(rows, cols) + _f64(args["bias"])
    return {"y": _to_half(_gelu_tanh(v)).ravel()}


def ref_half2_fma_affine(args, symbols):
    n = args["n"]
    # fused multiply-add: one rounding of the exact x*scale + shift
    y = _f64(args["x"][:n]) * _f64(args["scale"][:n]) + _f64(args["shift"][:n])
    return {"y": _to_half(y)}


def ref_half2_dot_partial(args, symbols):
    # Launched as 4 blocks of 128 threads over n/2 half2 pairs with a grid-stride loop:
    # pair i is summed by block (i // 128) % 4.
    block, grid = 128, 4
    n = args["n"]
    prod = (_f64(args["a"][:n]) * _f64(args["b"][:n])).reshape(-1, 2).sum(axis=1)
    owner = (np.arange(n // 2) // block) % grid
    return {"partial": np.array([prod[owner == g].sum() for g in range(grid)])}


def ref_bf16_swiglu(args, symbols):
    g = _f64(args["gate"])
    u = _f64(args["up"])
    return {"out": _to_bf16(g / (1.0 + np.exp(-g)) * u)}


def ref_quantize_f32_to_bf16(args, symbols):
    # the float32 product is rounded to float32 first, then to bfloat16
    prod = args["x"].astype(np.float32) * np.float32(args["scale"])
    return {"out": _to_bf16(prod)}


def ref_hgemm_f32acc(args, symbols):
    C = float(np.float32(args["alpha"])) * _mm(args)
    return {"C": _to_half(C).ravel()}


# --------------------------------------------------------------------------------------------
# features/
# --------------------------------------------------------------------------------------------

def ref_row_mean(args, symbols):
    x = _f64(args["in"]).reshape(args["rows"], args["cols"])
    return {"out": x.mean(axis=1)}


def ref_poly_soft_clip(args, symbols):
    # coeffs[0] is the coefficient of the highest power
    p = np.polyval(_f64(args["coeffs"][:args["degree"] + 1]), _f64(args["x"]))
    limit = float(np.float32(args["limit"]))
    return {"y": limit * np.tanh(p / limit)}


def ref_hypot_newton(args, symbols):
    return {"r": np.hypot(_f64(args["a"]), _f64(args["b"]))}


def ref_bias_act_2d(args, symbols):
    rows, cols, ld = args["rows"], args["cols"], args["ld"]
    out = args["out"].astype(np.float32).reshape(-1, ld).copy()
    x = args["in"].astype(np.float32).reshape(-1, ld)[:rows, :cols]
    v = x + args["bias"].astype(np.float32)[:cols]
    # USE_LEAKY_RELU is defined in the source, slope 0.1f
    out[:rows, :cols] = np.where(v > 0, v, np.float32(0.1) * v)
    return {"out": out.ravel()}


def ref_fir_filter_1d(args, symbols):
    n = args["n"]
    taps = _f64(symbols["c_taps"])
    half = len(taps) // 2
    xp = np.concatenate([np.zeros(half), _f64(args["x"][:n]), np.zeros(half)])
    # y[i] = sum_t taps[t] * x[i + t - half]
    y = sum(taps[t] * xp[t:t + n] for t in range(len(taps)))
    return {"y": y}


def ref_poly_eval_const(args, symbols):
    # c_poly[k] multiplies x^k
    c = _f64(symbols["c_poly"])
    return {"y": np.polyval(c[::-1], _f64(args["x"][:args["n"]]))}


def ref_moving_average_1d(args, symbols):
    n, r = args["n"], args["radius"]
    xp = np.concatenate([np.zeros(r), _f64(args["in"][:n]), np.zeros(r)])
    y = sum(xp[k:k + n] for k in range(2 * r + 1)) / (2 * r + 1)
    return {"out": y}


def ref_row_scale_max_abs(args, symbols):
    x = _f64(args["x"]).reshape(args["rows"], args["cols"])
    return {"y": (x / np.abs(x).max(axis=1, keepdims=True)).ravel()}


def ref_axpy_float4(args, symbols):
    a = float(np.float32(args["a"]))
    n = 4 * args["n4"]
    return {"y": a * _f64(args["x"][:n]) + _f64(args["y"][:n])}


def ref_complex_mul_float2(args, symbols):
    n = args["n"]
    a = _f64(args["a"]).reshape(-1, 2)[:n]
    b = _f64(args["b"]).reshape(-1, 2)[:n]
    za = a[:, 0] + 1j * a[:, 1]
    zb = b[:, 0] + 1j * b[:, 1]
    if args["conjugate_b"]:
        zb = np.conj(zb)
    zc = za * zb
    return {"c": np.stack([zc.real, zc.imag], axis=1).ravel()}


def ref_cg_row_dot(args, symbols):
    shape = (args["rows"], args["cols"])
    return {"out": (_f64(args["a"]).reshape(shape) * _f64(args["b"]).reshape(shape)).sum(axis=1)}


def ref_cg_tile_row_norm(args, symbols):
    x = _f64(args["x"]).reshape(args["rows"], args["cols"])
    return {"out": np.sqrt((x * x).sum(axis=1))}


def ref_embedding_gather_ldg(args, symbols):
    T, dim, vocab = args["num_tokens"], args["dim"], args["vocab"]
    table = args["table"].astype(np.float32).reshape(vocab, dim)
    ids = np.asarray(args["ids"][:T], dtype=np.int64)
    valid = (ids >= 0) & (ids < vocab)
    out = np.zeros((T, dim), dtype=np.float32)
    out[valid] = np.float32(args["scale"]) * table[ids[valid]]
    return {"out": out.ravel()}


def ref_warp_rounds(args, symbols):
    """Warp w of each 96-thread block sums groups of 2^r lanes, r = w % 3 + 1; lanes past n
    contribute 0 and their outputs are untouched."""
    x, n = _f64(args["x"]), args["n"]
    y = _f64(args["y"]).copy()
    threads, blocks = 96, 4
    values = np.zeros(threads * blocks)
    values[:n] = x[:n]
    for gid in range(min(n, threads * blocks)):
        warp = (gid % threads) // 32
        group = 2 ** (warp % 3 + 1)
        start = gid - gid % group
        y[gid] = values[start:start + group].sum()
    return {"y": y}


REFERENCES = {
    "features/warp_rounds.cu:warp_rounds": ref_warp_rounds,
    "norm/softmax_rows.cu:softmax_rows": ref_softmax_rows,
    "norm/softmax_rows.cu:log_softmax_rows": ref_log_softmax_rows,
    "norm/softmax_warp.cu:softmax_online_warp": ref_softmax_online_warp,
    "norm/layernorm.cu:layernorm_forward": ref_layernorm_forward,
    "norm/rmsnorm.cu:rmsnorm_forward": ref_rmsnorm_forward,
    "norm/rmsnorm.cu:fused_add_rmsnorm": ref_fused_add_rmsnorm,
    "gemv/gemv_thread_row.cu:gemv_row_per_thread": ref_gemv_row_per_thread,
    "gemv/gemv_thread_row.cu:gemv_t_col_per_thread": ref_gemv_t_col_per_thread,
    "gemv/gemv_warp_row.cu:gemv_warp_per_row": ref_gemv_warp_per_row,
    "matmul/matmul_naive.cu:matmul_naive": ref_matmul_naive,
    "matmul/matmul_tiled.cu:matmul_tiled": ref_matmul_tiled,
    "matmul/matmul_regblock.cu:matmul_regblock_4x4": ref_matmul_regblock_4x4,
    "matmul/bmm_nt.cu:bmm_nt": ref_bmm_nt,
    "conv/conv2d_nchw.cu:conv2d_nchw": ref_conv2d_nchw,
    "conv/depthwise_conv_nhwc.cu:depthwise_conv2d_nhwc_relu6": ref_depthwise_conv2d_nhwc_relu6,
    "attention/attention_row.cu:attention_cross": ref_attention_row_forward,
    "attention/attention_row.cu:attention_causal": ref_attention_row_forward,
    "precision/half_ops.cu:half_axpby": ref_half_axpby,
    "precision/half_ops.cu:half_add_scale": ref_half_add_scale,
    "precision/half_ops.cu:half_bias_gelu_rows": ref_half_bias_gelu_rows,
    "precision/half2_vectorized.cu:half2_fma_affine": ref_half2_fma_affine,
    "precision/half2_vectorized.cu:half2_dot_partial": ref_half2_dot_partial,
    "precision/bf16_ops.cu:bf16_swiglu": ref_bf16_swiglu,
    "precision/bf16_ops.cu:quantize_f32_to_bf16": ref_quantize_f32_to_bf16,
    "precision/hgemm_f32acc.cu:hgemm_f32acc": ref_hgemm_f32acc,
    "features/template_row_mean.cu:row_mean_f32_b128": ref_row_mean,
    "features/template_row_mean.cu:row_mean_f64_b256": ref_row_mean,
    "features/device_functions.cu:poly_soft_clip": ref_poly_soft_clip,
    "features/device_functions.cu:hypot_newton": ref_hypot_newton,
    "features/macros_bias_act.cu:bias_act_2d": ref_bias_act_2d,
    "features/constant_fir.cu:fir_filter_1d": ref_fir_filter_1d,
    "features/constant_fir.cu:poly_eval_const": ref_poly_eval_const,
    "features/dynamic_smem.cu:moving_average_1d": ref_moving_average_1d,
    "features/dynamic_smem.cu:row_scale_max_abs": ref_row_scale_max_abs,
    "features/vector_types.cu:axpy_float4": ref_axpy_float4,
    "features/vector_types.cu:complex_mul_float2": ref_complex_mul_float2,
    "features/coop_groups_reduce.cu:cg_row_dot": ref_cg_row_dot,
    "features/coop_groups_reduce.cu:cg_tile_row_norm": ref_cg_tile_row_norm,
    "features/ldg_embedding.cu:embedding_gather_ldg": ref_embedding_gather_ldg,
}
