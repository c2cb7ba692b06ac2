"""smem2buf: 2-D register tiling with double-buffered shared memory.

Twin: kernels_cuda/smem2buf.cu, statement for statement (BM=BN=128, BK=8, TM=TN=8, 256 threads).
Two shared buffers of each tile: while the threads compute tile t from buffer t%2 they store tile
t+1 into the other, so one barrier per tile suffices where regtile2d needs two. The claim it exists
to test: halving the barriers (and overlapping the next tile's global loads with this tile's FFMAs)
buys time only where the barrier wait was the limit; `gpusim check` shows the one barrier is enough
(no hazard: each buffer is written a whole tile after its last read).
No bounds checks: M must be a multiple of BM, N of BN, K of BK.
"""
from gpusim.kernel import KernelSpec, align_period
from kernels_py._common import require_scalar_staging, require_tile_multiples

NAME = "smem2buf"
DEFAULTS = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}


def smem2buf(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=128, BK=8, TM=8, TN=8):
    NUM_THREADS = (BM * BN) // (TM * TN)
    tid = k.threadIdx.x
    cRow, cCol = k.blockIdx.y, k.blockIdx.x
    As = k.shared("As", 2 * BM * BK)
    Bs = k.shared("Bs", 2 * BK * BN)
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
    # tile 0 into buffer 0
    for offset in range(0, BM, ROW_STRIDE_A):
        As.st((innerRowA + offset) * BK + innerColA, A.ld((innerRowA + offset) * K + innerColA))
    for offset in range(0, BK, ROW_STRIDE_B):
        Bs.st((innerRowB + offset) * BN + innerColB, B.ld((innerRowB + offset) * N + innerColB))
    k.syncthreads()
    for bkIdx in k.loop(0, K, BK, period=2 * align_period(BK, BK * N)):
        cur = (bkIdx // BK) % 2
        nxt = 1 - cur
        if bkIdx + BK < K:      # tile t+1 into the other buffer, read by nobody during tile t
            for offset in range(0, BM, ROW_STRIDE_A):
                As.st(nxt * BM * BK + (innerRowA + offset) * BK + innerColA,
                      A.ld((innerRowA + offset) * K + innerColA + bkIdx + BK))
            for offset in range(0, BK, ROW_STRIDE_B):
                Bs.st(nxt * BK * BN + (innerRowB + offset) * BN + innerColB,
                      B.ld((innerRowB + offset + bkIdx + BK) * N + innerColB))
        for dotIdx in range(BK):
            regM = [As.ld(cur * BM * BK + (threadRow * TM + i) * BK + dotIdx) for i in range(TM)]
            regN = [Bs.ld(cur * BK * BN + dotIdx * BN + threadCol * TN + i) for i in range(TN)]
            for m in range(TM):
                for n in range(TN):
                    threadResults[m * TN + n] = k.ffma(regM[m], regN[n], threadResults[m * TN + n])
        k.syncthreads()         # tile t+1 stored; tile t read: the buffers swap roles
    for m in range(TM):
        for n in range(TN):
            idx = (threadRow * TM + m) * N + threadCol * TN + n
            C.st(idx, k.ffma(alpha, threadResults[m * TN + n], k.fmul(beta, C.ld(idx))))


def _check(M, N, K, BM, BN, BK, TM, TN):
    require_scalar_staging(NAME, BM, BN, BK, TM, TN)
    require_tile_multiples(NAME, M, N, K, BM, BN, BK)


SPEC = KernelSpec(
    name=NAME, fn=smem2buf, params=dict(DEFAULTS),
    launch=lambda M, N, K, BM, BN, BK, TM, TN: ((-(-N // BN), -(-M // BM), 1), ((BM * BN) // (TM * TN), 1, 1)),
    check=_check,
    # x: B and C move by BN elements per CTA; y: A by BM*K, C by BM*N
    grid_period=lambda M, N, K, BM, BN, BK, TM, TN: (align_period(BN), align_period(BM * K, BM * N)),
    summary="2-D register tiling, double-buffered shared memory: one barrier per tile",
    source="kernels_cuda/smem2buf.cu",
)
