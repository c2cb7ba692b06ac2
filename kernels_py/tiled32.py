"""tiled32: seed 000's sgemm_tiled<BM, BN, BK>: shared-memory tiles with grid-stride loops.

Twin: kernels_cuda/tiled32.cu, statement for statement (BM=BN=BK=32; block (BN, BM), grid
(N/BN, M/BM)). C = A*B: alpha and beta are accepted and ignored, as in the twin. The CTA walks the
tiles of C with grid-stride loops (each runs once with the standard launch), and stages each tile
with strided copy loops. The claim it exists to test: the tiled structure of smemtile with the
copy loops a compiler cannot unroll, so loop control joins the shared-memory work.
"""
from gpusim.kernel import KernelSpec, align_period, require

DEFAULTS = {"BM": 32, "BN": 32, "BK": 32}


def tiled32(k, M, N, K, alpha, A, B, beta, C, BM=32, BN=32, BK=32):
    As = k.shared("As", BM * BK)
    Bs = k.shared("Bs", BK * BN)
    tx, ty = k.threadIdx.x, k.threadIdx.y
    tid, nThreads = ty * BN + tx, BM * BN
    for brow in range(k.blockIdx.y * BM, M, k.gridDim.y * BM):
        for bcol in range(k.blockIdx.x * BN, N, k.gridDim.x * BN):
            acc = 0.0
            for k0 in k.loop(0, K, BK, period=align_period(BK, BK * N)):
                for e0 in range(0, BM * BK, nThreads):
                    e = tid + e0
                    with k.where(e < BM * BK):
                        As.st((e // BK) * BK + e % BK, A.ld((brow + e // BK) * K + k0 + e % BK))
                for e0 in range(0, BK * BN, nThreads):
                    e = tid + e0
                    with k.where(e < BK * BN):
                        Bs.st((e // BN) * BN + e % BN, B.ld((k0 + e // BN) * N + bcol + e % BN))
                k.syncthreads()
                for kk in range(BK):
                    acc = k.ffma(As.ld(ty * BK + kk), Bs.ld(kk * BN + tx), acc)
                k.syncthreads()
            C.st((brow + ty) * N + bcol + tx, acc)


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
)
