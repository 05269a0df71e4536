"""Lift shared-memory prefix sums (block scans) to ``T.cumsum`` (tile form).

A CUDA block scan loads a segment of elements into a ``__shared__`` array, combines its cells in
rounds separated by barriers (Hillis–Steele, Blelloch's up- and down-sweep, ...) and stores
prefix sums. Its tile form stores the segment per lane (one lane per CUDA thread) into
``<S>_prefix[1 : N + 1]``, scans that with ``T.cumsum`` (``<S>_prefix[k]`` is then the sum of the
segment's first ``k`` elements, ``<S>_prefix[0]`` is 0) and runs, per lane, the stores CUDA made
with its results, each reading ``<S>_prefix[L]`` where CUDA read a prefix of length ``L``.

The pass proves this instead of matching a pattern. For the block size of the kernel's launches
it executes the kernel on every thread, barrier to barrier (:class:`_Run`): indices and branches
must be concrete (they depend on the thread and on constants only), and each shared cell holds
the multiset of segment positions summed into it. The cells stored before the first barrier are
the segment (one element each, whatever the value: it is data). After that only ``+`` may combine
cells and only zero may be stored otherwise; two threads writing one cell, or one reading a cell
another writes, between the same two barriers is a race. The proof holds when every read of the
array by the final stores holds exactly the positions ``{0, ..., L - 1}``, with ``L`` an affine
function of the thread: inclusive scans read ``L = i + 1``, exclusive ones ``L = i``, totals
``L = N``. Anything else raises :class:`NotScan` with the reason.

The order of the additions differs from the CUDA's, which matters for floating point within
rounding only (the check compares with the dtype's tolerance).
"""
from __future__ import annotations

import dataclasses
import operator
from collections import Counter

from ...dtypes import SIZES
from ...ir import model as m
from ...ir.exprs import assigned_names, pure
from ...ir.loops import BlockScan, KernelPlan
from ..phases import contains_barrier, is_barrier_call
from .base import NotScan

_MAX_STEPS = 1 << 16  # loop iterations per thread the proof will follow
#: statements the proof will execute over all threads together: the largest scan proved over the
#: corpus and the real-code pool ran 17 666 on 256 threads (about 70 000 on 1024); a kernel
#: swapping shared vectors 1024 times on 256 threads (a shared-memory benchmark) would run
#: millions, for minutes, before finding it is no scan (each 2^19 statements cost it 6 s)
_MAX_WORK = 1 << 17
_CUMSUM_THREADS = (32, 64, 128, 256, 512, 1024)  # the block sizes TileLang's CUDA T.cumsum takes
_INT_BITS = {"int8": 8, "int16": 16, "int32": 32, "int64": 64, "uint8": 8, "uint16": 16, "uint32": 32,
             "uint64": 64, "bool": 1}


class _Opaque:
    """A value the proof does not follow: loaded data, the block index, scalar parameters."""

    def __repr__(self) -> str:
        return "opaque"


class _Unknown:
    """A local assigned under a condition that depends on data: no index, branch or shared store
    may use it."""

    def __init__(self, name: str) -> None:
        self.name = name


OPAQUE = _Opaque()
_UNKNOWN = object()
_EXPR_METHODS: dict = {}  # node class -> _Run's e_<Class> method, or None (_Run.expr)


@dataclasses.dataclass(frozen=True)
class _Sum:
    """A sum of shared cells: the multiset of the segment cells (flat indices) it adds up."""

    cells: Counter

    def __add__(self, other: "_Sum") -> "_Sum":
        return _Sum(self.cells + other.cells)


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Thread:
    def __init__(self, tid: int) -> None:
        self.tid = tid
        self.env: dict = {}
        self.steps = 0


class _Run:
    """The kernel executed on ``threads`` threads, phase by phase, tracking the shared array
    ``name`` of ``shape`` (see the module docstring)."""

    def __init__(self, name: str, shape: tuple, dtype: str, threads: int) -> None:
        self.name, self.shape, self.dtype, self.threads = name, shape, dtype, threads
        self.cells: dict[int, _Sum] = {}
        self.phase = 0
        self.reads: dict[int, set] = {}
        self.writes: dict[int, set] = {}
        self.leaves: set[int] = set()
        self.loads: set[int] = set()  # id(Index node) of the stores of the segment's elements
        self.reads_at: dict[int, dict] = {}   # id(Index node) -> thread -> [value read]
        self.stores_at: dict[int, dict] = {}  # id(Index node) -> thread -> [cell]
        self.maybe = 0  # depth of branches on data
        self.branch_cells: list[set] = []
        self.work = 0  # statements executed, all threads together

    # -- the phases ------------------------------------------------------------------------------
    def execute(self, body: m.Block) -> None:
        threads = [_Thread(t) for t in range(self.threads)]
        runs = [self.stmt(body, th) for th in threads]
        while True:
            stops = []
            for run in runs:
                try:
                    stops.append(next(run))
                except StopIteration:
                    stops.append(None)
            if any(s is not stops[0] for s in stops):
                where = [s.span.line for s in stops if s is not None]
                raise NotScan(f"its threads do not all reach the same barrier (line {min(where)})")
            self._check_races()
            if stops[0] is None:
                return
            self.phase += 1

    def _check_races(self) -> None:
        for cell, writers in sorted(self.writes.items()):
            if len(writers) > 1:
                a, b = sorted(writers)[:2]
                raise NotScan(f"threads {a} and {b} both write '{self.name}{self._show(cell)}' between "
                              "two barriers (a race)")
            readers = self.reads.get(cell, set()) - writers
            if readers:
                raise NotScan(f"thread {min(readers)} reads '{self.name}{self._show(cell)}' while thread "
                              f"{min(writers)} writes it, with no barrier between (a race)")
        self.reads, self.writes = {}, {}

    def _show(self, cell: int) -> str:
        out = []
        for extent in reversed(self.shape):
            out.append(cell % extent)
            cell //= extent
        return "".join(f"[{i}]" for i in reversed(out))

    # -- statements (generators: they yield the barrier a thread stops at) -----------------------
    def stmt(self, s, th: _Thread):
        self.work += 1
        if self.work > _MAX_WORK:
            raise NotScan(f"following its {self.threads} threads runs past {_MAX_WORK} statements (line {s.span.line})")
        if isinstance(s, m.Block):
            for x in s.stmts:
                yield from self.stmt(x, th)
        elif isinstance(s, m.DeclStmt):
            for d in s.decls:
                if d.storage in ("shared", "extern_shared"):
                    continue
                if isinstance(d.type, m.Array):
                    raise NotScan(f"it keeps a local array '{d.name}'")
                th.env[d.name] = self.expr(d.init, th) if d.init is not None else _Unknown(d.name)
        elif isinstance(s, m.ExprStmt):
            if is_barrier_call(s.expr):
                if not (isinstance(s.expr, m.Call) and s.expr.callee == "__syncthreads"):
                    raise NotScan(f"it synchronises other than with __syncthreads (line {s.span.line})")
                if self.maybe:
                    raise NotScan(f"a barrier is under a condition that depends on data (line {s.span.line})")
                yield s
            else:
                self.expr(s.expr, th)
        elif isinstance(s, m.If):
            c = self.cond(s.cond, th)
            if c is OPAQUE:
                yield from self.both(s, th)
            elif c:
                yield from self.stmt(s.then, th)
            elif s.other is not None:
                yield from self.stmt(s.other, th)
        elif isinstance(s, (m.For, m.While, m.DoWhile)):
            yield from self.loop(s, th)
        elif isinstance(s, m.Break):
            raise _Break()
        elif isinstance(s, m.Continue):
            raise _Continue()
        elif not isinstance(s, m.Empty):
            raise NotScan(f"it has a {type(s).__name__.lower()} statement at line {s.span.line}")

    def loop(self, s, th: _Thread):
        if isinstance(s, m.For) and s.init is not None:
            yield from self.stmt(s.init, th)
        first = True
        while True:
            th.steps += 1
            if th.steps > _MAX_STEPS:
                raise NotScan(f"the loop at line {s.span.line} runs too long to follow")
            cond = s.cond if not (isinstance(s, m.DoWhile) and first) else None
            first = False
            if cond is not None:
                c = self.cond(cond, th)
                if c is OPAQUE:
                    raise NotScan(f"the loop at line {s.span.line} runs a number of times that depends on data")
                if not c:
                    return
            try:
                yield from self.stmt(s.body, th)
            except _Break:
                return
            except _Continue:
                pass
            if isinstance(s, m.For) and s.step is not None:
                self.expr(s.step, th)

    def both(self, s: m.If, th: _Thread):
        """A branch on data: both sides run (neither may hold a barrier); a local they set
        differently is unknown after it; they must store the same shared cells."""
        if contains_barrier(s):
            raise NotScan(f"a barrier is under a condition that depends on data (line {s.span.line})")
        saved = dict(th.env)
        envs, cells = [], []
        self.maybe += 1
        for side in (s.then, s.other):
            th.env = dict(saved)
            self.branch_cells.append(set())
            if side is not None:
                for _ in self.stmt(side, th):
                    pass  # no barrier: checked above
            cells.append(self.branch_cells.pop())
            envs.append(th.env)
        self.maybe -= 1
        if cells[0] != cells[1]:
            cell = min(cells[0] ^ cells[1])
            raise NotScan(f"'{self.name}{self._show(cell)}' is stored on one side of a branch on data only "
                          f"(line {s.span.line})")
        if self.branch_cells:
            self.branch_cells[-1] |= cells[0]
        th.env = {n: (v if _same(v, envs[1].get(n)) else _Unknown(n)) for n, v in envs[0].items() if n in saved}
        return
        yield  # a generator

    # -- expressions -----------------------------------------------------------------------------
    def cond(self, e, th: _Thread):
        v = self.expr(e, th)
        if isinstance(v, _Sum):
            raise NotScan(f"a branch depends on the shared values (line {e.span.line})")
        if isinstance(v, _Unknown):
            raise NotScan(f"a branch at line {e.span.line} depends on '{v.name}', set under a condition on data")
        return v if v is OPAQUE else bool(v)

    def expr(self, e, th: _Thread):
        # the e_<Class> method of each node class, looked for once (a million lookups a pool)
        method = _EXPR_METHODS.get(type(e), _UNKNOWN)
        if method is _UNKNOWN:
            method = _EXPR_METHODS[type(e)] = getattr(_Run, f"e_{type(e).__name__}", None)
        if method is None:
            raise NotScan(f"it uses {type(e).__name__.lower()} expressions (line {e.span.line})")
        return method(self, e, th)

    def e_IntLit(self, e, th):
        return e.value

    def e_BoolLit(self, e, th):
        return int(e.value)

    def e_FloatLit(self, e, th):
        return 0 if e.value == 0 else OPAQUE

    def e_SizeOf(self, e, th):
        return e.value if e.value is not None else OPAQUE

    def e_Ref(self, e, th):
        if e.kind == "local":
            if e.name not in th.env:
                raise NotScan(f"it reads '{e.name}' before setting it (line {e.span.line})")
            return th.env[e.name]
        if e.kind == "shared":
            raise NotScan(f"it reads the shared array '{e.name}' other than by element (line {e.span.line})")
        return OPAQUE  # parameters, constants, template values

    def e_Builtin(self, e, th):
        if e.var == "threadIdx":
            return th.tid if e.dim == "x" else 0
        if e.var == "blockDim":
            return self.threads if e.dim == "x" else 1
        if e.var == "warpSize":
            return 32
        return OPAQUE

    def e_Cast(self, e, th):
        v = self.expr(e.operand, th)
        dtype = _dtype(e.target)
        if isinstance(v, _Sum) and dtype != self.dtype:
            raise NotScan(f"it converts the shared values to {dtype} (line {e.span.line})")
        return _wrap(v, dtype) if isinstance(v, int) else v

    def e_Unary(self, e, th):
        if e.op in ("++", "--"):
            if not isinstance(e.operand, m.Ref) or e.operand.kind != "local":
                raise NotScan(f"it increments something other than a local (line {e.span.line})")
            old = self.expr(e.operand, th)
            new = self._binary("+" if e.op == "++" else "-", old, 1, e)
            th.env[e.operand.name] = _wrap(new, _dtype(e.type)) if isinstance(new, int) else new
            return old if e.postfix else th.env[e.operand.name]
        if e.op in ("&", "*"):
            raise NotScan(f"it takes addresses or dereferences pointers (line {e.span.line})")
        v = self.expr(e.operand, th)
        if isinstance(v, _Sum):
            raise NotScan(f"it applies '{e.op}' to the shared values (line {e.span.line}): only + makes a prefix sum")
        if not isinstance(v, int):
            return v
        out = {"-": -v, "+": v, "~": ~v, "!": int(not v)}[e.op]
        return _wrap(out, _dtype(e.type))

    def e_Binary(self, e, th):
        if e.op in ("&&", "||"):
            a = self.cond(e.lhs, th)
            if a is not OPAQUE and (a if e.op == "||" else not a):
                return int(a)
            b = self.cond(e.rhs, th)
            return OPAQUE if OPAQUE in (a, b) else int(b)
        a, b = self.expr(e.lhs, th), self.expr(e.rhs, th)
        if e.op == ",":
            return b
        out = self._binary(e.op, a, b, e)
        return _wrap(out, _dtype(e.type)) if isinstance(out, int) else out

    def _binary(self, op, a, b, e):
        if isinstance(a, _Sum) or isinstance(b, _Sum):
            if op == "+" and isinstance(a, _Sum) and isinstance(b, _Sum):
                return a + b
            if op in ("+", "-") and isinstance(a, _Sum) and b == 0 and not isinstance(b, _Sum):
                return a
            if op == "+" and a == 0 and not isinstance(a, _Sum):
                return b
            raise NotScan(f"it combines the shared values with '{op}' (line {e.span.line}): only + makes a prefix sum")
        for v in (a, b):
            if isinstance(v, _Unknown):
                return v
        if a is OPAQUE or b is OPAQUE:
            return OPAQUE
        return _c_binary(op, a, b)

    def e_Ternary(self, e, th):
        c = self.cond(e.cond, th)
        if c is not OPAQUE:
            return self.expr(e.then if c else e.other, th)
        a, b = self.expr(e.then, th), self.expr(e.other, th)
        if isinstance(a, _Sum) or isinstance(b, _Sum):
            raise NotScan(f"it picks a shared value by a condition on data (line {e.span.line})")
        return OPAQUE

    def e_Call(self, e, th):
        if e.kind not in ("math", "conversion"):
            raise NotScan(f"it calls {e.callee} (line {e.span.line})")
        args = [self.expr(a, th) for a in e.args]
        if any(isinstance(a, _Sum) for a in args):
            raise NotScan(f"it combines the shared values with {e.callee} (line {e.span.line}): only + makes a "
                          "prefix sum")
        return OPAQUE

    def e_Index(self, e, th):
        root = m.access_root(e, through=(m.Index,))
        if root is not None and root.kind == "shared" and root.name == self.name:
            cell = self.cell(e, th)
            if cell not in self.cells:
                raise NotScan(f"it reads '{self.name}{self._show(cell)}' before any thread writes it "
                              f"(line {e.span.line})")
            self.reads.setdefault(cell, set()).add(th.tid)
            value = self.cells[cell]
            self.reads_at.setdefault(id(e), {}).setdefault(th.tid, []).append(value)
            return value
        if root is None or root.kind not in ("param", "global", "constant"):
            raise NotScan(f"it indexes something other than the shared array or a buffer (line {e.span.line})")
        node = e
        while isinstance(node, m.Index):
            if isinstance(self.expr(node.index, th), _Sum):
                raise NotScan(f"it indexes '{root.name}' with a shared value (line {e.span.line})")
            node = node.base
        return OPAQUE

    def e_Assign(self, e, th):
        target = e.target
        root = m.access_root(target, through=(m.Index,))
        value = self.expr(e.value, th)
        if isinstance(target, m.Ref) and target.kind == "local":
            if e.op != "=":
                value = self._binary(e.op[:-1], self.expr(target, th), value, e)
            th.env[target.name] = _wrap(value, _dtype(target.type)) if isinstance(value, int) else value
            return th.env[target.name]
        if isinstance(target, m.Index) and root is not None and root.kind == "shared" and root.name == self.name:
            cell = self.cell(target, th)
            if e.op != "=":
                value = self._binary(e.op[:-1], self.e_Index(target, th), value, e)
            self.store(target, cell, value, th)
            return value
        if isinstance(target, m.Index) and root is not None and root.kind in ("param", "global"):
            self.e_Index(target, th)
            if isinstance(value, _Unknown):
                raise NotScan(f"it stores '{value.name}', set under a condition on data (line {e.span.line})")
            return value
        raise NotScan(f"it assigns to something other than a local, the shared array or a buffer "
                      f"(line {e.span.line})")

    # -- the shared array ------------------------------------------------------------------------
    def cell(self, e: m.Index, th: _Thread) -> int:
        indices = []
        node = e
        while isinstance(node, m.Index):
            indices.insert(0, node.index)
            node = node.base
        if len(indices) != len(self.shape):
            raise NotScan(f"it indexes '{self.name}' in {len(indices)} of its {len(self.shape)} dimensions "
                          f"(line {e.span.line})")
        flat = 0
        for index, extent in zip(indices, self.shape):
            i = self.expr(index, th)
            if not isinstance(i, int):
                raise NotScan(f"it indexes '{self.name}' with a value that depends on data (line {e.span.line})")
            if not 0 <= i < extent:
                raise NotScan(f"thread {th.tid} indexes '{self.name}' out of bounds (line {e.span.line})")
            flat = flat * extent + i
        return flat

    def store(self, target: m.Index, cell: int, value, th: _Thread) -> None:
        if isinstance(value, _Unknown):
            raise NotScan(f"it stores '{value.name}', set under a condition on data, into '{self.name}' "
                          f"(line {target.span.line})")
        if self.phase == 0 and not isinstance(value, _Sum):
            value = _Sum(Counter({cell: 1}))  # an element of the segment
            self.leaves.add(cell)
            self.loads.add(id(target))
        elif self.maybe:
            raise NotScan(f"after the first barrier it stores into '{self.name}' under a condition on data "
                          f"(line {target.span.line})")
        elif isinstance(value, _Sum):
            pass
        elif value == 0 and value is not OPAQUE:
            value = _Sum(Counter())  # the sum of nothing
        else:
            raise NotScan(f"after the first barrier it stores into '{self.name}' a value that is not a sum of "
                          f"its cells (line {target.span.line})")
        self.writes.setdefault(cell, set()).add(th.tid)
        self.stores_at.setdefault(id(target), {}).setdefault(th.tid, []).append(cell)
        if self.branch_cells:
            self.branch_cells[-1].add(cell)
        self.cells[cell] = value


def _same(a, b) -> bool:
    if isinstance(a, (int, _Sum)) and isinstance(b, (int, _Sum)):
        return type(a) is type(b) and a == b
    return a is b


def _dtype(t) -> str:
    return t.dtype if isinstance(t, m.Scalar) else str(t)


def _wrap(v: int, dtype: str) -> int:
    bits = _INT_BITS.get(dtype)
    if bits is None:
        return v
    if dtype == "bool":
        return int(bool(v))
    v &= (1 << bits) - 1
    return v - (1 << bits) if not dtype.startswith("uint") and v >> (bits - 1) else v


def _c_binary(op: str, a: int, b: int) -> int:
    if op in ("/", "%"):
        if b == 0:
            raise NotScan("it divides by zero")
        q = abs(a) // abs(b) * (1 if (a >= 0) == (b >= 0) else -1)
        return q if op == "/" else a - q * b
    if op in ("<<", ">>"):
        if not 0 <= b < 64:
            raise NotScan(f"it shifts by {b}")
        return a << b if op == "<<" else a >> b
    fn = _C_OPERATORS.get(op)
    if fn is None:
        raise NotScan(f"it uses the operator '{op}'")
    return fn(a, b)


#: the integer operators the proof evaluates, by their C spelling (comparisons give 0 or 1)
_C_OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "&": operator.and_, "|": operator.or_,
                "^": operator.xor, "==": lambda a, b: int(a == b), "!=": lambda a, b: int(a != b),
                "<": lambda a, b: int(a < b), "<=": lambda a, b: int(a <= b), ">": lambda a, b: int(a > b),
                ">=": lambda a, b: int(a >= b)}


# ---------------------------------------------------------------------------------------------
# The tile form
# ---------------------------------------------------------------------------------------------

_INT = m.Scalar("int32")


def _lane_expr(a: int, b: int, span) -> m.Expr:
    """``a * threadIdx.x + b`` (the emitter prints the thread index as the lane)."""
    if a == 0:
        return m.IntLit(b, str(b), _INT, span)
    lane = m.Builtin("threadIdx", "x", _INT, span)
    term = lane if a == 1 else m.Binary("*", m.IntLit(a, str(a), _INT, span), lane, _INT, span)
    if b == 0:
        return term
    return m.Binary("+" if b > 0 else "-", term, m.IntLit(abs(b), str(abs(b)), _INT, span), _INT, span)


def _affine(values: dict, what: str, line: int) -> tuple[int, int]:
    """(a, b) with ``values[t] == a * t + b`` for every thread t that ran the access."""
    ts = sorted(values)
    t0 = ts[0]
    a = 0
    if len(ts) > 1:
        a, rest = divmod(values[ts[1]] - values[t0], ts[1] - t0)
        if rest:
            a = None
    b = values[t0] - (a or 0) * t0
    if a is None or any(values[t] != a * t + b for t in ts):
        raise NotScan(f"{what} at line {line} is not an affine function of the thread index")
    return a, b


def _prefix_length(total: _Sum, start: int, size: int, line: int, name: str) -> int:
    """L when ``total`` adds the segment's first L elements once each."""
    cells = total.cells
    length = len(cells)
    if cells == Counter(range(start, start + length)):
        return length
    twice = sorted(c for c, k in cells.items() if k > 1)
    if twice:
        return _refuse(f"the read of '{name}' at line {line} adds element {twice[0] - start} twice")
    outside = sorted(c for c in cells if not start <= c < start + size)
    if outside:
        return _refuse(f"the read of '{name}' at line {line} adds a cell outside the segment")
    missing = min(set(range(start, max(cells) + 1)) - set(cells))
    return _refuse(f"the read of '{name}' at line {line} skips element {missing - start}: not a prefix sum")


def _refuse(reason: str):
    raise NotScan(reason)


def _replace(node, table: dict):
    if id(node) in table:
        return table[id(node)]
    return m.map_children(node, lambda c: _replace(c, table))


def _shared_accesses(stmts, name: str):
    """The outermost index expressions of the shared array ``name`` in ``stmts``."""
    found = []

    def visit(node):
        if isinstance(node, m.Index):
            root = m.access_root(node, through=(m.Index,))
            if root is not None and root.kind == "shared" and root.name == name:
                found.append(node)
                return  # its indices cannot read the array: they must not depend on data
        for child in m.children(node):
            visit(child)

    for st in stmts:
        visit(st)
    return found


def _global_store(node) -> bool:
    if isinstance(node, (m.Assign, m.Unary)) and (not isinstance(node, m.Unary) or node.op in ("++", "--")):
        root = m.access_root(node.target if isinstance(node, m.Assign) else node.operand)
        return root is not None and root.kind in ("param", "global")
    return isinstance(node, m.Call) and node.kind == "atomic"


def _hoisted_stores(stmt) -> list:
    """The stores to memory among the scan's rounds, with the branches around them (the rest of
    the rounds, which only move shared and local values, is what ``T.cumsum`` replaces)."""
    if not any(_global_store(n) for n in m.walk(stmt)):
        return []
    if isinstance(stmt, m.Block):
        return [s for x in stmt.stmts for s in _hoisted_stores(x)]
    if isinstance(stmt, m.If):
        then = _hoisted_stores(stmt.then)
        other = _hoisted_stores(stmt.other) if stmt.other is not None else []
        return [dataclasses.replace(stmt, then=m.Block(tuple(then), stmt.then.span),
                                    other=m.Block(tuple(other), stmt.other.span) if other else None)]
    if isinstance(stmt, m.ExprStmt) and isinstance(stmt.expr, m.Assign) and _global_store(stmt.expr):
        return [stmt]
    if isinstance(stmt, (m.For, m.While, m.DoWhile)):
        return _refuse(f"it stores to memory inside the scan's loops (line {stmt.span.line})")
    return _refuse(f"it stores to memory inside an expression among the scan's rounds (line {stmt.span.line})")


def _stored(stmts) -> set[str]:
    """The buffers ``stmts`` store to."""
    roots = (m.access_root(t) for st in stmts for t in m.store_targets(st))
    return {r.name for r in roots if r is not None and r.kind in ("param", "global")}


def _read(stmts) -> set[str]:
    """The buffers ``stmts`` read (an element stored to is not read, unless by a compound store)."""
    plain = {id(n.target) for st in stmts for n in m.walk(st) if isinstance(n, m.Assign) and n.op == "="}
    return {r.name for st in stmts for n in m.walk(st) if isinstance(n, m.Index) and id(n) not in plain
            for r in (m.access_root(n),) if r is not None and r.kind in ("param", "global")}


def _locals_read(stmts) -> list[str]:
    out = []
    for st in stmts:
        for n in m.walk(st):
            if isinstance(n, m.Ref) and n.kind == "local" and n.name not in out:
                out.append(n.name)
    return out


def _declared(stmts) -> set[str]:
    return {n.name for st in stmts for n in m.walk(st) if isinstance(n, m.VarDecl)}


def _live_decls(stmts, keep_names=()) -> tuple:
    """``stmts`` without the declarations (pure ones) no remaining statement reads."""
    stmts = list(stmts)
    while True:
        used = set(keep_names) | {n.name for st in stmts if not isinstance(st, m.DeclStmt)
                                  for n in m.walk(st) if isinstance(n, m.Ref)}
        used |= {n.name for st in stmts if isinstance(st, m.DeclStmt) for d in st.decls
                 if d.init is not None for n in m.walk(d.init) if isinstance(n, m.Ref)}
        kept = []
        for st in stmts:
            if isinstance(st, m.DeclStmt):
                decls = tuple(d for d in st.decls if d.name in used or not (d.init is None or pure(d.init, math=False)))
                if not decls:
                    continue
                st = dataclasses.replace(st, decls=decls) if decls != st.decls else st
            kept.append(st)
        if len(kept) == len(stmts) and all(a is b for a, b in zip(kept, stmts)):
            return tuple(kept)
        stmts = kept


def _thread_dependent(fn: m.Function) -> set[str]:
    """Locals whose value depends on the thread index."""
    names: set[str] = set()
    pairs = [(d.name, d.init) for d in m.walk(fn.body) if isinstance(d, m.VarDecl) and d.init is not None]
    pairs += [(a.target.name, a.value) for a in m.walk(fn.body)
              if isinstance(a, m.Assign) and isinstance(a.target, m.Ref)]
    changed = True
    while changed:
        changed = False
        for name, value in pairs:
            if name not in names and any((isinstance(n, m.Builtin) and n.var == "threadIdx") or
                                         (isinstance(n, m.Ref) and n.name in names) for n in m.walk(value)):
                names.add(name)
                changed = True
    return names


def _shape(decl: m.VarDecl, shared_bytes: int | None) -> tuple[list[int], m.CType]:
    """(the extents, the element type) of the shared array ``decl``; an ``extern __shared__``
    array (``T s[]``) holds the dynamic shared memory every launch gives (``shared_bytes``), as the
    portable form sizes it."""
    shape, t = [], decl.type
    while isinstance(t, m.Array):
        if t.extent is None and decl.storage == "extern_shared" and not shape and not isinstance(t.element, m.Array):
            size = SIZES.get(t.element.dtype) if isinstance(t.element, m.Scalar) else None
            if shared_bytes is None or not size:
                raise NotScan(f"the extern shared array '{decl.name}' holds the launches' dynamic shared memory, "
                              "which they do not give as one constant")
            if shared_bytes < size:
                raise NotScan(f"the launches give the extern shared array '{decl.name}' no element")
            shape.append(shared_bytes // size)
        elif t.extent is None:
            raise NotScan(f"the shared array '{decl.name}' has no constant size")
        else:
            shape.append(t.extent)
        t = t.element
    return shape, t


def plan_block_scan(fn: m.Function, kplan: KernelPlan, threads: int | None,
                    shared_bytes: int | None = None) -> KernelPlan:
    """The tile form of a block scan (one :class:`BlockScan` region), or :class:`NotScan`;
    ``threads``, ``shared_bytes``: the block size and the dynamic shared memory every launch
    gives as a constant, where they do."""
    if kplan.form != "portable":
        raise NotScan("it needs thread-level code", candidate=False)
    shared = [vp for vp in kplan.vars.values() if vp.placement == "shared"]
    stmts = fn.body.stmts if fn.body is not None else ()
    barriers = [i for i, s in enumerate(stmts) if contains_barrier(s)]
    if len(shared) != 1 or not barriers:
        raise NotScan("it does not scan one shared array", candidate=False)
    decl = shared[0].decl
    name = decl.name
    first, last = barriers[0], barriers[-1]
    load, rounds, final = stmts[:first], stmts[first:last + 1], stmts[last + 1:]
    dependent = _thread_dependent(fn)
    if not any(isinstance(n, m.Builtin) and n.var == "threadIdx" or isinstance(n, m.Ref) and n.name in dependent
               for a in _shared_accesses(final, name) for n in m.walk(a)):
        raise NotScan("its final stores do not read the shared array per thread", candidate=False)
    looped = any(isinstance(n, (m.For, m.While, m.DoWhile)) and contains_barrier(n)
                 for st in rounds for n in m.walk(st))
    if not looped or any(isinstance(n, m.Call) and n.kind == "atomic" for n in m.walk(fn.body)):
        raise NotScan("it has no rounds of barriers around the shared array", candidate=False)
    # from here on the kernel looks like a scan: every refusal says why it is not one (the launch
    # first, which the proof runs on, then the array)
    if any(isinstance(n, m.Builtin) and n.var == "threadIdx" and n.dim != "x" for n in m.walk(fn.body)):
        raise NotScan("scans are lifted for 1-D blocks only", proved=False)
    if threads is None:
        raise NotScan("its launches do not give one constant block size, for which the scan could be proved",
                      proved=False)
    if threads not in _CUMSUM_THREADS:
        raise NotScan(f"it runs on {threads} threads; T.cumsum runs on a power of two from 32 to 1024", proved=False)
    shape, t = _shape(decl, shared_bytes)
    if not isinstance(t, m.Scalar) or t.dtype in ("bool", "void"):
        raise NotScan(f"the shared array '{name}' holds {t}, not numbers")
    run = _Run(name, tuple(shape), t.dtype, threads)
    run.execute(fn.body)

    # the segment: the cells stored before the first barrier, stored by the load statements
    if not run.leaves:
        raise NotScan(f"no thread stores into '{name}' before the first barrier")
    start, size = min(run.leaves), len(run.leaves)
    if run.leaves != set(range(start, start + size)):
        raise NotScan(f"the cells of '{name}' stored before the first barrier are not one contiguous segment")
    if any(id(a) in run.reads_at for a in _shared_accesses(load, name)):
        raise NotScan(f"it reads '{name}' before the first barrier")
    if run.loads - {id(a) for a in _shared_accesses(load, name)}:
        raise NotScan(f"'{name}' is stored before the first barrier inside the scan's loops")
    span = decl.span
    prefix = m.Ref(f"{name}_prefix", "shared", m.Array(t, size + 1), span)
    table = {}
    for access in _shared_accesses(load, name):
        by = run.stores_at.get(id(access))
        if not by:
            raise NotScan(f"the store into '{name}' at line {access.span.line} never runs")
        if any(len(cells) != 1 for cells in by.values()):
            raise NotScan(f"a thread runs the store into '{name}' at line {access.span.line} more than once")
        a, b = _affine({th: cells[0] - start + 1 for th, cells in by.items()}, f"the cell stored into '{name}'",
                       access.span.line)
        table[id(access)] = m.Index(prefix, _lane_expr(a, b, access.span), t, access.span)
    new_load = _live_decls(tuple(_replace(s, table) for s in load))

    # the stores of the results: those among the rounds (hoisted after the scan), then the rest
    hoisted = [s for st in rounds for s in _hoisted_stores(st)]
    moved = _stored(hoisted)
    if moved & (_stored(final) | _read(final)):
        raise NotScan(f"it stores into '{sorted(moved)[0]}' among the scan's rounds and uses it after them: the "
                      "barriers between cannot be kept")
    outputs = hoisted + list(final)
    table = {}
    for access in _shared_accesses(outputs, name):
        if any(isinstance(n, m.Assign) and n.target is access for st in outputs for n in m.walk(st)):
            raise NotScan(f"it stores into '{name}' after the last barrier (line {access.span.line})")
        by = run.reads_at.get(id(access))
        if not by:
            raise NotScan(f"the read of '{name}' at line {access.span.line} never runs")
        if any(len(values) != 1 for values in by.values()):
            raise NotScan(f"a thread runs the read of '{name}' at line {access.span.line} more than once")
        lengths = {th: _prefix_length(values[0], start, size, access.span.line, name) for th, values in by.items()}
        a, b = _affine(lengths, f"the prefix of '{name}' read", access.span.line)
        table[id(access)] = m.Index(prefix, _lane_expr(a, b, access.span), t, access.span)
    outputs = [_replace(s, table) for s in outputs]
    if not table:
        raise NotScan(f"no prefix of '{name}' reaches memory")
    # the per-thread values the stores use: load declarations, recomputed in the second lane loop
    changed = assigned_names(fn.body)
    load_decls = {d.name: s for s in load if isinstance(s, m.DeclStmt) for d in s.decls}
    own = _declared(outputs)
    needed, todo = [], [n for n in _locals_read(outputs) if n not in own]
    while todo:
        n = todo.pop()
        if n in needed:
            continue
        if n not in load_decls or n in changed:
            raise NotScan(f"the stores after the scan use '{n}', which the scan's rounds change or set")
        needed.append(n)
        d = next(d for d in load_decls[n].decls if d.name == n)
        if not (d.init is None or pure(d.init, math=False)):
            raise NotScan(f"the stores after the scan use '{n}', whose initialiser has side effects")
        todo += [r for r in _locals_read((m.ExprStmt(d.init, d.span),)) if r not in needed]
    recomputed = [dataclasses.replace(s, decls=tuple(d for d in s.decls if d.name in needed))
                  for s in load if isinstance(s, m.DeclStmt) and any(d.name in needed for d in s.decls)]
    after = tuple(recomputed) + tuple(outputs)
    clash = _read(after) & _stored(fn.body.stmts)
    if clash:
        raise NotScan(f"it reads '{sorted(clash)[0]}' after the scan, which the kernel also writes")
    region = BlockScan(name, t, size, threads, new_load, after, span,
                       dataclasses.replace(rounds[0].span, end_line=rounds[-1].span.end_line,
                                           end_col=rounds[-1].span.end_col))
    variables = {}
    used = set(_locals_read(new_load + after)) | _declared(new_load + after)
    for n, vp in kplan.vars.items():
        if n in used and vp.placement != "shared":
            variables[n] = dataclasses.replace(vp, placement="phase")
    return KernelPlan(fn, "tile", (region,), variables, kplan.aliases)
