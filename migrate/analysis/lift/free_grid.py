"""Free the grid of grid-stride reductions: their tile form launches enough blocks to fill the GPU.

A CUDA reduction often runs a small fixed grid in which every thread grid-strides,

    acc = IDENTITY;
    for (i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        acc = acc OP g(i);
    <the block reduces acc with OP>;  once per block: atomicOP(out, total);

Its result is OP over g(0), ..., g(n - 1) whatever the grid: every grid covers each element
once, a lane with no elements contributes the identity, and the blocks' totals meet only in
the atomic, whose order CUDA already leaves unspecified. So the tile form may launch more
blocks than CUDA did (``fill_blocks`` in the runtime: one wave of resident blocks on the GPU),
the stride growing with the grid; regrouping the elements among lanes and blocks only reorders
OP (associative and commutative; a float sum stays within the check's accumulation tolerance).

:func:`plan_free_grid` proves it on the lifted plan (:mod:`.reduce`, :mod:`.warp`):

- the kernel is one block reduction over all the block's lanes and nothing else;
- before the tree, each lane only declares its accumulator (initialised to the identity of the
  tree's operation), the stride ``blockDim.x * gridDim.x``, and runs one grid-stride loop that
  starts at ``blockIdx.x * blockDim.x + threadIdx.x`` below a bound the same in every block;
- the loop's body declares values of the element (from the index, parameters, constants, reads
  of buffers the kernel does not write; no thread or block index, no store) and combines one of
  them into the accumulator with the tree's operation (``acc += g``, ``acc = max(acc, g)``,
  ``acc = (g > acc) ? g : acc``, ...);
- so ``gridDim.x`` is used only as the step and ``blockIdx.x`` only in the start;
- after the tree, the block only copies its total into locals and combines it with the atomic
  of the tree's operation (atomicAdd after a sum, atomicMax after a max, atomicMin after a min)
  into an address of parameters and constants (the same for every block and lane), of the
  total's type; no buffer the atomics write is read, nor may alias one that is read.

Otherwise the CUDA grid is kept, with the reason. The loop's index is widened to 64 bits when
the CUDA's is 32 (:func:`_widen_index`): ``i += stride`` with the larger stride must not wrap
where the CUDA's smaller one did not (``n`` within one stride of 2**31).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import const_value, strip_casts, strip_int_casts
from ...ir.loops import BlockReduce, FreeGrid, KernelPlan, Phase
from ..facts.divergence import BLOCK_INVARIANT_REFS, same_in_every_block
from .base import REDUCTIONS
from .reduce import is_lane, lane_aliases
from .warp_trees import combine_op

#: Call kinds an element's value may use (they neither store nor talk to other threads).
_PURE_CALLS = ("math", "device", "conversion")
#: Names an element's value may read besides its index and the values declared before it.

_EXPRS = m.Expr.__args__
_G = "@element"  # the combined value, in the spelling given to warp_trees.combine_op


class _Refused(Exception):
    pass


def plan_free_grid(kplan: KernelPlan, callees=()) -> tuple[KernelPlan, str | None]:
    """``kplan`` (whose device functions, called directly or not, are ``callees``) with
    :class:`~migrate.ir.loops.FreeGrid` when the proof holds; else ``kplan`` and the reason (None when
    the kernel does not read ``gridDim`` at all: nothing to free)."""
    if not any(isinstance(n, m.Builtin) and n.var == "gridDim" for st in _all_stmts(kplan.regions)
               for n in m.walk(st)):
        return kplan, None
    try:
        grid, loop = _prove(kplan, _pure_functions(callees))
    except _Refused as exc:
        return kplan, str(exc)
    return dataclasses.replace(_widen_index(kplan, loop), free_grid=grid), None


#: 32-bit loop indices and the type the freed grid's loop counts in.
_WIDER = {"int32": "int64", "uint32": "uint64"}


def _widen_index(kplan: KernelPlan, loop: m.For) -> KernelPlan:
    """``kplan`` with the grid-stride ``loop``'s index counted in 64 bits where the CUDA's is 32:
    every element the CUDA loop reached without wrapping, the wide loop reaches, and it cannot
    wrap at the larger stride of the freed grid."""
    (decl,) = loop.init.decls
    wide = _WIDER.get(decl.type.dtype) if isinstance(decl.type, m.Scalar) else None
    if wide is None:
        return kplan
    t = m.Scalar(wide)

    def retype(node):
        if isinstance(node, m.Ref) and node.name == decl.name:
            return dataclasses.replace(node, type=t)
        return m.map_children(node, retype)

    init = m.Cast(t, decl.init, "implicit", t, decl.init.span)
    widened = dataclasses.replace(retype(loop), init=dataclasses.replace(
        loop.init, decls=(dataclasses.replace(decl, type=t, init=init),)))

    def swap(node):
        return widened if node is loop else m.map_children(node, swap)

    regions = tuple(dataclasses.replace(r, before=tuple(swap(st) for st in r.before))
                    if isinstance(r, BlockReduce) else r for r in kplan.regions)
    return dataclasses.replace(kplan, regions=regions)


def _all_stmts(regions):
    for r in regions:
        if isinstance(r, BlockReduce):
            yield from r.prefix + r.before + (m.ExprStmt(r.value, r.span),) + r.after
        elif hasattr(r, "stmts"):
            yield from r.stmts
        else:
            yield from _all_stmts(getattr(r, "then", ()) + getattr(r, "other", ()) + getattr(r, "body", ()))


def _pure_functions(callees) -> set[str]:
    """The device functions whose value depends on their arguments alone: no thread or block
    index, no store but to their own scalars, no call but to math and such functions."""
    table = {f.name: f for f in callees}
    pure: set[str] = set()
    changed = True
    while changed:
        changed = False
        for f in callees:
            if f.name in pure or f.body is None:
                continue
            nodes = list(m.walk(f.body))
            if all(not (isinstance(n, m.Builtin) and n.var not in ("warpSize", "blockDim"))
                   and not (isinstance(n, m.Assign) and not (isinstance(n.target, m.Ref) and n.target.kind == "local"))
                   and not (isinstance(n, m.VarDecl) and n.storage != "local")
                   and not (isinstance(n, m.Ref) and n.kind in ("shared", "global"))
                   and not isinstance(n, m.MethodCall)
                   and not (isinstance(n, m.Call) and n.kind not in ("math", "conversion")
                            and not (n.kind == "device" and n.callee in pure and n.callee in table))
                   for n in nodes):
                pure.add(f.name)
                changed = True
    return pure


def _prove(kplan: KernelPlan, pure: set[str]) -> tuple[FreeGrid, m.For]:
    reduces = [r for r in kplan.regions if isinstance(r, BlockReduce)]
    others = [r for r in kplan.regions if not isinstance(r, BlockReduce) and not (isinstance(r, Phase) and not r.stmts)]
    if others:
        raise _Refused(f"line {others[0].span.line}: the kernel runs code besides its block reduction")
    if len(reduces) != 1:
        raise _Refused(f"line {reduces[-1].span.line}: the kernel does more than one block reduction")
    r = reduces[0]
    if r.per_warp or r.pair_value is not None:
        raise _Refused(f"line {r.span.line}: the reduction is per warp, not over the block")
    atomics = _after(r)
    acc = strip_casts(r.value)
    if not (isinstance(acc, m.Ref) and acc.kind == "local"):
        raise _Refused(f"line {r.span.line}: the lanes' value is not an accumulator variable")
    loop = _lanes(r, acc.name, lane_aliases(kplan.fn), pure)
    _check_buffers(kplan.fn, loop, atomics)
    return FreeGrid(r.op, tuple(sorted({c.callee for c in atomics})),
                    tuple(sorted({_address_root(c.args[0]).name for c in atomics})), loop.span), loop


# -- before the tree: the accumulator, the stride, one grid-stride loop ----------------------------

def _lanes(r: BlockReduce, acc: str, lanes: set[str], pure: set[str]) -> m.For:
    strides: set[str] = set()
    starts: set[str] = set()
    loops: list[m.For] = []
    declared = False
    for st in r.before:
        if isinstance(st, m.For):
            loops.append(st)
            continue
        decls = st.decls if isinstance(st, m.DeclStmt) else ()
        if len(decls) != 1:
            raise _Refused(f"line {st.span.line}: the lanes run more than a grid-stride loop before the tree")
        d = decls[0]
        if d.name == acc:
            value = const_value(d.init) if d.init is not None else None
            if not REDUCTIONS[r.op].is_identity(d.type, value):
                raise _Refused(f"line {d.span.line}: '{acc}' starts at {_text(d.init)}, not the identity of "
                               f"the {r.op}")
            declared = True
        elif d.init is not None and _grid_stride(d.init):
            strides.add(d.name)
        elif d.init is not None and _global_index(d.init, lanes):
            starts.add(d.name)
        else:
            raise _Refused(f"line {d.span.line}: the lanes declare '{d.name}' before the loop")
    if not declared:
        raise _Refused(f"line {r.span.line}: '{acc}' is not declared with a value before the loop")
    if len(loops) != 1:
        raise _Refused(f"line {r.span.line}: the lanes run {len(loops)} loops, not one grid-stride loop")
    loop = loops[0]
    var = _start(loop, lanes, starts)
    _step(loop, var, strides)
    _bound(loop, var)
    uses = [n for n in m.walk(loop.body) if isinstance(n, m.Ref) and n.name in strides]
    if uses:
        raise _Refused(f"line {uses[0].span.line}: the stride '{uses[0].name}' is used other than as the step")
    _body(loop, var, acc, r.op, pure)
    return loop


def _is_dim(e, var: str) -> bool:
    e = strip_int_casts(e)
    return isinstance(e, m.Builtin) and e.var == var and e.dim == "x"


def _product(e, a: str, b: str) -> bool:
    e = strip_int_casts(e)
    return isinstance(e, m.Binary) and e.op == "*" and (
        (_is_dim(e.lhs, a) and _is_dim(e.rhs, b)) or (_is_dim(e.lhs, b) and _is_dim(e.rhs, a)))


def _grid_stride(e) -> bool:
    """``blockDim.x * gridDim.x`` (either order, through integer casts)."""
    return _product(e, "blockDim", "gridDim")


def _global_index(e, lanes: set[str]) -> bool:
    """``blockIdx.x * blockDim.x + threadIdx.x`` (any order, through integer casts)."""
    e = strip_int_casts(e)
    return isinstance(e, m.Binary) and e.op == "+" and any(
        _product(x, "blockIdx", "blockDim") and is_lane(strip_int_casts(y), lanes)
        for x, y in ((e.lhs, e.rhs), (e.rhs, e.lhs)))


def _start(loop: m.For, lanes: set[str], starts: set[str]) -> str:
    """The loop's index, declared at the lane's global index (or a local holding it, ``starts``)."""
    init = loop.init
    decls = init.decls if isinstance(init, m.DeclStmt) else ()
    if len(decls) != 1 or decls[0].init is None:
        raise _Refused(f"line {loop.span.line}: the loop does not declare its index")
    e = strip_int_casts(decls[0].init)
    if not (_global_index(e, lanes) or (isinstance(e, m.Ref) and e.name in starts)):
        raise _Refused(f"line {loop.span.line}: the loop does not start at blockIdx.x * blockDim.x + threadIdx.x")
    return decls[0].name


def _step(loop: m.For, var: str, strides: set[str]) -> None:
    s = loop.step
    ok = isinstance(s, m.Assign) and s.op == "+=" and isinstance(s.target, m.Ref) and s.target.name == var
    value = strip_int_casts(s.value) if ok else None
    if not (ok and (_grid_stride(value) or (isinstance(value, m.Ref) and value.name in strides))):
        raise _Refused(f"line {loop.span.line}: the loop does not step by blockDim.x * gridDim.x")


def _bound(loop: m.For, var: str) -> None:
    c = loop.cond
    if not (isinstance(c, m.Binary) and c.op == "<" and isinstance(strip_int_casts(c.lhs), m.Ref)
            and strip_int_casts(c.lhs).name == var and same_in_every_block(c.rhs)):
        raise _Refused(f"line {loop.span.line}: the loop's bound is not '{var} < <the same in every block>'")




def _body(loop: m.For, var: str, acc: str, op: str, pure: set[str]) -> None:
    stmts = loop.body.stmts if isinstance(loop.body, m.Block) else (loop.body,)
    known = {var}  # the element's index and the values of the element declared so far
    combines = 0
    for st in stmts:
        if isinstance(st, m.DeclStmt) and all(d.init is not None and d.name != acc for d in st.decls):
            for d in st.decls:
                _of_element(d.init, known, acc, pure)
                known.add(d.name)
            continue
        found = _combine(st, acc)
        if found is None:
            raise _Refused(f"line {st.span.line}: the loop body is not values of the element and one "
                           f"combine into '{acc}'")
        lane_op, g = found
        if lane_op != op:
            raise _Refused(f"line {st.span.line}: the lanes combine with {lane_op}, the tree with {op}")
        _of_element(g, known, acc, pure)
        combines += 1
    if combines != 1:
        raise _Refused(f"line {loop.span.line}: the loop combines {combines} values into '{acc}', not one")


def _of_element(e, known: set[str], acc: str, pure: set[str]) -> None:
    """``e`` is a value of the element alone: the same whichever lane and block takes it."""
    for n in m.walk(e):
        line = getattr(n, "span", None) and n.span.line
        if isinstance(n, m.Builtin) and n.var == "gridDim":
            raise _Refused(f"line {line}: gridDim.x is used other than as the grid-stride step")
        if isinstance(n, m.Builtin) and n.var == "blockIdx":
            raise _Refused(f"line {line}: blockIdx.x is used other than in the grid-stride start")
        if isinstance(n, m.Builtin) and n.var != "warpSize":
            raise _Refused(f"line {line}: the element's value depends on {n.var}.{n.dim}")
        if isinstance(n, m.Ref) and n.name == acc:
            raise _Refused(f"line {line}: the element's value reads the accumulator '{acc}'")
        if isinstance(n, m.Ref) and n.kind not in BLOCK_INVARIANT_REFS and n.name not in known:
            raise _Refused(f"line {line}: the element's value reads '{n.name}', not the element's own")
        if isinstance(n, (m.Assign, m.MethodCall)) or (isinstance(n, m.Unary) and n.op in ("++", "--", "&")):
            raise _Refused(f"line {line}: the element's value has side effects")
        if isinstance(n, m.Call) and (n.kind not in _PURE_CALLS or (n.kind == "device" and n.callee not in pure)
                                      or any(isinstance(a.type, m.Pointer) for a in n.args)):
            raise _Refused(f"line {line}: the element's value calls '{n.callee}'")


def _combine(st, acc: str) -> tuple[str, m.Expr] | None:
    """(operation, g) when ``st`` is ``acc = acc OP g`` in a spelling warp_trees.combine_op knows."""
    if not (isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and _is_ref(st.expr.target, acc)):
        return None
    a = st.expr
    v = strip_casts(a.value)
    candidates = []
    if a.op == "+=":
        candidates = [a.value]
    elif isinstance(v, m.Binary):
        candidates = [v.lhs, v.rhs]
    elif isinstance(v, m.Call) and len(v.args) == 2:
        candidates = list(v.args)
    elif isinstance(v, m.Ternary) and isinstance(strip_casts(v.cond), m.Binary):
        candidates = [strip_casts(v.cond).lhs, strip_casts(v.cond).rhs]
    for g in candidates:
        if _is_ref(g, acc):
            continue
        key = m.dump(strip_casts(g))
        named = m.Ref(_G, "local", g.type, g.span)
        op = combine_op(_named(st, key, named), acc, _G)
        if op is not None:
            return op, g
    return None


def _named(node, key: str, ref: m.Ref):
    """``node`` with every subexpression that is ``key`` (through casts) replaced by ``ref``."""
    if isinstance(node, _EXPRS) and m.dump(strip_casts(node)) == key:
        return ref
    return m.map_children(node, lambda c: _named(c, key, ref))


def _is_ref(e, name: str) -> bool:
    e = strip_casts(e)
    return isinstance(e, m.Ref) and e.name == name


# -- after the tree: the block total into atomics --------------------------------------------------

def _after(r: BlockReduce) -> list[m.Call]:
    total = f"{r.shared}_total"
    copies = {total}
    atomics = []
    want = REDUCTIONS[r.op].atomic
    for st in r.after:
        if isinstance(st, m.DeclStmt) and all(d.init is not None and _copy_of(d.init, copies, d.type)
                                              for d in st.decls):
            copies.update(d.name for d in st.decls)
            continue
        if isinstance(st, m.ExprStmt) and isinstance(st.expr, m.Assign) and st.expr.op == "=" and \
                isinstance(st.expr.target, m.Ref) and st.expr.target.kind == "local" and \
                _copy_of(st.expr.value, copies, st.expr.target.type):
            copies.add(st.expr.target.name)
            continue
        call = st.expr if isinstance(st, m.ExprStmt) else None
        if not (isinstance(call, m.Call) and call.kind == "atomic"):
            stores = [n for n in m.walk(st) if isinstance(n, m.Assign) and not isinstance(n.target, m.Ref)]
            if stores:
                what = "its total" if any(_copy_of(n.value, copies, r.dtype) for n in stores) else "a value"
                raise _Refused(f"line {st.span.line}: the block stores {what} (an output that depends on the "
                               f"grid), it does not combine it with {want}")
            raise _Refused(f"line {st.span.line}: after the tree the block does more than {want} of its total")
        if call.callee != want:
            raise _Refused(f"line {st.span.line}: {call.callee} after a {r.op} tree (not {want})")
        if len(call.args) != 2 or not _copy_of(call.args[1], copies, r.dtype):
            raise _Refused(f"line {st.span.line}: {call.callee} combines something other than the block's total")
        target = call.args[0]
        root = _address_root(target)
        if root is None:
            raise _Refused(f"line {st.span.line}: the address {call.callee} writes is not the same in every "
                           "block and lane")
        pointee = target.type.pointee if isinstance(target.type, m.Pointer) else None
        if pointee != r.dtype:
            raise _Refused(f"line {st.span.line}: {call.callee} on {_text_type(pointee)} of a "
                           f"{_text_type(r.dtype)} total")
        atomics.append(call)
    if not atomics:
        raise _Refused(f"line {r.span.line}: the block's total does not leave the block through {want}")
    return atomics


def _copy_of(e, copies: set[str], dtype) -> bool:
    e = e.operand if isinstance(e, m.Cast) and e.target == e.operand.type else e
    return isinstance(e, m.Ref) and e.name in copies and e.type == dtype


def _address_root(target) -> m.Ref | None:
    """The pointer parameter an address (``out``, ``&out[k]``, ``out + k``) points into when the
    address is the same in every block and lane (its offsets uniform), else None."""
    pointers = [n for n in m.walk(target) if isinstance(n, m.Ref) and isinstance(n.type, m.Pointer)]
    if len(pointers) != 1 or pointers[0].kind != "param":
        return None
    root = pointers[0]
    for n in m.walk(target):
        if isinstance(n, m.Index) and not _is_ref(n.base, root.name):
            return None  # an offset read from memory
    offsets = [n.index for n in m.walk(target) if isinstance(n, m.Index)] + [
        side for n in m.walk(target) if isinstance(n, m.Binary) for side in (n.lhs, n.rhs)
        if not isinstance(side.type, m.Pointer)]
    return root if all(same_in_every_block(o) for o in offsets) else None


# -- the buffers: what the atomics write is never read ----------------------------------------------

def _check_buffers(fn: m.Function, loop: m.For, atomics: list[m.Call]) -> None:
    params = {p.name: p for p in fn.params}
    written = {_address_root(c.args[0]).name for c in atomics}
    read = sorted({m.access_root(n.base).name for n in m.walk(loop.body)
                   if isinstance(n, m.Index) and m.access_root(n.base) is not None})
    for name in read:
        if name in written:
            raise _Refused(f"the loop reads '{name}', which the atomics write")
        for w in sorted(written):
            restrict = [getattr(params[x].type, "restrict", False) for x in (name, w) if x in params]
            if not any(restrict):
                raise _Refused(f"'{name}' may alias '{w}', which the atomics write (neither is __restrict__)")


def _text(e) -> str:
    v = const_value(e) if e is not None else None
    return str(v) if v is not None else "a value"


def _text_type(t) -> str:
    return t.dtype if isinstance(t, m.Scalar) else str(t)
