"""Poisoned red zones around the buffers a migrated kernel receives, shared by the checks on
spec inputs (:mod:`.tilelang_side`) and on recorded launches (:mod:`.replay`).

Each buffer is the middle of a larger tensor: :data:`RED_ZONE` elements of a pattern no kernel
writes by chance on each side. After the launch :func:`red_zone_write` says whether the kernel
wrote into one (the first element, before the start or past the end), and :func:`message` says
it with the buffer's name.
"""
from __future__ import annotations

import numpy as np

#: elements of poison on each side of every buffer: a write there is a failure
RED_ZONE = 64

_NUMPY = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8,
          "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
          "int64": np.int64, "uint64": np.uint64, "bool": np.bool_}


def pattern(dtype: str) -> np.ndarray:
    """RED_ZONE elements of a pattern no kernel writes by chance (0xA5 bytes; for float32 and
    float16 a NaN with a payload of its own), in the holder dtype (bfloat16 as float32)."""
    if dtype == "float32":
        return np.full(RED_ZONE, 0x7FA5A5A5, np.uint32).view(np.float32)
    if dtype == "bfloat16":  # held as float32, converted by torch, which turns every NaN into its
        # own bfloat16 NaN: a finite value exact in bfloat16 (0xA5A5, -2.86e-16) survives the trip
        return np.full(RED_ZONE, 0xA5A50000, np.uint32).view(np.float32)
    if dtype == "float16":
        return np.full(RED_ZONE, 0x7DA5, np.uint16).view(np.float16)
    code = np.dtype(_NUMPY.get(dtype, np.uint8))
    if code == np.bool_:
        return np.zeros(RED_ZONE, np.bool_)
    return np.frombuffer(b"\xa5" * (RED_ZONE * code.itemsize), code).copy()


def changed(part: np.ndarray, dtype: str) -> np.ndarray:
    """Whether each red-zone element no longer holds the pattern, compared bit for bit."""
    want = pattern(dtype)[:len(part)]
    if dtype == "bfloat16":  # held as float32: compare the upper halves
        return (part.view(np.uint32) >> 16) != (want.view(np.uint32) >> 16)
    width = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[part.dtype.itemsize]
    return part.view(width) != want.view(width)


def padded(values: np.ndarray, dtype: str) -> np.ndarray:
    """``values`` with a red zone before and after (holder dtype)."""
    zone = pattern(dtype)
    return np.concatenate([zone, np.asarray(values, dtype=zone.dtype), zone])


def red_zone_write(whole: np.ndarray, n: int, dtype: str):
    """(side, element, count) of the first red zone of ``whole`` (a buffer of ``n`` elements
    between its zones, as :func:`padded` made it) that the kernel wrote: side ``before`` or
    ``after``, the element's index relative to the buffer's start (negative before it); None when
    both zones are intact."""
    for side, part in (("before", whole[:RED_ZONE]), ("after", whole[RED_ZONE + n:])):
        hit = np.flatnonzero(changed(part, dtype))
        if hit.size:
            element = int(hit[-1]) - RED_ZONE if side == "before" else n + int(hit[0])
            return side, element, int(hit.size)
    return None


def message(name: str, write) -> str:
    """The failure of a red-zone write ``(side, element, count)`` into buffer ``name``."""
    side, element, count = write
    where = "before its start" if side == "before" else "past its end"
    return (f"{name}: the migrated kernel wrote outside the buffer, element {element} ({where}; "
            f"{count} element{'s' if count > 1 else ''} of the red zone changed)")
