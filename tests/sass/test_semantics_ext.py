"""The SASS emulator's warp-level, FP, special-function, conversion and atomic instructions, lane by
lane against numpy; their counts and costs; and the compiled snippets of tests/sass/snippets.

The first part needs no compiler: single instructions on a `State`, and hand-written listings (the
text cuobjdump prints for sm_90) run as CTAs. The last part compiles the snippets with nvcc and reads
them with cuobjdump, and is skipped where those are missing."""
import functools
import math
import subprocess
import tempfile
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from gpusim.errors import UnsupportedOperation
from gpusim.kernel.opcodes import BASE_PIPE, SPACE_GLOBAL, SPACE_SHARED, TABLE
from gpusim.memory.counters import atomic_sectors, atomic_wavefronts, count_metrics
from gpusim.sass import semantics
from gpusim.sass.compile import find_tool, sass_text
from gpusim.sass.cta import CtaRun, Program
from gpusim.sass.state import Allocation, GlobalMemory, State
from gpusim.sass.frontend import param_words
from gpusim.sass.listing import parse_instruction, parse_listing, parse_operand
from gpusim.trace.trace import Trace

L = 64                      # two warps
F32 = np.float32
BASE = 0x7F00_0000_0000     # where the tests place their buffers
SNIPPETS = Path(__file__).parent / "snippets"


def _bits(x):
    return np.asarray(x, F32).view(np.uint32)


def _f(st, n):
    return st.R[n].view(F32)


def _state(lanes=L, mem=None, shared=0):
    return State(lanes, {0x210: 7}, {}, shared, mem)


def _run(text, st, on=None):
    h = semantics.build(parse_instruction(0, text, 0))
    out = h.run(st, np.ones(st.lanes, bool) if on is None else on)
    return h, out


def listing(fn: str, lines: list[str]) -> str:
    """A cuobjdump-style listing of one function from instruction texts (control words zero)."""
    out = [f"\t\tFunction : {fn}"]
    for i, t in enumerate(lines):
        out.append(f"        /*{16 * i:04x}*/                   {t} ;  /* 0x0000000000000000 */")
        out.append("                                                          /* 0x000fc00000000000 */")
    return "\n".join(out) + "\n"


def run_kernel(text, fn, grid, block, args, arrays, shared=0):
    """Run every CTA of `fn` in full (no loop sampling); arrays are updated in place.
    args: [(name, "i32" | "f32" | "ptr", value or array name)]. Returns (trace, metrics, per opcode)."""
    bases = {name: BASE + (k << 32) for k, name in enumerate(arrays)}
    mem = GlobalMemory([Allocation(n, bases[n], a.nbytes, a.reshape(-1).view("<u4")) for n, a in arrays.items()])
    words = param_words(tuple((n, k) for n, k, _ in args),
                        {n: (bases[v] if k == "ptr" else v) for n, k, v in args})
    prog = Program(fn, parse_listing(text, fn), shared)
    traces = []
    for z in range(grid[2]):
        for y in range(grid[1]):
            for x in range(grid[0]):
                run = CtaRun(prog, block, (x, y, z), grid, words, mem, 1, sample_loops=False).run()
                traces.append(run.trace(len(traces)))
    t = Trace.concat(traces)
    m, per_op = count_metrics(t)
    return t, m, per_op


# ---------------------------------------------------------------- shuffles

def _shfl_ref(x, mode, b, width):
    """CUDA's __shfl_*_sync(full mask, x, b, width) per lane (programming guide)."""
    lane = np.arange(len(x)) % 32
    warp0 = np.arange(len(x)) - lane
    seg0 = lane - lane % width
    bb = np.broadcast_to(b, len(x))
    if mode == "DOWN":
        src = np.where(lane % width + bb < width, lane + bb, lane)
    elif mode == "UP":
        src = np.where(lane % width >= bb, lane - bb, lane)
    elif mode == "BFLY":
        src = np.where((lane ^ bb) < seg0 + width, lane ^ bb, lane)
    else:
        src = seg0 + bb % width
    return x[warp0 + src], src != lane if mode != "IDX" else np.ones(len(x), bool)


@pytest.mark.parametrize("width", [32, 16, 8])
@pytest.mark.parametrize("mode", ["DOWN", "UP", "BFLY", "IDX"])
def test_shfl_matches_cuda_lane_by_lane(mode, width):
    """SHFL with the clamp / segment-mask operand ptxas encodes for a width (UP: (32-w)<<8, the others
    ((32-w)<<8)|0x1f), an immediate or a per-lane register lane operand, and the in-range predicate."""
    rng = np.random.default_rng(7)
    st = _state()
    st.R[2] = rng.integers(0, 2 ** 32, L, dtype=np.uint64).astype(np.uint32)
    c = (32 - width) << 8 | (0 if mode == "UP" else 0x1F)
    for b in ([3, 5, 9, 1] if mode != "IDX" else [7, 13]):
        _run(f"SHFL.{mode} P1, R3, R2, 0x{b:x}, 0x{c:x}", st)
        want, ok = _shfl_ref(st.R[2], mode, b, width)
        assert st.R[3].tolist() == want.tolist(), (mode, width, b)
        if mode != "IDX":
            assert st.P[1].tolist() == ok.tolist()
    st.R[4] = rng.integers(0, 32, L).astype(np.uint32)          # a register lane operand, per lane
    _run(f"SHFL.{mode} PT, R5, R2, R4, 0x{c:x}", st)
    want, _ = _shfl_ref(st.R[2], mode, st.R[4].astype(np.int64), width)
    assert st.R[5].tolist() == want.tolist()


def test_shfl_reads_an_inactive_source_lane():
    """Only the even lanes execute; odd source lanes are read anyway (gpusim's documented choice), and
    the odd lanes' destinations keep their values."""
    st = _state()
    st.R[2] = np.arange(L, dtype=np.uint32) + 100
    st.R[3] = 7
    on = np.arange(L) % 2 == 0
    _run("SHFL.DOWN PT, R3, R2, 0x1, 0x1f", st, on)
    lane = np.arange(L) % 32
    want = np.where(on, np.where(lane < 31, st.R[2] + 1, st.R[2]), 7)
    assert st.R[3].tolist() == want.tolist()


# ---------------------------------------------------------------- FP32 compares, min / max, select

SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 3.0, 3.0], F32)


def _cmp_ref(a, b, cmp):
    un = math.isnan(a) or math.isnan(b)
    base = cmp.rstrip("U") if cmp not in ("NUM", "NAN") else cmp
    if cmp == "NUM":
        return not un
    if cmp == "NAN":
        return un
    if un:
        return cmp.endswith("U")
    return {"LT": a < b, "LE": a <= b, "GT": a > b, "GE": a >= b, "EQ": a == b, "NE": a != b}[base]


@pytest.mark.parametrize("cmp", ["LT", "LE", "GT", "GE", "EQ", "NE", "LTU", "LEU", "GTU", "GEU", "EQU", "NEU",
                                 "NUM", "NAN"])
def test_fsetp_every_comparison(cmp):
    """Ordered comparisons are false on a NaN, unordered (U) true; Pq gets the negation; the AND / OR /
    XOR with the predicate source; .FTZ compares subnormals as zeros."""
    a = np.repeat(SPECIAL, len(SPECIAL))
    b = np.tile(SPECIAL, len(SPECIAL))
    st = _state(len(a))
    st.R[2], st.R[3] = _bits(a), _bits(b)
    st.P[2] = np.arange(len(a)) % 3 == 0
    _run(f"FSETP.{cmp}.AND P0, P1, R2, R3, PT", st)
    want = np.array([_cmp_ref(float(x), float(y), cmp) for x, y in zip(a, b)])
    assert st.P[0].tolist() == want.tolist() and st.P[1].tolist() == (~want).tolist()
    _run(f"FSETP.{cmp}.OR P0, P1, R2, R3, P2", st)
    assert st.P[0].tolist() == (want | st.P[2]).tolist() and st.P[1].tolist() == (~want | st.P[2]).tolist()
    _run(f"FSETP.{cmp}.XOR P0, PT, R2, R3, !P2", st)
    assert st.P[0].tolist() == (want ^ ~st.P[2]).tolist()
    flushed = np.where(np.abs(a) < 1.2e-38, F32(0), a), np.where(np.abs(b) < 1.2e-38, F32(0), b)
    _run(f"FSETP.{cmp}.FTZ.AND P0, PT, R2, R3, PT", st)
    want = [_cmp_ref(float(x), float(y), cmp) for x, y in zip(*flushed)]
    assert st.P[0].tolist() == want


def test_fsetp_operand_forms_from_ptxas():
    """|R| with .reuse, a decimal immediate (a float, not a bit pattern), +INF, a negated register."""
    st = _state(4)
    st.R[3] = _bits([-2.0, 1e-39, -np.inf, 0.5])
    _run("FSETP.GEU.AND P0, PT, |R3|.reuse, 1.175494350822287508e-38, PT", st)
    assert st.P[0].tolist() == [True, False, True, True]
    _run("FSETP.GTU.FTZ.AND P0, PT, |R3|, +INF , PT", st)
    assert st.P[0].tolist() == [False] * 4
    _run("FSETP.GT.AND P0, PT, -R3, 1, PT", st)                    # "1" is 1.0f
    assert st.P[0].tolist() == [True, False, True, False]
    _run("FSETP.GEU.AND P1, PT, R3, -126, PT", st)
    assert st.P[1].tolist() == [True, True, False, True]


def test_fmnmx_ieee_minnum_maxnum_and_fsel():
    """P chooses min (PT) or max (!PT); a NaN loses to a number, two NaNs give 0x7fffffff; -0 < +0."""
    a = np.array([1.0, np.nan, np.nan, -0.0, 0.0, -np.inf, 2.0, 1e-40], F32)
    b = np.array([2.0, 3.0, np.nan, 0.0, -0.0, 5.0, np.nan, -1e-40], F32)
    st = _state(len(a))
    st.R[2], st.R[3] = _bits(a), _bits(b)
    _run("FMNMX R4, R2, R3, PT", st)
    _run("FMNMX R5, R2, R3, !PT", st)
    mn = [1.0, 3.0, None, -0.0, -0.0, -np.inf, 2.0, -1e-40]
    mx = [2.0, 3.0, None, 0.0, 0.0, 5.0, 2.0, 1e-40]
    for got, want in ((st.R[4], mn), (st.R[5], mx)):
        for g, w in zip(got, want):
            if w is None:
                assert g == 0x7FFFFFFF
            else:
                assert g == _bits(F32(w)), (hex(g), w)
    _run("FMNMX.FTZ R6, R2, R3, PT", st)
    assert st.R[6][7] == _bits(F32(-0.0))                           # both flushed: -0 is the min
    st.P[0] = [True, False] * 4
    _run("FSEL R7, R2, -R3, P0", st)
    want = np.where(st.P[0], a, -b)
    assert _bits(want).tolist() == st.R[7].tolist()


# ---------------------------------------------------------------- rounding modes, FTZ, SAT

def _round_exact(q: Fraction, mode: str) -> F32:
    """The float32 of an exact rational in a rounding mode (normal range)."""
    f = F32(float(q))                        # float() rounds q to the nearest double, then to float
    lo = f if Fraction(float(f)) <= q else np.nextafter(f, F32(-np.inf))
    hi = lo if Fraction(float(lo)) == q else np.nextafter(lo, F32(np.inf))
    if mode == "RM":
        return lo
    if mode == "RP":
        return hi
    if mode == "RZ":
        return lo if q >= 0 else hi
    dl, dh = q - Fraction(float(lo)), Fraction(float(hi)) - q
    if dl != dh:
        return lo if dl < dh else hi
    return lo if int(lo.view(np.uint32)) % 2 == 0 else hi


@pytest.mark.parametrize("mode", ["RN", "RZ", "RM", "RP"])
def test_directed_rounding_is_exact(mode):
    """FFMA / FADD / FMUL .RZ .RM .RP (the IEEE slow paths use them) round the exact result once."""
    rng = np.random.default_rng(11)
    n = 256
    a = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(F32)
    b = (rng.standard_normal(n) * 2.0 ** rng.integers(-20, 20, n)).astype(F32)
    c = (rng.standard_normal(n) * 2.0 ** rng.integers(-40, 40, n)).astype(F32)
    c[:32] = -(a[:32].astype(np.float64) * b[:32]).astype(F32)            # near-cancellation
    st = _state(n)
    st.R[2], st.R[3], st.R[4] = _bits(a), _bits(b), _bits(c)
    sfx = "" if mode == "RN" else "." + mode
    for text, fn in ((f"FFMA{sfx} R5, R2, R3, R4", lambda x, y, z: x * y + z),
                     (f"FADD{sfx} R5, R2, R4", lambda x, y, z: x + z),
                     (f"FMUL{sfx} R5, R2, R3", lambda x, y, z: x * y)):
        _run(text, st)
        want = [_round_exact(fn(Fraction(float(x)), Fraction(float(y)), Fraction(float(z))), mode)
                for x, y, z in zip(a, b, c)]
        got = _f(st, 5)
        if text.startswith("FFMA") and mode == "RN":     # the float64 sum may round twice: allow 1 ulp
            assert np.all(np.abs(got.view(np.int32).astype(np.int64) - _bits(want).view(np.int32)) <= 1)
        else:
            assert got.tolist() == [float(w) for w in want], text


def test_ftz_and_sat():
    st = _state(4)
    st.R[2] = _bits([1e-39, 3.0, -1e-39, np.nan])
    st.R[3] = _bits([1.0, 0.5, 1.0, 1.0])
    _run("FMUL.FTZ R4, R2, R3", st)
    assert _bits(_f(st, 4)).tolist() == _bits([0.0, 1.5, -0.0, np.nan]).tolist()
    _run("FADD.SAT R5, RZ, R2", st)
    assert _f(st, 5).tolist() == [F32(1e-39), 1.0, 0.0, 0.0]
    _run("FADD.FTZ R6, -R3, -RZ", st)                                   # ptxas's negation: -x + -0
    assert _f(st, 6).tolist() == [-1.0, -0.5, -1.0, -1.0]


# ---------------------------------------------------------------- MUFU, FCHK

def test_mufu_is_the_rounded_exact_function():
    x = np.array([0.5, 3.0, 100.0, 1e-3, 7.25, -2.0, 0.0, -0.0], F32)
    st = _state(len(x))
    st.R[2] = _bits(x)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        cases = {"EX2": np.exp2(x64), "LG2": np.log2(x64), "RCP": 1 / x64, "RSQ": 1 / np.sqrt(x64),
                 "SQRT": np.sqrt(x64), "SIN": np.sin(2 * np.pi * x64), "COS": np.cos(2 * np.pi * x64)}
    for fn, want in cases.items():
        _run(f"MUFU.{fn} R3, R2", st)
        w = want.astype(F32)
        w = np.where(np.abs(w) < 1.1754944e-38, np.copysign(F32(0), w), w)
        assert np.array_equal(_bits(_f(st, 3)), _bits(w)) or np.allclose(_f(st, 3), w, atol=1e-6, equal_nan=True), fn
    st.R[2] = _bits([-130.0, -100.0, 1e-39, -1e-39, np.inf, np.nan, 2.0 ** 127, 1.0])
    _run("MUFU.EX2 R3, R2", st)                    # subnormal results flushed (ptxas scales below -126)
    assert _f(st, 3)[0] == 0 and _f(st, 3)[1] == F32(2.0 ** -100)
    _run("MUFU.RCP R3, R2", st)                    # subnormal input read as zero: 1/+-0 = +-inf
    assert _f(st, 3)[2:5].tolist() == [np.inf, -np.inf, 0.0] and _f(st, 3)[6] == 0.0
    _run("MUFU.RSQ R4, -QNAN", st)
    assert np.isnan(_f(st, 4)).all()


def test_fchk_flags_the_operands_the_fast_division_cannot_take():
    a = np.array([1.0, 1.0, 1.0, np.inf, 1e-39, 3.0, 2.0 ** 100, 1.0, 0.0], F32)
    b = np.array([3.0, 0.0, 1e-39, 2.0, 1.0, np.nan, 2.0 ** -100, 2.0 ** 127, 5.0], F32)
    st = _state(len(a))
    st.R[2], st.R[3] = _bits(a), _bits(b)
    _run("FCHK P0, R2, R3", st)
    assert st.P[0].tolist() == [False, True, True, True, True, True, True, True, False]


# ---------------------------------------------------------------- conversions and bit operations

def test_int_float_conversions():
    k = np.array([0, 1, -1, 2 ** 31 - 1, -2 ** 31, 16777217, -16777219, 123456789], np.int64)
    st = _state(len(k))
    st.R[2] = (k & 0xFFFFFFFF).astype(np.uint32)
    _run("I2FP.F32.S32 R3, R2", st)
    assert _f(st, 3).tolist() == k.astype(F32).tolist()
    _run("I2FP.F32.U32 R3, R2", st)
    assert _f(st, 3).tolist() == (k & 0xFFFFFFFF).astype(F32).tolist()
    _run("I2FP.F32.S32.RZ R3, R2", st)
    want = [float(_round_exact(Fraction(int(q)), "RZ")) for q in k]
    assert _f(st, 3).tolist() == want
    x = np.array([2.5, -2.5, 3.5, -0.7, 3e9, -3e9, np.nan, 1e-39], F32)
    st.R[4] = _bits(x)
    for mods, fn in (("NTZ", np.rint), ("TRUNC.NTZ", np.trunc), ("FLOOR.NTZ", np.floor), ("CEIL.NTZ", np.ceil)):
        _run(f"F2I.{mods} R5, R4", st)
        want = np.where(np.isnan(x), 0, np.clip(fn(x.astype(np.float64)), -2 ** 31, 2 ** 31 - 1))
        assert st.R[5].view(np.int32).tolist() == want.astype(np.int64).tolist(), mods
    _run("F2I.U32.TRUNC.NTZ R5, R4", st)
    assert st.R[5].tolist() == [2, 0, 3, 0, 3000000000, 0, 0, 0]
    _run("FRND.FLOOR R6, R4", st)
    assert _f(st, 6)[:4].tolist() == [2.0, -3.0, 3.0, -1.0]
    _run("FRND R6, R4", st)                                             # ties to even
    assert _f(st, 6)[:4].tolist() == [2.0, -2.0, 4.0, -1.0]


def test_integer_bit_operations():
    rng = np.random.default_rng(3)
    v = rng.integers(-2 ** 31, 2 ** 31, 32, dtype=np.int64)
    v[:4] = [0, -1, 1, -2 ** 31]
    u = [int(x) & 0xFFFFFFFF for x in v]
    st = _state(32)
    st.R[2] = np.array(u, np.uint32)
    st.R[3] = rng.integers(0, 2 ** 32, 32, dtype=np.uint64).astype(np.uint32)
    _run("IABS R4, R2", st)
    assert st.R[4].tolist() == [abs(int(x)) & 0xFFFFFFFF for x in v]
    _run("POPC R4, R2", st)
    assert st.R[4].tolist() == [bin(x).count("1") for x in u]
    _run("BREV R4, R2", st)
    assert st.R[4].tolist() == [int(format(x, "032b")[::-1], 2) for x in u]
    _run("FLO.U32 R4, R2", st)
    assert st.R[4].tolist() == [(x.bit_length() - 1) & 0xFFFFFFFF for x in u]
    _run("FLO.U32.SH R4, R2", st)
    assert st.R[4].tolist() == [(32 - x.bit_length()) if x else 0xFFFFFFFF for x in u]
    _run("FLO.S32 R4, R2", st)
    assert st.R[4].tolist() == [((int(x) if x >= 0 else ~int(x)).bit_length() - 1) & 0xFFFFFFFF for x in v]
    _run("PRMT R4, R2, 0x7610, R3", st)           # low half of R2, high half of R3 (the f16x2 packing)
    assert st.R[4].tolist() == [(x & 0xFFFF) | (int(y) & 0xFFFF0000) for x, y in zip(u, st.R[3])]
    _run("PRMT R4, R2, 0x8880, RZ", st)           # sign-replicating selector nibbles: sext of byte 0
    assert st.R[4].tolist() == [(x & 0xFF) | (0xFFFFFF00 if x & 0x80 else 0) for x in u]


def test_vote_over_the_lanes_that_execute():
    st = _state()
    rng = np.random.default_rng(5)
    st.P[0] = rng.random(L) < 0.7
    st.P[0][32:] = True
    on = np.ones(L, bool)
    on[5] = on[40] = False                          # lanes that do not execute are not asked
    st.P[0][40] = False
    _run("VOTE.ALL P1, P0", st, on)
    _run("VOTE.ANY R3, P2, P0", st, on)
    ballot = [sum(1 << i for i in range(32) if st.P[0][w * 32 + i] and on[w * 32 + i]) for w in range(2)]
    assert st.R[3][on].tolist() == [ballot[w] for w in range(2) for i in range(32) if on[w * 32 + i]]
    assert st.P[1][on].tolist() == [w == 1 for w in range(2) for i in range(32) if on[w * 32 + i]]
    assert st.P[2][on].all()
    _run("VOTE.ANY R4, PT, PT", st, on)            # __activemask
    assert st.R[4][0] == 0xFFFFFFFF & ~(1 << 5)


# ---------------------------------------------------------------- atomics

def _gmem(n_words=256):
    g = np.zeros(n_words, np.uint32)
    return g, GlobalMemory([Allocation("g", BASE, g.nbytes, g)])


def _addr_regs(st, byte_offsets):
    a = BASE + np.asarray(byte_offsets, np.int64)
    st.R[2] = (a & 0xFFFFFFFF).astype(np.uint32)
    st.R[3] = (a >> 32).astype(np.uint32)


def test_float_atomic_add_applies_lanes_in_order():
    """ATOMG.E.ADD.F32.FTZ.RN: every lane on one word; each gets the running sum before its own add,
    rounded in float32 after each lane (CTA thread order)."""
    g, mem = _gmem()
    st = _state(mem=mem)
    _addr_regs(st, np.zeros(L))
    v = np.random.default_rng(2).standard_normal(L).astype(F32)
    st.R[4] = _bits(v)
    on = np.arange(L) % 3 != 1
    h, addr = _run("ATOMG.E.ADD.F32.FTZ.RN.STRONG.GPU PT, R5, desc[UR4][R2.64], R4", st, on)
    acc, olds = F32(0), []
    for i in np.flatnonzero(on):
        olds.append(acc)
        acc = F32(acc + v[i])
    assert _f(st, 5)[on].tolist() == olds and g[:1].view(F32)[0] == acc
    assert h.kind == "atom" and h.data and h.nbytes == 4 and h.space == "global"
    assert (addr == BASE).all()
    h, _ = _run("REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64+0x4], R4", st)
    assert g[1:2].view(F32)[0] == functools.reduce(lambda s, x: F32(s + x), v, F32(0)) and not h.writes


@pytest.mark.parametrize("op,init,vals,want_old,want_mem", [
    ("ADD.STRONG.GPU", 5, [1, 2, 3], [5, 6, 8], 11),
    ("MIN.S32.STRONG.GPU", 5, [7, -2, 3], [5, 5, 0xFFFFFFFE], 0xFFFFFFFE),
    ("MAX.STRONG.GPU", 5, [7, 0xFFFFFFFE, 3], [5, 7, 0xFFFFFFFE], 0xFFFFFFFE),     # U32
    ("EXCH.STRONG.GPU", 5, [7, 8, 9], [5, 7, 8], 9),
    ("AND.STRONG.GPU", 0xFF, [0xF0, 0x3C, 1], [0xFF, 0xF0, 0x30], 0),
    ("OR.STRONG.GPU", 1, [2, 4, 8], [1, 3, 7], 15),
    ("XOR.STRONG.GPU", 1, [3, 3, 5], [1, 2, 1], 4),
    ("INC.STRONG.GPU", 1, [2, 2, 2], [1, 2, 0], 1),              # atomicInc: wraps to 0 past the bound
    ("DEC.STRONG.GPU", 1, [5, 5, 5], [1, 0, 5], 4),              # atomicDec: 0 (or above the bound) -> bound
])
def test_integer_atomics(op, init, vals, want_old, want_mem):
    g, mem = _gmem()
    g[0] = init
    st = _state(3, mem)
    _addr_regs(st, [0, 0, 0])
    st.R[4] = np.array(vals, np.int64) & 0xFFFFFFFF
    _run(f"ATOMG.E.{op} PT, R5, desc[UR4][R2.64], R4", st)
    assert st.R[5].tolist() == want_old and g[0] == want_mem


def test_cas_and_64_bit_atomics():
    g, mem = _gmem()
    g[0] = 10
    st = _state(3, mem)
    _addr_regs(st, [0, 0, 0])
    st.R[4] = [10, 10, 11]                         # compare
    st.R[5] = [11, 12, 13]                         # swap in
    _run("ATOMG.E.CAS.STRONG.GPU PT, R6, [R2+0x0], R4, R5", st)   # printed without .64: .E says 64-bit
    assert st.R[6].tolist() == [10, 11, 11] and g[0] == 13
    _addr_regs(st, [8, 8, 8])
    g[2:4] = [0xFFFFFFFF, 0]
    st.R[8], st.R[9] = [1, 2, 3], [0, 0, 1]
    _run("ATOMG.E.ADD.64.STRONG.GPU PT, R10, desc[UR4][R2.64], R8", st)
    olds = (st.R[10].astype(np.int64) | (st.R[11].astype(np.int64) << 32)).tolist()
    assert olds == [0xFFFFFFFF, 0x1_0000_0000, 0x1_0000_0002]
    assert int(g[2]) | (int(g[3]) << 32) == 0x2_0000_0005


def test_shared_atomics_and_the_refused_cas_loop():
    st = _state(L, shared=256)
    keys = np.random.default_rng(4).integers(0, 16, L)
    st.R[6] = (0x400 + 4 * keys).astype(np.uint32)
    _run("ATOMS.POPC.INC.32 RZ, [R6]", st)
    assert st.shared[0x100:0x110].tolist() == np.bincount(keys, minlength=16).tolist()
    st.R[7] = np.arange(L, dtype=np.uint32)
    _run("ATOMS.ADD R8, [R6+0x40], R7", st)
    sums = np.zeros(16, np.int64)
    for i, k in enumerate(keys):                   # old values: the lanes before, in lane order
        assert st.R[8][i] == sums[k]
        sums[k] += i
    assert st.shared[0x110:0x120].tolist() == sums.tolist()
    with pytest.raises(UnsupportedOperation, match="ATOMS.CAST.SPIN.*retry loop"):
        semantics.build(parse_instruction(0x100, "ATOMS.CAST.SPIN R5, [R0], R4, R5", 0))
    with pytest.raises(Exception, match="outside the CTA's 256 B"):
        st.R[6] = 0x400 + 256
        _run("ATOMS.ADD RZ, [R6], R7", st)


def test_atomic_opcodes_in_the_table():
    """Atomics are memory opcodes (space, bytes, is_store as a store for the caches) marked by
    atomics(); arrays() keeps its 5-tuple; only the SASS emulator (atomic_ok) interns a new one."""
    with pytest.raises(UnsupportedOperation, match="atomics need an address"):
        TABLE.id("ATOMS.MIN.S32")
    i = TABLE.id("REDG.E.ADD.64.STRONG.GPU", atomic_ok=True)
    j = TABLE.id("ATOMS.ADD", atomic_ok=True)
    assert TABLE.id("ATOMS.ADD") == j                 # interned: its id, to everyone
    op = TABLE[i]
    assert (op.atomic, op.space, op.bytes_per_lane, op.is_store, op.pipe) == ("red", SPACE_GLOBAL, 8, True, "lsu")
    assert (TABLE[j].atomic, TABLE[j].space) == ("atom", SPACE_SHARED)
    assert len(TABLE.arrays()) == 5 and TABLE.atomics()[i] == 1 and TABLE.atomics()[j] == 2
    for b, pipe in (("SHFL", "lsu"), ("MUFU", "xu"), ("FSETP", "alu"), ("FMNMX", "alu"), ("FSEL", "alu"),
                    ("F2I", "xu"), ("I2FP", "alu"), ("POPC", "xu"), ("BREV", "xu"), ("VOTE", "alu")):
        assert BASE_PIPE[b] == pipe


def test_atomic_costs_reproduce_the_h200():
    """Seven lane patterns measured with ncu (tests/sass/snippets/pipes_micro.cu): lanes on one address
    each cost a sector (global) or a bank slot (shared): no merging as loads do."""
    pats = np.array([[i // 16 for i in range(32)], [(i % 2) * 8 for i in range(32)], [i // 2 for i in range(32)],
                     [i if i < 8 else 8 for i in range(32)], [0, 0, 1, 33] + list(range(4, 32)),
                     list(range(32)), [(i % 2) * 32 for i in range(32)]], np.int64)
    assert atomic_sectors(4 * pats).tolist() == [16, 32, 4, 25, 6, 4, 32]
    assert atomic_sectors(8 * pats).tolist() == [16, 32, 8, 26, 10, 8, 32]
    wf, ideal = atomic_wavefronts(4 * pats, 4)
    assert wf.tolist() == [16, 16, 2, 24, 2, 1, 32] and ideal.tolist() == [1] * 7
    one = np.full((1, 32), -1)
    one[0, 0] = 64
    assert atomic_sectors(one).tolist() == [1] and atomic_wavefronts(one, 4)[0].tolist() == [1]


def test_handlers_mark_data():
    """The loop sampler must never extrapolate what these write."""
    for text in ("SHFL.BFLY PT, R3, R2, 0x1, 0x1f", "MUFU.EX2 R3, R2", "FSETP.GT.AND P0, PT, R2, R3, PT",
                 "FMNMX R3, R2, R4, !PT", "FSEL R3, R2, R4, P0", "FCHK P0, R2, R3",
                 "ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R4", "ATOMS.ADD R8, [R6], R7"):
        assert semantics.build(parse_instruction(0, text, 0)).data, text


# ---------------------------------------------------------------- listings run as CTAs

# cuobjdump -sass of reduce_shfl_atomic (tests/sass/snippets/warp_ops.cu), nvcc 13.0 -arch=sm_90 -O3
REDUCE = listing("reduce_shfl_atomic", [
    "LDC R1, c[0x0][0x28]", "S2R R5, SR_CTAID.X", "ULDC UR4, c[0x0][0x0]", "BSSY B0, 0xf0",
    "HFMA2.MMA R2, -RZ, RZ, 0, 0", "S2R R6, SR_TID.X", "IMAD R5, R5, UR4, R6", "ULDC UR4, c[0x0][0x220]",
    "ISETP.GE.AND P0, PT, R5, UR4, PT", "ULDC.64 UR4, c[0x0][0x208]", "@P0 BRA 0xe0", "LDC.64 R2, c[0x0][0x210]",
    "IMAD.WIDE R2, R5, 0x4, R2", "LDG.E R2, desc[UR4][R2.64]", "BSYNC B0", "SHFL.DOWN PT, R3, R2, 0x10, 0x1f",
    "LOP3.LUT P0, RZ, R6, 0x1f, RZ, 0xc0, !PT", "FADD R3, R3, R2", "SHFL.DOWN PT, R0, R3, 0x8, 0x1f",
    "FADD R0, R3, R0", "SHFL.DOWN PT, R5, R0, 0x4, 0x1f", "FADD R5, R0, R5", "SHFL.DOWN PT, R4, R5, 0x2, 0x1f",
    "FADD R4, R5, R4", "SHFL.DOWN PT, R7, R4, 0x1, 0x1f", "@P0 EXIT", "LDC.64 R2, c[0x0][0x218]",
    "FADD R7, R4, R7", "REDG.E.ADD.F32.FTZ.RN.STRONG.GPU desc[UR4][R2.64], R7", "EXIT", "BRA 0x1e0"])


def _warp_tree_sum(v):
    """lane 0's value after the shuffle-down tree of one warp (float32 at each step)."""
    v = v.astype(F32).copy()
    for o in (16, 8, 4, 2, 1):
        v = (v + np.concatenate([v[o:], v[32 - o:]])).astype(F32)   # out of range: a lane's own value
    return v[0]


def test_warp_reduction_with_a_float_atomic():
    """Values: the shuffle tree of each warp, then one float atomicAdd per warp in CTA / warp order.
    Counts: five SHFL per warp, one REDG per warp (lane 0: one request, one sector), none as stores."""
    n = 300
    x = np.random.default_rng(1).standard_normal(512).astype(F32)
    out = np.zeros(1, F32)
    t, m, per = run_kernel(REDUCE, "reduce_shfl_atomic", (2, 1, 1), (256, 1, 1),
                           [("x", "ptr", "x"), ("out", "ptr", "out"), ("n", "i32", n)], {"x": x, "out": out})
    xs = np.where(np.arange(512) < n, x, F32(0))
    acc = F32(0)
    for w in range(16):
        acc = F32(acc + _warp_tree_sum(xs[32 * w:32 * w + 32]))
    assert out[0] == acc
    assert per["SHFL.DOWN"] == 5 * 16 and per["REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"] == 16
    assert m["smsp__inst_executed_op_global_red.sum"] == m["smsp__sass_inst_executed_op_global_red.sum"] == 16
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] == 16
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] == 16
    assert m["smsp__sass_inst_executed_op_global_st.sum"] == 0
    t.rows["sectors"][TABLE.atomics()[t.rows["op"].astype(np.int64)] != 0] = 0   # as a front-end that
    # costed its atomics by the generic rules would leave them: counted alike
    assert count_metrics(t)[0] == m
    # the LDG runs in the warps with a lane below n: all 8 of CTA 0, 2 of CTA 1
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 10 and "op_atom" not in "".join(m)


def test_metrics_without_atomics_are_unchanged():
    """A trace with no atomic: no atomic metric at all (the existing outputs keep their keys)."""
    text = listing("store", ["S2R R0, SR_TID.X", "LDC.64 R2, c[0x0][0x210]", "IMAD.WIDE R2, R0, 0x4, R2",
                             "STG.E desc[UR4][R2.64], R0", "EXIT", "BRA 0x50"])
    y = np.zeros(64, np.uint32)
    _, m, _ = run_kernel(text, "store", (1, 1, 1), (64, 1, 1), [("y", "ptr", "y")], {"y": y})
    assert y.tolist() == list(range(64))
    assert not [k for k in m if "op_atom" in k or "op_red" in k or "global_red" in k]
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"] == 8


def test_call_and_ret_reconverge_after_the_subroutine():
    """CALL.REL.NOINC / RET.REL.NODEC (the IEEE slow paths): the odd lanes run a subroutine placed
    after EXIT while the even lanes wait at the join; the code after it runs once per warp."""
    text = listing("callret", [
        "S2R R0, SR_TID.X",                              # 0x00
        "LOP3.LUT P0, RZ, R0, 0x1, RZ, 0xc0, !PT",       # 0x10 P0: odd lane
        "BSSY B0, 0x80",                                 # 0x20
        "@!P0 BRA 0x70",                                 # 0x30
        "MOV R10, 0x60",                                 # 0x40 return address
        "CALL.REL.NOINC 0xd0",                           # 0x50
        "BRA 0x80",                                      # 0x60
        "IADD3 R1, R0, 0x64, RZ",                        # 0x70 even: tid + 100
        "BSYNC B0",                                      # 0x80
        "LDC.64 R2, c[0x0][0x210]",                      # 0x90
        "IMAD.WIDE R2, R0, 0x4, R2",                     # 0xa0
        "STG.E desc[UR4][R2.64], R1",                    # 0xb0
        "EXIT",                                          # 0xc0
        "IADD3 R1, R0, 0x3e8, RZ",                       # 0xd0 odd: tid + 1000
        "@P0 BRA !P0, 0xf0",                             # 0xe0 never taken (P0 and !P0)
        "MOV R11, RZ",                                   # 0xf0
        "RET.REL.NODEC R10 0x0",                         # 0x100
        "BRA 0x110"])
    y = np.zeros(64, np.uint32)
    _, m, per = run_kernel(text, "callret", (1, 1, 1), (64, 1, 1), [("y", "ptr", "y")], {"y": y})
    tid = np.arange(64)
    assert y.tolist() == np.where(tid % 2, tid + 1000, tid + 100).tolist()
    assert per["STG.E"] == 2 and per["CALL.REL.NOINC"] == 2 and per["RET.REL.NODEC"] == 2
    assert per["BSYNC"] == 2 and per["EXIT"] == 2


def test_loop_sampler_treats_shuffled_values_as_data():
    """A loop whose counter feeds a SHFL: the shuffled register is data (never stepped), the loop is
    still sampled on its counter, and the sampled run's counts equal the full run's."""
    text = listing("shflloop", [
        "S2R R0, SR_TID.X", "MOV R4, RZ", "MOV R5, RZ", "ULDC UR4, c[0x0][0x210]",
        "SHFL.BFLY PT, R6, R4, 0x1, 0x1f",               # 0x40 loop header
        "IADD3 R5, R5, R6, RZ",
        "IADD3 R4, R4, 0x1, RZ",
        "ISETP.NE.AND P0, PT, R4, UR4, PT",
        "@P0 BRA 0x40",
        "EXIT", "BRA 0xa0"])
    prog = Program("shflloop", parse_listing(text, "shflloop"), 0)
    counts, rows = [], []
    for sample in (False, True):
        run = CtaRun(prog, (32, 1, 1), (0, 0, 0), (1, 1, 1), {0x210: 400}, GlobalMemory([]), 1, sample).run()
        t = run.trace(0)
        counts.append(int(t.rows["weight"].sum()))
        rows.append(len(t))
        assert ("R", 6) in run.taint and ("R", 5) in run.taint and ("R", 4) not in run.taint
    assert counts[0] == counts[1] == 4 + 400 * 5 + 1 and rows[1] < rows[0] / 10


def test_listing_operand_forms():
    assert parse_operand("c[0x0][RZ]").offset == 0
    r = parse_operand("|R3|.reuse")
    assert (r.kind, r.n, r.abs) == ("R", 3, True)
    ins = parse_instruction(0x980, "RET.REL.NODEC R10 0x0", 0)
    assert [(o.kind, o.n) for o in ins.operands] == [("R", 10), ("imm", 0)]
    ins = parse_instruction(0, "ATOMG.E.CAS.STRONG.GPU PT, R0, [R8+0x100], R10, R11", 0)
    assert [o.kind for o in ins.operands] == ["P", "R", "mem", "R", "R"]


# ---------------------------------------------------------------- compiled snippets

HAVE_TOOLS = all(find_tool(t) for t in ("nvcc", "cuobjdump", "nvdisasm"))
needs_tools = pytest.mark.skipif(not HAVE_TOOLS, reason="needs nvcc, cuobjdump and nvdisasm")


@functools.lru_cache(maxsize=None)
def _sass(snippet: str) -> str:
    with tempfile.TemporaryDirectory() as d:
        cubin = Path(d) / (snippet + ".cubin")
        subprocess.run([find_tool("nvcc"), "-arch=sm_90", "-O3", "-cubin", "-o", str(cubin),
                        str(SNIPPETS / f"{snippet}.cu")], check=True, capture_output=True)
        return sass_text(cubin)


def _p(*names):
    return [(n, "ptr", n) for n in names]


@needs_tools
def test_compiled_shuffles_and_softmax():
    rng = np.random.default_rng(8)
    text = _sass("warp_ops")
    x = rng.standard_normal(128).astype(F32)
    y = np.zeros(512, F32)
    run_kernel(text, "shuffles", (2, 1, 1), (64, 1, 1), _p("x", "y") + [("l", "i32", 7)], {"x": x, "y": y})
    i = np.arange(128)
    lane, w0 = i % 32, i - i % 32
    want = np.stack([x[w0 + np.where(lane + 3 <= 31, lane + 3, lane)], x[w0 + np.where(lane >= 5, lane - 5, lane)],
                     x[w0 + (lane ^ 9)], x[w0 + 7]], 1)
    assert np.array_equal(y.reshape(-1, 4), want)
    R, C = 3, 200
    x = rng.standard_normal(R * C).astype(F32)
    y = np.zeros_like(x)
    _, m, per = run_kernel(text, "softmax_row", (R, 1, 1), (32, 1, 1), _p("x", "y") + [("c", "i32", C)],
                           {"x": x, "y": y})
    X = x.reshape(R, C).astype(np.float64)
    ref = np.exp(X - X.max(1, keepdims=True))
    ref /= ref.sum(1, keepdims=True)
    assert np.abs(y.reshape(R, C) - ref).max() < 1e-6          # MUFU values: not bit-exact
    assert per["SHFL.BFLY"] == 10 * R and per["MUFU.RCP"] == R and per["FMNMX"] >= 5 * R


@needs_tools
def test_compiled_reductions_and_atomics():
    rng = np.random.default_rng(9)
    text = _sass("warp_ops")
    x = rng.standard_normal(1024).astype(F32)
    out, old = np.zeros(1, F32), np.zeros(4, F32)
    _, m, _ = run_kernel(text, "reduce_smem_atom", (4, 1, 1), (256, 1, 1),
                         _p("x", "out", "old") + [("n", "i32", 1000)], {"x": x, "out": out, "old": old}, shared=1024)
    blocks = np.where(np.arange(1024) < 1000, x, 0).reshape(4, 256).sum(1)
    assert old[0] == 0 and np.allclose(np.diff(np.r_[old, out]), blocks, atol=1e-4)   # CTA order
    assert m["smsp__sass_inst_executed_op_global_atom.sum"] == 4 and m["l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"] == 4
    xi = rng.integers(0, 1000, 128).astype(np.int32)
    hist, ret = np.zeros(64, np.int32), np.zeros(128, np.int32)
    _, m, per = run_kernel(text, "int_atomics", (1, 1, 1), (128, 1, 1), _p("x", "h", "r"),
                           {"x": xi, "h": hist, "r": ret}, shared=128)
    assert hist[:32].tolist() == np.bincount(xi & 31, minlength=32).tolist()
    assert hist[32:36].tolist() == [sum(t for t in range(128) if t % 4 == k) for k in range(4)]
    assert ret.tolist() == [sum(s for s in range(t) if s % 4 == t % 4) for t in range(128)]
    assert per["ATOMS.POPC.INC.32"] == 4 and m["smsp__inst_executed_op_shared_atom.sum"] == 4
    # 128 lanes on 4 words, 32 on each word of a warp's sector: 32 sectors an ATOMG
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum"] == 4 * 8
    with pytest.raises(UnsupportedOperation, match="CAST.SPIN"):
        run_kernel(text, "smem_float_atomic", (1, 1, 1), (64, 1, 1), _p("x", "y"),
                   {"x": np.ones(64, F32), "y": np.zeros(1, F32)}, shared=4)
    R, C = 8, 100
    A = rng.standard_normal(R * C).astype(F32)
    xv, y = rng.standard_normal(C).astype(F32), np.zeros(R, F32)
    run_kernel(text, "sgemv_warp", (2, 1, 1), (128, 1, 1), _p("A", "x", "y") + [("r", "i32", R), ("c", "i32", C)],
               {"A": A, "x": xv, "y": y})
    assert np.allclose(y, A.reshape(R, C) @ xv, atol=1e-5)


@needs_tools
def test_compiled_math_and_conversions():
    rng = np.random.default_rng(10)
    N = 64
    x = (rng.random(N + 1) * 4 + 0.1).astype(F32)
    k = rng.integers(-1000, 1000, N).astype(np.int32)
    y, z = np.zeros(8 * N, F32), np.zeros(4 * N, np.int32)
    run_kernel(_sass("warp_ops"), "mathops", (1, 1, 1), (N, 1, 1), _p("x", "k", "y", "z"),
               {"x": x, "k": k, "y": y, "z": z})
    v = x[:N].astype(np.float64)
    ref = np.stack([1 / np.sqrt(v), np.sqrt(v), np.log(v), np.sin(v) + np.cos(v), k, 1 / v, v / 3, x[1:] / v], 1)
    assert np.allclose(y.reshape(N, 8), ref, rtol=1e-6, atol=1e-6)
    Z = z.reshape(N, 4)
    assert Z[:, 0].tolist() == np.trunc(x[:N]).astype(int).tolist() and Z[:, 1].tolist() == np.abs(k).tolist()
    assert Z[:, 2].tolist() == [bin(int(q) & 0xFFFFFFFF).count("1") for q in k] and (Z[:, 3] == 2).all()
    w = rng.standard_normal(N + 8).astype(F32)
    w[::3] = 0                                      # x / 0: the FCHK slow path, through CALL / RET
    x = rng.standard_normal(N + 8).astype(F32) * 3
    k = rng.integers(-2 ** 31, 2 ** 31, N + 8, dtype=np.int64).astype(np.int32)
    y, z, b = np.zeros(8 * N, F32), np.zeros(8 * N, np.int32), np.zeros(2 * N, np.uint32)
    _, _, per = run_kernel(_sass("misc_ops"), "misc", (1, 1, 1), (N, 1, 1), _p("x", "k", "w", "y", "z", "b"),
                           {"x": x, "k": k, "w": w, "y": y, "z": z, "b": b})
    Y, Z, v = y.reshape(N, 8), z.reshape(N, 8), x[:N]
    with np.errstate(all="ignore"):
        assert np.array_equal(Y[:, 6], (v.astype(np.float64) / w[1:N + 1]).astype(F32), equal_nan=True)
    assert per["CALL.REL.NOINC"] >= 1
    assert np.array_equal(Y[:, 0], np.floor(v)) and np.array_equal(Y[:, 4], np.fmin(v, w[:N]))
    assert np.array_equal(Y[:, 5], np.clip(v, 0, 1)) and np.array_equal(Y[:, 7], (1 / v.astype(np.float64)).astype(F32))
    assert Z[:, 0].tolist() == np.rint(v).astype(int).tolist() and Z[:, 6].tolist() == np.floor(v).astype(int).tolist()
    assert Z[:, 2].tolist() == [32 - (int(q) & 0xFFFFFFFF).bit_length() for q in k[:N]]
    assert b[0] == sum(1 << i for i in range(32) if v[i] > 0.5) and b[1] == 0xFFFFFFFF


@needs_tools
def test_compiled_streaming_kernels():
    rng = np.random.default_rng(12)
    text = _sass("streaming")
    x = rng.standard_normal(4096).astype(F32)
    y = np.zeros_like(x)
    _, m, _ = run_kernel(text, "copy_f4", (4, 1, 1), (256, 1, 1), _p("x", "y") + [("n", "i32", 1000)], {"x": x, "y": y})
    assert np.array_equal(y[:4000], x[:4000]) and not y[4000:].any()
    assert m["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 4000 * 4 // 32
    n = 5000
    x, y = rng.standard_normal(n).astype(F32), rng.standard_normal(n).astype(F32)
    want = (np.float64(F32(1.5)) * x + y).astype(F32)                 # fused
    run_kernel(text, "saxpy", (2, 1, 1), (128, 1, 1), [("n", "i32", n), ("a", "f32", 1.5)] + _p("x", "y"), {"x": x, "y": y})
    assert np.array_equal(y, want)
    R, C = 40, 70
    a, o = rng.standard_normal(R * C).astype(F32), np.zeros(R * C, F32)
    _, m, _ = run_kernel(text, "transpose_smem", (3, 2, 1), (32, 8, 1), _p("a", "o") + [("r", "i32", R), ("c", "i32", C)],
                         {"a": a, "o": o}, shared=32 * 33 * 4)
    assert np.array_equal(o.reshape(C, R), a.reshape(R, C).T)
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"] == 0
    nx, ny = 40, 20
    a, o = rng.standard_normal(nx * ny).astype(F32), np.zeros(nx * ny, F32)
    run_kernel(text, "stencil5", (3, 3, 1), (16, 8, 1), _p("a", "o") + [("nx", "i32", nx), ("ny", "i32", ny)], {"a": a, "o": o})
    A, ref = a.reshape(ny, nx), np.zeros((ny, nx), F32)
    ref[1:-1, 1:-1] = F32(0.2) * ((((A[1:-1, 1:-1] + A[1:-1, :-2]) + A[1:-1, 2:]) + A[:-2, 1:-1]) + A[2:, 1:-1])
    assert np.array_equal(o.reshape(ny, nx), ref)
    x, out = rng.standard_normal(3000).astype(F32), np.zeros(1, F32)
    _, m, per = run_kernel(text, "reduce_two_level", (2, 1, 1), (256, 1, 1), _p("x", "o") + [("n", "i32", 3000)],
                           {"x": x, "o": out}, shared=128)
    assert np.isclose(out[0], x.sum(dtype=np.float64), atol=1e-3)
    assert m["smsp__sass_inst_executed_op_global_red.sum"] == 2
