"""TileLang migration of saxpy.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of saxpy.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, launch



# -- saxpy: portable --------------------------------------------------------
# barriers are uniform: one T.Parallel phase per barrier interval


def make_saxpy(grid, block, shared_bytes=0, target="cuda"):  # L25
    """TileLang (portable) for CUDA kernel `saxpy`; grid/block as in `saxpy<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "saxpy indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "saxpy indexes blocks in x only"
    x_len = T.dynamic("x_len")
    y_len = T.dynamic("y_len")

    @T.prim_func
    def saxpy(n: T.int32, a: T.float32, x: T.Tensor((x_len,), T.float32), y: T.Tensor((y_len,), T.float32)):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L25
            for tx in T.Parallel(block_x):  # L27
                i = T.alloc_var(T.int32)  # L27
                i = bx * block_x + tx  # L27
                while i < n:  # L27
                    y[i] = a * x[i] + y[i]  # L28
                    i = i + block_x * grid_x  # L27
    return saxpy


SAXPY = Signature(
    name="saxpy",
    factory=make_saxpy,
    params=(
        ("n", "scalar", "int32"),
        ("a", "scalar", "float32"),
        ("x", "buffer", "float32"),
        ("y", "buffer", "float32"),
    ),
    template=(),
    symbols=(),
    form="portable",
    source="saxpy.cu",
    # every barrier of the CUDA kernel is written out; TileLang must not add its own, which it
    # may place inside loops whose trip count differs between threads (a deadlock on the GPU)
    pass_configs=(("tl.disable_thread_storage_sync", True),),
)


def saxpy(*args, grid=160, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `saxpy<<<grid, block, shared_bytes>>>(n, a, x, y)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(SAXPY, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "saxpy": SAXPY,
}
