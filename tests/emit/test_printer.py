"""The statement printer (emit.printer): counted loops whose range differs between the threads of
the T.Parallel loop around them."""
from __future__ import annotations

from tests.analysis.lift.support import convert, load
from tests.lowering import lower_sm90

# -- counted loops with a per-thread range around another loop ------------------------------------
# TileLang binds a counted loop's range when it meets the T.Parallel loop around it and again once
# that loop is mapped onto the threads; a range that reads the thread then differs, and a loop
# nested inside failed CUDA lowering ("Trying to update var 'dy' with a different minimum value").

#: A blur whose radius each pixel reads (portable: a shared tile read at a loaded offset), its window
#: loops nested, and a device function (a macro) looping over a window its caller computes.
RADIUS_BLUR = """
    __device__ float window_sum(const float* a, int w, int y0, int y1, int x0, int x1) {
        float acc = 0.0f;
        for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x)
                acc += a[y * w + x];
        return acc;
    }
    __global__ void radius_blur(const float* __restrict__ img, const int* __restrict__ rad,
                                float* __restrict__ out, float* __restrict__ area, int w, int h) {
        __shared__ float tile[16 * 16];
        const int x = blockIdx.x * blockDim.x + threadIdx.x;
        const int y = blockIdx.y * blockDim.y + threadIdx.y;
        const int t = threadIdx.y * blockDim.x + threadIdx.x;
        if (x < w && y < h) tile[t] = img[y * w + x];
        __syncthreads();
        if (x < w && y < h) {
            const int r = rad[y * w + x];
            float acc = 0.0f;
            int cnt = 0;
            for (int dy = -r; dy <= r; dy++)
                for (int dx = -r; dx <= r; dx++) {
                    const int yy = y + dy, xx = x + dx;
                    const int sy = (int)threadIdx.y + dy, sx = (int)threadIdx.x + dx;
                    if (yy >= 0 && yy < h && xx >= 0 && xx < w) {
                        if (sy >= 0 && sy < (int)blockDim.y && sx >= 0 && sx < (int)blockDim.x)
                            acc += tile[sy * blockDim.x + sx];
                        else
                            acc += img[yy * w + xx];
                        cnt++;
                    }
                }
            out[y * w + x] = acc / cnt;
            area[y * w + x] = window_sum(img, w, max(y - r, 0), min(y + r + 1, h), max(x - r, 0), min(x + r + 1, w));
        }
    }
"""

RADIUS_BLUR_SPEC = """
    [[kernel]]
    name = "radius_blur"
    grid = [3, 2, 1]
    block = [16, 16, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "img"
    buffer = "float32"
    elements = 1200
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "rad"
    buffer = "int32"
    elements = 1200
    role = "in"
    range = [0, 3]
    [[kernel.args]]
    name = "out"
    buffer = "float32"
    elements = 1200
    role = "out"
    [[kernel.args]]
    name = "area"
    buffer = "float32"
    elements = 1200
    role = "out"
    [[kernel.args]]
    name = "w"
    scalar = "int32"
    value = 40
    [[kernel.args]]
    name = "h"
    scalar = "int32"
    value = 30
"""


def test_portable_loops_nested_in_a_per_thread_range_lower_for_cuda(tmp_path):
    kernels, _ = convert(tmp_path, RADIUS_BLUR, "--check", "cpu", spec=RADIUS_BLUR_SPEC)
    k = kernels["radius_blur"]
    assert k["form"] == "portable" and k["check"]["status"] == "pass", k["check"]
    src = lower_sm90(load(tmp_path / "out" / "k.py").RADIUS_BLUR, (3, 2, 1), (16, 16, 1))
    assert "__global__" in src


#: Each input position sums the gradients of the strided windows that cover it (a map whose window
#: bounds divide by size parameters: compiled in as constants on GPUs, where they are values).
POOL_GRAD = """
    __global__ void pool_grad(const float* __restrict__ dy, float* __restrict__ dx, int n, int len, int k,
                              int stride, int outs, int groups) {
        for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
            const int x = i % len;
            const int row = i / len;
            const int first = x < k ? 0 : (x - k) / stride + 1;
            const int last = min(x / stride + 1, outs);
            float g = 0.0f;
            for (int p = first; p < last; ++p)
                for (int s = 0; s < groups; ++s)
                    g += dy[(row * groups + s) * outs + p];
            dx[i] = g;
        }
    }
"""

#: 5 rows of 37 positions, windows of 4 every 3 (12 per row), 2 groups.
POOL_GRAD_SPEC = """
    [[kernel]]
    name = "pool_grad"
    grid = [1, 1, 1]
    block = [128, 1, 1]
    tolerance = "fp32_accum"
    [[kernel.args]]
    name = "dy"
    buffer = "float32"
    elements = 120
    role = "in"
    range = [-1.0, 1.0]
    [[kernel.args]]
    name = "dx"
    buffer = "float32"
    elements = 185
    role = "out"
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 185
    [[kernel.args]]
    name = "len"
    scalar = "int32"
    value = 37
    [[kernel.args]]
    name = "k"
    scalar = "int32"
    value = 4
    [[kernel.args]]
    name = "stride"
    scalar = "int32"
    value = 3
    [[kernel.args]]
    name = "outs"
    scalar = "int32"
    value = 12
    [[kernel.args]]
    name = "groups"
    scalar = "int32"
    value = 2
"""


def test_tile_loops_nested_in_a_per_element_range_lower_for_cuda_at_constant_sizes(tmp_path):
    kernels, _ = convert(tmp_path, POOL_GRAD, "--check", "cpu", spec=POOL_GRAD_SPEC)
    k = kernels["pool_grad"]
    assert k["form"] == "tile" and k["check"]["status"] == "pass", k["check"]
    sig = load(tmp_path / "out" / "k.py").POOL_GRAD
    assert sig.specialize == ("len_", "k", "stride", "outs", "groups")
    sizes = {"len_": 37, "k": 4, "stride": 3, "outs": 12, "groups": 2}
    assert "__global__" in lower_sm90(sig, (2, 1, 1), (128, 1, 1), sizes)
    assert "__global__" in lower_sm90(sig, (2, 1, 1), (128, 1, 1))
