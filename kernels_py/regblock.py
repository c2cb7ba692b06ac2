"""regblock: seed 000's sgemm_regblock<BM, BN, BK, TM, TN>: register blocking on shared-memory tiles.

Twin: kernels_cuda/regblock.cu, statement for statement (defaults 128, 64, 8, 8, 8: 128 threads,
grid (N/BN, M/BM)). C = A*B (alpha and beta are accepted and ignored, as in the twin). Each thread
accumulates a TM x TN microtile as an outer product; As is staged transposed (As[k][m]); the CTA
walks the tiles of C with grid-stride loops, which with the standard launch run once. The seed
elides the store; the twin writes acc[i][j], i outer. The claim it exists to test: an 8x8
microtile's (TM + TN) shared loads per TM*TN FMAs, both operands contiguous (LDS.128 in SASS).
"""
from gpusim.kernel import KernelSpec, align_period, require

DEFAULTS = {"BM": 128, "BN": 64, "BK": 8, "TM": 8, "TN": 8}


def regblock(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=64, BK=8, TM=8, TN=8):
    nThreads = (BM // TM) * (BN // TN)
    As = k.shared("As", BK * BM)              # transposed: As[k][m]
    Bs = k.shared("Bs", BK * BN)
    tid = k.threadIdx.x
    threadRow, threadCol = tid // (BN // TN), tid % (BN // TN)
    rowA, colA, strideA = tid // BK, tid % BK, nThreads // BK
    rowB, colB, strideB = tid // BN, tid % BN, nThreads // BN
    for bRow in range(k.blockIdx.y * BM, M, k.gridDim.y * BM):
        for bCol in range(k.blockIdx.x * BN, N, k.gridDim.x * BN):
            acc = [[0.0] * TN for _ in range(TM)]
            for k0 in k.loop(0, K, BK, period=align_period(BK, BK * N)):
                for off in range(0, BM, strideA):          # stage A slab (transposed)
                    As.st(colA * BM + rowA + off, A.ld((bRow + rowA + off) * K + k0 + colA))
                for off in range(0, BK, strideB):          # stage B slab
                    Bs.st((rowB + off) * BN + colB, B.ld((k0 + rowB + off) * N + bCol + colB))
                k.syncthreads()
                for kk in range(BK):
                    rA = [As.ld(kk * BM + threadRow * TM + i) for i in range(TM)]
                    rB = [Bs.ld(kk * BN + threadCol * TN + j) for j in range(TN)]
                    for i in range(TM):
                        for j in range(TN):
                            acc[i][j] = k.ffma(rA[i], rB[j], acc[i][j])
                k.syncthreads()
            for i in range(TM):
                for j in range(TN):
                    C.st((bRow + threadRow * TM + i) * N + bCol + threadCol * TN + j, acc[i][j])


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
    notes=("computes C = A*B (alpha, beta ignored)",),
)
