"""Autotuning a lifted kernel with TileLang's own autotuner (``tilelang.autotuner.AutoTuner``).

A tile-form factory takes its tile sizes, thread count and pipeline depth as keywords, and its
:class:`~.tilelang_support.Signature` lists a small search space (``Signature.tune``:
``{keyword: [values]}``). :func:`autotune` hands that space to TileLang's autotuner, the engine
behind ``@tilelang.autotune``: it compiles the configurations in parallel and times each with
CUDA events on the caller's own tensors (the arguments of one launch). The fastest configuration
is remembered for the launch configuration, so later :func:`~.tilelang_support.launch` calls
(the emitted launchers) run it::

    from migrate.runtime.tuning import autotune
    best = autotune(mod.SOFTMAX_ROWS, (x, y, rows, cols), grid=rows, block=128)
    mod.softmax_rows(x, y, rows, cols, grid=rows, block=128)   # runs best.config

TileLang's validation is left off (a kernel writes its outputs in place and returns nothing to
compare): ``migrate bench --tune`` checks the chosen configuration against the original CUDA on
fresh inputs before it reports it. Needs a CUDA GPU; imports neither libclang nor the frontend.
"""
from __future__ import annotations

import inspect
import itertools
from dataclasses import dataclass, field

from .tilelang_support import (Signature, TUNED, arguments, dims, pass_configs, prim_func, static_sizes,
                               tuned_key, without_static)


class TuneError(Exception):
    """The kernel cannot be tuned here (no search space, no GPU, no configuration compiled)."""


@dataclass
class TuneResult:
    config: dict  # the fastest factory options
    latency_ms: float  # as TileLang's autotuner timed it
    tried: int  # configurations in the search
    configs: list = field(default_factory=list)


def tune_configs(space: dict, limit: int = 24) -> list[dict]:
    """The configurations of a tune space (``{keyword: [values]}``), at most ``limit`` of them,
    spread evenly over the full product."""
    keys = sorted(space)
    combos = list(itertools.product(*(space[k] for k in keys)))
    if len(combos) > limit:
        step = len(combos) / limit
        combos = [combos[int(i * step)] for i in range(limit)]
    return [dict(zip(keys, c)) for c in combos]


@dataclass(frozen=True)
class _Launch:
    """What a tuned program is elaborated for: everything but the tuned keywords."""
    sig: Signature
    grid: tuple
    block: tuple
    shared_bytes: int
    template: tuple | None
    sizes: dict

    def prim_func(self, options: dict):
        return prim_func(self.sig, self.grid, self.block, self.shared_bytes, self.template, "cuda", options,
                         self.sizes)[0]

    @property
    def pass_configs(self) -> dict:
        return pass_configs(self.sig, "cuda", bool(self.sizes))   # the autotuner compiles for the GPU


def tunable_program(launch: _Launch, keys):
    """The function TileLang's autotuner searches: one keyword parameter per tuned factory option,
    returning the kernel's ``T.prim_func`` for those options. The autotuner binds a
    configuration's keys to the function's parameters and requires a closure of plain values only,
    so the launch travels as a default argument and the parameters are declared explicitly."""
    def program(_launch=launch, **options):
        return _launch.prim_func(options)

    params = [inspect.Parameter("_launch", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=launch)]
    params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY) for k in sorted(keys)]
    program.__signature__ = inspect.Signature(params)
    program.__name__ = f"tune_{launch.sig.name}"
    return program


def autotune(sig: Signature, args, *, grid, block, shared_bytes: int = 0, template=None, symbols=None,
             configs=None, limit: int = 24, warmup: int = 25, rep: int = 100, timeout: int = 60) -> TuneResult:
    """Search ``sig``'s tune space (or ``configs``) with TileLang's autotuner on the tensors of the
    launch ``kernel<<<grid, block, shared_bytes>>>(*args)`` and remember the fastest configuration
    for that launch; outputs in ``args`` are overwritten by the trial runs."""
    import torch

    if not sig.tune and not configs:
        raise TuneError(f"{sig.name} has no tune space (only tile-form kernels have one)")
    if not torch.cuda.is_available():
        raise TuneError("autotuning times kernels on a CUDA GPU; none is available")
    from tilelang.autotuner import AutoTuner

    sizes = static_sizes(sig, args, "cuda")
    call = without_static(sig, arguments(sig, args, symbols, template, "cuda"), sizes)
    launch = _Launch(sig, dims(grid), dims(block), int(shared_bytes), tuple(template) if template else None, sizes)
    configs = list(configs or tune_configs(sig.tune, limit))
    keys = set().union(*(c.keys() for c in configs))
    tuner = AutoTuner.from_kernel(tunable_program(launch, keys), configs)
    tuner.set_compile_args(target="cuda", pass_configs=launch.pass_configs or None)
    tuner.set_profile_args(supply_prog=lambda _params: call, skip_check=True, warmup=warmup, rep=rep,
                           timeout=timeout)
    try:
        result = tuner.run(warmup=warmup, rep=rep, timeout=timeout)
    except RuntimeError as exc:  # "Auto-tuning failed: No configuration successfully compiled ..."
        raise TuneError(f"{sig.name}: {exc}") from exc
    best = {k: v for k, v in (result.config or {}).items() if k in keys}
    TUNED[tuned_key(sig, grid, block, shared_bytes, template, sizes)] = best
    return TuneResult(best, float(result.latency), len(configs), configs)
