"""What an emitted TileLang module needs at run time: compile a kernel factory for a launch
configuration and call it with the CUDA kernel's arguments.

Emitted modules describe each kernel with a :class:`Signature` and launch it through
:func:`launch`, which mirrors ``kernel<<<grid, block, shared_bytes>>>(args...)``: pointers are
passed as tensors (torch or numpy, any shape, contiguous; they are viewed flat, or as the
row-major array a tile-form kernel indexes, ``Signature.shapes``), scalars as
Python numbers, template arguments as the C++ text of the instance (``("float", "256")``). A
vector or struct the CUDA kernel takes by value (a ``"lanes"`` parameter: the kernel takes each
of its lanes) is passed as its lanes' values in order, a dict by lane name, or its bytes; a
struct holding pointers (a ``"members"`` parameter) as its members in order or a dict of them; one
too large for a parameter per member (a ``"struct"`` parameter) as its bytes; a pointer to a
struct of buffers (a ``"fields"`` parameter) as its buffers, by field, as attributes or in order.
Compiled kernels are cached per configuration in memory and, by TileLang, on disk.

A signature may name scalar parameters to *specialise* (``Signature.specialize``, a GEMM's M, N
and K): on GPUs the launcher compiles the kernel for their values, which become constants in
the TileLang (``PrimFunc.specialize``) and leave the call; the factory is told the values
(``static_sizes``) so that it can pick copies and tiles that need static shapes (TMA,
warpgroup MMA). One kernel is compiled, and cached, per distinct set of values; where
``Signature.specialize_when`` rejects the values (rows TMA cannot copy), the kernel compiled for
run-time sizes runs instead.

This module imports neither libclang nor the frontend.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Callable

from .. import dtypes as _dtypes

#: C spellings of template type arguments -> TileLang dtype strings (a view of migrate.dtypes).
C_TYPE_DTYPES = _dtypes.TEMPLATE_SPELLINGS

CPU_PASS_CONFIGS = {"tirx.disable_vectorize": True}

#: TileLang passes this module corrects (:func:`_patch_nested_guards`), marked on every compiled function
PASS_FIXES = "decouple_type_cast.nested_guards,else,scalar_store;c_literals.folded;negative_index.kept;unsigned_select"


def _patch_cpu_wrapper() -> None:
    """TileLang 0.1.15's CPU host wrapper has no C spelling for uint32 (its CUDA wrapper has):
    kernels with ``unsigned int`` parameters fail with "Unsupported dtype uint32" on the ``c``
    target. Add the missing entry. It also spells bool ``bool`` where the kernel it calls takes
    bool buffers as ``int8_t*`` (g++: "cannot convert 'bool*' to 'int8_t*'"); spell it
    ``int8_t`` as TileLang's CUDA wrapper does (a bool scalar converts either way)."""
    from tilelang.jit.adapter import wrapper

    wrapper.TLCPUSourceWrapper._TYPE_MAP.setdefault("uint32", "uint32_t")
    wrapper.TLCPUSourceWrapper._TYPE_MAP["bool"] = "int8_t"
    _patch_cpu_symbols(wrapper.TLCPUSourceWrapper)
    _patch_cpu_view_names(wrapper.TLCPUSourceWrapper)


def _patch_cpu_view_names(cls) -> None:
    """A view of a buffer parameter's memory as another dtype (``buf = T.decl_buffer(..., data=
    ptr.data)``) names the parameter's data pointer after the view (TVMScript names a declared
    buffer's data var after it): the kernel the C target writes takes ``ptr_uint64``, where
    TileLang 0.1.15's CPU host wrapper looks for the parameter's buffer name ``ptr`` and, finding
    none, leaves the argument out of its call ("too few arguments to function"). Its CUDA
    wrapper names arguments by the data var. Find the arguments under their buffers' names."""
    if getattr(cls, "_cuda2tile_view_names", False):
        return
    original = cls.create_call_func

    def create_call_func(self, code, function_informations):
        f = self.prim_func
        renamed = {b.data.name: b.name for p in f.params if p in f.buffer_map
                   for b in [f.buffer_map[p]] if b.data.name != b.name}
        if renamed:  # the code is read only for the kernels' declarations: the source stays as it is
            code = re.sub(r"\b(" + "|".join(map(re.escape, renamed)) + r")\b", lambda x: renamed[x.group(1)], code)
        return original(self, code, function_informations)

    cls.create_call_func = create_call_func
    cls._cuda2tile_view_names = True


def _patch_cpu_symbols(cls) -> None:
    """A buffer shaped by scalar parameters (``A: T.Tensor((M, K), ...)`` with ``M``, ``K``
    parameters too) makes TileLang 0.1.15's CPU host wrapper declare ``M`` and ``K`` twice: once as
    parameters, once as symbols read from the shapes (its CUDA wrapper and the Python adapter
    leave parameters out of the symbols). Leave them out here too."""
    if getattr(cls, "_cuda2tile_symbols", False):
        return
    original = cls.get_dynamic_symbolic_set

    def get_dynamic_symbolic_set(self, prim_func):
        params = {p.name for p in prim_func.params if p not in prim_func.buffer_map}
        return [(name, dtype) for name, dtype in original(self, prim_func) if name not in params]

    cls.get_dynamic_symbolic_set = get_dynamic_symbolic_set
    cls._cuda2tile_symbols = True


def _patch_nested_guards() -> None:
    """TileLang 0.1.15's DecoupleTypeCast pass (a vectorised loop whose body casts between dtypes
    gets staging buffers: copy in, compute, copy out) guards its copies with the condition of the
    body's outermost ``if`` only. A body guarded twice (a lifted map's last tile: ``if gx <
    extent_x:`` around the kernel's own ``if i < n2:``) then loads and stores every element the
    outer guard admits, past the inner one: the copy-out writes garbage past the end of the buffer.
    Seen on a ``__half2`` map with a tile that is not a multiple of the domain (C target, where
    half arithmetic casts through double). Guard the copies with every nested condition.

    A body whose root, inside those guards, is an ``if`` with an ``else`` stores in one branch or
    the other, never both: the pass's copies out stored both branches' staging buffers at every
    element, garbage where a branch did not run (a real bit-packing kernel's ``if (tid < 128)
    lo[..] = ..; else hi[..] = ..;`` with a cast in one branch). Such a body is left as it is, as
    the pass leaves a body of several statements."""
    from tilelang.transform import decouple_type_cast as pass_module

    if getattr(pass_module, "_cuda2tile_nested", False):
        return
    from tvm import tirx

    def extract_if_condition(stmt):
        condition = None
        while isinstance(stmt, tirx.IfThenElse) and stmt.else_case is None:
            condition = stmt.condition if condition is None else tirx.And(condition, stmt.condition)
            stmt = stmt.then_case
        if isinstance(stmt, tirx.IfThenElse):  # stores in one branch or the other: not decoupled
            return condition, tirx.Evaluate(0)
        return condition, stmt

    pass_module.extract_if_condition = extract_if_condition
    pass_module._cuda2tile_nested = True
    _patch_scalar_stores(pass_module)


def _patch_scalar_stores(pass_module) -> None:
    """The same pass stages a vectorised loop's stores in a local buffer but reads through it only
    where a load's index follows the loop: a store to one element, ``res[0] = min(res[0], (int64)
    v)`` (what ``T.atomic_min`` on a 64-bit value becomes on the C target), read ``res[0]`` from the
    staging buffer before anything was copied into it (atomicCAS's ``atomic_min`` gave garbage). A
    loop that stores to an element its variable does not index is left as it is."""
    original = pass_module.MemoryAccessCollector

    class MemoryAccessCollector:
        def __init__(self, loop_var):
            self._inner = original(loop_var)
            self.loop_var = loop_var

        def visit_stmt(self, stmt):
            self._inner.visit_stmt(stmt)
            stores, loads = self._inner.stores, self._inner.loads
            if any(not any(pass_module._expr_depends_on_var(i, self.loop_var) for i in st.indices)
                   for st in stores):
                stores, loads = [], []  # nothing staged: the loop stays as it is
            self.stores, self.loads = stores, loads

    pass_module.MemoryAccessCollector = MemoryAccessCollector


def _marked(func) -> bool:
    """Whether ``func`` is a migrated kernel the runtime builds (marked ``cuda2tile_pass_fixes``)."""
    return getattr(func, "attrs", None) is not None and "cuda2tile_pass_fixes" in func.attrs


def _patch_negative_index() -> None:
    """TileLang 0.1.15's LegalizeNegativeIndex reads an index its analyzer proves negative as
    Python's ``a[-k]`` (the buffer's extent added). A migrated kernel's index is C's: a negative one
    is a defect, never a count from the end. And the proof is not sound after a ``while`` loop
    left by ``break``: log2's ``output[r * n + i]`` after a device function's loops became
    ``output[output_len + r * n + i]`` (an illegal address on the H100). The pass is skipped for
    the kernels the runtime builds (marked ``cuda2tile_pass_fixes``); others keep it."""
    import tilelang.transform as tl_transform

    if getattr(tl_transform, "_cuda2tile_negative_index", False):
        return
    import tvm

    original = tl_transform.LegalizeNegativeIndex

    def LegalizeNegativeIndex():  # noqa: N802 - TileLang's name
        inner = original()

        def apply(mod, _ctx):
            migrated = any(_marked(f) for f in mod.functions.values())
            return mod if migrated else inner(mod)
        return tvm.transform.module_pass(apply, opt_level=0, name="tl.LegalizeNegativeIndex")

    tl_transform.LegalizeNegativeIndex = LegalizeNegativeIndex
    tl_transform._cuda2tile_negative_index = True


_PURE_CALLS = re.compile(r"(exp|exp2|exp10|log|log2|log10|sqrt|rsqrt|fabs|floor|ceil|trunc|round|nearbyint|"
                         r"sin|cos|tan|tanh|sinh|cosh|asin|acos|atan|atan2|pow|fmod|copysign|isnan|isinf|isfinite|"
                         r"popcount|clz|shift_left|shift_right|bitwise_and|bitwise_or|bitwise_xor|bitwise_not|"
                         r"if_then_else|reinterpret)$")


def _unsigned_selects(func):
    """``func`` with each ``if_then_else`` whose condition reads an unsigned value and whose arms
    load, divide and call nothing made a ``Select`` (see :func:`_patch_unsigned_selects`)."""
    from tvm import tirx

    def pure(expr) -> bool:
        ok = [True]

        def visit(node):
            if isinstance(node, (tirx.BufferLoad, tirx.Div, tirx.Mod, tirx.FloorDiv, tirx.FloorMod)):
                ok[0] = False
            elif isinstance(node, tirx.Call) and not _PURE_CALLS.match(str(getattr(node.op, "name", "")).split(".")[-1]):
                ok[0] = False
        tirx.stmt_functor.post_order_visit(expr, visit)
        return ok[0]

    def unsigned(expr) -> bool:
        found = [False]

        def visit(node):
            if isinstance(node, tirx.PrimExpr) and str(node.dtype).startswith("uint"):
                found[0] = True
        tirx.stmt_functor.post_order_visit(expr, visit)
        return found[0]

    def rewrite(node):
        if (isinstance(node, tirx.Call) and str(getattr(node.op, "name", "")).endswith(".if_then_else")
                and unsigned(node.args[0]) and pure(node.args[1]) and pure(node.args[2])):
            return tirx.Select(*node.args)
        return None

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, rewrite, ["tirx.Call"]))


def _unsigned_equalities(func):
    """``func`` with each ``if`` statement's test of an unsigned value against a constant
    (``prev == 0xffffffffu``, ``!=`` too, inside ``&&``/``||``; or against a variable, which may hold
    the constant bound once) written ``(prev ^ C) == 0``: the same
    truth (``a == C`` exactly where ``a ^ C`` is 0), which the region detector does not solve (see
    :func:`_patch_unsigned_selects`)."""
    from tvm import tirx

    def compare(node):
        # the other side a nonzero constant, or a variable (which may hold the constant: kernels
        # keep their binds, emit.signature.KEEP_BINDS); the side that is no constant first
        for a, c in ((node.a, node.b), (node.b, node.a)):
            if str(c.dtype).startswith("uint") and not isinstance(a, tirx.IntImm) \
                    and (isinstance(c, tirx.IntImm) and c.value != 0 or isinstance(c, tirx.Var)):
                return type(node)(tirx.bitwise_xor(a, c), tirx.const(0, c.dtype))
        return None

    def rewrite(node):
        if isinstance(node, tirx.IfThenElse):
            # (the transform walks statements: the test is carried in one)
            cond = tirx.stmt_functor.ir_transform(tirx.Evaluate(node.condition), None, compare,
                                                  ["tirx.EQ", "tirx.NE"]).value
            if not cond.same_as(node.condition):
                return tirx.IfThenElse(cond, node.then_case, node.else_case)
        return None

    return func.with_body(tirx.stmt_functor.ir_transform(func.body, None, rewrite, ["tirx.IfThenElse"]))


def _patch_unsigned_selects() -> None:
    """TVM's read/write-region detector (run by TileLang's PlanAndUpdateBufferAllocationLocation
    on every block) solves an ``if_then_else``'s condition as inequalities; where the condition
    reads an unsigned value it builds the constant -1 in that type and stops the build ("cannot
    make uint from negative value -1": kiss's ``!seed ? 0xffffffffu : seed`` on a ``uint64``
    variable in a lifted map, on the GPU and the C target alike). Such an ``if_then_else`` whose
    arms load, divide and call nothing is the same value as a ``Select`` (C's ``?:`` evaluates one
    arm; arms without effects or traps lose nothing by both being evaluated), which the detector
    does not solve: the migrated kernels (marked ``cuda2tile_pass_fixes``) get it before the pass.
    An ``if`` statement's test of an unsigned value against a constant stops it the same way when
    the detector solves it for a store under it (a hash table's ``if (prev == EMPTY_KEY<uint32,
    uint32>) ht_values[loc] = v;`` after an ``atomicCAS``: "Literal value -4294967295 is negative
    for unsigned integer type uint32"): such a test is written ``(prev ^ C) == 0``, the same
    truth, which the detector does not solve."""
    import tilelang.transform as tl_transform

    if getattr(tl_transform, "_cuda2tile_unsigned_select", False):
        return
    import tvm

    original = tl_transform.PlanAndUpdateBufferAllocationLocation

    def PlanAndUpdateBufferAllocationLocation():  # noqa: N802 - TileLang's name
        inner = original()

        def apply(mod, _ctx):
            updates = {gv: _unsigned_equalities(_unsigned_selects(f)) for gv, f in mod.functions.items()
                       if _marked(f)}
            for gv, f in updates.items():
                mod[gv] = f
            return inner(mod)
        return tvm.transform.module_pass(apply, opt_level=0, name="tl.PlanAndUpdateBufferAllocationLocation")

    tl_transform.PlanAndUpdateBufferAllocationLocation = PlanAndUpdateBufferAllocationLocation
    tl_transform._cuda2tile_unsigned_select = True


def patch_passes() -> None:
    """TileLang's passes as the runtime builds migrated kernels with them (each patch once; the
    kernels carry the ``cuda2tile_pass_fixes`` mark): what :func:`compile_kernel` and every
    lowering outside it (bench/lower_pool.py, the tests' ``lower_sm90``) apply."""
    _patch_nested_guards()
    _patch_negative_index()
    _patch_unsigned_selects()


class LaunchError(Exception):
    """The arguments do not fit the kernel (count, dtype, dimensions)."""


@dataclass(frozen=True)
class Signature:
    name: str
    factory: Callable
    # (name, "buffer" | "scalar", dtype or template parameter name); (name, "lanes", lanes) for a
    # struct passed by value, (name, "fields", ((buffer, dtype, field, byte), ...)) for a struct of buffers,
    # (name, "members", ((member, "buffer" | "scalar", dtype, byte), ...)) for a struct holding
    # pointers passed by value, (name, "struct", dtype) for one taken as its bytes
    params: tuple
    template: tuple = ()  # (name, "type" | "value")
    symbols: tuple = ()  # (name, dtype, elements) of __constant__ arrays passed after the params
    form: str = "portable"
    source: str = ""
    pass_configs: tuple = ()  # (key, value) TileLang pass options the kernel is compiled with
    gpu_pass_configs: tuple = ()  # (key, value) pass options added where it is compiled for a GPU
    tune: dict | None = None  # tile form: factory keyword -> candidate values for autotuning
    # tile form: (buffer, (extent, ...)) for buffers the kernel takes as row-major arrays; each
    # extent names the scalar parameter that gives it, None the whole rows the buffer holds
    shapes: tuple = ()
    specialize: tuple = ()  # scalar parameters compiled as constants on GPUs (see the module doc)
    specialize_when: Callable | None = None  # sizes dict -> whether to specialise (e.g. TMA alignment)
    static_pass_configs: tuple = ()  # the pass options of a specialised compilation
    # (name, initial values) of the symbols that are __device__ globals: the launcher keeps them
    # between launches (one tensor per module and device) unless symbols={...} passes them
    state: tuple = ()
    #: (value parameter of an enum type, ((constant as a compiler spells it, value), ...)), ...
    enums: tuple = ()
    #: ((symbol, the C++ that names it), ...): symbols whose names are not C++ (a variable
    #: template's specialisation ``mask<double>``, the symbol ``mask_double``)
    spellings: tuple = ()
    #: a kernel template converted per instance (its body means something only per instance: an
    #: overload each instance's types choose, a functor type argument): ((the instance's factory
    #: values, its arguments as written, its own Signature), ...); a launch runs the instance its
    #: template arguments name (:func:`instance_signature`)
    instances: tuple = ()
    #: the hybrid form (a kernel kept as its CUDA, ``migrate.emit.hybrid``): each scalar's
    #: (parameter, byte offset, size) in the bytes its CUDA entry reads
    hybrid: tuple = ()


def lane_values(name: str, lanes, value) -> list:
    """The lane values of a struct passed by value (``lanes``: its (lane parameter, dtype, byte
    offset), as a signature gives them) from ``value``: the values in order (a tuple or list), a
    dict by lane parameter name (``p_width``) or by field (``width``), or the struct's bytes."""
    import numpy as np

    if isinstance(value, np.void):
        value = value.tobytes()
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        need = max((offset + _dtypes.SIZES[dtype] for _n, dtype, offset in lanes), default=0)
        if len(raw) < need:
            raise LaunchError(f"argument '{name}' has {len(raw)} bytes; its lanes need {need}")
        out = []
        for _n, dtype, offset in lanes:
            if dtype == "bfloat16":  # the upper half of a float32
                bits = int(np.frombuffer(raw, np.uint16, 1, offset)[0]) << 16
                out.append(np.array([bits], np.uint32).view(np.float32)[0].item())
            else:
                out.append(np.frombuffer(raw, np.dtype(_dtypes.NUMPY_HOLDERS[dtype]), 1, offset)[0].item())
        return out
    if isinstance(value, dict):
        out = []
        for lane, _dtype, _offset in lanes:
            field = lane.removeprefix(f"{name}_")
            if lane not in value and field not in value:
                raise LaunchError(f"argument '{name}' gives no value for its lane '{field}'")
            out.append(value[lane] if lane in value else value[field])
        return out
    if isinstance(value, (tuple, list)) and len(value) == len(lanes):
        return list(value)
    raise LaunchError(f"argument '{name}' is a struct passed by value: pass its {len(lanes)} lane values "
                      f"({', '.join(n for n, _d, _o in lanes)}), a dict of them, or its bytes")


def field_buffers(name: str, fields, value) -> list:
    """The buffers of a struct of buffers passed by pointer (``fields``: its (buffer parameter,
    dtype, field, byte offset), as a signature gives them) from ``value``: a dict by field
    (``means``) or by parameter (``clusters_means``), an object with the fields as attributes, or
    the buffers in order (a tuple or list)."""
    if isinstance(value, dict):
        out = []
        for param, _dtype, field, _offset in fields:
            if field not in value and param not in value:
                raise LaunchError(f"argument '{name}' gives no buffer for its field '{field}'")
            out.append(value[field] if field in value else value[param])
        return out
    if isinstance(value, (tuple, list)) and len(value) == len(fields):
        return list(value)
    if value is not None and all(hasattr(value, field) for _p, _d, field, _o in fields):
        return [getattr(value, field) for _p, _d, field, _o in fields]
    raise LaunchError(f"argument '{name}' is a struct of buffers: pass its {len(fields)} buffers "
                      f"({', '.join(f for _p, _d, f, _o in fields)}) as a dict, an object with those "
                      "attributes, or a tuple in that order")


def member_values(name: str, fields, value) -> list:
    """The member values of a struct holding pointers passed by value (``fields``: its (member
    parameter, "buffer" | "scalar", dtype, byte offset), as a ``"members"`` parameter gives them) from
    ``value``: the values in order (a tuple or list: tensors for the pointers), or a dict by
    field parameter name (``g_x``), by field (``x``) or by its path (``u.u0`` for ``d_vars_u_u0``).
    Its bytes do not do: they hold the CUDA program's addresses, no tensors."""
    if isinstance(value, dict):
        out = []
        for param, _kind, _dtype, _offset in fields:
            field = param.removeprefix(f"{name}_")
            keys = [k for k in (param, field) if k in value] or \
                [k for k in value if isinstance(k, str) and k.replace(".", "_") == field]
            if not keys:
                raise LaunchError(f"argument '{name}' gives no value for its field '{field}'")
            out.append(value[keys[0]])
        return out
    if isinstance(value, (tuple, list)) and len(value) == len(fields):
        return list(value)
    raise LaunchError(f"argument '{name}' is a struct holding pointers, passed by value: pass its {len(fields)} "
                      f"fields ({', '.join(f for f, _k, _d, _o in fields)}, tensors for the pointers) in order "
                      "or as a dict")


def struct_words(name: str, dtype: str, value):
    """The buffer a kernel takes for a struct passed by value that is too large for a parameter
    per field (a ``"struct"`` parameter): ``value``, the struct's bytes (bytes, a numpy record or
    array, ctypes structure) viewed as ``dtype`` words; a tensor is taken as it is."""
    import ctypes

    import numpy as np
    import torch

    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, ctypes.Structure):
        value = bytes(value)
    if isinstance(value, np.ndarray):
        value = value.tobytes()
    if isinstance(value, np.void):
        value = value.tobytes()
    if not isinstance(value, (bytes, bytearray, memoryview)):
        raise LaunchError(f"argument '{name}' is a struct passed by value: pass its bytes (or a tensor of its "
                          f"{dtype} words)")
    holder = np.dtype(_dtypes.NUMPY_HOLDERS[dtype])
    raw = bytes(value)
    if len(raw) % holder.itemsize:
        raise LaunchError(f"argument '{name}' has {len(raw)} bytes, not whole {dtype} words")
    return np.frombuffer(raw, holder).copy()


def _params(sig: Signature) -> list:
    """(name, kind, dtype) per parameter the TileLang kernel takes, before the symbols: a struct
    passed by value is its lanes' or members' parameters, a struct of buffers its buffers'."""
    out = []
    for name, kind, dtype in sig.params:
        if kind == "lanes":
            out += [(lane, "scalar", d) for lane, d, _o in dtype]
        elif kind == "members":
            out += [(field, k, d) for field, k, d, _o in dtype]
        elif kind == "fields":
            out += [(param, "buffer", d) for param, d, _f, _o in dtype]
        else:
            out.append((name, "buffer" if kind == "struct" else kind, dtype))
    return out


def _flat(sig: Signature, args) -> list:
    """(name, kind, value) per parameter the TileLang kernel takes, for the CUDA arguments
    ``args``: a struct passed by value is one scalar per lane, or one parameter per field."""
    import torch

    out = []
    for (name, kind, dtype), value in zip(sig.params, args):
        if kind == "lanes":
            out += [(lane, "scalar", v) for (lane, _d, _o), v in zip(dtype, lane_values(name, dtype, value))]
        elif kind == "fields":
            out += [(param, "buffer", v) for (param, _d, _f, _o), v in zip(dtype, field_buffers(name, dtype, value))]
        elif kind == "members":
            out += [(field, k, v.item() if k == "scalar" and isinstance(v, torch.Tensor) else v)
                    for (field, k, _d, _o), v in zip(dtype, member_values(name, dtype, value))]
        elif kind == "struct":
            out.append((name, "buffer", struct_words(name, dtype, value)))
        else:
            out.append((name, kind, value.item() if kind == "scalar" and isinstance(value, torch.Tensor) else value))
    return out


def static_sizes(sig: Signature, args, target: str) -> dict:
    """The values of ``sig``'s specialised scalar parameters among the CUDA arguments ``args``
    (empty on the CPU target, which gains nothing from them)."""
    if not sig.specialize or target == "c":
        return {}
    values = {name: int(value) for name, kind, value in _flat(sig, args)
              if kind == "scalar" and name in sig.specialize}
    if sig.specialize_when is not None and not sig.specialize_when(values):
        return {}  # one kernel for all sizes, as at run-time sizes
    return values


def without_static(sig: Signature, call: list, sizes: dict) -> list:
    """The call arguments of a kernel compiled for ``sizes``: the specialised scalars removed."""
    if not sizes:
        return call
    names = [name for name, _kind, _dtype in _params(sig)]
    return [value for name, value in zip(names, call) if name not in sizes] + call[len(names):]


#: The GPU a grid-stride reduction fills when its result does not depend on the grid
#: (``migrate.analysis.lift.free_grid``): an NVIDIA H200 (GH100, compute capability 9.0) has 132 SMs,
#: each holding at most 2048 resident threads and 32 resident blocks (CUDA C++ Programming Guide,
#: "Technical Specifications per Compute Capability"; H100 SXM has the same).
FILL_GPU = {"sms": 132, "threads_per_sm": 2048, "blocks_per_sm": 32}


def fill_blocks(block_threads: int, gpu: dict = FILL_GPU) -> int:
    """Blocks of ``block_threads`` threads that fill every SM of ``gpu`` at once: one wave at full
    occupancy, where registers and shared memory allow it."""
    per_sm = min(gpu["blocks_per_sm"], max(1, gpu["threads_per_sm"] // max(1, int(block_threads))))
    return gpu["sms"] * per_sm


#: The fewest elements (threads) :func:`fit_tile` halves a default tile to where its grid is too
#: small to give every SM a block: four warps.
SMALLEST_SPREAD_TILE = 128


def fit_tile(tile, extents, fill: int = 0, gpu: dict = FILL_GPU, fast: int = -1) -> tuple:
    """``tile`` (slowest dimension first) with each size cut to the smallest power of two that
    covers its extent, where the extent is known and smaller: a 1-row domain gets 1-row tiles.

    With ``fill`` (the threads of a block; given for a factory's default tile, not for one asked
    for), the tile is then halved, its slowest dimension longer than one first, while its grid
    would run fewer threads than fill every SM of ``gpu`` (``sms * threads_per_sm``) and it holds
    more elements than ``fill``: a domain too small to give each thread several elements and still
    fill the GPU gets one element per thread, as the CUDA launched it. (s3d's rate kernels map
    13 824 elements at the program's own size: the default tile of 1024 made 14 blocks of 8 warps
    for an H100's 132 SMs, where the CUDA runs 108 blocks of 128 threads.) Where even then its
    blocks are too few for the SMs, it is halved again while twice its blocks still find an SM
    each, down to :data:`SMALLEST_SPREAD_TILE` elements (s3d: 256 -> 128, 108 blocks). Where an extent is not known
    (a grid-stride loop's run-time n) the tile is only fitted. ``fast`` is the dimension whose
    elements are contiguous in memory (the last, unless a map runs y-fastest); it is halved last,
    so that a warp's accesses stay one run. With ``fill``, a fast dimension whose whole extent is
    shorter than its tile is then cut to the extent rounded up to whole warps (32), where the tile's
    elements still split evenly over ``fill`` threads (or fewer, one each)."""
    out = []
    for size, extent in zip(tile, extents):
        size = int(size)
        if extent is not None:
            fit = 1
            while fit < extent:
                fit *= 2
            size = min(size, fit)
        out.append(size)
    if fill and all(e is not None for e in extents):
        want = gpu["sms"] * gpu["threads_per_sm"]

        def blocks(t):
            count = 1
            for size, extent in zip(t, extents):
                count *= -(-int(extent) // size)
            return count

        def running(t):
            return blocks(t) * min(fill, math.prod(t))

        fast_d = fast % len(out)
        order = [i for i in range(len(out)) if i != fast_d] + [fast_d]
        while math.prod(out) > fill and running(out) < want:
            d = next(i for i in order if out[i] > 1)
            out[d] //= 2
        # a tile longer than its contiguous dimension's whole extent (96 columns in a power-of-two
        # tile of 128) is cut to the extent in whole warps, where its elements still split evenly
        # over the block's threads: the columns past the extent would be whole idle warps, each
        # block's on the same SM sub-partitions (warps 3 and 7 of a 2 x 128 tile: clenergy's
        # 768 x 96 map ran 1.19x slower than the CUDA on an H100), and no tile would be full
        extent = int(extents[fast_d])
        cut = -(-extent // 32) * 32
        if cut < out[fast_d]:
            trial = out[:fast_d] + [cut] + out[fast_d + 1:]
            elements = math.prod(trial)
            if elements <= fill or elements % fill == 0:
                out = trial
        # one element a thread and still too few blocks for every SM to hold one: halved while
        # its blocks, doubled, still find an SM each (each SM then holds half the elements it
        # did), down to 128 elements (four warps) a tile. s3d's rate kernels map 13 824 elements:
        # 54 blocks of 256 left 78 of an H100's 132 SMs idle (ratt_kernel 1.14x the CUDA's time,
        # which runs 108 blocks of 128 threads)
        while 2 * blocks(out) <= gpu["sms"] and math.prod(out) // 2 >= SMALLEST_SPREAD_TILE:
            d = next(i for i in order if out[i] > 1)
            out[d] //= 2
    return tuple(out)


def dims(value) -> tuple[int, int, int]:
    """A CUDA dim3 from an int or a sequence of one to three ints."""
    if isinstance(value, int):
        return (value, 1, 1)
    items = tuple(int(v) for v in value)
    if not 1 <= len(items) <= 3:
        raise LaunchError(f"expected 1 to 3 dimensions, got {value!r}")
    return items + (1,) * (3 - len(items))


def template_type_value(text: str) -> str:
    """A type template argument as a factory takes it: its dtype (``float`` -> ``float32``), else
    its C++ spelling with CUDA's aliases resolved and spaces normalised (``half2`` -> ``__half2``,
    ``struct PayoffCall`` -> ``PayoffCall``): a vector or functor type, which only a kernel
    converted per instance takes."""
    text = " ".join(str(text).split())
    for prefix in ("struct ", "class ", "const ", "::"):
        text = text.removeprefix(prefix)
    text = _dtypes.VECTOR_ALIASES.get(text, text)
    return C_TYPE_DTYPES.get(text, text)


def template_kwargs(sig: Signature, args) -> dict:
    if not sig.template:
        return {}
    args = tuple(args or ())
    if len(args) != len(sig.template):
        raise LaunchError(f"{sig.name} takes {len(sig.template)} template arguments, got {args!r}")
    if sig.form == "hybrid":  # a template kept as its CUDA: C++ text, a dtype or a number each
        return {name: value for (name, _kind), value in zip(sig.template, args)}
    out = {}
    for (name, kind), value in zip(sig.template, args):
        if kind == "type":
            text = str(value).strip()
            if sig.instances:  # converted per instance: any type one of them names
                out[name] = template_type_value(text)
                continue
            if text not in C_TYPE_DTYPES and text not in C_TYPE_DTYPES.values():
                raise LaunchError(f"template argument {text!r} of {sig.name} is not a known type")
            out[name] = C_TYPE_DTYPES.get(text, text)
        else:
            constants = dict(dict(sig.enums).get(name, ()))
            text = str(value).strip()
            out[name] = constants[text] if text in constants else template_value(value)
    return out


def instance_signature(sig: Signature, template) -> tuple[Signature, object]:
    """(the signature to launch, its template arguments): for a template converted per instance,
    the Signature of the instance ``template`` names (by its factory values, or its arguments as
    written) and no arguments; any other signature as it is. An instance that was not converted
    is a :class:`LaunchError` naming those that were."""
    if not sig.instances:
        return sig, template
    try:
        values = tuple(template_kwargs(sig, template).values())
    except ValueError:  # a value named as the program writes it (NUM_THREADS): matched as written
        values = None
    written = tuple(" ".join(str(a).split()) for a in template or ())
    for key, args, inst in sig.instances:
        if tuple(key) == values or tuple(args) == written:
            return inst, None
    have = ", ".join(f"<{', '.join(str(a) for a in args)}>" for _k, args, _s in sig.instances)
    raise LaunchError(f"{sig.name}<{', '.join(str(a) for a in template or ())}> is not an instance the "
                      f"migrated module holds (it holds {have}): the CUDA program launches no other")


def instance_factory(name: str, table: dict, key: tuple):
    """The factory of the instance of template ``name`` whose factory values are ``key`` (a type
    by its dtype or C++ spelling, a value by its integer or its text), from the module's table of
    the instances it converted; a :class:`LaunchError` for another."""
    if key in table:
        return table[key]
    norm = []
    for value in key:
        if isinstance(value, str):
            try:
                value = template_value(value)
            except ValueError:
                value = template_type_value(value)
        norm.append(value)
    if tuple(norm) in table:
        return table[tuple(norm)]
    raise LaunchError(f"{name} has no migrated instance for template values {key!r} (it has "
                      f"{', '.join(repr(k) for k in table)})")


def template_value(value) -> int:
    """A template's value argument as a compiler spells it in an instance's name (``64``,
    ``64u``, ``-3l``, ``true``, ``(short int)3``, ``(char)65``): its integer value."""
    text = str(value).strip()
    if text in ("true", "false"):
        return int(text == "true")
    if text.startswith("(") and ")" in text:  # GCC spells a value of a small type with a cast
        text = text[text.index(")") + 1:].strip()
    return int(text.rstrip("uUlL"), 0)


def default_target() -> str:
    try:
        import torch
        if torch.cuda.is_available():
            return "cuda"
    except ImportError:
        pass
    return "c"


_CACHE: dict = {}
#: The order the threads of a migrated portable kernel run in on the C target (runtime/c_schedule.py):
#: "forward", or "reverse" (also for "random": one other order, the reverse, is what the C target has)
_CPU_SCHEDULE = ["forward"]


def set_cpu_schedule(schedule: str) -> None:
    """Run the phases of portable kernels compiled for the ``c`` target from now on in this
    order (``forward``; ``reverse`` or ``random``: last thread first, unsynchronised phases fused)."""
    _CPU_SCHEDULE[0] = "forward" if schedule == "forward" else "reverse"
#: The factory options :func:`runtime.tuning.autotune` found fastest, by launch (:func:`tuned_key`);
#: a kernel compiled without explicit options uses them.
TUNED: dict = {}


def tuned_key(sig: Signature, grid, block, shared_bytes=0, template=None, sizes=None) -> tuple:
    sig, template = instance_signature(sig, template)
    return (sig.factory, dims(grid), dims(block), int(shared_bytes),
            tuple(sorted(template_kwargs(sig, template).items())), tuple(sorted((sizes or {}).items())))


#: the device kernels (TileLang names them ``<prim_func>_kernel``) of portable and simt kernels,
#: which mirror their CUDA kernel thread for thread: their CUDA gets ``__launch_bounds__(threads)``
#: alone, as nvcc compiles a kernel that declares none. TileLang writes ``(threads, 1)``, and told
#: that one block per SM will do, ptxas spends registers freely: amgmk's relax took 80 registers
#: against its original's 32 (a third of the threads resident on a gather-bound loop).
_CUDA_BOUNDS: set[str] = set()
_BOUNDS_RE = re.compile(r"__launch_bounds__\((\d+), 1\)(\s+)(\w+)\(")
_postproc_installed = [False]


def _plain_bounds(sig: Signature) -> bool:
    """Whether ``sig``'s CUDA declares ``__launch_bounds__(threads)`` alone: portable and simt
    kernels; ``C2T_LAUNCH_BOUNDS=plain`` every kernel, ``=tilelang`` none (TileLang's ``(threads,
    1)`` everywhere: the two sides of a timing comparison)."""
    import os

    mode = os.environ.get("C2T_LAUNCH_BOUNDS", "auto")
    return mode == "plain" or (mode != "tilelang" and sig.form in ("portable", "simt"))


def _mirror_cuda_bounds(func, plain: bool) -> None:
    """Have ``func``'s CUDA declare ``__launch_bounds__(threads)`` without a minimum of blocks, or
    (``plain`` false) TileLang's own (a TileLang CUDA post-processing callback, installed once;
    one registered before runs first). The kernel is known by its name: the latest compiled
    under a name decides."""
    name = str(func.attrs["global_symbol"]) + "_kernel"
    if not plain:
        _CUDA_BOUNDS.discard(name)
        return
    _CUDA_BOUNDS.add(name)
    if _postproc_installed[0]:
        return
    import tilelang
    import tvm

    previous = tvm.get_global_func("tilelang_callback_cuda_postproc", allow_missing=True)

    def postproc(code, target):
        if previous is not None:
            code = str(previous(code, target))
        return _BOUNDS_RE.sub(lambda m: f"__launch_bounds__({m[1]}){m[2]}{m[3]}(" if m[3] in _CUDA_BOUNDS else m[0],
                              code)

    tilelang.register_cuda_postproc(postproc)
    _postproc_installed[0] = True


def prim_func(sig: Signature, grid, block, shared_bytes: int = 0, template=None, target: str = "cuda",
              options=None, sizes=None):
    """(``sig``'s ``T.prim_func`` for one launch configuration, the pass options it compiles with):
    the factory called with ``options`` (tile sizes) and, for ``sizes`` (:func:`static_sizes`),
    specialised to those scalar values with the signature's static pass options."""
    from migrate.compat import cuda_math

    sig, template = instance_signature(sig, template)
    side = "c" if target == "c" else "cuda"
    options = dict(options or {})
    if sizes:
        options["static_sizes"] = dict(sizes)
    previous = cuda_math.get_target()
    cuda_math.set_target(side)  # the shim's forms follow the target while the factory parses the kernel
    try:
        func = sig.factory(dims(grid), dims(block), int(shared_bytes), target=side,
                           **template_kwargs(sig, template), **options)
    finally:
        cuda_math.set_target(previous)  # and the module's default is the caller's again
    if side == "cuda":
        _mirror_cuda_bounds(func, _plain_bounds(sig))
    configs = pass_configs(sig, side, bool(sizes))
    if not sizes:
        return func, configs
    params = {p.name: p for p in func.params}
    return func.specialize({params[name]: value for name, value in sizes.items()}), configs


def pass_configs(sig: Signature, side: str, sized: bool) -> dict:
    """The TileLang pass options ``sig`` compiles with on ``side`` ("c" or "cuda"): those of a
    compilation at constant sizes when ``sized``, with the GPU's own added on "cuda"."""
    base = dict(sig.static_pass_configs if sized else sig.pass_configs)
    return {**base, **dict(sig.gpu_pass_configs)} if side == "cuda" else base


def compile_kernel(sig: Signature, grid, block, shared_bytes: int = 0, template=None, target=None,
                   options=None, sizes=None):
    """The compiled TileLang kernel of ``sig`` for one launch configuration (cached).
    ``options`` are extra factory keywords: a tile-form kernel's tile sizes (``sig.tune``); None
    takes those :func:`runtime.tuning.autotune` chose for this launch, if any (``{}``: the
    factory's defaults). ``sizes`` (from :func:`static_sizes`) compiles the kernel for those scalar values; call it
    with :func:`without_static` arguments."""
    import tilelang  # noqa: F401  (before the pass patches import its TVM)

    sig, template = instance_signature(sig, template)
    target = target or default_target()
    grid, block = dims(grid), dims(block)
    kwargs = template_kwargs(sig, template)
    sizes = dict(sizes or {})
    if options is None:
        options = TUNED.get(tuned_key(sig, grid, block, shared_bytes, template, sizes), {})
    options = dict(options)
    schedule = _CPU_SCHEDULE[0] if target == "c" and sig.form == "portable" else "forward"
    key = (sig.factory, grid, block, int(shared_bytes), tuple(sorted(kwargs.items())), str(target), schedule,
           tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items())),
           tuple(sorted(sizes.items())))
    if key not in _CACHE:
        patch_passes()
        func, configs = prim_func(sig, grid, block, shared_bytes, template, target, options, sizes)
        # the patched passes' mark: TileLang's kernel cache keys on the function's text, so that a
        # kernel compiled before the patch (stale in the cache) is not reused
        func = func.with_attr("cuda2tile_pass_fixes", PASS_FIXES)
        if schedule != "forward":
            from .c_schedule import reorder_threads
            func = reorder_threads(func, schedule)
        _CACHE[key] = compile_for(func, target, configs)
    return _CACHE[key]


def compile_for(func, target: str, pass_configs=None):
    """Compile a TileLang ``func`` written for ``target`` with ``pass_configs`` (the migrated
    kernels' :func:`compile_kernel`, and ``migrate onnx``'s modules): on the C target with this
    module's fixes of TileLang's CPU side (the host wrapper's missing dtypes, float constants
    printed exactly: TVM's C code prints 7 digits) and without vectorisation (TileLang's C math)."""
    import tilelang

    if target == "c":
        from .c_literals import patch_device_codegen

        _patch_cpu_wrapper()
        patch_device_codegen()
        return tilelang.compile(func, target="c", pass_configs={**(pass_configs or {}), **CPU_PASS_CONFIGS})
    return tilelang.compile(func, target=target, pass_configs=pass_configs or None)


def _as_tensor(value, name: str, device):
    import numpy as np
    import torch

    if isinstance(value, np.ndarray):
        value = torch.from_numpy(np.ascontiguousarray(value))
    if not isinstance(value, torch.Tensor):
        raise LaunchError(f"argument '{name}' must be a tensor (it is a pointer in CUDA)")
    if not value.is_contiguous():
        raise LaunchError(f"argument '{name}' must be contiguous")
    if device is not None and value.device.type != device:
        value = value.to(device)
    return value.reshape(-1)


def _shaped(tensor, name: str, extents, scalars: dict):
    """The flat ``tensor`` viewed as the row-major array the kernel indexes (its first elements;
    writes go to the caller's tensor)."""
    dims = []
    for e in extents:
        if e is None:
            dims.append(None)
            continue
        value = int(scalars[e])
        if value < 0:
            raise LaunchError(f"argument '{e}' = {value} is an extent of buffer '{name}': it must not be negative")
        dims.append(value)
    row = 1
    for d in dims[1:]:
        row *= d
    if dims[0] is None:
        if row and tensor.numel() % row:
            raise LaunchError(f"argument '{name}' holds {tensor.numel()} elements, not whole rows of {row} "
                              f"({' * '.join(e for e in extents[1:])})")
        dims[0] = tensor.numel() // row if row else 0
    need = dims[0] * row
    if tensor.numel() < need:
        shape = " x ".join(f"{e}={d}" if e else str(d) for e, d in zip(extents, dims))
        raise LaunchError(f"argument '{name}' holds {tensor.numel()} elements; the kernel reads it as a "
                          f"({shape}) array of {need}")
    return tensor[:need].view(*dims)


#: (source file, global, device) -> the tensor holding a __device__ global between launches
_DEVICE_GLOBALS: dict = {}


def device_global(sig: Signature, name: str, dtype: str, elements: int, initial=(), device=None):
    """The tensor that holds the ``__device__`` global ``name`` of ``sig``'s source file on
    ``device`` (None: the CPU), made on first use with its initial values (the rest zero, as C
    starts it) and shared by every kernel of that file, as the GPU shares the global."""
    import torch

    key = (sig.source, name, str(device))
    tensor = _DEVICE_GLOBALS.get(key)
    if tensor is None:
        tensor = torch.zeros(elements, dtype=getattr(torch, dtype), device=device)
        if initial:
            tensor[:len(initial)] = torch.tensor(list(initial), dtype=tensor.dtype)
        _DEVICE_GLOBALS[key] = tensor
    return tensor


def arguments(sig: Signature, args, symbols=None, template=None, device=None) -> list:
    """The TileLang call arguments for the CUDA arguments ``args`` (and ``__constant__`` data)."""
    import torch

    sig, template = instance_signature(sig, template)
    if sig.form == "hybrid":
        return hybrid_arguments(sig, args, device, template, symbols)
    if len(args) != len(sig.params):
        raise LaunchError(f"{sig.name} takes {len(sig.params)} arguments, got {len(args)}")
    kwargs = template_kwargs(sig, template)
    shapes = dict(sig.shapes)
    flat = _flat(sig, args)
    scalars = {name: value for name, kind, value in flat if kind == "scalar"}
    dtypes = {name: dtype for name, kind, dtype in _params(sig) if kind == "buffer"}
    out = []
    for name, kind, value in flat:
        if kind == "buffer":
            want = kwargs.get(dtypes[name], dtypes[name])
            if value is None:  # a null pointer (an optional buffer the kernel tests: mask == nullptr)
                if name in shapes:
                    raise LaunchError(f"argument '{name}' is None: the kernel indexes it as a shaped array")
                out.append(torch.empty(0, dtype=getattr(torch, want), device=device or "cpu"))
                continue
            tensor = _as_tensor(value, name, device)
            if str(tensor.dtype).removeprefix("torch.") != want:
                raise LaunchError(f"argument '{name}' must hold {want}, not {tensor.dtype}")
            out.append(_shaped(tensor, name, shapes[name], scalars) if name in shapes else tensor)
        else:
            out.append(value)
    for name, dtype, elements in sig.symbols:
        out.append(_symbol_values(sig, symbols, name, dtype, elements, device).contiguous())
    return out


def _symbol_values(sig: Signature, symbols, name: str, dtype: str, elements: int, device, exact_dtype: bool = False):
    """The first ``elements`` values of ``__constant__``/``__device__`` symbol ``name``: the
    caller's (``symbols``), else the module's kept ``__device__`` state; ``exact_dtype`` where the
    kernel reads them as bytes (a hybrid kernel's entry)."""
    if not (symbols and name in symbols) and name in dict(sig.state):
        return device_global(sig, name, dtype, elements, dict(sig.state)[name], device)[:elements]
    if not symbols or name not in symbols:
        raise LaunchError(f"{sig.name} reads __constant__ '{name}': pass its {elements} values in symbols={{...}}")
    tensor = _as_tensor(symbols[name], name, device)
    if exact_dtype and str(tensor.dtype).removeprefix("torch.") != dtype or tensor.numel() < elements:
        got = f"{tensor.numel()} of {tensor.dtype}" if exact_dtype else f"{tensor.numel()}"
        raise LaunchError(f"symbol '{name}' needs {elements} values{' of ' + dtype if exact_dtype else ''}, got {got}")
    return tensor[:elements]


# -- the hybrid form: a kernel kept as its CUDA ------------------------------------------------------

#: What the entry of every hybrid kernel uses (``migrate.emit.hybrid``): the type of its body's
#: I-th parameter, and a scalar read from its bytes (copied byte by byte: any offset, any type).
HYBRID_PRELUDE = r"""// cuda2tile hybrid form: TileLang's headers (above) define uint, uchar and ushort as macros, which
// CUDA's own headers and programs use as names (CCCL's tuple interface of uchar4, a program's
// typedef unsigned int uint): the source below sees them as nvcc alone gives them
#undef uint
#undef uchar
#undef ushort
// how an entry reads its kernel's arguments
template <int I, typename... A> struct cuda2tile_nth;
template <typename H, typename... R> struct cuda2tile_nth<0, H, R...> { typedef H type; };
template <int I, typename H, typename... R> struct cuda2tile_nth<I, H, R...> {
    typedef typename cuda2tile_nth<I - 1, R...>::type type;
};
template <int I, typename F> struct cuda2tile_arg;
template <int I, typename... A> struct cuda2tile_arg<I, void (*)(A...)> {
    typedef typename cuda2tile_nth<I, A...>::type type;
};
template <typename T> __device__ __forceinline__ T cuda2tile_scalar(const unsigned char* bytes) {
    alignas(T) unsigned char raw[sizeof(T)];
    for (unsigned i = 0; i < sizeof(T); ++i) raw[i] = bytes[i];
    return *reinterpret_cast<T*>(raw);
}
"""


def template_text(value) -> str:
    """A template argument given to a hybrid factory as C++ text: a dtype as its C++ type
    (``float32`` -> ``float``), a bool as ``true``/``false``, a number as its digits, text as it is."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = " ".join(str(value).split())
    if text == "int8":  # (plain char's sign is the compiler's choice)
        return "signed char"
    dtype = _dtypes.BY_NAME.get(text)
    return dtype.clang[0] if dtype is not None and dtype.clang and text not in _dtypes.TEMPLATE_SPELLINGS else text


def hybrid_instance(cuda: str, template) -> str:
    """The CUDA of a kernel template kept whole (``migrate.emit.hybrid``: its entry calls the
    instance ``CUDA2TILE_TARGS`` names, its launch bounds read ``CUDA2TILE_TARG_<i>``) for the
    arguments of ``template``: ((factory name, C++ name, value, the default's text, a pack), ...). A value
    None takes the template's default (left out of the call where no later argument is given);
    a pack's value is a sequence."""
    import re

    texts, given = [], []
    for name, _cxx, value, default, pack in template:
        if value is None:
            if default is None and not pack:
                raise LaunchError(f"the template argument {name} is not given and has no default: no launch "
                                  f"site names an instance, so the launch must (template=... or {name}=...)")
            texts.append(None)
            continue
        texts.append(", ".join(template_text(v) for v in value) if pack else template_text(value))
    last = max((i for i, t in enumerate(texts) if t is not None), default=-1)
    for i, ((_name, _cxx, _value, default, pack), text) in enumerate(zip(template, texts)):
        if text is None and i < last:  # a default before a given argument: its text, earlier names replaced
            text = "" if pack else default
            for (_n, other, _v, _d, _p), value in zip(template[:i], texts[:i]):
                text = re.sub(rf"\b{re.escape(other)}\b", f"({value})", text)
            texts[i] = text
        given.append(texts[i])
    call = ", ".join(t for t in given[:last + 1] if t)
    out = cuda.replace("CUDA2TILE_TARGS", call)
    for i, text in sorted(enumerate(texts), reverse=True):
        out = out.replace(f"CUDA2TILE_TARG_{i}", text if text is not None else str(template[i][3]))
    return out


def hybrid_source(module_file: str, include: str, cuda: str, template=None) -> str:
    """The CUDA a hybrid kernel's ``T.CUDASourceCodeKernel`` compiles: the prelude, the source file
    ``include`` (relative to the module's folder, found through :func:`hybrid_flags`' ``-I``;
    its digest in a comment, so TileLang's cache sees an edit) and the kernel's ``cuda`` (its body
    as a device function, its entry; a template kept whole, the instance ``template`` names:
    :func:`hybrid_instance`)."""
    import hashlib
    from pathlib import Path

    if template is not None:
        cuda = hybrid_instance(cuda, template)

    path = Path(module_file).parent / include
    try:
        digest = hashlib.sha1(path.read_bytes()).hexdigest()[:16]
    except OSError:
        digest = "not found beside the module"
    return f'{HYBRID_PRELUDE}\n// {include}: {digest}\n#include "{include}"\n\n{cuda}\n'


#: nvcc's options every hybrid kernel is built with, as CUDA programs' builds commonly give them
#: (a constexpr host function such as std::max called in device code, lambdas passed to kernels)
HYBRID_NVCC_FLAGS = ("--expt-relaxed-constexpr", "--extended-lambda")


def hybrid_flags(module_file: str, folders=(), defines=()) -> list:
    """nvcc's options for a hybrid kernel: ``-I`` the module's folder (the source's copy), the
    folders of ``CUDA2TILE_INCLUDE`` (``os.pathsep``-separated), then ``folders`` (those of the
    build it was converted from, where they exist here), ``-D`` each of ``defines``, and
    :data:`HYBRID_NVCC_FLAGS`."""
    import os
    import shlex
    from pathlib import Path

    found = [str(Path(module_file).resolve().parent)]
    found += [f for f in os.environ.get("CUDA2TILE_INCLUDE", "").split(os.pathsep) if f]
    found += [f for f in folders if Path(f).is_dir()]
    return [f"-I{shlex.quote(f)}" for f in dict.fromkeys(found)] + [f"-D{shlex.quote(d)}" for d in defines] \
        + list(HYBRID_NVCC_FLAGS)


def source_kernel_with_shared(grid, block, shared_bytes: int, source: str, entry: str) -> None:
    """``T.CUDASourceCodeKernel(*grid, threads=block, ...)`` launched with ``shared_bytes`` of dynamic
    shared memory (``extern __shared__``), which TileLang 0.1.15's own launches without: the same
    launch frame, holding a ``shared.dyn`` allocation of that size that the entry's call names."""
    import tilelang.language as T
    from tilelang.language.kernel import launch_kernel

    with launch_kernel(tuple(grid), threads=list(block), code_block_source=source, code_block_entry_name=entry):
        dynamic = T.alloc_shared((int(shared_bytes),), "uint8", scope="shared.dyn")
        T.evaluate(T.call_extern("int32", entry, T.address_of(dynamic[0])))


def hybrid_arguments(sig: Signature, args, device=None, template=None, symbols=None) -> list:
    """The call of a hybrid kernel (:data:`Signature.hybrid`): each pointer argument's memory as a
    flat ``uint8`` tensor, in the CUDA order, then one ``uint8`` tensor of the scalars' bytes (a
    number at its dtype, a vector or struct passed by value as its bytes). A scalar of a type
    parameter of a template kept whole is written at the dtype ``template`` gives that parameter,
    in its slot (the rest of it zero). Then the globals it reads (``sig.symbols``), each as the
    memory of its tensor: ``symbols[name]``, or a ``__device__`` one's tensor the module keeps
    (:func:`device_global`, shared with the file's migrated kernels)."""
    import numpy as np
    import torch

    given = template_kwargs(sig, template)  # (a template kept whole: the launch names its instance)
    types = {name: value for (name, kind), value in zip(sig.template, given.values()) if kind == "type"}

    if len(args) != len(sig.params):
        raise LaunchError(f"{sig.name} takes {len(sig.params)} arguments, got {len(args)}")
    layout = {name: (offset, size) for name, offset, size in sig.hybrid}
    blob = bytearray(max((o + s for o, s in layout.values()), default=0))
    out = []
    for (name, kind, dtype), value in zip(sig.params, args):
        if kind in ("buffer", "bytes"):
            if value is None:  # a null pointer
                out.append(torch.empty(0, dtype=torch.uint8, device=device or "cpu"))
                continue
            tensor = _as_tensor(value, name, device)
            if kind == "buffer" and str(tensor.dtype).removeprefix("torch.") != dtype:
                raise LaunchError(f"argument '{name}' must hold {dtype}, not {tensor.dtype}")
            out.append(tensor.view(torch.uint8) if tensor.numel() else tensor.new_empty(0, dtype=torch.uint8))
            continue
        offset, size = layout[name]
        if kind == "scalar" and dtype in types or kind == "scalar" and dtype not in _dtypes.BY_NAME:
            if dtype not in types:
                raise LaunchError(f"argument '{name}' is of template type {dtype}: the launch names its type "
                                  "(template=...)")
            text = " ".join(str(types[dtype]).split())
            dtype = _dtypes.TEMPLATE_SPELLINGS.get(text, text)
            if dtype not in _dtypes.BY_NAME:
                raise LaunchError(f"argument '{name}' is of template type {text!r}, which has no dtype: "
                                  "its bytes cannot be written")
            size = _dtypes.BY_NAME[dtype].size
        if kind == "scalar":
            if isinstance(value, torch.Tensor):
                value = value.item()
            if dtype == "bfloat16":  # numpy has none: torch's bits
                raw = torch.tensor(value, dtype=torch.bfloat16).view(torch.int16).numpy().tobytes()
            else:
                raw = np.array(value, dtype=_dtypes.BY_NAME[dtype].numpy or dtype).tobytes()
        else:  # a vector or struct by value: its bytes
            raw = value.tobytes() if hasattr(value, "tobytes") else bytes(value)
            if isinstance(value, torch.Tensor):
                raw = value.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()
        if len(raw) != size:
            raise LaunchError(f"argument '{name}' has {len(raw)} bytes; the kernel takes {size}")
        blob[offset:offset + size] = raw
    if sig.hybrid:
        out.append(torch.tensor(list(blob), dtype=torch.uint8, device=device or "cpu"))
    for name, dtype, elements in sig.symbols:
        out.append(_symbol_values(sig, symbols, name, dtype, elements, device, exact_dtype=True).view(torch.uint8))
    return out


def launch(sig: Signature, args, *, grid, block, shared_bytes: int = 0, template=None,
           symbols=None, target=None, options: dict | None = None):
    """Run ``sig`` like ``kernel<<<grid, block, shared_bytes>>>(*args)``; tensors are updated in place.
    ``options``: factory keywords (``tile``, ``threads``) in place of the tuned or default ones."""
    bind(sig, args, grid=grid, block=block, shared_bytes=shared_bytes, template=template, symbols=symbols,
         target=target, options=options)()


def bind(sig: Signature, args, *, grid, block, shared_bytes: int = 0, template=None,
         symbols=None, target=None, options: dict | None = None):
    """:func:`launch`'s kernel compiled and its arguments made, as a function that runs it (again:
    ``migrate bench --traces`` times it); tensors are updated in place at each call."""
    sig, template = instance_signature(sig, template)
    target = target or default_target()
    sizes = static_sizes(sig, args, target)
    kernel = compile_kernel(sig, grid, block, shared_bytes, template, target, sizes=sizes, options=options)
    device = "cuda" if target != "c" else None
    call = without_static(sig, arguments(sig, args, symbols, template, device), sizes)
    return lambda: kernel(*call)
