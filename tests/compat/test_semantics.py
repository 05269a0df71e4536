"""TileLang 0.1.15 semantics the compat table and the emitter rely on, pinned as tests.

If an upgrade changes one of these, the mapping rules built on it must be revisited.
"""
from __future__ import annotations

import os

from migrate.compat import verify

os.environ.setdefault("TILELANG_CACHE_DIR", verify.default_cache_dir())

import numpy as np  # noqa: E402
import pytest  # noqa: E402

N = 16

_KERNEL = '''
import tilelang.language as T
N = 16

@T.prim_func
def kernel(A: T.Tensor((N,), "int32"), B: T.Tensor((N,), "int32"), X: T.Tensor((N,), "float32"),
           I: T.Tensor((6, N), "int32"), F: T.Tensor((2, N), "float32")):
    with T.Kernel(1):
        for i in T.Parallel(N):
            I[0, i] = A[i] // B[i]
            I[1, i] = A[i] % B[i]
            I[2, i] = T.truncdiv(A[i], B[i])
            I[3, i] = T.truncmod(A[i], B[i])
            I[4, i] = T.cast(X[i], "int32")
            I[5, i] = A[i] // 2
            F[0, i] = T.round(X[i])
            F[1, i] = T.nearbyint(X[i])
'''


@pytest.fixture(scope="module")
def semantics_on_c():
    import tilelang
    import torch
    kernel = tilelang.compile(verify.load_prim_func(_KERNEL), out_idx=[3, 4], target="c",
                              pass_configs=verify.CPU_PASS_CONFIGS)
    a = np.array([7, -7, 7, -7, 0, 1, -1, 5, 9, -9, 100, -100, 3, -3, 2147483647, -2147483647],
                 dtype=np.int32)
    b = np.array([2, 2, -2, -2, 3, 3, 3, -3, 4, 4, 7, 7, -5, -5, 2, 2], dtype=np.int32)
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 3.7, -3.7, 0.49999997, -0.49999997,
                  1e9, -1e9, 7.5, -7.5, 0.0, -0.0], dtype=np.float32)
    ints, floats = kernel(torch.from_numpy(a), torch.from_numpy(b), torch.from_numpy(x))
    return a, b, x, ints.numpy(), floats.numpy()


def test_integer_division_is_floor_and_trunc_ops_are_c(semantics_on_c):
    a, b, _, ints, _ = semantics_on_c
    np.testing.assert_array_equal(ints[0], np.floor_divide(a, b))         # // floors
    np.testing.assert_array_equal(ints[1], np.mod(a, b))                  # % has the divisor's sign
    c_div = np.trunc(a.astype(np.float64) / b).astype(np.int32)
    np.testing.assert_array_equal(ints[2], c_div)                         # C's a / b
    np.testing.assert_array_equal(ints[3], a - c_div * b)                 # C's a % b
    np.testing.assert_array_equal(ints[5], np.floor_divide(a, 2))         # // 2 -> >> 1 (floor)


def test_float_to_int_cast_truncates(semantics_on_c):
    _, _, x, ints, _ = semantics_on_c
    np.testing.assert_array_equal(ints[4], np.trunc(x).astype(np.int32))


def test_round_differs_between_targets(semantics_on_c):
    _, _, x, _, floats = semantics_on_c
    away = np.where(np.abs(x - np.trunc(x)) >= 0.5, np.trunc(x) + np.copysign(1, x), np.trunc(x))
    np.testing.assert_array_equal(floats[0], away.astype(np.float32))     # c: C round()
    np.testing.assert_array_equal(floats[1], np.rint(x))                  # nearbyint: half even
    # ... while on CUDA the same T.round lowers to nearbyintf (half to even)
    art = verify.lower_cuda(_KERNEL)
    assert "nearbyintf(X[" in art.kernel_source and "roundf(" not in art.kernel_source


def test_integer_true_division_is_rejected():
    import tilelang  # noqa: F401
    from tvm import tirx
    a, b = tirx.Var("a", "int32"), tirx.Var("b", "int32")
    with pytest.raises(Exception, match="integer divisions"):
        _ = a / b


@pytest.mark.parametrize("expr, dtype", [
    ("h * 0.5", "float32"),        # a Python float promotes float16 to float32
    ("1.0 / h", "float32"),
    ("h + 1", "float16"),          # an int literal keeps float16
    ("f * 0.1", "float32"),        # C would compute f * 0.1 in double
    ("i * 2.5", "float32"),        # C: double
    ("c + 1", "int32"),            # int8 promotes to int32, as in C
    ("u + 1", "uint32"),
    ("i + l", "int64"),
    ("f + d", "float64"),
    ("T.max(i, f)", "float32"),    # mixed int/float: the int is converted
    ("T.min(i, u)", "uint32"),     # mixed signed/unsigned: unsigned, as in C
])
def test_python_level_dtype_promotion(expr, dtype):
    import tilelang.language as T
    from tvm import tirx
    env = {"T": T, "h": tirx.Var("h", "float16"), "f": tirx.Var("f", "float32"),
           "d": tirx.Var("d", "float64"), "i": tirx.Var("i", "int32"), "c": tirx.Var("c", "int8"),
           "u": tirx.Var("u", "uint32"), "l": tirx.Var("l", "int64")}
    assert str(eval(expr, env).dtype) == dtype


def test_math_in_vectorized_parallel_fails_on_c():
    """Math intrinsics need ``tirx.disable_vectorize`` on c; extern helpers do not."""
    import tilelang
    src = '''
import tilelang.language as T
@T.prim_func
def kernel(A: T.Tensor((16,), "float32"), B: T.Tensor((16,), "float32")):
    with T.Kernel(1):
        for i in T.Parallel(16):
            B[i] = T.exp(A[i])
'''
    with pytest.raises(Exception, match="tirx.exp"):
        tilelang.compile(verify.load_prim_func(src), out_idx=[1], target="c")
