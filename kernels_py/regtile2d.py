"""regtile2d: 2-D register tiling (seed 003's sgemm_register_tiling_2d).

Twin: kernels_cuda/regtile2d.cu (BM=BN=128, BK=8, TM=TN=8, 256 threads). Each
thread owns a TM x TN patch of C and accumulates it as an outer product of TM
values of As and TN values of Bs per step of K. No bounds checks: M must be a
multiple of BM, N of BN, K of BK.

What the hardware executes (nvcc 13.0 -O3, sm_90; traces/static/regtile2d.sass),
and where this file therefore departs from the textbook source:

* The dotIdx loop is NOT unrolled at the defaults: it stays a rolled loop of BK
  trips inside the K loop (its own SASS block, with its own LEA/IADD3/UISETP/
  BRA per trip). Per dotIdx the 8 regM reads As[(threadRow*TM + i)*BK + dotIdx]
  are 8 scalar LDS (BK floats apart: nothing to merge), while the 8 regN reads
  Bs[dotIdx*BN + threadCol*TN + i] are contiguous and 32-byte aligned: 2 LDS.128,
  not 8 LDS. So a dotIdx costs 10 shared-load instructions, not the textbook's 16.
* How far ptxas unrolls the dotIdx loop depends on the thread tile (`dot_plan`,
  fitted to the SASS of 23 parameter sets): TM*TN >= 64: rolled (1 dotIdx per
  trip); TM*TN == 32: unrolled by 4 at BK=8 (the committed BN64_TM4 variant: 2
  trips of 4 dotIdx per slab, 12 LDS.128 per trip), and at BK=16 dotIdx 0 is
  peeled off into the K-loop head and the other 15 unrolled by 5; TM*TN <= 16:
  unrolled by min(BK, 128/(TM*TN)), fully unrolled into the K-loop body at BK=8.
  The reads of one trip are merged: the U consecutive dotIdx of an As row are
  one contiguous run, whole rows merge when U == BK, and each dotIdx's TN floats
  of Bs are one run; runs are cut into the widest naturally aligned
  LDS.128/LDS.64/LDS (`shared_vectors`). Inside a loop whose pointers step by U
  floats per trip only the alignment of U floats is known (U=5: scalar As reads).
  At TM*TN == 32 with TM > TN ptxas also addresses Bs in the loop through a
  pointer it cannot prove 16-byte aligned, halving the width of the Bs reads
  (TM=8, TN=4: 2 LDS.64 per dotIdx; TM=16, TN=2: 2 LDS). With these rules the
  memory and FP instruction counts equal the SASS for 22 of the 23 sets; the
  exception is TM=1, TN=16 (ptxas unrolls by 2 and keeps the As reads scalar;
  this file unrolls by 8).
* Issue order (the timing engine times the order it is given): in a rolled trip ptxas loads the
  first As float and the first Bs vector, then the other As floats, then the other Bs vectors, and
  runs the FFMAs one Bs vector at a time (for each, every row i of the thread tile): so the first
  FFMA waits on two loads, not on all ten (traces/static/regtile2d.sass 0x0af0-0x0f90;
  tests/kernels_py/test_memory_order.py). Unrolled trips keep the source's order.
* Global loads and stores are scalar LDG.E/STG.E: the staging loops are fully
  unrolled (BM/(T/BK) + BK/(T/BN) LDG and as many STS per slab, T = threads),
  and the epilogue issues TM*TN x (LDG, FMUL C*beta, FFMA acc*alpha + that, STG).
* The K loop is a rolled do-while behind a `K >= 1` guard; ptxas recomputes the
  staging addresses in the K-loop head every slab (LEA/LOP3/IMAD.WIDE/MOV...),
  issued below per block with counts read off the SASS.

Integer/control counts: exact (read off the SASS) for the parameter sets in
`_INT` (defaults, the committed BN64_TM4 variant and three more); for other
parameters the counts of the same unroll family are used, so
smsp__inst_executed may be off by some instructions per block, while memory
instructions, FFMA/FMUL and BAR follow the rules above.
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import (load_vectors, parse_ops, require_tile_multiples, shared_vectors,
                                store_alpha_beta, vec_width)

NAME = "regtile2d"
DEFAULTS = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}

# Integer, uniform and control instructions of each executed SASS basic block,
# read off `cuobjdump -sass` of the twin (nvcc 13.0.88, -O3, sm_90), keyed by
# (BM, BN, BK, TM, TN). entry: once, ends in the K<1 @P0 BRA; setup: the K>=1
# path (accumulators zeroed by CS2R, pointers), once; head: K-loop head (staging
# addresses, LDG, STS, BAR), once per slab; dot: one trip of the dotIdx loop;
# tail: BAR and pointer advance, once per slab; epilogue: once, ends in EXIT.
# When the dotIdx loop is fully unrolled (U == BK) head is the whole K-loop body.
_INT_TEXT = {
    (128, 128, 8, 8, 8): {
        "entry": "BRA ISETP.LT.AND LDC ULDC ULDC.64",
        "setup": "CS2R:31 HFMA2.MMA MOV S2R S2UR:2 UIMAD UIMAD.WIDE:2 ULDC.64:2 UMOV USHF.L.U32:2",
        "head": "IADD3:3 IMAD:2 IMAD.WIDE:8 ISETP.LE.AND LDC LEA:14 LOP3.LUT:16 MOV:11 S2UR "
                "SHF.L.U32:2 SHF.R.U32.HI:2 UIADD3:2 ULDC ULEA:2 UMOV:2",
        "dot": "BRA IADD3 LEA:3 MOV PLOP3.LUT UIADD3 UISETP.NE.AND",
        "tail": "BRA UIADD3 UIADD3.X UIMAD.WIDE USHF.L.U32",
        "epilogue": "EXIT IADD3 IMAD IMAD.WIDE:7 LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT:2 MOV:7 S2R "
                    "S2UR:2 SHF.L.U32 SHF.R.U32.HI UIMAD ULDC:3 ULDC.64 USHF.L.U32:2 USHF.R.S32.HI",
    },
    (128, 64, 8, 4, 8): {
        "entry": "BRA ISETP.LT.AND LDC LOP3.LUT S2R S2UR:2 SHF.R.U32.HI ULDC ULDC.64 USHF.L.U32:2",
        "setup": "CS2R:15 HFMA2.MMA IADD3:5 IMAD:2 LEA:9 LOP3.LUT:11 MOV:2 S2UR SHF.L.U64.HI:3 "
                 "SHF.R.S32.HI:3 SHF.R.U32.HI UIADD3 UIMAD UIMAD.WIDE:2 ULDC ULDC.64:2 ULEA:2 "
                 "UMOV:2 USHF.L.U32:2 USHF.L.U64.HI USHF.R.S32.HI",
        "head": "IADD3.X:3 IMAD.WIDE:3 ISETP.LE.AND LDC LEA:3 MOV:5 UIADD3 UMOV",
        "dot": "BRA IADD3:2 PLOP3.LUT UIADD3 UISETP.NE.AND",
        "tail": "BRA UIADD3 UIADD3.X:2 ULEA",
        "epilogue": "EXIT IADD3 IMAD:2 IMAD.WIDE:3 LDC LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT S2R:2 "
                    "S2UR SHF.L.U32:3 SHF.R.S32.HI SHF.R.U32.HI ULDC:2 ULDC.64 USHF.L.U32",
    },
    (64, 64, 8, 8, 8): {
        "entry": "BRA ISETP.LT.AND LDC ULDC ULDC.64",
        "setup": "CS2R:31 HFMA2.MMA MOV S2R S2UR:2 UIMAD UIMAD.WIDE:2 ULDC.64:2 UMOV USHF.L.U32:2",
        "head": "IADD3:14 IMAD:2 IMAD.WIDE:16 ISETP.LE.AND LDC LEA:23 LOP3.LUT:32 MOV:13 S2UR "
                "SHF.L.U32 SHF.R.U32.HI:2 UIADD3:2 ULDC ULEA:2 UMOV:2",
        "dot": "BRA IADD3 LEA:3 MOV PLOP3.LUT UIADD3 UISETP.NE.AND",
        "tail": "BRA UIADD3 UIADD3.X UIMAD.WIDE USHF.L.U32",
        "epilogue": "EXIT IADD3 IMAD:2 IMAD.WIDE:7 LDC LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT:2 S2R:2 "
                    "S2UR SHF.L.U32:2 SHF.R.S32.HI ULDC:2 ULDC.64 USHF.L.U32",
    },
    (64, 64, 8, 4, 4): {     # dotIdx loop fully unrolled into the K-loop body
        "entry": "BRA ISETP.LT.AND LDC LOP3.LUT S2R S2UR:2 SHF.R.U32.HI ULDC ULDC.64 USHF.L.U32:2",
        "setup": "CS2R:6 HFMA2.MMA:2 IADD3 IMAD:2 LEA:8 LOP3.LUT:6 MOV:4 S2UR SHF.L.U64.HI:4 "
                 "SHF.R.S32.HI:4 SHF.R.U32.HI:2 UIADD3 UIMAD UIMAD.WIDE:2 ULDC ULDC.64:2 ULEA:2 "
                 "UMOV:2 USHF.L.U32 USHF.L.U64.HI USHF.R.S32.HI",
        "head": "BRA IADD3.X:4 LEA:4 PLOP3.LUT UIADD3:2 UIADD3.X:2 UISETP.GE.AND ULEA",
        "epilogue": "EXIT IADD3 IMAD IMAD.WIDE:3 LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT MOV:3 S2R "
                    "SHF.L.U32:2 SHF.R.U32.HI UIMAD ULDC:3 ULDC.64 USHF.R.S32.HI",
    },
    (128, 128, 8, 4, 8): {
        "entry": "BRA ISETP.LT.AND LDC LOP3.LUT S2R S2UR:2 SHF.R.U32.HI ULDC ULDC.64 USHF.L.U32:2",
        "setup": "CS2R:15 HFMA2.MMA IADD3:3 IMAD:2 LEA:8 LOP3.LUT:6 MOV:3 S2UR SHF.L.U64.HI:4 "
                 "SHF.R.S32.HI:4 SHF.R.U32.HI:2 UIADD3 UIMAD UIMAD.WIDE:2 ULDC ULDC.64:2 ULEA:2 "
                 "UMOV:2 USHF.L.U32 USHF.L.U64.HI USHF.R.S32.HI",
        "head": "IADD3.X:4 ISETP.LE.AND LDC LEA:4 MOV:2 UIADD3 UMOV",
        "dot": "BRA IADD3:2 PLOP3.LUT UIADD3 UISETP.NE.AND",
        "tail": "BRA UIADD3 UIADD3.X:2 ULEA",
        "epilogue": "EXIT IADD3 IMAD:2 IMAD.WIDE:3 LDC LEA LEA.HI.X LEA.HI.X.SX32 LOP3.LUT S2R:2 "
                    "S2UR SHF.L.U32:3 SHF.R.S32.HI SHF.R.U32.HI ULDC:2 ULDC.64 USHF.L.U32",
    },
}
_INT = {key: {blk: parse_ops(t) for blk, t in blocks.items()} for key, blocks in _INT_TEXT.items()}


def dot_unroll(BK: int, TM: int, TN: int) -> int:
    """dotIdx values per trip of the (partly) unrolled dotIdx loop, as ptxas chose."""
    p = TM * TN
    u = 1 if p >= 64 else (5 if BK == 16 else 4) if p == 32 else 128 // p
    return max(1, min(u, BK))


def dot_plan(BK: int, TM: int, TN: int):
    """[(dotIdx values, looped)] for each trip of the dotIdx loop.

    looped: the trip is an iteration of a loop whose shared pointers advance by
    U floats per trip (ptxas can then prove only the alignment of U floats);
    False for dotIdx peeled off ahead of the loop or a fully unrolled loop.
    At TM*TN == 32 and BK == 16 ptxas peels dotIdx 0 and unrolls the other 15 by 5.
    """
    u = dot_unroll(BK, TM, TN)
    if u >= BK:
        return [(tuple(range(BK)), False)]
    start, plan = 0, []
    if TM * TN == 32 and BK == 16:
        plan, start = [((0,), False)], 1
    plan += [(tuple(range(d, min(d + u, BK))), True) for d in range(start, BK, u)]
    return plan


def int_counts(BM, BN, BK, TM, TN):
    """(per-block integer/control counts, exact?) for these parameters."""
    key = (BM, BN, BK, TM, TN)
    if key in _INT:
        return _INT[key], True
    u = dot_unroll(BK, TM, TN)
    rep = (64, 64, 8, 4, 4) if u >= BK else (128, 128, 8, 8, 8) if u == 1 else (128, 64, 8, 4, 8)
    fam = dict(_INT[rep])
    epi = dict(fam["epilogue"])
    epi["IMAD.WIDE"] = max(TM - 1, 0)     # one pointer step per further row of C
    fam["epilogue"] = epi
    return fam, False


def regtile2d(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=128, BK=8, TM=8, TN=8):
    ints, _ = int_counts(BM, BN, BK, TM, TN)
    T = (BM * BN) // (TM * TN)
    tid = k.threadIdx.x
    cRow, cCol = k.blockIdx.y, k.blockIdx.x

    As = k.shared("As", BM * BK)
    Bs = k.shared("Bs", BK * BN)

    threadCol = tid % (BN // TN)
    threadRow = tid // (BN // TN)

    A = A + cRow * BM * K
    B = B + cCol * BN
    C = C + cRow * BM * N + cCol * BN

    innerColA, innerRowA = tid % BK, tid // BK
    ROW_STRIDE_A = T // BK
    innerColB, innerRowB = tid % BN, tid // BN
    ROW_STRIDE_B = T // BN

    acc = [[0.0] * TN for _ in range(TM)]         # zeroed by CS2R in the setup block
    k.ops(ints["entry"])                          # ... ends in the K<1 guard (@P0 BRA)
    if K >= 1:
        k.ops(ints["setup"])

    plan = dot_plan(BK, TM, TN)
    fused = "dot" not in ints                     # dotIdx loop unrolled into the K-loop body
    a_base = threadRow * TM * BK
    b_base = threadCol * TN
    a_align = vec_width(TM * BK)
    b_align = vec_width(TN)
    trips = []
    for ds, looped in plan:
        a_al, b_al = a_align, b_align
        if looped:
            a_al = min(a_al, vec_width(len(ds)))    # the As pointer steps by U floats per trip
            if TM * TN == 32 and TM > TN:
                b_al = max(1, b_al // 2)           # ptxas loses 16-B alignment of the Bs pointer
        a_vecs = shared_vectors([i * BK + d for i in range(TM) for d in ds], a_al)
        b_vecs = shared_vectors([d * BN + j for d in ds for j in range(TN)], b_al)
        trips.append((ds, a_vecs, b_vecs))

    for bk in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        a = [A.ld((innerRowA + off) * K + innerColA + bk) for off in range(0, BM, ROW_STRIDE_A)]
        b = [B.ld((innerRowB + off) * N + innerColB + bk * N) for off in range(0, BK, ROW_STRIDE_B)]
        for n, off in enumerate(range(0, BM, ROW_STRIDE_A)):
            As.st((innerRowA + off) * BK + innerColA, a[n])
        for n, off in enumerate(range(0, BK, ROW_STRIDE_B)):
            Bs.st((innerRowB + off) * BN + innerColB, b[n])
        k.syncthreads()
        k.ops(ints["head"])

        for ds, a_vecs, b_vecs in trips:
            if len(ds) == 1:                      # a rolled trip, in its SASS's order
                av = load_vectors(As, a_base, a_vecs[:1])
                bv = load_vectors(Bs, b_base, b_vecs[:1])
                av.update(load_vectors(As, a_base, a_vecs[1:]))
                bv.update(load_vectors(Bs, b_base, b_vecs[1:]))
                d = ds[0]
                for b_off, w in b_vecs:
                    for i in range(TM):
                        for j in range(b_off - d * BN, b_off - d * BN + w):
                            acc[i][j] = k.ffma(av[i * BK + d], bv[d * BN + j], acc[i][j])
            else:
                av = load_vectors(As, a_base, a_vecs)
                bv = load_vectors(Bs, b_base, b_vecs)
                for d in ds:
                    for i in range(TM):
                        for j in range(TN):
                            acc[i][j] = k.ffma(av[i * BK + d], bv[d * BN + j], acc[i][j])
            if not fused:
                k.ops(ints["dot"])
        k.syncthreads()
        if not fused:
            k.ops(ints["tail"])

    k.ops(ints["epilogue"])
    for i in range(TM):
        for j in range(TN):
            store_alpha_beta(k, C, (threadRow * TM + i) * N + threadCol * TN + j, acc[i][j], alpha, beta)


def _check(M, N, K, BM, BN, BK, TM, TN):
    require(BM % TM == 0, NAME, f"BM={BM} must be a multiple of TM={TM}")
    require(BN % TN == 0, NAME, f"BN={BN} must be a multiple of TN={TN}")
    T = (BM * BN) // (TM * TN)
    require(T <= 1024, NAME, f"(BM*BN)/(TM*TN) = {T} threads per block exceeds 1024")
    require(T % BK == 0 and BM % (T // BK) == 0, NAME,
            f"the A staging loop must cover BM={BM} rows in whole passes of "
            f"threads/BK = {T}/{BK} rows")
    require(T % BN == 0 and BK % (T // BN) == 0, NAME,
            f"the B staging loop must cover BK={BK} rows in whole passes of "
            f"threads/BN = {T}/{BN} rows")
    require_tile_multiples(NAME, M, N, K, BM, BN, BK)


def _launch(M, N, K, BM, BN, BK, TM, TN):
    return (-(-N // BN), -(-M // BM), 1), ((BM * BN) // (TM * TN), 1, 1)


def _grid_period(M, N, K, BM, BN, BK, TM, TN):
    # x: B and C move by BN elements per CTA; y: A by BM*K, C by BM*N
    return align_period(BN), align_period(BM * K, BM * N)


SPEC = KernelSpec(
    name=NAME, fn=regtile2d, params=dict(DEFAULTS), launch=_launch, check=_check,
    grid_period=_grid_period,
    summary="2-D register tiling: TM x TN outer product per thread from TM+TN shared values",
    source="kernels_cuda/regtile2d.cu",
    notes=("dotIdx loop rolled at TM*TN >= 64: per dotIdx TM LDS (As) + TN/4 LDS.128 (Bs)",
           "TM*TN == 32: dotIdx unrolled by 4 (BK=16: 1 peeled + 3 x 5); <= 16: by min(BK, 128/(TM*TN))",
           "integer counts exact for " + ", ".join(
               "BM=%d BN=%d BK=%d TM=%d TN=%d" % key for key in _INT_TEXT)),
)
