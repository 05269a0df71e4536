"""The pipeline (migrate/pipeline.py): the plan each lift builds, as IR-level goldens, the
pass tables, and the one fallback from tile to portable to simt to unsupported."""
from __future__ import annotations

import textwrap

import pytest

from migrate.ir.loops import Form, dump
from migrate.parse.frontend import ParseOptions, parse_file
from migrate.pipeline import AFTER_LIFT, LIFTS, PREPARE, Options, migrate_unit
from tests.golden import check_golden
from tests.paths import CORPUS, GOLDEN

#: One corpus kernel per lift (and per form kept): golden -> (source, kernel, convert options).
#: The golden tests/golden/plans/<name>.plan is the plan the emitter printed, dumped.
PLAN_CASES = {
    "map": ("elementwise/saxpy.cu", "saxpy", {}),                     # grid-stride loop -> a domain of n
    "map_2d": ("map2d/matrix_axpby.cu", "matrixAxpby", {}),
    "fold_lanes": ("elementwise/vector_add_vec4.cu", "vectorAdd4", {}),  # float4 lanes, scalar tail apart
    "forward_shared": ("stencil/stencil1d.cu", "stencil1d5pt", {}),  # a shared tile with halos forwarded
    "delinearise": ("conv/conv2d_nchw.cu", "conv2d_nchw", {}),        # shaped buffers, sizes compiled in
    "gemm": ("matmul/matmul_tiled.cu", "matmul_tiled", {}),
    "gemm_tf32": ("matmul/matmul_tiled.cu", "matmul_tiled", {"allow_tf32": True}),
    "micro_tiles": ("matmul/matmul_regblock.cu", "matmul_regblock_4x4", {}),
    "reduce": ("reduction/block_sum.cu", "blockReduceSum", {}),
    "warp": ("reduction/warp_reduce_sum.cu", "reduceSumAtomic", {}),
    "warp_rows": ("gemv/gemv_warp_row.cu", "gemv_warp_per_row", {}),
    "online_softmax": ("norm/softmax_warp.cu", "softmax_online_warp", {}),
    "row_registers": ("norm/softmax_rows.cu", "softmax_rows", {}),
    "free_grid": ("reduction/minmax_atomic.cu", "reduceMaxInt", {}),
    "scan": ("scan/block_scan.cu", "blockScanInclusiveHS", {}),
    "portable": ("histogram/histogram.cu", "histogram256Shared", {}),
    "portable_no_lift": ("reduction/block_sum.cu", "blockReduceSum", {"lift": False}),
    "simt": ("features/warp_rounds.cu", "warp_rounds", {}),
}


def migrate(path, **options):
    parsed = parse_file(str(path), ParseOptions())
    return migrate_unit(parsed.unit, path.name, parsed.by_kernel, Options(**options))


@pytest.mark.parametrize("name", sorted(PLAN_CASES))
def test_plan_goldens(name, update_golden):
    """The plan of one kernel per lift is its golden, tests/golden/plans/<name>.plan (rewrite them
    with ``python -m pytest tests/test_pipeline.py --update-golden``)."""
    rel, kernel, options = PLAN_CASES[name]
    (out,) = [k for k in migrate(CORPUS / rel, **options).kernels if k.name == kernel]
    assert out.plan is not None, out.reason
    text = dump(out.plan)
    assert str(CORPUS) not in text  # no spans, no paths: the same on every machine
    check_golden(GOLDEN / "plans" / f"{name}.plan", text, update_golden)


def test_plan_goldens_cover_every_form_and_lift():
    forms = {str(migrate(CORPUS / rel, **opts).kernels[0].form) for rel, _k, opts in PLAN_CASES.values()}
    assert {"tile", "portable", "simt"} <= forms
    regions = {line.split("(")[0].strip() for p in (GOLDEN / "plans").glob("*.plan")
               for line in p.read_text().splitlines() if line.startswith("  ") and not line.startswith("   ")}
    for region in ("TileMap", "GemmPlan", "BlockReduce", "BlockScan", "Phase", "SimtBody"):
        assert region in regions, region


def test_every_pass_says_why_it_runs():
    for table in (PREPARE, LIFTS, AFTER_LIFT):
        names = [p.name for p in table]
        assert len(set(names)) == len(names)
        for p in table:
            assert callable(p.run) and len(p.why) > 20, p.name


def test_the_same_kernel_twice_gives_the_same_plan():
    a = dump(migrate(CORPUS / "matmul/matmul_tiled.cu").kernels[0].plan)
    b = dump(migrate(CORPUS / "matmul/matmul_tiled.cu").kernels[0].plan)
    assert a == b


def _kernel(tmp_path, source: str, **options):
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(source))
    (out,) = migrate(src, **options).kernels
    return out


def test_a_map_falls_back_to_portable_without_lifting(tmp_path):
    source = """
        __global__ void scale(const float* __restrict__ x, float* __restrict__ y, float a, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = a * x[i];
        }"""
    assert _kernel(tmp_path, source).form == Form.TILE
    out = _kernel(tmp_path, source, lift=False)
    assert out.form == Form.PORTABLE and out.plan.form == Form.PORTABLE
    assert _kernel(tmp_path, source, no_lift=frozenset({"scale"})).form == Form.PORTABLE


def test_a_barrier_under_thread_dependent_control_is_simt(tmp_path):
    out = _kernel(tmp_path, """
        __global__ void odd(float* y, int n) {
            __shared__ float s[256];
            int t = threadIdx.x;
            s[t] = y[t];
            for (int k = 0; k < t; ++k) { __syncthreads(); s[t] += 1.0f; }
            y[t] = s[t];
        }""")
    assert out.form == Form.SIMT and out.plan.form == Form.SIMT
    assert "thread-level code needed" in out.reason


def test_a_construct_with_no_form_is_unsupported_with_m3001(tmp_path):
    out = _kernel(tmp_path, """
        __global__ void fence(float* x, float* y) {
            x[threadIdx.x] = 1.0f;
            y[0] = (float)clock();
            y[threadIdx.x] = x[threadIdx.x];
        }""", no_lift=frozenset({"fence"}))
    assert out.form == Form.UNSUPPORTED and out.plan is None
    assert [d.code for d in out.diagnostics] == ["M3001"]
    assert "'clock'" in out.reason


def test_a_device_function_template_with_value_parameters_is_inlined_per_instance(tmp_path):
    """``scaled<2>`` and ``scaled<3>`` have bodies of their own; one macro for both would compute
    the same value twice (a real program did this with polynomial degrees). Each call is inlined
    with its instance's value; checked equal on the CPU."""
    from tests.analysis.support import converted, spec_buffer, spec_kernel, spec_scalar
    source = """
        #include <cuda_runtime.h>
        template <int N> __device__ float scaled(float x) { return x * N; }
        __global__ void k(const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = scaled<2>(x[i]) + scaled<3>(x[i]) * 10.0f;
        }"""
    spec = spec_kernel("k", (2, 1, 1), (64, 1, 1), "fp32", spec_buffer("x", "float32", 128, "in", -1.0, 1.0),
                       spec_buffer("y", "float32", 128, "out"), spec_scalar("n", "int32", 128))
    out, (k,) = converted(tmp_path, source, spec)
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])
    assert "def scaled" not in (out / "k.py").read_text()  # no one macro for both instances


def test_a_device_function_template_over_types_is_one_macro(tmp_path):
    out = _kernel(tmp_path, """
        template <typename T> __device__ T twice(T v) { return v + v; }
        __global__ void k(const float* x, float* y, int n) {
            int i = blockIdx.x * blockDim.x + threadIdx.x;
            if (i < n) y[i] = twice(x[i]);
        }""")
    assert out.form == Form.TILE and out.macros == ["twice"]


def test_an_empty_kernel_is_a_kernel_that_does_nothing(tmp_path):
    """``__global__ void k() {}`` (programs launch one to measure launch overhead): its module
    must still be Python, and the kernel runs on the CPU target."""
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n__global__ void k() { }\n")
    out = tmp_path / "out"
    from migrate.cli import main
    assert main(["convert", str(src), "-o", str(out), "-q"]) == 0
    text = (out / "k.py").read_text()
    compile(text, "k.py", "exec")
    assert "pass  # the CUDA kernel's body is empty" in text


@pytest.mark.parametrize("step", ["x += row * n;", "x = x + row * n;", "++x;"])
def test_a_pointer_parameter_advanced_in_the_body_becomes_an_offset(tmp_path, step):
    """``x += off`` then ``x[i]``: the emitted module used to add an offset to a buffer and not
    build (real programs advance their parameters this way); then it was refused; now the offset
    is a local of its own (analysis.prepare.moving_pointers; checked in
    tests/analysis/prepare/test_moving_pointers.py)."""
    src = tmp_path / "k.cu"
    src.write_text("#include <cuda_runtime.h>\n" + textwrap.dedent(f"""
        __global__ void k(const float* x, float* y, int n) {{
            int row = blockIdx.x;
            {step}
            y[row * n + threadIdx.x] = x[threadIdx.x];
        }}"""))
    module = migrate(src)
    (out,) = module.kernels
    assert out.form != Form.UNSUPPORTED, out.reason
    assert "x[x_off + " in module.text and "x_off = " in module.text
    compile(module.text, "k.py", "exec")


NAMESPACED_CALLS = """
    namespace lit {
    __host__ __device__ __forceinline__ int node(int l) { return l >> 1; }
    __host__ __device__ __forceinline__ int is_neg(int l) { return l & 1; }
    __host__ __device__ __forceinline__ int make(int id, int c) { return id * 2 + c; }
    }
    __global__ void relabel(const int* __restrict__ new_id, int* __restrict__ lits,
                            int* __restrict__ fanouts, int n) {
        int i = blockIdx.x * blockDim.x + threadIdx.x;
        if (i < n) {
            int old, id;
            old = lits[i];
            id = lit::node(old);
            lits[i] = lit::make(new_id[id], lit::is_neg(old));
            atomicAdd(&fanouts[lit::node(lits[i])], 1);
        }
    }
"""

NAMESPACED_CALLS_SPEC = """
    [[kernel]]
    name = "relabel"
    grid = [4, 1, 1]
    block = [128, 1, 1]
    tolerance = "exact"
    [[kernel.args]]
    name = "new_id"
    buffer = "int32"
    elements = 200
    role = "in"
    range = [0, 99]
    [[kernel.args]]
    name = "lits"
    buffer = "int32"
    elements = 500
    role = "inout"
    range = [0, 399]
    [[kernel.args]]
    name = "fanouts"
    buffer = "int32"
    elements = 100
    role = "inout"
    range = [1, 5]
    [[kernel.args]]
    name = "n"
    scalar = "int32"
    value = 500
"""


@pytest.mark.parametrize("flags", [(), ("--no-lift",)])
def test_namespace_qualified_device_calls_are_python_and_pass_their_check(tmp_path, flags):
    """``lit::node(x)`` was printed as is: a SyntaxError as a statement, and inside a subscript
    (``a[lit::node(x)]``, a slice to Python) a NameError when the kernel was built."""
    from tests.analysis.lift.support import convert

    kernels, text = convert(tmp_path, NAMESPACED_CALLS, "--check", "cpu", *flags, spec=NAMESPACED_CALLS_SPEC)
    assert "::" not in text.split("def make_relabel", 1)[1]
    k = kernels["relabel"]
    assert k["form"] == ("portable" if flags else "tile")
    assert k["check"]["status"] == "pass", k["check"]["message"]


def test_warp_synchronous_code_through_volatile_memory_runs_in_lockstep_steps(tmp_path):
    """A warp scan through a volatile pointer, no barrier between the lanes' stores and loads:
    the portable form ran each thread's scan on its own (and without volatile, nvcc keeps the
    values in registers), so the ranks it computed were garbage and the stores they indexed went
    out of bounds (an illegal memory access on the GPU). It was refused; each store now runs as
    the lockstep step it is (read, barrier, write, barrier: analysis.prepare.lockstep_steps,
    checked on the CPU in tests/analysis/prepare/test_lockstep_steps.py)."""
    out = _kernel(tmp_path, """
        __device__ unsigned lane_scan(unsigned v, volatile unsigned* buf) {
            int lane = threadIdx.x & 31;
            int at = 2 * threadIdx.x - lane + 32;
            buf[at - 32] = 0;
            buf[at] = v;
            buf[at] += buf[at - 1];
            buf[at] += buf[at - 2];
            buf[at] += buf[at - 4];
            buf[at] += buf[at - 8];
            buf[at] += buf[at - 16];
            return buf[at] - v;
        }
        __global__ void place(const unsigned* __restrict__ flags, unsigned* __restrict__ out) {
            __shared__ unsigned s[256];
            __shared__ unsigned tmp[128];
            unsigned f = flags[blockIdx.x * blockDim.x + threadIdx.x];
            unsigned r = lane_scan(f, s);
            __syncthreads();
            tmp[(threadIdx.x & ~31u) + r] = threadIdx.x;
            __syncthreads();
            out[blockIdx.x * blockDim.x + threadIdx.x] = tmp[threadIdx.x];
        }""")
    assert out.form == Form.PORTABLE, out.reason
    text = "\n".join(ln.text for ln in out.lines)
    # seven steps (two stores, five sums), each a barrier after the reads and one after the write
    # (a warp's on GPUs: tests/emit/test_warp_steps.py), and the kernel's own two; the two stores
    # read nothing exchanged: no temporary, and one barrier before the first serves the second
    assert text.count("sync_step()") == 2 * 7 - 1 and text.count("T.sync_threads()") == 2, text
    assert "step_5" in text and "step_6" not in text, text


def test_volatile_memory_that_barriers_separate_is_no_lockstep_code_and_passes_its_check(tmp_path):
    from tests.analysis.lift.support import convert

    kernels, _ = convert(tmp_path, """
        __device__ void fold(volatile float* s, int t) {
            float v = s[t];
            v += s[t + 16];  __syncwarp();
            s[t] = v;        __syncwarp();
            v += s[t + 8];   __syncwarp();
            s[t] = v;        __syncwarp();
            v += s[t + 4];   __syncwarp();
            s[t] = v;
        }
        __global__ void folded(const float* __restrict__ x, float* __restrict__ y) {
            __shared__ float s[64];
            s[threadIdx.x] = x[blockIdx.x * 64 + threadIdx.x];
            __syncthreads();
            if (threadIdx.x < 32) fold(s, threadIdx.x);
            __syncthreads();
            y[blockIdx.x * 64 + threadIdx.x] = s[threadIdx.x];
        }""", "--check", "cpu", spec="""
        [[kernel]]
        name = "folded"
        grid = [3, 1, 1]
        block = [64, 1, 1]
        tolerance = "fp32"
        [[kernel.args]]
        name = "x"
        buffer = "float32"
        elements = 192
        role = "in"
        range = [-1.0, 1.0]
        [[kernel.args]]
        name = "y"
        buffer = "float32"
        elements = 192
        role = "out"
        """)
    k = kernels["folded"]
    # its steps between barriers (the __syncwarp calls, out of the branch) are map phases: a tiled
    # loop's lift (analysis.lift.tile_loops) keeps every barrier
    assert k["form"] == "tile" and k["check"]["status"] == "pass", (k["reason"], k["check"]["message"])


def test_every_thread_level_kernel_says_why():
    """A kernel planned at thread level (a warp exchange inside a loop that depends on the
    thread) carries note M3002 with the reason, as one that falls back to it does."""
    (out,) = [k for k in migrate(CORPUS / "features/warp_rounds.cu").kernels if k.name == "warp_rounds"]
    assert str(out.form) == "simt"
    notes = [d.message for d in out.diagnostics if d.code == "M3002"]
    assert len(notes) == 1 and "warp exchange inside a loop that depends on the thread" in notes[0], notes
