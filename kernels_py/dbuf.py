"""dbuf: double-buffered SGEMM, prefetching tile k+1 into registers while tile k is computed.

Twin: kernels_cuda/dbuf.cu, statement for statement (BM=BN=128, BK=8, TM=TN=8, 256 threads).
Two shared buffers per operand; the float4 loads of the next tile are issued before the
compute of the current one, stored to the other buffer after it, and one barrier per tile
separates the phases. As is kept transposed so both operands are read as float4.

The claim it exists to test: hiding the global-load latency behind the FFMAs of the previous
tile lifts the long-scoreboard stalls of the single-buffered kernels (regtile2d, vectorized)
off the critical path, at the cost of registers (the prefetched float4 live across the compute)
and twice the shared memory; loads per FMA are those of `vectorized` (float4 both ways).
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import require_tile_multiples

NAME = "dbuf"
DEFAULTS = {"BM": 128, "BN": 128, "BK": 8, "TM": 8, "TN": 8}


def dbuf(k, M, N, K, alpha, A, B, beta, C, BM=128, BN=128, BK=8, TM=8, TN=8):
    NUM_THREADS = (BM * BN) // (TM * TN)
    A_LOADS = (BM * BK // 4) // NUM_THREADS
    B_LOADS = (BK * BN // 4) // NUM_THREADS
    ROW_STRIDE_A = NUM_THREADS // (BK // 4)
    ROW_STRIDE_B = NUM_THREADS // (BN // 4)
    tid = k.threadIdx.x

    As = [k.shared("As0", BK * BM), k.shared("As1", BK * BM)]
    Bs = [k.shared("Bs0", BK * BN), k.shared("Bs1", BK * BN)]

    threadCol = tid % (BN // TN)
    threadRow = tid // (BN // TN)
    innerRowA, innerColA = tid // (BK // 4), tid % (BK // 4)
    innerRowB, innerColB = tid // (BN // 4), tid % (BN // 4)

    A = A + k.blockIdx.y * BM * K
    B = B + k.blockIdx.x * BN
    C = C + k.blockIdx.y * BM * N + k.blockIdx.x * BN

    threadResults = [0.0] * (TM * TN)

    def load_tile(bk):
        nextA = [A.ld((innerRowA + i * ROW_STRIDE_A) * K + bk + innerColA * 4, vec=4) for i in range(A_LOADS)]
        nextB = [B.ld((bk + innerRowB + i * ROW_STRIDE_B) * N + innerColB * 4, vec=4) for i in range(B_LOADS)]
        return nextA, nextB

    def store_tile(buf, nextA, nextB):
        for i in range(A_LOADS):
            row = innerRowA + i * ROW_STRIDE_A
            for j in range(4):
                As[buf].st((innerColA * 4 + j) * BM + row, nextA[i][j])
        for i in range(B_LOADS):
            Bs[buf].st((innerRowB + i * ROW_STRIDE_B) * BN + innerColB * 4, nextB[i], vec=4)

    nextA, nextB = load_tile(0)            # prologue: tile 0 into buffer 0
    store_tile(0, nextA, nextB)
    k.syncthreads()

    for bkIdx in k.loop(0, K, BK, period=align_period(BK, BK * N)):
        cur = (bkIdx // BK) % 2
        more = bkIdx + BK < K
        if more:                           # tile k+1: global -> registers
            nextA, nextB = load_tile(bkIdx + BK)
        for dotIdx in range(BK):           # tile k from shared memory
            regM, regN = [], []
            for i in range(0, TM, 4):
                regM += As[cur].ld(dotIdx * BM + threadRow * TM + i, vec=4)
            for i in range(0, TN, 4):
                regN += Bs[cur].ld(dotIdx * BN + threadCol * TN + i, vec=4)
            for m in range(TM):
                for n in range(TN):
                    threadResults[m * TN + n] = k.ffma(regM[m], regN[n], threadResults[m * TN + n])
        if more:                           # registers -> the other buffer
            store_tile(1 - cur, nextA, nextB)
        k.syncthreads()

    for m in range(TM):
        for n in range(0, TN, 4):
            idx = (threadRow * TM + m) * N + threadCol * TN + n
            c = C.ld(idx, vec=4)
            out = tuple(k.ffma(threadResults[m * TN + n + j], alpha, k.fmul(c[j], beta)) for j in range(4))
            C.st(idx, out, vec=4)


def _check(M, N, K, BM, BN, BK, TM, TN):
    require(BM % TM == 0 and BN % TN == 0 and TM % 4 == 0 and TN % 4 == 0, NAME,
            f"TM={TM} and TN={TN} must be multiples of 4 dividing BM={BM} and BN={BN}")
    T = (BM * BN) // (TM * TN)
    require(T <= 1024, NAME, f"(BM*BN)/(TM*TN) = {T} threads per block exceeds 1024")
    require(BK % 4 == 0 and T % (BK // 4) == 0 and BM % (T // (BK // 4)) == 0 and BM * BK // 4 >= T, NAME,
            "the A tile must be loaded in whole float4 passes of all threads")
    require(BN % 4 == 0 and T % (BN // 4) == 0 and BK % (T // (BN // 4)) == 0 and BK * BN // 4 >= T, NAME,
            "the B tile must be loaded in whole float4 passes of all threads")
    require_tile_multiples(NAME, M, N, K, BM, BN, BK)


def _launch(M, N, K, BM, BN, BK, TM, TN):
    return (-(-N // BN), -(-M // BM), 1), ((BM * BN) // (TM * TN), 1, 1)


def _grid_period(M, N, K, BM, BN, BK, TM, TN):
    return align_period(BN), align_period(BM * K, BM * N)


SPEC = KernelSpec(
    name=NAME, fn=dbuf, params=dict(DEFAULTS), launch=_launch, check=_check, grid_period=_grid_period,
    summary="double-buffered 2-D register tiling: tile k+1's float4 loads in flight while tile k computes",
    source="kernels_cuda/dbuf.cu",
)
