"""The scalar dtypes: one table, and the mappings its users derive from it.

Each :class:`DType` row names a dtype (``"float32"``) and says everything the tool knows about
it: its kind, its size in bytes, how C/CUDA spells it (the canonical spellings clang reports, and
the further spellings a template type argument may use), the numpy dtype that holds its values,
its TileLang spelling, the CUDA vector types built on it, and its code in the C++ launcher
(``runtime/cpu/c2t_launcher.h``, ``enum DtypeCode``; the dtypes with a code are the ones a
corpus spec may name).

The views below are what the users read; none holds data of its own:

==========================  ===================================  ===============================
view                        maps                                 used by
==========================  ===================================  ===============================
:data:`C_SPELLINGS`         canonical clang spelling -> dtype    ``ir.model.SCALAR_DTYPES``
:data:`TEMPLATE_SPELLINGS`  template-argument spelling -> dtype  ``runtime.tilelang_support``
:data:`VECTOR_TYPES`        CUDA vector type -> (dtype, lanes)   ``ir.model.VECTOR_TYPES``
:data:`TILELANG`            dtype -> ``T.xxx``                   ``emit.printer.DTYPES``
:data:`SIZES`               dtype -> bytes (bool included)       ``emit.kernel`` (shared arrays)
:data:`SPEC_SIZES`          spec dtype -> bytes, in code order   ``runtime.spec.DTYPES``
:data:`LAUNCHER_CODES`      spec dtype -> launcher code          ``runtime.inputs.DTYPE_CODES``
:data:`NUMPY_HOLDERS`       dtype -> numpy dtype name            ``runtime.spec.numpy_dtype``
==========================  ===================================  ===============================

This module imports nothing but the standard library: the runtime (which runs without libclang,
TileLang or torch) imports it.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "DType", "TABLE", "BY_NAME", "C_SPELLINGS", "TEMPLATE_SPELLINGS", "VECTOR_TYPES", "TILELANG",
    "SIZES", "SPEC_SIZES", "SPEC_FLOATS", "SPEC_INTS", "LAUNCHER_CODES", "NUMPY_HOLDERS",
]

#: lane counts of the CUDA vector types ``float1`` .. ``float4`` (and the like)
VECTOR_LANES = (1, 2, 3, 4)


@dataclass(frozen=True, slots=True)
class DType:
    name: str                          # the dtype, as the model, specs and TileLang name it
    kind: str                          # "bool" | "int" | "uint" | "float" | "void"
    size: int | None                   # bytes per element (None: void)
    clang: tuple[str, ...]             # canonical spellings clang reports for the type
    aliases: tuple[str, ...] = ()      # more spellings a template type argument may use
    numpy: str | None = None           # numpy dtype holding its values (bfloat16: float32)
    tilelang: str | None = None        # TileLang dtype expression
    code: int | None = None            # launcher DtypeCode; None: a spec cannot name it
    vector_bases: tuple[str, ...] = ()  # CUDA vector types <base>1 .. <base>4 of this element
    pairs: tuple[str, ...] = ()        # CUDA two-lane types (__half2)

    @property
    def signed(self) -> bool:
        return self.kind in ("int", "float")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        """An integer dtype (bool counts as one, as in C)."""
        return self.kind in ("int", "uint", "bool")


def _int(bits: int, code: int, clang: tuple[str, ...], vectors: tuple[str, ...],
         aliases: tuple[str, ...] = (), signed_aliases: tuple[str, ...] = ()) -> tuple[DType, DType]:
    """The signed and the unsigned integer of ``bits`` bits (codes ``code`` and ``code + 1``);
    ``aliases`` are more spellings of the unsigned one, ``signed_aliases`` of the signed one."""
    s, u = f"int{bits}", f"uint{bits}"
    signed_clang = tuple(c for c in clang if not c.startswith("unsigned"))
    unsigned_clang = tuple(c for c in clang if c.startswith("unsigned"))
    return (
        DType(s, "int", bits // 8, signed_clang, (f"{s}_t",) + signed_aliases, s, f"T.{s}", code, vectors),
        DType(u, "uint", bits // 8, unsigned_clang, aliases + (f"{u}_t",), u, f"T.{u}", code + 1,
              tuple("u" + v for v in vectors)),
    )


#: Every scalar dtype, in the order the TileLang printer lists them; ``void`` last.
TABLE: tuple[DType, ...] = (
    DType("bool", "bool", 1, ("bool",), numpy="bool", tilelang="T.bool"),
    *_int(8, 4, ("char", "signed char", "unsigned char"), ("char",)),
    *_int(16, 6, ("short", "unsigned short"), ("short",)),
    *_int(32, 8, ("int", "unsigned int"), ("int",), aliases=("unsigned", "uint")),
    *_int(64, 10, ("long", "unsigned long", "long long", "unsigned long long"), ("long", "longlong"),
          aliases=("size_t",), signed_aliases=("ptrdiff_t",)),
    DType("float16", "float", 2, ("__half",), ("half",), "float16", "T.float16", 0,
          pairs=("__half2",)),
    DType("bfloat16", "float", 2, ("__nv_bfloat16",), ("nv_bfloat16",), "float32", "T.bfloat16", 1,
          pairs=("__nv_bfloat162",)),
    DType("float32", "float", 4, ("float",), (), "float32", "T.float32", 2, ("float",)),
    DType("float64", "float", 8, ("double",), (), "float64", "T.float64", 3, ("double",)),
    DType("void", "void", None, ("void",)),
)

BY_NAME: dict[str, DType] = {d.name: d for d in TABLE}

#: canonical clang spelling -> dtype (``"unsigned long long"`` -> ``"uint64"``; ``void`` too)
C_SPELLINGS: dict[str, str] = {c: d.name for d in TABLE for c in d.clang}
#: spelling of a template type argument -> dtype: the clang spellings, ``unsigned``, the CUDA
#: typedefs (``half``, ``int8_t``, ``size_t``, ...); not ``void``
TEMPLATE_SPELLINGS: dict[str, str] = {c: d.name for d in TABLE if d.kind != "void"
                                      for c in d.clang + d.aliases}
# and as GCC spells them in an instance's name (``hash_keys<long unsigned int>``)
TEMPLATE_SPELLINGS.update({"short int": "int16", "short unsigned int": "uint16", "long int": "int64",
                           "long unsigned int": "uint64", "long long int": "int64",
                           "long long unsigned int": "uint64"})
#: CUDA vector type -> (element dtype, lanes)
VECTOR_TYPES: dict[str, tuple[str, int]] = {
    **{f"{b}{n}": (d.name, n) for d in TABLE for b in d.vector_bases for n in VECTOR_LANES},
    **{p: (d.name, 2) for d in TABLE for p in d.pairs},
}
#: CUDA's other spellings of two-lane vector types
VECTOR_ALIASES: dict[str, str] = {"half2": "__half2", "nv_bfloat162": "__nv_bfloat162"}
#: the integer dtypes (bool counts as one, as in C), the fixed-width ones (no bool), the unsigned ones
INTEGERS = frozenset(d.name for d in TABLE if d.is_integer)
FIXED_INTEGERS = frozenset(d.name for d in TABLE if d.kind in ("int", "uint"))
UNSIGNED = frozenset(d.name for d in TABLE if d.kind == "uint")
#: dtype -> TileLang dtype expression (Python source)
TILELANG: dict[str, str] = {d.name: d.tilelang for d in TABLE if d.tilelang}
#: dtype -> bytes per element (every dtype but void)
SIZES: dict[str, int] = {d.name: d.size for d in TABLE if d.size is not None}
#: the dtypes a spec may name -> bytes per element, in launcher-code order
SPEC_SIZES: dict[str, int] = {d.name: d.size for d in sorted((d for d in TABLE if d.code is not None),
                                                             key=lambda d: d.code)}
#: spec dtype -> launcher code (``enum DtypeCode`` in c2t_launcher.h)
LAUNCHER_CODES: dict[str, int] = {name: BY_NAME[name].code for name in SPEC_SIZES}
SPEC_FLOATS = frozenset(n for n in SPEC_SIZES if BY_NAME[n].is_float)
SPEC_INTS = frozenset(SPEC_SIZES) - SPEC_FLOATS
#: dtype -> name of the numpy dtype that holds its values (bfloat16 values are held as float32)
NUMPY_HOLDERS: dict[str, str] = {d.name: d.numpy for d in TABLE if d.numpy}
