"""Differential fuzzing of ``migrate convert --check cpu`` (issue 14).

    python bench/fuzz.py [--seed S] [--count N] [--per-file K] [--out DIR] [--json FILE]
                         [--families a,b,...] [--jobs J] [--minimise] [--keep]

Generates ``--count`` valid CUDA kernels from ``--seed`` (1-D maps, 2-D maps, grid-stride loops,
stencils, shared-memory tree reductions, warp shuffles, integer atomics, local arrays, structs,
templates, ``__half``), ``--per-file`` of them per ``.cu`` with one spec (``NAME.toml``) per file,
runs ``python -m migrate convert SRC -o OUT --check cpu`` on the batch and classifies every
kernel: converted (form) or refused (error codes), check ``pass``/``fail``/``error``/``skipped``,
and ``crash`` (an ``M9001`` internal error, a Python traceback, or a convert that died). Prints a
summary table; ``--json`` writes every kernel's row. ``--minimise`` shrinks each kernel that did
not pass (statements deleted, binary expressions replaced by an operand) while the same outcome
persists and prints the minimal source. The same seed always gives the same kernels.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CTYPE = {"float32": "float", "int32": "int", "float16": "__half", "uint32": "unsigned", "int64": "long long"}
FAMILIES = ("map1d", "map2d", "gridstride", "stencil", "tree", "shuffle", "atomic", "local", "struct",
            "template", "half", "intmath", "varloop")


@dataclass
class Kernel:
    """One generated kernel: its source (preamble lines + the kernel) and its spec tables."""
    name: str
    family: str
    params: list  # ("buf", name, dtype, elements, role, range) | ("scalar", name, dtype, value)
    body: list[str]  # statement lines of the kernel body (indented)
    grid: tuple
    block: tuple
    tolerance: str
    pre: list[str] = field(default_factory=list)  # structs, device functions before the kernel
    template: list[str] | None = None  # template instance args; ``tparams`` the declaration
    tparams: str = ""

    def source(self) -> str:
        def decl(p):
            if p[0] == "scalar":
                return f"{CTYPE[p[2]]} {p[1]}"
            const = "const " if p[4] == "in" else ""
            ty = "T" if self.tparams else CTYPE[p[2]]  # a template kernel's buffers are T*
            return f"{const}{ty}* __restrict__ {p[1]}"
        head = f"template <{self.tparams}>\n" if self.tparams else ""
        params = ", ".join(decl(p) for p in self.params)
        return "\n".join(self.pre + [f"{head}__global__ void {self.name}({params})", "{", *self.body, "}", ""])

    def spec(self) -> str:
        out = ["[[kernel]]", f'name = "{self.name}"']
        if self.template:
            out.append("template = [" + ", ".join(f'"{t}"' for t in self.template) + "]")
        out += [f"grid = {list(self.grid)}", f"block = {list(self.block)}", f'tolerance = "{self.tolerance}"',
                f'description = "fuzz {self.family}"', ""]
        for p in self.params:
            out.append("[[kernel.args]]")
            out.append(f'name = "{p[1]}"')
            if p[0] == "scalar":
                val = repr(float(p[3])) if p[2].startswith("float") else str(int(p[3]))
                out += [f'scalar = "{p[2]}"', f"value = {val}"]
            else:
                _, _, dtype, elements, role, rng = p
                out += [f'buffer = "{dtype}"', f"elements = {elements}", f'role = "{role}"']
                if role != "out":
                    out.append(f"range = [{rng[0]!r}, {rng[1]!r}]")
            out.append("")
        return "\n".join(out)


# ---------------------------------------------------------------- expressions

def expr(rng: random.Random, leaves: list[str], dtype: str, depth: int, top: bool = True) -> str:
    """A random, fully parenthesised expression over ``leaves`` that is well defined in C for
    small inputs (no division by a variable, no overflow for |leaf| <= 64 at depth <= 3)."""
    if depth <= 0 or (not top and rng.random() < 0.25):
        if rng.random() < 0.2:
            return rng.choice(["2", "3", "7", "-5"]) if dtype == "int32" else rng.choice(
                ["0.5f", "1.25f", "2.0f", "-0.75f"])
        return rng.choice(leaves)
    a, b = expr(rng, leaves, dtype, depth - 1, False), expr(rng, leaves, dtype, depth - 1, False)
    if dtype == "int32":
        k = rng.choice(["+", "-", "*", "&", "|", "^", "min", "max", "?", "/", "%", ">>"])
        if k in ("min", "max"):
            return f"{k}({a}, {b})"
        if k == "?":
            return f"({a} > {b} ? {a} : {b})"
        if k in ("/", "%"):
            return f"({a} {k} {rng.choice([2, 3, 5, 8])})"
        if k == ">>":
            return f"({a} >> {rng.choice([1, 2, 3])})"
        return f"({a} {k} {b})"
    k = rng.choice(["+", "-", "*", "fmaxf", "fminf", "fabsf", "?", "/", "expf", "sqrtf"])
    if k in ("fmaxf", "fminf"):
        return f"{k}({a}, {b})"
    if k == "fabsf":
        return f"fabsf({a})"
    if k == "expf":
        return f"expf(fminf({a}, 4.0f))"
    if k == "sqrtf":
        return f"sqrtf(fabsf({a}) + 1.0f)"
    if k == "?":
        return f"({a} > {b} ? {a} : {b})"
    if k == "/":
        return f"({a} / {rng.choice(['2.0f', '3.0f', '0.5f'])})"
    return f"({a} {k} {b})"


def _dtype(rng, floats=0.6):
    return "float32" if rng.random() < floats else "int32"


def _range(dtype):
    return [-1.0, 1.0] if dtype == "float32" else [-64, 64]


def _tol(dtype, accum=False):
    return "exact" if dtype == "int32" else ("fp32_accum" if accum else "fp32")


def _blocks(n, b):
    return (n + b - 1) // b


# ---------------------------------------------------------------- families

def g_map1d(rng, name):
    dt, n, b = _dtype(rng), rng.randint(1, 5000), rng.choice([32, 64, 128, 256])
    e = expr(rng, ["x[i]", "z[i]", "a"], dt, 3)
    ty = CTYPE[dt]
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", f"    if (i < n) y[i] = ({ty})({e});"]
    pre = []
    if rng.random() < 0.3:  # early return form
        body = ["    int i = threadIdx.x + blockIdx.x * blockDim.x;", "    if (i >= n) return;",
                f"    {ty} v = {e};", "    y[i] = v;"]
    elif rng.random() < 0.4:  # through a device function
        pre = [f"__device__ {ty} {name}_g({ty} u, {ty} v, {ty} a) {{ return {expr(rng, ['u', 'v', 'a'], dt, 2)}; }}"]
        body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", f"    if (i < n) y[i] = {name}_g(x[i], z[i], a);"]
    return Kernel(name, "map1d", [("buf", "x", dt, n, "in", _range(dt)), ("buf", "z", dt, n, "in", _range(dt)),
                                  ("buf", "y", dt, n, "out", None), ("scalar", "a", dt, 3 if dt == "int32" else 0.75),
                                  ("scalar", "n", "int32", n)], body, (_blocks(n, b) + rng.choice([0, 0, 1]), 1, 1),
                  (b, 1, 1), _tol(dt), pre=pre)


def g_map2d(rng, name):
    dt, rows, cols = _dtype(rng), rng.randint(1, 70), rng.randint(1, 90)
    bx, by = rng.choice([(16, 16), (32, 8), (8, 8), (32, 4)])
    bias = rng.choice(["b[c]", "b[r]"])
    e = expr(rng, ["x[r * cols + c]", bias, "a"], dt, 3)
    body = ["    int c = blockIdx.x * blockDim.x + threadIdx.x;", "    int r = blockIdx.y * blockDim.y + threadIdx.y;",
            f"    if (r < rows && c < cols) y[r * cols + c] = ({CTYPE[dt]})({e});"]
    nb = cols if bias == "b[c]" else rows
    return Kernel(name, "map2d", [("buf", "x", dt, rows * cols, "in", _range(dt)), ("buf", "b", dt, nb, "in", _range(dt)),
                                  ("buf", "y", dt, rows * cols, "out", None), ("scalar", "a", dt, 2 if dt == "int32" else 1.5),
                                  ("scalar", "rows", "int32", rows), ("scalar", "cols", "int32", cols)], body,
                  (_blocks(cols, bx), _blocks(rows, by), 1), (bx, by, 1), _tol(dt))


def g_gridstride(rng, name):
    dt, n, b = _dtype(rng), rng.randint(1, 20000), rng.choice([64, 128, 256])
    e = expr(rng, ["x[i]", "y[i]", "a"], dt, 3)
    body = ["    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {",
            f"        y[i] = ({CTYPE[dt]})({e});", "    }"]
    return Kernel(name, "gridstride", [("scalar", "n", "int32", n), ("scalar", "a", dt, 5 if dt == "int32" else 0.5),
                                       ("buf", "x", dt, n, "in", _range(dt)), ("buf", "y", dt, n, "inout", _range(dt))],
                  body, (rng.randint(1, 8), 1, 1), (b, 1, 1), _tol(dt))


def g_stencil(rng, name):
    dt, n, b, r = _dtype(rng), rng.randint(8, 4000), rng.choice([64, 128, 256]), rng.choice([1, 2])
    ws = [rng.choice(["0.25f", "0.5f", "-1.0f", "2.0f"]) if dt == "float32" else str(rng.randint(-3, 3))
          for _ in range(2 * r + 1)]
    if rng.random() < 0.5:  # interior only
        terms = " + ".join(f"{w} * x[i + {o}]".replace("+ -", "- ") for w, o in zip(ws, range(-r, r + 1)))
        body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", f"    if (i >= {r} && i < n - {r}) y[i] = {terms};"]
    else:  # clamped at the edges
        terms = " + ".join(f"{w} * x[min(max(i + {o}, 0), n - 1)]" for w, o in zip(ws, range(-r, r + 1)))
        body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i < n) {",
                f"        y[i] = {terms};", "    }"]
    if rng.random() < 0.4:  # a shared tile with halo
        B = b
        body = [f"    __shared__ {CTYPE[dt]} s[{B} + 2 * {r}];", "    int i = blockIdx.x * blockDim.x + threadIdx.x;",
                "    int t = threadIdx.x + " + str(r) + ";",
                "    s[t] = i < n ? x[i] : 0;",
                f"    if (threadIdx.x < {r}) {{",
                f"        s[t - {r}] = i - {r} >= 0 && i - {r} < n ? x[i - {r}] : 0;",
                f"        s[t + {B}] = i + {B} < n ? x[i + {B}] : 0;", "    }",
                "    __syncthreads();",
                "    if (i < n) y[i] = " + " + ".join(f"{w} * s[t + {o}]" for w, o in zip(ws, range(-r, r + 1))) + ";"]
    # the interior form leaves the edges alone: y is inout (an out buffer must be written whole)
    role = "inout" if "n - " + str(r) + ")" in body[-1] else "out"
    return Kernel(name, "stencil", [("buf", "x", dt, n, "in", _range(dt)), ("buf", "y", dt, n, role, _range(dt)),
                                    ("scalar", "n", "int32", n)], body, (_blocks(n, b), 1, 1), (b, 1, 1), _tol(dt))


def g_tree(rng, name):
    dt, B = _dtype(rng), rng.choice([64, 128, 256])
    op = rng.choice(["sum", "max", "min"])
    ty = CTYPE[dt]
    n = rng.randint(1, 6000)
    ident = {"sum": "0", "max": "-1000000", "min": "1000000"}[op]
    comb = {"sum": "s[t] + s[t + st]", "max": ("fmaxf" if dt == "float32" else "max") + "(s[t], s[t + st])",
            "min": ("fminf" if dt == "float32" else "min") + "(s[t], s[t + st])"}[op]
    pre = expr(rng, ["x[i]"], dt, 1)
    body = [f"    __shared__ {ty} s[{B}];", "    int t = threadIdx.x;", "    int i = blockIdx.x * blockDim.x + t;",
            f"    s[t] = i < n ? ({ty})({pre}) : ({ty})({ident});", "    __syncthreads();",
            f"    for (int st = {rng.choice([str(B // 2), 'blockDim.x / 2'])}; st > 0; st >>= 1) {{", f"        if (t < st) s[t] = {comb};",
            "        __syncthreads();", "    }"]
    grid = _blocks(n, B)
    if dt == "int32" and op == "sum" and rng.random() < 0.5:
        body.append("    if (t == 0) atomicAdd(total, s[0]);")
        outs = [("buf", "total", dt, 1, "inout", [0, 9])]
    else:
        body.append("    if (t == 0) out[blockIdx.x] = s[0];")
        outs = [("buf", "out", dt, grid, "out", None)]
    return Kernel(name, "tree", [("buf", "x", dt, n, "in", _range(dt)), *outs, ("scalar", "n", "int32", n)], body,
                  (grid, 1, 1), (B, 1, 1), _tol(dt, accum=True))


def g_shuffle(rng, name):
    dt, B, n = _dtype(rng), rng.choice([32, 64, 128, 256]), rng.randint(1, 5000)
    ty = CTYPE[dt]
    grid = _blocks(n, B)
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", f"    {ty} v = i < n ? x[i] : ({ty})0;",
            f"    for (int o = {rng.choice(['16', 'warpSize / 2'])}; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);"]
    kind = rng.choice(["store", "atomic" if dt == "int32" else "store", "xor"])
    if kind == "store":
        body.append("    if ((threadIdx.x & 31) == 0) out[i >> 5] = v;")
        outs = [("buf", "out", dt, grid * B // 32, "out", None)]
    elif kind == "atomic":
        body.append("    if ((threadIdx.x & 31) == 0) atomicAdd(out, v);")
        outs = [("buf", "out", dt, 1, "inout", [0, 9])]
    else:
        body[2] = "    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffff, v, o);"
        body.append("    if (i < n) out[i] = x[i] * 2 - v;")
        outs = [("buf", "out", dt, n, "out", None)]
    return Kernel(name, "shuffle", [("buf", "x", dt, n, "in", _range(dt)), *outs, ("scalar", "n", "int32", n)], body,
                  (grid, 1, 1), (B, 1, 1), _tol(dt, accum=True))


def g_atomic(rng, name):
    n, b, bins = rng.randint(1, 6000), rng.choice([64, 128, 256]), rng.choice([4, 16, 64])
    kind = rng.choice(["hist", "weighted", "sum", "max"])
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i >= n) return;"]
    if kind == "hist":
        body.append(f"    atomicAdd(&h[x[i] & {bins - 1}], 1);")
    elif kind == "weighted":
        body.append(f"    atomicAdd(&h[(x[i] + 64) % {bins}], x[i] * 3);")
    elif kind == "sum":
        bins = 1
        body.append("    atomicAdd(h, x[i]);")
    else:
        body.append(f"    atomicMax(&h[i % {bins}], x[i]);")
    return Kernel(name, "atomic", [("buf", "x", "int32", n, "in", [-64, 64]), ("buf", "h", "int32", bins, "inout", [0, 9]),
                                   ("scalar", "n", "int32", n)], body, (_blocks(n, b), 1, 1), (b, 1, 1), "exact")


def g_local(rng, name):
    dt, K, n, b = _dtype(rng), rng.choice([2, 3, 4, 8]), rng.randint(1, 1500), rng.choice([64, 128])
    ty = CTYPE[dt]
    e = expr(rng, ["t[j]", "w[j]"], dt, 2)
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i >= n) return;", f"    {ty} t[{K}];",
            f"    for (int j = 0; j < {K}; ++j) t[j] = x[i * {K} + j];"]
    if rng.random() < 0.5:
        body += [f"    {ty} acc = 0;", f"    for (int j = 0; j < {K}; ++j) acc += {e};", "    y[i] = acc;"]
        outs = [("buf", "y", dt, n, "out", None)]
    else:
        body += [f"    for (int j = 0; j < {K}; ++j) y[i * {K} + j] = t[{K} - 1 - j] + w[j];"]
        outs = [("buf", "y", dt, n * K, "out", None)]
    return Kernel(name, "local", [("buf", "x", dt, n * K, "in", _range(dt)), ("buf", "w", dt, K, "in", _range(dt)), *outs,
                                  ("scalar", "n", "int32", n)], body, (_blocks(n, b), 1, 1), (b, 1, 1), _tol(dt))


def g_struct(rng, name):
    dt, n, b = _dtype(rng), rng.randint(1, 4000), rng.choice([64, 128, 256])
    ty = CTYPE[dt]
    S = f"{name.capitalize()}Pair"
    e1, e2 = expr(rng, ["u", "v"], dt, 2), expr(rng, ["u", "v"], dt, 2)
    pre = [f"struct {S} {{ {ty} lo; {ty} hi; }};",
           f"__device__ {S} {name}_mk({ty} u, {ty} v) {{ {S} p; p.lo = {e1}; p.hi = {e2}; return p; }}"]
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i < n) {",
            f"        {S} p = {name}_mk(x[i], z[i]);", "        y[i] = p.lo;", "        w[i] = p.hi - p.lo;", "    }"]
    return Kernel(name, "struct", [("buf", "x", dt, n, "in", _range(dt)), ("buf", "z", dt, n, "in", _range(dt)),
                                   ("buf", "y", dt, n, "out", None), ("buf", "w", dt, n, "out", None),
                                   ("scalar", "n", "int32", n)], body, (_blocks(n, b), 1, 1), (b, 1, 1), _tol(dt),
                  pre=pre)


def g_template(rng, name):
    dt, n, K = _dtype(rng), rng.randint(1, 4000), rng.choice([1, 2, 3, 5])
    b = rng.choice([64, 128, 256])
    ty = CTYPE[dt]
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i >= n) return;", "    T acc = x[i];",
            "    for (int j = 1; j < K; ++j) acc = acc * x[i] + (T)j;", "    y[i] = acc;"]
    k = Kernel(name, "template", [("buf", "x", dt, n, "in", _range(dt)), ("buf", "y", dt, n, "out", None),
                                  ("scalar", "n", "int32", n)], body, (_blocks(n, b), 1, 1), (b, 1, 1), _tol(dt),
               template=[ty, str(K)], tparams="typename T, int K")
    if dt == "int32":  # the generic pointer type in the parameter list is T
        k.params = [("buf", "x", dt, n, "in", [-3, 3]), ("buf", "y", dt, n, "out", None), ("scalar", "n", "int32", n)]
    return k


def g_half(rng, name):
    n, b = rng.randint(1, 4000), rng.choice([64, 128, 256])
    kind = rng.choice(["hadd", "float", "hmul"])
    e = expr(rng, ["fx", "fz"], "float32", 2)
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i >= n) return;"]
    if kind == "hadd":
        body.append("    y[i] = __hadd(x[i], z[i]);")
    elif kind == "hmul":
        body.append("    y[i] = __hmul(x[i], __float2half(a));")
    else:
        body += ["    float fx = __half2float(x[i]);", "    float fz = __half2float(z[i]);",
                 f"    y[i] = __float2half({e} * a);"]
    return Kernel(name, "half", [("buf", "x", "float16", n, "in", [-1.0, 1.0]), ("buf", "z", "float16", n, "in", [-1.0, 1.0]),
                                 ("buf", "y", "float16", n, "out", None), ("scalar", "a", "float32", 0.5),
                                 ("scalar", "n", "int32", n)], body, (_blocks(n, b), 1, 1), (b, 1, 1), "fp16")


def g_intmath(rng, name):
    """Integer corners: C division and remainder by a signed run-time divisor, unsigned
    wrap-around, 64-bit products, float<->int conversions."""
    n, b = rng.randint(1, 4000), rng.choice([64, 128, 256])
    d = rng.choice([-7, -3, -2, 2, 3, 5, 8])
    zs = [f"x[i] / d", "x[i] % d", f"(x[i] * {rng.choice([3, -5, 7])}) / d", "(int)(u[i] % 1000u)",
          "(int)((u[i] * 2654435761u) >> 20)", "(int)(u[i] >> 31) - (x[i] >> 2)", "x[i] / 4 + x[i] % 4",
          "(int)((float)x[i] * 0.37f)", "(x[i] < 0 ? -x[i] : x[i]) % d"]
    ws = ["(long long)x[i] * 100003LL * (long long)d", "(long long)u[i] * (long long)u[i]",
          "((long long)x[i] << 33) / 7", "(long long)(u[i] / 3u) - (long long)x[i]"]
    fs = ["(float)x[i] / 3.0f", "(float)(u[i] % 97u) * 0.5f", "(float)(x[i] / d) + 0.25f", "(float)(long long)u[i] * 1e-6f"]
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i >= n) return;",
            f"    z[i] = {rng.choice(zs)} + {rng.choice(zs)};", f"    w[i] = {rng.choice(ws)};",
            f"    y[i] = {rng.choice(fs)};"]
    return Kernel(name, "intmath", [("buf", "x", "int32", n, "in", [-100000, 100000]),
                                    ("buf", "u", "uint32", n, "in", [0, 4000000000]),
                                    ("buf", "z", "int32", n, "out", None), ("buf", "w", "int64", n, "out", None),
                                    ("buf", "y", "float32", n, "out", None), ("scalar", "n", "int32", n),
                                    ("scalar", "d", "int32", d)], body, (_blocks(n, b), 1, 1), (b, 1, 1), "fp32")


def g_varloop(rng, name):
    """Per-thread trip counts (divergent loops), break/continue, a running value across iterations."""
    dt, n, b = _dtype(rng), rng.randint(1, 3000), rng.choice([32, 64, 128])
    ty = CTYPE[dt]
    bound = rng.choice(["i % 7", "(i * 3) % 11", "(n - i < 9 ? n - i : 9)"])
    step = rng.choice(["acc += x[(i + j) % n];", "acc = acc * 0.5f + x[(i + j) % n];" if dt == "float32" else
                       "acc = (acc >> 1) + x[(i + j) % n];", "if (x[(i + j) % n] > 0) continue; acc += x[(i + j) % n];",
                       "if (acc > 3) break; acc += x[(i + j) % n];"])
    body = ["    int i = blockIdx.x * blockDim.x + threadIdx.x;", "    if (i >= n) return;", f"    {ty} acc = 0;",
            f"    for (int j = 0; j < {bound}; ++j) {{", f"        {step}", "    }", "    y[i] = acc;"]
    return Kernel(name, "varloop", [("buf", "x", dt, n, "in", _range(dt)), ("buf", "y", dt, n, "out", None),
                                    ("scalar", "n", "int32", n)], body, (_blocks(n, b), 1, 1), (b, 1, 1),
                  _tol(dt, accum=True))


GENERATORS = {f: globals()[f"g_{f}"] for f in FAMILIES}
HEADER = "#include <cuda_runtime.h>\n#include <cuda_fp16.h>\n\n"


def generate(seed: int, count: int, families=FAMILIES) -> list[Kernel]:
    """``count`` kernels; kernel i depends only on (seed, i) and the family list."""
    out = []
    for i in range(count):
        rng = random.Random(f"{seed}:{i}")
        fam = families[rng.randrange(len(families))]
        out.append(GENERATORS[fam](rng, f"f{i}_{fam}"))
    return out


def write_batch(kernels: list[Kernel], src: Path, per_file: int) -> dict[str, str]:
    """The kernels as ``src/bNNN.cu`` + ``.toml``; returns kernel name -> file name."""
    src.mkdir(parents=True, exist_ok=True)
    where = {}
    for f in range(0, len(kernels), per_file):
        chunk = kernels[f:f + per_file]
        stem = f"b{f // per_file:04d}"
        (src / f"{stem}.cu").write_text(HEADER + "\n".join(k.source() for k in chunk))
        (src / f"{stem}.toml").write_text("\n".join(k.spec() for k in chunk))
        where.update({k.name: f"{stem}.cu" for k in chunk})
    return where


# ---------------------------------------------------------------- running and classifying

TRACEBACK = re.compile(r"Traceback \(most recent call last\)")


def convert(src: Path, out: Path, jobs: int, timeout: float = 3600) -> tuple[int, str]:
    cmd = [sys.executable, "-m", "migrate", "convert", str(src), "-o", str(out), "--check", "cpu", "--jobs", str(jobs), "-q"]
    try:
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as exc:
        return -9, f"timeout after {timeout} s: {exc}"


def classify(kernels: list[Kernel], where: dict, out: Path, rc: int, log: str) -> list[dict]:
    """One row per generated kernel."""
    report, file_errors = {}, {}
    if (out / "report.json").is_file():
        data = json.loads((out / "report.json").read_text())
        report = {k["kernel"]: k for k in data["kernels"]}
        file_errors = {f["file"]: {d["code"] for d in f.get("diagnostics", [])
                                   if d.get("severity") == "error" or d["code"].startswith("M1")}
                       for f in data.get("files", [])}
    process_crash = rc not in (0, 1) or bool(TRACEBACK.search(log))
    rows = []
    for k in kernels:
        r = report.get(k.name)
        row = {"kernel": k.name, "family": k.family, "file": where[k.name]}
        if r is None:
            row.update(outcome="crash", detail=f"missing from report.json (convert exit {rc})")
        else:
            codes = sorted({d["code"] for d in r.get("diagnostics", [])})
            errors = sorted({d["code"] for d in r.get("diagnostics", []) if d.get("severity") == "error"}
                            | file_errors.get(r.get("file"), set()))  # a file-level error (syntax) too
            check = r.get("check") or {}
            row.update(form=r["form"], codes=codes, errors=errors, check=check.get("status"), message=(check.get("message") or "")[:300])
            if "M9001" in codes:
                row.update(outcome="crash", detail="M9001 internal error")
            elif r["form"] == "unsupported":
                row.update(outcome="refused", detail=",".join(errors) or "?")
            elif check.get("status") in ("pass", "fail", "error", "skipped"):
                row.update(outcome=check["status"], detail=row["message"][:160])
            else:
                row.update(outcome="crash", detail=f"no check result ({check.get('status')})")
        if process_crash and row["outcome"] != "crash":
            row["process"] = "traceback or abnormal exit in this batch"
        rows.append(row)
    return rows


def run_batch(kernels, work: Path, per_file: int, jobs: int) -> tuple[list[dict], int, str]:
    src, out = work / "src", work / "out"
    where = write_batch(kernels, src, per_file)
    rc, log = convert(src, out, jobs)
    return classify(kernels, where, out, rc, log), rc, log


# ---------------------------------------------------------------- minimising

def _shrinks(text: str):
    """Candidate simplifications of a kernel's source: one line deleted, or one binary expression
    inside ``(...)`` or ``[...]`` (or a two-argument call) replaced by one of its operands."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("    ") and line.strip() not in ("}", "{"):
            yield "\n".join(lines[:i] + lines[i + 1:])
    body_start = text.find("\n{\n")  # expressions of the kernel's body only (not declarations)
    for m in re.finditer(r"(?m)^(    .*?[^=!<>+\-*/%&|^]= )(.+);$", text):  # an assignment's right side
        if m.start() > body_start:
            for p in _split_top(m.group(2)):
                yield text[:m.start(2)] + p.strip() + text[m.end(2):]
    for m in re.finditer(r"[(\[]", text):
        if m.start() < body_start:
            continue
        start, depth = m.start(), 0
        for j in range(start, len(text)):
            depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(text[j], 0)
            if depth == 0:
                break
        inner = text[start + 1:j]
        parts = _split_top(inner)
        if len(parts) != 2:
            continue
        if text[start] == "[":
            for p in parts:
                yield text[:start + 1] + p.strip() + text[j:]
            continue
        call = re.search(r"(\w+)$", text[:start])
        keyword = call and call.group(1) in ("if", "for", "while", "return", "switch")
        lo = start - len(call.group(1)) if call and not keyword else start
        if keyword and "," not in inner:
            for p in parts:  # a condition: keep one side
                yield text[:start + 1] + p.strip() + text[j:]
            continue
        if "," in inner and not call:
            continue
        for p in parts:
            yield text[:lo] + "(" + p.strip() + ")" + text[j + 1:]


# binary operators from the loosest binding to the tightest; each group is left-associative
_LEVELS = ((",",), (" || ",), (" && ",), (" | ",), (" ^ ",), (" & ",), (" == ", " != "),
           (" < ", " <= ", " > ", " >= "), (" << ", " >> "), (" + ", " - "), (" * ", " / ", " % "))


def _split_top(inner: str) -> list[str]:
    """``inner`` split at its loosest top-level binary operator (the last one of that level), or
    [] when it has none or holds a ``?:`` at top level."""
    depth, top = 0, []
    for i, ch in enumerate(inner):
        depth += {"(": 1, ")": -1, "[": 1, "]": -1}.get(ch, 0)
        top.append(depth == 0)
    if any(top[i] and inner.startswith(" ? ", i) for i in range(len(inner))):
        return []
    for level in _LEVELS:
        cut = None
        for i in range(len(inner)):
            if top[i]:
                for op in level:
                    if inner.startswith(op, i) and (op != " & " or not inner.startswith(" && ", i - 1)):
                        cut = (i, i + len(op))
        if cut:
            return [inner[:cut[0]], inner[cut[1]:]]
    return []


def _first_run(k: Kernel, source: str, work: Path, jobs: int):
    d = work / "t0"
    (d / "src").mkdir(parents=True, exist_ok=True)
    (d / "src" / "m.cu").write_text(source)
    (d / "src" / "m.toml").write_text(k.spec())
    rc, log = convert(d / "src", d / "out", jobs, timeout=600)
    return d / "out", rc, log


def minimise(k: Kernel, outcome: str, work: Path, jobs: int, budget: int = 40) -> tuple[str, str, int]:
    """Shrink ``k``'s source while its outcome stays ``outcome``; returns (source, detail, tries)."""
    source, detail, tries = HEADER + k.source(), "", 0
    work.mkdir(parents=True, exist_ok=True)

    def same(text: str):
        nonlocal tries
        tries += 1
        d = work / f"t{tries}"
        (d / "src").mkdir(parents=True, exist_ok=True)
        (d / "src" / "m.cu").write_text(text)
        (d / "src" / "m.toml").write_text(k.spec())
        rc, log = convert(d / "src", d / "out", jobs, timeout=600)
        row = classify([k], {k.name: "m.cu"}, d / "out", rc, log)[0]
        # the same outcome (a refusal: the same codes), and no new error: a candidate that no
        # longer parses (M1xxx) or is refused for something else is not the same failure
        same_kind = row["outcome"] == outcome and (outcome != "refused" or row.get("detail") == want["detail"])
        if outcome == "fail":  # the same buffer differs, and not merely because a store was deleted
            msg = row.get("message", "")
            same_kind = same_kind and msg.split(":")[0] == want["buffer"] and (
                "never written" not in msg or "never written" in want["message"])
        new = {c for c in row.get("errors", []) + row.get("codes", []) if c.startswith("M1")} - want["errors"]
        return same_kind and not new and set(row.get("errors", [])) <= want["errors"], row.get("detail", "")

    want = {"detail": None, "errors": set(), "buffer": None, "message": ""}
    first = classify([k], {k.name: "m.cu"}, *_first_run(k, source, work, jobs))[0]
    want.update(detail=first.get("detail"), errors=set(first.get("errors", []) + first.get("codes", [])),
                buffer=first.get("message", "").split(":")[0], message=first.get("message", ""))
    ok, detail = first["outcome"] == outcome, first.get("detail", "")
    if not ok:
        return source, f"not reproduced alone ({first['outcome']}: {detail[:100]})", tries
    progress = True
    while progress and tries < budget:
        progress = False
        for cand in _shrinks(source):
            if tries >= budget:
                break
            ok, d = same(cand)
            if ok:
                source, detail, progress = cand, d, True
                break
    return source, detail, tries


# ---------------------------------------------------------------- main

def summary(rows: list[dict]) -> str:
    fams = sorted({r["family"] for r in rows})
    cols = ["pass", "fail", "error", "skipped", "refused", "crash"]
    lines = [f"{'family':12s} {'kernels':>7s} " + " ".join(f"{c:>7s}" for c in cols)]
    for f in fams + ["all"]:
        sel = [r for r in rows if f in ("all", r["family"])]
        c = Counter(r["outcome"] for r in sel)
        lines.append(f"{f:12s} {len(sel):7d} " + " ".join(f"{c[x]:7d}" for x in cols))
    forms = Counter(r.get("form", "-") for r in rows)
    lines.append("forms: " + ", ".join(f"{k} {v}" for k, v in sorted(forms.items())))
    refused = Counter(r["detail"] for r in rows if r["outcome"] == "refused")
    if refused:
        lines.append("refusals: " + ", ".join(f"{k} {v}" for k, v in refused.most_common()))
    return "\n".join(lines)


def merge(files: list[Path]) -> int:
    """The totals of several runs (``--json`` files, e.g. one per seed): kernels, outcomes, process
    crashes; every kernel that did not pass or refuse is listed. Exit 1 when any did."""
    rows, crashes, seeds = [], [], []
    for f in files:
        data = json.loads(f.read_text())
        seeds.append(data["seed"])
        rows += [dict(r, seed=data["seed"]) for r in data["rows"]]
        crashes += data.get("process_crashes", [])
    print(f"{len(files)} runs (seeds {', '.join(map(str, seeds))}), {len(rows)} kernels, {len(crashes)} process crashes")
    print(summary(rows))
    for r in rows:
        if r["outcome"] in ("fail", "error", "crash"):
            print(f"  {r['outcome']:6s} seed {r['seed']} {r['kernel']:24s} {r.get('form', '')}: {r.get('detail', '')[:200]}")
    return 1 if crashes or any(r["outcome"] in ("fail", "error", "crash") for r in rows) else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=50)
    ap.add_argument("--per-file", type=int, default=25, help="kernels per .cu (one compile amortised over them)")
    ap.add_argument("--out", type=Path, default=Path("fuzz-out"))
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated subset of " + ",".join(FAMILIES))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--batch", type=int, default=100, help="kernels per convert run (results are saved after each)")
    ap.add_argument("--minimise", action="store_true", help="shrink each kernel that did not pass or refuse")
    ap.add_argument("--budget", type=int, default=40, help="convert runs per minimised kernel")
    ap.add_argument("--merge", nargs="+", type=Path, metavar="JSON",
                    help="print the totals of earlier runs' --json files (shards of one run) and exit")
    args = ap.parse_args(argv)
    if args.merge:
        return merge(args.merge)
    fams = tuple(f for f in args.families.split(",") if f)
    unknown = [f for f in fams if f not in GENERATORS]
    if unknown:
        ap.error(f"unknown families: {unknown}")
    kernels = generate(args.seed, args.count, fams)
    rows, start, crashes = [], time.time(), []
    for b in range(0, len(kernels), args.batch):
        work = args.out / f"batch{b // args.batch:04d}"
        got, rc, log = run_batch(kernels[b:b + args.batch], work, args.per_file, args.jobs)
        rows += got
        if rc not in (0, 1) or TRACEBACK.search(log):
            crashes.append({"batch": str(work), "exit": rc, "log": log[-4000:]})
        done = Counter(r["outcome"] for r in rows)
        print(f"[{len(rows)}/{len(kernels)} in {time.time() - start:.0f} s] " + ", ".join(f"{k} {v}" for k, v in sorted(done.items())),
              flush=True)
        if args.json:
            args.json.write_text(json.dumps({"seed": args.seed, "count": args.count, "families": fams, "rows": rows,
                                             "process_crashes": crashes}, indent=1))
    minimised = []
    if args.minimise:
        by_name = {k.name: k for k in kernels}
        for r in rows:
            if r["outcome"] in ("fail", "error", "crash"):
                src, detail, tries = minimise(by_name[r["kernel"]], r["outcome"], args.out / "min" / r["kernel"], args.jobs,
                                              args.budget)
                minimised.append({"kernel": r["kernel"], "outcome": r["outcome"], "detail": detail, "tries": tries,
                                  "source": src, "spec": by_name[r["kernel"]].spec()})
                print(f"\n--- {r['kernel']} ({r['outcome']}: {detail[:200]}) minimised in {tries} runs:\n{src}")
    print()
    print(f"seed {args.seed}, {len(rows)} kernels, {time.time() - start:.0f} s")
    print(summary(rows))
    for r in rows:
        if r["outcome"] in ("fail", "error", "crash"):
            print(f"  {r['outcome']:6s} {r['kernel']:24s} {r['file']} {r.get('form', '')}: {r.get('detail', '')[:200]}")
    for c in crashes:
        print(f"  process crash in {c['batch']} (exit {c['exit']}):\n{c['log'][-1500:]}")
    if args.json:
        args.json.write_text(json.dumps({"seed": args.seed, "count": args.count, "families": fams, "rows": rows,
                                         "process_crashes": crashes, "minimised": minimised}, indent=1))
    bad = sum(r["outcome"] in ("fail", "error", "crash") for r in rows) + len(crashes)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
