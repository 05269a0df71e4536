"""TileLang migration of block_scan.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of block_scan.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- blockScanInclusiveHS: portable -----------------------------------------
# barriers are uniform: one T.Parallel phase per barrier interval


def make_blockScanInclusiveHS(grid, block, shared_bytes=0, target="cuda"):  # L33
    """TileLang (portable) for CUDA kernel `blockScanInclusiveHS`; grid/block as in `blockScanInclusiveHS<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "blockScanInclusiveHS indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "blockScanInclusiveHS indexes blocks in x only"
    in__len = T.dynamic("in__len")
    out_len = T.dynamic("out_len")
    blockSums_len = T.dynamic("blockSums_len")

    @T.prim_func
    def blockScanInclusiveHS(in_: T.Tensor((in__len,), T.float32), out: T.Tensor((out_len,), T.float32), blockSums: T.Tensor((blockSums_len,), T.float32), n: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L33
            buf = T.alloc_shared((2, 256,), T.float32, scope="shared")  # L38
            tid = T.alloc_shared((block_x,), T.int32, scope="shared")  # L40
            gid = T.alloc_shared((block_x,), T.int32, scope="shared")  # L41
            pout = T.alloc_shared((block_x,), T.int32, scope="shared")  # L43
            pin = T.alloc_var(T.int32)  # L43
            offset = T.alloc_var(T.int32)  # L47
            for tx in T.Parallel(block_x):  # L38
                tid[tx] = tx  # L40
                gid[tx] = T.Cast(T.int32, T.Cast(T.uint32, bx * 256) + T.Cast(T.uint32, tid[tx]))  # L41
                pout[tx] = 0  # L43
                pin = 1  # L43
                buf[pout[tx], tid[tx]] = T.if_then_else(gid[tx] < n, in_[gid[tx]], T.float32(0.0))  # L44
            T.sync_threads()  # L45
            offset = 1  # L47
            while offset < 256:  # L47
                for tx in T.Parallel(block_x):  # L48
                    pout[tx] = 1 - pout[tx]  # L48
                    pin = 1 - pout[tx]  # L49
                    if tid[tx] >= offset:  # L50
                        buf[pout[tx], tid[tx]] = buf[pin, tid[tx]] + buf[pin, tid[tx] - offset]  # L51
                    else:  # L52
                        buf[pout[tx], tid[tx]] = buf[pin, tid[tx]]  # L53
                T.sync_threads()  # L55
                offset = offset << 1  # L47
            for tx in T.Parallel(block_x):  # L58
                if gid[tx] < n:  # L58
                    out[gid[tx]] = buf[pout[tx], tid[tx]]  # L59
                if tid[tx] == 256 - 1:  # L61
                    blockSums[bx] = buf[pout[tx], tid[tx]]  # L62
    return blockScanInclusiveHS


BLOCKSCANINCLUSIVEHS = Signature(
    name="blockScanInclusiveHS",
    factory=make_blockScanInclusiveHS,
    params=(
        ("in_", "buffer", "float32"),
        ("out", "buffer", "float32"),
        ("blockSums", "buffer", "float32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="portable",
    source="block_scan.cu",
    # every barrier of the CUDA kernel is written out; TileLang must not add its own, which it
    # may place inside loops whose trip count differs between threads (a deadlock on the GPU)
    pass_configs=(("tl.disable_thread_storage_sync", True),),
)


def blockScanInclusiveHS(*args, grid=391, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `blockScanInclusiveHS<<<grid, block, shared_bytes>>>(in_, out, blockSums, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(BLOCKSCANINCLUSIVEHS, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- blockScanExclusiveBlelloch: portable -----------------------------------
# barriers are uniform: one T.Parallel phase per barrier interval


def make_blockScanExclusiveBlelloch(grid, block, shared_bytes=0, target="cuda"):  # L66
    """TileLang (portable) for CUDA kernel `blockScanExclusiveBlelloch`; grid/block as in `blockScanExclusiveBlelloch<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "blockScanExclusiveBlelloch indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "blockScanExclusiveBlelloch indexes blocks in x only"
    in__len = T.dynamic("in__len")
    out_len = T.dynamic("out_len")
    blockSums_len = T.dynamic("blockSums_len")

    @T.prim_func
    def blockScanExclusiveBlelloch(in_: T.Tensor((in__len,), T.uint32), out: T.Tensor((out_len,), T.uint32), blockSums: T.Tensor((blockSums_len,), T.uint32), n: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L66
            temp = T.alloc_shared((256,), T.uint32, scope="shared")  # L71
            tid = T.alloc_shared((block_x,), T.int32, scope="shared")  # L73
            base = T.alloc_var(T.int32)  # L74
            ai = T.alloc_shared((block_x,), T.int32, scope="shared")  # L75
            bi = T.alloc_shared((block_x,), T.int32, scope="shared")  # L76
            offset = T.alloc_shared((block_x,), T.int32, scope="shared")  # L82
            d = T.alloc_var(T.int32)  # L83
            d_2 = T.alloc_var(T.int32)  # L100
            for tx in T.Parallel(block_x):  # L71
                tid[tx] = tx  # L73
                base = bx * (2 * 128)  # L74
                ai[tx] = tid[tx]  # L75
                bi[tx] = tid[tx] + 128  # L76
                temp[ai[tx]] = T.if_then_else(base + ai[tx] < n, in_[base + ai[tx]], T.uint32(0))  # L78
                temp[bi[tx]] = T.if_then_else(base + bi[tx] < n, in_[base + bi[tx]], T.uint32(0))  # L79
                offset[tx] = 1  # L82
            d = 2 * 128 >> 1  # L83
            while d > 0:  # L83
                T.sync_threads()  # L84
                for tx in T.Parallel(block_x):  # L85
                    if tid[tx] < d:  # L85
                        a = offset[tx] * (2 * tid[tx] + 1) - 1  # L86
                        b = offset[tx] * (2 * tid[tx] + 2) - 1  # L87
                        temp[b] = temp[b] + temp[a]  # L88
                    offset[tx] = offset[tx] << 1  # L90
                d = d >> 1  # L83
            for tx in T.Parallel(block_x):  # L94
                if tid[tx] == 0:  # L94
                    blockSums[bx] = temp[2 * 128 - 1]  # L95
                    temp[2 * 128 - 1] = T.uint32(0)  # L96
            d_2 = 1  # L100
            while d_2 < 2 * 128:  # L100
                for tx in T.Parallel(block_x):  # L101
                    offset[tx] = offset[tx] >> 1  # L101
                T.sync_threads()  # L102
                for tx in T.Parallel(block_x):  # L103
                    if tid[tx] < d_2:  # L103
                        a_2 = offset[tx] * (2 * tid[tx] + 1) - 1  # L104
                        b_2 = offset[tx] * (2 * tid[tx] + 2) - 1  # L105
                        t = temp[a_2]  # L106
                        temp[a_2] = temp[b_2]  # L107
                        temp[b_2] = temp[b_2] + t  # L108
                d_2 = d_2 << 1  # L100
            T.sync_threads()  # L111
            for tx in T.Parallel(block_x):  # L113
                if base + ai[tx] < n:  # L113
                    out[base + ai[tx]] = temp[ai[tx]]  # L113
                if base + bi[tx] < n:  # L114
                    out[base + bi[tx]] = temp[bi[tx]]  # L114
    return blockScanExclusiveBlelloch


BLOCKSCANEXCLUSIVEBLELLOCH = Signature(
    name="blockScanExclusiveBlelloch",
    factory=make_blockScanExclusiveBlelloch,
    params=(
        ("in_", "buffer", "uint32"),
        ("out", "buffer", "uint32"),
        ("blockSums", "buffer", "uint32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="portable",
    source="block_scan.cu",
    # every barrier of the CUDA kernel is written out; TileLang must not add its own, which it
    # may place inside loops whose trip count differs between threads (a deadlock on the GPU)
    pass_configs=(("tl.disable_thread_storage_sync", True),),
)


def blockScanExclusiveBlelloch(*args, grid, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `blockScanExclusiveBlelloch<<<grid, block, shared_bytes>>>(in_, out, blockSums, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(BLOCKSCANEXCLUSIVEBLELLOCH, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- addBlockOffsets: tile --------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_addBlockOffsets(grid, block, shared_bytes=0, target="cuda", tile=(1024,), threads=256):  # L117
    """TileLang (tile) for CUDA kernel `addBlockOffsets`; grid/block as in `addBlockOffsets<<<grid, block, shared_bytes>>>`.

    A map over the 1-D element domain in tiles of `tile` (x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "addBlockOffsets indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "addBlockOffsets indexes blocks in x only"
    data_len = T.dynamic("data_len")
    blockOffsets_len = T.dynamic("blockOffsets_len")
    tile_x, = fit_tile(tile, (None,))
    threads = min(threads, tile_x)

    @T.prim_func
    def addBlockOffsets(data: T.Tensor((data_len,), T.uint32), blockOffsets: T.Tensor((blockOffsets_len,), T.uint32), n: T.int32):
        with T.Kernel(T.ceildiv(grid_x * (2 * 128), tile_x), threads=threads) as bx:  # L117
            if bx * tile_x + tile_x <= grid_x * (2 * 128):  # L117
                # a full tile: TileLang drops the guards below and vectorises
                for ix in T.Parallel(tile_x):  # L117
                    gx = bx * tile_x + ix  # L117
                    offset = blockOffsets[gx // (2 * 128)]  # L121
                    base = gx // (2 * 128) * (2 * 128)  # L122
                    k = gx % (2 * 128)  # L123
                    i = base + k  # L124
                    if i < n:  # L125
                        data[i] = data[i] + offset  # L126
            else:  # L117
                # the last tile: elements past the domain do nothing
                for ix in T.Parallel(tile_x):  # L117
                    gx = bx * tile_x + ix  # L117
                    if gx < grid_x * (2 * 128):  # L117
                        offset = blockOffsets[gx // (2 * 128)]  # L121
                        base = gx // (2 * 128) * (2 * 128)  # L122
                        k = gx % (2 * 128)  # L123
                        i = base + k  # L124
                        if i < n:  # L125
                            data[i] = data[i] + offset  # L126
    return addBlockOffsets


ADDBLOCKOFFSETS = Signature(
    name="addBlockOffsets",
    factory=make_addBlockOffsets,
    params=(
        ("data", "buffer", "uint32"),
        ("blockOffsets", "buffer", "uint32"),
        ("n", "scalar", "int32"),
    ),
    template=(),
    symbols=(),
    form="tile",
    source="block_scan.cu",
    # the tile sizes and thread counts `migrate bench --tune` tries
    tune={"threads": [128, 256, 512], "tile": [[512], [1024], [2048], [4096]]},
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation)
    pass_configs=(("tl.disable_safe_memory_legalize", True),),
)


def addBlockOffsets(*args, grid=196, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `addBlockOffsets<<<grid, block, shared_bytes>>>(data, blockOffsets, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(ADDBLOCKOFFSETS, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)


KERNELS = {
    "blockScanInclusiveHS": BLOCKSCANINCLUSIVEHS,
    "blockScanExclusiveBlelloch": BLOCKSCANEXCLUSIVEBLELLOCH,
    "addBlockOffsets": ADDBLOCKOFFSETS,
}
