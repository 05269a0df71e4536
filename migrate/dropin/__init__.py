"""Drop-in builds: the original CUDA program rebuilt with its migrated kernels (``migrate build``)
and run beside the original (``migrate run``).

``lower``    a migrated kernel lowered by TileLang to CUDA for one launch geometry, with TileLang's
             own host launcher, its entry points renamed per variant
``sites``    where the launches and the kernel's definition stand in the source text
``shim``     the host-side launch shim that picks a variant for the run-time geometry
``geometry`` the geometries to build: the launchers' defaults and recorded launches
``nvcc``     the build commands (tables of flags)
``build``    the driver writing DIR/<program>/ and DIR/build.json
``stdout``   comparing two programs' standard output under tolerance classes
``run``      running the original and the rebuilt program and comparing them

Nothing here imports libclang: it works from an output folder of ``migrate convert``.
"""
