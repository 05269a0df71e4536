"""TileLang migration of minmax_atomic.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of minmax_atomic.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch, fill_blocks, hybrid_flags, hybrid_source, source_kernel_with_shared



@T.macro
def orderedFloatBits(bits):  # L61
    return T.if_then_else(bits & T.uint32(2147483648) != 0, ~bits, bits | T.uint32(2147483648))  # L63


# -- reduceMaxInt: tile -----------------------------------------------------
# its warp-shuffle reductions become T.reduce over the block's lanes; its grid grows to fill the GPU


def make_reduceMaxInt(grid, block, shared_bytes=0, target="cuda"):  # L78
    """TileLang (tile) for CUDA kernel `reduceMaxInt`; grid/block as in `reduceMaxInt<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "reduceMaxInt indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "reduceMaxInt indexes blocks in x only"
    in__len = T.dynamic("in__len")
    maxOut_len = T.dynamic("maxOut_len")
    # the result does not depend on the grid (analysis.free_grid): each lane takes the maximum of its
    # grid-stride slice of the elements and atomicMax combines the blocks' totals into 'maxOut', in an
    # order CUDA leaves open. So it launches at least the blocks that fill the GPU at once
    # (fill_blocks), and its lanes stride by the grid it launches
    grid_x = max(grid_x, fill_blocks(block_x))  # L81
    assert block_x % 32 == 0, "the CUDA warp shuffles assume whole warps"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local

    @T.prim_func
    def reduceMaxInt(in_: T.Tensor((in__len,), T.int32), maxOut: T.Tensor((maxOut_len,), T.int32), n: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L78
            local_lanes = alloc_lanes((block_x,), T.int32)  # L80
            local_total = alloc_lanes((1,), T.int32)  # L80
            for lane in lane_loop(block_x):  # L80
                local = T.alloc_var(T.int32)  # L80
                local = -2147483647 - 1  # L80
                i = T.alloc_var(T.int64)  # L81
                i = T.Cast(T.int64, bx * block_x + lane)  # L81
                while i < T.Cast(T.int64, n):  # L81
                    local = T.max(local, in_[i])  # L82
                    i = i + block_x * grid_x  # L81
                local_lanes[lane] = local  # L80
            T.reduce_max(local_lanes, local_total, dim=0)  # L80
            for _ in T.Parallel(1):  # once, as CUDA's thread 0  # L80
                T.atomic_max(maxOut[0], local_total[0])  # L86
    return reduceMaxInt


REDUCEMAXINT = Signature(
    name="reduceMaxInt",
    factory=make_reduceMaxInt,
    params=(
        ("in_", "buffer", "int32"),
        ("maxOut", "buffer", "int32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="minmax_atomic.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def reduceMaxInt(*args, grid=64, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `reduceMaxInt<<<grid, block, shared_bytes>>>(in_, maxOut, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(REDUCEMAXINT, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- reduceMinFloat: hybrid -------------------------------------------------
# Not migrated: device function 'atomicMinFloat': local pointer 'addrAsInt' in device function 'atomicMinFloat': it reads a buffer of float32 as int32 and is used other than by reading or storing an element (each of which would be a bit copy)
# Kept as its CUDA (see report.json for the diagnostics): nvcc compiles minmax_atomic.cu
# (beside this module) with the kernel's definition copied as a device function, called from an
# entry that T.CUDASourceCodeKernel launches; GPUs only.


_REDUCEMINFLOAT_CUDA = r"""
// reduceMinFloat as a device function: its definition (minmax_atomic.cu, line 90), renamed
__device__ __forceinline__ void cuda2tile_body_reduceMinFloat(const float* __restrict__ in, float* __restrict__ minOut, int n)
{
    __shared__ float smin[MIN_THREADS];

    const unsigned int tid = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + tid;
    smin[tid] = (i < n) ? in[i] : FLT_MAX;
    __syncthreads();

    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) {
            smin[tid] = fminf(smin[tid], smin[tid + s]);
        }
        __syncthreads();
    }

    if (tid == 0) {
        atomicMinFloat(minOut, smin[0]);
    }
}

// the entry T.CUDASourceCodeKernel launches: the tensors' data pointers sorted by name (the CUDA
// order), the scalars' bytes last, then the tensors' sizes
extern "C" __global__ void cuda2tile_reduceMinFloat(unsigned char* p00_in, unsigned char* p01_minOut, unsigned char* p03_scalars, int n00, int n01, int n03)
{
    typedef decltype(&cuda2tile_body_reduceMinFloat) F;
    static_assert(sizeof(cuda2tile_arg<2, F>::type) == 4, "n: the tool took it for 4 bytes");
    cuda2tile_body_reduceMinFloat(
        (cuda2tile_arg<0, F>::type) p00_in,
        (cuda2tile_arg<1, F>::type) p01_minOut,
        cuda2tile_scalar<cuda2tile_arg<2, F>::type>(p03_scalars + 0));
}
"""


def make_reduceMinFloat(grid, block, shared_bytes=0, target="cuda"):  # L90
    """The CUDA kernel `reduceMinFloat` as it is (hybrid form): compiled by nvcc from minmax_atomic.cu, GPUs only."""
    if target == "c":
        raise NotImplementedError("reduceMinFloat is kept as CUDA (hybrid form): it runs on GPUs only")
    source = hybrid_source(__file__, 'minmax_atomic.cu', _REDUCEMINFLOAT_CUDA)
    n00, n01, n03 = T.dynamic('n00, n01, n03')

    @T.prim_func
    def hybrid_reduceMinFloat(p00_in: T.Tensor((n00,), "uint8"), p01_minOut: T.Tensor((n01,), "uint8"), p03_scalars: T.Tensor((n03,), "uint8")):
        if shared_bytes:  # extern __shared__: T.CUDASourceCodeKernel launches without dynamic shared memory
            source_kernel_with_shared(grid, block, shared_bytes, source, "cuda2tile_reduceMinFloat")
        else:
            T.CUDASourceCodeKernel(*grid, threads=list(block), source_code_or_path=source, entry_name="cuda2tile_reduceMinFloat")  # L90

    return hybrid_reduceMinFloat


REDUCEMINFLOAT = Signature(
    name="reduceMinFloat",
    factory=make_reduceMinFloat,
    params=(
        ("in", "buffer", "float32"),
        ("minOut", "buffer", "float32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="hybrid",
    source="minmax_atomic.cu",
    # kept as CUDA: each scalar's (parameter, byte offset, size) in the bytes its entry reads
    hybrid=(('n', 0, 4),),
    # nvcc searches this module's folder, then the folders of the build it was converted from
    # (paths of the machine that converted it: edit them, or set CUDA2TILE_INCLUDE), with its macros
    pass_configs=(("tl.device_compile_flags", hybrid_flags(__file__, (), ())),),
)


def reduceMinFloat(*args, grid=391, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `reduceMinFloat<<<grid, block, shared_bytes>>>(in, minOut, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(REDUCEMINFLOAT, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- argmaxPacked: tile -----------------------------------------------------
# its warp-shuffle reductions become T.reduce over the block's lanes; its grid grows to fill the GPU


def make_argmaxPacked(grid, block, shared_bytes=0, target="cuda"):  # L111
    """TileLang (tile) for CUDA kernel `argmaxPacked`; grid/block as in `argmaxPacked<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "argmaxPacked indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "argmaxPacked indexes blocks in x only"
    in__len = T.dynamic("in__len")
    best_len = T.dynamic("best_len")
    # the result does not depend on the grid (analysis.free_grid): each lane takes the maximum of its
    # grid-stride slice of the elements and atomicMax combines the blocks' totals into 'best', in an
    # order CUDA leaves open. So it launches at least the blocks that fill the GPU at once
    # (fill_blocks), and its lanes stride by the grid it launches
    grid_x = max(grid_x, fill_blocks(block_x))  # L114
    assert block_x % 32 == 0, "the CUDA warp shuffles assume whole warps"
    # one lane per CUDA thread: a T.Parallel loop over fragments on GPUs, a serial loop over
    # thread-local buffers on the CPU target (whose T.reduce takes local buffers only)
    lane_loop = T.Parallel if target == "cuda" else T.serial
    alloc_lanes = T.alloc_fragment if target == "cuda" else T.alloc_local

    @T.prim_func
    def argmaxPacked(in_: T.Tensor((in__len,), T.float32), best: T.Tensor((best_len,), T.uint64), n: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L111
            key_lanes = alloc_lanes((block_x,), T.uint64)  # L113
            key_total = alloc_lanes((1,), T.uint64)  # L113
            for lane in lane_loop(block_x):  # L113
                key = T.alloc_var(T.uint64)  # L113
                key = T.uint64(0)  # L113
                i = T.alloc_var(T.int64)  # L114
                i = T.Cast(T.int64, bx * block_x + lane)  # L114
                while i < T.Cast(T.int64, n):  # L114
                    k = T.alloc_var(T.uint64)  # L115
                    k = T.Cast(T.uint64, orderedFloatBits(T.reinterpret(in_[i], 'uint32'))) << 32 | T.Cast(T.uint64, T.uint32(4294967295) - T.Cast(T.uint32, i))  # L115
                    key = T.if_then_else(T.Cast(T.int64, k ^ T.uint64(0x8000000000000000)) > T.Cast(T.int64, key ^ T.uint64(0x8000000000000000)), k, key)  # L118
                    i = i + block_x * grid_x  # L114
                key_lanes[lane] = key  # L113
            T.reduce_max(key_lanes, key_total, dim=0)  # L113
            for _ in T.Parallel(1):  # once, as CUDA's thread 0  # L113
                T.atomic_max(best[0], key_total[0])  # L122
    return argmaxPacked


ARGMAXPACKED = Signature(
    name="argmaxPacked",
    factory=make_argmaxPacked,
    params=(
        ("in_", "buffer", "float32"),
        ("best", "buffer", "uint64"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="minmax_atomic.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def argmaxPacked(*args, grid=50, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `argmaxPacked<<<grid, block, shared_bytes>>>(in_, best, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(ARGMAXPACKED, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "reduceMaxInt": REDUCEMAXINT,
    "reduceMinFloat": REDUCEMINFLOAT,
    "argmaxPacked": ARGMAXPACKED,
}
