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


REFERENCES = {
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
}
