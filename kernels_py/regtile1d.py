"""regtile1d: 1-D register tiling. Each thread owns a column of TM outputs of C.

Twin: kernels_cuda/regtile1d.cu (BM=BN=64, BK=8, TM=8, 512 threads). One value
of Bs read into a register feeds TM multiply-adds; the block stages a BM x BK
slab of A and a BK x BN slab of B per step of K, one element of each per thread.
The twin has no bounds checks: M must be a multiple of BM, N of BN, K of BK.
Its static_asserts force BM == BN == BK*TM (one element of each slab per thread).

What the hardware executes (nvcc 13.0 -O3, sm_90; traces/static/regtile1d.sass),
and where this file therefore departs from the textbook source:

* The dotIdx and resIdx loops are fully unrolled. A thread's TM x BK values of
  As in one slab, As[(threadRow*TM + resIdx)*BK + dotIdx], are ONE contiguous
  run of TM*BK floats starting at threadRow*TM*BK, and ptxas loads it with
  16-byte LDS.128: at the defaults the 64 As reads per slab are 16 LDS.128, not
  64 LDS. The BK reads of Bs stay scalar LDS (they are BN floats apart). So the
  per-slab shared loads are TM*BK/4 + BK instructions, not TM*BK + BK.
  For other parameters the run is cut into the widest naturally aligned pieces
  (LDS.128 / LDS.64 / LDS) given the alignment ptxas can prove for
  threadRow*TM*BK.
* With TM >= 32 and BK >= 2, ptxas keeps the dotIdx loop rolled (one trip per
  dotIdx, BK trips per slab) and the As reads stay scalar (TM LDS + 1 LDS per
  dotIdx): modelled (seen at TM=32, BK=2 and 4).
  With these rules the memory and FP instruction counts equal the SASS for all
  18 parameter sets compiled to check them (TM from 1 to 64, BK from 1 to 32).
* The K loop is a rolled do-while behind a `K >= 1` guard (UISETP + PLOP3 +
  @!P0 BRA in the entry block); A and B advance through uniform-register pointer
  increments (UIADD3/ULEA/UIADD3.X); all of that is issued per block below with
  counts read off the SASS.
* The epilogue is TM x (LDG, FMUL C*beta, FFMA acc*alpha + that, STG), scalar.
* Global loads and stores are 32-bit (LDG.E/STG.E): ptxas cannot prove wider
  alignment of the pointers.
* Issue order (the timing engine times the order it is given): ptxas issues a
  few of the unrolled dot block's shared loads ahead and spreads the rest among
  the FFMAs, and puts the K loop's pointer sums before the global loads and its
  uniform steps between the loads and the stores. `_DOT_TEXT` holds the SASS's
  order for the recorded tilings (tests/kernels_py/test_memory_order.py checks
  every load's offset and the loads feeding every FFMA); other tilings take
  `interleave_loads`' rule. In the source's order (all 24 loads first) the
  engine's warps met a full MIO queue where the H200's wait on the data.

Integer/control counts: exact (read off the SASS) for the parameter sets in
`_INT` (defaults, the committed TM4_BK16 variant, and three more); for other
parameters the nearest family's counts are used, so smsp__inst_executed may be
off by a few instructions per block (memory instructions, FFMA/FMUL and
BAR counts still follow the SASS rules above). Not modelled: when BK*TM <= 24
ptxas also unrolls the K loop by 4 (with x2/x1 remainder blocks); the memory
and FP instructions per slab are unchanged, only the integer counts differ.
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import (body_ops, branch_ops, interleave_loads, ld_vec, parse_ops, require_tile_multiples,
                                shared_vectors, store_alpha_beta, vec_width)

NAME = "regtile1d"
DEFAULTS = {"BM": 64, "BN": 64, "BK": 8, "TM": 8}


# Integer, uniform and control instructions of each SASS basic block, read off
# `cuobjdump -sass` of the twin (nvcc 13.0.88, -O3, sm_90), keyed by
# (BM, BN, BK, TM). Blocks: entry (runs once, ends in the K<1 @!P0 BRA), setup
# (K>=1 path, once), head (the rolled K loop's body or, when the dotIdx loop is
# rolled, the part before it: once per slab), dot (once per dotIdx trip), tail
# (after the dotIdx loop, once per slab), epilogue (once, ends in EXIT).
_INT_TEXT = {
    (64, 64, 8, 8): {
        "entry": "BRA CS2R HFMA2.MMA:3 LDC LOP3.LUT MOV:3 PLOP3.LUT S2R S2UR:2 SHF.R.U32.HI "
                 "UISETP.GE.AND ULDC ULDC.64 USHF.L.U32:2",
        "setup": "IMAD:2 LEA:2 LOP3.LUT:4 MOV S2UR SHF.L.U32 SHF.L.U64.HI:2 SHF.R.S32.HI:2 "
                 "SHF.R.U32.HI UIADD3 UIMAD UIMAD.WIDE:2 ULDC ULDC.64:2 ULEA:2 UMOV:2 USHF.L.U32 "
                 "USHF.L.U64.HI USHF.R.S32.HI",
        "head": "BRA IADD3.X:2 LEA:2 PLOP3.LUT UIADD3:2 UIADD3.X:2 UISETP.GE.AND ULEA",
        "epilogue": "EXIT IADD3 IMAD IMAD.WIDE:7 LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT MOV:4 S2R "
                    "SHF.L.U32 SHF.R.U32.HI UIMAD ULDC:3 ULDC.64 USHF.R.S32.HI",
    },
    (64, 64, 16, 4): {
        "entry": "BRA HFMA2.MMA:2 LDC LOP3.LUT MOV:2 PLOP3.LUT S2R S2UR:2 SHF.R.U32.HI "
                 "UISETP.GE.AND ULDC ULDC.64 USHF.L.U32:2",
        "setup": "IMAD:2 LEA:2 LOP3.LUT:4 MOV S2UR SHF.L.U32 SHF.L.U64.HI:2 SHF.R.S32.HI:2 "
                 "SHF.R.U32.HI UIADD3 UIMAD UIMAD.WIDE:2 ULDC ULDC.64:2 ULEA:2 UMOV:2 USHF.L.U32 "
                 "USHF.L.U64.HI USHF.R.S32.HI",
        "head": "BRA IADD3.X:2 LEA:2 PLOP3.LUT UIADD3:2 UIADD3.X:2 UISETP.GE.AND ULEA",
        "epilogue": "EXIT IADD3 IMAD IMAD.WIDE:3 LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT MOV:2 S2R "
                    "SHF.L.U32 SHF.R.U32.HI UIMAD ULDC:3 ULDC.64 USHF.R.S32.HI",
    },
    (32, 32, 8, 4): {
        "entry": "BRA CS2R HFMA2.MMA ISETP.GE.AND LDC:2 LOP3.LUT MOV S2R:2 S2UR SHF.L.U32 "
                 "SHF.R.U32.HI ULDC.64 USHF.L.U32",
        "setup": "IADD3:2 IMAD:3 LDC LEA:4 LEA.HI.X:2 LEA.HI.X.SX32:2 LOP3.LUT:4 MOV S2UR "
                 "SHF.L.U32:2 SHF.R.S32.HI:2 SHF.R.U32.HI UIADD3 ULDC.64:2 ULEA:2 UMOV:2",
        "head": "BRA IADD3 IADD3.X IMAD.WIDE ISETP.LE.AND UIADD3",
        "epilogue": "EXIT IADD3 IMAD:2 IMAD.WIDE:3 LDC LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT S2R "
                    "SHF.L.U32 SHF.R.S32.HI SHF.R.U32.HI ULDC:2 ULDC.64",
    },
    (128, 128, 8, 16): {
        "entry": "BRA CS2R:6 HFMA2.MMA:2 LDC LOP3.LUT MOV:2 PLOP3.LUT S2R S2UR:2 SHF.R.U32.HI "
                 "UISETP.GE.AND ULDC ULDC.64 USHF.L.U32:2",
        "setup": "IMAD:2 LEA:2 LOP3.LUT:4 MOV S2UR SHF.L.U32 SHF.L.U64.HI:2 SHF.R.S32.HI:2 "
                 "SHF.R.U32.HI UIADD3 UIMAD UIMAD.WIDE:2 ULDC ULDC.64:2 ULEA:2 UMOV:2 USHF.L.U32 "
                 "USHF.L.U64.HI USHF.R.S32.HI",
        "head": "BRA IADD3.X:2 LEA:2 PLOP3.LUT UIADD3:2 UIADD3.X:2 UISETP.GE.AND ULEA",
        "epilogue": "EXIT IADD3 IMAD IMAD.WIDE:15 LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT MOV:9 S2R "
                    "SHF.L.U32 SHF.R.U32.HI UIMAD ULDC:3 ULDC.64 USHF.R.S32.HI",
    },
    (128, 128, 4, 32): {     # dotIdx loop rolled
        "entry": "BRA CS2R:15 HFMA2.MMA LDC LOP3.LUT MOV PLOP3.LUT S2R:2 S2UR SHF.L.U32 "
                 "SHF.R.U32.HI UISETP.GE.AND ULDC ULDC.64 USHF.L.U32",
        "setup": "IADD3 IMAD:2 IMAD.WIDE LDC LDC.64 LEA:2 LOP3.LUT:4 MOV:3 S2UR SHF.L.U32:2 "
                 "SHF.L.U64.HI SHF.R.S32.HI SHF.R.U32.HI UIADD3 UIMAD UIMAD.WIDE ULDC.64 ULEA:2 "
                 "UMOV:2",
        "head": "IADD3.X:2 ISETP.LE.AND LDC LEA:2 MOV SHF.L.U64.HI:2 SHF.R.S32.HI:2 UIADD3 UMOV",
        "dot": "BRA IADD3 PLOP3.LUT UIADD3 UISETP.NE.AND",
        "tail": "BRA IADD3.X LEA UIADD3 UIADD3.X",
        "epilogue": "EXIT IADD3 IMAD:2 IMAD.WIDE:31 LDC LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT S2R "
                    "SHF.L.U32 SHF.R.S32.HI SHF.R.U32.HI ULDC:2 ULDC.64",
    },
}
_INT = {key: {blk: parse_ops(t) for blk, t in blocks.items()} for key, blocks in _INT_TEXT.items()}


def dot_rolled(BK: int, TM: int) -> bool:
    """ptxas keeps the dotIdx loop rolled (scalar As reads) at TM >= 32, BK >= 2."""
    return TM >= 32 and BK >= 2


def int_counts(BM, BN, BK, TM):
    """(per-block integer/control counts, exact?) for these parameters."""
    key = (BM, BN, BK, TM)
    if key in _INT:
        return _INT[key], True
    fam = dict(_INT[(128, 128, 4, 32) if dot_rolled(BK, TM) else (64, 64, 8, 8)])
    epi = dict(fam["epilogue"])
    epi["IMAD.WIDE"] = max(TM - 1, 0)     # one pointer step per further row of C
    fam["epilogue"] = epi
    return fam, False


# The unrolled dot block's order of shared loads and FFMAs, read off the SASS between the K loop's two
# BAR.SYNC (0x0420-0x0990 at the defaults): a<off> = the As load at element <off> of the thread's
# TM*BK run, b<d> = the Bs load of row d, <i>.<d> = acc[i] += As[i*BK + d] * Bs[d]. ptxas issues a
# few loads ahead and then spreads the rest among the FFMAs; the engine times the order it is given,
# and with all 24 loads first (the source's order) a warp's loads met a full MIO queue where the
# H200's wait on their data (tests/kernels_py/test_memory_order.py holds these to the SASS).
_DOT_TEXT = {
    (64, 64, 8, 8):
        "b0 a0 a24 b1 b2 a8 0.0 a16 3.0 b3 0.1 3.1 a40 0.2 3.2 a32 1.0 1.1 1.2 2.0 2.1 0.3 3.3 1.3 2.2 "
        "a56 5.0 2.3 4.0 a48 5.1 4.1 a4 5.2 b6 7.0 4.2 7.1 6.0 4.3 b4 5.3 6.1 7.2 a20 6.2 7.3 b5 6.3 a12 "
        "a28 0.4 b7 2.4 0.5 2.5 1.4 2.6 1.5 3.4 0.6 a44 1.6 3.5 a36 3.6 0.7 1.7 2.7 a52 3.7 a60 5.4 4.4 "
        "5.5 4.5 5.6 4.6 6.4 7.4 6.5 5.7 7.5 6.6 7.6 4.7 6.7 7.7",
    (64, 64, 16, 4):
        "b0 a0 a16 b1 a32 0.0 b2 1.0 0.1 1.1 a48 2.0 b3 2.1 0.2 1.2 3.0 2.2 3.1 0.3 2.3 b5 3.2 1.3 b4 "
        "3.3 a4 a20 a36 0.4 b7 1.4 0.5 b6 2.4 1.5 a52 2.5 0.6 1.6 2.6 3.4 0.7 1.7 2.7 3.5 b10 3.6 b8 "
        "3.7 a8 b9 a24 0.8 a40 0.9 0.10 1.8 1.9 2.8 a56 2.9 1.10 b11 2.10 3.8 3.9 0.11 b12 1.11 3.10 "
        "2.11 a12 b13 b14 0.12 3.11 a28 0.13 a44 0.14 1.12 b15 1.13 a60 1.14 2.12 2.13 2.14 0.15 1.15 "
        "2.15 3.12 3.13 3.14 3.15",
}


def _token(t: str):
    if t[0] in "ab":
        return t[0], int(t[1:])
    i, d = t.split(".")
    return "ffma", (int(i), int(d))


_DOT = {key: [_token(t) for t in text.split()] for key, text in _DOT_TEXT.items()}


def dot_order(BM, BN, BK, TM, a_vecs) -> list:
    """[(kind, key)]: the SASS's order where recorded, else `interleave_loads`' (six loads ahead,
    as at the defaults) over the source's FFMA order (dotIdx outer, resIdx inner)."""
    if (BM, BN, BK, TM) in _DOT:
        return _DOT[BM, BN, BK, TM]
    ffmas = [(i, d) for d in range(BK) for i in range(TM)]
    first = {}
    for n, (i, d) in enumerate(ffmas):
        first.setdefault(("b", d), n)
        first.setdefault(("a", next(o for o, w in a_vecs if o <= i * BK + d < o + w)), n)
    return [key if kind == "ld" else ("ffma", key) for kind, key in interleave_loads(ffmas, first, 6)]


def regtile1d(k, M, N, K, alpha, A, B, beta, C, BM=64, BN=64, BK=8, TM=8):
    ints, _ = int_counts(BM, BN, BK, TM)
    tid = k.threadIdx.x
    cRow, cCol = k.blockIdx.y, k.blockIdx.x
    threadCol = tid % BN
    threadRow = tid // BN

    As = k.shared("As", BM * BK)
    Bs = k.shared("Bs", BK * BN)

    A = A + cRow * BM * K
    B = B + cCol * BN
    C = C + cRow * BM * N + cCol * BN

    innerColA, innerRowA = tid % BK, tid // BK
    innerColB, innerRowB = tid % BN, tid // BN

    acc = [0.0] * TM                              # zeroed by HFMA2/MOV/CS2R in the entry block
    k.ops(ints["entry"])                          # ... ends in the K<1 guard (@!P0 BRA)
    if K >= 1:
        k.ops(ints["setup"])

    rolled = dot_rolled(BK, TM)
    a_base = threadRow * TM * BK                  # this thread's contiguous TM*BK floats of As
    a_vecs = shared_vectors(range(TM * BK), vec_width(TM * BK))
    a_width = dict(a_vecs)

    # the unrolled K-loop body in its SASS's order (0x0320-0x09b0 at the defaults): the two pointer
    # sums (LEA, IADD3.X) before the loads, the uniform pointer steps and the loop test between the
    # loads and the stores, the loop's BRA after the second barrier
    head = ints["head"]
    head_addr = {n: c for n, c in body_ops(head).items() if n[0] != "U" and not n.startswith("PLOP3")}
    head_step = {n: c for n, c in body_ops(head).items() if n not in head_addr}
    for bk in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        if not rolled:
            k.ops(head_addr)
        a = A.ld(innerRowA * K + innerColA + bk)              # A += BK per slab
        b = B.ld(innerRowB * N + innerColB + bk * N)          # B += BK*N per slab
        if not rolled:
            k.ops(head_step)
        As.st(innerRowA * BK + innerColA, a)
        Bs.st(innerRowB * BN + innerColB, b)
        k.syncthreads()
        if not rolled:
            av, bv = {}, {}
            for kind, key in dot_order(BM, BN, BK, TM, a_vecs):
                if kind == "a":                             # As[a_base + key : + width]
                    for j, x in enumerate(ld_vec(As, a_base + key, a_width[key])):
                        av[key + j] = x
                elif kind == "b":                           # Bs row `key`
                    bv[key] = Bs.ld(key * BN + threadCol)
                else:
                    i, d = key
                    acc[i] = k.ffma(av[i * BK + d], bv[d], acc[i])
        else:
            k.ops(head)
            for d in range(BK):
                tmpB = Bs.ld(d * BN + threadCol)
                av = [As.ld(a_base + i * BK + d) for i in range(TM)]
                for i in range(TM):
                    acc[i] = k.ffma(av[i], tmpB, acc[i])
                k.ops(ints["dot"])
            k.ops(ints["tail"])
        k.syncthreads()
        if not rolled:
            k.ops(branch_ops(head))

    k.ops(ints["epilogue"])
    for i in range(TM):
        store_alpha_beta(k, C, (threadRow * TM + i) * N + threadCol, acc[i], alpha, beta)


def _check(M, N, K, BM, BN, BK, TM):
    threads = (BM * BN) // TM if TM else 0
    require(BM % TM == 0, NAME, f"BM={BM} must be a multiple of TM={TM}")
    require(threads <= 1024, NAME, f"(BM*BN)/TM = {threads} threads per block exceeds 1024")
    require(BM * BK == threads, NAME,
            f"the A staging loads one element per thread: BM*BK = {BM * BK} must equal "
            f"(BM*BN)/TM = {threads} threads")
    require(BN * BK == threads, NAME,
            f"the B staging loads one element per thread: BN*BK = {BN * BK} must equal "
            f"(BM*BN)/TM = {threads} threads")
    require_tile_multiples(NAME, M, N, K, BM, BN, BK)


def _launch(M, N, K, BM, BN, BK, TM):
    return (-(-N // BN), -(-M // BM), 1), ((BM * BN) // TM, 1, 1)


def _grid_period(M, N, K, BM, BN, BK, TM):
    # x: B and C move by BN elements per CTA; y: A by BM*K, C by BM*N
    return align_period(BN), align_period(BM * K, BM * N)


SPEC = KernelSpec(
    name=NAME, fn=regtile1d, params=dict(DEFAULTS), launch=_launch, check=_check,
    grid_period=_grid_period,
    summary="1-D register tiling: each thread a column of TM outputs; one Bs value feeds TM FMAs",
    source="kernels_cuda/regtile1d.cu",
    notes=("As reads of a slab are one contiguous run of TM*BK floats: TM*BK/4 LDS.128 (16 at the defaults)",
           "Bs reads stay scalar: BK LDS per slab",
           "integer counts exact for " + ", ".join(
               "BM=%d BN=%d BK=%d TM=%d" % key for key in _INT_TEXT)),
)
