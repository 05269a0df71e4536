"""The CUDA source TileLang writes for an emitted kernel on an H100/H200 (sm_90a), without a GPU:
what the lowering tests of the lifting passes read."""
from __future__ import annotations


def lower_sm90(sig, grid, block, sizes=None, template=None, **options) -> str:
    """``sig`` lowered for sm_90a at the launch ``grid``/``block`` (a template's arguments in
    ``template``), with factory ``options`` and, for ``sizes``, its scalars compiled in as the
    launcher would on a GPU."""
    import tilelang
    import tvm

    from migrate.runtime import tilelang_support as ts

    # as the runtime builds it (compile_kernel): its pass fixes applied, the kernel marked for them
    ts.patch_passes()
    func, configs = ts.prim_func(sig, grid, block, 0, template, "cuda", options, sizes)
    func = func.with_attr("cuda2tile_pass_fixes", ts.PASS_FIXES)
    target = tvm.target.Target({"kind": "cuda", "arch": "sm_90a"})
    with tvm.transform.PassContext(config=configs), target:
        return tilelang.lower(func, target=target).kernel_source
