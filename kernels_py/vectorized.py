"""vectorized: regtile2d with 128-bit global accesses and As stored transposed (seed 003's next step).

Twin: kernels_cuda/vectorized.cu (template <BM, BN, BK, TM, TN>, defaults 128, 128, 8, 8, 8;
256 threads, grid (N/BN, M/BM)). Each thread owns a TM x TN patch of C; per BK-deep slab it
copies A with float4 loads into As TRANSPOSED (As[k*BM + m]) and B float4 to float4 into Bs, so
that both the column of A and the row of B a thread needs per dotIdx are contiguous in shared
memory. "The same bytes in a quarter of the instructions."

What the Python kernel issues is what `nvcc 13.0 -O3 -arch=sm_90` made of the twin (see
traces/static/vectorized.sass), basic block by basic block:

  entry        LDC/ULDC, `K < 1` test and branch (K >= BK here, so the branch to the
               "K < 1: zero the accumulators" block is never taken; that block is not issued).
  setup        zero the TM*TN accumulators (CS2R pairs, HFMA2.MMA/MOV singles), CTA pointers.
  K loop       one trip per BK slab (`k.loop`, periodic: A moves BK floats, B moves BK*N):
    head       BM/ROW_STRIDE_A LDG.E.128 for A and BK/ROW_STRIDE_B for B, all loads before any
               store (as ptxas orders them), then 4 STS per A load and 1 STS.128 per B load,
               BAR.SYNC, with the address arithmetic.
    dotIdx     NOT unrolled at the defaults (a real loop of BK trips, its own IADD3/ISETP/BRA):
               per dotIdx TM/4 LDS.128 from As and TN/4 LDS.128 from Bs, TM*TN FFMA.
    tail       BAR.SYNC, pointer advance, back-edge BRA.
  epilogue     per row of the patch: TN/4 LDG.E.128 of C, TN FMUL + TN FFMA, TN/4 STG.E.128; EXIT.

Departures from the textbook source (all of them what ptxas did):
  * the 8 regM loads of a dotIdx are 2 LDS.128 in SASS, not 8 LDS, and the 8 regN loads are
    2 LDS.128, not 8 LDS: contiguous, 16-B aligned runs of 4 floats are merged. In general a
    thread's TM values of As are loaded w floats at a time, w the largest of 4, 2, 1 dividing
    both TM and BM (the run starts at dotIdx*BM + threadRow*TM); likewise TN with BN (TN is a
    multiple of 4, so always LDS.128);
  * the transposed store of the float4 of A stays 4 scalar STS (the 4 floats land BM apart);
  * the dotIdx loop stays rolled at the defaults (unrolled 4x or 8x for small TM*TN patches,
    see the table); the staging loops and the TM x TN products are fully unrolled;
  * the epilogue's alpha*acc + beta*C is one FMUL and one FFMA per element, and for the first
    float of each float4 ptxas computes beta*C first (FMUL C, beta; FFMA acc, alpha, .) while
    for the other three it computes alpha*acc first (FMUL acc, alpha; FFMA C, beta, .): the
    Python kernel does the same, so the value dependencies follow the SASS;
  * the integer/uniform/control instructions of each block (S2R, LDC, IMAD.WIDE, LEA, BRA,
    EXIT, ...) are issued from `_SASS`, read off cuobjdump -sass per parameter set.

Parameters: memory instructions, their widths and addresses, FFMA/FMUL and BAR.SYNC follow the
parameters as derived above. The integer/control counts are exact for the parameter sets listed
in `_SASS` (the defaults, the recorded variant BM=64 of traces/static/vectorized__BM64.sass,
and BN=64, BK=16, BK=32, BM=BN=64, BM=BN=64/TN=4, BM=BN=64/BK=16/TM=TN=4), compiled with
nvcc 13.0.88. For any other parameters they are the defaults' per-block counts and the dotIdx
unroll factor is a guess (1 for TM*TN >= 64, else min(BK, 128/(TM*TN))): integer totals are
then approximate, and ptxas may also pipeline the loop differently (e.g. BM=64, BK=16, TM=4
loads As with LDS.64 pairs from a rotated loop), which this model does not follow.
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import body_ops, branch_ops, ld_run, vec_width

DEFAULTS = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}

# Integer, uniform and control instructions of each basic block, per (BM, BN, BK, TM, TN),
# read off `cuobjdump -sass` of kernels_cuda/vectorized.cu (nvcc 13.0.88, -O3, sm_90).
# Memory instructions, FFMA/FMUL and BAR.SYNC are not listed: the kernel issues them itself.
# dot: the dotIdx loop body, executed BK/dot_unroll times per K slab.
_SASS = {
    (128, 128, 8, 8, 8): {  # defaults; 92 registers
        "entry": {"BRA": 1, "ISETP.LT.AND": 1, "LDC": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 29, "MOV": 5, "HFMA2.MMA": 3, "S2UR": 2, "UIMAD.WIDE": 2, "ULDC.64": 2,
                  "USHF.L.U32": 2, "S2R": 1, "UIMAD": 1, "UMOV": 1},
        "head": {"LOP3.LUT": 4, "LEA": 3, "MOV": 3, "SHF.L.U32": 3, "IMAD": 2, "IMAD.WIDE": 2,
                 "LDC": 2, "SHF.R.U32.HI": 2, "UIADD3": 2, "ULEA": 2, "IADD3": 1,
                 "ISETP.LE.AND": 1, "S2UR": 1, "UMOV": 1},
        "dot": {"IADD3": 2, "LEA": 2, "BRA": 1, "ISETP.NE.AND": 1, "LOP3.LUT": 1, "SHF.L.U32": 1},
        "tail": {"BRA": 1, "IMAD.WIDE": 1, "SHF.L.U32": 1, "UIADD3": 1, "UIADD3.X": 1},
        "epi": {"IMAD.WIDE": 7, "IMAD": 2, "LOP3.LUT": 2, "S2R": 2, "SHF.L.U32": 2, "ULDC": 2,
                "EXIT": 1, "IADD3": 1, "LDC": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1,
                "S2UR": 1, "SHF.R.S32.HI": 1, "SHF.R.U32.HI": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "dot_unroll": 1,
    },
    (64, 128, 8, 8, 8): {  # BM=64, the recorded variant; 94 registers
        "entry": {"BRA": 1, "ISETP.LT.AND": 1, "LDC": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 29, "MOV": 5, "HFMA2.MMA": 3, "S2UR": 2, "UIMAD.WIDE": 2, "ULDC.64": 2,
                  "USHF.L.U32": 2, "S2R": 1, "UIMAD": 1, "UMOV": 1},
        "head": {"LOP3.LUT": 5, "LEA": 4, "IMAD.WIDE": 3, "MOV": 3, "SHF.L.U32": 3, "IMAD": 2,
                 "LDC": 2, "SHF.R.U32.HI": 2, "UIADD3": 2, "ULEA": 2, "IADD3": 1,
                 "ISETP.LE.AND": 1, "S2UR": 1, "UMOV": 1},
        "dot": {"LEA": 4, "BRA": 1, "IADD3": 1, "ISETP.NE.AND": 1},
        "tail": {"BRA": 1, "IMAD.WIDE": 1, "SHF.L.U32": 1, "UIADD3": 1, "UIADD3.X": 1},
        "epi": {"IMAD.WIDE": 7, "IMAD": 2, "LOP3.LUT": 2, "S2R": 2, "SHF.L.U32": 2, "ULDC": 2,
                "EXIT": 1, "IADD3": 1, "LDC": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1,
                "S2UR": 1, "SHF.R.S32.HI": 1, "SHF.R.U32.HI": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "dot_unroll": 1,
    },
    (128, 64, 8, 8, 8): {  # BN=64; 96 registers
        "entry": {"BRA": 1, "ISETP.LT.AND": 1, "LDC": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 29, "MOV": 11, "HFMA2.MMA": 3, "S2UR": 2, "UIMAD.WIDE": 2,
                  "ULDC.64": 2, "USHF.L.U32": 2, "S2R": 1, "UIMAD": 1, "UMOV": 1},
        "head": {"LOP3.LUT": 5, "LEA": 4, "IMAD.WIDE": 3, "SHF.L.U32": 3, "IMAD": 2, "LDC": 2,
                 "SHF.R.U32.HI": 2, "UIADD3": 2, "ULEA": 2, "IADD3": 1, "ISETP.LE.AND": 1,
                 "MOV": 1, "S2UR": 1, "UMOV": 1},
        "dot": {"LEA": 4, "BRA": 1, "IADD3": 1, "ISETP.NE.AND": 1},
        "tail": {"BRA": 1, "IADD3": 1, "IADD3.X": 1, "IMAD.WIDE": 1, "SHF.L.U32": 1},
        "epi": {"IMAD.WIDE": 7, "IMAD": 2, "LOP3.LUT": 2, "S2R": 2, "SHF.L.U32": 2, "ULDC": 2,
                "EXIT": 1, "IADD3": 1, "LDC": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1,
                "S2UR": 1, "SHF.R.S32.HI": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "dot_unroll": 1,
    },
    (128, 128, 16, 8, 8): {  # BK=16; 92 registers
        "entry": {"BRA": 1, "ISETP.LT.AND": 1, "LDC": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 29, "HFMA2.MMA": 3, "MOV": 3, "S2UR": 2, "UIMAD.WIDE": 2, "ULDC.64": 2,
                  "USHF.L.U32": 2, "S2R": 1, "UIMAD": 1, "UMOV": 1},
        "head": {"LEA": 5, "MOV": 5, "IMAD.WIDE": 4, "LOP3.LUT": 4, "SHF.L.U32": 3,
                 "SHF.R.U32.HI": 3, "IMAD": 2, "UIADD3": 2, "ULEA": 2, "UMOV": 2, "IADD3": 1,
                 "ISETP.LE.AND": 1, "LDC": 1, "S2UR": 1, "ULDC": 1},
        "dot": {"LEA": 2, "BRA": 1, "IADD3": 1, "LOP3.LUT": 1, "MOV": 1, "PLOP3.LUT": 1,
                "UIADD3": 1, "UISETP.NE.AND": 1, "USHF.L.U32": 1},
        "tail": {"BRA": 1, "UIADD3": 1, "UIADD3.X": 1, "UIMAD.WIDE": 1, "USHF.L.U32": 1},
        "epi": {"IMAD.WIDE": 7, "IMAD": 2, "LOP3.LUT": 2, "S2R": 2, "SHF.L.U32": 2, "ULDC": 2,
                "EXIT": 1, "IADD3": 1, "LDC": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1,
                "S2UR": 1, "SHF.R.S32.HI": 1, "SHF.R.U32.HI": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "dot_unroll": 1,
    },
    (128, 128, 32, 8, 8): {  # BK=32; 96 registers
        "entry": {"BRA": 1, "ISETP.LT.AND": 1, "LDC": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 29, "HFMA2.MMA": 3, "MOV": 3, "S2UR": 2, "UIMAD.WIDE": 2, "ULDC.64": 2,
                  "USHF.L.U32": 2, "S2R": 1, "UIMAD": 1, "UMOV": 1},
        "head": {"MOV": 10, "LEA": 9, "IMAD.WIDE": 8, "LOP3.LUT": 4, "SHF.L.U32": 3,
                 "SHF.R.U32.HI": 3, "IMAD": 2, "UIADD3": 2, "ULEA": 2, "UMOV": 2, "IADD3": 1,
                 "ISETP.LE.AND": 1, "LDC": 1, "S2UR": 1, "ULDC": 1},
        "dot": {"LEA": 2, "BRA": 1, "IADD3": 1, "LOP3.LUT": 1, "MOV": 1, "PLOP3.LUT": 1,
                "UIADD3": 1, "UISETP.NE.AND": 1, "USHF.L.U32": 1},
        "tail": {"BRA": 1, "UIADD3": 1, "UIADD3.X": 1, "UIMAD.WIDE": 1, "USHF.L.U32": 1},
        "epi": {"IMAD.WIDE": 7, "IMAD": 2, "LOP3.LUT": 2, "S2R": 2, "SHF.L.U32": 2, "ULDC": 2,
                "EXIT": 1, "IADD3": 1, "LDC": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1,
                "S2UR": 1, "SHF.R.S32.HI": 1, "SHF.R.U32.HI": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "dot_unroll": 1,
    },
    (64, 64, 8, 8, 8): {  # BM=BN=64; 92 registers
        "entry": {"BRA": 1, "ISETP.LT.AND": 1, "LDC": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 29, "HFMA2.MMA": 3, "MOV": 3, "S2UR": 2, "UIMAD.WIDE": 2, "ULDC.64": 2,
                  "USHF.L.U32": 2, "S2R": 1, "UIMAD": 1, "UMOV": 1},
        "head": {"LEA": 5, "MOV": 5, "IMAD.WIDE": 4, "LOP3.LUT": 4, "SHF.L.U32": 3, "IMAD": 2,
                 "SHF.R.U32.HI": 2, "UIADD3": 2, "ULEA": 2, "UMOV": 2, "IADD3": 1,
                 "ISETP.LE.AND": 1, "LDC": 1, "S2UR": 1, "ULDC": 1},
        "dot": {"LEA": 2, "BRA": 1, "IADD3": 1, "LOP3.LUT": 1, "MOV": 1, "PLOP3.LUT": 1,
                "UIADD3": 1, "UISETP.NE.AND": 1, "USHF.L.U32": 1},
        "tail": {"BRA": 1, "UIADD3": 1, "UIADD3.X": 1, "UIMAD.WIDE": 1, "USHF.L.U32": 1},
        "epi": {"IMAD.WIDE": 7, "IMAD": 2, "LOP3.LUT": 2, "S2R": 2, "SHF.L.U32": 2, "ULDC": 2,
                "EXIT": 1, "IADD3": 1, "LDC": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1,
                "S2UR": 1, "SHF.R.S32.HI": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "dot_unroll": 1,
    },
    (64, 64, 8, 8, 4): {  # BM=BN=64, TN=4: dotIdx unrolled 4x; 72 registers
        "entry": {"S2UR": 2, "USHF.L.U32": 2, "BRA": 1, "ISETP.LT.AND": 1, "LDC": 1,
                  "LOP3.LUT": 1, "S2R": 1, "SHF.R.U32.HI": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 13, "LEA": 5, "HFMA2.MMA": 3, "MOV": 3, "SHF.L.U32": 3, "IADD3": 2,
                  "IMAD": 2, "LOP3.LUT": 2, "SHF.L.U64.HI": 2, "SHF.R.S32.HI": 2,
                  "UIMAD.WIDE": 2, "ULDC.64": 2, "ULEA": 2, "UMOV": 2, "S2UR": 1,
                  "SHF.R.U32.HI": 1, "UIADD3": 1, "UIMAD": 1, "ULDC": 1, "USHF.L.U32": 1,
                  "USHF.L.U64.HI": 1, "USHF.R.S32.HI": 1},
        "head": {"IADD3.X": 2, "LEA": 2, "ISETP.LE.AND": 1, "LDC": 1, "MOV": 1, "UIADD3": 1,
                 "UMOV": 1},
        "dot": {"BRA": 1, "IADD3": 1, "PLOP3.LUT": 1, "UIADD3": 1, "UISETP.NE.AND": 1},
        "tail": {"UIADD3.X": 2, "BRA": 1, "UIADD3": 1, "ULEA": 1},
        "epi": {"IMAD.WIDE": 7, "SHF.L.U32": 3, "IMAD": 2, "S2R": 2, "ULDC": 2, "EXIT": 1,
                "IADD3": 1, "LDC": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1,
                "LOP3.LUT": 1, "S2UR": 1, "SHF.R.S32.HI": 1, "SHF.R.U32.HI": 1, "ULDC.64": 1,
                "USHF.L.U32": 1},
        "dot_unroll": 4,
    },
    (64, 64, 16, 4, 4): {  # BM=BN=64, BK=16, TM=TN=4: dotIdx unrolled 8x; 46 registers
        "entry": {"S2UR": 2, "USHF.L.U32": 2, "BRA": 1, "ISETP.LT.AND": 1, "LDC": 1,
                  "LOP3.LUT": 1, "S2R": 1, "SHF.R.U32.HI": 1, "ULDC": 1, "ULDC.64": 1},
        "setup": {"CS2R": 7, "LEA": 5, "SHF.L.U32": 3, "UMOV": 3, "IADD3": 2, "IMAD": 2,
                  "LOP3.LUT": 2, "SHF.L.U64.HI": 2, "SHF.R.S32.HI": 2, "UIMAD.WIDE": 2,
                  "ULDC.64": 2, "ULEA": 2, "HFMA2.MMA": 1, "MOV": 1, "S2UR": 1,
                  "SHF.R.U32.HI": 1, "UIADD3": 1, "UIMAD": 1, "ULDC": 1, "USHF.L.U32": 1,
                  "USHF.L.U64.HI": 1, "USHF.R.S32.HI": 1},
        "head": {"IADD3.X": 2, "LEA": 2, "ISETP.LE.AND": 1, "LDC": 1, "MOV": 1, "UIADD3": 1,
                 "UMOV": 1},
        "dot": {"BRA": 1, "IADD3": 1, "PLOP3.LUT": 1, "UIADD3": 1, "UISETP.NE.AND": 1},
        "tail": {"UIADD3.X": 2, "BRA": 1, "UIADD3": 1, "ULEA": 1},
        "epi": {"IMAD.WIDE": 3, "ULDC": 3, "MOV": 2, "SHF.L.U32": 2, "EXIT": 1, "IADD3": 1,
                "IMAD": 1, "LEA": 1, "LEA.HI.X": 1, "LEA.HI.X.SX32": 1, "LOP3.LUT": 1,
                "S2R": 1, "SHF.R.U32.HI": 1, "UIMAD": 1, "ULDC.64": 1, "USHF.R.S32.HI": 1},
        "dot_unroll": 8,
    },
}


def sass_blocks(BM, BN, BK, TM, TN):
    """(per-block integer/control counts, exact?) for these parameters."""
    key = (BM, BN, BK, TM, TN)
    if key in _SASS:
        return _SASS[key], True
    s = dict(_SASS[tuple(DEFAULTS.values())])
    s["dot_unroll"] = 1 if TM * TN >= 64 else max(1, min(BK, 128 // (TM * TN)))
    while BK % s["dot_unroll"]:
        s["dot_unroll"] -= 1
    return s, False


def vectorized(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=128, BK=8, TM=8, TN=8):
    S, _ = sass_blocks(BM, BN, BK, TM, TN)
    NUM_THREADS = (BM * BN) // (TM * TN)
    k.ops(S["entry"])                                   # K < 1 ? (never: K >= BK)

    cRow, cCol = k.blockIdx.y, k.blockIdx.x
    As = k.shared("As", BM * BK)                        # transposed: As[k*BM + m]
    Bs = k.shared("Bs", BK * BN)
    tid = k.threadIdx.x
    threadCol = tid % (BN // TN)
    threadRow = tid // (BN // TN)

    A = A + cRow * BM * K
    B = B + cCol * BN
    C = C + cRow * BM * N + cCol * BN

    innerRowA, innerColA = tid // (BK // 4), tid % (BK // 4)
    ROW_STRIDE_A = NUM_THREADS // (BK // 4)
    innerRowB, innerColB = tid // (BN // 4), tid % (BN // 4)
    ROW_STRIDE_B = NUM_THREADS // (BN // 4)

    k.ops(S["setup"])                                   # zero accumulators, pointers
    acc = [[0.0] * TN for _ in range(TM)]
    wA, wB = vec_width(TM, BM), vec_width(TN, BN)     # floats per LDS of a run
    u = S["dot_unroll"]

    for bkIdx in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        k.ops(S["head"])
        # ptxas issues the slab's global loads (A's, then B's) before any of its stores (SASS 0x0650,
        # 0x0670, then the STS at 0x0780-0x07c0)
        a_vals = [A.ld((innerRowA + off) * K + bkIdx + innerColA * 4, vec=4) for off in range(0, BM, ROW_STRIDE_A)]
        b_vals = [B.ld((bkIdx + innerRowB + off) * N + innerColB * 4, vec=4) for off in range(0, BK, ROW_STRIDE_B)]
        # A: float4 from global, stored transposed (4 scalar STS, BM apart)
        for off, t in zip(range(0, BM, ROW_STRIDE_A), a_vals):
            for j in range(4):
                As.st((innerColA * 4 + j) * BM + innerRowA + off, t[j])
        # B: float4 to float4
        for off, t in zip(range(0, BK, ROW_STRIDE_B), b_vals):
            Bs.st((innerRowB + off) * BN + innerColB * 4, t, vec=4)
        k.syncthreads()

        for d0 in range(0, BK, u):                      # the dotIdx loop, unrolled u times
            k.ops(body_ops(S["dot"]))
            for dotIdx in range(d0, d0 + u):
                regM = ld_run(As, dotIdx * BM + threadRow * TM, TM, wA)
                regN = ld_run(Bs, dotIdx * BN + threadCol * TN, TN, wB)
                for i in range(TM):
                    for j in range(TN):
                        acc[i][j] = k.ffma(regM[i], regN[j], acc[i][j])
            k.ops(branch_ops(S["dot"]))
        k.ops(body_ops(S["tail"]))
        k.syncthreads()
        k.ops(branch_ops(S["tail"]))

    # C: float4 read-modify-write
    k.ops(body_ops(S["epi"]))
    for i in range(TM):
        for j in range(0, TN, 4):
            idx = (threadRow * TM + i) * N + threadCol * TN + j
            c = C.ld(idx, vec=4)
            out = []
            for q in range(4):
                if q == 0:      # ptxas: beta*C first, then alpha*acc + that
                    out.append(k.ffma(acc[i][j], alpha, k.fmul(c[0], beta)))
                else:           # alpha*acc first, then beta*C + that
                    out.append(k.ffma(c[q], beta, k.fmul(acc[i][j + q], alpha)))
            C.st(idx, out, vec=4)
    k.ops(branch_ops(S["epi"]))                            # EXIT


def _check(M, N, K, BM, BN, BK, TM, TN):
    name = "vectorized"
    require(BM % TM == 0 and BN % TN == 0, name,
            f"BM must be a multiple of TM and BN of TN (BM={BM}, TM={TM}, BN={BN}, TN={TN})")
    nt = (BM * BN) // (TM * TN)
    require(nt <= 1024, name, f"(BM*BN)/(TM*TN) = {nt} threads per block exceeds 1024")
    require(BK % 4 == 0 and BN % 4 == 0 and TN % 4 == 0, name,
            f"BK, BN and TN must be multiples of 4 for the float4 accesses (BK={BK}, BN={BN}, TN={TN})")
    require(nt % (BK // 4) == 0 and BM % (nt // (BK // 4)) == 0, name,
            f"the A staging loop must cover BM={BM} rows in whole passes of "
            f"NUM_THREADS/(BK/4) = {nt}/{BK // 4} rows")
    require(nt % (BN // 4) == 0 and BK % (nt // (BN // 4)) == 0, name,
            f"the B staging loop must cover BK={BK} rows in whole passes of "
            f"NUM_THREADS/(BN/4) = {nt}/{BN // 4} rows")
    require(M % BM == 0 and N % BN == 0 and K % BK == 0, name,
            f"no bounds checks: M must be a multiple of BM={BM}, N of BN={BN} and K of BK={BK} "
            f"(got M={M}, N={N}, K={K})")


SPEC = KernelSpec(
    name="vectorized", fn=vectorized, params=dict(DEFAULTS),
    launch=lambda M, N, K, BM, BN, BK, TM, TN: ((N // BN, M // BM, 1), ((BM * BN) // (TM * TN), 1, 1)),
    check=_check,
    grid_period=lambda M, N, K, BM, BN, BK, TM, TN: (align_period(BN, BN),
                                                     align_period(BM * K, BM * N)),
    summary="regtile2d with float4 global loads/stores and As transposed: LDS.128 in the inner loop",
    source="kernels_cuda/vectorized.cu",
    notes=("integer/control counts exact for the parameter sets in kernels_py/vectorized.py _SASS",),
)
