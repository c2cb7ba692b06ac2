"""Single SASS instructions on lane vectors against Python integer arithmetic."""
import numpy as np

from gpusim.sass import semantics
from gpusim.sass.state import State
from gpusim.sass.listing import parse_instruction

L = 4


def _st():
    return State(L, {0x210: 7}, {}, 0, None)


def _run(text, st, on=None):
    h = semantics.build(parse_instruction(0, text, 0))
    h.run(st, np.ones(L, bool) if on is None else on)
    return h


def test_iadd3_carry_and_iadd3x():
    st = _st()
    st.R[2] = [0xFFFFFFFF, 1, 0x80000000, 0]
    st.R[3] = [1, 2, 0x80000000, 0]
    _run("IADD3 R4, P0, R2, R3, RZ", st)
    assert st.R[4].tolist() == [0, 3, 0, 0] and st.P[0].tolist() == [True, False, True, False]
    st.R[5] = [10, 10, 10, 10]
    _run("IADD3.X R6, R5, RZ, RZ, P0, !PT", st)
    assert st.R[6].tolist() == [11, 10, 11, 10]


def test_imad_wide_is_signed_and_lea_hi_x_sx32():
    st = _st()
    st.R[2] = [np.uint32(-3 & 0xFFFFFFFF), 5, 0, 1]
    _run("IMAD.WIDE R4, R2, 0x4, RZ", st)
    v = st.R[4].astype(np.int64) | (st.R[5].astype(np.int64) << 32)
    assert v.tolist() == [-12, 20, 0, 4]
    st.R[6] = [np.uint32(-1 & 0xFFFFFFFF), 1, 0, 0]
    st.R[7] = [100, 100, 100, 100]
    _run("LEA.HI.X.SX32 R8, R6, R7, 0x2, P0", st)      # high word of sext(R6) << 2, + R7 + carry
    assert st.R[8].tolist()[:2] == [(100 - 1 + int(st.P[0][0])) & 0xFFFFFFFF, 100 + int(st.P[0][1])]


def test_shifts_and_lop3():
    st = _st()
    st.R[2] = [0xF0, 0x80000000, 1, 7]
    _run("SHF.R.U32.HI R3, RZ, 0x3, R2", st)
    assert st.R[3].tolist() == [0x1E, 0x10000000, 0, 0]
    _run("SHF.R.S32.HI R4, RZ, 0x1f, R2", st)
    assert st.R[4].tolist() == [0, 0xFFFFFFFF, 0, 0]
    _run("SHF.L.U32 R5, R2, 0x4, RZ", st)
    assert st.R[5].tolist() == [0xF00, 0, 0x10, 0x70]
    a, b, c = st.R[2], st.R[3], st.R[5]
    for lut in (0xc0, 0xf8, 0x96, 0x5a, 0x1e):           # table entries and the generic form
        _run(f"LOP3.LUT R6, R2, R3, R5, 0x{lut:x}, !PT", st)
        want = [sum(1 << i for i in range(32)
                    if lut >> (((int(x) >> i & 1) << 2) | ((int(y) >> i & 1) << 1) | (int(z) >> i & 1)) & 1)
                for x, y, z in zip(a, b, c)]
        assert st.R[6].tolist() == want, hex(lut)


def test_predicated_write_and_constant_bank():
    st = _st()
    st.R[1] = [9, 9, 9, 9]
    _run("MOV R1, c[0x0][0x210]", st, on=np.array([True, False, True, False]))
    assert st.R[1].tolist() == [7, 9, 7, 9]


def test_ffma_is_fused():
    st = _st()
    a = np.float32(1 + 2 ** -12)
    st.R[2] = np.full(L, a, np.float32).view(np.uint32)
    st.R[3] = np.full(L, np.float32(-1 - 2 ** -11), np.float32).view(np.uint32)
    _run("FFMA R4, R2, R2, R3", st)
    assert st.R[4].view(np.float32)[0] == np.float32(2.0 ** -24)     # a*a - (1 + 2^-11), rounded once
