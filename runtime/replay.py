"""Replay a recorded launch (:mod:`.traces`) into the migrated kernel and compare.

The migrated kernel of an emitted module runs on copies of the bytes the original program's
allocations held before the launch, with the recorded grid, block, dynamic shared bytes and
scalars; every buffer it receives is then compared with what the original left there after the
launch, under the tolerance class of the buffer's dtype. A launch the replay cannot take (a
template instance whose arguments it cannot tell, two arguments into one allocation as different
element types, a pointer into memory the runtime did not allocate, a kernel that was not
migrated) is reported as skipped with the reason; nothing is
loosened to make it fit.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import redzone
from ..dtypes import SIZES
from .compare import CompareResult, compare_chunked
from .redzone import RED_ZONE
from .tilelang_side import load_module, to_numpy, to_tensor
from .tilelang_support import LaunchError, instance_signature, template_kwargs
from .traces import Arg, Launch

__all__ = ["Prepared", "Replay", "prepare", "replay", "TOLERANCE_OF_DTYPE"]

#: The tolerance class a replayed buffer is compared under, by dtype (the classes of automatic
#: specs: accumulations in float32 may be reassociated, integers must match exactly).
TOLERANCE_OF_DTYPE = {"float32": "fp32_accum", "float64": "fp64", "float16": "fp16", "bfloat16": "bf16"}

_NUMPY = {"float16": np.float16, "float32": np.float32, "float64": np.float64, "int8": np.int8,
          "uint8": np.uint8, "int16": np.int16, "uint16": np.uint16, "int32": np.int32, "uint32": np.uint32,
          "int64": np.int64, "uint64": np.uint64, "bool": np.bool_}


@dataclass
class Replay:
    kernel: str
    launch: int  # the launch's number among the kernel's launches
    status: str  # pass, fail, skipped
    message: str = ""
    results: list[CompareResult] = field(default_factory=list)
    outputs: dict = field(default_factory=dict)  # buffer -> what the migrated kernel left in it

    @property
    def passed(self) -> bool:
        return self.status == "pass"


def _values(raw, dtype: str, offset: int) -> np.ndarray:
    """The elements of dtype ``dtype`` from byte ``offset`` of an allocation's recorded bytes
    (bfloat16 as float32): a read-only view of them where the dtype allows, not a copy."""
    if dtype == "bfloat16":
        bits = np.frombuffer(raw, np.uint16)[offset // 2:].astype(np.uint32) << 16
        return bits.view(np.float32)
    item = np.dtype(_NUMPY[dtype]).itemsize
    usable = (len(raw) - offset) // item * item
    return np.frombuffer(raw, np.uint8, count=usable, offset=offset).view(_NUMPY[dtype])


#: numpy codes of recorded argument types -> TileLang dtypes, for deducing template type arguments
_CODE_DTYPES = {"f4": "float32", "f8": "float64", "i1": "int8", "u1": "uint8", "i2": "int16", "u2": "uint16",
                "i4": "int32", "u4": "uint32", "i8": "int64", "u8": "uint64", "b1": "bool"}


def _scalar(value, dtype: str):
    """A recorded scalar as the kernel's parameter type takes it, converted as C converts an
    argument (an unsigned 0xDEADBEEF passed to an int parameter wraps; an int to a float)."""
    if dtype not in _NUMPY:
        return value
    kind = np.dtype(_NUMPY[dtype]).kind
    if kind in "iu" and not isinstance(value, float):
        return np.array(int(value) & 0xFFFFFFFFFFFFFFFF, np.uint64).astype(_NUMPY[dtype]).item()
    if kind == "b":
        return bool(value)
    return _NUMPY[dtype](value).item()


def template_arguments(sig, launch: Launch) -> tuple[tuple | None, str]:
    """The template arguments of a recorded launch of the template kernel ``sig``: the instance
    the launch named (``k<float, 64>``), else those the launch wrote (``k<64>``) followed by
    type arguments deduced, as the compiler deduces them, from the recorded types of the
    arguments whose declared type is the parameter. (None, why) when these do not give every
    argument."""
    named = launch.template_args
    if named is not None and len(named) == len(sig.template):
        try:
            template_kwargs(sig, named)
            return named, ""
        except (LaunchError, ValueError) as exc:
            return None, str(exc)
    written = launch.written_args or ()
    if len(written) > len(sig.template):
        return None, f"the launch writes {len(written)} template arguments, the kernel takes {len(sig.template)}"
    out = []
    for i, (tname, kind) in enumerate(sig.template):
        if i < len(written) and _literal(written[i], kind):
            out.append(written[i])
            continue
        if kind != "type":
            return None, f"the value of template parameter {tname} (name it at the launch: k<..., {tname}>)"
        codes = {arg.elem if arg.kind == "pointer" else arg.type
                 for (_, _, dtype), arg in zip(sig.params, launch.args) if dtype == tname}
        codes.discard("")
        if len(codes) != 1 or next(iter(codes)) not in _CODE_DTYPES:
            return None, f"the type of template parameter {tname} (no argument of that type tells it)"
        out.append(_CODE_DTYPES[codes.pop()])
    return tuple(out), ""


def _literal(text: str, kind: str) -> bool:
    """Whether a template argument as the launch wrote it is a type or a value by itself (``float``,
    ``128``, ``true``), not a name of the calling code (``T``, ``BLOCK``)."""
    from .tilelang_support import C_TYPE_DTYPES, template_value

    if kind == "type":
        return text in C_TYPE_DTYPES or text in C_TYPE_DTYPES.values()
    try:
        template_value(text)
        return True
    except ValueError:
        return False


def _missing_symbols(sig, launch: Launch) -> str:
    """The first symbol of ``sig`` whose bytes ``launch`` does not hold, described ("__constant__
    'lut'", "__device__ global 'slack'"); "" when it holds them all."""
    state = dict(sig.state)
    for name, _, _ in sig.symbols:
        if name in state and name not in launch.globals_before:
            return f"__device__ global '{name}'"
        if name not in state and name not in launch.symbols:
            return f"__constant__ '{name}'"
    return ""


def _symbol_bytes(state: dict, launch: Launch, name: str):
    """The bytes symbol ``name`` held when ``launch`` started (``state``: the signature's
    ``__device__`` globals)."""
    return launch.globals_before[name] if name in state else launch.symbols[name]


def _struct_buffers(name: str, fields, arg, launch: Launch) -> tuple[list, str]:
    """The buffers of the struct of buffers ``arg`` points to (a ``"fields"`` parameter): the
    pointer in the struct's recorded bytes at each field's offset, followed to the allocation it
    points into (``Launch.links``); a zero pointer is a null buffer. (arguments, "") or ([], why
    not)."""
    if arg.kind != "pointer" or arg.alloc is None or arg.alloc not in launch.before:
        return [], f"argument '{name}' is no recorded struct of buffers"
    raw = launch.before[arg.alloc]
    out = []
    for _param, _d, field_name, offset in fields:
        at = arg.offset + offset
        if (arg.alloc, at) in launch.links:
            alloc, where = launch.links[(arg.alloc, at)]
            out.append(Arg("pointer", alloc=alloc, offset=where))
        elif at + 8 <= len(raw) and not any(bytes(raw[at:at + 8])):
            out.append(Arg("pointer", null=True))
        else:
            return [], f"the field '{field_name}' of argument '{name}' points into memory the recording does not hold"
    return out, ""


def _field_arg(arg, kind: str, dtype: str, offset: int):
    """The field at byte ``offset`` of the recorded struct ``arg`` as an argument of its own: a
    pointer into the allocation the recording found there (null where the word is 0, into no
    recorded allocation otherwise), or a number read from the struct's bytes."""

    if kind == "buffer":
        found = [(alloc, at) for where, alloc, at in arg.pointers if where == offset]
        if found:
            return Arg("pointer", alloc=found[0][0], offset=found[0][1])
        return Arg("pointer", null=not any(arg.raw[offset:offset + 8]))
    holder = np.dtype(_NUMPY[dtype]).newbyteorder("<")
    raw = arg.raw[offset:offset + holder.itemsize]
    return Arg("scalar", holder.str[1:], np.frombuffer(raw, holder)[0].item(), raw)


def replay(module_path: str | Path, launch: Launch, target: str = "c") -> Replay:
    """Run ``launch`` (recorded from the original program) through the migrated kernel of the
    module at ``module_path`` on ``target`` ("c": the CPU; "cuda"), and compare its buffers.
    Arguments into one allocation (a kernel called in place) are views of one buffer."""
    ready = prepare(module_path, launch, target)
    return ready if isinstance(ready, Replay) else ready.check()


@dataclass
class Prepared:
    """A recorded launch made ready for the migrated kernel (:func:`prepare`): its arguments (the
    recorded bytes in tensors with red zones, by allocation), its symbols; :meth:`check` runs it
    once and compares, :meth:`bound` and :meth:`restore` let ``migrate bench --traces`` run it
    again on the same inputs."""

    out: Replay
    sig: object
    args: list
    template: object
    symbols: dict
    groups: dict
    state: dict
    bound_types: dict
    launch: Launch
    target: str
    _saved: list = field(default_factory=list)

    def _run_kwargs(self) -> dict:
        L = self.launch
        return dict(grid=L.grid, block=L.block, shared_bytes=L.shared_bytes, target=self.target,
                    template=self.template, symbols=self.symbols)

    def bound(self):
        """A function that runs the migrated kernel on these arguments (compiled once)."""
        from .tilelang_support import bind
        return bind(self.sig, self.args, **self._run_kwargs())

    def keep(self) -> None:
        """Copies of every input tensor (buffers with their red zones, symbols) as they are now."""
        tensors = [g["whole"] for g in self.groups.values()] + list(self.symbols.values())
        self._saved = [(x, x.clone()) for x in tensors if hasattr(x, "clone")]

    def restore(self) -> None:
        """The input tensors put back as :meth:`keep` found them."""
        for x, copy in self._saved:
            x.copy_(copy)

    def check(self) -> Replay:
        """Run the migrated kernel once and compare every buffer with what the original left."""
        from .tilelang_support import launch as run

        run(self.sig, self.args, **self._run_kwargs())
        return self.judge()

    def judge(self) -> Replay:
        out, sig, launch, state, bound, groups, symbols = (self.out, self.sig, self.launch, self.state,
                                                           self.bound_types, self.groups, self.symbols)
        for name, dtype, elements in sig.symbols:  # the __device__ globals it leaves, as the original left them
            if name in state:
                dtype = bound.get(dtype, dtype)
                expected = _values(launch.globals_after[name], dtype, 0)[:elements]
                actual = to_numpy(symbols[name], dtype)
                out.outputs["symbol:" + name] = actual
                out.results.append(compare_chunked(expected, actual, dtype, TOLERANCE_OF_DTYPE.get(dtype, "exact"),
                                                   name=name))
        for alloc, group in groups.items():
            dtype, n, name = group["dtype"], group["n"], " = ".join(group["names"])
            zone = to_numpy(group["whole"], dtype)
            write = redzone.red_zone_write(zone, n, dtype)
            if write:
                out.status = "fail"
                out.message = redzone.message(name, write)
                return out
            expected = _values(launch.after[alloc], dtype, group["base"])
            actual = zone[RED_ZONE:RED_ZONE + n]
            for each in group["names"]:
                out.outputs[each] = actual
            res = compare_chunked(expected, actual, dtype, TOLERANCE_OF_DTYPE.get(dtype, "exact"), name=name)
            out.results.append(res)
        bad = [r for r in out.results if not r.passed]
        out.status = "fail" if bad else "pass"
        out.message = bad[0].message if bad else f"{len(out.results)} buffers match the recording"
        return out


def prepare(module_path: str | Path, launch: Launch, target: str = "c"):
    """:func:`replay`'s launch made ready for the migrated kernel: a :class:`Prepared`, or the
    skipped :class:`Replay` that says why it cannot be."""
    out = Replay(launch.name, launch.number, "skipped")
    if launch.skipped:
        out.message = f"launch {launch.number} was not recorded ({launch.skipped}, past the trace budget)"
        return out
    module = load_module(module_path)
    sig = getattr(module, "KERNELS", {}).get(launch.name)
    if sig is None:
        out.message = f"kernel '{launch.name}' was not migrated"
        return out
    template = None
    if sig.template:
        template, why = template_arguments(sig, launch)
        if template is None:
            out.message = f"'{launch.kernel}' is a template instance whose arguments the recording does not give: {why}"
            return out
        try:  # a template converted per instance: the instance the launch names
            sig, template = instance_signature(sig, template)
        except LaunchError as exc:
            out.message = str(exc)
            return out
    missing = _missing_symbols(sig, launch)
    if missing:
        out.message = f"'{launch.kernel}' reads {missing}, whose bytes the recording does not hold"
        return out
    if len(sig.params) != len(launch.args):
        out.message = f"the launch passes {len(launch.args)} arguments, the kernel takes {len(sig.params)}"
        return out
    if launch.status != 0:
        out.message = f"the original launch did not run (executor status {launch.status})"
        return out
    device = "cuda" if target != "c" else None
    bound = template_kwargs(sig, template) if template is not None else {}
    # the buffers by allocation: arguments into one allocation (in place: k(d, d)) share one
    # tensor, each a view from its own offset, and the allocation is compared once
    groups: dict[int, dict] = {}
    items = []  # (name, kind, dtype, arg, the CUDA argument it is of): a struct's fields each an item
    for i, ((name, kind, dtype), arg) in enumerate(zip(sig.params, launch.args)):
        if kind == "fields":  # a pointer to a struct of buffers: the buffers its fields point to
            buffers, why = _struct_buffers(name, dtype, arg, launch)
            if why:
                out.message = why
                return out
            items += [(p, "buffer", d, a, i) for (p, d, _f, _o), a in zip(dtype, buffers)]
            continue
        if kind == "bytes":  # a hybrid kernel's pointer to memory of no dtype: its bytes
            items.append((name, "buffer", "uint8", arg, i))
            continue
        if kind != "members":
            items.append((name, kind, dtype, arg, i))
            continue
        if arg.kind != "scalar" or len(arg.raw) < max(o + (8 if k == "buffer" else SIZES[d]) for _f, k, d, o in dtype):
            out.message = f"argument '{name}' was recorded as {arg.kind} of {len(arg.raw)} bytes, the kernel " \
                          f"takes a struct of {len(dtype)} fields by value"
            return out
        items += [(f, k, d, _field_arg(arg, k, d, o), i) for f, k, d, o in dtype]
    for name, kind, dtype, arg, _i in items:
        dtype = bound.get(dtype, dtype)
        if kind == "buffer":
            if arg.kind == "pointer" and arg.null:
                continue  # passed as None: the kernel gets a null pointer, as the program gave it
            if arg.kind != "pointer" or arg.alloc is None:
                out.message = f"argument '{name}' points into memory the runtime did not allocate" if not arg.null \
                    else f"argument '{name}' is a null pointer"
                return out
            if dtype not in _NUMPY or arg.offset % np.dtype(_NUMPY[dtype]).itemsize:
                out.message = f"argument '{name}' ({dtype}) is not an array of its element type at offset {arg.offset}"
                return out
            group = groups.setdefault(arg.alloc, {"dtype": dtype, "names": [], "base": arg.offset})
            if group["dtype"] != dtype:
                out.message = (f"arguments '{group['names'][0]}' ({group['dtype']}) and '{name}' ({dtype}) point into "
                               "the same allocation as different element types")
                return out
            group["names"].append(name)
            group["base"] = min(group["base"], arg.offset)
        elif kind == "struct":
            if arg.kind != "scalar" or not arg.raw or len(arg.raw) % SIZES[dtype]:
                out.message = f"argument '{name}' was recorded as {arg.kind} of {len(arg.raw)} bytes, the kernel " \
                              f"takes a struct of {dtype} words by value"
                return out
        elif kind == "value":  # a hybrid kernel's struct or vector by value: ``dtype`` bytes
            if arg.kind != "scalar" or len(arg.raw) < dtype:
                out.message = f"argument '{name}' was recorded as {arg.kind} of {len(arg.raw)} bytes, the kernel " \
                              f"takes {dtype} bytes by value"
                return out
        elif kind == "lanes":
            if arg.kind != "scalar" or len(arg.raw) < max((o + SIZES[d] for _n, d, o in dtype), default=0):
                out.message = f"argument '{name}' was recorded as {arg.kind} of {len(arg.raw)} bytes, " \
                              f"the kernel takes a struct of {len(dtype)} lanes by value"
                return out
        elif arg.kind != "scalar" or not arg.type:
            out.message = f"argument '{name}' was recorded as {arg.kind} {arg.type!r}, the kernel takes a {dtype}"
            return out
    for alloc, group in groups.items():
        dtype = group["dtype"]
        values = _values(launch.before[alloc], dtype, group["base"])
        group["whole"] = to_tensor(redzone.padded(values, dtype), dtype, device)
        group["n"] = len(values)
    values = []
    for name, kind, dtype, arg, _i in items:
        if kind == "buffer" and arg.kind == "pointer" and arg.null:
            values.append(None)
        elif kind == "buffer":
            group = groups[arg.alloc]
            start = RED_ZONE + (arg.offset - group["base"]) // np.dtype(_NUMPY[group["dtype"]]).itemsize
            values.append(group["whole"][start:RED_ZONE + group["n"]])  # the kernel's buffer, red zones either side
        elif kind in ("lanes", "struct"):
            values.append(arg.raw)  # the struct's bytes: the launcher takes its lanes (or words) out
        elif kind == "value":
            values.append(bytes(arg.raw[:dtype]))
        else:
            values.append(_scalar(arg.value, bound.get(dtype, dtype)))
    args = []  # a struct holding pointers: its members' values in order; a struct of buffers: by field
    for i, (_name, kind, dtype) in enumerate(sig.params):
        mine = [v for item, v in zip(items, values) if item[4] == i]
        if kind == "fields":
            args.append({f: v for (_p, _d, f, _o), v in zip(dtype, mine)})
        else:
            args.append(mine if kind == "members" else mine[0])
    state = dict(sig.state)
    symbols = {name: to_tensor(_values(_symbol_bytes(state, launch, name), bound.get(dtype, dtype), 0)[:elements],
                               bound.get(dtype, dtype), device) for name, dtype, elements in sig.symbols}
    return Prepared(out, sig, args, template, symbols, groups, state, bound, launch, target)


def as_spec(sig, launch: Launch, file: str = ""):
    """The recorded ``launch`` of the kernel ``sig`` as a spec with its inputs: (KernelSpec,
    Inputs), sized as the program launched it (each buffer from its pointer's offset to the end
    of its allocation, the recorded scalars, grid, block, shared bytes, template instance and
    __constant__ symbols); or (None, why) for a launch it cannot describe. ``migrate bench``
    times kernels that have no spec at the sizes of their program's own run this way."""
    from .inputs import Inputs
    from .spec import ArgSpec, KernelSpec, SymbolSpec

    if launch.skipped or launch.status != 0:
        return None, f"launch {launch.number} was not recorded or did not run"
    template = None
    if sig.template:
        template, why = template_arguments(sig, launch)
        if template is None:
            return None, why
    named = sig
    try:  # a template converted per instance: its instance's parameters (the spec names the template)
        sig, bound_template = instance_signature(sig, template)
    except LaunchError as exc:
        return None, str(exc)
    if len(sig.params) != len(launch.args):
        return None, f"the launch passes {len(launch.args)} arguments, the kernel takes {len(sig.params)}"
    missing = _missing_symbols(sig, launch)
    if missing:
        return None, f"{missing} is not in the recording"
    bound = template_kwargs(sig, bound_template) if bound_template is not None else {}
    specs, values = [], {}
    for (name, kind, dtype), arg in zip(sig.params, launch.args):
        dtype = bound.get(dtype, dtype)
        if kind == "buffer":
            if arg.kind != "pointer" or arg.alloc is None or dtype not in _NUMPY:
                return None, f"argument '{name}' is no recorded allocation of {dtype}"
            values[name] = np.array(_values(launch.before[arg.alloc], dtype, arg.offset))
            changed = launch.after.get(arg.alloc) != launch.before[arg.alloc]  # read only, or written too
            specs.append(ArgSpec(name, "buffer", dtype, elements=len(values[name]), role="inout" if changed else "in"))
        elif kind in ("lanes", "members", "struct"):
            return None, f"argument '{name}' is a struct passed by value, which a spec cannot state"
        elif kind == "fields":
            return None, f"argument '{name}' is a struct of buffers, which a spec cannot state"
        else:
            if arg.kind != "scalar" or not arg.type:
                return None, f"argument '{name}' was recorded as {arg.kind} {arg.type!r}"
            values[name] = _scalar(arg.value, dtype)
            specs.append(ArgSpec(name, "scalar", dtype, value=values[name]))
    state = dict(sig.state)
    symbols = {name: np.array(_values(_symbol_bytes(state, launch, name), bound.get(dtype, dtype), 0)[:elements])
               for name, dtype, elements in sig.symbols}
    spec = KernelSpec(named.name, f"{named.name}@launch{launch.number}", template=tuple(template or ()),
                      grid=tuple(launch.grid), block=tuple(launch.block), shared_bytes=launch.shared_bytes,
                      tolerance=TOLERANCE_OF_DTYPE.get(next((a.dtype for a in specs if a.is_buffer), ""), "exact"),
                      args=tuple(specs),
                      symbols=tuple(SymbolSpec(n, bound.get(d, d), e) for n, d, e in sig.symbols),
                      cu_path=file)
    return spec, Inputs(args=values, symbols=symbols, seed=0, kernel=spec)
