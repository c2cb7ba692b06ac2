"""What each SASS opcode does, on lane vectors: one handler per instruction, built once.

A handler is a closure over its decoded operands; `handler(st, on)` executes the instruction for
the lanes `on` (the executing lanes whose guard predicate holds) of the CTA state `st`
(`gpusim.sass.state.State`). Integer and predicate results are exact (32-bit wrap, 64-bit pairs,
carries); FP32 results are IEEE single precision (FFMA fused: its product is exact in float64;
.RZ / .RM / .RP round the exact result once; .FTZ flushes subnormal inputs and results; .SAT clamps).
Memory instructions, atomics included, return the byte address of every lane so the caller can
record and cost them.

Executed (`_BUILDERS`; the FP32 handlers in ops_float.py, memory and atomics in ops_memory.py, operand
readers and writers in operands.py): moves, constants, integer arithmetic and logic (IADD3, IMAD, LEA, SHF, LOP3,
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

import numpy as np

from gpusim.sass.listing import Instr
from gpusim.sass.operands import (Handler, RZ, U32, _BOOL, _CMP, _is_pred, _lut, _pwriter, _refuse, _regs, _s, _u,
                                  _writer, _writer64, preader, reader, reader64)
from gpusim.sass.ops_float import _f2f, _f2i, _fchk, _fmnmx, _fp, _frnd, _fsel, _fsetp, _i2f, _mufu
from gpusim.sass.operands import _vec
from gpusim.sass.ops_memory import _atomic, _ld, _st


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
        if st.cmp_log is not None:       # the loop sampler's trial: each lane's a - b (its side of equality)
            st.cmp_log.append(np.where(on, _vec(x - y, st.lanes), 0))
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
