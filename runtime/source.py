"""Textual preparation of an original CUDA source for the host C++ compiler (CPU executor).

A host compiler cannot parse CUDA's launch syntax, and ``extern __shared__`` arrays need a
per-launch base address. :func:`rewrite_for_cpu` rewrites, outside comments and literals and
keeping every line where it was (so compiler messages point into the original file):

* ``k<T, 4><<<grid, block, shmem, stream>>>(a, b)`` becomes
  ``::c2t::launch_cfg(grid, block, shmem, stream).named("k<T, 4>").go([&](auto&... c2t_a_) { k<T, 4>(c2t_a_...); }, a, b)``
  (the name is what a recorded launch is filed under, :mod:`.traces`)
  (template arguments in the kernel name, nested parentheses and empty argument lists work, and
  a kernel template whose arguments are deduced from the launch's arguments is deduced the same way);
* ``extern __shared__ __align__(16) T name[];`` becomes
  ``T *&name = (T *&)c2t_dyn_smem;`` (valid at block and namespace scope; a C-style cast, since
  ``T`` may be volatile);
* ``static __shared__`` loses the ``static`` (``__shared__`` itself expands to a static).

``main`` is renamed by the compiler flag ``-Dmain=cuda2tile_host_main``; :func:`find_main`
reports whether the program has one and how many parameters it takes.

Nothing here imports libclang: the runtime must work where only it is installed.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

__all__ = ["mask_source", "match_forward", "rewrite_launches", "rewrite_extern_shared", "rewrite_for_cpu", "register_constants",
           "find_main", "find_kernels", "find_quoted_includes", "RewriteError", "Launch", "find_launches"]


class RewriteError(ValueError):
    """The source has a construct the rewriter cannot handle; ``line`` is 1-based."""

    def __init__(self, message: str, line: int | None = None):
        self.line = line
        super().__init__(f"line {line}: {message}" if line else message)


_IDENT = re.compile(r"[A-Za-z_]\w*")


@functools.lru_cache(maxsize=256)  # a conversion asks again for each unit that includes a file
@functools.lru_cache(maxsize=32)
def mask_source(text: str) -> str:
    """A copy of ``text`` with comments, string and character literals replaced by spaces.

    Newlines are kept, so offsets and line numbers are the same as in ``text``. The last few
    answers are kept: a file's main, includes and kernels are looked for in turn.
    """
    spans = []  # (start, end) of the text to blank, in order
    n = len(text)
    i = 0

    def blank(a: int, b: int) -> None:
        b = min(b, n)
        if a < b:
            spans.append((a, b))

    while i < n:
        c = text[i]
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = i + 2
            while j < n:
                if text[j] == "\n":
                    # a backslash-newline continues a // comment
                    k = j - 1
                    while k > i and text[k] == "\r":
                        k -= 1
                    if text[k] == "\\":
                        j += 1
                        continue
                    break
                j += 1
            blank(i, j)
            i = j
        elif c == "/" and i + 1 < n and text[i + 1] == "*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            blank(i, j)
            i = j
        elif c == '"':
            # raw string R"delim( ... )delim"
            if i > 0 and text[i - 1] == "R" and (i < 2 or not (text[i - 2].isalnum() or text[i - 2] == "_")
                                                 or text[i - 2] in "uUL8"):
                m = re.match(r'"([^()\\\s]{0,16})\(', text[i:])
                if m:
                    end = text.find(")" + m.group(1) + '"', i + m.end())
                    end = n if end < 0 else end + len(m.group(1)) + 2
                    blank(i + 1, end - 1)
                    i = end
                    continue
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        elif c == "'":
            # digit separator (1'000'000) or a character literal?
            k = i - 1
            while k >= 0 and (text[k].isalnum() or text[k] in "_.'"):
                k -= 1
            token = text[k + 1:i]
            if token and token[0].isdigit():
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != "'" and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i + 1, j)
            i = j + 1
        else:  # on to the next character that may open a comment or a literal
            found = _OPENERS.search(text, i + 1)
            i = found.start() if found else n
    out, last = [], 0
    for a, b in spans:
        piece = text[a:b]
        out += (text[last:a], " " * (b - a) if "\n" not in piece else _NOT_NEWLINE.sub(" ", piece))
        last = b
    out.append(text[last:])
    return "".join(out)


_NOT_NEWLINE = re.compile(r"[^\n]")
_OPENERS = re.compile(r"/[/*]|[\"']")


def _line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {")": "(", "]": "[", "}": "{"}


def match_forward(masked: str, start: int) -> int:
    """Index just past the bracket matching the one at ``start``."""
    stack = []
    i = start
    n = len(masked)
    while i < n:
        c = masked[i]
        if c in _OPEN:
            stack.append(_OPEN[c])
        elif c in _CLOSE:
            if not stack or stack[-1] != c:
                raise RewriteError(f"unbalanced '{c}'", _line_of(masked, i))
            stack.pop()
            if not stack:
                return i + 1
        i += 1
    raise RewriteError("unterminated bracket", _line_of(masked, start))


#: the closer of each bracket :func:`split_top_level` may count
_PAIRS = {"<": ">", "(": ")", "[": "]", "{": "}"}


def split_top_level(text: str, brackets: str = "<([{") -> list[str]:
    """``text`` (a template's parameters or arguments) split at the commas outside the
    ``brackets`` (openers; each counted with its closer), each part stripped; a blank last part
    is left out."""
    opens, closes = set(brackets), {_PAIRS[b] for b in brackets}
    out, depth, current = [], 0, []
    for ch in text:
        if ch == "," and depth == 0:
            out.append("".join(current).strip())
            current = []
            continue
        if ch in opens:
            depth += 1
        elif ch in closes:
            depth -= 1
        current.append(ch)
    last = "".join(current).strip()
    if last:
        out.append(last)
    return out


def _match_angle_back(masked: str, close: int) -> int:
    """Index of the '<' matching the '>' at ``close`` (template arguments), or -1."""
    depth, paren = 0, 0
    k = close
    while k >= 0:
        c = masked[k]
        if c in ")]}":
            paren += 1
        elif c in "([{":
            paren -= 1
            if paren < 0:
                return -1
        elif paren == 0:
            if c == ">":
                depth += 1
            elif c == "<":
                depth -= 1
                if depth == 0:
                    return k
            elif c in ";{}":
                return -1
        k -= 1
    return -1


def _skip_ws_back(masked: str, i: int) -> int:
    while i > 0 and masked[i - 1].isspace():
        i -= 1
    return i


def _kernel_expr_start(masked: str, end: int) -> int | None:
    """Start of the kernel expression (``ns::k<T, 4>``) that ends just before ``end``."""
    i = _skip_ws_back(masked, end)
    start = None
    while True:
        j = i
        if j > 0 and masked[j - 1] == ">":
            k = _match_angle_back(masked, j - 1)
            if k < 0:
                break
            j = _skip_ws_back(masked, k)
        k = j
        while k > 0 and (masked[k - 1].isalnum() or masked[k - 1] == "_"):
            k -= 1
        if k == j or masked[k].isdigit():
            break
        start = k
        t = _skip_ws_back(masked, k)
        if t >= 2 and masked[t - 2:t] == "::":
            start = t - 2
            i = _skip_ws_back(masked, t - 2)
            continue
        break
    return start


@dataclass(frozen=True)
class Launch:
    """One ``<<<>>>`` launch: offsets into the text, and its pieces as written."""

    start: int            # start of the kernel expression
    end: int              # just past the closing parenthesis of the arguments
    kernel: str
    config: str
    args: str
    line: int


def find_launches(text: str, masked: str | None = None) -> list[Launch]:
    masked = mask_source(text) if masked is None else masked
    launches = []
    pos = 0
    while True:
        i = masked.find("<<<", pos)
        if i < 0:
            break
        # the configuration runs to the first >>> outside brackets
        j = i + 3
        depth = 0
        n = len(masked)
        cfg_end = -1
        while j < n:
            c = masked[j]
            if c in "([{":
                depth += 1
            elif c in ")]}":
                depth -= 1
            elif depth == 0 and masked.startswith(">>>", j):
                cfg_end = j
                break
            elif c == ";" and depth == 0:
                break
            j += 1
        if cfg_end < 0:
            raise RewriteError("'<<<' without a matching '>>>'", _line_of(text, i))
        k = cfg_end + 3
        while k < n and masked[k].isspace():
            k += 1
        if k >= n or masked[k] != "(":
            raise RewriteError("a kernel launch needs an argument list after '>>>'", _line_of(text, i))
        close = match_forward(masked, k)
        start = _kernel_expr_start(masked, i)
        if start is None or not masked[start:i].strip():
            raise RewriteError("cannot find the kernel name before '<<<'", _line_of(text, i))
        launches.append(Launch(start=start, end=close, kernel=text[start:i].strip(),
                               config=text[i + 3:cfg_end], args=text[k + 1:close - 1],
                               line=_line_of(text, i)))
        pos = close
    return launches


def _keep_newlines(original: str, replacement: str) -> str:
    """``replacement`` followed by as many newlines as ``original`` had, so lines stay put."""
    extra = original.count("\n") - replacement.count("\n")
    return replacement + "\n" * max(extra, 0)


def _c_string(kernel: str) -> str:
    """The kernel as written at a launch, as a C string literal (for the launch's record)."""
    text = " ".join(kernel.split()).removeprefix("::")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: a kernel named with its template arguments at the launch (``k<T, 4>``, ``ns::k<float>``):
#: its instance is recorded as the compiler spells it
_TEMPLATE_ID_RE = re.compile(r"(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*\s*<[^;{}()]*>", re.S)


_DEFINE_RE = re.compile(r"#\s*define\s+\w+\(([^)]*)\)")


def _macro_params_at(masked: str, pos: int) -> set[str]:
    """The parameters of the function-like macro whose definition ``pos`` lies in (its lines
    joined by backslashes); empty outside one."""
    start = masked.rfind("\n", 0, pos) + 1
    while start > 1 and masked[start - 2] == "\\":  # the line before ends in a backslash
        start = masked.rfind("\n", 0, start - 1) + 1
    m = _DEFINE_RE.match(masked, start + len(masked[start:]) - len(masked[start:].lstrip()))
    return {p.strip() for p in m.group(1).split(",")} if m else set()


def _names_instance(kernel: str, arity: dict[str, tuple[int, bool]]) -> bool:
    """Whether the launch's kernel ``k<A, B>`` names a whole template instance, whose address
    ``&k<A, B>`` the launcher can take: a template-id, and where this file declares the kernel
    template, as many arguments as it has parameters without a default (``k<256>`` of
    ``template <int N, typename P>`` leaves P to be deduced from the call's arguments)."""
    if not _TEMPLATE_ID_RE.fullmatch(kernel):
        return False
    name = kernel.split("<", 1)[0].strip().rsplit("::", 1)[-1]
    if name not in arity:
        return True
    required, variadic = arity[name]
    given = kernel[kernel.index("<") + 1:kernel.rindex(">")]
    count = len(_top_level_split(given)) if given.strip() else 0
    return not variadic and count >= required


def _top_level_split(text: str) -> list[str]:
    """``text`` split at the commas outside brackets (``<>`` included)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<([{" and 1 or 0
        depth -= ch in ">)]}" and 1 or 0
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


_TEMPLATE_HEAD_RE = re.compile(r"\btemplate\s*<")


def template_arity(masked: str) -> dict[str, tuple[int, bool]]:
    """Kernel templates declared in ``masked`` (comments and literals blanked): name -> (the
    number of template parameters without a default, whether one is a pack)."""
    out = {}
    for m in _TEMPLATE_HEAD_RE.finditer(masked):
        depth, j = 1, m.end()
        while j < len(masked) and depth:
            depth += {"<": 1, ">": -1}.get(masked[j], 0)
            j += 1
        if depth:
            continue
        params = masked[m.end():j - 1]
        rest = masked[j:j + 400]
        g = _GLOBAL_RE.search(rest)
        if g is None or ";" in rest[:g.start()] or "{" in rest[:g.start()]:
            continue
        names = find_kernels(rest)
        if not names:
            continue
        parts = [x for x in _top_level_split(params) if x.strip()]
        out[names[0]] = (sum("=" not in x for x in parts), any("..." in x for x in parts))
    return out


#: ``auto k = kernel<int, 4>;`` (``&kernel``, ``auto* k``): a local holding the kernel it launches
_HELD_KERNEL_RE = r"\bauto\s*[*&]?\s*{name}\s*=\s*&?\s*((?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*(?:\s*<[^;{{}}()]*>)?)\s*;"


def _held_kernel(text: str, masked: str, name: str, pos: int) -> str | None:
    """The kernel that local ``name``, launched at ``pos`` (``name<<<...>>>``), holds: the
    initialiser of its last ``auto name = kernel<...>;`` before the launch, in a scope that is
    still open there and with no assignment to ``name`` between; None otherwise (a kernel that
    is launched by its own name)."""
    found = None
    for m in re.finditer(_HELD_KERNEL_RE.format(name=re.escape(name)), masked[:pos]):
        found = m
    if found is None:
        return None
    between, depth = masked[found.end():pos], 0
    for ch in between:
        depth += ch == "{"
        depth -= ch == "}"
        if depth < 0:  # the declaration's block closed before the launch
            return None
    if re.search(r"\b" + re.escape(name) + r"\s*=(?!=)", between):
        return None
    return text[found.start(1):found.end(1)]


def rewrite_launches(text: str, device: str = "cpu") -> str:
    """Replace every ``<<<>>>`` launch by a call of the CPU header's launcher (``device="gpu"``:
    of the recording launcher of ``cpu/c2t_gpu_trace.h``, which still launches with ``<<<>>>``)."""
    masked = mask_source(text)
    launches = find_launches(text, masked)
    if not launches:
        return text
    arity = template_arity(masked)
    out = []
    pos = 0
    for L in launches:
        out.append(text[pos:L.start])
        kernel = L.kernel
        # a local that holds the kernel (``auto k = kern<int>; k<<<...>>>``): filed under the kernel
        named = (_held_kernel(text, masked, kernel.strip(), L.start) if _IDENT.fullmatch(kernel.strip()) else None) \
            or kernel.strip()
        instance = f", ::c2t::instance_name<&{named}>()" if _names_instance(named, arity) else ""
        name = _c_string(named)
        if kernel.strip() in _macro_params_at(masked, L.start):
            # k<<<...>>>() in ``#define call_kernel(k, ...)``: the kernel the macro is given,
            # named when it expands (``&init``), not the parameter's name
            name = f"::c2t::instance_name<&{kernel.strip()}>()"
            instance = f", {name}"
        cfg = f"::c2t::launch_cfg({L.config}).named({name}{instance})"
        if device == "gpu":
            chevrons = "<<<c2t_c_.grid, c2t_c_.block, c2t_c_.shmem, c2t_c_.stream>>>"
            if L.args.strip():
                rep = (f"{cfg}.go([&](const ::c2t::LaunchCfg& c2t_c_, auto&... c2t_a_) {{ {kernel}{chevrons}"
                       f"(c2t_a_...); }}, {L.args})")
            else:
                rep = f"{cfg}.go([&](const ::c2t::LaunchCfg& c2t_c_) {{ {kernel}{chevrons}(); }})"
        elif L.args.strip():
            rep = f"{cfg}.go([&](auto&... c2t_a_) {{ {kernel}(c2t_a_...); }}, {L.args})"
        else:
            rep = f"{cfg}.go([&]() {{ {kernel}(); }})"
        # the config and args keep their own newlines; the kernel name rarely has any
        rep = rep.replace("\n", " ") if "\n" in kernel else rep
        out.append(_keep_newlines(text[L.start:L.end], rep) if "\n" in kernel else rep)
        pos = L.end
    out.append(text[pos:])
    return "".join(out)


_ALIGN_RE = re.compile(r"\b(?:__align__|alignas)\s*\(")
_ATTR_RE = re.compile(r"\b__attribute__\s*\(\(")
_SHARED_RE = re.compile(r"\b__shared__\b")


def _strip_parenthesised(decl: str, pattern: re.Pattern, masked: str) -> tuple[str, str]:
    """Remove every ``pattern(...)`` group from decl (using masked for bracket matching)."""
    while True:
        m = pattern.search(masked)
        if not m:
            return decl, masked
        open_at = m.end() - 1
        while masked[open_at] != "(":
            open_at -= 1
        close = match_forward(masked, open_at)
        decl = decl[:m.start()] + " " * (close - m.start()) + decl[close:]
        masked = masked[:m.start()] + " " * (close - m.start()) + masked[close:]


def _decl_bounds(masked: str, at: int) -> tuple[int, int]:
    """The declaration around offset ``at``: from after the previous ; { } or directive to its ;."""
    s = at
    while s > 0 and masked[s - 1] not in ";{}":
        if masked[s - 1] == "\n":
            # a preprocessor line ends a declaration too
            line_start = masked.rfind("\n", 0, s - 1) + 1
            if masked[line_start:s - 1].lstrip().startswith("#"):
                break
        s -= 1
    while s < at and masked[s].isspace():
        s += 1
    e = masked.find(";", at)
    if e < 0:
        raise RewriteError("__shared__ declaration without ';'", _line_of(masked, at))
    return s, e + 1


def rewrite_extern_shared(text: str) -> str:
    """Rewrite ``extern __shared__`` arrays to references to the dynamic shared memory base and
    drop ``static`` before ``__shared__``."""
    masked = mask_source(text)
    edits: list[tuple[int, int, str]] = []
    seen: set[int] = set()
    for m in _SHARED_RE.finditer(masked):
        s, e = _decl_bounds(masked, m.start())
        if s in seen:
            continue
        seen.add(s)
        decl_m = masked[s:e]
        decl_t = text[s:e]
        if not re.search(r"\bextern\b", decl_m):
            sm = re.search(r"\bstatic\b", decl_m)
            if sm:
                edits.append((s + sm.start(), s + sm.end(), " " * (sm.end() - sm.start())))
            continue
        body = decl_m[:-1]
        body, _ = _strip_parenthesised(body, _ALIGN_RE, body)
        body, _ = _strip_parenthesised(body, _ATTR_RE, body)
        body = re.sub(r"\b(extern|__shared__|static)\b", " ", body)
        mm = re.match(r"^(?P<type>.*?)\b(?P<name>[A-Za-z_]\w*)\s*\[\s*\](?P<dims>(?:\s*\[[^\]]*\])*)\s*$",
                      body, re.S)
        if not mm:
            raise RewriteError("cannot understand this extern __shared__ declaration "
                               f"{' '.join(decl_t.split())!r}; expected `extern __shared__ T name[];`",
                               _line_of(text, s))
        typ = " ".join(mm.group("type").split())
        name = mm.group("name")
        dims = " ".join(mm.group("dims").split())
        if not typ:
            raise RewriteError("extern __shared__ declaration without a type", _line_of(text, s))
        if dims:
            rep = f"{typ} (*&{name}){dims} = ({typ} (*&){dims})c2t_dyn_smem;"
        else:
            rep = f"{typ} *&{name} = ({typ} *&)c2t_dyn_smem;"
        edits.append((s, e, _keep_newlines(decl_t, rep)))
    if not edits:
        return text
    edits.sort()
    out, pos = [], 0
    for a, b, rep in edits:
        out.append(text[pos:a])
        out.append(rep)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def rewrite_for_cpu(text: str) -> str:
    """The three rewrites; the result compiles with ``-include cuda_cpu.h``."""
    return register_constants(rewrite_launches(rewrite_extern_shared(text)))


#: a __constant__ definition, or a __device__ const one (a table: the migrated kernels take it as a
#: __constant__ symbol, migrate.parse.build.is_constant)
_CONSTANT_RE = re.compile(r"\b__constant__\b|\b__device__\b|\b__managed__\b")
_OPERATOR_RE = re.compile(r"\boperator\b")
_GROUP_RE = re.compile(r"\{[^{}]*\}|\([^()]*\)")
_READ_ONLY_RE = re.compile(r"\b__constant__\b|\bconst\b|\bconstexpr\b")
_TEMPLATE_RE = re.compile(r"\btemplate\b")
_NAMESPACE_OPEN_RE = re.compile(r"(?:\bnamespace(?:\s+[A-Za-z_][\w:]*)?|\bextern\s+\"\s*\")\s*$")


def _namespace_scope(masked: str) -> list[bool]:
    """For each offset of ``masked``, whether it lies at namespace scope (outside every function,
    class and initializer braces; namespace and ``extern "C"`` blocks count as namespace scope)."""
    out, stack = [], []
    for i, ch in enumerate(masked):
        if ch == "{":
            stack.append(bool(_NAMESPACE_OPEN_RE.search(masked[max(0, i - 200):i])))
        elif ch == "}" and stack:
            stack.pop()
        out.append(all(stack))
    return out


def register_constants(text: str) -> str:
    """After each namespace-scope ``__constant__`` definition of one variable (``__constant__
    float taps[9];``, ``static __constant__ int lut[256] = {...};``, and the ``__device__ const``
    tables the migrated kernels take as ``__constant__`` ones), a registration with the
    launch recorder (``c2t_trace.h``): a recorded launch holds the bytes of every registered
    symbol, read on the GPU with cudaMemcpyFromSymbol. The ``__device__`` and ``__managed__``
    globals the kernels may write (``__device__ int slack[N];``, ``static __device__ int top,
    pos;``) are registered as writable: their bytes before and after each recorded launch.
    ``extern`` declarations, variable templates and several initialised declarators in one
    statement are left alone. Lines are kept."""
    masked = mask_source(text)
    scope = None
    inserts = []
    done = set()  # statements registered (``__managed__ __device__ int n;`` matches twice)
    for m in _CONSTANT_RE.finditer(masked):
        line_start = masked.rfind("\n", 0, m.start()) + 1
        end = masked.find(";", m.end())
        if end < 0 or end in done:
            continue
        if scope is None:
            scope = _namespace_scope(masked)
        head = masked[line_start:m.start()]
        # the statement's text before the attribute: a variable template's ``template <...>`` may
        # stand on the line above (``template <typename T>\n__constant__ T mask[10];``)
        start = max(masked.rfind(";", 0, m.start()), masked.rfind("}", 0, m.start()),
                    masked.rfind("{", 0, m.start())) + 1
        if _TEMPLATE_RE.search(masked[start:m.start()]):
            continue
        decl = masked[m.end():end]
        before_value = decl.split("=", 1)[0]
        if not scope[m.start()] or "extern" in head or "template" in head or "(" in before_value \
                or "{" in before_value or _OPERATOR_RE.search(decl) or "__global__" in head \
                or "#" in masked[line_start:end]:
            continue  # a function (operator^= has its '=' before its parameters), not a variable
        writable = not _READ_ONLY_RE.search(masked[line_start:end].split("=", 1)[0])
        flat, removed = decl, 1
        while removed:  # what lies in braces and parentheses, innermost first
            flat, removed = _GROUP_RE.subn(" ", flat)
        targets = [before_value]
        if "," in flat or "{" in targets[0]:
            if not writable or "=" in decl or "{" in decl:
                continue  # several initialised declarators: left alone
            targets = decl.split(",")  # static __device__ int top, pos;
        names = [found[-1] for found in (_IDENT.findall(re.sub(r"\[[^\]]*\]", " ", t)) for t in targets) if found]
        if len(names) != len(targets):
            continue
        done.add(end)
        flag = ", true" if writable else ""
        inserts += [(end + 1, f" static const int c2t_symbol_{name} = ::c2t::trace::add_symbol(\"{name}\", "
                              f"sizeof({name}), [](void* c2t_d_) {{ ::c2t::trace::read_symbol(c2t_d_, {name}); }}{flag});")
                    for name in names]
    for at, add in reversed(inserts):
        text = text[:at] + add + text[at:]
    return text


_MAIN_RE = re.compile(r"\bint\s+main\s*\(([^)]*)\)\s*\{")


def find_main(text: str) -> int | None:
    """Number of parameters of ``int main(...)`` (0 or 2), or None when there is no main."""
    if "main" not in text:  # (masking only blanks characters: no main in the text, none in its mask)
        return None
    m = _MAIN_RE.search(mask_source(text))
    if not m:
        return None
    params = m.group(1).strip()
    if not params or params == "void":
        return 0
    return len([p for p in params.split(",") if p.strip()])


_GLOBAL_RE = re.compile(r"\b__global__\b")


_ATTR_MACRO_RE = re.compile(r"\b(__launch_bounds__|__cluster_dims__|__maxnreg__|__align__|alignas|__attribute__)\s*\(")


def find_kernels(text: str) -> list[str]:
    """Names of the ``__global__`` functions defined or declared in ``text`` (best effort)."""
    masked = mask_source(text)
    # blank attribute macros and their arguments: they are not part of the name
    while True:
        m = _ATTR_MACRO_RE.search(masked)
        if not m:
            break
        try:
            end = match_forward(masked, m.end() - 1)
        except RewriteError:
            break
        masked = masked[:m.start()] + " " * (end - m.start()) + masked[end:]
    names = []
    for m in _GLOBAL_RE.finditer(masked):
        p = masked.find("(", m.end())
        if p < 0:
            continue
        head = masked[m.end():p]
        if ";" in head or "{" in head:
            continue
        ids = _IDENT.findall(head)
        if ids:
            names.append(ids[-1])
    return names


_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)


def find_quoted_includes(text: str) -> list[str]:
    """The ``#include "..."`` paths of ``text``, outside comments."""
    masked_lines = None  # masked at the first directive found (most host sources have none)
    out = []
    for m in _INCLUDE_RE.finditer(text):
        if masked_lines is None:
            masked_lines = mask_source(text)
        # keep it only if the directive is not inside a comment
        if masked_lines[m.start():m.start() + 1].strip() or masked_lines[m.start():m.end()].lstrip().startswith("#"):
            out.append(m.group(1))
    return out
