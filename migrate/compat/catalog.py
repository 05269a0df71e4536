"""The CUDA device API the tool knows, by section: one entry per name, as data.

The frontend uses the section to classify calls (:data:`migrate.ir.model.CALL_KINDS`). The
sections of names with a compat row (``math``, ``conversion``, ``half``, ``atomic``,
``unsupported``) derive from the rows of :mod:`migrate.compat.table`: a new row files its name
here, nothing to edit. The other sections (warp, sync, memory, cooperative groups, io,
constructors) list API without rows; ``tests/compat/test_table.py`` fails, naming the name, when
a name of theirs gets a row.
"""
from __future__ import annotations

from migrate.compat.table import ROWS
from migrate.compat.table import SECTIONS as ROW_SECTIONS

#: Cache-hinted loads: each reads the element its address names, as a plain load would.
CACHED_LOADS = ("__ldg", "__ldcs", "__ldcg", "__ldca", "__ldlu", "__ldcv", "__nv_atomic_load_n")

#: Sections of CUDA API without compat rows.
API_WITHOUT_ROWS: dict[str, str] = {
    "warp": """
        __shfl_sync __shfl_up_sync __shfl_down_sync __shfl_xor_sync __ballot_sync __any_sync
        __all_sync __activemask __match_any_sync __match_all_sync __reduce_add_sync
        __reduce_min_sync __reduce_max_sync __reduce_and_sync __reduce_or_sync __reduce_xor_sync
        __shfl __shfl_up __shfl_down __shfl_xor __ballot __any __all __lanemask_lt
    """,
    "sync": """
        __syncthreads __syncthreads_count __syncthreads_and __syncthreads_or __syncwarp
        __threadfence __threadfence_block __threadfence_system
    """,
    "memory": """
        __ldg __ldcg __ldca __ldcs __ldlu __ldcv __stwb __stcg __stcs __stwt memcpy memset __nv_atomic_load_n
        __prefetch_global_l1 __prefetch_global_l2 __isGlobal __isShared __cvta_generic_to_shared
    """,
    "cg": """
        cooperative_groups::this_thread_block cooperative_groups::tiled_partition
        cooperative_groups::this_grid cooperative_groups::coalesced_threads cooperative_groups::reduce
        cooperative_groups::inclusive_scan cooperative_groups::exclusive_scan
        cooperative_groups::sync
    """,
    "io": "printf assert __assert_fail __trap __brkpt clock clock64 __nanosleep",
    "constructor": """
        make_char1 make_char2 make_char3 make_char4 make_uchar1 make_uchar2 make_uchar3 make_uchar4
        make_short2 make_short4 make_ushort2 make_ushort4 make_int1 make_int2 make_int3 make_int4
        make_uint1 make_uint2 make_uint3 make_uint4 make_long2 make_longlong2 make_float1
        make_float2 make_float3 make_float4 make_double1 make_double2 make_double3 make_double4
    """,
}

#: Section order: the first section listing a name classifies it (``__hadd`` is the int
#: average in ``math`` and the half addition in ``half``; the frontend sees ``math``).
_ORDER = ("math", "conversion", "half", "atomic", "warp", "sync", "memory", "cg", "io",
          "constructor", "unsupported")


def _row_names(section: str) -> str:
    return " ".join(dict.fromkeys(r.cuda for r in ROWS if r.section == section))


if set(ROW_SECTIONS) | set(API_WITHOUT_ROWS) != set(_ORDER):
    raise ValueError("catalog: every section is either a row section or listed here")
SECTIONS: dict[str, str] = {
    s: _row_names(s) if s in ROW_SECTIONS else API_WITHOUT_ROWS[s] for s in _ORDER}

_SECTION_OF: dict[str, str] = {}
for _section, _names in SECTIONS.items():
    for _name in _names.split():
        _SECTION_OF.setdefault(_name, _section)

#: Names whose calls the frontend reports as unsupported, with the diagnostic code (the rows').
UNSUPPORTED_CODES = {r.cuda: r.code for r in ROWS if r.section == "unsupported" and r.code}


def section_of(name: str) -> str | None:
    """The catalog section of a CUDA API name (``std::`` and ``::`` prefixes allowed), or None."""
    name = name.lstrip(":")
    if name in _SECTION_OF:
        return _SECTION_OF[name]
    if name.startswith("cg::"):
        return _SECTION_OF.get("cooperative_groups::" + name[4:])
    return None
