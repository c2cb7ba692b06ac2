"""naive: one thread per element of C (seed 000's sgemm_naive); a warp walks down a column of A.

Twin: kernels_cuda/naive.cu, statement for statement. Block (BLOCK, BLOCK), grid
(ceil(M/BLOCK), ceil(N/BLOCK)); x = blockIdx.x*BLOCK + threadIdx.x is the row of C, so the 32
threads of a warp read 32 rows of A (32 sectors per request) and one element of B (a broadcast).
The claim it exists to test: uncoalesced loads of A, 32 sectors per request where a coalesced
walk needs 4.
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import require_grid_y


def naive(k, M, N, K, alpha, A, B, beta, C, BLOCK=32):
    x = k.blockIdx.x * BLOCK + k.threadIdx.x            # row of C
    y = k.blockIdx.y * BLOCK + k.threadIdx.y            # column of C
    with k.where((x < M) & (y < N)):
        if not k.any_active():
            return
        tmp = 0.0
        for i in k.loop(0, K, 1, period=align_period(1, N)):
            tmp = k.ffma(A.ld(x * K + i), B.ld(i * N + y), tmp)
        C.st(x * N + y, k.ffma(alpha, tmp, k.fmul(beta, C.ld(x * N + y))))


def _check(M, N, K, BLOCK):
    require(BLOCK * BLOCK <= 1024, "naive",
            f"block (BLOCK, BLOCK) = {BLOCK * BLOCK} threads exceeds 1024 threads per block")
    require_grid_y("naive", -(-N // BLOCK))


SPEC = KernelSpec(
    name="naive", fn=naive, params={"BLOCK": 32},
    launch=lambda M, N, K, BLOCK: ((-(-M // BLOCK), -(-N // BLOCK), 1), (BLOCK, BLOCK, 1)),
    check=_check,
    # consecutive CTAs along x: A moves BLOCK rows (BLOCK*K), C BLOCK rows (BLOCK*N);
    # along y: B and C move BLOCK columns
    grid_period=lambda M, N, K, BLOCK: (align_period(BLOCK * K, BLOCK * N), align_period(BLOCK)),
    summary="one thread per output; a warp walks down a column of A (uncoalesced)",
    source="kernels_cuda/naive.cu",
    notes=("any M, N, K: bounds checked per thread",),
)
