"""Runtime: runs original CUDA and migrated TileLang kernels and compares them (no libclang needed).

Running the ORIGINAL CUDA (this package imports nothing from ``migrate.parse``, libclang,
TileLang or torch; numpy and the standard library suffice):

``spec``       corpus spec TOML -> frozen ``KernelSpec`` / ``ArgSpec`` / ``SymbolSpec``; ``SpecError``
``inputs``     seeded random inputs per arg range and dtype, poison for ``out`` buffers, kernel bytes
``compare``    per-output comparison with tolerance classes (exact, fp32, fp32_accum, fp64, fp16,
               bf16, tf32), NaN and poison rules -> ``CompareResult``
``cuda_cpu``   the CPU executor: the ``.cu`` compiled by g++/clang++ with ``cpu/cuda_cpu.h`` (blocks of
               cooperative fibers, real barriers and warp operations, guarded buffers), schedules
               forward / reverse / random
``cuda_gpu``   the GPU executor: the same source and launcher built by ``nvcc -shared``, launched with
               ``cudaLaunchKernel``
``api``        ``run_original(cu_path, kernel_spec, args=None, symbols=None, device="cpu",
               schedule="forward", seed=None, include_dirs=(), defines=(), timeout=120)
               -> RunResult(status, outputs, findings, message, ...)`` and
               ``check_original(cu_path, kernel_spec, reference) -> Check``
``results``    ``RunResult`` (status ok | compile_error | launch_error | oob | crash | deadlock |
               timeout | unavailable) and ``Finding``
``source``     textual rewriting of ``<<<>>>`` launches and ``extern __shared__`` for the host compiler
``build``      generated launcher (``extern "C"`` entry points), content-hash cache of libraries
               (``$CUDA2TILE_CACHE``, default ``~/.cache/cuda2tile``)
``executor``   each run in a child process with a time limit; fault reports -> findings

    from migrate.runtime.api import run_original
    from migrate.runtime.spec import load_spec
    kernel = load_spec("corpus/elementwise/saxpy.toml")[0]
    res = run_original("corpus/elementwise/saxpy.cu", kernel, schedule="random", seed=1)

Command line: ``python -m migrate.runtime run FILE.cu [--kernel ID] [--schedule random] [--device gpu]``.
"""
