"""The names of the emitted code: those a kernel's own names must not take, those a factory
binds itself, and how a template parameter is spelled in Python."""
from __future__ import annotations

from . import model as m

#: Names the emitted TileLang module or its kernels use for themselves.
RESERVED = frozenset({
    "T", "tilelang", "torch", "tvm", "np", "bx", "by", "bz", "tx", "ty", "tz",
    "block_x", "block_y", "block_z", "grid_x", "grid_y", "grid_z", "shared_bytes", "target",
    "kernel", "main", "self", "range", "len", "int", "float", "bool", "min", "max", "abs", "sum",
    "print", "type", "object", "list", "dict", "tuple", "str", "round", "pow", "all", "any",
    "x_lane", "x_acc", "x_src", "result_",
    # the tile form's element indices, tile sizes and domain
    "gx", "gy", "gz", "ix", "iy", "iz", "tile", "tile_x", "tile_y", "tile_z", "threads",
    "extent_x", "extent_y", "extent_z", "fit_tile", "fill",
    # the portable form's per-thread values (emit.kernel.per_thread_scalars)
    "alloc_thread", "thread_scope",
    # the barrier of warp-synchronous code's lockstep steps (emit.kernel.warp_barriers)
    "sync_step",
    # the lanes of lifted reductions
    "lane", "lane_loop", "alloc_lanes", "lane_grid", "lane_w", "lane_l",
    "serial_total", "serial_cells", "alloc_total", "x_cell",
    # the flags of do-while and endless loops (emit.printer.StmtPrinter.open_flag_loop)
    "x_loop", "x_loop1", "x_loop2", "x_loop3",
    # the flags of loops whose condition calls a device function's macro (emit.printer)
    "x_test", "x_test1", "x_test2", "x_test3",
    # the flags of long else-if chains written flat (emit.printer.StmtPrinter.s_If)
    "x_taken", "x_taken1", "x_taken2", "x_taken3",
    # the variable of a vector's lane loop (emit.printer.StmtPrinter._lane_loop)
    "x_lane",
    # the local pack of a vector loaded, stored or added atomically whole (emit.printer.StmtPrinter._pack)
    "x_pack",
})

#: The flag of a do-while or endless loop at each depth of such loops (TileLang refuses a
#: ``while`` on a constant): the printer's, reserved above.
LOOP_FLAGS = ("x_loop", "x_loop1", "x_loop2", "x_loop3")

#: The flag that holds the condition of a loop that calls a device function's macro, at each
#: depth of such loops (emit.printer.StmtPrinter.open_loop), reserved above.
TEST_FLAGS = ("x_test", "x_test1", "x_test2", "x_test3")

#: The flag of a long else-if chain written flat (a branch was taken), at each depth of such
#: chains (emit.printer.StmtPrinter.s_If), reserved above.
CHAIN_FLAGS = ("x_taken", "x_taken1", "x_taken2", "x_taken3")

#: The variable of the loop over the lanes of a vector copied whole (emit.printer), reserved above.
LANE_VAR = "x_lane"

#: The local pack of a vector's lanes loaded, stored or added atomically whole (emit.printer), reserved above.
PACK_VAR = "x_pack"


#: Names the factories bind before the prim_func: a scalar parameter so named cannot also be a
#: buffer extent (its shape variable would be bound in the factory too).
_FACTORY_NAMES = frozenset({"grid", "block", "shared_bytes", "target", "tile", "threads", "num_stages",
                            "block_M", "block_N", "block_K", "tensor_cores", "whole_tiles", "shared_scope",
                            "lane_loop", "alloc_lanes", "T", "cuda_math", "fit_tile", "launch",
                            "Signature"})


def factory_name(name: str, fn: m.Function) -> bool:
    """Whether a factory binds ``name`` itself (it cannot name a parameter's shape variable)."""
    return name in _FACTORY_NAMES or name.startswith(("grid_", "block_", "extent_", "tile_")) \
        or name.endswith(("_len", "_rows")) or name in {template_param_name(t.name) for t in fn.template_params}


def template_param_name(name: str) -> str:
    """A template parameter's name in the factory (reserved names get a trailing underscore)."""
    return f"{name}_" if name in RESERVED or name in ("T",) else name


#: Names an emitted module binds at its top level besides its kernels' and device functions'.
_MODULE_NAMES = frozenset({"KERNELS", "Signature", "launch", "fit_tile", "fill_blocks", "cuda_math", "T"})


def unit_names(unit: m.TranslationUnit) -> set[str]:
    """Every name the module of ``unit`` may use: its functions (and their factories and
    signatures), globals, parameters and locals, and the names the emitted code binds itself."""
    names = set(RESERVED | _FACTORY_NAMES | _MODULE_NAMES)
    for fn in (*unit.kernels, *unit.device_functions):
        names |= {fn.name, f"make_{fn.name}", fn.name.upper(), f"{fn.name}_SIGNATURE"}
        names |= {p.name for p in fn.params}
        names |= {n.name for n in m.walk(fn.body) if isinstance(n, (m.Ref, m.VarDecl))} if fn.body else set()
    names |= {g.name for g in unit.globals}
    return names


def fresh(base: str, taken: set[str]) -> str:
    """``base``, or ``base_2``, ``base_3``, ... : the first not in ``taken``, which then holds it."""
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name
