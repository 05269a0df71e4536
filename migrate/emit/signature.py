"""What the launcher of an emitted kernel needs to know, as the module writes it
(``<KERNEL> = Signature(...)``; :class:`migrate.runtime.tilelang_support.Signature` reads it)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


#: the TileLang pass option every kernel but a tiled GEMM compiles with (the module template's
#: ``pass_configs``, and the static ones of kernels compiled at constant sizes): a value bound once
#: under a guard stays one value; TileLang's IfStmtBinding would paste a bound load into each of its
#: uses (cooling's element, read once and used 46 times: 106 registers against the CUDA's 74)
KEEP_BINDS = ("tl.if_stmt_binding_inline_replayable_binds", False)


@dataclass(frozen=True)
class Signature:
    name: str
    #: ((name, "buffer" | "scalar", dtype), ...) in the CUDA order; a vector or struct passed by
    #: value is (name, "lanes", ((lane parameter, dtype, byte offset), ...)) (no lanes for an object
    #: the body never reads: a functor of no data whose methods were inlined); a pointer to a struct
    #: of buffers, (name, "fields", ((buffer parameter, dtype, field, byte offset), ...)); a struct
    #: holding pointers passed by value, (name, "members", ((member parameter, "buffer" | "scalar",
    #: dtype, byte offset), ...)); one too large for a parameter per field, (name, "struct", dtype
    #: of the buffer holding its bytes)
    params: tuple
    template: tuple  # ((factory parameter, "type" | "value"), ...)
    symbols: tuple  # ((__constant__ array or __device__ global, dtype, elements), ...)
    form: str
    shapes: tuple = ()  # ((buffer, (extent or None, ...)), ...): buffers indexed as row-major arrays
    tune: Optional[dict] = None  # factory keyword -> the values `migrate bench --tune` tries
    #: the scalar parameters a GPU launch compiles as constants, when ``specialize_when`` (the text
    #: of a lambda over their values, or "None": always) holds; why, in one of the two notes
    specialize: tuple = ()
    specialize_when: str = ""
    specialize_note: str = ""
    specialize_why: str = ""
    static_pass_configs: tuple = ()  # TileLang pass configs of the kernels compiled at constant sizes
    whole_tiles: bool = False  # a GEMM that copies whole tiles (T.copy): no TMA at run-time sizes
    tolerance: Optional[str] = None  # a tolerance class looser than the spec's (tf32)
    #: ((__device__ global, its initial values), ...): symbols the module keeps between launches
    state: tuple = ()
    unchecked: bool = False  # a portable or simt kernel compiled without TileLang's bounds guards
    #: compiled without vectorisation: a branch in a loop stores to an array its condition reads
    #: (analysis.facts.reread_branches)
    unvectorized: bool = False
    #: ((value parameter of an enum type, ((constant as spelled, value), ...)), ...)
    enums: tuple = ()
    #: ((symbol, the C++ that names it), ...) for the symbols whose names are not C++ (a variable
    #: template's specialisation ``mask<double>``, the symbol ``mask_double``): the recorder of
    #: the original's launches reads them by that C++ (runtime.trace_check)
    spellings: tuple = ()
    #: the hybrid form (:mod:`.hybrid`): each scalar's (parameter, byte offset, size) in the bytes
    #: the CUDA entry reads them from; the file its source includes (relative to the module's
    #: folder), the folders nvcc searches after the module's own, the build's macros
    hybrid: tuple = ()
    hybrid_include: str = ""
    hybrid_folders: tuple = ()
    hybrid_defines: tuple = ()
