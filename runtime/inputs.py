"""Seeded random inputs for a kernel spec, poison for its outputs, and the byte layouts kernels see.

Values are held in numpy arrays of a *holder* dtype: the spec dtype itself, except ``bfloat16``,
held as float32 arrays whose values are exact bfloat16 numbers (numpy has no bfloat16). A kernel
receives raw bytes: :func:`to_kernel_bytes` / :func:`from_kernel_bytes` convert (bfloat16 as raw
uint16 bits, round to nearest even).

    >>> from migrate.runtime.inputs import make_inputs
    >>> inp = make_inputs(kernel_spec, seed=1234)
    >>> inp.args["x"], inp.args["n"], inp.seed

* ``in``/``inout`` buffers are uniform in the arg's ``range`` (integers: inclusive), rounded to
  the dtype and kept inside the range, and never all zero;
* ``out`` buffers are filled with :func:`poison_array` (a quiet NaN with a recognisable payload
  for floats, a sentinel such as ``0x7FBADBAD`` for integers); :func:`is_poison` finds
  elements that still hold it;
* scalars are the spec's ``value`` as a Python int or float;
* each argument draws from its own stream seeded by ``(seed, crc32(name))``, so adding an
  argument to a spec does not change the others' data.
"""
from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np

from .. import dtypes as _dtypes
from .spec import DTYPES, FLOAT_DTYPES, INT_DTYPES, ArgSpec, KernelSpec, SymbolSpec, numpy_dtype

__all__ = [
    "Inputs", "make_inputs", "random_buffer", "poison_array", "poison_bits", "is_poison",
    "to_kernel_bytes", "from_kernel_bytes", "round_to_bf16", "bf16_to_bits", "bits_to_bf16",
    "scalar_slot", "DTYPE_CODES", "ARG_PTR", "ARG_INT", "ARG_UINT", "ARG_FLOAT", "DEFAULT_SEED",
]

DEFAULT_SEED = 20240611
#: dtype codes shared with the C++ launcher (c2t_launcher.h, enum DtypeCode; a view of migrate.dtypes)
DTYPE_CODES = _dtypes.LAUNCHER_CODES
ARG_PTR, ARG_INT, ARG_UINT, ARG_FLOAT = 0, 1, 2, 3

# Poison bit patterns: quiet NaNs with a payload for floats, sentinels for integers.
_POISON_BITS = {
    "float16": 0x7E5B,
    "bfloat16": 0x7FDB,
    "float32": 0x7FC2BAD5,
    "float64": 0x7FF8BADBADBADBAD,
    "int8": 0xA5, "uint8": 0xA5,
    "int16": 0xDBAD, "uint16": 0xDBAD,
    "int32": 0x7FBADBAD, "uint32": 0x7FBADBAD,
    "int64": 0x7FBADBADDBADBAD5, "uint64": 0x7FBADBADDBADBAD5,
}
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


@dataclass
class Inputs:
    """Arguments by name (buffers as flat arrays, scalars as numbers), symbols, and the seed."""

    args: dict
    symbols: dict
    seed: int
    kernel: KernelSpec | None = None

    def copy(self) -> "Inputs":
        return Inputs(args={k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.args.items()},
                      symbols={k: v.copy() for k, v in self.symbols.items()}, seed=self.seed, kernel=self.kernel)


# --------------------------------------------------------------------------- bfloat16

def round_to_bf16(x) -> np.ndarray:
    """float32 array of the values of ``x`` rounded to bfloat16 (nearest even; NaN stays NaN)."""
    f = np.ascontiguousarray(np.asarray(x, dtype=np.float32))
    u = f.view(np.uint32).astype(np.uint64)
    nan = np.isnan(f)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
    r = np.where(nan, (u | 0x00400000) & 0xFFFF0000, r)
    return r.astype(np.uint32).view(np.float32).reshape(f.shape)


def bf16_to_bits(x) -> np.ndarray:
    """uint16 bfloat16 bits of float32 values (rounded to bfloat16 first)."""
    return (round_to_bf16(x).view(np.uint32) >> 16).astype(np.uint16)


def bits_to_bf16(bits) -> np.ndarray:
    """float32 array holding the bfloat16 values of raw uint16 bits."""
    return (np.asarray(bits, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)


# --------------------------------------------------------------------------- poison

def poison_bits(dtype: str) -> int:
    return _POISON_BITS[dtype]


def poison_array(dtype: str, n: int) -> np.ndarray:
    """``n`` elements of the poison value of ``dtype``, in its holder dtype."""
    bits = _POISON_BITS[dtype]
    if dtype == "bfloat16":
        return bits_to_bf16(np.full(n, bits, dtype=np.uint16))
    size = DTYPES[dtype]
    return np.full(n, bits, dtype=_UINT_OF_SIZE[size]).view(np.dtype(dtype))


def is_poison(arr, dtype: str) -> np.ndarray:
    """Boolean mask of the elements of ``arr`` (holder dtype) that hold the poison pattern."""
    a = np.ascontiguousarray(arr)
    bits = _POISON_BITS[dtype]
    if dtype == "bfloat16":
        a = np.ascontiguousarray(a, dtype=np.float32)
        return (a.view(np.uint32) >> 16) == bits
    hd = numpy_dtype(dtype)
    if a.dtype != hd:
        return np.zeros(a.shape, dtype=bool)
    return a.view(_UINT_OF_SIZE[hd.itemsize]) == bits


# --------------------------------------------------------------------------- bytes

def to_kernel_bytes(arr, dtype: str) -> bytes:
    """The bytes a kernel reads for ``arr`` (values in the holder dtype)."""
    if dtype == "bfloat16":
        return bf16_to_bits(arr).tobytes()
    return np.ascontiguousarray(np.asarray(arr).astype(np.dtype(dtype), copy=False)).tobytes()


def from_kernel_bytes(data: bytes, dtype: str, count: int | None = None) -> np.ndarray:
    """Holder-dtype array of the elements in ``data``."""
    if dtype == "bfloat16":
        return bits_to_bf16(np.frombuffer(data, dtype=np.uint16, count=-1 if count is None else count)).copy()
    return np.frombuffer(data, dtype=np.dtype(dtype), count=-1 if count is None else count).copy()


def scalar_slot(value, dtype: str) -> tuple[int, bytes]:
    """(ArgKind, 8 bytes) for a by-value scalar, as the launcher expects."""
    if dtype in FLOAT_DTYPES:
        return ARG_FLOAT, struct.pack("<d", float(value))
    v = int(value)
    if dtype.startswith("uint"):
        return ARG_UINT, struct.pack("<Q", v & 0xFFFFFFFFFFFFFFFF)
    return ARG_INT, struct.pack("<q", v)


# --------------------------------------------------------------------------- random data

def _rng(seed: int, name: str) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([int(seed) & 0xFFFFFFFFFFFFFFFF, zlib.crc32(name.encode())]))


def _round_into_range(vals: np.ndarray, dtype: str, lo: float, hi: float) -> np.ndarray:
    """Round float64 values to ``dtype`` (holder array), nudging any that rounding pushed out."""
    if dtype == "float64":
        return np.clip(vals, lo, hi)
    if dtype == "bfloat16":
        r = round_to_bf16(vals.astype(np.float32))
        bits = r.view(np.uint32).copy()
        over = r.astype(np.float64) > hi
        under = r.astype(np.float64) < lo
        # one bfloat16 ulp toward the inside: magnitude down when the sign agrees
        step = np.uint32(0x10000)
        pos = r > 0
        bits = np.where(over & pos, bits - step, np.where(over & ~pos, bits + step, bits))
        bits = np.where(under & pos, bits + step, np.where(under & ~pos, bits - step, bits))
        out = bits.astype(np.uint32).view(np.float32)
        out = np.where(out == 0, np.float32(0), out)
        return out
    t = np.dtype(dtype).type
    r = vals.astype(t)
    over = r.astype(np.float64) > hi
    under = r.astype(np.float64) < lo
    if over.any():
        r[over] = np.nextafter(r[over], t(-np.inf))
    if under.any():
        r[under] = np.nextafter(r[under], t(np.inf))
    return r


def random_buffer(dtype: str, n: int, rng_range, rng: np.random.Generator) -> np.ndarray:
    """``n`` random elements of ``dtype`` in ``rng_range``, never all zero (holder dtype)."""
    lo, hi = rng_range
    if dtype in INT_DTYPES:
        nd = np.dtype(dtype)
        gen_dtype = np.uint64 if dtype == "uint64" else np.int64
        arr = rng.integers(int(lo), int(hi), size=n, endpoint=True, dtype=gen_dtype).astype(nd)
        if n and not arr.any():
            arr[0] = nd.type(hi if hi != 0 else lo)
        return arr
    vals = rng.uniform(float(lo), float(hi), size=n)
    arr = _round_into_range(vals, dtype, float(lo), float(hi))
    if n and not np.any(arr != 0):
        for edge in (hi, lo):
            v = _round_into_range(np.array([edge], dtype=np.float64), dtype, float(lo), float(hi))[0]
            if v != 0:
                arr[0] = v
                break
        else:
            raise ValueError(f"range {list(rng_range)} holds no non-zero {dtype} value")
    return arr


def make_inputs(kernel: KernelSpec, seed: int | None = None) -> Inputs:
    """Random arguments and symbols for ``kernel`` (see the module docstring)."""
    seed = DEFAULT_SEED if seed is None else int(seed)
    args: dict = {}
    for a in kernel.args:
        if a.is_scalar:
            args[a.name] = a.value
        elif a.role == "out":
            args[a.name] = poison_array(a.dtype, a.elements)
        else:
            args[a.name] = random_buffer(a.dtype, a.elements, a.range, _rng(seed, a.name))
    symbols: dict = {}
    for s in kernel.symbols:
        if s.values is not None:
            arr = np.asarray(s.values, dtype=np.float64 if s.dtype in FLOAT_DTYPES else None)
            if s.dtype == "bfloat16":
                arr = round_to_bf16(arr.astype(np.float32))
            else:
                arr = arr.astype(numpy_dtype(s.dtype))
            symbols[s.name] = arr
        else:
            symbols[s.name] = random_buffer(s.dtype, s.elements, s.range, _rng(seed, "symbol:" + s.name))
    return Inputs(args=args, symbols=symbols, seed=seed, kernel=kernel)


def repoison(kernel: KernelSpec, args: dict) -> dict:
    """A copy of ``args`` whose ``out`` buffers are poisoned again (before every run)."""
    out = dict(args)
    for a in kernel.args:
        if a.is_buffer and a.role == "out":
            out[a.name] = poison_array(a.dtype, a.elements)
    return out
