"""Thread orders for migrated kernels on TileLang's C target, so that a missing barrier fails.

A portable or tile kernel runs its CUDA threads as ``T.Parallel`` loops (phases) separated by
``T.sync_threads()``. The C target runs each phase as a plain loop, thread 0 first, and one phase
after the other, so a kernel whose barrier is missing or misplaced still computes what the GPU
computes in the one order that never races: a deleted ``T.sync_threads()`` passed its check.

:func:`reorder_threads` gives the migrated side the order the CPU executor's ``--schedule
reverse`` gives the original: the threads of each phase run last to first, and phases that no
barrier separates (adjacent ``T.Parallel`` loops of one extent) run as one loop, each thread
through all of them before the next thread starts, as threads may on a GPU. A kernel whose
result depends on that order reads what another thread writes without a barrier between: its
check fails under ``--schedule reverse``/``random``. The emitted module is unchanged; used by
:func:`runtime.tilelang_support.compile_kernel` for the ``c`` target when
:func:`runtime.tilelang_support.set_cpu_schedule` asks for another order than ``forward``.
"""
from __future__ import annotations


def _parallel(stmt) -> bool:
    from tvm import tirx

    return isinstance(stmt, tirx.For) and stmt.kind == tirx.ForKind.PARALLEL


def _same_extent(a, b) -> bool:
    from tvm.ir import structural_equal

    return structural_equal(a.extent, b.extent) and structural_equal(a.min, b.min)


def _fuse(loops):
    """One parallel loop running the bodies of ``loops`` (same range) one after the other."""
    from tvm import tirx

    first = loops[0]
    bodies = [first.body] + [tirx.stmt_functor.substitute(L.body, {L.loop_var: first.loop_var}) for L in loops[1:]]
    return tirx.For(first.loop_var, first.min, first.extent, first.kind, tirx.SeqStmt(bodies),
                    first.thread_binding, first.annotations)


def _fuse_phases(seq):
    """``seq``'s statements with each run of adjacent parallel loops of one range fused into one
    loop (any other statement between them, a barrier first of all, ends the run)."""
    from tvm import tirx

    out, run = [], []
    for stmt in list(seq.seq) + [None]:
        if stmt is not None and _parallel(stmt) and (not run or _same_extent(run[0], stmt)):
            run.append(stmt)
            continue
        if run:
            out.append(_fuse(run) if len(run) > 1 else run[0])
            run = []
        if stmt is not None and _parallel(stmt):
            run = [stmt]
        elif stmt is not None:
            out.append(stmt)
    if len(out) == len(seq.seq):
        return None
    return tirx.SeqStmt(out) if len(out) > 1 else out[0]


def _reverse(loop):
    """``loop`` with its iterations last to first. Over ``0 .. 2**k - 1`` (a block's threads) the
    thread is ``var ^ last``: the same order, which TVM's simplifier leaves alone (it rewrote
    ``(last - var + 255) % 256`` wrongly on the C target: ``floormod(510 - i, 256)`` as 0 at
    i = 0, where a recomputed thread index met a reversed loop)."""
    from tvm import tirx

    last = loop.min + loop.extent - 1
    n = loop.extent.value if isinstance(loop.extent, tirx.IntImm) else None
    if n is not None and n & (n - 1) == 0 and isinstance(loop.min, tirx.IntImm) and loop.min.value == 0:
        turned = tirx.bitwise_xor(loop.loop_var, tirx.IntImm(loop.loop_var.dtype, n - 1))
    else:
        turned = last - (loop.loop_var - loop.min)
    body = tirx.stmt_functor.substitute(loop.body, {loop.loop_var: turned})
    return tirx.For(loop.loop_var, loop.min, loop.extent, loop.kind, body, loop.thread_binding, loop.annotations)


def reorder_threads(func, schedule: str = "reverse"):
    """``func`` (a ``PrimFunc``) with its phases fused where no barrier separates them and the
    threads of every phase in reverse order; ``func`` itself for ``"forward"``."""
    from tvm import tirx

    if schedule == "forward":
        return func

    # fuse first (the loops of a phase keep their variables apart), then reverse every loop
    body = tirx.stmt_functor.ir_transform(func.body, None, lambda n: _fuse_phases(n) if isinstance(n, tirx.SeqStmt)
                                          else None, ["tirx.SeqStmt"])
    body = tirx.stmt_functor.ir_transform(body, None, lambda n: _reverse(n) if _parallel(n) else None, ["tirx.For"])
    return func.with_body(body)
