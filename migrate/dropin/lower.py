"""A migrated kernel lowered by TileLang to CUDA for one launch geometry, with the host launcher
TileLang writes for it (``tilelang.jit.adapter.wrapper.TLWrapper``: its ``init`` sets the dynamic
shared memory, its ``call`` launches the kernel with the grid the lowering computed), every entry
point renamed per variant so that several kernels and variants link into one program.

The ``call`` takes the kernel's TileLang parameters in order: buffers as device pointers, scalars
in the dtype the TileLang kernel takes them, then the dynamic symbols its buffers' shapes name
(``keys_len``), then the stream. :class:`Variant` says, per parameter, where its value comes from
in the CUDA kernel's arguments, so :mod:`.shim` can write the call.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

#: TileLang dtypes -> the C type a shim passes for a scalar of that dtype (declared ``extern "C"``:
#: the variant's own spelling, ``half_t`` for instance, is not visible to the program's units)
SCALAR_C_TYPES = {
    "float32": "float", "float64": "double", "int64": "int64_t", "uint64": "uint64_t",
    "int32": "int", "uint32": "unsigned int", "int16": "int16_t", "uint16": "uint16_t",
    "int8": "int8_t", "uint8": "uint8_t", "bool": "int8_t",
}

#: the names TileLang's host wrapper exports, renamed per variant
_EXPORTS = ("init", "call", "get_last_error")


class VariantError(Exception):
    """This kernel cannot be built for this geometry as a drop-in variant (the reason says why)."""


@dataclass
class CallParam:
    """One parameter of a variant's ``call``: ``kind`` buffer | scalar | symbol | extent.
    ``source``: the CUDA parameter (buffer, scalar), the ``__constant__``/``__device__`` symbol's
    C++ name (symbol); for an extent, the buffer it measures and the scalar dimensions it is
    divided by (``rows = elements / (n * m)``)."""

    name: str
    kind: str
    c_type: str
    source: str = ""
    elem_bytes: int = 0
    divisors: tuple = ()


@dataclass
class Variant:
    kernel: str
    prefix: str  # c2t_<kernel>_v<i>: the variant's entry points are <prefix>_init and <prefix>_call
    grid: tuple
    block: tuple
    shared_bytes: int
    code: str  # the .cu file: TileLang's lowered kernel and its host launcher, renamed
    params: list = field(default_factory=list)  # CallParam per argument of <prefix>_call, before the stream


def _byte_read(param: str, c_type: str, offset: int) -> str:
    """The C++ reading a ``c_type`` at byte ``offset`` of the by-value argument ``param``."""
    return f"(*(const {c_type}*)((const char*)&({param}) + {int(offset)}))"


def _flat_params(sig, cuda_names=None) -> list:
    """(name, kind, dtype, the C++ giving its value from the CUDA arguments) per TileLang
    parameter before the symbols: a struct passed by value is its lanes' or members' values, read
    at their byte offsets in the argument. Refuses what a shim cannot pass from the CUDA arguments
    as they are (a template kernel, a pointer to a struct of buffers, a struct taken as its bytes)."""
    if sig.template or sig.instances:
        raise VariantError("a kernel template: its instances are not built as drop-in variants yet")
    if cuda_names is not None and len(cuda_names) != len(sig.params):
        raise VariantError(f"the CUDA kernel has {len(cuda_names)} parameters, its signature {len(sig.params)}")
    out = []
    for i, (name, kind, dtype) in enumerate(sig.params):
        cuda = cuda_names[i] if cuda_names is not None else name
        if kind in ("buffer", "scalar"):
            out.append((cuda, kind, dtype, cuda))
        elif kind == "lanes":
            for lane, lane_dtype, offset in dtype:
                if lane_dtype not in SCALAR_C_TYPES:
                    raise VariantError(f"lane '{lane}' of '{name}' is {lane_dtype}: not passed to a drop-in variant yet")
                out.append((lane, "scalar", lane_dtype, _byte_read(cuda, SCALAR_C_TYPES[lane_dtype], offset)))
        elif kind == "members":
            for member, member_kind, member_dtype, offset in dtype:
                if member_kind == "buffer":
                    out.append((member, "buffer", member_dtype, _byte_read(cuda, "void*", offset)))
                elif member_dtype in SCALAR_C_TYPES:
                    out.append((member, "scalar", member_dtype,
                                _byte_read(cuda, SCALAR_C_TYPES[member_dtype], offset)))
                else:
                    raise VariantError(f"member '{member}' of '{name}' is {member_dtype}: not passed to a drop-in "
                                       "variant yet")
        else:
            raise VariantError(f"parameter '{name}' is a struct ({kind}): not passed to a drop-in variant yet")
    return out


def rename(code: str, names: dict) -> str:
    """``code`` with each whole-word name in ``names`` replaced."""
    if not names:
        return code
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True)) + r")\b")
    return pattern.sub(lambda m: names[m.group(1)], code)


def _without_early_launch(code: str) -> str:
    """TileLang's launcher lets a kernel start before the one before it in the stream has flushed
    its memory (programmatic stream serialization), for kernels that wait for it themselves
    (``griddepcontrol.wait``). A migrated kernel launched after an original one does not wait:
    it is launched as ``<<<...>>>`` launches it, after its predecessor."""
    if "griddepcontrol" in code or "cudaGridDependencySynchronize" in code:
        return code
    return code.replace("config.numAttrs = 1;", "config.numAttrs = 0;")


def lower_variant(sig, kernel: str, prefix: str, grid, block, shared_bytes: int = 0, arch: str = "sm_90a",
                  cuda_names=None) -> Variant:
    """``sig`` lowered for ``arch`` at one launch geometry, as :func:`runtime.tilelang_support.compile_kernel`
    builds it for a GPU (its pass options and the runtime's pass fixes), wrapped by TileLang's host
    launcher and renamed under ``prefix``. ``cuda_names``: the CUDA kernel's parameter names in
    order (the signature's are Python's: ``in`` is ``in_``). :class:`VariantError` when it cannot be."""
    import tilelang
    import tvm
    from tilelang.jit.adapter.wrapper import TLWrapper

    from migrate.runtime import tilelang_support as ts

    flat = _flat_params(sig, cuda_names)
    grid, block = ts.dims(grid), ts.dims(block)
    ts.patch_passes()
    try:
        func, configs = ts.prim_func(sig, grid, block, int(shared_bytes), None, "cuda")
    except (AssertionError, ts.LaunchError) as exc:  # the factory refuses this geometry
        raise VariantError(f"the factory refuses grid {grid}, block {block}: {exc}") from exc
    func = func.with_attr("cuda2tile_pass_fixes", ts.PASS_FIXES)
    target = tvm.target.Target({"kind": "cuda", "arch": arch})
    with tvm.transform.PassContext(config=configs), target:
        artifact = tilelang.lower(func, target=target)
    wrapper = TLWrapper(target)
    wrapper.assign_optimized_module(tvm.IRModule({func.attrs["global_symbol"]: func}))
    wrapper.assign_pass_configs(configs)
    wrapper.assign_host_module(artifact.host_mod)
    wrapper.assign_device_module(artifact.device_mod)
    code = wrapper.wrap(artifact.kernel_source)

    params = _call_params(func, flat, sig)
    names = {n: f"{prefix}_{n}" for n in _EXPORTS}
    for gv in artifact.device_mod.functions:
        names[gv.name_hint] = f"{prefix}_{gv.name_hint}"
    code = rename(code, names)
    code = _without_early_launch(code)
    header = (f"// cuda2tile: kernel {kernel} (form {sig.form}) lowered by TileLang for {arch}, "
              f"grid {grid}, block {block}, shared bytes {int(shared_bytes)}\n")
    return Variant(kernel, prefix, grid, block, int(shared_bytes), header + code, params)


def _call_params(func, flat: list, sig) -> list:
    """The :class:`CallParam` of each argument TileLang's ``call`` takes (see the module doc)."""
    from tvm import tirx

    from migrate import dtypes

    n_sym = len(sig.symbols)
    if len(func.params) != len(flat) + n_sym:
        raise VariantError(f"the TileLang kernel takes {len(func.params)} parameters, the CUDA one "
                           f"{len(flat)} and {n_sym} symbols")
    out, scalars = [], {}
    spellings = dict(sig.spellings)
    for i, param in enumerate(func.params):
        if i < len(flat):
            name, kind, _dtype, value = flat[i]
        else:
            name, kind = sig.symbols[i - len(flat)][0], "symbol"
            value = name
        if param in func.buffer_map:
            buf = func.buffer_map[param]
            dtype = str(buf.dtype)
            if kind == "scalar":
                raise VariantError(f"parameter '{name}' is a scalar in CUDA and a buffer in TileLang")
            source = spellings.get(name, name) if kind == "symbol" else value
            if kind == "symbol" and not re.fullmatch(r"[A-Za-z_]\w*", source):
                raise VariantError(f"symbol '{name}' is spelled {source!r}: not addressable by name yet")
            out.append(CallParam(buf.data.name, kind, "void*", source, dtypes.SIZES.get(dtype, 0)))
        else:
            dtype = str(param.dtype)
            if dtype not in SCALAR_C_TYPES:
                raise VariantError(f"scalar parameter '{name}' is {dtype}: not passed to a drop-in variant yet")
            out.append(CallParam(param.name, "scalar", SCALAR_C_TYPES[dtype], value))
            scalars[param.name] = value
    # the dynamic symbols, in the order TileLang's wrapper appends them (shapes, then strides)
    seen = {p.name for p in out}
    for kind_attr in ("shape", "strides"):
        for param in func.params:
            if param not in func.buffer_map:
                continue
            buf = func.buffer_map[param]
            dims = list(getattr(buf, kind_attr))
            for pos, dim in enumerate(dims):
                if not isinstance(dim, tirx.Var) or dim.name in seen:
                    continue
                seen.add(dim.name)
                if kind_attr != "shape":
                    raise VariantError(f"buffer '{buf.name}' has a dynamic stride {dim.name}")
                divisors = []
                for other_pos, other in enumerate(dims):
                    if other_pos == pos:
                        continue
                    if isinstance(other, tirx.IntImm):
                        divisors.append(str(int(other)))
                    elif isinstance(other, tirx.Var) and other.name in scalars:
                        divisors.append(f"({scalars[other.name]})")
                    else:
                        raise VariantError(f"extent {dim.name} of buffer '{buf.name}' is not derivable at run time")
                source = next(p.source for p in out if p.name == buf.data.name)
                elem = dtypes.SIZES.get(str(buf.dtype), 0)
                out.append(CallParam(dim.name, "extent", SCALAR_C_TYPES.get(str(dim.dtype), "int"), source, elem,
                                     tuple(divisors)))
    return out
