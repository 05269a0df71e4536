"""Block-wide votes (``__syncthreads_count``, ``__syncthreads_and``, ``__syncthreads_or``) as the
barriers and shared counter they amount to.

``int n = __syncthreads_count(p);`` (``__syncthreads_and``/``_or`` alike) becomes, where it stands:

    if (rank == 0) votes = 0;   __syncthreads();     (rank: in the dimensions the kernel indexes)
    if (p) atomicAdd(&votes, 1);  __syncthreads();
    int n = votes;               __syncthreads();

with ``votes`` a ``__shared__ int`` of the kernel and ``rank`` the thread's rank in the block;
``__syncthreads_and(p)`` is ``votes == blockDim.x * blockDim.y * blockDim.z`` and
``__syncthreads_or(p)`` is ``votes != 0``. The first barrier is the vote's own (every store before
the vote is seen after it, as CUDA promises); the last lets the counter be reset by the next vote.
A vote is hoisted before the statement that uses its value (the inliner's mechanism), so it may
stand in an initialiser, an assignment or an if's condition, not in a loop header.

That counter is the CPU target's vote (and the GPU's where a TileLang thread may run several
CUDA threads): on GPUs the vote is the CUDA's own, one ``BAR.RED`` where the counter costs three
barriers, a shared store, a shared atomic and a load per vote (nms's ``reduce_nms_bitmap``, 32
votes in a loop, ran 1.12x slower than its CUDA). The vote stands as

    if (NATIVE_VOTES) { int n = __syncthreads_and(p); } else { <the counter, above> }

``NATIVE_VOTES`` (:func:`native_votes`) a block-uniform test the emitters print as
``target == "cuda"`` where every thread of the block runs the vote's statement (emit.portable:
each thread one CUDA thread, no thread left out by a predicate) and as false elsewhere; the vote
is itself the barrier, and its result the same in every thread (facts.divergence).
"""
from __future__ import annotations

import dataclasses

from ...ir import model as m
from ...ir.exprs import BLOCK_VOTES, NATIVE_VOTES
from .inline import Inliner

VOTES = BLOCK_VOTES
I32 = m.Scalar("int32")
U32 = m.Scalar("uint32")
BOOL = m.Scalar("bool")


def _int(v: int, span) -> m.IntLit:
    return m.IntLit(v, str(v), I32, span)


def _dim(name: str, d: str, span) -> m.Expr:
    return m.Cast(I32, m.Builtin(name, d, U32, span), "implicit", I32, span)


def _sync(span) -> m.ExprStmt:
    return m.ExprStmt(m.Call("__syncthreads", (), "sync", (), m.Scalar("void"), span), span)


def _assign(target, value, span) -> m.ExprStmt:
    return m.ExprStmt(m.Assign("=", target, value, target.type, span), span)


def native_votes(span) -> m.Call:
    """The block-uniform test of the native vote's branch (module docstring)."""
    return m.Call(NATIVE_VOTES, (), "sync", (), BOOL, span)


class _Votes(Inliner):
    what = "block-wide vote"

    def __init__(self, dims: tuple[str, ...]) -> None:
        super().__init__({}, set())
        self.counter_ref: m.Ref | None = None
        self.dims = dims  # the block dimensions the kernel indexes (x at least)

    def is_target(self, node) -> bool:
        return isinstance(node, m.Call) and node.callee in VOTES and len(node.args) == 1

    def describe(self, node) -> str:
        return self.what

    def result_base(self, call) -> str:
        return call.callee.lstrip("_")

    def result_type(self, call) -> m.CType:
        return I32

    def expand(self, call: m.Call, result: m.Ref | None, depth) -> list:
        span = call.span
        if self.counter_ref is None:
            self.counter_ref = m.Ref(self.fresh("block_votes"), "shared", I32, span)
        votes = self.counter_ref
        first = None
        for d in self.dims:
            test = m.Binary("==", _dim("threadIdx", d, span), _int(0, span), BOOL, span)
            first = test if first is None else m.Binary("&&", first, test, BOOL, span)
        pred = call.args[0]
        if pred.type != BOOL:
            pred = m.Binary("!=", pred, _int(0, span), BOOL, span)
        add = m.Call("atomicAdd", (m.Unary("&", votes, False, m.Pointer(I32), span), _int(1, span)), "atomic", (),
                     I32, span)
        out = [m.If(first, m.Block((_assign(votes, _int(0, span), span),), span), None, span), _sync(span),
               m.If(pred, m.Block((m.ExprStmt(add, span),), span), None, span), _sync(span)]
        if result is not None:
            if call.callee == "__syncthreads_and":
                threads = None
                for d in self.dims:
                    size = _dim("blockDim", d, span)
                    threads = size if threads is None else m.Binary("*", threads, size, I32, span)
                value = m.Cast(I32, m.Binary("==", votes, threads, BOOL, span), "implicit", I32, span)
            elif call.callee == "__syncthreads_or":
                value = m.Cast(I32, m.Binary("!=", votes, _int(0, span), BOOL, span), "implicit", I32, span)
            else:
                value = votes
            out.append(_assign(result, value, span))
        out.append(_sync(span))
        vote = m.Call(call.callee, (call.args[0],), "sync", (), I32, span)
        native = _assign(result, vote, span) if result is not None else m.ExprStmt(vote, span)
        return [m.If(native_votes(span), m.Block((native,), span), m.Block(tuple(out), span), span)]


def uses_votes(fn: m.Function) -> bool:
    return fn.body is not None and any(isinstance(n, m.Call) and n.callee in VOTES for n in m.walk(fn.body))


def lower_block_votes(fn: m.Function) -> m.Function:
    """``fn`` with each block-wide vote lowered to barriers and a shared counter (module docstring);
    a vote the inliner's hoisting cannot place raises its :class:`~.inline.InlineError`."""
    if not uses_votes(fn):
        return fn
    # the rank in the dimensions the kernel indexes: one it indexes in x only is launched with
    # 1-D blocks (its factory asserts so), and the vote adds no dimension to it
    dims = ("x",) + tuple(d for d in ("y", "z") if any(
        isinstance(n, m.Builtin) and n.var in ("threadIdx", "blockDim") and n.dim == d for n in m.walk(fn.body)))
    low = _Votes(dims)
    stmts = low.stmts(fn.body.stmts)
    if low.counter_ref is not None:
        ref = low.counter_ref
        stmts = (m.DeclStmt((m.VarDecl(ref.name, I32, "shared", False, None, ref.span),), ref.span),) + stmts
    return dataclasses.replace(fn, body=dataclasses.replace(fn.body, stmts=stmts))
