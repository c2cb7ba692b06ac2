"""regblock: seed 000's sgemm_regblock<BM, BN, BK, TM, TN>: register blocking on shared-memory tiles.

Twin: kernels_cuda/regblock.cu (defaults 128, 64, 8, 8, 8: (BM/TM)*(BN/TN) = 128 threads, grid
(N/BN, M/BM)). C = A*B (alpha and beta are accepted and ignored, as in the twin). Each thread
accumulates a TM x TN microtile as an outer product; As is staged transposed (As[k][m]); the
CTA walks the tiles of C with grid-stride loops, which with the standard launch run exactly
once. The seed elides the store; the twin writes C[(bRow+threadRow*TM+i)*N + bCol+threadCol*TN+j]
= acc[i][j], i outer.

What the Python kernel issues is what `nvcc 13.0 -O3 -arch=sm_90` made of the twin (see
traces/static/regblock.sass), basic block by basic block:

  entry      S2R/S2UR/LDC, `bRow < M` test, `@P0 EXIT` (executed, predicated off).
  prologue   thread indices, shared-memory addresses.
  bRow loop  head: `bCol < N` test and branch; then (bCol loop entry) one UMOV.
  bCol loop  head: zero acc[TM][TN] (CS2R/HFMA2.MMA/MOV), `K < 1` test; K-loop setup.
    K loop   ONE basic block per BK slab (`k.loop`, periodic: A moves BK floats, B BK*N):
             BM/strideA LDG.E of A then BK/strideB LDG.E of B, all loads before the stores,
             then the matching STS, BAR.SYNC; the k loop FULLY unrolled: per k, TM/4 LDS.128
             from As and TN/4 LDS.128 from Bs, TM*TN FFMA; BAR.SYNC; back-edge BRA.
    store    TM*TN scalar STG.E of acc, bCol += gridDim.x*BN and its loop test.
  bRow tail  bRow += gridDim.y*BM and its loop test; then EXIT.

Departures from the textbook source (all of them what ptxas did):
  * the 8 rA loads of a k-step are 2 LDS.128 in SASS, not 8 LDS, and the 8 rB loads are
    2 LDS.128, not 8 LDS: contiguous, 16-B aligned runs of 4 floats are merged. In general a
    thread's TM values of As[k] are loaded w floats at a time, w the largest of 4, 2, 1 dividing
    both TM and BM (the run starts at k*BM + threadRow*TM); likewise TN with BN;
  * the A and B staging loops are fully unrolled with all global loads issued before the
    first shared store (the loads are scalar LDG.E and STS: one float per thread per pass);
  * the k loop is fully unrolled (#pragma unroll), and so is the whole BK slab: the K loop is
    a single basic block of 12 LDG + 12 STS + 2 BAR + 32 LDS.128 + 512 FFMA + 23 integer and
    control instructions at the defaults;
  * the store of acc is 64 scalar STG.E (N is a runtime value, so ptxas cannot prove 16-B
    alignment of a row and does not vectorize it);
  * the `@P0 EXIT` of the first bRow test is executed by every warp (predicated off), so a
    warp executes 2 EXIT;
  * the integer/uniform/control instructions of each block are issued from `_SASS`, read off
    cuobjdump -sass per parameter set.

Parameters: memory instructions, their widths and addresses, FFMA and BAR.SYNC follow the
parameters as derived above. The integer/control counts are exact for the parameter sets listed
in `_SASS` (the defaults, the recorded variant BN=128 of traces/static/regblock__BN128.sass, and
BK=16, TN=4, BM=64, BM=BN=64/TM=TN=4), compiled with nvcc 13.0.88. For any other parameters
they are the defaults' per-block counts, so integer totals are approximate.
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import body_ops, branch_ops, ld_run, vec_width

DEFAULTS = {"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 8}

# Integer, uniform and control instructions of each basic block, per (BM, BN, BK, TM, TN),
# read off `cuobjdump -sass` of kernels_cuda/regblock.cu (nvcc 13.0.88, -O3, sm_90).
# Memory instructions, FFMA and BAR.SYNC are not listed: the kernel issues them itself.
_SASS = {
    (128, 64, 8, 8, 8): {  # defaults; 114 registers
        "entry": {"LDC": 2, "EXIT": 1, "ISETP.LE.AND": 1, "S2R": 1, "S2UR": 1, "USHF.L.U32": 1},
        "prologue": {"LEA": 6, "SHF.R.S32.HI": 3, "IADD3": 2, "LDC": 2, "LEA.HI": 2,
                     "LOP3.LUT": 2, "S2UR": 2, "SHF.L.U32": 2, "ULDC": 2, "ULEA": 2, "UMOV": 2,
                     "UIADD3": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},
        "brow_pre": {"UMOV": 1},
        "bcol_head": {"CS2R": 28, "HFMA2.MMA": 4, "MOV": 4, "BRA": 1, "ISETP.GE.AND": 1, "LDC": 1},
        "ksetup": {"MOV": 1, "ULDC": 1, "UMOV": 1},
        "kloop": {"IMAD.WIDE": 12, "IADD3": 4, "IMAD": 2, "LDC.64": 2, "BRA": 1,
                  "ISETP.LE.AND": 1, "UIADD3": 1},
        "store": {"IMAD.WIDE": 8, "LEA": 2, "BRA": 1, "IMAD": 1, "ISETP.LE.AND": 1, "LDC": 1,
                  "LDC.64": 1, "ULEA": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},
        "exit": {"EXIT": 1},
    },
    (128, 128, 8, 8, 8): {  # BN=128, the recorded variant; 122 registers
        "entry": {"LDC": 2, "EXIT": 1, "ISETP.LE.AND": 1, "S2UR": 1, "USHF.L.U32": 1},
        "prologue": {"LEA": 6, "SHF.R.S32.HI": 4, "IADD3": 3, "LEA.HI": 3, "LOP3.LUT": 3,
                     "LDC": 2, "S2UR": 2, "SHF.L.U32": 2, "ULDC": 2, "ULEA": 2, "UMOV": 2,
                     "S2R": 1, "UIADD3": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},
        "brow_pre": {"SHF.R.S32.HI": 2, "IADD3": 1, "LEA.HI": 1, "S2R": 1, "UMOV": 1},
        "bcol_head": {"CS2R": 30, "HFMA2.MMA": 2, "LDC": 2, "LEA": 2, "MOV": 2,
                      "SHF.R.S32.HI": 2, "BRA": 1, "IADD3": 1, "IMAD": 1, "IMAD.WIDE": 1,
                      "ISETP.GE.AND": 1, "LDC.64": 1, "LEA.HI": 1, "LOP3.LUT": 1, "S2R": 1},
        "ksetup": {"IADD3": 2, "LEA.HI": 1, "LOP3.LUT": 1, "MOV": 1, "ULDC": 1, "UMOV": 1},
        "kloop": {"IMAD.WIDE": 8, "IADD3": 2, "IMAD": 2, "LDC.64": 2, "BRA": 1,
                  "ISETP.LE.AND": 1, "UIADD3": 1},
        "store": {"IMAD.WIDE": 7, "BRA": 1, "ISETP.LE.AND": 1, "ULEA": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},
        "exit": {"EXIT": 1},
    },
    (128, 64, 16, 8, 8): {  # BK=16; 128 registers
        "entry": {"LDC": 2, "EXIT": 1, "ISETP.LE.AND": 1, "S2UR": 1, "USHF.L.U32": 1},
        "prologue": {"LEA": 6, "SHF.R.S32.HI": 4, "IADD3": 3, "LEA.HI": 3, "LOP3.LUT": 3,
                     "LDC": 2, "S2UR": 2, "SHF.L.U32": 2, "ULEA": 2, "UMOV": 2, "S2R": 1,
                     "UIADD3": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},
        "brow_pre": {"IADD3": 1, "UMOV": 1},
        "bcol_head": {"CS2R": 28, "HFMA2.MMA": 4, "MOV": 4, "LDC": 2, "BRA": 1, "IMAD": 1,
                      "IMAD.WIDE": 1, "ISETP.GE.AND": 1, "LDC.64": 1, "LEA": 1},
        "ksetup": {"MOV": 1, "ULDC": 1, "UMOV": 1},
        "kloop": {"IMAD.WIDE": 24, "IADD3": 3, "IMAD": 2, "LDC.64": 2, "LEA.HI": 2, "BRA": 1,
                  "ISETP.LE.AND": 1, "LEA.HI.SX32": 1, "LOP3.LUT": 1, "S2R": 1,
                  "SHF.R.S32.HI": 1, "UIADD3": 1},
        "store": {"IMAD.WIDE": 7, "BRA": 1, "ISETP.LE.AND": 1, "ULDC": 1, "ULEA": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULDC": 1, "ULEA": 1},
        "exit": {"EXIT": 1},
    },
    (64, 64, 8, 4, 4): {  # BM=BN=64, TM=TN=4; 64 registers
        "entry": {"LDC": 2, "EXIT": 1, "ISETP.LE.AND": 1, "S2UR": 1, "USHF.L.U32": 1},
        "prologue": {"LEA": 5, "IADD3": 4, "LEA.HI": 3, "LOP3.LUT": 3, "SHF.R.S32.HI": 3,
                     "IMAD": 2, "S2UR": 2, "ULDC": 2, "ULEA": 2, "UMOV": 2, "LDC": 1, "S2R": 1,
                     "SHF.L.U32": 1, "UIADD3": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},
        "brow_pre": {"IADD3": 4, "IMAD": 2, "IMAD.WIDE": 2, "SHF.R.S32.HI": 2, "LDC.64": 1,
                     "LEA.HI": 1, "LOP3.LUT": 1, "S2R": 1, "ULDC": 1, "UMOV": 1},
        "bcol_head": {"CS2R": 6, "HFMA2.MMA": 2, "MOV": 2, "BRA": 1, "ISETP.GE.AND": 1, "LDC": 1},
        "ksetup": {"MOV": 5, "IADD3": 2, "IMAD.WIDE": 2, "LDC.64": 1, "UMOV": 1},
        "kloop": {"IADD3": 2, "IADD3.X": 2, "IMAD.WIDE": 2, "BRA": 1, "ISETP.LE.AND": 1,
                  "UIADD3": 1},
        "store": {"IMAD.WIDE": 4, "LEA": 2, "SHF.R.S32.HI": 2, "BRA": 1, "IMAD": 1,
                  "ISETP.LE.AND": 1, "LDC": 1, "LDC.64": 1, "LEA.HI": 1, "S2R": 1, "ULEA": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},
        "exit": {"EXIT": 1},
    },
    (128, 64, 8, 8, 4): {  # TN=4; 64 registers
        "entry": {"LDC": 2, "EXIT": 1, "ISETP.LE.AND": 1, "S2UR": 1, "USHF.L.U32": 1},
        "prologue": {"LEA": 6, "SHF.R.S32.HI": 4, "IADD3": 3, "LEA.HI": 3, "LOP3.LUT": 3,
                     "ULDC": 3, "S2UR": 2, "ULEA": 2, "UMOV": 2, "USHF.L.U32": 2, "S2R": 1,
                     "UIADD3": 1, "ULDC.64": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},
        "brow_pre": {"IADD3": 1, "LEA": 1, "UMOV": 1},
        "bcol_head": {"CS2R": 14, "HFMA2.MMA": 2, "MOV": 2, "BRA": 1, "PLOP3.LUT": 1,
                      "UISETP.GE.AND": 1, "ULDC": 1},
        "ksetup": {"IADD3": 1, "MOV": 1, "UMOV": 1},
        "kloop": {"IMAD.WIDE": 6, "MOV": 3, "IADD3": 2, "IMAD": 2, "LDC.64": 2, "BRA": 1,
                  "LDC": 1, "LEA": 1, "PLOP3.LUT": 1, "UIADD3": 1, "UISETP.GE.AND": 1},
        "store": {"IMAD.WIDE": 8, "BRA": 1, "IMAD": 1, "ISETP.LE.AND": 1, "LDC": 1, "LDC.64": 1,
                  "LEA": 1, "ULEA": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},
        "exit": {"EXIT": 1},
    },
    (64, 64, 8, 8, 8): {  # BM=64; 112 registers
        "entry": {"LDC": 2, "EXIT": 1, "ISETP.LE.AND": 1, "S2R": 1, "S2UR": 1, "USHF.L.U32": 1},
        "prologue": {"LEA": 6, "SHF.R.S32.HI": 3, "IADD3": 2, "LEA.HI": 2, "LOP3.LUT": 2,
                     "S2UR": 2, "ULDC": 2, "ULEA": 2, "UMOV": 2, "LDC": 1, "SHF.L.U32": 1,
                     "UIADD3": 1, "ULDC.64": 1, "USHF.L.U32": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},
        "brow_pre": {"SHF.R.S32.HI": 2, "LEA.HI": 1, "S2R": 1, "UMOV": 1},
        "bcol_head": {"CS2R": 28, "HFMA2.MMA": 4, "MOV": 4, "BRA": 1, "ISETP.GE.AND": 1, "LDC": 1},
        "ksetup": {"MOV": 1, "UMOV": 1},
        "kloop": {"IMAD.WIDE": 16, "IADD3": 4, "IMAD": 2, "LDC.64": 2, "BRA": 1,
                  "ISETP.LE.AND": 1, "LDC": 1, "UIADD3": 1},
        "store": {"IMAD.WIDE": 8, "LEA": 2, "SHF.R.S32.HI": 2, "BRA": 1, "IMAD": 1,
                  "ISETP.LE.AND": 1, "LDC": 1, "LDC.64": 1, "LEA.HI": 1, "S2R": 1, "ULEA": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},
        "exit": {"EXIT": 1},
    },
}


def sass_blocks(BM, BN, BK, TM, TN):
    """(per-block integer/control counts, exact?) for these parameters."""
    key = (BM, BN, BK, TM, TN)
    if key in _SASS:
        return _SASS[key], True
    return _SASS[tuple(DEFAULTS.values())], False


def regblock(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=64, BK=8, TM=8, TN=8):
    S, _ = sass_blocks(BM, BN, BK, TM, TN)
    nThreads = (BM // TM) * (BN // TN)
    As = k.shared("As", BK * BM)                        # transposed: As[k][m]
    Bs = k.shared("Bs", BK * BN)
    tid = k.threadIdx.x
    threadRow, threadCol = tid // (BN // TN), tid % (BN // TN)
    rowA, colA, strideA = tid // BK, tid % BK, nThreads // BK
    rowB, colB, strideB = tid // BN, tid % BN, nThreads // BN
    wA, wB = vec_width(TM, BM), vec_width(TN, BN)     # floats per LDS of a run

    k.ops(S["entry"])                                   # bRow < M, @P0 EXIT (predicated off)
    if k.blockIdx.y * BM >= M:
        return
    k.ops(S["prologue"])
    for bRow in range(k.blockIdx.y * BM, M, k.gridDim.y * BM):
        k.ops(S["brow_head"])                           # bCol < N ?
        if k.blockIdx.x * BN < N:
            k.ops(S["brow_pre"])
        for bCol in range(k.blockIdx.x * BN, N, k.gridDim.x * BN):
            k.ops(S["bcol_head"])                       # acc = {}, K < 1 ?
            acc = [[0.0] * TN for _ in range(TM)]
            if K >= 1:
                k.ops(S["ksetup"])
            for k0 in k.loop(0, K, BK, period=align_period(BK, BK * N)):
                k.ops(body_ops(S["kloop"]))
                a = [A.ld((bRow + rowA + off) * K + (k0 + colA)) for off in range(0, BM, strideA)]
                b = [B.ld((k0 + rowB + off) * N + (bCol + colB)) for off in range(0, BK, strideB)]
                for n, off in enumerate(range(0, BM, strideA)):      # stage A slab (transposed)
                    As.st(colA * BM + rowA + off, a[n])
                for n, off in enumerate(range(0, BK, strideB)):      # stage B slab
                    Bs.st((rowB + off) * BN + colB, b[n])
                k.syncthreads()
                for kk in range(BK):                    # #pragma unroll
                    rA = ld_run(As, kk * BM + threadRow * TM, TM, wA)
                    rB = ld_run(Bs, kk * BN + threadCol * TN, TN, wB)
                    for i in range(TM):
                        for j in range(TN):
                            acc[i][j] = k.ffma(rA[i], rB[j], acc[i][j])
                k.syncthreads()
                k.ops(branch_ops(S["kloop"]))
            # store acc back to C (elided in the seed), then bCol += gridDim.x*BN
            k.ops(body_ops(S["store"]))
            for i in range(TM):
                for j in range(TN):
                    C.st((bRow + threadRow * TM + i) * N + bCol + threadCol * TN + j, acc[i][j])
            k.ops(branch_ops(S["store"]))
        k.ops(S["brow_tail"])                           # bRow += gridDim.y*BM
    k.ops(S["exit"])


def _check(M, N, K, BM, BN, BK, TM, TN):
    name = "regblock"
    require(BM % TM == 0 and BN % TN == 0, name,
            f"BM must be a multiple of TM and BN of TN (BM={BM}, TM={TM}, BN={BN}, TN={TN})")
    nt = (BM // TM) * (BN // TN)
    require(nt <= 1024, name, f"(BM/TM)*(BN/TN) = {nt} threads per block exceeds 1024")
    require(nt % BK == 0 and BM % (nt // BK) == 0, name,
            f"the A staging loop must cover BM={BM} rows in whole passes of nThreads/BK = "
            f"{nt}/{BK} rows")
    require(nt % BN == 0 and BK % (nt // BN) == 0, name,
            f"the B staging loop must cover BK={BK} rows in whole passes of nThreads/BN = "
            f"{nt}/{BN} rows")
    require(M % BM == 0 and N % BN == 0 and K % BK == 0, name,
            f"no bounds checks: M must be a multiple of BM={BM}, N of BN={BN} and K of BK={BK} "
            f"(got M={M}, N={N}, K={K})")


SPEC = KernelSpec(
    name="regblock", fn=regblock, params=dict(DEFAULTS),
    launch=lambda M, N, K, BM, BN, BK, TM, TN: ((N // BN, M // BM, 1), ((BM // TM) * (BN // TN), 1, 1)),
    check=_check,
    grid_period=lambda M, N, K, BM, BN, BK, TM, TN: (align_period(BN), align_period(BM * K, BM * N)),
    uses_alpha_beta=False,
    summary="seed 000's register-blocked kernel: 8x8 microtiles, As transposed, grid-stride loops",
    source="kernels_cuda/regblock.cu",
    notes=("computes C = A*B (alpha, beta ignored)",
           "integer/control counts exact for the parameter sets in kernels_py/regblock.py _SASS"),
)
