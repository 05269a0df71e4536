"""The CUDA -> TileLang compat table and everything derived from its rows.

``table``       the rows: one per CUDA device API name (and overload), as data
``catalog``     the name -> section map the frontend classifies calls with (row sections derived
                from ``table``; API without rows listed by hand)
``externs``     the extern helpers' C and CUDA bodies: one C body per function, for TileLang's
                ``c`` target and for the CPU executor running the original program
``cuda_math``   the rows as TileLang expression functions, ``render`` and the kernel preludes
``numpy_ref``   independent numpy models of the CUDA functions, and test input domains
``verify``      the harness running rows on ``c`` and lowering them for CUDA (tests/compat)
``doc``         ``docs/compat.md``
``cpu_header``  ``runtime/cpu/c2t_compat_math.h``: the executor's definitions from the C bodies
``generate``    ``python -m migrate.compat.generate`` rewrites the generated files (``--check``)

Adding a function: ``docs/compat-howto.md``.
"""
