"""regtile2d: 2-D register tiling (seed 003's sgemm_register_tiling_2d).

Twin: kernels_cuda/regtile2d.cu, statement for statement (BM=BN=128, BK=8, TM=TN=8, 256 threads).
Each thread owns a TM x TN patch of C and accumulates it as an outer product of TM values of As
and TN values of Bs per step of K. The claim it exists to test: (TM + TN) shared loads feed
TM*TN FMAs (16 for 64 at the defaults in the source; ptxas merges the contiguous Bs reads into
LDS.128, the As reads stay scalar), and the kernel turns from memory- to issue-bound.
No bounds checks: M must be a multiple of BM, N of BN, K of BK.
"""
from gpusim.kernel import KernelSpec, align_period
from kernels_py._common import require_scalar_staging, require_tile_multiples

NAME = "regtile2d"
DEFAULTS = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}


def regtile2d(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=128, BK=8, TM=8, TN=8):
    NUM_THREADS = (BM * BN) // (TM * TN)
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
    ROW_STRIDE_A = NUM_THREADS // BK
    innerColB, innerRowB = tid % BN, tid // BN
    ROW_STRIDE_B = NUM_THREADS // BN
    threadResults = [0.0] * (TM * TN)
    for bkIdx in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        for offset in range(0, BM, ROW_STRIDE_A):
            As.st((innerRowA + offset) * BK + innerColA, A.ld((innerRowA + offset) * K + innerColA + bkIdx))
        for offset in range(0, BK, ROW_STRIDE_B):
            Bs.st((innerRowB + offset) * BN + innerColB, B.ld((innerRowB + offset + bkIdx) * N + innerColB))
        k.syncthreads()
        for dotIdx in range(BK):
            regM = [As.ld((threadRow * TM + i) * BK + dotIdx) for i in range(TM)]
            regN = [Bs.ld(dotIdx * BN + threadCol * TN + i) for i in range(TN)]
            for m in range(TM):
                for n in range(TN):
                    threadResults[m * TN + n] = k.ffma(regM[m], regN[n], threadResults[m * TN + n])
        k.syncthreads()
    for m in range(TM):
        for n in range(TN):
            idx = (threadRow * TM + m) * N + threadCol * TN + n
            C.st(idx, k.ffma(alpha, threadResults[m * TN + n], k.fmul(beta, C.ld(idx))))


def _check(M, N, K, BM, BN, BK, TM, TN):
    require_scalar_staging(NAME, BM, BN, BK, TM, TN)
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
)
