"""Device functions that are ``atomicCAS`` loops computing a maximum, a minimum or a sum, as
calls of the atomic they spell out. Real code writes the float ``atomicMax`` CUDA lacks this way,
in one of two shapes (the pool's hausdorff, lebesgue, michalewicz; CUDA's programming guide):

    unsigned* ptr = (unsigned*)addr;                 int* p = (int*)addr;
    unsigned ret = __nv_atomic_load_n(ptr, ...);     int old = *p, assumed;
    while (value > __uint_as_float(ret)) {           do {
      unsigned old = ret;                              assumed = old;
      if ((ret = atomicCAS(ptr, old,                   old = atomicCAS(p, assumed,
             __float_as_uint(value))) == old)              __float_as_int(fmaxf(val, __int_as_float(assumed))));
        break;                                       } while (assumed != old);
    }                                                return __int_as_float(old);
    return __uint_as_float(ret);

Both leave the larger value in ``*addr`` and return the value it held before, as ``atomicMax``
does; a call of such a function becomes ``atomicMax(addr, value)`` (``T.atomic_max``), whose
order of updates CUDA leaves as open as the loop's. The function's loads, casts and bit
reinterpretations (a view of the float buffer as integers, which no TileLang form has) go with it.
Anything else in the function (another store, a second CAS) keeps it as it is.

The first shape reads before it writes: a value that does not improve on the one held makes no
atomic at all, which is what keeps such a kernel fast when most threads lose (michalewicz: a
minimum over millions of points). A call of it whose result is not used keeps that read:
``{ v = value; if (v > *addr) atomicMax(addr, v); }`` (the held value only ever grows, so a
value the read finds no larger could not have changed it; a plain variable needs no copy).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir import names
from ...ir.visit import Transformer, expand_statements

#: reinterpretations between a float and the integer of its bits, read through as the same value
BITS = ("__int_as_float", "__uint_as_float", "__float_as_int", "__float_as_uint", "__longlong_as_double",
        "__double_as_longlong")
LOADS = ("__nv_atomic_load_n", "__ldg", "__ldcg", "__ldcv")
#: the combining calls of the do-while shape
COMBINE = {"fmaxf": "atomicMax", "fmax": "atomicMax", "max": "atomicMax",
           "fminf": "atomicMin", "fmin": "atomicMin", "min": "atomicMin"}


def _peel(e):
    """``e`` without casts and bit reinterpretations."""
    while True:
        if isinstance(e, m.Cast):
            e = e.operand
        elif isinstance(e, m.Call) and e.callee.removeprefix("std::") in BITS and len(e.args) == 1:
            e = e.args[0]
        else:
            return e


def _ref(e, names) -> str | None:
    e = _peel(e)
    return e.name if isinstance(e, m.Ref) and e.name in names else None


def _stmts(s) -> tuple:
    return s.stmts if isinstance(s, m.Block) else (s,)


class _Shape:
    """What one CAS-loop function holds: its address aliases, the locals with the bits of the
    element, the loop."""

    def __init__(self, fn: m.Function) -> None:
        self.address, self.value = fn.params[0].name, fn.params[1].name
        self.aliases = {self.address}
        self.bits: set[str] = set()  # locals holding the element's bits
        self.loop = None

    def decl(self, d: m.VarDecl) -> bool:
        if d.init is None:
            self.bits.add(d.name)
            return True
        init = _peel(d.init)
        if isinstance(d.type, m.Pointer) and _ref(init, self.aliases):
            self.aliases.add(d.name)
            return True
        if self._load(init):
            self.bits.add(d.name)
            return True
        return False

    def _load(self, e) -> bool:
        if isinstance(e, m.Unary) and e.op == "*":
            return _ref(e.operand, self.aliases) is not None
        if isinstance(e, m.Index):
            return _ref(e.base, self.aliases) is not None and isinstance(e.index, m.IntLit) and e.index.value == 0
        return isinstance(e, m.Call) and e.callee in LOADS and bool(e.args) and _ref(e.args[0], self.aliases) is not None

    def cas(self, e) -> tuple[str, m.Expr] | None:
        """(the compared local, the new value) of ``atomicCAS(alias, local, new)``."""
        e = _peel(e)
        if isinstance(e, m.Call) and e.callee == "atomicCAS" and len(e.args) == 3 \
                and _ref(e.args[0], self.aliases) is not None:
            seen = _ref(e.args[1], self.bits)
            return (seen, e.args[2]) if seen is not None else None
        return None


def cas_loop_op(fn: m.Function) -> str | None:
    """``atomicMax``, ``atomicMin`` or ``atomicAdd`` when ``fn`` is such a loop; None otherwise."""
    found = _cas_loop(fn)
    return found[0] if found is not None else None


def _cas_loop(fn: m.Function) -> tuple[str, bool] | None:
    """(the atomic ``fn`` computes, whether it reads the held value before any CAS)."""
    if len(fn.params) != 2 or fn.body is None or not isinstance(fn.params[0].type, m.Pointer) \
            or not isinstance(fn.params[1].type, m.Scalar) or fn.params[0].type.pointee != fn.params[1].type:
        return None
    shape = _Shape(fn)
    op, reads_first = None, False
    for st in fn.body.stmts:
        if isinstance(st, m.DeclStmt) and all(shape.decl(d) for d in st.decls):
            continue
        if isinstance(st, (m.While, m.DoWhile)) and op is None:
            shape.bits.update(d.name for n in m.walk(st.body) if isinstance(n, m.DeclStmt) for d in n.decls)
            op = _while(st, shape) if isinstance(st, m.While) else _do_while(st, shape)
            reads_first = isinstance(st, m.While)
            if op is None:
                return None
            continue
        if isinstance(st, m.Return) and op is not None and (st.value is None or _ref(st.value, shape.bits)):
            continue
        return None
    return (op, reads_first) if op is not None else None


def _while(loop: m.While, shape: _Shape) -> str | None:
    """``while (value > bits(ret)) { old = ret; if ((ret = atomicCAS(p, old, bits(value))) == old) break; }``"""
    c = _peel(loop.cond)
    if not (isinstance(c, m.Binary) and c.op in ("<", ">", "<=", ">=")):
        return None
    if _ref(c.lhs, {shape.value}) and _ref(c.rhs, shape.bits):
        op = "atomicMax" if c.op in (">", ">=") else "atomicMin"
    elif _ref(c.rhs, {shape.value}) and _ref(c.lhs, shape.bits):
        op = "atomicMax" if c.op in ("<", "<=") else "atomicMin"
    else:
        return None
    body = list(_stmts(loop.body))
    if len(body) == 2 and isinstance(body[1], m.If) and isinstance(_peel(body[1].cond), m.Binary) \
            and isinstance(_peel(_peel(body[1].cond).lhs), m.Assign):
        # if ((ret = atomicCAS(...)) == old) break; as the statements one_statement_each makes of it
        test = _peel(body[1].cond)
        store = _peel(test.lhs)
        body[1:] = [m.ExprStmt(store, store.span),
                    m.If(m.Binary("==", store.target, test.rhs, test.type, test.span), body[1].then, body[1].other,
                         body[1].span)]
    if len(body) != 3 or not isinstance(body[0], m.DeclStmt) or not isinstance(body[1], m.ExprStmt) \
            or not isinstance(body[2], m.If):
        return None
    (old,) = body[0].decls if len(body[0].decls) == 1 else (None,)
    if old is None or old.init is None or _ref(old.init, shape.bits) is None:
        return None
    store, branch = body[1].expr, body[2]
    if not (isinstance(store, m.Assign) and store.op == "=" and _ref(store.target, shape.bits)):
        return None
    test = _peel(branch.cond)
    if branch.other is not None or not (isinstance(test, m.Binary) and test.op == "==") \
            or not all(isinstance(s, m.Break) for s in _stmts(branch.then)) \
            or {_ref(test.lhs, shape.bits), _ref(test.rhs, shape.bits)} != {store.target.name, old.name}:
        return None
    cas = shape.cas(store.value)
    return op if cas is not None and cas[0] == old.name and _ref(cas[1], {shape.value}) else None


def _do_while(loop: m.DoWhile, shape: _Shape) -> str | None:
    """``do { assumed = old; old = atomicCAS(p, assumed, bits(f(val, bits(assumed)))); } while (assumed != old);``"""
    body = _stmts(loop.body)
    if len(body) != 2 or not all(isinstance(s, m.ExprStmt) and isinstance(s.expr, m.Assign) and s.expr.op == "="
                                 for s in body):
        return None
    first, second = body[0].expr, body[1].expr
    assumed, old = _ref(first.target, shape.bits), _ref(second.target, shape.bits)
    if assumed is None or old is None or _ref(first.value, {old}) is None:
        return None
    cas = shape.cas(second.value)
    if cas is None or cas[0] != assumed:
        return None
    c = _peel(loop.cond)
    if not (isinstance(c, m.Binary) and c.op == "!=" and {_ref(c.lhs, shape.bits), _ref(c.rhs, shape.bits)} == {assumed, old}):
        return None
    new = _peel(cas[1])
    if isinstance(new, m.Call) and new.callee.removeprefix("std::") in COMBINE and len(new.args) == 2:
        pair = {_ref(new.args[0], {shape.value}), _ref(new.args[1], {assumed})} | \
            {_ref(new.args[1], {shape.value}), _ref(new.args[0], {assumed})}
        return COMBINE[new.callee.removeprefix("std::")] if {shape.value, assumed} <= pair else None
    if isinstance(new, m.Binary) and new.op == "+":
        pair = {_ref(new.lhs, {shape.value, assumed}), _ref(new.rhs, {shape.value, assumed})}
        return "atomicAdd" if pair == {shape.value, assumed} else None
    return None


class _Calls(Transformer):
    def __init__(self, ops: dict[str, str]) -> None:
        self.ops = ops

    def leave_Call(self, node: m.Call):
        op = self.ops.get(node.callee) if node.kind == "device" else None
        if op is None or len(node.args) != 2:
            return node
        return m.Call(op, node.args, "atomic", (), node.type, node.span)


#: the comparison that lets a read-first loop's value through
_IMPROVES = {"atomicMax": ">", "atomicMin": "<"}


def _guarded(fn: m.Function, read_first: dict[str, str]):
    """The statement-level calls of read-first loops as ``{ v = value; if (v > *addr) call(addr, v); }``."""
    taken = names.unit_names(m.TranslationUnit("", (fn,), (), (), ()))

    def split(st: m.ExprStmt):
        call = st.expr
        if not (isinstance(call, m.Call) and call.kind == "device" and call.callee in read_first
                and len(call.args) == 2):
            return None
        op = read_first[call.callee]
        addr, value = call.args
        held = addr.operand if isinstance(addr, m.Unary) and addr.op == "&" else \
            m.Unary("*", addr, False, value.type, addr.span)
        guard = [] if isinstance(value, m.Ref) else \
            [m.DeclStmt((m.VarDecl(names.fresh("improving", taken), value.type, "local", False, value, st.span),),
                        st.span)]
        v = value if not guard else m.Ref(guard[0].decls[0].name, "local", value.type, value.span)
        return [*guard,
                m.If(m.Binary(_IMPROVES[op], v, held, m.Scalar("bool"), st.span),
                     m.ExprStmt(dataclasses.replace(call, args=(addr, v)), st.span), None, st.span)]
    return split


def cas_loop_atomics(fn: m.Function, device: dict[str, m.Function]) -> m.Function:
    """``fn`` with each call of a CAS-loop device function as the atomic it computes."""
    found = {name: loop for name, f in device.items() for loop in (_cas_loop(f),) if loop is not None}
    if not found or fn.body is None:
        return fn
    ops = {name: op for name, (op, _) in found.items()}
    read_first = {name: op for name, (op, first) in found.items() if first and op in _IMPROVES}
    body = fn.body
    if read_first:
        body = expand_statements(body, _guarded(fn, read_first))
    body = _Calls(ops).transform(body)
    left = {n.callee for n in m.walk(body) if isinstance(n, m.Call) and n.kind == "device"}
    return dataclasses.replace(fn, body=body, calls=tuple(c for c in fn.calls if c not in ops or c in left))
