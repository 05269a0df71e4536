"""References for the basic-pattern corpus folders.

elementwise/, map2d/, transpose/, stencil/, reduction/, scan/ and histogram/. Each function
recomputes, with numpy, what its kernel is meant to produce: float math in float64 where that
is the more accurate answer, integer math with explicit 32-bit wrap-around.
"""
from __future__ import annotations

import numpy as np

F32 = np.float32
MASK32 = 0xFFFFFFFF


def _f64(a):
    return np.asarray(a, dtype=np.float64)


def _f32(x):
    """A by-value float argument, rounded to float32 the way the kernel receives it."""
    return float(np.float32(x))


# --------------------------------------------------------------------------- elementwise

def vector_add(args, symbols):
    n = args["n"]
    c = args["a"][:n].astype(F32) + args["b"][:n].astype(F32)
    return {"c": c}


def saxpy(args, symbols):
    n = args["n"]
    y = _f64(args["y"]).copy()
    y[:n] = _f32(args["a"]) * _f64(args["x"][:n]) + y[:n]
    return {"y": y}


def gelu_forward(args, symbols):
    x = _f64(args["in"][: args["n"]])
    inner = np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)
    return {"out": 0.5 * x * (1.0 + np.tanh(inner))}


def silu_forward(args, symbols):
    x = _f64(args["in"][: args["n"]])
    beta = _f32(args["beta"])
    return {"out": x / (1.0 + np.exp(-beta * x))}


def clamp_range(args, symbols):
    x = args["in"][: args["n"]].astype(F32)
    return {"out": np.clip(x, F32(args["lo"]), F32(args["hi"]))}


def select_where(args, symbols):
    n = args["n"]
    mask = args["mask"][:n] != 0
    return {"out": np.where(mask, args["a"][:n], args["b"][:n]).astype(F32)}


def vector_add4(args, symbols):
    n = args["n"]
    return {"c": args["a"][:n].astype(F32) + args["b"][:n].astype(F32)}


def _fmix32(h):
    h = h.astype(np.uint64)
    h ^= h >> np.uint64(16)
    h = (h * np.uint64(0x85EBCA6B)) & np.uint64(MASK32)
    h ^= h >> np.uint64(13)
    h = (h * np.uint64(0xC2B2AE35)) & np.uint64(MASK32)
    h ^= h >> np.uint64(16)
    return h.astype(np.uint32)


def hash_keys(args, symbols):
    n = args["n"]
    keys = args["keys"][:n].astype(np.uint32) ^ np.uint32(args["seed"])
    return {"hashes": _fmix32(keys)}


def _popcount32(w):
    w = w.astype(np.uint64)
    return sum(((w >> np.uint64(k)) & np.uint64(1)) for k in range(32)).astype(np.uint32)


def _bit_length32(w):
    w = w.astype(np.uint64)
    return sum(((w >> np.uint64(k)) != 0).astype(np.uint32) for k in range(32)).astype(np.uint32)


def bit_features(args, symbols):
    n = args["n"]
    w = args["words"][:n].astype(np.uint64)
    ones = _popcount32(w).astype(np.uint64)
    leading_zeros = 32 - _bit_length32(w).astype(np.uint64)
    parity = ones & np.uint64(1)
    rot = ((w << np.uint64(7)) | (w >> np.uint64(25))) & np.uint64(MASK32)
    packed = (leading_zeros << np.uint64(26)) | (parity << np.uint64(25)) | (rot & np.uint64(0x01FFFFFF))
    return {"popcounts": ones.astype(np.uint32), "packed": (packed & np.uint64(MASK32)).astype(np.uint32)}


def quantize_symmetric(args, symbols):
    n = args["n"]
    scaled = args["x"][:n].astype(F32) * F32(args["invScale"])   # the float32 product is rounded
    q = np.clip(np.rint(scaled), -127, 127)                       # rint: ties to even
    return {"q": q.astype(np.int8)}


def dequantize_affine(args, symbols):
    n = args["n"]
    centred = (args["q"][:n].astype(np.int32) - int(args["zeroPoint"])).astype(F32)
    return {"y": centred * F32(args["scale"])}


def to_fixed_point_floor(args, symbols):
    n = args["n"]
    scaled = args["x"][:n].astype(F32) * F32(65536.0)            # exact: power of two
    return {"fx": np.floor(scaled).astype(np.int32)}


# --------------------------------------------------------------------------- map2d

def matrix_axpby(args, symbols):
    rows, cols = args["rows"], args["cols"]
    count = rows * cols
    a, b = _f64(args["A"][:count]), _f64(args["B"][:count])
    return {"C": _f32(args["alpha"]) * a + _f32(args["beta"]) * b}


def add_bias_relu(args, symbols):
    rows, cols = args["rows"], args["cols"]
    act = _f64(args["act"]).copy()
    m = act[: rows * cols].reshape(rows, cols) + _f64(args["bias"][:cols])[None, :]
    act[: rows * cols] = np.maximum(m, 0.0).reshape(-1)
    return {"act": act}


def outer_product(args, symbols):
    m, n = args["m"], args["n"]
    x, y = _f64(args["x"][:m]), _f64(args["y"][:n])
    return {"out": (_f32(args["alpha"]) * np.outer(x, y)).reshape(-1)}


def gather_rows(args, symbols):
    num_idx, dim = args["numIdx"], args["dim"]
    table = args["table"].reshape(-1, dim)
    return {"out": table[args["rowIdx"][:num_idx]].reshape(-1)}


# --------------------------------------------------------------------------- transpose

def transpose(args, symbols):
    rows, cols = args["rows"], args["cols"]
    return {"out": args["in"][: rows * cols].reshape(rows, cols).T.reshape(-1)}


# --------------------------------------------------------------------------- stencil

def stencil1d_5pt(args, symbols):
    n = args["n"]
    x = np.zeros(n + 4)                      # zero padding of radius 2 on each side
    x[2:-2] = _f64(args["in"][:n])
    w0, w1, w2 = _f32(0.4), _f32(0.2), _f32(0.1)
    out = w0 * x[2:-2] + w1 * (x[1:-3] + x[3:-1]) + w2 * (x[0:-4] + x[4:])
    return {"out": out}


def jacobi_step(args, symbols):
    nx, ny = args["nx"], args["ny"]
    u = _f64(args["u"][: nx * ny]).reshape(ny, nx)
    f = _f64(args["f"][: nx * ny]).reshape(ny, nx)
    new = _f64(args["uNew"]).copy()
    grid = new[: nx * ny].reshape(ny, nx)    # a view: interior writes land in `new`
    grid[1:-1, 1:-1] = 0.25 * (u[1:-1, :-2] + u[1:-1, 2:] + u[:-2, 1:-1] + u[2:, 1:-1]
                               + _f32(args["h2"]) * f[1:-1, 1:-1])
    return {"uNew": new}


def _face_sum_3d(u):
    """Sum of the six face neighbours of every interior point of u[z, y, x]."""
    return (u[1:-1, 1:-1, :-2] + u[1:-1, 1:-1, 2:]
            + u[1:-1, :-2, 1:-1] + u[1:-1, 2:, 1:-1]
            + u[:-2, 1:-1, 1:-1] + u[2:, 1:-1, 1:-1])


def heat3d_step(args, symbols):
    nx, ny, nz = args["nx"], args["ny"], args["nz"]
    count = nx * ny * nz
    u = _f64(args["in"][:count]).reshape(nz, ny, nx)
    out = _f64(args["out"]).copy()
    view = out[:count].reshape(nz, ny, nx)
    centre = u[1:-1, 1:-1, 1:-1]
    view[1:-1, 1:-1, 1:-1] = centre + _f32(args["alpha"]) * (_face_sum_3d(u) - 6.0 * centre)
    return {"out": out}


def stencil7pt(args, symbols):
    nx, ny, nz = args["nx"], args["ny"], args["nz"]
    count = nx * ny * nz
    u = _f64(args["in"][:count]).reshape(nz, ny, nx)
    out = _f64(args["out"]).copy()
    view = out[:count].reshape(nz, ny, nx)
    view[1:-1, 1:-1, 1:-1] = _f32(args["c0"]) * u[1:-1, 1:-1, 1:-1] + _f32(args["c1"]) * _face_sum_3d(u)
    return {"out": out}


# --------------------------------------------------------------------------- reduction

def block_reduce_sum(args, symbols):
    n = args["n"]
    per_block = 2 * 256                          # each 256-thread block sums 512 inputs
    num_blocks = args["partial"].size
    x = np.zeros(num_blocks * per_block)
    x[:n] = _f64(args["in"][:n])
    return {"partial": x.reshape(num_blocks, per_block).sum(axis=1)}


def reduce_sum_atomic(args, symbols):
    n = args["n"]
    return {"result": _f64(args["result"]) + _f64(args["in"][:n]).sum()}


def reduce_max_int(args, symbols):
    n = args["n"]
    init = args["maxOut"].astype(np.int64)
    return {"maxOut": np.maximum(init, args["in"][:n].astype(np.int64).max()).astype(np.int32)}


def reduce_min_float(args, symbols):
    n = args["n"]
    init = args["minOut"].astype(F32)
    return {"minOut": np.minimum(init, args["in"][:n].astype(F32).min())}


def _ordered_float_bits(x):
    """uint32 keys whose unsigned order is the float order."""
    bits = np.ascontiguousarray(x, dtype=F32).view(np.uint32).astype(np.uint64)
    negative = (bits & np.uint64(0x80000000)) != 0
    return np.where(negative, bits ^ np.uint64(MASK32), bits | np.uint64(0x80000000))


def argmax_packed(args, symbols):
    n = args["n"]
    index = np.arange(n, dtype=np.uint64)
    keys = (_ordered_float_bits(args["in"][:n]) << np.uint64(32)) | (np.uint64(MASK32) - index)
    init = args["best"].astype(np.uint64)
    return {"best": np.maximum(init, keys.max())}


def dot_partial(args, symbols):
    n = args["n"]
    threads = 256                                # DOT_THREADS
    blocks = args["partial"].size                # one partial per block of the grid
    prod = _f64(args["x"][:n]) * _f64(args["y"][:n])
    owner = (np.arange(n) % (blocks * threads)) // threads   # block whose grid-stride loop reads i
    return {"partial": np.bincount(owner, weights=prod, minlength=blocks)}


def sum_partials(args, symbols):
    count = args["count"]
    return {"result": np.array([_f64(args["partial"][:count]).sum()])}


# --------------------------------------------------------------------------- scan

def _segments(x, n, seg, dtype):
    num = -(-n // seg)
    padded = np.zeros(num * seg, dtype=dtype)
    padded[:n] = x[:n]
    return padded.reshape(num, seg)


def block_scan_inclusive_hs(args, symbols):
    n = args["n"]
    segs = _segments(_f64(args["in"]), n, 256, np.float64)
    scanned = np.cumsum(segs, axis=1)
    return {"out": scanned.reshape(-1)[:n], "blockSums": scanned[:, -1]}


def block_scan_exclusive_blelloch(args, symbols):
    n = args["n"]
    segs = _segments(args["in"].astype(np.uint64), n, 256, np.uint64)
    inclusive = np.cumsum(segs, axis=1)
    exclusive = (inclusive - segs) & np.uint64(MASK32)
    totals = inclusive[:, -1] & np.uint64(MASK32)
    return {"out": exclusive.reshape(-1)[:n].astype(np.uint32), "blockSums": totals.astype(np.uint32)}


def add_block_offsets(args, symbols):
    n = args["n"]
    data = args["data"].astype(np.uint64).copy()
    segment = np.arange(n) // 256
    data[:n] = (data[:n] + args["blockOffsets"].astype(np.uint64)[segment]) & np.uint64(MASK32)
    return {"data": data.astype(np.uint32)}


# --------------------------------------------------------------------------- histogram

def histogram256_shared(args, symbols):
    n = args["n"]
    counts = np.bincount(args["data"][:n].astype(np.int64), minlength=256)
    return {"bins": (args["bins"].astype(np.int64) + counts).astype(np.uint32)}


def histogram_float_range(args, symbols):
    n, num_bins = args["n"], args["numBins"]
    v = args["x"][:n].astype(F32)
    lo, inv = F32(args["lo"]), F32(args["invBinWidth"])
    keep = v >= lo
    pos = (v[keep] - lo) * inv                   # float32 arithmetic, as in the kernel
    b = np.trunc(pos).astype(np.int64)
    b = b[b < num_bins]
    counts = np.bincount(b, minlength=num_bins)[:num_bins]
    return {"bins": (args["bins"].astype(np.int64) + counts).astype(np.uint32)}


REFERENCES = {
    # elementwise
    "elementwise/vector_add.cu:vectorAdd": vector_add,
    "elementwise/saxpy.cu:saxpy": saxpy,
    "elementwise/activations.cu:geluForward": gelu_forward,
    "elementwise/activations.cu:siluForward": silu_forward,
    "elementwise/clamp_where.cu:clampRange": clamp_range,
    "elementwise/clamp_where.cu:selectWhere": select_where,
    "elementwise/vector_add_vec4.cu:vectorAdd4": vector_add4,
    "elementwise/bit_ops.cu:hashKeys": hash_keys,
    "elementwise/bit_ops.cu:bitFeatures": bit_features,
    "elementwise/convert.cu:quantizeSymmetric": quantize_symmetric,
    "elementwise/convert.cu:dequantizeAffine": dequantize_affine,
    "elementwise/convert.cu:toFixedPointFloor": to_fixed_point_floor,
    # map2d
    "map2d/matrix_axpby.cu:matrixAxpby": matrix_axpby,
    "map2d/bias_relu.cu:addBiasRelu": add_bias_relu,
    "map2d/outer_gather.cu:outerProduct": outer_product,
    "map2d/outer_gather.cu:gatherRows": gather_rows,
    # transpose
    "transpose/transpose.cu:transposeNaive": transpose,
    "transpose/transpose.cu:transposeTiled": transpose,
    # stencil
    "stencil/stencil1d.cu:stencil1d5pt": stencil1d_5pt,
    "stencil/jacobi2d.cu:jacobiStep": jacobi_step,
    "stencil/stencil3d.cu:heat3dStepZLoop": heat3d_step,
    "stencil/stencil3d.cu:stencil7ptGrid3d": stencil7pt,
    # reduction
    "reduction/block_sum.cu:blockReduceSum": block_reduce_sum,
    "reduction/warp_reduce_sum.cu:reduceSumAtomic": reduce_sum_atomic,
    "reduction/minmax_atomic.cu:reduceMaxInt": reduce_max_int,
    "reduction/minmax_atomic.cu:reduceMinFloat": reduce_min_float,
    "reduction/minmax_atomic.cu:argmaxPacked": argmax_packed,
    "reduction/dot_product.cu:dotPartial": dot_partial,
    "reduction/dot_product.cu:sumPartials": sum_partials,
    # scan
    "scan/block_scan.cu:blockScanInclusiveHS": block_scan_inclusive_hs,
    "scan/block_scan.cu:blockScanExclusiveBlelloch": block_scan_exclusive_blelloch,
    "scan/block_scan.cu:addBlockOffsets": add_block_offsets,
    # histogram
    "histogram/histogram.cu:histogram256Shared": histogram256_shared,
    "histogram/histogram.cu:histogramFloatRange": histogram_float_range,
}
