"""Local pointers that view a buffer (``const float* row = x + r*n``) folded into the buffer's
index (``row[j]`` → ``x[r*n + j]``); one that reads a shared array, or a kernel's buffer
parameter, as another element type indexes a typed view of it (:class:`TypedViews`: ``T.view``
of the array, ``T.decl_buffer(..., data=x.data)`` of the parameter); a local pointer that is not
a fixed view is reported."""
from __future__ import annotations

import dataclasses
import math

from ...compat.catalog import CACHED_LOADS
from ...dtypes import SIZES
from ...ir import model as m
from ...ir.exprs import assigned_names, const_value, strip_implicit_casts
from ...ir.names import fresh
from ...ir.visit import Transformer


@dataclasses.dataclass(frozen=True)
class Alias:
    buffer: str  # the parameter it points into
    offset: m.Expr | None
    # a view reading a global buffer's elements as another type of their size ((float*)&buf[k] on
    # an int buffer): (the bit copy that reads one, the one that writes one, the buffer's dtype)
    bits: tuple[str, str, str] | None = None


#: (a buffer's dtype, the dtype a pointer reads its elements as) -> the bit copies that read and
#: write one (compat table): TileLang has no view of a kernel parameter (T.view of one breaks its
#: CPU host wrapper), so each access copies the element's bits
BIT_COPIES = {
    ("int32", "float32"): ("__int_as_float", "__float_as_int"),
    ("uint32", "float32"): ("__uint_as_float", "__float_as_uint"),
    ("float32", "int32"): ("__float_as_int", "__int_as_float"),
    ("float32", "uint32"): ("__float_as_uint", "__uint_as_float"),
    ("int64", "float64"): ("__longlong_as_double", "__double_as_longlong"),
    ("float64", "int64"): ("__double_as_longlong", "__longlong_as_double"),
}


class TypedViews:
    """Shared arrays read as another element type (``int* idx = (int*)&scores[64];`` on a
    ``__shared__ float scores[...]``): one view buffer per (array, element type), declared
    after the array as a shared ``VarDecl`` whose ``init`` names the array it views (the
    emitter's ``T.view``). Offsets are counted in the view's elements."""

    def __init__(self, fn: m.Function, buffers: dict[str, str], taken: set[str]):
        self.fn, self.buffers, self.taken = fn, buffers, taken
        self._arrays: dict[str, m.VarDecl] | None = None  # found on the first view asked for
        self.made: dict[tuple[str, str], m.VarDecl] = {}  # (array, dtype) -> the view's declaration
        self.root: dict[str, str] = {}  # view -> the array it views
        #: why the last view of a buffer parameter asked for has none (an offset that is no whole
        #: number of the view's elements), for :func:`why_not_a_view`
        self.refused: str | None = None

    @property
    def arrays(self) -> dict[str, m.VarDecl]:
        """The shared arrays' declarations, by name."""
        if self._arrays is None:
            self._arrays = {n.name: n for n in m.walk(self.fn.body) if isinstance(n, m.VarDecl)
                            and self.buffers.get(n.name) == "shared"} if self.fn.body else {}
        return self._arrays

    def view(self, alias: "Alias", inner: m.Scalar, outer: m.Scalar | m.TemplateType, volatile: bool,
             span) -> "Alias | None":
        """``alias`` (into a shared array or a view of one, counted in ``inner`` elements) read
        as ``outer`` elements; None where the sizes do not divide. ``outer`` may be a template's
        type parameter (``T* tile = reinterpret_cast<T*>(smem)``) where the view starts at
        the start of an ``extern __shared__`` array: its size, known per instance, is the
        emitter's to count."""
        array = self.root.get(alias.buffer, alias.buffer)
        decl = self.arrays.get(array)
        if isinstance(outer, m.TemplateType):
            if decl is None or decl.storage != "extern_shared" \
                    or not isinstance(decl.type, m.Array) or not isinstance(decl.type.element, m.Scalar):
                return None
            offset = alias.offset
            if offset is not None:  # (T*)&sh[blockDim.y << 5]: that many bytes on, in T's
                isize = SIZES.get(inner.dtype)
                itype = offset.type if isinstance(offset.type, m.Scalar) else m.Scalar("int32")
                nbytes = m.Binary("*", offset, m.IntLit(isize, str(isize), itype, span), itype, span) if isize else None
                # a whole number of 16 bytes, so of any element type's size: the quotient is exact
                if nbytes is None or exact_quotient(nbytes, 16) is None:
                    return None
                offset = m.Binary("/", nbytes, m.SizeOf(f"sizeof({outer.name})", None, itype, span, outer), itype, span)
            key = (array, outer.name)
            if key not in self.made:
                self.made[key] = m.VarDecl(fresh(f"{array}_{outer.name}", self.taken),
                                           m.Array(outer, None, "", decl.type.volatile or volatile),
                                           decl.storage, False, m.Ref(array, "shared", decl.type, span), span)
                self.root[self.made[key].name] = array
                self.buffers[self.made[key].name] = "shared"
            return Alias(self.made[key].name, offset)
        isize, osize = SIZES.get(inner.dtype), SIZES.get(outer.dtype)
        if decl is None or not isize or not osize or not isinstance(decl.type, m.Array) \
                or not isinstance(decl.type.element, m.Scalar):
            return None
        offset = alias.offset
        if offset is not None and isize != osize:
            itype = offset.type if isinstance(offset.type, m.Scalar) else m.Scalar("int32")
            big, small = max(isize, osize), min(isize, osize)
            ratio = m.IntLit(big // small, str(big // small), itype, span)
            offset = m.Binary("*" if isize > osize else "/", offset, ratio, itype, span)
        if outer.dtype == decl.type.element.dtype:
            return Alias(array, offset)
        key = (array, outer.dtype)
        if key not in self.made:
            name = fresh(f"{array}_{outer.dtype}", self.taken)
            asize = SIZES.get(decl.type.element.dtype)
            extent = decl.type.extent
            extent = extent * asize // osize if extent is not None and asize and extent * asize % osize == 0 else None
            if extent is None and decl.storage != "extern_shared":
                return None
            self.made[key] = m.VarDecl(name, m.Array(m.Scalar(outer.dtype), extent, "", decl.type.volatile or volatile),
                                       decl.storage, False, m.Ref(array, "shared", decl.type, span), span)
            self.root[name] = array
            self.buffers[name] = "shared"
        return Alias(self.made[key].name, offset)

    def of_param(self, alias: "Alias", inner: m.Scalar, outer: m.Scalar, volatile: bool, span) -> "Alias | None":
        """``alias`` (into a kernel's buffer parameter or a view of one, counted in ``inner``
        elements) read as ``outer`` elements (``unsigned long* buf = (unsigned long*)ptr;`` on a
        ``char* ptr``): a view over the parameter's memory with the other element type (a
        declaration of storage ``shared`` whose ``init`` is a reference of kind ``param`` to the
        parameter: the emitter's ``T.decl_buffer(..., data=ptr.data)``), its extent the
        parameter's bytes in whole ``outer`` elements. None (with :attr:`refused` saying why
        where it is the offset) where the offset is no provable whole number of ``outer``
        elements (the CUDA access would be misaligned), or outside a kernel."""
        param = self.root.get(alias.buffer, alias.buffer)
        held = next((p.type.pointee for p in self.fn.params if p.name == param and isinstance(p.type, m.Pointer)),
                    None)
        isize, osize = SIZES.get(inner.dtype), SIZES.get(outer.dtype)
        if self.fn.kind != "global" or not isinstance(held, m.Scalar) or not SIZES.get(held.dtype) \
                or not isize or not osize:
            return None
        offset = alias.offset
        if offset is not None and isize != osize:
            if isize > osize:
                itype = offset.type if isinstance(offset.type, m.Scalar) else m.Scalar("int32")
                ratio = m.IntLit(isize // osize, str(isize // osize), itype, span)
                offset = m.Binary("*", offset, ratio, itype, span)
            else:
                offset = exact_quotient(offset, osize // isize) if osize % isize == 0 else None
                if offset is None:
                    self.refused = (f"it reads a buffer of {inner} as {outer} from an offset that is not a whole "
                                    f"number of {outer} elements (a misaligned view)")
                    return None
        if outer.dtype == held.dtype:
            return Alias(param, offset)
        key = (param, outer.dtype)
        if key not in self.made:
            name = fresh(f"{param}_{outer.dtype}", self.taken)
            self.made[key] = m.VarDecl(name, m.Array(m.Scalar(outer.dtype), None, "", volatile), "shared", False,
                                       m.Ref(param, "param", m.Pointer(held), span), span)
            self.root[name] = param
            self.buffers[name] = "param"
        return Alias(self.made[key].name, offset)

    def of_params(self) -> list[m.VarDecl]:
        """The views of buffer parameters, declared at the top of the kernel's body."""
        return [d for d in self.made.values() if d.init.kind == "param"]

    def row(self, e: m.Expr, span) -> "Alias | None":
        """``&cx[k][j]`` (or the row ``cx[k]``) of a ``__shared__`` array of several dimensions
        whose extents are known: the element it starts at in a flat view of the array (``cx_flat``,
        the same memory and element type in one dimension), the offset ``k * W + j``. A pointer
        into a row may index past it into the next (C's arrays are contiguous), which the flat view
        reads as CUDA does. None for any other expression."""
        indices = []
        while isinstance(e, m.Index):
            indices.insert(0, e.index)
            e = e.base
        if not (isinstance(e, m.Ref) and indices and isinstance(e.type, m.Array)
                and isinstance(e.type.element, m.Array)):
            return None
        decl = next((n for n in m.walk(self.fn.body) if isinstance(n, m.VarDecl) and n.name == e.name
                     and n.storage == "shared"), None) if self.fn.body else None
        if decl is None or not isinstance(decl.type, m.Array):
            return None
        extents, t = m.array_extents(decl.type), m.element_type(decl.type)
        if not isinstance(t, m.Scalar) or any(x is None for x in extents) or len(indices) > len(extents):
            return None
        key = (e.name, "flat")
        if key not in self.made:
            total = m.elements(decl.type)
            name = fresh(f"{e.name}_flat", self.taken)
            self.made[key] = m.VarDecl(name, m.Array(t, total, str(total), decl.type.volatile), decl.storage, False,
                                       m.Ref(e.name, "shared", decl.type, span), span)
            self.root[name] = e.name
            self.buffers[name] = "shared"
        offset = None
        for k, index in enumerate(indices):
            stride = math.prod(extents[k + 1:])
            itype = index.type if isinstance(index.type, m.Scalar) else m.Scalar("int32")
            term = index if stride == 1 else m.Binary("*", index, m.IntLit(stride, str(stride), itype, span), itype, span)
            offset = term if offset is None else m.Binary("+", offset, term, itype, span)
        return Alias(self.made[key].name, offset)

    def after(self, name: str) -> list[m.VarDecl]:
        """The views declared after array ``name``'s declaration."""
        return [d for (array, _), d in self.made.items() if array == name and d.init.kind != "param"]


def exact_quotient(e: m.Expr, k: int) -> m.Expr | None:
    """``e / k`` where ``e`` is provably a multiple of ``k`` (``i * 1048576`` over 4 is ``i *
    262144``; a sum of multiples term by term; a constant by its value), else None."""
    if k == 1:
        return e
    value = const_value(e)
    if isinstance(value, int) and not isinstance(value, bool):
        if value % k:
            return None
        t = e.type if isinstance(getattr(e, "type", None), m.Scalar) else m.Scalar("int32")
        return m.IntLit(value // k, str(value // k), t, e.span)
    if isinstance(e, m.Cast) and isinstance(e.type, m.Scalar):
        inner = exact_quotient(e.operand, k)
        return None if inner is None else dataclasses.replace(e, operand=inner)
    if isinstance(e, m.Binary) and e.op in ("+", "-"):
        lhs, rhs = exact_quotient(e.lhs, k), exact_quotient(e.rhs, k)
        return None if lhs is None or rhs is None else dataclasses.replace(e, lhs=lhs, rhs=rhs)
    if isinstance(e, m.Binary) and e.op == "*":
        lhs = exact_quotient(e.lhs, k)
        if lhs is not None:
            return dataclasses.replace(e, lhs=lhs)
        rhs = exact_quotient(e.rhs, k)
        return None if rhs is None else dataclasses.replace(e, rhs=rhs)
    if isinstance(e, m.Binary) and e.op == "<<" and isinstance(const_value(e.rhs), int) \
            and 0 <= const_value(e.rhs) < 63 and (1 << const_value(e.rhs)) % k == 0:
        factor = (1 << const_value(e.rhs)) // k  # x << 5 over 4: x * 8
        t = e.type if isinstance(e.type, m.Scalar) else m.Scalar("int32")
        return m.Binary("*", e.lhs, m.IntLit(factor, str(factor), t, e.span), t, e.span)
    if isinstance(e, m.Unary) and e.op == "-":
        inner = exact_quotient(e.operand, k)
        return None if inner is None else dataclasses.replace(e, operand=inner)
    return None


def view_buffers(fn: m.Function) -> dict[str, str]:
    """The buffers a pointer can view, name -> reference kind: the pointer parameters ("param"),
    the flat ``__shared__`` arrays ("shared"), a thread's own flat arrays ("local": ``float*
    L_b = L;`` on a ``float L[N]``) and the flat ``__device__`` arrays the body names ("global":
    ``volatile int* v_cover_row = cover_row;``)."""
    buffers = {p.name: "param" for p in fn.params if isinstance(p.type, m.Pointer)}
    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.Ref) and node.kind in ("global", "constant") and isinstance(node.type, m.Array) \
                and not isinstance(node.type.element, m.Array):
            buffers.setdefault(node.name, "global")
        elif isinstance(node, m.VarDecl) and isinstance(node.type, m.Array) \
                and not isinstance(node.type.element, m.Array):
            if node.storage in ("shared", "extern_shared"):
                buffers[node.name] = "shared"
            elif node.storage == "local":
                buffers[node.name] = "local"
    return buffers


def pointer_aliases(fn: m.Function) -> tuple[m.Function, dict[str, Alias], list[m.VarDecl]]:
    """Fold local pointers derived from buffer parameters into index expressions.

    Returns the rewritten function, the aliases found, and the pointer declarations that could
    not be folded (reassigned pointers, pointers into locals).
    """
    buffers = view_buffers(fn)
    assigned = {n.target.name for n in m.walk(fn.body) if isinstance(n, m.Assign)
                and isinstance(n.target, m.Ref)} if fn.body else set()
    aliases: dict[str, Alias] = {}
    unresolved: list[m.VarDecl] = []
    changed_after = _assigned_after(fn.body) if fn.body else {}
    taken = {n.name for n in m.walk(fn.body) if isinstance(n, (m.VarDecl, m.Ref))} if fn.body else set()
    views = TypedViews(fn, buffers, taken)
    snapshots: dict[str, m.VarDecl] = {}  # view -> the local holding its offset
    rows: dict[str, m.Index] = {}  # const float* pfx = b[0], read at constants in its row -> b[0]
    bit_reads: dict[int, tuple] = {}  # id of a bit copy reading a view's element -> (it, the copy writing one)
    nonnull: dict[str, m.Expr] = {}  # a view that may be null (c ? x + off : nullptr) -> when it is not

    def _truth(e) -> m.Expr | None:
        """The condition a test of a view that may be null reads (``p``, ``(bool)p``), else None."""
        e = strip_implicit_casts(e)
        return nonnull.get(e.name) if isinstance(e, m.Ref) else None

    class Fold(Transformer):
        def leave_Index(self, node):
            cast = _cast_index(node, buffers, aliases, views)
            if cast is not None:  # ((unsigned*)s_hist)[pos]: the view's element
                ref, offset = cast
                index = node.index if offset is None else m.Binary("+", offset, node.index, node.index.type, node.span)
                return m.Index(ref, index, node.type, node.span)
            base = node.base
            if isinstance(base, m.Ref) and base.name in rows:  # pfx[3] -> b[0][3]
                return m.Index(rows[base.name], node.index, node.type, node.span)
            if isinstance(base, m.Ref) and base.name in aliases:
                alias = aliases[base.name]
                if alias.bits is not None:  # px[i] on an int buffer: __int_as_float(buf[off + i])
                    return self.bit_read(alias, node)
                if alias.offset is None:
                    index = node.index
                elif isinstance(node.index, m.IntLit) and node.index.value == 0:  # p[0], *p, p->x: the offset
                    index = alias.offset
                else:
                    index = m.Binary("+", alias.offset, node.index, node.index.type, node.span)
                return dataclasses.replace(node, base=dataclasses.replace(base, name=alias.buffer,
                                                                          kind=buffers[alias.buffer]),
                                           index=index)
            return node

        def bit_read(self, alias, node):
            read, _write, dtype = alias.bits
            zero = isinstance(node.index, m.IntLit) and node.index.value == 0
            index = node.index if alias.offset is None else alias.offset if zero else \
                m.Binary("+", alias.offset, node.index, node.index.type, node.span)
            held = m.Scalar(dtype)
            element = m.Index(m.Ref(alias.buffer, buffers[alias.buffer], m.Pointer(held), node.span), index, held,
                              node.span)
            call = m.Call(read, (element,), "math", (), node.type, node.span)
            bit_reads[id(call)] = (call, alias.bits[1])
            return call

        def leave_Assign(self, node):  # px[i] = v  ->  buf[off + i] = __float_as_int(v)
            t = node.target
            if not (isinstance(t, m.Call) and id(t) in bit_reads):
                return node
            value = node.value if node.op == "=" else m.Binary(node.op[:-1], t, node.value, t.type, node.span)
            element = t.args[0]
            stored = m.Call(bit_reads[id(t)][1], (value,), "math", (), element.type, node.span)
            return m.Assign("=", element, stored, element.type, node.span)

        def leave_Unary(self, node):  # *p  ->  p[0];  *(x + i)  ->  x[i]
            if node.op == "!" and _truth(node.operand) is not None:
                return dataclasses.replace(node, operand=_truth(node.operand))
            if node.op == "*" and isinstance(node.operand, m.Ref) and (node.operand.name in aliases
                                                                       or node.operand.name in rows):
                zero = m.IntLit(0, "0", m.Scalar("int32"), node.span)
                return self.leave_Index(m.Index(node.operand, zero, node.type, node.span))
            view = _deref_view(node, buffers, aliases, views)
            if view is not None:
                ref, offset = view
                index = offset if offset is not None else m.IntLit(0, "0", m.Scalar("int32"), node.span)
                return m.Index(ref, index, node.type, node.span)
            return node

        def leave_Call(self, node):  # atomicAdd(p, v) on a view p: atomicAdd(&x[off], v)
            address = _address_arg(node, buffers, aliases, views)
            if address is not None:  # atomicAdd(x + i * w + j, v), __ldg(x + off): &x[i * w + j]
                return dataclasses.replace(node, args=(address,) + node.args[1:])
            if node.kind == "atomic" and node.args and isinstance(node.args[0], m.Ref) \
                    and node.args[0].name in aliases and aliases[node.args[0].name].bits is None:
                p = node.args[0]
                pointee = p.type.pointee if isinstance(p.type, m.Pointer) else p.type
                at = self.leave_Index(m.Index(p, m.IntLit(0, "0", m.Scalar("int32"), p.span), pointee, p.span))
                return dataclasses.replace(node, args=(m.Unary("&", at, False, p.type, p.span),) + node.args[1:])
            return node

        def leave_DeclStmt(self, node):
            kept = tuple(snapshots.get(d.name) if d.name in snapshots else d for d in node.decls
                         if (d.name not in aliases or d.name in snapshots) and d.name not in rows)
            return dataclasses.replace(node, decls=kept) if kept else m.Empty(node.span)

        # a view that may be null, tested (if (p), !p, p && ..., p ? *p : 0, p != nullptr): its condition
        def leave_Cast(self, node):
            if isinstance(node.type, m.Scalar) and node.type.dtype == "bool":
                return _truth(node.operand) or node
            return node

        def leave_Binary(self, node):
            if node.op in ("==", "!=") and _truth(node.lhs) is not None and _null(node.rhs):
                when = _truth(node.lhs)
                return when if node.op == "!=" else m.Unary("!", when, False, node.type, node.span)
            if node.op in ("&&", "||") and (_truth(node.lhs) is not None or _truth(node.rhs) is not None):
                return dataclasses.replace(node, lhs=_truth(node.lhs) or node.lhs, rhs=_truth(node.rhs) or node.rhs)
            return node

        def leave_Ternary(self, node):
            return node if _truth(node.cond) is None else dataclasses.replace(node, cond=_truth(node.cond))

        def leave_If(self, node):
            return node if _truth(node.cond) is None else dataclasses.replace(node, cond=_truth(node.cond))

    for node in m.walk(fn.body) if fn.body else ():
        if isinstance(node, m.VarDecl) and isinstance(node.type, m.Pointer) and node.storage == "local":
            init, when = _unless_null(node.init)
            row = _row(init, buffers) if node.name not in assigned and when is None else None
            if row is not None and _within_row(fn.body, node.name, row.type.extent) \
                    and not _reads(row) & changed_after.get(node.name, set()):
                rows[node.name] = row
                continue
            alias = _as_alias(init, buffers, aliases, views, bits=True) if node.name not in assigned else None
            if alias is None or (when is not None and _reads(when) & changed_after.get(node.name, set())):
                unresolved.append(node)
                continue
            if when is not None:
                nonnull[node.name] = when
            if alias.offset is not None and _reads(alias.offset, kind=None) & set(aliases):
                # d_b = d_a + *(cliques + n): the offset reads through views folded before it
                alias = Alias(alias.buffer, Fold().transform(alias.offset))
            read = _reads(alias.offset) if alias.offset is not None else set()
            if read & changed_after.get(node.name, set()):
                # out + idx, then idx = idx / w: the view keeps the offset it was made with
                at = fresh(f"{node.name}_at", taken)
                otype = alias.offset.type if isinstance(alias.offset.type, m.Scalar) else m.Scalar("int64")
                snapshots[node.name] = m.VarDecl(at, otype, "local", False, alias.offset, node.span)
                alias = Alias(alias.buffer, m.Ref(at, "local", otype, node.span))
            aliases[node.name] = alias
    if not aliases and not rows and not any(_deref_view(n, buffers, aliases, views) or _address_arg(n, buffers, aliases, views)
                               or _cast_index(n, buffers, aliases, views) for n in m.walk(fn.body) if fn.body):
        return fn, aliases, unresolved

    folded = Fold().transform(fn)
    if views.made:  # each view declared right after the array it views
        class Declare(Transformer):
            def leave_DeclStmt(self, node):
                return dataclasses.replace(node, decls=tuple(x for d in node.decls for x in [d] + views.after(d.name)))
        folded = Declare().transform(folded)
    if views.of_params():  # the views of buffer parameters first in the body
        body = folded.body
        decl = m.DeclStmt(tuple(views.of_params()), body.span)
        folded = dataclasses.replace(folded, body=dataclasses.replace(body, stmts=(decl,) + tuple(body.stmts)))
    # a view used other than by index or dereference (compared, passed on) has no buffer form:
    # its declaration is gone, so it is reported rather than left as an undefined name
    left = {n.name for n in m.walk(folded.body) if isinstance(n, m.Ref) and (n.name in aliases or n.name in rows)}
    # a bit copy's element whose address is taken or that is stepped (&px[i], px[i]++): no place to store
    for n in m.walk(folded.body):
        if isinstance(n, m.Unary) and n.op in ("&", "++", "--") and id(n.operand) in bit_reads:
            left |= {name for name, a in aliases.items() if a.bits is not None}
    decls = {n.name: n for n in m.walk(fn.body) if isinstance(n, m.VarDecl)}
    unresolved += [decls[name] for name in sorted(left) if name in decls]
    return folded, aliases, unresolved


def _row(init, buffers) -> m.Index | None:
    """``b[k]`` (``cx[i][j]``), a row of a local or shared array of several dimensions that a
    pointer takes (``const double* pfx = B[0];``), its extent known; None for anything else (a
    parameter ``b[][8]`` is flat by now: :func:`_as_alias` counts its rows)."""
    e = strip_implicit_casts(init) if init is not None else None
    if not (isinstance(e, m.Index) and isinstance(e.type, m.Array) and e.type.extent is not None
            and not isinstance(e.type.element, m.Array)):
        return None
    root = e
    while isinstance(root, m.Index):
        root = root.base
    return e if isinstance(root, m.Ref) and isinstance(root.type, m.Array) and buffers.get(root.name) != "param" \
        else None


def _within_row(body, name: str, extent: int) -> bool:
    """Whether every use of pointer ``name`` reads or writes its row at a constant inside it
    (``pfx[3]``, ``*pfx``): then the row's own index (``b[0][3]``) is the element, which a pointer
    that may step past its row's end (C's rows are contiguous) would not be."""
    ok, seen = set(), 0
    for n in m.walk(body):
        if isinstance(n, m.Index) and isinstance(n.base, m.Ref) and n.base.name == name:
            if isinstance(n.index, m.IntLit) and 0 <= n.index.value < extent:
                ok.add(id(n.base))
        elif isinstance(n, m.Unary) and n.op == "*" and isinstance(n.operand, m.Ref) and n.operand.name == name:
            ok.add(id(n.operand))
        elif isinstance(n, m.Ref) and n.name == name:
            seen += 1
    return seen == len(ok) and seen > 0


def _null(e) -> bool:
    """``nullptr``, ``NULL``, ``0`` (through casts): the null pointer."""
    while isinstance(e, m.Cast):
        e = e.operand
    return isinstance(e, m.IntLit) and e.value == 0


def _unless_null(init) -> tuple[m.Expr | None, m.Expr | None]:
    """A pointer's value and the condition under which it is not null: ``c ? x + off : nullptr``
    is (``x + off``, ``c``), ``c ? nullptr : x`` (``x``, ``!c``); any other value (value, None).
    Where the program dereferences the pointer it is not null (CUDA leaves reading through a null
    pointer undefined), so the view can stand for it there; only its tests need the condition."""
    e = strip_implicit_casts(init) if init is not None else None
    if isinstance(e, m.Ternary):
        if _null(e.other) and not _null(e.then):
            return e.then, e.cond
        if _null(e.then) and not _null(e.other):
            return e.other, m.Unary("!", e.cond, False, m.Scalar("bool"), e.span)
    return init, None


def _reads(e, kind: str | None = "local") -> set[str]:
    """The names ``e`` reads (of references of ``kind``; any kind for None)."""
    return {r.name for r in m.walk(e) if isinstance(r, m.Ref) and (kind is None or r.kind == kind)}


def _address_arg(node, buffers, aliases, views=None) -> m.Unary | None:
    """``&x[off]`` for the address an atomic or a cache-hinted load is given as pointer
    arithmetic on a buffer (``atomicAdd(d + INSTANCES * gx + gy, c)``, ``__ldg(X + offset + i)``),
    the form every pass reads as an element; None for any other call or argument."""
    if not (isinstance(node, m.Call) and node.args and (node.kind == "atomic" or node.callee in CACHED_LOADS)):
        return None
    arg = node.args[0]
    if not (isinstance(arg, m.Binary) and arg.op in ("+", "-") and isinstance(arg.type, m.Pointer)):
        return None
    alias = _as_alias(arg, buffers, aliases, views)
    if alias is None or alias.offset is None:
        return None
    pointee = arg.type.pointee
    ref = m.Ref(alias.buffer, buffers[alias.buffer], m.Pointer(pointee), arg.span)
    return m.Unary("&", m.Index(ref, alias.offset, pointee, arg.span), False, arg.type, arg.span)


def _assigned_after(body) -> dict[str, set[str]]:
    """Local pointer declared in a block -> the locals the statements after it in that block
    assign (its offset may read them: it must keep the values they had at the declaration)."""
    out: dict[str, set[str]] = {}
    for block in m.walk(body):
        if not isinstance(block, m.Block):
            continue
        stmts = block.stmts
        # the statements from the block's first pointer declaration on (those above it assign
        # nothing any declaration here sees after it; most blocks declare no pointer)
        first = next((i for i, s in enumerate(stmts) if isinstance(s, m.DeclStmt)
                      and any(isinstance(d.type, m.Pointer) for d in s.decls)), None)
        if first is None:
            continue
        found: list[tuple[str, set[str]]] = []
        later: set[str] = set()  # what the statements after the one at hand assign (one walk each)
        for s in reversed(stmts[first:]):
            if isinstance(s, m.DeclStmt):
                found += [(d.name, set(later)) for d in s.decls if isinstance(d.type, m.Pointer)]
            later |= assigned_names(s)
        out.update(reversed(found))
    return out


def _deref_view(node, buffers, aliases, views=None):
    """``*(x + i)`` (or ``*(i + x)``, ``*(x - i)``, through views and casts of the same element
    size) on a buffer ``x``: (a reference to ``x``, the index ``i``); ``*x``: (``x``, None); None
    for anything else, a plain ``*p`` of a local view included (:class:`Fold` keeps its own rule)."""
    if not (isinstance(node, m.Unary) and node.op == "*"):
        return None
    if isinstance(node.operand, m.Ref):  # *x of a buffer itself is x[0]; *p of a local view: Fold's rule
        if node.operand.name in buffers:
            return dataclasses.replace(node.operand, kind=buffers[node.operand.name]), None
        return None
    alias = _as_alias(node.operand, buffers, aliases, views)
    if alias is None:
        return None
    ref = None if views is not None and alias.buffer in views.root else next((r for r in m.walk(node.operand) if isinstance(r, m.Ref) and r.name == alias.buffer), None)
    if ref is None:  # through a local view: a reference to the buffer it views
        ref = m.Ref(alias.buffer, buffers[alias.buffer], m.Pointer(node.type), node.span)
    return dataclasses.replace(ref, kind=buffers[alias.buffer]), alias.offset


def _pointee(t):
    """What a pointer, or an array read as one, holds; None for other types."""
    return t.pointee if isinstance(t, m.Pointer) else t.element if isinstance(t, m.Array) else None


def _element_bytes(t) -> int | None:
    """Bytes of a pointer's (or an array's) element (a scalar or a vector type), or None when unknown."""
    e = _pointee(t)
    if e is None:
        return None
    if isinstance(e, m.Scalar):
        return SIZES.get(e.dtype)
    if isinstance(e, m.Vector):
        size = SIZES.get(e.dtype)
        return size * (e.words or e.lanes) if size else None
    return None


def _element_dtype(t):
    """The element a pointer type points to, its qualifiers aside (``const float*`` is ``float``)."""
    e = _pointee(t)
    return e.dtype if isinstance(e, m.Scalar) else e


def _address(cast: m.Cast) -> bool:
    """``(uintptr_t)x`` of a pointer: its address as a 64-bit integer, counting bytes."""
    return isinstance(cast.type, m.Scalar) and cast.type.dtype in ("uint64", "int64") \
        and isinstance(getattr(cast.operand, "type", None), m.Pointer)


def _byte_step(init, buffers, aliases) -> Alias | None:
    """``(float*)((char*)x + bytes)`` (a pitched row: ``x`` a buffer or view of the cast's element
    type), or ``(float*)((uintptr_t)x + bytes)``: ``x`` ``bytes / sizeof(float)`` elements on. A
    step that is no whole number of elements would make the CUDA access misaligned (it faults), so
    the division loses nothing."""
    step = strip_implicit_casts(init.operand)
    if not (isinstance(step, m.Binary) and step.op in ("+", "-") and isinstance(step.lhs, m.Cast)
            and (_element_bytes(step.lhs.type) == 1 or _address(step.lhs))
            and isinstance(step.rhs.type, m.Scalar)):
        return None
    size, base_expr = _element_bytes(init.type), step.lhs.operand
    if size is None or size == 1 or _element_bytes(getattr(base_expr, "type", None)) != size \
            or _element_dtype(base_expr.type) != _element_dtype(init.type):
        return None
    base = _as_alias(base_expr, buffers, aliases)
    if base is None:
        return None
    itype = step.rhs.type
    off = m.Binary("/", step.rhs, m.IntLit(size, str(size), itype, step.span), itype, step.span)
    if step.op == "-":
        off = m.Unary("-", off, False, itype, step.span)
    return Alias(base.buffer, off if base.offset is None else m.Binary("+", base.offset, off, itype, step.span))


def _cast_index(node, buffers, aliases, views) -> tuple[m.Ref, m.Expr | None] | None:
    """``((unsigned*)s_hist)[pos]`` on a shared array of another element type: (a reference to
    the view, the offset its index adds to), else None."""
    if views is None or not (isinstance(node, m.Index) and isinstance(node.base, m.Cast)
                             and isinstance(node.base.type, m.Pointer)):
        return None
    alias = _as_alias(node.base, buffers, aliases, views)
    if alias is None:
        return None
    return m.Ref(alias.buffer, buffers.get(alias.buffer, "shared"), node.base.type, node.span), alias.offset


def _as_alias(init, buffers, aliases, views: TypedViews | None = None, bits: bool = False) -> Alias | None:
    """Where pointer expression ``init`` points: a buffer and an offset into it, or None. A view
    that reads a global buffer's elements as another type (:data:`BIT_COPIES`) only where the
    caller prints its accesses as bit copies (``bits``)."""
    alias = _alias(init, buffers, aliases, views, bits)
    return None if alias is not None and alias.bits is not None and not bits else alias


def _alias(init, buffers, aliases, views, bits) -> Alias | None:
    if isinstance(init, m.Cast) and isinstance(init.type, m.Pointer):
        pitched = _byte_step(init, buffers, aliases)
        if pitched is not None:
            return pitched
    while isinstance(init, m.Cast) and isinstance(init.type, m.Pointer):
        operand = init.operand
        held = operand.operand.type if isinstance(operand, m.Unary) and operand.op == "&" \
            else _pointee(getattr(operand, "type", None))  # &s[n] in a template types as dependent
        if isinstance(init.type.pointee, m.TemplateType) and held == init.type.pointee:
            init = init.operand  # reinterpret_cast<T*>(&s_out[n]) of a T*: the pointer as it is
            continue
        # a view through another element size ((float*)((char*)p + bytes)) counts its offsets
        # in other units than the buffer's index: not a fixed view of it
        inner, outer = _element_bytes(getattr(init.operand, "type", None)), _element_bytes(init.type)
        if inner is None or outer is None or inner != outer \
                or _element_dtype(init.operand.type) != _element_dtype(init.type):
            # (float*)&buf[k] on an int buffer reads its bits as floats: folded into buf's index
            # it would read ints (tsp's TwoOpt took the square root of an int). A shared array
            # has a view of the other type (TypedViews); other buffers have none
            source, target = _pointee(getattr(init.operand, "type", None)), init.type.pointee
            if views is None or not isinstance(source, m.Scalar) \
                    or not isinstance(target, (m.Scalar, m.TemplateType)):
                return None
            base = _alias(init.operand, buffers, aliases, views, bits)
            if base is not None and bits and base.bits is None and buffers.get(base.buffer) != "shared" \
                    and isinstance(target, m.Scalar) and (source.dtype, target.dtype) in BIT_COPIES:
                return dataclasses.replace(base, bits=BIT_COPIES[source.dtype, target.dtype] + (source.dtype,))
            if base is not None and base.bits is None and buffers.get(base.buffer) == "param" \
                    and isinstance(target, m.Scalar):  # a kernel's buffer read as another type: its view
                return views.of_param(base, source, target, init.type.volatile, init.span)
            if base is None or base.bits is not None or buffers.get(base.buffer) != "shared":
                return None
            return views.view(base, source, target, init.type.volatile, init.span)
        init = init.operand
    if isinstance(init, m.Ref) and init.name in buffers:
        return Alias(init.name, None)
    if isinstance(init, m.Ref) and init.name in aliases:
        return aliases[init.name]
    if isinstance(init, m.Binary) and init.op == "+" and isinstance(getattr(init.rhs, "type", None), m.Pointer):
        init = m.Binary("+", init.rhs, init.lhs, init.type, init.span)  # i + x is x + i
    if isinstance(init, m.Binary) and init.op in ("+", "-"):
        base = _alias(init.lhs, buffers, aliases, views, bits)
        if base is not None:
            off = init.rhs if init.op == "+" else m.Unary("-", init.rhs, False, init.rhs.type, init.rhs.span)
            return dataclasses.replace(base, offset=off if base.offset is None else
                                       m.Binary("+", base.offset, off, off.type, init.span))
    if isinstance(init, m.Index) and isinstance(init.type, m.Array) and isinstance(init.base, m.Ref) \
            and buffers.get(init.base.name) == "param" and init.type.extent is not None \
            and not isinstance(init.type.element, m.Array):
        # b[k] of a parameter b[][W], flat since analysis.prepare.array_params: k * W elements on
        idx, w = init.index, init.type.extent
        itype = idx.type if isinstance(idx.type, m.Scalar) else m.Scalar("int32")
        return Alias(init.base.name, m.Binary("*", idx, m.IntLit(w, str(w), itype, init.span), itype, init.span))
    if views is not None and isinstance(init, m.Index) and isinstance(init.type, m.Array):
        return views.row(init, init.span)  # cx[k], a row of a shared cx[N][W]: its first element
    if isinstance(init, m.Unary) and init.op == "&" and isinstance(init.operand, m.Index):
        if views is not None and isinstance(init.operand.base, m.Index):
            row = views.row(init.operand, init.span)  # &cx[k][j] of a shared cx[N][W]
            if row is not None:
                return row
        base = _alias(init.operand.base, buffers, aliases, views, bits)
        if base is not None:
            idx = init.operand.index
            return dataclasses.replace(base, offset=idx if base.offset is None else
                                       m.Binary("+", base.offset, idx, idx.type, init.span))
    return None


def why_not_a_view(fn: m.Function, decl: m.VarDecl) -> str:
    """Why local pointer ``decl`` is no fixed view of a buffer, in the words of its first use (or
    value) that none of the pointer passes follows: for the diagnostic that refuses the kernel."""
    name = decl.name
    values = [decl.init] if decl.init is not None else []
    values += [n.value for n in m.walk(fn.body) if isinstance(n, m.Assign) and isinstance(n.target, m.Ref)
               and n.target.name == name and n.op == "="] if fn.body else []
    for v in values:
        v = strip_implicit_casts(v)
        views = TypedViews(fn, view_buffers(fn), set())
        alias = _alias(v, views.buffers, {}, views, True)  # as pointer_aliases reads it (bit copies first)
        viewed = alias is not None and alias.bits is None and bool(views.made)
        if not viewed and views.refused:
            return views.refused  # (unsigned*)(ptr + 1) on a char* ptr: no whole number of words on
        held = v
        while isinstance(held, m.Cast):
            held = held.operand
        if isinstance(held, m.Member) and not held.arrow and isinstance(held.type, m.Pointer):
            return f"it is the pointer a struct argument holds in its field '{held.field}'"
        if (isinstance(held, (m.Member, m.Index)) or isinstance(held, m.Unary) and held.op == "*") \
                and isinstance(held.type, m.Pointer):
            return "it is assigned a pointer loaded from memory (pointer chasing: the address is data)"
        if isinstance(v, m.Call) and v.kind == "device":
            return f"it is the pointer device function '{v.callee}' returns"
        cast = None if viewed else v  # a view of another type: its uses say why (below)
        while isinstance(cast, m.Cast) and isinstance(cast.type, m.Pointer):
            inner = cast.operand
            src, dst = _pointee(getattr(inner, "type", None)), cast.type.pointee
            if src is not None and str(_element_dtype(getattr(inner, "type", None))) != str(_element_dtype(cast.type)) \
                    and not (isinstance(src, m.TemplateType) and isinstance(dst, m.TemplateType)):
                if isinstance(src, m.Scalar) and isinstance(dst, m.Scalar) and (src.dtype, dst.dtype) in BIT_COPIES:
                    return (f"it reads a buffer of {src} as {dst} and is used other than by reading or storing "
                            "an element (each of which would be a bit copy)")
                return (f"it reads a buffer of {src} as {dst} (a reinterpretation: only __shared__ arrays and a "
                        "kernel's buffer parameters have views of another scalar element type, other buffers bit "
                        "copies of elements of the same size)")
            cast = inner
        if isinstance(v, m.Unary) and v.op == "&" and isinstance(v.operand, m.Member):
            return "it points into a struct's field"
    for n in m.walk(fn.body) if fn.body else ():  # (unsigned long)p, (unsigned long)(buf + i)
        if isinstance(n, m.Cast) and isinstance(n.type, m.Scalar) and _at(n.operand, name):
            return "its address is used as an integer"
    for n in m.walk(fn.body) if fn.body else ():
        if isinstance(n, m.Assign) and not (isinstance(n.target, m.Ref) and n.target.name == name) \
                and any(isinstance(r, m.Ref) and r.name == name and isinstance(getattr(n.value, "type", None), m.Pointer)
                        for r in m.walk(n.value)):
            return "its value is stored to memory"
        if isinstance(n, m.Member) and n.arrow and isinstance(n.base, m.Ref) and n.base.name == name:
            return f"it reaches the fields of a struct ({name}->{n.field})"
        if isinstance(n, m.Call) and any(isinstance(a, m.Ref) and a.name == name for a in
                                         (strip_implicit_casts(x) for x in n.args)):
            return f"it is passed to '{n.callee}'"
    return GENERIC


def _at(e, name: str) -> bool:
    """Whether ``e`` is pointer ``name`` or an address it steps to (``p``, ``buf + i``)."""
    e = strip_implicit_casts(e)
    if isinstance(e, m.Ref):
        return e.name == name
    return isinstance(e, m.Binary) and e.op in ("+", "-") and isinstance(e.type, m.Pointer) \
        and (_at(e.lhs, name) or _at(e.rhs, name))


#: what :func:`why_not_a_view` says of a pointer none of its rules names a reason for
GENERIC = "its value is no buffer plus an offset that the body keeps fixed or steps"


def _is_row(e) -> bool:
    """``b[k]`` of an array of several dimensions: a row, not a pointer loaded from memory."""
    return isinstance(e, m.Index) and isinstance(e.type, m.Array)
