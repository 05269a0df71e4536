"""ir.names: the names the emitted code reserves, those a factory binds itself, and how a
template parameter is spelled in Python."""
from __future__ import annotations

from migrate.ir.names import RESERVED, factory_name, template_param_name
from tests.analysis.support import unit

TEMPLATED = """
    template <int BLOCK, typename T, int lane>
    __global__ void fill(T* __restrict__ out, T value, int n, int rows, int row_len) {
        int i = blockIdx.x * BLOCK + threadIdx.x;
        if (i < n) out[i] = value;
    }
    template __global__ void fill<256, float, 0>(float*, float, int, int, int);
"""


def test_reserved_names_cover_the_module_the_launch_and_python_builtins():
    assert {"T", "tilelang", "torch", "tx", "bx", "block_x", "grid_z", "shared_bytes"} <= RESERVED
    assert {"range", "len", "min", "max", "sum", "int", "float"} <= RESERVED
    assert {"lane", "tile", "threads"} <= RESERVED
    assert not {"x", "n", "out", "rows", "idx", "TILE"} & RESERVED


def test_template_param_name_escapes_reserved_names():
    assert template_param_name("T") == "T_"
    assert template_param_name("lane") == "lane_" and template_param_name("range") == "range_"
    assert template_param_name("BLOCK") == "BLOCK" and template_param_name("TILE_M") == "TILE_M"


def test_factory_name(tmp_path):
    fn = unit(tmp_path, TEMPLATED).kernel("fill")
    assert [t.name for t in fn.template_params] == ["BLOCK", "T", "lane"]
    for bound in ("grid", "block", "target", "num_stages", "block_M", "T", "cuda_math", "launch"):
        assert factory_name(bound, fn), bound
    for prefixed in ("grid_x", "block_size", "extent_n", "tile_k"):
        assert factory_name(prefixed, fn), prefixed
    assert factory_name("row_len", fn) and factory_name("n_rows", fn)
    # the template parameters as the factory spells them: BLOCK itself, T and lane escaped
    assert factory_name("BLOCK", fn) and factory_name("T_", fn) and factory_name("lane_", fn)
    for free in ("n", "rows", "out", "value", "lane", "blocks", "tiles", "length"):
        assert not factory_name(free, fn), free
