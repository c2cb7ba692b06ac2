"""What each SASS opcode does, on lane vectors: one handler per instruction, built once.

A handler is a closure over its decoded operands; `handler(st, on)` executes the instruction for
the lanes `on` (the executing lanes whose guard predicate holds) of the CTA state `st`
(`gpusim.sass.cta.State`). Integer and predicate results are exact (32-bit wrap, 64-bit pairs,
carries); FP32 results are IEEE single precision (FFMA fused: its product is exact in float64;
.RZ / .RM / .RP round the exact result once; .FTZ flushes subnormal inputs and results; .SAT clamps).
Memory instructions, atomics included, return the byte address of every lane so the caller can
record and cost them.

Executed (`_BUILDERS`): moves, constants, integer arithmetic and logic (IADD3, IMAD, LEA, SHF, LOP3,
PLOP3, ISETP, min / max, SEL, IABS, POPC, FLO, BREV, PRMT), FP32 (FADD, FMUL, FFMA, FSETP with every
ordered / unordered comparison, FSEL, FMNMX), MUFU (EX2, LG2, RCP, RSQ, SQRT, SIN, COS, TANH: the
float32 of the exact function, so not bit-exact against the hardware's approximation, while the
instructions and their counts are), FCHK (a documented guess of the undocumented rule), conversions
(I2F / I2FP from 32-bit integers, F2I to 32-bit integers, FRND, F2F.F32.F32), warp-level SHFL and
VOTE / VOTEU (lanes grouped in warps of 32 consecutive CTA threads), loads and stores (global,
shared, local), atomics and reductions (ATOMG / ATOM / ATOMS / REDG / RED: ADD, MIN, MAX, EXCH, CAS,
AND, OR, XOR, INC, DEC, POPC.INC; lanes applied one after another in CTA thread order), branches
(BRA, with a predicate operand too), CALL.REL.NOINC / RET.REL (the slow paths of division and square
root), BAR.SYNC, EXIT. Anything else is refused by name and PC; so are ATOMS.CAST.SPIN (a retry
loop whose trips depend on timing), 64-bit FP, and half-precision arithmetic.

Each handler also declares the registers it reads and writes, which the emulator uses for the
scoreboard's producer edges and for telling address arithmetic from data (a register written by a
load, an atomic, a shuffle or an FP instruction holds data, as does a predicate FSETP sets; the loop
sampler must never extrapolate it).
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


# ---------------------------------------------------------------- the opcodes

def build(ins: Instr) -> Handler:
    """The handler of one instruction; UnsupportedOperation for an opcode it does not execute."""
    b, mods, o = ins.base, ins.mods, ins.operands
    f = _BUILDERS.get(b)
    if f is None:
        _refuse(ins)
    return f(ins, b, mods, o)


def _nop(ins, b, mods, o):
    kind = {"BAR": "bar", "EXIT": "exit", "BRA": "bra", "CALL": "call", "RET": "ret"}.get(b, "nop")
    if b == "BAR":
        if mods[:1] != ["SYNC"] or (o and (o[0].kind != "imm" or o[0].n != 0)) or len(o) > 1:
            _refuse(ins, "only BAR.SYNC on barrier 0 for the whole CTA")
    if b == "BRA":
        if not o or o[-1].kind != "imm" or len(o) > 2 or (len(o) == 2 and not _is_pred(o[0])):
            _refuse(ins, "indirect branch")
        if len(o) == 2:               # BRA Pp, target: taken where the guard and Pp both hold
            c = preader(o[0])
            return Handler(lambda st, on: on & c(st), _regs(o[0]), kind="bra")
    if b == "CALL" and (mods[:2] != ["REL", "NOINC"] or len(o) != 1 or o[0].kind != "imm"):
        _refuse(ins, "only CALL.REL.NOINC to an offset (the return address is in a register)")
    if b == "RET":                    # RET.REL.NODEC Rn off: back to the offset Rn holds (+ off)
        if not o or o[0].kind != "R" or (len(o) > 1 and o[1].kind != "imm"):
            _refuse(ins, "only RET.REL to a register")
        n, off = o[0].n, (o[1].n if len(o) > 1 else 0)
        return Handler(lambda st, on: st.R[n].astype(np.int64) + off, _regs(o[0]), kind="ret")
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
    if _is_pred(dst):                     # LOP3.LUT Pd, Rd, a, b, c, lut, Pin: Pd = result != 0
        pout, dst = dst, rest.pop(0)
    elif _is_pred(rest[0]):
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
        x, y = conv(a(st)), conv(bb(st))
        r = cmp(x, y)
        if st.cmp_log is not None:       # the loop sampler's trial: which side of equality each lane is on
            st.cmp_log.append(np.where(on, np.sign(_vec(x - y, st.lanes)), 0))
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

_TINY = np.float32(1.1754943508222875e-38)      # the smallest normal float32


def _ftz(x):
    """Subnormal float32 values flushed to a zero of the same sign."""
    x = np.asarray(x, np.float32)
    return np.where(np.abs(x) < _TINY, np.copysign(np.float32(0), x), x).astype(np.float32)


def _vec(x, n: int):
    """A lane vector of a value that may be a scalar (an immediate or a constant)."""
    return np.broadcast_to(np.asarray(x), (n,))


def _round32(s, e, mode: str):
    """float32 of the exact value s + e in rounding mode RN / RZ / RM / RP, where s is a float64 and
    e its rounding error (TwoSum: |e| at most half an ulp of s), so that no float32 lies strictly
    between s and s + e unless s is one: the float32 neighbours of s, or of s and the side e points
    to, bracket the exact value."""
    s, e = np.asarray(s, np.float64), np.asarray(e, np.float64)
    r = s.astype(np.float32)
    r64 = r.astype(np.float64)
    up, dn = np.nextafter(r, np.float32(np.inf)), np.nextafter(r, np.float32(-np.inf))
    lo = np.where((r64 > s) | ((r64 == s) & (e < 0)), dn, r)
    hi = np.where((r64 < s) | ((r64 == s) & (e > 0)), up, r)
    if mode == "RN":              # only a tie of s (a float32 midpoint) is decided by e
        tie = (lo != hi) & ((lo.astype(np.float64) + hi.astype(np.float64)) / 2 == s)
        out = np.where(tie & (e > 0), hi, np.where(tie & (e < 0), lo, r))
    elif mode == "RZ":
        out = np.where(s > 0, lo, np.where(s < 0, hi, r))
    elif mode == "RM":
        out = lo
    else:
        out = hi
    return np.where(np.isfinite(s), out, r).astype(np.float32)


def _two_sum(a, b):
    """(s, e): s = fl(a + b) in float64 and e the exact error, a + b = s + e (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fp(ins, b, mods, o):
    rnd = next((m for m in mods if m in ("RN", "RZ", "RM", "RP")), "RN")
    ftz, sat = "FTZ" in mods, "SAT" in mods
    w = _writer(o[0])
    srcs = [freader(x, ins, ftz) for x in o[1:]]
    reads = sum((_regs(x) for x in o[1:]), [])
    f64 = np.float64
    if b == "FFMA":
        a, bb, c = srcs
        if rnd == "RN":          # the product of two float32 is exact in float64: one rounding of the sum
            def val(st):
                return (f64(1) * a(st) * bb(st) + c(st)).astype(np.float32)
        else:                    # directed rounding: the exact sum (product exact, TwoSum), rounded once
            def val(st):
                return _round32(*_two_sum(f64(1) * a(st) * bb(st), f64(1) * c(st)), rnd)
    elif b == "FMUL":
        a, bb = srcs
        if rnd == "RN":
            def val(st):
                return np.multiply(a(st), bb(st), dtype=np.float32)
        else:
            def val(st):
                return _round32(f64(1) * a(st) * bb(st), f64(0), rnd)
    elif b == "FADD":
        a, bb = srcs
        if rnd == "RN":
            def val(st):
                return np.add(a(st), bb(st), dtype=np.float32)
        else:
            def val(st):
                return _round32(*_two_sum(f64(1) * a(st), f64(1) * bb(st)), rnd)
    else:
        _refuse(ins)

    def run(st, on):
        with np.errstate(all="ignore"):
            r = np.asarray(val(st), np.float32)
        if ftz:
            r = _ftz(r)
        if sat:                   # clamp to [0, 1], NaN to +0
            r = np.where(np.isnan(r), np.float32(0), np.clip(r, np.float32(0), np.float32(1))).astype(np.float32)
        w(st, r.view(U32), on)
    return Handler(run, reads, _regs(o[0]), data=True)


_FCMP = {       # ordered comparisons are false on a NaN, the U (unordered) ones true
    "LT": lambda x, y: x < y, "LE": lambda x, y: x <= y, "GT": lambda x, y: x > y,
    "GE": lambda x, y: x >= y, "EQ": lambda x, y: x == y, "NE": lambda x, y: (x < y) | (x > y),
    "LTU": lambda x, y: ~(x >= y), "LEU": lambda x, y: ~(x > y), "GTU": lambda x, y: ~(x <= y),
    "GEU": lambda x, y: ~(x < y), "EQU": lambda x, y: ~((x < y) | (x > y)), "NEU": lambda x, y: x != y,
    "NUM": lambda x, y: ~(np.isnan(x) | np.isnan(y)), "NAN": lambda x, y: np.isnan(x) | np.isnan(y),
    "T": lambda x, y: np.ones(np.broadcast(x, y).shape, bool),
    "F": lambda x, y: np.zeros(np.broadcast(x, y).shape, bool),
}


def _fsetp(ins, b, mods, o):
    """FSETP.<cmp>[.FTZ].<AND|OR|XOR> Pd, Pq, a, b, Pc: Pd = (a cmp b) op Pc, Pq = !(a cmp b) op Pc."""
    if mods[0] not in _FCMP or mods[-1] not in _BOOL:
        _refuse(ins, "comparison")
    cmp, comb = _FCMP[mods[0]], _BOOL[mods[-1]]
    ftz = "FTZ" in mods
    a, bb, c = freader(o[2], ins, ftz), freader(o[3], ins, ftz), preader(o[4])
    w0, w1 = _pwriter(o[0]), _pwriter(o[1])

    def run(st, on):
        with np.errstate(invalid="ignore"):
            r = _vec(cmp(a(st), bb(st)), st.lanes)
        cv = c(st)
        w0(st, comb(r, cv), on)
        w1(st, comb(~r, cv), on)
    return Handler(run, _regs(o[2]) + _regs(o[3]) + _regs(o[4]), _regs(o[0]) + _regs(o[1]), data=True)


def _fsel(ins, b, mods, o):
    """FSEL Rd, a, b, P: P ? a : b (as FP operands: neg / abs apply)."""
    a, bb, p = freader(o[1], ins), freader(o[2], ins), preader(o[3])
    w = _writer(o[0])

    def run(st, on):
        r = np.where(p(st), a(st), bb(st)).astype(np.float32)
        w(st, r.view(U32), on)
    return Handler(run, _regs(o[1]) + _regs(o[2]) + _regs(o[3]), _regs(o[0]), data=True)


def _fmnmx(ins, b, mods, o):
    """FMNMX[.FTZ] Rd, a, b, P: P ? min : max, IEEE minNum / maxNum: a NaN loses to a number, two NaNs
    give the canonical NaN 0x7fffffff, and -0 counts as less than +0."""
    ftz = "FTZ" in mods
    a, bb, p = freader(o[1], ins, ftz), freader(o[2], ins, ftz), preader(o[3])
    w = _writer(o[0])

    def run(st, on):
        x, y = (_vec(v, st.lanes).astype(np.float32) for v in (a(st), bb(st)))
        zero = (x == 0) & (y == 0)
        sx, sy = np.signbit(x), np.signbit(y)
        nz, pz = np.float32(-0.0), np.float32(0.0)
        mn = np.where(zero, np.where(sx | sy, nz, pz), np.fmin(x, y))
        mx = np.where(zero, np.where(sx & sy, nz, pz), np.fmax(x, y))
        bits = np.where(p(st), mn, mx).astype(np.float32).view(U32)
        w(st, np.where(np.isnan(x) & np.isnan(y), U32(0x7FFFFFFF), bits), on)
    return Handler(run, _regs(o[1]) + _regs(o[2]) + _regs(o[3]), _regs(o[0]), data=True)


def _sin2pi(x):
    return np.sin(2 * np.pi * (x - np.round(x)))     # the argument is in turns (ptxas scales by 1/2pi)


def _cos2pi(x):
    return np.cos(2 * np.pi * (x - np.round(x)))


_MUFU = {"EX2": np.exp2, "LG2": np.log2, "RCP": lambda x: 1.0 / x, "RSQ": lambda x: 1.0 / np.sqrt(x),
         "SQRT": np.sqrt, "SIN": _sin2pi, "COS": _cos2pi, "TANH": np.tanh}


def _mufu(ins, b, mods, o):
    """MUFU.<fn> Rd, a: the float32 of the exact function of a (float64, rounded once), subnormal inputs
    and results flushed to zero. The hardware approximates (about 2 ulp, EX2/LG2 in absolute error on
    some ranges): values are not bit-exact, the instructions and their counts are."""
    fn = _MUFU.get(mods[0] if mods else "")
    if fn is None:
        _refuse(ins, "MUFU function (the 64-bit RCP64H / RSQ64H are not emulated)")
    a = freader(o[1], ins, ftz=True)
    w = _writer(o[0])

    def run(st, on):
        with np.errstate(all="ignore"):
            r = _ftz(np.asarray(fn(np.float64(1) * a(st)), np.float64).astype(np.float32))
        w(st, r.view(U32), on)
    return Handler(run, _regs(o[1]), _regs(o[0]), data=True)


def _fchk(ins, b, mods, o):
    """FCHK P, a, b: whether a / b must take the IEEE slow path instead of the reciprocal-and-Newton
    sequence ptxas emits before it. Its exact rule is undocumented; gpusim takes the slow path where
    that sequence (reciprocal flushed to zero below 2^-126, residual a - b * q) could lose accuracy: a
    or b NaN or infinite, b zero, subnormal or at least 2^126, a subnormal, a nonzero a below 2^-102
    (its residual would be subnormal), or exponents apart by 126 or more (a quotient near the ends of
    the range). Normal operands of moderate ratio never take it, as on the hardware."""
    a, bb = freader(o[1], ins), freader(o[2], ins)
    w = _pwriter(o[0])

    def run(st, on):
        x, y = (_vec(v, st.lanes).astype(np.float32).view(U32).astype(np.int64) for v in (a(st), bb(st)))
        ea, eb = (x >> 23) & 0xFF, (y >> 23) & 0xFF
        a_zero = (x & 0x7FFFFFFF) == 0
        slow = (ea == 255) | (eb == 255) | (eb == 0) | (eb >= 253)
        slow |= ~a_zero & ((ea < 25) | (np.abs(ea - eb) >= 126))
        w(st, slow, on)
    return Handler(run, _regs(o[1]) + _regs(o[2]), _regs(o[0]), data=True)


# conversions

def _i2f(ins, b, mods, o):
    """I2F / I2FP.F32.<S32|U32>[.RZ|.RM|.RP] Rd, a: a 32-bit integer to float32, rounded as asked."""
    src = next((m for m in mods if m in ("S32", "U32", "S64", "U64", "S16", "U16", "S8", "U8")), "S32")
    dst = next((m for m in mods if m in ("F32", "F64", "F16")), "F32")
    if src not in ("S32", "U32") or dst != "F32":
        _refuse(ins, "only 32-bit integers to FP32")
    rnd = next((m for m in mods if m in ("RN", "RZ", "RM", "RP")), "RN")
    a = reader(o[1], ins)
    conv = _s if src == "S32" else _u
    w = _writer(o[0])

    def run(st, on):
        v = _vec(conv(a(st)), st.lanes).astype(np.float64)       # exact: at most 32 significant bits
        w(st, _round32(v, np.zeros_like(v), rnd).view(U32), on)
    return Handler(run, _regs(o[1]), _regs(o[0]))


_TO_INT = {"TRUNC": np.trunc, "FLOOR": np.floor, "CEIL": np.ceil, "RN": np.rint}


def _f2i(ins, b, mods, o):
    """F2I[.FTZ][.U32|.S32][.TRUNC|.FLOOR|.CEIL][.NTZ] Rd, a: float32 to a 32-bit integer (round to
    nearest even unless asked), saturated to the type's range, NaN to 0 (as cvt.rni/rzi/rmi/rpi)."""
    if any(m in mods for m in ("S64", "U64", "F64", "S16", "U16", "S8", "U8")):
        _refuse(ins, "only FP32 to 32-bit integers")
    rnd = _TO_INT[next((m for m in mods if m in _TO_INT), "RN")]
    lo, hi = (0, 0xFFFFFFFF) if "U32" in mods else (-2 ** 31, 2 ** 31 - 1)
    a = freader(o[1], ins, ftz="FTZ" in mods)
    w = _writer(o[0])

    def run(st, on):
        x = np.float64(1) * a(st)
        with np.errstate(invalid="ignore"):
            v = np.where(np.isnan(x), 0, np.clip(rnd(x), lo, hi))
        w(st, (v.astype(np.int64) & 0xFFFFFFFF).astype(U32), on)
    return Handler(run, _regs(o[1]), _regs(o[0]))


def _frnd(ins, b, mods, o):
    """FRND[.FTZ][.TRUNC|.FLOOR|.CEIL] Rd, a: float32 rounded to an integral float32 (ties to even)."""
    if any(m in mods for m in ("F64", "F16")):
        _refuse(ins, "only FP32")
    rnd = _TO_INT[next((m for m in mods if m in _TO_INT), "RN")]
    a = freader(o[1], ins, ftz="FTZ" in mods)
    w = _writer(o[0])
    return Handler(lambda st, on: w(st, np.asarray(rnd(a(st)), np.float32).view(U32), on),
                   _regs(o[1]), _regs(o[0]), data=True)


def _f2f(ins, b, mods, o):
    """F2F.F32.F32[.FTZ] Rd, a: a float32 copy (subnormals flushed with .FTZ); other formats refused."""
    if [m for m in mods if m in ("F16", "F64", "BF16", "F32")] != ["F32", "F32"]:
        _refuse(ins, "only FP32 to FP32")
    if any(m in mods for m in ("RZ", "RM", "RP", "TRUNC", "FLOOR", "CEIL")):
        return _frnd(ins, b, mods, o)
    a = freader(o[1], ins, ftz="FTZ" in mods)
    w = _writer(o[0])
    return Handler(lambda st, on: w(st, np.asarray(a(st), np.float32).view(U32), on),
                   _regs(o[1]), _regs(o[0]), data=True)


# integer bit operations

def _iabs(ins, b, mods, o):
    a, w = reader(o[1], ins), _writer(o[0])
    return Handler(lambda st, on: w(st, (np.abs(_s(a(st))) & 0xFFFFFFFF).astype(U32), on),
                   _regs(o[1]), _regs(o[0]))


def _popc(ins, b, mods, o):
    a, w = reader(o[1], ins), _writer(o[0])
    return Handler(lambda st, on: w(st, np.bitwise_count(np.asarray(a(st), U32)).astype(U32), on),
                   _regs(o[1]), _regs(o[0]))


def _brev(ins, b, mods, o):
    a, w = reader(o[1], ins), _writer(o[0])

    def run(st, on):
        x = np.asarray(a(st), U32)
        r = np.zeros_like(x)
        for k in range(32):
            r |= ((x >> U32(k)) & U32(1)) << U32(31 - k)
        w(st, r, on)
    return Handler(run, _regs(o[1]), _regs(o[0]))


def _flo(ins, b, mods, o):
    """FLO.<U32|S32>[.SH] Rd, a: the bit position of the most significant 1 (S32: of the most
    significant bit that differs from the sign), 0xffffffff if none; .SH: 31 minus it (as bfind)."""
    a, w = reader(o[1], ins), _writer(o[0])
    signed, sh = "S32" in mods, "SH" in mods

    def run(st, on):
        x = _s(a(st)) if signed else _u(a(st))
        if signed:
            x = np.where(x < 0, ~x, x)
        pos = np.frexp(np.asarray(x, np.float64))[1].astype(np.int64) - 1     # exact below 2^53; -1 for zero
        r = np.where(pos < 0, -1, 31 - pos if sh else pos)
        w(st, (r & 0xFFFFFFFF).astype(U32), on)
    return Handler(run, _regs(o[1]), _regs(o[0]))


def _prmt(ins, b, mods, o):
    """PRMT Rd, a, sel, b: bytes picked from {b, a} (byte 0 = a's lowest) by sel's four nibbles, a
    nibble's bit 3 replicating the picked byte's sign (the default mode of prmt.b32)."""
    if mods:
        _refuse(ins, "only the default byte-permute mode")
    a, sel, bb = reader(o[1], ins), reader(o[2], ins), reader(o[3], ins)
    w = _writer(o[0])

    def run(st, on):
        x = (_u(bb(st)) << 32) | _u(a(st))
        s = _u(sel(st))
        r = np.zeros(np.broadcast(x, s).shape, np.int64)
        for k in range(4):
            nib = (s >> (4 * k)) & 0xF
            byte = (x >> (8 * (nib & 7))) & 0xFF
            byte = np.where(nib & 8, np.where(byte & 0x80, 0xFF, 0), byte)
            r |= byte << (8 * k)
        w(st, r.astype(U32), on)
    return Handler(run, _regs(o[1]) + _regs(o[2]) + _regs(o[3]), _regs(o[0]))


# warp-level: lanes are grouped in warps of 32 consecutive CTA threads

def _vote(ins, b, mods, o):
    """VOTE[U].<ALL|ANY|EQ> [Rd,] Pd, Ps over the warp's lanes that execute it (guard true): Rd the
    ballot of Ps, Pd whether Ps holds for all / any / all-or-none of them."""
    mode = mods[0] if mods else ""
    if mode not in ("ALL", "ANY", "EQ"):
        _refuse(ins, "vote mode")
    ops = list(o)
    rd = ops.pop(0) if ops[0].kind in ("R", "UR") else None
    pd, ps = ops[0], preader(ops[1])
    wr = _writer(rd) if rd is not None else None
    wp = _pwriter(pd)

    def run(st, on):
        n = st.lanes
        p = _vec(ps(st), n) & on
        bits = np.packbits(p.reshape(-1, 32), axis=1, bitorder="little").view("<u4").reshape(-1)
        act = np.packbits(on.reshape(-1, 32), axis=1, bitorder="little").view("<u4").reshape(-1)
        if mode == "ALL":
            r = bits == act
        elif mode == "ANY":
            r = bits != 0
        else:
            r = (bits == act) | (bits == 0)
        if wr is not None:
            wr(st, np.repeat(bits, 32).astype(U32), on)
        wp(st, np.repeat(r, 32), on)
    return Handler(run, _regs(ops[1]), (_regs(rd) if rd is not None else []) + _regs(pd))


def _shfl(ins, b, mods, o):
    """SHFL.<IDX|UP|DOWN|BFLY> Pd, Rd, a, b, c as PTX's shfl.sync: c packs the clamp (bits 0-4) and the
    segment mask (bits 8-12; width 32: 0). Source lane j (UP: lane - b, DOWN: lane + b, BFLY: lane ^ b,
    IDX: b within the segment); out of the segment, the lane's own value, and Pd false. An inactive
    source lane's register is read as it is (undefined in CUDA; gpusim's choice)."""
    mode = mods[0] if mods else ""
    if mode not in ("IDX", "UP", "DOWN", "BFLY"):
        _refuse(ins, "shuffle mode")
    pd, dst = o[0], o[1]
    val, bget, cget = reader(o[2], ins), reader(o[3], ins), reader(o[4], ins)
    w, pw = _writer(dst), _pwriter(pd)

    def run(st, on):
        n = st.lanes
        lane = np.arange(n, dtype=np.int64) % 32
        bv = _vec(_u(bget(st)), n) & 31
        c = _vec(_u(cget(st)), n)
        clamp, seg = c & 0x1F, (c >> 8) & 0x1F
        max_lane, min_lane = (lane & seg) | (clamp & ~seg), lane & seg
        if mode == "UP":
            j = lane - bv
            ok = j >= max_lane
        else:
            j = {"DOWN": lane + bv, "BFLY": lane ^ bv, "IDX": min_lane | (bv & ~seg)}[mode]
            ok = j <= max_lane
        j = np.where(ok, j, lane)
        v = _vec(val(st), n)
        w(st, v[np.arange(n) - lane + j], on)
        pw(st, ok, on)
    return Handler(run, _regs(o[2]) + _regs(o[3]) + _regs(o[4]), _regs(dst) + _regs(pd), data=True)


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


# atomics and reductions

_ATOM_OPS = ("ADD", "MIN", "MAX", "EXCH", "CAS", "AND", "OR", "XOR", "INC", "DEC", "POPC", "CAST")
_NP = {"F32": np.float32, "S32": np.int32, "U32": np.uint32, "F64": np.float64, "S64": np.int64, "U64": np.uint64}


def _typed(x, typ: str):
    """(words, lanes) uint32 -> the lanes' values as numpy `typ` (64-bit: low word first)."""
    u = x[0].copy() if x.shape[0] == 1 else x[0].astype(np.uint64) | (x[1].astype(np.uint64) << np.uint64(32))
    return u.view(_NP[typ])


def _words(v, words: int):
    u = np.ascontiguousarray(v).view(np.uint64 if words == 2 else U32)
    if words == 1:
        return u[None].astype(U32)
    return np.stack([(u & np.uint64(0xFFFFFFFF)).astype(U32), (u >> np.uint64(32)).astype(U32)])


def _atomic(ins, b, mods, o):
    """ATOMG / ATOM / ATOMS [Pd,] Rd, [a], b[, c] and REDG / RED [a], b: a read-modify-write of the
    word (64-bit: pair) at a, for each lane one after another in CTA thread order (the order the
    hardware serves them is not defined; results depend on it only for EXCH / CAS and for the
    rounding of float sums). ATOM returns the old value; RED returns nothing. Operations: ADD (U32,
    S32, 64-bit, F32 with .FTZ.RN, F64), MIN / MAX (S32, U32, S64, U64), EXCH, CAS (compare b, store c),
    AND, OR, XOR, INC / DEC (atomicInc / atomicDec: wrap at b), POPC.INC (atomicAdd of 1). Refused:
    CAST.SPIN, the compare-and-store that a retry loop (atomicAdd on a shared float) spins on."""
    op = next((m for m in mods if m in _ATOM_OPS), None)
    if op is None:
        _refuse(ins, "atomic operation")
    if op == "CAST":
        _refuse(ins, "a compare-and-store retry loop (e.g. atomicAdd on a shared float): how often each "
                     "warp goes round depends on the order the hardware serves the lanes")
    k = next(i for i, x in enumerate(o) if x.kind == "mem")
    mem = o[k]
    if "E" in mods and mem.n != RZ and not mem.wide:       # .E: a 64-bit address, also where printed [R8+0x100]
        mem = Operand("mem", mem.n, wide=True, ureg=mem.ureg, offset=mem.offset)
    dst = next((x for x in o[:k] if x.kind == "R"), None)   # the predicate before it (PT) is unused
    srcs = list(o[k + 1:])
    nb = 8 if any(m in ("64", "F64", "S64", "U64") for m in mods) else 4
    words = nb // 4
    if op in ("INC", "DEC", "POPC") and words != 1:
        _refuse(ins, "64-bit INC / DEC")
    typ = next((t for t in ("F32", "F64", "S32", "S64") if t in mods), "U64" if words == 2 else "U32")
    if op in ("EXCH", "CAS", "AND", "OR", "XOR"):
        typ = "U64" if words == 2 else "U32"       # bitwise: the type does not matter
    ftz = "FTZ" in mods
    space = "shared" if b == "ATOMS" else "global"
    getters = [reader64(x, ins) if words == 2 else reader(x, ins) for x in srcs]
    addr = _address(mem, ins)

    def fn(old, v):
        x = _typed(old, typ)
        a = [_typed(v[i * words:(i + 1) * words], typ) for i in range(len(getters))]
        with np.errstate(all="ignore"):
            if op == "ADD":
                r = _ftz(_ftz(x) + _ftz(a[0])) if (typ == "F32" and ftz) else x + a[0]
            elif op == "MIN":
                r = np.minimum(x, a[0])
            elif op == "MAX":
                r = np.maximum(x, a[0])
            elif op == "EXCH":
                r = a[0]
            elif op == "CAS":
                r = np.where(x == a[0], a[1], x)
            elif op == "AND":
                r = x & a[0]
            elif op == "OR":
                r = x | a[0]
            elif op == "XOR":
                r = x ^ a[0]
            elif op == "INC":
                r = np.where(x >= a[0], U32(0), x + U32(1))
            elif op == "DEC":
                r = np.where((x == 0) | (x > a[0]), a[0], x - U32(1))
            else:                          # POPC.INC: every lane adds one
                r = x + U32(1)
        return _words(np.asarray(r, _NP[typ]), words)

    def run(st, on):
        a = addr(st)
        cols = []
        for g in getters:
            v = _vec(g(st), st.lanes)
            cols += list(_words(v.astype(np.uint64 if words == 2 else U32), words))
        vals = np.stack(cols) if cols else np.zeros((0, st.lanes), U32)
        old = st.atomic(space, a, nb, vals, on, ins, fn)
        if dst is not None and dst.n != RZ:
            for j in range(words):
                np.copyto(st.R[dst.n + j], old[j], where=on)
        return a
    writes = _regs(dst, words) if dst is not None else []
    return Handler(run, _regs(mem) + sum((_regs(x, words) for x in srcs), []), writes, data=bool(writes),
                   kind="atom", space=space, nbytes=nb, addr_regs=_regs(mem))


_BUILDERS = {
    "NOP": _nop, "BAR": _nop, "EXIT": _nop, "BRA": _nop, "CALL": _nop, "RET": _nop, "BSSY": _nop, "BSYNC": _nop, "WARPSYNC": _nop,
    "MOV": _mov, "UMOV": _mov, "S2R": _s2r, "S2UR": _s2r, "CS2R": _cs2r, "LDC": _ldc, "ULDC": _ldc,
    "HFMA2": _hfma2, "IADD3": _iadd3, "UIADD3": _iadd3, "VIADD": _viadd,
    "IMAD": _imad, "UIMAD": _imad, "LEA": _lea, "ULEA": _lea, "SHF": _shf, "USHF": _shf,
    "LOP3": _lop3, "ULOP3": _lop3, "PLOP3": _plop3, "UPLOP3": _plop3,
    "ISETP": _isetp, "UISETP": _isetp, "VIMNMX": _vimnmx, "IMNMX": _vimnmx, "SEL": _sel, "USEL": _sel,
    "FFMA": _fp, "FMUL": _fp, "FADD": _fp,
    "LDG": _ld, "LDS": _ld, "STG": _st, "STS": _st, "LDL": _ld, "STL": _st,
    "FSETP": _fsetp, "FSEL": _fsel, "FMNMX": _fmnmx, "MUFU": _mufu, "FCHK": _fchk,
    "I2F": _i2f, "I2FP": _i2f, "F2I": _f2i, "FRND": _frnd, "F2F": _f2f,
    "IABS": _iabs, "POPC": _popc, "BREV": _brev, "FLO": _flo, "PRMT": _prmt,
    "VOTE": _vote, "VOTEU": _vote, "SHFL": _shfl,
    "ATOMG": _atomic, "ATOM": _atomic, "ATOMS": _atomic, "REDG": _atomic, "RED": _atomic,
}
