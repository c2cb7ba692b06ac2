"""A SASS listing as data: one `Instr` per instruction of a `cuobjdump -sass` function.

Each sm_90 instruction is 128 bits; cuobjdump prints the text and both 64-bit words. The text
gives the opcode with its modifiers, the guard predicate and the operands; the second word holds
ptxas's control code (bits 41-44 stall count, 45 yield, 46-48 the dependency barrier the result
sets, 49-51 the one the source-register read sets, 52-57 the barriers waited on, 58-61 the
operand-reuse flags). Everything the trace needs about an instruction is read here, once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpusim.errors import RecordError

_LINE = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
_HI = re.compile(r"^\s*/\*\s*(0x[0-9a-f]+)\s*\*/\s*$")
_GUARD = re.compile(r"^@(!?)(U?P[T0-9])\s+")
_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)\s*$")

NO_BARRIER = 7


@dataclass(frozen=True)
class Operand:
    """One operand as written: kind is one of
    R / UR (register: n, 255 or 63 for RZ / URZ), P / UP (predicate: n, 7 = PT), imm (int value),
    fimm (float value), c (constant bank: bank, offset), mem (address: base register, 64-bit?,
    uniform register, offset), sr (special register name), desc (memory descriptor, ignored)."""
    kind: str
    n: int = 0
    neg: bool = False          # -x
    inv: bool = False          # ~x or !P
    abs: bool = False          # |x|
    wide: bool = False         # R2.64
    ureg: int = -1             # mem: + URn, -1 none
    offset: int = 0            # mem / c: byte offset
    value: float = 0.0         # fimm
    name: str = ""             # sr


@dataclass
class Instr:
    pc: int
    text: str
    opcode: str                   # with modifiers, as ncu's per-opcode table names it: "LDS.128"
    operands: list = field(default_factory=list)
    guard: Operand | None = None  # predicate guard (@P0 / @!P0), None: always
    stall: int = 0
    yield_flag: bool = False
    wbar: int = NO_BARRIER
    rbar: int = NO_BARRIER
    wait: int = 0
    reuse: int = 0

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]

    @property
    def mods(self) -> list[str]:
        return self.opcode.split(".")[1:]

    def __repr__(self):
        return f"/*{self.pc:04x}*/ {self.text}"


def _int(s: str) -> int:
    return int(s, 16) if s.lower().startswith(("0x", "-0x")) else int(s)


_REG = re.compile(r"^(U?R)(\d+|Z)(\.64)?(?:\.reuse)?$")
_PRED = re.compile(r"^(U?P)(\d|T)$")
_CONST = re.compile(r"^c\[(0x[0-9a-f]+)\]\[(0x[0-9a-f]+|RZ)\]$")      # c[0x0][RZ]: offset 0
_MEMTERM = re.compile(r"^(U?R)(\d+|Z)(\.64)?$")


def parse_operand(s: str) -> Operand:
    s = s.strip()
    neg = inv = ab = False
    if s.startswith("-") and not re.match(r"^-(0x[0-9a-f]+|\d)", s):
        neg, s = True, s[1:]
    if s.startswith("~"):
        inv, s = True, s[1:]
    if s.startswith("!"):
        inv, s = True, s[1:]
    if s.endswith(".reuse"):              # |R3|.reuse: the operand-reuse flag follows the bars
        s = s[:-len(".reuse")]
    if s.startswith("|") and s.endswith("|"):
        ab, s = True, s[1:-1]
    m = _REG.match(s)
    if m:
        kind, n = m.group(1), m.group(2)
        zero = 255 if kind == "R" else 63
        return Operand(kind, zero if n == "Z" else int(n), neg, inv, ab, bool(m.group(3)))
    if s == "SRZ":
        return Operand("R", 255)
    m = _PRED.match(s)
    if m:
        return Operand(m.group(1), 7 if m.group(2) == "T" else int(m.group(2)), neg, inv)
    m = _CONST.match(s)
    if m:
        off = 0 if m.group(2) == "RZ" else int(m.group(2), 16)
        return Operand("c", int(m.group(1), 16), neg, inv, ab, offset=off)
    if s.startswith("desc["):
        body = s[s.index("]") + 1:]
        return parse_operand(body) if body else Operand("desc")
    if s.startswith("[") and s.endswith("]"):
        return _mem(s[1:-1])
    if re.match(r"^B\d+$", s):
        return Operand("B", int(s[1:]))
    if s.startswith("SR_"):
        return Operand("sr", name=s)
    if re.match(r"^-?0x[0-9a-f]+$", s) or re.match(r"^-?\d+$", s):
        return Operand("imm", _int(s) & 0xFFFFFFFF if not neg else (-_int(s)) & 0xFFFFFFFF)
    try:
        v = float(s.replace("+INF", "inf").replace("-INF", "-inf").replace("QNAN", "nan"))
        return Operand("fimm", neg=neg, value=-v if neg else v)
    except ValueError:
        raise RecordError(f"SASS operand {s!r} not understood") from None


def _mem(body: str) -> Operand:
    """[R2.64+UR4+0x10] -> base register, 64-bit flag, uniform register, offset."""
    reg, wide, ureg, off = 255, False, -1, 0
    for term in re.split(r"\+(?=[^+])", body.replace("+-", "+-")):
        term = term.strip()
        m = _MEMTERM.match(term)
        if m:
            n = 255 if m.group(2) == "Z" else int(m.group(2))
            if m.group(1) == "UR":
                ureg = 63 if m.group(2) == "Z" else n
            else:
                reg, wide = n, bool(m.group(3))
        elif term:
            off += _int(term)
    return Operand("mem", reg, wide=wide, ureg=ureg, offset=off)


def split_operands(s: str) -> list[str]:
    """Split on the commas that are not inside brackets."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "[":
            depth += 1
        elif ch in "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    # "RET.REL.NODEC R10 0x0": two operands that cuobjdump separates by a space only
    return [t for o in out for t in (o.split() if "[" not in o else [o.strip()])]


def parse_instruction(pc: int, text: str, hi_word: int) -> Instr:
    t = text
    guard = None
    m = _GUARD.match(t)
    if m:
        p = _PRED.match(m.group(2))
        guard = Operand("UP" if m.group(2).startswith("U") else "P",
                        7 if p.group(2) == "T" else int(p.group(2)), inv=m.group(1) == "!")
        t = t[m.end():]
    parts = t.split(None, 1)
    opcode = parts[0]
    ops = [parse_operand(o) for o in split_operands(parts[1])] if len(parts) > 1 else []
    return Instr(pc, text, opcode, ops, guard,
                 stall=(hi_word >> 41) & 0xF, yield_flag=bool((hi_word >> 45) & 1),
                 wbar=(hi_word >> 46) & 7, rbar=(hi_word >> 49) & 7, wait=(hi_word >> 52) & 0x3F,
                 reuse=(hi_word >> 58) & 0xF)


def functions(text: str) -> list[str]:
    """Names of the functions a cuobjdump -sass listing holds."""
    return [m.group(1) for m in map(_FUNC.match, text.splitlines()) if m]


def parse_listing(text: str, function: str | None = None) -> list[Instr]:
    """The instructions of one function of a cuobjdump -sass listing (the only one if None).

    Raises RecordError for a listing that holds no such function, or one whose instructions do
    not run from offset 0 in steps of 16 bytes (a truncated or edited file)."""
    lines = text.splitlines()
    names = functions(text)
    if function is None:
        if len(names) > 1:
            raise RecordError(f"SASS listing holds {len(names)} functions ({', '.join(names)}): name one")
        function = names[0] if names else None
    start = 0
    if function is not None:
        for i, ln in enumerate(lines):
            m = _FUNC.match(ln)
            if m and m.group(1) == function:
                start = i + 1
                break
        else:
            raise RecordError(f"function {function!r} not in the SASS listing (it holds: "
                              f"{', '.join(names) or 'none'})")
    out = []
    for i in range(start, len(lines)):
        if _FUNC.match(lines[i]):
            break
        m = _LINE.match(lines[i])
        if not m:
            continue
        hi = _HI.match(lines[i + 1]) if i + 1 < len(lines) else None
        if hi is None:
            raise RecordError(f"SASS listing: instruction at /*{m.group(1)}*/ has no control word "
                              "(truncated listing?)")
        out.append(parse_instruction(int(m.group(1), 16), m.group(2), int(hi.group(1), 16)))
    if not out:
        raise RecordError(f"SASS listing of {function!r} holds no instructions")
    for n, ins in enumerate(out):
        if ins.pc != 16 * n:
            raise RecordError(f"SASS listing of {function!r}: instruction {n} is at 0x{ins.pc:x}, "
                              f"expected 0x{16 * n:x} (a truncated or edited listing)")
    if not any(i.base == "EXIT" for i in out):
        raise RecordError(f"SASS listing of {function!r} has no EXIT (truncated listing?)")
    return out


def branch_target(ins: Instr) -> int | None:
    """The byte offset a BRA jumps to."""
    if ins.base == "BRA" and ins.operands and ins.operands[-1].kind == "imm":
        return ins.operands[-1].n
    return None


def back_edges(instrs: list[Instr]) -> dict[int, int]:
    """{pc of a backward BRA: pc of the loop header it jumps to}."""
    out = {}
    for ins in instrs:
        t = branch_target(ins)
        if t is not None:
            if t <= ins.pc:
                out[ins.pc] = t
    return out


def basic_blocks(instrs: list[Instr]) -> list[tuple[int, int]]:
    """[(first pc, last pc)] of the code's basic blocks: a block starts at the entry, at a branch
    target and after a branch or EXIT; the padding after the last EXIT (NOPs, `BRA .`) is left out."""
    last = max(n for n, i in enumerate(instrs) if i.base == "EXIT")
    leaders = {0}
    for n, ins in enumerate(instrs[:last + 1]):
        t = branch_target(ins)
        if t is not None:
            leaders.add(t // 16)
            leaders.add(n + 1)
        if ins.base == "EXIT":
            leaders.add(n + 1)
    starts = sorted(x for x in leaders if x <= last)
    return [(16 * s, 16 * ((starts[k + 1] - 1) if k + 1 < len(starts) else last)) for k, s in enumerate(starts)]
