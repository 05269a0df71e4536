"""Block reductions inside block-uniform loops (analysis.lift.reduce): a grid-stride loop over
rows, a loop over tiles, each iteration with its own ``T.reduce_*``; per-thread values that
live across iterations in buffers of the block's lanes. Checked on the CPU against the CUDA
compiled with g++, and lowered for sm_90a."""
from __future__ import annotations

from tests.analysis.lift.support import convert, factory, load, note, refused_or_tiled

ROW_SUMS = """
    __global__ void row_sums(const float* __restrict__ x, float* __restrict__ out, int rows, int cols) {
        __shared__ float s[128];
        int tid = threadIdx.x;
        for (int row = blockIdx.x; row < rows; row += gridDim.x) {
            float acc = 0.0f;
            for (int c = tid; c < cols; c += blockDim.x) acc += x[row * cols + c];
            s[tid] = acc;
            __syncthreads();
            for (int w = blockDim.x / 2; w > 0; w >>= 1) {
                if (tid < w) s[tid] += s[tid + w];
                __syncthreads();
            }
            if (tid == 0) out[row] = s[0];
            __syncthreads();
        }
    }
"""

ROW_SUMS_SPEC = """
    [[kernel]]
    name = "row_sums"
    grid = [5, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 5100
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 17
    role = "out"
    [[kernel.args]]
    name = "rows"
    scalar = "int32"
    value = 17
    [[kernel.args]]
    name = "cols"
    scalar = "int32"
    value = 300
"""


def test_grid_stride_row_loop_with_a_tree_lifts_and_agrees_on_cpu(tmp_path):
    """17 rows over 5 blocks: each block's loop runs 3 or 4 rows, one T.reduce_sum per row."""
    kernels, text = convert(tmp_path, ROW_SUMS, "--check", "cpu", spec=ROW_SUMS_SPEC)
    k = kernels["row_sums"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "row_sums")
    loop = body.index("while row < rows:")
    assert body.index("T.reduce_sum(s_lanes, s_total, dim=0)") > loop
    assert "T.sync_threads" not in body and "alloc_shared" not in body


TILES = """
    __global__ void tile_scale(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ maxes,
                               int n, int tiles) {
        __shared__ float s[64];
        int tid = threadIdx.x;
        float run = 0.0f;  // per thread, across the tiles
        for (int t = 0; t < tiles; ++t) {
            int i = (blockIdx.x * tiles + t) * blockDim.x + tid;
            float v = i < n ? x[i] : 0.0f;
            run += v;
            s[tid] = fabsf(v);
            __syncthreads();
            for (int w = blockDim.x / 2; w > 0; w >>= 1) {
                if (tid < w) s[tid] = fmaxf(s[tid], s[tid + w]);
                __syncthreads();
            }
            if (tid == 0) maxes[blockIdx.x * tiles + t] = s[0];
            run = run / (s[0] + 1.0f);
            __syncthreads();
        }
        y[blockIdx.x * blockDim.x + tid] = run;
    }

    // the way cub::BlockReduce(...).Sum() inlines: every thread reads the total back, a
    // per-thread counter across the rows, thread 0 adds it up at the end
    __global__ void count_top(const int N, const int D, const int top_k, const float* __restrict__ X,
                              const int* __restrict__ labels, int* __restrict__ hits) {
        __shared__ int s[128];
        int count = 0;
        for (int row = blockIdx.x; row < N; row += gridDim.x) {
            const int label = labels[row];
            const float lp = X[row * D + label];
            int ngt = 0;
            for (int col = threadIdx.x; col < D; col += blockDim.x) {
                const float p = X[row * D + col];
                if (p > lp || (p == lp && col <= label)) ++ngt;
            }
            s[threadIdx.x] = ngt;
            __syncthreads();
            for (int w = blockDim.x / 2; w > 0; w >>= 1) {
                if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
                __syncthreads();
            }
            ngt = s[0];
            if (ngt <= top_k) ++count;
            __syncthreads();
        }
        if (threadIdx.x == 0) atomicAdd(hits, count);
    }
"""

TILES_SPEC = """
    [[kernel]]
    name = "tile_scale"
    grid = [3, 1, 1]
    block = [64, 1, 1]
    tolerance = "fp32"
    [[kernel.args]]
    name = "x"
    buffer = "float32"
    elements = 1100
    role = "in"
    range = [-3.0, 3.0]
    [[kernel.args]]
    name = "y"
    buffer = "float32"
    elements = 192
    role = "out"
    [[kernel.args]]
    name = "maxes"
    buffer = "float32"
    elements = 18
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 1100
    [[kernel.args]]
    name = "tiles"
    scalar = "int32"
    value = 6

    [[kernel]]
    name = "count_top"
    grid = [4, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "N"
    scalar = "int32"
    value = 23
    [[kernel.args]]
    name = "D"
    scalar = "int32"
    value = 150
    [[kernel.args]]
    name = "top_k"
    scalar = "int32"
    value = 40
    [[kernel.args]]
    name = "X"
    buffer = "float32"
    elements = 3450
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "labels"
    buffer = "int32"
    elements = 23
    role = "in"
    range = [0, 149]
    [[kernel.args]]
    name = "hits"
    buffer = "int32"
    elements = 1
    role = "inout"
    range = [3, 9]
"""


def test_loop_over_tiles_keeps_per_thread_state_in_lane_buffers_and_agrees_on_cpu(tmp_path):
    kernels, text = convert(tmp_path, TILES, "--check", "cpu", spec=TILES_SPEC)
    for name in ("tile_scale", "count_top"):
        k = kernels[name]
        assert k["form"] == "tile" and k["check"]["status"] == "pass", (name, k["check"], note(k))
    scale = factory(text, "tile_scale")
    # the running sum lives across the tiles: a buffer of the lanes, set once before the loop
    assert "run = alloc_lanes((block_x,), T.float32)" in scale
    assert scale.index("run[lane] = T.float32(0.0)") < scale.index("for t in T.serial(tiles):") \
        < scale.index("T.reduce_max(s_lanes, s_total, dim=0)") < scale.index("run[lane] = run[lane] / (s_total[0] + 1.0)")
    top = factory(text, "count_top")
    assert "count = alloc_lanes((block_x,), T.int32)" in top
    # every lane reads the total back, as every CUDA thread read s[0]
    assert "ngt[lane] = s_total[0]" in top
    assert "T.sync_threads" not in scale + top and "alloc_shared" not in scale + top


def test_loop_reductions_lower_for_sm90a(tmp_path):
    from tests.lowering import lower_sm90
    _, _ = convert(tmp_path, TILES)
    mod = load(tmp_path / "out" / "k.py")
    src = lower_sm90(mod.COUNT_TOP, (4, 1, 1), (128, 1, 1))
    loop = src.index("while (1)")
    assert src.index("tl::AllReduce<tl::SumOp, 128") > loop
    src = lower_sm90(mod.TILE_SCALE, (3, 1, 1), (64, 1, 1))
    assert "tl::AllReduce<tl::MaxOp, 64" in src


def test_lanes_exchanging_data_across_iterations_are_refused(tmp_path):
    """Each iteration reads what another thread stored in the one before: the loop's barriers
    order that exchange, which lane loops cannot."""
    source = ROW_SUMS.replace("float acc = 0.0f;", "float acc = row > 0 ? out[row - 1] * (float)tid : 0.0f;")
    source = source.replace("if (tid == 0) out[row] = s[0];", "out[row] = s[0];")
    kernels, _ = convert(tmp_path, source)
    k = kernels["row_sums"]
    assert k["form"] == "portable" and "lanes exchange 'out' through memory across a barrier" in note(k), note(k)


def test_lanes_storing_to_one_buffer_in_every_iteration_are_refused(tmp_path):
    """Lane code storing to 'y' in each iteration: two lanes could store to one place in two
    iterations, which the barriers ordered and lane loops do not (not proved apart: refused)."""
    source = TILES.replace("run = run / (s[0] + 1.0f);", "if (i < n) y[i] = run / (s[0] + 1.0f);")
    kernels, _ = convert(tmp_path, source)
    k = kernels["tile_scale"]
    assert k["form"] == "portable" and "lanes exchange 'y' through memory across a barrier" in note(k), note(k)


def test_loop_whose_barriers_order_no_reduction_keeps_its_reason(tmp_path):
    """A tree with other arithmetic in its step is no reduction: its loop is named."""
    source = ROW_SUMS.replace("s[tid] += s[tid + w];", "s[tid] += 2.0f * s[tid + w];")
    # the tiled loops' pass, tried last, names what stops its lanes
    refused_or_tiled(tmp_path, source, "row_sums", "lane code reads shared 's' (line 12) in the stretch that "
                     "stores to it at another place", ROW_SUMS_SPEC)


VOTE = """
    __global__ void vote_rows(const int* __restrict__ rows, const int* __restrict__ lut, const float* __restrict__ y0,
                              const float* __restrict__ bias, int n, int* __restrict__ flags, float* __restrict__ y1) {
        int tid = threadIdx.x;
        int rid = rows[blockIdx.x] % 8 == 0 ? blockIdx.x : (blockIdx.x + 8) % 8;  // a load the block shares: its own row
        float b = bias[threadIdx.x];
        if (lut[rid] < 0) {
            y1[rid * n + tid] = y0[rid * n + tid] + b;
            flags[rid] = -5;
            return;
        }
        float d = y0[lut[rid] * n + tid] + b - y0[rid * n + tid];
        float val = fabsf(d) > 0.5f ? d : 0.0f;
        int count = __syncthreads_count(val != 0.0f);
        y1[rid * n + tid] = val;
        if (tid == 0) flags[rid] = count;
    }
"""

VOTE_SPEC = """
    [[kernel]]
    name = "vote_rows"
    grid = [8, 1, 1]
    block = [64, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "rows"
    buffer = "int32"
    elements = 8
    role = "in"
    range = [0, 9]
    [[kernel.args]]
    name = "lut"
    buffer = "int32"
    elements = 8
    role = "in"
    range = [-3, 7]
    [[kernel.args]]
    name = "y0"
    buffer = "float32"
    elements = 512
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "bias"
    buffer = "float32"
    elements = 64
    role = "in"
    range = [-0.5, 0.5]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 64
    [[kernel.args]]
    name = "flags"
    buffer = "int32"
    elements = 8
    role = "out"
    [[kernel.args]]
    name = "y1"
    buffer = "float32"
    elements = 512
    role = "out"
"""


def test_vote_count_reads_per_thread_values_in_lane_code_and_agrees_on_cpu(tmp_path):
    """The vote's statements name no thread index but read per-thread values ('val'): they are
    lane code (snicit's update_post), the count read back by every lane."""
    kernels, text = convert(tmp_path, VOTE, "--check", "cpu", spec=VOTE_SPEC)
    k = kernels["vote_rows"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["check"], note(k))
    body = factory(text, "vote_rows")
    assert "T.reduce_sum(" in body and "T.sync_threads" not in body and "alloc_shared" not in body
