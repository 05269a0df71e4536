"""Shared by the compat tests that compile a call of every row (parse prelude, CPU executor)."""
from __future__ import annotations

from migrate.compat.table import UNSUPPORTED

#: row dtype -> the CUDA C++ type of an argument of that dtype
CUDA_CXX_TYPES = {
    "float32": "float", "float64": "double", "float16": "__half", "bfloat16": "__nv_bfloat16",
    "int32": "int", "uint32": "unsigned int", "int64": "long long", "uint64": "unsigned long long",
    "int16": "short", "uint16": "unsigned short", "bool": "bool", "str": "const char*",
    "float16x2": "__half2", "bfloat16x2": "__nv_bfloat162",
}


def call_probes(rows, head=(), unsupported=None) -> tuple[str, dict[int, str]]:
    """CUDA source calling each supported row with arguments of its dtypes (atomics: a pointer
    first), one ``__device__`` function per row, after the lines ``head``; ``unsupported(row)``
    may give a line for an UNSUPPORTED row. Returns (source, {line number: row label})."""
    lines = list(head)
    where: dict[int, str] = {}
    for j, r in enumerate(rows):
        if r.status is UNSUPPORTED:
            stmt = unsupported(r) if unsupported else None
            if stmt is None:
                continue
        else:
            params = [f"{CUDA_CXX_TYPES[dt]}{'*' if r.kind == 'atomic' and i == 0 else ''} a{i}"
                      for i, dt in enumerate(r.args)]
            args = [f"a{i}" for i in range(len(r.args))]
            if r.address_as:  # the element's address cast as the CUDA casts it
                args[0] = f"({CUDA_CXX_TYPES[r.address_as]}*)a0"
                args[1:] = [f"({CUDA_CXX_TYPES[r.address_as]})a{i}" for i in range(1, len(r.args))]
            call = f"{r.cuda}({', '.join(args)})"
            stmt = f"__device__ void probe{j}({', '.join(params)}) {{ (void){call}; }}"
        where[len(lines) + 1] = r.label
        lines.append(stmt)
    return "\n".join(lines) + "\n", where
