"""coalesced: one thread per element of C, 1-D blocks (seed 003's global-memory coalescing step).

Twin: kernels_cuda/coalesced.cu, statement for statement. Block (BLOCKSIZE*BLOCKSIZE), grid
(ceil(M/BLOCKSIZE), ceil(N/BLOCKSIZE)); row = blockIdx.x*BLOCKSIZE + threadIdx.x/BLOCKSIZE,
col = blockIdx.y*BLOCKSIZE + threadIdx.x%BLOCKSIZE, so a warp reads 32 consecutive floats of a row
of B (4 sectors per request) and one element of A (a broadcast). The claim it exists to test:
coalescing alone, with the same instructions as naive, cuts the sectors per request eightfold.
"""
from gpusim.kernel import KernelSpec, align_period, require
from kernels_py._common import require_grid_y


def coalesced(k, M, N, K, alpha, A, B, beta, C, BLOCKSIZE=32):
    row = k.blockIdx.x * BLOCKSIZE + k.threadIdx.x // BLOCKSIZE
    col = k.blockIdx.y * BLOCKSIZE + k.threadIdx.x % BLOCKSIZE
    with k.where((row < M) & (col < N)):
        if not k.any_active():
            return
        tmp = 0.0
        for i in k.loop(0, K, 1, period=align_period(1, N)):
            tmp = k.ffma(A.ld(row * K + i), B.ld(i * N + col), tmp)
        C.st(row * N + col, k.ffma(alpha, tmp, k.fmul(beta, C.ld(row * N + col))))


def _check(M, N, K, BLOCKSIZE):
    require(BLOCKSIZE * BLOCKSIZE <= 1024, "coalesced",
            f"block (BLOCKSIZE*BLOCKSIZE) = {BLOCKSIZE * BLOCKSIZE} threads exceeds 1024 threads per block")
    require_grid_y("coalesced", -(-N // BLOCKSIZE))


SPEC = KernelSpec(
    name="coalesced", fn=coalesced, params={"BLOCKSIZE": 32},
    launch=lambda M, N, K, BLOCKSIZE: ((-(-M // BLOCKSIZE), -(-N // BLOCKSIZE), 1),
                                       (BLOCKSIZE * BLOCKSIZE, 1, 1)),
    check=_check,
    # consecutive CTAs along x: A and C move BLOCKSIZE rows; along y: B and C move BLOCKSIZE columns
    grid_period=lambda M, N, K, BLOCKSIZE: (align_period(BLOCKSIZE * K, BLOCKSIZE * N),
                                            align_period(BLOCKSIZE)),
    summary="one thread per output; a warp reads a row segment of B and C (coalesced)",
    source="kernels_cuda/coalesced.cu",
    notes=("any M, N, K: bounds checked per thread",),
)
