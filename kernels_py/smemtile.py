"""smemtile: seed 004's 32x32 shared-memory tiling, one output per thread.

Twin: kernels_cuda/smemtile.cu (template <BLOCKSIZE>, default 32). Block (BLOCKSIZE^2, 1, 1),
grid (M/BLOCKSIZE, N/BLOCKSIZE): blockIdx.x walks the ROWS of C here. Per K tile every
thread copies one float of A and one of B into As/Bs, BAR.SYNC, a BLOCKSIZE-step dot product
out of shared memory, BAR.SYNC; at the end C = alpha*acc + beta*C. No bounds checks: M, N and
K must be multiples of BLOCKSIZE.

What the Python kernel issues is what `nvcc 13.0 -O3 -arch=sm_90` made of the twin
(traces/static/smemtile.sass, smemtile__BLOCKSIZE16.sass), basic block by basic block:

  BLOCKSIZE=32 (defaults):
    entry       S2R/S2UR/LDC/ULDC, threadRow/threadCol, `K < 1` test and branch     1x
    setup       pointers and shared addresses                                     1x (K >= 1)
    K loop      NOT unrolled: 2 LDG.E, 2 STS, BAR, 32 LDS + 8 LDS.128, 32 FFMA, BAR,
                IADD3/IADD3.X/IMAD.WIDE (pointer bumps), ISETP, BRA               K/32 x
    epilogue    address of C, LDG.E, FMUL (beta*C), FFMA (alpha*acc + .), STG.E, EXIT
  BLOCKSIZE=16 (the recorded variant): the K loop is unrolled 4x, then one 2-tile stage
    and one 1-tile stage for the K/16 % 4 leftover tiles, each behind its own guard block:
    setup, [PLOP3/IADD3 preheader if K/16 >= 4], x4 loop (K/16)//4 times, x2 guard,
    [x2 stage if K/16 % 4 >= 2], x1 guard, [x1 stage if K/16 is odd], epilogue.

Departures from the textbook source (all of them what ptxas did):
  * the BLOCKSIZE As loads of one tile's dot product are BLOCKSIZE/4 LDS.128, not BLOCKSIZE
    LDS: As[threadRow*BLOCKSIZE + k] for k = 0..BLOCKSIZE-1 is a contiguous run, 16-B aligned
    when BLOCKSIZE % 4 == 0, and ptxas merges it. In general the run is loaded w floats at a
    time, w the largest of 4, 2, 1 dividing BLOCKSIZE (checked with nvcc for BLOCKSIZE =
    1..8, 10-12, 14, 16, 20, 24, 28, 30-32: LDS.64 pairs for 2, 6, 10, 14, 30; scalar LDS for
    odd sizes). The Bs loads stay BLOCKSIZE scalar LDS (they are BLOCKSIZE floats apart);
  * the epilogue computes beta*C first (FMUL C, beta) and then FFMA(acc, alpha, .): one FMUL and
    one FFMA, not two FMUL and an FADD;
  * issue order (the timing engine's concern, not the counts'): ptxas issues the first
    `lds_lead` shared loads of a tile before its first FFMA and then about one per FFMA, and moves
    the last `ffma_sink` FFMAs below the trailing BAR.SYNC (they touch no shared memory); both are
    read off the SASS per parameter set in `_SASS` (smemtile: 10 / 0 at BLOCKSIZE=32, 6 / 5 at 16);
  * the integer/uniform/control instructions of each block (S2R, LDC, LEA, IMAD.WIDE, ISETP,
    BRA, EXIT, ...) are issued from `_SASS`, read off cuobjdump -sass; at BLOCKSIZE=16 the K
    loop is unrolled 4x with 2- and 1-tile remainder stages, which the kernel mirrors.

Parameters: memory instructions, their widths and addresses, FFMA/FMUL and BAR.SYNC follow
BLOCKSIZE for any value (checked against the SASS emulator of kernels_cuda/build.py for
BLOCKSIZE = 1..8, 10-12, 14, 16, 20, 24, 28, 30-32). The integer/control counts are exact for
BLOCKSIZE = 32 and 16 only (nvcc 13.0.88). ptxas unrolls the K loop differently with
BLOCKSIZE (tiles per unrolled stage): rolled for 19..32; x4 loop, x2, x1 for 11..18; x2 loop,
x1 for 7..10; x4 loop + x1 loop for 1, 4, 5; x16 loop, x8, x4 loop, x1 loop for 2 and 3;
x8, x4, x2, x1 for 6. The kernel uses the BLOCKSIZE=16 blocks for 11..18 and the
BLOCKSIZE=32 blocks (a rolled loop) for every other value, so integer totals are then
approximate: within 3 % of the whole instruction count for BLOCKSIZE >= 10, but up to 15 %
off for BLOCKSIZE <= 8, whose tiles are so small that loop control is a large share (checked
at K = 64 tiles; the non-power-of-2 sizes' division arithmetic is left out).
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import lds_runs, row_dot_col, store_alpha_beta

# Integer, uniform and control instructions of each basic block, read off `cuobjdump -sass` of
# kernels_cuda/smemtile.cu (nvcc 13.0.88, -O3, sm_90). Memory instructions, FFMA/FMUL and
# BAR.SYNC are not listed: the kernel issues them itself.
_SASS = {
    32: {  # traces/static/smemtile.sass: K loop rolled, one tile per trip
        "unroll": 1, "lds_lead": 10, "ffma_sink": 0,
        # 0x0000
        "entry": {"BRA": 1, "ISETP.LT.AND": 1, "LDC": 1, "LOP3.LUT": 1, "MOV": 1, "S2R": 1,
                  "S2UR": 2, "SHF.R.U32.HI": 1, "ULDC": 1, "ULDC.64": 1, "USHF.L.U32": 2},
        # 0x00d0
        "setup": {"HFMA2.MMA": 1, "IADD3": 2, "IMAD": 2, "LDC": 1, "LEA": 5, "LEA.HI.X": 2,
                  "LEA.HI.X.SX32": 2, "LOP3.LUT": 3, "MOV": 1, "S2UR": 1, "SHF.L.U32": 2,
                  "UIADD3": 1, "UIMAD": 1, "ULDC.64": 2, "ULEA": 2, "UMOV": 1, "USHF.R.S32.HI": 2},
        # 0x02c0
        "x1": {"BRA": 1, "IADD3": 2, "IADD3.X": 1, "IMAD.WIDE": 1, "ISETP.GE.AND": 1},
        # 0x0800
        "epilogue": {"EXIT": 1, "IADD3": 1, "IMAD": 1, "LEA": 1, "LEA.HI.X": 1,
                     "LEA.HI.X.SX32": 1, "UIMAD": 1, "ULDC": 3, "ULDC.64": 1, "USHF.R.S32.HI": 1},
    },
    16: {  # traces/static/smemtile__BLOCKSIZE16.sass: K loop unrolled 4x, x2 and x1 stages
        "unroll": 4, "lds_lead": 6, "ffma_sink": 5,
        # 0x0000
        "entry": {"BRA": 1, "ISETP.GT.AND": 1, "LDC": 2, "LOP3.LUT": 1, "MOV": 1, "S2R": 1,
                  "S2UR": 2, "SHF.R.U32.HI": 1, "ULDC.64": 1, "USHF.L.U32": 2},
        # 0x00d0
        "setup": {"BRA": 1, "HFMA2.MMA": 1, "IADD3": 2, "IMAD": 3, "ISETP.GT.AND": 1,
                  "LDC": 1, "LEA": 5, "LEA.HI.X": 2, "LEA.HI.X.SX32": 2, "LOP3.LUT": 3,
                  "PLOP3.LUT": 1, "S2UR": 1, "SHF.L.U32": 2, "SHF.R.S32.HI": 1, "UIADD3": 1,
                  "ULDC.64": 2, "ULEA": 2, "UMOV": 2, "USHF.R.S32.HI": 1},
        # 0x02f0
        "x4_pre": {"IADD3": 1, "PLOP3.LUT": 1},
        # 0x0310
        "x4": {"BRA": 1, "IADD3": 1, "IADD3.X": 1, "IMAD.WIDE": 4, "ISETP.LE.AND": 1,
               "UIADD3": 1},
        # 0x0e20
        "x2_guard": {"BRA": 1, "IADD3": 1, "ISETP.GT.AND": 1},
        # 0x0e50
        "x2": {"IADD3": 1, "IADD3.X": 1, "IMAD.WIDE": 2, "PLOP3.LUT": 1, "UIADD3": 1},
        # 0x13f0
        "x1_guard": {"BRA": 1, "ISETP.GT.OR": 1},
        # 0x1410
        "x1": {},
        # 0x16b0
        "epilogue": {"EXIT": 1, "IADD3": 1, "IMAD": 1, "LEA": 1, "LEA.HI.X": 1,
                     "LEA.HI.X.SX32": 1, "UIMAD": 1, "ULDC": 3, "ULDC.64": 1, "USHF.R.S32.HI": 1},
    },
}


def _sass(BS):
    """The block table used for BLOCKSIZE (exact for 32 and 16, see the module docstring)."""
    if BS in _SASS:
        return _SASS[BS]
    return _SASS[16] if 11 <= BS <= 18 else _SASS[32]


def smemtile(k, M, N, K, alpha, A, B, beta, C, BLOCKSIZE=32):
    BS = BLOCKSIZE
    cRow, cCol = k.blockIdx.x, k.blockIdx.y
    As = k.shared("As", BS * BS)
    Bs = k.shared("Bs", BS * BS)
    threadRow = k.threadIdx.x // BS
    threadCol = k.threadIdx.x % BS
    A = A + cRow * BS * K
    B = B + cCol * BS
    C = C + cRow * BS * N + cCol * BS
    ops = _sass(BS)
    runs = lds_runs(BS)

    def tile(t, acc):
        """One BLOCKSIZE-deep K tile (A and B already advanced by t tiles)."""
        a = A.ld(threadRow * K + threadCol + t * BS)
        b = B.ld(threadRow * N + threadCol + t * BS * N)
        As.st(threadRow * BS + threadCol, a)
        Bs.st(threadRow * BS + threadCol, b)
        k.syncthreads()
        # acc += As[threadRow*BS + i] * Bs[i*BS + threadCol]
        acc = row_dot_col(k, As, threadRow * BS, Bs, threadCol, BS, runs, acc,
                          lead=ops["lds_lead"], sink=ops["ffma_sink"], before_sink=k.syncthreads)
        if not ops["ffma_sink"]:
            k.syncthreads()
        return acc

    k.ops(ops["entry"])
    acc = 0.0
    T = K // BS                                   # K tiles (K % BS == 0 is required)
    if K >= 1:
        k.ops(ops["setup"])
        if ops["unroll"] == 1:
            for t in k.loop(0, T, 1, period=align_period(BS, BS * N)):
                k.ops(ops["x1"])
                acc = tile(t, acc)
        else:
            t = 0
            if T >= 4:
                k.ops(ops["x4_pre"])
                for t0 in k.loop(0, 4 * (T // 4), 4, period=align_period(4 * BS, 4 * BS * N)):
                    k.ops(ops["x4"])
                    for j in range(4):
                        acc = tile(t0 + j, acc)
                t = 4 * (T // 4)
            k.ops(ops["x2_guard"])
            if T - t >= 2:
                k.ops(ops["x2"])
                acc = tile(t, acc)
                acc = tile(t + 1, acc)
                t += 2
            k.ops(ops["x1_guard"])
            if T - t >= 1:
                k.ops(ops["x1"])
                acc = tile(t, acc)

    k.ops(ops["epilogue"])
    store_alpha_beta(k, C, threadRow * N + threadCol, acc, alpha, beta)


def _check(M, N, K, BLOCKSIZE):
    BS = BLOCKSIZE
    require(BS * BS <= 1024, "smemtile",
            f"BLOCKSIZE*BLOCKSIZE = {BS * BS} threads per block exceeds 1024 (BLOCKSIZE <= 32)")
    require(M % BS == 0 and N % BS == 0 and K % BS == 0, "smemtile",
            f"the kernel has no bounds checks: M, N and K must be multiples of BLOCKSIZE={BS} "
            f"(got M={M}, N={N}, K={K})")


SPEC = KernelSpec(
    name="smemtile", fn=smemtile, params={"BLOCKSIZE": 32},
    launch=lambda M, N, K, BLOCKSIZE: ((-(-M // BLOCKSIZE), -(-N // BLOCKSIZE), 1),
                                       (BLOCKSIZE * BLOCKSIZE, 1, 1)),
    check=_check,
    # blockIdx.x moves A by BLOCKSIZE rows (BLOCKSIZE*K floats) and C by BLOCKSIZE*N floats;
    # blockIdx.y moves B and C by BLOCKSIZE floats.
    grid_period=lambda M, N, K, BLOCKSIZE: (align_period(BLOCKSIZE * K, BLOCKSIZE * N),
                                            align_period(BLOCKSIZE)),
    summary="32x32 shared-memory tiles, one output per thread (seed 004)",
    source="kernels_cuda/smemtile.cu",
    notes=("As row loads merged into LDS.128 (BLOCKSIZE % 4 == 0) by ptxas",
           "integer/control counts exact for BLOCKSIZE = 32 and 16"),
)
