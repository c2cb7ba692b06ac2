"""regtile1d: 1-D register tiling (seed 003's sgemm_register_tiling_1d).

Twin: kernels_cuda/regtile1d.cu, statement for statement (BM=BN=64, BK=8, TM=8, 512 threads).
Each thread computes a column of TM elements of C: per dotIdx one value of Bs is kept in a
register and feeds TM FMAs, with TM values of As. The claim it exists to test: loads per FMA fall
from 2 (smemtile) to (1 + TM)/TM shared loads per FMA in the source; ptxas merges a thread's As
reads of a slab (TM*BK contiguous floats) into LDS.128, so the SASS needs fewer still.
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import require_tile_multiples

NAME = "regtile1d"
DEFAULTS = {"BM": 64, "BN": 64, "BK": 8, "TM": 8}


def regtile1d(k, M, N, K, alpha, A, B, beta, C, BM=64, BN=64, BK=8, TM=8):
    cRow, cCol = k.blockIdx.y, k.blockIdx.x
    threadCol = k.threadIdx.x % BN
    threadRow = k.threadIdx.x // BN
    As = k.shared("As", BM * BK)
    Bs = k.shared("Bs", BK * BN)
    A = A + cRow * BM * K
    B = B + cCol * BN
    C = C + cRow * BM * N + cCol * BN
    innerColA, innerRowA = k.threadIdx.x % BK, k.threadIdx.x // BK
    innerColB, innerRowB = k.threadIdx.x % BN, k.threadIdx.x // BN
    threadResults = [0.0] * TM
    for bkIdx in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        As.st(innerRowA * BK + innerColA, A.ld(innerRowA * K + innerColA + bkIdx))
        Bs.st(innerRowB * BN + innerColB, B.ld(innerRowB * N + innerColB + bkIdx * N))
        k.syncthreads()
        for dotIdx in range(BK):
            tmpB = Bs.ld(dotIdx * BN + threadCol)
            for resIdx in range(TM):
                threadResults[resIdx] = k.ffma(As.ld((threadRow * TM + resIdx) * BK + dotIdx), tmpB,
                                               threadResults[resIdx])
        k.syncthreads()
    for resIdx in range(TM):
        idx = (threadRow * TM + resIdx) * N + threadCol
        C.st(idx, k.ffma(alpha, threadResults[resIdx], k.fmul(beta, C.ld(idx))))


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
)
