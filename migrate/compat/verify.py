"""Verification harness for the compat table: kernel sources, running on ``c``, ULP comparison.

Used by ``tests/compat/test_cpu.py`` (each row run on TileLang's CPU target against
:mod:`migrate.compat.numpy_ref`) and ``tests/compat/test_cuda.py`` (rows batched into kernels and
lowered for ``{"kind": "cuda", "arch": "sm_90a"}``). Kernels are generated as Python source
through :func:`migrate.compat.cuda_math.render` -- the path the emitter takes -- and imported from
a file, because ``@T.prim_func`` re-reads its source.
"""
from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from migrate.compat import cuda_math
from migrate.compat.externs import prelude_source
from migrate.compat.numpy_ref import N
from migrate.compat.table import UNSUPPORTED, Row

CPU_PASS_CONFIGS = {"tirx.disable_vectorize": True}
CUDA_TARGET = {"kind": "cuda", "arch": "sm_90a"}

#: buffer dtype used on c for a value dtype (c has no unsigned buffer params, no bfloat16)
_C_BUFFER = {"uint32": "int32", "uint64": "int64", "uint16": "int16", "bool": "int32",
             "bfloat16": "float32"}
_NP_SIGNED = {"uint32": np.int32, "uint64": np.int64, "uint16": np.int16}


def c_value_dtype(dt: str) -> str:
    """The dtype a value has on c (bfloat16 values live in float32 there)."""
    return "float32" if dt == "bfloat16" else dt


# ------------------------------------------------------------------------------ source loading
_SRC_DIR = Path(tempfile.mkdtemp(prefix="c2t_compat_"))


def load_prim_func(source: str, name: str = "kernel"):
    """Import ``source`` from a file (``@T.prim_func`` needs real source) and return ``name``."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    path = _SRC_DIR / f"k_{digest}.py"
    if not path.exists():
        path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"c2t_compat_k_{digest}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


# ------------------------------------------------------------------------------ rendering
def render_row(row: Row, texts: list[str], target: str, *, dtypes=None,
               statement: bool = False) -> str:
    """The row's form for ``target`` (its own templates, so rows outside the table work too)."""
    if statement and row.stmt is not None and (target == "cuda" or row.cpu):
        form = row.stmt
    else:
        form = row.form(target)
    if form is None:
        raise ValueError(f"{row.label} has no form for target {target}")
    return cuda_math.render_template(form, texts, dtypes=dtypes)


def row_helpers(rows, target: str) -> list[str]:
    out: list[str] = []
    for row in rows:
        forms = [row.form("c")] if target == "c" else [row.tilelang, row.cpu_form, row.stmt]
        for form in forms:
            for h in re.findall(r'"(c2t_\w+)"', form or ""):
                if h not in out:
                    out.append(h)
    return out


# ------------------------------------------------------------------------------ CPU kernels
def _arg_text(i: int, dt: str, row: Row) -> tuple[str, str]:
    """(buffer dtype, argument text) for argument ``i`` on c."""
    if dt in ("float16x2", "bfloat16x2"):
        return ("float16" if dt == "float16x2" else "float32"), f"v{i}"
    vdt = c_value_dtype(dt)
    bdt = _C_BUFFER.get(vdt, vdt)
    text = f"A{i}[i]" if bdt == vdt else f'T.cast(A{i}[i], "{vdt}")'
    return bdt, text


def cpu_kernel_source(row: Row) -> str:
    """Source of a tiny kernel applying ``row`` (its c form) elementwise on ``N`` inputs."""
    helpers = row_helpers([row], "c")
    prelude = prelude_source(helpers, "c") if helpers else None
    lines = ["import tilelang.language as T", "", f"N = {N}", f"PRELUDE = {prelude!r}", "",
             "@T.prim_func"]
    if row.kind == "atomic":
        return "\n".join(lines + _atomic_body(row)) + "\n"
    params, texts, lanes = [], [], []
    for i, dt in enumerate(row.args):
        if dt == "str":  # a string literal (nanf's tag), not a tensor
            texts.append('""')
            continue
        bdt, text = _arg_text(i, dt, row)
        shape = "(N, 2)" if dt.endswith("x2") else "(N,)"
        params.append(f'A{i}: T.Tensor({shape}, "{bdt}")')
        texts.append(text)
        if dt.endswith("x2"):
            lanes.append((i, bdt))
    ret = c_value_dtype(row.ret)
    bret = _C_BUFFER.get(ret, ret)
    params.append(f'B: T.Tensor((N,), "{bret}")')
    expr = render_row(row, texts, "c", dtypes=[c_value_dtype(a) for a in row.args])
    if bret != ret or row.ret == "bool":
        expr = f'T.cast({expr}, "{bret}")'
    lines.append(f"def kernel({', '.join(params)}):")
    lines.append("    with T.Kernel(1, prelude=PRELUDE):")
    for i, bdt in lanes:
        lines.append(f'        v{i} = T.alloc_local((2,), "{bdt}")')
    loop = "T.serial(N)" if lanes else "T.Parallel(N)"
    lines.append(f"        for i in {loop}:")
    for i, _ in lanes:
        lines.append(f"            v{i}[0] = A{i}[i, 0]")
        lines.append(f"            v{i}[1] = A{i}[i, 1]")
    lines.append(f"            B[i] = {expr}")
    return "\n".join(lines) + "\n"


def _atomic_body(row: Row) -> list[str]:
    dt = row.args[0]
    bdt = _C_BUFFER.get(dt, dt)
    with_stmt = row.stmt is not None and row.cpu
    vals = [f'T.cast(V{k}[i], "{dt}")' if bdt != dt else f"V{k}[i]" for k in range(1, len(row.args))]
    params = [f'D: T.Tensor((4,), "{bdt}")']
    params += [f'V{k}: T.Tensor((N,), "{bdt}")' for k in range(1, len(row.args))]
    params += [f'OLD: T.Tensor((N,), "{bdt}")', f'DOUT: T.Tensor((4,), "{bdt}")']
    if with_stmt:
        params.append(f'DOUT2: T.Tensor((4,), "{bdt}")')
    value = render_row(row, ["acc[i % 4]", *vals], "c", dtypes=list(row.args))
    cast = (lambda e: f'T.cast({e}, "{bdt}")') if bdt != dt else (lambda e: e)
    out = [f"def kernel({', '.join(params)}):",
           "    with T.Kernel(1, prelude=PRELUDE):",
           f'        acc = T.alloc_local((4,), "{dt}")',
           "        for j in T.serial(4):",
           f'            acc[j] = T.cast(D[j], "{dt}")',
           "        for i in T.serial(N):",
           f"            OLD[i] = {cast(value)}",
           "        for j in T.serial(4):",
           f"            DOUT[j] = {cast('acc[j]')}"]
    if with_stmt:
        stmt = render_row(row, ["acc2[i % 4]", *vals], "c", dtypes=list(row.args), statement=True)
        out += [f'        acc2 = T.alloc_local((4,), "{dt}")',
                "        for j in T.serial(4):",
                f'            acc2[j] = T.cast(D[j], "{dt}")',
                "        for i in T.serial(N):",
                f"            {stmt}",
                "        for j in T.serial(4):",
                f"            DOUT2[j] = {cast('acc2[j]')}"]
    return out


def cpu_out_idx(row: Row) -> list[int]:
    if row.kind == "atomic":
        n_out = 3 if (row.stmt is not None and row.cpu) else 2
        return list(range(len(row.args), len(row.args) + n_out))
    return [_n_tensor_args(row)]


def _n_tensor_args(row: Row) -> int:
    return sum(1 for a in row.args if a != "str")


def compile_cpu(row: Row):
    """Compile ``row``'s own CPU kernel (cached by TileLang on disk)."""
    import tilelang
    func = load_prim_func(cpu_kernel_source(row))
    return tilelang.compile(func, out_idx=cpu_out_idx(row), target="c",
                            pass_configs=CPU_PASS_CONFIGS)


# ------------------------------------------------------------------------------ CPU batches
def cpu_group(row: Row) -> str:
    """Rows with the same key share one CPU kernel (one row per output row of the kernel)."""
    if row.kind == "atomic":
        return f"atomic__{row.args[0]}__{len(row.args)}"
    args = "_".join(a if a.endswith("x2") else c_value_dtype(a) for a in row.args)
    return f"{c_value_dtype(row.ret)}__{args}"


def cpu_groups(rows) -> dict[str, list[Row]]:
    out: dict[str, list[Row]] = {}
    for r in rows:
        if r.status is not UNSUPPORTED:
            out.setdefault(cpu_group(r), []).append(r)
    return out


def cpu_batch_source(rows: list[Row]) -> str:
    """One kernel applying every row of a :func:`cpu_group` (their c forms): row ``j`` reads
    input row ``j`` and writes output row ``j``."""
    helpers = row_helpers(rows, "c")
    prelude = prelude_source(helpers, "c") if helpers else None
    lines = ["import tilelang.language as T", "", f"N = {N}", f"R = {len(rows)}",
             f"PRELUDE = {prelude!r}", "", "@T.prim_func"]
    first = rows[0]
    if first.kind == "atomic":
        return "\n".join(lines + _atomic_batch_body(rows)) + "\n"
    params, lanes = [], []
    for k, dt in enumerate(first.args):
        if dt == "str":
            continue
        bdt, _ = _arg_text(k, dt, first)
        shape = "(R, N, 2)" if dt.endswith("x2") else "(R, N)"
        params.append(f'A{k}: T.Tensor({shape}, "{bdt}")')
        if dt.endswith("x2"):
            lanes.append((k, bdt))
    ret = c_value_dtype(first.ret)
    bret = _C_BUFFER.get(ret, ret)
    params.append(f'B: T.Tensor((R, N), "{bret}")')
    lines.append(f"def kernel({', '.join(params)}):")
    lines.append("    with T.Kernel(1, prelude=PRELUDE):")
    for k, bdt in lanes:
        lines.append(f'        v{k} = T.alloc_local((2,), "{bdt}")')
    lines.append(f"        for i in {'T.serial(N)' if lanes else 'T.Parallel(N)'}:")
    for j, row in enumerate(rows):
        texts = []
        for k, dt in enumerate(row.args):
            if dt == "str":
                texts.append('""')
            elif dt.endswith("x2"):
                lines.append(f"            v{k}[0] = A{k}[{j}, i, 0]")
                lines.append(f"            v{k}[1] = A{k}[{j}, i, 1]")
                texts.append(f"v{k}")
            else:
                vdt = c_value_dtype(dt)
                bdt = _C_BUFFER.get(vdt, vdt)
                texts.append(f"A{k}[{j}, i]" if bdt == vdt else f'T.cast(A{k}[{j}, i], "{vdt}")')
        expr = render_row(row, texts, "c", dtypes=[c_value_dtype(a) for a in row.args])
        if bret != ret or row.ret == "bool":
            expr = f'T.cast({expr}, "{bret}")'
        lines.append(f"            B[{j}, i] = {expr}")
    return "\n".join(lines) + "\n"


def _atomic_batch_body(rows: list[Row]) -> list[str]:
    dt = rows[0].args[0]
    bdt = _C_BUFFER.get(dt, dt)
    cast = (lambda e: f'T.cast({e}, "{bdt}")') if bdt != dt else (lambda e: e)
    nv = len(rows[0].args) - 1
    params = [f'D: T.Tensor((R, 4), "{bdt}")']
    params += [f'V{k}: T.Tensor((R, N), "{bdt}")' for k in range(1, nv + 1)]
    params += [f'OLD: T.Tensor((R, N), "{bdt}")', f'DOUT: T.Tensor((R, 4), "{bdt}")',
               f'DOUT2: T.Tensor((R, 4), "{bdt}")']
    out = [f"def kernel({', '.join(params)}):", "    with T.Kernel(1, prelude=PRELUDE):"]
    for j, row in enumerate(rows):
        vals = [cast_in(f"V{k}[{j}, i]", bdt, dt) for k in range(1, nv + 1)]
        value = render_row(row, [f"acc{j}[i % 4]", *vals], "c", dtypes=list(row.args))
        with_stmt = row.stmt is not None and row.cpu
        out += [f'        acc{j} = T.alloc_local((4,), "{dt}")',
                f'        acc{j}s = T.alloc_local((4,), "{dt}")',
                "        for q in T.serial(4):",
                f'            acc{j}[q] = T.cast(D[{j}, q], "{dt}")',
                f'            acc{j}s[q] = T.cast(D[{j}, q], "{dt}")',
                "        for i in T.serial(N):",
                f"            OLD[{j}, i] = {cast(value)}"]
        if with_stmt:
            stmt = render_row(row, [f"acc{j}s[i % 4]", *vals], "c", dtypes=list(row.args),
                              statement=True)
            out.append(f"            {stmt}")
        out += ["        for q in T.serial(4):",
                f"            DOUT[{j}, q] = {cast(f'acc{j}[q]')}",
                f"            DOUT2[{j}, q] = {cast(f'acc{j}s[q]' if with_stmt else f'acc{j}[q]')}"]
    return out


def cast_in(text: str, bdt: str, dt: str) -> str:
    return text if bdt == dt else f'T.cast({text}, "{dt}")'


def cpu_batch_out_idx(rows: list[Row]) -> list[int]:
    first = rows[0]
    if first.kind == "atomic":
        return list(range(len(first.args), len(first.args) + 3))
    return [_n_tensor_args(first)]


def compile_cpu_batch(rows: list[Row], func=None):
    """Compile the batch kernel of ``rows`` (``func``: its already parsed prim_func)."""
    import tilelang
    if func is None:
        func = load_prim_func(cpu_batch_source(rows))
    return tilelang.compile(func, out_idx=cpu_batch_out_idx(rows), target="c",
                            pass_configs=CPU_PASS_CONFIGS)


def run_cpu_batch(kernel, rows: list[Row], inputs: list[list[np.ndarray]]) -> list:
    """Run a batch kernel; ``inputs[j]`` are row ``j``'s arguments. Returns per-row results as
    :func:`run_cpu` does."""
    first = rows[0]
    stacked = [np.stack([inp[k] for inp in inputs]) for k in range(len(first.args))]
    outs = kernel(*[_to_torch(a, dt) for a, dt in zip(stacked, first.args) if dt != "str"])
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    if first.kind == "atomic":
        arrs = [_from_torch(o, first.args[0]) for o in outs]
        return [[a[j] for a in arrs] for j in range(len(rows))]
    arr = _from_torch(outs[0], c_value_dtype(first.ret))
    return [arr[j] for j in range(len(rows))]


def check_row(row: Row, got, ins: list[np.ndarray]) -> list[str]:
    """Compare a row's CPU result with the numpy reference; returns mismatch descriptions."""
    from migrate.compat import numpy_ref
    if row.kind == "atomic":
        old, final = numpy_ref.atomic_reference(row, *ins)
        bad = mismatches(got[0], old, 0, zero_sign=False, args=ins[1:])
        bad += ["final: " + m for m in mismatches(got[1], final, 0, zero_sign=False)]
        if len(got) > 2:
            bad += ["statement form: " + m for m in mismatches(got[2], final, 0, zero_sign=False)]
        return bad
    want = numpy_ref.reference(row, *ins)
    return mismatches(got, want, tolerance(row), zero_sign=row.cuda not in ZERO_SIGN_FREE, args=ins)


def _to_torch(a: np.ndarray, dt: str):
    import torch
    a = np.ascontiguousarray(a)
    if a.dtype.type in (np.uint32, np.uint64, np.uint16):
        a = a.view({np.uint32: np.int32, np.uint64: np.int64, np.uint16: np.int16}[a.dtype.type])
    if a.dtype == np.bool_:
        a = a.astype(np.int32)
    return torch.from_numpy(a.copy())


def _from_torch(t, dt: str) -> np.ndarray:
    a = t.numpy()
    if dt in ("uint32", "uint64", "uint16"):
        a = a.view({"uint32": np.uint32, "uint64": np.uint64, "uint16": np.uint16}[dt])
    if dt == "bool":
        a = a.astype(np.bool_)
    return a


def run_cpu(kernel, row: Row, args: list[np.ndarray]):
    """Run a compiled CPU kernel on numpy inputs; returns numpy output(s) in the row's dtypes."""
    outs = kernel(*[_to_torch(a, dt) for a, dt in zip(args, row.args) if dt != "str"])
    if not isinstance(outs, (list, tuple)):
        outs = [outs]
    if row.kind == "atomic":
        return [_from_torch(o, row.args[0]) for o in outs]
    return _from_torch(outs[0], c_value_dtype(row.ret))


# ------------------------------------------------------------------------------ comparison
def _ordered(a: np.ndarray) -> list[int]:
    ints = a.view({2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]).astype(object)
    lo = -(1 << (8 * a.dtype.itemsize - 1))
    return [lo - v if v < 0 else v for v in ints.tolist()]


def mismatches(got: np.ndarray, want: np.ndarray, tol_ulp: int, *, zero_sign: bool,
               args=None, limit: int = 5) -> list[str]:
    """Descriptions of elements where ``got`` differs from ``want`` beyond ``tol_ulp``."""
    got = np.asarray(got)
    want = np.asarray(want).astype(got.dtype) if want.dtype != got.dtype else np.asarray(want)
    bad: list[str] = []
    if got.dtype.kind == "f":
        og, ow = _ordered(got), _ordered(want)
        for k, (g, w) in enumerate(zip(got.tolist(), want.tolist())):
            if math.isnan(g) or math.isnan(w):
                ok = math.isnan(g) and math.isnan(w)
            elif math.isinf(g) or math.isinf(w):
                ok = g == w
            else:
                ok = abs(og[k] - ow[k]) <= tol_ulp
                if ok and zero_sign and tol_ulp == 0 and g == 0 and w == 0:
                    ok = math.copysign(1, g) == math.copysign(1, w)
            if not ok:
                at = "" if args is None else f" args={[np.asarray(a)[k].tolist() for a in args]}"
                diff = "" if (math.isnan(g) or math.isnan(w) or math.isinf(g) or math.isinf(w)) \
                    else f" ({abs(og[k] - ow[k])} ulp)"
                bad.append(f"[{k}] got {g!r} want {w!r}{diff}{at}")
    else:
        for k, (g, w) in enumerate(zip(got.tolist(), want.tolist())):
            if g != w:
                at = "" if args is None else f" args={[np.asarray(a)[k].tolist() for a in args]}"
                bad.append(f"[{k}] got {g!r} want {w!r}{at}")
    return bad[:limit] + ([f"... {len(bad) - limit} more"] if len(bad) > limit else [])


#: rows whose reference does not model the sign of a zero result (min/max of +0 and -0 is
#: unspecified; exact-arithmetic references return +0 for every exact zero)
ZERO_SIGN_FREE = {
    "fminf", "fmaxf", "fmin", "fmax", "min", "max", "std::fmin", "std::fmax", "__hmax", "__hmin",
    "__saturatef", "fmaf", "fma", "std::fma", "__fmaf_rn", "__fma_rn", "__hfma", "__fmaf_rz",
    "__fmaf_ru", "__fmaf_rd", "__fadd_rz", "__fadd_ru", "__fadd_rd", "__fsub_rz", "__fmul_rz",
    "__fmul_ru", "__fmul_rd", "__fdiv_rz", "__dadd_rn", "__dmul_rn", "__fadd_rn", "__fsub_rn",
    "__fmul_rn", "__fdiv_rn", "__frcp_rz", "__frcp_rn", "__drcp_rn", "__float2half_rz",
}


def tolerance(row: Row) -> int:
    """ULP tolerance of the CPU check: 0 for correctly rounded rows (bit-exact); otherwise CUDA's
    bound plus the reference's own rounding (1 for float/half computed in double, 2 for double).
    Fast-math rows are checked through their precise CPU form (2 ulp)."""
    u = row.ulp if row.ulp is not None else 2
    if u == 0:
        return 0
    return u + (2 if "float64" in (row.ret, *row.args) else 1)


# ------------------------------------------------------------------------------ CUDA batches
@dataclass(frozen=True)
class Variant:
    """One form of one row, for the CUDA lowering batches."""
    row: Row
    which: str  # "tilelang" | "cpu_form" | "stmt"

    @property
    def text(self) -> str:
        return getattr(self.row, self.which)

    @property
    def ret(self) -> str:
        return c_value_dtype(self.row.ret) if self.which == "cpu_form" else self.row.ret

    @property
    def args(self) -> tuple[str, ...]:
        if self.which == "cpu_form":
            return tuple(c_value_dtype(a) if not a.endswith("x2") else a for a in self.row.args)
        return self.row.args

    @property
    def group(self) -> str:
        if self.row.kind == "atomic":
            return f"atomic_{self.row.args[0]}_{len(self.row.args)}"
        return f"{self.ret}__{'_'.join(self.args)}"


def variants(rows) -> list[Variant]:
    out = []
    for r in rows:
        if r.status is UNSUPPORTED:
            continue
        out.append(Variant(r, "tilelang"))
        if r.cpu_form is not None:
            out.append(Variant(r, "cpu_form"))
        if r.stmt is not None:
            out.append(Variant(r, "stmt"))
    return out


def _variant_expr(v: Variant, texts: list[str]) -> str:
    return cuda_math.render_template(v.text, texts, dtypes=list(v.args))


def cuda_batch_source(vs: list[Variant], *, prelude: str | None = None) -> str:
    """One kernel applying every variant: expression variants write column ``j`` of an output
    per result dtype; atomic variants update shared accumulators."""
    if prelude is None:
        prelude = prelude_source(row_helpers(dict.fromkeys(v.row for v in vs), "cuda"), "cuda")
    in_dts: list[str] = []
    lane_dts: list[str] = []
    out_cols: dict[str, int] = {}
    body: list[str] = []
    for v in vs:
        if v.row.kind == "atomic":
            continue
        texts = []
        for k, dt in enumerate(v.args):
            if dt == "str":
                texts.append('""')
            elif dt.endswith("x2"):
                base = "float16" if dt == "float16x2" else "bfloat16"
                if base not in lane_dts:
                    lane_dts.append(base)
                texts.append(f"l_{base}")
            else:
                if dt not in in_dts:
                    in_dts.append(dt)
                texts.append(f"X_{dt}[{k}, i]")
        col = out_cols.get(_buf(v.ret), 0)
        out_cols[_buf(v.ret)] = col + 1
        expr = _variant_expr(v, texts)
        if v.ret == "bool":
            expr = f'T.cast({expr}, "int32")'
        body.append(f"            Y_{_buf(v.ret)}[{col}, i] = {expr}")
    atomic_cols: dict[str, int] = {}
    atomic_body: list[str] = []
    for v in vs:
        if v.row.kind != "atomic":
            continue
        dt = v.row.args[0]
        if dt not in in_dts:
            in_dts.append(dt)
        texts = [f"ACC_{dt}[i % 4]"] + [f"X_{dt}[{k}, i]" for k in range(1, len(v.row.args))]
        expr = _variant_expr(v, texts)
        if v.which == "stmt":
            atomic_body.append(f"            {expr}")
        else:
            col = atomic_cols.get(dt, 0)
            atomic_cols[dt] = col + 1
            atomic_body.append(f"            OLD_{dt}[{col}, i] = {expr}")
    params = [f'X_{dt}: T.Tensor((4, N), "{dt}")' for dt in in_dts]
    params += [f'L_{b}: T.Tensor((N, 2), "{b}")' for b in lane_dts]
    params += [f'ACC_{dt}: T.Tensor((4,), "{dt}")' for dt in dict.fromkeys(
        v.row.args[0] for v in vs if v.row.kind == "atomic")]
    params += [f'Y_{r}: T.Tensor(({n}, N), "{r}")' for r, n in out_cols.items()]
    params += [f'OLD_{dt}: T.Tensor(({n}, N), "{dt}")' for dt, n in atomic_cols.items()]
    lines = ["import tilelang.language as T", "", f"N = {N}", f"PRELUDE = {prelude!r}", "",
             "@T.prim_func", f"def kernel({', '.join(params)}):",
             "    with T.Kernel(1, threads=128, prelude=PRELUDE):"]
    for b in lane_dts:
        lines.append(f'        l_{b} = T.alloc_local((2,), "{b}")')
    if body or lane_dts:
        lines.append("        for i in T.Parallel(N):")
        for b in lane_dts:
            lines += [f"            l_{b}[0] = L_{b}[i, 0]", f"            l_{b}[1] = L_{b}[i, 1]"]
        lines += body
    if atomic_body:
        lines.append("        for i in T.Parallel(N):")
        lines += atomic_body
    return "\n".join(lines) + "\n"


def _buf(dt: str) -> str:
    return "int32" if dt == "bool" else dt


def lower_cuda(source: str, *, compile_device: bool = False):
    """Lower (and optionally nvcc-compile) a kernel source for sm_90a; returns the artifact."""
    import tilelang
    from tvm.target import Target
    func = load_prim_func(source)
    tgt = Target(CUDA_TARGET)
    with tgt:
        return tilelang.lower(func, target=tgt, enable_device_compile=compile_device)


def default_cache_dir() -> str:
    return os.environ.get("TILELANG_CACHE_DIR") or str(Path.home() / ".cache" / "cuda2tile" / "tilelang")
