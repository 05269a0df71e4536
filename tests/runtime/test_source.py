"""Textual rewriting of CUDA sources for the host compiler (runtime/source.py)."""
from __future__ import annotations

import pytest

from migrate.runtime.source import (
    RewriteError, find_kernels, find_launches, find_main, find_quoted_includes, mask_source,
    rewrite_extern_shared, rewrite_for_cpu, rewrite_launches, template_arity,
)


def test_plain_launch():
    out = rewrite_launches("saxpy<<<blocks, threads>>>(n, a, x, y);")
    assert out == ('::c2t::launch_cfg(blocks, threads).named("saxpy").go([&](auto&... c2t_a_) { saxpy(c2t_a_...); }, '
                   "n, a, x, y);")


def test_template_kernel_and_full_config():
    out = rewrite_launches("k<T, 4><<<g, b, s, st>>>(a, b)")
    # a template instance named at the launch is recorded as the compiler spells it
    assert out == ('::c2t::launch_cfg(g, b, s, st).named("k<T, 4>", ::c2t::instance_name<&k<T, 4>>())'
                   '.go([&](auto&... c2t_a_) { k<T, 4>(c2t_a_...); }, a, b)')


def test_nested_templates_parentheses_and_empty_args():
    src = ("ns::k<Foo<int>, (N > 2)><<<dim3((n + 255) / 256, 1), std::max<int>(1, m)>>>"
           "(f(a, g(b)), c[i]);\n::z <<< 1, 1 >>> ( );")
    out = rewrite_launches(src)
    assert ('::c2t::launch_cfg(dim3((n + 255) / 256, 1), std::max<int>(1, m)).named("ns::k<Foo<int>, (N > 2)>")'
            '.go([&](auto&... c2t_a_) { ns::k<Foo<int>, (N > 2)>(c2t_a_...); }, f(a, g(b)), c[i]);') in out
    assert '::c2t::launch_cfg( 1, 1 ).named("z").go([&]() { ::z(); });' in out


def test_comments_strings_and_lines_are_kept():
    src = ('// k<<<1,1>>>(x);\nconst char* s = "<<<a>>>(b)";\n/* k<<<2,2>>>() */\n'
           "k<<<grid,\n    block>>>(a,\n      b);\nint v = 1'000'000; char c = '<';\n")
    out = rewrite_launches(src)
    assert out.count("\n") == src.count("\n")
    assert '// k<<<1,1>>>(x);' in out and '"<<<a>>>(b)"' in out and "/* k<<<2,2>>>() */" in out
    assert '::c2t::launch_cfg(grid,\n    block).named("k").go(' in out and "k(c2t_a_...); }, a,\n      b);" in out


def test_the_launch_is_named_as_written():
    """The name a recorded launch is filed under: the kernel as written at the launch, its
    whitespace folded, without a leading ``::``; the lines of the source are kept."""
    src = "k <\n  T>\n<<<1, 1>>>(y);\n::ns::z<<<2, 2>>>();\n"
    out = rewrite_launches(src)
    assert '.named("k < T>", ::c2t::instance_name<&k <   T>>())' in out and '.named("ns::z").go' in out
    assert out.count("\n") == src.count("\n")


def test_launch_errors():
    with pytest.raises(RewriteError, match="matching '>>>'"):
        rewrite_launches("k<<<1, 1(a);")
    with pytest.raises(RewriteError, match="argument list"):
        rewrite_launches("k<<<1, 1>>>;")
    with pytest.raises(RewriteError, match="kernel name"):
        rewrite_launches("x = (<<<1, 1>>>());")


def test_find_launches():
    (L,) = find_launches("int main() {\n  kern<float><<<4, 64>>>(p);\n}")
    assert L.kernel == "kern<float>" and L.config == "4, 64" and L.args == "p" and L.line == 2


def test_extern_shared_forms():
    src = ("__global__ void k() {\n"
           "  extern __shared__ float sdata[];\n"
           "  extern __shared__ __align__(16) unsigned char raw[];\n"
           "  extern volatile __shared__ T vals[];\n"
           "  extern __shared__ float tile[][33];\n"
           "  static __shared__ int count;\n"
           "  __shared__ float keep[32];\n"
           "}\nextern __shared__ double global_smem[];\n")
    out = rewrite_extern_shared(src)
    assert out.count("\n") == src.count("\n")
    assert "float *&sdata = (float *&)c2t_dyn_smem;" in out
    assert "unsigned char *&raw = (unsigned char *&)c2t_dyn_smem;" in out
    assert "volatile T *&vals = (volatile T *&)c2t_dyn_smem;" in out
    assert "float (*&tile)[33] = (float (*&)[33])c2t_dyn_smem;" in out
    assert "static" not in out.split("count")[0].splitlines()[-1]
    assert "__shared__ float keep[32];" in out
    assert "double *&global_smem = (double *&)c2t_dyn_smem;" in out
    # each declaration stays on its line
    for i, line in enumerate(src.splitlines()):
        if "sdata" in line:
            assert "sdata" in out.splitlines()[i]


def test_rewrite_for_cpu_combines():
    src = "__global__ void k(float* x) { extern __shared__ float s[]; }\nint main() { k<<<1, 2, 8>>>(0); }\n"
    out = rewrite_for_cpu(src)
    assert "c2t_dyn_smem" in out and "::c2t::launch_cfg(1, 2, 8)" in out


def test_find_main_and_kernels():
    assert find_main("int main(int argc, char** argv) { return 0; }") == 2
    assert find_main("int main() {}") == 0
    assert find_main("int main(void)\n{}") == 0
    assert find_main("// int main() {}\nvoid f() {}") is None
    src = ("template <int B> __global__ void __launch_bounds__(256) red(float* x) {}\n"
           "__global__ void\nscale(float* y);\nstatic __global__ void z() {}\n")
    assert find_kernels(src) == ["red", "scale", "z"]


def test_quoted_includes_and_mask():
    src = '#include "a.cuh"\n// #include "b.cuh"\n  #  include "c/d.h"\n#include <cuda_runtime.h>\n'
    assert find_quoted_includes(src) == ["a.cuh", "c/d.h"]
    m = mask_source('x = "a\\"b"; // c\ny = R"(raw "str")"; z = \'q\';')
    assert len(m) == len('x = "a\\"b"; // c\ny = R"(raw "str")"; z = \'q\';')
    assert "a" not in m.split("=")[1] and "raw" not in m and "q" not in m


def test_the_gpu_recording_rewrite_keeps_the_chevron_launch():
    from migrate.runtime.source import rewrite_launches

    out = rewrite_launches("k<<<g, b>>>(x, n);", device="gpu")
    assert out == ('::c2t::launch_cfg(g, b).named("k").go([&](const ::c2t::LaunchCfg& c2t_c_, auto&... c2t_a_) '
                   '{ k<<<c2t_c_.grid, c2t_c_.block, c2t_c_.shmem, c2t_c_.stream>>>(c2t_a_...); }, x, n);')


def test_a_launch_that_leaves_template_arguments_to_deduction_names_no_instance():
    """``k<256>`` of ``template <int N, typename P> __global__ void k(P, ...)``: P is deduced from
    the call, so ``&k<256>`` names no function and the program did not build (a real program
    launched its kernels this way); the launch is filed under its name as written instead."""
    src = """
    template <int BLOCK, typename Payoff>
    __global__ __launch_bounds__(BLOCK) void paths(Payoff p, float* y) { }
    template <int BLOCK, typename T = float> __global__ void fill(T* y) { }
    template <typename... Ts> __global__ void many(Ts... xs) { }
    void host(float* y, int q) {
        paths<256><<<1, 256>>>(q, y);
        paths<256, int><<<1, 256>>>(q, y);
        fill<64><<<1, 64>>>(y);
        many<int, float*><<<1, 1>>>(q, y);
    }
    """
    assert template_arity(mask_source(src)) == {"paths": (2, False), "fill": (1, False), "many": (1, True)}
    out = rewrite_launches(src)
    assert '.named("paths<256>").go(' in out
    assert '.named("paths<256, int>", ::c2t::instance_name<&paths<256, int>>())' in out
    assert '.named("fill<64>", ::c2t::instance_name<&fill<64>>())' in out  # the default completes it
    assert '.named("many<int, float*>").go(' in out


def test_constant_definitions_register_with_the_launch_recorder():
    from migrate.runtime.source import register_constants

    src = ("__constant__ float taps[9];\n"
           "static __constant__ int lut[4] = {1, 2,\n  3, 4};\n"
           "extern __constant__ float elsewhere[4];\n"
           "namespace img { __constant__ float sob[3][3]; }\n"
           "__constant__ float a[3], b[4];\n"
           "__global__ void k(float* y) { y[0] = taps[0]; }\n")
    out = register_constants(src)
    assert out.count("\n") == src.count("\n")
    for name in ("taps", "lut", "sob"):
        assert (f'static const int c2t_symbol_{name} = ::c2t::trace::add_symbol("{name}", sizeof({name}), '
                f'[](void* c2t_d_) {{ ::c2t::trace::read_symbol(c2t_d_, {name}); }});') in out
    assert "3, 4}; static const int c2t_symbol_lut" in out and "sob); }); }" in out
    assert "c2t_symbol_elsewhere" not in out and "c2t_symbol_a" not in out and "c2t_symbol_b" not in out


def test_a_launch_in_a_macro_is_named_by_the_kernel_the_macro_is_given():
    from migrate.runtime.source import rewrite_launches

    src = ("#define call_kernel(k, n_blocks, n_threads) \\\n"
           "{ \\\n"
           "  k <<< n_blocks, n_threads >>> (); \\\n"
           "}\n"
           "void f(float* x) { init<<<1, 2>>>(x); call_kernel(init, 1, 2); }\n")
    out = rewrite_launches(src)
    assert out.count("\n") == src.count("\n")
    assert ".named(::c2t::instance_name<&k>(), ::c2t::instance_name<&k>())" in out
    assert '.named("init")' in out  # a launch outside the macro keeps its written name


def test_a_launch_through_a_local_that_holds_the_kernel_is_named_by_that_kernel():
    """``auto k = kern<int, fill>; k<<<...>>>`` (the pool's moe-align): the launch is filed under
    the kernel the local holds, with its instance, so that the replay finds the kernel's launches
    (and fast-forward counts them per kernel); a local whose declaration's block has closed, or
    that is assigned again before the launch, is filed under its own name as before."""
    src = """
    template <typename T, int F> __global__ void kern(T* y) { }
    __global__ void plain(float* y) { }
    void host(float* y) {
        constexpr int fill = 256;
        auto k = kern<float, fill>;
        k<<<1, 32>>>(y);
        auto* p = &plain;
        p<<<1, 1>>>(y);
        { auto q = plain; }
        q<<<1, 1>>>(y);
        auto r = plain;
        r = kern<float, 4>;
        r<<<1, 1>>>(y);
    }
    """
    out = rewrite_launches(src)
    assert ('.named("kern<float, fill>", ::c2t::instance_name<&kern<float, fill>>()).go([&](auto&... c2t_a_) '
            '{ k(c2t_a_...); }, y)') in out
    assert '.named("plain").go([&](auto&... c2t_a_) { p(c2t_a_...); }, y)' in out
    assert '.named("q").go(' in out and '.named("r").go(' in out
    assert out.count("\n") == src.count("\n")
