"""Steps used as values (analysis.prepare.value_steps), the way real kernels append to a
per-thread list: ``pre[j++] = i;``, ``out[++last] = v;``; a local named twice in the statement
or stepped under a condition is left alone (and refused by the emitter)."""
from __future__ import annotations

import json

from migrate.analysis.prepare.value_steps import split_value_steps
from migrate.cli import main
from migrate.ir import model as m
from tests.analysis.support import nodes, spec_buffer, spec_kernel, spec_scalar, unit

KERNEL = """
#include <cuda_runtime.h>
// per row, the columns whose value passes a threshold, then the last one again from the end
__global__ void pick(const float* x, int* cols, int* counts, int n, float t)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    int j = 0, last = -1;
    for (int c = 0; c < 16; c++) {
        if (x[r * 16 + c] > t) cols[r * 16 + j++] = c;
    }
    for (int c = 0; c < 16; c++)
        if (x[r * 16 + c] < -t) cols[r * 16 + 15 - (++last)] = 100 + c;
    counts[r] = j * 100 + last;
}
"""

SPEC = """
[[kernel]]
name = "pick"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "x"
buffer = "float32"
elements = 1600
role = "in"
range = [-1.0, 1.0]
[[kernel.args]]
name = "cols"
buffer = "int32"
elements = 1600
role = "inout"
range = [200, 300]
[[kernel.args]]
name = "counts"
buffer = "int32"
elements = 100
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 100
[[kernel.args]]
name = "t"
scalar = "float32"
value = 0.4
"""


def test_a_step_in_an_index_becomes_a_statement_before_or_after(tmp_path):
    fn = split_value_steps(unit(tmp_path, KERNEL).kernel("pick"))
    assert not [u for u in nodes(fn, m.Unary) if u.op in ("++", "--") and isinstance(u.operand, m.Ref)
                and u.operand.name in ("j", "last")]
    steps = [a for a in nodes(fn, m.Assign) if isinstance(a.target, m.Ref) and a.target.name in ("j", "last")
             and a.op == "+="]
    assert [a.target.name for a in steps] == ["j", "last"]


def test_steps_in_indices_convert_and_check_equal(tmp_path):
    (tmp_path / "pick.cu").write_text(KERNEL)
    (tmp_path / "pick.toml").write_text(SPEC)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "pick.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]


def test_a_local_named_twice_or_stepped_under_a_condition_is_left(tmp_path):
    fn = split_value_steps(unit(tmp_path, """
        __global__ void k(int* y, int n) {
            int j = threadIdx.x, i = 0;
            y[j++] = j;
            y[i] = n > 0 ? i++ : 0;
        }""").kernel("k"))
    assert len([u for u in nodes(fn, m.Unary) if u.op == "++"]) == 2


#: Steps in a declaration's initialiser and in a return, on a local and on an element: a stack
#: popped by ``stack[--top]`` (string search, tree walks), reference counts given back with
#: ``return --refs[i]`` (logic-network rewriting), a counter read as it is bumped.
STACKS = """
#include <cuda_runtime.h>
__device__ int release(int* refs, int i) { return --refs[i]; }
__global__ void walk(const int* next, int* refs, int* out, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    int stack[8];
    int top = 0;
    for (int k = 0; k < 8; k++) stack[top++] = next[(r + k) % n];
    int first = stack[--top];
    int second = stack[--top] + 1;
    int seen = top++;
    out[r] = first * 1000 + second * 10 + seen + top + release(refs, r);
}
"""

STACKS_SPEC = """
[[kernel]]
name = "walk"
grid = [2, 1, 1]
block = [64, 1, 1]
tolerance = "exact"
[[kernel.args]]
name = "next"
buffer = "int32"
elements = 100
role = "in"
range = [0, 50]
[[kernel.args]]
name = "refs"
buffer = "int32"
elements = 100
role = "inout"
range = [1, 9]
[[kernel.args]]
name = "out"
buffer = "int32"
elements = 100
role = "out"
[[kernel.args]]
name = "n"
scalar = "int32"
value = 100
"""


def test_steps_in_declarations_and_returns_convert_and_check_equal(tmp_path):
    (tmp_path / "walk.cu").write_text(STACKS)
    (tmp_path / "walk.toml").write_text(STACKS_SPEC)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "walk.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]


def test_a_postfix_step_in_a_return_is_left_alone(tmp_path):
    src = STACKS.replace("return --refs[i];", "return refs[i]--;")
    fn = split_value_steps(unit(tmp_path, src).device_functions[0])
    assert [u.op for u in nodes(fn, m.Unary) if u.op in ("++", "--")] == ["--"]  # no statement after a return


#: A device function appending to its caller's list through a pointer to the caller's count
#: (logic-network rewriting's ``visited[(*pVisitedSize)++] = faninId;``), called in a loop
#: condition and in a statement.
APPEND = """
#include <cuda_runtime.h>
__device__ bool grow(const int* next, int* visited, int* size, int v, int limit)
{
    if (*size >= limit) return false;
    visited[(*size)++] = next[v];
    if (next[v] % 3 == 0) visited[(*size)++] = -next[v];
    return true;
}
__global__ void walk(const int* next, int* out, int n)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    int visited[12];
    int size = 0;
    int v = r;
    while (grow(next, visited, &size, v, 10)) v = next[v] % n;
    int sum = 0;
    for (int k = 0; k < size; k++) sum = sum * 7 + visited[k];
    out[r] = sum * 16 + size;
}
"""

APPEND_SPEC = spec_kernel("walk", (2, 1, 1), (64, 1, 1), "exact", spec_buffer("next", "int32", 100, "in", 0, 90),
                          spec_buffer("out", "int32", 100, "out"), spec_scalar("n", "int32", 100))


def test_a_step_through_a_pointer_to_the_callers_count(tmp_path):
    fn = split_value_steps(unit(tmp_path, APPEND).device_functions[0])
    assert not [u for u in nodes(fn, m.Unary) if u.op in ("++", "--")]
    steps = [a for a in nodes(fn, m.Assign) if a.op == "+=" and isinstance(a.target, m.Unary) and a.target.op == "*"]
    assert len(steps) == 2
    (tmp_path / "append.cu").write_text(APPEND)
    (tmp_path / "append.toml").write_text(APPEND_SPEC)
    out = tmp_path / "out"
    assert main(["convert", str(tmp_path / "append.cu"), "-o", str(out), "-q", "--check", "cpu"]) == 0
    (k,) = json.loads((out / "report.json").read_text())["kernels"]
    assert k["form"] not in ("hybrid", "unsupported"), k["reason"]
    assert k["check"]["status"] == "pass", k["check"]["message"]
