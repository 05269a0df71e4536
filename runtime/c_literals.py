"""Float constants that survive TileLang's C target exactly.

TVM's C code generator (TileLang 0.1.15) prints a float constant as ``std::scientific`` with the
stream's default precision: seven significant digits (``3.141592653589793`` becomes
``3.141593e+00``, ``0.2f`` stays ``2.000000e-01f``). A float64 constant needs 17 digits and a
float32 one 9, so on the CPU check a migrated kernel computed with other constants than the CUDA
it is compared with: a Gabor filter's ``2 * pi * f * u`` differed in the 7th digit (relative
error 0.17 where terms cancel), and a constant changed in the migrated code could pass.

:func:`exact_float_literals` rewrites every float32/float64 constant whose printed form would not
read back as the same value into a call of a helper that takes its bit pattern
(``c2t_bits_float64(4614256656552045848ULL)``), and puts the helpers in the kernel's C prelude.
Constants that print exactly (``0.5``, ``1e-3f``) are left alone; the CUDA target is not touched
(its code generator prints every digit). The rewrite runs on the device module just before C code
is generated (:func:`patch_device_codegen`, installed by
:func:`runtime.tilelang_support.compile_kernel` for the ``c`` target): TVM's simplifier folds
constants while lowering, and a constant it makes there (``y = Y / (4 - 4 * Y)`` with ``Y = 0.24``
bound once) printed with 7 digits made a real program's fp64 cooling kernel differ from its CUDA.
"""
from __future__ import annotations

import math
import struct

#: C definitions of the helpers (extern "C": TVM declares the extern calls it prints with C linkage).
PRELUDE = (
    "#include <stdint.h>\n#include <string.h>\n"
    "#ifndef C2T_DEF_c2t_bits_float\n#define C2T_DEF_c2t_bits_float\n"
    'extern "C" double c2t_bits_float64(uint64_t b) { double v; memcpy(&v, &b, 8); return v; }\n'
    'extern "C" float c2t_bits_float32(uint32_t b) { float v; memcpy(&v, &b, 4); return v; }\n'
    "#endif\n"
)

_FORMATS = {"float64": ("<d", "<Q", "uint64"), "float32": ("<f", "<I", "uint32")}


def prints_exactly(value: float, dtype: str) -> bool:
    """Whether the C code generator's spelling of ``value`` (7 significant digits) reads back as
    the same ``dtype`` value. Non-finite values are left to the code generator."""
    if not math.isfinite(value):
        return True
    fmt = _FORMATS[dtype][0]
    return struct.pack(fmt, float(f"{value:e}")) == struct.pack(fmt, value)


def bits(value: float, dtype: str) -> int:
    fmt, ufmt, _ = _FORMATS[dtype]
    return struct.unpack(ufmt, struct.pack(fmt, value))[0]


def exact_float_literals(func):
    """``func`` (a ``PrimFunc``) with its inexactly printed float constants as bit-pattern calls,
    and :data:`PRELUDE` imported into its C source; ``func`` itself when it has none."""
    from tvm import tirx

    changed = []

    def rewrite(node):
        dtype = str(node.dtype)
        if dtype not in _FORMATS or prints_exactly(node.value, dtype):
            return None
        changed.append(node)
        return tirx.call_extern(dtype, f"c2t_bits_{dtype}",
                                tirx.const(bits(node.value, dtype), _FORMATS[dtype][2]))

    body = tirx.stmt_functor.ir_transform(func.body, None, rewrite, ["ir.FloatImm"])
    if not changed:
        return func
    return func.with_body(tirx.AttrStmt(0, "pragma_import_c", tirx.StringImm(PRELUDE), body))


def patch_device_codegen() -> None:
    """Make TileLang's last step before device code generation (``_prepare_device_codegen_mod``,
    after which nothing folds) rewrite the C target's inexactly printed float constants, those
    the lowering folded included; installed once."""
    import importlib

    lower_module = importlib.import_module("tilelang.engine.lower")  # the package exports a function `lower`
    if getattr(lower_module, "_cuda2tile_literals", False):
        return
    original = lower_module._prepare_device_codegen_mod

    def prepare(device_mod):
        return _exact_module(original(device_mod))

    lower_module._prepare_device_codegen_mod = prepare
    lower_module._cuda2tile_literals = True


def _exact_module(mod):
    """``mod`` with :func:`exact_float_literals` applied to its functions for the C target."""
    from tvm import tirx

    for gv, func in list(mod.functions.items()):
        target = func.attrs.get("target") if isinstance(func, tirx.PrimFunc) and func.attrs else None
        if target is not None and target.kind.name == "c":
            exact = exact_float_literals(func)
            if exact is not func:
                mod.update_func(gv, exact)
    return mod
