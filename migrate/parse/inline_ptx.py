"""Inline PTX whose meaning is an expression of its operands, read as that expression.

``asm("lop3.b32 %0, %1, %2, %3, 0x96;" : "=r"(d) : "r"(a), "r"(b), "r"(c));`` (SHA-256 and
bit-sliced codes write their three-input logic so) is ``d = a ^ b ^ c``: ``lop3``'s immediate is
the truth table of the function of three inputs, bit ``i`` the result where ``a`` is bit 2 of
``i``, ``b`` bit 1 and ``c`` bit 0 (PTX ISA, ``lop3``). A table gives the usual functions their
short forms (:data:`LOP3_FORMS`); any other table is the OR of its minterms. An ``asm`` of any
other instruction, several instructions, memory or ``volatile`` side effects (a clobber list) is
not read here and stays refused (M1201).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from ..ir import model as m
from ..ir.span import Span


@dataclass(frozen=True)
class AsmText:
    """An ``asm`` statement's parts, as its tokens spell them."""
    template: str  # the instruction text, string literals joined
    outputs: tuple[str, ...]  # the output operands' constraints ("=r")
    inputs: tuple[str, ...]  # the input operands' constraints ("r")
    clobbers: tuple[str, ...]
    volatile: bool


def asm_text(tokens: list[str]) -> AsmText | None:
    """The parts of an ``asm`` statement from its tokens, or None where they do not read as
    ``asm [volatile] ("..." : outputs : inputs [: clobbers])``."""
    if not tokens or tokens[0] not in ("asm", "__asm__", "__asm"):
        return None
    i, volatile = 1, False
    while i < len(tokens) and tokens[i] in ("volatile", "__volatile__"):
        volatile, i = True, i + 1
    if i >= len(tokens) or tokens[i] != "(" or tokens[-1] != ")":
        return None
    sections: list[list[str]] = [[]]
    depth = 0
    for t in tokens[i + 1:-1]:
        if t == "(":
            depth += 1
        elif t == ")":
            depth -= 1
        if t == ":" and depth == 0:
            sections.append([])
        else:
            sections[-1].append(t)
    if depth != 0 or not sections[0] or not all(_string(t) for t in sections[0]) or len(sections) > 4:
        return None
    template = "".join(_unquoted(t) for t in sections[0])

    def constraints(section: list[str]) -> tuple[str, ...]:
        return tuple(_unquoted(t) for k, t in enumerate(section) if _string(t)
                     and (k + 1 < len(section) and section[k + 1] == "("))

    outputs = constraints(sections[1]) if len(sections) > 1 else ()
    inputs = constraints(sections[2]) if len(sections) > 2 else ()
    clobbers = tuple(_unquoted(t) for t in sections[3] if _string(t)) if len(sections) > 3 else ()
    return AsmText(template, outputs, inputs, clobbers, volatile)


def _string(token: str) -> bool:
    return len(token) >= 2 and token[0] == '"' and token[-1] == '"'


def _unquoted(token: str) -> str:
    return token[1:-1].replace("\\n", "\n").replace("\\t", "\t")


#: ``lop3.b32 %0, %1, %2, %3, <table>;`` (a ``.b32`` result from three ``.b32`` inputs)
_LOP3 = re.compile(r"^\s*lop3\.b32\s+%0\s*,\s*%1\s*,\s*%2\s*,\s*%3\s*,\s*(0[xX][0-9a-fA-F]+|\d+)\s*;?\s*$")

#: truth table -> the function's short form over the inputs ``a``, ``b``, ``c`` (an expression of
#: &, |, ^ and ~), for the tables codes write most; tests.parse.test_inline_ptx checks each
#: against the table's minterms
LOP3_FORMS = {
    0x96: "a ^ b ^ c",
    0xE8: "(a & b) | (a & c) | (b & c)",  # majority
    0xCA: "(a & b) | (~a & c)",  # a selects b, else c
    0xB8: "(b & c) | (~b & a)",  # b selects c, else a
    0xD8: "(c & b) | (~c & a)",  # c selects b, else a
    0xE2: "(b & a) | (~b & c)",  # b selects a, else c
    0x80: "a & b & c",
    0xFE: "a | b | c",
    0x78: "a ^ (b & c)",
    0x1E: "a ^ (b | c)",
    0x6A: "c ^ (a & b)",
    0xF8: "a | (b & c)",
    0xEA: "(a & b) | c",
}

_UINT32 = m.Scalar("uint32")


def lop3_value(table: int, a: int, b: int, c: int, bits: int = 32) -> int:
    """What ``lop3`` computes for the truth table ``table`` on the words ``a``, ``b``, ``c``:
    the OR of the table's minterms (the reference the short forms are checked against)."""
    mask = (1 << bits) - 1
    out = 0
    for i in range(8):
        if table >> i & 1:
            out |= (a if i & 4 else ~a) & (b if i & 2 else ~b) & (c if i & 1 else ~c)
    return out & mask


def lowered(asm: AsmText, outputs: list[m.Expr], inputs: list[m.Expr], span: Span) -> m.Stmt | None:
    """The statement an ``asm`` of one instruction this module reads means (an assignment of
    its output), or None."""
    if asm.clobbers or len(outputs) != len(asm.outputs) or len(inputs) != len(asm.inputs):
        return None
    match = _LOP3.match(asm.template)
    if match is None or asm.outputs != ("=r",) or asm.inputs != ("r", "r", "r"):
        return None
    table = int(match.group(1), 0)
    if table > 0xFF:
        return None
    operands = {"a": _word(inputs[0], span), "b": _word(inputs[1], span), "c": _word(inputs[2], span)}
    value = _expression(LOP3_FORMS[table], operands, span) if table in LOP3_FORMS \
        else _minterms(table, operands, span)
    return m.ExprStmt(m.Assign("=", outputs[0], value, _UINT32, span), span)


def _word(e: m.Expr, span: Span) -> m.Expr:
    t = getattr(e, "type", None)
    return e if t == _UINT32 else m.Cast(_UINT32, e, "implicit", _UINT32, span)


def _expression(text: str, operands: dict[str, m.Expr], span: Span) -> m.Expr:
    """The model of a short form (names a, b, c; &, |, ^, ~ and parentheses) over ``operands``."""
    tokens = re.findall(r"[abc]|[&|^~()]", text)
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def primary() -> m.Expr:
        t = take()
        if t == "~":
            return m.Unary("~", primary(), False, _UINT32, span)
        if t == "(":
            e = binary(0)
            take()  # ")"
            return e  # the model's tree keeps the grouping
        return operands[t]

    levels = ("|", "^", "&")  # C's precedence, loosest first

    def binary(level: int) -> m.Expr:
        if level == len(levels):
            return primary()
        e = binary(level + 1)
        while peek() == levels[level]:
            take()
            e = m.Binary(levels[level], e, binary(level + 1), _UINT32, span)
        return e

    return binary(0)


def _minterms(table: int, operands: dict[str, m.Expr], span: Span) -> m.Expr:
    if table == 0:
        return m.IntLit(0, "0u", _UINT32, span)
    if table == 0xFF:
        return m.IntLit(0xFFFFFFFF, "0xffffffffu", _UINT32, span)
    terms = [" & ".join(v if i >> (2 - j) & 1 else f"~{v}" for j, v in enumerate("abc"))
             for i in range(8) if table >> i & 1]
    return _expression(" | ".join(f"({t})" for t in terms), operands, span)
