"""Python names of the emitted code: the tensors' identifiers, and the names the kernels and the
``Model`` class use themselves (which a tensor or a declared dimension must not take)."""
from __future__ import annotations

import keyword
import re


#: names the kernels and the Model class use themselves (loop variables, buffers, modules)
RESERVED = frozenset("""T torch np tilelang Path self w dev trace target alloc loop threads stages block_m block_n
block_k bx by bz i j k kk ko r c o row col acc chunk a_s b_s mean rstd row_max row_sum p oc ic kh kw ih iw img oh
ow""".split())


def py_name(tensor: str) -> str:
    """A Python identifier for an ONNX tensor name."""
    s = re.sub(r"\W", "_", tensor)
    if not s or s[0].isdigit() or keyword.iskeyword(s) or s in RESERVED or s.startswith(("v_", "make_")):
        s = "t_" + s
    return s


def py_names(tensors) -> dict[str, str]:
    """One distinct Python identifier per ONNX tensor name (``x:0`` and ``x_0`` both exist in
    some exported models: the later gets a suffix)."""
    out, used = {}, set()
    for t in tensors:
        name = base = py_name(t)
        k = 1
        while name in used:
            k += 1
            name = f"{base}_{k}"
        used.add(name)
        out[t] = name
    return out
