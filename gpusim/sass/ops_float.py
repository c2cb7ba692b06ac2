"""FP32 opcodes on lane vectors: arithmetic, comparisons, MUFU, FCHK and conversions (IEEE single
precision; see gpusim.sass.semantics)."""
from __future__ import annotations

import numpy as np

from gpusim.sass.operands import (Handler, U32, _BOOL, _ftz, _pwriter, _refuse, _regs, _s, _u, _vec, _writer, freader,
                                  preader, reader)


# FP32: results are data


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
