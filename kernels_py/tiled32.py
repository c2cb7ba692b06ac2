"""tiled32: seed 000's sgemm_tiled<32,32,32>: shared-memory tiles, grid-stride loops, C = A*B.

Twin: kernels_cuda/tiled32.cu (template <BM, BN, BK>, defaults 32, 32, 32). Block (BN, BM),
grid (N/BN, M/BM), so each grid-stride loop over the tiles of C runs once per block. Per K
tile the BM*BN threads copy As (BM*BK floats) and Bs (BK*BN floats) with strided loops
`for (e = tid; e < n; e += BM*BN)`, BAR.SYNC, a fully unrolled BK-step dot product, BAR.SYNC;
C = acc (alpha and beta are ignored). No bounds checks: M, N, K multiples of BM, BN, BK.

What the Python kernel issues is what `nvcc 13.0 -O3 -arch=sm_90` made of the twin
(traces/static/tiled32.sass, tiled32__BM16_BN64_BK16.sass), basic block by basic block:

  entry        brow < M test, `@P0 EXIT`                                            1x
  prologue     thread indices, shared addresses, the staging loops' trip counts     1x
  brow head    bcol < N test; per-brow setup; bcol head: acc = 0, K < 1 test        1x each
  K setup                                                                           1x
  K loop, K/BK trips (`k.loop`, periodic: A moves BK floats, B moves BK*N):
    staging    each strided copy loop is a general loop to ptxas: a guard
               (tid >= n skips it), a dispatch on its trip count T = ceil((n-tid)/(BM*BN))
               modulo 4, a 1-element block (T%4 != 0), a 2-element block (T%4 >= 2, the
               second element predicated on T%4 == 3), a guard, and a loop unrolled 4x
               (T//4 trips) with the index arithmetic (LEA.HI/SHF/LOP3 for e/BK, e%BK) of
               every element; each block ends in BSSY/BSYNC reconvergence. At the defaults
               n = BM*BN for both tiles, so T = 1: dispatch, 1-element block, guards.
               When BM == BN the two loops share one guard (ptxas sees the same n).
    compute    BSYNC, BAR, BK/4 LDS.128 (As row) + BK LDS (Bs column), BK FFMA, BAR,
               ISETP/BRA back
  store        STG.E of acc, bcol += gridDim.x*BN test                              1x
  brow tail    brow += gridDim.y*BM test; EXIT                                      1x

Departures from the textbook source (all of them what ptxas did):
  * the BK As loads of a tile's dot product are BK/4 LDS.128, not BK LDS: As[ty][k] for
    k = 0..BK-1 is a contiguous, 16-B aligned run when BK % 4 == 0 (in general w floats at a
    time, w the largest of 4, 2, 1 dividing BK); the Bs loads stay BK scalar LDS;
  * the one-line copy loops cost far more than one LDG + STS each: the generic strided-loop
    code (guards, trip-count dispatch, BSSY/BSYNC) runs every K tile, about 26 integer and
    control instructions per thread per tile at the defaults (see `_SASS`);
  * a predicated-off instruction still issues: in the 2-element block the third element's
    LDG/STS are predicated (`@P3`); a warp that runs the block with no lane at T%4 == 3 still
    executes them. ncu (H200, BM=BN=16, BK=32) counts them in smsp__inst_executed and the
    per-opcode table but not in smsp__sass_inst_executed_op_global_ld/_shared_st nor in
    l1tex__t_requests; the kernel API has no way to say "issued, no lane on", so they are
    issued as k.op rows, which the counters also take for requests (never at the defaults);
  * the integer/uniform/control instructions of each block are issued from `_SASS`;
  * issue order (the timing engine's concern, not the counts'): the first `lds_lead` shared loads
    of a tile come before its first FFMA and then about one per FFMA, and the last `ffma_sink`
    FFMAs sit below the trailing BAR.SYNC, read off the SASS per parameter set in `_SASS`
    (7 / 3 for the defaults, 6 / 4 for BM16_BN64_BK16).

Parameters: memory instructions, their widths and addresses, FFMA and BAR.SYNC follow
(BM, BN, BK) for any value, and so does the staging structure (guard, dispatch on T%4,
1- and 2-element blocks, x4 loop; merged guards when BM == BN); checked against the SASS
emulator of kernels_cuda/build.py for 15 parameter sets from (4,4,64) to (8,128,8), T = 0
to 16 elements per thread. The integer/control counts per block are exact, opcode by
opcode, for (BM,BN,BK) = (32,32,32), (32,32,16) and (16,64,16) (nvcc 13.0.88). Other
parameters use the blocks of (32,32,32) if BM == BN == BK, of (32,32,16) if BM == BN != BK,
of (16,64,16) if BM != BN: the integer totals then matched the SASS for every set checked
except BM > BN (64,16,16: 4 too many per tile), but the per-opcode split of the prologue and
loop-head blocks (IADD3 vs VIADD vs IMAD.IADD, how much index arithmetic ptxas hoists) is
the recorded set's, not necessarily ptxas's. A warp whose lanes copy different numbers of
elements (BM*BK or BK*BN modulo BM*BN not a multiple of 32) is modelled by lane masks; a
divergent warp's re-execution of BSYNC on each path is not modelled.
"""
import numpy as np

from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import lds_runs, row_dot_col

DEFAULTS = {"BM": 32, "BN": 32, "BK": 32}

# Integer, uniform and control instructions of each basic block, read off `cuobjdump -sass` of
# kernels_cuda/tiled32.cu (nvcc 13.0.88, -O3, sm_90), with the block's start offset. Memory
# instructions, FFMA and BAR.SYNC are not listed: the kernel issues them itself.
_SASS = {
    (32, 32, 32): {   # traces/static/tiled32.sass; BM == BN: one staging guard for both tiles
        "merged": True, "lds_lead": 7, "ffma_sink": 3,
        "entry": {"EXIT": 1, "ISETP.LE.AND": 1, "LDC": 2, "S2UR": 1, "USHF.L.U32": 1},   # 0x0000
        "prologue": {"IADD3": 3, "IMAD": 6, "IMAD.IADD": 2, "LEA": 10, "LEA.HI": 4,       # 0x0060
                     "LOP3.LUT": 4, "S2R": 2, "S2UR": 2, "SHF.R.S32.HI": 6, "UIADD3": 1,
                     "ULDC": 2, "ULDC.64": 1, "ULEA": 2, "UMOV": 2, "USHF.L.U32": 1,
                     "VIADD": 2, "VIMNMX": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},                           # 0x0390
        "brow_setup": {"IADD3": 1, "IMAD": 1, "UMOV": 1, "VIADD": 3},                   # 0x03c0
        "bcol_head": {"BRA": 1, "HFMA2.MMA": 1, "ISETP.GE.AND": 1, "LDC": 1},           # 0x0420
        "k_setup": {"IADD3": 1, "IMAD.MOV.U32": 1, "UMOV": 1, "VIADD": 2},              # 0x0460
        "guard": {"BRA": 1, "BSSY": 1, "ISETP.GT.AND": 1, "ULDC": 2},                   # 0x04b0
        "a_dispatch": {"BRA": 1, "BSSY": 1, "IMAD.MOV.U32": 1, "ISETP.GE.U32.AND": 2,   # 0x0500
                       "ISETP.NE.AND": 2},
        "a_rem1": {"BRA": 1, "IADD3": 1, "IMAD": 1, "IMAD.MOV.U32": 1, "IMAD.WIDE": 1,  # 0x0570
                   "ISETP.NE.AND": 1, "LDC": 1, "LDC.64": 1},
        "a_rem23": {"IADD3": 1, "IMAD": 2, "IMAD.MOV.U32": 2, "IMAD.WIDE": 2,           # 0x0610
                    "ISETP.NE.AND": 1, "VIADD": 1},
        "a_x4_guard": {"BRA": 1, "BSSY": 1, "BSYNC": 1},                                # 0x06e0
        "a_x4": {"BRA": 1, "IADD3": 7, "IMAD": 7, "IMAD.IADD": 2, "IMAD.WIDE": 4,       # 0x0710
                 "ISETP.GE.AND": 1, "LDC.64": 1, "LEA": 5, "LEA.HI": 4, "LOP3.LUT": 4,
                 "SHF.R.S32.HI": 8, "VIADD": 7},
        "b_dispatch": {"BRA": 1, "BSSY": 1, "BSYNC": 1, "IMAD.MOV.U32": 1},             # 0x0ac0
        "b_rem1": {"BRA": 1, "IADD3": 1, "IMAD": 1, "IMAD.MOV.U32": 1, "IMAD.WIDE": 1,  # 0x0b00
                   "ISETP.NE.AND": 1, "LDC": 1, "LDC.64": 1},
        "b_rem23": {"IADD3": 1, "IMAD": 2, "IMAD.MOV.U32": 1, "IMAD.WIDE": 2,           # 0x0ba0
                    "ISETP.NE.AND": 1, "MOV": 1, "VIADD": 1},
        "b_x4_guard": {"BRA": 1, "BSYNC": 1},                                           # 0x0c70
        "b_x4": {"BRA": 1, "IADD3": 8, "IMAD": 6, "IMAD.IADD": 1, "IMAD.WIDE": 4,       # 0x0c90
                 "ISETP.GE.AND": 1, "LDC.64": 1, "LEA": 6, "LEA.HI": 4, "LOP3.LUT": 4,
                 "SHF.R.S32.HI": 8, "VIADD": 7},
        "compute": {"BRA": 1, "BSYNC": 1, "ISETP.LE.AND": 1, "LDC": 1, "UIADD3": 1},    # 0x1040
        "store": {"BRA": 1, "IADD3": 1, "IMAD.WIDE": 1, "ISETP.LE.AND": 1, "LDC": 1,    # 0x1530
                  "LDC.64": 1, "ULEA": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},                # 0x15b0
        "exit": {"EXIT": 1},                                                            # 0x15f0
    },
    (32, 32, 16): {   # BM == BN != BK (nvcc 13.0.88 -DP_BK=16); shared guard, longer prologue
        "lds_lead": 6, "ffma_sink": 4,     # schedule not recorded: taken from (16, 64, 16)
        "merged": True,
        "entry": {"EXIT": 1, "ISETP.LE.AND": 1, "LDC": 2, "S2UR": 1, "USHF.L.U32": 1},   # 0x0000
        "prologue": {"IADD3": 2, "IMAD": 7, "IMAD.IADD": 5, "LEA": 9, "LEA.HI": 7,        # 0x0060
                     "LOP3.LUT": 7, "S2R": 2, "S2UR": 2, "SHF.R.S32.HI": 9, "UIADD3": 1,
                     "ULDC": 2, "ULDC.64": 1, "ULEA": 2, "UMOV": 2, "USHF.L.U32": 1,
                     "VIADD": 3, "VIMNMX": 1},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},                           # 0x0450
        "brow_setup": {"IADD3": 1, "IMAD": 1, "LEA.HI": 3, "S2R": 2, "SHF.R.S32.HI": 6, # 0x0480
                       "UMOV": 1, "VIADD": 3},
        "bcol_head": {"BRA": 1, "IMAD.MOV.U32": 1, "ISETP.GE.AND": 1, "LDC": 1},        # 0x0590
        "k_setup": {"IADD3": 1, "IMAD.IADD": 2, "IMAD.MOV.U32": 1, "LEA.HI": 3,         # 0x05d0
                    "LOP3.LUT": 3, "UMOV": 1, "VIADD": 3},
        "guard": {"BRA": 1, "BSSY": 1, "ISETP.GT.AND": 1, "ULDC": 2},                   # 0x06b0
        "a_dispatch": {"BRA": 1, "BSSY": 1, "IMAD.MOV.U32": 1, "ISETP.GE.U32.AND": 2,   # 0x0700
                       "ISETP.NE.AND": 2},
        "a_rem1": {"BRA": 1, "IADD3": 1, "IMAD": 1, "IMAD.MOV.U32": 1, "IMAD.WIDE": 1,  # 0x0770
                   "ISETP.NE.AND": 1, "LDC": 1, "LDC.64": 1},
        "a_rem23": {"IMAD": 2, "IMAD.MOV.U32": 2, "IMAD.WIDE": 2, "ISETP.NE.AND": 1,    # 0x0810
                    "VIADD": 2},
        "a_x4_guard": {"BRA": 1, "BSSY": 1, "BSYNC": 1},                                # 0x08e0
        "a_x4": {"BRA": 1, "IADD3": 3, "IMAD": 7, "IMAD.IADD": 2, "IMAD.WIDE": 4,       # 0x0910
                 "ISETP.GE.AND": 1, "LDC.64": 1, "LEA": 5, "LEA.HI": 4, "LOP3.LUT": 4,
                 "SHF.R.S32.HI": 8, "VIADD": 11},
        "b_dispatch": {"BRA": 1, "BSSY": 1, "BSYNC": 1, "IMAD.MOV.U32": 1},             # 0x0cc0
        "b_rem1": {"BRA": 1, "IMAD": 1, "IMAD.MOV.U32": 1, "IMAD.WIDE": 1,              # 0x0d00
                   "ISETP.NE.AND": 1, "LDC": 1, "LDC.64": 1, "VIADD": 1},
        "b_rem23": {"IADD3": 1, "IMAD": 2, "IMAD.MOV.U32": 2, "IMAD.WIDE": 2,           # 0x0da0
                    "ISETP.NE.AND": 1, "VIADD": 1},
        "b_x4_guard": {"BRA": 1, "BSYNC": 1},                                           # 0x0e70
        "b_x4": {"BRA": 1, "IADD3": 4, "IMAD": 8, "IMAD.IADD": 3, "IMAD.WIDE": 4,       # 0x0e90
                 "ISETP.GE.AND": 1, "LDC.64": 1, "LEA": 4, "LEA.HI": 4, "LOP3.LUT": 4,
                 "SHF.R.S32.HI": 8, "VIADD": 9},
        "compute": {"BRA": 1, "BSYNC": 1, "ISETP.LE.AND": 1, "LDC": 1, "UIADD3": 1},    # 0x1240
        "store": {"BRA": 1, "IMAD.WIDE": 1, "ISETP.LE.AND": 1, "LDC": 1, "LDC.64": 1,   # 0x14f0
                  "ULEA": 1, "VIADD": 1},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},                # 0x1570
        "exit": {"EXIT": 1},                                                            # 0x15b0
    },
    (16, 64, 16): {   # traces/static/tiled32__BM16_BN64_BK16.sass; separate staging guards
        "lds_lead": 6, "ffma_sink": 4,
        "merged": False,
        "entry": {"EXIT": 1, "ISETP.LE.AND": 1, "LDC": 2, "S2UR": 1, "USHF.L.U32": 1},   # 0x0000
        "prologue": {"IADD3": 3, "IMAD": 8, "IMAD.IADD": 5, "LEA": 9, "LEA.HI": 8,        # 0x0060
                     "LOP3.LUT": 8, "S2R": 2, "S2UR": 2, "SHF.R.S32.HI": 9, "UIADD3": 1,
                     "ULDC": 2, "ULDC.64": 1, "ULEA": 2, "UMOV": 2, "USHF.L.U32": 1,
                     "VIADD": 3, "VIMNMX": 2},
        "brow_head": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1},                           # 0x04a0
        "brow_setup": {"LEA.HI": 3, "SHF.R.S32.HI": 6, "UMOV": 1, "VIADD": 3},          # 0x04d0
        "bcol_head": {"BRA": 1, "IMAD.MOV.U32": 1, "ISETP.GE.AND": 1, "LDC": 1},        # 0x05a0
        "k_setup": {"IADD3": 1, "IMAD.IADD": 2, "IMAD.MOV.U32": 1, "LEA.HI": 3,         # 0x05e0
                    "LOP3.LUT": 3, "UMOV": 1, "VIADD": 3},
        "a_guard": {"BRA": 1, "BSSY": 1, "ISETP.GT.AND": 1, "ULDC": 1},                 # 0x06c0
        "a_dispatch": {"BRA": 1, "BSSY": 1, "ISETP.GE.U32.AND": 1, "ISETP.NE.AND": 1,   # 0x0700
                       "MOV": 1},
        "a_rem1": {"BRA": 1, "IMAD": 1, "IMAD.MOV.U32": 1, "IMAD.WIDE": 1,              # 0x0750
                   "ISETP.NE.AND": 1, "LDC": 1, "LDC.64": 1, "VIADD": 1},
        "a_rem23": {"IMAD": 2, "IMAD.MOV.U32": 2, "IMAD.WIDE": 2, "ISETP.NE.AND": 1,    # 0x07f0
                    "VIADD": 2},
        "a_x4_guard": {"BRA": 1, "BSYNC": 1},                                           # 0x08c0
        "a_x4": {"BRA": 1, "IADD3": 3, "IMAD": 8, "IMAD.IADD": 3, "IMAD.WIDE": 4,       # 0x08e0
                 "ISETP.GE.AND": 1, "LDC.64": 1, "LEA": 4, "LEA.HI": 4, "LOP3.LUT": 4,
                 "SHF.R.S32.HI": 8, "VIADD": 10},
        "b_guard": {"BRA": 1, "BSSY": 1, "BSYNC": 1, "ISETP.GT.AND": 1, "ULDC": 1},     # 0x0c90
        "b_dispatch": {"BRA": 1, "BSSY": 1, "ISETP.GE.U32.AND": 1, "ISETP.NE.AND": 1,   # 0x0ce0
                       "MOV": 1},
        "b_rem1": {"BRA": 1, "IMAD": 1, "IMAD.MOV.U32": 1, "IMAD.WIDE": 1,              # 0x0d30
                   "ISETP.NE.AND": 1, "LDC": 1, "LDC.64": 1, "VIADD": 1},
        "b_rem23": {"IMAD": 2, "IMAD.MOV.U32": 1, "IMAD.WIDE": 2, "ISETP.NE.AND": 1,    # 0x0dd0
                    "MOV": 1, "VIADD": 2},
        "b_x4_guard": {"BRA": 1, "BSYNC": 1},                                           # 0x0ea0
        "b_x4": {"BRA": 1, "IADD3": 3, "IMAD": 8, "IMAD.IADD": 3, "IMAD.WIDE": 4,       # 0x0ec0
                 "ISETP.GE.AND": 1, "LDC.64": 1, "LEA": 4, "LEA.HI": 4, "LOP3.LUT": 4,
                 "SHF.R.S32.HI": 8, "VIADD": 10},
        "compute": {"BRA": 1, "BSYNC": 1, "ISETP.LE.AND": 1, "LDC": 1, "UIADD3": 1},    # 0x1270
        "store": {"BRA": 1, "IMAD": 1, "IMAD.WIDE": 1, "ISETP.LE.AND": 1, "LDC": 1,     # 0x1520
                  "LDC.64": 1, "S2R": 1, "ULDC": 1, "ULEA": 1, "VIADD": 2},
        "brow_tail": {"BRA": 1, "ISETP.LE.AND": 1, "LDC": 1, "ULEA": 1},                # 0x15e0
        "exit": {"EXIT": 1},                                                            # 0x1620
    },
}


def _sass(BM, BN, BK):
    """The block table used for (BM, BN, BK): exact for the recorded sets (module docstring)."""
    key = (BM, BN, BK)
    if key in _SASS:
        return _SASS[key]
    if BM != BN:
        return _SASS[(16, 64, 16)]
    return _SASS[(32, 32, 32)] if BK == BN else _SASS[(32, 32, 16)]


def _stage(k, ops, pre, n, S, tid, copy):
    """One strided copy loop `for (e = tid; e < n; e += S) copy(e)`, as ptxas compiled it.

    `pre` prefixes the block names ("a_" or "b_"). Per lane T = number of elements it copies,
    r = T % 4: a dispatch, [1-element block if r != 0], [2-element block if r >= 2, its second
    element predicated on r == 3], x4-loop guard, x4 loop T//4 times. The caller has masked
    the lanes with tid < n (the loop guard)."""
    T = np.where(tid < n, (n - tid + S - 1) // S, 0)
    r = T % 4
    q = T // 4
    k.ops(ops[pre + "dispatch"])
    with k.where(r != 0):
        k.ops(ops[pre + "rem1"])
        copy(tid)
    rem23 = (tid < n) & (r >= 2)
    with k.where(rem23):
        k.ops(ops[pre + "rem23"])
        copy(tid + S)
        # the third element is predicated (@P3 LDG / @P3 STS): every warp running the
        # block issues both, with only the lanes at r == 3 on
        with k.where(r == 3, predicate=True):
            copy(tid + 2 * S)
    k.ops(ops[pre + "x4_guard"])
    for i in range(int(q.max(initial=0))):
        with k.where(q > i):
            k.ops(ops[pre + "x4"])
            for j in range(4):
                copy(tid + (r + 4 * i + j) * S)


def tiled32(k, M, N, K, alpha, A, B, beta, C, BM=32, BN=32, BK=32):
    tx, ty = k.threadIdx.x, k.threadIdx.y
    tid = ty * BN + tx
    S = BM * BN                                   # nThreads
    As = k.shared("As", BM * BK)                  # As[BM][BK]
    Bs = k.shared("Bs", BK * BN)                  # Bs[BK][BN]
    ops = _sass(BM, BN, BK)
    runs = lds_runs(BK)
    nA, nB = BM * BK, BK * BN

    k.ops(ops["entry"])
    brow0 = k.blockIdx.y * BM
    if brow0 >= M:                                # @P0 EXIT
        return
    k.ops(ops["prologue"])
    for brow in range(brow0, M, k.gridDim.y * BM):
        k.ops(ops["brow_head"])
        bcol0 = k.blockIdx.x * BN
        if bcol0 < N:
            k.ops(ops["brow_setup"])
        for bcol in range(bcol0, N, k.gridDim.x * BN):
            k.ops(ops["bcol_head"])
            acc = 0.0
            if K >= 1:
                k.ops(ops["k_setup"])
            for k0 in k.loop(0, K, BK, period=align_period(BK, BK * N)):

                def copy_a(e, k0=k0, brow=brow):
                    a = A.ld((brow + e // BK) * K + k0 + e % BK)
                    As.st(e, a)                   # As[e / BK][e % BK]

                def copy_b(e, k0=k0, bcol=bcol):
                    b = B.ld((k0 + e // BN) * N + bcol + e % BN)
                    Bs.st(e, b)                   # Bs[e / BN][e % BN]

                if ops["merged"]:
                    k.ops(ops["guard"])
                    with k.where(tid < nA):
                        _stage(k, ops, "a_", nA, S, tid, copy_a)
                        _stage(k, ops, "b_", nB, S, tid, copy_b)
                else:
                    k.ops(ops["a_guard"])
                    with k.where(tid < nA):
                        _stage(k, ops, "a_", nA, S, tid, copy_a)
                    k.ops(ops["b_guard"])
                    with k.where(tid < nB):
                        _stage(k, ops, "b_", nB, S, tid, copy_b)
                k.ops(ops["compute"])
                k.syncthreads()
                # acc += As[ty][i] * Bs[i][tx]
                acc = row_dot_col(k, As, ty * BK, Bs, tx, BN, runs, acc, lead=ops["lds_lead"],
                                  sink=ops["ffma_sink"], before_sink=k.syncthreads)
                if not ops["ffma_sink"]:
                    k.syncthreads()
            k.ops(ops["store"])
            C.st((brow + ty) * N + bcol + tx, acc)
        k.ops(ops["brow_tail"])
    k.ops(ops["exit"])


def _check(M, N, K, BM, BN, BK):
    require(BM * BN <= 1024, "tiled32",
            f"block (BN, BM) = ({BN}, {BM}) has {BM * BN} threads, more than 1024")
    require(M % BM == 0 and N % BN == 0 and K % BK == 0, "tiled32",
            f"the kernel has no bounds checks: M, N, K must be multiples of BM={BM}, BN={BN}, "
            f"BK={BK} (got M={M}, N={N}, K={K})")


SPEC = KernelSpec(
    name="tiled32", fn=tiled32, params=dict(DEFAULTS),
    launch=lambda M, N, K, BM, BN, BK: ((-(-N // BN), -(-M // BM), 1), (BN, BM, 1)),
    check=_check,
    # blockIdx.x moves B and C by BN floats; blockIdx.y moves A by BM*K floats and C by BM*N.
    grid_period=lambda M, N, K, BM, BN, BK: (align_period(BN), align_period(BM * K, BM * N)),
    uses_alpha_beta=False,
    summary="seed 000's sgemm_tiled<32,32,32>: 32x32 threads, shared tiles, C = A*B",
    source="kernels_cuda/tiled32.cu",
    notes=("As row loads merged into LDS.128 (BK % 4 == 0) by ptxas",
           "strided copy loops compiled as general loops: ~26 control instructions per tile",
           "integer/control counts exact for (32,32,32), (32,32,16) and (16,64,16)"),
)
