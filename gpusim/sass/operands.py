"""The operands of a SASS instruction on lane vectors: readers, writers and the handler record.

Shared by the opcode handlers (gpusim.sass.semantics and the ops_* modules beside it).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from gpusim.errors import UnsupportedOperation
from gpusim.sass.listing import Instr, Operand

U32 = np.uint32
RZ, URZ, PT = 255, 63, 7
_TINY = np.float32(1.1754943508222875e-38)      # the smallest normal float32


def _ftz(x):
    """Subnormal float32 values flushed to a zero of the same sign."""
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < _TINY, np.copysign(np.float32(0), x), x).astype(np.float32)


def _vec(x, n: int):
    """A lane vector of a value that may be a scalar (an immediate or a constant)."""
    return np.broadcast_to(np.asarray(x), (n,))


@dataclass
class Handler:
    run: object                         # run(st, on) -> None, or byte addresses (int64, lanes) for memory
    reads: list = field(default_factory=list)     # ("R"|"UR"|"P"|"UP", n)
    writes: list = field(default_factory=list)
    data: bool = False                  # its results are data (loads, FP)
    kind: str = "alu"                   # alu | load | store | bar | bra | exit | nop
    space: str = ""                     # global | shared (memory)
    nbytes: int = 0                     # bytes per lane (memory)
    addr_regs: list = field(default_factory=list)   # registers that form the address


def _refuse(ins: Instr, why: str = ""):
    raise UnsupportedOperation(f"SASS /*{ins.pc:04x}*/ {ins.text}: not emulated{': ' + why if why else ''} "
                               "(gpusim/sass/semantics.py lists the opcodes it executes)")


def _bits(f: float) -> int:
    return struct.unpack("<I", struct.pack("<f", f))[0]


# ---------------------------------------------------------------- operand readers

def reader(op: Operand, ins: Instr):
    """A function st -> uint32 lanes (or a uint32 scalar) for a 32-bit source operand."""
    if op.kind == "R":
        n = op.n
        get = (lambda st: U32(0)) if n == RZ else (lambda st: st.R[n])
    elif op.kind == "UR":
        n = op.n
        get = (lambda st: U32(0)) if n == URZ else (lambda st: st.UR[n])
    elif op.kind == "imm":
        v = U32(op.n)
        get = lambda st: v
    elif op.kind == "fimm":
        v = U32(_bits(op.value))
        return lambda st: v               # sign already in the value
    elif op.kind == "c":
        if op.n != 0:
            _refuse(ins, f"constant bank {op.n}")
        off = op.offset
        get = lambda st: st.const32(off)
    elif op.kind == "sr":
        name = op.name
        get = lambda st: st.special(name, ins)
    else:
        _refuse(ins, f"operand kind {op.kind}")
    if op.inv:
        g0 = get
        get = lambda st: ~g0(st)
    if op.neg:
        g1 = get
        get = lambda st: U32(0) - g1(st)
    return get


def freader(op: Operand, ins: Instr, ftz: bool = False):
    """st -> float32 lanes (or scalar) of an FP32 source operand (neg / abs applied as FP; with ftz,
    a subnormal input reads as a zero of its sign, as .FTZ and MUFU take them).

    cuobjdump prints an FP32 instruction's immediate as a decimal number, integers without a point
    ("1", "-126", "16777216"): an `imm` operand here is that number, not a bit pattern."""
    if op.kind in ("fimm", "imm"):
        v = np.float32(op.value if op.kind == "fimm" else float(np.uint32(op.n).view(np.int32)))
        v = _ftz(v) if ftz else v
        return lambda st: v
    raw = reader(Operand(op.kind, op.n, offset=op.offset, name=op.name, wide=op.wide), ins)

    def get(st):
        x = raw(st)
        x = x.view(np.float32) if isinstance(x, np.ndarray) else np.uint32(x).view(np.float32)
        if ftz:
            x = _ftz(x)
        if op.abs:
            x = np.abs(x)
        return -x if op.neg else x
    return get


def reader64(op: Operand, ins: Instr):
    """st -> uint64 lanes (or scalar) of a 64-bit source (a register pair or a constant pair)."""
    if op.kind in ("R", "UR"):
        z = RZ if op.kind == "R" else URZ
        n = op.n
        if n == z:
            return lambda st: np.uint64(0)
        f = "R" if op.kind == "R" else "UR"
        return lambda st: (getattr(st, f)[n].astype(np.uint64)
                           | (getattr(st, f)[n + 1].astype(np.uint64) << np.uint64(32)))
    if op.kind == "c":
        off = op.offset
        return lambda st: np.uint64(int(st.const32(off)) | (int(st.const32(off + 4)) << 32))
    if op.kind == "imm":
        v = np.uint64(op.n)
        return lambda st: v
    _refuse(ins, f"64-bit operand kind {op.kind}")


def preader(op: Operand):
    """st -> bool lanes of a predicate source (PT / UPT: True)."""
    n, inv = op.n, op.inv
    f = "P" if op.kind == "P" else "UP"
    if n == PT:
        v = not inv
        return lambda st: v
    if inv:
        return lambda st: ~getattr(st, f)[n]
    return lambda st: getattr(st, f)[n]


def _regs(op: Operand, width: int = 1):
    if op.kind in ("R", "UR"):
        z = RZ if op.kind == "R" else URZ
        return [] if op.n == z else [(op.kind, op.n + k) for k in range(width)]
    if op.kind in ("P", "UP"):
        return [] if op.n == PT else [(op.kind, op.n)]
    if op.kind == "mem":
        out = []
        if op.n != RZ:
            out += [("R", op.n + k) for k in range(2 if op.wide else 1)]
        if op.ureg >= 0 and op.ureg != URZ:
            out.append(("UR", op.ureg))
        return out
    return []


def _is_pred(op: Operand) -> bool:
    return op.kind in ("P", "UP")


# ---------------------------------------------------------------- writers

def _writer(op: Operand):
    """(st, value uint32 lanes/scalar, on) -> None for a 32-bit destination."""
    if op.kind == "R":
        if op.n == RZ:
            return lambda st, v, on: None
        n = op.n
        return lambda st, v, on: np.copyto(st.R[n], v, casting="unsafe", where=on)
    if op.kind == "UR":
        if op.n == URZ:
            return lambda st, v, on: None
        n = op.n
        return lambda st, v, on: np.copyto(st.UR[n], v, casting="unsafe", where=on)
    raise ValueError(op)


def _writer64(op: Operand):
    lo, hi = _writer(op), _writer(Operand(op.kind, op.n + 1 if op.n not in (RZ, URZ) else op.n))

    def w(st, v, on):
        v = np.asarray(v, np.uint64)
        lo(st, (v & np.uint64(0xFFFFFFFF)).astype(U32), on)
        hi(st, (v >> np.uint64(32)).astype(U32), on)
    return w


def _pwriter(op: Operand):
    if op.n == PT:
        return lambda st, v, on: None
    n = op.n
    f = "P" if op.kind == "P" else "UP"
    return lambda st, v, on: np.copyto(getattr(st, f)[n], v, where=on)


def _lut(lut: int):
    """The 3-input logic function of a LOP3 truth table, on uint32 lanes."""
    common = {0xc0: lambda a, b, c: a & b, 0xfc: lambda a, b, c: a | b, 0x3c: lambda a, b, c: a ^ b,
              0xf8: lambda a, b, c: a | (b & c), 0x96: lambda a, b, c: a ^ b ^ c,
              0xe2: lambda a, b, c: (a & b) | (c & ~b), 0xfe: lambda a, b, c: a | b | c,
              0x80: lambda a, b, c: a & b & c, 0x30: lambda a, b, c: a & ~b,
              0xf0: lambda a, b, c: a, 0xcc: lambda a, b, c: b, 0xaa: lambda a, b, c: c,
              0x0f: lambda a, b, c: ~a, 0x33: lambda a, b, c: ~b, 0x55: lambda a, b, c: ~c,
              0xea: lambda a, b, c: (a & b) | c, 0x3f: lambda a, b, c: ~(a & b),
              0x0c: lambda a, b, c: ~a & b, 0x28: lambda a, b, c: (a ^ b) & c,
              0x6c: lambda a, b, c: (a & c) ^ b, 0xb4: lambda a, b, c: a ^ (b & ~c),
              0x14: lambda a, b, c: ~a & (b ^ c), 0x48: lambda a, b, c: b & (a ^ c),
              0x40: lambda a, b, c: a & b & ~c, 0x20: lambda a, b, c: a & ~b & c,
              0x08: lambda a, b, c: ~a & b & c, 0x88: lambda a, b, c: b & c, 0xa0: lambda a, b, c: a & c,
              0x00: lambda a, b, c: a & U32(0), 0xff: lambda a, b, c: a | U32(0xFFFFFFFF)}
    if lut in common:
        return common[lut]

    def generic(a, b, c):
        r = U32(0)
        for k in range(8):
            if lut >> k & 1:
                r = r | ((a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c))
        return r
    return generic


def _s(x):
    """uint32 lanes as int64 two's-complement values."""
    return np.asarray(x).astype(U32).view(np.int32).astype(np.int64)


def _u(x):
    return np.asarray(x).astype(U32).astype(np.int64)


_CMP = {"LT": np.less, "LE": np.less_equal, "GT": np.greater, "GE": np.greater_equal,
        "EQ": np.equal, "NE": np.not_equal}
_BOOL = {"AND": np.logical_and, "OR": np.logical_or, "XOR": np.logical_xor}
_MEM_BYTES = {"64": 8, "128": 16, "U8": 1, "S8": 1, "U16": 2, "S16": 2}
