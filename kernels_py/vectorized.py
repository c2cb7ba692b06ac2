"""vectorized: regtile2d with float4 global accesses and As stored transposed (seed 003's next step).

Twin: kernels_cuda/vectorized.cu, statement for statement (BM=BN=128, BK=8, TM=TN=8, 256 threads).
Per BK-deep slab each thread copies float4s of A into As transposed (As[k*BM + m]) and float4s of
B into Bs, so the column of A and the row of B a thread needs per dotIdx are contiguous in shared
memory. The claim it exists to test: the same bytes in a quarter of the global instructions
(LDG.E.128), and shared reads of both operands as LDS.128.
"""
from gpusim.kernel import KernelSpec, align_period, require

DEFAULTS = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}


def vectorized(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=128, BK=8, TM=8, TN=8):
    NUM_THREADS = (BM * BN) // (TM * TN)
    cRow, cCol = k.blockIdx.y, k.blockIdx.x
    As = k.shared("As", BM * BK)              # transposed: As[k * BM + m]
    Bs = k.shared("Bs", BK * BN)
    threadCol = k.threadIdx.x % (BN // TN)
    threadRow = k.threadIdx.x // (BN // TN)
    A = A + cRow * BM * K
    B = B + cCol * BN
    C = C + cRow * BM * N + cCol * BN
    innerRowA, innerColA = k.threadIdx.x // (BK // 4), k.threadIdx.x % (BK // 4)
    ROW_STRIDE_A = NUM_THREADS // (BK // 4)
    innerRowB, innerColB = k.threadIdx.x // (BN // 4), k.threadIdx.x % (BN // 4)
    ROW_STRIDE_B = NUM_THREADS // (BN // 4)
    threadResults = [0.0] * (TM * TN)
    for bkIdx in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        for offset in range(0, BM, ROW_STRIDE_A):
            tmp = A.ld((innerRowA + offset) * K + innerColA * 4 + bkIdx, vec=4)
            for j in range(4):
                As.st((innerColA * 4 + j) * BM + innerRowA + offset, tmp[j])
        for offset in range(0, BK, ROW_STRIDE_B):
            Bs.st((innerRowB + offset) * BN + innerColB * 4,
                  B.ld((innerRowB + offset + bkIdx) * N + innerColB * 4, vec=4), vec=4)
        k.syncthreads()
        for dotIdx in range(BK):
            regM = [As.ld(dotIdx * BM + threadRow * TM + i) for i in range(TM)]
            regN = [Bs.ld(dotIdx * BN + threadCol * TN + i) for i in range(TN)]
            for m in range(TM):
                for n in range(TN):
                    threadResults[m * TN + n] = k.ffma(regM[m], regN[n], threadResults[m * TN + n])
        k.syncthreads()
    for m in range(TM):
        for n in range(0, TN, 4):
            idx = (threadRow * TM + m) * N + threadCol * TN + n
            tmp = C.ld(idx, vec=4)
            C.st(idx, tuple(k.ffma(alpha, threadResults[m * TN + n + j], k.fmul(beta, tmp[j])) for j in range(4)),
                 vec=4)


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
)
