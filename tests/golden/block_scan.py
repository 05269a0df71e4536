"""TileLang migration of block_scan.cu, written by cuda2tile 0.1.0.

Each kernel has a factory `make_<kernel>(grid, block, shared_bytes, ...)` that returns its
`T.prim_func`, and a launcher `<kernel>(*args, grid=..., block=...)` that runs it like
`<kernel><<<grid, block, shared_bytes>>>(args...)`, with tensors for pointer arguments.
Comments `# L<n>` give the line of block_scan.cu that each statement comes from.
"""
import tilelang.language as T

from migrate.compat import cuda_math
from migrate.runtime.tilelang_support import Signature, fit_tile, launch



# -- blockScanInclusiveHS: tile ---------------------------------------------
# its prefix sum through shared memory becomes T.cumsum over the block's segment


def make_blockScanInclusiveHS(grid, block, shared_bytes=0, target="cuda"):  # L33
    """TileLang (tile) for CUDA kernel `blockScanInclusiveHS`; grid/block as in `blockScanInclusiveHS<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "blockScanInclusiveHS indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "blockScanInclusiveHS indexes blocks in x only"
    in__len = T.dynamic("in__len")
    out_len = T.dynamic("out_len")
    blockSums_len = T.dynamic("blockSums_len")
    assert block_x == 256, "the CUDA scan over 'buf' is proved for 256 threads: launch it with that block size"  # L38

    @T.prim_func
    def blockScanInclusiveHS(in_: T.Tensor((in__len,), T.float32), out: T.Tensor((out_len,), T.float32), blockSums: T.Tensor((blockSums_len,), T.float32), n: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L33
            buf_prefix = T.alloc_shared((257,), T.float32)  # [k]: the sum of the segment's first k elements  # L38
            for _ in T.Parallel(1):  # L38
                buf_prefix[0] = T.float32(0)  # the empty prefix  # L38
            for lane in T.Parallel(block_x):  # the segment's elements, one lane per CUDA thread  # L38
                tid = lane  # L40
                gid = T.Cast(T.int32, T.Cast(T.uint32, bx * 256) + T.Cast(T.uint32, tid))  # L41
                buf_prefix[lane + 1] = T.if_then_else(gid < n, in_[gid], T.float32(0.0))  # L44
            if target == "cuda":  # L45
                T.cumsum(buf_prefix[1:257], dim=0)  # the CUDA rounds over 'buf' (L45-56) as one scan  # L45
            else:  # TileLang's CPU target has no T.cumsum: a running sum  # L45
                for k in T.serial(1, 257):  # L45
                    buf_prefix[k] = buf_prefix[k] + buf_prefix[k - 1]  # L45
            for lane in T.Parallel(block_x):  # what the CUDA threads stored of the sums  # L38
                tid = lane  # L40
                gid = T.Cast(T.int32, T.Cast(T.uint32, bx * 256) + T.Cast(T.uint32, tid))  # L41
                if gid < n:  # L58
                    out[gid] = buf_prefix[lane + 1]  # L59
                if tid == 256 - 1:  # L61
                    blockSums[bx] = buf_prefix[256]  # L62
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
    form="tile",
    source="block_scan.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def blockScanInclusiveHS(*args, grid=391, block=256, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `blockScanInclusiveHS<<<grid, block, shared_bytes>>>(in_, out, blockSums, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(BLOCKSCANINCLUSIVEHS, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- blockScanExclusiveBlelloch: tile ---------------------------------------
# its prefix sum through shared memory becomes T.cumsum over the block's segment


def make_blockScanExclusiveBlelloch(grid, block, shared_bytes=0, target="cuda"):  # L66
    """TileLang (tile) for CUDA kernel `blockScanExclusiveBlelloch`; grid/block as in `blockScanExclusiveBlelloch<<<grid, block, shared_bytes>>>`."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "blockScanExclusiveBlelloch indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "blockScanExclusiveBlelloch indexes blocks in x only"
    in__len = T.dynamic("in__len")
    out_len = T.dynamic("out_len")
    blockSums_len = T.dynamic("blockSums_len")
    assert block_x == 128, "the CUDA scan over 'temp' is proved for 128 threads: launch it with that block size"  # L71

    @T.prim_func
    def blockScanExclusiveBlelloch(in_: T.Tensor((in__len,), T.uint32), out: T.Tensor((out_len,), T.uint32), blockSums: T.Tensor((blockSums_len,), T.uint32), n: T.int32):
        with T.Kernel(grid_x, threads=block_x) as bx:  # L66
            temp_prefix = T.alloc_shared((257,), T.uint32)  # [k]: the sum of the segment's first k elements  # L71
            for _ in T.Parallel(1):  # L71
                temp_prefix[0] = T.uint32(0)  # the empty prefix  # L71
            for lane in T.Parallel(block_x):  # the segment's elements, one lane per CUDA thread  # L71
                tid = lane  # L73
                base = bx * (2 * 128)  # L74
                ai = tid  # L75
                bi = tid + 128  # L76
                temp_prefix[lane + 1] = T.if_then_else(base + ai < n, in_[base + ai], T.uint32(0))  # L78
                temp_prefix[lane + 129] = T.if_then_else(base + bi < n, in_[base + bi], T.uint32(0))  # L79
            if target == "cuda":  # L83
                T.cumsum(temp_prefix[1:257], dim=0)  # the CUDA rounds over 'temp' (L83-111) as one scan  # L83
            else:  # TileLang's CPU target has no T.cumsum: a running sum  # L83
                for k in T.serial(1, 257):  # L83
                    temp_prefix[k] = temp_prefix[k] + temp_prefix[k - 1]  # L83
            for lane in T.Parallel(block_x):  # what the CUDA threads stored of the sums  # L71
                tid = lane  # L73
                base = bx * (2 * 128)  # L74
                ai = tid  # L75
                bi = tid + 128  # L76
                if tid == 0:  # L94
                    blockSums[bx] = temp_prefix[256]  # L95
                if base + ai < n:  # L113
                    out[base + ai] = temp_prefix[lane]  # L113
                if base + bi < n:  # L114
                    out[base + bi] = temp_prefix[lane + 128]  # L114
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
    form="tile",
    source="block_scan.cu",
    # tile form: TileLang places the barriers its tiles need; as in CUDA, buffer accesses are not
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
)


def blockScanExclusiveBlelloch(*args, grid, block=128, shared_bytes=0, template=None, symbols=None, target=None):
    """Run like `blockScanExclusiveBlelloch<<<grid, block, shared_bytes>>>(in_, out, blockSums, n)`.

    Defaults come from the launch sites in the CUDA file."""
    launch(BLOCKSCANEXCLUSIVEBLELLOCH, args, grid=grid, block=block, shared_bytes=shared_bytes,
           template=template, symbols=symbols, target=target)

# -- addBlockOffsets: tile --------------------------------------------------
# its elements are independent: a map over tiles of its element domain


def make_addBlockOffsets(grid, block, shared_bytes=0, target="cuda", tile=(256,), threads=256, fill=True):  # L117
    """TileLang (tile) for CUDA kernel `addBlockOffsets`; grid/block as in `addBlockOffsets<<<grid, block, shared_bytes>>>`.

    A map over the 1-D element domain in tiles of `tile` (x) elements, `threads` threads each."""
    grid_x, grid_y, grid_z = grid
    block_x, block_y, block_z = block
    assert block_y == 1 and block_z == 1, "addBlockOffsets indexes threads in x only"
    assert grid_y == 1 and grid_z == 1, "addBlockOffsets indexes blocks in x only"
    data_len = T.dynamic("data_len")
    blockOffsets_len = T.dynamic("blockOffsets_len")
    tile_x, = fit_tile(tile, (None,), threads if fill else 0)
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
    # bounds-checked (the checks would stop vectorisation); a value bound once under a guard stays
    # one value (TileLang would paste its load into every use)
    pass_configs=(("tl.disable_safe_memory_legalize", True), ("tl.if_stmt_binding_inline_replayable_binds", False)),
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
