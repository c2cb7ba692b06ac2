"""What each SASS opcode does, on lane vectors: one handler per instruction, built once.

A handler is a closure over its decoded operands; `handler(st, on)` executes the instruction for
the lanes `on` (the executing lanes whose guard predicate holds) of the CTA state `st`
(`gpusim.sass.cta.State`). Integer and predicate results are exact (32-bit wrap, 64-bit pairs,
carries); FP32 results are IEEE single precision (FFMA fused: its product is exact in float64).
Memory instructions return the byte address of every lane so the caller can record and cost them.

Each handler also declares the registers it reads and writes, which the emulator uses for the
scoreboard's producer edges and for telling address arithmetic from data (a register written by a
load or an FP instruction holds data; the loop sampler must never extrapolate it).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

import numpy as np

from gpusim.errors import UnsupportedOperation
from gpusim.sass.listing import Instr, Operand

U32 = np.uint32
RZ, URZ, PT = 255, 63, 7


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


def freader(op: Operand, ins: Instr):
    """st -> float32 lanes (or scalar) of an FP32 source operand (neg / abs applied as FP)."""
    if op.kind == "fimm":
        v = np.float32(op.value)
        return lambda st: v
    raw = reader(Operand(op.kind, op.n, offset=op.offset, name=op.name, wide=op.wide), ins)

    def get(st):
        x = raw(st)
        x = x.view(np.float32) if isinstance(x, np.ndarray) else np.uint32(x).view(np.float32)
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


# ---------------------------------------------------------------- the opcodes

def build(ins: Instr) -> Handler:
    """The handler of one instruction; UnsupportedOperation for an opcode it does not execute."""
    b, mods, o = ins.base, ins.mods, ins.operands
    f = _BUILDERS.get(b)
    if f is None:
        _refuse(ins)
    return f(ins, b, mods, o)


def _nop(ins, b, mods, o):
    kind = {"BAR": "bar", "EXIT": "exit", "BRA": "bra"}.get(b, "nop")
    if b == "BAR":
        if mods[:1] != ["SYNC"] or (o and (o[0].kind != "imm" or o[0].n != 0)) or len(o) > 1:
            _refuse(ins, "only BAR.SYNC on barrier 0 for the whole CTA")
    if b == "BRA" and (not o or o[-1].kind != "imm" or len(o) > 1):
        _refuse(ins, "indirect or predicated-operand branch")
    return Handler(lambda st, on: None, kind=kind)


def _mov(ins, b, mods, o):
    src = reader(o[1], ins)
    w = _writer(o[0])
    return Handler(lambda st, on: w(st, src(st), on), _regs(o[1]), _regs(o[0]))


def _s2r(ins, b, mods, o):
    if o[1].kind != "sr":
        _refuse(ins)
    return _mov(ins, b, mods, o)


def _cs2r(ins, b, mods, o):
    if o[1].kind != "R" or o[1].n != RZ:
        _refuse(ins, "only CS2R Rd, SRZ")
    w = _writer64(o[0])
    return Handler(lambda st, on: w(st, np.uint64(0), on), [], _regs(o[0], 2))


def _ldc(ins, b, mods, o):
    if "64" in mods:
        src, w = reader64(o[1], ins), _writer64(o[0])
        return Handler(lambda st, on: w(st, src(st), on), [], _regs(o[0], 2))
    return _mov(ins, b, mods, o)


def _hfma2(ins, b, mods, o):
    # ptxas materialises constants with HFMA2.MMA Rd, -RZ, RZ, hi, lo (two halves)
    if len(o) == 5 and o[1].kind == "R" and o[1].n == RZ and o[2].kind == "R" and o[2].n == RZ:
        def half(op):
            v = op.value if op.kind == "fimm" else float(op.n)
            return struct.unpack("<H", struct.pack("<e", v))[0]
        v = U32((half(o[3]) << 16) | half(o[4]))
        w = _writer(o[0])
        return Handler(lambda st, on: w(st, v, on), [], _regs(o[0]))
    _refuse(ins, "half-precision arithmetic")


def _iadd3(ins, b, mods, o):
    dst, rest = o[0], list(o[1:])
    couts = []
    while rest and _is_pred(rest[0]) and len(rest) > 3:
        couts.append(rest.pop(0))
    srcs = [reader(x, ins) for x in rest[:3]]
    cins = [preader(x) for x in rest[3:5]] if "X" in mods else []
    w = _writer(dst)
    pw = [_pwriter(x) for x in couts]

    def run(st, on):
        tot = sum(_u(g(st)) for g in srcs)
        for c in cins:
            tot = tot + np.asarray(c(st), np.int64)
        w(st, (tot & 0xFFFFFFFF).astype(U32), on)
        if pw:
            carry = tot >> 32
            pw[0](st, carry >= 1, on)
            if len(pw) > 1:
                pw[1](st, carry >= 2, on)
    reads = sum((_regs(x) for x in rest), [])
    return Handler(run, reads, _regs(dst) + sum((_regs(x) for x in couts), []))


def _viadd(ins, b, mods, o):
    a, c = reader(o[1], ins), reader(o[2], ins)
    w = _writer(o[0])
    return Handler(lambda st, on: w(st, a(st) + c(st), on), _regs(o[1]) + _regs(o[2]), _regs(o[0]))


def _imad(ins, b, mods, o):
    dst = o[0]
    a, bb = reader(o[1], ins), reader(o[2], ins)
    reads = _regs(o[1]) + _regs(o[2])
    signed = "U32" not in mods
    if "WIDE" in mods:
        c = reader64(o[3], ins)
        w = _writer64(dst)
        conv = _s if signed else _u

        def run(st, on):
            prod = (conv(a(st)) * conv(bb(st))).astype(np.uint64)
            w(st, prod + c(st), on)
        return Handler(run, reads + _regs(o[3], 2), _regs(dst, 2))
    c = reader(o[3], ins)
    w = _writer(dst)
    reads += _regs(o[3])
    if "HI" in mods:
        conv = _s if signed else _u

        def run(st, on):
            w(st, (((conv(a(st)) * conv(bb(st))) >> 32) + _u(c(st))).astype(U32), on)
        return Handler(run, reads, _regs(dst))
    if "MOV" in mods:
        return Handler(lambda st, on: w(st, c(st), on), _regs(o[3]), _regs(dst))
    return Handler(lambda st, on: w(st, a(st) * bb(st) + c(st), on), reads, _regs(dst))


def _lea(ins, b, mods, o):
    dst, rest = o[0], list(o[1:])
    couts = []
    while rest and _is_pred(rest[0]):
        couts.append(rest.pop(0))
    w = _writer(dst)
    pw = [_pwriter(x) for x in couts]
    reads = sum((_regs(x) for x in rest), [])
    if "HI" in mods:
        if "SX32" in mods:                    # hi(sext(a) << s) + b (+ carry)
            a, bb, s = reader(rest[0], ins), reader(rest[1], ins), rest[2].n
            cin = preader(rest[3]) if ("X" in mods and len(rest) > 3) else None

            def run(st, on):
                hi = (((_s(a(st)) << s) >> 32) & 0xFFFFFFFF)
                tot = hi + _u(bb(st)) + (np.asarray(cin(st), np.int64) if cin else 0)
                w(st, (tot & 0xFFFFFFFF).astype(U32), on)
        else:                                 # hi(({c, a}) << s) + b (+ carry)
            a, bb, c, s = reader(rest[0], ins), reader(rest[1], ins), reader(rest[2], ins), rest[3].n
            cin = preader(rest[4]) if ("X" in mods and len(rest) > 4) else None

            def run(st, on):
                wide = (_u(c(st)).astype(np.uint64) << np.uint64(32)) | _u(a(st)).astype(np.uint64)
                hi = ((wide << np.uint64(s)) >> np.uint64(32)).astype(np.int64) & 0xFFFFFFFF
                tot = hi + _u(bb(st)) + (np.asarray(cin(st), np.int64) if cin else 0)
                w(st, (tot & 0xFFFFFFFF).astype(U32), on)
        return Handler(run, reads, _regs(dst))
    a, bb, s = reader(rest[0], ins), reader(rest[1], ins), rest[2].n

    def run(st, on):
        tot = ((_u(a(st)) << s) & 0xFFFFFFFF) + _u(bb(st))
        w(st, (tot & 0xFFFFFFFF).astype(U32), on)
        if pw:
            pw[0](st, (tot >> 32) != 0, on)
    return Handler(run, reads, _regs(dst) + sum((_regs(x) for x in couts), []))


def _shf(ins, b, mods, o):
    dst = o[0]
    lo, sh, hi = reader(o[1], ins), reader(o[2], ins), reader(o[3], ins)
    w = _writer(dst)
    left = "L" in mods
    want_hi = "HI" in mods
    signed = "S32" in mods
    is64 = "U64" in mods or "S64" in mods

    def run(st, on):
        s = (_u(sh(st)) & 63).astype(np.uint64)
        if not is64:
            s = np.minimum(s, np.uint64(32))
        if signed:                               # arithmetic: the sign of hi shifts in
            wide = (_s(hi(st)) << 32) | _u(lo(st))
            r = (wide << s.astype(np.int64)) if left else (wide >> s.astype(np.int64))
            r = (r >> 32) if want_hi else r
            w(st, (r & 0xFFFFFFFF).astype(U32), on)
            return
        wide = (_u(hi(st)).astype(np.uint64) << np.uint64(32)) | _u(lo(st)).astype(np.uint64)
        r = (wide << s) if left else (wide >> s)
        r = (r >> np.uint64(32)) if want_hi else r
        w(st, (r & np.uint64(0xFFFFFFFF)).astype(U32), on)
    return Handler(run, _regs(o[1]) + _regs(o[2]) + _regs(o[3]), _regs(dst))


def _lop3(ins, b, mods, o):
    dst, rest = o[0], list(o[1:])
    pout = None
    if _is_pred(rest[0]):
        pout = rest.pop(0)
    a, bb, c = (reader(x, ins) for x in rest[:3])
    fn = _lut(rest[3].n)
    w = _writer(dst)
    pw = _pwriter(pout) if pout else None
    # rest[4] is a predicate input (!PT: unused) of the sm_90 form
    def run(st, on):
        r = np.asarray(fn(a(st), bb(st), c(st)), U32)
        w(st, r, on)
        if pw:
            pw(st, r != 0, on)
    return Handler(run, sum((_regs(x) for x in rest[:3]), []),
                   _regs(dst) + (_regs(pout) if pout else []))


def _plop3(ins, b, mods, o):
    a, bb, c = (preader(x) for x in o[2:5])
    l0, l1 = o[5].n, o[6].n
    w0, w1 = _pwriter(o[0]), _pwriter(o[1])

    def run(st, on):
        k = (np.asarray(a(st), np.int64) << 2) | (np.asarray(bb(st), np.int64) << 1) | np.asarray(c(st), np.int64)
        w0(st, (l0 >> k) & 1 == 1, on)
        w1(st, (l1 >> k) & 1 == 1, on)
    return Handler(run, sum((_regs(x) for x in o[2:5]), []), _regs(o[0]) + _regs(o[1]))


def _isetp(ins, b, mods, o):
    cmp = _CMP[mods[0]]
    comb = _BOOL[mods[-1]]
    conv = _u if "U32" in mods else _s
    a, bb = reader(o[2], ins), reader(o[3], ins)
    c = preader(o[4])
    ex = "EX" in mods
    if ex:
        _refuse(ins, "64-bit compare")
    w0, w1 = _pwriter(o[0]), _pwriter(o[1])

    def run(st, on):
        r = cmp(conv(a(st)), conv(bb(st)))
        cv = c(st)
        w0(st, comb(r, cv), on)
        w1(st, comb(~r, cv), on)
    return Handler(run, _regs(o[2]) + _regs(o[3]) + _regs(o[4]), _regs(o[0]) + _regs(o[1]))


def _vimnmx(ins, b, mods, o):
    conv = _u if "U32" in mods else _s
    a, bb, p = reader(o[1], ins), reader(o[2], ins), preader(o[3])
    w = _writer(o[0])

    def run(st, on):
        x, y = conv(a(st)), conv(bb(st))
        w(st, (np.where(p(st), np.minimum(x, y), np.maximum(x, y)) & 0xFFFFFFFF).astype(U32), on)
    return Handler(run, _regs(o[1]) + _regs(o[2]) + _regs(o[3]), _regs(o[0]))


def _sel(ins, b, mods, o):
    a, bb, p = reader(o[1], ins), reader(o[2], ins), preader(o[3])
    w = _writer(o[0])
    return Handler(lambda st, on: w(st, np.where(p(st), a(st), bb(st)).astype(U32), on),
                   _regs(o[1]) + _regs(o[2]) + _regs(o[3]), _regs(o[0]))


# FP32: results are data

def _fp(ins, b, mods, o):
    if any(m in mods for m in ("RM", "RP", "RZ", "SAT")):
        _refuse(ins, "rounding or saturation modifier")
    w = _writer(o[0])
    srcs = [freader(x, ins) for x in o[1:]]
    reads = sum((_regs(x) for x in o[1:]), [])
    if b == "FFMA":
        a, bb, c = srcs

        def run(st, on):
            r = (np.float64(1) * a(st) * bb(st) + c(st)).astype(np.float32)
            w(st, np.asarray(r, np.float32).view(U32), on)
    elif b == "FMUL":
        a, bb = srcs

        def run(st, on):
            w(st, np.asarray(np.multiply(a(st), bb(st), dtype=np.float32), np.float32).view(U32), on)
    elif b == "FADD":
        a, bb = srcs

        def run(st, on):
            w(st, np.asarray(np.add(a(st), bb(st), dtype=np.float32), np.float32).view(U32), on)
    else:
        _refuse(ins)
    return Handler(run, reads, _regs(o[0]), data=True)


# memory

def _address(op: Operand, ins: Instr):
    """st -> int64 byte address lanes of a [Rn(.64) + URm + off] operand."""
    if op.kind != "mem":
        _refuse(ins, "memory operand")
    off = op.offset
    parts = []
    if op.n != RZ:
        parts.append(reader64(Operand("R", op.n), ins) if op.wide else
                     (lambda st, n=op.n: st.R[n].astype(np.uint64)))
    if op.ureg >= 0 and op.ureg != URZ:
        u = op.ureg
        parts.append(reader64(Operand("UR", u), ins) if op.wide else
                     (lambda st, u=u: st.UR[u].astype(np.uint64)))

    def addr(st):
        a = np.full(st.lanes, np.uint64(off & 0xFFFFFFFFFFFFFFFF))
        for p in parts:
            a = a + p(st)
        if not op.wide:
            a = a & np.uint64(0xFFFFFFFF)
        return a.astype(np.int64)
    return addr


def _width(mods) -> int:
    for m in mods:
        if m in _MEM_BYTES:
            return _MEM_BYTES[m]
    return 4


_SPACE = {"G": "global", "S": "shared", "L": "local"}


def _ld(ins, b, mods, o):
    space = _SPACE[b[2]]
    if any(m in mods for m in ("U8", "S8", "U16", "S16")):
        _refuse(ins, "sub-word loads")
    nb = _width(mods)
    addr = _address(o[1], ins)
    dst = o[0]
    words = nb // 4
    n0 = dst.n

    def run(st, on):
        a = addr(st)
        vals = st.load(space, a, nb, on, ins)       # (words, lanes) uint32
        if n0 != RZ:
            for k in range(words):
                np.copyto(st.R[n0 + k], vals[k], where=on)
        return a
    return Handler(run, _regs(o[1]), _regs(dst, words), data=True, kind="load", space=space,
                   nbytes=nb, addr_regs=_regs(o[1]))


def _st(ins, b, mods, o):
    space = _SPACE[b[2]]
    if any(m in mods for m in ("U8", "S8", "U16", "S16")):
        _refuse(ins, "sub-word stores")
    nb = _width(mods)
    addr = _address(o[0], ins)
    src = o[1]
    words = nb // 4

    def run(st, on):
        a = addr(st)
        if src.n == RZ:
            vals = np.zeros((words, st.lanes), U32)
        else:
            vals = st.R[src.n:src.n + words]
        st.store(space, a, nb, vals, on, ins)
        return a
    return Handler(run, _regs(o[0]) + _regs(src, words), [], kind="store", space=space, nbytes=nb,
                   addr_regs=_regs(o[0]))


_BUILDERS = {
    "NOP": _nop, "BAR": _nop, "EXIT": _nop, "BRA": _nop, "BSSY": _nop, "BSYNC": _nop, "WARPSYNC": _nop,
    "MOV": _mov, "UMOV": _mov, "S2R": _s2r, "S2UR": _s2r, "CS2R": _cs2r, "LDC": _ldc, "ULDC": _ldc,
    "HFMA2": _hfma2, "IADD3": _iadd3, "UIADD3": _iadd3, "VIADD": _viadd,
    "IMAD": _imad, "UIMAD": _imad, "LEA": _lea, "ULEA": _lea, "SHF": _shf, "USHF": _shf,
    "LOP3": _lop3, "ULOP3": _lop3, "PLOP3": _plop3, "UPLOP3": _plop3,
    "ISETP": _isetp, "UISETP": _isetp, "VIMNMX": _vimnmx, "IMNMX": _vimnmx, "SEL": _sel, "USEL": _sel,
    "FFMA": _fp, "FMUL": _fp, "FADD": _fp,
    "LDG": _ld, "LDS": _ld, "STG": _st, "STS": _st, "LDL": _ld, "STL": _st,
}
