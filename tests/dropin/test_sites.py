"""Where migrate build finds a kernel's definition and launches in a source's text
(migrate/dropin/sites.py), and the shim and launch call it writes there (migrate/dropin/shim.py)."""
from __future__ import annotations

from migrate.dropin import shim, sites
from migrate.dropin.lower import CallParam, Variant

SOURCE = """\
#define LAUNCH(k, g, b, ...) k<<<g, b>>>(__VA_ARGS__)
// scale<<<1, 1>>>(x, y, 0.f, 0);  a comment is no launch
__global__ void __launch_bounds__(256)
scale(const float* __restrict__ x, float* y, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { y[i] = a * x[i]; }   /* } in a comment */
}

template <typename T> __global__ void fill(T* p, T v) { p[threadIdx.x] = v; }

void host(float* x, float* y, int n, cudaStream_t s)
{
    const char* msg = "scale<<<1, 1>>>(x)";
    scale<<<(n + 255) / 256, 256, 0, s>>>(x, y, 2.0f,
                                          n);
    scale <<< dim3(4, 1), dim3(64) >>> (x, y, f(1, 2), n);
    fill<float><<<1, 32>>>(y, 1.0f);
    LAUNCH(scale, 1, 32, x, y, 1.0f, n);
}
"""


def test_launches_are_found_with_their_configuration_and_arguments():
    found = sites.launches(SOURCE, "scale")
    assert [line for line, _ in found] == [15, 17]  # not the comment, the string, or the macro's body
    first, second = found[0][1], found[1][1]
    assert first.config == ("(n + 255) / 256", "256", "0", "s")
    assert " ".join(first.args.split()) == "x, y, 2.0f, n"
    assert SOURCE[first.start:first.end].startswith("scale<<<") and SOURCE[first.end - 1] == ")"
    assert second.config == ("dim3(4, 1)", "dim3(64)") and second.args == "x, y, f(1, 2), n"
    (line, tmpl), = sites.launches(SOURCE, "fill")
    assert line == 18 and tmpl.template == "float"


def test_a_launch_is_looked_up_near_its_line_and_a_macro_launch_is_not_found():
    assert sites.launch_at(SOURCE, "scale", 16).config[1] == "256"  # one line off: the nearest
    assert sites.launch_at(SOURCE, "scale", 19) is not None  # slack: the launch on line 17
    assert sites.launch_at(SOURCE, "scale", 19, slack=1) is None  # the macro's launch is not text


def test_the_definition_and_the_end_of_its_body():
    d = sites.definition(SOURCE, "scale", 4)
    assert d.params == "const float* __restrict__ x, float* y, float a, int n"
    assert SOURCE[:d.body_end].endswith("/* } in a comment */\n}")
    assert sites.definition(SOURCE, "scale", 15) is None  # a launch, not a definition


def test_edits_are_applied_by_offset():
    assert sites.apply_edits("abcdef", [(4, 4, "X"), (1, 3, "")]) == "adXef"


def _variant():
    params = [CallParam("x", "buffer", "void*", "x", 4), CallParam("y", "buffer", "void*", "y", 4),
              CallParam("a", "scalar", "float", "a"), CallParam("n_arg", "scalar", "int64_t", "n"),
              CallParam("rows", "extent", "int", "y", 4, ("(n)",)), CallParam("table", "symbol", "void*", "coeffs", 4)]
    return Variant("scale", "c2t_scale_v0", (4, 1, 1), (256, 1, 1), 0, "", params)


def test_the_shim_runs_the_variant_for_its_geometry_else_the_original():
    text = shim.shim_text("scale", "const float* x, float* y, float a, int n", ["x", "y", "a", "n"], [_variant()])
    assert 'extern "C" int c2t_scale_v0_call(void*, void*, float, int64_t, int, void*, cudaStream_t);' in text
    assert "static void c2t_launch_scale(dim3 c2t_grid, dim3 c2t_block, size_t c2t_shared, cudaStream_t c2t_stream, " \
           "const float* x, float* y, float a, int n) {" in text
    assert ("if (c2t_grid.x == 4u && c2t_grid.y == 1u && c2t_grid.z == 1u && c2t_block.x == 256u && c2t_block.y == 1u "
            "&& c2t_block.z == 1u && c2t_shared == 0u)") in text
    assert "cudaGetSymbolAddress(&c2t_symbol_0, coeffs);" in text
    assert ("c2t_scale_v0_call((void*)(x), (void*)(y), (float)(a), (int64_t)(n), "
            "(int)c2t_dropin_extent((const void*)(y), 4, (long long)(n)), c2t_symbol_0, c2t_stream) == 0") in text
    # counted as migrated only when the variant launched; the original otherwise
    assert text.index('c2t_dropin_count("scale", 1)') < text.index('c2t_dropin_count("scale", 0)')
    assert text.rstrip().splitlines()[-2] == "}"
    assert "  scale<<<c2t_grid, c2t_block, c2t_shared, c2t_stream>>>(x, y, a, n);" in text


def test_a_launch_becomes_a_call_of_the_shim():
    (_line, lt), _ = sites.launches(SOURCE, "scale")
    assert shim.launch_call("scale", lt) == ("c2t_launch_scale(dim3((n + 255) / 256), dim3(256), (size_t)(0), "
                                             "(cudaStream_t)(s), x, y, 2.0f,\n                                          n)")
    (_line, lt) = sites.launches(SOURCE, "scale")[1]
    assert shim.launch_call("scale", lt).startswith("c2t_launch_scale(dim3(dim3(4, 1)), dim3(dim3(64)), "
                                                    "(size_t)(0), (cudaStream_t)(0), x, y, f(1, 2), n)")
